//! Prometheus node_exporter's InfiniBand metrics (`node_infiniband_*`), as
//! a scrape (`curl -s host:9100/metrics`) or a query result across hosts
//! prints them.

use crate::model::ib::{PhysState, PortState};
use crate::model::partial::Partial;
use crate::model::perfquery::Perfquery;
use crate::span::LineSpan;
use serde::{Deserialize, Serialize};

/// One section of metric lines: the InfiniBand metrics of each host
/// (`instance`) it names, and the other metrics set aside.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeExporter {
    /// One per `instance` label, in the order first seen; lines without
    /// one are the scrape's (`instance: null`).
    pub scrapes: Vec<Scrape>,
    /// Lines of other metrics (`node_cpu_seconds_total`, `go_*`) and their
    /// `# HELP`/`# TYPE` lines, in runs: kept apart, not read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_metrics: Vec<LineSpan>,
    /// The paste ends inside an InfiniBand metric's name or labels, before
    /// its device and port: what was cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut: Option<Partial>,
}

impl NodeExporter {
    /// How many lines [`Self::other_metrics`] holds.
    #[must_use]
    pub fn other_metric_lines(&self) -> usize {
        self.other_metrics.iter().map(|s| s.len()).sum()
    }
}

/// The InfiniBand metrics of one host.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Scrape {
    /// The host the `instance` label names (its `:port` removed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// The port counters, as perfquery's PortCounters (and
    /// PortCountersExtended) blocks with sysfs's hardware widths.
    pub counters: Perfquery,
    /// Each port's state, physical state and rate.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<PortStatus>,
    /// `node_infiniband_info`: each adapter's board, firmware and type.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub adapters: Vec<Adapter>,
    /// Milliseconds since the epoch of the samples, when every sample of
    /// the scrape carries the same one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp_ms: Option<i64>,
}

/// `state_id`, `physical_state_id` and `rate_bytes_per_second` of a port.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PortStatus {
    /// Device name, e.g. `mlx5_0`.
    pub device: String,
    /// Port number (from 1).
    pub port: u32,
    /// `state_id` (1 down, 2 init, 3 armed, 4 active, 5 active defer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<PortState>,
    /// `physical_state_id` (2 polling, 3 disabled, 5 link up, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub physical_state: Option<PhysState>,
    /// `rate_bytes_per_second` in Gb/s (the sysfs `rate` it was made from).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_gbps: Option<f64>,
    /// Lines this port's status was read from.
    pub span: LineSpan,
}

/// One `node_infiniband_info` line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Adapter {
    /// Device name, e.g. `mlx5_0`.
    pub device: String,
    /// `board_id` (`MT_0000000223`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub board_id: Option<String>,
    /// `firmware_version` (`20.31.1014`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firmware_version: Option<String>,
    /// `hca_type` (`MT4123`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hca_type: Option<String>,
    /// The line.
    pub span: LineSpan,
}
