//! InfiniBand: host channel adapters, ports, states and identifiers.
//!
//! The same port state is spelled differently by every tool (`Initializing` in
//! ibstat, `Initialize` in iblinkinfo, `2: INIT` in ibstatus, `PORT_INIT (2)` in
//! ibv_devinfo). The enums here are the one vocabulary the rules use; each
//! parser maps its tool's spelling onto them.

use crate::model::partial::Partial;
use crate::span::LineSpan;
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

/// A 64-bit InfiniBand GUID, printed as `0x` and 16 hex digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(try_from = "String")]
pub struct Guid(pub u64);

impl Guid {
    /// Reads `0x0002c90300a1b2c3`, `0002c90300a1b2c3` or ibv_devinfo's
    /// `0002:c903:00a1:b2c3`.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        let t = text.trim();
        let digits = t
            .strip_prefix("0x")
            .or_else(|| t.strip_prefix("0X"))
            .unwrap_or(t);
        let digits: String = digits.chars().filter(|c| *c != ':').collect();
        if digits.is_empty() || digits.len() > 16 {
            return None;
        }
        u64::from_str_radix(&digits, 16).ok().map(Guid)
    }
}

impl TryFrom<String> for Guid {
    type Error = String;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        Guid::parse(&s).ok_or_else(|| format!("not a GUID: {s}"))
    }
}

impl fmt::Display for Guid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x{:016x}", self.0)
    }
}

impl Serialize for Guid {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Logical port state (IBA PortInfo:PortState).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PortState {
    /// No link.
    Down,
    /// Link trained, waiting for the subnet manager to configure it.
    Initializing,
    /// Configured by the SM, not yet allowed to carry traffic.
    Armed,
    /// Carrying traffic.
    Active,
    /// The tool printed `???` or a value outside the spec.
    Unknown,
}

impl PortState {
    /// Maps any tool's spelling: `Active`, `ACTIVE`, `4: ACTIVE`,
    /// `PORT_ACTIVE (4)`, `Initialize`, `INIT`, a bare `4`…
    #[must_use]
    pub fn parse(text: &str) -> Self {
        let t = text.trim().to_ascii_lowercase();
        let word = t
            .trim_start_matches(|c: char| c.is_ascii_digit() || c == ':' || c == ' ')
            .trim_start_matches("port_");
        let word = word.split([' ', '(']).next().unwrap_or("");
        match word {
            "down" => Self::Down,
            "init" | "initialize" | "initializing" => Self::Initializing,
            "armed" => Self::Armed,
            "active" | "active_defer" => Self::Active,
            "" => match t.split([':', ' ']).next() {
                Some("1") => Self::Down,
                Some("2") => Self::Initializing,
                Some("3") => Self::Armed,
                Some("4") => Self::Active,
                _ => Self::Unknown,
            },
            _ => Self::Unknown,
        }
    }
}

/// Physical port state (IBA PortInfo:PortPhysicalState).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PhysState {
    /// `No state change` (value 0).
    NoStateChange,
    /// Sleep (1).
    Sleep,
    /// Polling (2): looking for a peer. No cable, or the far end is down.
    Polling,
    /// Disabled (3): switched off locally or by the SM.
    Disabled,
    /// PortConfigurationTraining (4).
    PortConfigurationTraining,
    /// LinkUp (5): the physical link is trained.
    LinkUp,
    /// LinkErrorRecovery (6).
    LinkErrorRecovery,
    /// PhyTest (7).
    PhyTest,
    /// `???` or anything else.
    Unknown,
}

impl PhysState {
    /// Maps any tool's spelling: `LinkUp`, `5: LinkUp`, `LINK_UP (5)`,
    /// `PORT_CONFIGURATION TRAINNING` (sic, ibv_devinfo), `Polling`…
    #[must_use]
    pub fn parse(text: &str) -> Self {
        let t: String = text
            .trim()
            .to_ascii_lowercase()
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == ' ')
            .collect();
        let words: Vec<&str> = t.split_whitespace().collect();
        let name: String = words
            .iter()
            .filter(|w| !w.chars().all(|c| c.is_ascii_digit()))
            .copied()
            .collect::<Vec<_>>()
            .join("");
        let name = name.replace('_', "");
        match name.as_str() {
            "nostatechange" | "nochange" => Self::NoStateChange,
            "sleep" => Self::Sleep,
            "polling" => Self::Polling,
            "disabled" => Self::Disabled,
            "portconfigurationtraining" | "portconfigurationtrainning" => {
                Self::PortConfigurationTraining
            }
            "linkup" => Self::LinkUp,
            "linkerrorrecovery" => Self::LinkErrorRecovery,
            "phytest" => Self::PhyTest,
            "" => match words.first().copied() {
                Some("0") => Self::NoStateChange,
                Some("1") => Self::Sleep,
                Some("2") => Self::Polling,
                Some("3") => Self::Disabled,
                Some("4") => Self::PortConfigurationTraining,
                Some("5") => Self::LinkUp,
                Some("6") => Self::LinkErrorRecovery,
                Some("7") => Self::PhyTest,
                _ => Self::Unknown,
            },
            _ => Self::Unknown,
        }
    }
}

/// What a port speaks on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkLayer {
    /// Native InfiniBand (ibstat also prints the bare default `IB`).
    Infiniband,
    /// RoCE: RDMA over Ethernet. LIDs and the SM do not apply.
    Ethernet,
    /// Anything else.
    Unknown,
}

impl LinkLayer {
    /// `InfiniBand`, `IB`, `Ethernet`.
    #[must_use]
    pub fn parse(text: &str) -> Self {
        match text.trim().to_ascii_lowercase().as_str() {
            "infiniband" | "ib" => Self::Infiniband,
            "ethernet" | "eth" => Self::Ethernet,
            _ => Self::Unknown,
        }
    }
}

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
    /// announces, or was pasted without its `CA '…'` header.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_state_spellings_of_every_tool() {
        for (text, want) in [
            ("Active", PortState::Active),
            ("4: ACTIVE", PortState::Active),
            ("PORT_ACTIVE (4)", PortState::Active),
            ("Initializing", PortState::Initializing),
            ("Initialize", PortState::Initializing),
            ("2: INIT", PortState::Initializing),
            ("PORT_INIT (2)", PortState::Initializing),
            ("Down", PortState::Down),
            ("PORT_DOWN (1)", PortState::Down),
            ("3: ARMED", PortState::Armed),
            ("???", PortState::Unknown),
        ] {
            assert_eq!(PortState::parse(text), want, "{text}");
        }
    }

    #[test]
    fn phys_state_spellings_of_every_tool() {
        for (text, want) in [
            ("LinkUp", PhysState::LinkUp),
            ("5: LinkUp", PhysState::LinkUp),
            ("LINK_UP (5)", PhysState::LinkUp),
            ("Polling", PhysState::Polling),
            ("2: Polling", PhysState::Polling),
            ("Disabled", PhysState::Disabled),
            (
                "PORT_CONFIGURATION TRAINNING (4)",
                PhysState::PortConfigurationTraining,
            ),
            ("No state change", PhysState::NoStateChange),
            ("???", PhysState::Unknown),
        ] {
            assert_eq!(PhysState::parse(text), want, "{text}");
        }
    }

    #[test]
    fn guid_forms() {
        let want = Guid(0x0002_c903_00a1_b2c3);
        assert_eq!(Guid::parse("0x0002c90300a1b2c3"), Some(want));
        assert_eq!(Guid::parse("0002:c903:00a1:b2c3"), Some(want));
        assert_eq!(want.to_string(), "0x0002c90300a1b2c3");
        assert_eq!(Guid::parse("0x1234567890abcdef12"), None);
        assert_eq!(Guid::parse("zz"), None);
    }
}
