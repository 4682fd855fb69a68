//! Every public perfquery sample, read through the whole input layer.
//!
//! The samples are read in place from the shared corpus (they must not be
//! copied into the repository); the test is skipped, with a message, when the
//! corpus is not there. Expected values were read off the sample files.

// Test helpers may index and panic: a failed lookup is a failed test.
#![allow(clippy::panic, clippy::indexing_slicing, clippy::unwrap_used)]

use fabricscope::model::perfquery::{PerfAttribute, PerfBlock, Perfquery};
use fabricscope::{Kind, ReadOptions, SectionData};
use std::path::PathBuf;

fn corpus_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/public/ib");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("skipped: corpus directory {} not found", dir.display());
        None
    }
}

/// Reads one sample and returns its perfquery sections, checking that
/// nothing was left unread.
fn read_sample(name: &str) -> Option<Vec<Perfquery>> {
    let text = std::fs::read_to_string(corpus_dir()?.join(name)).expect("sample readable");
    Some(read_text(&text, name))
}

fn read_text(text: &str, name: &str) -> Vec<Perfquery> {
    let doc = fabricscope::read(text, &ReadOptions::default()).expect("recognised");
    assert!(
        doc.unrecognised.is_empty(),
        "{name}: {:?}",
        doc.unrecognised
    );
    assert!(
        doc.all_warnings().is_empty(),
        "{name}: {:?}",
        doc.all_warnings()
    );
    doc.sections
        .into_iter()
        .map(|s| {
            assert_eq!(s.kind, Kind::Perfquery, "{name}");
            match s.data {
                SectionData::Perfquery(p) => p,
                other => panic!("{name}: {other:?}"),
            }
        })
        .collect()
}

fn only_block(sections: &[Perfquery]) -> &PerfBlock {
    assert_eq!(sections.len(), 1);
    assert_eq!(sections[0].blocks.len(), 1);
    &sections[0].blocks[0]
}

fn value(b: &PerfBlock, name: &str) -> u64 {
    b.counter(name).unwrap_or_else(|| panic!("no {name}")).value
}

#[test]
fn every_perfquery_sample_reads_cleanly() {
    let Some(dir) = corpus_dir() else { return };
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).expect("listable") {
        let path = entry.expect("entry").path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.starts_with("perfquery__") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("readable");
        let sections = read_text(&text, &name);
        assert_eq!(sections.len(), 1, "{name}");
        // The tool's exact text comes back (the files may end in a blank line).
        let rendered = fabricscope::parse::perfquery::render(&sections[0]);
        assert_eq!(rendered, format!("{}\n", text.trim_end()), "{name}");
        for b in sections.iter().flat_map(|s| &s.blocks) {
            assert!(!b.counters.is_empty(), "{name}");
            assert!(
                b.counters.values().all(|c| c.bits == 64 || c.bits == 16),
                "{name}"
            );
            assert!(b.counters.values().all(|c| !c.saturated), "{name}");
        }
        seen += 1;
    }
    assert_eq!(seen, 6, "expected the six perfquery samples");
}

#[test]
fn switch_port_with_discards_and_a_link_down() {
    let Some(sections) = read_sample("perfquery__treydock-infiniband_exporter__1.txt") else {
        return;
    };
    let b = only_block(&sections);
    assert_eq!(b.attribute, PerfAttribute::PortCountersExtended);
    assert_eq!((b.lid, b.port, b.all_ports), (Some(2052), Some(1), false));
    assert_eq!((b.cap_mask, b.cap_mask2), (Some(0x5300), Some(0x2)));
    assert_eq!(value(b, "PortXmitDiscards"), 20046);
    assert_eq!(value(b, "LinkDownedCounter"), 1);
    assert_eq!(value(b, "PortRcvSwitchRelayErrors"), 7);
    assert_eq!(value(b, "PortXmitWait"), 41_864_608);
    assert_eq!(value(b, "PortMulticastRcvPkts"), 6_694_940);
    assert_eq!(b.counter("PortXmitDiscards").unwrap().bits, 64);
    assert_eq!(b.xmit_data_octets(), Some(178_791_657_177_235 * 4));
    assert_eq!(
        b.fields.get("CounterSelect2").map(String::as_str),
        Some("0x00000000")
    );
    assert_eq!(b.counters.len(), 22);
}

#[test]
fn hca_without_additional_counters_support_still_shows_them() {
    let Some(sections) = read_sample("perfquery__treydock-infiniband_exporter__2.txt") else {
        return;
    };
    let b = only_block(&sections);
    assert_eq!(
        (b.lid, b.cap_mask, b.cap_mask2),
        (Some(133), Some(0x5A00), Some(0))
    );
    assert_eq!(b.additional_counters_supported(), Some(false));
    assert_eq!(b.xmit_wait_supported(), Some(true));
    assert_eq!(value(b, "PortMulticastRcvPkts"), 3_732_373_137);
    assert_eq!(value(b, "SymbolErrorCounter"), 0);
    assert_eq!(b.rcv_data_octets(), Some(37_225_401_952_885 * 4));

    let Some(sections) = read_sample("perfquery__treydock-infiniband_exporter__3.txt") else {
        return;
    };
    let b = only_block(&sections);
    assert_eq!((b.lid, b.port), (Some(134), Some(1)));
    assert_eq!(value(b, "PortRcvData"), 9_752_484_588_300);
}

#[test]
fn loop_ports_output_is_one_section_with_a_block_per_port() {
    let Some(sections) = read_sample("perfquery__treydock-infiniband_exporter__4.txt") else {
        return;
    };
    assert_eq!(sections.len(), 1);
    let blocks = &sections[0].blocks;
    let ports: Vec<Option<u32>> = blocks.iter().map(|b| b.port).collect();
    assert_eq!(ports, vec![Some(1), Some(2)]);
    assert_eq!(value(&blocks[0], "PortXmitWait"), 22_730_501);
    assert_eq!(value(&blocks[1], "PortXmitWait"), 36_510_964);
    assert_eq!(value(&blocks[1], "PortMulticastXmitPkts"), 0);
    assert_eq!(
        (blocks[1].span.first_line, blocks[1].span.last_line),
        (27, 52)
    );
}

#[test]
fn receive_error_details() {
    for (name, lid, port) in [
        ("perfquery__treydock-infiniband_exporter__5.txt", 2052, 1),
        ("perfquery__treydock-infiniband_exporter__6.txt", 1719, 2),
    ] {
        let Some(sections) = read_sample(name) else {
            return;
        };
        let b = only_block(&sections);
        assert_eq!(b.attribute, PerfAttribute::PortRcvErrorDetails);
        assert_eq!((b.lid, b.port), (Some(lid), Some(port)));
        assert_eq!(b.counters.len(), 6);
        assert_eq!(b.counter("PortLoopingErrors").unwrap().bits, 16);
        assert_eq!(b.fields.get("PortSelect"), Some(&port.to_string()));
    }
}

#[test]
fn a_second_snapshot_of_the_same_port_is_a_new_section() {
    let Some(dir) = corpus_dir() else { return };
    let one = std::fs::read_to_string(dir.join("perfquery__treydock-infiniband_exporter__1.txt"))
        .expect("readable");
    let six = std::fs::read_to_string(dir.join("perfquery__treydock-infiniband_exporter__6.txt"))
        .expect("readable");
    // Pasted back to back without prompts: same port twice, then another attribute.
    let text = format!("{one}{one}{six}");
    let sections = read_text(&text, "concatenation");
    let shape: Vec<usize> = sections.iter().map(|s| s.blocks.len()).collect();
    assert_eq!(shape, vec![1, 2]);
    assert_eq!(
        sections[1].blocks[1].attribute,
        PerfAttribute::PortRcvErrorDetails
    );

    // With prompts, each command is its own section.
    let text = format!("$ perfquery -x 2052 1\n{one}$ perfquery -E 1719 2\n{six}");
    let doc = fabricscope::read(&text, &ReadOptions::default()).expect("recognised");
    let commands: Vec<Option<&str>> = doc.sections.iter().map(|s| s.command.as_deref()).collect();
    assert_eq!(
        commands,
        vec![Some("perfquery -x 2052 1"), Some("perfquery -E 1719 2")]
    );
}
