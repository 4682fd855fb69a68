//! The entry point of the diagnosis: documents in, a [`Report`] out.
//!
//! The engine works in two phases so that a fleet never has to sit in
//! memory whole:
//! - **unit** (`unit.rs`, phase A): the documents of one host are measured
//!   and judged by every rule that needs only them; what is kept is a
//!   compact, serialisable [`UnitResult`] (findings, measurements, rule
//!   coverage, and the facts the fleet rules compare);
//! - **fleet** (`fleet.rs`, phase B, [`Analysis`]): the results are folded
//!   together, the rules that compare hosts run over the records, and the
//!   report is assembled as one run.
//!
//! [`analyze()`] is both phases over one unit (a paste, a page); batch runs
//! and record shards use [`analyze_unit`] and [`Analysis`] directly.
//!
//! ```
//! let paste = "$ ibstat\nCA 'mlx5_0'\n\tCA type: MT4123\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Polling\n\t\tLink layer: InfiniBand\n";
//! let doc = fabricscope::read(paste, &Default::default()).unwrap();
//! let report = fabricscope::analyze(&[doc], &Default::default());
//! assert_eq!(report.findings[0].rule, "IB001");
//! assert!(report.verdict.starts_with("critical"));
//! ```

mod fleet;
mod packed;
pub(crate) mod parallel;
pub mod records;
mod unit;

pub use fleet::{Analysis, FindingStore, PrintedFleet};
pub use unit::{analyze_unit, time_order, unit_hosts, RuleOutcome, UnitResult};

use crate::input::Document;
use crate::report::verdict::{Verdict, VerdictLevel};
use crate::report::{Report, Summary};
use crate::rules::{Family, Finding, Severity, Thresholds};

/// How to analyse.
///
/// Built from [`Default`] with the chainable `with_…` methods (the struct is
/// `#[non_exhaustive]`: options will be added without breaking callers):
///
/// ```
/// use fabricscope::AnalyzeOptions;
/// let options = AnalyzeOptions::default().with_interval(30.0).ignore("IB109");
/// assert_eq!(options.interval_seconds, Some(30.0));
/// assert_eq!(options.ignore, ["IB109"]);
/// ```
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct AnalyzeOptions {
    /// Counter limits (defaults, or an `error_thresholds` file applied).
    pub thresholds: Thresholds,
    /// Seconds between two snapshots in the input, when the input does not
    /// say (used to turn counter deltas into rates).
    pub interval_seconds: Option<f64>,
    /// Rule ids not to run.
    pub ignore: Vec<String>,
    /// Modification time of each document's file (seconds since the Unix
    /// epoch), in the order of the documents; used as the snapshot time when
    /// the text carries none. Empty, or shorter than the documents, means
    /// unknown.
    pub modified_unix: Vec<Option<f64>>,
}

impl AnalyzeOptions {
    /// Uses these counter limits instead of the defaults.
    #[must_use]
    pub fn with_thresholds(mut self, thresholds: Thresholds) -> Self {
        self.thresholds = thresholds;
        self
    }

    /// Seconds between two snapshots when the input does not say; takes a
    /// number or an `Option` (`None`: unknown, no rates from untimed input).
    #[must_use]
    pub fn with_interval(mut self, seconds: impl Into<Option<f64>>) -> Self {
        self.interval_seconds = seconds.into();
        self
    }

    /// Does not run this rule (id in any case, e.g. `"IB109"`); call again
    /// for more.
    #[must_use]
    pub fn ignore(mut self, rule_id: impl Into<String>) -> Self {
        self.ignore.push(rule_id.into());
        self
    }

    /// Does not run any of these rules (added to those already ignored).
    #[must_use]
    pub fn ignore_all<I, S>(mut self, rule_ids: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.ignore.extend(rule_ids.into_iter().map(Into::into));
        self
    }

    /// Modification time of each document's file (seconds since the Unix
    /// epoch, `None` where unknown), in the order of the documents.
    #[must_use]
    pub fn with_modified_unix(mut self, times: impl IntoIterator<Item = Option<f64>>) -> Self {
        self.modified_unix = times.into_iter().collect();
        self
    }
}

/// Runs every rule of the registry (minus the ignored ones) over the
/// documents, as one fleet: all documents are one unit, then the fleet step.
///
/// ```
/// use fabricscope::{analyze, read, AnalyzeOptions, ReadOptions};
/// let paste = "$ ibstat\nCA 'mlx5_0'\n\tCA type: MT4123\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Polling\n\t\tLink layer: InfiniBand\n";
/// let doc = read(paste, &ReadOptions::default().with_default_host("gpu0042".to_owned())).unwrap();
/// let report = analyze(&[doc], &AnalyzeOptions::default().with_interval(30.0));
/// let down = &report.findings[0];
/// assert_eq!((down.rule, down.subject.host.as_deref()), ("IB001", Some("gpu0042")));
/// // One broken port is one incident, its findings grouped under it.
/// assert_eq!(report.incidents.len(), 1);
/// ```
#[must_use]
pub fn analyze(documents: &[Document], options: &AnalyzeOptions) -> Report {
    let mut analysis = Analysis::new(options);
    analysis.add_unit(documents, &options.modified_unix);
    analysis.finish()
}

/// A unit's findings as a report streamed host by host prints them
/// (`analyze --format ndjson`): FL004 findings that repeat an IB1xx finding
/// dropped, worst first, fingerprinted — the unit's findings of the whole
/// report, in the whole report's order. A host is never split over units
/// and an FL004 finding is about one host's port, so the IB1xx findings it
/// could repeat are in the same unit.
pub fn settle_unit_findings(findings: &mut Vec<Finding>) {
    let keep = crate::report::incident::kept(findings);
    let mut flags = keep.iter();
    findings.retain(|_| flags.next().copied().unwrap_or(true));
    findings.sort_by(finding_order);
    crate::report::incident::fingerprint_all(findings);
}

/// Whether a unit's finding waits for the fleet step before a streamed
/// report prints it: IB001's warning about a port that never linked beside
/// an Active sibling, which the fleet step replaces with one finding when
/// the port never linked on most hosts (the fleet's design). The stream
/// prints the findings of the whole report: such a warning comes with the
/// fleet rules' lines, or not at all.
#[must_use]
pub fn held_for_the_fleet(f: &Finding) -> bool {
    f.rule == "IB001"
        && f.severity == Severity::Warning
        && f.subject.host.is_some()
        && f.message
            .contains(crate::rules::ib_port::NEVER_LINKED_CAUSE)
}

/// Worst first, then by host, subject and rule, so related findings sit together.
fn finding_order(a: &Finding, b: &Finding) -> std::cmp::Ordering {
    b.severity
        .cmp(&a.severity)
        .then_with(|| a.subject.host.cmp(&b.subject.host))
        .then_with(|| a.subject.cmp(&b.subject))
        .then_with(|| a.rule.cmp(b.rule))
}

/// How many rules ran, and how many of them judged the fabric: the input
/// rules (`IN0xx`) say how far the paste can be trusted, not whether
/// anything in it is healthy.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RulesRun {
    /// Every rule that had its data.
    pub all: usize,
    /// Those of them outside the input family.
    pub judging: usize,
}

impl RulesRun {
    /// The count for the rules with these ids.
    pub(crate) fn of<'i>(ids: impl IntoIterator<Item = &'i str>) -> Self {
        let mut run = Self { all: 0, judging: 0 };
        for id in ids {
            run.all += 1;
            let input = crate::rules::by_id(id).is_some_and(|r| r.family == Family::Input);
            run.judging += usize::from(!input);
        }
        run
    }
}

/// `critical: 1 critical, 2 errors on 2 of 8 hosts` or `healthy: …`.
///
/// Absence of data is never evidence: when no rule but the input rules
/// ran, nothing was judged and the verdict says so, not `healthy`; a
/// healthy verdict over a paste that looks cut (`IN001`) says that only
/// what the paste holds was judged; and ibdiagnet's summary counting
/// errors or warnings the paste does not show is never `healthy`: the
/// fabric was not judged.
pub(crate) fn verdict(
    findings: &[Finding],
    summary: &Summary,
    hosts: usize,
    rules: RulesRun,
    rules_skipped: usize,
) -> Verdict {
    let rules_run = rules.all;
    let coverage = format!("{rules_run} rules run, {rules_skipped} skipped for lack of data");
    let partial = Partiality::of(findings);
    let unread = findings.iter().any(|f| f.rule == "IN002");
    let worst = summary.worst();
    // ibdiagnet's summary counts errors or warnings whose lines the paste
    // does not hold: what they say is unknown, so nothing above info found
    // is no clean fabric. Before, this headed "healthy: … looks cut".
    if worst.is_none_or(|w| w == Severity::Info)
        && findings
            .iter()
            .any(crate::rules::input::counts_unshown_problems)
    {
        let also_unread = if unread {
            "; some lines could not be read (IN002 lists them)"
        } else {
            ""
        };
        return Verdict::new(
            VerdictLevel::NotEnoughToJudge,
            format!(
                "ibdiagnet's summary counts errors or warnings whose lines the paste does not show, so the fabric was not judged (IN001 lists the stages; their lines are in ibdiagnet2.log){also_unread} ({coverage})"
            ),
        );
    }
    if rules.judging == 0 && worst.is_none_or(|w| w == Severity::Info) {
        let cut = match (partial, unread) {
            (Partiality::Cut, true) => "; the paste looks cut and some of its lines could not be read (IN001, IN002 list them)",
            (Partiality::Cut, false) => "; the paste looks cut (IN001 lists what is missing)",
            (Partiality::LeftOutByTool, true) => "; a tool printed only part of what it found and some lines could not be read (IN001, IN002 list them)",
            (Partiality::LeftOutByTool, false) => "; a tool printed only part of what it found (IN001 lists what is missing)",
            (Partiality::Whole, true) => "; some lines could not be read (IN002 lists them)",
            (Partiality::Whole, false) => "",
        };
        return Verdict::new(
            VerdictLevel::NotEnoughToJudge,
            format!(
                "no rule had the data it needs on {hosts} host(s) ({rules_skipped} skipped for lack of data){cut}"
            ),
        );
    }
    let Some(worst) = worst else {
        return Verdict::new(
            VerdictLevel::Healthy,
            format!("no problems found on {hosts} host(s) ({coverage})"),
        );
    };
    let mut parts = Vec::new();
    for sev in Severity::WORST_FIRST {
        let n = summary.count(sev);
        if n > 0 {
            parts.push(format!("{n} {}", plural(sev, n)));
        }
    }
    let mut affected: Vec<Option<&str>> = findings
        .iter()
        .filter(|f| f.severity >= Severity::Warning)
        .map(|f| f.subject.host.as_deref())
        .collect();
    affected.sort_unstable();
    affected.dedup();
    let level = if worst == Severity::Info {
        VerdictLevel::Healthy
    } else {
        VerdictLevel::Problem(worst)
    };
    if affected.is_empty() {
        let judged = match (level == VerdictLevel::Healthy, partial, unread) {
            (true, Partiality::Cut, true) => "; no problems found in what the paste holds, but it looks cut and some of its lines could not be read: neither was judged (IN001, IN002)",
            (true, Partiality::Cut, false) => "; no problems found in what the paste holds, but it looks cut and what it lacks was not judged (IN001)",
            (true, Partiality::LeftOutByTool, true) => "; no problems found in what the paste holds, but a tool printed only part of what it found and some lines could not be read: neither was judged (IN001, IN002)",
            (true, Partiality::LeftOutByTool, false) => "; no problems found in what the paste holds, but a tool printed only part of what it found and the rest was not judged (IN001)",
            (true, Partiality::Whole, true) => "; no problems found in what could be read, but some lines could not be read and were not judged (IN002)",
            _ => "",
        };
        Verdict::new(level, format!("{}{judged} ({coverage})", parts.join(", ")))
    } else {
        Verdict::new(
            level,
            format!(
                "{} on {} of {hosts} host(s) ({coverage})",
                parts.join(", "),
                affected.len()
            ),
        )
    }
}

/// What the verdict says of the parts `IN001` lists as not judged.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Partiality {
    /// No part was left unjudged.
    Whole,
    /// The paste looks cut (or its author left lines out).
    Cut,
    /// Only a tool's own choice: it printed part of what it found and said
    /// so (nvidia-smi's `only displaying 56` NICs). Nothing was cut, and
    /// saying "looks cut" sends the reader to paste it again for nothing.
    LeftOutByTool,
}

impl Partiality {
    fn of(findings: &[Finding]) -> Self {
        if findings
            .iter()
            .any(crate::rules::input::says_paste_looks_cut)
        {
            Self::Cut
        } else if findings.iter().any(|f| f.rule == "IN001") {
            Self::LeftOutByTool
        } else {
            Self::Whole
        }
    }
}

fn plural(sev: Severity, n: usize) -> &'static str {
    match (sev, n == 1) {
        (Severity::Critical, _) => "critical",
        (Severity::Error, true) => "error",
        (Severity::Error, false) => "errors",
        (Severity::Warning, true) => "warning",
        (Severity::Warning, false) => "warnings",
        (Severity::Info, _) => "info",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> Document {
        crate::input::read_all(text, &crate::ReadOptions::default()).unwrap()
    }

    #[test]
    fn healthy_input_gives_a_healthy_verdict_and_lists_skipped_rules() {
        let d = doc("CA 'mlx5_0'\n\tCA type: MT4129\n\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 400\n\t\tBase lid: 4\n\t\tSM lid: 1\n\t\tLink layer: InfiniBand\n");
        let r = analyze(&[d], &AnalyzeOptions::default());
        assert!(r.findings.is_empty());
        assert!(r.verdict.starts_with("healthy"), "{}", r.verdict);
        assert_eq!(r.status, None);
        assert!(r.skipped_rules.iter().any(|s| s.rule == "FL001"));
    }

    #[test]
    fn a_matrix_the_tool_drew_with_some_nics_is_not_called_cut() {
        let matrix = "\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\n\
                      GPU0\t X \tNV18\tPXB\t0-47\t0\n\
                      GPU1\tNV18\t X \tPXB\t0-47\t0\n\
                      NIC0\tPXB\tPXB\t X \n";
        let notice = "3 NICs found in the topology, only displaying 1 in the matrix.\n";
        let r = analyze(
            &[doc(&format!("{notice}{matrix}"))],
            &AnalyzeOptions::default(),
        );
        assert!(
            r.findings.iter().any(|f| f.rule == "IN001"),
            "{:?}",
            r.findings
        );
        assert!(!r.verdict.contains("looks cut"), "{}", r.verdict);
        assert!(
            r.verdict
                .contains("a tool printed only part of what it found"),
            "{}",
            r.verdict
        );
        // The same matrix with its last row cut: that part looks cut.
        let cut = format!("{notice}{}", matrix.trim_end().trim_end_matches(" X "));
        let r = analyze(&[doc(&cut)], &AnalyzeOptions::default());
        assert!(r.verdict.contains("looks cut"), "{}", r.verdict);
    }

    #[test]
    fn findings_are_sorted_worst_first_and_ignored_rules_do_not_run() {
        let d = doc("CA 'mlx5_0'\n\tCA type: MT4129\n\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 400\n\t\tBase lid: 0\n\t\tSM lid: 1\n\t\tLink layer: InfiniBand\nCA 'mlx5_1'\n\tCA type: MT4129\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Polling\n\t\tLink layer: InfiniBand\n");
        let docs = [d];
        let r = analyze(&docs, &AnalyzeOptions::default());
        let ids: Vec<&str> = r.findings.iter().map(|f| f.rule).collect();
        assert_eq!(ids, ["IB003", "IB001"], "same severity: by subject");
        assert!(
            r.verdict.starts_with("error: 2 errors on 1 of 1 host"),
            "{}",
            r.verdict
        );
        let options = AnalyzeOptions {
            ignore: vec!["ib001".into()],
            ..AnalyzeOptions::default()
        };
        let r = analyze(&docs, &options);
        assert_eq!(r.findings.len(), 1);
    }
}
