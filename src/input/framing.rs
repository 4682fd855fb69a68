//! Lines that frame tool output rather than belong to it: shell prompts,
//! markdown fences, `==> file <==` headers, `clush -b` host banners, the
//! `[exit N]` markers of our capture scripts, and the command labels and
//! host headings that collection scripts and fleet tools print
//! (`### ibstat`, `==== node07 ====`, `node07 | CHANGED | rc=0 >>`).
//!
//! A prompt also tells which command ran (a hint for recognising the output)
//! and often on which host (`[root@node07 ~]#`, `user@node07:~$`, `ssh node07 …`).

use crate::parse::format_of_command;

/// What a framing line means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Framing {
    /// A shell prompt, with the command typed after it (possibly empty).
    Prompt(Prompt),
    /// A markdown code fence (```` ``` ```` or `~~~`).
    Fence,
    /// `==> name <==` from `tail`/`head` over several files.
    FileHeader(String),
    /// `[exit N]`, written by capture scripts after a command.
    ExitMarker,
    /// A line of dashes; around a host name it is a `clush -b` banner.
    Rule,
    /// A heading naming the host whose output follows, as a loop over
    /// hosts prints it (`==== node07 ====`, `[node07]`).
    HostHeading(String),
    /// A script's heading naming no host, command or time (`====
    /// mt4123_pciconf0 ====`, `### after the test ###`): it ends the output
    /// before it, and what follows is read for what it is.
    Heading,
}

/// A shell prompt and the command typed at it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Prompt {
    /// Host named by the prompt itself or by `ssh HOST` in the command.
    pub host: Option<String>,
    /// The command line as typed (empty for a bare prompt).
    pub command: String,
    /// The command's words after wrappers (`sudo`, `timeout 10`, `ssh host`)
    /// are removed, the program reduced to its base name.
    pub argv: Vec<String>,
    /// The working directory the prompt shows, when it shows a path
    /// (`root@h:/sys/class/infiniband/mlx5_0/ports/1/counters#`): what
    /// relative file names in the output are relative to.
    pub dir: Option<String>,
    /// The command line stands alone, without a prompt sign (`ibstat` on
    /// a line of its own, [`bare_command`]): notes name commands so, often
    /// without their output. Followed by nothing, it is a mention, not a
    /// run that printed nothing.
    pub bare: bool,
    /// The command is named by a label line ([`command_label`]: `###
    /// ibstat`, `== perfquery ==`, `ibstat:`), not typed at a prompt: a
    /// collection script's label of the output below, or a page's heading
    /// over a transcript of its own prompts.
    pub label: bool,
}

/// The file named by a `tail`/`head` header line, `==> name <==`.
pub(crate) fn file_header(line: &str) -> Option<&str> {
    let t = line.trim();
    t.strip_prefix("==> ")
        .and_then(|r| r.strip_suffix(" <=="))
        .map(str::trim)
}

/// Classifies a cleaned line; `None` for ordinary content.
pub(crate) fn classify(line: &str) -> Option<Framing> {
    if !may_frame(line) || always_tool_output(line) {
        return None;
    }
    classify_any(line)
}

/// Two lines of tool output that pass [`may_frame`]'s quick test and that
/// [`classify_any`] never reads as framing: perfquery's whole header
/// (`# Port extended counters: Lid 2 port 1 (CapMask: 0x5A00)`, which
/// holds a `#`) and ibstat's indented `Port 1:` (which ends in a colon).
/// Told apart by a few comparisons instead of every framing test: a
/// fleet's hosts print 16 perfquery headers and 8 ibstat ports each, and
/// these tests were 3 % of the work of a 1,000-host run (instructions
/// counted under callgrind).
fn always_tool_output(line: &str) -> bool {
    let indented = line.starts_with([' ', '\t']);
    let t = crate::parse::text::trim(line);
    match t.as_bytes().first() {
        Some(b'#') => crate::parse::perfquery::is_whole_header(t),
        Some(b'P') if indented => t
            .strip_prefix("Port ")
            .and_then(|rest| rest.strip_suffix(':'))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())),
        _ => false,
    }
}

/// [`classify`] without the quick test that rules out most lines.
fn classify_any(line: &str) -> Option<Framing> {
    let t = line.trim();
    if t.starts_with("```") || t.starts_with("~~~") {
        return Some(Framing::Fence);
    }
    // `==> port_rcv_errors <==`, `=== ./link_downed ===`: a sysfs counter
    // file's name over its value is that output's own line, not a file
    // header or a script's heading.
    if crate::parse::sysfs_counters::counter_banner(t) {
        return None;
    }
    if let Some(name) = file_header(t) {
        return Some(Framing::FileHeader(name.to_owned()));
    }
    // `-- Boot 0b5e… --` / `-- Reboot --`: journalctl's line between two
    // boots is the log's own (the host rebooted there), not a heading
    // that ends it.
    if crate::parse::kernel_log::boot_marker(t).is_some() {
        return None;
    }
    if sudo_password_prompt(t) {
        return Some(Framing::Heading);
    }
    if is_exit_marker(t) {
        return Some(Framing::ExitMarker);
    }
    if t.len() >= 3 && t.chars().all(|c| c == '-') || dashed_columns(t) {
        return Some(Framing::Rule);
    }
    if let Some(prompt) = prompt(line)
        .or_else(|| command_label(line))
        .or_else(|| bare_command(line))
    {
        return Some(Framing::Prompt(prompt));
    }
    host_heading(t)
        .or_else(|| tool_host_heading(line))
        .map(Framing::HostHeading)
        .or_else(|| {
            (script_heading(t)
                || device_heading(t).is_some()
                || rst_directive(t)
                || non_ascii_comment(t)
                || non_ascii_prose(t)
                || env_assignment(line)
                || introduces_output(line))
            .then_some(Framing::Heading)
        })
}

/// `---\t----\t-----\t---`: the underline of a table's column names
/// (`show_gids` prints one), runs of dashes apart: a rule inside the
/// output, not a decorated heading that would end it.
fn dashed_columns(t: &str) -> bool {
    let mut words = 0;
    for w in t.split_whitespace() {
        if !w.bytes().all(|b| b == b'-') {
            return false;
        }
        words += 1;
    }
    words >= 2 && t.starts_with("--")
}

/// `[sudo] password for alice:` (or its translation, `[sudo] Passwort für
/// alice:`, `[sudo] 密码：`): sudo asking for the password between the
/// command typed and its output. It is the terminal's line, not the
/// tool's: a heading, under which the command goes on. Before, it was an
/// unread line of the output, read as the host heading `[sudo]`, which
/// cut the command from its output.
fn sudo_password_prompt(t: &str) -> bool {
    t.strip_prefix("[sudo] ")
        .is_some_and(|rest| rest.ends_with([':', '\u{ff1a}']))
}

/// `NCCL_VERSION=2.21.5-1`, `CUDA_VISIBLE_DEVICES=0,1`: an environment
/// variable as `env` and report scripts print them (vLLM's and PyTorch's
/// `collect_env` list them under the `nvidia-smi topo -m` matrix). No tool
/// we read prints an upper-case name and `=` at the start of a line
/// (ibnetdiscover's `vendid=0x2c9` is lower case), so it ends the output
/// above it ([`Framing::Heading`]) instead of being an unreadable line of
/// it.
fn env_assignment(line: &str) -> bool {
    let bytes = line.as_bytes();
    if !bytes.first().is_some_and(u8::is_ascii_uppercase) {
        return false;
    }
    let name = bytes
        .iter()
        .take_while(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || **b == b'_')
        .count();
    name >= 2 && bytes.get(name) == Some(&b'=')
}

/// Whether `t` is a script's heading ([`Framing::Heading`]): a title
/// decorated alike on both sides ([`decorated_title`]) that is neither a
/// time (`==== $(date) ====` is read as `date` output: the time of the
/// snapshot after it) nor a tool's own part title: nvidia-smi's
/// `==============NVSMI LOG==============` (which opens `nvidia-smi -q`
/// output) and mlxcables' `-------- Cable EEPROM --------` (inside a
/// `Cable #N:` block).
///
/// [`decorated_title`]: crate::parse::text::decorated_title
pub(crate) fn script_heading(t: &str) -> bool {
    crate::parse::text::decorated_title(t).is_some_and(|title| {
        title != "NVSMI LOG"
            && !(title.starts_with("Cable ") && t.trim_start().starts_with("--"))
            && !crate::parse::date::heading_has_stamp(t)
    })
}

/// `.. code-block:: bash`, `.. note::`: a reStructuredText directive of
/// a documentation page, which opens a block as a Markdown fence does.
/// Read as output, it was an unread line of the tool above it.
fn rst_directive(t: &str) -> bool {
    t.strip_prefix(".. ")
        .and_then(|rest| rest.split_once("::"))
        .is_some_and(|(name, _)| {
            !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphabetic() || b == b'-')
        })
}

/// Whether `line` could be a framing line: fences, headers, exit markers,
/// rules, command labels and host headings begin (after white space) with
/// `` ` `` `~` `=` `[` `-` `*` `>` `+` (or `#`) or end in `:`, `>>` or `{`,
/// and every prompt holds its `$`, `#` or `%` (see [`prompt_tail`],
/// [`bare_prompt`]). One scan rules out most lines of tool output, which
/// this runs on one by one.
fn may_frame(line: &str) -> bool {
    matches!(
        line.trim_start().as_bytes().first(),
        Some(b'`' | b'~' | b'=' | b'[' | b'-' | b'*' | b'>' | b'+')
    ) || closing_may_frame(line)
        || line.trim_start().starts_with(".. ")
        || labelled_may_frame(line)
        || command_may_frame(line)
        || address_may_frame(line)
        || windows_prompt_may_frame(line)
        || line.bytes().any(|b| matches!(b, b'$' | b'#' | b'%'))
        || line
            .trim_start()
            .as_bytes()
            .first()
            .is_some_and(|b| !b.is_ascii())
}

/// Words that open a collection script's undecorated label line at the
/// start of a line: `Running: ibstat`, `Command: perfquery -x`, `Output
/// of nvidia-smi topo -m`.
const COMMAND_LABELS: &[&str] = &["command:", "cmd:", "running:", "executing:", "output of"];

/// Words that open an undecorated line naming the host whose output
/// follows: `Host: node07`, `Hostname: gpu-a`, `Node: c012`.
const HOST_LABELS: &[&str] = &["host:", "hostname:", "node:", "server:"];

/// Of [`HOST_LABELS`], those that name a host plainly enough that its
/// name needs no digit (`Hostname: alpha`): `Node:` and `Server:` also
/// head other things' values.
const PLAIN_HOST_LABELS: &[&str] = &["host:", "hostname:"];

/// Whether `line` opens, at its first byte, with one of the label words
/// of [`COMMAND_LABELS`] or [`HOST_LABELS`] (ASCII case ignored): the one
/// letter-led framing. An indented line is a field of tool output.
pub(crate) fn labelled_may_frame(line: &str) -> bool {
    matches!(
        line.as_bytes().first(),
        Some(
            b'c' | b'C'
                | b'r'
                | b'R'
                | b'e'
                | b'E'
                | b'o'
                | b'O'
                | b'h'
                | b'H'
                | b'n'
                | b'N'
                | b's'
                | b'S'
        )
    ) && COMMAND_LABELS
        .iter()
        .chain(HOST_LABELS)
        .any(|label| starts_with_label(line, label))
}

/// The fabric tools whose output is read. Their command line pasted alone
/// without a prompt (`nvidia-smi topo -m` inside a code fence, under a
/// sentence naming it) stands for the prompt ([`bare_command`]); and their
/// name after an unknown first word makes that word a wrapper or an alias
/// that runs the tool (`ibsim-run sminfo`, a lab's `alias ib='ibsim-run'`
/// then `ib perfquery 4 33`): the output is the tool's.
const FABRIC_TOOLS: &[&str] = &[
    "ibstat",
    "ibstatus",
    "perfquery",
    "iblinkinfo",
    "ibqueryerrors",
    "ibv_devinfo",
    "ibnetdiscover",
    "ibportstate",
    "smpquery",
    "sminfo",
    "ibswitches",
    "ibhosts",
    "ibdiagnet",
    "ibdev2netdev",
    "show_gids",
    "mst",
    "mlxlink",
    "nvidia-smi",
    "dcgmi",
    "dcgmi",
    "sudo",
];

/// Programs a bare command line may pipe its output into
/// ([`bare_command`]): filters that print some of its lines.
const PIPE_FILTERS: &[&str] = &["grep", "egrep", "head", "tail", "sort", "uniq", "column"];

/// Whether `line` may be a bare command line ([`bare_command`]), a
/// csh-style prompt ([`angle_prompt`]) or an environment variable
/// ([`env_assignment`]): at its first byte, a lower-case letter opening
/// one of [`FABRIC_TOOLS`], a word ending in `>` before a known command,
/// or an upper-case name and `=`. Tool output rarely opens so (its rows
/// are indented, or open with a capital or a digit and no `=` after the
/// name), and the word test ends at the first byte that differs.
pub(crate) fn command_may_frame(line: &str) -> bool {
    env_assignment(line)
        || line.as_bytes().first().is_some_and(u8::is_ascii_lowercase) && {
            let mut words = line.split([' ', '\t']);
            let first = words.next().unwrap_or(line);
            // `sulu> ibstatus` ([`angle_prompt`]).
            FABRIC_TOOLS.contains(&first)
                || (first.ends_with('>') && words.next().is_some_and(is_known_command))
        }
}

/// A tool's command line pasted alone, without a prompt: `nvidia-smi topo
/// -m`, `ibstat`, `sudo perfquery -x 12 1`. Read as output it was an
/// unreadable row of the tool's section, which then claimed a header was
/// missing (IN001) above the real one. Only a command line that cannot be
/// prose: the program alone, or with an option among its words, every
/// word free of sentence punctuation and quotes, at most eight words, and
/// a program a parser reads (after `sudo`).
fn bare_command(line: &str) -> Option<Prompt> {
    if !command_may_frame(line) {
        return None;
    }
    let t = line.trim_end();
    let all_words: Vec<&str> = t.split_whitespace().collect();
    let command_word = |w: &&str| {
        w.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_./:=,+-".contains(&b))
    };
    // `nvidia-smi -q -i 0 | grep -A 2 -i Fabric`: the command, piped into
    // a filter of the same plain words.
    let (words, filter) = match all_words.iter().position(|w| *w == "|") {
        Some(at) => (
            all_words.get(..at).unwrap_or_default(),
            all_words.get(at + 1..).unwrap_or_default(),
        ),
        None => (all_words.as_slice(), &[][..]),
    };
    let filter_ok = filter.is_empty()
        || (filter.len() <= 8
            && filter.first().is_some_and(|f| PIPE_FILTERS.contains(f))
            && filter.iter().all(command_word));
    if words.len() > 8 || !words.iter().all(command_word) || !filter_ok {
        return None;
    }
    let program_at = usize::from(words.first() == Some(&"sudo"));
    let program = *words.get(program_at)?;
    if program == "sudo" || !FABRIC_TOOLS.contains(&program) {
        return None;
    }
    let args = words.get(program_at + 1..).unwrap_or_default();
    if !args.is_empty() && !args.iter().any(|w| w.starts_with('-')) {
        return None;
    }
    let (argv, host) = command_words(t);
    let words: Vec<&str> = argv.iter().map(String::as_str).collect();
    format_of_command(&words)?;
    Some(Prompt {
        host,
        command: t.to_owned(),
        argv,
        dir: None,
        bare: true,
        label: false,
    })
}

/// Whether `text` begins with `label`, ASCII case ignored.
fn starts_with_label(text: &str, label: &str) -> bool {
    text.get(..label.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(label))
}

/// Whether `line` ends as a fleet tool's host heading may: in `:` (Salt)
/// or `>>` or `=> {` (Ansible).
pub(crate) fn closing_may_frame(line: &str) -> bool {
    matches!(line.trim_end().as_bytes().last(), Some(b':' | b'>' | b'{'))
}

/// [`may_frame`] for a line whose bytes are known to hold no `$`, `#` or
/// `%` and no control byte (the input scan's `class::PROMPT` and
/// `class::CONTROL`): only its opening and its end are left to test. A
/// first byte past the spaces and tabs that is not ASCII may be Unicode
/// white space before the opening, so it answers yes (and [`classify`]
/// decides). An reStructuredText directive (`.. code-block::`) opens with
/// `.`, which the scan lets through as a line a repair may change.
#[cfg(test)]
pub(crate) fn may_open_framing(line: &str) -> bool {
    opening_may_frame(line.bytes().find(|&b| b != b' ' && b != b'\t'))
        || line.trim_start_matches([' ', '\t']).starts_with('.')
        || closing_may_frame(line)
        || labelled_may_frame(line)
        || command_may_frame(line)
        || address_may_frame(line)
        || windows_prompt_may_frame(line)
}

/// Whether `line` opens, at column 0, as a Windows prompt does
/// (`windows_prompt`): `PS ` and a drive (`PS C:\`), or a drive
/// alone (`C:\`). Six bytes compared, on a line whose `$`, `#` and `%`
/// (a Windows prompt holds none) let every other prompt through.
pub(crate) fn windows_prompt_may_frame(line: &str) -> bool {
    // One pattern per opening: most lines fail at their second byte or
    // their first, with no prefix stripped first.
    match line.as_bytes() {
        [d, b':', b'\\', ..] | [b'P', b'S', b' ', d, b':', b'\\', ..] => d.is_ascii_alphabetic(),
        _ => false,
    }
}

/// Whether `line` has the shape of a PCI address alone (`3c:00.0`,
/// `0000:3c:00.0`, trailing blanks aside), which a loop over adapters
/// prints before each one's output ([`device_heading`]): a length and
/// three bytes, the cost the input scan can pay on every line.
pub(crate) fn address_may_frame(line: &str) -> bool {
    let mut b = line.as_bytes();
    // Most lines are longer than an address and end in no blank: let go
    // by two compares.
    if b.len() > 12 && b.last() != Some(&b' ') {
        return false;
    }
    if b.last() == Some(&b' ') {
        b = b.trim_ascii_end();
    }
    matches!(
        *b,
        [_, _, b':', _, _, b'.', _] | [_, _, _, _, b':', _, _, b':', _, _, b'.', _]
    )
}

/// `may_open_framing` given the line's first byte past spaces and tabs
/// (the input scan finds that byte once for this and the repair test).
pub(crate) fn opening_may_frame(first: Option<u8>) -> bool {
    matches!(
        first,
        Some(b'`' | b'~' | b'=' | b'[' | b'-' | b'*' | b'>' | b'+' | 0x80..=0xff)
    )
}

fn is_exit_marker(t: &str) -> bool {
    t.strip_prefix("[exit ")
        .and_then(|r| r.strip_suffix(']'))
        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

/// `node[01-04] (4)` or `node07` between two rules of dashes (clush -b).
pub(crate) fn host_banner(line: &str) -> Option<String> {
    let t = line.trim();
    // After the name only clush's host count may follow: `ibswinfo`'s
    // `uptime (d-h:m:s)   | 12d-…` between its rules is no banner.
    let name = match t.split_once(" (") {
        Some((name, count)) => {
            let digits = count.strip_suffix(')')?;
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            name.trim()
        }
        None => t,
    };
    let ok = !name.is_empty()
        && name.len() <= 128
        && !name.contains(' ')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.,[]".contains(c));
    ok.then(|| name.to_owned())
}

/// The title of a report's banner: a line of words between two rules of
/// `=` (`first` and `last`), as vLLM's `collect-env` heads each part of
/// its report (`==============================` / `     Environment
/// Variables` / `==============================`), with `next`, the line
/// after the closing rule. Read as the one-line heading `==== title
/// ====` would be ([`script_heading`]): it ends the output above it (the
/// `GPU Topology:` matrix before the `Environment Variables` part took
/// the banner as three unread lines of its own). `None` when the lines
/// are no such banner, and for ibswinfo's own opening (its switch's
/// description between `=` rules, `MF0;leaf-02:MQM8790/U1` or the default
/// `Quantum Mellanox Technologies`, then `label | value` fields): a title
/// with `;`, `:` or `|`, or a banner followed by a `label | value` line,
/// is left to the tool.
pub(crate) fn report_banner<'a>(
    first: &str,
    title: &'a str,
    last: &str,
    next: Option<&str>,
) -> Option<&'a str> {
    use crate::parse::text::is_rule_of;
    let rules = is_rule_of(first.trim(), 3, b'=') && is_rule_of(last.trim(), 3, b'=');
    let t = title.trim();
    let words = t.len() <= 80
        && t.bytes().any(|b| b.is_ascii_alphabetic())
        && t.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b" /-_.()&+,".contains(&b));
    let tool_fields = next.is_some_and(|n| n.contains(" | "));
    (rules && words && !tool_fields && script_heading(&format!("==== {t} ===="))).then_some(t)
}

/// Programs whose name after a bare `# ` marks a root prompt. Without this
/// list `# Port counters: …` (perfquery's own header) would look like a prompt.
const COMMANDS: &[&str] = &[
    "ibstat",
    "ibstatus",
    "perfquery",
    "iblinkinfo",
    "ibqueryerrors",
    "ibv_devinfo",
    "ibnetdiscover",
    "ibportstate",
    "smpquery",
    "saquery",
    "ibswitches",
    "ibhosts",
    "ibdiagnet",
    "mlxlink",
    "rdma",
    "sminfo",
    "nvidia-smi",
    "dcgmi",
    "date",
    "sudo",
    "ssh",
    "pdsh",
    "clush",
    "cat",
    "hostname",
    "uptime",
    "sleep",
    "watch",
    "timeout",
    "env",
    "for",
    "echo",
    "ls",
    "tail",
    "head",
    "grep",
    "time",
    "lspci",
    "numactl",
    "lscpu",
    "dmesg",
    "journalctl",
    "uname",
    // Tools pasted beside the fabric's in the same session: their output
    // is not read, but their `# cmd` root prompt must end the section
    // before it (`ibstatus` has no last line of its own, and took a whole
    // `ib_read_lat` run as its unread lines).
    "ib_write_bw",
    "ib_write_lat",
    "ib_read_bw",
    "ib_read_lat",
    "ib_send_bw",
    "ib_send_lat",
    "ib_atomic_bw",
    "ib_atomic_lat",
    "ibv_devices",
    "ibv_rc_pingpong",
    "ibping",
    "ibaddr",
    "ibroute",
    "ibtracert",
    "ibcheckerrors",
    "saquery",
    "smpquery",
    "show_gids",
    "ibdev2netdev",
    "mst",
    "mlxconfig",
    "mlxfwmanager",
    "ofed_info",
    "ethtool",
    "ifconfig",
    "lsmod",
    "modinfo",
    "ucx_info",
    "nvcc",
];

/// Recognises the common prompt shapes:
/// `$ cmd`, `# cmd` (known commands only), `[user@host dir]# cmd`,
/// `user@host:dir$ cmd`, `host:~ # cmd`, each optionally after `(venv) `
/// or a site's `(cluster)-` decoration.
pub(crate) fn prompt(line: &str) -> Option<Prompt> {
    let mut t = line.trim_start();
    if t.starts_with('(') {
        if let Some(close) = t.find(") ") {
            t = t.get(close + 2..)?.trim_start();
        } else if let Some(close) = t.find(")-[") {
            // `(baobab)-[root@gpu048 ~]$`: what follows must still be a
            // whole bracket prompt.
            t = t.get(close + 2..)?;
        }
    }
    let (host, command) = if let Some(rest) = t.strip_prefix('[') {
        bracket_prompt(rest)?
    } else if let Some(cmd) = bare_prompt(t) {
        (None, cmd)
    } else {
        user_host_prompt(t)
            .or_else(|| lost_bracket_prompt(t))
            .or_else(|| angle_prompt(t))
            .or_else(|| arrow_prompt(t))
            .or_else(|| shell_version_prompt(t))
            .or_else(|| windows_prompt(t))?
    };
    // `$ sonata@coyote2:~$ nvidia-smi`: a prompt copied with the prompt
    // before it (a blog's `$ ` added to a pasted line). The inner prompt
    // names the host and the command.
    if host.is_none() {
        let inner_t = command.trim_start();
        if let Some((inner_host, inner_command)) =
            user_host_prompt(inner_t).filter(|(h, _)| h.is_some())
        {
            let dir = prompt_dir(inner_t, inner_command);
            return Some(prompt_of(inner_host, inner_command, dir));
        }
    }
    let dir = prompt_dir(t, command);
    Some(prompt_of(host, command, dir))
}

/// The working directory a prompt `t` shows before its `command`, when it
/// shows a path (`root@h:/sys/class/infiniband/mlx5_0/ports/1/counters#`).
fn prompt_dir(t: &str, command: &str) -> Option<String> {
    let head = t
        .get(..t.len().saturating_sub(command.len()))
        .unwrap_or_default();
    head.split([' ', '[', ']', ':'])
        .rfind(|w| w.contains('/'))
        .map(|w| w.trim_end_matches(['$', '#', '%']).to_owned())
}

/// A prompt of `host` (or of the `ssh HOST` its command runs), `command`
/// and the directory it shows.
fn prompt_of(host: Option<String>, command: &str, dir: Option<String>) -> Prompt {
    let command = command.trim().to_owned();
    let (argv, ssh_host) = command_words(&command);
    Prompt {
        host: ssh_host.or(host),
        command,
        argv,
        dir,
        bare: false,
        label: false,
    }
}

/// `[root@node07 ~]# cmd` → (node07, cmd); also with a time or other
/// words before `user@host` (`[10:14:02 root@node07 ~]#`, bash's `\t`).
fn bracket_prompt(rest: &str) -> Option<(Option<String>, &str)> {
    let close = rest.find(']')?;
    let inside = rest.get(..close)?;
    let after = rest.get(close + 1..)?;
    let command = prompt_tail(after)?;
    let Some(user_host) = inside.split_whitespace().find(|w| w.contains('@')) else {
        return host_dir_prompt(inside, command);
    };
    let (_, host) = user_host.split_once('@')?;
    let host = host.split(':').next().unwrap_or(host);
    is_hostname(host).then(|| (Some(host.to_owned()), command))
}

/// `sulu> ibstatus`: a csh-style prompt naming the host, taken only
/// before a known command and for a host name with a lower-case letter
/// (old mail quoting puts a writer's initials before `>`: `JS> text`).
fn angle_prompt(t: &str) -> Option<(Option<String>, &str)> {
    let (first, command) = t.split_once("> ")?;
    let host_like =
        first.len() >= 2 && is_hostname(first) && first.bytes().any(|b| b.is_ascii_lowercase());
    let known = command
        .split_whitespace()
        .next()
        .is_some_and(is_known_command);
    (host_like && known).then(|| (Some(first.to_owned()), command))
}

/// `➜  opensm git:(master) ✗ perfquery 7 1`, `➜ xy@A10 ~ nvidia-smi topo -m`:
/// a zsh prompt of oh-my-zsh's arrow, the directory's name, the git branch
/// and its dirty mark, or a theme's `user@host` and directory, then the
/// command, with no `$`, `#` or `%` to end the prompt. The prompt's words
/// are the arrow's first word and those that read as a directory (`~`, a
/// path), a `user@host` (which names the host), `git:(…)`, `✗` and `✔`;
/// the command after them (past `NAME=value` assignments) must be one we
/// know. Before, the line was no prompt: no command named the output
/// under it, and no host.
fn arrow_prompt(t: &str) -> Option<(Option<String>, &str)> {
    let mut rest = t.strip_prefix('\u{279c}')?;
    if !rest.starts_with([' ', '\t']) {
        return None;
    }
    rest = rest.trim_start();
    let mut host = None;
    let mut first = true;
    loop {
        let (word, after) = rest.split_once([' ', '\t']).unwrap_or((rest, ""));
        let user_host = word
            .split_once('@')
            .map(|(user, h)| (user, h.trim_end_matches(':')))
            .filter(|(user, h)| is_hostname(user) && is_hostname(h));
        if let Some((_, h)) = user_host {
            host = Some(h.to_owned());
        } else if !(first
            || word == "~"
            || word.starts_with("~/")
            || word.contains('/')
            || word.starts_with("git:(")
            || matches!(word, "\u{2717}" | "\u{2714}"))
        {
            break;
        }
        first = false;
        rest = after.trim_start();
    }
    let program = rest.split_whitespace().find(|w| !env_assignment(w))?;
    is_known_command(program).then_some((host, rest))
}

/// `sh-5.1# ibstatus`, `bash-4.4$ ibstat`: bash's default prompt (`\s-\v\$ `:
/// the shell's name as it was started, its version, then `$`, or `#` for
/// root), the prompt of a shell in a container (`oc rsh pod`, `kubectl
/// exec -it pod -- sh`); it names no host. Before, the line was no
/// prompt: the output under it had no command, and the bare prompt after
/// it was an unread line of that output.
fn shell_version_prompt(t: &str) -> Option<(Option<String>, &str)> {
    let end = t.find(['$', '#'])?;
    let (shell, version) = t.get(..end)?.split_once('-')?;
    let version_like = version.starts_with(|c: char| c.is_ascii_digit())
        && version.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    if !(matches!(shell, "sh" | "bash") && version_like) {
        return None;
    }
    prompt_tail(t.get(end..)?).map(|command| (None, command))
}

/// `PS C:\Users\alice> nvidia-smi topo -m`, `C:\Users\bob>nvidia-smi`:
/// PowerShell's prompt (`PS `, the working directory, `> `) and cmd.exe's
/// (the directory, `>`, the command with or without a space), where
/// `nvidia-smi.exe` runs on a Windows host or a WSL guest is started;
/// bare (`PS C:\Windows\system32>`) after the last command. It names no
/// host. Before, the line was no prompt: the command's output was read
/// as the previous command's, and the bare prompt at the end was an
/// unread or cut line of it.
fn windows_prompt(t: &str) -> Option<(Option<String>, &str)> {
    let path_and_command = t.strip_prefix("PS ").unwrap_or(t);
    if !windows_prompt_may_frame(path_and_command) {
        return None;
    }
    let (path, command) = path_and_command.split_once('>')?;
    // A directory: no character Windows forbids in a path (a `>`
    // redirection or a `|` in a command line is no prompt).
    if path.contains(['<', '|', '"', '*', '?']) {
        return None;
    }
    Some((None, command.trim_start()))
}

/// `[gpu6000 ~]# nvidia-smi -q`: a bracket prompt of a host and its
/// directory without the user (`PS1='[\h \W]\$ '`), taken only before a
/// known command (`[exit 0]`, `[1]`, `[ 3.2]` are no prompts).
fn host_dir_prompt<'t>(inside: &str, command: &'t str) -> Option<(Option<String>, &'t str)> {
    let mut words = inside.split_whitespace();
    let (host, dir) = (words.next()?, words.next()?);
    // A directory's name, not a number (`[exit 0]` is a capture script's).
    let dir_like = dir.starts_with(['~', '/'])
        || (dir
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
            && dir.bytes().any(|b| b.is_ascii_alphabetic()));
    let known = command
        .split_whitespace()
        .next()
        .is_some_and(is_known_command);
    (words.next().is_none()
        && is_hostname(host)
        && host.bytes().any(|b| b.is_ascii_lowercase())
        && dir_like
        && known)
        .then(|| (Some(host.to_owned()), command))
}

/// `root@node07 ~]# cmd`: a bracket prompt whose `[` the paste lost (a
/// mail quoting it, a selection starting one character late). Before,
/// the command's output went to the host of the prompt above it.
fn lost_bracket_prompt(t: &str) -> Option<(Option<String>, &str)> {
    let first = t.split_whitespace().next()?;
    if !first.contains('@') || t.get(..t.find(']')?)?.contains('[') {
        return None;
    }
    bracket_prompt(t)
}

/// `$ cmd`, `$`, `# ibstat`. A `#` alone is not one: it is the comment
/// line that frames `ibnetdiscover`'s topology header (read as a prompt,
/// it cut the output into pieces and dropped the host of the prompt above
/// it), and a root prompt shows its command or its `user@host`.
fn bare_prompt(t: &str) -> Option<&str> {
    if t == "$" {
        return Some("");
    }
    if let Some(cmd) = t.strip_prefix("$ ") {
        return Some(cmd);
    }
    // `$nvidia-smi topo -m`: a blog's prompt without its space, taken
    // only before a known command (`$HOME/…`, `$1` are no prompts).
    if let Some(cmd) = t.strip_prefix('$') {
        let word = cmd.split_whitespace().next()?;
        return is_known_command(word).then_some(cmd);
    }
    // `> nvidia-smi nvlink -gt d`: the prompt of Chinese docs, taken only
    // before a known command with an option (a quoted reply's `> text`,
    // or `> ibstat` quoted alone, is none).
    if let Some(cmd) = t.strip_prefix("> ") {
        let mut words = cmd.split_whitespace();
        let known = words.next().is_some_and(is_known_command);
        return (known && words.any(|w| w.starts_with('-'))).then_some(cmd);
    }
    // `# ibv_devinfo -d mlx4_0 #查看设备具体信息`: a blog's comment naming
    // the command it shows (the prompt and output follow) is no prompt of
    // its own, which would be a second run that printed nothing
    // ([`non_ascii_comment`] makes it a heading).
    let cmd = t.strip_prefix("# ")?;
    let word = cmd.split_whitespace().next()?;
    (is_known_command(word) && !has_non_ascii_letter(cmd)).then_some(cmd)
}

/// Whether `t` holds a letter outside ASCII: prose, not a command line.
fn has_non_ascii_letter(t: &str) -> bool {
    t.chars().any(|c| !c.is_ascii() && c.is_alphabetic())
}

/// `# 模型训练时`, `## ECCが有効か確認`: a markdown heading or shell comment
/// written in letters that are not ASCII. No tool we read prints one
/// (their `#` headers are English), so it ends the output above it
/// ([`Framing::Heading`]) instead of being an unreadable line of it, or a
/// key without its value.
fn non_ascii_comment(t: &str) -> bool {
    let rest = t.trim_start_matches('#');
    rest.len() < t.len() && rest.starts_with(' ') && has_non_ascii_letter(rest)
}

/// `最典型的当然有 nvidia-smi 和 …`, `ここでは ibstat の …`: a line of prose
/// that opens with a letter outside ASCII. Every line of every tool we read
/// opens with ASCII (a field name, a device, a number, a table border), so
/// like [`non_ascii_comment`] it ends the output above it. Before, the
/// prose under a `` ## `nvidia-smi topo -m` `` heading was read as a
/// matrix line without its header, and the paste was called cut.
fn non_ascii_prose(t: &str) -> bool {
    t.chars()
        .next()
        .is_some_and(|c| !c.is_ascii() && c.is_alphabetic())
}

/// Whether `line`, met unindented in a section of `kind` after that
/// section's indented lines, is the author's text rather than the tool's
/// output: the tool prints no such line there (its parser says so) and it
/// reads as prose ([`reads_as_prose`]). `from n1:` between two hosts'
/// `ibv_devinfo -v`, `Other stuff:` and `rxe0 is bound to enp0s8` under
/// it: read as output, each was an unread line of the tool (IN002) though
/// the tool never printed it. The sectioner sets such a line aside as
/// unrecognised and the section goes on, so a field of the tool's after
/// it is still read; a line the tool does not print that does not read as
/// prose (`0x1c4`, `foo=bar`) stays in the section and is reported unread.
/// After a `topo -m` matrix, another report's `Label: value` line is set
/// aside too ([`crate::parse::topo::foreign_label_line`]), and so is a
/// line nvidia-smi could not have printed there (`above`: the lines
/// before it; [`crate::parse::topo::may_be_its_line`]) that reads as prose
/// or is an NCCL log line ([`nccl_log_line`]): the question under the
/// legend, which was glued to its last entry's meaning, or reported as an
/// unread line of the matrix. After a paragraph break under a CSV query,
/// so is a line of prose with another count of values than the line above
/// it ([`crate::parse::smi_csv::may_be_its_line`]): the reply under the
/// output, read before as a CSV row of the wrong width (IN002).
pub(crate) fn prose_after_output(
    kind: crate::parse::Kind,
    line: &str,
    above: &[crate::parse::Line<'_>],
) -> bool {
    use crate::parse::Kind;
    let topo = matches!(kind, Kind::TopoMatrix | Kind::TopoP2p);
    // A report's markdown heading under a matrix, at any indent (a report
    // indented whole in a fence: club-3090#1125's `  ### PCIe / P2P
    // detail (lspci)` under `topo -p2p`): nvidia-smi prints no line that
    // opens with `#`.
    if topo && markdown_heading(line.trim_start()) {
        return true;
    }
    if line.starts_with([' ', '\t']) {
        return false;
    }
    let t = line.trim();
    if kind == Kind::TopoMatrix && crate::parse::topo::foreign_label_line(t) {
        return true;
    }
    if topo {
        return (reads_as_prose(t) || nccl_log_line(t) || version_note(t))
            && !crate::parse::topo::may_be_its_line(above, t);
    }
    let not_the_tools = match kind {
        Kind::IbvDevinfo => !crate::parse::ibv_devinfo::may_be_its_unindented_line(t),
        Kind::Ibstat => !crate::parse::ibstat::may_be_its_unindented_line(t),
        Kind::Ibstatus => !crate::parse::ibstatus::may_be_its_unindented_line(t),
        Kind::SmiCsv => !crate::parse::smi_csv::may_be_its_line(t, above),
        _ => false,
    };
    not_the_tools && reads_as_prose(t)
}

/// `### PCIe / P2P detail`: one to six `#`, a space, then a title.
fn markdown_heading(t: &str) -> bool {
    let hashes = t.bytes().take_while(|b| *b == b'#').count();
    (1..=6).contains(&hashes)
        && t.get(hashes..)
            .and_then(|rest| rest.strip_prefix(' '))
            .is_some_and(|title| !title.trim().is_empty())
}

/// `NCCL version 2.10.3`, `CUDA version: 12.1`, `Driver Version 535`: an
/// author's note of a component's version under the output (nccl#667,
/// below its matrix). Too short and capitalised to read as prose, it was
/// an unread line of the matrix (IN002). nvidia-smi's matrix and legend
/// hold no such line.
fn version_note(t: &str) -> bool {
    let mut words = t.split_whitespace();
    let (Some(first), Some(second)) = (words.next(), words.next()) else {
        return false;
    };
    first
        .as_bytes()
        .first()
        .is_some_and(u8::is_ascii_alphabetic)
        && second.trim_end_matches(':').eq_ignore_ascii_case("version")
        && words.next().is_some()
        && words.count() <= 2
}

/// `gpu1:1341:1346 [0] NCCL INFO Ring 00 : 0[0] -> 1[1] via P2P/IPC`:
/// a line of NCCL's debug log (`NCCL_DEBUG=INFO`), with or without the
/// `host:pid:tid [dev]` it opens with, which a post pastes under the
/// topology it ran on. None of the GPU tools we read prints one.
fn nccl_log_line(t: &str) -> bool {
    let mut before = "";
    t.split_whitespace().any(|w| {
        let level = before == "NCCL" && matches!(w, "INFO" | "WARN" | "TRACE" | "ABORT");
        before = w;
        level
    })
}

/// Whether `line`, met unindented in a section of `kind` right after a
/// paragraph break or after a line already set aside, is the tail of the
/// author's mail or post rather than the tool's output: a sign-off
/// (`Best Regards`, `Thanks,`, a name: a few words and no colon), a mail
/// attribution (`> On Thu, Feb 20, 2020 at 08:57AM, Ann wrote:`, whose
/// times hold colons), or the quoted message under it (`> > Hello!`,
/// `> >`, quoted prose), quote markers aside. The tool prints none of
/// them (its parser says so, of the line without its quote markers, so a
/// quoted `> CA 'mlx5_0'` stays the tool's). Read as output, each was an
/// unread line (IN002) of an ibstat pasted in a mail, and the section ran
/// on to the end of the quoted reply. Only after a break or an aside line:
/// a colon-less line right under the tool's fields is more likely a field
/// cut by the paste, which must stay in the section to be reported.
pub(crate) fn sign_off_after_output(kind: crate::parse::Kind, line: &str) -> bool {
    use crate::parse::Kind;
    if line.starts_with([' ', '\t']) {
        return false;
    }
    let t = line
        .trim()
        .trim_start_matches(|c: char| c == '>' || c.is_whitespace());
    let not_the_tools = match kind {
        Kind::IbvDevinfo => !crate::parse::ibv_devinfo::may_be_its_unindented_line(t),
        Kind::Ibstat => !crate::parse::ibstat::may_be_its_unindented_line(t),
        Kind::Ibstatus => !crate::parse::ibstatus::may_be_its_unindented_line(t),
        _ => return false,
    };
    if !not_the_tools {
        return false;
    }
    let attribution = t.starts_with("On ") && t.ends_with(" wrote:");
    // A few words opening with a letter, no colon, no `=`: a sign-off or a
    // name, never a `Label: value` or `key=value` line of these tools.
    let sign_off = t.as_bytes().first().is_some_and(u8::is_ascii_alphabetic)
        && t.split_whitespace().count() <= 4
        && !t.contains([':', '=']);
    t.is_empty() || attribution || sign_off || reads_as_prose(t)
}

/// Whether `t` reads as a person's words: it opens with an ASCII letter
/// and is either a heading of two or more words ending in a colon with
/// nothing after it (`Other stuff:`, `from n1:`, `To re-create the link
/// (rxe0):`; one capitalised word, `Notes:`, will do), or a line of three or more words at least two of which are
/// plain lower-case words (`rxe0 is bound to enp0s8`, `disabled the
/// firewall`, `sudo rdma link add rxe0 type rxe netdev enp0s8`). The
/// `Label: value` lines of the tools we read are neither: their one
/// colon is followed by a value, and their words are capitalised,
/// numbers or joined by `_`.
pub(crate) fn reads_as_prose(t: &str) -> bool {
    if !t.as_bytes().first().is_some_and(u8::is_ascii_alphabetic) {
        return false;
    }
    if let Some(head) = t.strip_suffix(':') {
        let capitalised_word = head.bytes().skip(1).all(|b| b.is_ascii_lowercase())
            && head.as_bytes().first().is_some_and(u8::is_ascii_uppercase);
        return !head.contains(':')
            && (head.split_whitespace().nth(1).is_some() || capitalised_word);
    }
    let mut words = 0usize;
    let mut plain = 0usize;
    for w in t.split_whitespace() {
        words += 1;
        plain += usize::from(w.bytes().all(|b| b.is_ascii_lowercase()));
    }
    words >= 3 && plain >= 2
}

/// The command of a line a collection script prints before a command's
/// output in place of a prompt: `### ibstat`, `===== perfquery -x =====`,
/// `+ nvidia-smi topo -m` (`set -x`), `[ibstat]`, `*** ibstat ***`,
/// `>>> ibstat`, `## Command: ibstat ##`, `ibstat:`. Read as output, such
/// a line was an unreadable line of the tool before it (a warning, and
/// IN002 saying lines went unjudged) on every section of such a dump. Only a known
/// command counts ([`is_known_command`], or one a parser names), so
/// headings of tool output (`# Port counters: …`, `====NVSMI LOG====`,
/// `+----+` table borders, `[1]` port numbers) are not labels.
fn command_label(line: &str) -> Option<Prompt> {
    let t = line.trim();
    // Undecorated, a label ends in a colon at the start of its line
    // (`ibstat:`, `perfquery -x:`) or begins there with a label word
    // (`Running: ibstat`).
    let (inner, bare_colon) = match heading_text(t, true) {
        Some(inner) => (inner, false),
        None if line.starts_with([' ', '\t']) => return None,
        None if COMMAND_LABELS.iter().any(|l| starts_with_label(t, l)) => {
            (t.strip_suffix(':').unwrap_or(t), false)
        }
        None => (t.strip_suffix(':')?, true),
    };
    let command = without_label(inner, COMMAND_LABELS);
    let command = command.trim_matches('`').trim();
    if command.is_empty() || command.len() > 512 {
        return None;
    }
    // A sentence introducing output is no label ([`introduces_output`]).
    if bare_colon && introduces_output(line) {
        return None;
    }
    // `# ibv_devinfo -d mlx4_0 #查看设备具体信息`: a comment in words no
    // command line holds, naming the command the prompt below runs.
    if has_non_ascii_letter(command) {
        return None;
    }
    // Most headings name no program (perfquery's `# Port counters: …` on
    // every dump): turned away on their first word, before it is split.
    let first = command.split_whitespace().next()?;
    let program = first.rsplit('/').next().unwrap_or(first);
    if !is_known_command(program) && format_of_command(&[program]).is_none() {
        return None;
    }
    // `### iblinkinfo - View link information on IB network`: a page's
    // section heading, the tool's name then a dash and what it does, is
    // not the command line of what follows (the next line is prose, or
    // the command itself under its prompt).
    if command
        .split_whitespace()
        .any(|w| matches!(w, "-" | "–" | "—"))
    {
        return None;
    }
    let (argv, host) = command_words(command);
    let words: Vec<&str> = argv.iter().map(String::as_str).collect();
    let known =
        words.first().is_some_and(|w| is_known_command(w)) || format_of_command(&words).is_some();
    known.then(|| Prompt {
        host,
        command: command.to_owned(),
        argv,
        dir: None,
        bare: false,
        label: true,
    })
}

/// `sminfo on the nodes:`, `ibstatus is ok:`: a sentence that opens with
/// the name of a tool a parser reads and ends in a colon, its other words
/// reading as prose ([`arguments_read_as_prose`]), introduces the output
/// below; it is no command line. Read as a label, it was a run of the
/// tool that printed nothing (an `sminfo` with no reply, under the host
/// of the block above). A heading ([`Framing::Heading`]): it ends the
/// output above it. For another program (`ib_send_bw shows:`) the label
/// only names what follows as that program's output, which it is.
fn introduces_output(line: &str) -> bool {
    if line.starts_with([' ', '\t']) {
        return false;
    }
    let Some(head) = line.trim().strip_suffix(':') else {
        return false;
    };
    let Some(first) = head.split_whitespace().next() else {
        return false;
    };
    let program = first.rsplit('/').next().unwrap_or(first);
    arguments_read_as_prose(head) && format_of_command(&[program]).is_some()
}

/// Words of a sentence that no tool takes as an argument.
const PROSE_WORDS: &[&str] = &[
    "on", "of", "the", "for", "from", "in", "at", "with", "and", "to", "is", "are", "was", "all",
    "each", "every", "other", "these", "those", "this", "that", "my", "our", "a", "an", "shows",
    "gives", "says",
];

/// Whether the words after a command's program read as a sentence: no
/// option among them, and a word of [`PROSE_WORDS`] or two plain
/// lower-case words (`on the nodes`, `for both hosts`). A command's
/// arguments are options, device names, numbers and GUIDs (`ibstat
/// mlx5_0 1`, `perfquery -x 12 1`).
fn arguments_read_as_prose(command: &str) -> bool {
    let args: Vec<&str> = command.split_whitespace().skip(1).collect();
    if args.iter().any(|w| w.starts_with('-')) {
        return false;
    }
    let plain = args
        .iter()
        .filter(|w| w.bytes().all(|b| b.is_ascii_lowercase()))
        .count();
    plain >= 2 || args.iter().any(|w| PROSE_WORDS.contains(w))
}

/// The text of a decorated heading line: inside `[…]`, or between an
/// opening run of `#` `=` `-` `*` `>` (and `+`, `set -x`'s, where
/// `set_x` allows) and a closing run of `#` `=` `-` `*` `<` `:`. One `-`,
/// `*` or `>` opens a list item or a quote (`- ibstat shows port 1
/// down`), not a heading.
fn heading_text(t: &str, set_x: bool) -> Option<&str> {
    const CLOSING: &[char] = &['#', '=', '-', '*', '<', ':'];
    if let Some(rest) = t.strip_prefix('[') {
        return rest.strip_suffix(']').map(str::trim);
    }
    let opening: &[char] = if set_x {
        &['#', '=', '-', '*', '>', '+']
    } else {
        &['#', '=', '-', '*', '>']
    };
    let rest = t.trim_start_matches(opening);
    match t.get(..t.len() - rest.len()) {
        None | Some("" | "-" | "*" | ">") => None,
        Some(_) => Some(rest.trim_end_matches(CLOSING).trim()),
    }
}

/// The device a loop over adapters names in its banner before each
/// one's output (`for d in mlx5_0 mlx5_1; do echo "== $d =="; mlxlink -d
/// $d; done`): `== mlx5_0 ==`, `### 0000:3b:00.0`, `---- /dev/mst/mt4123_pciconf0
/// ----`, `[mlx5_1]`, `=== Device: mlx5_0 ===`. mlxlink's own output does not
/// name its device, so the banner is all that tells two runs apart. The
/// banner holds nothing but the name ([`names_device`]).
///
/// A PCI address alone on its line (`3c:00.0`) is such a banner too: the
/// `echo $bdf` of a loop over `lspci -n | awk '{print $1}'` (`xargs -I{}
/// sh -c 'echo {} && mlxlink -d {} -c'`). No tool this crate reads prints
/// a bare address as a line of its own output. A bare RDMA device name
/// (`mlx5_0`) is not one: `ls /sys/class/infiniband` prints those.
pub(crate) fn device_heading(t: &str) -> Option<&str> {
    let Some(inner) = heading_text(t, false) else {
        let bare = t.trim();
        return (address_may_frame(bare) && names_device(bare)).then_some(bare);
    };
    let name = without_label(inner, &["device:", "device", "dev:", "dev"]);
    names_device(name).then_some(name)
}

/// Whether `w` is a name mlxlink's `-d` takes: an RDMA device
/// (`mlx5_0`, `mlx4_1`), a PCI address (`0000:3b:00.0`, `3b:00.0`) or an
/// mst device (`/dev/mst/mt4123_pciconf0`, `mt4129_pciconf0.1`).
pub(crate) fn names_device(w: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let hex = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit());
    let rdma = w
        .strip_prefix("mlx")
        .and_then(|r| r.split_once('_'))
        .is_some_and(|(gen, n)| digits(gen) && digits(n));
    let pci = {
        let (bus_dev, function) = w.rsplit_once('.').unwrap_or(("", ""));
        let parts: Vec<&str> = bus_dev.split(':').collect();
        let bdf = match parts.as_slice() {
            [domain, bus, dev] => hex(domain, 4) && hex(bus, 2) && hex(dev, 2),
            [bus, dev] => hex(bus, 2) && hex(dev, 2),
            _ => false,
        };
        bdf && function.len() == 1 && function.bytes().all(|b| (b'0'..=b'7').contains(&b))
    };
    let mst = {
        let name = w.strip_prefix("/dev/mst/").unwrap_or(w);
        let name = name
            .split_once('.')
            .map_or(name, |(n, sub)| if digits(sub) { n } else { "" });
        name.strip_prefix("mt")
            .and_then(|r| r.split_once('_'))
            .is_some_and(|(part, kind)| {
                digits(part)
                    && ["pciconf", "pci_cr"]
                        .iter()
                        .any(|k| kind.strip_prefix(k).is_some_and(digits))
            })
    };
    rdma || pci || mst
}

/// `text` without the first of `labels` (ASCII case ignored) it begins with.
fn without_label<'t>(text: &'t str, labels: &[&str]) -> &'t str {
    for label in labels {
        if let Some(head) = text.get(..label.len()) {
            if head.eq_ignore_ascii_case(label) {
                return text.get(label.len()..).unwrap_or_default().trim_start();
            }
        }
    }
    text
}

/// The host named by a heading that a loop over hosts prints before each
/// host's output (`for h in …; do echo "==== $h ===="; ssh $h ibstat;
/// done`): `==== node07 ====`, `### node07`, `[node07]`, `>>> node07`,
/// `== node07 (10.0.0.7) ==`, `### Host: node07`. Read as output, such a
/// paste was one host, and a port down on the first was hidden by the
/// same port up on the next. The name must look like a machine's: one
/// word of letters, digits, dots and dashes, with a letter and a digit
/// (`node07`, `gpu-a100-12.cluster`), that names no device or step
/// ([`names_no_host`]): headings such as `## Notes ##`, `[global]`,
/// `=== GPU0 ===` or `=== snapshot2 ===` are not hosts.
fn host_heading(t: &str) -> Option<String> {
    let inner = heading_text(t, false)?;
    let name = without_label(inner, HOST_LABELS);
    // `===== node01 | before | 2026-08-13T07:53:30Z =====`: the host, then
    // one-word fields a collection script adds (the step, the time).
    let name = match name.split_once(" | ") {
        Some((host, fields)) if fields.split(" | ").all(|f| !f.trim().contains(' ')) => host,
        _ => name,
    };
    // A trailing `(10.0.0.7)` or `(3)`: the address or a count.
    let name = match name.split_once(" (") {
        Some((name, rest)) if rest.ends_with(')') && !rest.contains(' ') => name,
        Some(_) => return None,
        None => name,
    };
    machine_name(name)
}

/// Whether a host heading is a Markdown heading (`### rocev1`, `####
/// node1`) whose name has only the weak shape of a host: a word and one
/// digit, no domain, no run of dashed parts. An author's `#` heading names
/// the part of the page below it (`rocev1`, `v2`, `ipv4`, `test3`), and a
/// word with a digit is as often a version or a variant as a machine: it
/// names a host only when the paste names that host elsewhere too (a
/// prompt, a pdsh prefix, a banner: see the splitter), or the heading says
/// so (`### Host: node1`). A fleet's names keep their shape ([`fleet_host_shape`]):
/// `### node01`, `### gpu-a100-12`, `### node7.cluster` are hosts as
/// before. A script's banner (`==== node1 ====`, `[node1]`) is a loop's
/// `echo` of a host name and stays one.
pub(crate) fn markdown_heading_unconfirmed(t: &str, name: &str) -> bool {
    let t = t.trim();
    if !t.starts_with('#') || t.trim_end_matches('#').len() < t.len() {
        return false;
    }
    let labelled =
        heading_text(t, false).is_some_and(|inner| without_label(inner, HOST_LABELS) != inner);
    !labelled && !fleet_host_shape(name)
}

/// `node01`, `gpu-a100-12`, `cn1234`, `dgx-h100-3`, `node7.cluster`: a
/// name shaped as a fleet's hosts are named: a number of two digits or
/// more at its end (a zero-padded index, a rack and slot), a domain, or
/// three or more dashed parts. `node1`, `rocev1`, `gpu-7`, `ConnectX-7`
/// are not: their shape is also a version's, a variant's or a model's.
fn fleet_host_shape(name: &str) -> bool {
    let digits = name.bytes().rev().take_while(u8::is_ascii_digit).count();
    digits >= 2 || name.contains('.') || name.split('-').count() >= 3
}

/// The host of a line that fleet tools print before each host's output:
/// Ansible's ad-hoc `node07 | CHANGED | rc=0 >>` and Salt's `node07:` (at
/// the start of the line, its output indented below it; also a note's
/// `from node07:`), and a collection
/// script's `Host: node07` ([`labelled_host`]).
fn tool_host_heading(line: &str) -> Option<String> {
    if line.starts_with([' ', '\t']) {
        return None;
    }
    let t = line.trim_end();
    if labelled_may_frame(t) {
        return labelled_host(t);
    }
    if let Some(name) = t.strip_suffix(':') {
        // `from n1:`, `on gpu07:`: notes that name the machine the output
        // under them came from, as Salt's `node07:` does.
        let from = ["from ", "on "]
            .iter()
            .find(|w| starts_with_label(name, w))
            .and_then(|w| name.get(w.len()..));
        return machine_name(from.unwrap_or(name));
    }
    if let Some(name) = pssh_heading(t) {
        return machine_name(name);
    }
    let ansible_status = |status: &str| {
        !status.is_empty() && status.bytes().all(|b| b.is_ascii_uppercase() || b == b'!')
    };
    // A module's result: `node07 | SUCCESS => {`, `node09 | UNREACHABLE! => {`.
    if let Some(head) = t.strip_suffix(" => {") {
        let (name, status) = head.split_once(" | ")?;
        return ansible_status(status).then(|| machine_name(name)).flatten();
    }
    let mut parts = t.strip_suffix(">>")?.split(" | ");
    let (name, status, rc) = (parts.next()?, parts.next()?, parts.next()?);
    let ok = parts.next().is_none()
        && ansible_status(status)
        && rc
            .trim_end()
            .strip_prefix("rc=")
            .is_some_and(|n| n.parse::<i32>().is_ok());
    if ok {
        machine_name(name)
    } else {
        None
    }
}

/// The host of parallel-ssh's (`pssh -i`) line before each host's output:
/// `[1] 10:12:01 [SUCCESS] node07`, `[3] 10:12:02 [FAILURE] node09 Exited
/// with error code 255`.
fn pssh_heading(t: &str) -> Option<&str> {
    let rest = t.strip_prefix('[')?;
    let (number, rest) = rest.split_once("] ")?;
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (time, rest) = rest.split_once(" [")?;
    let clock = time.len() == 8
        && time.bytes().enumerate().all(|(i, b)| {
            if i == 2 || i == 5 {
                b == b':'
            } else {
                b.is_ascii_digit()
            }
        });
    let (status, rest) = rest.split_once("] ")?;
    (clock && matches!(status, "SUCCESS" | "FAILURE"))
        .then(|| rest.split_whitespace().next())
        .flatten()
}

/// The host of an undecorated `Host: node07` line (`echo "Host:
/// $(hostname)"` in a loop over hosts): after a [`PLAIN_HOST_LABELS`]
/// word any name that [`machine_name`] would take but for a digit
/// (`Hostname: alpha`); after `Node:` or `Server:`, what it takes.
fn labelled_host(t: &str) -> Option<String> {
    let label = HOST_LABELS.iter().find(|l| starts_with_label(t, l))?;
    let name = t.get(label.len()..)?.trim();
    let name = match name.split_once(" (") {
        Some((name, rest)) if rest.ends_with(')') && !rest.contains(' ') => name,
        Some(_) => return None,
        None => name,
    };
    if PLAIN_HOST_LABELS.contains(label) {
        machine_name_of(name, false)
    } else {
        machine_name(name)
    }
}

/// `name` if it looks like a machine's name: one word of letters, digits,
/// dots and dashes, with a letter and a digit, ending in a domain rather
/// than a number (`node07.cluster`, not the version `v1.2.3`), naming no
/// device or step ([`names_no_host`]) and no command.
fn machine_name(name: &str) -> Option<String> {
    machine_name_of(name, true)
}

/// [`machine_name`], the digit asked for only where `with_digit` says.
fn machine_name_of(name: &str, with_digit: bool) -> Option<String> {
    let is_host = name.len() <= 253
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
        && name
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphanumeric())
        && name.bytes().any(|b| b.is_ascii_alphabetic())
        && (!with_digit || name.bytes().any(|b| b.is_ascii_digit()))
        && name
            .rsplit('.')
            .next()
            .is_some_and(|last| last.bytes().any(|b| b.is_ascii_alphabetic()))
        && !names_no_host(name)
        && !is_known_command(name);
    is_host.then(|| name.to_owned())
}

/// `GPU0`, `nic-1`, `mlx5`, `port12`, `H100`, `MT4129`, `CX7`, `i40iw`,
/// `rxe0`: a device, RDMA provider, port or model named as the subject of
/// a heading; `snapshot2`, `run1`,
/// `t0`, `step3`: a step of the collection. Not a host. A device word
/// takes a small index as written (`gpu3`); a zero-padded or longer number
/// is a host's (`gpu001`, `gpu00038`, `gpu-07`).
fn names_no_host(name: &str) -> bool {
    const DEVICES: &[&str] = &[
        "gpu", "nic", "hca", "mlx", "ib", "eth", "port", "link", "lane", "cpu", "numa", "socket",
        "card", "ca", "bus", "slot", "rail",
    ];
    const MODELS: &[&str] = &["a", "b", "h", "l", "v", "mt", "cx"];
    const STEPS: &[&str] = &[
        "snapshot",
        "snap",
        "run",
        "iter",
        "iteration",
        "round",
        "test",
        "try",
        "attempt",
        "sample",
        "before",
        "after",
        "step",
        "pass",
        "t",
        "time",
        "loop",
        "part",
        "section",
        "case",
        "table",
        "figure",
        "fig",
        "page",
        "line",
        "row",
        "level",
        "phase",
        "stage",
        "day",
        "week",
        "rev",
        "gen",
        "cycle",
        "batch",
        "job",
        "task",
        "check",
        "probe",
        "poll",
        "interval",
        "min",
        "sec",
    ];
    // RDMA providers (rdma-core's `providers/`), alone or with their
    // device's index: `i40iw`, `rxe0`, `irdma1`, `hfi1`. An author's `#
    // i40iw` above a grep of that driver's sysfs counters named the host
    // `i40iw`.
    const RDMA_PROVIDERS: &[&str] = &[
        "rxe", "siw", "i40iw", "irdma", "hfi", "qib", "qedr", "efa", "erdma", "bnxt", "hns",
        "mthca", "cxgb", "ocrdma", "usnic", "pvrdma", "mana", "ionic",
    ];
    let lower = name.to_ascii_lowercase();
    let word = lower.trim_end_matches(|c: char| c.is_ascii_digit());
    let digits = lower.get(word.len()..).unwrap_or_default();
    let word = word.trim_end_matches(['-', '_']);
    let padded = digits.len() > 1 && digits.starts_with('0');
    if RDMA_PROVIDERS.contains(&word) && digits.len() <= 2 && !padded {
        return true;
    }
    if digits.is_empty() || word.is_empty() {
        return false;
    }
    STEPS.contains(&word)
        || (MODELS.contains(&word) && !padded)
        || (DEVICES.contains(&word) && digits.len() <= 2 && !padded)
}

/// `user@host:~/dir$ cmd`, `root@host# cmd`, `node07:~ # cmd`.
fn user_host_prompt(t: &str) -> Option<(Option<String>, &str)> {
    let end = t.find(['$', '#', '%'])?;
    let head = t.get(..end)?.trim_end();
    let command = prompt_tail(t.get(end..)?)?;
    let (user_host, dir) = head.split_once(':').unwrap_or((head, ""));
    let host = match user_host.split_once('@') {
        Some((user, host)) if is_hostname(user) => host,
        Some(_) => return None,
        // `host: # …` without a directory is a pdsh prefix before tool
        // output (`node07: # Port counters: …`) unless a command follows.
        None if dir.trim().is_empty() => {
            let word = command.split_whitespace().next();
            return (head.contains(':') && word.is_some_and(is_known_command))
                .then(|| (Some(user_host.to_owned()), command))
                .filter(|_| is_hostname(user_host));
        }
        // `node07:~ # cmd` (SUSE): the directory is a path. A `key: value`
        // line with a `#` comment (`State: Active # 端口状态`, annotated
        // docs) is no prompt.
        None if head.contains(':') && is_prompt_directory(dir) => user_host,
        None => return None,
    };
    if head.contains(' ') && !head.contains(':') {
        return zsh_default_prompt(head, command);
    }
    is_hostname(host).then(|| (Some(host.to_owned()), command))
}

/// `lnicotra@hydra1 nvitopTEST# nvidia-smi -L`, `me@box ~ % ibstat`: zsh's
/// default prompt (`%n@%m %1~ %#`: the user at the host, a space, the
/// directory's last part, then `%`, or `#` for root), taken only when it
/// is exactly those two words and before a known command (`mail me@x.org
/// today # …` is none). Before, the line was no prompt: the output under
/// it had no command and no host, and went unread.
fn zsh_default_prompt<'t>(head: &str, command: &'t str) -> Option<(Option<String>, &'t str)> {
    let mut words = head.split_whitespace();
    let (user_host, dir) = (words.next()?, words.next()?);
    let (user, host) = user_host.split_once('@')?;
    let dir_like = dir.starts_with(['~', '/'])
        || dir
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    let known = command
        .split_whitespace()
        .next()
        .is_some_and(is_known_command);
    (words.next().is_none() && is_hostname(user) && is_hostname(host) && dir_like && known)
        .then(|| (Some(host.to_owned()), command))
}

/// The directory of a `host:dir #` prompt: a path right after the colon
/// (`~`, `~/runs`, `/tmp`).
fn is_prompt_directory(dir: &str) -> bool {
    dir.starts_with(['~', '/']) && !dir.trim_end().contains(char::is_whitespace)
}

/// After the prompt's closing part: `# cmd`, `$ cmd`, `% cmd`, or nothing.
fn prompt_tail(after: &str) -> Option<&str> {
    let mut chars = after.chars();
    match chars.next()? {
        '$' | '#' | '%' => {}
        _ => return None,
    }
    let rest = chars.as_str();
    if rest.is_empty() {
        Some("")
    } else {
        rest.strip_prefix(' ')
    }
}

fn is_hostname(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.' || c == '_')
}

fn is_known_command(word: &str) -> bool {
    let base = word.rsplit('/').next().unwrap_or(word);
    COMMANDS.contains(&base)
}

/// Programs that run a command on other hosts and print their output
/// under each host's prefix or banner.
const FAN_OUT: &[&str] = &[
    "pdsh",
    "clush",
    "pssh",
    "parallel-ssh",
    "srun",
    "mpirun",
    "ansible",
    "salt",
    "xdsh",
    "cexec",
];

/// Whether the prompt's command runs on other hosts (`clush -w node[07-08]
/// -b ibstat`, `pdsh … | dshbak -c`): its output comes under their
/// prefixes or banners, and the prompt's own host (the admin node) printed
/// nothing of it.
pub(crate) fn fans_out(prompt: &Prompt) -> bool {
    let first = prompt
        .command
        .split(['|', ';', '&'])
        .next()
        .unwrap_or_default();
    first
        .split_whitespace()
        .map(|w| w.rsplit('/').next().unwrap_or(w))
        .any(|w| FAN_OUT.contains(&w))
}

/// Commands that take a tool's name as their argument without running it
/// (`which ibstat`, `man perfquery`): never a wrapper.
const NAMES_A_TOOL: &[&str] = &[
    "which", "man", "whereis", "type", "info", "help", "apropos", "locate", "file", "ldd", "rpm",
    "dpkg", "apt", "apt-get", "yum", "dnf", "zypper", "pip", "alias", "unalias", "command", "hash",
    "vi", "vim", "nano", "less", "more", "cat", "grep", "echo", "printf",
];

/// Whether `words` is an unknown word (a wrapper script or an alias) and
/// then a fabric tool's name: the first word is skipped.
fn runs_a_fabric_tool(words: &[&str]) -> bool {
    let (Some(first), Some(second)) = (words.first(), words.get(1)) else {
        return false;
    };
    let first = first.rsplit('/').next().unwrap_or(first);
    let second = second.rsplit('/').next().unwrap_or(second);
    let program_like = !first.is_empty()
        && first
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    program_like
        && !is_known_command(first)
        && !NAMES_A_TOOL.contains(&first)
        && FABRIC_TOOLS.contains(&second)
}

/// `NAME=value` with a shell variable's upper-case name (`NCCL_DEBUG=INFO`,
/// `CUDA_VISIBLE_DEVICES=0,1`).
fn is_env_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        name.starts_with(|c: char| c.is_ascii_uppercase() || c == '_')
            && name
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
    })
}

/// Words of the first command of a pipeline, without wrappers; and the host
/// named by an `ssh HOST …` wrapper, if any.
pub(crate) fn command_words(command: &str) -> (Vec<String>, Option<String>) {
    let first = command.split(['|', ';', '&']).next().unwrap_or(command);
    let mut words: Vec<&str> = first
        .split_whitespace()
        .filter(|w| !w.starts_with("2>") && !w.starts_with('>'))
        .collect();
    let mut host = None;
    while let Some(&program) = words.first() {
        let program = program.rsplit('/').next().unwrap_or(program);
        let skip = match program {
            "sudo" | "time" | "nice" | "command" | "exec" | "stdbuf" => {
                1 + words
                    .iter()
                    .skip(1)
                    .take_while(|w| w.starts_with('-'))
                    .count()
            }
            "env" => {
                1 + words
                    .iter()
                    .skip(1)
                    .take_while(|w| w.contains('=') || w.starts_with('-'))
                    .count()
            }
            "timeout" | "watch" => {
                let flags = words
                    .iter()
                    .skip(1)
                    .take_while(|w| w.starts_with('-'))
                    .count();
                let takes_arg = words.get(1..=flags).is_some_and(|f| {
                    f.iter()
                        .any(|w| matches!(*w, "-n" | "-s" | "-k" | "--interval"))
                });
                1 + flags + usize::from(takes_arg) + usize::from(program == "timeout")
            }
            "ssh" => {
                let mut i = 1;
                while let Some(w) = words.get(i) {
                    if w.starts_with('-') {
                        i += if matches!(*w, "-p" | "-l" | "-i" | "-o" | "-J") {
                            2
                        } else {
                            1
                        };
                    } else {
                        break;
                    }
                }
                host = words
                    .get(i)
                    .map(|h| h.rsplit('@').next().unwrap_or(h).to_owned());
                i + 1
            }
            "pdsh" | "clush" => {
                let mut i = 1;
                while let Some(w) = words.get(i) {
                    if w.starts_with('-') {
                        i += if matches!(*w, "-w" | "-g" | "-x" | "-f" | "-l" | "-R") {
                            2
                        } else {
                            1
                        };
                    } else {
                        break;
                    }
                }
                i
            }
            // `NCCL_DEBUG=INFO torchrun …`: the shell's environment
            // assignments before the program, as `env` takes them.
            _ if words.first().is_some_and(|w| is_env_assignment(w)) => 1,
            _ => usize::from(runs_a_fabric_tool(&words)),
        };
        if skip == 0 {
            break;
        }
        words.drain(..skip.min(words.len()));
    }
    let argv = words
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let w = w.trim_matches(|c| c == '\'' || c == '"');
            if i == 0 {
                w.rsplit('/').next().unwrap_or(w).to_owned()
            } else {
                w.to_owned()
            }
        })
        .collect();
    // `ibhosts | wc -l` prints a count, not the tool's lines: no tool's
    // output follows (before, the count was an unread line of the tool).
    if counted(command) {
        return (Vec::new(), host);
    }
    (argv, host)
}

/// Whether a stage of the pipeline after the first is `wc` (an `||`
/// runs a command of its own).
fn counted(command: &str) -> bool {
    // Most commands have no pipe at all: one byte search says so.
    if !command.contains('|') {
        return false;
    }
    let first = command.split(['&', ';']).next().unwrap_or(command);
    let first = first.split("||").next().unwrap_or(first);
    first.split('|').skip(1).any(|stage| {
        stage
            .split_whitespace()
            .next()
            .is_some_and(|p| p.rsplit('/').next() == Some("wc"))
    })
}

#[cfg(test)]
mod tests {
    /// The lines [`always_tool_output`] lets [`classify`] skip are ones
    /// every framing test rejects: the skip changes no answer.
    #[test]
    fn lines_skipped_as_tool_output_are_no_framing() {
        let skipped = [
            "# Port counters: Lid 2 port 1",
            "# Port counters: Lid 2 port 1 (CapMask: 0x1400)",
            "# Port extended counters: Lid 2 port 1 (CapMask: 0x5A00 CapMask2: 0x0000000)",
            "# Port extended counters: DR path slid 65535; dlid 65535; 0,1 port 255 (CapMask: 0x5300 CapMask2: 0x0000002)",
            "# PortRcvErrorDetails counters: Lid 12 port 3",
            "# PortXmitDiscardDetails counters: Lid 12 port 3 (CapMask: 0x1400)",
            "  # Port counters: Lid 2 port 1",
            "\tPort 1:",
            "        Port 12:",
        ];
        for line in skipped {
            assert!(always_tool_output(line), "{line:?}");
            assert_eq!(classify_any(line), None, "{line:?}");
        }
        // Near them, and not skipped: framing tests still see these.
        let kept = [
            "# perfquery -x",
            "# Port counters:",
            "# Port counters: Lid 2",
            "Port 1:",
            "\tPort one:",
            "\tPort 1: Active",
            "## Port counters: Lid 2 port 1",
        ];
        for line in kept {
            assert!(!always_tool_output(line), "{line:?}");
        }
    }

    use proptest::prelude::*;

    proptest! {
        /// The quick test never turns a framing line away: on text made of
        /// the bytes framing is made of, `classify` answers as the full
        /// classification does.
        #[test]
        fn the_quick_test_agrees_with_full_classification(
            line in prop_oneof![
                "[ \t\u{a0}\u{3000}]{0,2}[-`~=\\[\\]$#%@:()*>+< a-z0-9./\u{e9}]{0,24}",
                // Label-shaped: `### ibstat`, `== perfquery -x ==`, `[ibstat]`…
                "[ \t]?[-#=*>+\\[]{0,4} ?(ibstat|perfquery -x|nvidia-smi topo -m|uptime|notes|cmd: date)? ?[-#=*<:\\]]{0,4}",
                // Letter-led labels: `Running: ibstat`, `Host: node07`…
                "[ \t]?(Running|running|CMD|Output of|Host|hostname|Node|SERVER|Hosts)?:? ?(ibstat|perfquery -x|node07|alpha|c01|10.0.0.1)?:?",
                // Prompt-shaped: `(venv) [user@host dir]# cmd`, `host:~% cmd`…
                "[ \t]?(\\(v\\) )?\\[?[a-z]{1,3}(@[a-z0-9]{1,3})?(:[~a-z]{0,2})?( [~a-z]{0,2})?\\]?[$#%]( [a-z]{0,6})?",
            ],
        ) {
            prop_assert_eq!(classify(&line), classify_any(&line));
        }

        /// On a line without `$`, `#`, `%` or control bytes, the test of
        /// the opening alone turns away no line the quick test keeps.
        #[test]
        fn the_opening_test_keeps_what_the_quick_test_keeps(
            line in "[ \t\u{a0}\u{2003}\u{3000}]{0,2}[-`~=\\[\\]@:()*>+< a-zA-Z0-9./\u{e9}]{0,24}",
        ) {
            if may_frame(&line) {
                prop_assert!(may_open_framing(&line));
            }
        }
    }

    #[test]
    fn lines_of_tool_output_are_not_framing_and_framing_is_found() {
        for line in [
            "\t Link 0: Replay Errors: 0",
            "GPU 0: NVIDIA H100 (UUID: GPU-1)",
            "",
        ] {
            assert!(!may_frame(line), "{line:?}");
            assert_eq!(classify(line), None);
        }
        for line in [
            "```",
            " ~~~",
            "==> a <==",
            "[exit 1]",
            "-----",
            "$ ibstat",
            "[root@node07 ~]# ibstat",
            "(venv) user@host:~$ nvidia-smi",
            "node07:~ # ibstat",
        ] {
            assert!(classify(line).is_some(), "{line:?}");
        }
    }

    use super::*;

    fn p(line: &str) -> Option<(Option<String>, Vec<String>)> {
        prompt(line).map(|p| (p.host, p.argv))
    }

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    /// The command a line labels, through the full classification.
    fn label(line: &str) -> Option<Vec<String>> {
        match classify(line) {
            Some(Framing::Prompt(p)) => Some(p.argv),
            _ => None,
        }
    }

    #[test]
    fn collection_scripts_labels_name_the_command_that_follows() {
        for (line, want) in [
            ("### ibstat", "ibstat"),
            ("## ibstat ##", "ibstat"),
            (
                "===== perfquery -x -C mlx5_0 -P 1 =====",
                "perfquery -x -C mlx5_0 -P 1",
            ),
            ("+ nvidia-smi topo -m", "nvidia-smi topo -m"),
            ("++ sudo nvidia-smi nvlink -e", "nvidia-smi nvlink -e"),
            ("[ibstat]", "ibstat"),
            ("*** ibstat ***", "ibstat"),
            (">>> iblinkinfo", "iblinkinfo"),
            ("---- ibstat ----", "ibstat"),
            ("# Command: ibv_devinfo -v", "ibv_devinfo -v"),
            ("## Running: `date` ##", "date"),
            ("=== uptime ===", "uptime"),
            ("### /usr/sbin/ibstat:", "ibstat"),
            ("ibstat:", "ibstat"),
            (
                "perfquery -x -C mlx5_0 -P 1:",
                "perfquery -x -C mlx5_0 -P 1",
            ),
            ("Running: ibstat", "ibstat"),
            ("running: nvidia-smi topo -m", "nvidia-smi topo -m"),
            ("Command: perfquery -x", "perfquery -x"),
            ("CMD: sudo ibstatus", "ibstatus"),
            (
                "Executing: /usr/bin/nvidia-smi nvlink -s",
                "nvidia-smi nvlink -s",
            ),
            ("Output of ibv_devinfo -v", "ibv_devinfo -v"),
            ("Running: `iblinkinfo`:", "iblinkinfo"),
            ("ibstat mlx5_0 1:", "ibstat mlx5_0 1"),
            ("ibstat output:", "ibstat output"),
        ] {
            assert_eq!(label(line), Some(words(want)), "{line:?}");
        }
    }

    #[test]
    fn headings_of_tool_output_and_list_items_are_no_labels() {
        for line in [
            "# Port extended counters: Lid 2 port 1 (CapMask: 0x5A00)",
            "# Topology file: generated on Thu Dec  4 2026",
            "==============NVSMI LOG==============",
            "+-----------------------------------------------------------------------------+",
            "+----+-------+",
            "[1]\t\"H-0002c9030045ab12\"[1](2c9030045ab13)",
            "## Notes ##",
            "- ibstat shows port 1 down",
            "* perfquery is in the attachment",
            "> ibstat",
            "> ibstat is what I ran",
            "###",
            "[]",
            "  ibstat:",
            "Errors:",
            "ibstat: iberror: failed: ibstat",
            "Running: the job on 8 nodes",
            "Command: unknown",
            "  Running: ibstat",
            "\tCommand: ibstat",
            "Runningibstat",
            "### iblinkinfo - View link information on IB network",
            "## ibswitches — list the switches",
            "sminfo on the nodes:",
            "/usr/sbin/sminfo on the nodes:",
            "ibv_devinfo on the nodes:",
            "ibstat of both hosts:",
            "ibstat for node n01:",
            "perfquery counters before and after:",
        ] {
            assert_eq!(label(line), None, "{line:?}");
        }
    }

    fn host(line: &str) -> Option<String> {
        match classify(line) {
            Some(Framing::HostHeading(h)) => Some(h),
            _ => None,
        }
    }

    #[test]
    fn headings_of_a_loop_over_hosts_name_the_host() {
        for (line, want) in [
            ("==== node07 ====", "node07"),
            ("### gpu00038", "gpu00038"),
            ("[dgx-a100-03]", "dgx-a100-03"),
            (">>> c001", "c001"),
            ("*** n12.cluster.local ***", "n12.cluster.local"),
            ("== node07 (10.0.0.7) ==", "node07"),
            ("### Host: node07 ###", "node07"),
            ("----- gpu-07 -----", "gpu-07"),
            ("#### gpu001:", "gpu001"),
            ("node07 | CHANGED | rc=0 >>", "node07"),
            ("gpu001 | FAILED | rc=127 >>", "gpu001"),
            ("node07:", "node07"),
            ("from n1:", "n1"),
            ("On gpu-07.lab:", "gpu-07.lab"),
            ("node07 | SUCCESS => {", "node07"),
            ("node09 | UNREACHABLE! => {", "node09"),
            ("[1] 10:12:01 [SUCCESS] node07", "node07"),
            (
                "[3] 10:12:02 [FAILURE] node09 Exited with error code 255",
                "node09",
            ),
            ("Host: node07", "node07"),
            ("HOSTNAME: gpu-a100-12.cluster", "gpu-a100-12.cluster"),
            ("Hostname: alpha", "alpha"),
            ("host: dgx-b (10.0.0.7)", "dgx-b"),
            ("Node: c012", "c012"),
            ("Server: n12.cluster.local", "n12.cluster.local"),
        ] {
            assert_eq!(host(line), Some(want.to_owned()), "{line:?}");
        }
    }

    #[test]
    fn a_banner_naming_only_a_device_is_a_heading_that_names_it() {
        for (line, device) in [
            ("== mlx5_0 ==", "mlx5_0"),
            ("### mlx5_1", "mlx5_1"),
            ("---- mlx4_0 ----", "mlx4_0"),
            ("[mlx5_3]", "mlx5_3"),
            ("### 0000:3b:00.0", "0000:3b:00.0"),
            ("== 86:00.1 ==", "86:00.1"),
            (
                "---- /dev/mst/mt4123_pciconf0 ----",
                "/dev/mst/mt4123_pciconf0",
            ),
            ("*** mt4129_pciconf0.1 ***", "mt4129_pciconf0.1"),
            ("=== Device: mlx5_2 ===", "mlx5_2"),
            ("3c:00.0", "3c:00.0"),
            ("0000:3C:00.1  ", "0000:3C:00.1"),
        ] {
            assert_eq!(device_heading(line), Some(device), "{line}");
            assert_eq!(classify(line), Some(Framing::Heading), "{line}");
            assert_eq!(host_heading(line), None, "{line}");
        }
        for line in [
            "== mlx5_0 port 1 ==",
            "### node07",
            "mlx5_0",
            "- mlx5_0",
            "== 0000:3b:00.9 ==",
            "3c:00.9",
            "12:34:56.7",
            "00000000:3B:00.0",
            "== mlx5_ ==",
            "# Port counters: Lid 2 port 1",
            "[global]",
        ] {
            assert_eq!(device_heading(line), None, "{line}");
        }
    }

    #[test]
    fn headings_of_devices_sections_and_versions_name_no_host() {
        for line in [
            "## Notes ##",
            "[global]",
            "=== GPU0 ===",
            "### nic1",
            "[mlx5_0]",
            "==== H100 ====",
            "== MT4129 ==",
            "[1]",
            "==== 2026-12-01 ====",
            "### v1.2.3",
            "### Step 1",
            "=== snapshot2 ===",
            "### run-01",
            "[t0]",
            "=== Errors (3 found) ===",
            "- node07",
            "+ node07",
            "### ibstat",
            "\tPort 1:",
            "  node07:",
            "Port1:",
            "GPU 0:",
            "Errors:",
            "mlx5_0:",
            "from mlx5_0:",
            "from GPU0:",
            "on port 1:",
            "from the switch:",
            "ibstat:",
            "a | CHANGED | rc=0 >>",
            "node07 | changed | rc=0 >>",
            "node07 | CHANGED >>",
            // Indented: a field of tool output.
            "  Host: node07",
            "\tNode: c012",
            // `Node:` and `Server:` head other values too: a digit is asked.
            "Node: alpha",
            "Server: Running",
            "Server:  10.0.0.1",
            "Host: GPU0",
            "Host: node07 and node08",
            "Hostname: ibstat",
            "Hosts: node07",
            "node07 | success => {",
            "node07 => {",
            "[1] 10:12 [SUCCESS] node07",
            "[x] 10:12:01 [SUCCESS] node07",
            "[1] 10:12:01 [PENDING] node07",
            // RDMA providers and their devices (an author's `# i40iw` above
            // a grep of that driver's counters), not machines.
            "# i40iw",
            "### rxe0",
            "=== irdma1 ===",
            "[siw0]",
            "### hfi1",
            "== qedr0 ==",
            "### efa0",
            "# erdma",
            "### i40iw0",
            "### bnxt",
        ] {
            assert_eq!(host(line), None, "{line:?}");
        }
    }

    #[test]
    fn prompt_shapes() {
        assert_eq!(p("$ ibstat"), Some((None, words("ibstat"))));
        // Chinese docs' `> ` prompt, before a known command with an option.
        assert_eq!(
            p("> nvidia-smi nvlink -i 0 -gt d"),
            Some((None, words("nvidia-smi nvlink -i 0 -gt d")))
        );
        assert_eq!(p("> ibstat"), None);
        // A csh-style `host> ` prompt before a known command; mail quoting's
        // initials and prose are none.
        assert_eq!(
            p("sulu> ibstatus"),
            Some((Some("sulu".into()), words("ibstatus")))
        );
        assert_eq!(p("JS> ibstatus"), None);
        assert_eq!(p("sulu> the port was down"), None);
        assert_eq!(
            p("[root@node07 ~]# perfquery -x"),
            Some((Some("node07".into()), words("perfquery -x")))
        );
        assert_eq!(
            p("ops@gpu-12:~/dumps$ nvidia-smi nvlink -s"),
            Some((Some("gpu-12".into()), words("nvidia-smi nvlink -s")))
        );
        assert_eq!(
            p("node01:~ # ibstat"),
            Some((Some("node01".into()), words("ibstat")))
        );
        assert_eq!(
            p("# ibstat mlx5_0 1"),
            Some((None, words("ibstat mlx5_0 1")))
        );
        assert_eq!(
            p("(venv) me@box:~$ date"),
            Some((Some("box".into()), words("date")))
        );
        assert_eq!(p("[root@node07 ~]#"), Some((Some("node07".into()), vec![])));
        assert_eq!(
            p("[10:14:02 root@node17 ~]# perfquery -x 12 1"),
            Some((Some("node17".into()), words("perfquery -x 12 1")))
        );
        assert_eq!(
            p("node07: # perfquery -x"),
            Some((Some("node07".into()), words("perfquery -x")))
        );
        assert_eq!(
            p("$nvidia-smi topo -m"),
            Some((None, words("nvidia-smi topo -m")))
        );
        assert_eq!(
            p("(baobab)-[root@gpu048 ~]$ nvidia-smi nvlink -s"),
            Some((Some("gpu048".into()), words("nvidia-smi nvlink -s")))
        );
        assert_eq!(p("(note)-[see above]"), None);
        // A bracket prompt that lost its `[`; a `]` in a word with no
        // `user@host` before it is no prompt.
        assert_eq!(
            p("root@rhel-storage-103 ~]# ibstat"),
            Some((Some("rhel-storage-103".into()), words("ibstat")))
        );
        assert_eq!(p("see a[1]# ibstat"), None);
        assert_eq!(p("a@b c[1]# ibstat"), None);
        assert_eq!(
            p("# ib_read_lat -d mlx4_0 -i 1"),
            Some((None, words("ib_read_lat -d mlx4_0 -i 1")))
        );
        assert_eq!(p("$HOME/bin/run.sh"), None);
        assert_eq!(p("$1 = 0x1f"), None);
        // zsh's arrow prompts: oh-my-zsh's directory, branch and dirty
        // mark, or a theme's `user@host` and directory.
        assert_eq!(
            p("\u{279c} xy@A10 ~ nvidia-smi topo -m"),
            Some((Some("A10".into()), words("nvidia-smi topo -m")))
        );
        assert_eq!(
            p("\u{279c}  opensm git:(master) \u{2717} perfquery 7 1"),
            Some((None, words("perfquery 7 1")))
        );
        // Not before a known command, or not an arrow and a space.
        assert_eq!(p("\u{279c}  opensm git:(master) make"), None);
        assert_eq!(p("\u{279c}ibstat"), None);
        assert_eq!(p("\u{279c} see the ibstat output below"), None);
        // zsh's default `user@host dir# ` (root) or `% `, also after a
        // `(venv) `; not before an unknown command, nor with more words.
        assert_eq!(
            p("(venv) ops@gpu-a7 benchDIR# nvidia-smi -L"),
            Some((Some("gpu-a7".into()), words("nvidia-smi -L")))
        );
        assert_eq!(
            p("me@box ~ % ibstat"),
            Some((Some("box".into()), words("ibstat")))
        );
        assert_eq!(p("me@box ~ % make"), None);
        assert_eq!(p("mail me@box today # ibstat"), None);
        // bash's default `\s-\v\$ ` of a shell in a container, with a
        // command or bare; a name or version of another form is none.
        assert_eq!(p("sh-5.1# ibstatus"), Some((None, words("ibstatus"))));
        assert_eq!(
            p("bash-4.4$ ibv_devinfo -v"),
            Some((None, words("ibv_devinfo -v")))
        );
        assert_eq!(p("sh-5.1#"), Some((None, vec![])));
        assert_eq!(p("zsh-5.9# ibstat"), None);
        assert_eq!(p("bash-x# ibstat"), None);
        assert_eq!(p("sh-5.1#ibstat"), None);
        // PowerShell's and cmd.exe's prompts: the working directory, `>`,
        // the command (cmd.exe's without a space); bare after the last
        // command. They name no host.
        assert_eq!(
            p("PS C:\\Windows\\system32> nvidia-smi"),
            Some((None, words("nvidia-smi")))
        );
        assert_eq!(
            p("PS C:\\Users\\ops> nvidia-smi topo -m"),
            Some((None, words("nvidia-smi topo -m")))
        );
        assert_eq!(p("PS D:\\>"), Some((None, vec![])));
        assert_eq!(
            p("C:\\Users\\ops>nvidia-smi nvlink -s"),
            Some((None, words("nvidia-smi nvlink -s")))
        );
        assert_eq!(p("C:\\Users\\ops>"), Some((None, vec![])));
        // A Windows path in output, or a redirection, is no prompt.
        assert_eq!(
            p("C:\\Program Files\\NVIDIA Corporation\\NVSMI\\nvidia-smi.exe"),
            None
        );
        assert_eq!(p("PS output: C:\\x> y"), None);
        assert_eq!(p("C:\\tools\\run.exe | more > out.txt"), None);
    }

    #[test]
    fn tool_output_is_not_a_prompt() {
        for line in [
            "# Port counters: Lid 1 port 1 (CapMask: 0x5300)",
            "\t\tState: Active",
            "GPU0\tX \tNV18",
            "Rate: 200",
            "  NV#  = Connection traversing a bonded set of # NVLinks",
            "Errors for 0x0002c903 \"switch\"",
            "## Summary: 3 nodes checked",
            "\t Link 0: Replay Errors: 0",
            "node0001: # Port counters: Lid 2 port 1 (CapMask: 0x1300)",
            "node07: # Topology file: generated on Mon Jan  5 12:00:00 2026",
        ] {
            assert_eq!(prompt(line), None, "{line}");
        }
    }

    #[test]
    fn wrappers_are_removed_and_ssh_names_the_host() {
        let (argv, host) =
            command_words("sudo -E timeout 10 /usr/sbin/perfquery -x 2>&1 | tee out");
        assert_eq!(argv, words("perfquery -x"));
        assert_eq!(host, None);
        let (argv, host) = command_words("ssh -p 22 root@node09 ibstat");
        assert_eq!(argv, words("ibstat"));
        assert_eq!(host.as_deref(), Some("node09"));
        let (argv, _) = command_words("pdsh -w node[1-4] ibstat -s");
        assert_eq!(argv, words("ibstat -s"));
        // A count of the tool's lines is not its output.
        let (argv, _) = command_words("ib ibhosts 2>/dev/null | wc -l");
        assert!(argv.is_empty(), "{argv:?}");
        let (argv, _) = command_words("ibstat || wc -l");
        assert_eq!(argv, words("ibstat"));
        // The shell's environment assignments are not the program.
        let (argv, _) = command_words(
            "NCCL_DEBUG=INFO CUDA_VISIBLE_DEVICES=0,1 LD_LIBRARY_PATH=/opt/x/lib torchrun train.py",
        );
        assert_eq!(argv, ["torchrun", "train.py"]);
        let (argv, _) = command_words("LD_PRELOAD=x.so perfquery 5 1");
        assert_eq!(argv, words("perfquery 5 1"));
        // A lower-case `name=value` is an argument of its own, not the
        // shell's environment.
        let (argv, _) = command_words("key=value torchrun");
        assert_eq!(argv.first().map(String::as_str), Some("key=value"));
    }

    /// An unknown word before a fabric tool's name is a wrapper or an
    /// alias that runs it (a simulator's `ibsim-run`, a lab's `alias ib=…`);
    /// a command that only names the tool is not.
    #[test]
    fn an_unknown_word_before_a_fabric_tool_runs_it() {
        let (argv, _) = command_words("ib smpquery portinfo 5 1 2>/dev/null | grep LinkState");
        assert_eq!(argv, words("smpquery portinfo 5 1"));
        let (argv, _) = command_words("/opt/sim/bin/ibsim-run sminfo");
        assert_eq!(argv, words("sminfo"));
        let (argv, _) = command_words("sudo ib perfquery -x 4 33");
        assert_eq!(argv, words("perfquery -x 4 33"));
        for kept in [
            "which ibstat",
            "man perfquery",
            "echo ibstat",
            "rpm -qf ibstat",
            "myscript --node ibstat",
            "ib ib smpquery",
        ] {
            let (argv, _) = command_words(kept);
            let first = kept.split_whitespace().next().unwrap_or_default();
            assert_eq!(
                argv.first().map(String::as_str),
                Some(first.rsplit('/').next().unwrap_or(first)),
                "{kept}"
            );
        }
    }

    #[test]
    fn other_framing() {
        assert_eq!(classify("```text"), Some(Framing::Fence));
        assert_eq!(
            classify("==> node07/ibstat.txt <=="),
            Some(Framing::FileHeader("node07/ibstat.txt".into()))
        );
        assert_eq!(classify("[exit 0]"), Some(Framing::ExitMarker));
        // A Markdown heading's weak host shape wants confirming; a
        // fleet's shape, a `Host:` label and a script's banner do not.
        for (line, name, unconfirmed) in [
            ("#### rocev1", "rocev1", true),
            ("### node1", "node1", true),
            ("## ConnectX-7", "ConnectX-7", true),
            ("### node01", "node01", false),
            ("### cn1234", "cn1234", false),
            ("### dgx-h100-3", "dgx-h100-3", false),
            ("### node7.cluster", "node7.cluster", false),
            ("### Host: node1", "node1", false),
            ("### node1 ###", "node1", false),
            ("==== node1 ====", "node1", false),
        ] {
            assert_eq!(
                markdown_heading_unconfirmed(line, name),
                unconfirmed,
                "{line}"
            );
        }
        // journalctl's line between two boots is the kernel log's own.
        for line in [
            "-- Boot 0b5e3c1a9f6d4e2b8a7c6d5e4f3a2b1c --",
            "-- Reboot --",
        ] {
            assert_eq!(classify(line), None, "{line}");
        }
        assert_eq!(classify("-- Rebooting now --"), Some(Framing::Heading));
        assert_eq!(classify("---------------"), Some(Framing::Rule));
        // show_gids's underline of its column names stays in its output.
        assert_eq!(
            classify("---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---"),
            Some(Framing::Rule)
        );
        assert_ne!(classify("--- mlx5_0 ---"), Some(Framing::Rule));
        // sudo asking for the password, in English or translated, is the
        // terminal's heading; a host heading in brackets stays one.
        for line in ["[sudo] password for alice: ", "[sudo] Passwort für alice:"] {
            assert_eq!(classify(line), Some(Framing::Heading), "{line}");
        }
        assert_eq!(
            classify("[node07]"),
            Some(Framing::HostHeading("node07".into()))
        );
        // A heading or comment in letters no tool prints ends the output
        // above it; English ones and tools' own `#` headers do not.
        for line in [
            "# 模型训练时（LLaMA-13B）",
            "## ECCが有効か確認",
            "# Überblick",
        ] {
            assert_eq!(classify(line), Some(Framing::Heading), "{line}");
        }
        // `[host dir]#` before a known command names the host.
        match classify("[gpu6000 ~]# nvidia-smi -q -d MEMORY") {
            Some(Framing::Prompt(p)) => assert_eq!(p.host.as_deref(), Some("gpu6000")),
            other => panic!("{other:?}"),
        }
        assert_ne!(
            classify("[exit 0]# ibstat").and_then(|f| match f {
                Framing::Prompt(p) => p.host,
                _ => None,
            }),
            Some("exit".to_owned())
        );
        // A prompt copied behind another: the inner one names the host.
        match classify("$ sonata@coyote2:~/runs$ nvidia-smi topo -m") {
            Some(Framing::Prompt(p)) => {
                assert_eq!(
                    (p.host.as_deref(), p.command.as_str()),
                    (Some("coyote2"), "nvidia-smi topo -m")
                );
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            classify("# ibv_devinfo -d mlx4_0 #查看设备具体信息"),
            Some(Framing::Heading)
        );
        for line in ["# Port counters: Lid 2 port 1", "# GPU 0 → NIC", "#模型"] {
            assert_ne!(classify(line), Some(Framing::Heading), "{line}");
        }
        // Prose that opens with a letter outside ASCII ends the output
        // above it; a tool's line with such a letter further on does not.
        for line in [
            "最典型的当然有 `nvidia-smi` 和 `nvidia-smi topo -m`。",
            "ここでは ibstat の出力を確認する",
            "  Проверка состояния порта",
        ] {
            assert_eq!(classify(line), Some(Framing::Heading), "{line}");
        }
        for line in [
            "\tNode description: nœud-07 HCA-1",
            "GPU0\t X \tNV18",
            "“quoted” 123",
        ] {
            assert_ne!(classify(line), Some(Framing::Heading), "{line}");
        }
        // A reStructuredText directive opens a block, as a fence does;
        // dots that are a tool's own (perfquery's leaders, an elision) do not.
        for line in [".. code-block:: bash", ".. note::", "  .. code:: console"] {
            assert_eq!(classify(line), Some(Framing::Heading), "{line}");
        }
        for line in [".. ", "...", ".. 12:30::", "..code-block:: bash"] {
            assert_ne!(classify(line), Some(Framing::Heading), "{line}");
        }
        // An environment variable ends the output above it; tools' own
        // `name=value` (ibnetdiscover, lower case), a lone letter and an
        // indented or spaced `=` are not one.
        for line in [
            "NCCL_VERSION=2.21.5-1",
            "CUDA_VISIBLE_DEVICES=0,1",
            "LD_PRELOAD=",
        ] {
            assert_eq!(classify(line), Some(Framing::Heading), "{line}");
        }
        // A sentence naming a tool we read and ending in a colon
        // introduces output: it ends the output above it. A label of a
        // command line, or a field of the tool's, does not.
        for line in [
            "sminfo on the nodes:",
            "ibstatus is ok:",
            "ibv_devinfo for all the nodes:",
        ] {
            assert_eq!(classify(line), Some(Framing::Heading), "{line}");
        }
        for line in [
            "ibstat mlx5_0 1:",
            "ib_send_bw shows:",
            "  sminfo on the nodes:",
            "perfquery -x on the nodes:",
        ] {
            assert_ne!(classify(line), Some(Framing::Heading), "{line}");
        }
        for line in [
            "vendid=0x2c9",
            "X=1",
            "  NCCL_DEBUG=INFO",
            "PortXmitData:....................4294967295",
            "GPU0 = X",
        ] {
            assert_ne!(classify(line), Some(Framing::Heading), "{line}");
        }
        // A tool's command line alone is its prompt; prose naming it is not.
        assert!(matches!(
            classify("nvidia-smi topo -m"),
            Some(Framing::Prompt(_))
        ));
        assert!(matches!(
            classify("sudo perfquery -x 12 1"),
            Some(Framing::Prompt(_))
        ));
        assert!(matches!(classify("ibstat"), Some(Framing::Prompt(_))));
        assert!(matches!(
            classify("nvidia-smi -q -i 0 | grep -A 2 -i Fabric"),
            Some(Framing::Prompt(_))
        ));
        for line in [
            "ibstat shows the port is down",
            "nvidia-smi says: -m failed?",
            "ibstat mlx5_0",
            "ibstat | then I saw the port down",
        ] {
            assert_eq!(classify(line), None, "{line}");
        }
        assert_eq!(
            host_banner("node[01-04] (4)").as_deref(),
            Some("node[01-04]")
        );
        assert_eq!(host_banner("node07").as_deref(), Some("node07"));
        // After the name only a host count: a tool's line between two rules
        // (`ibswinfo`'s uptime) is no banner.
        for line in [
            "uptime (d-h:m:s)   | 12d-03:04:05",
            "node07 (x)",
            "node07 ()",
        ] {
            assert_eq!(host_banner(line), None, "{line}");
        }
    }

    #[test]
    fn a_title_between_two_rules_of_equals_is_a_reports_banner_unless_ibswinfos() {
        let rule = "==============================";
        for title in [
            "     Environment Variables",
            "       CUDA / GPU Info",
            "vLLM Info",
        ] {
            assert_eq!(
                report_banner(rule, title, rule, Some("OS  : Ubuntu 24.04")),
                Some(title.trim()),
                "{title}"
            );
        }
        // ibswinfo's own opening: a description with `;`/`:`, or any
        // title followed by its `label | value` fields.
        assert_eq!(
            report_banner(rule, " MF0;leaf-02:MQM8790/U1", rule, None),
            None
        );
        assert_eq!(
            report_banner(
                rule,
                " Quantum Mellanox Technologies",
                rule,
                Some("part number        | MQM8790-HS2F")
            ),
            None
        );
        // Rules of dashes, a rule for a title, a time: no such banner.
        let dashes = "------------------------------";
        assert_eq!(report_banner(dashes, "System Info", dashes, None), None);
        assert_eq!(report_banner(rule, rule, rule, None), None);
        assert_eq!(report_banner(rule, "NVSMI LOG", rule, None), None);
    }

    #[test]
    fn a_mails_sign_off_and_quoted_reply_are_told_from_the_tools_lines() {
        use crate::parse::Kind;
        for line in [
            "Best Regards",
            "Thanks,",
            "Dana Park",
            "> On Thu, Feb 20, 2020 at 08:57:29AM -0500, Lee Chan wrote:",
            "> > Hello!",
            "> >",
            "> > Thanks for your bug report.",
        ] {
            for kind in [Kind::IbvDevinfo, Kind::Ibstat, Kind::Ibstatus] {
                assert!(sign_off_after_output(kind, line), "{kind:?}: {line}");
            }
            // Indented, it is inside the tool's output; other formats
            // set nothing aside.
            assert!(!sign_off_after_output(Kind::Ibstat, &format!("\t{line}")));
            assert!(!sign_off_after_output(Kind::Mlxlink, line), "{line}");
        }
        // The tool's lines, quoted or not, and lines with a value.
        for (kind, line) in [
            (Kind::Ibstat, "> CA 'mlx5_0'"),
            (Kind::Ibstat, "> >         Port 1:"),
            (Kind::Ibstat, "Physical state: Polling"),
            (Kind::Ibstat, "Rate: 100"),
            (Kind::Ibstat, "foo=bar"),
            (Kind::Ibstat, "0x1c4"),
            (Kind::IbvDevinfo, "No IB devices found"),
            (Kind::Ibstatus, "Infiniband device 'mlx5_0' port 1 status:"),
        ] {
            assert!(!sign_off_after_output(kind, line), "{kind:?}: {line}");
        }
    }

    #[test]
    fn a_markdown_heading_under_a_matrix_is_the_authors_at_any_indent() {
        use crate::parse::Kind;
        for line in [
            "### PCIe / P2P detail (lspci)",
            "  ### PCIe / P2P detail (lspci)",
            "\t## NIC",
            "# GPU topology",
        ] {
            for kind in [Kind::TopoMatrix, Kind::TopoP2p] {
                assert!(prose_after_output(kind, line, &[]), "{kind:?}: {line}");
            }
            // Other tools print `#` lines of their own (perfquery's header).
            assert!(!prose_after_output(Kind::Perfquery, line, &[]), "{line}");
        }
        for line in ["#", "### ", "####### seven", "#no-space", "  GPU0  X  NS"] {
            assert!(!prose_after_output(Kind::TopoP2p, line, &[]), "{line}");
        }
    }

    #[test]
    fn prose_after_a_tools_indented_output_is_told_from_its_lines() {
        use crate::parse::Kind;
        // The author's headings and sentences.
        for line in [
            "from n1:",
            "Other stuff:",
            "Notes:",
            "To re-create the link (rxe0):",
            "rxe0 is bound to enp0s8",
            "disabled the firewall",
            "sudo rdma link add rxe0 type rxe netdev enp0s8",
        ] {
            assert!(reads_as_prose(line), "{line}");
            for kind in [Kind::IbvDevinfo, Kind::Ibstat, Kind::Ibstatus] {
                assert!(prose_after_output(kind, line, &[]), "{kind:?}: {line}");
            }
            // Indented, it is inside the tool's output: never set aside.
            assert!(!prose_after_output(
                Kind::IbvDevinfo,
                &format!("\t{line}"),
                &[]
            ));
            // Other formats do not set lines aside.
            assert!(!prose_after_output(Kind::Nvlink, line, &[]), "{line}");
        }
        // Lines that are no prose: one or two words, a label with a value,
        // numbers.
        for line in [
            "Any ideas?",
            "0x1c4",
            "foo=bar",
            "Rate: 100",
            "n1:",
            "x: y z:",
        ] {
            assert!(!reads_as_prose(line), "{line}");
        }
        // The tool's own lines, even unindented, stay the tool's.
        for (kind, line) in [
            (Kind::IbvDevinfo, "hca_id:\tmlx5_0"),
            (Kind::IbvDevinfo, "state:\t\t\tPORT_DOWN (1)"),
            (Kind::IbvDevinfo, "core clock not supported"),
            (Kind::IbvDevinfo, "GID[  0]:\t\tfe80::1, RoCE v2"),
            (Kind::IbvDevinfo, "No IB devices found"),
            (Kind::Ibstat, "CA 'mlx5_0'"),
            (Kind::Ibstat, "Port 1:"),
            (Kind::Ibstat, "Physical state: Polling"),
            (Kind::Ibstat, "Link layer: InfiniBand"),
            (Kind::Ibstatus, "Infiniband device 'mlx5_0' port 1 status:"),
            (Kind::Ibstatus, "phys state:\t 3: Disabled"),
            (Kind::Ibstatus, "Fatal error: device mlx5_9 not found"),
        ] {
            assert!(!prose_after_output(kind, line, &[]), "{kind:?}: {line}");
        }
    }
}
