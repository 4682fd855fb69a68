//! `nvidia-smi -q` (text and `-x` XML).
//!
//! `-q` prints hundreds of fields that change with every driver. The model
//! keeps all of them in a generic tree ([`Field`]) so no line goes unread,
//! and lifts out the few the rules and statistics use (temperatures,
//! clocks, power, clock-event reasons, ECC counts) into typed fields with
//! their unit in the name.

use crate::span::LineSpan;
use serde::{Deserialize, Serialize};

/// One `Key : value` line of `nvidia-smi -q` (or one XML element), with the
/// lines nested under it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Field {
    /// The key as printed (`GPU Current Temp`, or the XML tag `gpu_temp`).
    pub name: String,
    /// The value as printed (`31 C`), `None` for a section heading.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Line number.
    pub line: usize,
    /// Nested fields.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<Field>,
}

impl Field {
    /// The first descendant along `path`, where each step lists the
    /// accepted names (text and XML spellings, old and new drivers).
    #[must_use]
    pub fn find_in<'f>(fields: &'f [Field], path: &[&[&str]]) -> Option<&'f Field> {
        let (first, rest) = path.split_first()?;
        let found = fields.iter().find(|f| first.contains(&f.name.as_str()))?;
        if rest.is_empty() {
            Some(found)
        } else {
            Self::find_in(&found.children, rest)
        }
    }

    /// Every field with a value under this one, with the names of the
    /// fields between joined by `/` (`Volatile/SRAM Correctable`).
    #[must_use]
    pub fn leaves(&self) -> Vec<(String, &Field)> {
        let mut out = Vec::new();
        for c in &self.children {
            c.collect_leaves(String::new(), &mut out);
        }
        out
    }

    fn collect_leaves<'f>(&'f self, prefix: String, out: &mut Vec<(String, &'f Field)>) {
        let path = if prefix.is_empty() {
            self.name.clone()
        } else {
            format!("{prefix}/{}", self.name)
        };
        if self.value.is_some() {
            out.push((path.clone(), self));
        }
        for c in &self.children {
            c.collect_leaves(path.clone(), out);
        }
    }
}

/// A reason the GPU's clocks are held down, in one vocabulary across
/// `-q` text (`HW Thermal Slowdown`), `-q -x` (`clocks_event_reason_hw_thermal_slowdown`)
/// and CSV (`clocks_event_reasons.hw_thermal_slowdown`), old (`throttle`) and
/// new (`event`) driver spellings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockReason {
    /// Nothing is running: normal.
    Idle,
    /// Application clocks were set by the user.
    ApplicationsClocksSetting,
    /// Software power capping (power limit reached).
    SwPowerCap,
    /// Hardware slowdown (thermal or power brake): serious.
    HwSlowdown,
    /// Hardware slowdown because the GPU is too hot.
    HwThermalSlowdown,
    /// Hardware slowdown requested by an external power brake.
    HwPowerBrakeSlowdown,
    /// Sync boost with other GPUs.
    SyncBoost,
    /// Software thermal slowdown (temperature above the target).
    SwThermalSlowdown,
    /// Display clock setting.
    DisplayClockSetting,
    /// A reason this version does not know.
    Other,
}

impl ClockReason {
    /// Maps any tool's name for a reason.
    #[must_use]
    pub fn parse(name: &str) -> Self {
        let lower = name.to_ascii_lowercase();
        let mut t = lower.as_str();
        for prefix in [
            "clocks_event_reasons.",
            "clocks_throttle_reasons.",
            "clocks_event_reasons_counters_",
            "clocks_throttle_reasons_counters_",
            "clocks_event_reason_",
            "clocks_throttle_reason_",
            "clocks_reason_",
        ] {
            t = t.strip_prefix(prefix).unwrap_or(t);
        }
        let key: String = t.chars().filter(char::is_ascii_alphanumeric).collect();
        match key.as_str() {
            "idle" | "gpuidle" => Self::Idle,
            "applicationsclockssetting" | "applicationsclocks" => Self::ApplicationsClocksSetting,
            // The counters section names them differently
            // (`SW Power Capping`, `HW Power Braking`, `sw_therm_slowdown`).
            "swpowercap" | "swpowercapping" => Self::SwPowerCap,
            "hwslowdown" => Self::HwSlowdown,
            "hwthermalslowdown" | "hwthermslowdown" => Self::HwThermalSlowdown,
            "hwpowerbrakeslowdown" | "hwpowerbraking" | "hwpowerbrake" => {
                Self::HwPowerBrakeSlowdown
            }
            "syncboost" => Self::SyncBoost,
            "swthermalslowdown" | "swthermslowdown" => Self::SwThermalSlowdown,
            "displayclocksetting" | "displayclockssetting" => Self::DisplayClockSetting,
            _ => Self::Other,
        }
    }

    /// Whether this reason means the GPU is slowed by heat or power
    /// trouble, as opposed to idling or a setting.
    #[must_use]
    pub fn is_slowdown(self) -> bool {
        matches!(
            self,
            Self::SwPowerCap
                | Self::HwSlowdown
                | Self::HwThermalSlowdown
                | Self::HwPowerBrakeSlowdown
                | Self::SwThermalSlowdown
        )
    }
}

/// One clock-event (throttle) reason line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockEventReason {
    /// The reason, normalised.
    pub reason: ClockReason,
    /// The name as printed.
    pub name: String,
    /// `Active` → true, `Not Active` → false; `None` for `N/A`.
    pub active: Option<bool>,
    /// Line number.
    pub line: usize,
}

/// Time the clocks have spent held down for one reason since the driver
/// loaded (`Clocks Event Reasons Counters`, newer drivers): a counter, so
/// two snapshots give the share of time throttled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClockEventCounter {
    /// The reason, normalised.
    pub reason: ClockReason,
    /// The name as printed.
    pub name: String,
    /// Microseconds (`0 us`); `None` for `N/A`.
    pub microseconds: Option<f64>,
    /// Line number.
    pub line: usize,
}

/// `Active` / `Not Active` (any case), else `None`.
#[must_use]
pub fn active_flag(value: &str) -> Option<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "active" => Some(true),
        "not active" => Some(false),
        _ => None,
    }
}

/// Temperatures in °C (`None` when absent or `N/A`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Temperatures {
    /// `GPU Current Temp`.
    pub gpu_c: Option<f64>,
    /// `Memory Current Temp` (HBM).
    pub memory_c: Option<f64>,
    /// `GPU T.Limit Temp`: degrees left before the slowdown limit (newer
    /// drivers print limits relative to it).
    pub tlimit_c: Option<f64>,
    /// `GPU Slowdown Temp` (absolute, older drivers).
    pub slowdown_c: Option<f64>,
    /// `GPU Shutdown Temp` (absolute, older drivers).
    pub shutdown_c: Option<f64>,
}

/// Clock frequencies in MHz.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Clocks {
    /// `Graphics`.
    pub graphics_mhz: Option<f64>,
    /// `SM`.
    pub sm_mhz: Option<f64>,
    /// `Memory`.
    pub memory_mhz: Option<f64>,
    /// `Video`.
    pub video_mhz: Option<f64>,
}

/// Power readings in watts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Power {
    /// `Average Power Draw` (newer) or `Power Draw` (older drivers).
    pub draw_w: Option<f64>,
    /// `Instantaneous Power Draw`.
    pub instant_w: Option<f64>,
    /// `Current Power Limit`, `Enforced Power Limit` or `Power Limit`.
    pub limit_w: Option<f64>,
}

/// One ECC error counter, with the path of headings above it
/// (`Volatile/DRAM Uncorrectable`, or `Aggregate/Double Bit/Total` on older drivers).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EccCount {
    /// Headings and name joined by `/`.
    pub path: String,
    /// The count; `None` for `N/A`.
    pub value: Option<u64>,
    /// Line number.
    pub line: usize,
}

impl EccCount {
    /// Whether the counter counts uncorrectable (double-bit) errors.
    #[must_use]
    pub fn is_uncorrectable(&self) -> bool {
        let p = self.path.to_ascii_lowercase();
        p.contains("uncorr") || p.contains("double")
    }

    /// Whether the counter covers errors since the last driver load
    /// (`Volatile`) rather than the GPU's lifetime (`Aggregate`).
    #[must_use]
    pub fn is_volatile(&self) -> bool {
        self.path.to_ascii_lowercase().starts_with("volatile")
    }
}

/// One GPU block of `nvidia-smi -q`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QueryGpu {
    /// The bus id in the block heading (`GPU 00000000:00:06.0`, or the XML `id`).
    pub bus_id: String,
    /// `Product Name`.
    pub product_name: Option<String>,
    /// `GPU UUID`.
    pub uuid: Option<String>,
    /// `Performance State` (`P0`).
    pub performance_state: Option<String>,
    /// Temperatures.
    pub temperature: Temperatures,
    /// Current clocks (`Clocks`).
    pub clocks: Clocks,
    /// Maximum clocks (`Max Clocks`).
    pub max_clocks: Clocks,
    /// Power readings.
    pub power: Power,
    /// `Clocks Event Reasons` (newer) or `Clocks Throttle Reasons` (older).
    pub clock_event_reasons: Vec<ClockEventReason>,
    /// `Clocks Event Reasons Counters`.
    pub clock_event_counters: Vec<ClockEventCounter>,
    /// `ECC Errors` counters.
    pub ecc_errors: Vec<EccCount>,
    /// Every field of the block.
    pub fields: Vec<Field>,
    /// Lines of the block.
    pub span: LineSpan,
    /// True for a fragment of `-q` output pasted without its banner and
    /// `GPU 0000:…` heading (or, in XML, without its `<gpu>` element):
    /// which GPU it describes is unknown (`bus_id` is empty), and only the
    /// fields in the paste are known; no field outside it is assumed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub headerless: bool,
}

impl QueryGpu {
    /// A field by path of accepted names (see [`Field::find_in`]).
    #[must_use]
    pub fn field(&self, path: &[&[&str]]) -> Option<&Field> {
        Field::find_in(&self.fields, path)
    }

    /// Reasons currently active that mean heat or power trouble.
    pub fn active_slowdowns(&self) -> impl Iterator<Item = &ClockEventReason> {
        self.clock_event_reasons
            .iter()
            .filter(|r| r.active == Some(true) && r.reason.is_slowdown())
    }
}

/// `nvidia-smi -q` (any `-d` subset), text or `-x` XML.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SmiQuery {
    /// `Timestamp` as printed.
    pub timestamp: Option<String>,
    /// `Timestamp` in seconds since the epoch, read as UTC (the tool does
    /// not print its zone; see `parse::timestamp`).
    pub timestamp_unix: Option<i64>,
    /// `Driver Version`.
    pub driver_version: Option<String>,
    /// `CUDA Version`.
    pub cuda_version: Option<String>,
    /// `Attached GPUs`.
    pub attached_gpus: Option<u32>,
    /// True for `-q -x` XML.
    pub xml: bool,
    /// GPU blocks.
    pub gpus: Vec<QueryGpu>,
    /// Fields outside the GPU blocks (the ones above are also here).
    pub fields: Vec<Field>,
    /// Set when `-q -x` XML ends with elements still open: the tool closes
    /// every element it opens, so the output was cut there, and what the
    /// open elements held after the cut is unknown (the closing tags it
    /// lacks are listed, innermost first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial: Option<crate::model::partial::Partial>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_map_every_spelling() {
        for name in [
            "HW Thermal Slowdown",
            "clocks_event_reason_hw_thermal_slowdown",
            "clocks_throttle_reasons.hw_thermal_slowdown",
            "clocks_event_reasons.hw_thermal_slowdown",
        ] {
            assert_eq!(
                ClockReason::parse(name),
                ClockReason::HwThermalSlowdown,
                "{name}"
            );
        }
        assert_eq!(
            ClockReason::parse("clocks_event_reason_gpu_idle"),
            ClockReason::Idle
        );
        assert_eq!(
            ClockReason::parse("HW Power Braking"),
            ClockReason::HwPowerBrakeSlowdown
        );
        assert_eq!(
            ClockReason::parse("clocks_event_reasons_counters_sw_therm_slowdown"),
            ClockReason::SwThermalSlowdown
        );
        assert_eq!(
            ClockReason::parse("SW Power Capping"),
            ClockReason::SwPowerCap
        );
        assert_eq!(
            ClockReason::parse("Display Clock Setting"),
            ClockReason::DisplayClockSetting
        );
        assert!(!ClockReason::Idle.is_slowdown());
        assert_eq!(active_flag("Not Active"), Some(false));
        assert_eq!(active_flag("N/A"), None);
    }
}
