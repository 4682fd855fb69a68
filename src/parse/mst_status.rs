//! `mst status` (NVIDIA Firmware Tools; mstflint's `mst`). With `-v`
//! (`-vv` prints the same table):
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
//! read by the shapes of its words in the columns' order. Without `-v`
//! mstflint prints the first two columns only.
//!
//! Plain `mst status` of MFT's kernel modules lists each device with how it
//! is reached, its PCI function and its chip revision, and after `mst cable
//! add` the cable devices:
//!
//! ```text
//! MST devices:
//! ------------
//! /dev/mst/mt4123_pciconf0         - PCI configuration cycles access.
//!                                    domain:bus:dev.fn=0000:3b:00.0 addr.reg=88 data.reg=92 cr_bar.gw_offset=-1
//!                                    Chip revision is: 00
//!
//! Cables:
//! -------------------
//! mt4123_pciconf0_cable_0
//! ```
//!
//! What a form does not print (the device type, RDMA device, interfaces and
//! NUMA node of a plain entry) stays `None`. mstflint names its lists
//! `Cable devices:` and `Inband devices:`.

use crate::model::mst_status::{MstDevice, MstStatus};
use crate::parse::text::{read_each_line, Unread};
use crate::parse::{Block, Line, Parsed, Spec};

pub(crate) const FORMAT: Spec<MstStatus> = Spec {
    command: |argv| {
        argv.first().is_some_and(|c| c.ends_with("mst"))
            && argv.get(1).is_some_and(|a| *a == "status")
    },
    starts: |b| matches!(b, b'M' | b'P' | b'D' | b'C' | b'I'),
    detect,
    parse,
    summary,
    attach_command: None,
    labels: &["cables"],
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
    // Without `-v` mstflint prints the MST column alone: taken only in
    // the shapes it has (`ConnectX7(rev:0)  /dev/mst/mt4129_pciconf0`),
    // so two words of prose are not a device.
    if let [w] = rest {
        let typed = device_type.contains("(rev:") || *device_type == "NA";
        let mst_like = w.starts_with("/dev/mst/") || w.starts_with("mt");
        if typed && mst_like && is_name(w) && !is_pci(w) {
            return Some(MstDevice {
                device_type: Some((*device_type).to_owned()),
                mst: (!is_none_word(w)).then(|| (*w).to_owned()),
                pci: None,
                access: None,
                chip_revision: None,
                rdma: None,
                netdevs: Vec::new(),
                numa: None,
                span: line.span(),
            });
        }
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
        device_type: Some((*device_type).to_owned()),
        mst,
        pci: Some((*pci).to_owned()),
        access: None,
        chip_revision: None,
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
        "PCI devices:" | "MST devices:" => "devices",
        "Inband devices:" => "inband",
        "Cables:" | "Cable devices:" if lists_cables(lines) => "cables",
        _ if is_header(t) => "table",
        _ => return None,
    };
    Some(Block::keyed(key))
}

/// `Cables:` is a common word: the list is MST's when a line of dashes
/// and then a cable device (`mt4123_pciconf0_cable_0`) follow it.
fn lists_cables(lines: &[Line<'_>]) -> bool {
    let mut next = lines
        .iter()
        .skip(1)
        .map(|l| l.text().trim())
        .filter(|t| !t.is_empty());
    next.next().is_some_and(is_rule) && next.next().is_some_and(is_cable)
}

/// A cable device: `mt4123_pciconf0_cable_0`, `/dev/mst/mt52100_pci_cr0_cable_1`.
fn is_cable(t: &str) -> bool {
    is_name(t)
        && t.rsplit_once("_cable_")
            .is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// A plain entry's first line: `/dev/mst/mt4123_pciconf0  - PCI
/// configuration cycles access.`; the MST device and how it is reached.
fn entry(t: &str) -> Option<(&str, &str)> {
    let (mst, access) = t.split_once(" - ")?;
    let mst = mst.trim();
    let access = access.trim();
    let access = access.strip_suffix('.').unwrap_or(access).trim_end();
    (mst.starts_with("/dev/mst/") && is_name(mst) && !access.is_empty()).then_some((mst, access))
}

/// Where the reader is in the output.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
enum Part {
    #[default]
    Start,
    Modules,
    Devices,
    Cables,
    Inband,
}

/// Reads `mst status -v` output.
#[must_use]
pub fn parse(lines: &[Line<'_>]) -> Parsed<MstStatus> {
    let mut part = Part::Start;
    read_each_line(lines, |line, out: &mut MstStatus, unread: &mut Unread| {
        let t = line.text().trim();
        if t == "MST modules:" {
            part = Part::Modules;
        } else if t == "PCI devices:" || t == "MST devices:" || is_header(t) {
            part = Part::Devices;
        } else if t == "Cables:" || t == "Cable devices:" {
            part = Part::Cables;
        } else if t == "Inband devices:" {
            part = Part::Inband;
        } else if is_rule(t) {
        } else if part == Part::Modules && t.starts_with("MST ") {
            out.modules.push(t.to_owned());
        } else if part == Part::Cables && is_name(t) {
            out.cables.push(t.to_owned());
        } else if part == Part::Inband && is_name(t) {
            out.inband.push(t.to_owned());
        } else if let Some((mst, access)) = entry(t) {
            part = Part::Devices;
            out.devices.push(MstDevice {
                device_type: None,
                mst: Some(mst.to_owned()),
                pci: None,
                access: Some(access.to_owned()),
                chip_revision: None,
                rdma: None,
                netdevs: Vec::new(),
                numa: None,
                span: line.span(),
            });
        } else if let Some(d) = detail(t, out.devices.last_mut()) {
            d.span = d.span.join(line.span());
        } else if let Some(d) = row(t, line) {
            part = Part::Devices;
            out.devices.push(d);
        } else {
            unread.line(line, "not a line of `mst status`");
        }
    })
}

/// A plain entry's indented line, read into the entry above it (`last`):
/// `domain:bus:dev.fn=0000:3b:00.0 addr.reg=88 …` (its PCI function) or
/// `Chip revision is: 00`. `None` when the line is neither or there is no
/// plain entry above it to take it.
fn detail<'m>(t: &str, last: Option<&'m mut MstDevice>) -> Option<&'m mut MstDevice> {
    let d = last.filter(|d| d.access.is_some())?;
    if let Some(rest) = t.strip_prefix("domain:bus:dev.fn=") {
        let pci = rest.split_whitespace().next().filter(|p| is_pci(p))?;
        if d.pci.is_some() {
            return None;
        }
        d.pci = Some(pci.to_owned());
    } else if let Some(rev) = t.strip_prefix("Chip revision is:") {
        let rev = rev.trim();
        if rev.is_empty()
            || d.chip_revision.is_some()
            || !rev.bytes().all(|b| b.is_ascii_hexdigit())
        {
            return None;
        }
        d.chip_revision = Some(rev.to_owned());
    } else {
        return None;
    }
    Some(d)
}

/// `8 device(s): 8 with an RDMA device` for people, with the cable devices
/// when listed (`, 2 cable device(s)`).
#[must_use]
pub fn summary(m: &MstStatus) -> String {
    let rdma = m.devices.iter().filter(|d| d.rdma.is_some()).count();
    let mut s = format!("{} device(s): {rdma} with an RDMA device", m.devices.len());
    if !m.cables.is_empty() {
        s.push_str(&format!(", {} cable device(s)", m.cables.len()));
    }
    s
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
        assert_eq!(d.device_type.as_deref(), Some("ConnectX7(rev:0)"));
        assert_eq!(d.mst.as_deref(), Some("/dev/mst/mt4129_pciconf1"));
        assert_eq!(d.pci.as_deref(), Some("ba:00.0"));
        assert_eq!(d.rdma.as_deref(), Some("mlx5_7"));
        assert_eq!(d.netdevs, vec!["ibp186s0".to_owned()]);
        assert_eq!(d.numa, Some(1));
        assert_eq!(m.devices[1].mst, None, "NA: modules not loaded");
        assert_eq!(m.devices[1].numa, Some(0));
        assert_eq!(m.devices[2].pci.as_deref(), Some("0000:1f:00.1"));
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

    /// Plain `mst status` of MFT's kernel modules, shaped as pasted in
    /// public install notes (values changed).
    const PLAIN: &str = "MST modules:
------------
    MST PCI module loaded
    MST PCI configuration module loaded

MST devices:
------------
/dev/mst/mt4123_pciconf0         - PCI configuration cycles access.
                                   domain:bus:dev.fn=0000:4b:00.0 addr.reg=88 data.reg=92 cr_bar.gw_offset=-1
                                   Chip revision is: 00
/dev/mst/mt4123_pci_cr0          - PCI direct access.
                                   domain:bus:dev.fn=0000:4b:00.0 bar=0xd2000000 size=0x2000000
                                   Chip revision is: 01

Cables:
-------------------
mt4123_pciconf0_cable_0

mt4123_pciconf0_cable_1
";

    #[test]
    fn reads_plain_mst_status_with_its_cables() {
        let p = parse(&lines_of(PLAIN));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let m = &p.value;
        assert_eq!(
            m.modules,
            [
                "MST PCI module loaded",
                "MST PCI configuration module loaded"
            ]
        );
        assert_eq!(m.devices.len(), 2);
        let d = &m.devices[0];
        assert_eq!(d.mst.as_deref(), Some("/dev/mst/mt4123_pciconf0"));
        assert_eq!(d.access.as_deref(), Some("PCI configuration cycles access"));
        assert_eq!(d.pci.as_deref(), Some("0000:4b:00.0"));
        assert_eq!(d.chip_revision.as_deref(), Some("00"));
        assert_eq!((d.span.first_line, d.span.last_line), (8, 10));
        assert_eq!(d.device_type, None, "plain mst status prints no type");
        assert_eq!((d.rdma.clone(), d.numa), (None, None));
        assert_eq!(m.devices[1].access.as_deref(), Some("PCI direct access"));
        assert_eq!(m.devices[1].chip_revision.as_deref(), Some("01"));
        assert_eq!(
            m.cables,
            ["mt4123_pciconf0_cable_0", "mt4123_pciconf0_cable_1"]
        );
        assert_eq!(
            summary(m),
            "2 device(s): 0 with an RDMA device, 2 cable device(s)"
        );
    }

    #[test]
    fn a_plain_entry_without_its_details_keeps_them_unknown() {
        // Cut after the first line; a second `Chip revision` is not its.
        let p = parse(&lines_of(
            "MST devices:\n------------\n/dev/mst/mt4115_pciconf0         - PCI configuration cycles access.\n...\n",
        ));
        let d = &p.value.devices[0];
        assert_eq!((d.pci.clone(), d.chip_revision.clone()), (None, None));
        assert_eq!(p.warnings.len(), 1, "the `...` line is unread");
        let p = parse(&lines_of(
            "MST devices:\n/dev/mst/mt4115_pciconf0 - PCI configuration cycles access.\n   Chip revision is: 00\n   Chip revision is: 01\n",
        ));
        assert_eq!(p.value.devices[0].chip_revision.as_deref(), Some("00"));
        assert_eq!(p.warnings.len(), 1);
        assert!(p.warnings[0].span.contains(4));
    }

    #[test]
    fn reads_mstflints_plain_rows_and_lists() {
        let p = parse(&lines_of(
            "PCI devices:
------------
ConnectX6DX(rev:0)      /dev/mst/mt4125_pciconf0

Inband devices:
---------------
/dev/mst/CA_MT4123_gpu-b2_HCA-1_lid-0x0011

Cable devices:
---------------
mt4125_pciconf0_cable_0
",
        ));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let m = &p.value;
        assert_eq!(m.devices.len(), 1);
        assert_eq!(
            m.devices[0].device_type.as_deref(),
            Some("ConnectX6DX(rev:0)")
        );
        assert_eq!(
            m.devices[0].mst.as_deref(),
            Some("/dev/mst/mt4125_pciconf0")
        );
        assert_eq!(m.devices[0].pci, None);
        assert_eq!(m.inband, ["/dev/mst/CA_MT4123_gpu-b2_HCA-1_lid-0x0011"]);
        assert_eq!(m.cables, ["mt4125_pciconf0_cable_0"]);
        // Two words of prose are not a row.
        assert_eq!(
            parse(&lines_of("PCI devices:\nSee below\n")).warnings.len(),
            1
        );
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
        assert!(detect(&lines_of("MST devices:\n")).is_some());
        assert!(detect(&lines_of("Cables:\n-------\nmt4123_pciconf0_cable_0\n")).is_some());
        // `Cables:` alone is a common word.
        assert!(detect(&lines_of("Cables:\n-------\nCat6, 3 m\n")).is_none());
        assert!(detect(&lines_of("Cables:\nmt4123_pciconf0_cable_0\n")).is_none());
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
