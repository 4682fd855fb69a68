//! `ibdev2netdev` (NVIDIA/Mellanox `mlnx-tools`): one line per RDMA port
//! that has a network interface.
//!
//! The script prints, for each interface on an RDMA device,
//!
//! ```text
//! mlx5_0 port 1 ==> ib0 (Up)
//! 0000:3b:00.0 mlx5_0 (MT4123 - MCX653105A-HDAT) ConnectX-6 VPI adapter card fw 20.28.1002 port 1 (ACTIVE) ==> ib0 (Up)
//! ```
//!
//! the second with `-v`. `(Up)`/`(Down)` is the interface's carrier
//! (`/sys/class/net/<netdev>/carrier`, `(NA)` without one), not the RDMA
//! port's state; `-v` adds the port's state from
//! `/sys/class/infiniband/<dev>/ports/<n>/state`, padded to six characters
//! inside its parentheses (`(DOWN  )`). Only that state is the port's.

use crate::model::ib::PortState;
use crate::model::ibdev2netdev::{Ibdev2netdev, NetdevPort};
use crate::parse::text::{read_each_line, Unread};
use crate::parse::{Block, Line, Parsed, Spec};

pub(crate) const FORMAT: Spec<Ibdev2netdev> = Spec {
    command: |argv| argv.first().is_some_and(|c| c.ends_with("ibdev2netdev")),
    starts: |b| b.is_ascii_alphanumeric(),
    detect,
    parse,
    summary,
    attach_command: None,
    labels: &[],
};

/// A device or interface name: one word of the characters the kernel and
/// udev use.
fn is_name(t: &str) -> bool {
    !t.is_empty()
        && t.len() <= 64
        && t.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':' | '@'))
}

/// A PCI address as `-v` prints it first (`0000:3b:00.0`).
fn is_pci_address(t: &str) -> bool {
    t.contains(':')
        && t.contains('.')
        && t.chars()
            .all(|c| c.is_ascii_hexdigit() || matches!(c, ':' | '.'))
}

/// The text inside a leading `( … )`, trimmed, and what follows it.
fn in_parentheses(t: &str) -> Option<(&str, &str)> {
    let rest = t.trim_start().strip_prefix('(')?;
    let (inside, after) = rest.split_once(')')?;
    Some((inside.trim(), after))
}

/// Reads one port line; `None` when the line is not one.
fn port_line(t: &str, line: &Line<'_>) -> Option<NetdevPort> {
    let (left, right) = t.split_once("==>")?;
    let (head, after_port) = left.trim_end().rsplit_once(" port ")?;
    let mut after = after_port.trim_start().splitn(2, char::is_whitespace);
    let port: u32 = after.next()?.parse().ok()?;
    let port_state = after
        .next()
        .and_then(in_parentheses)
        .map(|(state, _)| PortState::parse(state));
    let (first, after_first) = next_word(head)?;
    let (pci_address, device, rest) = if is_pci_address(first) {
        let (device, rest) = next_word(after_first)?;
        (Some(first.to_owned()), device, rest)
    } else {
        (None, first, after_first)
    };
    if !is_name(device) {
        return None;
    }
    let mut right = right.trim().splitn(2, char::is_whitespace);
    let netdev = right.next().filter(|n| is_name(n))?;
    let carrier = right
        .next()
        .and_then(in_parentheses)
        .and_then(|(state, _)| match state {
            "Up" => Some(true),
            "Down" => Some(false),
            _ => None,
        });
    // `-v`: `(MT4123 - MCX653105A-HDAT) <description> fw <version>`.
    let (ids, description) = in_parentheses(rest).unwrap_or(("", rest));
    let (ca_type, part_number) = match ids.split_once(" - ") {
        Some((ca, part)) => (known(ca), known(part)),
        None => (known(ids), None),
    };
    let firmware = description
        .rsplit_once(" fw ")
        .or_else(|| {
            description
                .trim_start()
                .strip_prefix("fw ")
                .map(|v| ("", v))
        })
        .and_then(|(_, v)| v.split_whitespace().next())
        .and_then(known);
    Some(NetdevPort {
        device: device.to_owned(),
        port,
        netdev: netdev.to_owned(),
        carrier,
        port_state,
        pci_address,
        ca_type,
        part_number,
        firmware,
        span: line.span(),
    })
}

/// The first word of `t` and the text after it.
fn next_word(t: &str) -> Option<(&str, &str)> {
    let t = t.trim_start();
    let end = t.find(char::is_whitespace).unwrap_or(t.len());
    let (word, rest) = t.split_at(end);
    (!word.is_empty()).then_some((word, rest))
}

/// A `-v` field as printed, unless the script had nothing to print (`NA`).
fn known(t: &str) -> Option<String> {
    let t = t.trim();
    (!t.is_empty() && t != "NA").then(|| t.to_owned())
}

/// A port line that ends the way the script ends every line, with the
/// interface's carrier in parentheses: prose with an arrow in it is not
/// taken for output (a cut last line is still read once a block began).
fn detect(lines: &[Line<'_>]) -> Option<Block> {
    let first = lines.first()?;
    let t = first.text().trim();
    // Most lines asked about hold no `>`: a byte search before the arrow's.
    memchr::memchr(b'>', t.as_bytes())?;
    let (_, right) = t.split_once("==>")?;
    let carrier = right.split_whitespace().nth(1)?;
    if !matches!(carrier, "(Up)" | "(Down)" | "(NA)") {
        return None;
    }
    let p = port_line(t, first)?;
    // Each port is its own key: the same port again is a second snapshot.
    Some(Block::keyed(format!("{}/{}", p.device, p.port)))
}

/// Reads `ibdev2netdev` output.
#[must_use]
pub fn parse(lines: &[Line<'_>]) -> Parsed<Ibdev2netdev> {
    read_each_line(
        lines,
        |line, out: &mut Ibdev2netdev, unread: &mut Unread| match port_line(
            line.text().trim(),
            line,
        ) {
            Some(port) => out.ports.push(port),
            None => unread.line(line, "not an `ibdev2netdev` port line"),
        },
    )
}

/// `4 port(s): 3 interface(s) Up` for people, with the ports' states
/// when `-v` printed them.
#[must_use]
pub fn summary(m: &Ibdev2netdev) -> String {
    let up = m.ports.iter().filter(|p| p.carrier == Some(true)).count();
    // Lines without `(Up)`/`(Down)` (an old ibdev2netdev, or one trimmed
    // in a note) say nothing of the interface: "0 Up" would read as all
    // down.
    let told = m.ports.iter().filter(|p| p.carrier.is_some()).count();
    let mut s = match told {
        0 => format!("{} port(s), interface states not printed", m.ports.len()),
        n if n == m.ports.len() => format!("{n} port(s): {up} interface(s) Up"),
        n => format!(
            "{} port(s): {up} interface(s) Up of the {n} whose state is printed",
            m.ports.len()
        ),
    };
    let with_state = m.ports.iter().filter(|p| p.port_state.is_some()).count();
    if with_state > 0 {
        let active = m
            .ports
            .iter()
            .filter(|p| p.port_state == Some(PortState::Active))
            .count();
        s.push_str(&format!(", {active} of {with_state} port(s) ACTIVE"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ib::LinkLayer;
    use crate::parse::lines_of;

    #[test]
    fn the_summary_does_not_count_unprinted_states_as_down() {
        let p = parse(&lines_of("mlx5_0 port 1 ==> ib0\nmlx5_1 port 1 ==> ib1\n"));
        assert_eq!(summary(&p.value), "2 port(s), interface states not printed");
        let p = parse(&lines_of(
            "mlx5_0 port 1 ==> ib0 (Up)\nmlx5_1 port 1 ==> ib1\n",
        ));
        assert_eq!(
            summary(&p.value),
            "2 port(s): 1 interface(s) Up of the 1 whose state is printed"
        );
    }

    #[test]
    fn reads_both_forms() {
        let p = parse(&lines_of(
            "mlx5_0 port 1 ==> ib0 (Up)
mlx5_1 port 1 ==> ib1 (Down)
mlx5_2 port 1 ==> ens2f0np0 (NA)
0000:af:00.0 mlx5_3 (MT4129 - MCX75310AAS-NEAT) NVIDIA ConnectX-7 HHHL adapter card fw 28.39.1002 port 1 (DOWN  ) ==> ibp175s0 (Down)
",
        ));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let ports = &p.value.ports;
        assert_eq!(ports.len(), 4);
        assert_eq!((ports[0].device.as_str(), ports[0].port), ("mlx5_0", 1));
        assert_eq!(
            (ports[0].netdev.as_str(), ports[0].carrier),
            ("ib0", Some(true))
        );
        assert_eq!(
            ports[0].port_state, None,
            "the plain form has no port state"
        );
        assert_eq!(ports[1].carrier, Some(false));
        assert_eq!(ports[2].carrier, None);
        let v = &ports[3];
        assert_eq!(v.device, "mlx5_3");
        assert_eq!(v.pci_address.as_deref(), Some("0000:af:00.0"));
        assert_eq!(v.ca_type.as_deref(), Some("MT4129"));
        assert_eq!(v.part_number.as_deref(), Some("MCX75310AAS-NEAT"));
        assert_eq!(v.firmware.as_deref(), Some("28.39.1002"));
        assert_eq!(v.port_state, Some(PortState::Down));
        assert_eq!(v.netdev, "ibp175s0");
    }

    #[test]
    fn an_ipoib_interface_name_tells_infiniband_any_other_ethernet() {
        let port = |netdev: &str| {
            let text = format!("mlx5_0 port 1 ==> {netdev} (Up)\n");
            parse(&lines_of(&text)).value.ports.remove(0)
        };
        assert_eq!(port("ib0").link_layer(), LinkLayer::Infiniband);
        assert_eq!(port("ibp12s0").link_layer(), LinkLayer::Infiniband);
        assert_eq!(port("ibs1f1").link_layer(), LinkLayer::Infiniband);
        assert_eq!(port("ens1f0np0").link_layer(), LinkLayer::Ethernet);
        assert_eq!(port("eth2").link_layer(), LinkLayer::Ethernet);
        assert_eq!(
            port("ibond0").link_layer(),
            LinkLayer::Ethernet,
            "not an IPoIB name"
        );
    }

    #[test]
    fn na_fields_of_the_verbose_form_are_unknown() {
        let p = parse(&lines_of(
            "0000:3b:00.0 mlx5_0 (NA - NA) fw NA port 1 (ACTIVE) ==> ib0 (Up)\n",
        ));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let v = &p.value.ports[0];
        assert_eq!(
            (v.ca_type.clone(), v.part_number.clone(), v.firmware.clone()),
            (None, None, None)
        );
        assert_eq!(v.port_state, Some(PortState::Active));
    }

    #[test]
    fn detection_wants_a_port_and_an_arrow() {
        assert!(detect(&lines_of("mlx5_0 port 1 ==> ib0 (Up)\n")).is_some());
        assert!(detect(&lines_of("mlx5_bond_0 port 1 ==> bond0 (Up)\n")).is_some());
        assert!(detect(&lines_of("the port 1 ==> is odd\n")).is_none());
        assert!(detect(&lines_of("mlx5_0 port 1 is down\n")).is_none());
        assert!(detect(&lines_of("a ==> b\n")).is_none());
        assert!(
            detect(&lines_of("mlx5_0 port 1 ==> ib0\n")).is_none(),
            "no carrier"
        );
        let cut = parse(&lines_of(
            "mlx5_0 port 1 ==> ib0 (Up)\nmlx5_1 port 1 ==> ib1\n",
        ));
        assert_eq!(cut.value.ports.len(), 2, "a cut last line is still read");
        assert_eq!(cut.value.ports[1].carrier, None);
    }

    #[test]
    fn a_line_that_is_not_a_port_is_reported() {
        let p = parse(&lines_of("mlx5_0 port 1 ==> ib0 (Up)\nmlx5_1 port 1 ==>\n"));
        assert_eq!(p.value.ports.len(), 1);
        assert!(
            p.warnings.iter().any(|w| w.span.contains(2)),
            "{:?}",
            p.warnings
        );
    }

    proptest::proptest! {
        /// Any text around the arrow: no panic, at most one port a line.
        #[test]
        fn any_line_is_read_without_panic(left in "\\PC{0,40}", right in "\\PC{0,20}") {
            let text = format!("{left} port 1 ==> {right}\n");
            let p = parse(&lines_of(&text));
            proptest::prop_assert!(p.value.ports.len() <= 1);
            proptest::prop_assert_eq!(p.value.ports.len() + usize::from(!p.warnings.is_empty()), 1);
        }
    }
}
