//! `ibnetdiscover` (infiniband-diags): the subnet as one port sees it, every
//! node and every cable between two ports, with the width and speed each
//! link trained at.
//!
//! Three layouts: the default topology file (a block per node, one line
//! per connected port), `-p`/`--ports` (one line per port, connected or
//! not) and the node list (`-l`, and the ibswitches/ibhosts scripts: one
//! line per node). A link is printed from both of its ends in the topology file.

use crate::model::ib::Guid;
use crate::model::iblinkinfo::{LaneGeneration, LinkWidth, NodeType};
use crate::span::LineSpan;
use serde::{Deserialize, Serialize};

/// Output of `ibnetdiscover` (topology file or `-p`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Ibnetdiscover {
    /// Node blocks of the topology file, in the order printed (none in
    /// the `-p` layout).
    pub nodes: Vec<NetNode>,
    /// Port lines, in the order printed: under their node in the topology
    /// file, each on its own in `-p`.
    pub ports: Vec<NetPort>,
    /// Set when nodes were read from a node list (`ibnetdiscover -l`, `-S`,
    /// `-H`; the `ibswitches`, `ibhosts` and `ibnodes` scripts): one line
    /// per node and no port lines, so the listing says nothing of links.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub listed: bool,
}

/// A node block's header: `Switch 36 "S-…" # "desc" enhanced port 0 lid 1
/// lmc 0`, `Ca 2 "H-…" # "desc"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NetNode {
    /// `Switch`, `Ca` or `Rt`.
    pub node_type: NodeType,
    /// The node's GUID, from its `S-`/`H-`/`R-` name.
    pub guid: Option<Guid>,
    /// Number of ports.
    pub port_count: u32,
    /// Node description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub desc: Option<String>,
    /// A switch's port-0 LID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lid: Option<u32>,
    /// The header line.
    pub span: LineSpan,
}

/// One end of a link, or of an unconnected port (`-p`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NetEnd {
    /// What kind of node it is.
    pub node_type: Option<NodeType>,
    /// The node's GUID (topology file) or the port's (`-p`).
    pub guid: Option<Guid>,
    /// The port's LID (a switch's port-0 LID for a switch port).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lid: Option<u32>,
    /// Port number.
    pub port: u32,
    /// Node description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub desc: Option<String>,
}

/// A port line: the port, how wide and fast its link trained, and what the
/// cable leads to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NetPort {
    /// The port.
    pub local: NetEnd,
    /// The other end; `None` for an unconnected port (`-p` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<NetEnd>,
    /// Active width (`4x`).
    pub width: Option<LinkWidth>,
    /// Active speed as named (`EDR`); `None` for `???` (a speed the tool
    /// does not know) or a line cut before it.
    pub speed: Option<LaneGeneration>,
    /// The line it was read from.
    pub span: LineSpan,
}

impl NetPort {
    /// Whether the port is cabled to another.
    #[must_use]
    pub fn connected(&self) -> bool {
        self.remote.is_some()
    }
}
