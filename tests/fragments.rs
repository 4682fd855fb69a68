//! Fragments people paste: a matrix without its header, a port block
//! without its CA, ibv_devinfo from the middle, perfquery whose header was
//! wrapped or lost, `ibstat -l`, pre-2009 counter names and ibcheckerrors
//! `#warn:` lines. Each is read for what it holds (never "nothing
//! recognised"), every line is accounted for, and a warning names what is
//! missing. Fixtures are written for these tests in the tools' layouts.

// Test helpers: a broken fixture should fail loudly.
#![allow(clippy::panic, clippy::unwrap_used, clippy::indexing_slicing)]

use fabricscope::model::partial::PartialReason;
use fabricscope::{analyze, read, Document, ReadOptions, SectionData, Severity, WarningKind};
use std::path::Path;

fn fixture(name: &str) -> (String, Document) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fragments")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let doc =
        read(&text, &ReadOptions::default()).unwrap_or_else(|e| panic!("{name}: not read: {e}"));
    let lost = doc.unaccounted_lines(&text);
    assert!(lost.is_empty(), "{name}: lines {lost:?} unaccounted for");
    assert!(
        doc.unrecognised.is_empty(),
        "{name}: {:?}",
        doc.unrecognised
    );
    (text, doc)
}

fn truncation_warning(doc: &Document) -> String {
    doc.all_warnings()
        .iter()
        .filter(|w| w.kind == WarningKind::Truncated)
        .map(|w| w.message.clone())
        .collect::<Vec<_>>()
        .join("; ")
}

#[test]
fn topo_matrix_without_its_header_is_read_from_the_x_diagonal() {
    let (_, doc) = fixture("topo_m_without_header.txt");
    assert_eq!(doc.sections.len(), 1);
    let SectionData::TopoMatrix(m) = &doc.sections[0].data else {
        panic!("{:?}", doc.sections[0].kind);
    };
    let names: Vec<&str> = m.devices.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "GPU0", "GPU1", "GPU2", "GPU3", "GPU4", "GPU5", "GPU6", "GPU7", "NIC0", "NIC1", "NIC2",
            "NIC3"
        ]
    );
    assert_eq!(m.cell("GPU3", "NIC2").unwrap().value.label(), "PXB");
    assert_eq!(m.cell("GPU3", "GPU0").unwrap().value.label(), "NV12");
    assert_eq!(
        m.device("GPU5").unwrap().numa_affinity.as_deref(),
        Some("1")
    );
    assert_eq!(
        m.device("NIC1").unwrap().rdma_device.as_deref(),
        Some("mlx5_1")
    );
    // Rows above the cut are missing, and said to be.
    let missing: Vec<&str> = m
        .devices
        .iter()
        .filter(|d| {
            d.partial
                .as_ref()
                .is_some_and(|p| p.reason == PartialReason::MissingRow)
        })
        .map(|d| d.name.as_str())
        .collect();
    assert_eq!(missing, ["GPU0", "GPU1", "GPU2"]);
    assert!(truncation_warning(&doc).contains("no header line"));
    let report = analyze(&[doc], &Default::default());
    // GPU3–GPU7 reach every peer over NVLink: nothing to report but the cut.
    let bad: Vec<_> = report
        .findings
        .iter()
        .filter(|f| f.severity >= Severity::Warning)
        .map(|f| (f.rule, f.message.clone()))
        .collect();
    assert!(bad.is_empty(), "{bad:?}");
    assert!(report.findings.iter().any(|f| f.rule == "IN001"));
}

/// A `Port 1:` block without its `CA '…'` line is a header-less port
/// whose number is shown: judged as itself, named by its place and
/// number, never under an invented adapter.
#[test]
fn ibstat_port_block_without_its_ca_is_judged_as_a_port_of_an_adapter_not_shown() {
    let (_, doc) = fixture("ibstat_port_without_ca.txt");
    let SectionData::Ibstat(ibstat) = &doc.sections[0].data else {
        panic!("{:?}", doc.sections[0].kind);
    };
    assert!(ibstat.cas.is_empty(), "no adapter is invented");
    assert_eq!(ibstat.headerless_ports[0].number, 1);
    let report = analyze(&[doc], &Default::default());
    let down = report.findings.iter().find(|f| f.rule == "IB001").unwrap();
    assert_eq!(down.subject.device, None);
    assert_eq!(down.subject.headerless_port, Some(1));
    assert!(
        down.message
            .starts_with("header-less port #1 (port 1 of an adapter not shown)"),
        "{}",
        down.message
    );
    assert!(down.severity >= Severity::Error);
}

#[test]
fn ibv_devinfo_from_the_middle_is_read_under_an_unknown_device() {
    let text = "\ttransport:\t\t\tInfiniBand (0)\n\tfw_ver:\t\t\t\t28.39.1002\n\tnode_guid:\t\t\t946d:ae03:00c4:d170\n\tsys_image_guid:\t\t\t946d:ae03:00c4:d170\n\tvendor_id:\t\t\t0x02c9\n\tvendor_part_id:\t\t\t4129\n\thw_ver:\t\t\t\t0x0\n\tboard_id:\t\t\tMT_0000000838\n\tphys_port_cnt:\t\t\t1\n\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_DOWN (1)\n\t\t\tmax_mtu:\t\t4096 (5)\n\t\t\tactive_mtu:\t\t4096 (5)\n\t\t\tsm_lid:\t\t\t0\n\t\t\tport_lid:\t\t0\n\t\t\tport_lmc:\t\t0x00\n\t\t\tlink_layer:\t\tInfiniBand\n";
    let doc = read(text, &ReadOptions::default()).unwrap();
    assert!(doc.unaccounted_lines(text).is_empty());
    let SectionData::IbvDevinfo(info) = &doc.sections[0].data else {
        panic!("{:?}", doc.sections[0].kind);
    };
    assert_eq!(info.devices[0].hca_id, "(unknown HCA)");
    assert_eq!(info.devices[0].ports.len(), 1);
    assert!(truncation_warning(&doc).contains("hca_id"));
    let report = analyze(&[doc], &Default::default());
    assert!(report.findings.iter().any(|f| f.rule == "IB001"));
}

#[test]
fn perfquery_header_wrapped_by_a_mail_client_is_joined() {
    let (_, doc) = fixture("perfquery_header_wrapped.txt");
    let SectionData::Perfquery(pq) = &doc.sections[0].data else {
        panic!("{:?}", doc.sections[0].kind);
    };
    assert_eq!(pq.blocks.len(), 1);
    assert_eq!(pq.blocks[0].lid, Some(211));
    assert_eq!(pq.blocks[0].port, Some(1));
    assert_eq!(pq.blocks[0].cap_mask, Some(0x5A00));
    assert_eq!(
        pq.blocks[0].counter("PortXmitData").unwrap().value,
        193_440_928_134
    );
    assert!(doc
        .all_warnings()
        .iter()
        .any(|w| w.message.contains("wrapped onto two lines")));
}

#[test]
fn perfquery_counters_without_a_header_are_read_with_the_port_unknown() {
    let (_, doc) = fixture("perfquery_header_lost.txt");
    let SectionData::Perfquery(pq) = &doc.sections[0].data else {
        panic!("{:?}", doc.sections[0].kind);
    };
    assert_eq!(pq.blocks.len(), 1);
    assert_eq!(pq.blocks[0].lid, None);
    assert_eq!(
        pq.blocks[0].counter("SymbolErrorCounter").unwrap().value,
        2307
    );
    assert!(truncation_warning(&doc).contains("LID and port are unknown"));
    let report = analyze(&[doc], &Default::default());
    assert!(
        report.findings.iter().any(|f| f.rule == "IB101"),
        "{:?}",
        report.findings
    );
}

#[test]
fn pre_2009_counter_names_map_onto_todays() {
    let (_, doc) = fixture("perfquery_old_names.txt");
    assert!(doc.all_warnings().is_empty(), "{:?}", doc.all_warnings());
    let SectionData::Perfquery(pq) = &doc.sections[0].data else {
        panic!("{:?}", doc.sections[0].kind);
    };
    let b = &pq.blocks[0];
    let c = b.counter("SymbolErrorCounter").unwrap();
    assert_eq!((c.value, c.saturated), (65535, true));
    assert_eq!(b.counter("LinkErrorRecoveryCounter").unwrap().value, 3);
    assert_eq!(b.counter("PortRcvRemotePhysicalErrors").unwrap().value, 0);
    assert_eq!(b.counter("PortXmitData").unwrap().value, 2_144_312);
    let report = analyze(&[doc], &Default::default());
    assert!(report.findings.iter().any(|f| f.rule == "IB101"));
}

#[test]
fn ibcheckerrors_warn_lines_are_evidence_with_their_threshold() {
    let (_, doc) = fixture("ibcheckerrors_warn.txt");
    let SectionData::Perfquery(pq) = &doc.sections[0].data else {
        panic!("{:?}", doc.sections[0].kind);
    };
    assert_eq!(pq.blocks.len(), 2);
    assert_eq!((pq.blocks[0].lid, pq.blocks[0].port), (Some(7), Some(1)));
    assert_eq!(
        pq.blocks[0].counter("SymbolErrorCounter").unwrap().value,
        65535
    );
    assert_eq!(
        pq.blocks[0].fields.get("SymbolErrorCounterThreshold"),
        Some(&"10".to_owned())
    );
    assert_eq!(pq.blocks[1].counter("PortRcvErrors").unwrap().value, 44);
    let report = analyze(&[doc], &Default::default());
    let lids: Vec<Option<u32>> = report
        .findings
        .iter()
        .filter(|f| f.severity >= Severity::Warning)
        .map(|f| f.subject.lid)
        .collect();
    assert!(
        lids.contains(&Some(7)) && lids.contains(&Some(12)),
        "{lids:?}"
    );
}

#[test]
fn ibstat_l_is_read_with_or_without_its_prompt() {
    for (name, want) in [
        (
            "ibstat_l_bare.txt",
            vec!["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_bond_0"],
        ),
        ("ibstat_l_prompt.txt", vec!["mlx4_0", "hfi1_0"]),
    ] {
        let (_, doc) = fixture(name);
        let SectionData::Ibstat(ibstat) = &doc.sections[0].data else {
            panic!("{name}: {:?}", doc.sections[0].kind);
        };
        assert_eq!(ibstat.ca_names, want, "{name}");
    }
    // A single word that is not an HCA name is not taken for `ibstat -l`.
    assert!(read("hello\n", &ReadOptions::default()).is_err());
}

#[test]
fn a_last_word_without_line_end_is_set_aside_unless_other_lines_end_with_it() {
    let port = |n: u32, last: &str| {
        format!("\tPort {n}:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 400\n\t\tBase lid: {n}\n\t\tLMC: 0\n\t\tSM lid: 1\n\t\tCapability mask: 0xa751e848\n\t\tPort GUID: 0x946dae0300c4d17{n}\n\t\tLink layer: {last}")
    };
    let head = "CA 'mlx5_0'\n\tCA type: MT4129\n\tNumber of ports: 2\n";
    let layer = |text: &str| {
        let doc = read(text, &ReadOptions::default()).unwrap();
        assert!(doc.unaccounted_lines(text).is_empty());
        let SectionData::Ibstat(ibstat) = &doc.sections[0].data else {
            panic!("{:?}", doc.sections[0].kind);
        };
        let cut = doc
            .warnings
            .iter()
            .any(|w| w.kind == WarningKind::Truncated);
        (ibstat.cas[0].ports[1].link_layer, cut)
    };
    // `InfiniBand` also ends port 1's block: a whole word, kept.
    let whole = format!("{head}{}\n{}", port(1, "InfiniBand"), port(2, "InfiniBand"));
    assert_eq!(
        layer(&whole),
        (Some(fabricscope::model::ib::LinkLayer::Infiniband), false)
    );
    // `Infini` ends no other line: possibly cut, set aside and said so.
    let cut = format!("{head}{}\n{}", port(1, "InfiniBand"), port(2, "Infini"));
    assert_eq!(layer(&cut), (None, true));
}
