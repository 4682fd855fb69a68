//! What changed between two runs: new, resolved and persisting incidents,
//! and counters that grew (`fabricscope diff OLD.json NEW.json`), and a
//! report cut down to what is new since a baseline (`--baseline`).
//!
//! Incidents are matched by fingerprint (rule-independent hash of the
//! subject, see [`super::incident`]), so line numbers, input order and the
//! wording of messages do not matter.

use super::incident::{self, Incident};
use super::{Report, Summary, SCHEMA_VERSION};
use crate::rules::{Finding, Severity, Subject};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// What a saved JSON report is read back as: the parts a comparison needs.
#[derive(Debug, Clone, Deserialize)]
pub struct Snapshot {
    /// The report shape's version (absent before version 2).
    #[serde(default)]
    pub schema_version: Option<u32>,
    /// The verdict line.
    #[serde(default)]
    pub verdict: String,
    /// Every finding.
    pub findings: Vec<Finding>,
    /// The incidents (recomputed from the findings when absent).
    #[serde(default)]
    pub incidents: Vec<Incident>,
}

impl Snapshot {
    /// Reads a report printed by `fabricscope analyze --format json`.
    ///
    /// # Errors
    /// When the text is not such a report, or names a rule this build does
    /// not know.
    pub fn from_json(text: &str) -> Result<Self, String> {
        let mut s: Snapshot = serde_json::from_str(text)
            .map_err(|e| format!("not a fabricscope JSON report (analyze --format json): {e}"))?;
        if s.schema_version.is_some_and(|v| v > SCHEMA_VERSION) {
            return Err(format!(
                "report schema version {} is newer than this build reads ({SCHEMA_VERSION})",
                s.schema_version.unwrap_or_default()
            ));
        }
        if s.findings.iter().any(|f| f.fingerprint.is_empty()) {
            incident::fingerprint_all(&mut s.findings);
        }
        if s.incidents.is_empty() && !s.findings.is_empty() {
            s.incidents = incident::group(&s.findings);
        }
        Ok(s)
    }

    /// The snapshot of a report made in this process.
    #[must_use]
    pub fn of(report: &Report) -> Self {
        Self {
            schema_version: Some(report.schema_version),
            verdict: report.verdict.to_string(),
            findings: report.findings.clone(),
            incidents: report.incidents.clone(),
        }
    }
}

/// An incident as the comparison lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// The incident's fingerprint.
    pub fingerprint: String,
    /// Its severity (in the newer run, for persisting incidents).
    pub severity: Severity,
    /// Its severity in the older run, for persisting incidents.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub was: Option<Severity>,
    /// The headline rule.
    pub rule: String,
    /// What it is about.
    pub subject: Subject,
    /// The headline message.
    pub title: String,
}

impl Change {
    fn of(i: &Incident, was: Option<Severity>) -> Self {
        Self {
            fingerprint: i.fingerprint.clone(),
            severity: i.severity,
            was,
            rule: i.rule.clone(),
            subject: i.subject.clone(),
            title: i.title.clone(),
        }
    }
}

/// A counter quoted in both runs' evidence that grew.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Growth {
    /// The port or link.
    pub subject: Subject,
    /// The counter's name (`SymbolErrorCounter`).
    pub counter: String,
    /// Its value in the older run.
    pub old: u64,
    /// Its value in the newer run.
    pub new: u64,
}

/// The comparison of two runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diff {
    /// The shape's version.
    pub schema_version: u32,
    /// Incidents only in the newer run.
    pub new: Vec<Change>,
    /// Incidents only in the older run.
    pub resolved: Vec<Change>,
    /// Incidents in both (`was` set when the severity changed).
    pub persisting: Vec<Change>,
    /// Counters of persisting incidents that grew.
    pub counters_grew: Vec<Growth>,
}

impl Diff {
    /// True when something is new, got worse, or a counter grew.
    #[must_use]
    pub fn has_news(&self) -> bool {
        !self.new.is_empty()
            || !self.counters_grew.is_empty()
            || self
                .persisting
                .iter()
                .any(|c| c.was.is_some_and(|w| c.severity > w))
    }
}

/// `perfquery: SymbolErrorCounter = 1234` → (`SymbolErrorCounter`, 1234).
fn counter_value(text: &str) -> Option<(String, u64)> {
    let (left, right) = text.split_once(" = ")?;
    let name = left.rsplit([' ', ':']).next()?.trim();
    let digits: String = right.chars().take_while(char::is_ascii_digit).collect();
    if name.is_empty() || digits.is_empty() {
        return None;
    }
    Some((name.to_owned(), digits.parse().ok()?))
}

/// The largest value of each counter quoted in an incident's evidence.
fn counters(s: &Snapshot, i: &Incident) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for f in i.findings.iter().filter_map(|&n| s.findings.get(n)) {
        for e in &f.evidence {
            if let Some((name, v)) = counter_value(&e.text) {
                let slot = out.entry(name).or_insert(v);
                *slot = (*slot).max(v);
            }
        }
    }
    out
}

/// Compares two runs.
#[must_use]
pub fn diff(old: &Snapshot, new: &Snapshot) -> Diff {
    let old_by: HashMap<&str, &Incident> = old
        .incidents
        .iter()
        .map(|i| (i.fingerprint.as_str(), i))
        .collect();
    let new_by: HashMap<&str, &Incident> = new
        .incidents
        .iter()
        .map(|i| (i.fingerprint.as_str(), i))
        .collect();
    let mut d = Diff {
        schema_version: SCHEMA_VERSION,
        new: Vec::new(),
        resolved: Vec::new(),
        persisting: Vec::new(),
        counters_grew: Vec::new(),
    };
    for i in &new.incidents {
        match old_by.get(i.fingerprint.as_str()) {
            None => d.new.push(Change::of(i, None)),
            Some(o) => {
                d.persisting.push(Change::of(
                    i,
                    (o.severity != i.severity).then_some(o.severity),
                ));
                let before = counters(old, o);
                for (name, now) in counters(new, i) {
                    if let Some(&then) = before.get(&name) {
                        if now > then {
                            d.counters_grew.push(Growth {
                                subject: i.subject.clone(),
                                counter: name,
                                old: then,
                                new: now,
                            });
                        }
                    }
                }
            }
        }
    }
    for i in &old.incidents {
        if !new_by.contains_key(i.fingerprint.as_str()) {
            d.resolved.push(Change::of(i, None));
        }
    }
    d
}

/// The diff for people: one line per change.
#[must_use]
pub fn render_text(d: &Diff) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let worse = d
        .persisting
        .iter()
        .filter(|c| c.was.is_some_and(|w| c.severity > w))
        .count();
    let _ = writeln!(
        s,
        "{} new, {} resolved, {} persisting ({worse} worse), {} counter(s) grew",
        d.new.len(),
        d.resolved.len(),
        d.persisting.len(),
        d.counters_grew.len()
    );
    let line = |mark: &str, c: &Change| {
        let host = c.subject.host.as_deref().unwrap_or("-");
        let was = c.was.map(|w| format!(" (was {w})")).unwrap_or_default();
        format!(
            "{mark} {:<8} {} {host} {}{was}: {}",
            c.severity.name(),
            c.rule,
            c.subject.describe(),
            c.title
        )
    };
    for c in &d.new {
        let _ = writeln!(s, "{}", line("new", c));
    }
    for c in &d.resolved {
        let _ = writeln!(s, "{}", line("resolved", c));
    }
    for c in d.persisting.iter().filter(|c| c.was.is_some()) {
        let _ = writeln!(s, "{}", line("changed", c));
    }
    for g in &d.counters_grew {
        let _ = writeln!(
            s,
            "grew {} {} {}: {} → {} (+{})",
            g.subject.host.as_deref().unwrap_or("-"),
            g.subject.describe(),
            g.counter,
            g.old,
            g.new,
            g.new - g.old
        );
    }
    s
}

/// The report cut down to incidents that are new since `baseline`, or got
/// worse; their findings are kept (re-indexed), the rest dropped, and the
/// summary, status and verdict recomputed.
#[must_use]
pub fn only_new(report: &Report, baseline: &Snapshot) -> Report {
    let old: HashMap<&str, Severity> = baseline
        .incidents
        .iter()
        .map(|i| (i.fingerprint.as_str(), i.severity))
        .collect();
    let mut out = report.clone();
    out.findings.clear();
    out.incidents.clear();
    for i in &report.incidents {
        if old
            .get(i.fingerprint.as_str())
            .is_some_and(|&s| s >= i.severity)
        {
            continue;
        }
        let mut kept = i.clone();
        kept.findings = Vec::new();
        for &n in &i.findings {
            if let Some(f) = report.findings.get(n) {
                kept.findings.push(out.findings.len());
                out.findings.push(f.clone());
            }
        }
        out.incidents.push(kept);
    }
    out.summary = Summary::of(&out.findings);
    out.status = out.summary.worst();
    let dropped = report.incidents.len() - out.incidents.len();
    let verdict = crate::analyze::verdict(
        &out.findings,
        &out.summary,
        out.hosts,
        // The report says how many rules ran, not which: the baseline's
        // comparison judged as much as the run it compares.
        crate::analyze::RulesRun {
            all: out.rules_run,
            judging: if report.verdict.level
                == crate::report::verdict::VerdictLevel::NotEnoughToJudge
            {
                0
            } else {
                out.rules_run
            },
        },
        out.skipped_rules.len(),
    );
    out.verdict = verdict.with_note(&format!(
        "new since the baseline ({dropped} known incident(s) not shown)"
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(text: &str) -> Report {
        let doc = crate::input::read_all(text, &crate::ReadOptions::default()).unwrap();
        crate::analyze(&[doc], &crate::AnalyzeOptions::default())
    }

    const DOWN: &str = "n1: CA 'mlx5_0'\nn1: \tCA type: MT4129\nn1: \tPort 1:\nn1: \t\tState: Down\nn1: \t\tPhysical state: Polling\nn1: \t\tLink layer: InfiniBand\nn2: CA 'mlx5_0'\nn2: \tCA type: MT4129\nn2: \tPort 1:\nn2: \t\tState: Active\nn2: \t\tPhysical state: LinkUp\nn2: \t\tRate: 400\nn2: \t\tBase lid: 4\nn2: \t\tSM lid: 1\nn2: \t\tLink layer: InfiniBand\n";

    #[test]
    fn a_json_report_reads_back_and_diffs_against_itself_as_unchanged() {
        let r = report(DOWN);
        let json = serde_json::to_string(&r).unwrap();
        let snap = Snapshot::from_json(&json).unwrap();
        assert_eq!(snap.findings, r.findings);
        let d = diff(&snap, &snap);
        assert!(d.new.is_empty() && d.resolved.is_empty(), "{d:?}");
        assert_eq!(d.persisting.len(), r.incidents.len());
        assert!(!d.has_news());
        assert!(Snapshot::from_json("{\"findings\":[{\"rule\":\"XX999\"}]}").is_err());
    }

    #[test]
    fn a_new_down_port_is_the_only_change_and_the_baseline_hides_the_rest() {
        let old = Snapshot::of(&report(DOWN));
        let both = DOWN.replace(
            "n2: \t\tState: Active\nn2: \t\tPhysical state: LinkUp",
            "n2: \t\tState: Down\nn2: \t\tPhysical state: Disabled",
        );
        let newer = report(&both);
        let d = diff(&old, &Snapshot::of(&newer));
        assert_eq!(d.new.len(), 1, "{d:?}");
        assert_eq!(d.new[0].subject.host.as_deref(), Some("n2"));
        assert!(d.resolved.is_empty());
        assert!(d.has_news());
        let cut = only_new(&newer, &old);
        assert_eq!(cut.incidents.len(), 1);
        assert_eq!(cut.findings.len(), cut.incidents[0].findings.len());
        assert_eq!(cut.findings[0].subject.host.as_deref(), Some("n2"));
        assert!(
            cut.verdict.contains("new since the baseline"),
            "{}",
            cut.verdict
        );
    }

    #[test]
    fn a_counter_that_grew_on_a_persisting_port_is_listed() {
        let paste = |n: u32| {
            format!("# Port counters: Lid 4 port 1 (CapMask: 0x5A00)\nPortSelect:......................1\nSymbolErrorCounter:..............{n}\nLinkErrorRecoveryCounter:........0\nLinkDownedCounter:...............0\nPortRcvErrors:...................0\n{}", crate::parse::perfquery::PORT_COUNTERS_AFTER_RCV_ERRORS)
        };
        let old = Snapshot::of(&report(&paste(40)));
        let new = Snapshot::of(&report(&paste(95)));
        let d = diff(&old, &new);
        assert!(d.new.is_empty() && d.resolved.is_empty(), "{d:?}");
        assert_eq!(d.persisting.len(), 1);
        assert_eq!(
            d.counters_grew,
            [Growth {
                subject: d.persisting[0].subject.clone(),
                counter: "SymbolErrorCounter".into(),
                old: 40,
                new: 95,
            }]
        );
        assert!(d.has_news());
        assert!(render_text(&d).contains("SymbolErrorCounter: 40 → 95 (+55)"));
    }

    #[test]
    fn counter_values_are_read_from_evidence() {
        assert_eq!(
            counter_value("perfquery: SymbolErrorCounter = 1234"),
            Some(("SymbolErrorCounter".into(), 1234))
        );
        assert_eq!(
            counter_value("SymbolErrorCounter = 1234 (later snapshot); grew by 12"),
            Some(("SymbolErrorCounter".into(), 1234))
        );
        assert_eq!(counter_value("State: Down"), None);
    }
}
