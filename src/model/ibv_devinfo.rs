//! `ibv_devinfo`: RDMA devices as libibverbs sees them.
//!
//! The verbs view complements ibstat: it names states `PORT_ACTIVE (4)`,
//! prints GUIDs as `0002:c903:00a1:b2c3`, and with `-v` gives active width and
//! per-lane speed, the physical state, the GID table and dozens of device
//! limits. Fields the model does not name are kept in order in `extra`, so
//! nothing the tool printed is lost.

use crate::model::ib::{Guid, LinkLayer, PhysState, PortState};
use crate::span::LineSpan;
use serde::{Deserialize, Serialize};

/// Output of `ibv_devinfo` (plain or `-v`), or of `ibv_devinfo -l`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IbvDevinfo {
    /// Devices in the order printed.
    pub devices: Vec<IbvDevice>,
    /// Device names from `ibv_devinfo -l` (`2 HCAs found:` then one name a line).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub listed: Vec<String>,
    /// The count printed by `ibv_devinfo -l` (`2 HCAs found:`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listed_count: Option<u32>,
    /// Failure messages (`No IB devices found`, `Failed to query port 1 props`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
}

/// One `hca_id:` block.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IbvDevice {
    /// `hca_id`, e.g. `mlx5_0`.
    pub hca_id: String,
    /// `transport`, e.g. `InfiniBand (0)`.
    pub transport: Option<String>,
    /// `fw_ver`.
    pub fw_ver: Option<String>,
    /// `node_guid`.
    pub node_guid: Option<Guid>,
    /// `sys_image_guid`.
    pub sys_image_guid: Option<Guid>,
    /// `vendor_id` (`0x02c9` Mellanox).
    pub vendor_id: Option<u32>,
    /// `vendor_part_id` (4123 = ConnectX-6, the number in ibstat's `MT4123`).
    pub vendor_part_id: Option<u32>,
    /// `hw_ver` as printed (`0x0`).
    pub hw_ver: Option<String>,
    /// `board_id` (the adapter's PSID, e.g. `MT_0000000222`).
    pub board_id: Option<String>,
    /// `phys_port_cnt`.
    pub phys_port_cnt: Option<u32>,
    /// Whether the older `Device ports:` heading was printed before the ports.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub device_ports_heading: bool,
    /// Every other device line, in order (`-v` limits, capability lists, notes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extra: Vec<ExtraField>,
    /// Ports in the order printed.
    pub ports: Vec<IbvPort>,
    /// Lines this device was read from.
    pub span: LineSpan,
    /// Set when the block was pasted without its `hca_id:` line: the
    /// device name is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial: Option<crate::model::partial::Partial>,
}

impl IbvDevice {
    /// The port whose block holds the line where the device's [`partial`](Self::partial)
    /// part stops (a port cut by the end of the paste, or a value cut
    /// inside its block): only that port lacks something. `None` when the
    /// device is whole or what it lacks is its own (a blank device field,
    /// ports it announces and does not show): then every port is judged
    /// as partial.
    #[must_use]
    pub fn partial_port(&self) -> Option<&IbvPort> {
        let line = self.partial.as_ref()?.line;
        self.ports.iter().find(|p| p.span.contains(line))
    }

    /// Whether `port`, one of this device's, is read in part: the device
    /// is partial, and not only in another of its ports
    /// ([`partial_port`](Self::partial_port)).
    #[must_use]
    pub fn port_is_partial(&self, port: &IbvPort) -> bool {
        self.partial.is_some()
            && self
                .partial_port()
                .is_none_or(|p| p.number == port.number && p.span == port.span)
    }

    /// Whether the device was read from a paste that begins inside one of
    /// its port blocks: its name, its fields and the port's number were
    /// cut from the top, so its port cannot be told from any other port
    /// (of this host or another snapshot) and is not judged.
    #[must_use]
    pub fn begins_inside_a_port(&self) -> bool {
        self.ports.first().is_some_and(|p| !p.number_known())
    }
}

/// One `port:` block.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IbvPort {
    /// Port number (from 1); [`IbvPort::UNKNOWN_NUMBER`] for a port
    /// whose block the paste begins inside, below its `port:` line.
    pub number: u32,
    /// `state` (`PORT_ACTIVE (4)`).
    pub state: Option<PortState>,
    /// `max_mtu` in bytes.
    pub max_mtu: Option<u32>,
    /// `active_mtu` in bytes.
    pub active_mtu: Option<u32>,
    /// `sm_lid`; 0 means no subnet manager has configured the port.
    pub sm_lid: Option<u32>,
    /// `port_lid`; 0 or 65535 mean no LID assigned.
    pub port_lid: Option<u32>,
    /// `port_lmc` (printed in hex).
    pub port_lmc: Option<u32>,
    /// `link_layer`.
    pub link_layer: Option<LinkLayer>,
    /// `-v`: `active_width` as lanes (`4X (2)` → 4).
    pub active_width_lanes: Option<u32>,
    /// `-v`: `active_speed`, the per-lane data rate in Gb/s (`25.0 Gbps (32)` → 25.0).
    pub active_speed_gbps: Option<f64>,
    /// `-v`, newer libibverbs: `effective_speed` in Gb/s for the whole link.
    pub effective_speed_gbps: Option<f64>,
    /// `-v`, InfiniBand transport only: `phys_state` (`LINK_UP (5)`);
    /// `physical_state` in JSON, as in every model.
    #[serde(rename = "physical_state", alias = "phys_state")]
    pub phys_state: Option<PhysState>,
    /// `-v`: non-zero entries of the GID table.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gids: Vec<GidEntry>,
    /// Every other port line, in order (`max_msg_sz`, `port_cap_flags`…).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extra: Vec<ExtraField>,
    /// Lines this port was read from.
    pub span: LineSpan,
}

impl IbvPort {
    /// The number of a port read from a paste that begins inside its
    /// block: ibv_devinfo numbers ports from 1, so 0 is never printed.
    pub const UNKNOWN_NUMBER: u32 = 0;

    /// Whether the paste showed the port's `port:` line.
    #[must_use]
    pub fn number_known(&self) -> bool {
        self.number != Self::UNKNOWN_NUMBER
    }

    /// Link rate in Gb/s: `effective_speed` when printed, otherwise lanes ×
    /// per-lane speed (4 × 25.0 = 100 for EDR).
    #[must_use]
    pub fn rate_gbps(&self) -> Option<f64> {
        self.effective_speed_gbps.or_else(|| {
            let lanes = self.active_width_lanes?;
            Some(f64::from(lanes) * self.active_speed_gbps?)
        })
    }
}

/// `GID[  3]:  0000:0000:0000:0000:0000:ffff:0a00:0001, RoCE v2`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GidEntry {
    /// Index in the GID table.
    pub index: u32,
    /// The GID in colon-separated hex.
    pub gid: String,
    /// What newer libibverbs print after the GID (`RoCE v1`, `RoCE v2`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
}

/// A line the model has no field for, kept as printed.
///
/// `value` is `None` for a statement without a colon (`core clock not
/// supported`). `items` are the flag names printed one per line under a
/// heading (`device_cap_flags: 0x…` then `RESIZE_MAX_WR`, `BAD_PKEY_CNTR`…).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExtraField {
    /// The label before the colon, or the whole statement.
    pub label: String,
    /// The text after the colon.
    pub value: Option<String>,
    /// Flag lines printed below this one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<String>,
}

impl ExtraField {
    /// A `label: value` field.
    #[must_use]
    pub fn labelled(label: impl Into<String>, value: impl Into<String>) -> Self {
        Self {
            label: label.into(),
            value: Some(value.into()),
            items: Vec::new(),
        }
    }
}
