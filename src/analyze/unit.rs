//! Phase A of the engine: one unit (the documents of one host, or of the
//! hosts a group of documents names together) measured and judged by the
//! rules that need only that unit, kept as an owned, serialisable
//! [`UnitResult`].
//!
//! A unit's result holds no text and no document: findings, measurements,
//! which rules had data, and the compact facts and readings the fleet rules
//! compare across hosts. Batch runs keep these and drop the input, which is
//! what keeps their memory flat; shards write them to record files.

use super::AnalyzeOptions;
use crate::input::Document;
use crate::rules::{self, Context, Coverage, Finding, FleetFacts, Rule};
use crate::stats::{self, StatsOptions, UnitMeasurements};
use serde::{Deserialize, Serialize};

/// What one rule made of one unit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleOutcome {
    /// The rule's id.
    pub rule: String,
    /// How many subjects it looked at, when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked: Option<usize>,
    /// Why it did not run, when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

impl RuleOutcome {
    pub(super) fn of(rule: &str, coverage: Coverage) -> Self {
        let (checked, skipped) = match coverage {
            Coverage::Checked(n) => (Some(n), None),
            Coverage::Skipped(reason) => (None, Some(reason)),
        };
        Self {
            rule: rule.to_owned(),
            checked,
            skipped,
        }
    }
}

/// One unit, analysed: everything the fleet step needs, and nothing of the
/// input text.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UnitResult {
    /// A name for the unit (its first input, in batch runs): units are
    /// merged in the order of their keys, so shards give one run's order.
    #[serde(default)]
    pub key: String,
    /// Documents in the unit (input indexes of its snapshots count from 0).
    pub inputs: usize,
    /// Tool outputs (sections) read.
    pub sections: usize,
    /// The hosts the unit's documents name.
    pub host_names: Vec<String>,
    /// Documents with sections of no named host (each is one anonymous host).
    pub unnamed_hosts: usize,
    /// Findings of the unit rules, in rule order.
    pub findings: Vec<Finding>,
    /// What each unit rule made of the unit, in rule order.
    pub rules: Vec<RuleOutcome>,
    /// The unit's measurements, snapshot ids counted from 0.
    pub measured: UnitMeasurements,
    /// What the fleet rules compare.
    pub facts: FleetFacts,
}

/// The rules `options` selects (every rule but the ignored ones), in registry order.
pub(super) fn selected_rules(options: &AnalyzeOptions) -> Vec<&'static Rule> {
    rules::RULES
        .iter()
        .copied()
        .filter(|r| !options.ignore.iter().any(|i| i.eq_ignore_ascii_case(r.id)))
        .collect()
}

/// The order to analyse a unit's documents in, when it is not the order
/// given: by file time, when every document has one (stable, so files of
/// the same second keep their order). Snapshots pair in document order, and
/// names do not sort by time: read in name order, `perfquery_after.txt`
/// came before `perfquery_before.txt`, the later counters were read first,
/// their growth was taken for a reset and rising errors went unreported.
#[must_use]
pub fn time_order(documents: usize, modified_unix: &[Option<f64>]) -> Option<Vec<usize>> {
    // Read where they are, not collected first (a vector grown a few
    // times per unit, for units that are nearly always in order).
    let times = modified_unix.get(..documents)?;
    if times.iter().any(Option::is_none) {
        return None;
    }
    let time = |i: usize| times.get(i).copied().flatten().unwrap_or_default();
    if (1..documents).all(|i| time(i - 1).total_cmp(&time(i)).is_le()) {
        return None;
    }
    let mut order: Vec<usize> = (0..documents).collect();
    order.sort_by(|&a, &b| time(a).total_cmp(&time(b)));
    Some(order)
}

/// Measures one unit and runs every rule that needs only that unit.
/// `modified_unix` holds the file time of each document (may be shorter).
/// Documents given out of the order of their times are analysed in it
/// ([`time_order`]; a copy is made then, so callers holding the documents
/// sort them first).
#[must_use]
pub fn analyze_unit(
    documents: &[Document],
    modified_unix: &[Option<f64>],
    options: &AnalyzeOptions,
) -> UnitResult {
    if let Some(order) = time_order(documents.len(), modified_unix) {
        let in_order: Vec<Document> = order
            .iter()
            .filter_map(|&i| documents.get(i).cloned())
            .collect();
        let times: Vec<Option<f64>> = order
            .iter()
            .map(|&i| modified_unix.get(i).copied().flatten())
            .collect();
        return analyze_unit(&in_order, &times, options);
    }
    let sources: Vec<stats::Source<'_>> = documents
        .iter()
        .enumerate()
        .map(|(i, document)| stats::Source {
            document,
            modified_unix: modified_unix.get(i).copied().flatten(),
        })
        .collect();
    let measured = stats::measure_unit(
        &sources,
        &StatsOptions {
            interval_seconds: options.interval_seconds,
            ..StatsOptions::default()
        },
    );
    let unit_rules: Vec<&'static Rule> = selected_rules(options)
        .into_iter()
        .filter(|r| r.runs_per_unit())
        .collect();
    let ctx = Context::new(documents, &options.thresholds, &measured.measurements);
    let mut outcomes = Vec::with_capacity(unit_rules.len());
    let mut findings = Vec::new();
    // Each check adds its findings to the unit's list itself, with no
    // list and run record of its own to copy them from.
    for rule in unit_rules {
        let coverage = rules::run_one(rule, &ctx, &mut findings);
        outcomes.push(RuleOutcome::of(rule.id, coverage));
    }
    // Fingerprints hash the rule and subject only: worked out here, on the
    // unit's thread, rather than for the whole fleet in the fleet step.
    crate::report::incident::fingerprint_all(&mut findings);
    let facts = FleetFacts::of(&ctx);
    drop(ctx);
    UnitResult {
        findings,
        rules: outcomes,
        measured,
        facts,
        ..unit_hosts(documents)
    }
}

/// Which hosts a unit's documents name, without analysing them: a result
/// with only `inputs`, `sections`, `host_names` and `unnamed_hosts` set.
/// Batch runs that found two units naming one host (to be merged and read
/// again) learn the other units' hosts this way.
#[must_use]
pub fn unit_hosts(documents: &[Document]) -> UnitResult {
    // A tool's error outside any section is judged (IN003) as its host's:
    // that host counts as a section's does.
    let mut host_names: Vec<String> = documents
        .iter()
        .flat_map(|d| {
            let sections = d.sections.iter().filter_map(|s| s.host.clone());
            sections.chain(d.failures().filter_map(|m| m.host.clone()))
        })
        .collect();
    host_names.sort_unstable();
    host_names.dedup();
    let unnamed_hosts = documents
        .iter()
        .filter(|d| {
            d.sections.iter().any(|s| s.host.is_none()) || d.failures().any(|m| m.host.is_none())
        })
        .count();
    UnitResult {
        inputs: documents.len(),
        sections: documents.iter().map(|d| d.sections.len()).sum(),
        host_names,
        unnamed_hosts,
        ..UnitResult::default()
    }
}

#[cfg(test)]
mod tests {
    use super::time_order;

    #[test]
    fn documents_are_reordered_only_by_a_time_each() {
        // Already in order, or a document without a time: as given.
        assert_eq!(time_order(3, &[Some(1.0), Some(1.0), Some(2.0)]), None);
        assert_eq!(time_order(3, &[Some(2.0), None, Some(1.0)]), None);
        assert_eq!(time_order(2, &[Some(2.0)]), None);
        // Out of order: by time, files of the same second in their order.
        assert_eq!(
            time_order(4, &[Some(60.0), Some(0.0), Some(60.0), Some(0.0)]),
            Some(vec![1, 3, 0, 2])
        );
    }
}
