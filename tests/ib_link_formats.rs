//! ibstatus, iblinkinfo, ibnetdiscover and ibv_devinfo read through the whole input layer:
//! the public corpus (read in place, never copied) and the ibsim fixtures,
//! whose expectations come from each scenario's `scenario.json`, not from
//! the parser.

// Test code: a failed unwrap or index is a failed test.
#![allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]

use fabricscope::model::ib::{LinkLayer, PhysState, PortState};
use fabricscope::model::iblinkinfo::{Iblinkinfo, LinkNode, NodeType};
use fabricscope::{Document, Kind, SectionData};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn read(text: &str) -> Document {
    fabricscope::input::read(text, &Default::default()).expect("recognised")
}

fn assert_clean(doc: &Document, what: &str) {
    assert!(
        doc.unrecognised.is_empty(),
        "{what}: {:?}",
        doc.unrecognised
    );
    assert!(
        doc.all_warnings().is_empty(),
        "{what}: {:?}",
        doc.all_warnings()
    );
}

/// The public InfiniBand samples whose file names start with `prefix`, as
/// (file name, document), each read whole without a warning; `None` where
/// the shared corpus is absent.
fn public_samples(prefix: &str) -> Option<Vec<(String, Document)>> {
    let dir = Path::new("../shared/corpus/public/ib");
    if !dir.is_dir() {
        println!("skipped: {} not present", dir.display());
        return None;
    }
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with(prefix) {
            let doc = read(&std::fs::read_to_string(&path).unwrap());
            assert_clean(&doc, &name);
            out.push((name, doc));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Some(out)
}

#[test]
fn public_ibstatus_sample() {
    let Some(samples) = public_samples("ibstatus__") else {
        return;
    };
    let mut seen = 0;
    for (name, doc) in samples {
        seen += 1;
        assert_eq!(doc.sections.len(), 1, "{name}");
        assert_eq!(doc.sections[0].kind, Kind::Ibstatus);
        if name != "ibstatus__gpud-testdata__1.txt" {
            continue;
        }
        // Values read by eye from the file.
        let SectionData::Ibstatus(status) = &doc.sections[0].data else {
            panic!("not ibstatus");
        };
        assert_eq!(status.ports.len(), 9);
        let first = &status.ports[0];
        assert_eq!((first.device.as_str(), first.port), ("mlx5_0", 1));
        assert_eq!(
            first.default_gid.as_deref(),
            Some("fe80:0000:0000:0000:0015:5dff:fd34:11eb")
        );
        assert_eq!(first.base_lid, Some(0x33bf));
        assert_eq!(first.sm_lid, Some(1));
        assert_eq!(first.state, Some(PortState::Active));
        assert_eq!(first.physical_state, Some(PhysState::LinkUp));
        let rate = first.rate.as_ref().unwrap();
        assert_eq!(rate.rate_gbps, 200.0);
        assert_eq!(rate.width.as_deref(), Some("4X"));
        assert_eq!(rate.generation.as_deref(), Some("HDR"));
        assert_eq!(status.ports[1].base_lid, Some(0x33be));
        let last = &status.ports[8];
        assert_eq!(last.device, "mlx5_8");
        assert_eq!(last.default_gid, None);
        assert_eq!(last.base_lid, Some(0));
        assert_eq!(last.link_layer, Some(LinkLayer::Ethernet));
        assert_eq!(
            last.rate.as_ref().unwrap().generation.as_deref(),
            Some("QDR")
        );
    }
    assert!(seen > 0, "no ibstatus__*.txt among the public samples");
}

fn ibsim_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ibsim")
}

fn scenario(name: &str) -> Value {
    let path = ibsim_dir().join(name).join("scenario.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn iblinkinfo_of(scenario: &str, file: &str) -> Iblinkinfo {
    let path = ibsim_dir().join(scenario).join(file);
    let doc = read(&std::fs::read_to_string(&path).unwrap());
    assert_clean(&doc, &path.display().to_string());
    assert_eq!(doc.sections.len(), 1, "{}", path.display());
    let section = &doc.sections[0];
    assert_eq!(
        section
            .command
            .as_deref()
            .map(|c| c.starts_with("iblinkinfo")),
        Some(true)
    );
    match &section.data {
        SectionData::Iblinkinfo(v) => v.clone(),
        other => panic!("{}: {:?}", path.display(), other.kind()),
    }
}

#[test]
fn every_ibsim_iblinkinfo_capture_reads_cleanly() {
    let mut files = 0;
    for scenario in std::fs::read_dir(ibsim_dir()).unwrap() {
        let dir = scenario.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with("iblinkinfo") && name.ends_with(".txt") {
                let info = iblinkinfo_of(dir.file_name().unwrap().to_str().unwrap(), &name);
                assert!(info.ports().count() > 0, "{}", path.display());
                files += 1;
            }
        }
    }
    assert!(files >= 10, "only {files} iblinkinfo fixtures");
}

/// Node description of a scenario node id (`sw1` → `MF0;sw1:MQM8700/U1`).
fn desc_of(s: &Value, id: &str) -> String {
    s["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["id"] == id)
        .map(|n| n["desc"].as_str().unwrap().to_owned())
        .unwrap()
}

fn node<'a>(info: &'a Iblinkinfo, desc: &str) -> Option<&'a LinkNode> {
    info.nodes.iter().find(|n| n.desc.as_deref() == Some(desc))
}

fn lanes(width: &str) -> u32 {
    width.trim_end_matches('X').parse().unwrap()
}

/// Every link of the scenario seen from its `a` end: width, rate, state and
/// the far end; cut links show a Down/Polling port with nothing behind it.
fn check_links(name: &str, expect_state: PortState) {
    let s = scenario(name);
    let info = iblinkinfo_of(name, "iblinkinfo.txt");
    let cut: Vec<(String, u64)> = s["cut_ports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["peer"][0].as_str().unwrap().to_owned(),
                c["peer"][1].as_u64().unwrap(),
            )
        })
        .collect();
    for link in s["links"].as_array().unwrap() {
        let (a, a_port) = (
            link["a"][0].as_str().unwrap(),
            link["a"][1].as_u64().unwrap(),
        );
        let (b, b_port) = (
            link["b"][0].as_str().unwrap(),
            link["b"][1].as_u64().unwrap(),
        );
        let a_node = node(&info, &desc_of(&s, a)).unwrap_or_else(|| panic!("{name}: no {a}"));
        let port = a_node
            .ports
            .iter()
            .find(|p| u64::from(p.port) == a_port)
            .unwrap_or_else(|| panic!("{name}: no {a} port {a_port}"));
        if cut.contains(&(a.to_owned(), a_port)) {
            assert_eq!(port.state, PortState::Down, "{name} {a}/{a_port}");
            assert_eq!(port.physical_state, PhysState::Polling);
            assert!(port.remote.is_none() && port.width.is_none());
            continue;
        }
        assert_eq!(port.state, expect_state, "{name} {a}/{a_port}");
        assert_eq!(port.physical_state, PhysState::LinkUp);
        let width = link["width"].as_str().unwrap();
        assert_eq!(port.width.as_ref().unwrap().lanes, Some(lanes(width)));
        assert_eq!(port.width.as_ref().unwrap().text, width);
        assert_eq!(
            port.nominal_rate_gbps(),
            link["rate_gbps"].as_f64(),
            "{name} {a}/{a_port}"
        );
        let remote = port.remote.as_ref().unwrap();
        assert_eq!(remote.desc, desc_of(&s, b));
        assert_eq!(u64::from(remote.port), b_port);
    }
}

/// Each HCA port as the scenario defines it: reachable ones with their
/// state, width and rate; Down ones absent (iblinkinfo cannot reach them).
fn check_hca_ports(name: &str) {
    let s = scenario(name);
    let info = iblinkinfo_of(name, "iblinkinfo.txt");
    let no_sm = s["subnet_manager"]["running"] == false;
    for want in s["expected_hca_ports"].as_array().unwrap() {
        let desc = want["desc"].as_str().unwrap();
        let found = node(&info, desc);
        if want["state"] == "Down" {
            assert!(found.is_none(), "{name}: {desc} should be unreachable");
            continue;
        }
        let n = found.unwrap_or_else(|| panic!("{name}: no {desc}"));
        assert_eq!(n.node_type, Some(NodeType::Ca));
        let p = n
            .ports
            .iter()
            .find(|p| u64::from(p.port) == want["port"].as_u64().unwrap())
            .unwrap();
        let state = match want["state"].as_str().unwrap() {
            "Active" => PortState::Active,
            "Initializing" => PortState::Initializing,
            other => panic!("unexpected state {other}"),
        };
        assert_eq!(p.state, state, "{name}: {desc}");
        assert_eq!(
            p.physical_state,
            PhysState::parse(want["phys_state"].as_str().unwrap())
        );
        assert_eq!(
            p.width.as_ref().unwrap().text,
            want["width"].as_str().unwrap()
        );
        assert_eq!(p.nominal_rate_gbps(), want["rate_gbps"].as_f64());
        if no_sm {
            assert_eq!(p.lid, 0, "{name}: {desc} has a LID without an SM");
        } else {
            assert_ne!(p.lid, 0, "{name}: {desc} has no LID");
        }
    }
    for (id, lid) in s["lids"].as_object().unwrap() {
        let n = node(&info, &desc_of(&s, id)).unwrap();
        assert!(
            n.ports
                .iter()
                .all(|p| Some(u64::from(p.lid)) == lid.as_u64()),
            "{name}: {id}"
        );
    }
}

#[test]
fn hca_ports_match_every_scenario() {
    for name in ["healthy", "no_sm", "port_down", "narrow_link"] {
        check_hca_ports(name);
    }
}

#[test]
fn healthy_links_are_active_at_their_defined_width() {
    check_links("healthy", PortState::Active);
    let info = iblinkinfo_of("healthy", "iblinkinfo.txt");
    assert!(info.ports().all(|(_, p)| !p.degraded()));
}

#[test]
fn without_a_subnet_manager_ports_stay_initializing() {
    check_links("no_sm", PortState::Initializing);
}

#[test]
fn cut_cables_leave_down_polling_switch_ports() {
    check_links("port_down", PortState::Active);
    let s = scenario("port_down");
    let down = iblinkinfo_of("port_down", "iblinkinfo_down.txt");
    for cut in s["cut_ports"].as_array().unwrap() {
        let switch = desc_of(&s, cut["peer"][0].as_str().unwrap());
        let n = node(&down, &switch).unwrap();
        assert_eq!(n.node_type, Some(NodeType::Switch));
        let p = n
            .ports
            .iter()
            .find(|p| u64::from(p.port) == cut["peer"][1].as_u64().unwrap())
            .unwrap();
        assert_eq!(
            (p.state, p.physical_state),
            (PortState::Down, PhysState::Polling)
        );
        // The cut HCA cannot be reached, so iblinkinfo does not list it.
        let hca = desc_of(&s, cut["node"].as_str().unwrap());
        let all = iblinkinfo_of("port_down", "iblinkinfo.txt");
        assert!(node(&all, &hca).is_none(), "{hca}");
    }
    assert!(down.ports().all(|(_, p)| p.state == PortState::Down));
}

#[test]
fn narrow_link_is_1x_with_a_could_be_hint_from_both_ends() {
    check_links("narrow_link", PortState::Active);
    let s = scenario("narrow_link");
    let narrow = &s["narrow_links"][0];
    // Both ends support the width every other link of the fabric trained at.
    let normal: Vec<u32> = s["links"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["a"] != narrow["a"])
        .map(|l| lanes(l["width"].as_str().unwrap()))
        .collect();
    let could_be = *normal.iter().max().unwrap();
    for form in ["iblinkinfo.txt", "iblinkinfo_l.txt"] {
        let info = iblinkinfo_of("narrow_link", form);
        let mut degraded = 0;
        for end in ["a", "b"] {
            let desc = desc_of(&s, narrow[end][0].as_str().unwrap());
            let n = node(&info, &desc).unwrap_or_else(|| panic!("{form}: {desc}"));
            let p = n
                .ports
                .iter()
                .find(|p| u64::from(p.port) == narrow[end][1].as_u64().unwrap())
                .unwrap();
            assert_eq!(
                p.width.as_ref().unwrap().lanes,
                Some(lanes(narrow["width"].as_str().unwrap()))
            );
            assert_eq!(p.could_be_width.as_ref().unwrap().lanes, Some(could_be));
            assert_eq!(p.could_be_speed, None);
            assert_eq!(p.nominal_rate_gbps(), narrow["rate_gbps"].as_f64());
            degraded += 1;
        }
        let flagged = info.ports().filter(|(_, p)| p.degraded()).count();
        assert_eq!(flagged, degraded, "{form}");
    }
}

#[test]
fn switches_only_with_additional_fields() {
    let info = iblinkinfo_of("switch_by_lid", "iblinkinfo_switches_only_p.txt");
    assert!(info
        .nodes
        .iter()
        .all(|n| n.node_type == Some(NodeType::Switch)));
    for (_, p) in info.ports() {
        // `-p` prints HOQ/VL_Stall only for ports that are not Down.
        assert_eq!(p.hoq.is_some(), p.state != PortState::Down);
        assert_eq!(p.vl_stall.is_some(), p.state != PortState::Down);
    }
}

#[test]
fn ibstatus_without_sysfs_reports_the_failure() {
    for file in ["ibstatus.txt", "ibstatus_port.txt"] {
        let path = ibsim_dir().join("healthy").join(file);
        let doc = read(&std::fs::read_to_string(&path).unwrap());
        assert_eq!(doc.sections.len(), 1);
        let SectionData::Ibstatus(status) = &doc.sections[0].data else {
            panic!("{file}: not ibstatus");
        };
        assert!(status.ports.is_empty());
        assert!(status.fatal_error.is_some(), "{file}");
        assert_eq!(doc.sections[0].warnings.len(), 1);
    }
}

/// The public `ibnetdiscover` samples: a 582-adapter NDR fabric's topology
/// file, one that reached only its own adapter, and two `-p` listings. Every
/// line is read, and the healthy fabric's links give no IB008 finding.
#[test]
fn public_ibnetdiscover_samples() {
    let Some(samples) = public_samples("ibnetdiscover__") else {
        return;
    };
    let mut seen = 0;
    for (name, doc) in samples {
        seen += 1;
        let listings: Vec<&fabricscope::model::ibnetdiscover::Ibnetdiscover> = doc
            .sections
            .iter()
            .filter_map(|s| match &s.data {
                SectionData::Ibnetdiscover(d) => Some(d),
                _ => None,
            })
            .collect();
        assert!(!listings.is_empty(), "{name}: no ibnetdiscover section");
        let ports: usize = listings.iter().map(|d| d.ports.len()).sum();
        let nodes: usize = listings.iter().map(|d| d.nodes.len()).sum();
        // What each sample holds, counted from the files with grep.
        match name.as_str() {
            "ibnetdiscover__nvidia-topograph__1.txt" => {
                assert_eq!((nodes, ports), (622, 2228), "{name}");
            }
            "ibnetdiscover__nvidia-topograph__2.txt" => {
                assert_eq!((nodes, ports), (1, 0), "{name}");
            }
            "ibnetdiscover__treydock-infiniband_exporter__1.txt" => {
                assert_eq!(ports, 9, "{name}");
            }
            "ibnetdiscover__treydock-infiniband_exporter__2.txt" => {
                assert_eq!(ports, 6, "{name}");
            }
            _ => {}
        }
        let report = fabricscope::analyze(&[doc], &Default::default());
        assert!(
            report.findings.iter().all(|f| f.rule != "IB008"),
            "{name}: {:?}",
            report.findings
        );
        // The listing that found only its own adapter (the sources' "bad"
        // example) ends the file: it may be a cut paste, so info only.
        let alone: Vec<_> = report
            .findings
            .iter()
            .filter(|f| f.rule == "IB010")
            .map(|f| f.severity)
            .collect();
        let want: &[fabricscope::Severity] = if name == "ibnetdiscover__nvidia-topograph__2.txt" {
            &[fabricscope::Severity::Info]
        } else {
            &[]
        };
        assert_eq!(alone, want, "{name}");
    }
    assert!(seen >= 4, "the four ibnetdiscover samples");
}

/// ibsim's `ibnetdiscover` captures: IB008 names exactly the links each
/// scenario trained at 1X (its `links` in scenario.json), by the host end's
/// description, and nothing in the scenarios whose links all trained whole.
#[test]
fn ibsim_ibnetdiscover_names_the_links_trained_narrow() {
    let mut checked = 0;
    for entry in std::fs::read_dir(ibsim_dir()).unwrap() {
        let dir = entry.unwrap().path();
        let Some(name) = dir.file_name().map(|n| n.to_string_lossy().into_owned()) else {
            continue;
        };
        if !dir.join("scenario.json").is_file() {
            continue;
        }
        let s = scenario(&name);
        let is_host = |id: &str| {
            s["nodes"]
                .as_array()
                .unwrap()
                .iter()
                .any(|n| n["id"] == id && n["type"] == "Hca")
        };
        let mut want: Vec<String> = s["links"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|l| l["width"] == "1X")
            .map(|l| {
                let (a, b) = (l["a"][0].as_str().unwrap(), l["b"][0].as_str().unwrap());
                desc_of(&s, if is_host(b) { b } else { a })
            })
            .collect();
        want.sort();
        for capture in ["ibnetdiscover.txt", "ibnetdiscover_p.txt"] {
            let path = dir.join(capture);
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            checked += 1;
            let doc = read(&text);
            assert_eq!(
                doc.sections.first().map(|s| s.kind),
                Some(Kind::Ibnetdiscover),
                "{name}/{capture}"
            );
            let report = fabricscope::analyze(&[doc], &Default::default());
            let mut got: Vec<String> = report
                .findings
                .iter()
                .filter(|f| f.rule == "IB008")
                .map(|f| f.subject.device.clone().unwrap_or_default())
                .collect();
            got.sort();
            assert_eq!(got, want, "{name}/{capture}");
        }
    }
    assert!(checked >= 5, "the ibsim ibnetdiscover captures ({checked})");
}

/// The public `ibswinfo` samples (an EDR and two HDR unmanaged switches):
/// every line is read, and IB009 says what the sources list says of each
/// (SOURCES.md): a chassis fan alarm on the EDR switch, PSU1 without DC
/// power and with its fan failed on one HDR switch, nothing on the other.
#[test]
fn public_ibswinfo_samples() {
    let Some(samples) = public_samples("ibswinfo__") else {
        return;
    };
    let want: [(&str, &[&str]); 3] = [
        (
            "ibswinfo__treydock-infiniband_exporter__1.txt",
            &["a fan runs out of its range"],
        ),
        ("ibswinfo__treydock-infiniband_exporter__2.txt", &[]),
        (
            "ibswinfo__treydock-infiniband_exporter__3.txt",
            &["PSU1: no DC power, its fan failed"],
        ),
    ];
    assert_eq!(samples.len(), want.len(), "the three ibswinfo samples");
    for ((name, doc), (want_name, messages)) in samples.into_iter().zip(want) {
        assert_eq!(name, want_name);
        assert_eq!(doc.sections.len(), 1, "{name}");
        assert_eq!(doc.sections[0].kind, Kind::Ibswinfo, "{name}");
        let report = fabricscope::analyze(&[doc], &Default::default());
        let got: Vec<&str> = report
            .findings
            .iter()
            .filter(|f| f.rule == "IB009")
            .map(|f| f.message.as_str())
            .collect();
        assert_eq!(got.len(), messages.len(), "{name}: {got:?}");
        for (g, m) in got.iter().zip(messages) {
            assert!(g.contains(m), "{name}: {g}");
        }
    }
}
