//! `analyze --format ndjson` on a batch run streams: each unit's incidents
//! as the unit is folded, then the fleet rules'. The lines must come in the
//! same order whatever the threads do, hold exactly the findings of the
//! JSON report, and never print a host before all of its files are known.
#![cfg(feature = "cli")]
// Test helpers: a failed command should fail the test loudly.
#![allow(clippy::panic, clippy::unwrap_used, clippy::indexing_slicing)]

mod common;

use common::{generated_fleet, host_dirs, run_ok};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

/// `analyze PATH --format ndjson` with `threads` rayon threads.
fn ndjson(path: &Path, threads: usize) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_fabricscope"))
        .args(["analyze", path.to_str().unwrap(), "--format", "ndjson"])
        .args(["--fail-on", "never"])
        .env("RAYON_NUM_THREADS", threads.to_string())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// Each finding (as its JSON text) and how many times it occurs.
fn multiset<'a>(findings: impl Iterator<Item = &'a Value>) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for f in findings {
        *m.entry(f.to_string()).or_default() += 1;
    }
    m
}

/// The JSON report's findings.
fn json_findings(path: &Path) -> BTreeMap<String, usize> {
    let o = run_ok(&[
        "analyze",
        path.to_str().unwrap(),
        "--format",
        "json",
        "--fail-on",
        "never",
    ]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    multiset(v["findings"].as_array().unwrap().iter())
}

/// The lines of a streamed report, parsed.
fn lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The findings of every line.
fn line_findings(lines: &[Value]) -> BTreeMap<String, usize> {
    multiset(
        lines
            .iter()
            .flat_map(|l| l["findings"].as_array().unwrap().iter()),
    )
}

/// The host of each `host` line, in order.
fn host_order(lines: &[Value]) -> Vec<String> {
    lines
        .iter()
        .filter(|l| l["scope"] == "host")
        .map(|l| l["subject"]["host"].as_str().unwrap_or("").to_owned())
        .collect()
}

#[test]
fn streamed_lines_come_in_one_order_and_hold_the_json_reports_findings() {
    let fleet = generated_fleet("ndjson-stream", 12);
    let one = ndjson(&fleet, 1);
    assert_eq!(one, ndjson(&fleet, 3), "the order depends on threads");
    let parsed = lines(&one);
    assert!(parsed.len() > 20, "{one}");
    assert!(parsed.iter().all(|l| l["schema_version"] == 4));
    // Every host's lines, host by host in input order, then the fleet's.
    let first_fleet = parsed
        .iter()
        .position(|l| l["scope"] == "fleet")
        .expect("the generated fleet has fleet findings");
    assert!(parsed[first_fleet..].iter().all(|l| l["scope"] == "fleet"));
    let hosts = host_order(&parsed);
    let mut sorted = hosts.clone();
    sorted.sort();
    assert_eq!(hosts, sorted);
    assert!(sorted.windows(2).filter(|w| w[0] != w[1]).count() >= 5);
    assert_eq!(line_findings(&parsed), json_findings(&fleet));
}

/// A file of another directory names `gpu00003` (a pdsh paste): that host's
/// unit is merged with it and read again, so it must not be printed when
/// it is first folded. It is held and printed after the other hosts,
/// once, with the findings of the merged unit.
#[test]
fn a_host_another_file_names_is_held_until_every_unit_is_known() {
    let fleet = generated_fleet("ndjson-stream-overlap", 12);
    let ibstat = std::fs::read_to_string(fleet.join("gpu00003/ibstat.txt")).unwrap();
    let paste: String = ibstat.lines().map(|l| format!("gpu00003: {l}\n")).collect();
    std::fs::create_dir_all(fleet.join("zz-paste")).unwrap();
    std::fs::write(fleet.join("zz-paste/pdsh-ibstat.txt"), paste).unwrap();
    let text = ndjson(&fleet, 2);
    assert_eq!(text, ndjson(&fleet, 1));
    let parsed = lines(&text);
    let want = json_findings(&fleet);
    let got = line_findings(&parsed);
    assert!(got.values().all(|n| *n == 1), "a finding printed twice");
    assert_eq!(got, want);
    let hosts = host_order(&parsed);
    let held = hosts.iter().position(|h| h == "gpu00003").unwrap();
    assert!(
        hosts[..held].iter().any(|h| h == "gpu00011"),
        "gpu00003 comes after the hosts printed at once: {hosts:?}"
    );
    assert!(hosts[held..].iter().all(|h| h == "gpu00003"), "{hosts:?}");
}

/// Record shards merged with `--format ndjson` stream the lines of one run.
#[test]
fn shards_merged_stream_the_lines_of_one_run() {
    let fleet = generated_fleet("ndjson-stream-shards", 8);
    let root = fleet.parent().unwrap();
    let hosts = host_dirs(&fleet);
    let mut shards = Vec::new();
    for (i, slice) in hosts.chunks(3).enumerate() {
        let out = root.join(format!("shard{i}.ndjson"));
        let mut args = vec!["analyze", "--emit-records", "-o", out.to_str().unwrap()];
        args.extend(slice.iter().map(String::as_str));
        run_ok(&args);
        shards.push(out.to_str().unwrap().to_owned());
    }
    let mut args = vec!["analyze", "--format", "ndjson", "--fail-on", "never"];
    args.extend(shards.iter().rev().map(String::as_str));
    let merged = String::from_utf8(run_ok(&args).stdout).unwrap();
    assert_eq!(merged, ndjson(&fleet, 2));
}
