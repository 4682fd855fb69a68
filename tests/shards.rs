//! Record shards: a generated 12-node fleet (`scripts/gen-fleet.py`) split
//! into three slices, each written with `analyze --emit-records`, then
//! merged with `analyze SHARD…`, prints the JSON report of one run over
//! every dump: findings, incidents, summary, verdict and measurements.
#![cfg(feature = "cli")]
// Test helpers: a failed command should fail the test loudly.
#![allow(clippy::panic, clippy::unwrap_used, clippy::indexing_slicing)]

mod common;

use common::{generated_fleet, repo, run, run_ok, scratch};

/// The counter rates of a JSON report: report schema 3 writes them in rate
/// sets, each with its `counters`.
fn rates(report: &serde_json::Value) -> usize {
    report["measurements"]["counter_rates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|set| set["counters"].as_array().unwrap().len())
        .sum()
}

#[test]
fn three_shards_merge_into_the_report_of_one_run() {
    let fleet = generated_fleet("shards-merge", 12);
    let root = fleet.parent().unwrap();
    let mut hosts: Vec<String> = std::fs::read_dir(&fleet)
        .unwrap()
        .map(|e| e.unwrap().path().to_str().unwrap().to_owned())
        .collect();
    hosts.sort();
    assert_eq!(hosts.len(), 12);
    let single = run_ok(&[
        "analyze",
        fleet.to_str().unwrap(),
        "--format",
        "json",
        "--fail-on",
        "never",
    ]);
    let shard_dir = root.join("shards");
    std::fs::create_dir_all(&shard_dir).unwrap();
    for (i, slice) in hosts.chunks(4).enumerate() {
        let out = shard_dir.join(format!("shard{i}.ndjson"));
        let mut args = vec!["analyze", "--emit-records", "-o", out.to_str().unwrap()];
        args.extend(slice.iter().map(String::as_str));
        run_ok(&args);
        let text = std::fs::read_to_string(&out).unwrap();
        let header: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert_eq!(header["kind"], "fabricscope-unit-records");
        assert_eq!(header["schema_version"], 1);
        assert_eq!(
            text.lines().count(),
            1 + 4,
            "a header and one line per host"
        );
    }
    // Shards named in any order, or as their directory.
    let s = |i: usize| shard_dir.join(format!("shard{i}.ndjson"));
    let merged = run_ok(&[
        "analyze",
        s(2).to_str().unwrap(),
        s(0).to_str().unwrap(),
        s(1).to_str().unwrap(),
        "--format",
        "json",
        "--fail-on",
        "never",
    ]);
    let by_dir = run_ok(&[
        "analyze",
        shard_dir.to_str().unwrap(),
        "--format",
        "json",
        "--fail-on",
        "never",
    ]);
    let single: serde_json::Value = serde_json::from_slice(&single.stdout).unwrap();
    let merged_v: serde_json::Value = serde_json::from_slice(&merged.stdout).unwrap();
    assert!(single["findings"].as_array().unwrap().len() > 100);
    assert!(rates(&single) > 1000);
    for key in [
        "verdict",
        "status",
        "summary",
        "findings",
        "incidents",
        "skipped_rules",
        "rules_run",
        "hosts",
        "host_names",
        "sections",
        "skipped_inputs",
        "measurements",
    ] {
        assert!(single[key] == merged_v[key], "{key} differs");
    }
    assert_eq!(merged.stdout, by_dir.stdout);
}

#[test]
fn a_host_in_two_shards_is_refused() {
    let fleet = generated_fleet("shards-overlap", 12);
    let root = fleet.parent().unwrap();
    let host = fleet.join("gpu00003");
    let a = root.join("a.ndjson");
    let b = root.join("b.ndjson");
    run_ok(&[
        "analyze",
        "--emit-records",
        "-o",
        a.to_str().unwrap(),
        host.to_str().unwrap(),
    ]);
    run_ok(&[
        "analyze",
        "--emit-records",
        "-o",
        b.to_str().unwrap(),
        host.to_str().unwrap(),
    ]);
    let o = run(&["analyze", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("gpu00003 is in two units"));
}

/// Two pdsh snapshots of one host in two files are two units at first;
/// once read, both name the host, so they are merged and read again
/// together: their snapshots still pair into rates.
#[test]
fn two_files_naming_one_host_are_analysed_together() {
    let fixture = repo("tests/fixtures/rules/FL004/fires_rail_errors_growing_now.txt");
    let text = std::fs::read_to_string(&fixture).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let dir = scratch("shards-pdsh");
    let pdsh = |part: &[&str]| {
        part.iter()
            .map(|l| format!("n1: {l}\n"))
            .collect::<String>()
    };
    let (before, after) = lines.split_at(184);
    std::fs::write(dir.join("before.txt"), pdsh(before)).unwrap();
    std::fs::write(dir.join("after.txt"), pdsh(after)).unwrap();
    std::fs::write(dir.join("both.txt"), pdsh(&lines)).unwrap();
    let json = |files: &[&str]| -> serde_json::Value {
        let mut args = vec![
            "analyze",
            "--format",
            "json",
            "--interval",
            "30s",
            "--fail-on",
            "never",
        ];
        let paths: Vec<String> = files
            .iter()
            .map(|f| dir.join(f).to_str().unwrap().to_owned())
            .collect();
        args.extend(paths.iter().map(String::as_str));
        serde_json::from_slice(&run_ok(&args).stdout).unwrap()
    };
    let split = json(&["before.txt", "after.txt"]);
    let whole = json(&["both.txt"]);
    let n = rates(&split);
    assert!(n > 100, "{n} rates");
    assert_eq!(split["host_names"], serde_json::json!(["n1"]));
    assert_eq!(n, rates(&whole));
    let rules = |v: &serde_json::Value| -> Vec<String> {
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| format!("{} {}", f["rule"], f["message"]))
            .collect()
    };
    assert_eq!(rules(&split), rules(&whole));
}
