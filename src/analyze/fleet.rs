//! Phase B of the engine: the units' results folded together, the fleet
//! rules run over their records, then the report assembled as one run.
//!
//! Units arrive one at a time ([`Analysis::add_result`]); each is placed
//! after the ones before it (snapshot ids and input indexes shifted), its
//! findings and rule outcomes kept, its fleet facts and peer readings added
//! to compact indexes. [`Analysis::finish`] runs the fleet checks, then does
//! what a single run always did: drop repeats, sort, fingerprint, group
//! incidents, count, and write the verdict.

use super::unit::{analyze_unit, selected_rules, UnitResult};
use super::{sort_findings, verdict, AnalyzeOptions};
use crate::input::Document;
use crate::report::{Report, Summary};
use crate::rules::{Coverage, Finding, Fleet, FleetFacts, Rule, SkippedRule};
use crate::stats::{AcrossHosts, Measurements, StatsOptions};
use std::collections::BTreeSet;

/// What the units said about one rule so far.
#[derive(Debug, Clone, Default)]
struct Outcome {
    /// Subjects looked at, summed over the units where it ran.
    checked: Option<usize>,
    /// The first reason a unit gave for skipping it.
    skipped: Option<String>,
}

/// An analysis built unit by unit: the incremental form of
/// [`analyze()`](super::analyze()).
///
/// ```
/// use fabricscope::analyze::Analysis;
/// let a = fabricscope::read("h1: CA 'mlx5_0'\nh1: \tCA type: MT4129\n", &Default::default()).unwrap();
/// let b = fabricscope::read("h2: CA 'mlx5_0'\nh2: \tCA type: MT4129\n", &Default::default()).unwrap();
/// let options = fabricscope::AnalyzeOptions::default();
/// let mut analysis = Analysis::new(&options);
/// analysis.add_unit(&[a], &[]);
/// analysis.add_unit(&[b], &[]);
/// let report = analysis.finish();
/// assert_eq!(report.hosts, 2);
/// ```
///
/// A host must not be split over two units (FL rules compare hosts, and a
/// host's snapshots pair only within its unit): give all documents that
/// name a host in one unit.
#[derive(Debug)]
pub struct Analysis {
    options: AnalyzeOptions,
    selected: Vec<&'static Rule>,
    units: usize,
    outcomes: Vec<Outcome>,
    findings: Vec<Finding>,
    host_names: BTreeSet<String>,
    unnamed_hosts: usize,
    sections: usize,
    snapshots: usize,
    inputs: usize,
    measurements: Measurements,
    quiet_groups: usize,
    facts: FleetFacts,
    across: AcrossHosts,
}

impl Analysis {
    /// An analysis with no unit yet.
    #[must_use]
    pub fn new(options: &AnalyzeOptions) -> Self {
        let selected = selected_rules(options);
        Self {
            options: options.clone(),
            outcomes: vec![Outcome::default(); selected.len()],
            selected,
            units: 0,
            findings: Vec::new(),
            host_names: BTreeSet::new(),
            unnamed_hosts: 0,
            sections: 0,
            snapshots: 0,
            inputs: 0,
            measurements: Measurements::default(),
            quiet_groups: 0,
            facts: FleetFacts::default(),
            across: AcrossHosts::default(),
        }
    }

    /// The options the analysis runs with.
    #[must_use]
    pub fn options(&self) -> &AnalyzeOptions {
        &self.options
    }

    /// Analyses one unit (phase A) and adds it. `modified_unix`: the file
    /// time of each document, when known.
    pub fn add_unit(&mut self, documents: &[Document], modified_unix: &[Option<f64>]) {
        let result = analyze_unit(documents, modified_unix, &self.options);
        self.add_result(result);
    }

    /// Adds a unit analysed elsewhere ([`analyze_unit`], or read from a
    /// record shard); its measurements are kept for the report.
    pub fn add_result(&mut self, result: UnitResult) {
        let m = self.add_result_taking_measurements(result);
        self.measurements.append(m);
    }

    /// Adds a unit and hands back its measurements, numbered as in the
    /// whole run, instead of keeping them: a caller that spools them to
    /// disk keeps memory flat. The report of [`finish`](Self::finish) then
    /// holds only what the fleet step measured (peer groups across hosts
    /// and the last note); the caller writes the spooled records first.
    pub fn add_result_taking_measurements(&mut self, result: UnitResult) -> Measurements {
        let UnitResult {
            key: _,
            inputs,
            sections,
            host_names,
            unnamed_hosts,
            findings,
            rules,
            measured,
            facts,
        } = result;
        self.units += 1;
        for outcome in rules {
            let Some(i) = self.selected.iter().position(|r| r.id == outcome.rule) else {
                continue;
            };
            let Some(slot) = self.outcomes.get_mut(i) else {
                continue;
            };
            if let Some(n) = outcome.checked {
                slot.checked = Some(slot.checked.unwrap_or(0) + n);
            }
            if slot.skipped.is_none() {
                slot.skipped = outcome.skipped;
            }
        }
        self.findings.extend(findings);
        self.host_names.extend(host_names);
        self.unnamed_hosts += unnamed_hosts;
        self.sections += sections;
        self.facts.extend(facts);
        self.across.add(measured.peer_values);
        self.quiet_groups += measured.quiet_groups;
        let mut m = measured.measurements;
        let snapshots = m.snapshots.len();
        m.shift(self.snapshots, self.inputs);
        m.notes = measured
            .notes
            .into_iter()
            .map(|n| n.shifted(self.snapshots).to_string())
            .collect();
        self.snapshots += snapshots;
        self.inputs += inputs;
        m
    }

    /// Runs the fleet rules over the units' records and assembles the report.
    #[must_use]
    pub fn finish(mut self) -> Report {
        if self.units == 0 {
            // No unit: the rules still say what they lacked.
            self.add_unit(&[], &[]);
        }
        let stats_options = StatsOptions {
            interval_seconds: self.options.interval_seconds,
            ..StatsOptions::default()
        };
        let (across_groups, quiet) = self.across.finish(&stats_options);
        let fleet = Fleet {
            facts: &self.facts,
            peer_groups: &across_groups,
            thresholds: &self.options.thresholds,
        };
        let mut checked = Vec::new();
        let mut skipped = Vec::new();
        for (rule, outcome) in self.selected.iter().zip(&self.outcomes) {
            let fleet_coverage = rule
                .fleet_check()
                .map(|check| check(&fleet, &mut self.findings));
            let unit_ran = rule.runs_per_unit();
            let coverage = match (fleet_coverage, unit_ran, outcome) {
                (Some(Coverage::Checked(n)), true, o) => {
                    Coverage::Checked(n + o.checked.unwrap_or(0))
                }
                (Some(c), false, _) => c,
                (
                    _,
                    _,
                    Outcome {
                        checked: Some(n), ..
                    },
                ) => Coverage::Checked(*n),
                (
                    _,
                    _,
                    Outcome {
                        skipped: Some(reason),
                        ..
                    },
                ) => Coverage::Skipped(reason.clone()),
                (Some(c), _, _) => c,
                (None, _, _) => Coverage::Checked(0),
            };
            match coverage {
                Coverage::Checked(n) => checked.push((rule.id, n)),
                Coverage::Skipped(reason) => skipped.push(SkippedRule {
                    rule: rule.id,
                    reason,
                }),
            }
        }
        let mut measurements = self.measurements;
        measurements.peer_groups.extend(across_groups);
        measurements
            .notes
            .extend(crate::stats::quiet_note(self.quiet_groups + quiet));
        let mut findings = crate::report::incident::drop_repeats(self.findings);
        sort_findings(&mut findings);
        crate::report::incident::fingerprint_all(&mut findings);
        let incidents = crate::report::incident::group(&findings);
        let summary = Summary::of(&findings);
        let hosts = self.host_names.len() + self.unnamed_hosts;
        let verdict = verdict(&findings, &summary, hosts, checked.len(), skipped.len());
        Report {
            schema_version: crate::report::SCHEMA_VERSION,
            verdict,
            status: summary.worst(),
            summary,
            findings,
            incidents,
            skipped_rules: skipped,
            rules_run: checked.len(),
            hosts,
            host_names: self.host_names.into_iter().collect(),
            sections: self.sections,
            skipped_inputs: Vec::new(),
            measurements,
        }
    }
}
