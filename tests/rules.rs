//! Accuracy of every rule on its fixtures: `fires_*` inputs must give exactly
//! the findings listed in `expected.txt`, `quiet_*` near misses must be
//! checked and give none, `unjudged_*` inputs must be skipped. Healthy real
//! captures must give no warning.

// Test helpers: a broken fixture should fail loudly.
#![allow(clippy::panic, clippy::unwrap_used, clippy::indexing_slicing)]

use fabricscope::rules::{registry::RULES, run, Context, Finding, Rule, Thresholds};
use fabricscope::{read_all, Document, ReadOptions};
use std::path::{Path, PathBuf};

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rules")
}

fn document(path: &Path) -> Document {
    let text = std::fs::read_to_string(path).unwrap();
    let doc = read_all(&text, &ReadOptions::default()).unwrap();
    assert!(
        !doc.sections.is_empty(),
        "{}: nothing recognised",
        path.display()
    );
    doc
}

/// Runs one rule; `None` when it skipped the input.
fn check(rule: &'static Rule, doc: Document) -> Option<Vec<Finding>> {
    let docs = [doc];
    let thresholds = Thresholds::default();
    let stats = fabricscope::stats::StatsOptions::default().with_interval(10.0);
    let m = fabricscope::stats::measure_many(&docs, &stats);
    let out = run(&[rule], &Context::new(&docs, &thresholds, &m));
    if out.skipped.is_empty() {
        Some(out.findings)
    } else {
        None
    }
}

/// `severity | host | subject` of a finding, as written in expected.txt.
fn describe(f: &Finding) -> String {
    format!(
        "{} | {} | {}",
        f.severity,
        f.subject.host.as_deref().unwrap_or("-"),
        f.subject.describe()
    )
}

#[test]
fn every_rule_fires_on_its_fixtures_and_stays_quiet_on_near_misses() {
    let mut problems = Vec::new();
    for rule in RULES {
        let dir = fixtures_dir().join(rule.id);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            problems.push(format!("{}: no fixture directory", rule.id));
            continue;
        };
        let mut files: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        files.sort();
        let expected = std::fs::read_to_string(dir.join("expected.txt")).unwrap_or_default();
        let (mut fires, mut quiet) = (0, 0);
        for path in files {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with("fires_") {
                fires += 1;
                let mut want: Vec<String> = expected
                    .lines()
                    .filter_map(|l| l.split_once(" | "))
                    .filter(|(file, _)| *file == name)
                    .map(|(_, rest)| rest.trim().to_owned())
                    .collect();
                match check(rule, document(&path)) {
                    None => problems.push(format!("{}/{name}: rule skipped", rule.id)),
                    Some(findings) => {
                        let mut got: Vec<String> = findings.iter().map(describe).collect();
                        got.sort();
                        want.sort();
                        if want.is_empty() {
                            problems.push(format!("{}/{name}: not in expected.txt", rule.id));
                        } else if got != want {
                            problems.push(format!(
                                "{}/{name}:\n  want {want:?}\n  got  {got:?}",
                                rule.id
                            ));
                        }
                    }
                }
            } else if name.starts_with("unjudged_") {
                // Input the rule has nothing to judge in: it must say so
                // (skip), not pass it as checked and sound.
                if let Some(f) = check(rule, document(&path)) {
                    problems.push(format!(
                        "{}/{name}: checked, not skipped ({} findings)",
                        rule.id,
                        f.len()
                    ));
                }
            } else if name.starts_with("quiet_") {
                quiet += 1;
                match check(rule, document(&path)) {
                    None => problems.push(format!("{}/{name}: rule skipped", rule.id)),
                    Some(f) if !f.is_empty() => problems.push(format!(
                        "{}/{name}: false positive {:?}",
                        rule.id,
                        f.iter().map(|f| &f.message).collect::<Vec<_>>()
                    )),
                    Some(_) => {}
                }
            }
        }
        if fires == 0 || quiet == 0 {
            problems.push(format!(
                "{}: needs fires_*.txt and quiet_*.txt (has {fires} and {quiet})",
                rule.id
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The project's own H200 captures come from healthy machines: no rule may
/// report a warning or worse on them.
#[test]
fn healthy_h200_captures_raise_no_warning() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/own");
    let Ok(hosts) = std::fs::read_dir(&root) else {
        println!("skipped: {} not found", root.display());
        return;
    };
    let mut docs = Vec::new();
    for host in hosts.flatten().filter(|e| e.path().is_dir()) {
        let host_name = host.file_name().to_string_lossy().into_owned();
        let mut files: Vec<PathBuf> = std::fs::read_dir(host.path())
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        files.sort();
        for file in files {
            let bytes = std::fs::read(&file).unwrap();
            let options = ReadOptions::default().with_default_host(host_name.clone());
            if let Ok(doc) = fabricscope::read_bytes(&bytes, &options) {
                docs.push(doc);
            }
        }
    }
    // Without an interval (absolute values only), and with the 2 s that
    // separate the during_gt_r snapshots (rates, balance, BER).
    for interval_seconds in [None, Some(2.0)] {
        let options = fabricscope::AnalyzeOptions::default().with_interval(interval_seconds);
        let report = fabricscope::analyze(&docs, &options);
        assert!(
            report.rules_run >= 5,
            "the captures exercise the NVLink rules"
        );
        let bad: Vec<String> = report
            .findings
            .iter()
            .filter(|f| f.severity >= fabricscope::Severity::Warning)
            .map(|f| format!("{} {} {}", f.rule, describe(f), f.message))
            .collect();
        assert!(
            bad.is_empty(),
            "false positives on healthy captures ({interval_seconds:?}):\n{}",
            bad.join("\n")
        );
    }
}

/// Public samples with a known verdict (read from the shared corpus, never
/// copied): the azurehpc "bad" NVLink sample has a GPU with every link
/// inactive; bridged and unbridged PCIe boards are healthy by design; a
/// host mixing ConnectX-6 Dx and ConnectX-7 virtual functions (one CA type)
/// is not a firmware mismatch.
#[test]
fn public_samples_get_their_known_verdicts() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/public");
    if !root.is_dir() {
        println!("skipped: {} not found", root.display());
        return;
    }
    let verdict = |rel: &str| -> Vec<(String, fabricscope::Severity)> {
        let bytes = std::fs::read(root.join(rel)).unwrap();
        let doc = fabricscope::read_bytes(&bytes, &ReadOptions::default()).unwrap();
        fabricscope::analyze(&[doc], &Default::default())
            .findings
            .iter()
            .filter(|f| f.severity >= fabricscope::Severity::Warning)
            .map(|f| (f.rule.to_owned(), f.severity))
            .collect()
    };
    assert_eq!(
        verdict("nvlink/nvlink-s__azurehpc-health-checks-testdata__bad.txt"),
        [("NV001".to_owned(), fabricscope::Severity::Critical)]
    );
    for healthy in [
        "nvlink/nvlink-s__azurehpc-health-checks-testdata__good.txt",
        "nvlink/nvlink-s__hpe-jp-elearning-a100pcie__1.txt",
        "nvlink/nvlink-s__hpe-jp-elearning-h100pcie__1.txt",
        "nvlink/topo-m__hpe-jp-elearning-h100pcie__1.txt",
        "ib/ibstat__gpud-testdata__6.txt",
    ] {
        assert_eq!(verdict(healthy), [], "{healthy}");
    }
}
