//! Assembles measurements from documents: snapshots and their times, counter
//! rates, throughput and utilisation, saturation, BER, peer groups, balance
//! and trends.
//!
//! Linear in the input apart from sorting: counters are paired through one
//! map keyed by (subject, source, name), and every group is built in one pass.

use super::ber::{self, Verdict};
use super::extract::{extract, Capacity, LinkKey};
use super::rates::{self, Change};
use super::robust::{self, ScaleMethod, Summary};
use super::sample::{CounterSample, CounterUnit, Direction, Layer, Role, Subject};
use super::trend;
use super::StatsOptions;
use crate::input::Document;
use crate::parse::Kind;
use crate::span::LineSpan;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};

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
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
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

/// A section that carried counters.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SnapshotInfo {
    /// Position in [`Measurements::snapshots`]; referenced by other records.
    pub id: usize,
    /// Which input (0-based, in the order given).
    pub input: usize,
    /// Tool.
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
    /// Time of the snapshot in seconds (Unix time when `time_is_unix`, else
    /// the host's wall clock read as UTC).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_seconds: Option<f64>,
    /// Whether `time_seconds` is an absolute Unix time.
    pub time_is_unix: bool,
    /// Where the time came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_source: Option<String>,
}

/// The data rate of one link or port, per direction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkCapacity {
    /// The link or port (InfiniBand ports by LID are fabric-wide: no host).
    pub subject: Subject,
    /// Gb/s per direction, line code removed.
    pub gbit_per_second: f64,
    /// Where it was read and how it was converted.
    pub source: String,
    /// Lines it was read from.
    pub lines: LineSpan,
}

/// Whether a rate could be taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
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
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CounterRate {
    /// Whose counter.
    pub subject: Subject,
    /// Counter set (`perfquery Port extended`, `nvidia-smi nvlink`).
    pub source: String,
    /// Counter name.
    pub counter: String,
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
    pub interval_source: String,
    /// Outcome.
    pub status: RateStatus,
    /// `after − before` (a lower bound when saturated); absent after a reset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub increase: Option<u64>,
    /// Counts (in `unit`) per second.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts_per_second: Option<f64>,
    /// How it was computed, in words.
    pub derivation: String,
    #[serde(skip)]
    role: Role,
    #[serde(skip)]
    max: Option<u64>,
}

/// Data carried by one link or port in one direction between two snapshots.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Throughput {
    /// Link or port.
    pub subject: Subject,
    /// Tx or Rx.
    pub direction: Direction,
    /// Payload or raw.
    pub layer: Layer,
    /// Counter it was computed from.
    pub counter: String,
    /// Earlier snapshot id.
    pub from_snapshot: usize,
    /// Later snapshot id.
    pub to_snapshot: usize,
    /// Seconds between them.
    pub interval_seconds: f64,
    /// Bytes carried (counts × bytes per count).
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
    /// Where the capacity came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capacity_source: Option<String>,
    /// `gbit_per_second / capacity × 100`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub utilisation_percent: Option<f64>,
    /// How it was computed.
    pub derivation: String,
}

/// A counter at its field maximum.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SaturatedCounter {
    /// Whose counter.
    pub subject: Subject,
    /// Counter set.
    pub source: String,
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
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BitErrorRate {
    /// Link, port or lane.
    pub subject: Subject,
    /// Counter of errors.
    pub counter: String,
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
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
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PeerGroup {
    /// Kind of group.
    pub kind: PeerGroupKind,
    /// The group in words (`links of GPU 0 on node1`).
    pub group: String,
    /// Counter set (`perfquery Port`, `nvidia-smi nvlink`).
    pub source: String,
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
#[derive(Debug, Clone, PartialEq, Serialize)]
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
    /// One sentence with the statistic, the group and its size.
    pub explanation: String,
}

/// Spread of traffic over a GPU's links or a device's ports.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize)]
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

/// Measures one document.
#[must_use]
pub fn measure(document: &Document, options: &StatsOptions) -> Measurements {
    measure_sources(
        &[Source {
            document,
            modified_unix: None,
        }],
        options,
    )
}

/// Measures several documents (batch mode, a fleet) as one timeline: their
/// sections are snapshots in the order given.
#[must_use]
pub fn measure_many(documents: &[Document], options: &StatsOptions) -> Measurements {
    let sources: Vec<Source<'_>> = documents
        .iter()
        .map(|document| Source {
            document,
            modified_unix: None,
        })
        .collect();
    measure_sources(&sources, options)
}

/// A snapshot's time on a clock.
#[derive(Debug, Clone, PartialEq)]
struct Clocked {
    seconds: f64,
    /// `None` for Unix time; the host for a wall clock of unknown zone.
    wall_clock_of: Option<Option<String>>,
    source: String,
}

/// One reading of a series. Whose counter it is (subject, source, name) is
/// the series' key, not repeated here: a fleet has millions of readings.
struct Point {
    snapshot: usize,
    counter: crate::model::Counter,
    unit: CounterUnit,
    role: Role,
    span: LineSpan,
}

/// Measures documents with optional file times.
#[must_use]
pub fn measure_sources(sources: &[Source<'_>], options: &StatsOptions) -> Measurements {
    let mut m = Measurements::default();
    let mut times: Vec<Option<Clocked>> = Vec::new();
    let mut capacities: BTreeMap<LinkKey, Capacity> = BTreeMap::new();
    // Filled through a hash map (one hash per reading instead of a string
    // comparison per tree level), then ordered once for a deterministic walk.
    let mut unordered: HashMap<(Subject, String, String), Vec<Point>> = HashMap::new();
    let mut ca_of_lid: BTreeMap<(Option<String>, u32), String> = BTreeMap::new();

    for (input, src) in sources.iter().enumerate() {
        let extracted: Vec<_> = src
            .document
            .sections
            .iter()
            .map(|section| (section, extract(section)))
            .collect();
        let section_times = section_times(&extracted);
        for ((section, ex), time) in extracted.into_iter().zip(section_times) {
            for (key, cap) in ex.capacities {
                if let LinkKey::CaPort { host, ca, .. } = &key {
                    if let Some(lid) = section_lid_for(section, ca) {
                        ca_of_lid.insert((host.clone(), lid), ca.clone());
                    }
                }
                capacities.insert(key, cap);
            }
            if ex.samples.is_empty() {
                continue;
            }
            let id = m.snapshots.len();
            let time = time.or_else(|| {
                src.modified_unix.map(|t| Clocked {
                    seconds: t,
                    wall_clock_of: None,
                    source: format!(
                        "modification time of {}",
                        section.source.as_deref().unwrap_or("the input file")
                    ),
                })
            });
            m.snapshots.push(SnapshotInfo {
                id,
                input,
                kind: section.kind,
                host: section.host.clone(),
                file: section.source.clone(),
                span: section.span,
                time_seconds: time.as_ref().map(|t| t.seconds),
                time_is_unix: time.as_ref().is_some_and(|t| t.wall_clock_of.is_none()),
                time_source: time.as_ref().map(|t| t.source.clone()),
            });
            times.push(time);
            for sample in ex.samples {
                if sample.counter.saturated {
                    m.saturated_counters.push(saturated(&sample, id));
                }
                let point = Point {
                    snapshot: id,
                    counter: sample.counter,
                    unit: sample.unit,
                    role: sample.role,
                    span: sample.span,
                };
                unordered
                    .entry((sample.subject, sample.source, sample.name))
                    .or_default()
                    .push(point);
            }
        }
    }
    m.link_capacities = capacities
        .iter()
        .map(|(key, cap)| LinkCapacity {
            subject: match key {
                LinkKey::Lid { lid, port } => Subject {
                    lid: Some(*lid),
                    port: Some(*port),
                    ..Subject::default()
                },
                LinkKey::CaPort { host, ca, port } => Subject {
                    host: host.clone(),
                    device: Some(ca.clone()),
                    port: Some(*port),
                    ..Subject::default()
                },
                LinkKey::Nvlink { host, gpu, link } => Subject {
                    host: host.clone(),
                    gpu: Some(*gpu),
                    link: Some(*link),
                    ..Subject::default()
                },
            },
            gbit_per_second: cap.gbit_per_second,
            source: cap.source.clone(),
            lines: cap.span,
        })
        .collect();
    // perfquery names ports by LID: give them their CA name when ibstat told it.
    let series: Series = unordered.into_iter().collect();
    let series = name_devices(series, &ca_of_lid);

    let mut missing_interval = BTreeSet::new();
    for (key, points) in &series {
        for pair in points.windows(2) {
            let [a, b] = pair else { continue };
            let rate = counter_rate(key, a, b, &times, options);
            if rate.status == RateStatus::NoInterval {
                missing_interval.insert((a.snapshot, b.snapshot));
            }
            m.counter_rates.push(rate);
        }
    }
    for (a, b) in &missing_interval {
        m.notes.push(format!(
            "snapshots {a} and {b}: no time in the input and no interval given, so no rates (give --interval)"
        ));
    }
    if let Some(given) = options.interval_seconds {
        let disagreeing: BTreeSet<(usize, usize, u64)> = m
            .counter_rates
            .iter()
            .filter(|r| r.interval_source.starts_with("input times"))
            .filter_map(|r| {
                let seconds = r.interval_seconds?;
                ((seconds / given - 1.0).abs() > 0.1).then_some((
                    r.from_snapshot,
                    r.to_snapshot,
                    seconds.to_bits(),
                ))
            })
            .collect();
        for (a, b, bits) in disagreeing {
            m.notes.push(format!(
                "snapshots {a} and {b}: the input's times are {} s apart but the given interval is {} s; the input's times were used",
                fmt_num(f64::from_bits(bits)),
                fmt_num(given)
            ));
        }
    }
    for rate in &m.counter_rates {
        if rate.status == RateStatus::CounterReset {
            m.notes.push(format!(
                "{} {}: went from {} to {} between snapshots {} and {}: counter reset (or another port), no rate",
                rate.subject, rate.counter, rate.before, rate.after, rate.from_snapshot, rate.to_snapshot
            ));
        }
    }
    m.throughput = m
        .counter_rates
        .iter()
        .filter_map(|r| throughput(r, &capacities))
        .collect();
    let over: Vec<&Throughput> = m
        .throughput
        .iter()
        .filter(|t| t.utilisation_percent.is_some_and(|u| u > 105.0))
        .collect();
    if let Some(first) = over.first() {
        m.notes.push(format!(
            "{} link(s) carried more than their capacity (e.g. {} {:?} at {:.0} %): the interval is probably \
             longer than assumed, or the capacity belongs to another link",
            over.len(),
            first.subject,
            first.direction,
            first.utilisation_percent.unwrap_or(f64::NAN)
        ));
    }
    let lanes = lanes_per_link(&series);
    let received: Received<'_> = m
        .throughput
        .iter()
        .filter(|t| t.direction == Direction::Rx)
        .map(|t| ((&t.subject, t.from_snapshot, t.to_snapshot), t))
        .collect();
    let mut bers = Vec::new();
    for rate in &m.counter_rates {
        match bit_error_rate(rate, &capacities, &received, &lanes, options) {
            Ok(Some(b)) => bers.push(b),
            Ok(None) => {}
            Err(note) => m.notes.push(note),
        }
    }
    m.bit_error_rates = bers;
    m.peer_groups = peer_groups(&series, &m.counter_rates, options, &mut m.notes);
    m.traffic_balance = balance(&m.throughput);
    m.trends = trends(&series, &times, options);
    m
}

/// The time of each section that carries counters, from the `date` (or
/// `nvidia-smi -q` Timestamp) sections of the same host in the same input.
///
/// Scripts print the date either before each reading (`date; perfquery`) or
/// after it (`perfquery; date`). If a host's first reading comes before its
/// first date, dates are taken to follow their readings: each reading gets the
/// next date. Otherwise each reading gets the latest date before it.
fn section_times(
    sections: &[(&crate::input::Section, super::extract::Extracted)],
) -> Vec<Option<Clocked>> {
    let clocked = |section: &crate::input::Section, ex: &super::extract::Extracted| {
        ex.time.as_ref().map(|(wall, unix, text, span)| Clocked {
            seconds: unix.unwrap_or(*wall),
            wall_clock_of: if unix.is_some() {
                None
            } else {
                Some(section.host.clone())
            },
            source: format!("`{text}` ({span})"),
        })
    };
    let mut first_date: BTreeMap<&Option<String>, usize> = BTreeMap::new();
    let mut first_reading: BTreeMap<&Option<String>, usize> = BTreeMap::new();
    for (i, (section, ex)) in sections.iter().enumerate() {
        if ex.time.is_some() {
            first_date.entry(&section.host).or_insert(i);
        }
        if !ex.samples.is_empty() {
            first_reading.entry(&section.host).or_insert(i);
        }
    }
    let trailing = |host: &Option<String>| match (first_reading.get(host), first_date.get(host)) {
        (Some(r), Some(d)) => r < d,
        _ => false,
    };
    let mut out: Vec<Option<Clocked>> = vec![None; sections.len()];
    let mut last: BTreeMap<&Option<String>, Clocked> = BTreeMap::new();
    for (i, (section, ex)) in sections.iter().enumerate() {
        if let Some(c) = clocked(section, ex) {
            last.insert(&section.host, c);
        }
        if !ex.samples.is_empty() && !trailing(&section.host) {
            if let Some(slot) = out.get_mut(i) {
                *slot = last.get(&section.host).cloned();
            }
        }
    }
    let mut next: BTreeMap<&Option<String>, Clocked> = BTreeMap::new();
    for (i, (section, ex)) in sections.iter().enumerate().rev() {
        if let Some(c) = clocked(section, ex) {
            next.insert(&section.host, c);
        }
        if !ex.samples.is_empty() && trailing(&section.host) {
            if let Some(slot) = out.get_mut(i) {
                *slot = next.get(&section.host).cloned();
            }
        }
    }
    out
}

/// The LID ibstat gives a CA name, for naming perfquery's ports.
fn section_lid_for(section: &crate::input::Section, ca: &str) -> Option<u32> {
    if let crate::parse::SectionData::Ibstat(i) = &section.data {
        i.cas
            .iter()
            .filter(|c| c.name == ca)
            .flat_map(|c| &c.ports)
            .find_map(|p| p.base_lid.filter(|l| *l != 0 && *l != 65_535))
    } else {
        None
    }
}

type Series = BTreeMap<(Subject, String, String), Vec<Point>>;

fn name_devices(series: Series, ca_of_lid: &BTreeMap<(Option<String>, u32), String>) -> Series {
    if ca_of_lid.is_empty() {
        return series;
    }
    let mut out: Series = BTreeMap::new();
    for ((mut subject, source, name), points) in series {
        if subject.device.is_none() {
            if let Some(ca) = subject
                .lid
                .and_then(|l| ca_of_lid.get(&(subject.host.clone(), l)))
            {
                subject.device = Some(ca.clone());
            }
        }
        out.entry((subject, source, name))
            .or_default()
            .extend(points);
    }
    for points in out.values_mut() {
        points.sort_by_key(|p| p.snapshot);
    }
    out
}

fn saturated(sample: &CounterSample, snapshot: usize) -> SaturatedCounter {
    let source = sample.source.as_str();
    let advice = if source.contains("extended") || sample.counter.bits == 64 {
        "the 64-bit counter is saturated: reset it (`perfquery -R`) before measuring"
    } else if source.starts_with("perfquery") || source.starts_with("ibqueryerrors") {
        "the real count is at least this and its rate is unknown: read the 64-bit counters with \
         `perfquery -x`, or reset (`perfquery -R`, `ibqueryerrors -k`) and measure again"
    } else if source.starts_with("nvidia-smi") {
        "the counter can no longer show growth: reset the error counters (`nvidia-smi nvlink -re`; \
         `-r` is deprecated) and measure again"
    } else {
        "the counter can no longer show growth: reset it and measure again"
    };
    SaturatedCounter {
        subject: sample.subject.clone(),
        source: sample.source.clone(),
        counter: sample.name.clone(),
        value_at_least: sample.counter.value,
        bits: sample.counter.bits,
        snapshot,
        lines: sample.span,
        advice: advice.to_owned(),
    }
}

fn interval(
    a: usize,
    b: usize,
    times: &[Option<Clocked>],
    options: &StatsOptions,
) -> (Option<f64>, String) {
    if let (Some(Some(ta)), Some(Some(tb))) = (times.get(a), times.get(b)) {
        let seconds = tb.seconds - ta.seconds;
        if ta.wall_clock_of == tb.wall_clock_of && seconds > 0.0 && seconds.is_finite() {
            return (
                Some(seconds),
                format!("input times: {} → {}", ta.source, tb.source),
            );
        }
    }
    match options
        .interval_seconds
        .filter(|s| *s > 0.0 && s.is_finite())
    {
        Some(s) => (Some(s), "given interval".to_owned()),
        None => (None, "unknown".to_owned()),
    }
}

fn counter_rate(
    (subject, source, name): &(Subject, String, String),
    a: &Point,
    b: &Point,
    times: &[Option<Clocked>],
    options: &StatsOptions,
) -> CounterRate {
    let (ca, cb) = (a.counter, b.counter);
    let (seconds, interval_source) = interval(a.snapshot, b.snapshot, times, options);
    let change = rates::change(ca, cb);
    let (status, increase, counts_per_second, derivation) = match change {
        Change::Reset { before, after } => (
            RateStatus::CounterReset,
            None,
            None,
            format!("{after} < {before}: the counter was reset (or is another port's); no rate"),
        ),
        Change::Saturated { at_least } => (
            RateStatus::Saturated,
            Some(at_least),
            None,
            format!(
                "{} is the maximum of a {}-bit field: grew by at least {at_least}, rate unknown",
                cb.value, cb.bits
            ),
        ),
        Change::Increase { by } => match seconds.map(|s| rates::per_second(by, s)) {
            Some(Ok(r)) => (
                RateStatus::Measured,
                Some(by),
                Some(r),
                format!(
                    "({} − {}) / {} s",
                    cb.value,
                    ca.value,
                    fmt_num(seconds.unwrap_or(f64::NAN))
                ),
            ),
            _ => (
                RateStatus::NoInterval,
                Some(by),
                None,
                format!("grew by {by}; no interval known"),
            ),
        },
    };
    CounterRate {
        subject: subject.clone(),
        source: source.clone(),
        counter: name.clone(),
        unit: b.unit,
        from_snapshot: a.snapshot,
        to_snapshot: b.snapshot,
        lines: [a.span, b.span],
        before: ca.value,
        after: cb.value,
        interval_seconds: seconds,
        interval_source,
        status,
        increase,
        counts_per_second,
        derivation,
        role: b.role,
        max: cb.max(),
    }
}

fn fmt_num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        format!("{x:.6}").trim_end_matches('0').to_owned()
    }
}

fn capacity_of<'c>(
    subject: &Subject,
    capacities: &'c BTreeMap<LinkKey, Capacity>,
) -> Option<&'c Capacity> {
    if let (Some(gpu), Some(link)) = (subject.gpu, subject.link) {
        return capacities.get(&LinkKey::Nvlink {
            host: subject.host.clone(),
            gpu,
            link,
        });
    }
    let port = subject.port?;
    subject
        .lid
        .and_then(|lid| capacities.get(&LinkKey::Lid { lid, port }))
        .or_else(|| {
            subject.device.as_ref().and_then(|ca| {
                capacities.get(&LinkKey::CaPort {
                    host: subject.host.clone(),
                    ca: ca.clone(),
                    port,
                })
            })
        })
}

#[allow(clippy::cast_precision_loss)] // byte counts far below 2^100; f64 keeps 15 digits
fn throughput(rate: &CounterRate, capacities: &BTreeMap<LinkKey, Capacity>) -> Option<Throughput> {
    let Role::Traffic { direction, layer } = rate.role else {
        return None;
    };
    if rate.status != RateStatus::Measured || rate.subject.lane.is_some() {
        return None;
    }
    let seconds = rate.interval_seconds?;
    let per_count = rate.unit.bytes_per_count()?;
    let bytes = rates::bytes(rate.increase?, per_count);
    let bytes_per_second = bytes as f64 / seconds;
    let gbit_per_second = bytes_per_second * 8.0 / 1e9;
    let capacity = capacity_of(&rate.subject, capacities);
    let unit_words = match rate.unit {
        CounterUnit::FourOctets => "× 4 octets (the counter counts 4-octet words)",
        CounterUnit::Kib => "× 1024 bytes (KiB)",
        _ => "",
    };
    Some(Throughput {
        subject: rate.subject.clone(),
        direction,
        layer,
        counter: rate.counter.clone(),
        from_snapshot: rate.from_snapshot,
        to_snapshot: rate.to_snapshot,
        interval_seconds: seconds,
        bytes,
        bytes_per_second,
        gib_per_second: bytes_per_second / f64::from(1u32 << 30),
        gbit_per_second,
        capacity_gbit_per_second: capacity.map(|c| c.gbit_per_second),
        capacity_source: capacity.map(|c| c.source.clone()),
        utilisation_percent: capacity
            .filter(|c| c.gbit_per_second > 0.0)
            .map(|c| gbit_per_second / c.gbit_per_second * 100.0),
        derivation: format!(
            "({} − {}) {unit_words} / {} s",
            rate.after,
            rate.before,
            fmt_num(seconds)
        ),
    })
}

/// Lanes seen per link, to split a link's capacity among its lanes.
fn lanes_per_link(series: &Series) -> BTreeMap<Subject, u32> {
    let mut lanes: BTreeMap<Subject, BTreeSet<u32>> = BTreeMap::new();
    for (subject, _, _) in series.keys() {
        if let Some(lane) = subject.lane {
            let link = Subject {
                lane: None,
                ..subject.clone()
            };
            lanes.entry(link).or_default().insert(lane);
        }
    }
    lanes
        .into_iter()
        .map(|(k, v)| (k, u32::try_from(v.len()).unwrap_or(u32::MAX)))
        .collect()
}

/// Received-data throughput by (link, from snapshot, to snapshot).
type Received<'t> = BTreeMap<(&'t Subject, usize, usize), &'t Throughput>;

fn is_corrected_count(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.contains("correct") || lower.starts_with("ecc")
}

fn bit_error_rate(
    rate: &CounterRate,
    capacities: &BTreeMap<LinkKey, Capacity>,
    received: &Received<'_>,
    lanes: &BTreeMap<Subject, u32>,
    options: &StatsOptions,
) -> Result<Option<BitErrorRate>, String> {
    if rate.role != Role::BitErrors || rate.status != RateStatus::Measured {
        return Ok(None);
    }
    let (Some(seconds), Some(errors)) = (rate.interval_seconds, rate.increase) else {
        return Ok(None);
    };
    let link = Subject {
        lane: None,
        ..rate.subject.clone()
    };
    let (bits, basis) = if let Some(cap) = capacity_of(&link, capacities) {
        let share = match rate.subject.lane {
            Some(_) => f64::from(*lanes.get(&link).unwrap_or(&1)),
            None => 1.0,
        };
        let basis = if share > 1.0 {
            format!("{} / {share} lanes × {} s", cap.source, fmt_num(seconds))
        } else {
            format!("{} × {} s", cap.source, fmt_num(seconds))
        };
        (cap.gbit_per_second * 1e9 / share * seconds, basis)
    } else if let Some(t) = received.get(&(&link, rate.from_snapshot, rate.to_snapshot)) {
        #[allow(clippy::cast_precision_loss)]
        let bits = t.bytes as f64 * 8.0;
        (
            bits,
            format!(
                "bits received ({} × 8): no link speed known, so only data bits are counted and the BER is overstated",
                t.counter
            ),
        )
    } else {
        return Err(format!(
            "{} {}: {errors} error(s) in {} s but neither the link speed nor the traffic is known, so no BER",
            rate.subject,
            rate.counter,
            fmt_num(seconds)
        ));
    };
    let threshold = if is_corrected_count(&rate.counter) {
        options.corrected_ber_threshold
    } else {
        options.ber_threshold
    };
    let Ok(est) = ber::estimate(errors, bits, options.confidence) else {
        return Ok(None);
    };
    let verdict = est.judge(threshold);
    Ok(Some(BitErrorRate {
        subject: rate.subject.clone(),
        counter: rate.counter.clone(),
        from_snapshot: rate.from_snapshot,
        to_snapshot: rate.to_snapshot,
        interval_seconds: seconds,
        errors,
        bits,
        bits_basis: basis,
        ber_point: est.point,
        ber_lower: est.lower,
        ber_upper: est.upper,
        confidence: options.confidence,
        threshold,
        verdict,
        bits_needed: (verdict == Verdict::Inconclusive)
            .then(|| est.bits_needed_for(threshold))
            .flatten(),
        derivation: format!(
            "{errors} error(s) / {bits:.4e} bits; exact Poisson {:.0} % interval (Garwood)",
            options.confidence * 100.0
        ),
    }))
}

/// A member value with where it came from.
struct Member {
    subject: Subject,
    value: f64,
    count: Option<u64>,
    lines: LineSpan,
}

/// (host, GPU, counter source, counter name): a GPU's sum over its links.
type GpuKey = (Option<String>, u32, String, String);

/// (kind, group in words, counter source, counter name, statistic).
type GroupKey = (PeerGroupKind, String, String, String, PeerStatistic);

fn host_words(host: Option<&String>) -> String {
    host.map_or_else(String::new, |h| format!(" on {h}"))
}

fn group_keys(subject: &Subject) -> Vec<(PeerGroupKind, String)> {
    let mut keys = Vec::new();
    let on = host_words(subject.host.as_ref());
    match (subject.gpu, subject.link, subject.lane) {
        (Some(gpu), Some(_), None) => {
            keys.push((PeerGroupKind::LinksOfGpu, format!("links of GPU {gpu}{on}")))
        }
        (Some(gpu), Some(_), Some(_)) => keys.push((
            PeerGroupKind::LanesOfGpu,
            format!("lanes of the links of GPU {gpu}{on}"),
        )),
        _ => {}
    }
    if subject.port.is_some()
        && !subject.is_aggregate()
        && subject.gpu.is_none()
        && subject.lane.is_none()
    {
        {
            match (&subject.device, subject.lid) {
                (Some(device), _) => keys.push((
                    PeerGroupKind::PortsOfDevice,
                    format!("ports of {device}{on}"),
                )),
                (None, Some(lid)) => keys.push((
                    PeerGroupKind::PortsOfDevice,
                    format!("ports of lid {lid}{on}"),
                )),
                (None, None) => {}
            }
            keys.push((
                PeerGroupKind::PortsOnHost,
                format!(
                    "ports read{}",
                    if on.is_empty() {
                        " in the input".to_owned()
                    } else {
                        on.clone()
                    }
                ),
            ));
        }
    }
    keys
}

fn peer_groups(
    series: &Series,
    rates: &[CounterRate],
    options: &StatsOptions,
    notes: &mut Vec<String>,
) -> Vec<PeerGroup> {
    let mut groups: BTreeMap<GroupKey, Vec<Member>> = BTreeMap::new();
    let mut gpu_sums: BTreeMap<GpuKey, (u64, LineSpan)> = BTreeMap::new();
    let mut across: BTreeMap<(String, String, String), Vec<Member>> = BTreeMap::new();
    for ((subject, source, name), points) in series {
        let Some(last) = points.last() else { continue };
        if !last.role.compared_across_peers() {
            continue;
        }
        let value = last.counter.value;
        #[allow(clippy::cast_precision_loss)]
        let member = || Member {
            subject: subject.clone(),
            value: value as f64,
            count: Some(value),
            lines: last.span,
        };
        for (kind, words) in group_keys(subject) {
            groups
                .entry((
                    kind,
                    words,
                    source.clone(),
                    name.clone(),
                    PeerStatistic::Value,
                ))
                .or_default()
                .push(member());
        }
        if let (Some(gpu), Some(_), None) = (subject.gpu, subject.link, subject.lane) {
            let e = gpu_sums
                .entry((subject.host.clone(), gpu, source.clone(), name.clone()))
                .or_insert((0, last.span));
            e.0 = e.0.saturating_add(value);
            e.1 = e.1.join(last.span);
        }
        if subject.host.is_some() && !subject.is_aggregate() {
            // LIDs differ from host to host (every port has its own); the CA
            // name and port number do not, so they alone say "the same port".
            let place = Subject {
                host: None,
                lid: None,
                ..subject.clone()
            };
            if place != Subject::default() {
                across
                    .entry((place.to_string(), source.clone(), name.clone()))
                    .or_default()
                    .push(member());
            }
        }
    }
    for ((host, gpu, source, name), (sum, lines)) in gpu_sums {
        #[allow(clippy::cast_precision_loss)]
        groups
            .entry((
                PeerGroupKind::GpusOfHost,
                format!("GPUs{}", host_words(host.as_ref())),
                source,
                name,
                PeerStatistic::Value,
            ))
            .or_default()
            .push(Member {
                subject: Subject {
                    host,
                    gpu: Some(gpu),
                    ..Subject::default()
                },
                value: sum as f64,
                count: Some(sum),
                lines,
            });
    }
    for ((place, source, name), members) in across {
        let hosts: BTreeSet<_> = members.iter().map(|m| m.subject.host.clone()).collect();
        if hosts.len() >= 2 {
            groups
                .entry((
                    PeerGroupKind::SamePortAcrossHosts,
                    format!("{place} across hosts"),
                    source,
                    name,
                    PeerStatistic::Value,
                ))
                .or_default()
                .extend(members);
        }
    }
    // Latest measured rate of each counter.
    let mut latest: BTreeMap<(Subject, String, String), &CounterRate> = BTreeMap::new();
    for r in rates
        .iter()
        .filter(|r| r.status == RateStatus::Measured && r.role.compared_across_peers())
    {
        latest.insert((r.subject.clone(), r.source.clone(), r.counter.clone()), r);
    }
    for ((subject, source, name), r) in latest {
        for (kind, words) in group_keys(&subject) {
            groups
                .entry((
                    kind,
                    words,
                    source.clone(),
                    name.clone(),
                    PeerStatistic::CountsPerSecond,
                ))
                .or_default()
                .push(Member {
                    subject: subject.clone(),
                    value: r.counts_per_second.unwrap_or(f64::NAN),
                    count: r.increase,
                    lines: r.lines[1],
                });
        }
    }
    let mut quiet = 0usize;
    let mut out = Vec::new();
    for ((kind, words, source, counter, statistic), members) in groups {
        if members.len() < 2 {
            continue;
        }
        let values: Vec<f64> = members.iter().map(|m| m.value).collect();
        let Ok(summary) = robust::summary(&values) else {
            continue;
        };
        if summary.max == 0.0 {
            quiet += 1;
            continue;
        }
        let (flagged, scale, computed) = match robust::outliers(&values, options.outlier_z) {
            Ok((f, s)) => (f, Some(s), true),
            Err(_) => (Vec::new(), None, false),
        };
        let counts: Vec<f64> = members
            .iter()
            .filter_map(|m| m.count)
            .map(|c| c as f64)
            .collect();
        let count_median = robust::median(&counts).unwrap_or(0.0);
        let size = members.len();
        let outliers = flagged
            .into_iter()
            .filter(|f| f.robust_z > 0.0)
            .filter_map(|f| {
                let member = members.get(f.index)?;
                let p = member.count.map(|c| poisson_tail(c, count_median.max(1.0)));
                if p.is_some_and(|p| p >= options.outlier_poisson_p) {
                    return None;
                }
                let unit = statistic.unit();
                let against = f.times_median.map_or_else(
                    || {
                        format!(
                            "while the median of the {size} {words} is {}{unit}",
                            fmt_num(summary.median)
                        )
                    },
                    |t| {
                        format!(
                            "is {t:.1}× the median ({}{unit}) of the {size} {words}",
                            fmt_num(summary.median)
                        )
                    },
                );
                Some(OutlierMember {
                    subject: member.subject.clone(),
                    value: f.value,
                    robust_z: f.robust_z,
                    times_median: f.times_median,
                    poisson_tail_p: p,
                    lines: member.lines,
                    explanation: format!(
                        "{}: {counter} {}{unit} {against} (robust z = {:.1}{}{})",
                        member.subject,
                        fmt_num(f.value),
                        f.robust_z,
                        match scale {
                            Some(ScaleMethod::MeanAbsoluteDeviation) =>
                                ", mean-deviation based since most peers are equal",
                            Some(ScaleMethod::None) => ", every other peer is equal",
                            _ => "",
                        },
                        p.map_or_else(String::new, |p| if p < 1e-300 {
                            "; Poisson tail p < 1e-300".to_owned()
                        } else {
                            format!("; Poisson tail p = {p:.1e}")
                        }),
                    ),
                })
            })
            .collect();
        out.push(PeerGroup {
            kind,
            group: words,
            source,
            counter,
            statistic,
            size,
            summary,
            z_scores_computed: computed,
            scale,
            outliers,
        });
    }
    if quiet > 0 {
        notes.push(format!(
            "{quiet} peer group(s) left out because every member reads 0"
        ));
    }
    out
}

/// `P(X ≥ k)` for `X ~ Poisson(λ)`: the regularised lower incomplete gamma `P(k, λ)`.
fn poisson_tail(k: u64, lambda: f64) -> f64 {
    if k == 0 {
        return 1.0;
    }
    #[allow(clippy::cast_precision_loss)]
    statrs::function::gamma::gamma_lr(k as f64, lambda)
}

fn balance(throughput: &[Throughput]) -> Vec<TrafficBalance> {
    let mut groups: BTreeMap<(String, Direction, Layer, usize, usize), Vec<&Throughput>> =
        BTreeMap::new();
    for t in throughput.iter().filter(|t| !t.subject.is_aggregate()) {
        let on = host_words(t.subject.host.as_ref());
        let words = match (t.subject.gpu, t.subject.lid, &t.subject.device) {
            (Some(gpu), _, _) => format!("links of GPU {gpu}{on}"),
            (None, Some(lid), _) => format!("ports of lid {lid}{on}"),
            (None, None, Some(d)) => format!("ports of {d}{on}"),
            _ => continue,
        };
        groups
            .entry((words, t.direction, t.layer, t.from_snapshot, t.to_snapshot))
            .or_default()
            .push(t);
    }
    let mut out = Vec::new();
    for ((group, direction, layer, from, to), members) in groups {
        if members.len() < 2 {
            continue;
        }
        let values: Vec<f64> = members.iter().map(|t| t.gib_per_second).collect();
        let Ok(summary) = robust::summary(&values) else {
            continue;
        };
        let idle_links = if summary.median > 0.0 {
            members
                .iter()
                .filter(|t| t.bytes == 0)
                .map(|t| t.subject.clone())
                .collect()
        } else {
            Vec::new()
        };
        out.push(TrafficBalance {
            group,
            direction,
            layer,
            from_snapshot: from,
            to_snapshot: to,
            links: members.len(),
            total_gib_per_second: values.iter().sum(),
            spread_percent: summary.spread_percent_of_median,
            per_link_gib_per_second: summary,
            idle_links,
        });
    }
    out
}

fn trends(series: &Series, times: &[Option<Clocked>], options: &StatsOptions) -> Vec<CounterTrend> {
    let mut out = Vec::new();
    for ((subject, _, name), points) in series {
        if points.len() < 3 || matches!(points.last().map(|p| p.role), Some(Role::Traffic { .. })) {
            continue;
        }
        // Only the run after the last reset is one growth curve.
        let start = points
            .windows(2)
            .rposition(|w| matches!(w, [a, b] if b.counter.value < a.counter.value))
            .map_or(0, |i| i + 1);
        let run = points.get(start..).unwrap_or_default();
        if run.len() < 3
            || run.first().map(|p| p.counter.value) == run.last().map(|p| p.counter.value)
        {
            continue;
        }
        let clocks: Option<Vec<&Clocked>> = run
            .iter()
            .map(|p| times.get(p.snapshot).and_then(Option::as_ref))
            .collect();
        let same_clock = clocks.as_ref().is_some_and(|c| {
            c.windows(2)
                .all(|w| matches!(w, [a, b] if a.wall_clock_of == b.wall_clock_of))
        });
        #[allow(clippy::cast_precision_loss)]
        let (xy, time_source): (Vec<(f64, f64)>, String) =
            match (same_clock, clocks, options.interval_seconds) {
                (true, Some(c), _) => (
                    c.iter()
                        .zip(run)
                        .map(|(t, p)| (t.seconds, p.counter.value as f64))
                        .collect(),
                    "input times".to_owned(),
                ),
                (_, _, Some(step)) if step > 0.0 => (
                    run.iter()
                        .enumerate()
                        .map(|(i, p)| (i as f64 * step, p.counter.value as f64))
                        .collect(),
                    format!("given interval of {} s between snapshots", fmt_num(step)),
                ),
                _ => continue,
            };
        let Ok(fit) = trend::fit(&xy) else { continue };
        let last = run.last().map(|p| p.counter);
        #[allow(clippy::cast_precision_loss)]
        out.push(CounterTrend {
            subject: subject.clone(),
            counter: name.clone(),
            snapshots: run.iter().map(|p| p.snapshot).collect(),
            slope_per_second: fit.slope_per_second,
            r_squared: fit.r_squared,
            still_rising: fit.still_rising,
            last_value: last.map_or(0, |c| c.value),
            seconds_to_saturation: last
                .and_then(|c| c.max())
                .and_then(|max| fit.seconds_to_reach(max as f64)),
            time_source,
        });
    }
    out
}
