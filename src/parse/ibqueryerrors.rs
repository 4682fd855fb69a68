//! `ibqueryerrors`: the fabric-wide scan of port counters against error
//! thresholds (infiniband-diags `ibqueryerrors.c`).
//!
//! Forms handled:
//! - node headers: `Errors for 0x<guid> "<desc>"` (switches), `Errors for
//!   "<desc>"` (CAs, routers) and `Data Counters for 0x<guid> "<desc>"`
//!   (`--counters`);
//! - port lines `GUID 0x<guid> port <n>:` and `port ALL:` followed by
//!   ` [Name == value]` entries (32-bit PortCounters), ` [Name == value
//!   (1.234K)]` entries (64-bit extended counters and data counters, with
//!   the tool's human-readable value, including older versions' `(  infPB)`),
//!   and the mislabelled `--details` entries;
//! - `Link info:` lines (`-r`), for up and down ports, with and without a peer;
//! - the trailer: `## Summary:`, ports checked, `## Thresholds: [Name = v]…`
//!   or `## (null)` when no threshold file was read, `PMA query failures`,
//!   `## Suppressed:`;
//! - the tool's own error lines (`Failed to reset errors …`, `discover
//!   failed`) and, when they reach the parser, `ibwarn:`/`iberror:` lines.
//!
//! Widths: an entry without a human-readable suffix comes from the 32-bit
//! PortCounters attribute, so its width is that table's; an error entry with
//! the suffix comes from PortCountersExtended (64 bits). Data counters are
//! printed with the suffix whichever attribute they came from; they are
//! 64-bit when the line also shows unicast/multicast counters (extended
//! only) or a value above 2³²−1, and of unknown width otherwise.

use crate::diag::WarningKind;
use crate::model::counter::max_for_bits;
use crate::model::ib::{Guid, PhysState, PortState};
use crate::model::ibqueryerrors::{
    ErrorSummary, Ibqueryerrors, LinkInfo, NodeReport, PortReport, RemotePort, ReportKind,
};
use crate::model::partial::{Partial, PartialReason};
use crate::model::perf_fields::FieldKind;
use crate::model::perfquery::PerfAttribute;
use crate::model::{Counter, Counters};
use crate::parse::text::{decimal_u32, decimal_u64, read_each_line, tool_message_kind, Unread};
use crate::parse::{Block, Line, Parsed, Spec};
use std::collections::BTreeMap;

pub(crate) const FORMAT: Spec<Ibqueryerrors> = Spec {
    command: |argv| matches!(argv.first(), Some(&"ibqueryerrors" | &"ibqueryerrors.pl")),
    starts: |b| matches!(b, b'G' | b'#' | b'E' | b'D'),
    detect,
    parse,
    summary,
    attach_command: None,
    labels: &["summary", "errors", "thresholds", "link", "guid", "lid"],
};

/// Data counters, printed from PortCounters (32-bit) or PortCountersExtended.
const DATA_COUNTERS: &[&str] = &["PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts"];

/// Counters only PortCountersExtended has.
const EXTENDED_ONLY: &[&str] = &[
    "PortUnicastXmitPkts",
    "PortUnicastRcvPkts",
    "PortMulticastXmitPkts",
    "PortMulticastRcvPkts",
];

/// Lines ibqueryerrors itself prints on stderr when part of its work fails.
const OWN_ERRORS: &[&str] = &[
    "Failed to ",
    "discover failed",
    "loading cached fabric failed",
    "Cannot specify cache",
    "Query SA failed",
    "WARN: string buffer overflow",
];

/// Reads `ibqueryerrors` output.
#[must_use]
pub fn parse(lines: &[Line<'_>]) -> Parsed<Ibqueryerrors> {
    read_each_line(lines, read_line).map(|mut out| {
        mark_without_summary(&mut out, lines);
        out
    })
}

/// What IN001 names when the output has no `## Summary:` line.
pub const NO_SUMMARY: &str = "the `## Summary:` line";

/// Marks output without its `## Summary:` line partial. ibqueryerrors
/// prints the summary last on every run that finishes (`print_summary`),
/// and prints a port only when it is beyond a threshold: without the
/// summary the paste stopped before the end, or the run did, and a port
/// it does not list is unknown, not clean. Said where the output stops.
/// Output that listed nothing is not cut: the run failed before it
/// reached the fabric (`ibwarn: … No SM/SA found`), and its own message
/// says so.
fn mark_without_summary(out: &mut Ibqueryerrors, lines: &[Line<'_>]) {
    if out.summary.is_some() || out.nodes.is_empty() {
        return;
    }
    let Some(last) = crate::parse::text::last_text_line(lines) else {
        return;
    };
    out.partial = Some(Partial::new(
        PartialReason::MissingFields,
        vec![NO_SUMMARY.to_owned()],
        last,
    ));
}

fn read_line(line: &Line<'_>, out: &mut Ibqueryerrors, unread: &mut Unread) {
    let t = line.text().trim();
    if let Some((report, guid, desc)) = node_header(t) {
        if out.summary.is_some() {
            unread.warn(
                WarningKind::Suspicious,
                line.span(),
                "node report after the summary: a second run pasted without its prompt?",
            );
        }
        out.nodes.push(NodeReport {
            report,
            guid,
            desc: desc.to_owned(),
            ports: Vec::new(),
            span: line.span(),
            headerless: false,
        });
    } else if let Some(rest) = t.strip_prefix("GUID ") {
        read_port_line(line, rest, out, unread);
    } else if let Some(rest) = t.strip_prefix("Link info:") {
        read_link_line(line, rest, out, unread);
    } else if t.starts_with("##") {
        read_summary_line(line, t.trim_start_matches('#').trim(), out, unread);
    } else if OWN_ERRORS.iter().any(|p| t.starts_with(p)) {
        out.messages.push(t.to_owned());
    } else if let Some(kind) = tool_message_kind(t) {
        let what = if kind == WarningKind::Truncated {
            "ibqueryerrors reported an error; output may be incomplete"
        } else {
            "ibqueryerrors warned"
        };
        unread.warn(kind, line.span(), format!("{what}: {t}"));
    } else {
        unread.line(line, "not an ibqueryerrors line");
    }
}

/// `Errors for 0x… "desc"`, `Errors for "desc"`, `Data Counters for 0x… "desc"`.
fn node_header(t: &str) -> Option<(ReportKind, Option<Guid>, &str)> {
    let (report, rest) = match t.strip_prefix("Errors for ") {
        Some(rest) => (ReportKind::Errors, rest),
        None => (
            ReportKind::DataCounters,
            t.strip_prefix("Data Counters for ")?,
        ),
    };
    let (guid, quoted) = match rest.strip_prefix("0x") {
        Some(_) => {
            let (g, q) = rest.split_once(' ')?;
            (Some(Guid::parse(g)?), q.trim_start())
        }
        None => (None, rest),
    };
    Some((report, guid, unquote(quoted)?))
}

/// `"text"` → `text`; the text itself may hold quotes.
fn unquote(t: &str) -> Option<&str> {
    t.strip_prefix('"')?.strip_suffix('"')
}

/// `0x… port 3: [..] [..]` or `0x… port ALL: …` (after `GUID `).
fn read_port_line(line: &Line<'_>, rest: &str, out: &mut Ibqueryerrors, unread: &mut Unread) {
    let Some((guid, port, entries)) = port_line_head(rest) else {
        return unread.line(line, "not a `GUID 0x… port N: [Name == value]…` line");
    };
    let continues = out
        .nodes
        .last()
        .is_some_and(|n| !n.headerless || n.ports.iter().all(|p| p.guid == guid));
    if !continues {
        // A port line pasted alone (or the start of the output cut off):
        // its node is unknown, but its counters are what they are. Lines
        // of one switch share its GUID; another GUID is another node.
        unread.warn(
            WarningKind::Truncated,
            line.span(),
            "port line without its `Errors for` header (pasted alone, or the output cut at the start): the node's name is unknown",
        );
        out.nodes.push(NodeReport {
            report: ReportKind::Errors,
            guid: None,
            desc: String::new(),
            ports: Vec::new(),
            span: line.span(),
            headerless: true,
        });
    }
    let Some(node) = out.nodes.last_mut() else {
        return;
    };
    node.span = node.span.join(line.span());
    let mut counters = Counters::new();
    read_entries(line, entries, node.report, &mut counters, unread);
    node.ports.push(PortReport {
        guid,
        port: port.unwrap_or(ALL_PORTS),
        all_ports: port.is_none(),
        counters,
        link: None,
        span: line.span(),
    });
}

/// The port number ibqueryerrors (and the PMA) use for "all ports".
const ALL_PORTS: u32 = 255;

/// (GUID, port or `None` for ALL, the entries after the colon).
fn port_line_head(rest: &str) -> Option<(Guid, Option<u32>, &str)> {
    let (guid, rest) = rest.split_once(' ')?;
    let guid = Guid::parse(guid).filter(|_| guid.starts_with("0x"))?;
    let (port, entries) = rest.trim_start().strip_prefix("port ")?.split_once(':')?;
    let port = match port.trim() {
        "ALL" => None,
        n => Some(decimal_u32(n).ok()?),
    };
    Some((guid, port, entries))
}

/// One `[Name == value]` or `[Name == value (1.234K)]` entry.
struct Entry<'t> {
    name: &'t str,
    value: u64,
    human: bool,
}

fn read_entries(
    line: &Line<'_>,
    text: &str,
    report: ReportKind,
    counters: &mut Counters,
    unread: &mut Unread,
) {
    let mut entries = Vec::new();
    let mut rest = text.trim();
    let mut garbage = false;
    while !rest.is_empty() {
        let parsed = rest
            .strip_prefix('[')
            .and_then(|r| r.split_once(']'))
            .map(|(inside, after)| (entry(inside), after));
        match parsed {
            Some((Some(Ok(e)), after)) => {
                if let Some(i) = entries.iter().position(|x: &Entry<'_>| x.name == e.name) {
                    unread.warn(
                        WarningKind::Suspicious,
                        line.span(),
                        format!(
                            "`{}` appears twice on one line; the later value is kept",
                            e.name
                        ),
                    );
                    entries.remove(i);
                }
                entries.push(e);
                rest = after.trim_start();
            }
            Some((Some(Err(name)), after)) => {
                unread.warn(
                    WarningKind::OutOfRange,
                    line.span(),
                    format!("`{name}` is larger than its counter can hold; value ignored"),
                );
                rest = after.trim_start();
            }
            Some((None, _)) | None => {
                garbage = true;
                break;
            }
        }
    }
    let wide_data = entries.iter().any(|e| {
        EXTENDED_ONLY.contains(&e.name)
            || (is_ambiguous_data(e, report) && e.value > u64::from(u32::MAX))
    });
    for e in entries {
        let bits = width(&e, report, wide_data);
        if max_for_bits(bits).is_some_and(|max| e.value > max) {
            unread.warn(
                WarningKind::OutOfRange,
                line.span(),
                format!(
                    "`{}` is {}, more than its {bits}-bit field can hold; value ignored",
                    e.name, e.value
                ),
            );
            continue;
        }
        counters.insert(e.name, Counter::new(e.value, bits));
    }
    if garbage {
        unread.line(line, "not a `[Name == value]` entry");
    }
}

/// `Name == 5` or `Name == 5 (5.000)`; `Err(name)` when the number does not
/// fit in 64 bits, `None` when it is not an entry at all.
fn entry(inside: &str) -> Option<Result<Entry<'_>, &str>> {
    let (name, value) = inside.trim().split_once(" == ")?;
    let name = name.trim();
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    let (number, human) = match value.split_once('(') {
        Some((number, human)) => {
            human.strip_suffix(')').filter(|h| is_human_readable(h))?;
            (number.trim(), true)
        }
        None => (value.trim(), false),
    };
    Some(match decimal_u64(number) {
        Ok(value) => Ok(Entry { name, value, human }),
        Err(crate::parse::text::NumberError::TooLarge) => Err(name),
        Err(crate::parse::text::NumberError::NotANumber) => return None,
    })
}

/// `%5.3f` and a unit from `conv_cnt_human_readable`: `5.000`, `1.234K`,
/// ` 12.500MB`, `  infPB` (older versions overflow their divisor).
fn is_human_readable(h: &str) -> bool {
    let h = h.trim();
    let split = h.find(|c: char| c.is_ascii_uppercase()).unwrap_or(h.len());
    let (number, unit) = h.split_at(split);
    let number_ok = matches!(number, "inf" | "-inf" | "nan" | "-nan")
        || (!number.is_empty()
            && number
                .chars()
                .all(|c| c.is_ascii_digit() || c == '.' || c == '-'));
    let unit_ok = matches!(
        unit,
        "" | "K" | "M" | "G" | "T" | "P" | "E" | "B" | "KB" | "MB" | "GB" | "TB" | "PB" | "EB"
    );
    number_ok && unit_ok
}

/// A data counter printed the way both the 32-bit and the 64-bit
/// attribute's values are printed, so its width cannot be read from it.
fn is_ambiguous_data(e: &Entry<'_>, report: ReportKind) -> bool {
    DATA_COUNTERS.contains(&e.name) && (e.human || report == ReportKind::DataCounters)
}

/// The width of an entry's counter; see the module documentation.
fn width(e: &Entry<'_>, report: ReportKind, wide_data: bool) -> u8 {
    let counter_bits = |attr: PerfAttribute| match attr.field_kind(e.name) {
        Some(FieldKind::Counter(bits)) => bits,
        _ => 0,
    };
    if is_ambiguous_data(e, report) {
        return if wide_data { 64 } else { 0 };
    }
    if e.human {
        counter_bits(PerfAttribute::PortCountersExtended)
    } else {
        counter_bits(PerfAttribute::PortCounters)
    }
}

/// `Link info:     12   1[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>  0x… 14 3[  ] "desc" ( )`.
fn read_link_line(line: &Line<'_>, rest: &str, out: &mut Ibqueryerrors, unread: &mut Unread) {
    let Some(link) = link_info(rest) else {
        return unread.line(line, "not a `Link info:` line");
    };
    let port = out.nodes.last_mut().and_then(|n| {
        n.span = n.span.join(line.span());
        n.ports.last_mut()
    });
    match port {
        Some(p) => {
            p.span = p.span.join(line.span());
            p.link = Some(link);
        }
        None => unread.warn(
            WarningKind::Truncated,
            line.span(),
            "`Link info:` before any port line (output cut at the start?)",
        ),
    }
}

fn link_info(rest: &str) -> Option<LinkInfo> {
    let (numbers, after) = rest.split_once('[')?;
    let mut numbers = numbers.split_whitespace();
    let lid = decimal_u32(numbers.next()?).ok()?;
    let port = decimal_u32(numbers.next()?).ok()?;
    if numbers.next().is_some() {
        return None;
    }
    let (_, after) = after.split_once(']')?;
    let after = after.trim_start().strip_prefix("==(")?;
    let (link, remote) = after.split_once(")==>")?;
    let (left, phys) = link.rsplit_once('/')?;
    let words: Vec<&str> = left.split_whitespace().collect();
    let (state, rest) = words.split_last()?;
    let (width, speed): (Option<String>, &[&str]) = match rest {
        [] => (None, &[]),
        ["undefined", w, speed @ ..] => (Some(format!("undefined {w}")), speed),
        [w, speed @ ..] => (Some((*w).to_owned()), speed),
    };
    Some(LinkInfo {
        lid,
        port,
        width,
        speed: (!speed.is_empty()).then(|| speed.join(" ")),
        state: PortState::parse(state),
        phys_state: PhysState::parse(phys),
        remote: remote_port(remote.trim()),
    })
}

/// `0x… <lid> <port>[..] "desc" (hint)`; `None` for `[  ] "" ( )`.
fn remote_port(t: &str) -> Option<RemotePort> {
    let (guid, rest) = t.split_once(' ')?;
    let guid = Guid::parse(guid).filter(|_| guid.starts_with("0x"))?;
    let (numbers, rest) = rest.split_once('[')?;
    let mut numbers = numbers.split_whitespace();
    let lid = decimal_u32(numbers.next()?).ok()?;
    let port = decimal_u32(numbers.next()?).ok()?;
    let (_, rest) = rest.split_once(']')?;
    let rest = rest.trim_start().strip_prefix('"')?;
    let (desc, hint) = rest.rsplit_once('"')?;
    let hint = hint.trim().strip_prefix('(')?.strip_suffix(')')?.trim();
    Some(RemotePort {
        guid,
        lid,
        port,
        desc: desc.to_owned(),
        could_be: (!hint.is_empty()).then(|| hint.to_owned()),
    })
}

/// One `## …` trailer line, with the `#`s removed.
fn read_summary_line(line: &Line<'_>, body: &str, out: &mut Ibqueryerrors, unread: &mut Unread) {
    if let Some(rest) = body.strip_prefix("Summary:") {
        match two_counts(rest, "nodes checked,", "bad nodes found") {
            Some((checked, bad)) => {
                out.summary = Some(ErrorSummary {
                    nodes_checked: checked,
                    bad_nodes: bad,
                    ..ErrorSummary::default()
                });
            }
            None => unread.line(
                line,
                "not a `## Summary: N nodes checked, N bad nodes found` line",
            ),
        }
        return;
    }
    if out.summary.is_none() {
        unread.warn(
            WarningKind::Truncated,
            line.span(),
            "summary line without the `## Summary:` line before it (output cut?)",
        );
    }
    let summary = out.summary.get_or_insert_with(ErrorSummary::default);
    if let Some((checked, bad)) =
        two_counts(body, "ports checked,", "ports have errors beyond threshold")
    {
        summary.ports_checked = Some(checked);
        summary.bad_ports = Some(bad);
    } else if let Some(rest) = body.strip_prefix("Thresholds:") {
        match thresholds(rest) {
            Some(t) => summary.thresholds = t,
            None => unread.line(line, "not a `## Thresholds: [Name = value]…` line"),
        }
    } else if body == "(null)" {
        summary.thresholds.clear();
    } else if let Some(n) = body.strip_suffix("PMA query failures") {
        match decimal_u64(n) {
            Ok(n) => summary.pma_query_failures = n,
            Err(e) => unread.number(line, "PMA query failures", e),
        }
    } else if let Some(rest) = body.strip_prefix("Suppressed:") {
        summary.suppressed = rest.split_whitespace().map(str::to_owned).collect();
    } else {
        unread.line(line, "not an ibqueryerrors summary line");
    }
}

/// `<a> <first words> <b> <second words>` → (a, b).
fn two_counts(text: &str, first: &str, second: &str) -> Option<(u64, u64)> {
    let (a, rest) = text.trim().split_once(' ')?;
    let rest = rest.trim_start().strip_prefix(first)?;
    let (b, rest) = rest.trim_start().split_once(' ')?;
    (rest.trim() == second).then_some(())?;
    Some((decimal_u64(a).ok()?, decimal_u64(b).ok()?))
}

/// `[SymbolErrorCounter = 10][LinkDownedCounter = 1]`.
fn thresholds(text: &str) -> Option<BTreeMap<String, u64>> {
    let mut out = BTreeMap::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        let (inside, after) = rest.strip_prefix('[')?.split_once(']')?;
        let (name, value) = inside.split_once(" = ")?;
        out.insert(name.trim().to_owned(), decimal_u64(value).ok()?);
        rest = after.trim_start();
    }
    Some(out)
}

/// Recognises a node header followed by a port line, the summary (a clean
/// fabric prints nothing else), or a port line pasted without its header
/// (`GUID 0x… port ALL: [Name == value]…`: at least one whole entry).
fn detect(lines: &[Line<'_>]) -> Option<Block> {
    let first = lines.first()?.text().trim();
    if let Some(rest) = first.strip_prefix("GUID ") {
        let (guid, port, entries) = port_line_head(rest)?;
        let (inside, _) = entries.trim_start().strip_prefix('[')?.split_once(']')?;
        entry(inside)?.ok()?;
        let port = port.map_or_else(|| "ALL".to_owned(), |p| p.to_string());
        return Some(Block::keyed(format!("port|{guid}|{port}")));
    }
    if let Some(rest) = first.strip_prefix("##") {
        let rest = rest
            .trim_start_matches('#')
            .trim()
            .strip_prefix("Summary:")?;
        two_counts(rest, "nodes checked,", "bad nodes found")?;
        return Some(Block::keyed("summary"));
    }
    let (report, guid, desc) = node_header(first)?;
    // stderr diagnostics can land between a header and its first line.
    let next = lines
        .iter()
        .skip(1)
        .map(|l| l.text().trim())
        .find(|t| !t.is_empty() && tool_message_kind(t).is_none())?;
    port_line_head(next.strip_prefix("GUID ")?)?;
    let kind = match report {
        ReportKind::Errors => "errors",
        ReportKind::DataCounters => "data",
    };
    let id = guid.map_or_else(|| desc.to_owned(), |g| g.to_string());
    Some(Block::keyed(format!("{kind}|{id}")))
}

/// The order in which ibqueryerrors prints entries: PortCounters error
/// fields (each `--details` group after the field that triggers it, named as
/// the tool mislabels them), PortXmitWait, then the data counters.
const ENTRY_ORDER: &[&str] = &[
    "SymbolErrorCounter",
    "LinkErrorRecoveryCounter",
    "LinkDownedCounter",
    "PortRcvErrors",
    "PortInactiveDiscards",
    "PortNeighborMTUDiscards",
    "PortSwLifetimeLimitDiscards",
    "PortSwHOQLifetimeLimitDiscards",
    "PortRcvRemotePhysicalErrors",
    "PortRcvSwitchRelayErrors",
    "PortXmitDiscards",
    "PortLocalPhysicalErrors",
    "PortMalformedPktErrors",
    "PortBufferOverrunErrors",
    "PortDLIDMappingErrors",
    "PortVLMappingErrors",
    "PortLoopingErrors",
    "PortXmitConstraintErrors",
    "PortRcvConstraintErrors",
    "LocalLinkIntegrityErrors",
    "ExcessiveBufferOverrunErrors",
    "VL15Dropped",
    "PortXmitWait",
    "PortXmitData",
    "PortRcvData",
    "PortXmitPkts",
    "PortRcvPkts",
    "PortUnicastXmitPkts",
    "PortUnicastRcvPkts",
    "PortMulticastXmitPkts",
    "PortMulticastRcvPkts",
];

/// Renders a model the way ibqueryerrors prints it. Entries of 64-bit
/// counters and data counters get the tool's human-readable suffix. What
/// the model does not keep is printed in its usual form: external port
/// numbers as `[  ]`, `## (null)` as an empty threshold list.
#[must_use]
pub fn render(report: &Ibqueryerrors) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    for node in &report.nodes {
        let what = match node.report {
            ReportKind::Errors => "Errors for",
            ReportKind::DataCounters => "Data Counters for",
        };
        match node.guid {
            // Printed as it was read: without the header it did not have.
            _ if node.headerless => {}
            Some(g) => {
                let _ = writeln!(s, "{what} 0x{:x} \"{}\"", g.0, node.desc);
            }
            None => {
                let _ = writeln!(s, "{what} \"{}\"", node.desc);
            }
        }
        for port in &node.ports {
            render_port(port, &mut s);
        }
    }
    for message in &report.messages {
        let _ = writeln!(s, "{message}");
    }
    if let Some(sum) = &report.summary {
        let _ = writeln!(
            s,
            "\n## Summary: {} nodes checked, {} bad nodes found",
            sum.nodes_checked, sum.bad_nodes
        );
        if let (Some(checked), Some(bad)) = (sum.ports_checked, sum.bad_ports) {
            let _ = writeln!(
                s,
                "##          {checked} ports checked, {bad} ports have errors beyond threshold"
            );
        }
        s.push_str("## Thresholds: ");
        let known = ENTRY_ORDER
            .iter()
            .filter_map(|n| sum.thresholds.get_key_value(*n));
        let others = sum
            .thresholds
            .iter()
            .filter(|(n, _)| !ENTRY_ORDER.contains(&n.as_str()));
        for (name, value) in known.chain(others) {
            let _ = write!(s, "[{name} = {value}]");
        }
        s.push('\n');
        if sum.pma_query_failures > 0 {
            let _ = writeln!(
                s,
                "##          {} PMA query failures",
                sum.pma_query_failures
            );
        }
        s.push_str("## Suppressed:");
        for name in &sum.suppressed {
            let _ = write!(s, " {name}");
        }
        s.push('\n');
    }
    s
}

fn render_port(port: &PortReport, s: &mut String) {
    use std::fmt::Write as _;
    let _ = write!(s, "   GUID 0x{:x} port ", port.guid.0);
    if port.all_ports {
        s.push_str("ALL:");
    } else {
        let _ = write!(s, "{}:", port.port);
    }
    let known = ENTRY_ORDER
        .iter()
        .filter_map(|n| port.counters.get_key_value(*n));
    let others = port
        .counters
        .iter()
        .filter(|(n, _)| !ENTRY_ORDER.contains(&n.name()));
    for (id, c) in known.chain(others) {
        let name = id.name();
        // Data counters get the suffix (unless read as 32-bit PortCounters,
        // which the tool never prints for them); only the two octet counters
        // are scaled to bytes.
        let data = DATA_COUNTERS.contains(&name) && c.bits != 32;
        let octets = matches!(name, "PortXmitData" | "PortRcvData");
        if c.bits == 64 || data {
            let (value, unit) = human_readable(c.value, octets);
            let _ = write!(s, " [{name} == {} ({value:5.3}{unit})]", c.value);
        } else {
            let _ = write!(s, " [{name} == {}]", c.value);
        }
    }
    s.push('\n');
    if let Some(link) = &port.link {
        render_link(link, s);
    }
}

fn render_link(link: &LinkInfo, s: &mut String) {
    use std::fmt::Write as _;
    let state = state_name(link.state);
    let phys = phys_name(link.phys_state);
    let _ = write!(s, "       Link info: {:6}{:4}[  ] ==", link.lid, link.port);
    match (&link.width, &link.speed) {
        (None, None) => {
            let _ = write!(s, "(              {state:>6}/{phys:>8})");
        }
        (width, speed) => {
            let width = width.as_deref().unwrap_or("");
            let speed = speed.as_deref().unwrap_or("");
            let _ = write!(s, "({width:>3} {speed:>18} {state:>6}/{phys:>8})");
        }
    }
    s.push_str("==>  ");
    match &link.remote {
        Some(r) => {
            let hint = match r.could_be.as_deref() {
                Some(h) if h.matches("Could be").count() > 1 => h.to_owned(),
                Some(h) => format!("{h} "),
                None => " ".to_owned(),
            };
            let _ = writeln!(
                s,
                "0x{:016x} {:6} {:4}[  ] \"{}\" ({hint})",
                r.guid.0, r.lid, r.port, r.desc
            );
        }
        None => s.push_str("           [  ] \"\" ( )\n"),
    }
}

/// `conv_cnt_human_readable`: the value scaled by powers of 1024 (data
/// counters first multiplied by 4 to give bytes), computed in single
/// precision as the tool does, and its unit.
fn human_readable(value: u64, data: bool) -> (f32, &'static str) {
    let mut tmp = value / 1024;
    let mut unit_index = 0usize;
    let mut div: u64 = 1;
    while tmp > 0 {
        unit_index += 1;
        tmp /= 1024;
        div = div.saturating_mul(1024);
    }
    #[allow(clippy::cast_precision_loss)] // the tool converts to float too
    let mut v = value as f32;
    #[allow(clippy::cast_precision_loss)]
    if data {
        v *= 4.0;
        if v / div as f32 > 1024.0 {
            unit_index += 1;
            div = div.saturating_mul(1024);
        }
    }
    #[allow(clippy::cast_precision_loss)]
    let v = v / div as f32;
    let units: &[&str] = if data {
        &["B", "KB", "MB", "GB", "TB", "PB", "EB"]
    } else {
        &["", "K", "M", "G", "T", "P", "E"]
    };
    (v, units.get(unit_index).copied().unwrap_or(""))
}

/// mad_dump_portstate's names; ibqueryerrors prints `?` for others.
fn state_name(state: PortState) -> &'static str {
    state.libibmad_name().unwrap_or("?")
}

/// mad_dump_physportstate's names; ibqueryerrors prints `?` for others.
fn phys_name(state: PhysState) -> &'static str {
    state.libibmad_name().unwrap_or("?")
}

/// `2 bad port(s) on 1 node(s); 12 nodes, 40 ports checked`.
#[must_use]
pub fn summary(report: &Ibqueryerrors) -> String {
    let bad_ports = report.bad_ports().count();
    let bad_nodes = report
        .nodes
        .iter()
        .filter(|n| n.report == ReportKind::Errors)
        .count();
    let mut s = format!("{bad_ports} bad port(s) on {bad_nodes} node(s)");
    let Some(sum) = &report.summary else {
        s.push_str("; no summary (output cut, or the run failed)");
        return s;
    };
    s.push_str(&format!("; {} node(s)", sum.nodes_checked));
    if let Some(p) = sum.ports_checked {
        s.push_str(&format!(", {p} port(s)"));
    }
    s.push_str(" checked");
    if sum.pma_query_failures > 0 {
        s.push_str(&format!(
            ", {} PMA query failure(s)",
            sum.pma_query_failures
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::lines_of;

    /// Laid out as `print_results`, `print_port_config` and `print_summary`
    /// print it.
    const RUN: &str = r#"Errors for 0x2c90200000010 "SW-1 leaf"
   GUID 0x2c90200000010 port ALL: [SymbolErrorCounter == 70] [LinkDownedCounter == 2] [PortXmitWait == 1234]
   GUID 0x2c90200000010 port 3: [SymbolErrorCounter == 65535] [LinkDownedCounter == 2]
       Link info:      7   3[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>  0x0002c90300000021     12    1[  ] "host-a mlx5_0" ( )
Errors for "host-b mlx5_0"
   GUID 0x2c90300000031 port 1: [LocalLinkIntegrityErrors == 15] [PortXmitData == 4294967295 (16.000GB)]
       Link info:     13   1[  ] ==(                Down/Disabled)==>             [  ] "" ( )
Errors for "host-c mlx5_0"
   GUID 0x2c90300000041 port 1: [SymbolErrorCounter == 5 (5.000)] [PortXmitData == 123 (492.000B)] [PortUnicastXmitPkts == 9 (9.000)]

## Summary: 4 nodes checked, 3 bad nodes found
##          12 ports checked, 3 ports have errors beyond threshold
## Thresholds: [SymbolErrorCounter = 10][LinkDownedCounter = 1]
##          2 PMA query failures
## Suppressed: PortRcvSwitchRelayErrors
"#;

    #[test]
    fn reads_nodes_ports_links_and_summary() {
        let parsed = parse(&lines_of(RUN));
        assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
        let r = &parsed.value;
        assert_eq!(r.nodes.len(), 3);
        let sw = &r.nodes[0];
        assert_eq!(
            (sw.guid, sw.desc.as_str()),
            (Some(Guid(0x0002_c902_0000_0010)), "SW-1 leaf")
        );
        let all = &sw.ports[0];
        assert!(all.all_ports && all.port == 255);
        assert_eq!(all.counters["PortXmitWait"], Counter::new(1234, 32));
        let p3 = &sw.ports[1];
        assert_eq!(p3.counters["SymbolErrorCounter"], Counter::new(65535, 16));
        assert!(p3.counters["SymbolErrorCounter"].saturated);
        let link = p3.link.as_ref().unwrap();
        assert_eq!((link.lid, link.port), (7, 3));
        assert_eq!(link.width.as_deref(), Some("4X"));
        assert_eq!(link.speed.as_deref(), Some("25.78125 Gbps"));
        assert_eq!(
            (link.state, link.phys_state),
            (PortState::Active, PhysState::LinkUp)
        );
        let remote = link.remote.as_ref().unwrap();
        assert_eq!(
            (remote.lid, remote.port, remote.desc.as_str()),
            (12, 1, "host-a mlx5_0")
        );
        assert_eq!(remote.could_be, None);

        let b = &r.nodes[1];
        assert_eq!(b.guid, None);
        let p = &b.ports[0];
        assert!(p.counters["LocalLinkIntegrityErrors"].saturated);
        assert_eq!(
            p.counters["PortXmitData"].bits, 0,
            "32 or 64 bits cannot be told"
        );
        let down = p.link.as_ref().unwrap();
        assert_eq!(
            (
                down.state,
                down.phys_state,
                down.width.clone(),
                down.remote.clone()
            ),
            (PortState::Down, PhysState::Disabled, None, None)
        );

        let c = &r.nodes[2].ports[0];
        assert_eq!(c.counters["SymbolErrorCounter"].bits, 64);
        assert_eq!(
            c.counters["PortXmitData"].bits, 64,
            "unicast counters only exist in the extended attribute"
        );

        let s = r.summary.as_ref().unwrap();
        assert_eq!(
            (s.nodes_checked, s.bad_nodes, s.ports_checked, s.bad_ports),
            (4, 3, Some(12), Some(3))
        );
        assert_eq!(s.thresholds["LinkDownedCounter"], 1);
        assert_eq!(s.pma_query_failures, 2);
        assert_eq!(s.suppressed, vec!["PortRcvSwitchRelayErrors"]);
        assert_eq!(r.bad_ports().count(), 3);
    }

    #[test]
    fn render_reproduces_the_tool_text() {
        let parsed = parse(&lines_of(RUN)).value;
        assert_eq!(render(&parsed), RUN);
    }

    #[test]
    fn human_readable_values_follow_the_tool() {
        let fmt = |v: u64, data: bool| {
            let (x, unit) = human_readable(v, data);
            format!("{x:5.3}{unit}")
        };
        assert_eq!(fmt(5, false), "5.000");
        assert_eq!(fmt(123, true), "492.000B");
        assert_eq!(fmt(4_294_967_295, true), "16.000GB");
        assert_eq!(fmt(2736, true), "10.688KB");
        assert_eq!(fmt(u64::MAX, false), "16.000E");
        assert_eq!(fmt(u64::MAX, true), "64.000EB");
    }

    #[test]
    fn clean_fabric_prints_only_the_summary() {
        let text = "\n## Summary: 2 nodes checked, 0 bad nodes found\n##          4 ports checked, 0 ports have errors beyond threshold\n## (null)\n## Suppressed:\n";
        let lines = lines_of(text);
        assert!(detect(&lines[1..]).is_some());
        let parsed = parse(&lines);
        assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
        let s = parsed.value.summary.unwrap();
        assert_eq!((s.bad_nodes, s.bad_ports), (0, Some(0)));
        assert!(s.thresholds.is_empty());
        assert!(s.suppressed.is_empty());
    }

    #[test]
    fn output_without_its_summary_is_partial_where_it_stops() {
        // Written for the test: a node report, its link line, a blank line
        // and then nothing: the run's summary never came.
        let text = "Errors for 0x7cfe900300c0ffee \"spine-2\"\n   \
                    GUID 0x7cfe900300c0ffee port 9: [SymbolErrorCounter == 77]\n       \
                    Link info:     41   9[  ] ==( 4X 25.78125 Gbps Active/  LinkUp)==>  \
                    0x0002c90300c0ffee     17    1[  ] \"node-b mlx5_0\" ( )\n\n";
        let parsed = parse(&lines_of(text));
        assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
        let partial = parsed.value.partial.clone().expect("no summary: partial");
        assert_eq!(partial.reason, PartialReason::MissingFields);
        assert_eq!(partial.line, 3, "the last line with text");
        assert_eq!(partial.missing, ["the `## Summary:` line"]);
        // The listed port is still read.
        assert_eq!(parsed.value.bad_ports().count(), 1);
        // With its summary the same output is whole.
        let whole = format!(
            "{text}## Summary: 9 nodes checked, 1 bad nodes found\n\
             ##          60 ports checked, 1 ports have errors beyond threshold\n"
        );
        assert_eq!(parse(&lines_of(&whole)).value.partial, None);
        // A run that failed before listing anything is not a cut paste.
        let failed = "ibwarn: [4242] sa_get_handle: No SM/SA found on port (null):0\n";
        assert_eq!(parse(&lines_of(failed)).value.partial, None);
    }

    #[test]
    fn data_counter_blocks_and_old_infinite_units() {
        let text = r#"Data Counters for 0x2c90200000010 "SW-1"
   GUID 0x2c90200000010 port 1: [PortXmitData == 9000000000000 (  infPB)] [PortRcvData == 5 (20.000B)] [PortXmitPkts == 1 (1.000)] [PortRcvPkts == 0 (0.000)]
"#;
        let parsed = parse(&lines_of(text));
        assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
        let node = &parsed.value.nodes[0];
        assert_eq!(node.report, ReportKind::DataCounters);
        let p = &node.ports[0];
        assert_eq!(
            p.counters["PortXmitData"],
            Counter::new(9_000_000_000_000, 64)
        );
        assert_eq!(p.counters["PortRcvPkts"].value, 0);
        assert_eq!(parsed.value.bad_ports().count(), 0);
    }

    #[test]
    fn damaged_lines_are_reported_and_the_rest_kept() {
        let text = "   GUID 0x1 port 1: [SymbolErrorCounter == 1]\nErrors for \"x\"\n   GUID 0x1 port 1: [SymbolErrorCounter == 1] [LinkDownedCounter == 300] [garbage\n   GUID 0x1 port 2: [PortRcvErrors == 2]\nFailed to reset errors x port 2\nibwarn: [77] query_and_dump: PortXmitDiscardDetails query failed on x, Lid 3 port 2\nsomething else\n";
        let parsed = parse(&lines_of(text));
        // The port line before any header is read into a node of its own,
        // whose name is unknown (and said to be, by the Truncated warning).
        let lone = &parsed.value.nodes[0];
        assert!(lone.headerless && lone.desc.is_empty() && lone.guid.is_none());
        assert_eq!(lone.ports[0].counters["SymbolErrorCounter"].value, 1);
        let node = &parsed.value.nodes[1];
        assert!(!node.headerless);
        assert_eq!(node.ports.len(), 2);
        assert_eq!(node.ports[0].counters["SymbolErrorCounter"].value, 1);
        assert!(!node.ports[0].counters.contains_key("LinkDownedCounter"));
        assert_eq!(
            parsed.value.messages,
            vec!["Failed to reset errors x port 2"]
        );
        let kinds = parsed.warning_lines();
        assert_eq!(
            kinds,
            vec![
                (1, WarningKind::Truncated),
                (3, WarningKind::OutOfRange),
                (3, WarningKind::Unreadable),
                (6, WarningKind::Suspicious),
                (7, WarningKind::Unreadable),
            ]
        );
    }

    #[test]
    fn a_lone_port_line_with_human_units_is_read_for_what_it_holds() {
        // Newer infiniband-diags print every entry with its human-readable
        // value; a paste may hold one port line and nothing else.
        let text = " GUID 0x0c42a10300a96e12 port ALL: [LinkDownedCounter == 31 (31.000)] [PortXmitDiscards == 3107 (3.034K)] [PortXmitWait == 12650773104 (11.782G)]\n GUID 0x0c42a10300a96e12 port 3: [PortRcvErrors == 44 (44.000)]\n GUID 0x0c42a10300a96e99 port 1: [PortRcvErrors == 2]\n";
        let lines = lines_of(text);
        assert_eq!(
            detect(&lines).map(|b| b.key).as_deref(),
            Some("port|0x0c42a10300a96e12|ALL")
        );
        assert_eq!(
            detect(&lines[1..]).map(|b| b.key).as_deref(),
            Some("port|0x0c42a10300a96e12|3")
        );
        let parsed = parse(&lines);
        let r = &parsed.value;
        assert_eq!(parse(&lines_of(&render(r))).value, *r);
        // One switch (one GUID on both lines), then another node.
        assert_eq!(r.nodes.len(), 2);
        assert!(r.nodes.iter().all(|n| n.headerless && n.desc.is_empty()));
        let all = &r.nodes[0].ports[0];
        assert!(all.all_ports);
        assert_eq!(all.counters["PortXmitDiscards"], Counter::new(3107, 64));
        assert_eq!(all.counters["PortXmitWait"].value, 12_650_773_104);
        assert_eq!(r.nodes[0].ports[1].counters["PortRcvErrors"].value, 44);
        assert_eq!(r.bad_ports().count(), 2);
        let truncated: Vec<usize> = parsed
            .warnings
            .iter()
            .filter(|w| w.kind == WarningKind::Truncated)
            .map(|w| w.span.first_line)
            .collect();
        assert_eq!(truncated, vec![1, 3]);
        // Empty summary lines of a run with no threshold file.
        let trailer = parse(&lines_of(
            "## Summary: 1 nodes checked, 1 bad nodes found\n## Thresholds:\n## Suppressed:\n",
        ));
        assert!(trailer.warnings.is_empty(), "{:?}", trailer.warnings);
        // Not a port line: no entry, or no GUID.
        assert!(detect(&lines_of("GUID 0x1 port 1: nothing")).is_none());
        assert!(detect(&lines_of("GUID 0x1 port 1: [PortXmitWait == a lot]")).is_none());
        assert!(detect(&lines_of("GUID 12 port 1: [PortXmitWait == 1]")).is_none());
    }

    #[test]
    fn detection_keys_name_the_node() {
        let key = |t: &str| detect(&lines_of(t)).map(|b| b.key);
        assert_eq!(
            key("Errors for 0x10 \"sw\"\n   GUID 0x10 port 1: [SymbolErrorCounter == 1]")
                .as_deref(),
            Some("errors|0x0000000000000010")
        );
        assert_eq!(
            key("Errors for \"a b\"\n   GUID 0x10 port 1: [X == 1]").as_deref(),
            Some("errors|a b")
        );
        assert_eq!(key("Errors for \"a b\"\nhello"), None);
        assert!(key(
            "Errors for \"a\"\nibwarn: [1] query_and_dump: x\n   GUID 0x1 port 1: [X == 1]"
        )
        .is_some());
        assert_eq!(key("## Summary: lots"), None);
    }
}
