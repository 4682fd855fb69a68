//! `rdma link show` read through the whole input layer and judged by the
//! port rules. The pastes are our own, in the layout of iproute2's
//! `rdma/link.c` (`link_parse_cb`): the port, then `subnet_prefix`, `lid`,
//! `sm_lid`, `lmc` for InfiniBand ports only, then `state`,
//! `physical_state` and `netdev`.

// Test code: a failed unwrap or index is a failed test.
#![allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]

use fabricscope::model::ib::{LinkLayer, PortState};
use fabricscope::{analyze, AnalyzeOptions, Document, Kind, SectionData, Severity};

fn read(text: &str) -> Document {
    fabricscope::input::read(text, &Default::default()).expect("recognised")
}

/// (rule, severity, subject device) of every finding at warning or worse.
fn problems(doc: Document) -> Vec<(String, Severity, Option<String>)> {
    let report = analyze(&[doc], &AnalyzeOptions::default());
    report
        .findings
        .into_iter()
        .filter(|f| f.severity >= Severity::Warning)
        .map(|f| (f.rule.to_string(), f.severity, f.subject.device.clone()))
        .collect()
}

/// An H100 node: eight InfiniBand rails (one cable pulled) and two
/// Ethernet ports for storage (one administratively down).
const GPU_NODE: &str = "\
[root@gpu07 ~]# rdma link show
link mlx5_0/1 subnet_prefix fe80:0000:0000:0000 lid 211 sm_lid 1 lmc 0 state ACTIVE physical_state LINK_UP netdev ibp24s0
link mlx5_1/1 subnet_prefix fe80:0000:0000:0000 lid 212 sm_lid 1 lmc 0 state ACTIVE physical_state LINK_UP netdev ibp64s0
link mlx5_2/1 subnet_prefix fe80:0000:0000:0000 lid 213 sm_lid 1 lmc 0 state ACTIVE physical_state LINK_UP netdev ibp79s0
link mlx5_3/1 subnet_prefix fe80:0000:0000:0000 lid 214 sm_lid 1 lmc 0 state ACTIVE physical_state LINK_UP netdev ibp94s0
link mlx5_4/1 subnet_prefix fe80:0000:0000:0000 lid 215 sm_lid 1 lmc 0 state ACTIVE physical_state LINK_UP netdev ibp154s0
link mlx5_5/1 subnet_prefix fe80:0000:0000:0000 lid 65535 sm_lid 0 lmc 0 state DOWN physical_state POLLING netdev ibp170s0
link mlx5_6/1 subnet_prefix fe80:0000:0000:0000 lid 217 sm_lid 1 lmc 0 state ACTIVE physical_state LINK_UP netdev ibp186s0
link mlx5_7/1 subnet_prefix fe80:0000:0000:0000 lid 218 sm_lid 1 lmc 0 state ACTIVE physical_state LINK_UP netdev ibp204s0
link mlx5_8/1 state ACTIVE physical_state LINK_UP netdev ens6f0np0
link mlx5_9/1 state DOWN physical_state DISABLED netdev ens6f1np1
[root@gpu07 ~]#
";

#[test]
fn a_gpu_node_listing_is_read_whole_and_only_the_pulled_rail_is_reported() {
    let doc = read(GPU_NODE);
    assert!(doc.unrecognised.is_empty(), "{:?}", doc.unrecognised);
    assert!(doc.all_warnings().is_empty(), "{:?}", doc.all_warnings());
    assert_eq!(doc.sections.len(), 1);
    let section = &doc.sections[0];
    assert_eq!(section.kind, Kind::RdmaLink);
    assert_eq!(section.host.as_deref(), Some("gpu07"));
    let SectionData::RdmaLink(rdma) = &section.data else {
        panic!("not rdma link");
    };
    assert_eq!(rdma.ports.len(), 10);
    let layers: Vec<_> = rdma.ports.iter().map(|p| p.link_layer()).collect();
    assert!(layers[..8]
        .iter()
        .all(|l| *l == Some(LinkLayer::Infiniband)));
    assert!(layers[8..].iter().all(|l| *l == Some(LinkLayer::Ethernet)));
    // The Ethernet port that is down is not an InfiniBand fault.
    assert_eq!(
        problems(doc),
        vec![(
            "IB001".to_owned(),
            Severity::Error,
            Some("mlx5_5".to_owned())
        )]
    );
}

#[test]
fn ports_left_initializing_with_sm_lid_0_mean_no_subnet_manager() {
    let doc = read(
        "link mlx5_0/1 subnet_prefix fe80:0000:0000:0000 lid 0 sm_lid 0 lmc 0 state INIT physical_state LINK_UP netdev ib0
link mlx5_1/1 subnet_prefix fe80:0000:0000:0000 lid 0 sm_lid 0 lmc 0 state INIT physical_state LINK_UP netdev ib1
",
    );
    let found = problems(doc);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found.iter().all(|(rule, _, _)| rule == "IB002"),
        "{found:?}"
    );
}

#[test]
fn the_same_port_again_is_a_second_snapshot() {
    let doc = read(
        "link mlx5_0/1 subnet_prefix fe80:0000:0000:0000 lid 5 sm_lid 1 lmc 0 state ACTIVE physical_state LINK_UP netdev ib0
link mlx5_1/1 subnet_prefix fe80:0000:0000:0000 lid 6 sm_lid 1 lmc 0 state ACTIVE physical_state LINK_UP netdev ib1
link mlx5_0/1 subnet_prefix fe80:0000:0000:0000 lid 5 sm_lid 1 lmc 0 state ACTIVE physical_state LINK_UP netdev ib0
link mlx5_1/1 subnet_prefix fe80:0000:0000:0000 lid 6 sm_lid 1 lmc 0 state DOWN physical_state POLLING netdev ib1
",
    );
    let kinds: Vec<_> = doc.sections.iter().map(|s| s.kind).collect();
    assert_eq!(kinds, vec![Kind::RdmaLink, Kind::RdmaLink]);
    // The latest snapshot is judged: mlx5_1 went down.
    let found = problems(doc);
    assert!(
        found
            .iter()
            .any(|(rule, _, dev)| rule == "IB001" && dev.as_deref() == Some("mlx5_1")),
        "{found:?}"
    );
}

#[test]
fn the_older_layout_with_details_is_read_and_other_rdma_output_is_not_taken_for_ports() {
    let doc = read(
        "# rdma -d link
1/1: mlx5_0/1: subnet_prefix fe80:0000:0000:0000 lid 3 sm_lid 1 lmc 0 state ACTIVE physical_state LINK_UP
    caps: <CM, IP_BASED_GIDS>
2/1: mlx5_1/1: state ACTIVE physical_state LINK_UP netdev ens2f0
    caps: <CM, IP_BASED_GIDS>
# rdma resource show qp
link mlx5_0/1 lqpn 1 type GSI state RTS sq-psn 0 comm ib_core
link mlx5_0/1 lqpn 261 type UD state RTS sq-psn 0 comm ib_core
",
    );
    let rdma: Vec<_> = doc
        .sections
        .iter()
        .filter_map(|s| match &s.data {
            SectionData::RdmaLink(r) => Some(r),
            _ => None,
        })
        .collect();
    assert_eq!(rdma.len(), 1, "{:?}", doc.sections);
    assert_eq!(rdma[0].ports.len(), 2);
    assert_eq!(rdma[0].ports[0].state, Some(PortState::Active));
    assert_eq!(
        rdma[0].ports[0].span.last_line, 3,
        "the caps line is the port's"
    );
    // The queue-pair lines are accounted for, not read as ports.
    for n in [7, 8] {
        let accounted = doc.unrecognised.iter().any(|u| u.span.contains(n))
            || doc.all_warnings().iter().any(|w| w.span.contains(n));
        assert!(
            accounted,
            "line {n}: {:?} {:?}",
            doc.unrecognised,
            doc.all_warnings()
        );
    }
    assert!(problems(doc).is_empty());
}

#[test]
fn a_rail_down_in_rdma_link_impairs_the_gpu_nearest_to_it() {
    let doc = read(
        "$ nvidia-smi topo -m
\tGPU0\tGPU1\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID
GPU0\t X \tNV18\tPIX\tSYS\t0-47\t0\t\tN/A
GPU1\tNV18\t X \tSYS\tPIX\t48-95\t1\t\tN/A
NIC0\tPIX\tSYS\t X \tSYS
NIC1\tSYS\tPIX\tSYS\t X 

Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  PIX  = Connection traversing at most a single PCIe bridge
  NV#  = Connection traversing a bonded set of # NVLinks

NIC Legend:

  NIC0: mlx5_0
  NIC1: mlx5_1

$ rdma link show
link mlx5_0/1 subnet_prefix fe80:0000:0000:0000 lid 11 sm_lid 1 lmc 0 state ACTIVE physical_state LINK_UP netdev ibp24s0
link mlx5_1/1 subnet_prefix fe80:0000:0000:0000 lid 65535 sm_lid 0 lmc 0 state DOWN physical_state POLLING netdev ibp64s0
",
    );
    let report = analyze(&[doc], &AnalyzeOptions::default());
    let serious: Vec<_> = report
        .findings
        .iter()
        .filter(|f| f.severity >= Severity::Warning)
        .map(|f| (f.rule.to_string(), f.subject.gpu, f.subject.device.clone()))
        .collect();
    assert_eq!(
        serious,
        vec![
            ("XS001".to_owned(), Some(1), None),
            ("IB001".to_owned(), None, Some("mlx5_1".to_owned())),
        ]
    );
}
