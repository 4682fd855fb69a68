//! `ibdiagnet2.pm`: the port counters ibdiagnet dumps for every port of
//! the fabric (`/var/tmp/ibdiagnet2/ibdiagnet2.pm`), as fleet health checks
//! collect it and people paste it.
//!
//! ```text
//! -------------------------------------------------------
//! Port=1 Lid=0x0012 GUID=0x0002c903000a0b0c Device=4123 Port Name=node007/U1/HCA-1/P1
//! -------------------------------------------------------
//! symbol_error_counter=0x0000
//! port_rcv_errors_extended=0x0000000000000005
//! -------------------------------------------------------
//! ```
//!
//! One block per `Port=N Lid=0x… GUID=0x… Device=… Port Name=…` header
//! between `-----` rules, then `name=value` lines, the value in hex (`0x…`)
//! or decimal.
//!
//! # Model: perfquery's
//! The values are the PMA attributes ibdiagnet read from each port, under
//! names of its own: `symbol_error_counter` is PortCounters'
//! `SymbolErrorCounter` (16 bits), `port_xmit_data_extended`
//! PortCountersExtended's `PortXmitData` (64 bits, 4-octet words as
//! perfquery's), and a name ending in `_extended` is the 64-bit extended
//! copy of the error counter it names. So the section's model is
//! [`Perfquery`], one block per attribute of each port: every IB1xx counter
//! rule, saturation (IB111), the measurements and the two-snapshot rates
//! read it as they read perfquery's, as they read sysfs counter files. A
//! port's extended block follows its PortCounters block, so a 64-bit
//! reading is the one judged when both are printed.
//!
//! Each block's `port_id` is the `Port Name` (the GUID when that is
//! empty), with its LID and port number; the header's `GUID`, `Device` and
//! `Port Name` are kept in every block's `fields`. A name this reader does not know
//! (`max_retransmission_rate`, `sync_header_error_counter`) is kept as
//! printed in the PortCounters block's `fields`, read and not judged.
//!
//! The dump covers the whole fabric, switches and other hosts' ports
//! included: like `ibqueryerrors`' ports, its ports are the fabric's, not
//! the host's where the file was read (see `rules::Context`).
//!
//! # A cut dump
//! ibdiagnet prints the same counters for every port. The last block of a
//! dump that does not end with a rule is cut when it holds fewer counters
//! than the block before it (the names it lacks are missing), when its last
//! line is a name without a value, or when it has no counter at all: it is
//! marked partial, its counters still read.

use crate::diag::WarningKind;
use crate::model::partial::{Partial, PartialReason};
use crate::model::perfquery::{PerfAttribute, PerfBlock, Perfquery};
use crate::model::{Counter, IbCounter};
use crate::parse::text::{
    decimal_u32, decimal_u64, hex_u32, split_once_str, trim, NumberError, Unread,
};
use crate::parse::{Block, Line, Parsed, Spec};
use crate::span::LineSpan;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

pub(crate) const FORMAT: Spec<Perfquery> = Spec {
    command,
    starts: |b| matches!(b, b'-' | b'P'),
    detect,
    parse,
    summary,
    attach_command: None,
    labels: &[],
};

/// `cat`, `less`, `head` or `tail` of an `.pm` file.
fn command(argv: &[&str]) -> bool {
    let program = argv.first().map(|p| p.rsplit('/').next().unwrap_or(p));
    matches!(program, Some("cat" | "less" | "more" | "head" | "tail"))
        && argv.iter().skip(1).any(|w| w.ends_with(".pm"))
}

/// Which attribute of the port a name's counter belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Attr {
    /// PortCounters, at its field widths.
    Basic,
    /// PortCountersExtended (and the `_extended` error counters): 64 bits.
    Extended,
    /// PortRcvErrorDetails: 16 bits.
    RcvErrorDetails,
    /// PortXmitDiscardDetails: 16 bits.
    XmitDiscardDetails,
}

impl Attr {
    fn attribute(self) -> PerfAttribute {
        match self {
            Self::Basic => PerfAttribute::PortCounters,
            Self::Extended => PerfAttribute::PortCountersExtended,
            Self::RcvErrorDetails => PerfAttribute::PortRcvErrorDetails,
            Self::XmitDiscardDetails => PerfAttribute::PortXmitDiscardDetails,
        }
    }
}

/// ibdiagnet's counter names, the perfquery counter each is and its
/// attribute. Names seen in published dumps and in the tools that read
/// them (`port_xmit_discard`, `excessive_buffer_errors`, `link_down_counter`
/// are spellings of those tools). Widths are the attribute's, from
/// [`perf_fields`](crate::model::perf_fields), as perfquery's are.
const COUNTERS: &[(&str, IbCounter, Attr)] = {
    use Attr::{Basic, Extended, RcvErrorDetails, XmitDiscardDetails};
    use IbCounter as I;
    &[
        ("symbol_error_counter", I::SymbolErrorCounter, Basic),
        (
            "link_error_recovery_counter",
            I::LinkErrorRecoveryCounter,
            Basic,
        ),
        ("link_downed_counter", I::LinkDownedCounter, Basic),
        ("link_down_counter", I::LinkDownedCounter, Basic),
        ("port_rcv_errors", I::PortRcvErrors, Basic),
        (
            "port_rcv_remote_physical_errors",
            I::PortRcvRemotePhysicalErrors,
            Basic,
        ),
        (
            "port_rcv_switch_relay_errors",
            I::PortRcvSwitchRelayErrors,
            Basic,
        ),
        ("port_xmit_discard", I::PortXmitDiscards, Basic),
        ("port_xmit_discards", I::PortXmitDiscards, Basic),
        (
            "port_xmit_constraint_errors",
            I::PortXmitConstraintErrors,
            Basic,
        ),
        (
            "port_rcv_constraint_errors",
            I::PortRcvConstraintErrors,
            Basic,
        ),
        (
            "local_link_integrity_errors",
            I::LocalLinkIntegrityErrors,
            Basic,
        ),
        (
            "excessive_buffer_overrun_errors",
            I::ExcessiveBufferOverrunErrors,
            Basic,
        ),
        (
            "excessive_buffer_errors",
            I::ExcessiveBufferOverrunErrors,
            Basic,
        ),
        ("vl15_dropped", I::VL15Dropped, Basic),
        ("port_xmit_wait", I::PortXmitWait, Basic),
        ("port_xmit_data", I::PortXmitData, Basic),
        ("port_rcv_data", I::PortRcvData, Basic),
        ("port_xmit_pkts", I::PortXmitPkts, Basic),
        ("port_rcv_pkts", I::PortRcvPkts, Basic),
        ("port_xmit_data_extended", I::PortXmitData, Extended),
        ("port_rcv_data_extended", I::PortRcvData, Extended),
        ("port_xmit_pkts_extended", I::PortXmitPkts, Extended),
        ("port_rcv_pkts_extended", I::PortRcvPkts, Extended),
        ("port_unicast_xmit_pkts", I::PortUnicastXmitPkts, Extended),
        ("port_unicast_rcv_pkts", I::PortUnicastRcvPkts, Extended),
        (
            "port_multicast_xmit_pkts",
            I::PortMulticastXmitPkts,
            Extended,
        ),
        ("port_multicast_rcv_pkts", I::PortMulticastRcvPkts, Extended),
        (
            "symbol_error_counter_extended",
            I::SymbolErrorCounter,
            Extended,
        ),
        (
            "link_error_recovery_counter_extended",
            I::LinkErrorRecoveryCounter,
            Extended,
        ),
        (
            "link_downed_counter_extended",
            I::LinkDownedCounter,
            Extended,
        ),
        ("port_rcv_errors_extended", I::PortRcvErrors, Extended),
        (
            "port_rcv_remote_physical_errors_extended",
            I::PortRcvRemotePhysicalErrors,
            Extended,
        ),
        (
            "port_rcv_switch_relay_errors_extended",
            I::PortRcvSwitchRelayErrors,
            Extended,
        ),
        ("port_xmit_discards_extended", I::PortXmitDiscards, Extended),
        (
            "port_xmit_constraint_errors_extended",
            I::PortXmitConstraintErrors,
            Extended,
        ),
        (
            "port_rcv_constraint_errors_extended",
            I::PortRcvConstraintErrors,
            Extended,
        ),
        (
            "local_link_integrity_errors_extended",
            I::LocalLinkIntegrityErrors,
            Extended,
        ),
        (
            "excessive_buffer_overrun_errors_extended",
            I::ExcessiveBufferOverrunErrors,
            Extended,
        ),
        ("vl15_dropped_extended", I::VL15Dropped, Extended),
        ("port_xmit_wait_extended", I::PortXmitWait, Extended),
        ("qp1_dropped_extended", I::QP1Dropped, Extended),
        (
            "port_local_physical_errors",
            I::PortLocalPhysicalErrors,
            RcvErrorDetails,
        ),
        (
            "port_malformed_packet_errors",
            I::PortMalformedPktErrors,
            RcvErrorDetails,
        ),
        (
            "port_buffer_overrun_errors",
            I::PortBufferOverrunErrors,
            RcvErrorDetails,
        ),
        (
            "port_dlid_mapping_errors",
            I::PortDLIDMappingErrors,
            RcvErrorDetails,
        ),
        (
            "port_vl_mapping_errors",
            I::PortVLMappingErrors,
            RcvErrorDetails,
        ),
        ("port_looping_errors", I::PortLoopingErrors, RcvErrorDetails),
        (
            "port_inactive_discards",
            I::PortInactiveDiscards,
            XmitDiscardDetails,
        ),
        (
            "port_neighbor_mtu_discards",
            I::PortNeighborMTUDiscards,
            XmitDiscardDetails,
        ),
        (
            "port_sw_lifetime_limit_discards",
            I::PortSwLifetimeLimitDiscards,
            XmitDiscardDetails,
        ),
        (
            "port_sw_hoq_lifetime_limit_discards",
            I::PortSwHOQLifetimeLimitDiscards,
            XmitDiscardDetails,
        ),
    ]
};

/// Whether `name` is one of ibdiagnet's counter names, and the perfquery
/// counter it is: for the counter lines of ibdiagnet's log.
pub(crate) fn known_counter(name: &str) -> Option<IbCounter> {
    COUNTERS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, c, _)| *c)
}

/// The counter `name` is, its attribute and its field's width in bits.
fn counter(name: &str) -> Option<(IbCounter, Attr, u8)> {
    let (_, c, a) = COUNTERS.iter().find(|(n, _, _)| *n == name)?;
    match crate::model::perf_fields::kind_in(a.attribute().layout(), c.name())? {
        crate::model::perf_fields::FieldKind::Counter(bits) => Some((*c, *a, bits)),
        _ => None,
    }
}

/// A rule between blocks: dashes only, at least five.
fn is_rule(t: &str) -> bool {
    crate::parse::text::is_rule_of(t, 5, b'-')
}

/// What a `Port=` header says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Header<'t> {
    port: Option<u32>,
    lid: Option<u32>,
    guid: Option<&'t str>,
    device: Option<&'t str>,
    name: Option<&'t str>,
}

/// `Port=1 Lid=0x0012 GUID=0x… Device=4123 Port Name=…`: `None` unless the
/// line starts with `Port=<digits>` and names a LID or a GUID.
fn header(t: &str) -> Option<Header<'_>> {
    let rest = t.strip_prefix("Port=")?;
    let (head, name) = match split_once_str(rest, " Port Name=") {
        Some((h, n)) => (h, Some(trim(n))),
        None => (rest, None),
    };
    let mut words = head.split_ascii_whitespace();
    let port = decimal_u32(words.next()?).ok()?;
    let mut h = Header {
        port: Some(port),
        name,
        ..Header::default()
    };
    for word in words {
        match word.split_once('=') {
            Some(("Lid", v)) => h.lid = hex_u32(v).ok(),
            Some(("GUID", v)) => h.guid = Some(v),
            Some(("Device", v)) => h.device = Some(v),
            _ => {}
        }
    }
    (h.lid.is_some() || h.guid.is_some()).then_some(h)
}

/// A counter's value: `0x`-prefixed hex or decimal, up to 64 bits.
fn value_u64(t: &str) -> Result<u64, NumberError> {
    let t = trim(t);
    let Some(digits) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) else {
        return decimal_u64(t);
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(NumberError::NotANumber);
    }
    let significant = digits.trim_start_matches('0');
    if significant.len() > 16 {
        return Err(NumberError::TooLarge);
    }
    if significant.is_empty() {
        return Ok(0);
    }
    u64::from_str_radix(significant, 16).map_err(|_| NumberError::TooLarge)
}

/// `name=value` with a name of lower-case letters, digits and `_`.
fn name_value(t: &str) -> Option<(&str, &str)> {
    let (name, value) = t.split_once('=')?;
    let ok = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    ok.then_some((name, value))
}

/// A rule followed by a port header, or a port header: keyed by the port's
/// GUID and number, so that a second dump of the same fabric (a second
/// snapshot) starts a section of its own. The rule and the header carry
/// different keys: the header under its rule continues the rule's block.
fn detect(lines: &[Line<'_>]) -> Option<Block> {
    let mut rest = lines.iter().filter(|l| !l.is_blank());
    let first = trim(rest.next()?.text());
    if is_rule(first) {
        let h = header(trim(rest.next()?.text()))?;
        return Some(Block::keyed(format!(
            "pm-rule|{}|{:?}",
            h.guid.unwrap_or_default(),
            h.port
        )));
    }
    let h = header(first)?;
    Some(Block::keyed(format!(
        "pm|{}|{:?}",
        h.guid.unwrap_or_default(),
        h.port
    )))
}

/// What a port's header names: its number, LID, the header's fields and
/// the block's port id.
#[derive(Debug)]
struct Named {
    port: Option<u32>,
    lid: Option<u32>,
    fields: BTreeMap<Cow<'static, str>, String>,
    id: String,
}

/// One port as read.
#[derive(Debug)]
struct PortRead {
    header: Option<Named>,
    /// (counter, attribute, width, value) in reading order.
    counters: Vec<(IbCounter, Attr, u8, u64)>,
    /// Names not known, as printed.
    others: BTreeMap<Cow<'static, str>, String>,
    /// Every name read, once, for the cut test (a set: comparing two
    /// blocks stays linear however many lines they hold).
    names: BTreeSet<String>,
    span: LineSpan,
    /// Closed by a rule after its first counter line.
    closed: bool,
    partial: Option<Partial>,
}

impl PortRead {
    fn new(span: LineSpan) -> Self {
        Self {
            header: None,
            counters: Vec::new(),
            others: BTreeMap::new(),
            names: BTreeSet::new(),
            span,
            closed: false,
            partial: None,
        }
    }
}

/// Reads an `ibdiagnet2.pm` dump.
#[must_use]
pub fn parse(lines: &[Line<'_>]) -> Parsed<Perfquery> {
    let mut ports: Vec<PortRead> = Vec::new();
    let mut unread = Unread::default();
    // The last non-blank line: a name without a value there was cut.
    let last_line = crate::parse::text::last_text_line(lines);
    let mut last_broken: Option<(usize, String)> = None;
    // Rules before the first block: the block's lines when one follows.
    let mut leading_rules: Option<LineSpan> = None;
    for line in lines.iter().filter(|l| !l.is_blank()) {
        let t = trim(line.text());
        if is_rule(t) {
            match ports.last_mut() {
                Some(p) => {
                    if !p.names.is_empty() {
                        p.closed = true;
                    }
                    p.span = p.span.join(line.span());
                }
                None => {
                    leading_rules =
                        Some(leading_rules.map_or(line.span(), |r| r.join(line.span())));
                }
            }
            continue;
        }
        if let Some(h) = header(t) {
            let mut fields = BTreeMap::new();
            if let Some(g) = h.guid {
                fields.insert(Cow::Borrowed("GUID"), g.to_owned());
            }
            if let Some(d) = h.device {
                fields.insert(Cow::Borrowed("Device"), d.to_owned());
            }
            if let Some(n) = h.name {
                fields.insert(Cow::Borrowed("Port Name"), n.to_owned());
            }
            let id = h
                .name
                .filter(|n| !n.is_empty())
                .or(h.guid)
                .unwrap_or("unnamed port")
                .to_owned();
            let span = match leading_rules.take() {
                Some(r) if ports.is_empty() => r.join(line.span()),
                _ => line.span(),
            };
            let mut p = PortRead::new(span);
            p.header = Some(Named {
                port: h.port,
                lid: h.lid,
                fields,
                id,
            });
            ports.push(p);
            continue;
        }
        // A cut last line belongs to the open block; after a closing rule
        // it is a line of no block.
        let open_block = ports.last().is_some_and(|p| !p.closed);
        let Some((name, value)) = name_value(t) else {
            if Some(line.number) == last_line && open_block && name_prefix(t) {
                last_broken = Some((line.number, t.to_owned()));
                continue;
            }
            unread.line(line, "not an ibdiagnet2.pm port header or counter line");
            continue;
        };
        let value = trim(value);
        if value.is_empty() && Some(line.number) == last_line && open_block {
            last_broken = Some((line.number, name.to_owned()));
            continue;
        }
        let parsed = match counter(name) {
            Some(c) => match value_u64(value) {
                Ok(v) => Some((c, v)),
                Err(err) => {
                    unread.number(line, name, err);
                    continue;
                }
            },
            None => None,
        };
        // Counters before any header (a paste that starts inside a block),
        // or after a closed block without a header of their own.
        if ports.last().is_none_or(|p| p.closed) {
            let span = match leading_rules.take() {
                Some(r) if ports.is_empty() => r.join(line.span()),
                _ => line.span(),
            };
            ports.push(PortRead::new(span));
        }
        let Some(p) = ports.last_mut() else {
            continue;
        };
        p.span = p.span.join(line.span());
        if !p.names.contains(name) {
            p.names.insert(name.to_owned());
        }
        match parsed {
            Some(((id, attr, bits), v)) => {
                p.counters.retain(|(c, a, _, _)| !(*c == id && *a == attr));
                p.counters.push((id, attr, bits, v));
            }
            None => {
                p.others
                    .insert(Cow::Owned(name.to_owned()), value.to_owned());
            }
        }
    }
    if let Some(r) = leading_rules {
        unread.warn(
            WarningKind::Unreadable,
            r,
            "a rule of ibdiagnet2.pm with no port block after it",
        );
    }
    mark_cut(&mut ports, last_broken);
    Parsed {
        value: Perfquery {
            blocks: ports.into_iter().flat_map(blocks_of).collect(),
        },
        warnings: unread.finish(),
    }
}

/// Whether `t`, a last line without `=`, may be the start of a counter
/// line cut by the end of the paste (`port_rcv_err`).
fn name_prefix(t: &str) -> bool {
    !t.is_empty()
        && t.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// Marks the last port partial when the dump was cut inside it (see the
/// module doc).
fn mark_cut(ports: &mut [PortRead], broken: Option<(usize, String)>) {
    let [.., before, last] = ports else {
        if let [only] = ports {
            cut_alone(only, broken);
        }
        return;
    };
    if last.closed {
        return;
    }
    // A block read without its header may itself be cut at the top: no
    // measure of a whole one.
    if before.header.is_none() {
        cut_alone(last, broken);
        return;
    }
    let missing: Vec<String> = before
        .names
        .iter()
        .filter(|n| !last.names.contains(*n))
        .cloned()
        .collect();
    let line = last.span.last_line;
    if let Some((at, name)) = broken {
        last.span = last.span.join(LineSpan::line(at));
        let mut names = missing;
        names.retain(|m| *m != name);
        names.insert(0, name);
        last.partial = Some(Partial::new(PartialReason::CutLine, names, at));
    } else if last.names.is_empty() {
        last.partial = Some(Partial::new(
            PartialReason::MissingFields,
            vec!["every counter".to_owned()],
            line,
        ));
    } else if !missing.is_empty() {
        last.partial = Some(Partial::new(PartialReason::MissingFields, missing, line));
    }
}

/// The only port of a dump: cut if its last line lost its value, or if it
/// has a header and no counter.
fn cut_alone(p: &mut PortRead, broken: Option<(usize, String)>) {
    if p.closed {
        return;
    }
    if let Some((at, name)) = broken {
        p.span = p.span.join(LineSpan::line(at));
        p.partial = Some(Partial::new(PartialReason::CutLine, vec![name], at));
    } else if p.names.is_empty() {
        p.partial = Some(Partial::new(
            PartialReason::MissingFields,
            vec!["every counter".to_owned()],
            p.span.last_line,
        ));
    }
}

/// One perfquery block per attribute the port's counters belong to.
fn blocks_of(p: PortRead) -> Vec<PerfBlock> {
    let Named {
        port,
        lid,
        mut fields,
        id,
    } = p.header.unwrap_or_else(|| Named {
        port: None,
        lid: None,
        fields: BTreeMap::new(),
        id: "unnamed port".to_owned(),
    });
    // A port read without its header: unnamed first, so that it never
    // pairs with another snapshot's port.
    let partial = if lid.is_none() && port.is_none() {
        Some(Partial::new(
            PartialReason::NoHeader,
            vec!["port header".to_owned()],
            p.span.first_line,
        ))
    } else {
        p.partial
    };
    let mut by_attr: BTreeMap<Attr, PerfBlock> = BTreeMap::new();
    // Every block carries the header's fields: each names its port (the
    // rules gather a port's blocks by its GUID).
    let header_fields = fields.clone();
    let new_block = |attr: Attr| {
        let mut b = PerfBlock::new(attr.attribute(), id.clone(), p.span);
        b.port = port;
        b.lid = lid;
        b.partial.clone_from(&partial);
        b.fields.clone_from(&header_fields);
        b
    };
    let mut basic = new_block(Attr::Basic);
    fields.extend(p.others);
    basic.fields = fields;
    by_attr.insert(Attr::Basic, basic);
    for (c, attr, bits, v) in p.counters {
        by_attr
            .entry(attr)
            .or_insert_with(|| new_block(attr))
            .counters
            .insert(c, Counter::new(v, bits));
    }
    by_attr.into_values().collect()
}

/// `ibdiagnet2.pm counters of 3 port(s): 9 counters`.
#[must_use]
pub fn summary(perf: &Perfquery) -> String {
    let mut ports = 0;
    let mut last: Option<(&str, Option<u32>, Option<u32>)> = None;
    let mut counters = 0;
    for b in &perf.blocks {
        counters += b.counters.len();
        let key = (b.port_id.as_str(), b.lid, b.port);
        if last.replace(key) != Some(key) {
            ports += 1;
        }
    }
    format!("ibdiagnet2.pm counters of {ports} port(s): {counters} counters")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::lines_of;

    const RULE: &str = "-------------------------------------------------------";

    fn read(text: &str) -> Parsed<Perfquery> {
        parse(&lines_of(text))
    }

    fn dump(blocks: &[(&str, &[&str])]) -> String {
        let mut out = String::new();
        for (header, counters) in blocks {
            out.push_str(&format!("{RULE}\n{header}\n{RULE}\n"));
            for c in *counters {
                out.push_str(c);
                out.push('\n');
            }
        }
        out
    }

    const HCA: &str =
        "Port=1 Lid=0x0012 GUID=0x0002c903000a0b0c Device=4123 Port Name=node007/U1/HCA-1/P1";
    const SWITCH: &str =
        "Port=17 Lid=0x0003 GUID=0x0002c903000d0e0f Device=54000 Port Name=SW-L1-03/P17";

    #[test]
    fn blocks_name_the_port_and_read_hex_and_decimal() {
        let text = dump(&[
            (
                HCA,
                &[
                    "symbol_error_counter=0x0003",
                    "link_downed_counter=2",
                    "port_xmit_wait=0xffffffff",
                    "port_xmit_data_extended=0x00000000000f4240",
                    "max_retransmission_rate=0x0",
                ],
            ),
            (SWITCH, &["port_rcv_errors_extended=0x0000000000000005"]),
        ]) + RULE
            + "\n";
        let p = read(&text);
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let b = &p.value.blocks;
        assert_eq!(b.len(), 4, "{b:?}");
        let (basic, ext) = (&b[0], &b[1]);
        assert_eq!(basic.attribute, PerfAttribute::PortCounters);
        assert_eq!(basic.port_id, "node007/U1/HCA-1/P1");
        assert_eq!((basic.lid, basic.port), (Some(0x12), Some(1)));
        assert_eq!(
            basic.fields.get("GUID").map(String::as_str),
            Some("0x0002c903000a0b0c")
        );
        assert_eq!(basic.fields.get("Device").map(String::as_str), Some("4123"));
        // Read, not judged: kept as printed.
        assert_eq!(
            basic
                .fields
                .get("max_retransmission_rate")
                .map(String::as_str),
            Some("0x0")
        );
        assert_eq!(
            basic.counter(IbCounter::SymbolErrorCounter).copied(),
            Some(Counter::new(3, 16))
        );
        assert_eq!(
            basic.counter(IbCounter::LinkDownedCounter).copied(),
            Some(Counter::new(2, 8))
        );
        assert!(basic.counter(IbCounter::PortXmitWait).unwrap().saturated);
        assert_eq!(ext.attribute, PerfAttribute::PortCountersExtended);
        assert_eq!(ext.xmit_data_octets(), Some(1_000_000 * 4));
        // Each block names its port; names no rule knows stay in one.
        assert_eq!(ext.fields.get("GUID"), basic.fields.get("GUID"));
        assert!(!ext.fields.contains_key("max_retransmission_rate"));
        assert_eq!(b[3].port_id, "SW-L1-03/P17");
        assert_eq!(
            b[3].counter(IbCounter::PortRcvErrors).copied(),
            Some(Counter::new(5, 64))
        );
        assert!(b.iter().all(|b| b.partial.is_none()));
        assert_eq!(
            summary(&p.value),
            "ibdiagnet2.pm counters of 2 port(s): 5 counters"
        );
    }

    #[test]
    fn detail_counters_go_to_their_attributes() {
        let p = read(&dump(&[(
            HCA,
            &[
                "port_local_physical_errors=0x0001",
                "port_inactive_discards=0x0002",
            ],
        )]));
        let attrs: Vec<_> = p.value.blocks.iter().map(|b| b.attribute.clone()).collect();
        assert_eq!(
            attrs,
            [
                PerfAttribute::PortCounters,
                PerfAttribute::PortRcvErrorDetails,
                PerfAttribute::PortXmitDiscardDetails
            ]
        );
    }

    #[test]
    fn a_dump_cut_inside_its_last_block_is_partial() {
        let three = [
            "symbol_error_counter=0x0",
            "port_rcv_errors=0x0",
            "vl15_dropped=0x0",
        ];
        // Fewer counters than the block before: the missing ones named.
        let text = dump(&[(HCA, &three), (SWITCH, &three[..1])]);
        let p = read(&text);
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let last = p.value.blocks.last().unwrap();
        let partial = last.partial.as_ref().unwrap();
        assert_eq!(partial.reason, PartialReason::MissingFields);
        assert_eq!(partial.missing, ["port_rcv_errors", "vl15_dropped"]);
        assert!(p.value.blocks[0].partial.is_none());
        // A name without its value on the last line.
        let p = read(&(dump(&[(HCA, &three), (SWITCH, &three[..1])]) + "port_rcv_err\n"));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let partial = p.value.blocks.last().unwrap().partial.clone().unwrap();
        assert_eq!(partial.reason, PartialReason::CutLine);
        assert_eq!(partial.missing[0], "port_rcv_err");
        let p = read(&(dump(&[(HCA, &three[..1])]) + "port_rcv_errors=\n"));
        assert_eq!(
            p.value.blocks[0].partial.as_ref().map(|x| x.reason),
            Some(PartialReason::CutLine)
        );
        // A header and no counter.
        let p = read(&format!("{RULE}\n{HCA}\n{RULE}\n"));
        assert_eq!(
            p.value.blocks[0].partial.as_ref().map(|x| x.reason),
            Some(PartialReason::MissingFields)
        );
        // A closing rule: whole, whatever it holds.
        let p = read(&(dump(&[(HCA, &three), (SWITCH, &three[..1])]) + RULE));
        assert!(p.value.blocks.iter().all(|b| b.partial.is_none()));
    }

    #[test]
    fn counters_without_a_header_are_read_and_unnamed() {
        let p = read(&format!(
            "symbol_error_counter=0x0004\n{RULE}\n{HCA}\n{RULE}\nvl15_dropped=0\n"
        ));
        let b = &p.value.blocks;
        assert_eq!(
            b[0].partial.as_ref().map(|x| x.reason),
            Some(PartialReason::NoHeader)
        );
        assert_eq!(
            b[0].counter(IbCounter::SymbolErrorCounter).map(|c| c.value),
            Some(4)
        );
        assert!(b[1].partial.is_none());
    }

    #[test]
    fn unread_lines_become_warnings() {
        let p = read(&dump(&[(
            HCA,
            &[
                "symbol_error_counter=lots",
                "Some prose",
                "port_rcv_errors=0x1ffffffffffffffff",
                "link_downed_counter=1",
            ],
        )]));
        let lines: Vec<usize> = p.warnings.iter().map(|w| w.span.first_line).collect();
        assert_eq!(lines, [4, 5, 6]);
        assert_eq!(
            p.value.blocks[0]
                .counter(IbCounter::LinkDownedCounter)
                .map(|c| c.value),
            Some(1)
        );
    }

    /// Every name of the table is a counter of its attribute's layout, so
    /// none is kept unjudged for want of a width.
    #[test]
    fn every_counter_name_has_its_attributes_width() {
        for (name, c, a) in COUNTERS {
            assert!(
                counter(name).is_some(),
                "{name}: {c:?} not in {a:?}'s layout"
            );
        }
    }

    #[test]
    fn detection_wants_a_port_header() {
        let d = |text: &str| detect(&lines_of(text)).map(|b| b.key);
        assert!(d(&format!("{RULE}\n{HCA}")).is_some());
        assert!(d(HCA).is_some());
        // The rule and its header carry different keys: the header
        // continues the rule's block.
        assert_ne!(d(&format!("{RULE}\n{HCA}")), d(HCA));
        for no in [
            RULE,
            "-----\nPort 1: Active",
            "Port=1",
            "Port=x Lid=0x1",
            "Port: 1",
            "symbol_error_counter=0x0",
            "PortXmitData:....................1",
        ] {
            assert_eq!(d(no), None, "{no}");
        }
    }

    /// No other format claims a line of a dump, and this one claims no
    /// line of any other fixture.
    #[test]
    fn detection_is_exclusive() {
        let three = ["symbol_error_counter=0x0", "port_rcv_errors=0x0"];
        let text = dump(&[(HCA, &three), (SWITCH, &three)]) + RULE;
        let lines = lines_of(&text);
        for i in 0..lines.len() {
            for f in crate::parse::FORMATS {
                if f.kind != crate::parse::Kind::IbdiagnetPm {
                    assert!(
                        (f.detect)(&lines[i..]).is_none(),
                        "{} at line {}",
                        f.name,
                        i + 1
                    );
                }
            }
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut dirs = vec![root];
        let mut files = 0;
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    dirs.push(path);
                    continue;
                }
                let Ok(text) = std::fs::read_to_string(&path) else {
                    continue;
                };
                if text.contains(" Port Name=") {
                    continue;
                }
                files += 1;
                let lines = lines_of(&text);
                for i in 0..lines.len() {
                    assert!(
                        detect(&lines[i..]).is_none(),
                        "{}:{}",
                        path.display(),
                        i + 1
                    );
                }
            }
        }
        assert!(files > 100, "only {files} fixtures");
    }

    #[test]
    fn command_wants_a_pm_file() {
        assert!(command(&["cat", "/var/tmp/ibdiagnet2/ibdiagnet2.pm"]));
        assert!(!command(&["cat", "ibdiagnet2.log"]));
        assert!(!command(&["perl", "x.pm"]));
    }
}
