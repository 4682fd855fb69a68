//! Compact, typed counter ids, and the per-port / per-link set of counters
//! keyed by them.
//!
//! Every counter the `perf_fields` tables (perfquery, ibqueryerrors) or the
//! NVLink parser know is a [`KnownCounter`]: two bytes, `Copy`, spelt as the
//! tool spells it. Rules name counters through the [`IbCounter`],
//! [`IbSeries`] and [`NvCounter`] enums, so a misspelt counter in a rule is a
//! compile error, not a silent miss. Names the tables do not know (a newer
//! tool, a vendor extension, a mangled line) are kept as
//! [`CounterId::Other`] with the spelling as printed: lenient parsers never
//! drop a line.
//!
//! [`Counters`] holds one port's or link's counters as a small vector sorted
//! by name, and serialises exactly as the `BTreeMap<String, Counter>` it
//! replaced: a JSON object with the tool's names in byte order.

use super::Counter;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::OnceLock;

/// Declares the single-name InfiniBand counters: the enum variant *is* the
/// tool's spelling (`stringify!`), so the two cannot drift apart.
macro_rules! ib_counters {
    ($($name:ident),* $(,)?) => {
        /// InfiniBand performance counters printed under one name by
        /// perfquery (libibmad `fields.c`) and ibqueryerrors. Numbered
        /// families (`XmtDataSL0` …) are [`IbSeries`].
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[allow(missing_docs, clippy::upper_case_acronyms)]
        pub enum IbCounter {
            $($name,)*
        }

        impl IbCounter {
            /// Every variant, in declaration order.
            pub const ALL: &'static [Self] = &[$(Self::$name,)*];

            /// The name as the tool prints it.
            #[must_use]
            pub const fn name(self) -> &'static str {
                match self {
                    $(Self::$name => stringify!($name),)*
                }
            }

            /// The compact id (usable in constants).
            #[must_use]
            pub const fn id(self) -> KnownCounter {
                KnownCounter::at(self as usize)
            }
        }
    };
}

ib_counters! {
    SymbolErrorCounter,
    LinkErrorRecoveryCounter,
    LinkDownedCounter,
    PortRcvErrors,
    PortRcvRemotePhysicalErrors,
    PortRcvSwitchRelayErrors,
    PortXmitDiscards,
    PortXmitConstraintErrors,
    PortRcvConstraintErrors,
    LocalLinkIntegrityErrors,
    ExcessiveBufferOverrunErrors,
    QP1Dropped,
    VL15Dropped,
    PortXmitData,
    PortRcvData,
    PortXmitPkts,
    PortRcvPkts,
    PortXmitWait,
    PortUnicastXmitPkts,
    PortUnicastRcvPkts,
    PortMulticastXmitPkts,
    PortMulticastRcvPkts,
    PortInactiveDiscards,
    PortNeighborMTUDiscards,
    PortSwLifetimeLimitDiscards,
    PortSwHOQLifetimeLimitDiscards,
    PortLocalPhysicalErrors,
    PortMalformedPktErrors,
    PortBufferOverrunErrors,
    PortDLIDMappingErrors,
    PortVLMappingErrors,
    PortLoopingErrors,
    SyncHeaderErrorCounter,
    UnknownBlockCounter,
    PortFECCorrectableBlockCtr,
    PortFECUncorrectableBlockCtr,
    PortFECCorrectedSymbolCtr,
    PortOpRcvPkts,
    PortOpRcvData,
    PortXmitFlowPkts,
    PortRcvFlowPkts,
    PortPktRcvFECN,
    PortPktRcvBECN,
    PortXmitTimeCong,
}

/// Declares the numbered InfiniBand counter families: prefix (the variant's
/// spelling) and number of members, numbered from 0.
macro_rules! ib_series {
    ($($name:ident: $count:literal),* $(,)?) => {
        /// Numbered InfiniBand counter families: `XmtDataSL0` …
        /// `XmtDataSL15`, per-lane FEC counters, per-VL and per-SL counters.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[allow(missing_docs, clippy::upper_case_acronyms)]
        pub enum IbSeries {
            $($name,)*
        }

        impl IbSeries {
            /// Every variant, in declaration order.
            pub const ALL: &'static [Self] = &[$(Self::$name,)*];

            /// The prefix the members' names share (`XmtDataSL`).
            #[must_use]
            pub const fn prefix(self) -> &'static str {
                match self {
                    $(Self::$name => stringify!($name),)*
                }
            }

            /// How many members the family has (numbered from 0).
            #[must_use]
            pub const fn count(self) -> u8 {
                match self {
                    $(Self::$name => $count,)*
                }
            }
        }
    };
}

ib_series! {
    XmtDataSL: 16,
    RcvDataSL: 16,
    ErrorDetectionCounterLane: 12,
    FECCorrectableBlockCtrLane: 12,
    FECUncorrectableBlockCtrLane: 12,
    FECCorrectableSymbolCtrLane: 12,
    PortVLOpPackets: 16,
    PortVLOpData: 16,
    PortVLXmitFlowCtlUpdateErrors: 16,
    PortVLXmitWait: 16,
    SWPortVLCongestion: 16,
    PortSLRcvFECN: 16,
    PortSLRcvBECN: 16,
    PortVLXmitTimeCong: 15,
}

impl IbSeries {
    /// Member `index` (`XmtDataSL.member(3)` is `XmtDataSL3`); `None` past
    /// the family's end.
    #[must_use]
    pub fn member(self, index: u8) -> Option<KnownCounter> {
        (index < self.count()).then(|| {
            let before: usize = Self::ALL
                .iter()
                .take_while(|s| **s != self)
                .map(|s| usize::from(s.count()))
                .sum();
            KnownCounter::at(SERIES_BASE + before + usize::from(index))
        })
    }
}

/// Declares the NVLink counters with the snake_case keys the parser gives
/// them (the model's documented spelling).
macro_rules! nv_counters {
    ($($(#[doc = $doc:literal])* $variant:ident = $name:literal),* $(,)?) => {
        /// NVLink counters, keyed as the model spells them (`nvidia-smi
        /// nvlink` labels snake_cased, `_kib` for throughput).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum NvCounter {
            $($(#[doc = $doc])* $variant,)*
        }

        impl NvCounter {
            /// Every variant, in declaration order.
            pub const ALL: &'static [Self] = &[$(Self::$variant,)*];

            /// The model's key (`replay_errors`).
            #[must_use]
            pub const fn name(self) -> &'static str {
                match self {
                    $(Self::$variant => $name,)*
                }
            }

            /// The compact id (usable in constants).
            #[must_use]
            pub const fn id(self) -> KnownCounter {
                KnownCounter::at(NV_BASE + self as usize)
            }
        }
    };
}

nv_counters! {
    /// `-e`: `Replay Errors`.
    ReplayErrors = "replay_errors",
    /// `-e`: `Recovery Errors`.
    RecoveryErrors = "recovery_errors",
    /// `-e`: `CRC Errors`.
    CrcErrors = "crc_errors",
    /// `CRC FLIT Errors` (DCGM keeps FLIT and data CRC apart; unverified in nvidia-smi).
    CrcFlitErrors = "crc_flit_errors",
    /// `CRC Data Errors` (as above).
    CrcDataErrors = "crc_data_errors",
    /// `-gt d`: `Data Tx`, KiB.
    DataTxKib = "data_tx_kib",
    /// `-gt d`: `Data Rx`, KiB.
    DataRxKib = "data_rx_kib",
    /// `-gt r`: `Raw Tx`, KiB.
    RawTxKib = "raw_tx_kib",
    /// `-gt r`: `Raw Rx`, KiB.
    RawRxKib = "raw_rx_kib",
    /// `-g 0`: `Rx0`, KBytes taken as KiB.
    Rx0Kib = "rx0_kib",
    /// `-g 0`: `Tx0`.
    Tx0Kib = "tx0_kib",
    /// `-g 1`: `Rx1`.
    Rx1Kib = "rx1_kib",
    /// `-g 1`: `Tx1`.
    Tx1Kib = "tx1_kib",
}

const NV_BASE: usize = IbCounter::ALL.len();
const SERIES_BASE: usize = NV_BASE + NvCounter::ALL.len();

/// How many names the tables know: the single counters, the NVLink ones and
/// every member of every series.
#[allow(clippy::indexing_slicing)] // evaluated by the compiler: a bad index fails the build
const KNOWN: usize = {
    let mut n = SERIES_BASE;
    let mut s = 0;
    while s < IbSeries::ALL.len() {
        n += IbSeries::ALL[s].count() as usize;
        s += 1;
    }
    n
};

/// The name at table index `index` (declaration order: single counters,
/// NVLink counters, series members) as a prefix and, for a series member,
/// its number (`u8::MAX` for none): what [`name_byte`] reads.
#[allow(clippy::indexing_slicing)] // evaluated by the compiler: a bad index fails the build
const fn name_parts(index: usize) -> (&'static [u8], u8) {
    if index < NV_BASE {
        return (IbCounter::ALL[index].name().as_bytes(), u8::MAX);
    }
    if index < SERIES_BASE {
        return (NvCounter::ALL[index - NV_BASE].name().as_bytes(), u8::MAX);
    }
    let mut rest = index - SERIES_BASE;
    let mut s = 0;
    while s < IbSeries::ALL.len() {
        let count = IbSeries::ALL[s].count() as usize;
        if rest < count {
            #[allow(clippy::cast_possible_truncation)]
            return (IbSeries::ALL[s].prefix().as_bytes(), rest as u8);
        }
        rest -= count;
        s += 1;
    }
    (b"", u8::MAX)
}

/// Byte `at` of the name `parts` spells (prefix, then the member's number
/// in decimal), or `-1` past its end, which orders a name before any name
/// it is a prefix of, as byte order does.
#[allow(clippy::indexing_slicing)] // evaluated by the compiler: a bad index fails the build
const fn name_byte(parts: (&'static [u8], u8), at: usize) -> i16 {
    let (prefix, member) = parts;
    if at < prefix.len() {
        return prefix[at] as i16;
    }
    if member == u8::MAX {
        return -1;
    }
    let digit = at - prefix.len();
    let (digits, value) = if member < 10 {
        (1, member)
    } else {
        (2, member)
    };
    if digit >= digits {
        return -1;
    }
    let d = if digits == 2 && digit == 0 {
        value / 10
    } else {
        value % 10
    };
    (b'0' + d) as i16
}

/// Whether the name at table index `a` sorts before the one at `b` (byte
/// order, as the string-keyed maps had it).
const fn name_before(a: usize, b: usize) -> bool {
    let (pa, pb) = (name_parts(a), name_parts(b));
    let mut at = 0;
    loop {
        let (x, y) = (name_byte(pa, at), name_byte(pb, at));
        if x != y {
            return x < y;
        }
        if x < 0 {
            return false;
        }
        at += 1;
    }
}

/// `n`, or [`KNOWN`] if that is smaller (`Ord::min` is not `const`).
const fn at_most_known(n: usize) -> usize {
    if n < KNOWN {
        n
    } else {
        KNOWN
    }
}

/// Table indices in name order: a bottom-up merge sort, run by the
/// compiler (a few thousand name comparisons).
#[allow(clippy::indexing_slicing)] // evaluated by the compiler: a bad index fails the build
const ORDER: [u16; KNOWN] = {
    let mut a = [0_u16; KNOWN];
    let mut i = 0;
    while i < KNOWN {
        #[allow(clippy::cast_possible_truncation)]
        {
            a[i] = i as u16;
        }
        i += 1;
    }
    let mut b = [0_u16; KNOWN];
    let mut width = 1;
    while width < KNOWN {
        let mut lo = 0;
        while lo < KNOWN {
            let (mid, hi) = (at_most_known(lo + width), at_most_known(lo + 2 * width));
            let (mut l, mut r, mut o) = (lo, mid, lo);
            while o < hi {
                if l < mid && (r >= hi || !name_before(a[r] as usize, a[l] as usize)) {
                    b[o] = a[l];
                    l += 1;
                } else {
                    b[o] = a[r];
                    r += 1;
                }
                o += 1;
            }
            lo = hi;
        }
        a = b;
        width *= 2;
    }
    a
};

/// Each table index's place in [`ORDER`]: the id of the counter.
#[allow(clippy::indexing_slicing)] // evaluated by the compiler: a bad index fails the build
const RANK: [u16; KNOWN] = {
    let mut rank = [0_u16; KNOWN];
    let mut i = 0;
    while i < KNOWN {
        #[allow(clippy::cast_possible_truncation)]
        {
            rank[ORDER[i] as usize] = i as u16;
        }
        i += 1;
    }
    rank
};

/// A counter the tables know, two bytes: its name's place among all known
/// names in byte order. Two known ids compare as their names do without
/// reading a table ([`Counters`] keeps its entries in name order, and every
/// counter line of a dump inserts one; every rule's look-up searches them).
/// So `Ord` orders known counters as their names do.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KnownCounter(u16);

impl KnownCounter {
    /// The counter at table index `index` (declaration order).
    #[allow(clippy::indexing_slicing)] // guarded; `<[T]>::get` is not const
    const fn at(index: usize) -> Self {
        Self(if index < KNOWN { RANK[index] } else { u16::MAX })
    }

    /// The counter printed as `name`, if the tables know it.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        by_name().get(name).copied()
    }

    /// The name as the tool prints it.
    #[must_use]
    pub fn name(self) -> &'static str {
        names().get(usize::from(self.0)).map_or("", String::as_str)
    }

    /// Every counter the tables know, in table order.
    pub fn all() -> impl Iterator<Item = Self> {
        (0..KNOWN).map(Self::at)
    }

    /// This counter's place among all known names in byte order: the id.
    #[inline]
    const fn rank(self) -> u16 {
        self.0
    }
}

impl fmt::Debug for KnownCounter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl From<IbCounter> for KnownCounter {
    fn from(c: IbCounter) -> Self {
        c.id()
    }
}

impl From<NvCounter> for KnownCounter {
    fn from(c: NvCounter) -> Self {
        c.id()
    }
}

impl KnownCounter {
    /// The compact id itself (so rule declarations may list any id).
    #[must_use]
    pub const fn id(self) -> Self {
        self
    }
}

/// Every known name, by id (name order). Built once: the series members'
/// names are formatted here, so [`KnownCounter::name`] never allocates.
fn names() -> &'static [String] {
    static NAMES: OnceLock<Vec<String>> = OnceLock::new();
    NAMES.get_or_init(|| {
        let mut names: Vec<String> = IbCounter::ALL.iter().map(|c| c.name().to_owned()).collect();
        names.extend(NvCounter::ALL.iter().map(|c| c.name().to_owned()));
        for s in IbSeries::ALL {
            names.extend((0..s.count()).map(|i| format!("{}{i}", s.prefix())));
        }
        ORDER
            .iter()
            .map(|&i| names.get(usize::from(i)).cloned().unwrap_or_default())
            .collect()
    })
}

/// The hash of a counter name: its length and its first and last eight
/// bytes, mixed. Every counter line of every dump pays for one look-up, and
/// byte-at-a-time FNV showed in the fleet profile. The keys are the fixed
/// table of names this crate wrote, so names that share a hash only cost a
/// comparison each (at most the table's size), never a blow-up.
#[derive(Default)]
struct NameHasher(u64);

impl std::hash::Hasher for NameHasher {
    fn finish(&self) -> u64 {
        // murmur3's finaliser: every input bit reaches the low bits (the
        // bucket) and the high ones (hashbrown's tag).
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    }

    fn write(&mut self, bytes: &[u8]) {
        let word = |part: &[u8]| {
            let mut w = [0_u8; 8];
            for (slot, b) in w.iter_mut().zip(part) {
                *slot = *b;
            }
            u64::from_le_bytes(w)
        };
        let head = word(bytes);
        let tail = word(
            bytes
                .get(bytes.len().saturating_sub(8)..)
                .unwrap_or_default(),
        );
        let mix = |h: u64, w: u64| (h.rotate_left(23) ^ w).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 = mix(mix(mix(self.0, bytes.len() as u64), head), tail);
    }
}

type ByName = HashMap<&'static str, KnownCounter, std::hash::BuildHasherDefault<NameHasher>>;

/// The reverse of [`names`].
fn by_name() -> &'static ByName {
    static BY_NAME: OnceLock<ByName> = OnceLock::new();
    BY_NAME.get_or_init(|| {
        names()
            .iter()
            .zip(0_u16..)
            .map(|(n, id)| (n.as_str(), KnownCounter(id)))
            .collect()
    })
}

/// A counter's identity: known to the tables (compact), or kept by the
/// name the tool printed.
#[derive(Clone, PartialEq, Eq, Hash)]
pub enum CounterId {
    /// In the perf_fields or NVLink tables.
    Known(KnownCounter),
    /// Any other name, spelt as printed. Never a name the tables know
    /// (construction through [`CounterId::from_name`] ensures it).
    Other(Box<str>),
}

impl CounterId {
    /// The id of `name`: known when the tables have it, else kept as is.
    #[must_use]
    pub fn from_name(name: &str) -> Self {
        KnownCounter::from_name(name).map_or_else(|| Self::Other(name.into()), Self::Known)
    }

    /// The name as the tool prints it (the key in JSON).
    #[must_use]
    pub fn name(&self) -> &str {
        match self {
            Self::Known(k) => k.name(),
            Self::Other(name) => name,
        }
    }

    /// The known counter, if it is one.
    #[must_use]
    pub fn known(&self) -> Option<KnownCounter> {
        match self {
            Self::Known(k) => Some(*k),
            Self::Other(_) => None,
        }
    }
}

impl fmt::Debug for CounterId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.name(), f)
    }
}

impl fmt::Display for CounterId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl From<KnownCounter> for CounterId {
    fn from(k: KnownCounter) -> Self {
        Self::Known(k)
    }
}

impl From<IbCounter> for CounterId {
    fn from(c: IbCounter) -> Self {
        Self::Known(c.into())
    }
}

impl From<NvCounter> for CounterId {
    fn from(c: NvCounter) -> Self {
        Self::Known(c.into())
    }
}

impl From<&str> for CounterId {
    fn from(name: &str) -> Self {
        Self::from_name(name)
    }
}

impl From<String> for CounterId {
    fn from(name: String) -> Self {
        KnownCounter::from_name(&name)
            .map_or_else(|| Self::Other(name.into_boxed_str()), Self::Known)
    }
}

impl PartialOrd for CounterId {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// By name, as the string-keyed maps ordered them.
impl Ord for CounterId {
    /// Inlined: every counter line's insert compares ids, nearly always two
    /// known ones, whose comparison is of their two bytes.
    #[inline]
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        match (self, other) {
            // Known names are unique, so their ranks order them as their
            // names do.
            (Self::Known(a), Self::Known(b)) => a.rank().cmp(&b.rank()),
            _ => self.name().cmp(other.name()),
        }
    }
}

/// Anything a counter can be looked up by: a typed id, or a name.
pub trait CounterKey {
    /// Position of the counter in `entries` (sorted by name).
    fn position(&self, entries: &[(CounterId, Counter)]) -> Option<usize>;
}

impl CounterKey for KnownCounter {
    /// A binary search comparing ids alone: every rule's look-up of a
    /// counter is one, on every port and link.
    #[inline]
    fn position(&self, entries: &[(CounterId, Counter)]) -> Option<usize> {
        entries
            .binary_search_by(|(id, _)| match id {
                CounterId::Known(k) => k.0.cmp(&self.0),
                CounterId::Other(name) => (**name).cmp(self.name()),
            })
            .ok()
    }
}

impl CounterKey for IbCounter {
    fn position(&self, entries: &[(CounterId, Counter)]) -> Option<usize> {
        KnownCounter::from(*self).position(entries)
    }
}

impl CounterKey for NvCounter {
    fn position(&self, entries: &[(CounterId, Counter)]) -> Option<usize> {
        KnownCounter::from(*self).position(entries)
    }
}

impl CounterKey for CounterId {
    fn position(&self, entries: &[(CounterId, Counter)]) -> Option<usize> {
        match self {
            Self::Known(k) => k.position(entries),
            Self::Other(name) => name.as_ref().position(entries),
        }
    }
}

impl CounterKey for str {
    fn position(&self, entries: &[(CounterId, Counter)]) -> Option<usize> {
        entries.binary_search_by(|(id, _)| id.name().cmp(self)).ok()
    }
}

impl CounterKey for String {
    fn position(&self, entries: &[(CounterId, Counter)]) -> Option<usize> {
        self.as_str().position(entries)
    }
}

impl<K: CounterKey + ?Sized> CounterKey for &K {
    fn position(&self, entries: &[(CounterId, Counter)]) -> Option<usize> {
        (**self).position(entries)
    }
}

/// One port's or link's counters, by id: a vector sorted by name (a port
/// has a few dozen at most), serialised as a map from the tool's names.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Counters {
    entries: Vec<(CounterId, Counter)>,
}

impl Counters {
    /// No counters.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            entries: Vec::new(),
        }
    }

    /// No counters, with room for `n`.
    #[must_use]
    pub fn with_capacity(n: usize) -> Self {
        Self {
            entries: Vec::with_capacity(n),
        }
    }

    /// Makes room for exactly `additional` more counters (a parser that
    /// knows how many a record will hold allocates once, without spare).
    pub fn reserve_exact(&mut self, additional: usize) {
        self.entries.reserve_exact(additional);
    }

    /// The counter `key` names (an id or a name), if present.
    #[must_use]
    pub fn get<K: CounterKey>(&self, key: K) -> Option<&Counter> {
        let i = key.position(&self.entries)?;
        self.entries.get(i).map(|(_, c)| c)
    }

    /// The counter with its id.
    #[must_use]
    pub fn get_key_value<K: CounterKey>(&self, key: K) -> Option<(&CounterId, &Counter)> {
        let i = key.position(&self.entries)?;
        self.entries.get(i).map(|(id, c)| (id, c))
    }

    /// Whether the counter is present.
    #[must_use]
    pub fn contains_key<K: CounterKey>(&self, key: K) -> bool {
        key.position(&self.entries).is_some()
    }

    /// Sets a counter; returns the value it replaced.
    ///
    /// The two usual places are tested here, inlined into every caller
    /// (the call cost as much as the insert, and every counter line of a
    /// dump makes one; a plain `#[inline]` was not taken): tools print many
    /// counters in name order, and appending needs one comparison with the
    /// last entry, not a search; others print them in reverse name order
    /// (`nvidia-smi nvlink -e`: Replay, Recovery, CRC), and a counter
    /// before the first needs one comparison more.
    #[inline(always)]
    pub fn insert(&mut self, id: impl Into<CounterId>, counter: Counter) -> Option<Counter> {
        let id = id.into();
        if self
            .entries
            .last()
            .is_none_or(|(last, _)| last.cmp(&id).is_lt())
        {
            self.entries.push((id, counter));
            return None;
        }
        if self
            .entries
            .first()
            .is_some_and(|(first, _)| first.cmp(&id).is_gt())
        {
            self.entries.insert(0, (id, counter));
            return None;
        }
        self.insert_within(id, counter)
    }

    /// [`Counters::insert`] of a counter that sorts neither after the last
    /// entry nor before the first: a search.
    #[inline(never)]
    fn insert_within(&mut self, id: CounterId, counter: Counter) -> Option<Counter> {
        let at = self.entries.binary_search_by(|(have, _)| have.cmp(&id));
        match at {
            Ok(i) => self
                .entries
                .get_mut(i)
                .map(|(_, c)| std::mem::replace(c, counter)),
            Err(i) => {
                self.entries.insert(i, (id, counter));
                None
            }
        }
    }

    /// Ids and counters, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&CounterId, &Counter)> + '_ {
        self.entries.iter().map(|(id, c)| (id, c))
    }

    /// The names, in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> + '_ {
        self.entries.iter().map(|(id, _)| id.name())
    }

    /// The counters, in name order.
    pub fn values(&self) -> impl Iterator<Item = &Counter> + '_ {
        self.entries.iter().map(|(_, c)| c)
    }

    /// How many counters.
    #[must_use]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when there are none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Heap bytes held (entries and unknown names), for memory estimates.
    #[must_use]
    pub fn heap_bytes(&self) -> usize {
        self.entries.capacity() * std::mem::size_of::<(CounterId, Counter)>()
            + self
                .entries
                .iter()
                .map(|(id, _)| match id {
                    CounterId::Other(name) => name.len(),
                    CounterId::Known(_) => 0,
                })
                .sum::<usize>()
    }
}

impl<'a> IntoIterator for &'a Counters {
    type Item = (&'a CounterId, &'a Counter);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (CounterId, Counter)>,
        fn(&'a (CounterId, Counter)) -> (&'a CounterId, &'a Counter),
    >;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter().map(|(id, c)| (id, c))
    }
}

impl<K: Into<CounterId>> FromIterator<(K, Counter)> for Counters {
    fn from_iter<I: IntoIterator<Item = (K, Counter)>>(iter: I) -> Self {
        let mut out = Self::new();
        for (k, c) in iter {
            out.insert(k, c);
        }
        out
    }
}

impl std::ops::Index<&str> for Counters {
    type Output = Counter;
    /// Panics when the counter is absent, as a map's index does.
    #[allow(clippy::panic)]
    fn index(&self, name: &str) -> &Counter {
        self.get(name)
            .unwrap_or_else(|| panic!("no counter named {name}"))
    }
}

impl fmt::Debug for Counters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl Serialize for Counters {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.entries.iter().map(|(id, c)| (id.name(), c)))
    }
}

impl<'de> Deserialize<'de> for Counters {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let map = BTreeMap::<String, Counter>::deserialize(deserializer)?;
        Ok(map.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_map_to_ids_and_back() {
        for k in KnownCounter::all() {
            assert_eq!(KnownCounter::from_name(k.name()), Some(k), "{}", k.name());
        }
        assert_eq!(
            KnownCounter::from_name("SymbolErrorCounter"),
            Some(IbCounter::SymbolErrorCounter.into())
        );
        assert_eq!(
            KnownCounter::from_name("replay_errors"),
            Some(NvCounter::ReplayErrors.into())
        );
        assert_eq!(
            KnownCounter::from_name("XmtDataSL15"),
            IbSeries::XmtDataSL.member(15)
        );
        assert_eq!(IbSeries::XmtDataSL.member(16), None);
        assert_eq!(KnownCounter::from_name("XmtDataSL16"), None);
        assert_eq!(
            IbSeries::PortVLXmitTimeCong
                .member(14)
                .map(KnownCounter::name),
            Some("PortVLXmitTimeCong14")
        );
        assert!(matches!(
            CounterId::from_name("WeirdCount"),
            CounterId::Other(n) if &*n == "WeirdCount"
        ));
    }

    /// The ids the compiler ranked are the places of the names, formatted
    /// at run time, in byte order: every table index's name is the one its
    /// id names, and the ids, taken in name order, count 0, 1, 2 ….
    #[test]
    fn ids_are_places_in_name_order() {
        let mut table: Vec<String> = IbCounter::ALL.iter().map(|c| c.name().to_owned()).collect();
        table.extend(NvCounter::ALL.iter().map(|c| c.name().to_owned()));
        for s in IbSeries::ALL {
            table.extend((0..s.count()).map(|i| format!("{}{i}", s.prefix())));
        }
        assert_eq!(table.len(), KNOWN);
        for (i, name) in table.iter().enumerate() {
            assert_eq!(KnownCounter::at(i).name(), name.as_str());
        }
        let mut sorted = table.clone();
        sorted.sort();
        for (id, name) in sorted.iter().enumerate() {
            assert_eq!(
                usize::from(KnownCounter::from_name(name).map_or(u16::MAX, |k| k.0)),
                id
            );
        }
        for c in IbCounter::ALL {
            assert_eq!(c.id().name(), c.name());
        }
        for c in NvCounter::ALL {
            assert_eq!(c.id().name(), c.name());
        }
    }

    #[test]
    fn ranks_order_known_ids_as_their_names() {
        let mut by_rank: Vec<KnownCounter> = KnownCounter::all().collect();
        by_rank.sort_by_key(|k| k.rank());
        let mut by_ord: Vec<KnownCounter> = KnownCounter::all().collect();
        by_ord.sort();
        assert_eq!(by_ord, by_rank);
        let mut by_name: Vec<KnownCounter> = KnownCounter::all().collect();
        by_name.sort_by_key(|k| k.name());
        assert_eq!(by_rank, by_name);
    }

    /// Names a port or link may hold: known ones of every table, and
    /// unknown ones that sort between, before and after them.
    fn any_name() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let known: Vec<String> = KnownCounter::all().map(|k| k.name().to_owned()).collect();
        prop_oneof![
            proptest::sample::select(known),
            "(Port|XmtData|crc_|raw_|Zeta|A|z)[A-Za-z0-9_]{0,4}",
        ]
    }

    proptest::proptest! {
        /// [`Counters`] behaves as the `BTreeMap<String, Counter>` it
        /// replaced, whatever the order and mix of names.
        #[test]
        fn counters_behave_as_a_map_of_names(
            inserts in proptest::collection::vec((any_name(), 0u64..5), 0..60),
            probes in proptest::collection::vec(any_name(), 0..20),
        ) {
            let mut ours = Counters::new();
            let mut map = BTreeMap::new();
            for (name, value) in &inserts {
                let c = Counter::unknown_width(*value);
                proptest::prop_assert_eq!(ours.insert(name.as_str(), c), map.insert(name.clone(), c));
            }
            proptest::prop_assert_eq!(ours.keys().collect::<Vec<_>>(), map.keys().map(String::as_str).collect::<Vec<_>>());
            for name in probes.iter().chain(map.keys()) {
                let id = CounterId::from_name(name);
                proptest::prop_assert_eq!(ours.get(name.as_str()), map.get(name));
                proptest::prop_assert_eq!(ours.get(&id), map.get(name));
                if let Some(k) = id.known() {
                    proptest::prop_assert_eq!(ours.get(k), map.get(name));
                }
            }
            proptest::prop_assert_eq!(
                serde_json::to_string(&ours).ok(),
                serde_json::to_string(&map).ok()
            );
        }
    }

    #[test]
    fn ids_are_compact() {
        assert_eq!(std::mem::size_of::<KnownCounter>(), 2);
        assert!(std::mem::size_of::<CounterId>() <= 16);
    }

    #[test]
    fn counters_keep_name_order_and_serialise_as_a_map() {
        let mut c = Counters::new();
        c.insert(IbCounter::PortXmitWait, Counter::new(5, 32));
        c.insert("Zeta", Counter::unknown_width(1));
        c.insert("PortRcvData", Counter::new(7, 32));
        assert_eq!(
            c.insert("PortXmitWait", Counter::new(6, 32)),
            Some(Counter::new(5, 32))
        );
        let names: Vec<&str> = c.keys().collect();
        assert_eq!(names, ["PortRcvData", "PortXmitWait", "Zeta"]);
        assert_eq!(c.get(IbCounter::PortXmitWait).map(|x| x.value), Some(6));
        assert_eq!(c.get("Zeta").map(|x| x.value), Some(1));
        assert!(c.get(IbCounter::SymbolErrorCounter).is_none());
        let json = serde_json::to_string(&c).unwrap();
        let mut map = BTreeMap::new();
        map.insert("Zeta", Counter::unknown_width(1));
        map.insert("PortXmitWait", Counter::new(6, 32));
        map.insert("PortRcvData", Counter::new(7, 32));
        assert_eq!(json, serde_json::to_string(&map).unwrap());
        let back: Counters = serde_json::from_str(&json).unwrap();
        assert_eq!(back, c);
    }
}
