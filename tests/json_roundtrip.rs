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

/// Report schema 3 writes counter rates in rate sets (the fields a run of
/// rates shares, once, then `counters`). Nothing may be lost: each counter
/// merged with its set's fields is, in order, the rate the statistics
/// serialise themselves (`Measurements`' own, flat serde); and a report of
/// schema 2 (one rate per entry) still reads back into the same report.
#[test]
fn rate_sets_hold_every_rate_and_flat_rates_read_back() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    fixtures(&root.join("tests/fixtures"), &mut files);
    files.sort();
    let (mut rates, mut sets) = (0, 0);
    for f in &files {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        let doc = read_all(&text, &ReadOptions::default()).unwrap();
        let report = fabricscope::analyze(&[doc], &fabricscope::AnalyzeOptions::default());
        let written = serde_json::to_value(&report).unwrap();
        let flat = serde_json::to_value(&report.measurements.counter_rates).unwrap();
        let mut merged = Vec::new();
        for set in written["measurements"]["counter_rates"].as_array().unwrap() {
            let set = set.as_object().unwrap();
            let counters = set["counters"].as_array().unwrap();
            assert!(!counters.is_empty(), "{}: an empty set", f.display());
            sets += 1;
            for c in counters {
                let mut rate = c.as_object().unwrap().clone();
                for (k, v) in set.iter().filter(|(k, _)| *k != "counters") {
                    assert!(rate.insert(k.clone(), v.clone()).is_none(), "{k} twice");
                }
                merged.push(serde_json::Value::Object(rate));
            }
        }
        rates += merged.len();
        assert_eq!(serde_json::Value::Array(merged), flat, "{}", f.display());

        let mut old = written.clone();
        old["schema_version"] = 2.into();
        old["measurements"]["counter_rates"] = flat;
        let back: fabricscope::Report = serde_json::from_value(old).unwrap();
        assert_eq!(
            serde_json::to_value(&back.measurements).unwrap(),
            serde_json::to_value(&report.measurements).unwrap(),
            "{}: a schema 2 report reads back",
            f.display()
        );
    }
    assert!(
        rates > 100 && sets * 3 < rates,
        "{rates} rates in {sets} sets"
    );
}
