//! `dcgmi diag -r N` results and `dcgmi health -c` reports.

use crate::span::LineSpan;
use serde::{Deserialize, Serialize};

/// The outcome dcgmi prints for a test or for one entity's part of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DiagOutcome {
    /// `Pass`.
    Pass,
    /// `Skip`: not run on this system (not an error).
    Skip,
    /// `Not Run`.
    NotRun,
    /// `Warn`.
    Warn,
    /// `Fail`.
    Fail,
}

impl DiagOutcome {
    /// Reads `Pass`, `Fail`, `Warn`, `Skip`, `Not Run` (any case).
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim().to_ascii_lowercase().as_str() {
            "pass" | "passed" => Some(Self::Pass),
            "fail" | "failed" => Some(Self::Fail),
            "warn" | "warning" => Some(Self::Warn),
            "skip" | "skipped" => Some(Self::Skip),
            "not run" => Some(Self::NotRun),
            _ => None,
        }
    }

    /// The word dcgmi prints.
    #[must_use]
    pub fn word(self) -> &'static str {
        match self {
            Self::Pass => "Pass",
            Self::Fail => "Fail",
            Self::Warn => "Warn",
            Self::Skip => "Skip",
            Self::NotRun => "Not Run",
        }
    }
}

/// One entity's result within a test: `GPU0: Fail` (DCGM 4), or a group of
/// GPUs named by a DCGM 2/3 row (`Fail - GPU: 2`, `Pass - All`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiagEntityResult {
    /// As printed: `GPU0`, `GPU 2`, `All`.
    pub entity: String,
    /// The GPU index, when the entity is one GPU.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu: Option<u32>,
    /// Its outcome.
    pub outcome: DiagOutcome,
    /// Line it was read from.
    pub line: usize,
}

/// A `Warning`, `Error` (DCGM 2/3 Deployment checks) or `Info` message of a test, joined from the lines dcgmi
/// wrapped it over (at 45 characters, even mid-word).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiagMessage {
    /// `warning`, `error` or `info`.
    pub level: String,
    /// The entity it is about (`GPU0`), when dcgmi says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entity: Option<String>,
    /// The GPU index, when the message names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu: Option<u32>,
    /// The message, unwrapped.
    pub text: String,
    /// Lines it spans.
    pub span: LineSpan,
}

/// One test (plugin) of the diagnostic.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiagTest {
    /// `Deployment`, `Hardware`, `Integration`, `Stress` (the heading above it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// Test name as printed (`memory`, `PCIe`, `SM Stress`).
    pub name: String,
    /// Overall outcome: the test row's, or the worst of its rows (DCGM 2/3
    /// prints one row per group of GPUs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<DiagOutcome>,
    /// Per-entity outcomes.
    pub entities: Vec<DiagEntityResult>,
    /// Warning and info messages.
    pub messages: Vec<DiagMessage>,
    /// Lines of the test's rows.
    pub span: LineSpan,
}

/// One metadata row (`DCGM Version`, `Driver Version Detected`,
/// `GPU Device IDs Detected`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiagField {
    /// Row name.
    pub name: String,
    /// Value.
    pub value: String,
    /// Line.
    pub line: usize,
}

/// `dcgmi diag -r 1|2|3|4` (DCGM 2, 3 and 4 table layouts).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DcgmiDiag {
    /// Metadata rows.
    pub metadata: Vec<DiagField>,
    /// Tests in the order printed.
    pub tests: Vec<DiagTest>,
    /// False when a table was begun and its closing rule is missing: the
    /// paste may be cut, and tests after the last one read are unknown.
    /// (Output without any table, dcgmi's `Error: …` when the diagnostic
    /// could not run, is not a cut table.)
    pub complete: bool,
}

impl DcgmiDiag {
    /// A metadata value by name.
    #[must_use]
    pub fn metadata(&self, name: &str) -> Option<&str> {
        self.metadata
            .iter()
            .find(|f| f.name.eq_ignore_ascii_case(name))
            .map(|f| f.value.as_str())
    }
}

/// A health verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HealthState {
    /// `Healthy`.
    Healthy,
    /// `Warning`.
    Warning,
    /// `Failure`.
    Failure,
    /// `Internal error`.
    InternalError,
}

impl HealthState {
    /// Reads the words dcgmi prints.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim().to_ascii_lowercase().as_str() {
            "healthy" | "pass" => Some(Self::Healthy),
            "warning" | "warn" => Some(Self::Warning),
            "failure" | "fail" => Some(Self::Failure),
            "internal error" => Some(Self::InternalError),
            _ => None,
        }
    }
}

/// One subsystem's incident on an entity (`PCIe system | Warning` and its message).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HealthIncident {
    /// `PCIe system`, `NVLINK system`, `Memory system`, …
    pub system: String,
    /// Its state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<HealthState>,
    /// The messages, unwrapped (dcgmi joins several with `, `).
    pub message: String,
    /// Lines.
    pub span: LineSpan,
}

/// One entity of the report (`GPU` `-> 0`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HealthEntity {
    /// Entity group: `GPU`, `Switch`, `CPU`, …
    pub group: String,
    /// Entity id as printed.
    pub id: String,
    /// The entity's state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<HealthState>,
    /// Incidents per subsystem.
    pub incidents: Vec<HealthIncident>,
    /// Lines.
    pub span: LineSpan,
}

/// `dcgmi health -c`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DcgmiHealth {
    /// `Overall Health`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overall: Option<HealthState>,
    /// Line of the overall verdict.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overall_line: Option<usize>,
    /// Entities with incidents.
    pub entities: Vec<HealthEntity>,
}
