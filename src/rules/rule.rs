//! What a rule is: its identity, severity scale, family and check, and the
//! macro that declares one with its documentation.

use super::{Context, Finding, Subject};
use crate::model::KnownCounter;
use serde::{Deserialize, Serialize};
use std::fmt;

/// How bad a finding is. Ordered from least to most severe.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
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
    /// GPU health verdicts: `dcgmi diag` and `dcgmi health`, and the
    /// driver's memory flags (row remapping) (`DG0xx`).
    Diagnostics,
    /// `mlxlink` port diagnostics (`ML0xx`).
    LinkDiagnostics,
    /// What NCCL's debug log says about the interconnect (`NC0xx`).
    Collectives,
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
            Family::Diagnostics => "DG",
            Family::LinkDiagnostics => "ML",
            Family::Collectives => "NC",
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
            Family::Diagnostics => "GPU diagnostics and health",
            Family::LinkDiagnostics => "Link diagnostics (mlxlink)",
            Family::Collectives => "NCCL's view of the interconnect",
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

/// Where a rule looks: within one unit (a host's documents), or across the
/// units of a fleet.
///
/// Batch analysis runs the unit rules on each host as it is read and keeps
/// only compact records ([`FleetFacts`](super::FleetFacts), the values
/// compared across hosts); the fleet rules then read those records alone,
/// never the documents. Every rule keeps a [`Check`] over a [`Context`] too,
/// so a paste (one unit) and the rule tests run it the same way.
#[derive(Clone, Copy)]
pub enum Scope {
    /// Reads one unit: the check runs on every unit.
    Unit,
    /// Compares hosts: the fleet check runs once, over every unit's records
    /// (the [`Check`] builds the records of its context and calls it).
    Fleet(super::FleetCheck),
    /// Both: the check runs on every unit (groups within a host), the fleet
    /// check once over the comparisons across hosts.
    UnitAndFleet(super::FleetCheck),
}

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
    /// The counters the rule reads, typed: declared once with the rule and
    /// read by its check, so a misspelt counter does not compile.
    pub counters: &'static [KnownCounter],
    /// The check.
    pub check: Check,
    /// Whether the rule reads one unit or the fleet's records.
    pub scope: Scope,
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
            counters: &[],
            check,
            scope: Scope::Unit,
        }
    }

    /// The same rule with another [`Scope`]; used by [`declare_rule!`](crate::declare_rule).
    #[doc(hidden)]
    #[must_use]
    pub const fn with_scope(mut self, scope: Scope) -> Self {
        self.scope = scope;
        self
    }

    /// The fleet check, for rules that compare hosts.
    #[must_use]
    pub fn fleet_check(&self) -> Option<super::FleetCheck> {
        match self.scope {
            Scope::Unit => None,
            Scope::Fleet(f) | Scope::UnitAndFleet(f) => Some(f),
        }
    }

    /// Whether the check runs on each unit (false for fleet-only rules).
    #[must_use]
    pub fn runs_per_unit(&self) -> bool {
        !matches!(self.scope, Scope::Fleet(_))
    }

    /// The same rule reading `counters`; used by
    /// [`declare_rule!`](crate::declare_rule).
    #[doc(hidden)]
    #[must_use]
    pub const fn reading(self, counters: &'static [KnownCounter]) -> Self {
        Self { counters, ..self }
    }

    /// The documentation as Markdown, with the one space rustdoc leaves at
    /// the start of each doc-comment line removed, and each threshold
    /// placeholder (`{limit:SymbolErrorCounter}`, `{percent:PortXmitWaitShare}`)
    /// replaced by the built-in value of that name in
    /// [`thresholds`](super::thresholds): the number is written once, there.
    #[must_use]
    pub fn explanation(&self) -> String {
        let mut out = String::with_capacity(self.explanation.len());
        for line in self.explanation.lines() {
            out.push_str(&super::thresholds::fill_placeholders(
                line.strip_prefix(' ').unwrap_or(line),
            ));
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
            fingerprint: String::new(),
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
/// A rule that compares hosts adds `scope: Scope::Fleet(fleet_check)` (or
/// `Scope::UnitAndFleet(..)` when it also judges within a host): batch runs
/// call `fleet_check` once over every host's records, never the documents.
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
            $(counters: [$($counter:expr),* $(,)?],)?
            check: $check:expr
            $(, scope: $scope:expr)? $(,)?
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
        )
        $(.reading(&[$(($counter).id()),*]))?
        $(.with_scope($scope))?;
    };
}
