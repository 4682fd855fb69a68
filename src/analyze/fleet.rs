//! Phase B of the engine: the units' results folded together, the fleet
//! rules run over their records, then the report assembled as one run.
//!
//! Units arrive one at a time ([`Analysis::add_result`]); each is placed
//! after the ones before it (snapshot ids and input indexes shifted), its
//! findings and rule outcomes kept, its fleet facts and peer readings added
//! to compact indexes. [`Analysis::finish`] runs the fleet checks, then does
//! what a single run always did: drop repeats, sort, fingerprint, group
//! incidents, count, and write the verdict.

use super::packed::PackedFindings;
use super::unit::{analyze_unit, selected_rules, UnitResult};
use super::{finding_order, verdict, AnalyzeOptions};
use crate::input::Document;
use crate::report::{Report, Summary};
use crate::rules::{Coverage, Finding, Fleet, FleetFacts, Rule, SkippedRule, Subject};
use crate::stats::{AcrossHosts, Measurements, StatsOptions};
use std::collections::BTreeSet;

/// Keeps findings' full text out of memory: called with each finding of a
/// batch run (fingerprinted: stored as the report prints it), once each and
/// in the unit's order of its findings, stores it (a temporary file, say)
/// and returns the id to read it back by. See
/// [`Analysis::add_result_storing`].
pub type FindingStore<'a> = dyn FnMut(&Finding) -> std::io::Result<u64> + 'a;

/// A finding reduced to what the fleet step reads (rule, severity,
/// subject; the message and evidence of the rules whose message or evidence
/// incident grouping reads): the rest — most of its size — stays in the
/// store.
fn light(mut f: Finding) -> Finding {
    use crate::report::incident::{reads_evidence, reads_message};
    if !reads_evidence(f.rule) {
        f.evidence = Vec::new();
    }
    if !reads_message(f.rule) {
        f.message = String::new();
    }
    f.threshold = None;
    f.remediation = String::new();
    f
}

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
    /// The units' findings (light copies when stored), packed until the
    /// report is built: the fleet rules' facts and these are the two large
    /// parts of a batch run's memory, and they are never whole at once.
    findings: PackedFindings,
    /// For each finding, its id in the [`FindingStore`] when it is a light
    /// copy kept there in full.
    stored: Vec<Option<u64>>,
    host_names: BTreeSet<String>,
    unnamed_hosts: usize,
    sections: usize,
    snapshots: usize,
    inputs: usize,
    measurements: Measurements,
    quiet_groups: usize,
    facts: FleetFacts,
    across: AcrossHosts,
    /// The findings of units added with
    /// [`add_result_printed`](Self::add_result_printed), counted.
    printed: Summary,
    /// IB001's warnings about ports that never linked, of units added with
    /// [`add_result_printed`](Self::add_result_printed): held (not
    /// printed) until the fleet step has said whether the port is the
    /// fleet's design. A host has none or one per dual-port card.
    held: Vec<Finding>,
}

/// The rules whose fleet check reads [`Fleet::peer_groups`] and nothing
/// else of the fleet; the others read only [`Fleet::facts`].
/// [`Analysis::run_fleet_rules`] runs the others while the peer groups
/// across hosts are still being judged, giving them no groups, then lets go
/// of the facts and runs these, giving them none (a test checks the list
/// against every rule's check).
const READING_PEER_GROUPS: &[&str] = &["FL004"];

/// What [`Analysis::run_fleet_rules`] found out.
struct FleetRun {
    /// The fleet rules' findings, in the rules' order.
    found: Vec<Finding>,
    checked: Vec<(&'static str, usize)>,
    skipped: Vec<SkippedRule>,
    across_groups: Vec<crate::stats::PeerGroup>,
    quiet: usize,
    /// The subjects of the IB001 warnings the fleet's IB001 finding
    /// replaced ([`by_design`]).
    by_design: BTreeSet<Subject>,
}

/// The end of an analysis whose units' findings were printed as they were
/// added ([`Analysis::finish_printed`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PrintedFleet {
    /// The fleet rules' findings, as the whole report would hold them
    /// (repeats dropped, worst first, fingerprinted).
    pub findings: Vec<Finding>,
    /// Every finding of the run counted: the units' and the fleet's.
    pub summary: Summary,
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
            findings: PackedFindings::default(),
            stored: Vec::new(),
            host_names: BTreeSet::new(),
            unnamed_hosts: 0,
            sections: 0,
            snapshots: 0,
            inputs: 0,
            measurements: Measurements::default(),
            quiet_groups: 0,
            facts: FleetFacts::default(),
            across: AcrossHosts::default(),
            printed: Summary::default(),
            held: Vec::new(),
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

    /// Like [`add_result_taking_measurements`](Self::add_result_taking_measurements),
    /// with the unit's findings given to `store` and only a light copy of
    /// each kept (rule, severity, subject): a batch run's findings then cost
    /// a few hundred bytes each in memory, not a kilobyte and more.
    /// Finish with [`finish_storing`](Self::finish_storing).
    ///
    /// # Errors
    /// The store's.
    pub fn add_result_storing(
        &mut self,
        mut result: UnitResult,
        store: &mut FindingStore<'_>,
    ) -> std::io::Result<Measurements> {
        for mut f in std::mem::take(&mut result.findings) {
            // Stored whole as the report prints it: with its fingerprint
            // (records written without one get it here).
            if f.fingerprint.is_empty() {
                f.fingerprint = crate::report::incident::finding_fingerprint(&f);
            }
            let id = store(&f)?;
            self.findings.push(&light(f));
            self.stored.push(Some(id));
        }
        Ok(self.add_result_taking_measurements(result))
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
        // Units list their outcomes in registry order, as `selected` is:
        // each rule is looked for after the last one found first (ids are
        // unique), not from the start, with a string compare per rule.
        let mut from = 0;
        for outcome in rules {
            let Some(i) = self
                .selected
                .get(from..)
                .and_then(|rest| rest.iter().position(|r| r.id == outcome.rule))
                .map(|p| p + from)
                .or_else(|| self.selected.iter().position(|r| r.id == outcome.rule))
            else {
                continue;
            };
            from = i + 1;
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
        self.stored.extend(findings.iter().map(|_| None));
        for f in &findings {
            self.findings.push(f);
        }
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

    /// Adds a unit whose findings the caller prints now, settled with
    /// [`settle_unit_findings`](super::settle_unit_findings) (a streamed
    /// report: NDJSON as hosts finish). Only their counts are kept, and a
    /// light copy of the IB1xx ones (an FL004 finding of the fleet step
    /// that repeats one is dropped): memory does not grow with the units'
    /// findings. Finish with [`finish_printed`](Self::finish_printed); the
    /// unit's measurements are handed back, as
    /// [`add_result_taking_measurements`](Self::add_result_taking_measurements)
    /// does.
    pub fn add_result_printed(&mut self, mut result: UnitResult) -> Measurements {
        let mut findings = std::mem::take(&mut result.findings);
        // Not printed with the unit (see [`super::held_for_the_fleet`]).
        let mut i = 0;
        while i < findings.len() {
            if findings.get(i).is_some_and(super::held_for_the_fleet) {
                self.held.push(findings.swap_remove(i));
            } else {
                i += 1;
            }
        }
        self.printed.add(&Summary::of(&findings));
        for f in findings {
            if crate::report::incident::reads_evidence(f.rule) {
                self.findings.push(&light(f));
                self.stored.push(None);
            }
        }
        self.add_result_taking_measurements(result)
    }

    /// Runs the fleet rules over the records of units added with
    /// [`add_result_printed`](Self::add_result_printed): their findings, as
    /// the whole report would hold them, and the count of every finding of
    /// the run.
    #[must_use]
    pub fn finish_printed(mut self) -> PrintedFleet {
        let FleetRun {
            found: mut fleet,
            by_design,
            ..
        } = self.run_fleet_rules();
        // The held warnings the fleet's finding did not replace are printed
        // now, with the fleet rules' findings.
        fleet.extend(
            std::mem::take(&mut self.held)
                .into_iter()
                .filter(|f| !replaced(f, &by_design)),
        );
        let mut all = self.findings.unpack(fleet.len());
        let kept_before = all.len();
        all.extend(fleet);
        let keep = crate::report::incident::kept(&all);
        let mut findings: Vec<Finding> = all
            .into_iter()
            .zip(keep)
            .skip(kept_before)
            .filter_map(|(f, k)| k.then_some(f))
            .collect();
        findings.sort_by(finding_order);
        crate::report::incident::fingerprint_all(&mut findings);
        let mut summary = self.printed;
        summary.add(&Summary::of(&findings));
        PrintedFleet { findings, summary }
    }

    /// Runs the fleet rules over the units' records and assembles the report.
    #[must_use]
    pub fn finish(self) -> Report {
        let mut none = None;
        let (report, _) = self
            .finish_inner(&mut none)
            .unwrap_or_else(|_| unreachable!("no store, no store errors"));
        report
    }

    /// Like [`finish`](Self::finish) for an analysis fed by
    /// [`add_result_storing`](Self::add_result_storing): the fleet rules'
    /// findings go to `store` too, and beside the report comes, for each of
    /// its findings, the id the store gave it. A finding with an id is a
    /// light copy in the report (no message, evidence, threshold or
    /// remediation, except what incident grouping reads): read the full one
    /// back by its id, and give it the light copy's fingerprint. An
    /// incident whose headline is a light copy without message has an
    /// empty `title`: the full finding's message.
    ///
    /// # Errors
    /// The store's.
    pub fn finish_storing(
        self,
        store: &mut FindingStore<'_>,
    ) -> std::io::Result<(Report, Vec<Option<u64>>)> {
        self.finish_inner(&mut Some(store))
    }

    /// Runs the fleet rules (their findings are handed back) and works out every rule's coverage over the run:
    /// the rules that ran with the subjects they checked, the rules skipped,
    /// and the peer groups measured across hosts with the quiet ones counted.
    fn run_fleet_rules(&mut self) -> FleetRun {
        if self.units == 0 {
            // No unit: the rules still say what they lacked.
            self.add_unit(&[], &[]);
        }
        let stats_options = StatsOptions {
            interval_seconds: self.options.interval_seconds,
            ..StatsOptions::default()
        };
        // The checks that read only the facts run while the peer groups
        // across hosts are judged (the fleet step is on one thread, the
        // other idle), each into a list of its own, appended below in the
        // rules' order as if they had run in turn; then the facts go (the
        // peak of a batch run's memory is to come: the findings sorted and
        // grouped), and the checks that read the peer groups run.
        let across = std::mem::take(&mut self.across);
        let facts = std::mem::take(&mut self.facts);
        let (thresholds, selected) = (&self.options.thresholds, &self.selected);
        let ((across_groups, quiet), (early, by_design)) = super::parallel::join(
            move || across.finish(&stats_options),
            move || {
                let fleet = Fleet {
                    facts: &facts,
                    peer_groups: &[],
                    thresholds,
                };
                let early: Vec<_> = selected
                    .iter()
                    .map(|rule| {
                        let check = rule
                            .fleet_check()
                            .filter(|_| !READING_PEER_GROUPS.contains(&rule.id))?;
                        let mut found = Vec::new();
                        let coverage = check(&fleet, &mut found);
                        Some((coverage, found))
                    })
                    .collect();
                let by_design = by_design(selected, &facts);
                drop(facts);
                (early, by_design)
            },
        );
        let no_facts = FleetFacts::default();
        let fleet = Fleet {
            facts: &no_facts,
            peer_groups: &across_groups,
            thresholds,
        };
        let mut checked = Vec::new();
        let mut skipped = Vec::new();
        let mut all_found = Vec::new();
        for ((rule, outcome), early) in selected.iter().zip(&self.outcomes).zip(early) {
            let fleet_coverage = match early {
                Some((coverage, found)) => {
                    all_found.extend(found);
                    Some(coverage)
                }
                None => rule
                    .fleet_check()
                    .map(|check| check(&fleet, &mut all_found)),
            };
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
        FleetRun {
            found: all_found,
            checked,
            skipped,
            across_groups,
            quiet,
            by_design,
        }
    }

    fn finish_inner(
        mut self,
        store: &mut Option<&mut FindingStore<'_>>,
    ) -> std::io::Result<(Report, Vec<Option<u64>>)> {
        let FleetRun {
            found: mut fleet_findings,
            checked,
            skipped,
            across_groups,
            quiet,
            by_design,
        } = self.run_fleet_rules();
        let mut measurements = self.measurements;
        measurements.peer_groups.extend(across_groups);
        measurements
            .notes
            .extend(crate::stats::quiet_note(self.quiet_groups + quiet));
        // The fleet rules' findings, stored like the units' and packed
        // after them (each let go of as it is packed, not held whole beside
        // the unpacked ones: 60,000 at 10,000 hosts), then all unpacked.
        crate::report::incident::fingerprint_all(&mut fleet_findings);
        for f in fleet_findings {
            match store.as_mut() {
                Some(store) => {
                    self.stored.push(Some(store(&f)?));
                    self.findings.push(&light(f));
                }
                None => {
                    self.stored.push(None);
                    self.findings.push(&f);
                }
            }
        }
        let findings = self.findings.unpack(0);
        let (mut findings, stored) = drop_repeats_and_sort(findings, self.stored, &by_design);
        // The units' findings were fingerprinted in parallel (phase A);
        // the fleet rules' are, and those of records written without.
        for f in findings.iter_mut().filter(|f| f.fingerprint.is_empty()) {
            f.fingerprint = crate::report::incident::finding_fingerprint(f);
        }
        let incidents = crate::report::incident::group(&findings);
        let summary = Summary::of(&findings);
        let hosts = self.host_names.len() + self.unnamed_hosts;
        let rules = super::RulesRun::of(checked.iter().map(|(id, _)| *id));
        let verdict = verdict(&findings, &summary, hosts, rules, skipped.len());
        let report = Report {
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
        };
        Ok((report, stored))
    }
}

/// The subjects of the hosts' IB001 warnings that the fleet's IB001
/// finding replaces: the ports that never linked on most hosts
/// (`never_linked_by_design`), when IB001 runs. A few hundred bytes per
/// host with such a port.
fn by_design(selected: &[&'static Rule], facts: &FleetFacts) -> BTreeSet<Subject> {
    if !selected.iter().any(|r| r.id == "IB001") {
        return BTreeSet::new();
    }
    crate::rules::ib_fleet::never_linked_by_design(facts)
        .into_iter()
        .flat_map(|d| d.ports)
        .map(|p| p.subject.clone())
        .collect()
}

/// Whether `f` is a host's IB001 warning that the fleet's IB001 finding
/// replaced: its port never linked, as on most hosts.
fn replaced(f: &Finding, by_design: &BTreeSet<Subject>) -> bool {
    f.rule == "IB001"
        && f.severity == crate::rules::Severity::Warning
        && f.subject.host.is_some()
        && by_design.contains(&f.subject)
}

/// Drops repeated FL004 findings and the IB001 warnings the fleet's IB001
/// finding replaced, and sorts the rest worst first (a stable sort: equal
/// findings keep their unit order), carrying each finding's store id
/// along. In place: a fleet's findings are not copied.
fn drop_repeats_and_sort(
    mut findings: Vec<Finding>,
    mut stored: Vec<Option<u64>>,
    by_design: &BTreeSet<Subject>,
) -> (Vec<Finding>, Vec<Option<u64>>) {
    let mut keep = crate::report::incident::kept(&findings);
    if !by_design.is_empty() {
        for (k, f) in keep.iter_mut().zip(&findings) {
            *k = *k && !replaced(f, by_design);
        }
    }
    let mut flags = keep.iter();
    findings.retain(|_| flags.next().copied().unwrap_or(true));
    let mut flags = keep.iter();
    stored.retain(|_| flags.next().copied().unwrap_or(true));
    let order = worst_first(&findings);
    // `target[i]`: where the finding now at `i` goes.
    let mut target = vec![0; order.len()];
    for (to, &from) in order.iter().enumerate() {
        if let Some(t) = target.get_mut(from) {
            *t = to;
        }
    }
    drop(order);
    for i in 0..target.len() {
        while let Some(&j) = target.get(i).filter(|&&j| j != i) {
            findings.swap(i, j);
            if j < stored.len() && i < stored.len() {
                stored.swap(i, j);
            }
            target.swap(i, j);
        }
    }
    (findings, stored)
}

/// The indexes of `findings` in [`finding_order`] (a stable sort). A
/// fleet's findings are sorted on one thread at the end of a batch run:
/// each finding's severity and host are first made one small key (the
/// host by its place among the run's host names), so most comparisons
/// compare two integers, not two host names; only findings of one
/// severity and host compare their subjects and rules.
fn worst_first(findings: &[Finding]) -> Vec<usize> {
    let mut hosts: rustc_hash::FxHashMap<&str, u32> = rustc_hash::FxHashMap::default();
    for f in findings {
        if let Some(h) = f.subject.host.as_deref() {
            let next = u32::try_from(hosts.len()).unwrap_or(u32::MAX);
            hosts.entry(h).or_insert(next);
        }
    }
    // Each host's place in name order; no host (`None`) sorts first.
    let mut names: Vec<(&str, u32)> = hosts.iter().map(|(h, i)| (*h, *i)).collect();
    names.sort_unstable_by(|a, b| a.0.cmp(b.0));
    let mut place = vec![0_u32; names.len()];
    for (rank, (_, i)) in names.iter().enumerate() {
        if let Some(slot) = place.get_mut(*i as usize) {
            *slot = u32::try_from(rank + 1).unwrap_or(u32::MAX);
        }
    }
    let keys: Vec<(std::cmp::Reverse<crate::rules::Severity>, u32)> = findings
        .iter()
        .map(|f| {
            let host = f
                .subject
                .host
                .as_deref()
                .and_then(|h| hosts.get(h))
                .and_then(|&i| place.get(i as usize).copied())
                .unwrap_or(0);
            (std::cmp::Reverse(f.severity), host)
        })
        .collect();
    let mut order: Vec<usize> = (0..findings.len()).collect();
    super::parallel::sort_by(&mut order, |&a, &b| {
        keys.get(a)
            .cmp(&keys.get(b))
            .then_with(|| match (findings.get(a), findings.get(b)) {
                (Some(fa), Some(fb)) => fa
                    .subject
                    .cmp(&fb.subject)
                    .then_with(|| fa.rule.cmp(fb.rule)),
                _ => a.cmp(&b),
            })
    });
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(text: &str) -> UnitResult {
        let doc = crate::input::read_all(text, &crate::ReadOptions::default()).unwrap();
        analyze_unit(&[doc], &[], &AnalyzeOptions::default())
    }

    /// Hosts with a down port and stale counters (IB001 + IB1xx + FL), and
    /// a healthy one, in an order the sort must change.
    fn units() -> Vec<UnitResult> {
        let down = |host: &str, lid: u32| {
            format!(
                "{host}: CA 'mlx5_0'\n{host}: \tCA type: MT4129\n{host}: \tPort 1:\n{host}: \t\tState: Down\n{host}: \t\tPhysical state: Polling\n{host}: \t\tRate: 400\n{host}: \t\tBase lid: {lid}\n{host}: \t\tSM lid: 1\n{host}: \t\tLink layer: InfiniBand\n{host}: # Port counters: Lid {lid} port 1 (CapMask: 0x5A00)\n{host}: PortSelect:......................1\n{host}: SymbolErrorCounter:..............4000\n{host}: LinkDownedCounter:...............40\n{host}: PortRcvErrors:...................400\n"
            )
        };
        let healthy = "h0: CA 'mlx5_0'\nh0: \tCA type: MT4129\nh0: \tPort 1:\nh0: \t\tState: Active\nh0: \t\tPhysical state: LinkUp\nh0: \t\tRate: 200\nh0: \t\tBase lid: 4\nh0: \t\tSM lid: 1\nh0: \t\tLink layer: InfiniBand\n";
        vec![unit(&down("h9", 9)), unit(healthy), unit(&down("h2", 2))]
    }

    proptest::proptest! {
        /// Findings sort worst first as [`finding_order`] sorts them (ties
        /// in their order), whatever their severities, hosts and subjects.
        #[test]
        fn worst_first_is_the_finding_order(
            picks in proptest::collection::vec(
                (0usize..4, proptest::option::of(0usize..4), 0u32..3, 0usize..3),
                0..60,
            ),
        ) {
            let rules = ["IB001", "NV003", "FL004"];
            let hosts = ["b", "a", "a0", "gpu10"];
            let findings: Vec<Finding> = picks
                .iter()
                .map(|&(sev, host, port, rule)| {
                    let subject = crate::rules::Subject {
                        host: host.map(|h| hosts[h].to_owned()),
                        port: Some(port),
                        ..crate::rules::Subject::default()
                    };
                    crate::rules::by_id(rules[rule])
                        .unwrap()
                        .finding(subject, "m")
                        .severity(crate::rules::Severity::WORST_FIRST[sev])
                })
                .collect();
            let mut want: Vec<usize> = (0..findings.len()).collect();
            want.sort_by(|&a, &b| finding_order(&findings[a], &findings[b]));
            proptest::prop_assert_eq!(worst_first(&findings), want);
        }
    }

    /// Hosts whose port 1 reads the same counters, one of them far more.
    fn peers() -> Vec<UnitResult> {
        let host = |name: &str, lid: u32, symbols: u32, firmware: &str| {
            let text = format!(
                "CA 'mlx5_0'\n\tCA type: MT4129\n\tFirmware version: {firmware}\n\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 400\n\t\tBase lid: {lid}\n\t\tSM lid: 1\n\t\tLink layer: InfiniBand\n# Port counters: Lid {lid} port 1 (CapMask: 0x5A00)\nPortSelect:......................1\nSymbolErrorCounter:..............{symbols}\nPortRcvErrors:...................{symbols}\n"
            );
            unit(
                &text
                    .lines()
                    .map(|l| format!("{name}: {l}\n"))
                    .collect::<String>(),
            )
        };
        vec![
            host("h1", 1, 3, "28.39.1002"),
            host("h2", 2, 4, "28.39.1002"),
            host("h3", 3, 5, "28.39.1002"),
            host("h4", 4, 90_000, "28.36.1010"),
        ]
    }

    /// The rules left out of [`READING_PEER_GROUPS`] say the same without
    /// the peer groups across hosts; the listed ones do not, and say the
    /// same without the facts.
    #[test]
    fn only_the_listed_fleet_checks_read_the_peer_groups() {
        let mut analysis = Analysis::new(&AnalyzeOptions::default());
        for u in peers() {
            analysis.add_result(u);
        }
        let (groups, _) = std::mem::take(&mut analysis.across).finish(&StatsOptions::default());
        assert!(!groups.is_empty());
        assert!(!analysis.facts.adapters.is_empty());
        let no_facts = FleetFacts::default();
        let whole = Fleet {
            facts: &analysis.facts,
            peer_groups: &groups,
            thresholds: &analysis.options.thresholds,
        };
        let run = |fleet: &Fleet<'_>, check: crate::rules::FleetCheck| {
            let mut found = Vec::new();
            let coverage = check(fleet, &mut found);
            (coverage, found)
        };
        let mut fleet_rules = 0;
        for rule in crate::rules::registry::RULES {
            let Some(check) = rule.fleet_check() else {
                continue;
            };
            fleet_rules += 1;
            let said = run(&whole, check);
            let without_groups = Fleet {
                peer_groups: &[],
                ..whole
            };
            let listed = READING_PEER_GROUPS.contains(&rule.id);
            assert_eq!(run(&without_groups, check) == said, !listed, "{}", rule.id);
            if listed {
                let without_facts = Fleet {
                    facts: &no_facts,
                    ..whole
                };
                assert_eq!(run(&without_facts, check), said, "{}", rule.id);
            }
        }
        assert!(fleet_rules > READING_PEER_GROUPS.len());
    }

    #[test]
    fn findings_kept_in_a_store_give_the_report_kept_in_memory() {
        let options = AnalyzeOptions::default();
        let mut whole = Analysis::new(&options);
        for u in units() {
            whole.add_result(u);
        }
        let want = whole.finish();
        assert!(want.findings.len() >= 6, "{:#?}", want.findings);

        let mut store: Vec<Finding> = Vec::new();
        let mut keep = |f: &Finding| -> std::io::Result<u64> {
            store.push(f.clone());
            Ok(store.len() as u64 - 1)
        };
        let mut light = Analysis::new(&options);
        for u in units() {
            let m = light.add_result_storing(u, &mut keep).unwrap();
            light.measurements.append(m);
        }
        let (mut got, ids) = light.finish_storing(&mut keep).unwrap();
        assert_eq!(ids.len(), got.findings.len());
        assert!(
            got.findings.iter().any(|f| f.remediation.is_empty()),
            "light copies"
        );
        for (f, id) in got.findings.iter_mut().zip(&ids) {
            let id = usize::try_from(id.unwrap()).unwrap();
            let mut full = store[id].clone();
            full.fingerprint.clone_from(&f.fingerprint);
            *f = full;
        }
        assert!(got.incidents.iter().any(|i| i.title.is_empty()));
        for i in &mut got.incidents {
            if i.title.is_empty() {
                i.title.clone_from(&got.findings[i.findings[0]].message);
            }
        }
        assert_eq!(got, want);
    }
}
