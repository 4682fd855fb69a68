//! InfiniBand: host channel adapters, ports, states and identifiers.
//!
//! The same port state is spelled differently by every tool (`Initializing` in
//! ibstat, `Initialize` in iblinkinfo, `2: INIT` in ibstatus, `PORT_INIT (2)` in
//! ibv_devinfo). The enums here are the one vocabulary the rules use; each
//! parser maps its tool's spelling onto them.

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
    /// The state as `ibstat` prints it (`Initializing`), the spelling reports use.
    #[must_use]
    pub fn ibstat_name(self) -> &'static str {
        match self {
            PortState::Down => "Down",
            PortState::Initializing => "Initializing",
            PortState::Armed => "Armed",
            PortState::Active => "Active",
            PortState::Unknown => "???",
        }
    }

    /// The state as libibmad's `mad_dump_portstate` prints it (`Initialize`,
    /// not ibstat's `Initializing`), the spelling of `iblinkinfo` and
    /// `ibqueryerrors`; `None` for a state outside the spec, which each of
    /// those tools prints its own way.
    #[must_use]
    pub fn libibmad_name(self) -> Option<&'static str> {
        match self {
            PortState::Down => Some("Down"),
            PortState::Initializing => Some("Initialize"),
            PortState::Armed => Some("Armed"),
            PortState::Active => Some("Active"),
            PortState::Unknown => None,
        }
    }

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
    /// The physical state as `ibstat` prints it (`LinkUp`), the spelling reports use.
    #[must_use]
    pub fn ibstat_name(self) -> &'static str {
        match self {
            PhysState::NoStateChange => "No state change",
            PhysState::Sleep => "Sleep",
            PhysState::Polling => "Polling",
            PhysState::Disabled => "Disabled",
            PhysState::PortConfigurationTraining => "PortConfigurationTraining",
            PhysState::LinkUp => "LinkUp",
            PhysState::LinkErrorRecovery => "LinkErrorRecovery",
            PhysState::PhyTest => "PhyTest",
            PhysState::Unknown => "???",
        }
    }

    /// The physical state as libibmad's `mad_dump_physportstate` prints it
    /// (`NoChange`), the spelling of `iblinkinfo` and `ibqueryerrors`; `None`
    /// for a state outside the spec, which each of those tools prints its own
    /// way.
    #[must_use]
    pub fn libibmad_name(self) -> Option<&'static str> {
        match self {
            PhysState::NoStateChange => Some("NoChange"),
            PhysState::Sleep => Some("Sleep"),
            PhysState::Polling => Some("Polling"),
            PhysState::Disabled => Some("Disabled"),
            PhysState::PortConfigurationTraining => Some("PortConfigurationTraining"),
            PhysState::LinkUp => Some("LinkUp"),
            PhysState::LinkErrorRecovery => Some("LinkErrorRecovery"),
            PhysState::PhyTest => Some("PhyTest"),
            PhysState::Unknown => None,
        }
    }

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
    /// `InfiniBand`, `IB`, `Ethernet`. A markdown backtick left on the value
    /// (`Ethernet\``, the end of an inline-code paste) is not part of it.
    #[must_use]
    pub fn parse(text: &str) -> Self {
        match text.trim().trim_matches('`').to_ascii_lowercase().as_str() {
            "infiniband" | "ib" => Self::Infiniband,
            "ethernet" | "eth" => Self::Ethernet,
            _ => Self::Unknown,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libibmad_names_read_back_as_their_state() {
        use PhysState as P;
        use PortState as S;
        for s in [S::Down, S::Initializing, S::Armed, S::Active] {
            assert_eq!(S::parse(s.libibmad_name().unwrap()), s);
        }
        assert_eq!(S::Unknown.libibmad_name(), None);
        for p in [P::Sleep, P::Polling, P::Disabled, P::LinkUp, P::PhyTest] {
            assert_eq!(P::parse(p.libibmad_name().unwrap()), p);
        }
        assert_eq!(P::NoStateChange.libibmad_name(), Some("NoChange"));
        assert_eq!(P::Unknown.libibmad_name(), None);
    }

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
    fn link_layer_values_and_a_stray_backtick() {
        assert_eq!(LinkLayer::parse("InfiniBand"), LinkLayer::Infiniband);
        assert_eq!(LinkLayer::parse(" IB "), LinkLayer::Infiniband);
        assert_eq!(LinkLayer::parse("Ethernet`"), LinkLayer::Ethernet);
        assert_eq!(LinkLayer::parse("Ethernet?"), LinkLayer::Unknown);
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
