//! Absence of data is never evidence: cutting an input anywhere must never
//! produce a warning-or-worse finding that the intact input does not, nor
//! make one it does draw more severe (a Down port beside ports the cut
//! hid is not "no port of this host is Active"). One limit no reader can
//! lift: a cut exactly between two adapters' blocks leaves no trace in
//! the text, so a Down adapter listed before an Active one and cut there
//! reads as the host's only one.
//!
//! Two properties, over every input the project trusts:
//! - every `fires_*` rule fixture, cut after each line and in the middle of
//!   each line, gives no warning (rule and subject) the intact copy lacks;
//! - every healthy sample (`quiet_*` fixtures, our own captures, the shared
//!   corpus read in place) cut anywhere gives no warning at all — more
//!   generally, none that the intact copy lacks, which is the same property
//!   for inputs that are healthy intact.
//!
//! Long files are cut after every n-th line (at most 400 cuts per fixture,
//! 40 per healthy sample), each line also in its middle, so the whole test
//! stays around a minute in a debug build.
//!
//! Three conclusions drawn from what *is* in the paste are allowed to be new:
//! a present `State: Down` whose port block lost its `Link layer` is still
//! IB001, a warning that says the port may be RoCE; an `Active` clock event
//! reason whose GPU block lost its `Clocks` section is still NV007, taken as
//! printed and saying the clock was not in the paste (with the clock at its
//! maximum, the intact copy calls the flag stale, `info`); and a count over its
//! limit that the intact copy's two snapshots showed unchanged (`info`,
//! "history, not news") is a warning again once the later snapshot is cut
//! away: the count is judged as one snapshot's.

// Test helpers: a broken fixture should fail loudly.
#![allow(clippy::panic, clippy::unwrap_used, clippy::indexing_slicing)]

use fabricscope::rules::ib_counters::UNCHANGED_NOTE;
use fabricscope::rules::ib_port::LINK_LAYER_CUT_NOTE;
use fabricscope::rules::nvlink::CLOCK_NOT_IN_PASTE_NOTE;
use fabricscope::rules::{Finding, Subject};
use fabricscope::{analyze, read_all, AnalyzeOptions, ReadOptions, Severity};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// What identifies a warning across copies: the rule and the subject, less
/// the identifiers a cut may hide (GUIDs, UUIDs, a LID when the device is named).
fn key(f: &Finding) -> (String, Subject) {
    let mut s = f.subject.clone();
    s.guid = None;
    s.gpu_uuid = None;
    if s.device.is_some() {
        s.lid = None;
    }
    (f.rule.to_owned(), s)
}

/// Whether `cut` names the same thing as `whole` with at most less detail:
/// every field it sets, `whole` sets to the same value. A cut can lose the
/// lines that name a GPU or port (the finding is then about the host); that
/// is the same conclusion, not a new one.
fn coarser_or_equal(cut: &Subject, whole: &Subject) -> bool {
    let (serde_json::Value::Object(c), serde_json::Value::Object(w)) = (
        serde_json::to_value(cut).unwrap(),
        serde_json::to_value(whole).unwrap(),
    ) else {
        return cut == whole;
    };
    c.iter().all(|(k, v)| v.is_null() || w.get(k) == Some(v))
}

/// A warning: rule, subject (as [`key`] makes it), message, the input
/// lines of its evidence (first, last), and its severity.
type Warning = (String, Subject, String, Vec<(usize, usize)>, Severity);

fn warnings(text: &str, host: Option<&str>) -> Vec<Warning> {
    findings_at(text, host, |f| f.severity >= Severity::Warning)
}

/// The counts over their limits that two snapshots showed unchanged
/// (`info`, [`UNCHANGED_NOTE`]), and the hosts FL001 finds off the newest
/// firmware when no version runs on most hosts (`info`): a cut that drops
/// the last hosts of a 2-vs-2 tie leaves a majority the intact paste
/// lacks, and its finding says how many hosts it counted.
fn unchanged_history(text: &str, host: Option<&str>) -> Vec<Warning> {
    findings_at(text, host, |f| {
        f.severity == Severity::Info && (f.message.ends_with(UNCHANGED_NOTE) || f.rule == "FL001")
    })
}

fn findings_at(text: &str, host: Option<&str>, keep: impl Fn(&Finding) -> bool) -> Vec<Warning> {
    let options = ReadOptions::default().with_default_host(host.map(str::to_owned));
    let Ok(doc) = read_all(text, &options) else {
        return Vec::new();
    };
    if doc.sections.is_empty() {
        return Vec::new();
    }
    let report = analyze(&[doc], &AnalyzeOptions::default().with_interval(10.0));
    report
        .findings
        .iter()
        .filter(|f| keep(f))
        .map(|f| {
            let (r, s) = key(f);
            let lines = f
                .evidence
                .iter()
                .map(|e| (e.span.first_line, e.span.last_line))
                .collect();
            (r, s, f.message.clone(), lines, f.severity)
        })
        .collect()
}

/// Byte offsets at which to cut `text`: after every line (or, for long
/// inputs, after a stride of lines), and inside lines at the quarters in `mid`.
fn cut_points(text: &str, mid: &[usize], max_cuts: usize) -> Vec<usize> {
    let mut ends = Vec::new();
    let mut starts = vec![0];
    for (i, b) in text.bytes().enumerate() {
        if b == b'\n' {
            ends.push(i + 1);
            starts.push(i + 1);
        }
    }
    let lines = ends.len().max(1);
    let stride = lines.div_ceil(max_cuts).max(1);
    let mut cuts = BTreeSet::new();
    for (n, (&start, &end)) in starts.iter().zip(&ends).enumerate() {
        if n % stride != 0 && stride > 1 {
            continue;
        }
        cuts.insert(end);
        {
            let line = &text[start..end];
            for &frac in mid {
                let mut at = start + line.len() * frac / 4;
                while !text.is_char_boundary(at) {
                    at += 1;
                }
                if at > start && at < end {
                    cuts.insert(at);
                }
            }
        }
    }
    cuts.remove(&text.len());
    cuts.into_iter().collect()
}

struct Tally {
    copies: usize,
    bad_copies: usize,
    /// Per rule: copies with a new warning of that rule, and a few examples.
    by_rule: std::collections::BTreeMap<String, (usize, Vec<String>)>,
}

impl Tally {
    fn new() -> Self {
        Self {
            copies: 0,
            bad_copies: 0,
            by_rule: std::collections::BTreeMap::new(),
        }
    }

    /// Cuts `text` everywhere and counts copies with a warning the intact one lacks.
    fn check(
        &mut self,
        name: &str,
        text: &str,
        host: Option<&str>,
        mid: &[usize],
        max_cuts: usize,
    ) {
        let recognised =
            read_all(text, &ReadOptions::default()).is_ok_and(|d| !d.sections.is_empty());
        if !recognised {
            return;
        }
        let whole = warnings(text, host);
        let history = unchanged_history(text, host);
        let intact: BTreeSet<(String, Subject)> = whole
            .iter()
            .chain(&history)
            .map(|(r, s, _, _, _)| (r.clone(), s.clone()))
            .collect();
        // A conclusion the intact copy draws as well may not grow more
        // severe once cut: a port Down beside ports the cut hides is not
        // "no port of this host is Active". Counts the intact copy showed
        // unchanged are the exception above.
        let more_severe = |r: &str, s: &Subject, severity: Severity| {
            let same: Vec<Severity> = whole
                .iter()
                .filter(|(ir, is, _, _, _)| ir == r && coarser_or_equal(s, is))
                .map(|w| w.4)
                .collect();
            !same.is_empty()
                && same.iter().all(|&intact| intact < severity)
                && !history
                    .iter()
                    .any(|(hr, hs, _, _, _)| hr == r && coarser_or_equal(s, hs))
        };
        // The lines each rule's intact warnings cite: a warning the cut
        // copy makes of lines the intact copy cites under the same rule
        // (one port of a fabric-wide finding, standing alone once the rest
        // of the fabric is cut off) is the same conclusion, not a new one.
        let cited: BTreeSet<(&str, (usize, usize))> = whole
            .iter()
            .flat_map(|(r, _, _, lines, _)| lines.iter().map(move |l| (r.as_str(), *l)))
            .collect();
        for cut in cut_points(text, mid, max_cuts) {
            self.copies += 1;
            let cut_warnings = warnings(&text[..cut], host);
            // NV007 without the clock takes the flags as printed, and says so.
            let clockless = |r: &str, m: &str| r == "NV007" && m.contains(CLOCK_NOT_IN_PASTE_NOTE);
            let worse = cut_warnings
                .iter()
                .filter(|(r, s, m, _, sev)| more_severe(r, s, *sev) && !clockless(r, m))
                .map(|(r, s, m, _, sev)| {
                    (
                        r.clone(),
                        format!("more severe ({sev:?}): {}: {m}", s.describe()),
                    )
                });
            let new: Vec<(String, String)> = cut_warnings
                .iter()
                .filter(|(r, s, _, _, _)| {
                    !intact
                        .iter()
                        .any(|(ir, is)| ir == r && coarser_or_equal(s, is))
                })
                .filter(|(r, _, _, lines, _)| {
                    lines.is_empty() || !lines.iter().all(|l| cited.contains(&(r.as_str(), *l)))
                })
                // The one conclusion drawn from what IS there that a cut can
                // make new: a present `State: Down` whose block lost its
                // `Link layer` (RoCE ports are not IB001's). The finding says
                // so, and stays a warning.
                .filter(|(r, _, m, _, _)| !(r == "IB001" && m.contains(LINK_LAYER_CUT_NOTE)))
                .filter(|(r, _, m, _, _)| !clockless(r, m))
                .map(|(r, s, m, _, _)| (r.clone(), format!("{}: {m}", s.describe())))
                .chain(worse)
                .collect();
            if !new.is_empty() {
                self.bad_copies += 1;
                let line = text[..cut].matches('\n').count() + 1;
                let mut rules: Vec<&String> = new.iter().map(|(r, _)| r).collect();
                rules.dedup();
                for rule in rules {
                    let entry = self.by_rule.entry(rule.clone()).or_default();
                    entry.0 += 1;
                    if entry.1.len() < 3 {
                        let what: Vec<&String> = new
                            .iter()
                            .filter(|(r, _)| r == rule)
                            .map(|(_, m)| m)
                            .collect();
                        entry.1.push(format!(
                            "  {name} cut at line {line} (byte {cut}): {what:?}"
                        ));
                    }
                }
            }
        }
    }

    fn assert_clean(&self, what: &str) {
        println!(
            "{what}: {} truncated copies, {} with a new warning",
            self.copies, self.bad_copies
        );
        let mut report = String::new();
        for (rule, (n, examples)) in &self.by_rule {
            report.push_str(&format!("{rule}: {n} copies\n{}\n", examples.join("\n")));
        }
        assert!(
            self.bad_copies == 0,
            "{what}: {} of {} truncated copies produce a warning the intact copy does not:\n{report}",
            self.bad_copies,
            self.copies,
        );
    }
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            files_under(&p, out);
        } else if p.extension().is_some_and(|e| e == "txt") {
            out.push(p);
        }
    }
}

fn read_text(path: &Path) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

#[test]
fn truncated_firing_fixtures_never_add_a_warning() {
    let mut files = Vec::new();
    files_under(&root().join("tests/fixtures/rules"), &mut files);
    let mut tally = Tally::new();
    for path in files.iter().filter(|p| {
        p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("fires_"))
    }) {
        let text = read_text(path).unwrap();
        let name = path.strip_prefix(root()).unwrap().display().to_string();
        tally.check(&name, &text, None, &[2], 400);
    }
    tally.assert_clean("fires_* fixtures");
}

#[test]
fn every_prefix_of_a_healthy_sample_stays_quiet() {
    let mut files = Vec::new();
    files_under(&root().join("tests/fixtures/rules"), &mut files);
    files.retain(|p| {
        p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("quiet_"))
    });
    let mut hosted: Vec<(PathBuf, Option<String>)> = files.into_iter().map(|p| (p, None)).collect();
    let shared = root().join("../shared/corpus");
    if !shared.is_dir() {
        println!(
            "note: {} not found; shared corpus not cut",
            shared.display()
        );
    }
    for dir in [
        root().join("tests/fixtures/own"),
        shared.join("own"),
        shared.join("public"),
    ] {
        let mut more = Vec::new();
        files_under(&dir, &mut more);
        for p in more {
            // Captures are grouped by host directory, as the rules tests read them.
            let host = p
                .parent()
                .filter(|d| d.parent().is_some_and(|pp| pp.ends_with("own")))
                .and_then(|d| d.file_name())
                .map(|n| n.to_string_lossy().into_owned());
            hosted.push((p, host));
        }
    }
    let mut tally = Tally::new();
    for (path, host) in &hosted {
        let Some(text) = read_text(path) else {
            continue;
        };
        let name = path.display().to_string();
        tally.check(&name, &text, host.as_deref(), &[2], 40);
    }
    tally.assert_clean("healthy samples");
}
