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
    ///
    /// Reads the bytes in one pass, without collecting the digits into a
    /// `String` first (it runs for every port of every host); it accepts
    /// exactly what `u64::from_str_radix` accepted of the colon-free digits,
    /// a leading `+` included (see the `parse_oracle` test).
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        let t = text.trim().as_bytes();
        let digits = match t {
            [b'0', b'x' | b'X', rest @ ..] => rest,
            _ => t,
        };
        let mut value: u64 = 0;
        // Bytes other than colons: at most 16, the first may be `+`.
        let mut count = 0usize;
        let mut plus = false;
        for &b in digits {
            let d = match b {
                b':' => continue,
                b'0'..=b'9' => b - b'0',
                b'a'..=b'f' => b - b'a' + 10,
                b'A'..=b'F' => b - b'A' + 10,
                b'+' if count == 0 => {
                    plus = true;
                    count = 1;
                    continue;
                }
                _ => return None,
            };
            count += 1;
            if count > 16 {
                return None;
            }
            value = (value << 4) | u64::from(d);
        }
        if count == usize::from(plus) {
            return None;
        }
        Some(Guid(value))
    }

    /// The parse this one replaced, kept as the tests' oracle.
    #[cfg(test)]
    fn parse_oracle(text: &str) -> Option<Self> {
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
    /// The states the IBTA defines, `Unknown` left out: what each tool's
    /// spelling of a state is one of.
    pub const KNOWN: [PortState; 4] = [
        PortState::Down,
        PortState::Initializing,
        PortState::Armed,
        PortState::Active,
    ];

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
        // Compared without regard to ASCII case rather than lowercased into
        // a copy: ibstat prints a state for every port.
        let t = text.trim();
        let mut word = t.trim_start_matches(|c: char| c.is_ascii_digit() || c == ':' || c == ' ');
        while let Some(rest) = strip_prefix_ignoring_case(word, "port_") {
            word = rest;
        }
        let word = word.split([' ', '(']).next().unwrap_or("");
        let is = |words: &[&str]| words.iter().any(|w| word.eq_ignore_ascii_case(w));
        if is(&["down"]) {
            Self::Down
        } else if is(&["init", "initialize", "initializing"]) {
            Self::Initializing
        } else if is(&["armed"]) {
            Self::Armed
        } else if is(&["active", "active_defer"]) {
            Self::Active
        } else if word.is_empty() {
            match t.split([':', ' ']).next() {
                Some("1") => Self::Down,
                Some("2") => Self::Initializing,
                Some("3") => Self::Armed,
                Some("4") => Self::Active,
                _ => Self::Unknown,
            }
        } else {
            Self::Unknown
        }
    }
}

/// `text` without `prefix`, compared without regard to ASCII case.
fn strip_prefix_ignoring_case<'t>(text: &'t str, prefix: &str) -> Option<&'t str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| text.get(prefix.len()..))
        .flatten()
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
    /// The physical states the IBTA defines, `Unknown` left out.
    pub const KNOWN: [PhysState; 8] = [
        PhysState::NoStateChange,
        PhysState::Sleep,
        PhysState::Polling,
        PhysState::Disabled,
        PhysState::PortConfigurationTraining,
        PhysState::LinkUp,
        PhysState::LinkErrorRecovery,
        PhysState::PhyTest,
    ];

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
    ///
    /// The rule: ASCII letters and digits are kept (lowercased), spaces
    /// part words, every other byte is dropped (so `LINK_UP` is one word,
    /// `linkup`); the words that are not all digits, joined, name the
    /// state; with none, a first word `0`–`7` numbers it. Done on bytes
    /// in one pass into a small buffer, without the `String`s and `Vec`s
    /// it used to build (it runs for every port of every host; see the
    /// `parse_oracle` test).
    #[must_use]
    pub fn parse(text: &str) -> Self {
        /// Longer than the longest name, `portconfigurationtrainning` (26).
        const CAP: usize = 32;
        let mut name = [0u8; CAP];
        // Length of the name so far, counting the current word; bytes past
        // `CAP` are not stored, and a name that long names nothing.
        let mut len = 0usize;
        let mut word_start = 0usize;
        let mut word_digits = true;
        // The first word, once ended: (its length, its first byte).
        let mut first: Option<(usize, u8)> = None;
        let mut in_word = false;
        let mut end_word = |len: &mut usize, word_start: usize, word_digits: bool, name: &[u8]| {
            if first.is_none() {
                first = Some((
                    *len - word_start,
                    name.get(word_start).copied().unwrap_or(0),
                ));
            }
            if word_digits {
                *len = word_start;
            }
        };
        for &b in text.as_bytes() {
            let c = match b {
                b'a'..=b'z' | b'0'..=b'9' => b,
                b'A'..=b'Z' => b + (b'a' - b'A'),
                b' ' => {
                    if in_word {
                        end_word(&mut len, word_start, word_digits, &name);
                        in_word = false;
                    }
                    continue;
                }
                _ => continue,
            };
            if !in_word {
                in_word = true;
                word_start = len;
                word_digits = true;
            }
            word_digits &= c.is_ascii_digit();
            if let Some(slot) = name.get_mut(len) {
                *slot = c;
            }
            len += 1;
        }
        if in_word {
            end_word(&mut len, word_start, word_digits, &name);
        }
        // A name longer than `CAP` was not all stored, and names nothing.
        let Some(name) = name.get(..len) else {
            return Self::Unknown;
        };
        match name {
            b"nostatechange" | b"nochange" => Self::NoStateChange,
            b"sleep" => Self::Sleep,
            b"polling" => Self::Polling,
            b"disabled" => Self::Disabled,
            b"portconfigurationtraining" | b"portconfigurationtrainning" => {
                Self::PortConfigurationTraining
            }
            b"linkup" => Self::LinkUp,
            b"linkerrorrecovery" => Self::LinkErrorRecovery,
            b"phytest" => Self::PhyTest,
            b"" => match first {
                Some((1, b'0')) => Self::NoStateChange,
                Some((1, b'1')) => Self::Sleep,
                Some((1, b'2')) => Self::Polling,
                Some((1, b'3')) => Self::Disabled,
                Some((1, b'4')) => Self::PortConfigurationTraining,
                Some((1, b'5')) => Self::LinkUp,
                Some((1, b'6')) => Self::LinkErrorRecovery,
                Some((1, b'7')) => Self::PhyTest,
                _ => Self::Unknown,
            },
            _ => Self::Unknown,
        }
    }

    /// The parse this one replaced, kept as the tests' oracle.
    #[cfg(test)]
    fn parse_oracle(text: &str) -> Self {
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
    /// (`Ethernet\``, the end of an inline-code paste) is not part of it,
    /// nor a note in brackets an author wrote after it (`Ethernet (RoCE
    /// mode)`, `Ethernet （IP模式）`): the known word opens the value, and
    /// a value whose first word is known but which goes on with anything
    /// else (`Ethernet bond`) stays unknown.
    #[must_use]
    pub fn parse(text: &str) -> Self {
        // Compared without regard to ASCII case rather than lowercased into
        // a copy: ibstat prints a link layer for every port.
        let t = without_symbol_note(without_bracket_note(text.trim())).trim_matches('`');
        let is = |words: &[&str]| words.iter().any(|w| t.eq_ignore_ascii_case(w));
        if is(&["infiniband", "ib"]) {
            Self::Infiniband
        } else if is(&["ethernet", "eth"]) {
            Self::Ethernet
        } else {
            Self::Unknown
        }
    }
}

/// `text` without a trailing mark an author set after white space, made
/// of symbols alone (`Ethernet  ❌`, `InfiniBand ✓`, `Ethernet <--`):
/// no letter or digit in it, so it names nothing. Only for values no tool
/// prints with such marks (a link layer).
pub(crate) fn without_symbol_note(text: &str) -> &str {
    let mut t = text.trim_end();
    // From the end, one mark at a time: each step reads only its mark.
    while let Some((before, mark)) = t.rsplit_once(char::is_whitespace) {
        if mark.is_empty() || before.trim().is_empty() || mark.chars().any(char::is_alphanumeric) {
            break;
        }
        t = before.trim_end();
    }
    t
}

/// `text` without a trailing note in brackets (ASCII `(…)` or full-width
/// `（…）`) after white space, trimmed: what a value's own word is when
/// an author explained it. Only for values no tool prints with brackets
/// (a link layer): elsewhere brackets are the tool's (`(4X HDR)`,
/// `(FDR10)`, `PORT_ACTIVE (4)`).
pub(crate) fn without_bracket_note(text: &str) -> &str {
    let t = text.trim_end();
    let open = if t.ends_with(')') {
        t.rfind('(')
    } else if t.ends_with('）') {
        t.rfind('（')
    } else {
        None
    };
    match open.and_then(|at| t.get(..at)) {
        Some(before) if before.ends_with(char::is_whitespace) => before.trim_end(),
        _ => t,
    }
}

/// Whether an adapter has exactly one port, as far as its output tells:
/// its port count says 1, or no count is printed and it is an `mlx5_*`
/// device (mlx5 makes each port of a card a device of its own). A
/// filtered paste's port fields without their `Port N:` line can then be
/// read as that port without inventing its number.
#[must_use]
pub(crate) fn has_one_port(port_count: Option<u32>, device: &str) -> bool {
    port_count == Some(1) || (port_count.is_none() && device.starts_with("mlx5_"))
}

/// Lane widths the IBTA defines, in lanes.
pub const IB_WIDTHS: [u32; 5] = [1, 2, 4, 8, 12];

/// Lane speeds the IBTA defines and the per-lane rate the kernel (and so
/// ibstat and ibstatus) multiplies by the width to print `Rate`. FDR10
/// is printed 10 a lane, as QDR.
pub const IB_LANE_SPEEDS: [(&str, f64); 9] = [
    ("SDR", 2.5),
    ("DDR", 5.0),
    ("QDR", 10.0),
    ("FDR10", 10.0),
    ("FDR", 14.0),
    ("EDR", 25.0),
    ("HDR", 50.0),
    ("NDR", 100.0),
    ("XDR", 200.0),
];

/// Every (width, lane speed) pair of the IBTA table, with its rate: what
/// a port's `Rate` can be.
pub fn ibta_rates() -> impl Iterator<Item = (u32, &'static str, f64)> {
    IB_LANE_SPEEDS.iter().flat_map(|&(name, lane)| {
        IB_WIDTHS
            .iter()
            .map(move |&w| (w, name, f64::from(w) * lane))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`PortState::parse`] as first written, on a lowercased copy: the
    /// oracle of the comparisons that ignore case.
    fn port_state_by_lowercase(text: &str) -> PortState {
        let t = text.trim().to_ascii_lowercase();
        let word = t
            .trim_start_matches(|c: char| c.is_ascii_digit() || c == ':' || c == ' ')
            .trim_start_matches("port_");
        let word = word.split([' ', '(']).next().unwrap_or("");
        match word {
            "down" => PortState::Down,
            "init" | "initialize" | "initializing" => PortState::Initializing,
            "armed" => PortState::Armed,
            "active" | "active_defer" => PortState::Active,
            "" => match t.split([':', ' ']).next() {
                Some("1") => PortState::Down,
                Some("2") => PortState::Initializing,
                Some("3") => PortState::Armed,
                Some("4") => PortState::Active,
                _ => PortState::Unknown,
            },
            _ => PortState::Unknown,
        }
    }

    /// [`LinkLayer::parse`] as first written, on a lowercased copy (after
    /// the author's bracket note and marks are set aside, which case does
    /// not touch).
    fn link_layer_by_lowercase(text: &str) -> LinkLayer {
        let t = without_symbol_note(without_bracket_note(text.trim()));
        match t.trim_matches('`').to_ascii_lowercase().as_str() {
            "infiniband" | "ib" => LinkLayer::Infiniband,
            "ethernet" | "eth" => LinkLayer::Ethernet,
            _ => LinkLayer::Unknown,
        }
    }

    proptest::proptest! {
        /// States and link layers read as they did from a lowercased copy,
        /// whatever the case, prefixes, numbers and neighbours.
        #[test]
        fn states_read_as_from_a_lowercased_copy(
            s in "[ \t]?([0-9]|:| |\\(|\\)|`|port_|PORT_|Port_|pOrT|down|DOWN|Init|INITIALIZE|initializing|Armed|ACTIVE|active_defer|Active_Defer|InfiniBand|IB|ib|Ethernet|ETH|é|ı|K){0,5}[ \t]?"
        ) {
            proptest::prop_assert_eq!(PortState::parse(&s), port_state_by_lowercase(&s));
            proptest::prop_assert_eq!(LinkLayer::parse(&s), link_layer_by_lowercase(&s));
        }
    }

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
    fn a_bracket_note_after_the_link_layer_is_the_authors() {
        for (text, want) in [
            ("Ethernet    （工作模式：IP模式）", LinkLayer::Ethernet),
            ("Ethernet  ❌", LinkLayer::Ethernet),
            ("InfiniBand ✓ <--", LinkLayer::Infiniband),
            ("Ethernet <-- this one", LinkLayer::Unknown),
            ("❌", LinkLayer::Unknown),
            ("Ethernet (RoCE mode)", LinkLayer::Ethernet),
            ("InfiniBand\t(IB mode) ", LinkLayer::Infiniband),
            // A note is set off by white space and closes the value.
            ("Ethernet(RoCE)", LinkLayer::Unknown),
            ("Ethernet (RoCE) bond", LinkLayer::Unknown),
            ("Ethernet bond", LinkLayer::Unknown),
            ("(IB mode)", LinkLayer::Unknown),
        ] {
            assert_eq!(LinkLayer::parse(text), want, "{text}");
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

    /// Texts near the GUID forms: hex digits, colons, `0x`, signs,
    /// whitespace (ASCII and not), other bytes.
    fn guid_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        prop_oneof![
            "[ \t]{0,2}(0x|0X|0|)[+\\-]?[0-9a-fA-F:]{0,20}[ \t\u{a0}]{0,2}",
            "[0-9a-fA-FxX:+ \u{e9}\u{3000}g-]{0,24}",
            ".{0,24}",
        ]
    }

    /// Texts near the physical-state spellings: the names of every tool,
    /// digits, separators, case changes, other bytes.
    fn phys_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let word = prop_oneof![
            proptest::sample::select(vec![
                "LinkUp",
                "LINK_UP",
                "link",
                "up",
                "No",
                "state",
                "change",
                "NoChange",
                "Polling",
                "Sleep",
                "Disabled",
                "PORT_CONFIGURATION",
                "TRAINNING",
                "Training",
                "PortConfigurationTraining",
                "LinkErrorRecovery",
                "PhyTest",
                "???",
                "(5)",
                "5:",
                "0",
                "7",
                "8",
                "05",
                "12",
            ])
            .prop_map(str::to_owned),
            "[0-9a-zA-Z_:()?\u{e9}\u{2014}]{0,6}",
        ];
        prop_oneof![
            proptest::collection::vec((word, "[ \t:_()\u{a0}]{0,2}"), 0..5)
                .prop_map(|ws| ws.into_iter().map(|(w, s)| w + &s).collect()),
            ".{0,40}",
        ]
    }

    proptest::proptest! {
        /// The byte-level [`Guid::parse`] reads every text as the
        /// `String`-collecting parse it replaced.
        #[test]
        fn guid_parse_matches_its_oracle(text in guid_text()) {
            proptest::prop_assert_eq!(Guid::parse(&text), Guid::parse_oracle(&text));
        }

        /// The byte-level [`PhysState::parse`] reads every text as the
        /// word-splitting parse it replaced.
        #[test]
        fn phys_state_parse_matches_its_oracle(text in phys_text()) {
            proptest::prop_assert_eq!(PhysState::parse(&text), PhysState::parse_oracle(&text));
        }
    }

    #[test]
    fn guid_and_phys_state_edges_match_their_oracles() {
        for text in [
            "",
            " ",
            "+",
            "0x",
            "0x+",
            "+1",
            "0x+ffffffffffffffff",
            "+fffffffffffffff",
            "ffffffffffffffff",
            "1ffffffffffffffff",
            "::",
            "0x:1",
            "-1",
            "0x0x1",
            " 0X1a ",
            "0002:c903:00a1:b2c3",
            "\u{a0}12\u{a0}",
            "1\u{e9}",
        ] {
            assert_eq!(Guid::parse(text), Guid::parse_oracle(text), "{text:?}");
        }
        let long = "a".repeat(40);
        let digits = "9".repeat(40) + " 5";
        for text in [
            "",
            " ",
            "5",
            "05",
            "5 LinkUp",
            "5:LinkUp",
            "8",
            "5 6",
            "  7  ",
            "No state change",
            "PORT_CONFIGURATION TRAINNING (4)",
            "LINK_UP (5)",
            long.as_str(),
            digits.as_str(),
            "portconfigurationtrainningx",
            "Link\tUp",
            "Link\u{e9}Up",
            "9 1",
        ] {
            assert_eq!(
                PhysState::parse(text),
                PhysState::parse_oracle(text),
                "{text:?}"
            );
        }
    }
}
