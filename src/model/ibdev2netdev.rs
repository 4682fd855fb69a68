//! `ibdev2netdev` (NVIDIA/Mellanox `mlnx-tools`): which network interface
//! sits on each RDMA port, and whether that interface has a carrier.

use crate::model::ib::{LinkLayer, PortState};
use crate::span::LineSpan;
use serde::{Deserialize, Serialize};

/// Output of `ibdev2netdev` or `ibdev2netdev -v`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Ibdev2netdev {
    /// Ports in the order printed.
    pub ports: Vec<NetdevPort>,
}

/// One `mlx5_0 port 1 ==> ib0 (Up)` line, or its `-v` form
/// `0000:3b:00.0 mlx5_0 (MT4123 - MCX653105A-HDAT) ConnectX-6 … fw 20.28.1002
/// port 1 (ACTIVE) ==> ib0 (Up)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NetdevPort {
    /// RDMA device name, e.g. `mlx5_0`.
    pub device: String,
    /// Port number (from 1).
    pub port: u32,
    /// The network interface on the port (`ib0`, `ens1f0np0`).
    pub netdev: String,
    /// The interface's carrier, the `(Up)`/`(Down)` at the end of the line
    /// (the script reads `/sys/class/net/<netdev>/carrier`): `None` for
    /// `(NA)` or a line cut before it. This is not the RDMA port's state:
    /// an interface that is administratively down reads `Down` over an
    /// Active port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carrier: Option<bool>,
    /// `-v`: the RDMA port's logical state (`(ACTIVE)`, `(DOWN  )`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port_state: Option<PortState>,
    /// `-v`: the adapter's PCI address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pci_address: Option<String>,
    /// `-v`: the adapter type as ibstat names it (`MT4123`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_type: Option<String>,
    /// `-v`: the board's part number from its VPD (`MCX653105A-HDAT`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part_number: Option<String>,
    /// `-v`: firmware version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firmware: Option<String>,
    /// The line this port was read from.
    pub span: LineSpan,
}

impl NetdevPort {
    /// The link layer the interface's name tells. The kernel names IPoIB
    /// interfaces `ib…` (`ib0`, or `ibp12s0` under predictable naming), and
    /// an RDMA port under any other interface is an Ethernet (RoCE) port:
    /// an interface renamed away from `ib…` would be read as Ethernet and
    /// left unjudged, never the other way round.
    #[must_use]
    pub fn link_layer(&self) -> LinkLayer {
        let ipoib = self.netdev.strip_prefix("ib").is_some_and(|rest| {
            rest.starts_with(|c: char| c.is_ascii_digit() || c == 'p' || c == 's')
        });
        if ipoib {
            LinkLayer::Infiniband
        } else {
            LinkLayer::Ethernet
        }
    }
}
