//! Snapshots are paired in the order they were taken, whatever the order
//! the files come in: a host's two perfquery dumps named `…_after.txt` and
//! `…_before.txt` (name order: after first), and an archive whose members
//! are stored in any order, give the report of the same dumps read in time
//! order. And an archive of host directories is analysed host by host, as
//! the directory is.
#![cfg(feature = "cli")]
// Test helpers: a failed command should fail the test loudly.
#![allow(clippy::panic, clippy::unwrap_used, clippy::indexing_slicing)]

mod common;

use common::{generated_fleet, run_ok, scratch};
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, UNIX_EPOCH};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn report(args: &[&str]) -> Value {
    let mut all = vec!["analyze", "--format", "json", "--fail-on", "never"];
    all.extend(args);
    serde_json::from_slice(&run_ok(&all).stdout).unwrap()
}

/// Rule, subject and message of every finding, and the incidents.
fn findings(r: &Value) -> (Vec<String>, Value) {
    let f = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| format!("{} {} {}", f["rule"], f["subject"], f["message"]))
        .collect();
    (f, r["incidents"].clone())
}

/// Copies `from` to `to` with the given modification time.
fn copy_at(from: &Path, to: &Path, unix: u64) {
    std::fs::copy(from, to).unwrap();
    let file = std::fs::File::options().write(true).open(to).unwrap();
    file.set_modified(UNIX_EPOCH + Duration::from_secs(unix))
        .unwrap();
}

/// The host and HCA of the generated fleet's first `symbol_errors_rising`
/// fault (scripts/gen-fleet.py writes the list beside the fleet).
fn rising_fault(fleet: &Path) -> (String, u64) {
    let truth = fleet.with_extension("truth.json");
    let truth: Value = serde_json::from_str(&std::fs::read_to_string(truth).unwrap()).unwrap();
    let fault = truth["faults"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "symbol_errors_rising")
        .expect("the 12-node fleet has a rising-errors fault")
        .clone();
    (
        fault["host"].as_str().unwrap().to_owned(),
        fault["hca"].as_u64().unwrap(),
    )
}

#[test]
fn dumps_named_after_before_are_read_in_time_order() {
    let fleet = generated_fleet("input-order-names", 12);
    let (host, hca) = rising_fault(&fleet);
    let dump = |n: u32| {
        fleet
            .join(&host)
            .join(format!("perfquery_mlx5_{hca}_{n}.txt"))
    };
    let root = scratch("input-order-names/pairs");
    let named = |names: [&str; 2]| {
        let dir = root.join(names[0].split('_').next().unwrap()).join(&host);
        std::fs::create_dir_all(&dir).unwrap();
        copy_at(&dump(0), &dir.join(names[0]), 1_700_000_000);
        copy_at(&dump(1), &dir.join(names[1]), 1_700_000_060);
        dir.parent().unwrap().to_owned()
    };
    let in_order = report(&[s(&named(["a_perfquery_1.txt", "a_perfquery_2.txt"]))]);
    let reversed = report(&[s(&named([
        "b_perfquery_before.txt",
        "b_perfquery_after.txt",
    ]))]);
    let (rules, _) = findings(&in_order);
    assert!(
        rules.iter().any(|f| f.starts_with("\"IB112\"")),
        "rising symbol errors between the dumps: {rules:?}"
    );
    // The same findings but for the file names in the evidence.
    let severities = |r: &Value| -> Vec<(Value, Value, Value)> {
        r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["rule"].clone(),
                    f["severity"].clone(),
                    f["message"].clone(),
                )
            })
            .collect()
    };
    assert_eq!(severities(&reversed), severities(&in_order));
    assert_eq!(reversed["verdict"], in_order["verdict"]);
}

#[test]
fn an_archive_is_analysed_host_by_host_in_any_member_order() {
    let fleet = generated_fleet("input-order-archive", 12);
    let root = fleet.parent().unwrap();
    // The members stored in reverse path order: each host's later dump
    // before its earlier one, the hosts backwards.
    let mut members: Vec<String> = common::host_dirs(&fleet)
        .iter()
        .flat_map(|h| {
            std::fs::read_dir(h)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect::<Vec<_>>()
        })
        .map(|p| p.strip_prefix(root).unwrap().to_str().unwrap().to_owned())
        .collect();
    members.sort();
    members.reverse();
    std::fs::write(root.join("members.txt"), members.join("\n")).unwrap();
    let status = Command::new("tar")
        .current_dir(root)
        .args(["czf", "fleet.tar.gz", "-T", "members.txt"])
        .status()
        .unwrap();
    assert!(status.success());
    let archive = root.join("fleet.tar.gz");

    let from_dir = report(&[s(&fleet)]);
    let from_archive = report(&[s(&archive)]);
    assert!(from_dir["summary"]["error"].as_u64().unwrap() > 0);
    assert_eq!(findings(&from_archive), findings(&from_dir));
    assert_eq!(from_archive["verdict"], from_dir["verdict"]);
    assert_eq!(from_archive["host_names"], from_dir["host_names"]);

    // One unit per host: `--emit-records` writes a line per unit.
    let records = root.join("archive.ndjson");
    run_ok(&["analyze", "--emit-records", "-o", s(&records), s(&archive)]);
    let lines = std::fs::read_to_string(&records).unwrap().lines().count();
    assert_eq!(lines, 1 + 12, "a header and one line per host");
}
