//! The parsed-input JSON (`fabricscope parse --format json`) reads back into
//! the same [`Document`]: every fixture of the repository is parsed,
//! serialised, deserialised and compared, so `analyze` can take a saved
//! parse instead of the text.
// Test helpers: a failed round trip should fail the test loudly.
#![allow(clippy::panic, clippy::unwrap_used)]

use fabricscope::{read_all, Document, ReadOptions};
use std::path::{Path, PathBuf};

fn fixtures(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            fixtures(&path, out);
        } else if path.extension().is_some_and(|e| e == "txt") {
            out.push(path);
        }
    }
}

#[test]
fn every_fixture_round_trips_through_json() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    fixtures(&root.join("tests/fixtures"), &mut files);
    files.push(root.join("examples/oncall-paste.txt"));
    files.sort();
    let mut sections = 0;
    for f in &files {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        let doc = read_all(&text, &ReadOptions::default()).unwrap();
        sections += doc.sections.len();
        let json = serde_json::to_string(&doc).unwrap();
        let back: Document =
            serde_json::from_str(&json).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert!(
            back == doc,
            "{} differs after a JSON round trip",
            f.display()
        );
    }
    assert!(
        files.len() > 100 && sections > 500,
        "{} files, {sections} sections",
        files.len()
    );
}

/// A saved JSON report reads back into the same [`fabricscope::Report`]
/// (findings, incidents, verdict and every measurement): Rust users can
/// load reports, and record shards rely on measurements reading back.
#[test]
fn every_fixture_report_round_trips_through_json() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    fixtures(&root.join("tests/fixtures"), &mut files);
    files.sort();
    let (mut findings, mut rates) = (0, 0);
    for f in &files {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        let doc = read_all(&text, &ReadOptions::default()).unwrap();
        let report = fabricscope::analyze(&[doc], &fabricscope::AnalyzeOptions::default());
        findings += report.findings.len();
        rates += report.measurements.counter_rates.len();
        let json = serde_json::to_string(&report).unwrap();
        let back: fabricscope::Report =
            serde_json::from_str(&json).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert_eq!(
            serde_json::to_string(&back).unwrap(),
            json,
            "{} differs after a JSON round trip",
            f.display()
        );
    }
    assert!(
        findings > 100 && rates > 100,
        "{findings} findings, {rates} rates"
    );
}
