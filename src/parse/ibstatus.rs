//! `ibstatus`: the infiniband-diags shell script that prints sysfs port files.
//!
//! Forms handled (infiniband-diags `scripts/ibstatus`): `ibstatus`,
//! `ibstatus DEV`, `ibstatus DEV:PORT` all print the same block per port:
//! an `Infiniband device 'mlx5_0' port 1 status:` header, then `default gid`,
//! `base lid` and `sm lid` (hex), `state` (`4: ACTIVE`), `phys state`
//! (`5: LinkUp`), `rate` (`200 Gb/sec (4X HDR)`) and `link_layer`, then a
//! blank line. A missing sysfs file prints `unknown`, which becomes `None`
//! without a warning; a field printed without any value (blanked before
//! sharing, or cut by the end of the paste) is an unread line
//! (`parse::text::blank_value`). The script writes tabs then one space;
//! pastes often turn the tabs into spaces, so the parser keys on the
//! labels, not the layout.

use crate::diag::WarningKind;
use crate::model::ib::{LinkLayer, PhysState, PortState};
use crate::model::ibstatus::{Ibstatus, IbstatusPort, SysfsRate};
use crate::model::partial::{Partial, PartialReason};
use crate::parse::text::{
    begins_only, blank_identifier, blank_value, cut_value, decimal_f64, hex_u32, label_value,
    read_each_line, settle_blank_value, single_quoted, without_note, Unread,
};
use crate::parse::{Block, Line, Parsed, Spec};

pub(crate) const FORMAT: Spec<Ibstatus> = Spec {
    command: |argv| argv.first() == Some(&"ibstatus"),
    starts: may_start,
    detect,
    parse,
    summary,
    attach_command: None,
    labels: &["state", "rate", "link_layer"],
};

/// What a missing sysfs file prints.
const UNKNOWN: &str = "unknown";

/// Reads `ibstatus` output.
#[must_use]
pub fn parse(lines: &[Line<'_>]) -> Parsed<Ibstatus> {
    let mut open = Open::default();
    let mut parsed = read_each_line(lines, |line, out, unread| {
        read_line(line, out, unread, &mut open);
    });
    for port in &mut parsed.value.headerless_ports {
        settle_blank_value(&mut port.partial, lines, &mut parsed.warnings);
    }
    for port in &mut parsed.value.ports {
        settle_blank_value(&mut port.partial, lines, &mut parsed.warnings);
    }
    mark_cut_ports(&mut parsed.value, lines);
    parsed
}

/// The fields the script prints for a port, in order. `link_layer` came
/// later than the rest (with RoCE and its sysfs file), so a block may end
/// at `rate` whole.
const FIELDS: [&str; 7] = [
    "default gid",
    "base lid",
    "sm lid",
    "state",
    "phys state",
    "rate",
    "link_layer",
];

/// Whether `t`, an unindented line met after ibstatus's indented fields,
/// may still be the script's: a port header, its `Fatal error:`, or a
/// field that lost its indentation. Anything else is not its output; the
/// input layer sets such a line aside when it reads as the author's prose.
pub(crate) fn may_be_its_unindented_line(t: &str) -> bool {
    t.starts_with("Infiniband device ")
        || t.starts_with("Fatal error:")
        || label_value(t).is_some_and(|(label, _)| FIELDS.contains(&label))
}

/// Where the fields every version prints end ([`FIELDS`]).
const ALWAYS_PRINTED: usize = 6;

/// Marks each port block that stops before `rate` as partial, with the
/// fields it lacks after the last one printed (a field printed `unknown`
/// or without a value counts as printed): the paste was cut inside it. A
/// block whose last line was cut mid-value stays partial for that
/// ([`settle_blank_value`]). One pass over the lines: the blocks are in
/// line order.
fn mark_cut_ports(out: &mut Ibstatus, lines: &[Line<'_>]) {
    let mut lines = lines.iter().peekable();
    for port in &mut out.ports {
        let mut last: Option<usize> = None;
        while let Some(line) = lines.next_if(|l| l.number <= port.span.last_line) {
            if line.number < port.span.first_line {
                continue;
            }
            let printed = label_value(line.text().trim())
                .and_then(|(label, _)| FIELDS.iter().position(|f| *f == label));
            last = last.max(printed);
        }
        let from = last.map_or(0, |i| i + 1);
        let missing: Vec<String> = FIELDS
            .get(from..ALWAYS_PRINTED)
            .unwrap_or_default()
            .iter()
            .map(|f| (*f).to_owned())
            .collect();
        if !missing.is_empty() && port.partial.is_none() {
            port.partial = Some(Partial::new(
                PartialReason::MissingFields,
                missing,
                port.span.last_line,
            ));
        }
    }
}

/// What a header-less port lacks: whose it is. Its fields the paste
/// does not show are said by IN001 for the whole run, not port by port.
pub const HEADERLESS_MISSING: &str =
    "the device and port number (`Infiniband device '…' port N status:` line)";

/// The header-less port a field with no port header before it belongs
/// to (a block pasted from its fields down, `ibstatus | grep state`).
/// The script prints a port's fields in a fixed order ([`FIELDS`]), so a
/// field at or before the last one read begins the next port. `run` is
/// where the open port stands in that order.
fn headerless_port<'a>(
    line: &Line<'_>,
    order: usize,
    out: &'a mut Ibstatus,
    run: &mut Option<usize>,
) -> Option<&'a mut IbstatusPort> {
    if run.is_none_or(|last| order <= last) || out.headerless_ports.is_empty() {
        let mut port = IbstatusPort::new(String::new(), 0, line.span());
        port.partial = Some(Partial::new(
            PartialReason::NoHeader,
            vec![HEADERLESS_MISSING.to_owned()],
            line.number,
        ));
        out.headerless_ports.push(port);
    }
    *run = Some(order);
    out.headerless_ports.last_mut()
}

/// Where the fields read so far stand in the script's field order.
#[derive(Debug, Default)]
struct Open {
    /// The last field of the open header-less port ([`headerless_port`]).
    run: Option<usize>,
    /// The last field of the open port under a header.
    last: Option<usize>,
    /// Fields after a port block that are not its (a field it shows
    /// already, or one before it: `ibstatus | grep state` appended below a
    /// whole `ibstatus`) opened header-less ports; the fields after them
    /// are theirs, until the next header. Before, they overwrote the
    /// block's own: an Active port followed by `state: 1: DOWN` was Down.
    stray: bool,
}

fn read_line(line: &Line<'_>, out: &mut Ibstatus, unread: &mut Unread, open: &mut Open) {
    // An author's ` # note` after a port header (`… port 1 status: # 已连接`)
    // or a value (`rate: 40 Gb/sec (4X QDR) # 正确速率`): the script prints
    // sysfs files, none with a ` #`. Before, such a header was no header
    // and its port's lines were all unread.
    let t = without_note(line.text().trim());
    if let Some((device, port)) = header(t) {
        out.ports.push(IbstatusPort::new(device, port, line.span()));
        *open = Open::default();
        return;
    }
    if let Some(reason) = t.strip_prefix("Fatal error:") {
        // The script's `fatal()`: no /sys/class/infiniband, or an unknown device.
        let reason = reason.trim().to_owned();
        unread.warn(
            WarningKind::Truncated,
            line.span(),
            format!("ibstatus stopped: {reason}"),
        );
        out.fatal_error = Some(reason);
        return;
    }
    let field = label_value(t);
    let order = field.and_then(|(label, _)| FIELDS.iter().position(|f| *f == label));
    let stray = !out.ports.is_empty()
        && order.is_some_and(|o| open.stray || open.last.is_some_and(|last| o <= last));
    if stray && !open.stray {
        // The first of them begins a port of its own.
        open.stray = true;
        open.run = None;
    }
    let port = match (out.ports.is_empty() || stray, order) {
        (false, _) => {
            open.last = order.or(open.last);
            out.ports.last_mut()
        }
        (true, Some(order)) => headerless_port(line, order, out, &mut open.run),
        (true, None) => None,
    };
    let Some(port) = port else {
        unread.line(
            line,
            "not ibstatus output (expected `Infiniband device '…' port N status:`)",
        );
        return;
    };
    let Some((label, value)) = field else {
        unread.line(line, "not an ibstatus `label: value` line");
        return;
    };
    port.span = port.span.join(line.span());
    if value.is_empty() && is_field(label) {
        // The script prints `unknown` for a file it cannot read: nothing
        // at all was blanked, or cut by the end of the paste. The GID is
        // an identifier: blanked on purpose, unknown but not unread.
        if label == "default gid" {
            blank_identifier(line, label, &mut port.partial);
        } else {
            blank_value(line, label, unread, &mut port.partial);
        }
        return;
    }
    if is_cut_value(label, value) {
        cut_value(line, label, value, unread, &mut port.partial);
        return;
    }
    if value == UNKNOWN {
        if !is_field(label) {
            unread.line(line, "unknown ibstatus field");
        }
        return;
    }
    match label {
        "default gid" => port.default_gid = Some(value.to_owned()),
        "base lid" | "sm lid" => match hex_u32(value) {
            Ok(v) if label == "base lid" => port.base_lid = Some(v),
            Ok(v) => port.sm_lid = Some(v),
            Err(e) => unread.number(line, label, e),
        },
        "state" => port.state = Some(PortState::parse(value)),
        "phys state" => port.physical_state = Some(PhysState::parse(value)),
        "rate" => match parse_rate(value) {
            Some(rate) => port.rate = Some(rate),
            None => unread.line(line, "`rate` is not `<n> Gb/sec (<w>X <gen>)`"),
        },
        "link_layer" => port.link_layer = Some(LinkLayer::parse(value)),
        _ => unread.line(line, "unknown ibstatus field"),
    }
}

/// Whether `value`, which the script printed for `label`, is only the
/// beginning of a value it prints (`state: 4: ACTI`, `phys state: 5: Lin`,
/// `rate: 100 Gb/sec (4X ED`, `rate: 10`): a value cut short, read as
/// none ([`cut_value`]). A state whose word is whole (`4: ACTIVE`), or
/// that is only its number (`4`), is read: the number names the state.
fn is_cut_value(label: &str, value: &str) -> bool {
    match label {
        "state" => {
            PortState::parse(value) == PortState::Unknown
                && begins_only(value, PortState::KNOWN.map(state_text))
        }
        "phys state" => {
            PhysState::parse(value) == PhysState::Unknown
                && begins_only(value, PhysState::KNOWN.map(phys_text))
        }
        "rate" => {
            parse_rate(value).is_none()
                && begins_only(
                    value,
                    crate::model::ib::ibta_rates().flat_map(|(width, lane, rate)| {
                        [
                            format!("{rate} Gb/sec ({width}X {lane})"),
                            format!("{rate} Gb/sec ({width}X)"),
                        ]
                    }),
                )
        }
        _ => false,
    }
}

fn is_field(label: &str) -> bool {
    FIELDS.contains(&label)
}

/// `Infiniband device 'mlx5_0' port 1 status:` → ("mlx5_0", 1).
fn header(t: &str) -> Option<(&str, u32)> {
    let rest = t.strip_prefix("Infiniband device ")?;
    if !rest.starts_with('\'') {
        return None;
    }
    let device = single_quoted(rest)?;
    let after = rest.get(device.len() + 2..)?.trim();
    let number = after.strip_prefix("port ")?.strip_suffix("status:")?.trim();
    Some((device, number.parse().ok()?))
}

/// `200 Gb/sec (4X HDR)`, `2.5 Gb/sec (1X SDR)`, `10 Gb/sec (4X)`, `40 Gb/sec`.
pub(crate) fn parse_rate(value: &str) -> Option<SysfsRate> {
    let (number, rest) = value.trim().split_once(' ')?;
    let rate_gbps = decimal_f64(number)?;
    let rest = rest.trim().strip_prefix("Gb/sec")?.trim();
    if rest.is_empty() {
        return Some(SysfsRate {
            rate_gbps,
            width: None,
            lanes: None,
            generation: None,
        });
    }
    let inner = rest.strip_prefix('(')?.strip_suffix(')')?.trim();
    let (width, generation) = match inner.split_once(' ') {
        Some((w, g)) => (w, Some(g.trim().to_owned())),
        None => (inner, None),
    };
    let lanes = width.strip_suffix('X')?.parse().ok()?;
    Some(SysfsRate {
        rate_gbps,
        width: Some(width.to_owned()),
        lanes: Some(lanes),
        generation,
    })
}

/// Recognises a port header (the key is `device:port`), or the script's
/// port fields pasted without one ([`detect_fields_alone`]).
fn detect(lines: &[Line<'_>]) -> Option<Block> {
    let first = without_note(lines.first()?.text().trim());
    if first.starts_with('I') {
        let (device, port) = header(first)?;
        return Some(Block::keyed(format!("{device}:{port}")));
    }
    detect_fields_alone(lines)
}

/// First bytes of a block: a port header's `I`, or a field's first letter.
fn may_start(b: u8) -> bool {
    b == b'I' || FIELDS.iter().any(|f| f.as_bytes().first() == Some(&b))
}

/// The script's port fields with no port header before them: two lines
/// in a row, each one of its labels with a value spelled as the script
/// prints it (`state: 1: DOWN`, `rate: 40 Gb/sec (4X QDR)`, `base lid:
/// 0x5`). The labels alone are not enough: `ibv_devinfo` prints
/// `state:` and `link_layer:` too, with other values. Keyed by line: inside
/// a whole ibstatus section these lines continue it.
fn detect_fields_alone(lines: &[Line<'_>]) -> Option<Block> {
    let mut texts = lines
        .iter()
        .filter(|l| !l.is_blank())
        .map(|l| without_note(l.text().trim()));
    let ok = texts.next().is_some_and(is_valued_field) && texts.next().is_some_and(is_valued_field);
    let line = lines.first().map_or(0, |l| l.number);
    ok.then(|| Block::keyed(format!("ibstatus port fields at line {line}")))
}

/// An ibstatus field line whose value is spelled as the script prints it.
fn is_valued_field(t: &str) -> bool {
    let Some((label, value)) = label_value(t) else {
        return false;
    };
    // `4: ACTIVE`, `5: LinkUp`: the sysfs number, then its name.
    let numbered = |v: &str| {
        v.split_once(": ").is_some_and(|(n, name)| {
            !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && !name.is_empty()
        })
    };
    match label {
        "default gid" => {
            value.contains(':') && value.bytes().all(|b| b == b':' || b.is_ascii_hexdigit())
        }
        "base lid" | "sm lid" => value.starts_with("0x") && hex_u32(value).is_ok(),
        "state" => numbered(value) && PortState::parse(value) != PortState::Unknown,
        "phys state" => numbered(value) && PhysState::parse(value) != PhysState::Unknown,
        "rate" => parse_rate(value).is_some(),
        "link_layer" => matches!(value, "InfiniBand" | "Ethernet" | "IB"),
        _ => false,
    }
}

/// Renders a model in ibstatus' own layout. Used by the round-trip tests.
#[must_use]
pub fn render(ibstatus: &Ibstatus) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    for p in &ibstatus.ports {
        let _ = writeln!(
            s,
            "Infiniband device '{}' port {} status:",
            p.device, p.port
        );
        let or_unknown = |v: Option<String>| v.unwrap_or_else(|| UNKNOWN.to_owned());
        let _ = writeln!(s, "\tdefault gid:\t {}", or_unknown(p.default_gid.clone()));
        let _ = writeln!(
            s,
            "\tbase lid:\t {}",
            or_unknown(p.base_lid.map(|v| format!("0x{v:x}")))
        );
        let _ = writeln!(
            s,
            "\tsm lid:\t\t {}",
            or_unknown(p.sm_lid.map(|v| format!("0x{v:x}")))
        );
        let _ = writeln!(s, "\tstate:\t\t {}", or_unknown(p.state.map(state_text)));
        let phys = p.physical_state.map(phys_text);
        let _ = writeln!(s, "\tphys state:\t {}", or_unknown(phys));
        let _ = writeln!(
            s,
            "\trate:\t\t {}",
            or_unknown(p.rate.as_ref().map(rate_text))
        );
        let layer = p.link_layer.map(|l| match l {
            LinkLayer::Infiniband => "InfiniBand".to_owned(),
            LinkLayer::Ethernet => "Ethernet".to_owned(),
            LinkLayer::Unknown => "Unknown".to_owned(),
        });
        let _ = writeln!(s, "\tlink_layer:\t {}", or_unknown(layer));
        s.push('\n');
    }
    if let Some(reason) = &ibstatus.fatal_error {
        let _ = writeln!(s, "Fatal error:  {reason}");
    }
    s
}

fn state_text(state: PortState) -> String {
    match state {
        PortState::Down => "1: DOWN",
        PortState::Initializing => "2: INIT",
        PortState::Armed => "3: ARMED",
        PortState::Active => "4: ACTIVE",
        PortState::Unknown => "0: NOP",
    }
    .to_owned()
}

fn phys_text(state: PhysState) -> String {
    match state {
        PhysState::NoStateChange => "0: No state change",
        PhysState::Sleep => "1: Sleep",
        PhysState::Polling => "2: Polling",
        PhysState::Disabled => "3: Disabled",
        PhysState::PortConfigurationTraining => "4: PortConfigurationTraining",
        PhysState::LinkUp => "5: LinkUp",
        PhysState::LinkErrorRecovery => "6: LinkErrorRecovery",
        PhysState::PhyTest => "7: Phy Test",
        PhysState::Unknown => "8: ???",
    }
    .to_owned()
}

fn rate_text(rate: &SysfsRate) -> String {
    let mut s = format!("{} Gb/sec", rate.rate_gbps);
    if let Some(width) = &rate.width {
        s.push_str(" (");
        s.push_str(width);
        if let Some(generation) = &rate.generation {
            s.push(' ');
            s.push_str(generation);
        }
        s.push(')');
    }
    s
}

/// `8 port(s): 7 ACTIVE, 1 DOWN`.
#[must_use]
pub fn summary(ibstatus: &Ibstatus) -> String {
    let (ports, more) = (&ibstatus.ports, &ibstatus.headerless_ports);
    let mut parts = Vec::new();
    if !ports.is_empty() || more.is_empty() {
        parts.push(format!("{} port(s){}", ports.len(), states_of(ports)));
    }
    if !more.is_empty() {
        parts.push(format!(
            "{} header-less port(s){}",
            more.len(),
            states_of(more)
        ));
    }
    if let Some(reason) = &ibstatus.fatal_error {
        parts.push(format!("failed: {reason}"));
    }
    parts.join("; ")
}

/// `: 7 ACTIVE, 1 DOWN` for `ports` (nothing for none).
fn states_of(ports: &[IbstatusPort]) -> String {
    let mut states: Vec<(&str, usize)> = Vec::new();
    for p in ports {
        let name = p.state.map_or("no state", state_name);
        match states.iter_mut().find(|(n, _)| *n == name) {
            Some((_, count)) => *count += 1,
            None => states.push((name, 1)),
        }
    }
    let states: Vec<String> = states.iter().map(|(n, c)| format!("{c} {n}")).collect();
    if states.is_empty() {
        String::new()
    } else {
        format!(": {}", states.join(", "))
    }
}

fn state_name(state: PortState) -> &'static str {
    match state {
        PortState::Down => "DOWN",
        PortState::Initializing => "INIT",
        PortState::Armed => "ARMED",
        PortState::Active => "ACTIVE",
        PortState::Unknown => "unknown state",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::lines_of;

    /// As the script prints it: tab(s), then one space from `echo`.
    const TWO_PORTS: &str = "Infiniband device 'mlx5_0' port 1 status:
\tdefault gid:\t fe80:0000:0000:0000:0c42:a103:00a1:b2c3
\tbase lid:\t 0x33bf
\tsm lid:\t\t 0x1
\tstate:\t\t 4: ACTIVE
\tphys state:\t 5: LinkUp
\trate:\t\t 200 Gb/sec (4X HDR)
\tlink_layer:\t InfiniBand

Infiniband device 'mlx5_1' port 1 status:
        default gid:     unknown
        base lid:        0x0
        sm lid:          0x0
        state:           1: DOWN
        phys state:      2: Polling
        rate:            10 Gb/sec (4X)
        link_layer:      IB
";

    #[test]
    fn reads_ports_with_tabs_or_spaces() {
        let parsed = parse(&lines_of(TWO_PORTS));
        assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
        let ports = &parsed.value.ports;
        assert_eq!(ports.len(), 2);
        let a = &ports[0];
        assert_eq!((a.device.as_str(), a.port), ("mlx5_0", 1));
        assert_eq!(a.base_lid, Some(13_247));
        assert_eq!(a.sm_lid, Some(1));
        assert_eq!(a.state, Some(PortState::Active));
        assert_eq!(a.physical_state, Some(PhysState::LinkUp));
        let rate = a.rate.as_ref().unwrap();
        assert_eq!(rate.rate_gbps, 200.0);
        assert_eq!(rate.lanes, Some(4));
        assert_eq!(rate.generation.as_deref(), Some("HDR"));
        assert_eq!(a.link_layer, Some(LinkLayer::Infiniband));
        assert_eq!((a.span.first_line, a.span.last_line), (1, 8));
        let b = &ports[1];
        assert_eq!(b.default_gid, None);
        assert_eq!(b.state, Some(PortState::Down));
        assert_eq!(b.physical_state, Some(PhysState::Polling));
        assert_eq!(b.rate.as_ref().unwrap().generation, None);
        assert_eq!(b.link_layer, Some(LinkLayer::Infiniband));
    }

    #[test]
    fn rates_of_every_generation() {
        let r = parse_rate("2.5 Gb/sec (1X SDR)").unwrap();
        assert_eq!((r.rate_gbps, r.lanes), (2.5, Some(1)));
        let r = parse_rate("56 Gb/sec (4X FDR)").unwrap();
        assert_eq!(r.generation.as_deref(), Some("FDR"));
        let r = parse_rate("40 Gb/sec (4X FDR10)").unwrap();
        assert_eq!(r.generation.as_deref(), Some("FDR10"));
        let r = parse_rate("400 Gb/sec (4X NDR)").unwrap();
        assert_eq!(r.rate_gbps, 400.0);
        assert!(parse_rate("fast").is_none());
        assert!(parse_rate("200 Gb/sec (four HDR)").is_none());
    }

    #[test]
    fn notes_after_a_port_header_and_its_values_are_not_read_as_them() {
        let text = "Infiniband device 'mlx4_2' port 2 status: # 未连接\n\
                    \tdefault gid:\t fe80:0000:0000:0000:f452:1403:0011:a2b4\n\
                    \tbase lid:\t 0x0\n\tsm lid:\t\t 0x0\n\tstate:\t\t 1: DOWN\n\
                    \tphys state:\t 2: Polling # 等待对端\n\
                    \trate:\t\t 10 Gb/sec (4X) # 不对\n\tlink_layer:\t InfiniBand\n";
        let lines = lines_of(text);
        assert_eq!(detect(&lines).map(|b| b.key).as_deref(), Some("mlx4_2:2"));
        let parsed = parse(&lines);
        assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
        let p = &parsed.value.ports[0];
        assert_eq!((p.device.as_str(), p.port), ("mlx4_2", 2));
        assert_eq!(p.physical_state, Some(PhysState::Polling));
        assert_eq!(p.rate.as_ref().and_then(|r| r.lanes), Some(4));
        assert_eq!(p.partial, None);
    }

    #[test]
    fn bad_lines_are_warnings_and_unknown_values_are_not() {
        let text = "Infiniband device 'mlx5_0' port 1 status:\n\tbase lid:\t 0xzz\n\tsm lid:\t unknown\n\tstrange line\n\tcolour:\t blue\n\tstate:\t\t 4: ACTIVE\n";
        let parsed = parse(&lines_of(text));
        let p = &parsed.value.ports[0];
        assert_eq!(p.base_lid, None);
        assert_eq!(p.sm_lid, None);
        assert_eq!(p.state, Some(PortState::Active));
        let lines: Vec<usize> = parsed.warnings.iter().map(|w| w.span.first_line).collect();
        assert_eq!(lines, vec![2, 4, 5]);
        assert!(parsed
            .warnings
            .iter()
            .all(|w| w.kind == WarningKind::Unreadable));
    }

    /// A field printed without a value (a state blanked before sharing)
    /// is an unread line, and the port is whole but for it; on the
    /// output's last line it was cut, and the port is partial.
    #[test]
    fn a_blank_value_is_unread_and_cuts_its_port_only_on_the_last_line() {
        let port = "Infiniband device 'mlx5_0' port 1 status:\n\tdefault gid:\t fe80::1\n\tbase lid:\t 0x5\n\tsm lid:\t\t 0x1\n\tstate:\t\t \n\tphys state:\t 5: LinkUp\n\trate:\t\t 200 Gb/sec (4X HDR)\n\tlink_layer:\t InfiniBand\n\n";
        let parsed = parse(&lines_of(port));
        let p = &parsed.value.ports[0];
        assert_eq!((p.state, p.partial.as_ref()), (None, None));
        assert_eq!(p.physical_state, Some(PhysState::LinkUp));
        assert_eq!(parsed.warning_lines(), [(5, WarningKind::Unreadable)]);
        assert_eq!(parsed.warnings[0].message, "`state` has no value");
        // Cut after `state:` by the end of the paste.
        let cut = port.split_inclusive('\n').take(5).collect::<String>();
        let parsed = parse(&lines_of(&cut));
        let p = &parsed.value.ports[0];
        assert_eq!(
            p.partial,
            Some(Partial::new(
                PartialReason::CutLine,
                vec!["state".to_owned()],
                5
            ))
        );
        assert_eq!(parsed.warning_lines(), [(5, WarningKind::Truncated)]);
    }

    #[test]
    fn fatal_error_is_kept_and_reported() {
        let text = "Fatal error:  device 'ibsim0': sys files not found (/sys/class/infiniband/ibsim0/ports)\n";
        let parsed = parse(&lines_of(text));
        assert!(parsed.value.ports.is_empty());
        assert_eq!(
            parsed.value.fatal_error.as_deref(),
            Some("device 'ibsim0': sys files not found (/sys/class/infiniband/ibsim0/ports)")
        );
        assert_eq!(parsed.warnings.len(), 1);
        assert_eq!(parsed.warnings[0].kind, WarningKind::Truncated);
    }

    /// Before any header, a line that is none of the script's fields is
    /// unread; a field is a header-less port's (below).
    #[test]
    fn lines_before_any_header_are_warnings() {
        let parsed = parse(&lines_of("\tcolour:\t blue\n\tstate:\t 4: ACTIVE\n"));
        assert!(parsed.value.ports.is_empty());
        assert_eq!(parsed.warning_lines(), [(1, WarningKind::Unreadable)]);
        assert_eq!(parsed.value.headerless_ports.len(), 1);
    }

    /// The "relevant part" of a block: its fields without the
    /// `Infiniband device '…' port N status:` line above them.
    const RELEVANT_PART: &str = "\tdefault gid:\t fe80:0000:0000:0000:0c42:a103:0065:1234
\tbase lid:\t 0x5
\tsm lid:\t\t 0x1
\tstate:\t\t 1: DOWN
\tphys state:\t 3: Disabled
\trate:\t\t 40 Gb/sec (4X QDR)
\tlink_layer:\t InfiniBand
";

    #[test]
    fn fields_without_their_header_are_a_port_whose_device_is_unknown() {
        let lines = lines_of(RELEVANT_PART);
        assert_eq!(
            detect(&lines).map(|b| b.key).as_deref(),
            Some("ibstatus port fields at line 1")
        );
        let parsed = parse(&lines);
        assert_eq!(parsed.warnings, [], "every line is read");
        assert!(parsed.value.ports.is_empty(), "no device is invented");
        let [p] = parsed.value.headerless_ports.as_slice() else {
            panic!("{:?}", parsed.value.headerless_ports);
        };
        assert_eq!((p.device.as_str(), p.port), ("", 0));
        assert_eq!((p.base_lid, p.sm_lid), (Some(5), Some(1)));
        assert_eq!(p.state, Some(PortState::Down));
        assert_eq!(p.physical_state, Some(PhysState::Disabled));
        let rate = p.rate.as_ref().unwrap();
        assert_eq!((rate.rate_gbps, rate.lanes), (40.0, Some(4)));
        assert_eq!(rate.generation.as_deref(), Some("QDR"));
        assert_eq!(p.link_layer, Some(LinkLayer::Infiniband));
        assert_eq!((p.span.first_line, p.span.last_line), (1, 7));
        assert_eq!(
            p.partial,
            Some(Partial::new(
                PartialReason::NoHeader,
                vec![HEADERLESS_MISSING.to_owned()],
                1
            ))
        );
    }

    /// `ibstatus | grep -E "state|rate"`: a field at or before the last
    /// one read (the second `state:`) begins the next port; the fields
    /// under a header that follows are that header's port, as ever.
    #[test]
    fn a_grep_of_several_ports_is_split_where_the_fields_start_over() {
        let text =
            "\tstate:\t\t 4: ACTIVE\n\tphys state:\t 5: LinkUp\n\trate:\t\t 100 Gb/sec (4X EDR)\n\
                    \tstate:\t\t 1: DOWN\n\tphys state:\t 2: Polling\n\trate:\t\t 10 Gb/sec (4X)\n";
        let parsed = parse(&lines_of(&format!("{text}{TWO_PORTS}")));
        assert_eq!(parsed.warnings, []);
        let states: Vec<_> = parsed
            .value
            .headerless_ports
            .iter()
            .map(|p| {
                (
                    p.state,
                    p.rate.as_ref().map(|r| r.rate_gbps),
                    p.span.last_line,
                )
            })
            .collect();
        assert_eq!(
            states,
            [
                (Some(PortState::Active), Some(100.0), 3),
                (Some(PortState::Down), Some(10.0), 6)
            ]
        );
        let alone = parse(&lines_of(TWO_PORTS)).value.ports;
        let named = parsed.value.ports;
        assert_eq!(named.len(), 2);
        assert_eq!(
            named
                .iter()
                .map(|p| (&p.device, p.port, p.state))
                .collect::<Vec<_>>(),
            alone
                .iter()
                .map(|p| (&p.device, p.port, p.state))
                .collect::<Vec<_>>()
        );
        assert_eq!(named[0].span.first_line, 7);
    }

    /// Only the script's values make its fields: `ibv_devinfo` prints
    /// `state:` and `link_layer:` labels too, with its own values.
    #[test]
    fn detects_fields_alone_only_with_the_scripts_values() {
        for text in [
            "state: 4: ACTIVE\nphys state: 5: LinkUp\n",
            "rate: 200 Gb/sec (4X HDR)\nrate: 100 Gb/sec (2X HDR)\n",
            "base lid: 0x0\nsm lid: 0x0\n",
        ] {
            assert!(detect(&lines_of(text)).is_some(), "{text}");
        }
        for text in [
            "\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tmax_mtu:\t\t4096 (5)\n",
            "\t\t\tlink_layer:\t\tInfiniBand\n\tport:\t2\n",
            "state: PORT_DOWN (1)\nlink_layer: InfiniBand\n",
            "state: 4: ACTIVE\n",
            "state: running\nrate: fast\n",
            "base lid: 12\nsm lid: 1\n",
        ] {
            assert!(detect(&lines_of(text)).is_none(), "{text}");
        }
    }

    #[test]
    fn detects_only_the_header() {
        let block = detect(&lines_of("Infiniband device 'mlx5_3' port 2 status:")).unwrap();
        assert_eq!(block.key, "mlx5_3:2");
        assert!(detect(&lines_of("Infiniband device 'mlx5_3' port x status:")).is_none());
        assert!(detect(&lines_of("CA 'mlx5_0'")).is_none());
    }

    #[test]
    fn render_then_parse_gives_the_same_model() {
        let first = parse(&lines_of(TWO_PORTS)).value;
        let again = parse(&lines_of(&render(&first)));
        assert!(again.warnings.is_empty(), "{:?}", again.warnings);
        let strip = |mut m: Ibstatus| {
            for p in &mut m.ports {
                p.span = crate::span::LineSpan::line(1);
            }
            m
        };
        assert_eq!(strip(first), strip(again.value));
    }
}
