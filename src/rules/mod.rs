//! The diagnosis engine: rules with stable ids, and the findings they produce.
//!
//! A [`Rule`] is one small check with its user documentation attached. Rules
//! are declared with [`declare_rule!`](crate::declare_rule) in one file per
//! family (`ib_port.rs`, `ib_counters.rs`, …) and listed in
//! [`registry::RULES`], sorted by id. Ids are never reused: a retired rule
//! keeps its id out of circulation.
//!
//! A check reads the parsed documents through a [`Context`] and pushes
//! [`Finding`]s. When the data it needs is absent it returns
//! [`Coverage::Skipped`] with the reason, so a report never passes a rule
//! silently for lack of input.

mod context;
pub mod cross;
pub mod ib_counters;
pub mod ib_fleet;
pub mod ib_port;
pub mod input;
pub mod nvlink;
pub mod registry;
pub mod thresholds;
pub mod topology;

pub use context::{
    subject_of, AdapterRef, Context, HostKey, IbPortRef, NvGpuRef, PerfPortRef, Reading, SectionRef,
};
pub use registry::{by_id, RULES};
pub use thresholds::{ThresholdEntry, Thresholds, ThresholdsError};

use crate::span::LineSpan;
use serde::{Deserialize, Serialize};
use std::fmt;

/// How bad a finding is. Ordered from least to most severe.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Worth knowing; nothing to fix now.
    #[default]
    Info,
    /// Degraded or suspicious; plan a fix.
    Warning,
    /// Broken or losing performance now; fix it.
    Error,
    /// The node cannot do its job (no fabric, no NVLink); take it out of service.
    Critical,
}

impl Severity {
    /// Every severity, worst first.
    pub const WORST_FIRST: [Severity; 4] = [
        Severity::Critical,
        Severity::Error,
        Severity::Warning,
        Severity::Info,
    ];

    /// The lower-case name used in JSON and on the command line.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
            Severity::Critical => "critical",
        }
    }

    /// Reads `info`, `warning`, `error`, `critical` (any case).
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim().to_ascii_lowercase().as_str() {
            "info" => Some(Severity::Info),
            "warning" | "warn" => Some(Severity::Warning),
            "error" => Some(Severity::Error),
            "critical" | "crit" => Some(Severity::Critical),
            _ => None,
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The group a rule belongs to; also the first letters of its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// InfiniBand port state, addressing and rate (`IB0xx`).
    IbPort,
    /// InfiniBand error counters (`IB1xx`).
    IbCounters,
    /// Comparisons across the hosts of a fleet (`FL0xx`).
    Fleet,
    /// How complete the input is (`IN0xx`).
    Input,
    /// NVLink links and their counters (`NV0xx`).
    Nvlink,
    /// GPU/NIC topology from `nvidia-smi topo -m` (`TP0xx`).
    Topology,
    /// Verdicts joining several tools' output (`XS0xx`).
    Cross,
}

impl Family {
    /// The id prefix of the family's rules.
    #[must_use]
    pub fn prefix(self) -> &'static str {
        match self {
            Family::IbPort | Family::IbCounters => "IB",
            Family::Fleet => "FL",
            Family::Input => "IN",
            Family::Nvlink => "NV",
            Family::Topology => "TP",
            Family::Cross => "XS",
        }
    }

    /// A heading for people.
    #[must_use]
    pub fn title(self) -> &'static str {
        match self {
            Family::IbPort => "InfiniBand ports",
            Family::IbCounters => "InfiniBand error counters",
            Family::Fleet => "Fleet comparisons",
            Family::Input => "Input completeness",
            Family::Nvlink => "NVLink",
            Family::Topology => "GPU and NIC topology",
            Family::Cross => "Cross-source verdicts",
        }
    }
}

/// Whether a rule could look at anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Coverage {
    /// The rule looked at this many subjects (ports, links, GPUs, hosts).
    Checked(usize),
    /// The input lacks what the rule needs; the reason says what to add.
    Skipped(String),
}

/// A check: reads the context, pushes findings, says what it covered.
pub type Check = fn(&Context<'_>, &mut Vec<Finding>) -> Coverage;

/// One rule: its identity, its documentation and its check.
pub struct Rule {
    /// Stable id such as `IB001`; never reused.
    pub id: &'static str,
    /// Short kebab-case name such as `port-down`.
    pub name: &'static str,
    /// The family (and id prefix).
    pub family: Family,
    /// The severity of the rule's typical finding; single findings may be
    /// lower or higher (documented in the explanation).
    pub severity: Severity,
    /// One line saying what the rule detects.
    pub summary: &'static str,
    /// Tool output the rule needs, for people (`ibstat or ibstatus`).
    pub needs: &'static str,
    /// The user documentation, in Markdown, from the rule's doc comment.
    explanation: &'static str,
    /// The check.
    pub check: Check,
}

impl Rule {
    /// Builds a rule; used by [`declare_rule!`](crate::declare_rule).
    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    pub const fn new(
        id: &'static str,
        name: &'static str,
        family: Family,
        severity: Severity,
        summary: &'static str,
        needs: &'static str,
        explanation: &'static str,
        check: Check,
    ) -> Self {
        Self {
            id,
            name,
            family,
            severity,
            summary,
            needs,
            explanation,
            check,
        }
    }

    /// The documentation as Markdown, with the one space rustdoc leaves at
    /// the start of each doc-comment line removed.
    #[must_use]
    pub fn explanation(&self) -> String {
        let mut out = String::with_capacity(self.explanation.len());
        for line in self.explanation.lines() {
            out.push_str(line.strip_prefix(' ').unwrap_or(line));
            out.push('\n');
        }
        out.trim_end().to_owned() + "\n"
    }

    /// A finding of this rule at its usual severity.
    #[must_use]
    pub fn finding(&'static self, subject: Subject, message: impl Into<String>) -> Finding {
        Finding {
            rule: self.id,
            name: self.name,
            severity: self.severity,
            subject,
            message: message.into(),
            evidence: Vec::new(),
            threshold: None,
            remediation: String::new(),
        }
    }
}

impl fmt::Debug for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rule")
            .field("id", &self.id)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// Declares a rule: its doc comment becomes its user documentation, so the
/// text `fabricscope explain`, `docs/rules.md` and the web page show cannot
/// drift from the code.
///
/// The doc comment must have the sections `### What it detects`,
/// `### Why it matters`, `### Evidence`, `### What to do` and
/// `### Thresholds and sources` (checked by the registry tests).
#[macro_export]
macro_rules! declare_rule {
    (
        $(#[doc = $doc:expr])*
        $vis:vis static $ident:ident = {
            id: $id:literal,
            name: $name:literal,
            family: $family:ident,
            severity: $severity:ident,
            summary: $summary:literal,
            needs: $needs:literal,
            check: $check:path $(,)?
        }
    ) => {
        $(#[doc = $doc])*
        $vis static $ident: $crate::rules::Rule = $crate::rules::Rule::new(
            $id,
            $name,
            $crate::rules::Family::$family,
            $crate::rules::Severity::$severity,
            $summary,
            $needs,
            concat!($($doc, "\n"),*),
            $check,
        );
    };
}

/// What a finding is about. Only the fields that apply are set.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Subject {
    /// Host name, when the input names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// InfiniBand device (CA) such as `mlx5_0`, or a switch description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// InfiniBand port number.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<u32>,
    /// InfiniBand LID.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lid: Option<u32>,
    /// InfiniBand port or node GUID (`0x…`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub guid: Option<String>,
    /// GPU index as nvidia-smi numbers it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu: Option<u32>,
    /// GPU UUID (`GPU-…`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_uuid: Option<String>,
    /// PCI bus id of a GPU (`00000000:18:00.0`), when that is how the tool names it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bus_id: Option<String>,
    /// NVLink link number on the GPU.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<u32>,
    /// Lane within a link or port.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lane: Option<u32>,
    /// Second GPU of a pair (topology findings).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peer_gpu: Option<u32>,
    /// NIC name as `topo -m` prints it (`NIC0` or `mlx5_0`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nic: Option<String>,
}

impl Subject {
    /// A subject on `host`.
    #[must_use]
    pub fn host(host: Option<&str>) -> Self {
        Self {
            host: host.map(str::to_owned),
            ..Self::default()
        }
    }

    /// `mlx5_0 port 1`, `GPU 3 link 7`, `GPU 0 ↔ GPU 5`: the subject without its host.
    #[must_use]
    pub fn describe(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        // `mlx5_0 port 1 LID 12` when the adapter is known, `LID 12 port 1`
        // when perfquery only gave the LID.
        match (&self.device, self.lid) {
            (Some(d), _) => parts.push(d.clone()),
            (None, Some(l)) => parts.push(format!("LID {l}")),
            (None, None) => {}
        }
        if let Some(p) = self.port {
            parts.push(format!("port {p}"));
        }
        if let (Some(_), Some(l)) = (&self.device, self.lid) {
            parts.push(format!("LID {l}"));
        }
        if self.device.is_none() && self.port.is_none() {
            if let Some(g) = &self.guid {
                parts.push(g.clone());
            }
        }
        if let Some(g) = self.gpu {
            parts.push(format!("GPU {g}"));
        }
        if let Some(b) = &self.bus_id {
            parts.push(format!("GPU {b}"));
        }
        if let Some(l) = self.link {
            parts.push(format!("link {l}"));
        }
        if let Some(l) = self.lane {
            parts.push(format!("lane {l}"));
        }
        if let Some(p) = self.peer_gpu {
            parts.push(format!("↔ GPU {p}"));
        }
        if let Some(n) = &self.nic {
            parts.push(if n.starts_with("NIC") {
                n.clone()
            } else {
                format!("NIC {n}")
            });
        }
        if parts.is_empty() {
            "host".to_owned()
        } else {
            parts.join(" ")
        }
    }
}

/// One piece of evidence: a value or statistic, and the lines it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// The value as a person would say it (`SymbolErrorCounter = 4312`).
    pub text: String,
    /// The input lines it was read from.
    #[serde(flatten)]
    pub span: LineSpan,
    /// The file it was read from, in batch runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

impl Evidence {
    /// Evidence read from `span` of `source`.
    #[must_use]
    pub fn new(text: impl Into<String>, span: LineSpan, source: Option<&str>) -> Self {
        Self {
            text: text.into(),
            span,
            source: source.map(str::to_owned),
        }
    }
}

/// The limit a value was judged against, and where that limit comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Threshold {
    /// The limit as a person would say it (`> 10`, `≥ 100/s`, `Active/LinkUp`).
    pub value: String,
    /// Where the number comes from (`infiniband-diags error_thresholds`, `DCGM`…).
    pub source: String,
}

impl Threshold {
    /// A threshold with its source.
    #[must_use]
    pub fn new(value: impl Into<String>, source: impl Into<String>) -> Self {
        Self {
            value: value.into(),
            source: source.into(),
        }
    }
}

/// A problem found by a rule, with everything needed to explain it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// The rule's id (`IB001`).
    pub rule: &'static str,
    /// The rule's name (`port-down`).
    pub name: &'static str,
    /// How bad it is.
    pub severity: Severity,
    /// What it is about.
    pub subject: Subject,
    /// One line for people.
    pub message: String,
    /// The values behind the conclusion, with their input lines.
    pub evidence: Vec<Evidence>,
    /// The limit the values were judged against, when there is one.
    pub threshold: Option<Threshold>,
    /// What to do about it.
    pub remediation: String,
}

impl Finding {
    /// Sets the severity.
    #[must_use]
    pub fn severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }

    /// Adds a piece of evidence.
    #[must_use]
    pub fn evidence(mut self, evidence: Evidence) -> Self {
        self.evidence.push(evidence);
        self
    }

    /// Sets the threshold.
    #[must_use]
    pub fn threshold(mut self, threshold: Threshold) -> Self {
        self.threshold = Some(threshold);
        self
    }

    /// Sets the remediation.
    #[must_use]
    pub fn remediation(mut self, text: impl Into<String>) -> Self {
        self.remediation = text.into();
        self
    }

    /// The first input line the finding points at, for sorting and SARIF.
    #[must_use]
    pub fn first_span(&self) -> Option<(&Option<String>, LineSpan)> {
        self.evidence.first().map(|e| (&e.source, e.span))
    }
}

/// A rule that could not run, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkippedRule {
    /// The rule's id.
    pub rule: &'static str,
    /// What was missing.
    pub reason: String,
}

/// The outcome of running rules over some input.
#[derive(Debug, Clone, Default)]
pub struct RuleRun {
    /// Every finding, in rule order.
    pub findings: Vec<Finding>,
    /// Rules that lacked their data.
    pub skipped: Vec<SkippedRule>,
    /// Ids of the rules that ran, with how many subjects each looked at.
    pub checked: Vec<(&'static str, usize)>,
}

/// Runs `rules` over the context.
#[must_use]
pub fn run(rules: &[&'static Rule], ctx: &Context<'_>) -> RuleRun {
    let mut out = RuleRun::default();
    for rule in rules {
        let before = out.findings.len();
        match (rule.check)(ctx, &mut out.findings) {
            Coverage::Checked(n) => out.checked.push((rule.id, n)),
            Coverage::Skipped(reason) => out.skipped.push(SkippedRule {
                rule: rule.id,
                reason,
            }),
        }
        // A check must label its findings with its own id; anything else is a
        // bug in the rule, caught by the registry tests.
        debug_assert!(out
            .findings
            .get(before..)
            .unwrap_or_default()
            .iter()
            .all(|f| f.rule == rule.id));
    }
    out
}

/// The one-line text of an `ibstat` port state, as ibstat prints it.
pub(crate) fn port_state_name(state: crate::model::ib::PortState) -> &'static str {
    use crate::model::ib::PortState;
    match state {
        PortState::Down => "Down",
        PortState::Initializing => "Initializing",
        PortState::Armed => "Armed",
        PortState::Active => "Active",
        PortState::Unknown => "???",
    }
}

/// The text of a physical port state, as ibstat prints it.
pub(crate) fn phys_state_name(state: crate::model::ib::PhysState) -> &'static str {
    use crate::model::ib::PhysState;
    match state {
        PhysState::NoStateChange => "No state change",
        PhysState::Sleep => "Sleep",
        PhysState::Polling => "Polling",
        PhysState::Disabled => "Disabled",
        PhysState::PortConfigurationTraining => "PortConfigurationTraining",
        PhysState::LinkUp => "LinkUp",
        PhysState::LinkErrorRecovery => "LinkErrorRecovery",
        PhysState::PhyTest => "PhyTest",
        PhysState::Unknown => "???",
    }
}

/// `100`, `2.5`: a rate without trailing zeros.
pub(crate) fn gbps(rate: f64) -> String {
    if rate.fract() == 0.0 && rate.abs() < 1e15 {
        format!("{rate:.0}")
    } else {
        format!("{rate}")
    }
}

/// Helpers for rule unit tests: read a paste, run one rule.
/// The evidence of a peer-group outlier (FL004, NV005): the statistic, its
/// robust z-score and how far above the median it stands, at its input lines.
pub(crate) fn outlier_evidence(
    group: &crate::stats::PeerGroup,
    member: &crate::stats::OutlierMember,
) -> Evidence {
    Evidence::new(
        format!(
            "{} {} = {} (robust z {:.1}{})",
            group.counter,
            group.statistic,
            member.value,
            member.robust_z,
            member
                .times_median
                .map(|t| format!(", {t:.1}× the median"))
                .unwrap_or_default()
        ),
        member.lines,
        None,
    )
}

/// The threshold behind every peer-group outlier finding.
pub(crate) fn outlier_threshold() -> Threshold {
    Threshold::new(
        "robust z ≥ 3.5, Poisson tail < 0.001; absolute counts ≥ 10× the median",
        "Iglewicz & Hoaglin; statistics defaults",
    )
}

#[cfg(test)]
pub(crate) mod testing {
    use super::{run, Context, Coverage, Finding, Rule, Thresholds};

    /// The findings of `rule` on `text` (read as a paste).
    pub(crate) fn findings_of(rule: &'static Rule, text: &str) -> Vec<Finding> {
        let doc = crate::input::read_all(text, &crate::ReadOptions::default()).unwrap();
        let docs = [doc];
        let thresholds = Thresholds::default();
        let m = measurements(&docs);
        run(&[rule], &Context::new(&docs, &thresholds, &m)).findings
    }

    /// Measurements with a 10 s interval, so two snapshots give rates.
    fn measurements(docs: &[crate::Document]) -> crate::stats::Measurements {
        crate::stats::measure_many(
            docs,
            &crate::stats::StatsOptions {
                interval_seconds: Some(10.0),
                ..Default::default()
            },
        )
    }

    /// Why `rule` skipped `text`, or `None` when it ran.
    pub(crate) fn skipped_reason(rule: &'static Rule, text: &str) -> Option<String> {
        let doc = crate::input::read_all(text, &crate::ReadOptions::default()).unwrap();
        let docs = [doc];
        let thresholds = Thresholds::default();
        let m = measurements(&docs);
        match (rule.check)(&Context::new(&docs, &thresholds, &m), &mut Vec::new()) {
            Coverage::Checked(_) => None,
            Coverage::Skipped(reason) => Some(reason),
        }
    }
}
