//! ibdiagnet's console output (and `ibdiagnet2.log`, which holds the same
//! lines): stages between `-----` rules, each line marked `-I-` (info),
//! `-W-` (warning) or `-E-` (error), and a `Summary` table.
//!
//! ```text
//! ---------------------------------------------
//! Speed / Width checks
//! -I- Link Speed Check (Compare to supported link speed)
//! -E- Links Speed Check finished with errors
//! -E- Link: S0002c90300a1b2c0/N0002c90300a1b2c0/P20<-->S0002c90300b1c2d3/N0002c90300b1c2d0/P1 - Unexpected actual link speed 2.5 (enable_speed1="2.5 or 5 or 10", enable_speed2="2.5 or 5 or 10" therefore final speed should be 10)
//! ---------------------------------------------
//! Summary
//! -I- Stage                     Warnings   Errors     Comment
//! -I- Discovery                 0          0
//! -I- Speed / Width checks      0          1
//! ```
//!
//! Read into fields: `Link: … - Unexpected actual link speed|width …`
//! (the link's end(s), the value it trained at and the `should be` value
//! both ends' enabled values give), `<port> - "<counter>" increased during
//! the run (difference value=N,difference allowed threshold=M)`, a counter
//! line of a `lid=0x… dev=…` port (ibdiagnet's counter values over its
//! thresholds: the counter's name, the first number after it and a
//! `threshold` number when printed), and the summary rows. Every other
//! `-E-`/`-W-` line is kept as printed; `-I-` lines, the rules, the stage
//! titles under them, the `Key : value` lines of `Fabric Summary` and the
//! plugin table are ibdiagnet's own text, read and set aside. Anything else
//! is unread.
//!
//! The link and counter lines name the fabric's ports, switches and other
//! hosts' included, as `iblinkinfo` does.

use crate::model::ib::Guid;
use crate::model::ibdiagnet_log::{
    CounterCheck, IbdiagnetLog, Level, LinkCheck, LinkEnd, LinkProperty, Message, StageSummary,
};
use crate::parse::ibdiagnet_pm::known_counter;
use crate::parse::text::{decimal_u32, decimal_u64, is_rule_of, split_once_str, trim, Unread};
use crate::parse::{Block, Line, Parsed, Spec};

pub(crate) const FORMAT: Spec<IbdiagnetLog> = Spec {
    command,
    starts: |b| b == b'-',
    detect,
    parse,
    summary,
    attach_command: None,
    labels: &[],
};

/// `ibdiagnet …`, or a `cat`/`less`/`grep` of its log.
fn command(argv: &[&str]) -> bool {
    let program = argv.first().map(|p| p.rsplit('/').next().unwrap_or(p));
    matches!(program, Some("ibdiagnet" | "ibdiagnet2"))
        || (matches!(
            program,
            Some("cat" | "less" | "more" | "head" | "tail" | "grep" | "egrep")
        ) && argv.iter().skip(1).any(|w| w.ends_with("ibdiagnet2.log")))
}

/// The line's mark and the text after it: `-E- text`.
fn marked(t: &str) -> Option<(u8, &str)> {
    let b = t.as_bytes();
    match b {
        [b'-', m @ (b'I' | b'E' | b'W' | b'V' | b'D'), b'-', b' ' | b'\t', ..] => {
            Some((*m, trim(t.get(4..)?)))
        }
        [b'-', m @ (b'I' | b'E' | b'W' | b'V' | b'D'), b'-'] => Some((*m, "")),
        _ => None,
    }
}

/// Whether `t` is one of ibdiagnet's check lines this reader reads into
/// fields (a link below its enabled speed or width, a counter that grew
/// during the run, a `lid=0x… dev=…` port): the input layer tells them
/// from the firmware tools' `-E-` failures with it.
pub(crate) fn is_check_line(t: &str) -> bool {
    let Some((b'E' | b'W', text)) = marked(t) else {
        return false;
    };
    let dummy = Line::new(0, "");
    link_check(Level::Error, text, &dummy).is_some()
        || counter_during_run(Level::Error, text, &dummy).is_some()
        || pm_header(text).is_some()
}

/// A block opens at a check line ([`is_check_line`]), the summary table's
/// header or an `-I-` line of the discovery stage, which only ibdiagnet
/// prints (other firmware tools mark lines `-I-` too). The block is keyed
/// by its own line number: no later line repeats the key, so a second
/// opener inside the output continues its section.
fn detect(lines: &[Line<'_>]) -> Option<Block> {
    let first = lines.first()?;
    let t = trim(first.text());
    let opens = is_check_line(t)
        || stage_opening(lines)
        || marked(t).is_some_and(|(mark, text)| {
            mark == b'I'
                && (is_summary_header(text)
                    || text.starts_with("Discovering")
                    || text.starts_with("Fabric Discover")
                    || text.starts_with("ibdiagnet"))
        });
    opens.then(|| Block::keyed(format!("ibdiagnet line {}", first.number)))
}

/// A stage's opening: a rule of dashes, the stage's title, and a marked
/// line (`-----` / `Discovery` / `-I- Discovering ...`); or the rule,
/// `Fabric Summary` and its first `Key : value` line, which open the
/// output where a paste starts at ibdiagnet's closing report (its
/// `Total Nodes : 22` is no marked line, and the summary table under it
/// was read without the counts above it).
fn stage_opening(lines: &[Line<'_>]) -> bool {
    let mut text = lines
        .iter()
        .filter(|l| !l.is_blank())
        .map(|l| trim(l.text()));
    let (Some(rule), Some(title), Some(next)) = (text.next(), text.next(), text.next()) else {
        return false;
    };
    if !is_rule_of(rule, 5, b'-') {
        return false;
    }
    if title == "Fabric Summary" {
        return split_once_str(next, " : ").is_some_and(|(k, _)| !trim(k).is_empty());
    }
    !title.contains(':') && marked(title).is_none() && marked(next).is_some()
}

/// `Stage   Warnings   Errors   Comment`.
fn is_summary_header(text: &str) -> bool {
    let words: Vec<&str> = text.split_whitespace().collect();
    words.first() == Some(&"Stage") && words.contains(&"Warnings") && words.contains(&"Errors")
}

/// Reads ibdiagnet's output.
#[must_use]
pub fn parse(lines: &[Line<'_>]) -> Parsed<IbdiagnetLog> {
    let mut out = IbdiagnetLog::default();
    let mut unread = Unread::default();
    let mut state = State::default();
    for line in lines.iter().filter(|l| !l.is_blank()) {
        read_line(line, &mut out, &mut state, &mut unread);
    }
    Parsed {
        value: out,
        warnings: unread.finish(),
    }
}

/// What the lines before say about the next one.
#[derive(Default)]
struct State {
    /// The last line was a rule: the next unmarked line is a stage title.
    after_rule: bool,
    /// Inside the `Summary` table (after its `Stage Warnings Errors` header).
    in_summary: bool,
    /// Inside the plugin table (after `Plugin Name … Result … Comment`).
    in_plugins: bool,
    /// The `lid=0x… dev=…` port whose counter lines follow, and its level.
    pm_port: Option<(Level, String)>,
}

fn read_line(line: &Line<'_>, out: &mut IbdiagnetLog, st: &mut State, unread: &mut Unread) {
    let t = trim(line.text());
    let after_rule = std::mem::take(&mut st.after_rule);
    if is_rule_of(t, 5, b'-') {
        st.after_rule = true;
        st.in_summary = false;
        st.in_plugins = false;
        st.pm_port = None;
        return;
    }
    let Some((mark, text)) = marked(t) else {
        read_unmarked(line, t, after_rule, out, st, unread);
        return;
    };
    let level = match mark {
        b'E' => Level::Error,
        b'W' => Level::Warning,
        _ => {
            read_info(line, text, out, st);
            return;
        }
    };
    st.in_summary = false;
    st.pm_port = None;
    if let Some(link) = link_check(level, text, line) {
        out.links.push(link);
    } else if let Some(c) = counter_during_run(level, text, line) {
        out.counters.push(c);
    } else if let Some(port) = pm_header(text) {
        // A counter may follow on the same line.
        if let Some(c) = counter_value(level, port, text, line) {
            out.counters.push(c);
        }
        st.pm_port = Some((level, port.to_owned()));
    } else {
        out.messages.push(Message {
            level,
            text: text.to_owned(),
            span: line.span(),
        });
    }
}

/// An `-I-` line: a summary row or header, or progress set aside.
fn read_info(line: &Line<'_>, text: &str, out: &mut IbdiagnetLog, st: &mut State) {
    if is_summary_header(text) {
        st.in_summary = true;
        return;
    }
    if st.in_summary {
        if let Some(row) = summary_row(text, line) {
            out.stages.push(row);
            return;
        }
        st.in_summary = false;
    }
}

/// `Speed / Width checks      0          1     comment`: the stage's name
/// up to the first two numbers in a row, then the comment.
fn summary_row(text: &str, line: &Line<'_>) -> Option<StageSummary> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let at = words.windows(2).position(|w| {
        w.iter()
            .all(|x| !x.is_empty() && x.bytes().all(|b| b.is_ascii_digit()))
    })?;
    if at == 0 {
        return None;
    }
    let warnings = decimal_u64(words.get(at)?).ok()?;
    let errors = decimal_u64(words.get(at + 1)?).ok()?;
    let comment = words.get(at + 2..).map(|w| w.join(" "));
    Some(StageSummary {
        stage: words.get(..at)?.join(" "),
        warnings,
        errors,
        comment: comment.filter(|c| !c.is_empty()),
        span: line.span(),
    })
}

/// A line without a mark: a stage title, `Key : value`, a plugin row, a
/// counter line of a `lid=… dev=…` port, or unread.
fn read_unmarked(
    line: &Line<'_>,
    t: &str,
    after_rule: bool,
    out: &mut IbdiagnetLog,
    st: &mut State,
    unread: &mut Unread,
) {
    if let Some((level, port)) = &st.pm_port {
        if t.starts_with("Performance Monitor counter") {
            return;
        }
        if let Some(c) = counter_value(*level, port, t, line) {
            out.counters.push(c);
            return;
        }
        st.pm_port = None;
    }
    if t.starts_with("Plugin Name") {
        st.in_plugins = true;
        return;
    }
    // A stage's title follows its rule; the summary's own title is known
    // by name where a paste left its rule out.
    let title = (after_rule && !t.contains(':')) || matches!(t, "Summary" | "Fabric Summary");
    let key_value = split_once_str(t, " : ").is_some_and(|(k, _)| !trim(k).is_empty());
    let plugin = st.in_plugins && t.starts_with("lib");
    let own_text = t.starts_with("Load Plugins from")
        || t.starts_with("(You can specify")
        || t.starts_with("ibdiagnet ")
        || t.starts_with('/')
        || t.ends_with("switches")
        || t.ends_with("ibdiagnet2.log");
    if !(title || key_value || plugin || own_text) {
        unread.line(line, "not an ibdiagnet line");
    }
}

/// `Link: <end>(<--><end>) - Unexpected actual link speed|width <value>
/// (… should be <value>)`.
fn link_check(level: Level, text: &str, line: &Line<'_>) -> Option<LinkCheck> {
    let rest = text.strip_prefix("Link:")?;
    let (ends, what) = split_once_str(rest, " - ")?;
    let what = trim(what);
    let (property, after) = if let Some(a) = what.strip_prefix("Unexpected actual link speed") {
        (LinkProperty::Speed, a)
    } else {
        (
            LinkProperty::Width,
            what.strip_prefix("Unexpected actual link width")?,
        )
    };
    let after = trim(after);
    let (actual, detail) = match after.split_once('(') {
        Some((a, d)) => (trim(a), Some(trim(d.trim_end().trim_end_matches(')')))),
        None => (after, None),
    };
    if actual.is_empty() {
        return None;
    }
    let expected = detail
        .and_then(|d| split_once_str(d, "should be").map(|(_, v)| trim(v)))
        .and_then(|v| v.split_whitespace().next())
        .map(|v| v.trim_end_matches(')').to_owned());
    let ends = trim(ends);
    let (end, peer) = match split_once_str(ends, "<-->") {
        Some((a, b)) => (link_end(trim(a)), Some(link_end(trim(b)))),
        None => (link_end(ends), None),
    };
    Some(LinkCheck {
        level,
        property,
        end,
        peer,
        actual: actual.to_owned(),
        expected,
        detail: detail.map(str::to_owned),
        span: line.span(),
    })
}

/// `S…/N…/P20` or `node/U1/P1`: the node and port of a link end (or of
/// a counter's port).
pub(crate) fn link_end(name: &str) -> LinkEnd {
    let (node, port) = match name.rsplit_once('/') {
        Some((node, p)) => match p.strip_prefix('P').map(decimal_u32) {
            Some(Ok(n)) => (node, Some(n)),
            _ => (name, None),
        },
        None => (name, None),
    };
    let node_guid = node
        .split('/')
        .find_map(|part| part.strip_prefix('N').and_then(guid_digits));
    LinkEnd {
        name: name.to_owned(),
        node: node.to_owned(),
        node_guid,
        port,
    }
}

/// A counter's port: `lid=0x0012 dev=4123 sw07/P12` (its LID and the
/// name after the device id) or a link end's name.
pub(crate) fn counter_port(port: &str) -> (Option<u32>, LinkEnd) {
    let Some(rest) = port.strip_prefix("lid=0x") else {
        return (None, link_end(port));
    };
    let mut words = rest.splitn(3, char::is_whitespace);
    let lid = words.next().and_then(|l| u32::from_str_radix(l, 16).ok());
    let _dev = words.next();
    let name = words.next().map_or("", trim);
    (lid, link_end(if name.is_empty() { port } else { name }))
}

/// 16 hex digits: a GUID as ibdiagnet writes it after `S`/`N`.
fn guid_digits(t: &str) -> Option<Guid> {
    (t.len() == 16 && t.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| Guid::parse(t))
        .flatten()
}

/// `<port> - "<counter>" increased during the run (difference
/// value=N,difference allowed threshold=M)`.
fn counter_during_run(level: Level, text: &str, line: &Line<'_>) -> Option<CounterCheck> {
    let (port, rest) = split_once_str(text, " - \"")?;
    let (counter, rest) = rest.split_once('"')?;
    let rest = trim(rest).strip_prefix("increased during the run")?;
    let value = number_after(rest, "difference value=")?;
    Some(CounterCheck {
        level,
        port: trim(port).to_owned(),
        counter: counter.to_owned(),
        value,
        threshold: number_after(rest, "threshold="),
        during_run: true,
        span: line.span(),
    })
}

/// The port of `lid=0x0012 dev=4123 <name>` (the whole text).
fn pm_header(text: &str) -> Option<&str> {
    let mut words = text.split_whitespace();
    let lid = words.next()?.strip_prefix("lid=0x")?;
    let dev = words.next()?.strip_prefix("dev=")?;
    (!lid.is_empty() && lid.bytes().all(|b| b.is_ascii_hexdigit()) && decimal_u32(dev).is_ok())
        .then_some(text)
}

/// A counter of ibdiagnet's list named in `text`, the first number after
/// it and a `threshold` number after that: `symbol_error_counter : 0x27
/// (threshold=0x1)`.
fn counter_value(level: Level, port: &str, text: &str, line: &Line<'_>) -> Option<CounterCheck> {
    let words: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || matches!(c, ':' | '=' | '(' | ')' | ',' | '"'))
        .filter(|w| !w.is_empty())
        .collect();
    let at = words.iter().position(|w| known_counter(w).is_some())?;
    let counter = *words.get(at)?;
    let rest = words.get(at + 1..)?;
    let value_at = rest.iter().position(|w| number(w).is_some())?;
    let value = number(rest.get(value_at)?)?;
    let threshold = rest
        .iter()
        .skip(value_at + 1)
        .position(|w| w.eq_ignore_ascii_case("threshold"))
        .and_then(|i| rest.get(value_at + 1 + i + 1..))
        .and_then(|after| after.iter().find_map(|w| number(w)));
    Some(CounterCheck {
        level,
        port: port.to_owned(),
        counter: counter.to_owned(),
        value,
        threshold,
        during_run: false,
        span: line.span(),
    })
}

/// `0x1c` or `28`.
fn number(w: &str) -> Option<u64> {
    match w.strip_prefix("0x").or_else(|| w.strip_prefix("0X")) {
        Some(hex) if !hex.is_empty() => u64::from_str_radix(hex, 16).ok(),
        Some(_) => None,
        None => decimal_u64(w).ok(),
    }
}

/// The decimal number right after `label` in `text`.
fn number_after(text: &str, label: &str) -> Option<u64> {
    let (_, rest) = split_once_str(text, label)?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    decimal_u64(rest.get(..digits)?).ok()
}

/// `ibdiagnet: 1 link below its enabled speed/width, 2 counters flagged,
/// summary: 1 error, 0 warnings` for people.
#[must_use]
pub fn summary(log: &IbdiagnetLog) -> String {
    let errors: u64 = log.stages.iter().map(|s| s.errors).sum();
    let warnings: u64 = log.stages.iter().map(|s| s.warnings).sum();
    let mut parts = vec![
        format!(
            "{} link(s) below their enabled speed/width",
            log.links.len()
        ),
        format!("{} counter(s) flagged", log.counters.len()),
        format!("{} other message(s)", log.messages.len()),
    ];
    if !log.stages.is_empty() {
        parts.push(format!(
            "summary: {errors} error(s), {warnings} warning(s) in {} stage(s)",
            log.stages.len()
        ));
    }
    format!("ibdiagnet: {}", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::lines_of;

    const SPEED: &str = "-E- Link: S0002c90300a1b2c0/N0002c90300a1b2c0/P20<-->S0002c90300b1c2d3/N0002c90300b1c2d0/P1 - Unexpected actual link speed 2.5 (enable_speed1=\"2.5 or 5 or 10\", enable_speed2=\"2.5 or 5 or 10\" therefore final speed should be 10)";

    #[test]
    fn a_link_below_its_enabled_speed_is_read_with_both_ends() {
        let p = parse(&lines_of(SPEED));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let l = &p.value.links[0];
        assert_eq!(l.level, Level::Error);
        assert_eq!(l.property, LinkProperty::Speed);
        assert_eq!(l.actual, "2.5");
        assert_eq!(l.expected.as_deref(), Some("10"));
        assert_eq!(l.end.port, Some(20));
        assert_eq!(l.end.node_guid, Guid::parse("0002c90300a1b2c0"));
        let peer = l.peer.as_ref().unwrap();
        assert_eq!(peer.port, Some(1));
        assert_eq!(peer.node_guid, Guid::parse("0002c90300b1c2d0"));
    }

    #[test]
    fn a_width_line_naming_one_end_by_description_is_read() {
        let p = parse(&lines_of(
            "-W- Link: gpu-r2n07/U1/P1 - Unexpected actual link width 1x (enable_width1=\"1x or 4x\", enable_width2=\"1x or 4x\" therefore final width should be 4x)",
        ));
        let l = &p.value.links[0];
        assert_eq!(l.level, Level::Warning);
        assert_eq!(l.property, LinkProperty::Width);
        assert_eq!(l.actual, "1x");
        assert_eq!(l.expected.as_deref(), Some("4x"));
        assert_eq!(l.end.node, "gpu-r2n07/U1");
        assert_eq!(l.end.port, Some(1));
        assert!(l.peer.is_none());
    }

    #[test]
    fn counters_that_grew_during_the_run_and_over_threshold_are_read() {
        let text = "-E- Sfc6a1c0300b00580/Nfc6a1c0300b00580/P1/5/1 - \"symbol_error_counter\" increased during the run (difference value=27,difference allowed threshold=1)\n-E- lid=0x0012 dev=4123 sw07/P12\n      Performance Monitor counter     : Value\n      link_error_recovery_counter     : 0x2f (threshold=0xa)\n";
        let p = parse(&lines_of(text));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let c = &p.value.counters;
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].counter, "symbol_error_counter");
        assert_eq!(
            (c[0].value, c[0].threshold, c[0].during_run),
            (27, Some(1), true)
        );
        assert_eq!(c[0].port, "Sfc6a1c0300b00580/Nfc6a1c0300b00580/P1/5/1");
        assert_eq!(c[1].counter, "link_error_recovery_counter");
        assert_eq!(
            (c[1].value, c[1].threshold, c[1].during_run),
            (47, Some(10), false)
        );
        assert_eq!(c[1].port, "lid=0x0012 dev=4123 sw07/P12");
    }

    #[test]
    fn the_summary_table_and_ibdiagnets_own_text_are_read() {
        let text = "Load Plugins from:\n/usr/share/ibdiagnet2.1.1/plugins/\n---------------------------------------------\nDiscovery\n-I- Discovering ... 12 nodes (2 Switches & 10 CA-s) discovered.\n-E- Links Speed Check finished with errors\n---------------------------------------------\nFabric Summary\n\nTotal Nodes             : 12\nAdaptive Routing is enabled on 2 switches\n---------------------------------------------\nSummary\n-I- Stage                     Warnings   Errors     Comment\n-I- Discovery                 3          0\n-I- Speed / Width checks      0          1          see log\n\n-I- You can find detailed errors/warnings in: /var/tmp/ibdiagnet2/ibdiagnet2.log\n";
        let p = parse(&lines_of(text));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let s = &p.value.stages;
        assert_eq!(s.len(), 2);
        assert_eq!(
            (s[0].stage.as_str(), s[0].warnings, s[0].errors),
            ("Discovery", 3, 0)
        );
        assert_eq!(s[1].stage, "Speed / Width checks");
        assert_eq!(s[1].errors, 1);
        assert_eq!(s[1].comment.as_deref(), Some("see log"));
        assert_eq!(p.value.messages.len(), 1);
    }

    #[test]
    fn check_lines_are_told_from_firmware_tool_failures() {
        assert!(is_check_line(SPEED));
        assert!(is_check_line("-W- lid=0x0021 dev=54000 leaf02/P17"));
        assert!(is_check_line(
            "-E- gpu-b14/U1/P1 - \"symbol_error_counter\" increased during the run (difference value=31,difference allowed threshold=1)"
        ));
        for failure in [
            "-E- Failed to open device: mlx5_0",
            "-W- Unknown option -x",
            "-I- Discovering ... 3 nodes",
            "-E- Link: sw1/P1 - Logical state is different",
        ] {
            assert!(!is_check_line(failure), "{failure}");
        }
    }

    #[test]
    fn prose_inside_is_unread() {
        let p = parse(&lines_of("-I- Discovering ...\nso I rebooted the switch\n"));
        assert_eq!(p.warnings.len(), 1);
    }
}
