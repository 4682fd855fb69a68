//! perfquery and ibqueryerrors output of the real tools against simulated
//! fabrics (tests/fixtures/ibsim, see its README), checked against each
//! scenario's ground truth (`scenario.json`, written from the scenario
//! definition, never from tool output).

// Test helpers may index and panic: a failed lookup is a failed test.
#![allow(clippy::panic, clippy::indexing_slicing, clippy::unwrap_used)]

use fabricscope::input::MessageLevel;
use fabricscope::model::ibqueryerrors::Ibqueryerrors;
use fabricscope::model::perfquery::{PerfAttribute, PerfBlock, Perfquery};
use fabricscope::{Kind, ReadOptions, SectionData};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ibsim")
}

fn scenarios() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(fixtures())
        .expect("fixtures present")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.join("scenario.json").is_file())
        .collect();
    dirs.sort();
    dirs
}

fn truth(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("scenario.json")).expect("scenario.json");
    serde_json::from_str(&text).expect("valid JSON")
}

/// A capture file: the command's sections, its exit status, its host.
struct Capture {
    file: String,
    host: String,
    command: String,
    exit: i64,
    doc: fabricscope::Document,
}

/// Every capture of `tool` in a scenario, read through the input layer and
/// checked to be clean: one tool's sections only, nothing unrecognised, no
/// warnings.
fn captures(dir: &Path, tool: &str, kind: Kind) -> Vec<Capture> {
    let t = truth(dir);
    let mut out = Vec::new();
    for c in t["captures"].as_array().expect("captures") {
        let command = c["command"].as_str().expect("command").to_owned();
        if command.split_whitespace().next() != Some(tool) {
            continue;
        }
        let file = c["file"].as_str().expect("file").to_owned();
        let text = std::fs::read_to_string(dir.join(&file)).expect("capture");
        let exit: i64 = text
            .lines()
            .last()
            .and_then(|l| l.strip_prefix("[exit ")?.strip_suffix(']')?.parse().ok())
            .expect("[exit N] last line");
        let doc = fabricscope::read(&text, &ReadOptions::default()).expect("recognised");
        let name = format!("{}/{file}", dir.display());
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
        assert_eq!(doc.sections.len(), 1, "{name}");
        assert_eq!(doc.sections[0].kind, kind, "{name}");
        assert_eq!(
            doc.sections[0].command.as_deref(),
            Some(command.as_str()),
            "{name}"
        );
        out.push(Capture {
            file: name,
            host: c["host"].as_str().expect("host").to_owned(),
            command,
            exit,
            doc,
        });
    }
    out
}

fn perfquery_of(c: &Capture) -> &Perfquery {
    match &c.doc.sections[0].data {
        SectionData::Perfquery(p) => p,
        other => panic!("{}: {other:?}", c.file),
    }
}

fn ibqueryerrors_of(c: &Capture) -> &Ibqueryerrors {
    match &c.doc.sections[0].data {
        SectionData::Ibqueryerrors(p) => p,
        other => panic!("{}: {other:?}", c.file),
    }
}

/// ibsim's PerformanceSet spells two fields differently from libibmad.
fn tool_name(field: &str) -> &str {
    match field {
        "PortMalformedPacketErrors" => "PortMalformedPktErrors",
        "PortMultiCastRcvPkts" => "PortMulticastRcvPkts",
        "PortMultiCastXmitPkts" => "PortMulticastXmitPkts",
        other => other,
    }
}

#[test]
fn every_perfquery_capture_reads_cleanly_and_failures_have_no_blocks() {
    let mut files = 0;
    for dir in scenarios() {
        for c in captures(&dir, "perfquery", Kind::Perfquery) {
            let p = perfquery_of(&c);
            let section = &c.doc.sections[0];
            if c.exit == 0 {
                assert!(!p.blocks.is_empty(), "{}", c.file);
                assert!(
                    p.blocks.iter().all(|b| !b.counters.is_empty()),
                    "{}",
                    c.file
                );
            } else {
                assert!(p.blocks.is_empty(), "{}", c.file);
                assert!(
                    section
                        .messages
                        .iter()
                        .any(|m| m.level == MessageLevel::Error),
                    "{}: {:?}",
                    c.file,
                    section.messages
                );
            }
            files += 1;
        }
    }
    assert!(files >= 40, "only {files} perfquery captures");
}

#[test]
fn loop_and_aggregate_forms() {
    let dir = fixtures().join("switch_by_lid");
    let caps = captures(&dir, "perfquery", Kind::Perfquery);
    let by_command = |cmd: &str| {
        let c = caps.iter().find(|c| c.command == cmd).expect(cmd);
        perfquery_of(c).clone()
    };
    let ports = |p: &Perfquery| p.blocks.iter().map(|b| b.port).collect::<Vec<_>>();
    assert_eq!(
        ports(&by_command("perfquery -l 2 1,3,8")),
        vec![Some(1), Some(3), Some(8)]
    );
    let x = by_command("perfquery -x -l 2 1-4");
    assert_eq!(ports(&x), vec![Some(1), Some(2), Some(3), Some(4)]);
    assert!(x.blocks.iter().all(PerfBlock::is_extended));
    let a = by_command("perfquery -x -a 2");
    let agg = &a.blocks[0];
    assert!(agg.all_ports && agg.port == Some(255) && agg.lid == Some(2));
    assert_eq!(agg.fields["PortSelect"], "255");
    assert_eq!((agg.cap_mask, agg.cap_mask2), (Some(0x1300), Some(0)));
    let zero = by_command("perfquery 2 0");
    assert_eq!(zero.blocks[0].port, Some(0));
}

#[test]
fn counters_match_every_value_the_scenarios_set() {
    let mut checked = 0;
    for dir in scenarios() {
        let t = truth(&dir);
        let lids: BTreeMap<String, u64> = t["lids"]
            .as_object()
            .expect("lids")
            .iter()
            .map(|(k, v)| (k.clone(), v.as_u64().expect("lid")))
            .collect();
        let caps = captures(&dir, "perfquery", Kind::Perfquery);
        for set in t["counters_set"].as_array().expect("counters_set") {
            let node = set["node"].as_str().expect("node");
            let port = u32::try_from(set["port"].as_u64().expect("port")).expect("port");
            let attribute = match set["attribute"].as_str().expect("attribute") {
                "PortCounters" => PerfAttribute::PortCounters,
                "PortCountersExtended" => PerfAttribute::PortCountersExtended,
                "PortRcvErrorDetails" => PerfAttribute::PortRcvErrorDetails,
                "PortXmitDiscardDetails" => PerfAttribute::PortXmitDiscardDetails,
                other => panic!("attribute {other} not in the test yet"),
            };
            if set["reported_by_simulator"] == false {
                continue; // ibsim accepts the value but perfquery prints 0
            }
            let field = tool_name(set["field"].as_str().expect("field"));
            let moves_with_traffic = set["moves_with_traffic"] == true;
            let expected = set["expected_value"].as_u64().expect("expected_value");
            let bits = u8::try_from(set["field_bits"].as_u64().expect("bits")).expect("bits");
            let saturated = set["saturated"].as_bool().expect("saturated");
            // Blocks of that node's port: by LID for addressed queries, by
            // host for queries of the local port.
            let blocks: Vec<(&str, &PerfBlock)> = caps
                .iter()
                .flat_map(|c| perfquery_of(c).blocks.iter().map(move |b| (c, b)))
                .filter(|(c, b)| {
                    let local = c
                        .command
                        .split_whitespace()
                        .skip(1)
                        .all(|w| w.starts_with('-'));
                    b.attribute == attribute
                        && b.port == Some(port)
                        && match lids.get(node) {
                            Some(lid) => b.lid.map(u64::from) == Some(*lid),
                            None => local && c.host == node,
                        }
                })
                .map(|(c, b)| (c.file.as_str(), b))
                .collect();
            assert!(
                !blocks.is_empty(),
                "no capture shows {node} port {port} {attribute:?}"
            );
            for (file, b) in blocks {
                let c = b
                    .counter(field)
                    .unwrap_or_else(|| panic!("{file}: no {field}"));
                assert_eq!((c.bits, c.saturated), (bits, saturated), "{file}: {field}");
                if moves_with_traffic && !saturated {
                    assert!(
                        c.value >= expected,
                        "{file}: {field} {} < {expected}",
                        c.value
                    );
                } else {
                    assert_eq!(c.value, expected, "{file}: {field}");
                }
                checked += 1;
            }
        }
    }
    assert!(checked >= 60, "only {checked} values checked");
}

/// `(node id, port)` of every port ibqueryerrors reported.
fn reported(report: &Ibqueryerrors, ids: &BTreeMap<String, String>) -> BTreeSet<(String, u32)> {
    report
        .bad_ports()
        .map(|(n, p)| {
            let id = ids
                .get(&n.desc)
                .unwrap_or_else(|| panic!("unknown node {}", n.desc));
            (id.clone(), p.port)
        })
        .collect()
}

#[test]
fn ibqueryerrors_reports_exactly_the_ports_over_threshold() {
    let mut runs = 0;
    for dir in scenarios() {
        let t = truth(&dir);
        let nodes = t["nodes"].as_array().expect("nodes");
        let ids: BTreeMap<String, String> = nodes
            .iter()
            .map(|n| {
                (
                    n["desc"].as_str().expect("desc").to_owned(),
                    n["id"].as_str().expect("id").to_owned(),
                )
            })
            .collect();
        let types: BTreeMap<&str, &str> = nodes
            .iter()
            .map(|n| {
                (
                    n["id"].as_str().expect("id"),
                    n["type"].as_str().expect("type"),
                )
            })
            .collect();
        for c in captures(&dir, "ibqueryerrors", Kind::Ibqueryerrors) {
            let report = ibqueryerrors_of(&c);
            let Some(summary) = &report.summary else {
                // No SM: the tool gives up before checking anything.
                assert!(report.nodes.is_empty(), "{}", c.file);
                assert!(!c.doc.sections[0].messages.is_empty(), "{}", c.file);
                continue;
            };
            let with_file = c.command.contains("--threshold-file");
            assert_eq!(summary.thresholds.is_empty(), !with_file, "{}", c.file);
            let switches_only = c.command.contains("--switch");
            let expected: BTreeSet<(String, u32)> = t["counters_set"]
                .as_array()
                .expect("counters_set")
                .iter()
                .filter(|s| s.get("threshold").is_some())
                .filter(|s| !summary.suppressed.iter().any(|n| s["field"] == n.as_str()))
                .filter(|s| !switches_only || types[s["node"].as_str().expect("node")] == "Switch")
                .filter(|s| {
                    if with_file {
                        s["over_threshold"].as_bool().expect("over_threshold")
                    } else {
                        s["expected_value"].as_u64().expect("value") > 0
                    }
                })
                .map(|s| {
                    let port = u32::try_from(s["port"].as_u64().expect("port")).expect("port");
                    (s["node"].as_str().expect("node").to_owned(), port)
                })
                .collect();
            assert_eq!(reported(report, &ids), expected, "{}", c.file);
            assert_eq!(summary.bad_ports, Some(expected.len() as u64), "{}", c.file);
            assert_eq!(c.exit, i64::from(!expected.is_empty()), "{}", c.file);
            runs += 1;
        }
    }
    assert!(runs >= 15, "only {runs} ibqueryerrors runs checked");
}

#[test]
fn ibqueryerrors_counters_carry_widths_and_saturation() {
    let dir = fixtures().join("counters");
    let caps = captures(&dir, "ibqueryerrors", Kind::Ibqueryerrors);
    let data = caps
        .iter()
        .find(|c| c.command.contains("--data"))
        .expect("--data run");
    let report = ibqueryerrors_of(data);
    let node03 = report
        .nodes
        .iter()
        .find(|n| n.desc == "node03 mlx5_0")
        .expect("node03");
    let p = &node03.ports[0];
    let sym = p.counters["SymbolErrorCounter"];
    assert_eq!((sym.value, sym.bits, sym.saturated), (65535, 16, true));
    assert!(p.counters["LocalLinkIntegrityErrors"].saturated);
    assert!(p.counters["PortXmitWait"].saturated);
    // The extended data counters: 64 bits (the line shows unicast packets).
    let xmit = p.counters["PortXmitData"];
    assert_eq!((xmit.bits, xmit.saturated), (64, true));
    assert!(!p.counters["PortRcvData"].saturated);

    let switch = report
        .nodes
        .iter()
        .find(|n| n.guid.is_some())
        .expect("switch");
    assert_eq!(switch.desc, "MF0;sw1:MQM8700/U1");
    assert!(switch.ports[0].all_ports);

    let r = caps
        .iter()
        .find(|c| c.command.contains(" -r "))
        .expect("-r run");
    let report = ibqueryerrors_of(r);
    let links: Vec<_> = report
        .nodes
        .iter()
        .flat_map(|n| &n.ports)
        .filter_map(|p| p.link.as_ref())
        .collect();
    assert_eq!(links.len(), 3);
    for l in links {
        assert_eq!(l.width.as_deref(), Some("12X"));
        assert_eq!(l.speed.as_deref(), Some("10.0 Gbps"));
        assert!(l
            .remote
            .as_ref()
            .is_some_and(|r| r.desc.contains("MQM8700")));
    }
}

#[test]
fn pma_query_failures_are_counted_in_the_summary() {
    let dir = fixtures().join("no_sm");
    let caps = captures(&dir, "ibqueryerrors", Kind::Ibqueryerrors);
    let c = caps
        .iter()
        .find(|c| c.command == "ibqueryerrors --skip-sl")
        .expect("run");
    let summary = ibqueryerrors_of(c).summary.clone().expect("summary");
    assert_eq!(summary.pma_query_failures, 28);
    assert_eq!(
        (summary.nodes_checked, summary.ports_checked),
        (7, Some(21))
    );
    // Every failed query is an ibwarn line kept with the section.
    assert_eq!(c.doc.sections[0].messages.len(), 56);
}

/// The capture's own output: without the `$ command` and `[exit N]` framing
/// and without the diagnostics the input layer sets aside.
fn tool_text(c: &Capture) -> String {
    let text = std::fs::read_to_string(&c.file).expect("capture");
    let lines: Vec<&str> = text.lines().collect();
    let body = &lines[1..lines.len() - 1];
    let diagnostics: Vec<usize> = c.doc.sections[0].messages.iter().map(|m| m.line).collect();
    body.iter()
        .enumerate()
        .filter(|(i, _)| !diagnostics.contains(&(i + 2)))
        .map(|(_, l)| format!("{l}\n"))
        .collect()
}

#[test]
fn render_gives_back_the_tools_exact_text() {
    let mut files = 0;
    for dir in scenarios() {
        for c in captures(&dir, "perfquery", Kind::Perfquery) {
            let rendered = fabricscope::parse::perfquery::render(perfquery_of(&c));
            assert_eq!(rendered, tool_text(&c), "{}", c.file);
            files += 1;
        }
        for c in captures(&dir, "ibqueryerrors", Kind::Ibqueryerrors) {
            let report = ibqueryerrors_of(&c);
            if report.summary.is_none() {
                continue; // only diagnostics: nothing to render
            }
            let rendered = fabricscope::parse::ibqueryerrors::render(report);
            assert_eq!(rendered, tool_text(&c), "{}", c.file);
            files += 1;
        }
    }
    assert!(files >= 50, "only {files} files compared");
}

#[test]
fn pdsh_prefixed_perfquery_from_two_hosts_is_one_section_per_host() {
    let dir = fixtures().join("counters");
    let caps = captures(&dir, "perfquery", Kind::Perfquery);
    let body = |cmd_host: &str| {
        let c = caps
            .iter()
            .find(|c| c.file.ends_with(cmd_host))
            .expect(cmd_host);
        tool_text(c)
    };
    let a = body("node02_perfquery.txt");
    let b = body("node03_perfquery.txt");
    // pdsh interleaves the hosts' lines.
    let mut text = String::from("$ pdsh -w node[02-03] perfquery\n");
    for (x, y) in a.lines().zip(b.lines()) {
        text.push_str(&format!("node02: {x}\nnode03: {y}\n"));
    }
    let doc = fabricscope::read(&text, &ReadOptions::default()).expect("recognised");
    assert!(doc.unrecognised.is_empty(), "{:?}", doc.unrecognised);
    assert!(doc.all_warnings().is_empty(), "{:?}", doc.all_warnings());
    let hosts: Vec<Option<&str>> = doc.sections.iter().map(|s| s.host.as_deref()).collect();
    assert_eq!(hosts, vec![Some("node02"), Some("node03")]);
    let SectionData::Perfquery(p) = &doc.sections[1].data else {
        panic!("not perfquery");
    };
    assert!(p.blocks[0].counter("SymbolErrorCounter").unwrap().saturated);
}
