//! `ibportstate <lid> <port> [query]` and `smpquery portinfo <lid> <port>`
//! (infiniband-diags `ibportstate.c`, `smpquery.c`; values from libibmad
//! `dump.c`):
//!
//! ```text
//! CA/RT PortInfo:
//! # Port info: Lid 12 port 1
//! LinkState:.......................Active
//! PhysLinkState:...................LinkUp
//! LinkWidthSupported:..............1X or 4X
//! LinkWidthEnabled:................1X or 4X
//! LinkWidthActive:.................1X
//! LinkSpeedSupported:..............2.5 Gbps or 5.0 Gbps or 10.0 Gbps
//! LinkSpeedEnabled:................2.5 Gbps or 5.0 Gbps or 10.0 Gbps
//! LinkSpeedActive:.................10.0 Gbps
//! LinkSpeedExtSupported:...........14.0625 Gbps or 25.78125 Gbps
//! LinkSpeedExtEnabled:.............14.0625 Gbps or 25.78125 Gbps
//! LinkSpeedExtActive:..............25.78125 Gbps
//! Peer PortInfo:
//! # Port info: Lid 12 DR path slid 12; dlid 65535; 0,1 port 7
//! …
//! ```
//!
//! `smpquery portinfo` prints every PortInfo field in the attribute's order;
//! fields this reader has no use for are read and passed over. The
//! `# MLNX ext Port info:` block that follows on Mellanox ports (FDR10) is
//! read the same way.

use crate::model::ib::{PhysState, PortState};
use crate::model::partial::{Partial, PartialReason};
use crate::model::portinfo::{PortInfoBlock, PortNode, Portinfo};
use crate::parse::perfquery::dotted_field;
use crate::parse::text::{
    blank_value, decimal_u32, rsplit_once_str, settle_blank_value, tool_message_kind, trim, Unread,
};
use crate::parse::{Block, Line, Parsed, Spec};

pub(crate) const FORMAT: Spec<Portinfo> = Spec {
    command,
    starts: |b| matches!(b, b'#' | b'C' | b'S' | b'P' | b'I' | b'A'),
    detect,
    parse,
    summary,
    attach_command: Some(attach_command),
    labels: &[],
};

/// `ibportstate …` (every operation prints PortInfo blocks), and
/// `smpquery portinfo …` / `smpquery PI …`, not smpquery's other attributes.
fn command(argv: &[&str]) -> bool {
    match argv.first().map(|p| p.rsplit('/').next().unwrap_or(p)) {
        Some("ibportstate") => true,
        Some("smpquery") => argv
            .iter()
            .skip(1)
            .any(|w| w.eq_ignore_ascii_case("portinfo") || *w == "PI"),
        _ => false,
    }
}

/// The header's opening.
const HEADER: &str = "# Port info:";

/// The Mellanox extended PortInfo header: its fields follow the port's.
const MLNX_HEADER: &str = "# MLNX ext Port info:";

/// `# Port info: Lid 12 port 1` → (`Lid 12`, 1).
fn header(t: &str) -> Option<(&str, u32)> {
    let rest = trim(t.strip_prefix(HEADER)?);
    let (target, port) = rsplit_once_str(rest, " port ")?;
    let target = trim(target);
    (!target.is_empty()).then_some(())?;
    Some((target, decimal_u32(trim(port)).ok()?))
}

/// What a label line above a block says of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Label {
    /// `CA/RT PortInfo:` or `Switch PortInfo:` (with `Initial ` before it
    /// when ibportstate changes the port).
    Node(PortNode),
    /// `Peer PortInfo:`: the next block is the far end of the link.
    Peer,
    /// `PortInfo:` (older releases) and `After PortInfo set:`: the next
    /// block is the port asked about.
    Plain,
}

fn label(t: &str) -> Option<Label> {
    let t = t.strip_prefix("Initial ").unwrap_or(t);
    match t {
        "CA/RT PortInfo:" => Some(Label::Node(PortNode::CaOrRouter)),
        "Switch PortInfo:" => Some(Label::Node(PortNode::Switch)),
        "Peer PortInfo:" => Some(Label::Peer),
        "PortInfo:" | "After PortInfo set:" | "After MLNXExtendedPortInfo set:" => {
            Some(Label::Plain)
        }
        _ => None,
    }
}

/// Lines ibportstate prints about what it did, not about the port.
fn remark(t: &str) -> bool {
    matches!(
        t,
        "Port is already in enable state" | "Disable may be irreversible"
    )
}

/// The next non-blank line after `lines[0]` that is not a tool message.
fn next_text<'l>(lines: &'l [Line<'_>]) -> Option<&'l str> {
    lines
        .iter()
        .skip(1)
        .map(|l| trim(l.text()))
        .find(|t| !t.is_empty() && tool_message_kind(t).is_none())
}

/// A header with a dotted field under it, or a label with such a header
/// under it.
fn detect(lines: &[Line<'_>]) -> Option<Block> {
    let first = lines.first()?;
    let t = trim(first.text());
    if let Some((target, port)) = header(t) {
        dotted_field(next_text(lines)?)?;
        return Some(Block::keyed(format!("portinfo|{target}|{port}")));
    }
    if t.ends_with("PortInfo:") || t.ends_with(" set:") {
        label(t)?;
        header(next_text(lines)?)?;
        return Some(Block::keyed(format!(
            "portinfo label at line {}",
            first.number
        )));
    }
    None
}

/// Reads `ibportstate` or `smpquery portinfo` output.
#[must_use]
pub fn parse(lines: &[Line<'_>]) -> Parsed<Portinfo> {
    let mut out = Portinfo::default();
    let mut unread = Unread::default();
    let mut pending: Option<Label> = None;
    // Inside a `# MLNX ext Port info:` block: its fields are read, not used.
    let mut mlnx = false;
    for line in lines.iter().filter(|l| !l.is_blank()) {
        let t = trim(line.text());
        if let Some((target, port)) = header(t) {
            let mut block = PortInfoBlock::new(target, port, line.span());
            block.lid = lid_of(target).filter(|_| !target.contains("DR path"));
            match pending.take() {
                Some(Label::Node(node)) => block.node = Some(node),
                Some(Label::Peer) => block.peer = true,
                Some(Label::Plain) | None => {}
            }
            out.ports.push(block);
            mlnx = false;
            continue;
        }
        if t.starts_with(MLNX_HEADER) {
            mlnx = true;
            continue;
        }
        if let Some(l) = label(t) {
            pending = Some(l);
            continue;
        }
        if remark(t) {
            continue;
        }
        let Some((name, value)) = dotted_field(t) else {
            unread.line(line, "not a PortInfo line");
            continue;
        };
        if out.ports.is_empty() {
            // Fields with no header above them: `smpquery portinfo 5 1 |
            // grep …` keeps the fields it asks for and drops the header.
            // The dotted names are unmistakable, so they are read, under a
            // port the command's words may name (`attach_command`).
            out.ports.push(headless_block(line));
        }
        let Some(block) = out.ports.last_mut() else {
            continue;
        };
        block.span = block.span.join(line.span());
        if !mlnx {
            read_field(block, line, name, value, &mut unread);
        }
    }
    let mut warnings = unread.finish();
    for block in &mut out.ports {
        settle_blank_value(&mut block.partial, lines, &mut warnings);
    }
    mark_cut_last_block(&mut out);
    Parsed {
        value: out,
        warnings,
    }
}

/// The target of PortInfo fields pasted without their `# Port info:`
/// header, while the command does not name the port.
pub const UNKNOWN_TARGET: &str = "(header missing)";

/// A block for fields that came before any header: its LID and port are
/// unknown, which its partial mark says.
fn headless_block(line: &Line<'_>) -> PortInfoBlock {
    let mut block = PortInfoBlock::new(UNKNOWN_TARGET, 0, line.span());
    block.partial = Some(Partial::new(
        PartialReason::NoHeader,
        vec!["`# Port info:` header (LID and port)".to_owned()],
        line.number,
    ));
    block
}

/// Names the header-less block's port from the command that printed it:
/// `smpquery portinfo <lid> <port>` and `ibportstate <lid> <port>` address
/// a port by LID and number. A DR path or GUID address (`-D`, `-G`) or a
/// missing port number leaves it unknown.
fn attach_command(info: &mut Portinfo, argv: &[&str]) {
    let Some(first) = info
        .ports
        .first_mut()
        .filter(|b| b.target == UNKNOWN_TARGET)
    else {
        return;
    };
    let Some((lid, port)) = lid_and_port(argv) else {
        return;
    };
    first.target = format!("Lid {lid}");
    first.lid = Some(lid);
    first.port = port;
    first.partial = None;
    if info.ports.len() == 1 {
        // Only the fields a `grep` kept: the others are unknown.
        mark_cut_last_block(info);
    }
}

/// The LID and port number of `smpquery portinfo|PI <lid> <port>` or
/// `ibportstate <lid> <port> [op]`, when addressed by LID.
fn lid_and_port(argv: &[&str]) -> Option<(u32, u32)> {
    let program = argv.first()?;
    let by_other_address = argv.iter().any(|w| {
        matches!(
            *w,
            "-D" | "-G" | "--Direct" | "--Guid" | "--direct" | "--guid"
        )
    });
    if by_other_address {
        return None;
    }
    // The common options that take a value (`-C mlx5_0 -P 1`): their
    // value is no address.
    let takes_value = |w: &str| {
        matches!(
            w,
            "-C" | "-P"
                | "-t"
                | "-y"
                | "-z"
                | "--Ca"
                | "--Port"
                | "--timeout"
                | "--m_key"
                | "--config"
        )
    };
    let mut words = Vec::new();
    let mut rest = argv.iter().skip(1);
    while let Some(w) = rest.next() {
        if takes_value(w) {
            rest.next();
        } else if !w.starts_with('-') {
            words.push(*w);
        }
    }
    let mut positional = words.into_iter();
    if *program == "smpquery" {
        positional
            .next()
            .filter(|op| op.eq_ignore_ascii_case("portinfo") || *op == "PI")?;
    }
    let lid = decimal_u32(positional.next()?).ok()?;
    let port = decimal_u32(positional.next()?).ok()?;
    Some((lid, port))
}

/// `Lid 12`, `Lid 12 DR path …` → 12.
fn lid_of(target: &str) -> Option<u32> {
    let rest = target.strip_prefix("Lid ")?;
    decimal_u32(rest.split(' ').next()?).ok()
}

fn read_field(
    block: &mut PortInfoBlock,
    line: &Line<'_>,
    name: &str,
    value: &str,
    unread: &mut Unread,
) {
    if value.is_empty() {
        // Cut by the end of the paste, or blanked: told apart once the
        // section is read (`settle_blank_value`).
        blank_value(line, name, unread, &mut block.partial);
        return;
    }
    let bad = |unread: &mut Unread| unread.line(line, &format!("`{name}` value not understood"));
    match name {
        "LinkState" => block.state = Some(PortState::parse(value)),
        "PhysLinkState" => block.physical_state = Some(PhysState::parse(value)),
        "Lid" => match decimal_u32(value) {
            Ok(v) => block.lid = Some(v),
            Err(_) => bad(unread),
        },
        "SMLid" => match decimal_u32(value) {
            Ok(v) => block.sm_lid = Some(v),
            Err(_) => bad(unread),
        },
        "LinkWidthSupported" | "LinkWidthEnabled" => match widths(value) {
            Some(w) if name == "LinkWidthSupported" => block.widths_supported = Some(w),
            Some(w) => block.widths_enabled = Some(w),
            None => bad(unread),
        },
        "LinkWidthActive" => match width(value) {
            Some(w) => block.width_active = Some(w),
            None => bad(unread),
        },
        "LinkSpeedSupported" | "LinkSpeedExtSupported" | "LinkSpeedExtSupported2" => {
            match speeds(value) {
                Some(s) => block.speeds_supported.extend(s),
                None => bad(unread),
            }
        }
        "LinkSpeedEnabled" | "LinkSpeedExtEnabled" | "LinkSpeedExtEnabled2" => {
            match speeds(value) {
                Some(s) => block.speeds_enabled.extend(s),
                None => bad(unread),
            }
        }
        "LinkSpeedActive" | "LinkSpeedExtActive" | "LinkSpeedExtActive2" => {
            read_active_speed(block, name, value);
        }
        _ => {}
    }
}

/// The three `…Active` speed fields: an extended one that names a speed
/// overrides the base one (IBA: `LinkSpeedExtActive` is valid when not 0);
/// `Extended speed`, `No Extended Speed` and `undefined (n)` name none.
fn read_active_speed(block: &mut PortInfoBlock, name: &str, value: &str) {
    let fields = &mut block.speed_fields;
    let rank = match name {
        "LinkSpeedActive" => {
            fields.base_active = true;
            0
        }
        "LinkSpeedExtActive" => {
            fields.ext_active = true;
            1
        }
        _ => {
            fields.ext2_active = true;
            2
        }
    };
    let Some(speed) = lane_speed(value) else {
        return;
    };
    // Which field set the speed now held: a lower one never overrides.
    let held = match block.speed_active_text.as_deref() {
        Some(t) if t.starts_with("LinkSpeedExtActive2") => 2,
        Some(t) if t.starts_with("LinkSpeedExtActive") => 1,
        Some(_) => 0,
        None => -1,
    };
    if rank >= held {
        block.speed_active = Some(speed);
        block.speed_active_text = Some(format!("{name}: {value}"));
    }
}

/// `4X` → 4; `undefined (19)` → `None`.
fn width(text: &str) -> Option<u32> {
    let lanes = trim(text).strip_suffix(['X', 'x'])?;
    decimal_u32(lanes)
        .ok()
        .filter(|&n| matches!(n, 1 | 2 | 4 | 8 | 12))
}

/// `1X or 4X (IBA extension)` → [1, 4].
fn widths(text: &str) -> Option<Vec<u32>> {
    let text = trim(text.strip_suffix("(IBA extension)").unwrap_or(text));
    text.split(" or ").map(width).collect()
}

/// `25.78125 Gbps` → 25.78125; anything else (`No Extended Speed`,
/// `Extended speed`, `undefined (3)`) → `None`.
fn lane_speed(text: &str) -> Option<f64> {
    let number = trim(text).strip_suffix(" Gbps")?;
    crate::parse::text::decimal_f64(number).filter(|v| *v > 0.0)
}

/// `2.5 Gbps or 5.0 Gbps (IBA extension)` → [2.5, 5.0]; `0` and
/// `Extended link speeds disabled` → none.
fn speeds(text: &str) -> Option<Vec<f64>> {
    let text = trim(text.strip_suffix("(IBA extension)").unwrap_or(text));
    if text == "0" || text == "Extended link speeds disabled" {
        return Some(Vec::new());
    }
    text.split(" or ").map(lane_speed).collect()
}

/// The last block of a section that lacks a field `ibportstate` prints for
/// every port was cut where the paste ends: what it lacks is unknown, not
/// absent. (A block followed by another is whole: ibportstate prints a
/// block in one piece.)
fn mark_cut_last_block(out: &mut Portinfo) {
    let Some(last) = out.ports.last_mut().filter(|b| b.partial.is_none()) else {
        return;
    };
    // Each field every block prints, and whether this one printed it.
    let printed = [
        ("LinkState", last.state.is_some()),
        ("PhysLinkState", last.physical_state.is_some()),
        ("LinkWidthEnabled", last.widths_enabled.is_some()),
        ("LinkWidthActive", last.width_active.is_some()),
        ("LinkSpeedActive", last.speed_fields.base_active),
    ];
    let missing: Vec<String> = printed
        .iter()
        .filter(|(_, present)| !present)
        .map(|(name, _)| (*name).to_owned())
        .collect();
    if !missing.is_empty() {
        last.partial = Some(Partial::new(
            PartialReason::MissingFields,
            missing,
            last.span.last_line,
        ));
    }
}

/// `2 ports: 1 Active, 1 Down` for people.
#[must_use]
pub fn summary(m: &Portinfo) -> String {
    let active = m
        .ports
        .iter()
        .filter(|p| p.state == Some(PortState::Active))
        .count();
    format!(
        "{} port(s): {active} Active, {} not",
        m.ports.len(),
        m.ports.len() - active
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::WarningKind;
    use crate::parse::lines_of;

    /// Our own capture in ibportstate's layout: an HCA port trained at 1X
    /// of 4X, then its peer, a switch port (values invented).
    const NARROW: &str = "\
CA/RT PortInfo:
# Port info: Lid 31 port 1
LinkState:.......................Active
PhysLinkState:...................LinkUp
Lid:.............................31
SMLid:...........................1
LMC:.............................0
LinkWidthSupported:..............1X or 4X
LinkWidthEnabled:................1X or 4X
LinkWidthActive:.................1X
LinkSpeedSupported:..............2.5 Gbps or 5.0 Gbps or 10.0 Gbps
LinkSpeedEnabled:................2.5 Gbps or 5.0 Gbps or 10.0 Gbps
LinkSpeedActive:.................10.0 Gbps
LinkSpeedExtSupported:...........14.0625 Gbps or 25.78125 Gbps
LinkSpeedExtEnabled:.............14.0625 Gbps or 25.78125 Gbps
LinkSpeedExtActive:..............25.78125 Gbps
Mkey:............................<not displayed>
MkeyLeasePeriod:.................0
ProtectBits:.....................0
Peer PortInfo:
# Port info: Lid 31 DR path slid 31; dlid 65535; 0,1 port 17
LinkState:.......................Active
PhysLinkState:...................LinkUp
Lid:.............................4
SMLid:...........................1
LMC:.............................0
LinkWidthSupported:..............1X or 4X
LinkWidthEnabled:................1X or 4X
LinkWidthActive:.................1X
LinkSpeedSupported:..............2.5 Gbps or 5.0 Gbps or 10.0 Gbps
LinkSpeedEnabled:................2.5 Gbps or 5.0 Gbps or 10.0 Gbps
LinkSpeedActive:.................10.0 Gbps
LinkSpeedExtSupported:...........14.0625 Gbps or 25.78125 Gbps
LinkSpeedExtEnabled:.............14.0625 Gbps or 25.78125 Gbps
LinkSpeedExtActive:..............25.78125 Gbps
";

    #[test]
    fn reads_the_port_and_its_peer() {
        let p = parse(&lines_of(NARROW));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let [port, peer] = p.value.ports.as_slice() else {
            panic!("{:?}", p.value.ports)
        };
        assert_eq!(
            (port.target.as_str(), port.port, port.peer),
            ("Lid 31", 1, false)
        );
        assert_eq!(port.node, Some(PortNode::CaOrRouter));
        assert_eq!((port.lid, port.sm_lid), (Some(31), Some(1)));
        assert_eq!(port.state, Some(PortState::Active));
        assert_eq!(port.physical_state, Some(PhysState::LinkUp));
        assert_eq!(port.widths_supported.as_deref(), Some(&[1, 4][..]));
        assert_eq!(port.width_active, Some(1));
        assert_eq!(port.widest_width(), Some(4));
        // The extended field names the speed; the base one says QDR.
        assert_eq!(port.speed_active, Some(25.78125));
        assert_eq!(
            port.usable_speeds(),
            vec![2.5, 5.0, 10.0, 14.0625, 25.78125]
        );
        assert_eq!(port.span, crate::span::LineSpan::new(2, 19));
        assert!(port.partial.is_none());
        assert!(peer.peer);
        assert_eq!(peer.node, None);
        // Addressed by a DR path: the LID is the `Lid` field's.
        assert_eq!((peer.port, peer.lid), (17, Some(4)));
    }

    #[test]
    fn widths_and_speeds_read_every_libibmad_spelling() {
        assert_eq!(widths("4X (IBA extension)"), Some(vec![4]));
        assert_eq!(
            widths("1X or 4X or 8X or 12X or 2X"),
            Some(vec![1, 4, 8, 12, 2])
        );
        assert_eq!(widths("undefined (19)"), None);
        assert_eq!(width("12X"), Some(12));
        assert_eq!(width("3X"), None);
        assert_eq!(
            speeds("2.5 Gbps or 5.0 Gbps (IBA extension)"),
            Some(vec![2.5, 5.0])
        );
        assert_eq!(speeds("Extended link speeds disabled"), Some(vec![]));
        assert_eq!(speeds("0"), Some(vec![]));
        assert_eq!(speeds("212.5 Gbps"), Some(vec![212.5]));
        assert_eq!(lane_speed("No Extended Speed"), None);
        assert_eq!(lane_speed("Extended speed"), None);
        assert_eq!(lane_speed("53.125 Gbps"), Some(53.125));
    }

    #[test]
    fn no_extended_speed_leaves_the_base_speed() {
        let text = "\
# Port info: Lid 5 port 2
LinkState:.......................Active
PhysLinkState:...................LinkUp
LinkWidthActive:.................4X
LinkSpeedActive:.................10.0 Gbps
LinkSpeedExtActive:..............No Extended Speed
LinkWidthEnabled:................4X
";
        let p = parse(&lines_of(text)).value;
        assert_eq!(p.ports[0].speed_active, Some(10.0));
        assert_eq!(
            p.ports[0].speed_active_text.as_deref(),
            Some("LinkSpeedActive: 10.0 Gbps")
        );
    }

    #[test]
    fn a_block_cut_by_the_end_of_the_paste_is_partial_and_a_whole_one_is_not() {
        let cut = "\
# Port info: Lid 2 port 24
LinkState:.......................Down
PhysLinkState:...................Disabled
LinkWidthSupported:..............1X or 4X
";
        let p = parse(&lines_of(cut)).value;
        let partial = p.ports[0].partial.as_ref().expect("cut");
        assert_eq!(
            partial.missing,
            vec!["LinkWidthEnabled", "LinkWidthActive", "LinkSpeedActive"]
        );
        assert_eq!(partial.line, 4);
        let p = parse(&lines_of(NARROW)).value;
        assert!(p.ports.iter().all(|b| b.partial.is_none()));
    }

    #[test]
    fn lines_it_cannot_use_are_reported_and_the_rest_kept() {
        let text = "\
LinkState:.......................Active
# Port info: Lid 2 port 3
LinkState:.......................Active
LinkWidthActive:.................3X
this is prose
Port is already in enable state
";
        let p = parse(&lines_of(text));
        assert_eq!(
            p.warning_lines(),
            vec![(4, WarningKind::Unreadable), (5, WarningKind::Unreadable)]
        );
        // The field above the header is read, under a port not yet known.
        assert_eq!(p.value.ports[0].target, UNKNOWN_TARGET);
        assert_eq!(p.value.ports[1].state, Some(PortState::Active));
        assert_eq!(p.value.ports[1].width_active, None);
    }

    #[test]
    fn detection_wants_a_header_and_a_field_or_a_label_and_a_header() {
        let d = |t: &str| detect(&lines_of(t));
        assert!(d("# Port info: Lid 2 port 9\nLinkState:......Active").is_some());
        assert!(
            d("Peer PortInfo:\n# Port info: Lid 2 DR path slid 65535; dlid 65535; 0,9 port 2")
                .is_some()
        );
        assert!(d("# Port info: Lid 2 port 9\nsome prose").is_none());
        assert!(d("# Port info: Lid 2\nLinkState:......Active").is_none());
        assert!(d("# Port counters: Lid 2 port 9\nPortSelect:......9").is_none());
        assert!(d("Peer PortInfo:\nLinkState:......Active").is_none());
        assert!(d("My PortInfo:\n# Port info: Lid 2 port 9").is_none());
    }

    #[test]
    fn the_commands_that_print_it() {
        assert!(command(&["ibportstate", "2", "9"]));
        assert!(command(&["/usr/sbin/ibportstate", "-D", "0", "1", "query"]));
        assert!(command(&["smpquery", "portinfo", "2", "1"]));
        assert!(command(&["smpquery", "-D", "PI", "0,1", "1"]));
        assert!(!command(&["smpquery", "nodeinfo", "2"]));
        assert!(!command(&["perfquery", "2", "1"]));
    }

    /// `smpquery portinfo 5 1 | grep -E 'LinkState|…'`: the fields the
    /// grep kept, without the header, are read under the port the command
    /// names; by another address, or with no port number, it stays unknown.
    #[test]
    fn fields_without_a_header_take_the_port_the_command_names() {
        let text = "LinkWidthActive:.................1X\nLinkState:.......................Active\nPhysLinkState:...................LinkUp\n";
        let p = parse(&lines_of(text));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        assert_eq!(p.value.ports.len(), 1);
        let b = &p.value.ports[0];
        assert_eq!((b.target.as_str(), b.port), (UNKNOWN_TARGET, 0));
        assert_eq!(b.state, Some(PortState::Active));
        assert_eq!(b.width_active, Some(1));
        assert_eq!(
            b.partial.as_ref().map(|p| p.reason),
            Some(PartialReason::NoHeader)
        );

        for argv in [
            &["smpquery", "portinfo", "5", "1"][..],
            &["smpquery", "-C", "mlx5_0", "-P", "1", "PI", "5", "1"],
            &["ibportstate", "5", "1", "query"],
        ] {
            let mut info = p.value.clone();
            attach_command(&mut info, argv);
            let b = &info.ports[0];
            assert_eq!(
                (b.target.as_str(), b.lid, b.port),
                ("Lid 5", Some(5), 1),
                "{argv:?}"
            );
            // Only some fields: the grep left the others out.
            let partial = b.partial.as_ref().expect("fields missing");
            assert_eq!(partial.reason, PartialReason::MissingFields, "{argv:?}");
        }
        for argv in [
            &["smpquery", "portinfo", "-D", "0,1", "1"][..],
            &["smpquery", "portinfo", "5"],
            &["ibportstate", "-G", "0x0c42a10300aabbcc", "1"],
        ] {
            let mut info = p.value.clone();
            attach_command(&mut info, argv);
            assert_eq!(info.ports[0].target, UNKNOWN_TARGET, "{argv:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn any_text_is_read_without_panic_and_every_line_accounted(text in "(# Port info: |Peer PortInfo:\n|[A-Za-z]{1,12}:\\.{1,8}|[0-9X .]{0,12}| or |\n){0,40}") {
            let lines = lines_of(&text);
            let p = parse(&lines);
            let _ = detect(&lines);
            // Every non-blank line is in a block, is a label, a remark or
            // a Mellanox header, or has a warning: none is dropped silently.
            let warned = |n: usize| p.warnings.iter().any(|w| w.span.contains(n));
            let in_block = |n: usize| p.value.ports.iter().any(|b| b.span.contains(n));
            for line in lines.iter().filter(|l| !l.is_blank()) {
                let t = trim(line.text());
                let framing = label(t).is_some() || remark(t) || t.starts_with(MLNX_HEADER);
                proptest::prop_assert!(
                    framing || in_block(line.number) || warned(line.number),
                    "line {} dropped: {t:?}", line.number
                );
            }
        }
    }
}
