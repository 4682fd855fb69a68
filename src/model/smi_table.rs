//! `nvidia-smi` without arguments: the boxed summary table everybody
//! pastes, one block of two or three rows per GPU, then the MIG devices
//! and processes tables.
//!
//! Every field is kept as the cell's text (`ERR!`, `N/A`, `[N/A]` and
//! units included): what the tool printed is the evidence. The few numbers
//! a reader compares are parsed beside it and are `None` when the cell
//! holds anything else.

use super::partial::Partial;
use crate::span::LineSpan;
use serde::{Deserialize, Serialize};

/// The text nvidia-smi prints in a field NVML could not read.
pub const ERR: &str = "ERR!";

/// One GPU's block of the table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableGpu {
    /// The index nvidia-smi numbers it with (`GPU` column).
    pub index: u32,
    /// Product name as printed (long names end in `...`; `ERR!` when NVML
    /// could not read it).
    pub name: String,
    /// `Persistence-M` (`On`, `Off`), or the driver model on Windows
    /// (`WDDM`, `TCC`).
    pub persistence_mode: Option<String>,
    /// `Bus-Id` (`00000000:18:00.0`).
    pub bus_id: Option<String>,
    /// `Disp.A`: display active (`On`, `Off`).
    pub display_active: Option<String>,
    /// `Volatile Uncorr. ECC` as printed (`0`, `N/A`, `ERR!`).
    pub volatile_uncorrected_ecc: Option<String>,
    /// The same as a number, when it is one and its cell was read whole.
    pub volatile_uncorrected_ecc_count: Option<u64>,
    /// `Fan` (`30%`, `N/A`).
    pub fan: Option<String>,
    /// `Temp` (`33C`).
    pub temperature: Option<String>,
    /// `Temp` in degrees Celsius.
    pub temperature_c: Option<u32>,
    /// `Perf`: the performance state (`P0`).
    pub performance_state: Option<String>,
    /// `Pwr:Usage` (`77W`).
    pub power_usage: Option<String>,
    /// `Pwr:Usage` in watts.
    pub power_usage_w: Option<u32>,
    /// `Pwr:Cap` (`700W`).
    pub power_cap: Option<String>,
    /// `Pwr:Cap` in watts.
    pub power_cap_w: Option<u32>,
    /// `Memory-Usage` as printed (`0MiB / 143771MiB`).
    pub memory_usage: Option<String>,
    /// Memory used, MiB.
    pub memory_used_mib: Option<u64>,
    /// Memory total, MiB.
    pub memory_total_mib: Option<u64>,
    /// `GPU-Util` (`0%`).
    pub utilization: Option<String>,
    /// `GPU-Util` in percent.
    pub utilization_pct: Option<u32>,
    /// `Compute M.` (`Default`, `E. Process`).
    pub compute_mode: Option<String>,
    /// `MIG M.` (`Disabled`, `Enabled`, `N/A`); absent from drivers before
    /// MIG (two-row blocks).
    pub mig_mode: Option<String>,
    /// The fields that print `ERR!`, by their column names (`Fan`,
    /// `Volatile Uncorr. ECC`), in the order printed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub err_fields: Vec<String>,
    /// The block's lines.
    pub span: LineSpan,
    /// Set when the block is not whole: a row missing (the paste ended
    /// inside it) or cut at the right (a chat tool's width).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial: Option<Partial>,
}

impl TableGpu {
    /// Whether any field of the block prints `ERR!`.
    #[must_use]
    pub fn has_err(&self) -> bool {
        !self.err_fields.is_empty()
    }
}

/// A row of the `MIG devices:` table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableMigDevice {
    /// The GPU it is carved from.
    pub gpu: u32,
    /// GPU instance id (`GI ID`), as printed.
    pub gpu_instance: String,
    /// Compute instance id (`CI ID`), as printed.
    pub compute_instance: String,
    /// MIG device index (`MIG Dev`).
    pub device: String,
    /// `Memory-Usage` of its first row, as printed.
    pub memory_usage: Option<String>,
    /// The device's lines.
    pub span: LineSpan,
}

/// A row of the `Processes:` table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableProcess {
    /// `GPU`, as printed (`0`, `N/A`).
    pub gpu: String,
    /// `GI ID`, `CI ID` where the table has them (`N/A` without MIG).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_instance: Option<String>,
    /// See `gpu_instance`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compute_instance: Option<String>,
    /// `PID`.
    pub pid: u64,
    /// `Type` (`C`, `G`, `C+G`).
    pub kind: String,
    /// `Process name` as printed (long ones start with `...`).
    pub name: String,
    /// `GPU Memory Usage` as printed (`818MiB`, `N/A`).
    pub memory: String,
    /// Line number.
    pub line: usize,
}

/// `nvidia-smi`'s default output.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SmiTable {
    /// `NVIDIA-SMI 580.159.04`: the version of nvidia-smi itself.
    pub smi_version: Option<String>,
    /// `Driver Version:` (on WSL the Windows driver's, which differs from
    /// `smi_version`).
    pub driver_version: Option<String>,
    /// `CUDA Version:` (absent before driver 410).
    pub cuda_version: Option<String>,
    /// GPU blocks in order.
    pub gpus: Vec<TableGpu>,
    /// Rows of the `MIG devices:` table.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mig_devices: Vec<TableMigDevice>,
    /// Rows of the `Processes:` table.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub processes: Vec<TableProcess>,
}

impl SmiTable {
    /// Whether this is nvidia-smi inside WSL: the Linux nvidia-smi prints
    /// the Windows driver's version, which never equals its own.
    #[must_use]
    pub fn is_wsl(&self) -> bool {
        matches!((&self.smi_version, &self.driver_version), (Some(s), Some(d)) if s != d)
    }
}
