//! NVLink, as `nvidia-smi nvlink` prints it: GPUs, their links, and what each
//! mode of the command says about a link.
//!
//! One [`NvlinkLink`] gathers everything any mode printed about that link, so
//! the same type serves `-s` (speed), `-e` (error counters), `-ec` (per-lane
//! ECC), `-gt d|r` (throughput counters), `-c` (capabilities), `-p`/`-R`
//! (remote end) and `-gLowPwrInfo`. Which modes were seen is listed in
//! [`Nvlink::modes`]; fields a mode does not print stay empty.
//!
//! Units stay what the tool printed: `-s` speeds are GB/s per direction as
//! displayed (26.5625 truncated to `26.562`), throughput counters are KiB and
//! their names end in `_kib`. Nothing is converted behind the reader's back.

use crate::model::{Counter, CounterKey, Counters};
use crate::span::LineSpan;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// Everything read from one `nvidia-smi nvlink` output.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Nvlink {
    /// GPU blocks, in output order.
    pub gpus: Vec<NvlinkGpu>,
    /// The modes recognised from the content, in order of first appearance
    /// (empty when the output printed nothing, as on a host without NVLink).
    pub modes: Vec<NvlinkMode>,
    /// `-gBwMode`: `GPU NVLINK bandwidth mode: FULL` → `FULL`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth_mode: Option<String>,
    /// Messages that are not link data: `No devices were found`,
    /// `GPU 6: all links inactive`, a message printed outside any GPU block.
    pub notes: Vec<NvlinkNote>,
}

/// A message of `nvidia-smi nvlink` that is not link data.
///
/// In JSON a note is the one string its [`Display`](fmt::Display) prints
/// (`"GPU 6: all links inactive"`), the shape it always had; it reads back
/// into the same variant.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum NvlinkNote {
    /// `No devices were found`: nvidia-smi saw no GPU (no driver loaded, a
    /// container without GPUs, a bad `-i`).
    NoDevices,
    /// A GPU block whose links are all inactive: `GPU 6: all links
    /// inactive` (the block's own message stays in [`NvlinkGpu::messages`]).
    AllLinksInactive {
        /// The GPU's index, as its header printed it.
        gpu: u32,
    },
    /// A line printed outside any GPU block, as printed (trimmed): an
    /// `all links are inactive` or `Not supported` without its GPU header.
    Message(String),
}

impl NvlinkNote {
    /// Reads a note back from its text (the inverse of `Display`).
    #[must_use]
    pub fn from_text(text: &str) -> Self {
        if text == NO_DEVICES {
            return Self::NoDevices;
        }
        let gpu = text
            .strip_prefix("GPU ")
            .and_then(|t| t.strip_suffix(ALL_LINKS_INACTIVE))
            .and_then(|index| index.parse().ok());
        match gpu {
            Some(gpu) => Self::AllLinksInactive { gpu },
            None => Self::Message(text.to_owned()),
        }
    }
}

const NO_DEVICES: &str = "No devices were found";
const ALL_LINKS_INACTIVE: &str = ": all links inactive";

impl fmt::Display for NvlinkNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoDevices => f.write_str(NO_DEVICES),
            Self::AllLinksInactive { gpu } => write!(f, "GPU {gpu}{ALL_LINKS_INACTIVE}"),
            Self::Message(text) => f.write_str(text),
        }
    }
}

/// A note equals the text it prints (tests and callers compare with
/// `"No devices were found"`).
impl PartialEq<&str> for NvlinkNote {
    fn eq(&self, other: &&str) -> bool {
        match self {
            Self::NoDevices => *other == NO_DEVICES,
            Self::Message(text) => text == other,
            // Exactly the text Display prints (`GPU 06: …` is not it).
            #[allow(clippy::cmp_owned)]
            Self::AllLinksInactive { .. } => self.to_string() == *other,
        }
    }
}

impl Serialize for NvlinkNote {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for NvlinkNote {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        Ok(Self::from_text(&text))
    }
}

/// The mode of `nvidia-smi nvlink` whose output a line has the shape of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum NvlinkMode {
    /// `-s` / `--status`: `Link 0: 26.562 GB/s` or `Link 4: <inactive>`.
    Status,
    /// `-c` / `--capabilities`: `Link 0, P2P is supported: true`.
    Capabilities,
    /// `-e` / `--errorcounters`: `Link 0: Replay Errors: 0`.
    ErrorCounters,
    /// `-ec` / `--crcerrorcounters`: `Lane 0 ECC Correction Count: 374 (Overflow=0)`.
    LaneEcc,
    /// `-gt d`: `Link 0: Data Tx: 0 KiB`.
    ThroughputData,
    /// `-gt r`: `Link 0: Raw Tx: 24 KiB`.
    ThroughputRaw,
    /// Deprecated `-g 0|1`: `Link 0: Rx0: 0 KBytes, Tx0: 0 KBytes`.
    LegacyCounters,
    /// `-p` / `--pcibusid`: `Link 0: 00000000:D5:00.0`.
    RemotePciBusId,
    /// `-R` / `--remotelinkinfo`: `Link 0: Remote Device 00000000:D5:00.0: Link 6`.
    RemoteLinkInfo,
    /// `-gLowPwrInfo`: low-power mode and threshold per link.
    LowPowerInfo,
    /// `-gBwMode`: `GPU NVLINK bandwidth mode: FULL`.
    BandwidthMode,
    /// `-info`: `NVLE: disabled`, `Firmware Version: N/A`.
    Info,
}

impl NvlinkMode {
    /// The option that prints this mode (`-s`, `-gt d` …), for messages.
    #[must_use]
    pub fn option(self) -> &'static str {
        match self {
            Self::Status => "-s",
            Self::Capabilities => "-c",
            Self::ErrorCounters => "-e",
            Self::LaneEcc => "-ec",
            Self::ThroughputData => "-gt d",
            Self::ThroughputRaw => "-gt r",
            Self::LegacyCounters => "-g",
            Self::RemotePciBusId => "-p",
            Self::RemoteLinkInfo => "-R",
            Self::LowPowerInfo => "-gLowPwrInfo",
            Self::BandwidthMode => "-gBwMode",
            Self::Info => "-info",
        }
    }
}

/// One `GPU N: NAME (UUID: GPU-…)` block.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NvlinkGpu {
    /// The enumeration index nvidia-smi printed (`GPU 3:` → 3).
    pub index: u32,
    /// Product name as printed (`NVIDIA H200`, `Tesla V100-SXM2-16GB`).
    pub name: String,
    /// `GPU-…` as printed (may be redacted in pastes).
    pub uuid: Option<String>,
    /// Links in output order; a link printed by several modes appears once.
    pub links: Vec<NvlinkLink>,
    /// `NVML: Unable to retrieve NVLink information as all links are inActive`
    /// (any capitalisation). Normal on PCIe boards without a bridge, critical
    /// on SXM boards: the rules decide, with the knowledge base.
    pub all_links_inactive: bool,
    /// `-info` fields: `NVLE` → `disabled`, `Firmware Version` → `N/A`, and on
    /// Blackwell the firmware components (`MSE`, `NETIR` …).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub info: BTreeMap<String, String>,
    /// `-gLowPwrInfo`: `Low Power Threshold are in units of 100 us` → 100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub low_power_threshold_unit_us: Option<u64>,
    /// `-gLowPwrInfo`: `Range of Low Power Threshold values are 1 to 8191`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub low_power_threshold_range: Option<(u64, u64)>,
    /// Other one-line answers printed under the header, verbatim:
    /// `Invalid Link` (for `-l` beyond the GPU's links), `Not supported`, and
    /// the all-links-inactive message itself.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<String>,
    /// Lines of the block, header included.
    pub span: LineSpan,
    /// True when the link lines were pasted without their `GPU N: …`
    /// header: which GPU they belong to is unknown, so `index` (0) and
    /// `name` (empty) say nothing and no rule compares it with a GPU.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub headerless: bool,
}

impl NvlinkGpu {
    /// Whether the block is its header alone: no link, message or field
    /// under it. nvidia-smi prints that for a GPU without NVLink (and
    /// `-cBridge` for every GPU); as the last block of a listing whose
    /// other GPUs show their lines, at the end of a paste, it is where the
    /// paste was cut.
    #[must_use]
    pub fn header_only(&self) -> bool {
        !self.headerless
            && self.links.is_empty()
            && self.messages.is_empty()
            && !self.all_links_inactive
            && self.info.is_empty()
            && self.low_power_threshold_unit_us.is_none()
            && self.low_power_threshold_range.is_none()
    }

    /// The link with this number, if the output listed it.
    #[must_use]
    pub fn link(&self, link: u32) -> Option<&NvlinkLink> {
        self.links.iter().find(|l| l.link == link)
    }

    /// Links whose `-s` line printed a speed.
    pub fn active_links(&self) -> impl Iterator<Item = &NvlinkLink> {
        self.links.iter().filter(|l| l.speed_gb_per_s.is_some())
    }

    /// Links whose `-s` line printed `<inactive>`.
    pub fn inactive_links(&self) -> impl Iterator<Item = &NvlinkLink> {
        self.links.iter().filter(|l| l.inactive)
    }
}

/// One NVLink of one GPU, with what every mode said about it.
///
/// What only a few modes print (`-ec`, `-c`, `-p`/`-R`, `-gLowPwrInfo`) is
/// kept apart in a [`LinkDetail`], boxed and absent unless printed: an
/// `nvidia-smi nvlink -e` paste of 100,000 links (a pdsh run over a fleet)
/// held 112 bytes per link of empty lists and options inline, the largest
/// part of its memory after the text. In JSON the detail's members stand
/// among the link's own, as they always have.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(from = "FlatLink")]
pub struct NvlinkLink {
    /// Link number (`Link 12:` → 12).
    pub link: u32,
    /// `-s`: per-direction speed in GB/s exactly as printed (`26.562`, `25`).
    pub speed_gb_per_s: Option<f64>,
    /// `-s`: the link printed `<inactive>`.
    pub inactive: bool,
    /// Counters by snake_case name: `replay_errors`, `recovery_errors`,
    /// `crc_errors` (`-e`); `data_tx_kib`, `data_rx_kib` (`-gt d`);
    /// `raw_tx_kib`, `raw_rx_kib` (`-gt r`); `rx0_kib`, `tx0_kib` (`-g 0`,
    /// whose `KBytes` are taken as KiB). Unknown counters keep their
    /// snake-cased label.
    pub counters: Counters,
    /// What `-ec`, `-c`, `-p`/`-R` and `-gLowPwrInfo` said of the link;
    /// `None` when none of them did (read it through [`Self::lanes`],
    /// [`Self::capabilities`], [`Self::remote`], …; fill it through
    /// [`Self::detail_mut`]).
    pub detail: Option<Box<LinkDetail>>,
    /// Lines that described this link.
    pub span: LineSpan,
}

/// What only some modes of `nvidia-smi nvlink` print about a link.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LinkDetail {
    /// `-ec`: per-lane ECC correction counts.
    pub lanes: Vec<LaneEcc>,
    /// `-c`: capability → supported, keyed `p2p_supported`,
    /// `system_memory_access_supported`, `p2p_atomics_supported`,
    /// `system_memory_atomics_supported`, `sli_supported`, `link_supported`.
    pub capabilities: BTreeMap<String, bool>,
    /// `-p` / `-R`: the device at the other end.
    pub remote: Option<NvlinkRemote>,
    /// `-gLowPwrInfo`: `Low Power Mode: Low Power State` → `Low Power State`.
    pub low_power_mode: Option<String>,
    /// `-gLowPwrInfo`: `Low Power Threshold: 50000 us` → 50000.
    pub low_power_threshold_us: Option<u64>,
}

impl LinkDetail {
    fn is_empty(&self) -> bool {
        self == &Self::default()
    }
}

/// No capabilities: what [`NvlinkLink::capabilities`] lends a link without.
static NO_CAPABILITIES: BTreeMap<String, bool> = BTreeMap::new();

impl NvlinkLink {
    /// An empty link record for link `link`.
    #[must_use]
    pub fn new(link: u32, span: LineSpan) -> Self {
        Self {
            link,
            span,
            ..Self::default()
        }
    }

    /// A counter by id (`NvCounter::CrcErrors`) or snake_case name
    /// (`crc_errors`, `raw_tx_kib`).
    #[must_use]
    pub fn counter<K: CounterKey>(&self, key: K) -> Option<Counter> {
        self.counters.get(key).copied()
    }

    /// `-ec`: per-lane ECC correction counts (none when not printed).
    #[must_use]
    pub fn lanes(&self) -> &[LaneEcc] {
        self.detail.as_deref().map_or(&[], |d| &d.lanes)
    }

    /// `-c`: capability → supported (empty when not printed).
    #[must_use]
    pub fn capabilities(&self) -> &BTreeMap<String, bool> {
        self.detail
            .as_deref()
            .map_or(&NO_CAPABILITIES, |d| &d.capabilities)
    }

    /// `-p` / `-R`: the device at the other end.
    #[must_use]
    pub fn remote(&self) -> Option<&NvlinkRemote> {
        self.detail.as_deref().and_then(|d| d.remote.as_ref())
    }

    /// `-gLowPwrInfo`: the low power mode as printed.
    #[must_use]
    pub fn low_power_mode(&self) -> Option<&str> {
        self.detail
            .as_deref()
            .and_then(|d| d.low_power_mode.as_deref())
    }

    /// `-gLowPwrInfo`: the low power threshold in microseconds.
    #[must_use]
    pub fn low_power_threshold_us(&self) -> Option<u64> {
        self.detail
            .as_deref()
            .and_then(|d| d.low_power_threshold_us)
    }

    /// The link's detail, made (empty) if it has none yet.
    pub fn detail_mut(&mut self) -> &mut LinkDetail {
        self.detail.get_or_insert_with(Box::default)
    }

    /// Sets the link's detail: none when `detail` is empty, as a parsed
    /// link has (so that it compares equal to one).
    pub fn set_detail(&mut self, detail: LinkDetail) {
        self.detail = (!detail.is_empty()).then(|| Box::new(detail));
    }
}

/// A link as JSON has it: every member at one level.
#[derive(Serialize)]
struct FlatLinkRef<'a> {
    link: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    speed_gb_per_s: Option<f64>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    inactive: bool,
    #[serde(skip_serializing_if = "Counters::is_empty")]
    counters: &'a Counters,
    #[serde(skip_serializing_if = "<[LaneEcc]>::is_empty")]
    lanes: &'a [LaneEcc],
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    capabilities: &'a BTreeMap<String, bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    remote: Option<&'a NvlinkRemote>,
    #[serde(skip_serializing_if = "Option::is_none")]
    low_power_mode: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    low_power_threshold_us: Option<u64>,
    span: LineSpan,
}

impl Serialize for NvlinkLink {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        FlatLinkRef {
            link: self.link,
            speed_gb_per_s: self.speed_gb_per_s,
            inactive: self.inactive,
            counters: &self.counters,
            lanes: self.lanes(),
            capabilities: self.capabilities(),
            remote: self.remote(),
            low_power_mode: self.low_power_mode(),
            low_power_threshold_us: self.low_power_threshold_us(),
            span: self.span,
        }
        .serialize(serializer)
    }
}

/// [`FlatLinkRef`] read back.
#[derive(Deserialize)]
struct FlatLink {
    link: u32,
    #[serde(default)]
    speed_gb_per_s: Option<f64>,
    #[serde(default)]
    inactive: bool,
    #[serde(default)]
    counters: Counters,
    #[serde(default)]
    lanes: Vec<LaneEcc>,
    #[serde(default)]
    capabilities: BTreeMap<String, bool>,
    #[serde(default)]
    remote: Option<NvlinkRemote>,
    #[serde(default)]
    low_power_mode: Option<String>,
    #[serde(default)]
    low_power_threshold_us: Option<u64>,
    span: LineSpan,
}

impl From<FlatLink> for NvlinkLink {
    fn from(f: FlatLink) -> Self {
        let mut link = Self {
            link: f.link,
            speed_gb_per_s: f.speed_gb_per_s,
            inactive: f.inactive,
            counters: f.counters,
            detail: None,
            span: f.span,
        };
        link.set_detail(LinkDetail {
            lanes: f.lanes,
            capabilities: f.capabilities,
            remote: f.remote,
            low_power_mode: f.low_power_mode,
            low_power_threshold_us: f.low_power_threshold_us,
        });
        link
    }
}

/// `-ec`: `Lane 1 ECC Correction Count: 275 (Overflow=0)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaneEcc {
    /// Lane number within the link.
    pub lane: u32,
    /// Corrections since the counter was last reset. Non-zero is normal on
    /// NVLink4 (hundreds per lane on a healthy H200): judge growth and
    /// imbalance, not the absolute value.
    pub ecc_correction_count: Counter,
    /// `Overflow=` was not 0: the count is a lower bound, no rate can be
    /// taken from it.
    pub overflow: bool,
}

/// The device at the far end of a link (`-p`, `-R`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NvlinkRemote {
    /// PCI bus id as printed (`00000000:D5:00.0`; `FFFFFFFF:FF:FF.0` when the
    /// far end is not visible, e.g. an NVSwitch hidden from a VM).
    pub pci_bus_id: String,
    /// `-R`: the link number on the far device (`: Link 6`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<u32>,
}

impl NvlinkRemote {
    /// True for the all-ones bus id nvidia-smi prints when it cannot see
    /// the far end: such links cannot be attributed to a peer or a switch.
    #[must_use]
    pub fn is_unknown(&self) -> bool {
        self.pci_bus_id
            .to_ascii_uppercase()
            .starts_with("FFFFFFFF:")
    }
}

impl fmt::Display for NvlinkMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "nvidia-smi nvlink {}", self.option())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_remote_is_recognised_in_either_case() {
        let hidden = NvlinkRemote {
            pci_bus_id: "FFFFFFFF:FF:FF.0".into(),
            link: Some(0),
        };
        assert!(hidden.is_unknown());
        let lower = NvlinkRemote {
            pci_bus_id: "ffffffff:ff:ff.0".into(),
            link: None,
        };
        assert!(lower.is_unknown());
        let peer = NvlinkRemote {
            pci_bus_id: "00000000:D5:00.0".into(),
            link: Some(6),
        };
        assert!(!peer.is_unknown());
    }

    #[test]
    fn active_and_inactive_links_are_told_apart() {
        let mut gpu = NvlinkGpu::default();
        let mut up = NvlinkLink::new(0, LineSpan::line(2));
        up.speed_gb_per_s = Some(26.562);
        let mut down = NvlinkLink::new(4, LineSpan::line(3));
        down.inactive = true;
        gpu.links = vec![up, down];
        assert_eq!(gpu.active_links().map(|l| l.link).collect::<Vec<_>>(), [0]);
        assert_eq!(
            gpu.inactive_links().map(|l| l.link).collect::<Vec<_>>(),
            [4]
        );
        assert_eq!(gpu.link(4).map(|l| l.inactive), Some(true));
        assert!(gpu.link(5).is_none());
    }

    #[test]
    fn a_note_is_its_text_in_json_and_reads_back() {
        let notes = [
            (NvlinkNote::NoDevices, "No devices were found"),
            (
                NvlinkNote::AllLinksInactive { gpu: 6 },
                "GPU 6: all links inactive",
            ),
            (NvlinkNote::Message("Not supported".into()), "Not supported"),
        ];
        for (note, text) in notes {
            assert_eq!(note.to_string(), text);
            assert_eq!(note, text);
            let json = serde_json::to_string(&note).unwrap();
            assert_eq!(json, format!("\"{text}\""));
            assert_eq!(serde_json::from_str::<NvlinkNote>(&json).unwrap(), note);
        }
    }

    #[test]
    fn text_that_only_looks_like_a_gpu_note_stays_a_message() {
        for text in [
            "GPU x: all links inactive",
            "GPU 1: all links active",
            "GPU : all links inactive",
        ] {
            assert_eq!(
                NvlinkNote::from_text(text),
                NvlinkNote::Message(text.to_owned())
            );
        }
    }
}

#[cfg(test)]
mod size_tests {
    use super::NvlinkLink;

    /// What a link costs is what an `-e` paste of a fleet costs per link:
    /// the modes few pastes hold stay out of line ([`super::LinkDetail`]).
    /// 184 bytes when they were inline.
    #[test]
    fn a_link_without_detail_is_small() {
        assert!(std::mem::size_of::<NvlinkLink>() <= 72);
    }
}
