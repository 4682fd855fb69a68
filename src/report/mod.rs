//! Reports: what an analysis found, and its renderings for people and tools.
//!
//! The same [`Report`] is rendered as text for people ([`text`]), one JSON
//! document ([`json`], also what the web page reads), one finding per line
//! ([`ndjson`]), SARIF 2.1.0 for code-scanning tools ([`sarif`]), CSV and
//! Markdown for spreadsheets and tickets ([`csv`], [`markdown`]). All of
//! them render [`incident`]s. [`diff`] compares two reports; [`html`] is one
//! self-contained HTML file for a ticket.
//!
//! ```
//! use fabricscope::report::{ndjson, sarif, text};
//! let paste = "$ ibstat\nCA 'mlx5_0'\n\tCA type: MT4123\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Polling\n";
//! let doc = fabricscope::read(paste, &Default::default()).unwrap();
//! let report = fabricscope::analyze(&[doc], &Default::default());
//! let for_people = text::render(&report, &text::TextOptions::default());
//! assert!(for_people.contains("IB001"));
//! assert_eq!(ndjson::render(&report).lines().count(), report.incidents.len());
//! let for_tools: serde_json::Value = serde_json::from_str(&sarif::render(&report)).unwrap();
//! assert_eq!(for_tools["version"], "2.1.0");
//! ```

pub mod csv;
pub mod diff;
mod hosts;
pub mod html;
pub mod incident;
pub mod json;
pub mod markdown;
pub mod measurements;
pub mod ndjson;
pub mod notable;
pub mod sarif;
pub mod text;
pub mod verdict;

use crate::input::Document;
use crate::rules::{Finding, Severity, SkippedRule};
use crate::stats::Measurements;
use serde::{Deserialize, Serialize};

pub use incident::Incident;

/// The version of the machine-readable report shape (JSON, NDJSON, SARIF
/// properties): raised when a field changes meaning or disappears, not when
/// one is added. 3: `measurements.counter_rates` holds rate sets
/// ([`measurements`]).
pub const SCHEMA_VERSION: u32 = 3;

/// Findings counted by severity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
// The TypeScript name; JSON never carries a struct's name.
#[cfg_attr(feature = "wasm", serde(rename = "SeverityCounts"))]
pub struct Summary {
    /// Findings that take a node out of service.
    pub critical: usize,
    /// Broken now.
    pub error: usize,
    /// Degraded or suspicious.
    pub warning: usize,
    /// Worth knowing.
    pub info: usize,
}

impl Summary {
    /// Counts `findings`.
    #[must_use]
    pub fn of(findings: &[Finding]) -> Self {
        let mut s = Self::default();
        for f in findings {
            match f.severity {
                Severity::Critical => s.critical += 1,
                Severity::Error => s.error += 1,
                Severity::Warning => s.warning += 1,
                Severity::Info => s.info += 1,
            }
        }
        s
    }

    /// How many findings have this severity.
    #[must_use]
    pub fn count(&self, severity: Severity) -> usize {
        match severity {
            Severity::Critical => self.critical,
            Severity::Error => self.error,
            Severity::Warning => self.warning,
            Severity::Info => self.info,
        }
    }

    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: &Self) {
        self.critical += other.critical;
        self.error += other.error;
        self.warning += other.warning;
        self.info += other.info;
    }

    /// The worst severity present.
    #[must_use]
    pub fn worst(&self) -> Option<Severity> {
        Severity::WORST_FIRST
            .into_iter()
            .find(|s| self.count(*s) > 0)
    }
}

/// An input that could not be analysed, and why (batch runs go on without it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
pub struct SkippedInput {
    /// The input's name (path, or `-`).
    pub input: String,
    /// Why it was skipped.
    pub reason: String,
}

/// The result of an analysis. Reads back from the JSON report
/// (`serde_json::from_str::<Report>`), the parsed input (`document(s)`) aside.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
#[non_exhaustive]
pub struct Report {
    /// The report shape's version ([`SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// One line for people: the worst severity, counts, hosts affected
    /// (a string in JSON, `level: detail`).
    pub verdict: verdict::Verdict,
    /// The worst severity found, or `null` when nothing was found.
    pub status: Option<Severity>,
    /// Findings counted by severity.
    pub summary: Summary,
    /// Every finding, worst first.
    pub findings: Vec<Finding>,
    /// Findings grouped by what is broken, worst first: a headline, its
    /// supporting findings and a probable cause.
    pub incidents: Vec<Incident>,
    /// Rules that could not run for lack of data, and what they need.
    pub skipped_rules: Vec<SkippedRule>,
    /// Number of rules that ran.
    pub rules_run: usize,
    /// Number of hosts seen.
    pub hosts: usize,
    /// The hosts named in the input, sorted (the fleet summary counts the
    /// healthy ones).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host_names: Vec<String>,
    /// Number of tool outputs read.
    pub sections: usize,
    /// Inputs left out (unreadable, binary, nothing recognised).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped_inputs: Vec<SkippedInput>,
    /// Rates, BER, outliers, balance and trends the rules were judged on
    /// (JSON writes the counter rates as rate sets: [`measurements`]).
    #[serde(
        serialize_with = "measurements::serialize",
        deserialize_with = "measurements::deserialize"
    )]
    #[cfg_attr(
        feature = "wasm",
        tsify(
            type = "Omit<Measurements, \"counter_rates\"> & { counter_rates: Record<string, unknown>[] }"
        )
    )]
    pub measurements: Measurements,
}

impl Report {
    /// True when some finding is at or above `level`.
    #[must_use]
    pub fn fails(&self, level: Severity) -> bool {
        self.status.is_some_and(|worst| worst >= level)
    }
}

/// A document with the name of the input it was read from.
#[derive(Debug, Clone, Copy)]
pub struct NamedDocument<'a> {
    /// The input's name (path, or `-` for standard input).
    pub input: &'a str,
    /// What was read from it.
    pub document: &'a Document,
}
