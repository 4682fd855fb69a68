//! Tool models → neutral readings, link capacities and time stamps.
//!
//! The only place in `stats` that knows tool formats. Each function takes one
//! parsed section and says what it contributes: counters (perfquery,
//! `nvidia-smi nvlink -e/-ec/-gt`), capacities (ibstat rate, iblinkinfo
//! width × speed, `nvidia-smi nvlink -s`), or a time (`date`).

use super::sample::{CounterUnit, Direction, Layer, Role, Subject};
use super::CounterSource;
use crate::input::Section;
use crate::model::dcgmi_nvlink::DcgmiNvlinkErrors;
use crate::model::iblinkinfo::Iblinkinfo;
use crate::model::ibqueryerrors::Ibqueryerrors;
use crate::model::ibstat::Ibstat;
use crate::model::nvlink::Nvlink;
use crate::model::perfquery::Perfquery;
use crate::model::smi_query::SmiQuery;
use crate::model::{Counter, CounterId, KnownCounter};
use crate::parse::SectionData;
use crate::span::LineSpan;
use rustc_hash::FxHashMap;
use std::sync::Arc;
use std::sync::OnceLock;

/// Where a link's capacity is known from, its names owned: the oracle's
/// key (the measuring borrows them, [`LinkKeyRef`]).
#[cfg(test)]
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum LinkKey {
    /// An InfiniBand port addressed by LID (fabric-wide).
    Lid { lid: u32, port: u32 },
    /// A CA port by name on a host.
    CaPort {
        host: Option<String>,
        ca: String,
        port: u32,
    },
    /// An NVLink of a GPU on a host.
    Nvlink {
        host: Option<String>,
        gpu: u32,
        link: u32,
    },
}

/// Where a link's capacity is known from, its names borrowed from the
/// section that read it (ordered as the owned key is): a host's sections
/// name a capacity per NVLink and per port, and a copy of the host's name
/// per capacity was a thousand small allocations per host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum LinkKeyRef<'a> {
    /// An InfiniBand port addressed by LID (fabric-wide).
    Lid { lid: u32, port: u32 },
    /// A CA port by name on a host.
    CaPort {
        host: Option<&'a str>,
        ca: &'a str,
        port: u32,
    },
    /// An NVLink of a GPU on a host.
    Nvlink {
        host: Option<&'a str>,
        gpu: u32,
        link: u32,
    },
}

#[cfg(test)]
impl LinkKey {
    /// The key with its names borrowed.
    pub(crate) fn borrowed(&self) -> LinkKeyRef<'_> {
        match self {
            Self::Lid { lid, port } => LinkKeyRef::Lid {
                lid: *lid,
                port: *port,
            },
            Self::CaPort { host, ca, port } => LinkKeyRef::CaPort {
                host: host.as_deref(),
                ca,
                port: *port,
            },
            Self::Nvlink { host, gpu, link } => LinkKeyRef::Nvlink {
                host: host.as_deref(),
                gpu: *gpu,
                link: *link,
            },
        }
    }
}

/// A unit's link capacities in key order, one per key: the last one read
/// wins, as when each was inserted into a `BTreeMap`.
///
/// A sorted vector, not a tree: built once from the readings in the order
/// read (which is mostly key order, so the one stable sort is close to a
/// single pass), then only looked up and walked. Inserting each into a tree
/// compared the owned keys' host names at every level.
#[derive(Debug, Default)]
pub(crate) struct Capacities<'d> {
    entries: Vec<(LinkKeyRef<'d>, Capacity)>,
    /// The words of the capacities, by [`Capacity::source`].
    words: Vec<Arc<str>>,
}

impl<'d> Capacities<'d> {
    /// The capacities `read` (in the order read) give, their words in
    /// `words`.
    pub(crate) fn from_read(
        mut read: Vec<(LinkKeyRef<'d>, Capacity)>,
        words: Vec<Arc<str>>,
    ) -> Self {
        // Stable: of equal keys, the one read last stays last.
        read.sort_by_key(|(key, _)| *key);
        let mut entries: Vec<(LinkKeyRef<'d>, Capacity)> = Vec::with_capacity(read.len());
        for (key, capacity) in read {
            match entries.last_mut() {
                Some((last, slot)) if *last == key => *slot = capacity,
                _ => entries.push((key, capacity)),
            }
        }
        Self { entries, words }
    }

    /// How `capacity` was found, in words.
    pub(crate) fn words_of(&self, capacity: &Capacity) -> Option<&Arc<str>> {
        self.words.get(capacity.source as usize)
    }

    /// The capacity of the link `key` names.
    pub(crate) fn get(&self, key: LinkKeyRef<'_>) -> Option<&Capacity> {
        let at = self.entries.binary_search_by(|(k, _)| k.cmp(&key)).ok()?;
        self.entries.get(at).map(|(_, c)| c)
    }

    /// Every key and capacity, in key order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &(LinkKeyRef<'d>, Capacity)> + '_ {
        self.entries.iter()
    }
}

/// Capacity of one link in one direction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Capacity {
    /// Data rate per direction, Gb/s.
    pub gbit_per_second: f64,
    /// How it was found (`ibstat Rate`, `iblinkinfo 4X × 25.78125 Gb/s per
    /// lane`…): the position of its words in its section's
    /// [`Extracted::capacity_words`] (then in its unit's, see
    /// [`Capacities::words_of`]). A host's NVLinks mostly share one speed,
    /// and so its words; shared as an `Arc` per link, they cost an atomic
    /// count up and down each (a stall on every link: a tenth of the
    /// measuring's own time).
    pub source: u32,
    /// Lines it was read from.
    pub span: LineSpan,
}

/// Who a reading is about, with its names borrowed from the section: the
/// neutral [`Subject`] without a copy of its host's (or device's) name per
/// port and per link of every section. The unit's interner copies each
/// distinct subject's names once.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub(crate) struct SubjectRef<'d> {
    pub host: Option<&'d str>,
    pub device: Option<&'d str>,
    pub guid: Option<crate::model::ib::Guid>,
    pub lid: Option<u32>,
    pub port: Option<u32>,
    pub gpu: Option<u32>,
    pub link: Option<u32>,
    pub lane: Option<u32>,
}

impl<'d> SubjectRef<'d> {
    /// `subject` with its names borrowed.
    pub(crate) fn of(subject: &'d Subject) -> Self {
        Self {
            host: subject.host.as_deref(),
            device: subject.device.as_deref(),
            guid: subject.guid,
            lid: subject.lid,
            port: subject.port,
            gpu: subject.gpu,
            link: subject.link,
            lane: subject.lane,
        }
    }

    /// The owned subject.
    pub(crate) fn to_subject(self) -> Subject {
        Subject {
            host: self.host.map(str::to_owned),
            device: self.device.map(str::to_owned),
            guid: self.guid,
            lid: self.lid,
            port: self.port,
            gpu: self.gpu,
            link: self.link,
            lane: self.lane,
        }
    }
}

/// One counter reading of a section in the neutral form: its subject and
/// counter set indexes into the section's, and its name borrowed from the
/// section (a host has a thousand readings but a few hundred subjects and
/// a handful of counter sets: none is copied per reading).
#[derive(Debug)]
pub(crate) struct Reading<'d> {
    /// Position of the subject in [`Extracted::subjects`].
    pub subject: usize,
    /// Position of the counter set in [`Extracted::sources`].
    pub source: usize,
    /// The counter's name as the model keys it (lane suffix removed).
    pub name: &'d str,
    /// Value, width, saturation.
    pub counter: Counter,
    /// What one count stands for.
    pub unit: CounterUnit,
    /// What the counter tells.
    pub role: Role,
    /// Input lines it was read from.
    pub span: LineSpan,
}

/// What one section contributes.
#[derive(Debug, Default)]
pub(crate) struct Extracted<'d> {
    /// The subjects the readings name, each once per place it is read.
    pub subjects: Vec<SubjectRef<'d>>,
    /// The counter sets the readings name (a section reads one, or one
    /// per perfquery attribute): each reading's is one of these, not a
    /// copy, and is looked up by the measuring once per section.
    pub sources: Vec<CounterSource>,
    pub samples: Vec<Reading<'d>>,
    pub capacities: Vec<(LinkKeyRef<'d>, Capacity)>,
    /// The words of the section's capacities, by [`Capacity::source`].
    pub capacity_words: Vec<Arc<str>>,
    /// `(wall-clock seconds, offset from UTC if known, text, span)`.
    pub time: Option<(f64, Option<f64>, String, LineSpan)>,
}

impl<'d> Extracted<'d> {
    /// Adds a subject; its position names it in readings.
    fn subject(&mut self, subject: SubjectRef<'d>) -> usize {
        self.subjects.push(subject);
        self.subjects.len() - 1
    }

    /// The position of new capacity words among the section's.
    fn capacity_words(&mut self, words: String) -> u32 {
        self.capacity_words.push(Arc::from(words));
        u32::try_from(self.capacity_words.len() - 1).unwrap_or(u32::MAX)
    }

    /// The position of `source` among the section's counter sets, added
    /// when new (a handful at most: found by a scan).
    fn source(&mut self, source: CounterSource) -> usize {
        match self.sources.iter().position(|s| *s == source) {
            Some(at) => at,
            None => {
                self.sources.push(source);
                self.sources.len() - 1
            }
        }
    }
}

/// Reads what a section offers to the statistics.
pub(crate) fn extract(section: &Section) -> Extracted<'_> {
    let host = section.host.as_deref();
    let mut out = Extracted::default();
    match &section.data {
        SectionData::Perfquery(p) | SectionData::SysfsCounters(p) => {
            perfquery(p, host, false, &mut out);
        }
        // node_exporter's counters are sysfs's; a sample's time stamp (the
        // same on every sample of a scrape) is the time of the reading.
        SectionData::NodeExporter(m) => {
            for scrape in &m.scrapes {
                perfquery(&scrape.counters, host, false, &mut out);
            }
            out.time = node_exporter_time(m, section.span);
        }
        // The fabric's ports, not the host's where the file was read (as
        // the rules see them: a count two dumps show unchanged is then
        // history whatever prompt the dumps were pasted under), named by
        // their Port Name.
        SectionData::IbdiagnetPm(p) => perfquery(p, None, true, &mut out),
        SectionData::Nvlink(n) => nvlink(n, host, &mut out),
        SectionData::Ibstat(i) => ibstat(i, host, &mut out),
        SectionData::Iblinkinfo(i) => iblinkinfo(i, &mut out),
        // The fabric's ports too, as the rules see them (they key an
        // ibqueryerrors port by its GUID and port, with no host): a count
        // two runs show unchanged is history whatever prompt each run was
        // pasted under. Keyed by the host that ran it, no rate matched a
        // port the rules judge.
        SectionData::Ibqueryerrors(q) => ibqueryerrors(q, &mut out),
        SectionData::DcgmiNvlinkErrors(d) => dcgmi_nvlink(d, host, &mut out),
        SectionData::SmiQuery(q) => out.time = smi_query_time(q, section.span),
        SectionData::Date(d) => {
            out.time = d.stamp.as_ref().map(|s| {
                (
                    s.wall_clock_seconds,
                    s.timestamp_unix(),
                    s.text.clone(),
                    s.span,
                )
            });
        }
        _ => {}
    }
    out
}

/// `nvidia-smi -q` prints `Timestamp : Mon Nov 30 00:53:23 2026` in the
/// host's zone without naming it: a wall-clock reading, good for intervals
/// between readings of the same host.
#[allow(clippy::cast_precision_loss)] // seconds since 1970 fit f64 exactly
fn smi_query_time(q: &SmiQuery, span: LineSpan) -> Option<(f64, Option<f64>, String, LineSpan)> {
    let seconds = q.timestamp_unix? as f64;
    let text = q.timestamp.clone().unwrap_or_default();
    Some((
        seconds,
        None,
        format!("nvidia-smi -q Timestamp {text}"),
        span,
    ))
}

/// The time stamp every sample of the section's one scrape carries, as
/// Unix seconds.
fn node_exporter_time(
    m: &crate::model::node_exporter::NodeExporter,
    span: LineSpan,
) -> Option<(f64, Option<f64>, String, LineSpan)> {
    let [scrape] = m.scrapes.as_slice() else {
        return None;
    };
    let ms = scrape.timestamp_ms?;
    #[allow(clippy::cast_precision_loss)] // milliseconds since 1970 fit
    let seconds = ms as f64 / 1000.0;
    Some((
        seconds,
        Some(seconds),
        format!("node_exporter sample time {ms}"),
        span,
    ))
}

/// `ibqueryerrors` lists, per port, the counters above threshold (or all
/// data counters with `--counters`); ports are named by node description
/// and by the port GUID every port line prints. The GUID is what tells
/// ports apart when their lines were pasted without the `Errors for`
/// header that names the node (`grep SymbolErrorCounter` keeps only port
/// lines): two such lines of different GUIDs are two ports, never two
/// snapshots of one.
fn ibqueryerrors<'d>(q: &'d Ibqueryerrors, out: &mut Extracted<'d>) {
    let source = out.source(CounterSource::Ibqueryerrors);
    for node in &q.nodes {
        for port in &node.ports {
            let subject = out.subject(SubjectRef {
                // A node the paste does not name is no device named "".
                device: (!node.headerless).then_some(node.desc.as_str()),
                guid: Some(port.guid),
                lid: port.link.as_ref().map(|l| l.lid),
                port: Some(port.port),
                ..SubjectRef::default()
            });
            for (id, counter) in port.counters.iter() {
                let (name, words) = perf_words_of(id);
                let (unit, role) = words.whole;
                out.samples.push(Reading {
                    subject,
                    source,
                    name,
                    counter: *counter,
                    unit,
                    role,
                    span: port.span,
                });
            }
        }
    }
}

/// `dcgmi nvlink -e`: per-link CRC, replay and recovery counts (width not printed).
fn dcgmi_nvlink<'d>(d: &DcgmiNvlinkErrors, host: Option<&'d str>, out: &mut Extracted<'d>) {
    let Some(gpu) = d.gpu else { return };
    let source = out.source(CounterSource::DcgmiNvlink);
    for link in &d.links {
        let subject = out.subject(SubjectRef {
            host,
            gpu: Some(gpu),
            link: Some(link.link),
            ..SubjectRef::default()
        });
        let counters = [
            ("crc_flit_errors", link.crc_flit, Role::BitErrors),
            ("crc_data_errors", link.crc_data, Role::BitErrors),
            ("replay_errors", link.replay, Role::Errors),
            ("recovery_errors", link.recovery, Role::Errors),
        ];
        for (name, value, role) in counters {
            let Some(value) = value else { continue };
            out.samples.push(Reading {
                subject,
                source,
                name,
                counter: Counter::unknown_width(value),
                unit: CounterUnit::Events,
                role,
                span: link.span,
            });
        }
    }
}

/// PortXmitData/PortRcvData (and the per-SL data counters) count 4-octet words.
fn perf_unit_and_role(name: &str) -> (CounterUnit, Role) {
    let traffic = |direction| Role::Traffic {
        direction,
        layer: Layer::Data,
    };
    if name.starts_with("PortXmitData") {
        return (CounterUnit::FourOctets, traffic(Direction::Tx));
    }
    if name.starts_with("PortRcvData") {
        return (CounterUnit::FourOctets, traffic(Direction::Rx));
    }
    if name.contains("Pkts") || name.contains("Packets") {
        return (CounterUnit::Packets, Role::Other);
    }
    if name.starts_with("SymbolError") {
        return (CounterUnit::Events, Role::BitErrors);
    }
    if name.contains("XmitWait") || name.contains("Wait") {
        return (CounterUnit::Events, Role::Congestion);
    }
    if [
        "error", "discard", "dropped", "downed", "recovery", "fec", "overrun", "block",
    ]
    .iter()
    .any(|w| contains_ignoring_ascii_case(name, w))
    {
        return (CounterUnit::Events, Role::Errors);
    }
    (CounterUnit::Events, Role::Other)
}

/// What a perfquery or ibqueryerrors counter name says: the unit and role
/// of the whole name (ibqueryerrors keeps lane suffixes), and the name
/// without its lane suffix, the lane, and that base name's unit and role
/// (perfquery's per-lane counters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PerfWords<'n> {
    whole: (CounterUnit, Role),
    base: &'n str,
    lane: Option<u32>,
    unit: CounterUnit,
    role: Role,
}

/// Works out [`PerfWords`] from the name's text. A name without a lane
/// suffix is its own base: classified once, not twice (the table of every
/// known counter's words is built this way, a dozen substring searches per
/// name).
fn perf_words(name: &str) -> PerfWords<'_> {
    let (base, lane) = lane_suffix(name);
    let (unit, role) = perf_unit_and_role(base);
    PerfWords {
        whole: if lane.is_none() {
            (unit, role)
        } else {
            perf_unit_and_role(name)
        },
        base,
        lane,
        unit,
        role,
    }
}

/// The name of `id` and its [`PerfWords`]: for a counter the tables know,
/// read from a table worked out once. Classifying the name's text (a dozen
/// substring searches) for each of a fleet's million readings was a third
/// of the extraction's time.
fn perf_words_of(id: &CounterId) -> (&str, PerfWords<'_>) {
    let known = id
        .known()
        .and_then(|k| known_perf_words().get(&k).map(|w| (k.name(), *w)));
    known.unwrap_or_else(|| (id.name(), perf_words(id.name())))
}

/// [`perf_words`] of every name the counter tables know.
fn known_perf_words() -> &'static FxHashMap<KnownCounter, PerfWords<'static>> {
    static WORDS: OnceLock<FxHashMap<KnownCounter, PerfWords<'static>>> = OnceLock::new();
    WORDS.get_or_init(|| {
        KnownCounter::all()
            .map(|k| (k, perf_words(k.name())))
            .collect()
    })
}

/// Whether `haystack` contains `needle` (lower-case ASCII) when ASCII
/// letters are compared without case: `to_ascii_lowercase().contains()`
/// without a copy of the name per reading.
fn contains_ignoring_ascii_case(haystack: &str, needle: &str) -> bool {
    let needle = needle.as_bytes();
    needle.is_empty()
        || haystack
            .as_bytes()
            .windows(needle.len())
            .any(|w| w.eq_ignore_ascii_case(needle))
}

/// `ErrorDetectionCounterLane[3]` → (`ErrorDetectionCounterLane`, Some(3)).
fn lane_suffix(name: &str) -> (&str, Option<u32>) {
    if let Some(open) = name.rfind('[') {
        if let (Some(inner), Some(base)) = (
            name.get(open + 1..name.len().saturating_sub(1)),
            name.get(..open),
        ) {
            if name.ends_with(']') {
                if let Ok(lane) = inner.parse() {
                    return (base, Some(lane));
                }
            }
        }
    }
    (name, None)
}

/// Perfquery-model blocks; `named` ports (ibdiagnet2.pm's) keep their
/// `port_id` as the subject's device even with a LID.
fn perfquery<'d>(p: &'d Perfquery, host: Option<&'d str>, named: bool, out: &mut Extracted<'d>) {
    // A block without its header names no port: two of them in two
    // snapshots may be different ports, so no rate or peer group uses them.
    let headed = p.blocks.iter().filter(|b| {
        b.partial
            .as_ref()
            .is_none_or(|x| x.reason != crate::model::partial::PartialReason::NoHeader)
    });
    // Room for every reading at once (see `nvlink`).
    out.samples
        .reserve(headed.clone().map(|b| b.counters.len()).sum::<usize>());
    for block in headed {
        let source = out.source(CounterSource::Perfquery(block.attribute.clone()));
        let port = SubjectRef {
            host,
            lid: block.lid,
            port: block.port,
            device: if named || block.lid.is_none() {
                Some(&block.port_id)
            } else {
                None
            },
            ..SubjectRef::default()
        };
        // The block's subject, and one per lane its per-lane counters name.
        let mut whole: Option<usize> = None;
        let mut lanes: Vec<(u32, usize)> = Vec::new();
        for (id, counter) in block.counters.iter() {
            let PerfWords {
                base,
                lane,
                unit,
                role,
                ..
            } = perf_words_of(id).1;
            let subject = match lane {
                None => *whole.get_or_insert_with(|| out.subject(port)),
                Some(lane) => match lanes.iter().find(|(l, _)| *l == lane) {
                    Some((_, at)) => *at,
                    None => {
                        let at = out.subject(SubjectRef {
                            lane: Some(lane),
                            ..port
                        });
                        lanes.push((lane, at));
                        at
                    }
                },
            };
            out.samples.push(Reading {
                subject,
                source,
                name: base,
                counter: *counter,
                unit,
                role,
                span: block.span,
            });
        }
    }
}

fn nvlink_role(name: &str) -> (CounterUnit, Role) {
    let traffic = |direction, layer| (CounterUnit::Kib, Role::Traffic { direction, layer });
    match name {
        "data_tx_kib" => traffic(Direction::Tx, Layer::Data),
        "data_rx_kib" => traffic(Direction::Rx, Layer::Data),
        "raw_tx_kib" => traffic(Direction::Tx, Layer::Raw),
        "raw_rx_kib" => traffic(Direction::Rx, Layer::Raw),
        "tx0_kib" | "tx1_kib" => traffic(Direction::Tx, Layer::Data),
        "rx0_kib" | "rx1_kib" => traffic(Direction::Rx, Layer::Data),
        "crc_errors" | "crc_flit_errors" | "crc_data_errors" => {
            (CounterUnit::Events, Role::BitErrors)
        }
        n if n.ends_with("_kib") => (CounterUnit::Kib, Role::Other),
        _ => (CounterUnit::Events, Role::Errors),
    }
}

/// The name of `id` and its [`nvlink_role`], for a known counter read from
/// a table worked out once (see [`perf_words_of`]).
fn nvlink_role_of(id: &CounterId) -> (&str, (CounterUnit, Role)) {
    static ROLES: OnceLock<FxHashMap<KnownCounter, (CounterUnit, Role)>> = OnceLock::new();
    let roles = ROLES.get_or_init(|| {
        KnownCounter::all()
            .map(|k| (k, nvlink_role(k.name())))
            .collect()
    });
    let known = id
        .known()
        .and_then(|k| roles.get(&k).map(|r| (k.name(), *r)));
    known.unwrap_or_else(|| (id.name(), nvlink_role(id.name())))
}

fn nvlink<'d>(n: &'d Nvlink, host: Option<&'d str>, out: &mut Extracted<'d>) {
    // The words of the last link speed: a host's links mostly share one.
    let mut speed_words: Option<(u64, u32)> = None;
    // The known counter found at each position of a link's counters, with
    // its name and words (see below).
    let mut roles_at: Vec<(KnownCounter, &'d str, (CounterUnit, Role))> = Vec::new();
    // Links of an unknown GPU (no header in the paste) cannot be matched
    // with the same GPU in another snapshot: no rate is computed for them.
    let gpus = || n.gpus.iter().filter(|g| !g.headerless);
    // Room for every reading and subject at once: growing the buffers link
    // by link copied a section's readings several times over.
    let (readings, subjects, speeds) =
        gpus()
            .flat_map(|g| &g.links)
            .fold((0, 0, 0), |(readings, subjects, speeds), link| {
                (
                    readings + link.counters.len() + link.lanes().len(),
                    subjects + 1 + link.lanes().len(),
                    speeds + usize::from(link.speed_gb_per_s.is_some()),
                )
            });
    out.samples.reserve(readings);
    out.subjects.reserve(subjects);
    out.capacities.reserve(speeds);
    let source = out.source(CounterSource::NvidiaSmiNvlink);
    for gpu in gpus() {
        for link in &gpu.links {
            let subject = SubjectRef {
                host,
                gpu: Some(gpu.index),
                link: Some(link.link),
                ..SubjectRef::default()
            };
            if let Some(speed) = link.speed_gb_per_s {
                let source = match speed_words {
                    Some((bits, words)) if bits == speed.to_bits() => words,
                    _ => {
                        let words = out.capacity_words(format!(
                            "nvidia-smi nvlink -s: {speed} GB/s per direction × 8 bits"
                        ));
                        speed_words = Some((speed.to_bits(), words));
                        words
                    }
                };
                out.capacities.push((
                    LinkKeyRef::Nvlink {
                        host,
                        gpu: gpu.index,
                        link: link.link,
                    },
                    Capacity {
                        gbit_per_second: speed * 8.0,
                        source,
                        span: link.span,
                    },
                ));
            }
            // The lanes' subjects, one after the other from `first_lane`
            // (no vector of their positions per link: most links have none).
            let first_lane = out.subjects.len();
            out.subjects
                .extend(link.lanes().iter().map(|lane| SubjectRef {
                    lane: Some(lane.lane),
                    ..subject
                }));
            let at = if link.counters.is_empty() {
                None
            } else {
                Some(out.subject(subject))
            };
            for (position, (id, counter)) in link.counters.iter().enumerate() {
                let Some(subject) = at else { break };
                // A section's links list the same counters in the same
                // order: the one at this position on the link before is
                // most often this one, found without a map look-up.
                let known = id.known();
                let cached = roles_at.get(position).copied();
                let (name, (unit, role)) = match (known, cached) {
                    (Some(k), Some((last, name, words))) if last == k => (name, words),
                    _ => {
                        let (name, words) = nvlink_role_of(id);
                        if let Some(k) = known {
                            if let Some(slot) = roles_at.get_mut(position) {
                                *slot = (k, name, words);
                            } else if roles_at.len() == position {
                                roles_at.push((k, name, words));
                            }
                        }
                        (name, words)
                    }
                };
                out.samples.push(Reading {
                    subject,
                    source,
                    name,
                    counter: *counter,
                    unit,
                    role,
                    span: link.span,
                });
            }
            for (lane, subject) in link.lanes().iter().zip(first_lane..) {
                let counter = Counter {
                    saturated: lane.ecc_correction_count.saturated || lane.overflow,
                    ..lane.ecc_correction_count
                };
                out.samples.push(Reading {
                    subject,
                    source,
                    name: "ecc_correction_count",
                    counter,
                    unit: CounterUnit::Events,
                    role: Role::BitErrors,
                    span: link.span,
                });
            }
        }
    }
}

fn ibstat<'d>(i: &'d Ibstat, host: Option<&'d str>, out: &mut Extracted<'d>) {
    for ca in &i.cas {
        for port in &ca.ports {
            let Some(rate) = port.rate_gbps else { continue };
            // SDR/DDR/QDR rates (10/20/40) are signalling rates of an 8b/10b code.
            let eight_ten = rate <= 40.0 && !port.fdr10;
            let capacity = Capacity {
                gbit_per_second: if eight_ten { rate * 0.8 } else { rate },
                source: out.capacity_words(if eight_ten {
                    format!(
                        "ibstat {} port {} Rate: {rate} Gb/s × 0.8 (8b/10b)",
                        ca.name, port.number
                    )
                } else {
                    format!("ibstat {} port {} Rate: {rate} Gb/s", ca.name, port.number)
                }),
                span: port.span,
            };
            if let Some(lid) = port.base_lid.filter(|l| *l != 0 && *l != 65_535) {
                out.capacities.push((
                    LinkKeyRef::Lid {
                        lid,
                        port: port.number,
                    },
                    capacity,
                ));
            }
            out.capacities.push((
                LinkKeyRef::CaPort {
                    host,
                    ca: &ca.name,
                    port: port.number,
                },
                capacity,
            ));
        }
    }
}

/// Data rate of one lane from its signalling rate: 8b/10b up to QDR
/// (10 Gb/s), 64b/66b from FDR10/FDR (10.3125, 14.0625) and EDR (25.78125);
/// PAM4 rates (HDR 53.125, NDR 106.25) are quoted here as the 64b/66b figure,
/// which matches the nominal 200/400 Gb/s within 3 %.
fn lane_data_gbps(signalling: f64) -> f64 {
    if signalling <= 10.0 {
        signalling * 0.8
    } else {
        signalling * 64.0 / 66.0
    }
}

fn iblinkinfo(info: &Iblinkinfo, out: &mut Extracted<'_>) {
    for node in &info.nodes {
        for port in &node.ports {
            let (Some(lanes), Some(speed)) = (
                port.width.as_ref().and_then(|w| w.lanes),
                port.speed_gbps_per_lane,
            ) else {
                continue;
            };
            let capacity = Capacity {
                gbit_per_second: f64::from(lanes) * lane_data_gbps(speed),
                source: out.capacity_words(format!(
                    "iblinkinfo {lanes}X × {speed} Gb/s per lane (line-code overhead removed)"
                )),
                span: port.span,
            };
            if let Some(remote) = &port.remote {
                out.capacities.push((
                    LinkKeyRef::Lid {
                        lid: remote.lid,
                        port: remote.port,
                    },
                    capacity,
                ));
            }
            out.capacities.push((
                LinkKeyRef::Lid {
                    lid: port.lid,
                    port: port.port,
                },
                capacity,
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_counters_are_four_octet_words() {
        assert_eq!(
            perf_unit_and_role("PortXmitData").0,
            CounterUnit::FourOctets
        );
        assert_eq!(
            perf_unit_and_role("PortRcvDataSL3").0,
            CounterUnit::FourOctets
        );
        assert_eq!(perf_unit_and_role("PortXmitPkts").1, Role::Other);
        assert_eq!(perf_unit_and_role("SymbolErrorCounter").1, Role::BitErrors);
        assert_eq!(
            perf_unit_and_role("LinkErrorRecoveryCounter").1,
            Role::Errors
        );
        assert_eq!(perf_unit_and_role("PortXmitWait").1, Role::Congestion);
        assert_eq!(
            lane_suffix("ErrorDetectionCounterLane[3]"),
            ("ErrorDetectionCounterLane", Some(3))
        );
        assert_eq!(lane_suffix("PortXmitData"), ("PortXmitData", None));
        for (hay, needle) in [
            ("PortRcvErrors", "error"),
            ("LinkDownedCounter", "downed"),
            ("VL15Dropped", "dropped"),
            ("FECCorrectableBlockCounter", "fec"),
            ("PortXmitWait", "error"),
            ("", "fec"),
            ("Fe", "fec"),
        ] {
            assert_eq!(
                contains_ignoring_ascii_case(hay, needle),
                hay.to_ascii_lowercase().contains(needle),
                "{hay} {needle}"
            );
        }
    }

    /// The table of known counters says what the name's text says, for
    /// every name the tables know and for names they do not.
    #[test]
    fn known_counter_words_are_the_words_of_their_names() {
        for k in KnownCounter::all() {
            let id = CounterId::Known(k);
            let (name, words) = perf_words_of(&id);
            assert_eq!(name, k.name());
            assert_eq!(words, perf_words(k.name()), "{name}");
            assert_eq!(words.whole, perf_unit_and_role(name));
        }
        for k in KnownCounter::all() {
            assert_eq!(
                nvlink_role_of(&CounterId::Known(k)),
                (k.name(), nvlink_role(k.name()))
            );
        }
        for name in ["ErrorDetectionCounterLane[3]", "PortRcvDataSL[2]", "Vendor"] {
            let id = CounterId::from_name(name);
            assert_eq!(nvlink_role_of(&id), (name, nvlink_role(name)));
            assert!(id.known().is_none(), "{name}");
            let (got, words) = perf_words_of(&id);
            assert_eq!(got, name);
            assert_eq!(words, perf_words(name));
        }
        assert_eq!(
            perf_words("ErrorDetectionCounterLane[3]"),
            PerfWords {
                whole: (CounterUnit::Events, Role::Errors),
                base: "ErrorDetectionCounterLane",
                lane: Some(3),
                unit: CounterUnit::Events,
                role: Role::Errors,
            }
        );
    }

    /// Each reading names its block's counter set among its section's,
    /// each set kept once: a `perfquery` paste of two attributes, the
    /// plain one twice.
    #[test]
    fn readings_name_their_blocks_counter_set() {
        let block = |header: &str, lid: u32, fields: &str| {
            format!("# {header} counters: Lid {lid} port 1 (CapMask: 0x5A00)\nPortSelect:......................1\n{fields}")
        };
        let text = format!(
            "$ perfquery -x 12 1\n{}{}{}",
            block("Port", 12, "SymbolErrorCounter:..............3\n"),
            block(
                "Port extended",
                12,
                "PortXmitData:....................9\nPortRcvData:.....................8\n"
            ),
            block("Port", 13, "LinkDownedCounter:...............1\n"),
        );
        let document =
            crate::input::read(&text, &crate::input::ReadOptions::default()).expect("recognised");
        let mut got = Vec::new();
        for section in &document.sections {
            let out = extract(section);
            for reading in &out.samples {
                got.push((reading.name, out.sources.get(reading.source).cloned()));
            }
            for (at, source) in out.sources.iter().enumerate() {
                assert!(!out.sources[..at].contains(source), "{source:?} kept twice");
            }
        }
        let plain = Some(CounterSource::Perfquery(
            crate::model::perfquery::PerfAttribute::PortCounters,
        ));
        let extended = Some(CounterSource::Perfquery(
            crate::model::perfquery::PerfAttribute::PortCountersExtended,
        ));
        // By name: a block lists its counters in the model's order.
        got.sort_by_key(|(name, _)| *name);
        assert_eq!(
            got,
            [
                ("LinkDownedCounter", plain.clone()),
                ("PortRcvData", extended.clone()),
                ("PortXmitData", extended),
                ("SymbolErrorCounter", plain),
            ]
        );
    }

    use proptest::prelude::*;

    fn link_key(variant: u8, host: Option<&str>, a: u32, b: u32) -> LinkKey {
        match variant % 3 {
            0 => LinkKey::Lid { lid: a, port: b },
            1 => LinkKey::CaPort {
                host: host.map(str::to_owned),
                ca: format!("mlx5_{a}"),
                port: b,
            },
            _ => LinkKey::Nvlink {
                host: host.map(str::to_owned),
                gpu: a,
                link: b,
            },
        }
    }

    proptest! {
        /// The sorted capacities hold what inserting each into a
        /// `BTreeMap` kept (the last of equal keys), in its order, and find
        /// every key it holds and none it does not.
        #[test]
        fn capacities_are_the_tree_they_replaced(
            read in proptest::collection::vec(
                (0u8..3, prop_oneof![Just(None), Just(Some("a")), Just(Some("b")), Just(Some("ab"))], 0u32..3, 0u32..3),
                0..40,
            ),
            probes in proptest::collection::vec(
                (0u8..3, prop_oneof![Just(None), Just(Some("a")), Just(Some("b"))], 0u32..4, 0u32..4),
                0..10,
            ),
        ) {
            let mut tree: std::collections::BTreeMap<LinkKey, Capacity> = std::collections::BTreeMap::new();
            let mut owned = Vec::new();
            let mut words: Vec<Arc<str>> = Vec::new();
            for (at, (variant, host, a, b)) in read.into_iter().enumerate() {
                words.push(Arc::from(format!("read {at}")));
                let capacity = Capacity {
                    gbit_per_second: at as f64,
                    source: at as u32,
                    span: LineSpan::line(at + 1),
                };
                let key = link_key(variant, host, a, b);
                tree.insert(key.clone(), capacity);
                owned.push((key, capacity));
            }
            // Read with their names borrowed, as the measuring reads them.
            let list = owned.iter().map(|(key, capacity)| (key.borrowed(), *capacity)).collect();
            let capacities = Capacities::from_read(list, words.clone());
            let got: Vec<(LinkKeyRef<'_>, &Capacity)> = capacities.iter().map(|(k, c)| (*k, c)).collect();
            let want: Vec<(LinkKeyRef<'_>, &Capacity)> = tree.iter().map(|(k, c)| (k.borrowed(), c)).collect();
            prop_assert_eq!(got, want);
            for (key, capacity) in &tree {
                let got = capacities.get(key.borrowed());
                prop_assert_eq!(got, Some(capacity));
                let read_as = format!("read {}", capacity.source);
                prop_assert_eq!(got.and_then(|c| capacities.words_of(c)).map(|w| &**w), Some(read_as.as_str()));
            }
            for (variant, host, a, b) in probes {
                let key = link_key(variant, host, a, b);
                prop_assert_eq!(capacities.get(key.borrowed()), tree.get(&key));
            }
        }
    }

    proptest! {
        /// A name's words are what classifying its text says: the whole
        /// name's (worked out once when it has no lane suffix), and its
        /// base's after the suffix is taken off.
        #[test]
        fn perf_words_classify_the_whole_name_and_its_base(
            parts in proptest::collection::vec(
                prop_oneof![
                    Just("PortXmitData"), Just("PortRcvData"), Just("Pkts"), Just("SymbolError"),
                    Just("Wait"), Just("ERROR"), Just("Fec"), Just("Block"), Just("Lane"),
                    Just("x"), Just("["), Just("]"), Just("[3]"), Just("[12]"), Just("[-1]"),
                ],
                0..5,
            ),
        ) {
            let name = parts.concat();
            let words = perf_words(&name);
            let (base, lane) = lane_suffix(&name);
            prop_assert_eq!(words.whole, perf_unit_and_role(&name));
            prop_assert_eq!((words.base, words.lane), (base, lane));
            prop_assert_eq!((words.unit, words.role), perf_unit_and_role(base));
        }

        /// nvlink readings name and classify each counter as its text says,
        /// whatever counters (known to the tables or not) each link lists
        /// (the words are found by position on the link before), and their
        /// subjects are each link's lanes, then the link, in order.
        #[test]
        fn nvlink_readings_are_classified_by_their_names(
            gpus in proptest::collection::vec(
                (
                    any::<bool>(),
                    proptest::collection::vec(
                        (proptest::collection::vec(any::<bool>(), 7), 0usize..3),
                        0..5,
                    ),
                ),
                0..3,
            ),
        ) {
            let names = [
                "replay_errors", "recovery_errors", "crc_errors", "data_tx_kib",
                "data_rx_kib", "vendor_kib", "vendor_count",
            ];
            let mut n = Nvlink::default();
            for (g, (headerless, links)) in gpus.iter().enumerate() {
                let mut gpu = crate::model::nvlink::NvlinkGpu {
                    index: g as u32,
                    headerless: *headerless,
                    ..Default::default()
                };
                for (l, (listed, lanes)) in links.iter().enumerate() {
                    let mut link = crate::model::nvlink::NvlinkLink {
                        link: l as u32,
                        span: LineSpan::line(l + 1),
                        ..Default::default()
                    };
                    for (at, name) in names.iter().enumerate() {
                        if listed[at] {
                            link.counters.insert(*name, Counter::unknown_width(at as u64));
                        }
                    }
                    link.set_detail(crate::model::nvlink::LinkDetail {
                        lanes: (0..*lanes as u32)
                            .map(|lane| crate::model::nvlink::LaneEcc {
                                lane,
                                ecc_correction_count: Counter::unknown_width(u64::from(lane)),
                                overflow: false,
                            })
                            .collect(),
                        ..Default::default()
                    });
                    gpu.links.push(link);
                }
                n.gpus.push(gpu);
            }
            let mut out = Extracted::default();
            nvlink(&n, Some("h"), &mut out);
            let mut subjects = Vec::new();
            let mut readings = Vec::new();
            for gpu in n.gpus.iter().filter(|g| !g.headerless) {
                for link in &gpu.links {
                    let subject = SubjectRef {
                        host: Some("h"),
                        gpu: Some(gpu.index),
                        link: Some(link.link),
                        ..SubjectRef::default()
                    };
                    let first_lane = subjects.len();
                    for lane in link.lanes() {
                        subjects.push(SubjectRef { lane: Some(lane.lane), ..subject });
                    }
                    if !link.counters.is_empty() {
                        subjects.push(subject);
                    }
                    for (id, counter) in link.counters.iter() {
                        let (unit, role) = nvlink_role(id.name());
                        readings.push((subjects.len() - 1, id.name().to_owned(), counter.value, unit, role));
                    }
                    for (at, lane) in link.lanes().iter().enumerate() {
                        readings.push((
                            first_lane + at,
                            "ecc_correction_count".to_owned(),
                            lane.ecc_correction_count.value,
                            CounterUnit::Events,
                            Role::BitErrors,
                        ));
                    }
                }
            }
            let got: Vec<_> = out
                .samples
                .iter()
                .map(|r| (r.subject, r.name.to_owned(), r.counter.value, r.unit, r.role))
                .collect();
            prop_assert_eq!(&out.subjects, &subjects);
            prop_assert_eq!(got, readings);
            for reading in &out.samples {
                prop_assert_eq!(out.sources.get(reading.source), Some(&CounterSource::NvidiaSmiNvlink));
            }
        }
    }

    #[test]
    fn lane_rates_lose_their_line_code() {
        assert!((4.0 * lane_data_gbps(25.781_25) - 100.0).abs() < 1e-9);
        assert!((4.0 * lane_data_gbps(10.0) - 32.0).abs() < 1e-9);
    }
}
