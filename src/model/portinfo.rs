//! `ibportstate <lid> <port> [query]` and `smpquery portinfo`: one port's
//! PortInfo attribute as libibmad dumps it (`LinkWidthActive:....4X`).
//!
//! `ibportstate` prints the port it was asked about and, when the link is
//! up, the port at the other end of the cable (`Peer PortInfo:`): the two
//! ends together say what the link could run at. Widths are kept as lane
//! counts and speeds as Gb/s per lane, whichever field (base, extended,
//! extended 2) printed them.

use crate::model::ib::{PhysState, PortState};
use crate::model::partial::Partial;
use crate::span::LineSpan;
use serde::{Deserialize, Serialize};

/// Output of `ibportstate` or `smpquery portinfo`: port blocks in the order
/// printed (several runs pasted together give several).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Portinfo {
    /// Every `# Port info:` block.
    pub ports: Vec<PortInfoBlock>,
}

/// What kind of node the port belongs to, when the tool says
/// (`CA/RT PortInfo:` or `Switch PortInfo:` above the block).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PortNode {
    /// A channel adapter or router port.
    CaOrRouter,
    /// A switch port.
    Switch,
}

/// One `# Port info: <target> port <n>` block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PortInfoBlock {
    /// How the port was addressed (`Lid 2`, `DR path slid 65535; dlid 65535; 0,9`).
    pub target: String,
    /// The port number.
    pub port: u32,
    /// True for the far end of the link `ibportstate` read after the port
    /// asked about (`Peer PortInfo:`).
    pub peer: bool,
    /// The kind of node, when a label above the block says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<PortNode>,
    /// The port's LID: its `Lid` field, else the `Lid N` it was addressed by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lid: Option<u32>,
    /// `SMLid`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_lid: Option<u32>,
    /// `LinkState`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<PortState>,
    /// `PhysLinkState`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub physical_state: Option<PhysState>,
    /// `LinkWidthSupported`, as lane counts (`1X or 4X` → 1, 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub widths_supported: Option<Vec<u32>>,
    /// `LinkWidthEnabled`, as lane counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub widths_enabled: Option<Vec<u32>>,
    /// `LinkWidthActive`, in lanes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width_active: Option<u32>,
    /// The lane speeds (Gb/s) of `LinkSpeedSupported`,
    /// `LinkSpeedExtSupported` and `LinkSpeedExtSupported2` together.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub speeds_supported: Vec<f64>,
    /// The lane speeds of the three `…Enabled` fields together.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub speeds_enabled: Vec<f64>,
    /// The lane speed the link runs at: an extended field's when it names
    /// one (it overrides `LinkSpeedActive`), else `LinkSpeedActive`'s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_active: Option<f64>,
    /// The active speed's field and text as printed
    /// (`LinkSpeedExtActive: 25.78125 Gbps`), for evidence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_active_text: Option<String>,
    /// Which speed fields were printed, so that a speed list is known to be
    /// whole: the extended ones appear only where the port has them.
    #[serde(default, skip_serializing_if = "SpeedFields::is_empty")]
    pub speed_fields: SpeedFields,
    /// Lines the block was read from.
    pub span: LineSpan,
    /// Set when the block stops before the fields `ibportstate` always
    /// prints (the end of the paste cut it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial: Option<Partial>,
}

/// Which `LinkSpeed…` fields a block printed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpeedFields {
    /// `LinkSpeedActive` (every port has it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub base_active: bool,
    /// `LinkSpeedExtActive` (ports with extended speeds, FDR and later).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ext_active: bool,
    /// `LinkSpeedExtActive2` (XDR).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ext2_active: bool,
}

impl SpeedFields {
    fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

impl PortInfoBlock {
    /// A block of `port` at `target` with nothing read yet.
    #[must_use]
    pub fn new(target: &str, port: u32, span: LineSpan) -> Self {
        Self {
            target: target.to_owned(),
            port,
            peer: false,
            node: None,
            lid: None,
            sm_lid: None,
            state: None,
            physical_state: None,
            widths_supported: None,
            widths_enabled: None,
            width_active: None,
            speeds_supported: Vec::new(),
            speeds_enabled: Vec::new(),
            speed_active: None,
            speed_active_text: None,
            speed_fields: SpeedFields::default(),
            span,
            partial: None,
        }
    }

    /// The widest width (in lanes) this end both supports and enables.
    #[must_use]
    pub fn widest_width(&self) -> Option<u32> {
        let sup = self.widths_supported.as_ref()?;
        let en = self.widths_enabled.as_ref()?;
        sup.iter().copied().filter(|w| en.contains(w)).max()
    }

    /// The widths (in lanes) this end both supports and enables.
    #[must_use]
    pub fn usable_widths(&self) -> Option<Vec<u32>> {
        let sup = self.widths_supported.as_ref()?;
        let en = self.widths_enabled.as_ref()?;
        Some(sup.iter().copied().filter(|w| en.contains(w)).collect())
    }

    /// The lane speeds this end both supports and enables.
    #[must_use]
    pub fn usable_speeds(&self) -> Vec<f64> {
        self.speeds_supported
            .iter()
            .copied()
            .filter(|s| self.speeds_enabled.iter().any(|e| same_speed(*e, *s)))
            .collect()
    }
}

/// Lane speeds as libibmad prints them are exact decimals; compared with
/// a small tolerance all the same.
#[must_use]
pub fn same_speed(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}
