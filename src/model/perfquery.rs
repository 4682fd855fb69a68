//! Port performance counters as `perfquery` prints them.
//!
//! One [`PerfBlock`] per `# … counters:` header: the attribute queried, the
//! port it was read from, and every printed field. Counters keep the tool's
//! own names (`SymbolErrorCounter`, `PortXmitData`) and carry the bit width of
//! their hardware field, so a value stuck at all-ones is known to be
//! saturated rather than taken for a real count.

use super::perf_fields::{self, FieldKind, Spec};
use super::{Counter, CounterKey, Counters, IbCounter};
use crate::span::LineSpan;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// Everything one `perfquery` output holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Perfquery {
    /// Blocks in output order (`-l` prints one per port, back to back).
    pub blocks: Vec<PerfBlock>,
}

/// Which Performance Management attribute a block shows, i.e. which
/// perfquery option printed it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum PerfAttribute {
    /// Plain `perfquery`: the 4- to 32-bit PortCounters.
    PortCounters,
    /// `-x`: PortCountersExtended, 64-bit counters.
    PortCountersExtended,
    /// `-E`: why received packets were dropped.
    PortRcvErrorDetails,
    /// `-D`: why packets to be sent were discarded.
    PortXmitDiscardDetails,
    /// `-X`: transmitted data per service level.
    PortXmitDataSl,
    /// `-S`: received data per service level.
    PortRcvDataSl,
    /// `-T`: per-lane error and FEC counters of 14 Gb/s and faster links.
    PortExtendedSpeedsCounters,
    /// `-T` on a port with RS-FEC active: symbol-based FEC counters.
    PortExtendedSpeedsCountersRsFec,
    /// `-c`: PortSamplesControl, the sampling configuration (no counters).
    PortSamplesControl,
    /// `--oprcvcounters`.
    PortOpRcvCounters,
    /// `--flowctlcounters`.
    PortFlowCtlCounters,
    /// `--vloppackets`.
    PortVlOpPackets,
    /// `--vlopdata`.
    PortVlOpData,
    /// `--vlxmitflowctlerrors`.
    PortVlXmitFlowCtlUpdateErrors,
    /// `--vlxmitcounters`.
    PortVlXmitWaitCounters,
    /// `--swportvlcong`.
    SwPortVlCongestion,
    /// `--rcvcc`.
    PortRcvConCtrl,
    /// `--slrcvfecn`.
    PortSlRcvFecn,
    /// `--slrcvbecn`.
    PortSlRcvBecn,
    /// `--xmitcc`.
    PortXmitConCtrl,
    /// `--vlxmittimecc`.
    PortVlXmitTimeCong,
    /// A `# <name> counters:` header this crate does not know; its fields
    /// are read with unknown widths.
    Other(String),
}

/// Header names, as perfquery prints them before ` counters:`.
const HEADER_NAMES: &[(PerfAttribute, &str)] = &[
    (PerfAttribute::PortCounters, "Port"),
    (PerfAttribute::PortCountersExtended, "Port extended"),
    (PerfAttribute::PortRcvErrorDetails, "PortRcvErrorDetails"),
    (
        PerfAttribute::PortXmitDiscardDetails,
        "PortXmitDiscardDetails",
    ),
    (PerfAttribute::PortXmitDataSl, "PortXmitDataSL"),
    (PerfAttribute::PortRcvDataSl, "PortRcvDataSL"),
    (
        PerfAttribute::PortExtendedSpeedsCounters,
        "PortExtendedSpeedsCounters",
    ),
    (
        PerfAttribute::PortExtendedSpeedsCountersRsFec,
        "PortExtendedSpeedsCounters with RS-FEC Active",
    ),
    (PerfAttribute::PortOpRcvCounters, "PortOpRcvCounters"),
    (PerfAttribute::PortFlowCtlCounters, "PortFlowCtlCounters"),
    (PerfAttribute::PortVlOpPackets, "PortVLOpPackets"),
    (PerfAttribute::PortVlOpData, "PortVLOpData"),
    (
        PerfAttribute::PortVlXmitFlowCtlUpdateErrors,
        "PortVLXmitFlowCtlUpdateErrors",
    ),
    (
        PerfAttribute::PortVlXmitWaitCounters,
        "PortVLXmitWaitCounters",
    ),
    (PerfAttribute::SwPortVlCongestion, "SwPortVLCongestion"),
    (PerfAttribute::PortRcvConCtrl, "PortRcvConCtrl"),
    (PerfAttribute::PortSlRcvFecn, "PortSLRcvFECN"),
    (PerfAttribute::PortSlRcvBecn, "PortSLRcvBECN"),
    (PerfAttribute::PortXmitConCtrl, "PortXmitConCtrl"),
    (PerfAttribute::PortVlXmitTimeCong, "PortVLXmitTimeCong"),
];

impl PerfAttribute {
    /// The attribute whose header reads `# <name> counters:`; names this
    /// crate does not know become [`PerfAttribute::Other`].
    #[must_use]
    pub fn from_header_name(name: &str) -> Self {
        HEADER_NAMES
            .iter()
            .find(|(_, n)| *n == name)
            .map_or_else(|| Self::Other(name.to_owned()), |(a, _)| a.clone())
    }

    /// The words perfquery prints before ` counters:` (or before `:` for
    /// PortSamplesControl, whose header has no ` counters`).
    #[must_use]
    pub fn header_name(&self) -> &str {
        match self {
            Self::PortSamplesControl => "PortSamplesControl",
            Self::Other(name) => name,
            known => HEADER_NAMES
                .iter()
                .find(|(a, _)| a == known)
                .map_or("", |(_, n)| n),
        }
    }

    /// How `name` is printed in this attribute and, for counters, how wide
    /// its hardware field is. `None` for names the attribute does not have.
    #[must_use]
    pub fn field_kind(&self, name: &str) -> Option<FieldKind> {
        perf_fields::kind_in(self.layout(), name)
    }

    /// Field names in the order perfquery prints them, with their kinds.
    pub fn field_names(&self) -> impl Iterator<Item = (std::borrow::Cow<'static, str>, FieldKind)> {
        perf_fields::fields(self.layout())
    }

    /// Where the parts of [`layout`](Self::layout) that perfquery may
    /// leave out begin (see [`perf_fields::missing_after_last`]).
    pub(crate) fn optional_parts(&self) -> &'static [&'static str] {
        match self {
            Self::PortCounters => perf_fields::BASIC_OPTIONAL_PARTS,
            Self::PortCountersExtended => perf_fields::EXTENDED_OPTIONAL_PARTS,
            _ => &[],
        }
    }

    pub(crate) fn layout(&self) -> &'static [Spec] {
        use perf_fields as f;
        match self {
            Self::PortCounters => f::PORT_COUNTERS,
            Self::PortCountersExtended => f::PORT_COUNTERS_EXTENDED,
            Self::PortRcvErrorDetails => f::PORT_RCV_ERROR_DETAILS,
            Self::PortXmitDiscardDetails => f::PORT_XMIT_DISCARD_DETAILS,
            Self::PortXmitDataSl => f::PORT_XMIT_DATA_SL,
            Self::PortRcvDataSl => f::PORT_RCV_DATA_SL,
            Self::PortExtendedSpeedsCounters => f::PORT_EXTENDED_SPEEDS,
            Self::PortExtendedSpeedsCountersRsFec => f::PORT_EXTENDED_SPEEDS_RS_FEC,
            Self::PortSamplesControl => f::PORT_SAMPLES_CONTROL,
            Self::PortOpRcvCounters => f::PORT_OP_RCV_COUNTERS,
            Self::PortFlowCtlCounters => f::PORT_FLOW_CTL_COUNTERS,
            Self::PortVlOpPackets => f::PORT_VL_OP_PACKETS,
            Self::PortVlOpData => f::PORT_VL_OP_DATA,
            Self::PortVlXmitFlowCtlUpdateErrors => f::PORT_VL_XMIT_FLOW_CTL_UPDATE_ERRORS,
            Self::PortVlXmitWaitCounters => f::PORT_VL_XMIT_WAIT_COUNTERS,
            Self::SwPortVlCongestion => f::SW_PORT_VL_CONGESTION,
            Self::PortRcvConCtrl => f::PORT_RCV_CON_CTRL,
            Self::PortSlRcvFecn => f::PORT_SL_RCV_FECN,
            Self::PortSlRcvBecn => f::PORT_SL_RCV_BECN,
            Self::PortXmitConCtrl => f::PORT_XMIT_CON_CTRL,
            Self::PortVlXmitTimeCong => f::PORT_VL_XMIT_TIME_CONG,
            Self::Other(_) => &[],
        }
    }
}

/// One `# … counters:` header and the fields printed under it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PerfBlock {
    /// Which attribute was queried.
    pub attribute: PerfAttribute,
    /// The port as perfquery names it: `Lid 133`, or a directed route such
    /// as `DR path slid 65535; dlid 65535; 0,1`.
    pub port_id: String,
    /// The LID from `port_id`, when it names one.
    pub lid: Option<u32>,
    /// The port number from the header; 255 means all ports (`-a`).
    pub port: Option<u32>,
    /// True for the `-a` aggregate (port 255): counters summed over all
    /// ports, each sticking at its field maximum.
    pub all_ports: bool,
    /// PerfMgt ClassPortInfo CapabilityMask, when the header shows it.
    pub cap_mask: Option<u32>,
    /// CapabilityMask2 (already shifted right by 5, as perfquery prints it).
    pub cap_mask2: Option<u32>,
    /// Counters by typed id (serialised with the tool's field names), with
    /// their widths.
    pub counters: Counters,
    /// Fields that are not counters (`PortSelect`, `CounterSelect` hex,
    /// PortSamplesControl settings), as printed. A name the attribute's
    /// layout spells is that spelling, not a copy of it (every dump prints
    /// a few such fields); other names are owned.
    pub fields: BTreeMap<Cow<'static, str>, String>,
    /// Lines of the block, header included.
    pub span: LineSpan,
    /// Set when the block was read without its `# … counters:` header
    /// (port unknown), holds only what `ibcheckerrors` flagged, or stops
    /// inside a part of its layout that perfquery prints whole (at a cut
    /// value, or before the part's last fields).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial: Option<crate::model::partial::Partial>,
}

impl PerfBlock {
    /// An empty block for `attribute` on `port_id`.
    #[must_use]
    pub fn new(attribute: PerfAttribute, port_id: impl Into<String>, span: LineSpan) -> Self {
        // Sized once for the counters the attribute prints: no regrowth,
        // no spare capacity held for the whole run.
        let counters = Counters::with_capacity(perf_fields::counter_count(attribute.layout()));
        Self {
            attribute,
            port_id: port_id.into(),
            lid: None,
            port: None,
            all_ports: false,
            cap_mask: None,
            cap_mask2: None,
            counters,
            fields: BTreeMap::new(),
            span,
            partial: None,
        }
    }

    /// The counter `key` names (`IbCounter::SymbolErrorCounter`, or the
    /// printed name `"SymbolErrorCounter"`), if any.
    #[must_use]
    pub fn counter<K: CounterKey>(&self, key: K) -> Option<&Counter> {
        self.counters.get(key)
    }

    /// Transmitted data in octets: `PortXmitData` counts 4-octet words, so
    /// this is its value × 4. `None` when the block has no such counter or
    /// the product does not fit in `u64`. When the counter is saturated the
    /// result is a lower bound; check [`Counter::saturated`] before using it
    /// for a rate.
    #[must_use]
    pub fn xmit_data_octets(&self) -> Option<u64> {
        self.counter(IbCounter::PortXmitData)?.value.checked_mul(4)
    }

    /// Received data in octets (`PortRcvData` × 4); see [`Self::xmit_data_octets`].
    #[must_use]
    pub fn rcv_data_octets(&self) -> Option<u64> {
        self.counter(IbCounter::PortRcvData)?.value.checked_mul(4)
    }

    /// True for PortCountersExtended (`perfquery -x`), whose counters are
    /// 64 bits wide and so practically never saturate.
    #[must_use]
    pub fn is_extended(&self) -> bool {
        self.attribute == PerfAttribute::PortCountersExtended
    }

    /// Whether the port implements PortXmitWait (CapMask bit 12). When it
    /// does not, perfquery prints the counter as 0 whatever happened, so a 0
    /// says nothing about congestion. `None` when the header shows no CapMask.
    #[must_use]
    pub fn xmit_wait_supported(&self) -> Option<bool> {
        self.cap_mask.map(|m| m & CAP_XMIT_WAIT != 0)
    }

    /// Whether the port has the 64-bit error counters of
    /// AdditionalPortCountersExtended (CapMask2 bit 1). Older perfquery
    /// versions print those lines in `-x` output even without it; their
    /// zeros are then not readings. `None` when the header shows no CapMask2.
    #[must_use]
    pub fn additional_counters_supported(&self) -> Option<bool> {
        self.cap_mask2.map(|m| m & CAP2_ADDITIONAL_COUNTERS != 0)
    }
}

/// PerfMgt ClassPortInfo CapabilityMask: PortCounters:PortXmitWait supported.
const CAP_XMIT_WAIT: u32 = 1 << 12;
/// CapabilityMask2 (as perfquery prints it): AdditionalPortCountersExtended.
const CAP2_ADDITIONAL_COUNTERS: u32 = 1 << 1;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_names_map_both_ways() {
        for (attr, name) in HEADER_NAMES {
            assert_eq!(PerfAttribute::from_header_name(name), *attr);
            assert_eq!(attr.header_name(), *name);
        }
        let other = PerfAttribute::from_header_name("PortFoo");
        assert_eq!(other, PerfAttribute::Other("PortFoo".into()));
        assert_eq!(other.header_name(), "PortFoo");
        assert_eq!(other.field_kind("PortSelect"), None);
    }

    #[test]
    fn data_octets_are_four_times_the_word_count() {
        let mut b = PerfBlock::new(PerfAttribute::PortCounters, "Lid 1", LineSpan::line(1));
        assert_eq!(b.xmit_data_octets(), None);
        b.counters
            .insert(IbCounter::PortXmitData, Counter::new(4_294_967_295, 32));
        b.counters.insert("PortRcvData", Counter::new(u64::MAX, 64));
        assert_eq!(b.xmit_data_octets(), Some(17_179_869_180));
        assert_eq!(
            b.rcv_data_octets(),
            None,
            "overflow is None, not a wrapped value"
        );
        assert!(!b.is_extended());
    }

    #[test]
    fn capabilities_come_from_the_header_masks() {
        let mut b = PerfBlock::new(
            PerfAttribute::PortCountersExtended,
            "Lid 1",
            LineSpan::line(1),
        );
        assert_eq!(b.xmit_wait_supported(), None);
        b.cap_mask = Some(0x0A00);
        b.cap_mask2 = Some(0x0000000);
        assert_eq!(b.xmit_wait_supported(), Some(false));
        assert_eq!(b.additional_counters_supported(), Some(false));
        b.cap_mask = Some(0x5300);
        b.cap_mask2 = Some(0x0000002);
        assert_eq!(b.xmit_wait_supported(), Some(true));
        assert_eq!(b.additional_counters_supported(), Some(true));
    }

    #[test]
    fn serde_names_are_snake_case() {
        let v = serde_json::to_value(PerfAttribute::PortXmitDataSl).unwrap();
        assert_eq!(v, "port_xmit_data_sl");
        let v = serde_json::to_value(PerfAttribute::Other("X".into())).unwrap();
        assert_eq!(v, serde_json::json!({"other": "X"}));
    }
}
