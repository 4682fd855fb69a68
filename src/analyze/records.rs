//! Record shards: the unit results of a slice of a fleet, one JSON value
//! per line, so a fleet too big for one machine (or one job) is analysed
//! as a Slurm array: each task writes the records of its slice
//! (`analyze --emit-records`), one merge step runs the fleet step over all
//! of them (`analyze shard*.ndjson`) and prints the report one run over
//! every dump would print.
//!
//! Format (NDJSON): a [`RecordsHeader`] line, then one [`RecordLine`] per
//! unit in input order. Documented in `docs/json.md`.

use super::UnitResult;
use crate::report::SkippedInput;
use serde::{Deserialize, Serialize};

/// The `kind` of the header line.
pub const RECORDS_KIND: &str = "fabricscope-unit-records";

/// The version of the record shape: raised when a field changes meaning or
/// disappears. A merge refuses shards of another version.
pub const RECORDS_SCHEMA_VERSION: u32 = 1;

/// The first line of a record shard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordsHeader {
    /// Always [`RECORDS_KIND`].
    pub kind: String,
    /// [`RECORDS_SCHEMA_VERSION`] of the writer.
    pub schema_version: u32,
    /// The fabricscope version that wrote it.
    pub fabricscope: String,
    /// `--interval` given to the shard, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_seconds: Option<f64>,
    /// `--ignore` given to the shard.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignore: Vec<String>,
}

impl RecordsHeader {
    /// The header this build writes.
    #[must_use]
    pub fn new(interval_seconds: Option<f64>, ignore: Vec<String>) -> Self {
        Self {
            kind: RECORDS_KIND.to_owned(),
            schema_version: RECORDS_SCHEMA_VERSION,
            fabricscope: env!("CARGO_PKG_VERSION").to_owned(),
            interval_seconds,
            ignore,
        }
    }

    /// Whether `text` (a file's beginning) starts a record shard.
    #[must_use]
    pub fn starts(text: &[u8]) -> bool {
        let head = text.get(..text.len().min(200)).unwrap_or_default();
        let head = String::from_utf8_lossy(head);
        head.trim_start().starts_with('{') && head.contains(&format!("\"kind\":\"{RECORDS_KIND}\""))
    }
}

/// One unit of a shard: its result (none when none of its inputs held tool
/// output) and the inputs that were skipped.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RecordLine {
    /// The unit's result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<UnitResult>,
    /// Inputs of the unit that gave nothing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<SkippedInput>,
}

impl RecordLine {
    /// The unit's place in a run: its first input's name.
    #[must_use]
    pub fn key(&self) -> &str {
        self.unit
            .as_ref()
            .map(|u| u.key.as_str())
            .filter(|k| !k.is_empty())
            .or_else(|| self.skipped.first().map(|s| s.input.as_str()))
            .unwrap_or("")
    }
}
