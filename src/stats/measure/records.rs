//! The measurement records, as the JSON report carries them: one type per
//! kind of measurement, every one naming its subject and where it came from.

use super::super::ber::Verdict;
use super::super::robust::{ScaleMethod, Summary};
use super::super::sample::{CounterUnit, Direction, Layer, Role, Subject};
use super::super::CounterSource;
use super::fmt_num;
use crate::input::Document;
use crate::parse::Kind;
use crate::span::LineSpan;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// One input: a document and, in batch mode, its file's modification time.
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    /// The parsed input.
    pub document: &'a Document,
    /// Modification time of the file, seconds since the Unix epoch; used as
    /// the snapshot time when the text itself carries none.
    pub modified_unix: Option<f64>,
}

/// Everything measured, with units in the field names.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
pub struct Measurements {
    /// Every section that carried counters, in input order.
    pub snapshots: Vec<SnapshotInfo>,
    /// Link speeds read from the input (ibstat, iblinkinfo, `nvidia-smi nvlink -s`),
    /// the denominators of utilisation and BER.
    pub link_capacities: Vec<LinkCapacity>,
    /// Every counter read in two successive snapshots.
    pub counter_rates: Vec<CounterRate>,
    /// Data carried per link and direction.
    pub throughput: Vec<Throughput>,
    /// Counters stuck at their maximum.
    pub saturated_counters: Vec<SaturatedCounter>,
    /// Bit error rates with confidence intervals.
    pub bit_error_rates: Vec<BitErrorRate>,
    /// Peer groups compared with robust statistics (groups where every value is 0 are left out).
    pub peer_groups: Vec<PeerGroup>,
    /// How evenly traffic spreads over the links of a GPU or the ports of a device.
    pub traffic_balance: Vec<TrafficBalance>,
    /// Growth over three or more snapshots.
    pub trends: Vec<CounterTrend>,
    /// What could not be computed, and why.
    pub notes: Vec<String>,
}

impl Measurements {
    /// Moves every snapshot id up by `snapshots` and every input index up
    /// by `inputs`: a unit's measurements placed after the units before it,
    /// so a fleet measured unit by unit numbers its snapshots as one run.
    pub fn shift(&mut self, snapshots: usize, inputs: usize) {
        if snapshots == 0 && inputs == 0 {
            return;
        }
        for s in &mut self.snapshots {
            s.id += snapshots;
            s.input += inputs;
        }
        for r in &mut self.counter_rates {
            r.from_snapshot += snapshots;
            r.to_snapshot += snapshots;
        }
        for t in &mut self.throughput {
            t.from_snapshot += snapshots;
            t.to_snapshot += snapshots;
        }
        for s in &mut self.saturated_counters {
            s.snapshot += snapshots;
        }
        for b in &mut self.bit_error_rates {
            b.from_snapshot += snapshots;
            b.to_snapshot += snapshots;
        }
        for b in &mut self.traffic_balance {
            b.from_snapshot += snapshots;
            b.to_snapshot += snapshots;
        }
        for t in &mut self.trends {
            for s in &mut t.snapshots {
                *s += snapshots;
            }
        }
    }

    /// Appends another unit's records (already shifted) after these.
    pub fn append(&mut self, other: Measurements) {
        self.snapshots.extend(other.snapshots);
        self.link_capacities.extend(other.link_capacities);
        self.counter_rates.extend(other.counter_rates);
        self.throughput.extend(other.throughput);
        self.saturated_counters.extend(other.saturated_counters);
        self.bit_error_rates.extend(other.bit_error_rates);
        self.peer_groups.extend(other.peer_groups);
        self.traffic_balance.extend(other.traffic_balance);
        self.trends.extend(other.trends);
        self.notes.extend(other.notes);
    }
}

/// A section that carried counters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
pub struct SnapshotInfo {
    /// Position in [`Measurements::snapshots`]; referenced by other records.
    pub id: usize,
    /// Which input (0-based, in the order given).
    pub input: usize,
    /// Tool.
    #[cfg_attr(feature = "wasm", tsify(type = "string"))]
    pub kind: Kind,
    /// Host, if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// File name, if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Lines of the section.
    #[serde(flatten)]
    pub span: LineSpan,
    /// Time of the snapshot in seconds: Unix time when `time_is_unix`, else
    /// the host's wall clock read as UTC, or the seconds of `sleep` into
    /// the command line that printed it (`time_source` says which).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_seconds: Option<f64>,
    /// Whether `time_seconds` is an absolute Unix time.
    pub time_is_unix: bool,
    /// Where the time came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_source: Option<String>,
}

/// The data rate of one link or port, per direction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
pub struct LinkCapacity {
    /// The link or port (InfiniBand ports by LID are fabric-wide: no host).
    pub subject: Subject,
    /// Gb/s per direction, line code removed.
    pub gbit_per_second: f64,
    /// Where it was read and how it was converted: shared by the links
    /// read at one speed (a host's NVLinks mostly are).
    pub source: Arc<str>,
    /// Lines it was read from.
    pub lines: LineSpan,
}

/// Whether a rate could be taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
pub enum RateStatus {
    /// Rate measured.
    Measured,
    /// The counter went down: reset or a different port. No rate.
    CounterReset,
    /// The later reading is saturated: growth is a lower bound, rate unknown.
    Saturated,
    /// No interval is known (no times in the input, no `--interval`).
    NoInterval,
}

/// One counter between two snapshots.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
pub struct CounterRate {
    /// Whose counter: shared by the subject's rates (and their throughput
    /// and bit error rates), not copied per rate.
    pub subject: Arc<Subject>,
    /// Counter set (`perfquery Port extended`, `nvidia-smi nvlink`).
    #[cfg_attr(feature = "wasm", tsify(type = "string"))]
    pub source: CounterSource,
    /// Counter name: shared by the counter's rates of the unit.
    pub counter: Arc<str>,
    /// Unit of one count.
    pub unit: CounterUnit,
    /// Earlier snapshot id.
    pub from_snapshot: usize,
    /// Later snapshot id.
    pub to_snapshot: usize,
    /// Lines of the two readings.
    pub lines: [LineSpan; 2],
    /// Earlier reading.
    pub before: u64,
    /// Later reading.
    pub after: u64,
    /// Seconds between the readings, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval_seconds: Option<f64>,
    /// Where the interval came from.
    #[cfg_attr(feature = "wasm", tsify(type = "string"))]
    pub interval_source: IntervalSource,
    /// Outcome.
    pub status: RateStatus,
    /// `after − before` (a lower bound when saturated); absent after a reset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub increase: Option<u64>,
    /// Counts (in `unit`) per second.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts_per_second: Option<f64>,
    /// How it was computed, in words (`(after − before) / 60 s`): kept as
    /// the numbers it is made of and written when the rate is (see
    /// [`Derivation`]).
    #[cfg_attr(feature = "wasm", tsify(type = "string"))]
    pub derivation: Derivation,
    #[serde(skip)]
    pub(super) role: Role,
    #[serde(skip)]
    pub(super) max: Option<u64>,
}

impl CounterRate {
    /// Whether this rate is news that peers are compared by: growth
    /// measured over a known interval, of a counter compared across peers
    /// (error and congestion counters, not traffic). A series with such a
    /// rate is compared by it alone, not by its count since the last reset
    /// as well: the count is history that differs with uptime and traffic
    /// (on a busy, year-old fleet one port's lifetime `PortXmitWait` is
    /// routinely 30× its sibling's), and it would call "outlier" a port
    /// whose counter the two snapshots show standing still.
    #[must_use]
    pub fn compared_by_rate(&self) -> bool {
        self.status == RateStatus::Measured && self.role.compared_across_peers()
    }
}

/// How a [`CounterRate`] was computed, in words: serialised and displayed
/// as that text (`"(1200 − 200) / 60 s"`, `"grew by 7; no interval known"`).
///
/// A measured rate (or one without an interval) keeps the numbers its
/// words are made of and writes the words only when the rate is written:
/// every counter of every port gives a rate, and on a fleet most of them
/// are of counters that did not move, which the notable report leaves
/// out. Formatting each one's words into a `String` of its own was a
/// third of the cost of a rate. Other rates (a reset, a saturated reading,
/// one read back from a report) keep their text.
///
/// Two derivations are equal when their words are.
#[derive(Debug, Clone)]
pub struct Derivation(DerivationWords);

#[derive(Debug, Clone)]
enum DerivationWords {
    /// `(after − before) / seconds s`, the seconds as [`fmt_num`] writes them.
    Measured {
        after: u64,
        before: u64,
        seconds: f64,
    },
    /// `grew by by; no interval known`.
    NoInterval { by: u64 },
    /// The words themselves.
    Text(Box<str>),
}

impl Derivation {
    /// A measured rate's: `(after − before) / seconds s`.
    #[must_use]
    pub fn measured(after: u64, before: u64, seconds: f64) -> Self {
        Self(DerivationWords::Measured {
            after,
            before,
            seconds,
        })
    }

    /// A rate without an interval: `grew by by; no interval known`.
    #[must_use]
    pub fn no_interval(by: u64) -> Self {
        Self(DerivationWords::NoInterval { by })
    }

    /// The seconds of a measured rate's words, written by [`fmt_num`]:
    /// a writer of many rates over one interval formats them once.
    pub(crate) fn seconds(&self) -> Option<f64> {
        match self.0 {
            DerivationWords::Measured { seconds, .. } => Some(seconds),
            _ => None,
        }
    }

    /// `seconds` as a measured rate's words write them ([`fmt_num`]; a
    /// whole number of seconds, the usual interval, without `format!`).
    pub(crate) fn seconds_words(seconds: f64) -> String {
        if (1.0..1e15).contains(&seconds) && seconds.fract() == 0.0 {
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // whole, in range
            let whole = seconds as u64;
            let mut out = Vec::with_capacity(16);
            push_decimal(&mut out, whole);
            return String::from_utf8(out).unwrap_or_default();
        }
        fmt_num(seconds)
    }

    /// The words, when they are kept as text (a reset, a saturated
    /// reading, a rate read back): they may need escaping.
    pub(crate) fn as_text(&self) -> Option<&str> {
        match &self.0 {
            DerivationWords::Text(text) => Some(text),
            _ => None,
        }
    }

    /// Appends the words to `out`, `seconds_text` being [`fmt_num`] of
    /// [`Self::seconds`] (when there are seconds).
    pub(crate) fn write_with(&self, seconds_text: &str, out: &mut Vec<u8>) {
        match &self.0 {
            DerivationWords::Measured { after, before, .. } => {
                out.reserve(2 * 20 + 12 + seconds_text.len());
                out.push(b'(');
                push_decimal(out, *after);
                out.extend_from_slice(" − ".as_bytes());
                push_decimal(out, *before);
                out.extend_from_slice(b") / ");
                out.extend_from_slice(seconds_text.as_bytes());
                out.extend_from_slice(b" s");
            }
            DerivationWords::NoInterval { by } => {
                out.extend_from_slice(b"grew by ");
                push_decimal(out, *by);
                out.extend_from_slice(b"; no interval known");
            }
            DerivationWords::Text(text) => out.extend_from_slice(text.as_bytes()),
        }
    }

    /// The words as a string.
    #[must_use]
    pub fn to_text(&self) -> String {
        match &self.0 {
            DerivationWords::Text(text) => text.to_string(),
            _ => {
                let seconds = self.seconds().map(fmt_num).unwrap_or_default();
                let mut out = Vec::with_capacity(64);
                self.write_with(&seconds, &mut out);
                // Only UTF-8 was written.
                String::from_utf8(out).unwrap_or_default()
            }
        }
    }
}

/// Two decimal digits for each number below 100.
const DIGIT_PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Appends `value` in decimal, as `Display` writes it, two digits a step
/// (the report's writers put several numbers into every record).
pub(crate) fn push_decimal(out: &mut Vec<u8>, value: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = value;
    while rest >= 100 {
        let pair = (rest % 100) as usize * 2;
        rest /= 100;
        at -= 2;
        if let (Some(slot), Some(pair)) =
            (digits.get_mut(at..at + 2), DIGIT_PAIRS.get(pair..pair + 2))
        {
            slot.copy_from_slice(pair);
        }
    }
    if rest >= 10 {
        let pair = rest as usize * 2;
        at -= 2;
        if let (Some(slot), Some(pair)) =
            (digits.get_mut(at..at + 2), DIGIT_PAIRS.get(pair..pair + 2))
        {
            slot.copy_from_slice(pair);
        }
    } else {
        at -= 1;
        if let Some(slot) = digits.get_mut(at) {
            #[allow(clippy::cast_possible_truncation)] // below 10
            let digit = rest as u8;
            *slot = b'0' + digit;
        }
    }
    out.extend_from_slice(digits.get(at..).unwrap_or_default());
}

impl From<String> for Derivation {
    fn from(text: String) -> Self {
        Self(DerivationWords::Text(text.into_boxed_str()))
    }
}

impl From<&str> for Derivation {
    fn from(text: &str) -> Self {
        Self(DerivationWords::Text(Box::from(text)))
    }
}

impl std::fmt::Display for Derivation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            DerivationWords::Text(text) => f.write_str(text),
            _ => f.write_str(&self.to_text()),
        }
    }
}

impl PartialEq for Derivation {
    fn eq(&self, other: &Self) -> bool {
        self.to_text() == other.to_text()
    }
}

impl Serialize for Derivation {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            DerivationWords::Text(text) => serializer.serialize_str(text),
            _ => serializer.serialize_str(&self.to_text()),
        }
    }
}

impl<'de> Deserialize<'de> for Derivation {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Self::from)
    }
}

/// Data carried by one link or port in one direction between two snapshots.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
pub struct Throughput {
    /// Link or port (its rate's, shared).
    pub subject: Arc<Subject>,
    /// Tx or Rx.
    pub direction: Direction,
    /// Payload or raw.
    pub layer: Layer,
    /// Counter it was computed from (its rate's, shared).
    pub counter: Arc<str>,
    /// Earlier snapshot id.
    pub from_snapshot: usize,
    /// Later snapshot id.
    pub to_snapshot: usize,
    /// Seconds between them.
    pub interval_seconds: f64,
    /// Bytes carried (counts × bytes per count).
    // JSON carries it as a number (exact below 2^53 bytes, 8 PiB).
    #[cfg_attr(feature = "wasm", tsify(type = "number"))]
    pub bytes: u128,
    /// Bytes per second.
    pub bytes_per_second: f64,
    /// GiB (2^30 bytes) per second.
    pub gib_per_second: f64,
    /// Gb/s (10^9 bits per second), the unit link speeds are quoted in.
    pub gbit_per_second: f64,
    /// Link capacity in that direction, Gb/s, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capacity_gbit_per_second: Option<f64>,
    /// Where the capacity came from (the capacity's words, shared).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capacity_source: Option<Arc<str>>,
    /// `gbit_per_second / capacity × 100`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub utilisation_percent: Option<f64>,
    /// How it was computed.
    pub derivation: String,
}

/// A counter at its field maximum.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
pub struct SaturatedCounter {
    /// Whose counter.
    pub subject: Subject,
    /// Counter set.
    #[cfg_attr(feature = "wasm", tsify(type = "string"))]
    pub source: CounterSource,
    /// Counter name.
    pub counter: String,
    /// Value printed: the real count is at least this.
    pub value_at_least: u64,
    /// Field width in bits.
    pub bits: u8,
    /// Snapshot id.
    pub snapshot: usize,
    /// Lines.
    pub lines: LineSpan,
    /// What to do.
    pub advice: String,
}

/// A BER estimate for one counter between two snapshots.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
pub struct BitErrorRate {
    /// Link, port or lane (its rate's, shared).
    pub subject: Arc<Subject>,
    /// Counter of errors (its rate's, shared).
    pub counter: Arc<str>,
    /// Earlier snapshot id.
    pub from_snapshot: usize,
    /// Later snapshot id.
    pub to_snapshot: usize,
    /// Seconds between them.
    pub interval_seconds: f64,
    /// Errors counted.
    pub errors: u64,
    /// Bits the errors were counted over.
    pub bits: f64,
    /// How `bits` was found.
    pub bits_basis: String,
    /// `errors / bits`.
    pub ber_point: f64,
    /// Lower end of the interval.
    pub ber_lower: f64,
    /// Upper end of the interval.
    pub ber_upper: f64,
    /// Confidence level.
    pub confidence: f64,
    /// Threshold compared with.
    pub threshold: f64,
    /// Outcome of the comparison.
    pub verdict: Verdict,
    /// Error-free bits needed for the upper bound to fall below the threshold,
    /// when the verdict is inconclusive.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bits_needed: Option<f64>,
    /// How it was computed.
    pub derivation: String,
}

/// Which peers a group holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
pub enum PeerGroupKind {
    /// The links of one GPU.
    LinksOfGpu,
    /// The lanes of all links of one GPU.
    LanesOfGpu,
    /// The GPUs of one host (per-GPU sums over links).
    GpusOfHost,
    /// The ports of one device (LID).
    PortsOfDevice,
    /// All ports read on one host.
    PortsOnHost,
    /// The same port or GPU link on every host of a fleet.
    SamePortAcrossHosts,
}

/// What a peer group compares: the latest reading, or the latest rate.
///
/// Rules decide severity by it (a count since reset depends on uptime, a
/// rate does not), so it is typed: a rename cannot silently turn a rule off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
pub enum PeerStatistic {
    /// The latest reading: a count since the last reset.
    Value,
    /// The latest measured rate, counts per second between two snapshots.
    CountsPerSecond,
}

impl PeerStatistic {
    /// The name used in JSON and messages.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Value => "value",
            Self::CountsPerSecond => "counts_per_second",
        }
    }

    /// The unit appended to values in sentences.
    #[must_use]
    pub const fn unit(self) -> &'static str {
        match self {
            Self::Value => "",
            Self::CountsPerSecond => "/s",
        }
    }
}

impl std::fmt::Display for PeerStatistic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A group of peers compared on one counter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
pub struct PeerGroup {
    /// Kind of group.
    pub kind: PeerGroupKind,
    /// The group in words (`links of GPU 0 on node1`).
    pub group: String,
    /// Counter set (`perfquery Port`, `nvidia-smi nvlink`).
    #[cfg_attr(feature = "wasm", tsify(type = "string"))]
    pub source: CounterSource,
    /// Counter compared.
    pub counter: String,
    /// `value` (latest reading) or `counts_per_second` (latest rate).
    pub statistic: PeerStatistic,
    /// Number of members.
    pub size: usize,
    /// Percentiles and spread.
    pub summary: Summary,
    /// Whether z-scores were computed (groups of fewer than 5 get none).
    pub z_scores_computed: bool,
    /// Spread estimate behind the z-scores.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scale: Option<ScaleMethod>,
    /// Members far above their peers.
    pub outliers: Vec<OutlierMember>,
}

/// A member far above its peers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
pub struct OutlierMember {
    /// Who.
    pub subject: Subject,
    /// Its value.
    pub value: f64,
    /// Robust z-score.
    pub robust_z: f64,
    /// `value / median`, when the median is not 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub times_median: Option<f64>,
    /// Poisson tail probability of a count this high with the median as mean.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub poisson_tail_p: Option<f64>,
    /// Lines of the reading.
    pub lines: LineSpan,
    /// The file the lines are in (batch runs; `None` for a paste).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// One sentence with the statistic, the group and its size.
    pub explanation: String,
}

/// Spread of traffic over a GPU's links or a device's ports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
pub struct TrafficBalance {
    /// The group in words.
    pub group: String,
    /// Tx or Rx.
    pub direction: Direction,
    /// Payload or raw.
    pub layer: Layer,
    /// Earlier snapshot id.
    pub from_snapshot: usize,
    /// Later snapshot id.
    pub to_snapshot: usize,
    /// Links or ports in the group.
    pub links: usize,
    /// Sum over the group, GiB/s.
    pub total_gib_per_second: f64,
    /// Per-link GiB/s: percentiles.
    pub per_link_gib_per_second: Summary,
    /// `(max − min) / median × 100`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spread_percent: Option<f64>,
    /// Links that carried nothing while the median link carried data.
    pub idle_links: Vec<Subject>,
}

/// Growth of one counter over three or more snapshots.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
pub struct CounterTrend {
    /// Whose counter.
    pub subject: Subject,
    /// Counter name.
    pub counter: String,
    /// Snapshots used (after the last reset).
    pub snapshots: Vec<usize>,
    /// Least-squares slope, counts per second.
    pub slope_per_second: f64,
    /// Fraction of variance explained.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub r_squared: Option<f64>,
    /// Whether the last step still went up.
    pub still_rising: bool,
    /// Last value.
    pub last_value: u64,
    /// Seconds until the counter saturates at this slope (never for 64-bit counters in practice).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seconds_to_saturation: Option<f64>,
    /// Where the time axis came from.
    pub time_source: String,
}

/// Where the seconds between two snapshots came from. JSON carries the
/// words (`input times: … → …`, `given interval`, `unknown`); code matches
/// the variant.
///
/// Every counter read in both snapshots carries the same words (a host has
/// hundreds of rates over a handful of intervals): they are shared, not
/// copied per rate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IntervalSource {
    /// The snapshots' own times (each described: a `date` line, a file time).
    InputTimes {
        /// Where the earlier snapshot's time was read.
        from: Arc<str>,
        /// Where the later snapshot's time was read.
        to: Arc<str>,
    },
    /// `--interval` (or the page's field).
    Given,
    /// No interval known.
    Unknown,
}

impl IntervalSource {
    /// Reads the words [`Display`](std::fmt::Display) writes.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "given interval" => Some(Self::Given),
            "unknown" => Some(Self::Unknown),
            _ => {
                let (from, to) = text.strip_prefix("input times: ")?.split_once(" → ")?;
                Some(Self::InputTimes {
                    from: Arc::from(from),
                    to: Arc::from(to),
                })
            }
        }
    }
}

impl std::fmt::Display for IntervalSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::InputTimes { from, to } => write!(f, "input times: {from} → {to}"),
            Self::Given => f.write_str("given interval"),
            Self::Unknown => f.write_str("unknown"),
        }
    }
}

impl Serialize for IntervalSource {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for IntervalSource {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        Self::parse(&text)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown interval source {text:?}")))
    }
}
