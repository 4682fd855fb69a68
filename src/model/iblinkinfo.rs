//! `iblinkinfo`: every link of the fabric, seen from both ends.
//!
//! iblinkinfo walks the subnet and prints, for each node, each port with its
//! active width, per-lane speed, state and what is at the other end of the
//! cable. It also says when a link trained below what both ends support
//! (`Could be 4X`, `Could be 25.78125 Gbps`): the tool's own detector of
//! degraded links, kept here as [`LinkPort::could_be_width`] and
//! [`LinkPort::could_be_speed`].

use crate::model::ib::{Guid, PhysState, PortState};
use crate::span::LineSpan;
use serde::{Deserialize, Serialize};

/// Output of `iblinkinfo` (grouped, `-l` line form, `-p`, or grep-filtered).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Iblinkinfo {
    /// Nodes in the order printed.
    pub nodes: Vec<LinkNode>,
}

impl Iblinkinfo {
    /// Every port of every node.
    pub fn ports(&self) -> impl Iterator<Item = (&LinkNode, &LinkPort)> {
        self.nodes
            .iter()
            .flat_map(|n| n.ports.iter().map(move |p| (n, p)))
    }
}

/// What kind of node a `CA:` / `Switch:` header names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeType {
    /// A host channel adapter.
    Ca,
    /// A switch.
    Switch,
    /// A router.
    Router,
}

/// A node and the ports printed for it.
///
/// In the grouped form the node comes from its `CA: desc:` or
/// `Switch: 0x… desc:` header. In the `-l` form and in grep-filtered pastes
/// there is no header: ports are grouped by the node GUID or LID printed on
/// each line, and `node_type` is `None`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LinkNode {
    /// From the header; `None` without one.
    pub node_type: Option<NodeType>,
    /// Switch port-0 GUID from a `Switch:` header, or the port GUID of `-l` lines.
    pub guid: Option<Guid>,
    /// Node description (`host01 mlx5_0`, `MF0;switch-a:MQM8700/U1`).
    pub desc: Option<String>,
    /// Ports in the order printed.
    pub ports: Vec<LinkPort>,
    /// Lines this node was read from.
    pub span: LineSpan,
}

/// One port line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkPort {
    /// Port GUID, printed before the LID on CA lines of the grouped form.
    pub guid: Option<Guid>,
    /// LID of the port (a switch's port-0 LID for every switch port).
    pub lid: u32,
    /// Port number.
    pub port: u32,
    /// External (front-panel) port number for split or internal ports, from `[..]`.
    pub ext_port: Option<u32>,
    /// Active width (`4X`); not printed for a Down port.
    pub width: Option<LinkWidth>,
    /// Active speed of each lane in Gb/s as signalled (`25.78125` for EDR);
    /// not printed for a Down port. See [`LinkPort::rate_gbps`].
    pub speed_gbps_per_lane: Option<f64>,
    /// The speed as printed (`25.78125 Gbps`, `10.0 Gbps (FDR10)`, `undefined (3)`).
    pub speed_text: Option<String>,
    /// Logical state (`Active`, `Initialize`…).
    pub state: PortState,
    /// Physical state (`LinkUp`, `Polling`…).
    pub physical_state: PhysState,
    /// `-p`: head-of-queue lifetime.
    pub hoq: Option<u32>,
    /// `-p`: VL stall count.
    pub vl_stall: Option<u32>,
    /// What the cable leads to; `None` for an unconnected Down port.
    pub remote: Option<RemotePort>,
    /// The port is up but iblinkinfo could not see the far end (`"Port not available"`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub port_not_available: bool,
    /// `Could be 12X`: the widest width both ends support, printed when the
    /// link trained narrower.
    pub could_be_width: Option<LinkWidth>,
    /// `Could be 25.78125 Gbps` / `Could be FDR10`: the fastest speed both
    /// ends support, printed when the link trained slower.
    pub could_be_speed: Option<String>,
    /// The `could_be_speed` per lane in Gb/s, when it is a number.
    pub could_be_speed_gbps_per_lane: Option<f64>,
    /// Lines this port was read from.
    pub span: LineSpan,
}

impl LinkPort {
    /// A Down port with only its identity known.
    #[must_use]
    pub fn new(lid: u32, port: u32, span: LineSpan) -> Self {
        Self {
            guid: None,
            lid,
            port,
            ext_port: None,
            width: None,
            speed_gbps_per_lane: None,
            speed_text: None,
            state: PortState::Unknown,
            physical_state: PhysState::Unknown,
            hoq: None,
            vl_stall: None,
            remote: None,
            port_not_available: false,
            could_be_width: None,
            could_be_speed: None,
            could_be_speed_gbps_per_lane: None,
            span,
        }
    }

    /// Signalling rate of the link in Gb/s: lanes × per-lane speed.
    ///
    /// This is the line rate, not the marketing data rate: 4X at 25.78125 is
    /// 103.125 (sold as EDR "100"), 4X at 14.0625 is 56.25 (FDR "56"), 4X at
    /// 53.125 is 212.5 (HDR "200"), 4X at 106.25 is 425 (NDR "400"). Use
    /// [`LinkPort::nominal_rate_gbps`] to compare with ibstat's `Rate`.
    #[must_use]
    pub fn rate_gbps(&self) -> Option<f64> {
        let lanes = self.width.as_ref()?.lanes?;
        Some(f64::from(lanes) * self.speed_gbps_per_lane?)
    }

    /// The data rate as ibstat and sysfs state it (lanes × nominal lane rate):
    /// 4X EDR = 100, 4X NDR = 400, 4X FDR = 56, 4X QDR = 40.
    #[must_use]
    pub fn nominal_rate_gbps(&self) -> Option<f64> {
        let lanes = self.width.as_ref()?.lanes?;
        let lane = LaneGeneration::of_lane_gbps(self.speed_gbps_per_lane?)?;
        Some(f64::from(lanes) * lane.nominal_lane_gbps())
    }

    /// The generation (`EDR`, `HDR`…) of the active speed.
    #[must_use]
    pub fn generation(&self) -> Option<LaneGeneration> {
        if self
            .speed_text
            .as_deref()
            .is_some_and(|t| t.contains("FDR10"))
        {
            return Some(LaneGeneration::Fdr10);
        }
        LaneGeneration::of_lane_gbps(self.speed_gbps_per_lane?)
    }

    /// True when iblinkinfo says the link could be wider or faster.
    #[must_use]
    pub fn degraded(&self) -> bool {
        self.could_be_width.is_some() || self.could_be_speed.is_some()
    }
}

/// The far end of a link.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemotePort {
    /// Remote port GUID (`-l` form only).
    pub guid: Option<Guid>,
    /// Remote LID (a switch's port-0 LID).
    pub lid: u32,
    /// Remote port number.
    pub port: u32,
    /// Remote external port number, from `[..]`.
    pub ext_port: Option<u32>,
    /// Remote node description.
    pub desc: String,
}

/// A link width as printed (`4X`) with its lane count.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkWidth {
    /// Lanes (`1`, `2`, `4`, `8`, `12`); `None` for `undefined (N)`.
    pub lanes: Option<u32>,
    /// The text as printed.
    pub text: String,
}

impl LinkWidth {
    /// `4X` → 4 lanes; anything else keeps its text with no lane count.
    #[must_use]
    pub fn parse(text: &str) -> Self {
        let t = text.trim();
        let lanes = t
            .strip_suffix('X')
            .or_else(|| t.strip_suffix('x'))
            .and_then(|n| n.parse().ok());
        Self {
            lanes,
            text: t.to_owned(),
        }
    }
}

/// InfiniBand generations, by the per-lane speed libibmad prints; ordered
/// slowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum LaneGeneration {
    /// 2.5 Gb/s lanes.
    Sdr,
    /// 5.0 Gb/s lanes.
    Ddr,
    /// 10.0 Gb/s lanes (8b/10b).
    Qdr,
    /// 10.3125 Gb/s lanes (64b/66b, Mellanox extension), printed `10.0 Gbps (FDR10)`.
    Fdr10,
    /// 14.0625 Gb/s lanes.
    Fdr,
    /// 25.78125 Gb/s lanes.
    Edr,
    /// 53.125 Gb/s lanes (PAM4).
    Hdr,
    /// 106.25 Gb/s lanes.
    Ndr,
    /// 212.5 Gb/s lanes.
    Xdr,
}

impl LaneGeneration {
    /// The generation whose printed lane speed this is (within 0.01 Gb/s).
    /// `10.0` is QDR; FDR10 is recognised from its `(FDR10)` mark instead.
    #[must_use]
    pub fn of_lane_gbps(gbps: f64) -> Option<Self> {
        const TABLE: [(f64, LaneGeneration); 8] = [
            (2.5, LaneGeneration::Sdr),
            (5.0, LaneGeneration::Ddr),
            (10.0, LaneGeneration::Qdr),
            (14.0625, LaneGeneration::Fdr),
            (25.78125, LaneGeneration::Edr),
            (53.125, LaneGeneration::Hdr),
            (106.25, LaneGeneration::Ndr),
            (212.5, LaneGeneration::Xdr),
        ];
        TABLE
            .iter()
            .find(|(speed, _)| (speed - gbps).abs() < 0.01)
            .map(|(_, generation)| *generation)
    }

    /// The generation by its name as the tools print it (`EDR`, `FDR10`).
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|g| g.name() == name)
    }

    /// The name the tools print (`EDR`, `FDR10`).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Sdr => "SDR",
            Self::Ddr => "DDR",
            Self::Qdr => "QDR",
            Self::Fdr10 => "FDR10",
            Self::Fdr => "FDR",
            Self::Edr => "EDR",
            Self::Hdr => "HDR",
            Self::Ndr => "NDR",
            Self::Xdr => "XDR",
        }
    }

    /// Every generation, slowest first.
    pub const ALL: [Self; 9] = [
        Self::Sdr,
        Self::Ddr,
        Self::Qdr,
        Self::Fdr10,
        Self::Fdr,
        Self::Edr,
        Self::Hdr,
        Self::Ndr,
        Self::Xdr,
    ];

    /// The lane rate the industry quotes (EDR 25, HDR 50, NDR 100), from
    /// which ibstat's `Rate` is computed.
    #[must_use]
    pub fn nominal_lane_gbps(self) -> f64 {
        match self {
            Self::Sdr => 2.5,
            Self::Ddr => 5.0,
            Self::Qdr | Self::Fdr10 => 10.0,
            Self::Fdr => 14.0,
            Self::Edr => 25.0,
            Self::Hdr => 50.0,
            Self::Ndr => 100.0,
            Self::Xdr => 200.0,
        }
    }
}
