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
    /// Set when the output's last line is cut mid-record (`Enabled Link S`):
    /// the paste ended there, and what the tool prints after it is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial: Option<Partial>,
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
