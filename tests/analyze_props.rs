//! Invariants of the diagnosis over arbitrary input: it never panics, every
//! finding names a registered rule and points at lines that exist, and every
//! rendering is well formed. Inputs are shuffled lines of real fixtures with
//! random edits, so the rules see half-broken tool output.

#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use fabricscope::report::{json, ndjson, sarif, text, NamedDocument};
use fabricscope::rules::by_id;
use fabricscope::{analyze, read_all, AnalyzeOptions, ReadOptions};
use proptest::prelude::*;
use std::path::Path;

/// Lines of a few fixtures that exercise many rules.
fn corpus_lines() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rules");
    let mut lines = Vec::new();
    for rel in [
        "IB001/fires_polling_next_to_active.txt",
        "IB112/fires_flap_and_fast_errors.txt",
        "NV001/fires_two_links_inactive.txt",
        "NV004/fires_crc_fast.txt",
        "NV006/fires_link_5_idle.txt",
        "XS001/fires_rail2_down.txt",
        "IB006/fires_ibsim_narrow_link.txt",
        "NV009/fires_gpu1_link2_down.txt",
    ] {
        let text = std::fs::read_to_string(root.join(rel)).unwrap();
        lines.extend(text.lines().map(str::to_owned));
    }
    lines
}

fn mutate(line: &str, op: u8, noise: &str) -> String {
    match op % 5 {
        0 => line.to_owned(),
        1 => format!("{line}{noise}"),
        2 => line.chars().take(line.len() / 2).collect(),
        3 => line.replace(|c: char| c.is_ascii_digit(), "9"),
        _ => format!("node{}: {line}", noise.len() % 3),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn analysis_of_mangled_output_is_sound(
        picks in prop::collection::vec((0usize..10_000, any::<u8>(), "[ -~]{0,12}"), 1..250),
        interval in prop::option::of(0.5f64..120.0),
    ) {
        let lines = corpus_lines();
        let text: String = picks
            .iter()
            .map(|(i, op, noise)| mutate(&lines[i % lines.len()], *op, noise) + "\n")
            .collect();
        let doc = read_all(&text, &ReadOptions::default()).unwrap();
        let line_count = doc.line_count;
        let docs = [doc];
        let options = AnalyzeOptions::default().with_interval(interval);
        let report = analyze(&docs, &options);
        for f in &report.findings {
            prop_assert!(by_id(f.rule).is_some(), "unknown rule {}", f.rule);
            prop_assert!(!f.message.is_empty());
            prop_assert!(!f.remediation.is_empty(), "{} has no remediation", f.rule);
            for e in &f.evidence {
                prop_assert!(
                    e.span.first_line >= 1 && e.span.last_line <= line_count,
                    "{} evidence {:?} outside 1..={line_count}", f.rule, e.span
                );
            }
        }
        let s = report.summary;
        prop_assert_eq!(s.critical + s.error + s.warning + s.info, report.findings.len());
        let named = [NamedDocument { input: "-", document: &docs[0] }];
        let _: serde_json::Value = serde_json::from_str(&json::render(&report, &named, false)).unwrap();
        for line in ndjson::render(&report).lines() {
            let _: serde_json::Value = serde_json::from_str(line).unwrap();
        }
        let sarif: serde_json::Value = serde_json::from_str(&sarif::render(&report)).unwrap();
        // SARIF has one result per incident (issue 12), and the incidents
        // partition the findings: each finding in exactly one incident.
        prop_assert_eq!(
            sarif["runs"][0]["results"].as_array().unwrap().len(),
            report.incidents.len()
        );
        let mut seen = vec![0usize; report.findings.len()];
        for i in &report.incidents {
            for &n in &i.findings {
                prop_assert!(n < seen.len(), "incident index {} out of range", n);
                seen[n] += 1;
            }
            prop_assert_eq!(report.findings[i.findings[0]].rule, i.rule.as_str());
            prop_assert_eq!(report.findings[i.findings[0]].severity, i.severity);
        }
        prop_assert!(seen.iter().all(|&c| c == 1), "findings not partitioned: {:?}", seen);
        let out = text::render(&report, &text::TextOptions::default());
        prop_assert!(out.starts_with(report.verdict.split(':').next().unwrap_or("")));
    }
}
