//! Batch analysis of a generated fleet (`scripts/gen-fleet.py`): the findings
//! stay those recorded before the streaming pipeline was built, whatever the
//! pipeline does inside.
#![cfg(feature = "cli")]
// Test helpers: a failed command should fail the test loudly.
#![allow(clippy::panic, clippy::unwrap_used, clippy::indexing_slicing)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const MANIFEST: &str = env!("CARGO_MANIFEST_DIR");

/// The findings (and verdict, counts, skipped rules and inputs) of
/// `analyze` on the 12-node fleet of seed 7, recorded with the whole-fleet
/// pipeline that held every document in memory (before per-host streaming).
/// Re-recorded once after merging main's "FL004 no longer repeats an IB1xx
/// counter" (58 FL004 findings fewer, every other finding unchanged apart
/// from main's new `fingerprint` field). `UPDATE_GOLDEN=1` rewrites it — only when a rule change is meant to
/// change findings.
const GOLDEN: &str = "tests/golden/fleet12_findings.ndjson";

fn run(args: &[&str]) -> Output {
    let o = Command::new(env!("CARGO_BIN_EXE_fabricscope"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// A scratch directory under the target dir, emptied first.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Generates the fleet of `nodes` hosts (seed 7) under a scratch directory.
fn fleet(name: &str, nodes: usize) -> PathBuf {
    let dir = scratch(name).join("fleet");
    let status = Command::new("python3")
        .arg(Path::new(MANIFEST).join("scripts/gen-fleet.py"))
        .arg(&dir)
        .args(["--nodes", &nodes.to_string(), "--seed", "7"])
        .status()
        .expect("python3 runs scripts/gen-fleet.py");
    assert!(status.success());
    dir
}

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

#[test]
fn fleet_findings_equal_the_golden_recorded_before_streaming() {
    let root = fleet("fleet-golden", 12);
    let o = run(&[
        "analyze",
        root.to_str().unwrap(),
        "--format",
        "json",
        "--fail-on",
        "never",
    ]);
    let got = findings_lines(&String::from_utf8(o.stdout).unwrap(), &root);
    let path = Path::new(MANIFEST).join(GOLDEN);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, got.join("\n") + "\n").unwrap();
    }
    let want: Vec<String> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    assert!(want.len() > 100, "the golden holds the fleet's findings");
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "line {} of {GOLDEN} differs", i + 1);
    }
    assert_eq!(got.len(), want.len(), "number of findings");
}
