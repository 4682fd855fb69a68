//! `nvidia-smi --query-gpu=… --format=csv`: one row per GPU, values with
//! their unit parsed where they carry one.

use serde::{Deserialize, Serialize};

/// One value of `--query-gpu … --format=csv`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CsvValue {
    /// The text as printed (`77.55 W`, `NVIDIA H200`, `[N/A]`).
    pub text: String,
    /// The number, when the value is one (with or without its unit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number: Option<f64>,
    /// The unit printed after the number, or the header's `[unit]` when
    /// the value came without one (`nounits`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
}

impl CsvValue {
    /// `[N/A]`, `[Not Supported]`, `[Unknown Error]`…: the tool could not
    /// give a value.
    #[must_use]
    pub fn is_missing(&self) -> bool {
        let t = self.text.trim();
        t.starts_with('[') && t.ends_with(']') || t == "N/A"
    }
}

/// One row of `--query-gpu … --format=csv`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CsvRow {
    /// Values in column order.
    pub values: Vec<CsvValue>,
    /// `timestamp` column (`2026/11/30 00:10:31.123`) in milliseconds since
    /// the epoch, read as UTC, when the query asked for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp_unix_ms: Option<i64>,
    /// Line number.
    pub line: usize,
}

/// `nvidia-smi --query-gpu=… --format=csv[,noheader][,nounits]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SmiCsv {
    /// Column names: the header's (`clocks.current.sm`) or, for `noheader`,
    /// the query's from the command line (`clocks.sm`). Empty when
    /// neither was seen.
    pub fields: Vec<String>,
    /// The field names as the command line asked for them, when it was
    /// seen (aliases such as `clocks.sm` for `clocks.current.sm`).
    pub query: Vec<String>,
    /// The header's `[unit]` for each column (`None` for unitless columns).
    pub units: Vec<Option<String>>,
    /// Whether a header line was printed.
    pub header: bool,
    /// Data rows.
    pub rows: Vec<CsvRow>,
}

impl SmiCsv {
    /// Index of a column by header name or query name; old and new
    /// spellings of the clock-event fields are accepted both ways.
    #[must_use]
    pub fn column(&self, name: &str) -> Option<usize> {
        let alt = name
            .strip_prefix("clocks_throttle_reasons.")
            .map(|r| format!("clocks_event_reasons.{r}"))
            .or_else(|| {
                name.strip_prefix("clocks_event_reasons.")
                    .map(|r| format!("clocks_throttle_reasons.{r}"))
            });
        let matches = |f: &String| f == name || alt.as_deref() == Some(f.as_str());
        self.fields
            .iter()
            .position(matches)
            .or_else(|| self.query.iter().position(matches))
    }

    /// The value of column `name` in `row`.
    #[must_use]
    pub fn value<'r>(&self, row: &'r CsvRow, name: &str) -> Option<&'r CsvValue> {
        row.values.get(self.column(name)?)
    }
}
