//! `sminfo` (infiniband-diags): the subnet manager a port reaches, as it
//! answers a SubnetManagerInfo query.

use crate::model::ib::Guid;
use crate::span::LineSpan;
use serde::{Deserialize, Serialize};

/// Output of `sminfo`: one reply line per run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sminfo {
    /// The replies, in the order printed (several runs pasted together).
    pub replies: Vec<SmReply>,
}

/// `sminfo: sm lid 1 sm guid 0x…, activity count 5209141 priority 15 state 3 SMINFO_MASTER`.
///
/// A field is `None` when the line was cut before it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SmReply {
    /// The LID the query went to (the port's SM LID unless one was named).
    pub lid: u32,
    /// The SM's port GUID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guid: Option<Guid>,
    /// The SM's activity count: it grows as the SM sweeps the fabric.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activity_count: Option<u64>,
    /// The SM's priority (0–15).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<u32>,
    /// The SM's state: 0 not active, 1 discovering, 2 standby, 3 master.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<u32>,
    /// The state's name as printed (`SMINFO_MASTER`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_name: Option<String>,
    /// The line this reply was read from.
    pub span: LineSpan,
}

/// `SMINFO_MASTER`: the state of the SM that runs the subnet.
pub const SMINFO_MASTER: u32 = 3;
