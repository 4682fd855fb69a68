//! `ibswinfo` (Stanford's script over MFT registers): the vitals of an
//! unmanaged InfiniBand switch, whose only other signal is the colour of
//! its LEDs: inventory, uptime, power supplies, temperature and fans.

use crate::model::ib::Guid;
use crate::span::LineSpan;
use serde::{Deserialize, Serialize};

/// Output of `ibswinfo -d <device>` (its full, default form): one block per
/// switch, several when runs are pasted together.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Ibswinfo {
    /// The switches, in the order printed.
    pub switches: Vec<SwitchVitals>,
}

/// One switch's block.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SwitchVitals {
    /// The node description printed between the `=` rules.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `part number`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part_number: Option<String>,
    /// `serial number`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial_number: Option<String>,
    /// `product name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub product_name: Option<String>,
    /// `ports`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ports: Option<u32>,
    /// `GUID`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guid: Option<Guid>,
    /// `firmware version`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firmware: Option<String>,
    /// The other inventory lines as printed (`revision`, `PSID`, `CPLD`,
    /// `uptime (d-h:m:s)`), by their label.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other: Vec<(String, String)>,
    /// Power supplies, in the order printed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub psus: Vec<Psu>,
    /// `temperature (C)`: the switch ASIC's, now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature_c: Option<u32>,
    /// `max temp (C)`: the highest since the counter was reset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_temperature_c: Option<u32>,
    /// `warn threshold (C)`: the switch's own low/high warning thresholds
    /// (newer versions of the script).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warn_threshold_c: Option<(u32, u32)>,
    /// `QSFP#NN (C)` (`-T`): module temperatures by port.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub module_temperatures_c: Vec<(u32, u32)>,
    /// `fan status`: `OK`, or `ERROR` when a fan runs out of its range
    /// (the FORE register's under/over-limit alerts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fan_status: Option<String>,
    /// `fan#N (rpm)`: each active tachometer's speed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fans_rpm: Vec<(u32, u32)>,
    /// Lines of the temperature group (`temperature (C)` to `QSFP#NN`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature_span: Option<LineSpan>,
    /// Lines of the fan group (`fan status`, `fan#N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fans_span: Option<LineSpan>,
    /// Lines this switch was read from.
    pub span: LineSpan,
}

/// A `PSUn status` line and the indented lines under it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Psu {
    /// `n` of `PSUn`.
    pub index: u32,
    /// `OK` when the supply is present, `ERROR` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// `DC power`: `OK` when it delivers DC power.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dc_power: Option<String>,
    /// `fan status` of the supply's own fan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fan_status: Option<String>,
    /// `power (W)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_w: Option<u32>,
    /// `P/N` and `S/N`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part_number: Option<String>,
    /// `S/N`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial_number: Option<String>,
    /// Lines it was read from.
    pub span: LineSpan,
}
