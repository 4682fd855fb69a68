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
    blank_identifier, blank_value, decimal_f64, hex_u32, label_value, read_each_line,
    settle_blank_value, single_quoted, without_note, Unread,
};
use crate::parse::{Block, Line, Parsed, Spec};

pub(crate) const FORMAT: Spec<Ibstatus> = Spec {
    command: |argv| argv.first() == Some(&"ibstatus"),
    starts: |b| b == b'I',
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
    let mut parsed = read_each_line(lines, read_line);
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

fn read_line(line: &Line<'_>, out: &mut Ibstatus, unread: &mut Unread) {
    // An author's ` # note` after a port header (`… port 1 status: # 已连接`)
    // or a value (`rate: 40 Gb/sec (4X QDR) # 正确速率`): the script prints
    // sysfs files, none with a ` #`. Before, such a header was no header
    // and its port's lines were all unread.
    let t = without_note(line.text().trim());
    if let Some((device, port)) = header(t) {
        out.ports.push(IbstatusPort::new(device, port, line.span()));
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
    let Some(port) = out.ports.last_mut() else {
        unread.line(
            line,
            "not ibstatus output (expected `Infiniband device '…' port N status:`)",
        );
        return;
    };
    let Some((label, value)) = label_value(t) else {
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

/// Recognises a port header; the key is `device:port`.
fn detect(lines: &[Line<'_>]) -> Option<Block> {
    let (device, port) = header(without_note(lines.first()?.text().trim()))?;
    Some(Block::keyed(format!("{device}:{port}")))
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
    let mut states: Vec<(String, usize)> = Vec::new();
    for p in &ibstatus.ports {
        let name = p
            .state
            .map_or_else(|| "no state".to_owned(), |s| state_name(s).to_owned());
        match states.iter_mut().find(|(n, _)| *n == name) {
            Some((_, count)) => *count += 1,
            None => states.push((name, 1)),
        }
    }
    let states: Vec<String> = states.iter().map(|(n, c)| format!("{c} {n}")).collect();
    let mut s = format!(
        "{} port(s){}{}",
        ibstatus.ports.len(),
        if states.is_empty() { "" } else { ": " },
        states.join(", ")
    );
    if let Some(reason) = &ibstatus.fatal_error {
        s.push_str(&format!("; failed: {reason}"));
    }
    s
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

    #[test]
    fn lines_before_any_header_are_warnings() {
        let parsed = parse(&lines_of("\tstate:\t 4: ACTIVE\n"));
        assert!(parsed.value.ports.is_empty());
        assert_eq!(parsed.warnings.len(), 1);
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
