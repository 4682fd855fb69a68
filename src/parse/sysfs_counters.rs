//! Linux sysfs InfiniBand port counters pasted from a shell: the files of
//! `/sys/class/infiniband/<device>/ports/<port>/counters/` (and
//! `hw_counters/`), as health tools and operators collect them without root
//! or MADs.
//!
//! Three shapes are read, in one section or several pasted together:
//!
//! ```text
//! /sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error:0     grep -H . …/counters/*
//! ./port_rcv_errors:0                                              grep . * in the directory
//! ==> port_rcv_errors <==                                          head -n 50 * / tail -n +1 *
//! 0
//! === ./link_downed ===                                            for f in …; do echo "=== $f ==="; cat "$f"; done
//! 255
//! ```
//!
//! The path names the device and port. Relative paths name them only when a
//! prompt showing the working directory does (`…/mlx5_1/ports/1/counters$
//! for file in …`, whose loop lines are its command, not output); otherwise
//! the port is unknown: its block is marked [`PartialReason::NoHeader`]
//! (IN001 says so, no rate pairs it with another snapshot) and still read
//! and judged.
//!
//! # Model: perfquery's
//! The files of `counters/` are the PMA PortCounters the kernel reads for
//! the port (`drivers/infiniband/core/sysfs.c`, `PORT_PMA_ATTR`): the same
//! fields perfquery prints, with the same hardware widths. So the section's
//! model is [`Perfquery`]: one [`PerfAttribute::PortCounters`] block per
//! port holding `symbol_error` as `SymbolErrorCounter` (16 bits) and so on,
//! `port_xmit_wait` as `PortXmitWait` (32). Every IB1xx counter rule,
//! saturation (IB111), the measurements and the two-snapshot rates read it
//! as they read perfquery, as they read ibqueryerrors' port counters, with
//! no rule knowing the format.
//!
//! The data and packet counters have two widths: 32 bits from PortCounters,
//! or 64 bits from PortCountersExtended when the port has the extended
//! counters (`IB_PMA_CLASS_CAP_EXT_WIDTH`), which is also when the kernel
//! adds `unicast_*`/`multicast_*` files. When those files are present, or a
//! data or packet value exceeds 32 bits, the four (with the unicast and
//! multicast counts) go to a [`PerfAttribute::PortCountersExtended`] block
//! of their own, 64 bits wide; otherwise they stay 32-bit PortCounters
//! fields, as perfquery without `-x` prints them. `port_xmit_data` and
//! `port_rcv_data` count 4-octet words in both, as perfquery's do. Kernels
//! before 4.5 put the 64-bit values in `counters_ext/` (`port_xmit_data_64`,
//! `port_unicast_rcv_packets`, …): read as the same extended counters, and
//! preferred to the 32-bit `counters/` value of the same counter.
//!
//! `hw_counters/` files (mlx5 `out_of_buffer`, `rnr_nak_retry_err`, …) and
//! other files of the port (`state`, `rate`) are kept as printed in the
//! block's `fields` (`hw_counters/out_of_buffer`), not judged: no rule
//! knows them.
//!
//! Each file names one block key, so a second dump of the same files (a
//! second snapshot) starts a section of its own.

use crate::diag::WarningKind;
use crate::model::partial::{Partial, PartialReason};
use crate::model::perfquery::{PerfAttribute, PerfBlock, Perfquery};
use crate::model::{Counter, IbCounter};
use crate::parse::text::{decimal_u64, trim, NumberError, Unread};
use crate::parse::{Block, Line, Parsed, Spec};
use crate::span::LineSpan;
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

pub(crate) const FORMAT: Spec<Perfquery> = Spec {
    command,
    starts: |b| matches!(b, b'/' | b'.' | b'=' | b'_') || b.is_ascii_alphabetic(),
    detect,
    parse,
    summary,
    attach_command: None,
    labels: &[],
};

/// `grep`, `head` or `tail` over files of a `counters` directory.
fn command(argv: &[&str]) -> bool {
    let program = argv.first().map(|p| p.rsplit('/').next().unwrap_or(p));
    matches!(program, Some("grep" | "egrep" | "head" | "tail"))
        && argv.iter().skip(1).any(|w| w.contains("counters"))
}

/// A `counters/` file: its name, the perfquery counter it is and the width
/// of its PortCounters field (the data and packet counters: see
/// [`Width::Data`]).
const COUNTER_FILES: &[(&str, IbCounter, Width)] = &[
    (
        "symbol_error",
        IbCounter::SymbolErrorCounter,
        Width::Bits(16),
    ),
    (
        "link_error_recovery",
        IbCounter::LinkErrorRecoveryCounter,
        Width::Bits(8),
    ),
    ("link_downed", IbCounter::LinkDownedCounter, Width::Bits(8)),
    ("port_rcv_errors", IbCounter::PortRcvErrors, Width::Bits(16)),
    (
        "port_rcv_remote_physical_errors",
        IbCounter::PortRcvRemotePhysicalErrors,
        Width::Bits(16),
    ),
    (
        "port_rcv_switch_relay_errors",
        IbCounter::PortRcvSwitchRelayErrors,
        Width::Bits(16),
    ),
    (
        "port_xmit_discards",
        IbCounter::PortXmitDiscards,
        Width::Bits(16),
    ),
    (
        "port_xmit_constraint_errors",
        IbCounter::PortXmitConstraintErrors,
        Width::Bits(8),
    ),
    (
        "port_rcv_constraint_errors",
        IbCounter::PortRcvConstraintErrors,
        Width::Bits(8),
    ),
    (
        "local_link_integrity_errors",
        IbCounter::LocalLinkIntegrityErrors,
        Width::Bits(4),
    ),
    (
        "excessive_buffer_overrun_errors",
        IbCounter::ExcessiveBufferOverrunErrors,
        Width::Bits(4),
    ),
    ("VL15_dropped", IbCounter::VL15Dropped, Width::Bits(16)),
    ("port_xmit_wait", IbCounter::PortXmitWait, Width::Bits(32)),
    ("port_xmit_data", IbCounter::PortXmitData, Width::Data),
    ("port_rcv_data", IbCounter::PortRcvData, Width::Data),
    ("port_xmit_packets", IbCounter::PortXmitPkts, Width::Data),
    ("port_rcv_packets", IbCounter::PortRcvPkts, Width::Data),
    (
        "unicast_xmit_packets",
        IbCounter::PortUnicastXmitPkts,
        Width::Extended,
    ),
    (
        "unicast_rcv_packets",
        IbCounter::PortUnicastRcvPkts,
        Width::Extended,
    ),
    (
        "multicast_xmit_packets",
        IbCounter::PortMulticastXmitPkts,
        Width::Extended,
    ),
    (
        "multicast_rcv_packets",
        IbCounter::PortMulticastRcvPkts,
        Width::Extended,
    ),
    // `counters_ext/`: kernels before 4.5 put the 64-bit PortCountersExtended
    // values there (the data ones in 4-octet words too).
    (
        "port_xmit_data_64",
        IbCounter::PortXmitData,
        Width::Extended,
    ),
    ("port_rcv_data_64", IbCounter::PortRcvData, Width::Extended),
    (
        "port_xmit_packets_64",
        IbCounter::PortXmitPkts,
        Width::Extended,
    ),
    (
        "port_rcv_packets_64",
        IbCounter::PortRcvPkts,
        Width::Extended,
    ),
    (
        "port_unicast_xmit_packets",
        IbCounter::PortUnicastXmitPkts,
        Width::Extended,
    ),
    (
        "port_unicast_rcv_packets",
        IbCounter::PortUnicastRcvPkts,
        Width::Extended,
    ),
    (
        "port_multicast_xmit_packets",
        IbCounter::PortMulticastXmitPkts,
        Width::Extended,
    ),
    (
        "port_multicast_rcv_packets",
        IbCounter::PortMulticastRcvPkts,
        Width::Extended,
    ),
];

/// mlx5 `hw_counters/` files recognised without their directory in the
/// path (`grep . *` run inside it). Files under a `hw_counters/` path are
/// kept whatever their name.
const HW_COUNTER_FILES: &[&str] = &[
    "out_of_buffer",
    "out_of_sequence",
    "duplicate_request",
    "rnr_nak_retry_err",
    "packet_seq_err",
    "implied_nak_seq_err",
    "local_ack_timeout_err",
    "resp_local_length_error",
    "resp_cqe_error",
    "req_cqe_error",
    "req_remote_invalid_request",
    "req_remote_access_errors",
    "resp_remote_access_errors",
    "resp_cqe_flush_error",
    "req_cqe_flush_error",
    "roce_adp_retrans",
    "roce_adp_retrans_to",
    "roce_slow_restart",
    "roce_slow_restart_cnps",
    "roce_slow_restart_trans",
    "rp_cnp_ignored",
    "rp_cnp_handled",
    "np_ecn_marked_roce_packets",
    "np_cnp_sent",
    "rx_atomic_requests",
    "rx_read_requests",
    "rx_write_requests",
    "rx_icrc_encapsulated",
    "rx_dct_connect",
];

/// How wide a `counters/` file's field is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Width {
    /// A PortCounters field of this many bits.
    Bits(u8),
    /// A data or packet counter: 32 bits, or 64 when the port has the
    /// extended counters.
    Data,
    /// Only in the extended set: 64 bits.
    Extended,
}

fn counter_file(name: &str) -> Option<(IbCounter, Width)> {
    COUNTER_FILES
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, c, w)| (*c, *w))
}

fn hw_counter_file(name: &str) -> bool {
    HW_COUNTER_FILES.contains(&name)
}

/// Which directory of the port a file is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Group {
    /// `counters/`: the PMA PortCounters.
    Counters,
    /// `hw_counters/`: driver counters, kept as printed.
    Hw,
    /// Another file of the port (`state`, `rate`), kept as printed.
    Port,
}

/// What a path (with the working directory a prompt showed) says of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
struct File<'t> {
    device: Option<Cow<'t, str>>,
    port: Option<u32>,
    group: Group,
    name: &'t str,
    /// For [`Group::Port`] files, the path under the port's directory
    /// (`gids/0`, `state`): the field's name.
    under_port: &'t str,
}

/// The working directory a prompt shows: its device, port and directory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Cwd {
    device: Option<String>,
    port: Option<u32>,
    group: Option<Group>,
}

/// The device, port and directory the components of a path name.
fn place<'t>(parts: &[&'t str]) -> (Option<&'t str>, Option<u32>, Option<Group>) {
    let mut device = None;
    let mut port = None;
    let mut group = None;
    for (i, part) in parts.iter().enumerate() {
        match *part {
            "ports" => {
                if let Some(n) = parts.get(i + 1).and_then(|p| p.parse::<u32>().ok()) {
                    port = Some(n);
                    device = i
                        .checked_sub(1)
                        .and_then(|d| parts.get(d))
                        .copied()
                        .filter(|d| !matches!(*d, "" | "." | ".."));
                }
            }
            "counters" | "counters_ext" => group = Some(Group::Counters),
            "hw_counters" => group = Some(Group::Hw),
            _ => {}
        }
    }
    if port.is_some() && group.is_none() {
        group = Some(Group::Port);
    }
    (device, port, group)
}

/// Reads a file's path: `None` for a path that names no sysfs port file
/// this reader knows.
fn file<'t>(path: &'t str, cwd: Option<&Cwd>) -> Option<File<'t>> {
    if path.is_empty() || path.bytes().any(|b| b.is_ascii_whitespace()) {
        return None;
    }
    let parts: Vec<&str> = path.split('/').collect();
    let name = *parts.last()?;
    let dirs = parts.get(..parts.len() - 1).unwrap_or_default();
    let (device, port, group) = place(dirs);
    let known_counter = counter_file(name).is_some();
    let group = match group {
        Some(g) => g,
        None if known_counter => Group::Counters,
        None if hw_counter_file(name) => Group::Hw,
        // A bare name in a directory a prompt showed.
        None => cwd
            .and_then(|c| c.group)
            .filter(|g| *g != Group::Counters || dirs.is_empty())?,
    };
    if group == Group::Counters
        && !known_counter
        && !dirs
            .iter()
            .any(|d| matches!(*d, "counters" | "counters_ext"))
    {
        return None;
    }
    let absolute = path.starts_with('/') || port.is_some();
    let (device, port) = if absolute {
        (device.map(Cow::Borrowed), port)
    } else {
        (
            cwd.and_then(|c| c.device.clone()).map(Cow::Owned),
            cwd.and_then(|c| c.port),
        )
    };
    let under_port = path
        .rfind("ports/")
        .and_then(|i| path.get(i + "ports/".len()..))
        .and_then(|rest| rest.split_once('/'))
        .map_or(name, |(_, rest)| rest);
    Some(File {
        device,
        port,
        group,
        name,
        under_port,
    })
}

/// `PATH:VALUE`, as `grep -H . files` prints it: the path and the value.
fn path_value(t: &str) -> Option<(&str, &str)> {
    // A device path (`/sys/devices/pci0000:05/…/infiniband/i40iw0/…`)
    // holds colons of its own: the value's is the first after them.
    // (A line without a `/` holds no path: no search for the word.)
    let from = match memchr::memchr(b'/', t.as_bytes()) {
        Some(_) => t.find("/infiniband/").unwrap_or(0),
        None => 0,
    };
    let colon = from + t.get(from..)?.find(':')?;
    let (path, value) = (t.get(..colon)?, t.get(colon + 1..)?);
    (!path.is_empty() && !path.bytes().any(|b| b.is_ascii_whitespace())).then_some((path, value))
}

/// `==> name <==` (`head`, `tail`) or `=== name ===` (a shell loop's
/// `echo`): the file named.
fn banner(t: &str) -> Option<&str> {
    let inner = t
        .strip_prefix("==> ")
        .and_then(|r| r.strip_suffix(" <=="))
        .or_else(|| t.strip_prefix("=== ").and_then(|r| r.strip_suffix(" ===")))?;
    let inner = trim(inner);
    (!inner.is_empty() && !inner.bytes().any(|b| b.is_ascii_whitespace())).then_some(inner)
}

/// Whether `t` is the banner of a port counter file (`==> symbol_error
/// <==`, `=== ./link_downed ===`): output of this format, which the input
/// layer must not take for a file header or a script's heading.
pub(crate) fn counter_banner(t: &str) -> bool {
    banner(t)
        .and_then(|name| file(name, None))
        .is_some_and(|f| f.group != Group::Port)
}

/// Whether `word`, the input's last word cut by the end of the paste, may
/// be the start of a counter file's line: a path into a port's counter
/// directory, or the beginning of a file name this reader knows
/// (`port_rcv_er`, `./link_do`).
pub(crate) fn may_begin_file_line(word: &str) -> bool {
    if word.contains("/counters/") || word.contains("/hw_counters/") {
        return true;
    }
    let name = word.rsplit('/').next().unwrap_or(word);
    name.len() >= 3
        && (COUNTER_FILES.iter().any(|(n, _, _)| n.starts_with(name))
            || HW_COUNTER_FILES.iter().any(|n| n.starts_with(name)))
}

/// A prompt whose working directory is a port's (`…/mlx5_1/ports/1/counters$
/// cmd`, `root@h:/sys/…/counters# cmd`): that directory.
fn cwd_prompt(t: &str) -> Option<Cwd> {
    // Every prompt holds its `$` or `#`: a byte search rules out the
    // lines of output before the word's.
    memchr::memchr2(b'$', b'#', t.as_bytes())?;
    let at = t.find("counters")?;
    let after = t.get(at + "counters".len()..)?;
    let after = after.strip_prefix('/').unwrap_or(after);
    let mut chars = after.chars();
    if !matches!(chars.next()?, '$' | '#') {
        return None;
    }
    let rest = chars.as_str();
    if !(rest.is_empty() || rest.starts_with(' ')) {
        return None;
    }
    let head = t.get(..at + "counters".len())?;
    // `user@host:dir` or `[user@host dir]`: the directory is the last word,
    // after any `host:`.
    let word = head.rsplit([' ', '[']).next()?;
    let dir = word.rsplit_once(':').map_or(word, |(_, d)| d);
    let parts: Vec<&str> = dir.split('/').collect();
    let (device, port, group) = place(&parts);
    (group.is_some()).then(|| Cwd {
        device: device.map(str::to_owned),
        port,
        group,
    })
}

/// Whether the prompt's command goes on over the next lines (`for …; do`).
fn opens_loop(t: &str) -> bool {
    let t = t.trim_end();
    (t.contains("for ") || t.contains("while ")) && !t.ends_with("done")
}

/// A line of a shell loop typed after the prompt (`echo "=== $file ==="`,
/// `cat "$file"`, `done`).
fn loop_line(t: &str) -> bool {
    let first = t.split_whitespace().next().unwrap_or_default();
    matches!(
        first,
        "echo" | "cat" | "printf" | "do" | "done" | "head" | "tail"
    ) || t.ends_with("done")
        || t.ends_with("; do")
}

/// The next non-blank line's text after `lines[0]`.
fn next_text<'l>(lines: &'l [Line<'_>]) -> Option<&'l str> {
    lines
        .iter()
        .skip(1)
        .map(|l| trim(l.text()))
        .find(|t| !t.is_empty())
}

fn all_digits(t: &str) -> bool {
    !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())
}

/// `N/A (no PMA)`: the kernel's answer for a counter the device cannot
/// read (iWARP and software devices have no PMA). No value, and no
/// unreadable line either.
fn not_available(t: &str) -> bool {
    trim(t).starts_with("N/A")
}

/// A line of a counter file, a banner with the value under it, or a prompt
/// in a port's directory with such a line within the next few.
fn detect(lines: &[Line<'_>]) -> Option<Block> {
    let first = lines.first()?;
    let t = trim(first.text());
    if t.starts_with("==") {
        let name = banner(t)?;
        let f = file(name, None)?;
        (f.group != Group::Port).then_some(())?;
        all_digits(next_text(lines)?).then_some(())?;
        return Some(Block::keyed(format!("sysfs|{name}")));
    }
    if let Some((path, value)) = path_value(t) {
        let name = path.rsplit('/').next()?;
        let known =
            counter_file(name).is_some() || hw_counter_file(name) || path.contains("/hw_counters/");
        if known && (all_digits(value) || not_available(value)) && file(path, None).is_some() {
            return Some(Block::keyed(format!("sysfs|{path}")));
        }
        if !t.contains("counters") {
            return None;
        }
    }
    let cwd = cwd_prompt(t)?;
    // Output of the prompt's command within the next lines (a loop's lines
    // first).
    let found = lines.iter().skip(1).take(12).any(|l| {
        let t = trim(l.text());
        banner(t).is_some_and(|n| file(n, Some(&cwd)).is_some())
            || path_value(t).is_some_and(|(p, v)| all_digits(v) && file(p, Some(&cwd)).is_some())
    });
    found.then(|| Block::keyed(format!("sysfs-cwd|{}", t)))
}

/// Names the device and port of blocks read from relative file names
/// (`grep . *`) after a prompt whose working directory `dir` is a port's
/// (`root@h:/sys/class/infiniband/mlx5_0/ports/1/counters# grep . *`).
pub(crate) fn attach_dir(perf: &mut Perfquery, dir: &str) {
    let parts: Vec<&str> = dir.split('/').collect();
    let (device, port, _) = place(&parts);
    let (Some(device), Some(port)) = (device, port) else {
        return;
    };
    for b in &mut perf.blocks {
        let unnamed = b.partial.as_ref().is_some_and(|p| {
            p.reason == PartialReason::NoHeader && p.missing.iter().any(|m| m == "device")
        }) && b.port.is_none();
        if unnamed {
            device.clone_into(&mut b.port_id);
            b.port = Some(port);
            b.partial = None;
        }
    }
}

/// One port's files as read.
#[derive(Debug)]
struct PortFiles {
    device: Option<String>,
    port: Option<u32>,
    counters: Vec<(IbCounter, Width, u64)>,
    fields: BTreeMap<String, String>,
    span: LineSpan,
    partial: Option<Partial>,
}

/// Reads pasted sysfs counter files.
#[must_use]
pub fn parse(lines: &[Line<'_>]) -> Parsed<Perfquery> {
    let mut ports = Ports::default();
    let mut unread = Unread::default();
    let mut cwd: Option<Cwd> = None;
    let mut in_loop = false;
    // A banner waiting for its value: the file and the banner's line.
    let mut pending: Option<(File<'_>, LineSpan)> = None;
    let last_line = crate::parse::text::last_text_line(lines);
    for line in lines.iter().filter(|l| !l.is_blank()) {
        let t = trim(line.text());
        if let Some((f, span)) = pending.take() {
            if all_digits(t) {
                record(&mut ports, &f, t, span.join(line.span()), &mut unread);
                continue;
            }
            unread.warn(
                WarningKind::Unreadable,
                span,
                format!("no value under the banner of `{}`", f.name),
            );
        }
        if let Some(name) = banner(t) {
            match file(name, cwd.as_ref()) {
                Some(f) => pending = Some((f, line.span())),
                None => unread.line(line, "a banner of a file that is not a port counter"),
            }
            in_loop = false;
            continue;
        }
        if let Some(c) = cwd_prompt(t) {
            in_loop = opens_loop(t);
            cwd = Some(c);
            continue;
        }
        if in_loop && loop_line(t) {
            if t == "done" || t.ends_with("; done") {
                in_loop = false;
            }
            continue;
        }
        in_loop = false;
        if let Some((path, value)) = path_value(t) {
            if let Some(f) = file(path, cwd.as_ref()) {
                let value = trim(value);
                if value.is_empty() && Some(line.number) == last_line {
                    cut(&mut ports, &f, line);
                } else {
                    record(&mut ports, &f, value, line.span(), &mut unread);
                }
                continue;
            }
        }
        unread.line(line, "not a sysfs counter file line");
    }
    if let Some((f, span)) = pending {
        // The paste ends under a banner: its value was cut.
        let at = port_of(&mut ports, &f);
        at.span = at.span.join(span);
        at.partial = Some(Partial::new(
            PartialReason::CutLine,
            vec![f.name.to_owned()],
            span.last_line,
        ));
    }
    Parsed {
        value: Perfquery {
            blocks: ports.list.into_iter().flat_map(blocks_of).collect(),
        },
        warnings: unread.finish(),
    }
}

/// The ports read, in the order first seen, found by device and port in
/// constant time (a paste of many ports stays linear).
#[derive(Debug, Default)]
struct Ports {
    list: Vec<PortFiles>,
    index: HashMap<(Option<String>, Option<u32>), usize>,
}

/// The port a file belongs to, added when new.
fn port_of<'p>(ports: &'p mut Ports, f: &File<'_>) -> &'p mut PortFiles {
    let device = f.device.as_deref();
    // Files of a port come together: the last port first, without a key.
    let last = ports.list.len().checked_sub(1).filter(|&i| {
        ports
            .list
            .get(i)
            .is_some_and(|p| p.device.as_deref() == device && p.port == f.port)
    });
    let at = last.unwrap_or_else(|| {
        let key = (device.map(str::to_owned), f.port);
        let next = ports.list.len();
        let at = *ports.index.entry(key).or_insert(next);
        if at == next {
            ports.list.push(PortFiles {
                device: device.map(str::to_owned),
                port: f.port,
                counters: Vec::new(),
                fields: BTreeMap::new(),
                span: LineSpan::line(0),
                partial: None,
            });
        }
        at
    });
    #[allow(clippy::indexing_slicing)] // `at` is a position of `ports.list`
    &mut ports.list[at]
}

/// Records file `f`'s value, read from `line` (its lines: `span`).
fn record(ports: &mut Ports, f: &File<'_>, value: &str, span: LineSpan, unread: &mut Unread) {
    let counter = match f.group {
        Group::Counters => counter_file(f.name),
        Group::Hw | Group::Port => None,
    };
    let parsed = match counter {
        // Kept as printed, as the files no rule reads are.
        Some(_) if not_available(value) => None,
        // A value that is not read leaves its banner unread too: the
        // warning covers both lines.
        Some(_) => match decimal_u64(value) {
            Ok(v) => Some(v),
            Err(NumberError::NotANumber) => {
                unread.warn(
                    WarningKind::Unreadable,
                    span,
                    format!("`{}` is not a number", f.name),
                );
                return;
            }
            Err(NumberError::TooLarge) => {
                unread.warn(
                    WarningKind::OutOfRange,
                    span,
                    format!(
                        "`{}` is larger than its field can hold; value ignored",
                        f.name
                    ),
                );
                return;
            }
        },
        None => None,
    };
    let port = port_of(ports, f);
    port.span = if port.span.first_line == 0 {
        span
    } else {
        port.span.join(span)
    };
    match (counter, parsed) {
        (Some((id, width)), Some(v)) => store(port, f.name, id, width, v),
        _ => {
            let key = match f.group {
                Group::Hw => format!("hw_counters/{}", f.name),
                Group::Counters => format!("counters/{}", f.name),
                Group::Port => f.under_port.to_owned(),
            };
            port.fields.insert(key, value.to_owned());
        }
    }
}

/// Keeps counter `id`'s value `v`, read from file `name`. A pre-4.5
/// kernel's `counters_ext/` 64-bit value outranks the same counter's
/// 32-bit `counters/` value, whichever came first: the 32-bit one is then
/// kept as printed (`counters/port_xmit_data`), not judged.
fn store(port: &mut PortFiles, name: &str, id: IbCounter, width: Width, v: u64) {
    let wider = port
        .counters
        .iter()
        .any(|(c, w, _)| *c == id && *w == Width::Extended);
    if wider && width != Width::Extended {
        port.fields
            .insert(format!("counters/{name}"), v.to_string());
        return;
    }
    if width == Width::Extended {
        // The 32-bit value read before it: kept as printed.
        if let Some((_, _, narrow)) = port
            .counters
            .iter()
            .find(|(c, w, _)| *c == id && *w != Width::Extended)
        {
            let file = COUNTER_FILES
                .iter()
                .find(|(_, c, w)| *c == id && *w != Width::Extended)
                .map_or(name, |(n, _, _)| *n);
            port.fields
                .insert(format!("counters/{file}"), narrow.to_string());
        }
    }
    port.counters.retain(|(c, _, _)| *c != id);
    port.counters.push((id, width, v));
}

/// Port counter files read by another reader (node_exporter's metrics of
/// the same files): each value recorded as this reader records a file's,
/// the ports' blocks built as it builds them, so both read the same
/// names into the same counters with the same widths.
#[derive(Debug, Default)]
pub(crate) struct PortCounterFiles {
    ports: Ports,
}

impl PortCounterFiles {
    /// Records `value` of the `counters/` (or `counters_ext/`) file `name`
    /// of `device` port `port`, read from `span`. `false` (nothing
    /// recorded) when no counter file has that name.
    pub(crate) fn counter(
        &mut self,
        device: &str,
        port: u32,
        name: &str,
        value: u64,
        span: LineSpan,
    ) -> bool {
        let Some((id, width)) = counter_file(name) else {
            return false;
        };
        let at = self.port(device, port, name, span);
        store(at, name, id, width, value);
        true
    }

    /// Keeps `value` as printed under `key` in the port's block's fields.
    pub(crate) fn field(
        &mut self,
        device: &str,
        port: u32,
        key: String,
        value: String,
        span: LineSpan,
    ) {
        self.port(device, port, &key, span)
            .fields
            .insert(key, value);
    }

    /// Marks the port's blocks cut at `line`, inside the value of `name`.
    pub(crate) fn cut(&mut self, device: &str, port: u32, name: &str, line: usize) {
        let at = self.port(device, port, name, LineSpan::line(line));
        at.partial = Some(Partial::new(
            PartialReason::CutLine,
            vec![name.to_owned()],
            line,
        ));
    }

    fn port(&mut self, device: &str, port: u32, name: &str, span: LineSpan) -> &mut PortFiles {
        let f = File {
            device: Some(Cow::Borrowed(device)),
            port: Some(port),
            group: Group::Counters,
            name,
            under_port: name,
        };
        let at = port_of(&mut self.ports, &f);
        at.span = if at.span.first_line == 0 {
            span
        } else {
            at.span.join(span)
        };
        at
    }

    /// The ports' perfquery blocks, in the order the ports were first seen.
    pub(crate) fn finish(self) -> Vec<PerfBlock> {
        self.ports.list.into_iter().flat_map(blocks_of).collect()
    }
}

/// The last line `PATH:` lost its value: the port's block is cut there.
fn cut(ports: &mut Ports, f: &File<'_>, line: &Line<'_>) {
    let port = port_of(ports, f);
    port.span = if port.span.first_line == 0 {
        line.span()
    } else {
        port.span.join(line.span())
    };
    port.partial = Some(Partial::new(
        PartialReason::CutLine,
        vec![f.name.to_owned()],
        line.number,
    ));
}

/// The perfquery blocks of one port: PortCounters, and PortCountersExtended
/// when the port shows the extended data counters (see the module doc).
fn blocks_of(p: PortFiles) -> Vec<PerfBlock> {
    let extended = p
        .counters
        .iter()
        .any(|(_, w, v)| *w == Width::Extended || (*w == Width::Data && *v > u64::from(u32::MAX)));
    let port_id = p
        .device
        .clone()
        .unwrap_or_else(|| "unknown device".to_owned());
    let mut missing = Vec::new();
    if p.device.is_none() {
        missing.push("device".to_owned());
    }
    if p.port.is_none() {
        missing.push("port".to_owned());
    }
    // Unnamed first: such a block must never pair with another snapshot's.
    let partial = (!missing.is_empty())
        .then(|| Partial::new(PartialReason::NoHeader, missing, p.span.first_line))
        .or(p.partial);
    let new_block = |attribute| {
        let mut b = PerfBlock::new(attribute, port_id.clone(), p.span);
        b.port = p.port;
        b.partial.clone_from(&partial);
        b
    };
    let mut basic = new_block(PerfAttribute::PortCounters);
    let mut ext = new_block(PerfAttribute::PortCountersExtended);
    for (id, width, value) in p.counters {
        match width {
            Width::Bits(bits) => {
                basic.counters.insert(id, Counter::new(value, bits));
            }
            Width::Data if !extended => {
                basic.counters.insert(id, Counter::new(value, 32));
            }
            Width::Data | Width::Extended => {
                ext.counters.insert(id, Counter::new(value, 64));
            }
        }
    }
    for (k, v) in p.fields {
        basic.fields.insert(Cow::Owned(k), v);
    }
    let mut out = Vec::with_capacity(2);
    if !basic.counters.is_empty() || !basic.fields.is_empty() || ext.counters.is_empty() {
        out.push(basic);
    }
    if !ext.counters.is_empty() {
        out.push(ext);
    }
    out
}

/// `2 ports (mlx5_0 port 1, mlx5_1 port 1): 21 counters`.
#[must_use]
pub fn summary(perf: &Perfquery) -> String {
    let mut ports: Vec<String> = Vec::new();
    let mut counters = 0;
    for b in &perf.blocks {
        counters += b.counters.len();
        let name = match b.port {
            Some(p) => format!("{} port {p}", b.port_id),
            None => format!("{} port ?", b.port_id),
        };
        if !ports.contains(&name) {
            ports.push(name);
        }
    }
    format!(
        "sysfs counters of {} port(s) ({}): {counters} counters",
        ports.len(),
        ports.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::lines_of;

    fn read(text: &str) -> Parsed<Perfquery> {
        parse(&lines_of(text))
    }

    fn value(b: &PerfBlock, id: IbCounter) -> Option<Counter> {
        b.counter(id).copied()
    }

    #[test]
    fn grep_h_names_device_and_port() {
        let p = read(
            "/sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error:12\n\
             /sys/class/infiniband/mlx5_0/ports/1/counters/link_downed:3\n\
             /sys/class/infiniband/mlx5_0/ports/1/counters/port_xmit_data:4294967295\n\
             /sys/class/infiniband/mlx5_1/ports/1/counters/symbol_error:0\n\
             /sys/class/infiniband/mlx5_1/ports/1/hw_counters/out_of_buffer:7\n",
        );
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let b = &p.value.blocks;
        assert_eq!(b.len(), 2);
        assert_eq!(b[0].port_id, "mlx5_0");
        assert_eq!(b[0].port, Some(1));
        assert_eq!(b[0].attribute, PerfAttribute::PortCounters);
        assert_eq!(
            value(&b[0], IbCounter::SymbolErrorCounter),
            Some(Counter::new(12, 16))
        );
        assert_eq!(
            value(&b[0], IbCounter::LinkDownedCounter),
            Some(Counter::new(3, 8))
        );
        // No extended counters shown: the 32-bit PortCounters field, saturated.
        assert!(value(&b[0], IbCounter::PortXmitData).unwrap().saturated);
        assert_eq!(b[0].span, LineSpan::new(1, 3));
        assert_eq!(b[1].port_id, "mlx5_1");
        assert_eq!(
            b[1].fields
                .get("hw_counters/out_of_buffer")
                .map(String::as_str),
            Some("7")
        );
        assert!(b.iter().all(|b| b.partial.is_none()));
    }

    #[test]
    fn device_paths_with_colons_and_counters_without_a_pma_are_read() {
        // The PCI path holds colons before the value's; an iWARP device
        // answers `N/A (no PMA)`: kept as printed, no reading, no warning.
        let text = "/sys/devices/pci0000:3a/0000:3a:02.0/0000:3c:00.0/infiniband/irdma1/ports/1/counters/link_downed:N/A (no PMA)
                    /sys/devices/pci0000:3a/0000:3a:02.0/0000:3c:00.0/infiniband/irdma1/ports/1/counters/symbol_error:N/A (no PMA)
";
        assert!(detect(&lines_of(text)).is_some());
        let p = read(text);
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let b = &p.value.blocks[0];
        assert_eq!((b.port_id.as_str(), b.port), ("irdma1", Some(1)));
        assert_eq!(value(b, IbCounter::LinkDownedCounter), None);
        assert_eq!(
            b.fields.get("counters/link_downed").map(String::as_str),
            Some("N/A (no PMA)")
        );
    }

    #[test]
    fn other_port_files_are_kept_by_their_path_under_the_port() {
        let p = read(
            "/sys/class/infiniband/mlx5_0/ports/1/state:4: ACTIVE\n\
             /sys/class/infiniband/mlx5_0/ports/1/gids/0:fe80:0000:0000:0000:0000:0000:0000:0001\n\
             /sys/class/infiniband/mlx5_0/ports/1/pkeys/0:0xffff\n\
             /sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error:0\n",
        );
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let [b] = p.value.blocks.as_slice() else {
            panic!("{:?}", p.value.blocks)
        };
        let field = |k: &str| b.fields.get(k).map(String::as_str);
        assert_eq!(field("state"), Some("4: ACTIVE"));
        assert_eq!(
            field("gids/0"),
            Some("fe80:0000:0000:0000:0000:0000:0000:0001")
        );
        assert_eq!(field("pkeys/0"), Some("0xffff"));
        assert_eq!(b.counters.len(), 1);
    }

    #[test]
    fn extended_counters_go_to_a_64_bit_block() {
        let p = read(
            "mlx5_0/ports/1/counters/port_xmit_wait:4294967295\n\
             mlx5_0/ports/1/counters/port_xmit_data:205143497464492\n\
             mlx5_0/ports/1/counters/port_rcv_data:10\n\
             mlx5_0/ports/1/counters/unicast_rcv_packets:10\n",
        );
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let [basic, ext] = p.value.blocks.as_slice() else {
            panic!("{:?}", p.value.blocks)
        };
        assert_eq!(basic.attribute, PerfAttribute::PortCounters);
        assert!(value(basic, IbCounter::PortXmitWait).unwrap().saturated);
        assert_eq!(ext.attribute, PerfAttribute::PortCountersExtended);
        assert_eq!(
            value(ext, IbCounter::PortRcvData),
            Some(Counter::new(10, 64))
        );
        assert_eq!(ext.xmit_data_octets(), Some(205_143_497_464_492 * 4));
        assert_eq!(ext.counters.len(), 3);
    }

    #[test]
    fn counters_ext_files_are_the_64_bit_counters_and_outrank_counters() {
        // A pre-4.5 kernel: 32-bit `counters/`, 64-bit `counters_ext/`.
        let p = read(
            "/sys/class/infiniband/mlx4_0/ports/1/counters/port_xmit_data:4294967295\n\
             /sys/class/infiniband/mlx4_0/ports/1/counters_ext/port_xmit_data_64:8589934592\n\
             /sys/class/infiniband/mlx4_0/ports/1/counters/port_rcv_data:12\n\
             /sys/class/infiniband/mlx4_0/ports/1/counters_ext/port_unicast_rcv_packets:61148\n",
        );
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let [basic, ext] = p.value.blocks.as_slice() else {
            panic!("{:?}", p.value.blocks)
        };
        assert_eq!(
            value(ext, IbCounter::PortXmitData),
            Some(Counter::new(8_589_934_592, 64))
        );
        assert_eq!(
            value(ext, IbCounter::PortUnicastRcvPkts),
            Some(Counter::new(61148, 64))
        );
        assert_eq!(value(basic, IbCounter::PortXmitData), None);
        assert_eq!(
            basic
                .fields
                .get("counters/port_xmit_data")
                .map(String::as_str),
            Some("4294967295")
        );
    }

    #[test]
    fn loop_banners_take_the_port_from_the_prompt() {
        let p = read(
            "/sys/class/infiniband/mlx5_1/ports/1/counters$ for file in $(find . -type f); do\n\
             \x20   echo \"=== $file ===\"\n\
             \x20   cat \"$file\"\n\
             \x20   echo\n\
             done\n\
             === ./link_downed ===\n\
             255\n\
             \n\
             === ./excessive_buffer_overrun_errors ===\n\
             15\n",
        );
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let [b] = p.value.blocks.as_slice() else {
            panic!("{:?}", p.value.blocks)
        };
        assert_eq!((b.port_id.as_str(), b.port), ("mlx5_1", Some(1)));
        assert!(value(b, IbCounter::LinkDownedCounter).unwrap().saturated);
        assert!(
            value(b, IbCounter::ExcessiveBufferOverrunErrors)
                .unwrap()
                .saturated
        );
        assert_eq!(b.span, LineSpan::new(6, 10));
        assert!(b.partial.is_none());
    }

    #[test]
    fn relative_paths_without_a_prompt_name_no_port() {
        let p = read("==> port_rcv_errors <==\n0\n\n==> symbol_error <==\n4\n");
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let [b] = p.value.blocks.as_slice() else {
            panic!("{:?}", p.value.blocks)
        };
        let partial = b.partial.as_ref().unwrap();
        assert_eq!(partial.reason, PartialReason::NoHeader);
        assert_eq!(partial.missing, ["device", "port"]);
        assert_eq!(
            value(b, IbCounter::SymbolErrorCounter),
            Some(Counter::new(4, 16))
        );
        let p = read("./port_rcv_errors:0\ncounters/symbol_error:1\n");
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        assert_eq!(p.value.blocks.len(), 1);
    }

    #[test]
    fn a_cut_last_value_is_partial_not_a_reading() {
        let p = read(
            "mlx5_0/ports/1/counters/symbol_error:0\nmlx5_0/ports/1/counters/port_rcv_errors:\n",
        );
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let [b] = p.value.blocks.as_slice() else {
            panic!()
        };
        assert_eq!(b.counters.len(), 1);
        let partial = b.partial.as_ref().unwrap();
        assert_eq!(partial.reason, PartialReason::CutLine);
        assert_eq!(partial.missing, ["port_rcv_errors"]);
        assert_eq!(partial.line, 2);
        let p = read("==> mlx5_0/ports/1/counters/symbol_error <==\n");
        assert_eq!(
            p.value.blocks[0].partial.as_ref().map(|x| x.reason),
            Some(PartialReason::CutLine)
        );
    }

    #[test]
    fn unread_lines_become_warnings() {
        let p = read(
            "mlx5_0/ports/1/counters/symbol_error:x\n\
             hello there\n\
             mlx5_0/ports/1/counters/symbol_error:99999999999999999999999\n\
             === ./symbol_error ===\n\
             === ./link_downed ===\n\
             1\n",
        );
        let lines: Vec<usize> = p.warnings.iter().map(|w| w.span.first_line).collect();
        assert_eq!(lines, [1, 2, 3, 4]);
        assert_eq!(
            value(&p.value.blocks[0], IbCounter::LinkDownedCounter),
            Some(Counter::new(1, 8))
        );
    }

    #[test]
    fn detection_wants_a_known_file_and_a_number() {
        let d = |text: &str| detect(&lines_of(text)).map(|b| b.key);
        assert_eq!(
            d("/sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error:0").as_deref(),
            Some("sysfs|/sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error")
        );
        assert!(d("symbol_error:0").is_some());
        assert!(d("==> port_rcv_errors <==\n0").is_some());
        assert!(d("=== ./link_downed ===\n255").is_some());
        assert!(d(
            "/sys/x/counters$ for f in *; do\n  echo \"=== $f ===\"\n=== ./link_downed ===\n1"
        )
        .is_some());
        // Prose, other tools' `key: value`, banners of other files.
        for no in [
            "symbol_error: 0",
            "Note: symbol_error:0 is fine",
            "rx_out_of_buffer: 0",
            "State: Active",
            "PortXmitData:....................1",
            "==> /var/log/syslog <==\nJan 1",
            "=== ./link_downed ===\nmany",
            "foo:1",
            "/sys/x/counters$ ls",
        ] {
            assert_eq!(d(no), None, "{no}");
        }
    }

    #[test]
    fn command_wants_a_counters_path() {
        assert!(command(&[
            "grep",
            "-H",
            ".",
            "/sys/class/infiniband/mlx5_0/ports/1/counters/*"
        ]));
        assert!(command(&["tail", "-n", "+1", "counters/*"]));
        assert!(!command(&["grep", "x", "file"]));
        assert!(!command(&["cat", "counters"]));
    }
}
