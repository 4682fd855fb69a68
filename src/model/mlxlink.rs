//! `mlxlink -d <device>` (with `-m`, `-c`, `-e`): sections of `Name : value`
//! records, and the fields the rules read, typed.

use crate::model::partial::Partial;
use crate::span::LineSpan;
use serde::{Deserialize, Serialize};

/// One `Name : value` record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MlxlinkField {
    /// Name as printed (`Effective Physical BER`).
    pub name: String,
    /// Value as printed (`15E-255`).
    pub value: String,
    /// Line.
    pub line: usize,
}

/// A titled section (`Operational Info`, `Troubleshooting Info`, …).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MlxlinkSection {
    /// Title.
    pub title: String,
    /// Records in order.
    pub fields: Vec<MlxlinkField>,
    /// Lines.
    pub span: LineSpan,
}

/// `mlxlink` output.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Mlxlink {
    /// The device (`-d` argument), when the command line gave it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// Every section, in order.
    pub sections: Vec<MlxlinkSection>,
    /// `State` (`Active`, `Polling`, `Disable`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// `Physical state` (`LinkUp`, `ETH_AN_FSM_ENABLE`, `N/A`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub physical_state: Option<String>,
    /// `Speed` (`IB-NDR`, `100G`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speed: Option<String>,
    /// `Width` in lanes (`4x` → 4).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub width: Option<u32>,
    /// `FEC`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fec: Option<String>,
    /// `Recommendation`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recommendation: Option<String>,
    /// `Effective Physical BER`, post-FEC (`15E-255` → 1.5e-254).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effective_ber: Option<f64>,
    /// `Raw Physical BER`, pre-FEC.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_ber: Option<f64>,
    /// `Effective Physical Errors`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effective_errors: Option<u64>,
    /// `Link Down Counter`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_down_counter: Option<u64>,
    /// `Link Error Recovery Counter`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_error_recovery_counter: Option<u64>,
    /// The module's live readings from `Module Info` (`mlxlink -m`), with
    /// the module's own alarm range when mlxlink printed one; absent when
    /// none was printed or every one was `N/A` (no DDM: passive copper).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub module: Vec<ModuleReading>,
    /// Set when the output's last line is cut mid-record (`Enabled Link S`):
    /// the paste ended there, and what the tool prints after it is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial: Option<Partial>,
}

/// What a `Module Info` reading measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModuleQuantity {
    /// `Temperature [C]`: the module's case temperature.
    Temperature,
    /// `Voltage [mV]`: the module's supply voltage.
    Voltage,
    /// `Bias Current [mA]`: each lane's laser bias current.
    BiasCurrent,
    /// `Rx Power Current [dBm]`: the light each lane receives.
    RxPower,
    /// `Tx Power Current [dBm]`: the light each lane sends.
    TxPower,
}

impl ModuleQuantity {
    /// The quantity a record name starts with (`Rx Power Current [dBm]`).
    #[must_use]
    pub fn of_name(name: &str) -> Option<Self> {
        let n = name.trim();
        [
            ("Temperature", Self::Temperature),
            ("Voltage", Self::Voltage),
            ("Bias Current", Self::BiasCurrent),
            ("Rx Power Current", Self::RxPower),
            ("Tx Power Current", Self::TxPower),
        ]
        .into_iter()
        .find(|(prefix, _)| {
            n.get(..prefix.len())
                .is_some_and(|p| p.eq_ignore_ascii_case(prefix))
                && n.get(prefix.len()..)
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '[']))
        })
        .map(|(_, q)| q)
    }

    /// How a report names it (`Rx power`).
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Self::Temperature => "temperature",
            Self::Voltage => "voltage",
            Self::BiasCurrent => "laser bias current",
            Self::RxPower => "Rx power",
            Self::TxPower => "Tx power",
        }
    }

    /// Whether mlxlink prints one value per lane (else one for the module).
    #[must_use]
    pub fn per_lane(self) -> bool {
        matches!(self, Self::BiasCurrent | Self::RxPower | Self::TxPower)
    }
}

/// A range printed in brackets after a reading: `[-10.41..6]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ModuleRange {
    /// Low alarm threshold.
    pub low: f64,
    /// High alarm threshold.
    pub high: f64,
}

impl ModuleRange {
    /// Whether the range says anything: a module without thresholds (passive
    /// copper) makes mlxlink print `[0..0]`, which no reading can be judged
    /// against.
    #[must_use]
    pub fn is_set(self) -> bool {
        self.low < self.high
    }
}

/// One `Module Info` reading: `Rx Power Current [dBm] : 1.9,-14.2 [-10.4..6]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModuleReading {
    /// What it measures.
    pub quantity: ModuleQuantity,
    /// The unit in the record's name (`C`, `mV`, `mA`, `dBm`); empty when
    /// the name has none.
    pub unit: String,
    /// The values in the order printed: one for temperature and voltage,
    /// one per lane (from lane 0) for the others; `None` for a lane printed
    /// `N/A`.
    pub values: Vec<Option<f64>>,
    /// The module's alarm range as printed, when the line has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<ModuleRange>,
    /// Line.
    pub line: usize,
}

impl Mlxlink {
    /// The first record with this name (any section), case-insensitive.
    #[must_use]
    pub fn field(&self, name: &str) -> Option<&MlxlinkField> {
        self.sections
            .iter()
            .flat_map(|s| &s.fields)
            .find(|f| f.name.eq_ignore_ascii_case(name))
    }
}
