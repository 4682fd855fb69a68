//! `mlxcables` (NVIDIA Firmware Tools, MFT): what each cable's or
//! transceiver's EEPROM says it is (identifier, vendor, part and serial
//! number, length) and, where the module has diagnostics, its temperature.

use crate::span::LineSpan;
use serde::{Deserialize, Serialize};

/// Output of `mlxcables` (or `mlxcables -d <cable> -q`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Mlxcables {
    /// The `Cable #N:` blocks, in the order printed.
    pub cables: Vec<Cable>,
}

/// One `Cable #N:` block.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Cable {
    /// The `N` of `Cable #N:` (mlxcables counts from 1); `None` when the
    /// block's heading is not in the paste.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number: Option<u32>,
    /// `Cable name`: the MST cable device (`mt4123_pciconf0_cable_0`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `Identifier` as printed (`QSFP28 (11h)`, `OSFP (19h)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identifier: Option<String>,
    /// `Technology` as printed (`Copper cable unequalized (a0h)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub technology: Option<String>,
    /// `Compliance` as printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compliance: Option<String>,
    /// `OUI` (`0x0002c9`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oui: Option<String>,
    /// `Vendor` (`Mellanox`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vendor: Option<String>,
    /// `Serial number`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial_number: Option<String>,
    /// `Part number` (`MCP1650-H002E26`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part_number: Option<String>,
    /// `Revision` (`A4`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    /// `Temperature` in °C; `None` for `N/A` (a module without
    /// diagnostics, passive copper) or when not printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature_c: Option<f64>,
    /// `Digital Diagnostic Monitoring` (`YES`/`NO`): whether the module
    /// reports temperature and light.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ddm: Option<bool>,
    /// `Length` in metres.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub length_m: Option<f64>,
    /// The `Attenuation` lines of a copper cable, one per frequency.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attenuation: Vec<Attenuation>,
    /// Other `label : value` lines, as printed (`Wavelength`, a cable
    /// firmware's fields).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<CableField>,
    /// The tool's notes, without their `>>` (`No FW data to show`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The lines of the block.
    pub span: LineSpan,
}

/// One `Attenuation` line: `2.5GHz : 3dB`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attenuation {
    /// The frequency as printed (`2.5GHz`).
    pub frequency: String,
    /// The attenuation in dB; `None` when not a number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub db: Option<f64>,
}

/// A `label : value` line the model has no field for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CableField {
    /// The label as printed, units included (`Wavelength [nm]`).
    pub label: String,
    /// The value as printed.
    pub value: String,
    /// The line.
    pub span: LineSpan,
}
