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

use super::counter_id::{IbCounter as I, IbSeries as S};
use FieldKind::{Counter as C, Hex, Number};
use Spec::{One, Series};

/// A counter of `bits` bits, named by its typed id: a layout cannot
/// misspell a counter the rules ask for.
const fn ctr(counter: I, bits: u8) -> Spec {
    One(counter.name(), C(bits))
}

/// A numbered counter family, each member `bits` wide.
const fn series(family: S, bits: u8) -> Spec {
    Series(family.prefix(), family.count(), C(bits))
}

const PORT_SELECT: Spec = One("PortSelect", Number);
const COUNTER_SELECT: Spec = One("CounterSelect", Hex(16));

/// PortCounters, in `mad_dump_perfcounters` order (QP1Dropped before VL15Dropped).
pub(crate) const PORT_COUNTERS: &[Spec] = &[
    PORT_SELECT,
    COUNTER_SELECT,
    ctr(I::SymbolErrorCounter, 16),
    ctr(I::LinkErrorRecoveryCounter, 8),
    ctr(I::LinkDownedCounter, 8),
    ctr(I::PortRcvErrors, 16),
    ctr(I::PortRcvRemotePhysicalErrors, 16),
    ctr(I::PortRcvSwitchRelayErrors, 16),
    ctr(I::PortXmitDiscards, 16),
    ctr(I::PortXmitConstraintErrors, 8),
    ctr(I::PortRcvConstraintErrors, 8),
    One("CounterSelect2", Hex(8)),
    ctr(I::LocalLinkIntegrityErrors, 4),
    ctr(I::ExcessiveBufferOverrunErrors, 4),
    ctr(I::QP1Dropped, 16),
    ctr(I::VL15Dropped, 16),
    ctr(I::PortXmitData, 32),
    ctr(I::PortRcvData, 32),
    ctr(I::PortXmitPkts, 32),
    ctr(I::PortRcvPkts, 32),
    ctr(I::PortXmitWait, 32),
];

/// PortCountersExtended: the data counters, the unicast/multicast counters
/// (CapMask bit 9) and the AdditionalPortCountersExtended error counters
/// (CapMask2 bit 1; VL15Dropped before PortXmitWait before QP1Dropped here).
pub(crate) const PORT_COUNTERS_EXTENDED: &[Spec] = &[
    PORT_SELECT,
    COUNTER_SELECT,
    ctr(I::PortXmitData, 64),
    ctr(I::PortRcvData, 64),
    ctr(I::PortXmitPkts, 64),
    ctr(I::PortRcvPkts, 64),
    ctr(I::PortUnicastXmitPkts, 64),
    ctr(I::PortUnicastRcvPkts, 64),
    ctr(I::PortMulticastXmitPkts, 64),
    ctr(I::PortMulticastRcvPkts, 64),
    One("CounterSelect2", Hex(32)),
    ctr(I::SymbolErrorCounter, 64),
    ctr(I::LinkErrorRecoveryCounter, 64),
    ctr(I::LinkDownedCounter, 64),
    ctr(I::PortRcvErrors, 64),
    ctr(I::PortRcvRemotePhysicalErrors, 64),
    ctr(I::PortRcvSwitchRelayErrors, 64),
    ctr(I::PortXmitDiscards, 64),
    ctr(I::PortXmitConstraintErrors, 64),
    ctr(I::PortRcvConstraintErrors, 64),
    ctr(I::LocalLinkIntegrityErrors, 64),
    ctr(I::ExcessiveBufferOverrunErrors, 64),
    ctr(I::VL15Dropped, 64),
    ctr(I::PortXmitWait, 64),
    ctr(I::QP1Dropped, 64),
];

pub(crate) const PORT_XMIT_DATA_SL: &[Spec] =
    &[PORT_SELECT, COUNTER_SELECT, series(S::XmtDataSL, 32)];

pub(crate) const PORT_RCV_DATA_SL: &[Spec] =
    &[PORT_SELECT, COUNTER_SELECT, series(S::RcvDataSL, 32)];

pub(crate) const PORT_XMIT_DISCARD_DETAILS: &[Spec] = &[
    PORT_SELECT,
    COUNTER_SELECT,
    ctr(I::PortInactiveDiscards, 16),
    ctr(I::PortNeighborMTUDiscards, 16),
    ctr(I::PortSwLifetimeLimitDiscards, 16),
    ctr(I::PortSwHOQLifetimeLimitDiscards, 16),
];

pub(crate) const PORT_RCV_ERROR_DETAILS: &[Spec] = &[
    PORT_SELECT,
    COUNTER_SELECT,
    ctr(I::PortLocalPhysicalErrors, 16),
    ctr(I::PortMalformedPktErrors, 16),
    ctr(I::PortBufferOverrunErrors, 16),
    ctr(I::PortDLIDMappingErrors, 16),
    ctr(I::PortVLMappingErrors, 16),
    ctr(I::PortLoopingErrors, 16),
];

/// PortExtendedSpeedsCounters: its CounterSelect is 64 bits wide.
pub(crate) const PORT_EXTENDED_SPEEDS: &[Spec] = &[
    PORT_SELECT,
    One("CounterSelect", Hex(64)),
    ctr(I::SyncHeaderErrorCounter, 16),
    ctr(I::UnknownBlockCounter, 16),
    series(S::ErrorDetectionCounterLane, 16),
    series(S::FECCorrectableBlockCtrLane, 32),
    series(S::FECUncorrectableBlockCtrLane, 32),
];

/// PortExtendedSpeedsCounters as printed when RS-FEC is active.
pub(crate) const PORT_EXTENDED_SPEEDS_RS_FEC: &[Spec] = &[
    PORT_SELECT,
    One("CounterSelect", Hex(64)),
    ctr(I::SyncHeaderErrorCounter, 16),
    ctr(I::UnknownBlockCounter, 16),
    series(S::FECCorrectableSymbolCtrLane, 32),
    ctr(I::PortFECCorrectableBlockCtr, 32),
    ctr(I::PortFECUncorrectableBlockCtr, 32),
    ctr(I::PortFECCorrectedSymbolCtr, 32),
];

pub(crate) const PORT_OP_RCV_COUNTERS: &[Spec] = &[
    PORT_SELECT,
    COUNTER_SELECT,
    ctr(I::PortOpRcvPkts, 32),
    ctr(I::PortOpRcvData, 32),
];

pub(crate) const PORT_FLOW_CTL_COUNTERS: &[Spec] = &[
    PORT_SELECT,
    COUNTER_SELECT,
    ctr(I::PortXmitFlowPkts, 32),
    ctr(I::PortRcvFlowPkts, 32),
];

pub(crate) const PORT_VL_OP_PACKETS: &[Spec] =
    &[PORT_SELECT, COUNTER_SELECT, series(S::PortVLOpPackets, 16)];

pub(crate) const PORT_VL_OP_DATA: &[Spec] =
    &[PORT_SELECT, COUNTER_SELECT, series(S::PortVLOpData, 32)];

/// Two-bit counters: they saturate at 3.
pub(crate) const PORT_VL_XMIT_FLOW_CTL_UPDATE_ERRORS: &[Spec] = &[
    PORT_SELECT,
    COUNTER_SELECT,
    series(S::PortVLXmitFlowCtlUpdateErrors, 2),
];

pub(crate) const PORT_VL_XMIT_WAIT_COUNTERS: &[Spec] =
    &[PORT_SELECT, COUNTER_SELECT, series(S::PortVLXmitWait, 16)];

pub(crate) const SW_PORT_VL_CONGESTION: &[Spec] = &[
    PORT_SELECT,
    COUNTER_SELECT,
    series(S::SWPortVLCongestion, 16),
];

pub(crate) const PORT_RCV_CON_CTRL: &[Spec] = &[
    PORT_SELECT,
    COUNTER_SELECT,
    ctr(I::PortPktRcvFECN, 32),
    ctr(I::PortPktRcvBECN, 32),
];

pub(crate) const PORT_SL_RCV_FECN: &[Spec] =
    &[PORT_SELECT, COUNTER_SELECT, series(S::PortSLRcvFECN, 32)];

pub(crate) const PORT_SL_RCV_BECN: &[Spec] =
    &[PORT_SELECT, COUNTER_SELECT, series(S::PortSLRcvBECN, 32)];

pub(crate) const PORT_XMIT_CON_CTRL: &[Spec] =
    &[PORT_SELECT, COUNTER_SELECT, ctr(I::PortXmitTimeCong, 32)];

/// VL 0 to 14 only (VL15 is the management VL).
pub(crate) const PORT_VL_XMIT_TIME_CONG: &[Spec] = &[
    PORT_SELECT,
    COUNTER_SELECT,
    series(S::PortVLXmitTimeCong, 32),
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
    layout.iter().find_map(|spec| kind_of(spec, name))
}

/// The kind of `name` if `spec` describes it.
fn kind_of(spec: &Spec, name: &str) -> Option<FieldKind> {
    match *spec {
        One(n, kind) => (n == name).then_some(kind),
        Series(prefix, count, kind) => {
            let index = name.strip_prefix(prefix)?;
            // `Lane01` (or `Lane+1`) is not how libibmad spells `Lane1`:
            // digits only, no leading zero.
            let canonical = index.bytes().all(|b| b.is_ascii_digit())
                && (index == "0" || !index.starts_with('0'));
            let n: u8 = index.parse().ok().filter(|_| canonical)?;
            (n < count).then_some(kind)
        }
    }
}

/// [`kind_in`], and the layout's own spelling of the single field `name`
/// (to key a block's fields by without a copy; `None` for a member of a
/// series and for a name the layout lacks), found in one pass over the
/// layout: the kind is the first spec's that describes the name, the
/// spelling the first single field's of that name.
pub(crate) fn kind_and_spelling_in(
    layout: &[Spec],
    name: &str,
) -> (Option<FieldKind>, Option<&'static str>) {
    let mut kind = None;
    for spec in layout {
        if kind.is_none() {
            kind = kind_of(spec, name);
        }
        if let One(n, _) = *spec {
            if n == name {
                // A single field of that name describes it: the kind is
                // known by now (this spec's, or an earlier one's).
                return (kind, Some(n));
            }
        }
    }
    (kind, None)
}

/// The spelling [`kind_and_spelling_in`] gives, searched on its own: its
/// test oracle.
#[cfg(test)]
pub(crate) fn spelling_in(layout: &[Spec], name: &str) -> Option<&'static str> {
    layout.iter().find_map(|spec| match *spec {
        One(n, _) => (n == name).then_some(n),
        Series(..) => None,
    })
}

/// The fields of `layout` that a block holding `present` (by name) lacks
/// after the last of them, up to the end of the part of the layout that
/// perfquery prints whole (`parts` names where each part that it may leave
/// out begins): a block holding every field up to there lacks nothing.
///
/// Only what comes after the last field present counts: versions of
/// infiniband-diags leave out fields in the middle (no `QP1Dropped` before
/// rdma-core added it) but print each part to its end. A block that stops
/// inside a part was cut there (by the end of a paste, `head`, an elision).
pub(crate) fn missing_after_last(
    layout: &[Spec],
    parts: &[&str],
    present: impl Fn(&str) -> bool,
) -> Vec<String> {
    // Read from the end: the last field present is found with a look-up
    // per field after it (one, in a whole block: nearly every one), and
    // the names after it, up to the nearest part that may be left out, are
    // held only on the way (none in a whole block).
    let mut after: Vec<Cow<'static, str>> = Vec::new();
    for (name, _) in fields(layout).rev() {
        if present(&name) {
            return after.into_iter().rev().map(Cow::into_owned).collect();
        }
        if parts.contains(&&*name) {
            after.clear();
        } else {
            after.push(name);
        }
    }
    Vec::new()
}

/// Where PortCounters' part that perfquery may leave out begins:
/// `PortXmitWait`, which infiniband-diags before rdma-core printed only
/// when CapMask bit 12 (`IB_PM_PC_XMIT_WAIT_SUP`) says the port counts it
/// (perfquery.c, `dump_perfcounters`); its dumps end at `PortRcvPkts`.
pub(crate) const BASIC_OPTIONAL_PARTS: &[&str] = &["PortXmitWait"];

/// Where PortCountersExtended's parts that perfquery may leave out begin:
/// the unicast and multicast counters (CapMask bit 9; older libibmad) and
/// the AdditionalPortCountersExtended error counters from `CounterSelect2`
/// (libibmad before rdma-core did not print them); the data counters
/// before them are always printed.
pub(crate) const EXTENDED_OPTIONAL_PARTS: &[&str] = &["PortUnicastXmitPkts", "CounterSelect2"];

/// How many counters `layout` prints (to size a block's counters once).
pub(crate) fn counter_count(layout: &[Spec]) -> usize {
    layout
        .iter()
        .map(|spec| match *spec {
            One(_, C(_)) => 1,
            Series(_, count, C(_)) => usize::from(count),
            _ => 0,
        })
        .sum()
}

/// Every field name of `layout`, in print order, with its kind.
///
/// A single field's name is borrowed, a series member's made up; no list
/// is built per entry ([`missing_after_last`] asks this of every block).
pub(crate) fn fields(
    layout: &[Spec],
) -> impl DoubleEndedIterator<Item = (Cow<'static, str>, FieldKind)> + '_ {
    layout.iter().flat_map(|spec| {
        let (name, count, kind, series) = match *spec {
            One(name, kind) => (name, 1, kind, false),
            Series(prefix, count, kind) => (prefix, count, kind, true),
        };
        (0..count).map(move |i| {
            let name = if series {
                Cow::Owned(format!("{name}{i}"))
            } else {
                Cow::Borrowed(name)
            };
            (name, kind)
        })
    })
}

/// Counter names of infiniband-diags before 2009 (`perfquery`,
/// `ibcheckerrors`), with the names libibmad has printed since. The fields
/// are the same IBA PortCounters; only the spelling changed.
const OLD_NAMES: &[(&str, I)] = &[
    ("SymbolErrors", I::SymbolErrorCounter),
    ("LinkRecovers", I::LinkErrorRecoveryCounter),
    ("LinkDowned", I::LinkDownedCounter),
    ("RcvErrors", I::PortRcvErrors),
    ("RcvRemotePhysErrors", I::PortRcvRemotePhysicalErrors),
    ("RcvSwRelayErrors", I::PortRcvSwitchRelayErrors),
    ("XmtDiscards", I::PortXmitDiscards),
    ("XmtConstraintErrors", I::PortXmitConstraintErrors),
    ("RcvConstraintErrors", I::PortRcvConstraintErrors),
    ("LinkIntegrityErrors", I::LocalLinkIntegrityErrors),
    ("ExcBufOverrunErrors", I::ExcessiveBufferOverrunErrors),
    ("XmtData", I::PortXmitData),
    ("RcvData", I::PortRcvData),
    ("XmtPkts", I::PortXmitPkts),
    ("RcvPkts", I::PortRcvPkts),
    ("XmtWait", I::PortXmitWait),
];

/// Today's name of a counter printed under its pre-2009 name, if it is one.
#[must_use]
pub fn modern_name(name: &str) -> Option<&'static str> {
    OLD_NAMES
        .iter()
        .find(|(old, _)| *old == name)
        .map(|(_, new)| new.name())
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The one pass finds the kind and spelling the two searches did,
        /// for every layout, on names of every layout, near misses among
        /// them (series members past the end, with leading zeros, cut).
        #[test]
        fn one_pass_finds_what_two_searches_did(
            layout in proptest::sample::select(LAYOUTS.to_vec()),
            other in proptest::sample::select(LAYOUTS.to_vec()),
            pick in 0usize..200,
            cut in 0usize..4,
            suffix in proptest::sample::select(vec!["", "0", "1", "01", "15", "16", "99", "x"]),
        ) {
            let names: Vec<String> = fields(other).map(|(n, _)| n.into_owned()).collect();
            let base = names.get(pick % names.len().max(1)).cloned().unwrap_or_default();
            let base = base.get(..base.len().saturating_sub(cut)).unwrap_or_default();
            let name = format!("{base}{suffix}");
            proptest::prop_assert_eq!(
                kind_and_spelling_in(layout, &name),
                (kind_in(layout, &name), spelling_in(layout, &name))
            );
        }
    }

    #[test]
    fn series_members_are_found_by_their_exact_spelling() {
        assert_eq!(kind_in(PORT_XMIT_DATA_SL, "XmtDataSL15"), Some(C(32)));
        assert_eq!(kind_in(PORT_XMIT_DATA_SL, "XmtDataSL16"), None);
        assert_eq!(kind_in(PORT_XMIT_DATA_SL, "XmtDataSL01"), None);
        assert_eq!(kind_in(PORT_XMIT_DATA_SL, "XmtDataSL+1"), None);
        assert_eq!(kind_in(PORT_XMIT_DATA_SL, "XmtDataSL0"), Some(C(32)));
        assert_eq!(kind_in(PORT_XMIT_DATA_SL, "XmtDataSL"), None);
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

    /// Every layout the attributes use.
    const LAYOUTS: &[&[Spec]] = &[
        PORT_COUNTERS,
        PORT_COUNTERS_EXTENDED,
        PORT_XMIT_DATA_SL,
        PORT_RCV_DATA_SL,
        PORT_XMIT_DISCARD_DETAILS,
        PORT_RCV_ERROR_DETAILS,
        PORT_EXTENDED_SPEEDS,
        PORT_EXTENDED_SPEEDS_RS_FEC,
        PORT_OP_RCV_COUNTERS,
        PORT_FLOW_CTL_COUNTERS,
        PORT_VL_OP_PACKETS,
        PORT_VL_OP_DATA,
        PORT_VL_XMIT_FLOW_CTL_UPDATE_ERRORS,
        PORT_VL_XMIT_WAIT_COUNTERS,
        SW_PORT_VL_CONGESTION,
        PORT_RCV_CON_CTRL,
        PORT_SL_RCV_FECN,
        PORT_SL_RCV_BECN,
        PORT_XMIT_CON_CTRL,
        PORT_VL_XMIT_TIME_CONG,
        PORT_SAMPLES_CONTROL,
    ];

    /// The typed ids and the layouts describe the same counters: every
    /// counter a layout prints has an id, and every InfiniBand id is printed
    /// by some layout (so the enum holds no name no tool prints).
    #[test]
    fn counter_ids_and_layouts_agree() {
        use crate::model::counter_id::{IbCounter, IbSeries, KnownCounter};
        let mut printed = std::collections::HashSet::new();
        for layout in LAYOUTS {
            for (name, kind) in fields(layout) {
                let known = KnownCounter::from_name(&name);
                if matches!(kind, C(_)) {
                    assert!(known.is_some(), "{name} has no counter id");
                    printed.insert(name.into_owned());
                } else {
                    assert!(known.is_none(), "{name} is not a counter but has an id");
                }
            }
        }
        for c in IbCounter::ALL {
            assert!(printed.contains(c.name()), "{} is in no layout", c.name());
        }
        for s in IbSeries::ALL {
            for i in 0..s.count() {
                let name = s.member(i).unwrap().name();
                assert!(printed.contains(name), "{name} is in no layout");
            }
        }
        for (_, modern) in OLD_NAMES {
            assert!(printed.contains(modern.name()));
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
        assert_eq!(counter_count(PORT_EXTENDED_SPEEDS), 38);
        assert_eq!(counter_count(PORT_COUNTERS), 18);
        assert_eq!(counter_count(PORT_SAMPLES_CONTROL), 0);
    }
}
