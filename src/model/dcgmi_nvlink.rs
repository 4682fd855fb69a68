//! `dcgmi nvlink -s` (link states) and `dcgmi nvlink -e` (error counters).

use crate::span::LineSpan;
use serde::{Deserialize, Serialize};

/// A link state letter of `dcgmi nvlink -s`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DcgmLinkState {
    /// `U`.
    Up,
    /// `D`.
    Down,
    /// `X`.
    Disabled,
    /// `_`: the slot does not exist on this device.
    NotSupported,
}

impl DcgmLinkState {
    /// Reads one letter.
    #[must_use]
    pub fn parse(letter: &str) -> Option<Self> {
        match letter {
            "U" => Some(Self::Up),
            "D" => Some(Self::Down),
            "X" => Some(Self::Disabled),
            "_" => Some(Self::NotSupported),
            _ => None,
        }
    }

    /// The letter dcgmi prints.
    #[must_use]
    pub fn letter(self) -> char {
        match self {
            Self::Up => 'U',
            Self::Down => 'D',
            Self::Disabled => 'X',
            Self::NotSupported => '_',
        }
    }
}

/// One device's line of `dcgmi nvlink -s`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntityLinks {
    /// `gpuId N` or `physicalId N`.
    pub id: u32,
    /// State per link slot, slot 0 first.
    pub links: Vec<DcgmLinkState>,
    /// Line of the state letters.
    pub line: usize,
}

/// `dcgmi nvlink -s` (`--link-status`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DcgmiLinkStatus {
    /// GPUs.
    pub gpus: Vec<EntityLinks>,
    /// NVSwitches (`physicalId N`).
    pub nvswitches: Vec<EntityLinks>,
}

/// Error counters of one link in `dcgmi nvlink -e`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DcgmiLinkErrors {
    /// Link number.
    pub link: u32,
    /// `CRC FLIT Error`.
    pub crc_flit: Option<u64>,
    /// `CRC Data Error`.
    pub crc_data: Option<u64>,
    /// `Replay Error`.
    pub replay: Option<u64>,
    /// `Recovery Error`.
    pub recovery: Option<u64>,
    /// Lines of the link's rows.
    pub span: LineSpan,
}

/// `dcgmi nvlink -e -g <gpu>` (`--errors`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DcgmiNvlinkErrors {
    /// The GPU (`GPU 0` in the table heading).
    pub gpu: Option<u32>,
    /// Links in order.
    pub links: Vec<DcgmiLinkErrors>,
}
