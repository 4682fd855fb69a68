//! `show_gids` and `mst status -v` read through the whole input layer, and
//! NC005 on what they show. The pastes are our own, in the layouts of the
//! OFED `show_gids` script (tab-separated rows, `n_gids_found=N` last) and
//! of MFT's `mst status -v` (padded columns, a blank line after each row),
//! as pasted in NVIDIA/nccl issue 1573 and
//! k8snetworkplumbingwg/sriov-network-device-plugin issue 601.

// Test code: a failed unwrap or index is a failed test.
#![allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]

use fabricscope::{analyze, AnalyzeOptions, Document, Kind, SectionData};

fn read(text: &str) -> Document {
    let doc = fabricscope::input::read(text, &Default::default()).expect("recognised");
    let lost = doc.unaccounted_lines(text);
    assert!(lost.is_empty(), "lines {lost:?} unaccounted for");
    doc
}

/// (rule, severity, subject device) of every finding.
fn findings(doc: Document) -> Vec<(String, String, Option<String>)> {
    analyze(&[doc], &AnalyzeOptions::default())
        .findings
        .into_iter()
        .map(|f| {
            (
                f.rule.to_string(),
                f.severity.to_string(),
                f.subject.device.clone(),
            )
        })
        .collect()
}

fn rules(f: &[(String, String, Option<String>)]) -> Vec<&str> {
    f.iter().map(|(r, _, _)| r.as_str()).collect()
}

const SHOW_GIDS: &str = "\
root@pod-7:/# show_gids
DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV
---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---
mlx5_0\t1\t4\tfe80:0000:0000:0000:a4ed:ccff:fe10:2201\t\t\tv1\tnet1
mlx5_0\t1\t5\tfe80:0000:0000:0000:a4ed:ccff:fe10:2201\t\t\tv2\tnet1
mlx5_0\t1\t6\t0000:0000:0000:0000:0000:ffff:0a62:000c\t10.98.0.12  \tv1\tnet1
mlx5_0\t1\t7\t0000:0000:0000:0000:0000:ffff:0a62:000c\t10.98.0.12  \tv2\tnet1
mlx5_1\t1\t4\tfe80:0000:0000:0000:9459:9bff:fe20:3302\t\t\tv1\tnet2
mlx5_1\t1\t5\tfe80:0000:0000:0000:9459:9bff:fe20:3302\t\t\tv2\tnet2
n_gids_found=6
";

#[test]
fn show_gids_is_read_whole_and_a_rail_without_an_address_is_nc005() {
    let doc = read(SHOW_GIDS);
    let s: Vec<_> = doc
        .sections
        .iter()
        .filter(|s| s.kind == Kind::ShowGids)
        .collect();
    assert_eq!(s.len(), 1);
    let SectionData::ShowGids(g) = &s[0].data else {
        panic!("not show_gids")
    };
    assert_eq!((g.gids.len(), g.gids_found), (6, Some(6)));
    let f = findings(doc);
    assert!(!rules(&f).contains(&"IN002"), "{f:?}");
    assert!(!rules(&f).contains(&"IN001"), "{f:?}");
    let nc: Vec<_> = f.iter().filter(|(r, _, _)| r == "NC005").collect();
    assert_eq!(nc.len(), 1, "{f:?}");
    assert_eq!(nc[0].1, "warning");
    assert_eq!(nc[0].2.as_deref(), Some("mlx5_1"));
}

#[test]
fn a_listing_cut_in_its_last_port_is_partial_and_that_port_unjudged() {
    // The paste ends inside mlx5_1's table: its v2 GID with an address may
    // have followed.
    let cut = SHOW_GIDS.lines().take(9).collect::<Vec<_>>().join("\n");
    let f = findings(read(&cut));
    assert!(rules(&f).contains(&"IN001"), "{f:?}");
    assert!(!rules(&f).contains(&"NC005"), "{f:?}");
    assert!(!rules(&f).contains(&"IN002"), "{f:?}");
    // Cut inside the last row's GID: that row is cut too, not unread.
    let cut = format!("{}\nmlx5_1\t1\t6\t0000:0000:0000:0000:00", cut);
    let f = findings(read(&cut));
    assert!(rules(&f).contains(&"IN001"), "{f:?}");
    assert!(!rules(&f).contains(&"IN002"), "{f:?}");
    assert!(!rules(&f).contains(&"NC005"), "{f:?}");
}

#[test]
fn an_infiniband_listing_is_not_judged() {
    let text = "\
$ show_gids
DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV
---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---
mlx5_0\t1\t0\tfe80:0000:0000:0000:a088:c203:0042:1f30\t\t\tv1\t
mlx5_1\t1\t0\tfe80:0000:0000:0000:a088:c203:0042:1f31\t\t\tv1\t
n_gids_found=2
";
    let f = findings(read(text));
    assert!(!rules(&f).contains(&"NC005"), "{f:?}");
    assert!(!rules(&f).contains(&"IN002"), "{f:?}");
}

#[test]
fn another_tool_saying_infiniband_keeps_a_port_unjudged() {
    // A port whose row names an interface (an IPoIB one) but which ibstat
    // calls InfiniBand.
    let text = "\
$ ibstat mlx5_0
CA 'mlx5_0'
\tCA type: MT4129
\tNumber of ports: 1
\tFirmware version: 28.39.1002
\tHardware version: 0
\tNode GUID: 0xa088c20300421f30
\tSystem image GUID: 0xa088c20300421f30
\tPort 1:
\t\tState: Active
\t\tPhysical state: LinkUp
\t\tRate: 400
\t\tBase lid: 12
\t\tLMC: 0
\t\tSM lid: 1
\t\tCapability mask: 0xa751e848
\t\tPort GUID: 0xa088c20300421f30
\t\tLink layer: InfiniBand
$ show_gids mlx5_0
DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV
---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---
mlx5_0\t1\t0\tfe80:0000:0000:0000:a088:c203:0042:1f30\t\t\tv1\tibp24s0
n_gids_found=1
";
    let f = findings(read(text));
    assert!(!rules(&f).contains(&"NC005"), "{f:?}");
}

const MST: &str = "\
[root@gpu-r3n07 ~]# mst status -v
MST modules:
------------
    MST PCI module is not loaded
    MST PCI configuration module loaded
PCI devices:
------------
DEVICE_TYPE             MST                           PCI       RDMA            NET                                     NUMA  
ConnectX7(rev:0)        /dev/mst/mt4129_pciconf1      e3:00.0   mlx5_9          net-ibp227s0                            1     

ConnectX7(rev:0)        /dev/mst/mt4129_pciconf0      1a:00.0   mlx5_0          net-ibp26s0                             0     

BlueField3(rev:1)       /dev/mst/mt41692_pciconf0.1   9f:00.1   mlx5_bond_0     net-bond0                               1     

[root@gpu-r3n07 ~]# ibdev2netdev
mlx5_0 port 1 ==> ibp26s0 (Up)
";

#[test]
fn mst_status_v_is_read_whole() {
    let doc = read(MST);
    let s: Vec<_> = doc
        .sections
        .iter()
        .filter(|s| s.kind == Kind::MstStatus)
        .collect();
    assert_eq!(
        s.len(),
        1,
        "{:?}",
        doc.sections.iter().map(|s| s.kind).collect::<Vec<_>>()
    );
    let SectionData::MstStatus(m) = &s[0].data else {
        panic!("not mst status")
    };
    assert_eq!(m.modules.len(), 2);
    assert_eq!(m.devices.len(), 3);
    assert_eq!(m.devices[1].rdma.as_deref(), Some("mlx5_0"));
    assert_eq!(m.devices[1].netdevs, vec!["ibp26s0".to_owned()]);
    assert_eq!(m.devices[1].numa, Some(0));
    assert_eq!(m.devices[2].pci.as_deref(), Some("9f:00.1"));
    assert_eq!(s[0].host.as_deref(), Some("gpu-r3n07"));
    let f = findings(doc);
    assert!(!rules(&f).contains(&"IN002"), "{f:?}");
    assert!(!rules(&f).contains(&"IN001"), "{f:?}");
}

#[test]
fn mst_status_with_modules_not_loaded_is_read_whole() {
    let text = "\
$ sudo mst status -vv
MST modules:
------------
    MST PCI module is not loaded
    MST PCI configuration module is not loaded
PCI devices:
------------
DEVICE_TYPE             MST      PCI       RDMA            NET                                     NUMA  
ConnectX6LX(rev:0)      NA       99:00.1   mlx5_bond_0     net-bond0                               1     

ConnectX7(rev:0)        NA       c3:00.0   mlx5_7          net-ibs114                              1     

";
    let doc = read(text);
    let SectionData::MstStatus(m) = &doc.sections[0].data else {
        panic!("not mst status: {:?}", doc.sections[0].kind)
    };
    assert_eq!(m.devices.len(), 2);
    assert_eq!(m.devices[0].mst, None);
    let f = findings(doc);
    assert!(!rules(&f).contains(&"IN002"), "{f:?}");
}

/// Plain `mst status` (MFT's kernel modules) after `mst cable add`, in the
/// shape of public install notes and SONiC's debug guide (values changed):
/// read whole as the `-v` table's kind, nothing unread.
#[test]
fn plain_mst_status_with_cables_is_read_whole() {
    let text = "\
[root@gpu-c04 ~]# mst status
MST modules:
------------
    MST PCI module is not loaded
    MST PCI configuration module loaded

MST devices:
------------
/dev/mst/mt4129_pciconf0         - PCI configuration cycles access.
                                   domain:bus:dev.fn=0000:1a:00.0 addr.reg=88 data.reg=92 cr_bar.gw_offset=-1
                                   Chip revision is: 00
/dev/mst/mt4129_pciconf1         - PCI configuration cycles access.
                                   domain:bus:dev.fn=0000:3c:00.0 addr.reg=88 data.reg=92 cr_bar.gw_offset=-1
                                   Chip revision is: 00

Cables:
-------------------
mt4129_pciconf0_cable_0

mt4129_pciconf1_cable_0

[root@gpu-c04 ~]# ibdev2netdev
mlx5_0 port 1 ==> ibp26s0 (Up)
";
    let doc = read(text);
    let SectionData::MstStatus(m) = &doc.sections[0].data else {
        panic!("not mst status: {:?}", doc.sections[0].kind)
    };
    assert_eq!(m.devices.len(), 2);
    assert_eq!(m.devices[1].pci.as_deref(), Some("0000:3c:00.0"));
    assert_eq!(m.devices[1].device_type, None);
    assert_eq!(m.cables.len(), 2);
    assert_eq!(doc.sections[0].host.as_deref(), Some("gpu-c04"));
    assert_eq!(doc.sections[1].kind, Kind::Ibdev2netdev);
    let f = findings(doc);
    assert!(!rules(&f).contains(&"IN002"), "{f:?}");
}

/// A switch's `mst status` and `mlxcables -d` as SONiC's debug guide prints
/// them (values changed): a line holding one space between an entry's
/// details, a blank line between list items and between a cable's fields.
#[test]
fn switch_mst_status_and_mlxcables_with_spaced_lines_are_read_whole() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/mft/switch_mst_status_mlxcables.txt"
    ))
    .unwrap();
    let doc = read(&text);
    let kinds: Vec<_> = doc.sections.iter().map(|s| s.kind).collect();
    assert_eq!(kinds, [Kind::MstStatus, Kind::Mlxcables]);
    let SectionData::MstStatus(m) = &doc.sections[0].data else {
        panic!("not mst status")
    };
    assert_eq!(m.devices.len(), 2);
    assert_eq!(m.devices[1].access.as_deref(), Some("PCI direct access"));
    assert_eq!(m.devices[1].chip_revision.as_deref(), Some("00"));
    assert_eq!(m.cables.len(), 3);
    let SectionData::Mlxcables(c) = &doc.sections[1].data else {
        panic!("not mlxcables")
    };
    assert_eq!(c.cables[0].temperature_c, Some(44.0));
    assert_eq!(c.cables[0].length_m, Some(5.0));
    let f = findings(doc);
    assert!(!rules(&f).contains(&"IN002"), "{f:?}");
    assert!(!rules(&f).contains(&"IN001"), "{f:?}");
}

/// `mlxcables` after `mst cable add`: its `-------- Cable EEPROM --------`
/// title is its own line, not a script's heading ending the section.
#[test]
fn mlxcables_is_read_whole() {
    let text = "\
root@gpu-b2:~# mlxcables
Querying Cables ....

Cable #1:
---------
Cable name    : mt4123_pciconf0_cable_0
>> No FW data to show
-------- Cable EEPROM --------
Identifier                     : QSFP56 (11h)
Vendor                         : Mellanox
Part number                    : MFS1S00-H003V
Temperature [c]                : 52 C
Length [m]                     : 3 m

Cable #2:
---------
Cable name    : mt4123_pciconf1_cable_0
>> No FW data to show
-------- Cable EEPROM --------
Identifier                     : QSFP56 (11h)
Vendor                         : Mellanox
Temperature [c]                : N/A
Length [m]                     : 2 m
";
    let doc = read(text);
    assert_eq!(
        doc.sections.len(),
        1,
        "{:?}",
        doc.sections.iter().map(|s| s.kind).collect::<Vec<_>>()
    );
    let SectionData::Mlxcables(m) = &doc.sections[0].data else {
        panic!("not mlxcables: {:?}", doc.sections[0].kind)
    };
    assert_eq!(m.cables.len(), 2);
    assert_eq!(m.cables[0].temperature_c, Some(52.0));
    assert_eq!(m.cables[1].temperature_c, None);
    let f = findings(doc);
    assert!(!rules(&f).contains(&"IN002"), "{f:?}");
}

#[test]
fn a_port_listed_twice_is_one_finding_from_its_latest_listing() {
    let f = findings(read(&format!("{SHOW_GIDS}{SHOW_GIDS}")));
    let nc: Vec<_> = f.iter().filter(|(r, _, _)| r == "NC005").collect();
    assert_eq!(nc.len(), 1, "{f:?}");
}

#[test]
fn a_listing_filtered_by_grep_is_not_judged() {
    // `| grep v1` keeps only the v1 rows: the v2 ones are not in the paste.
    let text = SHOW_GIDS
        .replacen("# show_gids", "# show_gids | grep v1", 1)
        .lines()
        .filter(|l| !l.contains("\tv2\t"))
        .collect::<Vec<_>>()
        .join("\n");
    let f = findings(read(&text));
    assert!(!rules(&f).contains(&"NC005"), "{f:?}");
}
