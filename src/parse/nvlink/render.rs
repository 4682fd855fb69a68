//! Turning a model back into `nvidia-smi nvlink` text in the tool's own
//! layout: a tab and a space before `Link`, two tabs before `Lane`, a blank
//! line after each link of `-e`, `-ec` and `-gLowPwrInfo`, counters in the
//! tool's order. [`render_mode`] reproduces one command's output byte for
//! byte (checked against our captures); [`render`] prints every mode of a
//! model under each GPU header, so any model survives render → parse.

use super::grammar::INFO_LABELS;
use super::CAPABILITIES;
use crate::model::nvlink::{Nvlink, NvlinkGpu, NvlinkLink, NvlinkMode, NvlinkNote};
use crate::model::Counter;
use std::fmt::Write as _;

/// Renders every mode in `nvlink.modes` under each GPU header.
#[must_use]
pub fn render(nvlink: &Nvlink) -> String {
    let mut s = String::new();
    preamble(&mut s, nvlink);
    for gpu in &nvlink.gpus {
        gpu_block(&mut s, gpu, &nvlink.modes);
    }
    s
}

/// Renders one mode as `nvidia-smi nvlink` prints it for that option alone.
#[must_use]
pub fn render_mode(nvlink: &Nvlink, mode: NvlinkMode) -> String {
    let mut s = String::new();
    preamble(&mut s, nvlink);
    if mode != NvlinkMode::BandwidthMode {
        for gpu in &nvlink.gpus {
            gpu_block(&mut s, gpu, &[mode]);
        }
    }
    s
}

/// Lines before any GPU block: messages such as `No devices were found`,
/// and the `-gBwMode` answer.
fn preamble(s: &mut String, nvlink: &Nvlink) {
    // A GPU's `all links inactive` note comes back with its block.
    let printed = nvlink
        .notes
        .iter()
        .filter(|n| !matches!(n, NvlinkNote::AllLinksInactive { .. }));
    for note in printed {
        let _ = writeln!(s, "{note}");
    }
    if let Some(mode) = &nvlink.bandwidth_mode {
        let _ = writeln!(s, "GPU NVLINK bandwidth mode: {mode}");
    }
}

fn gpu_block(s: &mut String, gpu: &NvlinkGpu, modes: &[NvlinkMode]) {
    match &gpu.uuid {
        // Rendered as it was read: without the header it did not have.
        _ if gpu.headerless => {}
        Some(uuid) => {
            let _ = writeln!(s, "GPU {}: {} (UUID: {uuid})", gpu.index, gpu.name);
        }
        None => {
            let _ = writeln!(s, "GPU {}: {}", gpu.index, gpu.name);
        }
    }
    for message in &gpu.messages {
        // nvidia-smi indents `Invalid Link` like a link line; the NVML
        // message and `Not supported` start the line.
        let indent = if message == "Invalid Link" { "\t " } else { "" };
        let _ = writeln!(s, "{indent}{message}");
    }
    for mode in modes {
        gpu_fields(s, gpu, *mode);
        for link in &gpu.links {
            let before = s.len();
            link_lines(s, link, *mode);
            let printed = s.len() > before;
            let blank_after = matches!(
                mode,
                NvlinkMode::ErrorCounters | NvlinkMode::LaneEcc | NvlinkMode::LowPowerInfo
            );
            if printed && blank_after {
                s.push('\n');
            }
        }
    }
}

/// GPU-level lines of a mode (`-info` fields, `-gLowPwrInfo` units).
fn gpu_fields(s: &mut String, gpu: &NvlinkGpu, mode: NvlinkMode) {
    match mode {
        NvlinkMode::Info => {
            let mut fields: Vec<(&String, &String)> = gpu.info.iter().collect();
            fields.sort_by_key(|(label, _)| position(INFO_LABELS, label.as_str()));
            for (label, value) in fields {
                let _ = writeln!(s, "{}", format!("\t {label}: {value}").trim_end());
            }
        }
        NvlinkMode::LowPowerInfo => {
            let before = s.len();
            if let Some(unit) = gpu.low_power_threshold_unit_us {
                let _ = writeln!(s, "\t Low Power Threshold are in units of {unit} us");
            }
            if let Some((low, high)) = gpu.low_power_threshold_range {
                let _ = writeln!(
                    s,
                    "\t Range of Low Power Threshold values are {low} to {high}"
                );
            }
            if s.len() > before {
                s.push('\n');
            }
        }
        _ => {}
    }
}

fn link_lines(s: &mut String, link: &NvlinkLink, mode: NvlinkMode) {
    let n = link.link;
    match mode {
        NvlinkMode::Status => {
            if let Some(speed) = link.speed_gb_per_s {
                let _ = writeln!(s, "\t Link {n}: {speed} GB/s");
            } else if link.inactive {
                let _ = writeln!(s, "\t Link {n}: <inactive>");
            }
        }
        NvlinkMode::Capabilities => {
            let keys: Vec<&str> = CAPABILITIES.iter().map(|(_, key)| *key).collect();
            let mut caps: Vec<(&String, &bool)> = link.capabilities().iter().collect();
            caps.sort_by_key(|(key, _)| position(&keys, key.as_str()));
            for (key, supported) in caps {
                let _ = writeln!(s, "\t Link {n}, {}: {supported}", capability_label(key));
            }
        }
        NvlinkMode::ErrorCounters => {
            for (key, c) in counters_of(link, CounterFamily::Errors) {
                let _ = writeln!(s, "\t Link {n}: {}: {}", counter_label(key), c.value);
            }
        }
        NvlinkMode::ThroughputData | NvlinkMode::ThroughputRaw => {
            let family = if mode == NvlinkMode::ThroughputRaw {
                CounterFamily::Raw
            } else {
                CounterFamily::Data
            };
            for (key, c) in counters_of(link, family) {
                let _ = writeln!(s, "\t Link {n}: {}: {} KiB", counter_label(key), c.value);
            }
        }
        NvlinkMode::LegacyCounters => {
            let parts: Vec<String> = counters_of(link, CounterFamily::Legacy)
                .into_iter()
                .map(|(key, c)| format!("{}: {} KBytes", counter_label(key), c.value))
                .collect();
            if !parts.is_empty() {
                let _ = writeln!(s, "\t Link {n}: {}", parts.join(", "));
            }
        }
        NvlinkMode::LaneEcc => {
            if !link.lanes().is_empty() {
                let _ = writeln!(s, "\t Link {n}:");
            }
            for lane in link.lanes() {
                let _ = writeln!(
                    s,
                    "\t\t Lane {} ECC Correction Count: {} (Overflow={})",
                    lane.lane,
                    lane.ecc_correction_count.value,
                    u8::from(lane.overflow)
                );
            }
        }
        NvlinkMode::RemotePciBusId => {
            if let Some(remote) = link.remote().filter(|r| r.link.is_none()) {
                let _ = writeln!(s, "\t Link {n}: {}", remote.pci_bus_id);
            }
        }
        NvlinkMode::RemoteLinkInfo => {
            if let Some(remote) = link.remote() {
                if let Some(far) = remote.link {
                    let _ = writeln!(
                        s,
                        "\t Link {n}: Remote Device {}: Link {far}",
                        remote.pci_bus_id
                    );
                }
            }
        }
        NvlinkMode::LowPowerInfo => {
            if let Some(mode) = link.low_power_mode() {
                let _ = writeln!(s, "\t Link {n}: Low Power Mode: {mode}");
            }
            if let Some(us) = link.low_power_threshold_us() {
                let _ = writeln!(s, "\t Link {n}: Low Power Threshold: {us} us");
            }
        }
        NvlinkMode::BandwidthMode | NvlinkMode::Info => {}
    }
}

/// Where `item` sits in `order` (unknown items last, then by name).
fn position<'a>(order: &[&str], item: &'a str) -> (usize, &'a str) {
    let at = order.iter().position(|o| *o == item).unwrap_or(order.len());
    (at, item)
}

/// Counters in the order nvidia-smi prints them.
const COUNTER_ORDER: &[&str] = &[
    "replay_errors",
    "recovery_errors",
    "crc_errors",
    "data_tx_kib",
    "data_rx_kib",
    "raw_tx_kib",
    "raw_rx_kib",
];

/// Which mode printed a counter, told from its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CounterFamily {
    /// `-e`: no unit.
    Errors,
    /// `-gt d`: KiB, not `raw_…`.
    Data,
    /// `-gt r`: KiB, `raw_…`.
    Raw,
    /// `-g`: `rx0_kib`, `tx1_kib`.
    Legacy,
}

fn family_of(key: &str) -> CounterFamily {
    let Some(stem) = key.strip_suffix("_kib") else {
        return CounterFamily::Errors;
    };
    let legacy = ["rx", "tx"].iter().any(|p| {
        stem.strip_prefix(p)
            .is_some_and(|id| !id.is_empty() && id.chars().all(|c| c.is_ascii_digit()))
    });
    if legacy {
        CounterFamily::Legacy
    } else if stem.starts_with("raw") {
        CounterFamily::Raw
    } else {
        CounterFamily::Data
    }
}

fn counters_of(link: &NvlinkLink, family: CounterFamily) -> Vec<(&str, &Counter)> {
    let mut counters: Vec<(&str, &Counter)> = link
        .counters
        .iter()
        .map(|(k, c)| (k.name(), c))
        .filter(|(k, _)| family_of(k) == family)
        .collect();
    counters.sort_by_key(|(k, _)| position(COUNTER_ORDER, k));
    counters
}

/// Words nvidia-smi prints in capitals.
const ACRONYMS: &[&str] = &["crc", "ecc", "nvlink", "p2p", "sli"];

/// `crc_errors` → `CRC Errors`, `data_tx_kib` → `Data Tx`, `rx0_kib` → `Rx0`.
fn counter_label(key: &str) -> String {
    let stem = key.strip_suffix("_kib").unwrap_or(key);
    let words: Vec<String> = stem
        .split('_')
        .map(|w| {
            if ACRONYMS.contains(&w) {
                w.to_ascii_uppercase()
            } else {
                let mut chars = w.chars();
                chars.next().map_or_else(String::new, |first| {
                    first.to_ascii_uppercase().to_string() + chars.as_str()
                })
            }
        })
        .collect();
    words.join(" ")
}

/// `p2p_supported` → `P2P is supported`; unknown keys come back with spaces.
fn capability_label(key: &str) -> String {
    CAPABILITIES.iter().find(|(_, k)| *k == key).map_or_else(
        || key.replace('_', " "),
        |(printed, _)| (*printed).to_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::super::snake_case;
    use super::*;

    #[test]
    fn labels_come_back_as_nvidia_smi_prints_them() {
        assert_eq!(counter_label("crc_errors"), "CRC Errors");
        assert_eq!(counter_label("replay_errors"), "Replay Errors");
        assert_eq!(counter_label("raw_rx_kib"), "Raw Rx");
        assert_eq!(counter_label("rx0_kib"), "Rx0");
        assert_eq!(capability_label("sli_supported"), "SLI is supported");
        assert_eq!(capability_label("odd_new_thing"), "odd new thing");
        for label in [
            "CRC Errors",
            "Data Tx",
            "Recovery Errors",
            "CRC Flit Errors",
        ] {
            assert_eq!(counter_label(&snake_case(label)), label);
        }
    }

    #[test]
    fn counter_families_follow_the_key() {
        assert_eq!(family_of("crc_errors"), CounterFamily::Errors);
        assert_eq!(family_of("data_tx_kib"), CounterFamily::Data);
        assert_eq!(family_of("raw_rx_kib"), CounterFamily::Raw);
        assert_eq!(family_of("rx0_kib"), CounterFamily::Legacy);
        assert_eq!(family_of("tx12_kib"), CounterFamily::Legacy);
        assert_eq!(family_of("rx_kib"), CounterFamily::Data);
    }
}
