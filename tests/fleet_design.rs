//! A port that never linked on most hosts of a batch run is the fleet's
//! design (the second port of every dual-port card left uncabled): IB001
//! says so once, as `info` about the port, not as one `warning` per host.
//! A few hosts, a mixed fleet, or a host whose port lost its LID keep
//! their own findings. Record shards and the streamed NDJSON report say
//! the same as one run.
#![cfg(feature = "cli")]
// Test helpers: a failed command should fail the test loudly.
#![allow(clippy::panic, clippy::unwrap_used, clippy::indexing_slicing)]

mod common;

use common::{code, run, run_ok, scratch};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What port 2 of a host's dual-port `mlx5_0` shows.
#[derive(Clone, Copy)]
enum Port2 {
    /// Down/Polling, no LID ever assigned: not cabled.
    NeverLinked,
    /// Down/Polling with the LID it had: a link lost.
    LostLid,
    /// Active, cabled.
    Active,
}

/// `ibstat` of a host: `mlx5_0` with port 1 Active and port 2 as `port2`,
/// and a single-port `mlx5_1`, Active.
fn ibstat(index: usize, port2: Port2) -> String {
    let lid = 10 + index * 3;
    let (state, phys, base, sm) = match port2 {
        Port2::NeverLinked => ("Down", "Polling", 0, 0),
        Port2::LostLid => ("Down", "Polling", lid + 1, 1),
        Port2::Active => ("Active", "LinkUp", lid + 1, 1),
    };
    let port = |n: usize, state: &str, phys: &str, base: usize, sm: usize| {
        format!(
            "\tPort {n}:\n\t\tState: {state}\n\t\tPhysical state: {phys}\n\t\tRate: 400\n\t\tBase lid: {base}\n\t\tLMC: 0\n\t\tSM lid: {sm}\n\t\tCapability mask: 0xa751e848\n\t\tPort GUID: 0x946dae03000{index:03}{n}0\n\t\tLink layer: InfiniBand\n"
        )
    };
    let ca = |name: &str, ports: usize| {
        format!(
            "CA '{name}'\n\tCA type: MT4129\n\tNumber of ports: {ports}\n\tFirmware version: 28.39.1002\n\tHardware version: 0\n\tNode GUID: 0x946dae03000{index:03}00\n\tSystem image GUID: 0x946dae03000{index:03}00\n"
        )
    };
    format!(
        "{}{}{}{}{}",
        ca("mlx5_0", 2),
        port(1, "Active", "LinkUp", lid, 1),
        port(2, state, phys, base, sm),
        ca("mlx5_1", 1),
        port(1, "Active", "LinkUp", lid + 2, 1),
    )
}

/// A fleet directory: one directory per host (`node000`…) with its
/// `ibstat.txt`, port 2 of `mlx5_0` as given for each host.
fn fleet(name: &str, hosts: &[Port2]) -> PathBuf {
    let dir = scratch(name).join("fleet");
    for (i, &p) in hosts.iter().enumerate() {
        let host = dir.join(format!("node{i:03}"));
        std::fs::create_dir_all(&host).unwrap();
        std::fs::write(host.join("ibstat.txt"), ibstat(i, p)).unwrap();
    }
    dir
}

/// The JSON report of `analyze PATHS…`.
fn report(paths: &[&Path]) -> Value {
    let mut args = vec!["analyze"];
    args.extend(paths.iter().map(|p| p.to_str().unwrap()));
    args.extend(["--format", "json", "--fail-on", "never"]);
    serde_json::from_slice(&run_ok(&args).stdout).unwrap()
}

/// The report's IB001 findings.
fn ib001(report: &Value) -> Vec<&Value> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "IB001")
        .collect()
}

/// The fleet-level IB001 findings: about a port, no host.
fn about_the_fleet(report: &Value) -> Vec<&Value> {
    ib001(report)
        .into_iter()
        .filter(|f| f["subject"]["host"].is_null())
        .collect()
}

/// `n` hosts alike.
fn alike(n: usize, p: Port2) -> Vec<Port2> {
    vec![p; n]
}

#[test]
fn ten_hosts_sharing_an_uncabled_port_give_one_fleet_finding() {
    let dir = fleet("design-ten", &alike(10, Port2::NeverLinked));
    let r = report(&[&dir]);
    let fleet = about_the_fleet(&r);
    assert_eq!(fleet.len(), 1, "{:#?}", ib001(&r));
    let f = fleet[0];
    assert_eq!(f["severity"], "info");
    assert_eq!(
        f["message"],
        "mlx5_0 port 2 never linked on 10 of 10 hosts: not cabled by design?"
    );
    assert_eq!(f["subject"]["device"], "mlx5_0");
    assert_eq!(f["subject"]["port"], 2);
    // A sample of the hosts as evidence, with the count of the others.
    let evidence: Vec<&str> = f["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert!(
        evidence[0].contains("node000: mlx5_0 port 2"),
        "{evidence:?}"
    );
    assert!(evidence[0].contains("Base lid: 0"), "{evidence:?}");
    assert!(
        evidence.last().unwrap().contains("node009")
            && evidence.last().unwrap().contains("and 4 other hosts"),
        "{evidence:?}"
    );
    assert!(
        evidence.len() < 10,
        "a sample, not every host: {evidence:?}"
    );
    // No host's warning about it: the fleet finding is the only IB001.
    assert_eq!(ib001(&r).len(), 1, "{:#?}", ib001(&r));
    // One incident.
    let incidents: Vec<&Value> = r["incidents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["rule"] == "IB001")
        .collect();
    assert_eq!(incidents.len(), 1, "{incidents:#?}");
    // Nothing above info: `--fail-on warning` passes.
    let o = run(&["analyze", dir.to_str().unwrap(), "--fail-on", "warning"]);
    assert_eq!(code(&o), 0, "{}", common::stdout(&o));
}

#[test]
fn two_hosts_keep_their_own_warnings() {
    let dir = fleet("design-two", &alike(2, Port2::NeverLinked));
    let r = report(&[&dir]);
    assert!(about_the_fleet(&r).is_empty(), "{:#?}", ib001(&r));
    let warnings: Vec<(&str, &str)> = ib001(&r)
        .iter()
        .map(|f| {
            (
                f["subject"]["host"].as_str().unwrap(),
                f["severity"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        warnings,
        [("node000", "warning"), ("node001", "warning")],
        "{:#?}",
        ib001(&r)
    );
    let o = run(&["analyze", dir.to_str().unwrap(), "--fail-on", "warning"]);
    assert_eq!(code(&o), 1);
}

/// Seven hosts (one short of the fewest) keep one warning each.
#[test]
fn seven_hosts_are_too_few_to_call_it_a_design() {
    let dir = fleet("design-seven", &alike(7, Port2::NeverLinked));
    let r = report(&[&dir]);
    assert!(about_the_fleet(&r).is_empty(), "{:#?}", ib001(&r));
    assert_eq!(ib001(&r).len(), 7);
}

/// Ten hosts with the port uncabled beside four with it cabled (10 of 14,
/// under three in four): a mixed fleet, where an uncabled port may be one
/// forgotten. Each keeps its warning.
#[test]
fn a_mixed_fleet_keeps_the_warnings() {
    let mut hosts = alike(10, Port2::NeverLinked);
    hosts.extend(alike(4, Port2::Active));
    let dir = fleet("design-mixed", &hosts);
    let r = report(&[&dir]);
    assert!(about_the_fleet(&r).is_empty(), "{:#?}", ib001(&r));
    assert_eq!(ib001(&r).len(), 10);
    assert!(ib001(&r).iter().all(|f| f["severity"] == "warning"));
}

/// The fleet of the shard and stream tests: ten hosts with port 2
/// uncabled, one whose port 2 lost the LID it had, one with it cabled.
fn with_odd_hosts() -> Vec<Port2> {
    let mut hosts = alike(10, Port2::NeverLinked);
    hosts.insert(4, Port2::LostLid);
    hosts.push(Port2::Active);
    hosts
}

#[test]
fn a_host_whose_port_lost_its_lid_stays_its_own_error() {
    let dir = fleet("design-lost", &with_odd_hosts());
    let r = report(&[&dir]);
    let fleet = about_the_fleet(&r);
    assert_eq!(fleet.len(), 1, "{:#?}", ib001(&r));
    assert_eq!(
        fleet[0]["message"],
        "mlx5_0 port 2 never linked on 10 of 12 hosts: not cabled by design?"
    );
    let hosts: Vec<(&str, &str)> = ib001(&r)
        .iter()
        .filter_map(|f| Some((f["subject"]["host"].as_str()?, f["severity"].as_str()?)))
        .collect();
    assert_eq!(hosts, [("node004", "error")], "{:#?}", ib001(&r));
}

#[test]
fn shards_merged_give_the_report_of_one_run() {
    let dir = fleet("design-shards", &with_odd_hosts());
    let single = report(&[&dir]);
    assert_eq!(about_the_fleet(&single).len(), 1);
    let mut hosts: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    hosts.sort();
    let shards = dir.parent().unwrap().join("shards");
    std::fs::create_dir_all(&shards).unwrap();
    let mut written = Vec::new();
    for (i, slice) in hosts.chunks(5).enumerate() {
        let out = shards.join(format!("shard{i}.ndjson"));
        let mut args = vec!["analyze", "--emit-records", "-o", out.to_str().unwrap()];
        args.extend(slice.iter().map(|p| p.to_str().unwrap()));
        run_ok(&args);
        written.push(out);
    }
    let paths: Vec<&Path> = written.iter().map(PathBuf::as_path).collect();
    let merged = report(&paths);
    common::assert_same_report(&single, &merged);
}

/// Each finding (as its JSON text) and how many times it occurs.
fn multiset<'a>(findings: impl Iterator<Item = &'a Value>) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for f in findings {
        *m.entry(f.to_string()).or_default() += 1;
    }
    m
}

/// `analyze --format ndjson` streams: the hosts' warnings about the port
/// are held until the fleet step, which replaces them; the lines hold the
/// JSON report's findings. With two hosts, the warnings come with the
/// fleet's lines.
#[test]
fn the_stream_holds_the_findings_of_the_json_report() {
    for (name, hosts) in [
        ("design-stream", with_odd_hosts()),
        ("design-stream-two", alike(2, Port2::NeverLinked)),
    ] {
        let dir = fleet(name, &hosts);
        let o = run_ok(&[
            "analyze",
            dir.to_str().unwrap(),
            "--format",
            "ndjson",
            "--fail-on",
            "never",
        ]);
        let lines: Vec<Value> = common::stdout(&o)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let got = multiset(
            lines
                .iter()
                .flat_map(|l| l["findings"].as_array().unwrap().iter()),
        );
        let r = report(&[&dir]);
        let want = multiset(r["findings"].as_array().unwrap().iter());
        assert_eq!(got, want, "{name}");
    }
}

/// The generated 12-host fleet (`scripts/gen-fleet.py`, seed 7) with every
/// host's `mlx5_0` a dual-port card whose port 2 is not cabled says what
/// the default fleet says (same rules, severities and subjects: no
/// warning per host from IB001, no rail impaired for XS001) and one
/// finding more: IB001's about the port, for the fleet.
#[test]
fn a_generated_fleet_with_an_uncabled_second_port_adds_one_finding() {
    let generate = |name: &str, extra: &[&str]| {
        let dir = scratch(name).join("fleet");
        let status = std::process::Command::new("python3")
            .arg(common::repo("scripts/gen-fleet.py"))
            .arg(&dir)
            .args(["--nodes", "12", "--seed", "7"])
            .args(extra)
            .status()
            .expect("python3 runs scripts/gen-fleet.py");
        assert!(status.success());
        dir
    };
    // Rule, severity and subject of each finding, counted: the lines of
    // ibstat.txt after the second port move.
    let said = |dir: &Path| -> BTreeMap<String, usize> {
        let r = report(&[dir]);
        let mut m = BTreeMap::new();
        for f in r["findings"].as_array().unwrap() {
            let key = serde_json::json!([f["rule"], f["severity"], f["subject"]]).to_string();
            *m.entry(key).or_default() += 1;
        }
        m
    };
    let plain = said(&generate("design-gen-plain", &[]));
    let mut uncabled = said(&generate(
        "design-gen-uncabled",
        &["--uncabled-second-port"],
    ));
    let fleet = serde_json::json!(["IB001", "info", {"device": "mlx5_0", "port": 2}]).to_string();
    assert_eq!(uncabled.remove(&fleet), Some(1), "{uncabled:#?}");
    assert_eq!(uncabled, plain);
}
