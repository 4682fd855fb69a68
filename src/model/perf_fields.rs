//! What perfquery prints for each Performance Management attribute: the
//! fields in the order libibmad dumps them, and how wide each one is.
//!
//! The widths come from libibmad's field table (`fields.c`, rdma-core), which
//! follows the IBA PortCounters tables. They matter because IB counters stick
//! at all-ones instead of wrapping: a 4-bit `LocalLinkIntegrityErrors` of 15
//! is saturated, a 64-bit one of 15 is not. The order is the one the dump
//! functions in `dump.c` use, so the same table also drives a faithful render.

use std::borrow::Cow;

/// How a field is printed and whether it counts something.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldKind {
    /// A hardware counter of this many bits, printed in decimal.
    Counter(u8),
    /// A decimal number that is not a counter (`PortSelect`, `SampleInterval`).
    Number,
    /// A bit field printed in hexadecimal, `0x` and two digits per byte
    /// (`CounterSelect`, `OptionMask`). The number is its width in bits.
    Hex(u8),
}

/// One entry of an attribute layout: a single field, or a numbered series
/// (`XmtDataSL0` … `XmtDataSL15`).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Spec {
    One(&'static str, FieldKind),
    /// Prefix, number of members (numbered from 0), kind of each.
    Series(&'static str, u8, FieldKind),
}

use FieldKind::{Counter as C, Hex, Number};
use Spec::{One, Series};

const PORT_SELECT: Spec = One("PortSelect", Number);
const COUNTER_SELECT: Spec = One("CounterSelect", Hex(16));

/// PortCounters, in `mad_dump_perfcounters` order (QP1Dropped before VL15Dropped).
pub(crate) const PORT_COUNTERS: &[Spec] = &[
    PORT_SELECT,
    COUNTER_SELECT,
    One("SymbolErrorCounter", C(16)),
    One("LinkErrorRecoveryCounter", C(8)),
    One("LinkDownedCounter", C(8)),
    One("PortRcvErrors", C(16)),
    One("PortRcvRemotePhysicalErrors", C(16)),
    One("PortRcvSwitchRelayErrors", C(16)),
    One("PortXmitDiscards", C(16)),
    One("PortXmitConstraintErrors", C(8)),
    One("PortRcvConstraintErrors", C(8)),
    One("CounterSelect2", Hex(8)),
    One("LocalLinkIntegrityErrors", C(4)),
    One("ExcessiveBufferOverrunErrors", C(4)),
    One("QP1Dropped", C(16)),
    One("VL15Dropped", C(16)),
    One("PortXmitData", C(32)),
    One("PortRcvData", C(32)),
    One("PortXmitPkts", C(32)),
    One("PortRcvPkts", C(32)),
    One("PortXmitWait", C(32)),
];

/// PortCountersExtended: the data counters, the unicast/multicast counters
/// (CapMask bit 9) and the AdditionalPortCountersExtended error counters
/// (CapMask2 bit 1; VL15Dropped before PortXmitWait before QP1Dropped here).
pub(crate) const PORT_COUNTERS_EXTENDED: &[Spec] = &[
    PORT_SELECT,
    COUNTER_SELECT,
    One("PortXmitData", C(64)),
    One("PortRcvData", C(64)),
    One("PortXmitPkts", C(64)),
    One("PortRcvPkts", C(64)),
    One("PortUnicastXmitPkts", C(64)),
    One("PortUnicastRcvPkts", C(64)),
    One("PortMulticastXmitPkts", C(64)),
    One("PortMulticastRcvPkts", C(64)),
    One("CounterSelect2", Hex(32)),
    One("SymbolErrorCounter", C(64)),
    One("LinkErrorRecoveryCounter", C(64)),
    One("LinkDownedCounter", C(64)),
    One("PortRcvErrors", C(64)),
    One("PortRcvRemotePhysicalErrors", C(64)),
    One("PortRcvSwitchRelayErrors", C(64)),
    One("PortXmitDiscards", C(64)),
    One("PortXmitConstraintErrors", C(64)),
    One("PortRcvConstraintErrors", C(64)),
    One("LocalLinkIntegrityErrors", C(64)),
    One("ExcessiveBufferOverrunErrors", C(64)),
    One("VL15Dropped", C(64)),
    One("PortXmitWait", C(64)),
    One("QP1Dropped", C(64)),
];

pub(crate) const PORT_XMIT_DATA_SL: &[Spec] =
    &[PORT_SELECT, COUNTER_SELECT, Series("XmtDataSL", 16, C(32))];

pub(crate) const PORT_RCV_DATA_SL: &[Spec] =
    &[PORT_SELECT, COUNTER_SELECT, Series("RcvDataSL", 16, C(32))];

pub(crate) const PORT_XMIT_DISCARD_DETAILS: &[Spec] = &[
    PORT_SELECT,
    COUNTER_SELECT,
    One("PortInactiveDiscards", C(16)),
    One("PortNeighborMTUDiscards", C(16)),
    One("PortSwLifetimeLimitDiscards", C(16)),
    One("PortSwHOQLifetimeLimitDiscards", C(16)),
];

pub(crate) const PORT_RCV_ERROR_DETAILS: &[Spec] = &[
    PORT_SELECT,
    COUNTER_SELECT,
    One("PortLocalPhysicalErrors", C(16)),
    One("PortMalformedPktErrors", C(16)),
    One("PortBufferOverrunErrors", C(16)),
    One("PortDLIDMappingErrors", C(16)),
    One("PortVLMappingErrors", C(16)),
    One("PortLoopingErrors", C(16)),
];

/// PortExtendedSpeedsCounters: its CounterSelect is 64 bits wide.
pub(crate) const PORT_EXTENDED_SPEEDS: &[Spec] = &[
    PORT_SELECT,
    One("CounterSelect", Hex(64)),
    One("SyncHeaderErrorCounter", C(16)),
    One("UnknownBlockCounter", C(16)),
    Series("ErrorDetectionCounterLane", 12, C(16)),
    Series("FECCorrectableBlockCtrLane", 12, C(32)),
    Series("FECUncorrectableBlockCtrLane", 12, C(32)),
];

/// PortExtendedSpeedsCounters as printed when RS-FEC is active.
pub(crate) const PORT_EXTENDED_SPEEDS_RS_FEC: &[Spec] = &[
    PORT_SELECT,
    One("CounterSelect", Hex(64)),
    One("SyncHeaderErrorCounter", C(16)),
    One("UnknownBlockCounter", C(16)),
    Series("FECCorrectableSymbolCtrLane", 12, C(32)),
    One("PortFECCorrectableBlockCtr", C(32)),
    One("PortFECUncorrectableBlockCtr", C(32)),
    One("PortFECCorrectedSymbolCtr", C(32)),
];

pub(crate) const PORT_OP_RCV_COUNTERS: &[Spec] = &[
    PORT_SELECT,
    COUNTER_SELECT,
    One("PortOpRcvPkts", C(32)),
    One("PortOpRcvData", C(32)),
];

pub(crate) const PORT_FLOW_CTL_COUNTERS: &[Spec] = &[
    PORT_SELECT,
    COUNTER_SELECT,
    One("PortXmitFlowPkts", C(32)),
    One("PortRcvFlowPkts", C(32)),
];

pub(crate) const PORT_VL_OP_PACKETS: &[Spec] = &[
    PORT_SELECT,
    COUNTER_SELECT,
    Series("PortVLOpPackets", 16, C(16)),
];

pub(crate) const PORT_VL_OP_DATA: &[Spec] = &[
    PORT_SELECT,
    COUNTER_SELECT,
    Series("PortVLOpData", 16, C(32)),
];

/// Two-bit counters: they saturate at 3.
pub(crate) const PORT_VL_XMIT_FLOW_CTL_UPDATE_ERRORS: &[Spec] = &[
    PORT_SELECT,
    COUNTER_SELECT,
    Series("PortVLXmitFlowCtlUpdateErrors", 16, C(2)),
];

pub(crate) const PORT_VL_XMIT_WAIT_COUNTERS: &[Spec] = &[
    PORT_SELECT,
    COUNTER_SELECT,
    Series("PortVLXmitWait", 16, C(16)),
];

pub(crate) const SW_PORT_VL_CONGESTION: &[Spec] = &[
    PORT_SELECT,
    COUNTER_SELECT,
    Series("SWPortVLCongestion", 16, C(16)),
];

pub(crate) const PORT_RCV_CON_CTRL: &[Spec] = &[
    PORT_SELECT,
    COUNTER_SELECT,
    One("PortPktRcvFECN", C(32)),
    One("PortPktRcvBECN", C(32)),
];

pub(crate) const PORT_SL_RCV_FECN: &[Spec] = &[
    PORT_SELECT,
    COUNTER_SELECT,
    Series("PortSLRcvFECN", 16, C(32)),
];

pub(crate) const PORT_SL_RCV_BECN: &[Spec] = &[
    PORT_SELECT,
    COUNTER_SELECT,
    Series("PortSLRcvBECN", 16, C(32)),
];

pub(crate) const PORT_XMIT_CON_CTRL: &[Spec] =
    &[PORT_SELECT, COUNTER_SELECT, One("PortXmitTimeCong", C(32))];

/// VL 0 to 14 only (VL15 is the management VL).
pub(crate) const PORT_VL_XMIT_TIME_CONG: &[Spec] = &[
    PORT_SELECT,
    COUNTER_SELECT,
    Series("PortVLXmitTimeCong", 15, C(32)),
];

/// PortSamplesControl (`perfquery -c`): configuration, no counters.
pub(crate) const PORT_SAMPLES_CONTROL: &[Spec] = &[
    One("OpCode", Hex(8)),
    One("PortSelect", Number),
    One("Tick", Hex(8)),
    One("CounterWidth", Number),
    One("CounterMask0", Hex(3)),
    One("CounterMasks1to9", Hex(27)),
    One("CounterMasks10to14", Hex(15)),
    One("SampleMechanisms", Number),
    One("SampleStatus", Number),
    One("OptionMask", Hex(64)),
    One("VendorMask", Hex(64)),
    One("SampleStart", Number),
    One("SampleInterval", Number),
    One("Tag", Hex(16)),
    Series("CounterSelect", 15, Hex(16)),
    One("SamplesOnlyOptionMask", Hex(64)),
];

/// The kind of `name` in `layout`, if the layout has it.
pub(crate) fn kind_in(layout: &[Spec], name: &str) -> Option<FieldKind> {
    layout.iter().find_map(|spec| match *spec {
        One(n, kind) => (n == name).then_some(kind),
        Series(prefix, count, kind) => {
            let index = name.strip_prefix(prefix)?;
            let n: u8 = index.parse().ok()?;
            // `Lane01` is not how libibmad spells `Lane1`.
            (n < count && n.to_string() == index).then_some(kind)
        }
    })
}

/// Every field name of `layout`, in print order, with its kind.
pub(crate) fn fields(layout: &[Spec]) -> impl Iterator<Item = (Cow<'static, str>, FieldKind)> + '_ {
    layout.iter().flat_map(|spec| {
        let names: Vec<(Cow<'static, str>, FieldKind)> = match *spec {
            One(n, kind) => vec![(Cow::Borrowed(n), kind)],
            Series(prefix, count, kind) => (0..count)
                .map(|i| (Cow::Owned(format!("{prefix}{i}")), kind))
                .collect(),
        };
        names
    })
}

/// Counter names of infiniband-diags before 2009 (`perfquery`,
/// `ibcheckerrors`), with the names libibmad has printed since. The fields
/// are the same IBA PortCounters; only the spelling changed.
const OLD_NAMES: &[(&str, &str)] = &[
    ("SymbolErrors", "SymbolErrorCounter"),
    ("LinkRecovers", "LinkErrorRecoveryCounter"),
    ("LinkDowned", "LinkDownedCounter"),
    ("RcvErrors", "PortRcvErrors"),
    ("RcvRemotePhysErrors", "PortRcvRemotePhysicalErrors"),
    ("RcvSwRelayErrors", "PortRcvSwitchRelayErrors"),
    ("XmtDiscards", "PortXmitDiscards"),
    ("XmtConstraintErrors", "PortXmitConstraintErrors"),
    ("RcvConstraintErrors", "PortRcvConstraintErrors"),
    ("LinkIntegrityErrors", "LocalLinkIntegrityErrors"),
    ("ExcBufOverrunErrors", "ExcessiveBufferOverrunErrors"),
    ("XmtData", "PortXmitData"),
    ("RcvData", "PortRcvData"),
    ("XmtPkts", "PortXmitPkts"),
    ("RcvPkts", "PortRcvPkts"),
    ("XmtWait", "PortXmitWait"),
];

/// Today's name of a counter printed under its pre-2009 name, if it is one.
#[must_use]
pub fn modern_name(name: &str) -> Option<&'static str> {
    OLD_NAMES
        .iter()
        .find(|(old, _)| *old == name)
        .map(|(_, new)| *new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_members_are_found_by_their_exact_spelling() {
        assert_eq!(kind_in(PORT_XMIT_DATA_SL, "XmtDataSL15"), Some(C(32)));
        assert_eq!(kind_in(PORT_XMIT_DATA_SL, "XmtDataSL16"), None);
        assert_eq!(kind_in(PORT_XMIT_DATA_SL, "XmtDataSL01"), None);
        assert_eq!(
            kind_in(PORT_VL_XMIT_TIME_CONG, "PortVLXmitTimeCong15"),
            None
        );
        // The samples-control CounterSelect series must not swallow the
        // attribute's other fields.
        assert_eq!(
            kind_in(PORT_SAMPLES_CONTROL, "CounterSelect14"),
            Some(Hex(16))
        );
        assert_eq!(kind_in(PORT_SAMPLES_CONTROL, "CounterSelect"), None);
    }

    #[test]
    fn basic_and_extended_widths_follow_the_spec_tables() {
        let basic = |n| kind_in(PORT_COUNTERS, n);
        assert_eq!(basic("SymbolErrorCounter"), Some(C(16)));
        assert_eq!(basic("LinkDownedCounter"), Some(C(8)));
        assert_eq!(basic("LocalLinkIntegrityErrors"), Some(C(4)));
        assert_eq!(basic("PortXmitData"), Some(C(32)));
        assert_eq!(basic("CounterSelect2"), Some(Hex(8)));
        for (name, kind) in fields(PORT_COUNTERS_EXTENDED) {
            match kind {
                C(bits) => assert_eq!(bits, 64, "{name}"),
                Hex(_) | Number => assert!(name.contains("Select"), "{name}"),
            }
        }
    }

    #[test]
    fn layouts_have_no_duplicate_names() {
        for layout in [
            PORT_COUNTERS,
            PORT_COUNTERS_EXTENDED,
            PORT_EXTENDED_SPEEDS,
            PORT_EXTENDED_SPEEDS_RS_FEC,
            PORT_SAMPLES_CONTROL,
        ] {
            let names: Vec<_> = fields(layout).map(|(n, _)| n).collect();
            let mut sorted = names.clone();
            sorted.sort();
            sorted.dedup();
            assert_eq!(names.len(), sorted.len());
        }
        assert_eq!(fields(PORT_EXTENDED_SPEEDS).count(), 40);
    }
}
