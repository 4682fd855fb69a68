//! Monitor tables: `nvidia-smi dmon`/`pmon` and `dcgmi dmon`, one row per
//! entity and sample.

use crate::span::LineSpan;
use serde::{Deserialize, Serialize};

/// Which monitor printed a [`Monitor`] table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MonitorTool {
    /// `nvidia-smi dmon`.
    NvidiaSmiDmon,
    /// `nvidia-smi pmon`.
    NvidiaSmiPmon,
    /// `dcgmi dmon`.
    DcgmiDmon,
}

/// A column of a monitor table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MonitorColumn {
    /// Short name as printed (`pwr`, `rxpci`, `NVLTX`).
    pub name: String,
    /// Unit from the second header line (`W`, `MB/s`), if printed.
    pub unit: Option<String>,
    /// DCGM field id (`1011` for `NVLTX`), from `dcgmi dmon -e` or the
    /// short names this version knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_id: Option<u16>,
}

/// One value of a monitor row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MonitorValue {
    /// As printed (`77`, `-`, `N/A`, `12.500`).
    pub text: String,
    /// The number, when it is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number: Option<f64>,
}

/// One sample line: an entity (GPU) at one moment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MonitorRow {
    /// The entity as printed: `0` (nvidia-smi), `GPU 0`, `Switch 3` (dcgmi).
    pub entity: String,
    /// GPU index when the entity is a GPU.
    pub gpu: Option<u32>,
    /// Values in column order (for nvidia-smi, the `gpu` column itself is
    /// `entity`, not a value; date and time columns are values).
    pub values: Vec<MonitorValue>,
    /// Seconds since the epoch (as UTC) when the `-o DT` date and time
    /// columns were printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp_unix: Option<i64>,
    /// Line number.
    pub line: usize,
}

/// Rows under one header. A repeated identical header continues the
/// table; a different one starts another.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MonitorTable {
    /// Columns after the entity column, in order.
    pub columns: Vec<MonitorColumn>,
    /// Samples in input order.
    pub rows: Vec<MonitorRow>,
    /// Lines of the header(s) and rows.
    pub span: LineSpan,
}

impl MonitorTable {
    /// Index of a column by name (case-insensitive) or DCGM field id
    /// written as digits (`"1011"`).
    #[must_use]
    pub fn column(&self, name: &str) -> Option<usize> {
        let id: Option<u16> = name.parse().ok();
        self.columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(name) || (id.is_some() && c.field_id == id))
    }

    /// The value of column `name` in `row`.
    #[must_use]
    pub fn value<'r>(&self, row: &'r MonitorRow, name: &str) -> Option<&'r MonitorValue> {
        row.values.get(self.column(name)?)
    }
}

/// `nvidia-smi dmon` / `pmon` or `dcgmi dmon` output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Monitor {
    /// Which tool printed it.
    pub tool: MonitorTool,
    /// Tables (one unless the header changed).
    pub tables: Vec<MonitorTable>,
    /// `dcgmi dmon` said it was stopped by a signal (Ctrl-C).
    pub interrupted: bool,
}
