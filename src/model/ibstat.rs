//! `ibstat`: host channel adapters and their ports.

use crate::model::ib::{Guid, LinkLayer, PhysState, PortState};
use crate::model::partial::Partial;
use crate::span::LineSpan;
use serde::{Deserialize, Serialize};

/// Output of `ibstat` in any of its forms.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Ibstat {
    /// CAs with their ports (`ibstat`, `ibstat CA`, `ibstat CA PORT`, `ibstat -s`).
    pub cas: Vec<Ca>,
    /// CA names from `ibstat -l`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ca_names: Vec<String>,
    /// Port GUIDs from `ibstat -p`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub port_guids: Vec<Guid>,
    /// Ports read from port fields pasted with neither a `CA '…'` nor a
    /// `Port N:` line before them (`ibstat | grep -E "State|Rate"`), one a
    /// run of fields in ibstat's order, and from `Port N:` blocks pasted
    /// without their `CA '…'` line. Which adapter each is, is not in the
    /// paste, and without a `Port N:` line nor is its number: `number` is
    /// then 0 and means nothing. No rule takes two of them, or one of them
    /// and a named port, for one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headerless_ports: Vec<Port>,
}

/// One channel adapter (or switch/router) as ibstat describes it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Ca {
    /// Device name, e.g. `mlx5_0`.
    pub name: String,
    /// `CA`, `Switch`, `Router`, `iWARP RNIC`; `None` in the `CA: 'x'` single-port form.
    pub node_type: Option<String>,
    /// Hardware type, e.g. `MT4123` (ConnectX-6).
    pub ca_type: Option<String>,
    /// `Number of ports`.
    pub number_of_ports: Option<u32>,
    /// `Firmware version`.
    pub firmware_version: Option<String>,
    /// `Hardware version`.
    pub hardware_version: Option<String>,
    /// `Node GUID`.
    pub node_guid: Option<Guid>,
    /// `System image GUID`.
    pub system_image_guid: Option<Guid>,
    /// Ports in the order printed.
    pub ports: Vec<Port>,
    /// Lines this CA was read from.
    pub span: LineSpan,
    /// Set when the CA block stops before the ports its `Number of ports`
    /// announces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial: Option<Partial>,
}

/// One port of a CA as ibstat (or ibstatus, ibv_devinfo) describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Port {
    /// Port number (from 1).
    pub number: u32,
    /// `State`.
    pub state: Option<PortState>,
    /// `Physical state`.
    pub physical_state: Option<PhysState>,
    /// `Rate` in Gb/s (4X EDR = 100). Meaningless on a Down port: ibstat keeps
    /// printing the last or default rate.
    pub rate_gbps: Option<f64>,
    /// True when ibstat marks the rate `(FDR10)`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fdr10: bool,
    /// `Effective speed` (newer rdma-core only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effective_speed_gbps: Option<f64>,
    /// `Base lid`; 0 or 65535 mean no LID assigned.
    pub base_lid: Option<u32>,
    /// `LMC`.
    pub lmc: Option<u32>,
    /// `SM lid`; 0 means no subnet manager has configured the port.
    pub sm_lid: Option<u32>,
    /// `Capability mask`.
    pub capability_mask: Option<u32>,
    /// `Port GUID`.
    pub port_guid: Option<Guid>,
    /// `Link layer`; absent in very old infiniband-diags.
    pub link_layer: Option<LinkLayer>,
    /// Lines this port was read from.
    pub span: LineSpan,
    /// Set when the port block stops before fields the tool always prints
    /// (the missing ones are listed), or its CA is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial: Option<Partial>,
}

impl Port {
    /// A port with only its number and span known.
    #[must_use]
    pub fn new(number: u32, span: LineSpan) -> Self {
        Self {
            number,
            state: None,
            physical_state: None,
            rate_gbps: None,
            fdr10: false,
            effective_speed_gbps: None,
            base_lid: None,
            lmc: None,
            sm_lid: None,
            capability_mask: None,
            port_guid: None,
            link_layer: None,
            span,
            partial: None,
        }
    }
}
