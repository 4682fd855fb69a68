//! `rdma link show` (iproute2's `rdma` tool): one line per RDMA port.

use crate::model::ib::{LinkLayer, PhysState, PortState};
use crate::span::LineSpan;
use serde::{Deserialize, Serialize};

/// Output of `rdma link` / `rdma link show [DEV/PORT]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RdmaLink {
    /// Ports in the order printed.
    pub ports: Vec<RdmaLinkPort>,
}

/// One `link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev ib0` line.
///
/// A field is `None` when the line did not print it (the kernel prints the
/// subnet prefix, LIDs and LMC only for InfiniBand ports) or was cut before it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RdmaLinkPort {
    /// Device name, e.g. `mlx5_0`.
    pub device: String,
    /// Port number (from 1).
    pub port: u32,
    /// `subnet_prefix` (`fe80:0000:0000:0000`), InfiniBand only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subnet_prefix: Option<String>,
    /// `lid` (decimal); 0 means no LID assigned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lid: Option<u32>,
    /// `sm_lid` (decimal); 0 means no subnet manager has configured the port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_lid: Option<u32>,
    /// `lmc`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lmc: Option<u32>,
    /// `state` (`ACTIVE`, `DOWN`, `INIT`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<PortState>,
    /// `physical_state` (`LINK_UP`, `POLLING`, `DISABLED`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub physical_state: Option<PhysState>,
    /// `netdev`: the network interface over the port (`ib0`, `ens7f0np0`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub netdev: Option<String>,
    /// Lines this port was read from.
    pub span: LineSpan,
}

impl RdmaLinkPort {
    /// A port with only its identity and span known.
    #[must_use]
    pub fn new(device: impl Into<String>, port: u32, span: LineSpan) -> Self {
        Self {
            device: device.into(),
            port,
            subnet_prefix: None,
            lid: None,
            sm_lid: None,
            lmc: None,
            state: None,
            physical_state: None,
            netdev: None,
            span,
        }
    }

    /// The port's link layer, as far as the line tells it. The kernel
    /// reports a subnet prefix and LIDs for InfiniBand ports only, before
    /// the state (`fill_port_info` in the kernel's nldev, `link_parse_cb`
    /// in iproute2's `rdma/link.c`): a LID means InfiniBand, and a line
    /// that reached its `state` without one is an Ethernet port (RoCE,
    /// iWARP). A line cut before its state tells nothing.
    #[must_use]
    pub fn link_layer(&self) -> Option<LinkLayer> {
        if self.lid.is_some() || self.sm_lid.is_some() || self.subnet_prefix.is_some() {
            Some(LinkLayer::Infiniband)
        } else if self.state.is_some() {
            Some(LinkLayer::Ethernet)
        } else {
            None
        }
    }
}
