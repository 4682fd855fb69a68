//! `rdma link show` (iproute2's `rdma` tool): one line per RDMA port, the
//! port's state as the kernel's netlink interface reports it.
//!
//! `link_parse_cb` in iproute2's `rdma/link.c` prints the port, then
//! `subnet_prefix`, `lid`, `sm_lid` and `lmc` (InfiniBand ports only), then
//! `state` and `physical_state`, then `netdev` when the port has one; with
//! `-d`, an indented `caps: <…>` line follows. The port is written three
//! ways across versions:
//!
//! ```text
//! link mlx5_0/1 subnet_prefix fe80:0000:0000:0000 lid 13 sm_lid 1 lmc 0 state ACTIVE physical_state LINK_UP netdev ibp12s0
//! link mlx5_1/1: state DOWN physical_state DISABLED netdev ens7f1np1
//! 1/1: mlx5_0/1: subnet_prefix fe80:0000:0000:0000 lid 0 sm_lid 0 lmc 0 state INIT physical_state LINK_UP
//! ```
//!
//! The words after the port are read as `name value` pairs, so that a
//! field added by a later version is passed over rather than misread. No
//! width or speed is printed: the rules that need a rate do not judge
//! these ports.

use crate::model::ib::{PhysState, PortState};
use crate::model::rdma_link::{RdmaLink, RdmaLinkPort};
use crate::parse::text::{decimal_u32, read_each_line, Unread};
use crate::parse::{Block, Line, Parsed, Spec};

pub(crate) const FORMAT: Spec<RdmaLink> = Spec {
    command: is_rdma_link,
    starts: |b| b == b'l' || b.is_ascii_digit(),
    detect,
    parse,
    summary,
    attach_command: None,
    labels: &[],
};

/// `rdma link`, `rdma -d link show`, `rdma li sh mlx5_0/1`: `rdma` takes
/// options before its object and any prefix of a word for the word.
fn is_rdma_link(argv: &[&str]) -> bool {
    let mut words = argv.iter().filter(|w| !w.starts_with('-'));
    let is_prefix = |w: &str, of: &str| !w.is_empty() && of.starts_with(w);
    words.next() == Some(&"rdma")
        && words.next().is_some_and(|w| is_prefix(w, "link"))
        && words
            .next()
            .is_none_or(|w| is_prefix(w, "show") || is_prefix(w, "list"))
}

/// The fields `link_parse_cb` prints after the port, in its order.
const FIELDS: [&str; 7] = [
    "subnet_prefix",
    "lid",
    "sm_lid",
    "lmc",
    "state",
    "physical_state",
    "netdev",
];

/// `link mlx5_0/1 …`, `link mlx5_0/1: …` or `1/1: mlx5_0/1: …`: the device,
/// the port and the rest of the line.
fn header(t: &str) -> Option<(&str, u32, &str)> {
    let (port_word, rest) = match t.strip_prefix("link ") {
        Some(rest) => rest.trim_start().split_once(' ').unwrap_or((rest, "")),
        // `IDX/PORT: DEV/PORT: …`: the index pair must be numbers (a line
        // opening with a letter is looked at no further).
        None if t.starts_with(|c: char| c.is_ascii_digit()) => {
            let (index, rest) = t.split_once(": ")?;
            let (i, p) = index.split_once('/')?;
            if !(i.bytes().all(|b| b.is_ascii_digit()) && p.bytes().all(|b| b.is_ascii_digit())) {
                return None;
            }
            rest.trim_start().split_once(' ').unwrap_or((rest, ""))
        }
        None => return None,
    };
    let port_word = port_word.strip_suffix(':').unwrap_or(port_word);
    let (device, port) = port_word.rsplit_once('/')?;
    if device.is_empty() || device.contains(char::is_whitespace) {
        return None;
    }
    Some((device, port.parse().ok()?, rest.trim()))
}

/// A port line: its header, and a first field `link_parse_cb` prints (so
/// that `link/ether …` of `ip link` and other `link …` text are not taken).
fn port_line(t: &str) -> Option<(&str, u32, &str)> {
    let (device, port, rest) = header(t)?;
    let first = rest.split_whitespace().next()?;
    FIELDS.contains(&first).then_some((device, port, rest))
}

fn detect(lines: &[Line<'_>]) -> Option<Block> {
    let (device, port, _) = port_line(lines.first()?.text().trim())?;
    // Each port is its own key: the same port again is a second snapshot.
    Some(Block::keyed(format!("{device}/{port}")))
}

/// Reads `rdma link` output.
#[must_use]
pub fn parse(lines: &[Line<'_>]) -> Parsed<RdmaLink> {
    read_each_line(lines, read_line)
}

fn read_line(line: &Line<'_>, out: &mut RdmaLink, unread: &mut Unread) {
    let t = line.text().trim();
    if let Some((device, number, rest)) = port_line(t) {
        let mut port = RdmaLinkPort::new(device, number, line.span());
        read_fields(rest, &mut port, line, unread);
        out.ports.push(port);
        return;
    }
    match out.ports.last_mut() {
        // `-d`: the port's capability flags, not read.
        Some(port) if t.starts_with("caps: <") => port.span = port.span.join(line.span()),
        _ => unread.line(line, "not an `rdma link` port line"),
    }
}

/// The `name value` pairs after the port. A name without its value (a cut
/// line) is not read.
fn read_fields(rest: &str, port: &mut RdmaLinkPort, line: &Line<'_>, unread: &mut Unread) {
    let mut words = rest.split_whitespace();
    while let Some(name) = words.next() {
        let Some(value) = words.next() else { break };
        let mut number = |slot: &mut Option<u32>| match decimal_u32(value) {
            Ok(v) => *slot = Some(v),
            Err(e) => unread.number(line, name, e),
        };
        match name {
            "subnet_prefix" => port.subnet_prefix = Some(value.to_owned()),
            "lid" => number(&mut port.lid),
            "sm_lid" => number(&mut port.sm_lid),
            "lmc" => number(&mut port.lmc),
            "state" => port.state = Some(PortState::parse(value)),
            "physical_state" => port.physical_state = Some(physical_state(value)),
            "netdev" => port.netdev = Some(value.to_owned()),
            _ => {}
        }
    }
}

/// `LINK_UP`, `POLLING`, …; `rdma` spells error recovery
/// `LINK_ERROR_RECOVER`.
fn physical_state(value: &str) -> PhysState {
    if value.eq_ignore_ascii_case("LINK_ERROR_RECOVER") {
        PhysState::LinkErrorRecovery
    } else {
        PhysState::parse(value)
    }
}

/// `10 port(s), 8 Active` for people.
#[must_use]
pub fn summary(m: &RdmaLink) -> String {
    let active = m
        .ports
        .iter()
        .filter(|p| p.state == Some(PortState::Active))
        .count();
    format!("{} port(s), {active} Active", m.ports.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ib::LinkLayer;
    use crate::parse::lines_of;

    #[test]
    fn reads_every_form_of_the_port() {
        let p = parse(&lines_of(
            "link mlx5_0/1 subnet_prefix fe80:0000:0000:0000 lid 13 sm_lid 1 lmc 0 state ACTIVE physical_state LINK_UP netdev ibp12s0
link mlx5_1/1: state DOWN physical_state DISABLED netdev ens7f1np1
1/1: mlx5_2/1: subnet_prefix fe80:0000:0000:0000 lid 0 sm_lid 0 lmc 0 state INIT physical_state LINK_UP
    caps: <CM, IP_BASED_GIDS>
link mlx5_3/2 state DOWN physical_state LINK_ERROR_RECOVER
",
        ));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let ports = p.value.ports;
        assert_eq!(ports.len(), 4);
        let first = &ports[0];
        assert_eq!((first.device.as_str(), first.port), ("mlx5_0", 1));
        assert_eq!(
            (first.lid, first.sm_lid, first.lmc),
            (Some(13), Some(1), Some(0))
        );
        assert_eq!(first.state, Some(PortState::Active));
        assert_eq!(first.physical_state, Some(PhysState::LinkUp));
        assert_eq!(first.netdev.as_deref(), Some("ibp12s0"));
        assert_eq!(first.link_layer(), Some(LinkLayer::Infiniband));
        assert_eq!(ports[1].state, Some(PortState::Down));
        assert_eq!(ports[1].physical_state, Some(PhysState::Disabled));
        assert_eq!(ports[1].link_layer(), Some(LinkLayer::Ethernet));
        assert_eq!(ports[2].device, "mlx5_2");
        assert_eq!(ports[2].state, Some(PortState::Initializing));
        assert_eq!(ports[2].sm_lid, Some(0));
        assert_eq!(ports[2].span.last_line, 4, "the caps line is the port's");
        assert_eq!((ports[3].device.as_str(), ports[3].port), ("mlx5_3", 2));
        assert_eq!(ports[3].physical_state, Some(PhysState::LinkErrorRecovery));
    }

    #[test]
    fn a_cut_line_keeps_what_it_printed_and_tells_no_link_layer() {
        let p = parse(&lines_of("link mlx5_0/1 subnet_prefix"));
        let port = &p.value.ports[0];
        assert_eq!(port.state, None);
        assert_eq!(port.link_layer(), None);
        let p = parse(&lines_of("link mlx5_0/1 state DOWN physical_state"));
        assert_eq!(p.value.ports[0].state, Some(PortState::Down));
        assert_eq!(p.value.ports[0].physical_state, None);
    }

    #[test]
    fn the_commands_that_print_it() {
        let is = |c: &str| is_rdma_link(&c.split_whitespace().collect::<Vec<_>>());
        assert!(is("rdma link") && is("rdma link show") && is("rdma -d link show mlx5_0/1"));
        assert!(is("rdma li sh") && is("rdma link list"));
        assert!(!is("rdma resource show") && !is("rdma link add rxe0 type rxe netdev eth0"));
        assert!(!is("rdma") && !is("ip link show"));
    }

    #[test]
    fn detection_wants_a_field_of_the_tool_after_the_port() {
        assert!(detect(&lines_of(
            "link mlx5_0/1 state ACTIVE physical_state LINK_UP\n"
        ))
        .is_some());
        assert!(detect(&lines_of(
            "8/1: mlx5_bond_0/1: state ACTIVE physical_state LINK_UP netdev reth0\n"
        ))
        .is_some());
        // `ip link`'s second line, prose, a date: not ports.
        assert!(detect(&lines_of(
            "link/ether 02:42:ac:11:00:02 brd ff:ff:ff:ff:ff:ff\n"
        ))
        .is_none());
        assert!(detect(&lines_of("link budget is 3 dB\n")).is_none());
        assert!(detect(&lines_of("12/05: meeting notes\n")).is_none());
    }

    #[test]
    fn lines_that_are_not_ports_are_reported() {
        let p = parse(&lines_of(
            "link mlx5_0/1 state ACTIVE physical_state LINK_UP\nsomething else\nlink mlx5_0/1 lid x state ACTIVE\n",
        ));
        let covered = |n| p.warnings.iter().any(|w| w.span.contains(n));
        assert!(covered(2) && covered(3), "{:?}", p.warnings);
        assert_eq!(p.value.ports.len(), 2);
        assert_eq!(p.value.ports[1].state, Some(PortState::Active));
    }

    proptest::proptest! {
        /// Any words after any port: no panic, and a port per port line.
        #[test]
        fn any_words_are_read_without_panic(
            words in proptest::collection::vec("[a-z_]{1,14}|[0-9]{1,6}|[A-Z_]{2,10}", 0..12)
        ) {
            let text = format!("link mlx5_0/1 state ACTIVE {}\n", words.join(" "));
            let p = parse(&lines_of(&text));
            proptest::prop_assert_eq!(p.value.ports.len(), 1);
        }
    }
}
