//! Batch analysis of a generated fleet (`scripts/gen-fleet.py`): the findings
//! stay those recorded before the streaming pipeline was built, whatever the
//! pipeline does inside.
#![cfg(feature = "cli")]
// Test helpers: a failed command should fail the test loudly.
#![allow(clippy::panic, clippy::unwrap_used, clippy::indexing_slicing)]

mod common;

use common::{generated_fleet, repo, run_ok};
use serde_json::Value;
use std::path::Path;

/// The findings (and verdict, counts, skipped rules and inputs) of
/// `analyze` on the 12-node fleet of seed 7, recorded with the whole-fleet
/// pipeline that held every document in memory (before per-host streaming).
/// Re-recorded once after merging main's "FL004 no longer repeats an IB1xx
/// counter" (58 FL004 findings fewer, every other finding unchanged apart
/// from main's new `fingerprint` field), and once when a counter with a
/// measured growth rate stopped being compared by its count since reset
/// too (67 FL004 `info` findings fewer) and NV003's history became one
/// finding per GPU (247 per-link `info` findings became 89, the same
/// readings as their evidence); every other finding unchanged. Re-recorded
/// once more when FL001 became one finding per host and adapter family:
/// its one finding is about the host (no `device`/`guid` in its subject,
/// hence a new fingerprint), message and evidence unchanged. And once when
/// NV003's and NV004's history became one finding per host (the per-GPU
/// `info` findings of a host merged into one about the host, the same
/// readings as its evidence, the largest named first).
/// `UPDATE_GOLDEN=1` rewrites it — only when a rule change is meant to
/// change findings.
const GOLDEN: &str = "tests/golden/fleet12_findings.ndjson";

/// The report's findings and headline, one JSON value per line, with the
/// fleet's directory replaced by `FLEET` so the text does not depend on
/// where the test ran.
fn findings_lines(report: &str, root: &Path) -> Vec<String> {
    let root = root.to_str().unwrap();
    let report = report.replace(root, "FLEET");
    let v: Value = serde_json::from_str(&report).unwrap();
    let head = serde_json::json!({
        "verdict": v["verdict"],
        "status": v["status"],
        "summary": v["summary"],
        "hosts": v["hosts"],
        "rules_run": v["rules_run"],
        "skipped_rules": v["skipped_rules"],
        "skipped_inputs": v["skipped_inputs"],
    });
    let mut lines = vec![head.to_string()];
    for f in v["findings"].as_array().unwrap() {
        lines.push(f.to_string());
    }
    lines
}

/// The JSON report of `analyze` over the fleet at `root`.
fn json_report(root: &Path) -> Vec<u8> {
    run_ok(&[
        "analyze",
        root.to_str().unwrap(),
        "--format",
        "json",
        "--fail-on",
        "never",
    ])
    .stdout
}

#[test]
fn fleet_findings_equal_the_golden_recorded_before_streaming() {
    let root = generated_fleet("fleet-golden", 12);
    let got = findings_lines(&String::from_utf8(json_report(&root)).unwrap(), &root);
    let path = repo(GOLDEN);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, got.join("\n") + "\n").unwrap();
    }
    let want: Vec<String> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    assert!(want.len() > 30, "the golden holds the fleet's findings");
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "line {} of {GOLDEN} differs", i + 1);
    }
    assert_eq!(got.len(), want.len(), "number of findings");
}

/// In a batch run every evidence line names the file it was read from: on
/// a fleet, "lines 75–145" alone does not say which of a host's score of
/// files to open. Peer-group outliers (NV005, FL004) once named none.
#[test]
fn every_evidence_of_a_batch_run_names_its_file() {
    let root = generated_fleet("fleet-evidence", 12);
    let v: Value = serde_json::from_slice(&json_report(&root)).unwrap();
    let findings = v["findings"].as_array().unwrap();
    let mut outliers = 0;
    for f in findings {
        if matches!(f["rule"].as_str(), Some("NV005" | "FL004")) {
            outliers += 1;
        }
        for e in f["evidence"].as_array().unwrap() {
            let source = e["source"].as_str().unwrap_or_default();
            assert!(
                source.starts_with(root.to_str().unwrap()) && source.ends_with(".txt"),
                "{} evidence names no file: {e}",
                f["rule"]
            );
        }
    }
    assert!(outliers >= 2, "the fleet has peer-group outliers to check");
}

/// A JSON batch run keeps light copies of its findings and reads them back
/// from disk when it writes the report; a run holding every document in
/// memory (`--include-sections`, one unit) keeps them whole. Both must
/// print the same findings and incidents, byte for byte.
#[test]
fn findings_stored_on_disk_print_as_findings_kept_in_memory() {
    let root = generated_fleet("fleet-stored", 12);
    let json = |extra: &[&str]| -> Value {
        let mut args = vec![
            "analyze",
            root.to_str().unwrap(),
            "--format",
            "json",
            "--fail-on",
            "never",
        ];
        args.extend_from_slice(extra);
        serde_json::from_slice(&run_ok(&args).stdout).unwrap()
    };
    let stored = json(&[]);
    let in_memory = json(&["--include-sections"]);
    assert!(stored.get("documents").is_none());
    assert!(
        in_memory.get("documents").is_some(),
        "the in-memory path ran"
    );
    let findings = stored["findings"].as_array().unwrap();
    // Findings of many rules, on every host, go through the store.
    common::assert_findings_cover(findings, 12);
    assert!(
        findings
            .iter()
            .all(|f| f["remediation"].as_str().is_some_and(|r| !r.is_empty())
                && f["fingerprint"].as_str().is_some_and(|r| r.len() == 16)),
        "every finding read back whole, with its fingerprint"
    );
    for key in ["findings", "incidents", "summary", "verdict"] {
        assert_eq!(stored[key].to_string(), in_memory[key].to_string(), "{key}");
    }
}
