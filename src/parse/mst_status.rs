//! `mst status -v` (NVIDIA Firmware Tools; `-vv` prints the same table):
//!
//! ```text
//! MST modules:
//! ------------
//!     MST PCI module is not loaded
//!     MST PCI configuration module loaded
//! PCI devices:
//! ------------
//! DEVICE_TYPE             MST                           PCI       RDMA            NET                                     NUMA
//! ConnectX7(rev:0)        /dev/mst/mt4129_pciconf0      ba:00.0   mlx5_0          net-ibp186s0                            1
//!
//! ```
//!
//! Rows are padded columns, one blank line after each; a column the tool has
//! nothing for is `NA` or left blank (the MST device when its modules are
//! not loaded, the RDMA device on VMware), and `NET` may list several
//! interfaces joined by commas. Blank columns shift the words, so a row is
//! read by the shapes of its words in the columns' order.

use crate::model::mst_status::{MstDevice, MstStatus};
use crate::parse::text::{read_each_line, Unread};
use crate::parse::{Block, Line, Parsed, Spec};

pub(crate) const FORMAT: Spec<MstStatus> = Spec {
    command: |argv| {
        argv.first().is_some_and(|c| c.ends_with("mst"))
            && argv.get(1).is_some_and(|a| *a == "status")
    },
    starts: |b| matches!(b, b'M' | b'P' | b'D'),
    detect,
    parse,
    summary,
    attach_command: None,
    labels: &[],
};

/// The table's header: `DEVICE_TYPE MST PCI RDMA NET NUMA`.
fn is_header(t: &str) -> bool {
    let mut w = t.split_whitespace();
    w.next() == Some("DEVICE_TYPE") && w.next() == Some("MST") && w.next() == Some("PCI")
}

/// A line of dashes (the underline of `MST modules:`, `PCI devices:`).
fn is_rule(t: &str) -> bool {
    !t.is_empty() && t.bytes().all(|b| b == b'-')
}

/// A PCI function: `ba:00.0` or `0000:ba:00.0`.
fn is_pci(t: &str) -> bool {
    let Some((bus_dev, function)) = t.rsplit_once('.') else {
        return false;
    };
    let groups: Vec<&str> = bus_dev.split(':').collect();
    matches!(groups.len(), 2 | 3)
        && groups
            .iter()
            .all(|g| !g.is_empty() && g.len() <= 4 && g.bytes().all(|b| b.is_ascii_hexdigit()))
        && !function.is_empty()
        && function.len() <= 2
        && function.bytes().all(|b| b.is_ascii_hexdigit())
}

/// A device type: `ConnectX7(rev:0)`, `BlueField3(rev:1)`.
fn is_device_type(t: &str) -> bool {
    t.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
        && t.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '(' | ')' | ':' | '_' | '-' | '.'))
}

/// A name the tool prints for a column (an MST or RDMA device).
fn is_name(t: &str) -> bool {
    !t.is_empty()
        && t.len() <= 96
        && t.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':' | '/' | '@'))
}

/// What the tool prints for a column it has nothing for.
fn is_none_word(t: &str) -> bool {
    matches!(t, "NA" | "N/A" | "-")
}

/// Reads one table row; `None` when the line is not one.
fn row(t: &str, line: &Line<'_>) -> Option<MstDevice> {
    let words: Vec<&str> = t.split_whitespace().collect();
    let (device_type, rest) = words.split_first()?;
    if !is_device_type(device_type) {
        return None;
    }
    // Everything before the PCI address is the MST column.
    let at = rest.iter().position(|w| is_pci(w))?;
    let (before, after) = rest.split_at(at);
    let mst = match before {
        [] => None,
        [w] if is_none_word(w) => None,
        [w] if is_name(w) => Some((*w).to_owned()),
        _ => return None,
    };
    let (pci, mut after) = after.split_first()?;
    // The NUMA node is the last column and the only number after the PCI
    // address (`-1` on a machine without NUMA information).
    let mut numa = None;
    if let Some((last, before)) = after.split_last() {
        if *last == "-1" || (!last.is_empty() && last.bytes().all(|b| b.is_ascii_digit())) {
            numa = last.parse().ok();
            after = before;
        }
    }
    let mut rdma = None;
    let mut netdevs = Vec::new();
    for (i, w) in after.iter().enumerate() {
        if let Some(nets) = w.strip_prefix("net-") {
            if !netdevs.is_empty() {
                return None;
            }
            // `net-vmnic1,netvmnic1000102`: each after its `net-`/`net`.
            netdevs = nets
                .split(',')
                .filter(|n| !n.is_empty())
                .map(|n| n.strip_prefix("net-").unwrap_or(n).to_owned())
                .collect();
        } else if is_none_word(w) {
            // A column the tool had nothing for.
        } else if i == 0 && is_name(w) {
            rdma = Some((*w).to_owned());
        } else {
            return None;
        }
    }
    Some(MstDevice {
        device_type: (*device_type).to_owned(),
        mst,
        pci: (*pci).to_owned(),
        rdma,
        netdevs,
        numa,
        span: line.span(),
    })
}

/// `MST modules:`, `PCI devices:` or the table's header opens the output.
/// Each is its own key: the three in turn are one output, and a second
/// `MST modules:` a second run.
fn detect(lines: &[Line<'_>]) -> Option<Block> {
    let t = lines.first()?.text().trim();
    let key = match t {
        "MST modules:" => "modules",
        "PCI devices:" => "devices",
        _ if is_header(t) => "table",
        _ => return None,
    };
    Some(Block::keyed(key))
}

/// Where the reader is in the output.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
enum Part {
    #[default]
    Start,
    Modules,
    Devices,
}

/// Reads `mst status -v` output.
#[must_use]
pub fn parse(lines: &[Line<'_>]) -> Parsed<MstStatus> {
    let mut part = Part::Start;
    read_each_line(lines, |line, out: &mut MstStatus, unread: &mut Unread| {
        let t = line.text().trim();
        if t == "MST modules:" {
            part = Part::Modules;
        } else if t == "PCI devices:" || is_header(t) {
            part = Part::Devices;
        } else if is_rule(t) {
        } else if part == Part::Modules && t.starts_with("MST ") {
            out.modules.push(t.to_owned());
        } else if let Some(d) = row(t, line) {
            part = Part::Devices;
            out.devices.push(d);
        } else {
            unread.line(line, "not a line of `mst status -v`");
        }
    })
}

/// `8 device(s): 8 with an RDMA device` for people.
#[must_use]
pub fn summary(m: &MstStatus) -> String {
    let rdma = m.devices.iter().filter(|d| d.rdma.is_some()).count();
    format!("{} device(s): {rdma} with an RDMA device", m.devices.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::lines_of;

    #[test]
    fn reads_the_verbose_table() {
        let p = parse(&lines_of(
            "MST modules:
------------
    MST PCI module is not loaded
    MST PCI configuration module loaded
PCI devices:
------------
DEVICE_TYPE             MST                           PCI       RDMA            NET                                     NUMA  
ConnectX7(rev:0)        /dev/mst/mt4129_pciconf1      ba:00.0   mlx5_7          net-ibp186s0                            1     

ConnectX6LX(rev:0)      NA       41:00.1   mlx5_bond_0     net-bond0                               0     

BlueField3(rev:1)       /dev/mst/mt41692_pciconf0.1   0000:1f:00.1   mlx5_2   net-ens12f1np1   -1

",
        ));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let m = &p.value;
        assert_eq!(m.modules.len(), 2);
        assert_eq!(m.devices.len(), 3);
        let d = &m.devices[0];
        assert_eq!(d.device_type, "ConnectX7(rev:0)");
        assert_eq!(d.mst.as_deref(), Some("/dev/mst/mt4129_pciconf1"));
        assert_eq!(d.pci, "ba:00.0");
        assert_eq!(d.rdma.as_deref(), Some("mlx5_7"));
        assert_eq!(d.netdevs, vec!["ibp186s0".to_owned()]);
        assert_eq!(d.numa, Some(1));
        assert_eq!(m.devices[1].mst, None, "NA: modules not loaded");
        assert_eq!(m.devices[1].numa, Some(0));
        assert_eq!(m.devices[2].pci, "0000:1f:00.1");
        assert_eq!(m.devices[2].numa, None, "-1: no NUMA information");
        assert_eq!(summary(m), "3 device(s): 3 with an RDMA device");
    }

    #[test]
    fn reads_rows_with_blank_columns_and_several_interfaces() {
        let p = parse(&lines_of(
            "PCI devices:
DEVICE_TYPE         MST                PCI        RDMA    NET                           NUMA
ConnectX4(rev:0)    mt4115_pciconf0    03:00.0            net-vmnic4
ConnectX3Pro(rev:0) mt4103_pciconf0    05:00.0            net-vmnic1,netvmnic1000102
ConnectX4LX(rev:0)        pci0:2:0:0  02:00.0   mlx5_0
",
        ));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let d = &p.value.devices;
        assert_eq!((d[0].rdma.clone(), d[0].numa), (None, None));
        assert_eq!(d[0].netdevs, vec!["vmnic4".to_owned()]);
        assert_eq!(
            d[1].netdevs,
            vec!["vmnic1".to_owned(), "netvmnic1000102".to_owned()]
        );
        assert_eq!(d[2].mst.as_deref(), Some("pci0:2:0:0"));
        assert_eq!(d[2].rdma.as_deref(), Some("mlx5_0"));
    }

    #[test]
    fn other_lines_are_unread() {
        let p = parse(&lines_of(
            "PCI devices:\nConnectX7(rev:0) /dev/mst/mt4129_pciconf0 ba:00.0 mlx5_0 net-ib0 1\nthe card is hot\n",
        ));
        assert_eq!(p.value.devices.len(), 1);
        assert_eq!(p.warnings.len(), 1);
        assert!(p.warnings[0].span.contains(3));
    }

    #[test]
    fn detection_wants_a_heading_or_the_header() {
        assert!(detect(&lines_of("MST modules:\n")).is_some());
        assert!(detect(&lines_of("PCI devices:\n")).is_some());
        assert!(detect(&lines_of("DEVICE_TYPE  MST  PCI  RDMA  NET  NUMA\n")).is_some());
        assert!(detect(&lines_of("MST devices are fine\n")).is_none());
    }

    proptest::proptest! {
        /// Any words around a PCI address: no panic, at most one row a line.
        #[test]
        fn any_row_is_read_without_panic(head in "\\PC{0,30}", tail in "\\PC{0,40}") {
            let text = format!("{head} ba:00.0 {tail}\n");
            let p = parse(&lines_of(&text));
            proptest::prop_assert!(p.value.devices.len() <= 1);
            proptest::prop_assert!(p.value.devices.len() + p.warnings.len() <= 1);
        }
    }
}
