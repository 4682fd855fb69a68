//! What `ibqueryerrors` reports: the nodes and ports whose error counters
//! exceed the thresholds, their link information, and the run summary.
//!
//! ibqueryerrors prints only ports with errors, so a port absent from
//! [`Ibqueryerrors::nodes`] was checked and found clean (the summary says
//! how many were checked). Its exit status is the number of bad ports, not a
//! failure code.

use super::ib::{Guid, PhysState, PortState};
use super::Counters;
use crate::span::LineSpan;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One ibqueryerrors run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Ibqueryerrors {
    /// Node reports in output order.
    pub nodes: Vec<NodeReport>,
    /// The `## Summary:` trailer, when the output reached it.
    pub summary: Option<ErrorSummary>,
    /// Error lines the tool printed about its own work (`Failed to reset
    /// errors …`, `discover failed`), as printed.
    pub messages: Vec<String>,
    /// Set when the output has no `## Summary:` line. ibqueryerrors always
    /// ends with it and lists only the ports beyond its thresholds (or,
    /// with `--counters`, those it reached): without it the output was cut
    /// or the run stopped early, so a port not listed may be one the paste
    /// lost or the run never reached, and cannot be called clean. The
    /// listed ports are still judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial: Option<crate::model::partial::Partial>,
}

impl Ibqueryerrors {
    /// Ports reported with errors beyond threshold: every port line of an
    /// `Errors for` node except the `port ALL` aggregate (which the tool does
    /// not count as a bad port either).
    pub fn bad_ports(&self) -> impl Iterator<Item = (&NodeReport, &PortReport)> {
        self.nodes
            .iter()
            .filter(|n| n.report == ReportKind::Errors)
            .flat_map(|n| n.ports.iter().filter(|p| !p.all_ports).map(move |p| (n, p)))
    }
}

/// Why a node is listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReportKind {
    /// `Errors for …`: at least one counter above its threshold.
    Errors,
    /// `Data Counters for …` (`--counters`): data counters, no verdict.
    DataCounters,
}

/// One `Errors for …` or `Data Counters for …` block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeReport {
    /// Which kind of block this is.
    pub report: ReportKind,
    /// The node GUID; ibqueryerrors prints it for switches and in data
    /// counter blocks, not for CAs' error blocks.
    pub guid: Option<Guid>,
    /// The node description (or its node-name-map name).
    pub desc: String,
    /// Ports listed under the node.
    pub ports: Vec<PortReport>,
    /// Lines of the block.
    pub span: LineSpan,
    /// True when the port lines were pasted without their `Errors for …`
    /// line: the node's description and GUID are unknown (`desc` is empty),
    /// only the port GUIDs on the lines are.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub headerless: bool,
}

/// One `GUID 0x… port N: [Name == value] …` line and its `Link info:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PortReport {
    /// The port GUID printed on the line.
    pub guid: Guid,
    /// Port number; 255 for `port ALL`.
    pub port: u32,
    /// True for `port ALL`, the switch's AllPortSelect aggregate.
    pub all_ports: bool,
    /// Counters by the tool's names. Widths are known for 32-bit
    /// PortCounters entries (`[Name == 5]`) and for 64-bit extended error
    /// entries (`[Name == 5 (5.000)]`); data counters whose source
    /// attribute cannot be told have width 0 (unknown).
    pub counters: Counters,
    /// The `Link info:` line that follows with `-r`.
    pub link: Option<LinkInfo>,
    /// Lines of the port entry.
    pub span: LineSpan,
}

/// `Link info:` (ibqueryerrors `-r`): the port's link and its peer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkInfo {
    /// LID of the node (a switch's management LID, a CA port's base LID).
    pub lid: u32,
    /// Port number.
    pub port: u32,
    /// Active width (`4X`); absent when the port is down.
    pub width: Option<String>,
    /// Active speed as printed (`25.78125 Gbps`, `10.0 Gbps (FDR10)`);
    /// absent when the port is down.
    pub speed: Option<String>,
    /// Logical port state.
    pub state: PortState,
    /// Physical port state (`physical_state` in JSON, as in every model).
    #[serde(rename = "physical_state", alias = "phys_state")]
    pub phys_state: PhysState,
    /// The port at the other end, when there is one.
    pub remote: Option<RemotePort>,
}

/// The peer of a port in a `Link info:` line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RemotePort {
    /// Peer port GUID.
    pub guid: Guid,
    /// Peer LID.
    pub lid: u32,
    /// Peer port number.
    pub port: u32,
    /// Peer node description.
    pub desc: String,
    /// The tool's hint when the link runs below what both ends support
    /// (`Could be 4X`); `None` when it printed `( )`.
    pub could_be: Option<String>,
}

/// The `## Summary:` trailer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorSummary {
    /// Nodes whose counters were read.
    pub nodes_checked: u64,
    /// Nodes with at least one port beyond threshold.
    pub bad_nodes: u64,
    /// Ports whose counters were read.
    pub ports_checked: Option<u64>,
    /// Ports with errors beyond threshold (also the exit status).
    pub bad_ports: Option<u64>,
    /// Thresholds read from the threshold file, by counter name. Empty when
    /// no file was read (`## Thresholds: ` with nothing after it, or
    /// `## (null)` from older versions): every threshold is then 0, so any
    /// non-zero error counter is reported.
    pub thresholds: BTreeMap<String, u64>,
    /// PMA queries that failed (the line is printed only when non-zero).
    pub pma_query_failures: u64,
    /// Counter names suppressed with `-s` or `-c`.
    pub suppressed: Vec<String>,
}
