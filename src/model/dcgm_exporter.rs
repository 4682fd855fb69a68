//! NVIDIA dcgm-exporter's GPU metrics (`DCGM_FI_*`), as a scrape (`curl -s
//! host:9400/metrics`) or a query result across hosts prints them.

use crate::model::partial::Partial;
use crate::span::LineSpan;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One section of metric lines: the GPUs of each host it names, and the
/// other metrics set aside.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DcgmExporter {
    /// One per host (`instance` label, else `Hostname`), in the order first
    /// seen; lines naming neither are the scrape's (`host: null`).
    pub hosts: Vec<DcgmHost>,
    /// Lines of other metrics (`go_*`, `process_*`, another exporter's) and
    /// their `# HELP`/`# TYPE` lines, in runs: kept apart, not read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_metrics: Vec<LineSpan>,
    /// The paste ends inside a metric's name or labels, before the GPU it
    /// names: what was cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut: Option<Partial>,
}

impl DcgmExporter {
    /// How many lines [`Self::other_metrics`] holds.
    #[must_use]
    pub fn other_metric_lines(&self) -> usize {
        self.other_metrics.iter().map(|s| s.len()).sum()
    }
}

/// The GPUs of one host.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DcgmHost {
    /// The host the `instance` label names (its `:port` removed), else the
    /// `Hostname` label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// One per GPU (`gpu` label, else `UUID`), in the order first seen.
    pub gpus: Vec<DcgmGpu>,
    /// Milliseconds since the epoch of the samples, when every sample of
    /// the host carries the same one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp_ms: Option<i64>,
}

/// One metric's value on one line.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Reading {
    /// The value: a whole count or code.
    pub value: u64,
    /// The line.
    pub span: LineSpan,
}

/// What dcgm-exporter says about one GPU.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DcgmGpu {
    /// `gpu`: the GPU's index on its host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u32>,
    /// `UUID` (`GPU-604ac76c-…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    /// `pci_bus_id` as printed (`00000000:3B:00.0`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pci_bus_id: Option<String>,
    /// `device` (`nvidia0`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// `modelName` (`NVIDIA H100 80GB HBM3`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_name: Option<String>,
    /// `DCGM_FI_DRIVER_VERSION` (a label on every metric).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver_version: Option<String>,
    /// `DCGM_FI_DEV_XID_ERRORS`: the last Xid code the GPU reported since
    /// DCGM began watching it (0: none). A gauge that keeps its code: when
    /// it happened, and any earlier code, are not shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_xid: Option<Reading>,
    /// `DCGM_FI_DEV_ROW_REMAP_FAILURE` (1: a row could not be remapped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_remap_failure: Option<Reading>,
    /// `DCGM_FI_DEV_ROW_REMAP_PENDING` (1: a remap awaits a GPU reset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_remap_pending: Option<Reading>,
    /// `DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS`: lifetime count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correctable_remapped_rows: Option<Reading>,
    /// `DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS`: lifetime count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uncorrectable_remapped_rows: Option<Reading>,
    /// `DCGM_FI_DEV_ECC_DBE_VOL_TOTAL`: double-bit (uncorrectable) ECC
    /// errors since the driver loaded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecc_dbe_volatile: Option<Reading>,
    /// `DCGM_FI_DEV_NVLINK_{CRC_FLIT,CRC_DATA,REPLAY,RECOVERY}_ERROR_COUNT_TOTAL`:
    /// the GPU's lifetime totals over all its links (keyed `crc_flit`,
    /// `crc_data`, `replay`, `recovery`). History, not news: only a rise
    /// between two scrapes says something, NV011's (and the legacy fields read 0 on
    /// Hopper and later whatever happens).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub nvlink_totals: BTreeMap<String, Reading>,
    /// Every other `DCGM_FI_*` metric, as printed, under its name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fields: BTreeMap<String, String>,
    /// Lines this GPU was read from.
    pub span: LineSpan,
    /// Set when the paste ends in one of this GPU's lines, before its value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial: Option<Partial>,
}
