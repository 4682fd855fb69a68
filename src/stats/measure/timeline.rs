//! Snapshots on a time line: when each counter-bearing section was read,
//! which readings form one series, and the interval between two snapshots.

use super::super::extract::{Extracted, SubjectRef};
use super::super::sample::{CounterUnit, Role, Subject};
use super::super::{CounterSource, StatsOptions};
use super::records::IntervalSource;
use crate::model::ib::Guid;
use crate::model::port_index::PortIndex;
use crate::span::LineSpan;
use rustc_hash::FxHashMap;
use std::borrow::Borrow;
use std::collections::hash_map::Entry;
use std::collections::BTreeMap;
use std::hash::Hash;
use std::sync::Arc;

/// Which clock a time is on: times on two clocks give no interval.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Clock {
    /// Unix time (a date with its zone, a file's modification time).
    Unix,
    /// The wall clock of this host, its zone unknown.
    WallOf(Option<String>),
    /// Seconds of `sleep` into the command typed at this line of this
    /// input (see [`super::sleeps`]).
    Sleeps { input: usize, prompt_line: usize },
}

/// A snapshot's time on a clock.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Clocked {
    pub(super) seconds: f64,
    pub(super) clock: Clock,
    pub(super) source: String,
    /// Whether the time is the input file's modification time, not a time
    /// the input prints: the weakest clock (see [`gap`]).
    pub(super) file_time: bool,
}

/// One reading of a series. Whose counter it is (subject, source, name) is
/// the series' key, not repeated here: a fleet has millions of readings.
#[derive(Clone, Copy)]
pub(super) struct Point {
    pub(super) snapshot: usize,
    pub(super) counter: crate::model::Counter,
    pub(super) unit: CounterUnit,
    pub(super) role: Role,
    pub(super) span: LineSpan,
}

/// The time of each section that carries counters, from the `date` (or
/// `nvidia-smi -q` Timestamp) sections of the same host in the same input.
///
/// Scripts print the date either before each reading (`date; perfquery`) or
/// after it (`perfquery; date`). If a host's first reading comes before its
/// first date, dates are taken to follow their readings: each reading gets the
/// next date. Otherwise each reading gets the latest date before it.
///
/// Readings with no date get the times their command line's `sleep`s give
/// ([`sleep_times`]), when it has any.
pub(super) fn section_times(
    input: usize,
    framing: &[LineSpan],
    sections: &[(&crate::input::Section, Extracted)],
) -> Vec<Option<Clocked>> {
    let mut out = date_times(sections);
    sleep_times(input, framing, sections, &mut out);
    out
}

/// [`section_times`] from dates.
fn date_times(sections: &[(&crate::input::Section, Extracted)]) -> Vec<Option<Clocked>> {
    let clocked = |section: &crate::input::Section, ex: &Extracted| {
        ex.time.as_ref().map(|(wall, unix, text, span)| Clocked {
            seconds: unix.unwrap_or(*wall),
            clock: if unix.is_some() {
                Clock::Unix
            } else {
                Clock::WallOf(section.host.clone())
            },
            source: format!("`{text}` ({span})"),
            file_time: false,
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

/// Times for the readings of one command line with `sleep`s in it
/// (`perfquery -x; sleep 60; perfquery -x`), when none of them has a time
/// from a date. The outputs of one prompt are its first section, which
/// begins at the prompt's line (a framing line), and the sections of the
/// same command after it that do not begin at a prompt of their own.
fn sleep_times(
    input: usize,
    framing: &[LineSpan],
    sections: &[(&crate::input::Section, Extracted)],
    out: &mut [Option<Clocked>],
) {
    // Framing spans ascend: whether a line is one is a binary search.
    let at_prompt = |line: usize| {
        let i = framing.partition_point(|f| f.last_line < line);
        framing.get(i).is_some_and(|f| f.contains(line))
    };
    let mut start = 0;
    while let Some((first, _)) = sections.get(start) {
        let continues = |(s, _): &&(&crate::input::Section, Extracted)| {
            s.command == first.command && s.host == first.host && !at_prompt(s.span.first_line)
        };
        let len = 1 + sections
            .get(start + 1..)
            .unwrap_or_default()
            .iter()
            .take_while(continues)
            .count();
        let group = start..start + len;
        start += len;
        // A date the command printed between its readings times them; a
        // date before or after the command gives every reading of it the
        // same time, which is no interval: the sleeps are.
        let dated = sections
            .get(group.clone())
            .unwrap_or_default()
            .iter()
            .any(|(_, ex)| ex.time.is_some());
        let from_prompt = at_prompt(first.span.first_line);
        let Some(command) = first.command.as_deref().filter(|_| from_prompt && !dated) else {
            continue;
        };
        let Some(offsets) = super::sleeps::output_offsets(command, len) else {
            continue;
        };
        let prompt_line = first.span.first_line;
        for ((i, seconds), run) in group.zip(offsets).zip(1..) {
            if let Some(slot) = out.get_mut(i) {
                *slot = Some(Clocked {
                    seconds,
                    clock: Clock::Sleeps { input, prompt_line },
                    source: if run == 1 {
                        format!("`{command}` (line {prompt_line}), output 1")
                    } else {
                        format!(
                            "`{command}` (line {prompt_line}), output {run}, after {seconds} s of sleep"
                        )
                    },
                    file_time: false,
                });
            }
        }
    }
}

/// Whose counter a series is: subject, source and counter name, borrowed
/// from the unit's [`SeriesKeys`] (a host has about a thousand series but
/// only a few hundred subjects: the keys are not copied per series).
pub(super) type SeriesKey<'k> = (&'k Subject, &'k CounterSource, &'k str);

/// Every series of a unit, ordered by key (for a deterministic walk), each
/// with its readings in snapshot order. A sorted vector, not a tree: it is
/// built once and only walked. Series of one subject are next to each other,
/// which the peer groups use to work out a subject's groups once. The
/// readings are slices of one buffer ([`Ordered`]), not a vector each.
pub(super) type Series<'k> = Vec<(SeriesKey<'k>, &'k [Point])>;

/// A series' key as ids into [`SeriesKeys`]: (subject, source, name).
pub(super) type KeyIds = (u32, u32, u32);

/// A reading's place when LID-named ports merge: its key's ranks, its
/// snapshot, the subject id it was read as, its arrival position.
type MergeOrder = ((u32, u32, u32), usize, u32, u32);

/// The distinct subjects, counter sets and counter names of a unit's
/// series, which the [`Series`] borrow.
pub(super) struct SeriesKeys {
    subjects: Vec<Subject>,
    sources: Vec<CounterSource>,
    /// Shared with the rates of the series that read them.
    names: Vec<Arc<str>>,
}

/// A unit's readings ordered by series key, then snapshot, in one buffer,
/// and each series' key (still ids into [`SeriesKeys`]) with its run of
/// readings in that buffer.
pub(super) struct Ordered {
    points: Vec<Point>,
    runs: Vec<(KeyIds, std::ops::Range<usize>)>,
}

/// Each series' key as ids into [`SeriesKeys`] (one per series, in the
/// order of [`Series`]), and how many distinct subjects, counter sets and
/// names there are: the peer groups index by these small integers instead
/// of hashing the keys they stand for.
pub(super) struct SeriesIds {
    pub(super) keys: Vec<KeyIds>,
    pub(super) subjects: usize,
    pub(super) sources: usize,
    pub(super) names: usize,
}

impl SeriesKeys {
    /// The series of `ordered`, their keys borrowed from `self`.
    #[cfg(test)]
    pub(super) fn series<'k>(&'k self, ordered: &'k Ordered) -> Series<'k> {
        self.series_with_ids(ordered).0
    }

    /// The series of `ordered`, their keys borrowed from `self`, and the
    /// keys' ids.
    pub(super) fn series_with_ids<'k>(&'k self, ordered: &'k Ordered) -> (Series<'k>, SeriesIds) {
        let mut series: Series<'k> = Vec::with_capacity(ordered.runs.len());
        let mut keys: Vec<KeyIds> = Vec::with_capacity(ordered.runs.len());
        for (ids, run) in &ordered.runs {
            let (subject, source, name) = *ids;
            if let (Some(subject), Some(source), Some(name), Some(points)) = (
                self.subjects.get(subject as usize),
                self.sources.get(source as usize),
                self.names.get(name as usize),
                ordered.points.get(run.clone()),
            ) {
                series.push(((subject, source, &**name), points));
                keys.push(*ids);
            }
        }
        let ids = SeriesIds {
            keys,
            subjects: self.subjects.len(),
            sources: self.sources.len(),
            names: self.names.len(),
        };
        (series, ids)
    }
}

/// The subjects and counter names of a unit's rates as their records hold
/// them, shared by the rates (and their throughput and bit error rates)
/// instead of copied into every one: a host has hundreds of rates over a
/// few dozen names, and a port's or link's rates share its subject.
pub(super) struct SharedKeys<'k> {
    keys: &'k SeriesKeys,
    /// The subject made last, with its id: a subject's series are next to
    /// each other, so each subject with rates is made once.
    subject: Option<(u32, Arc<Subject>)>,
}

impl<'k> SharedKeys<'k> {
    /// The shared subjects and names of the series of `keys`.
    pub(super) fn new(keys: &'k SeriesKeys) -> Self {
        Self {
            keys,
            subject: None,
        }
    }

    /// The shared subject and name of the series whose key ids are `ids`.
    pub(super) fn get(
        &mut self,
        (subject_id, _, name_id): KeyIds,
    ) -> Option<(Arc<Subject>, Arc<str>)> {
        let name = Arc::clone(self.keys.names.get(name_id as usize)?);
        let subject = match &self.subject {
            Some((id, made)) if *id == subject_id => Arc::clone(made),
            _ => {
                let made = Arc::new(self.keys.subjects.get(subject_id as usize)?.clone());
                self.subject = Some((subject_id, Arc::clone(&made)));
                made
            }
        };
        Some((subject, name))
    }
}

/// A unit's readings, keys interned into small ids, kept in one buffer in
/// the order they arrive.
///
/// A host has about a thousand series but only a few hundred subjects, a
/// handful of counter sets and a few dozen counter names: each reading is
/// hashed once (with a fast hasher) to find its ids, and the readings are
/// then ordered once by the ids' ranks instead of the owned keys (the
/// string comparisons of that sort, and SipHash over the keys, were most
/// of the measuring time of a batch run). One buffer sorted once, rather
/// than a vector per series in a map, saves a thousand small allocations
/// (and their frees) per host.
#[derive(Default)]
pub(super) struct Readings {
    subjects: Subjects,
    sources: Interner<CounterSource>,
    names: Interner<Arc<str>>,
    /// Every reading with its key, in arrival order.
    points: Vec<(KeyIds, Point)>,
    /// Counter names already interned, by address and length: a model's
    /// counter names are mostly `'static` table entries or the same borrowed
    /// text, so this finds their id without hashing or comparing the text.
    /// Sound while every document read is alive (the whole of a unit's
    /// measuring): equal address and length mean equal text.
    name_at: FxHashMap<(usize, usize), u32>,
    /// The latest name found in each slot (address, length, id); empty
    /// until the first reading (see [`Readings::add_reading`]).
    name_slots: Vec<(usize, usize, u32)>,
    /// The id of the subject of the reading added last.
    last_subject: Option<u32>,
    /// The id of the counter set looked up last.
    last_source: Option<u32>,
}

/// Slots of the cache of counter names by address ([`Readings::add_reading`]).
const NAME_SLOTS: usize = 128;

/// Distinct values in the order first seen, and each one's id.
struct Interner<T> {
    ids: FxHashMap<T, u32>,
    values: Vec<T>,
}

impl<T> Default for Interner<T> {
    fn default() -> Self {
        Self {
            ids: FxHashMap::default(),
            values: Vec::new(),
        }
    }
}

/// How an [`Interner`] keeps a value it has not seen: names as shared
/// text, so that the map and the list hold one copy (and a unit's rates
/// share it), not a string each.
trait Interned<Q: ?Sized>: Clone {
    /// The kept value of `value`.
    fn keep(value: &Q) -> Self;
}

impl Interned<str> for Arc<str> {
    fn keep(value: &str) -> Self {
        Arc::from(value)
    }
}

impl Interned<CounterSource> for CounterSource {
    fn keep(value: &CounterSource) -> Self {
        value.clone()
    }
}

impl<T: Eq + Hash> Interner<T> {
    /// The id of `value`, kept only the first time it is seen.
    fn id<Q>(&mut self, value: &Q) -> u32
    where
        T: Borrow<Q> + Interned<Q>,
        Q: Hash + Eq + ?Sized,
    {
        if let Some(id) = self.ids.get(value) {
            return *id;
        }
        let id = u32::try_from(self.values.len()).unwrap_or(u32::MAX);
        let kept = T::keep(value);
        self.values.push(kept.clone());
        self.ids.insert(kept, id);
        id
    }
}

impl<T: Ord> Interner<T> {
    /// Each id's rank among the distinct values in their order: comparing
    /// ranks compares the values.
    fn ranks(&self) -> Vec<u32> {
        ranks(&self.values)
    }
}

/// Each position's rank among `values` in their order.
fn ranks<T: Ord>(values: &[T]) -> Vec<u32> {
    let mut order: Vec<u32> = (0..u32::try_from(values.len()).unwrap_or(u32::MAX)).collect();
    order.sort_unstable_by(|a, b| values.get(*a as usize).cmp(&values.get(*b as usize)));
    let mut ranks = vec![0; order.len()];
    for (rank, id) in order.into_iter().enumerate() {
        if let Some(r) = ranks.get_mut(id as usize) {
            *r = u32::try_from(rank).unwrap_or(u32::MAX);
        }
    }
    ranks
}

/// A subject with its host and device names as ids (0: none, else the
/// name's id + 1) among the unit's names: hashed and compared as integers.
/// In [`Subject`]'s field order (host, device, GUID, then the numbers), so
/// that keys compare as the subjects do.
type SubjectKey = (u32, u32, Option<Guid>, [Option<u32>; 5]);

/// A unit's distinct subjects in the order first seen, found through their
/// [`SubjectKey`]s.
///
/// The readings name their subjects with borrowed names ([`SubjectRef`]);
/// a unit's subjects nearly all share one host name, so looking up its id
/// is mostly one comparison with the name looked up last, and the subject
/// itself is then a handful of integers. Each distinct subject's names are
/// copied once, when it is first seen (hashing and comparing owned subjects,
/// and copying each section's host name per subject, were a sixth of the
/// measuring).
#[derive(Default)]
struct Subjects {
    /// Host and device names.
    names: Interner<Arc<str>>,
    /// The id of the host name looked up last.
    last_host: Option<u32>,
    /// The id of the device name looked up last.
    last_device: Option<u32>,
    ids: FxHashMap<SubjectKey, u32>,
    /// Each subject's key, by id.
    keys: Vec<SubjectKey>,
    /// Each subject, by id.
    values: Vec<Subject>,
}

impl Subjects {
    /// The id + 1 of `name` (0 for none), `last` caching the id found last.
    fn name_id(names: &mut Interner<Arc<str>>, last: &mut Option<u32>, name: Option<&str>) -> u32 {
        let Some(name) = name else { return 0 };
        let id = match *last {
            Some(id) if names.values.get(id as usize).map(|n| &**n) == Some(name) => id,
            _ => names.id(name),
        };
        *last = Some(id);
        id.saturating_add(1)
    }

    /// The key of `subject`, its names interned.
    fn key(&mut self, subject: &SubjectRef<'_>) -> SubjectKey {
        let host = Self::name_id(&mut self.names, &mut self.last_host, subject.host);
        let device = Self::name_id(&mut self.names, &mut self.last_device, subject.device);
        (
            host,
            device,
            subject.guid,
            [
                subject.lid,
                subject.port,
                subject.gpu,
                subject.link,
                subject.lane,
            ],
        )
    }

    /// The id of the subject with key `key`, `subject` copied only the
    /// first time it is seen.
    fn id(&mut self, key: SubjectKey, subject: impl FnOnce() -> Subject) -> u32 {
        // One hash and probe, found or not (most subjects are new when
        // they get here: the seen ones are mostly found without hashing).
        let next = u32::try_from(self.values.len()).unwrap_or(u32::MAX);
        match self.ids.entry(key) {
            Entry::Occupied(found) => *found.get(),
            Entry::Vacant(slot) => {
                slot.insert(next);
                self.values.push(subject());
                self.keys.push(key);
                next
            }
        }
    }
}

impl Readings {
    /// Room for `more` readings (a section's count is known before they are
    /// added) of at most `subjects` subjects: the maps are sized once, not
    /// grown (rehashed) step by step as a unit's subjects arrive.
    pub(super) fn reserve(&mut self, more: usize, subjects: usize) {
        self.points.reserve(more);
        self.subjects.ids.reserve(subjects);
        self.subjects.keys.reserve(subjects);
        self.subjects.values.reserve(subjects);
        // A host reads a few dozen counter names.
        self.name_at.reserve(64);
        if self.name_slots.is_empty() {
            // Address 0 is no name's: every slot starts empty.
            self.name_slots = vec![(0, usize::MAX, 0); NAME_SLOTS];
        }
        self.names.ids.reserve(64);
    }

    /// Each subject's rank among the unit's subjects in their order.
    ///
    /// A subject's key holds its host and device names as ids: with those
    /// ids replaced by the names' ranks, comparing keys (integers) compares
    /// the subjects (`None` before any name, as `Option` orders). Sorting
    /// the owned subjects compared host names at every step.
    fn subject_ranks(&self) -> Vec<u32> {
        let names = self.subjects.names.ranks();
        let rank = |id: u32| match id.checked_sub(1) {
            None => 0,
            Some(at) => names
                .get(at as usize)
                .map_or(u32::MAX, |r| r.saturating_add(1)),
        };
        let keys: Vec<SubjectKey> = self
            .subjects
            .keys
            .iter()
            .map(|&(host, device, guid, rest)| (rank(host), rank(device), guid, rest))
            .collect();
        ranks(&keys)
    }

    /// Adds one reading of `(subject, source, name)`; readings of a series
    /// must arrive in snapshot order.
    #[cfg(test)]
    pub(super) fn add(
        &mut self,
        subject: &Subject,
        source: &CounterSource,
        name: &str,
        point: Point,
    ) {
        let subject = self.subject_id(&SubjectRef::of(subject));
        let source = self.source_id(source);
        self.add_to(subject, source, name, point);
    }

    /// The id of `subject`, for [`add_reading`](Self::add_reading).
    pub(super) fn subject_id(&mut self, subject: &SubjectRef<'_>) -> u32 {
        let key = self.subjects.key(subject);
        // A tool prints a port's or a link's counters together: the subject
        // is most often the one just seen, found without hashing it. A
        // host's second section of the same links (`nvidia-smi nvlink -e`,
        // then `-gt`) names them in the order the first did: then it is the
        // one first seen after the one just seen.
        let known = |id: u32| self.subjects.keys.get(id as usize) == Some(&key);
        let subject = match self.last_subject {
            Some(id) if known(id) => id,
            Some(id) if known(id.wrapping_add(1)) => id.wrapping_add(1),
            _ => self.subjects.id(key, || subject.to_subject()),
        };
        self.last_subject = Some(subject);
        subject
    }

    /// The subject with id `id` (as read: LID-named ports get their CA
    /// name only when the readings are ordered).
    pub(super) fn subject(&self, id: u32) -> Option<&Subject> {
        self.subjects.values.get(id as usize)
    }

    /// The id of the counter set `source`, for [`add_reading`](Self::add_reading).
    pub(super) fn source_id(&mut self, source: &CounterSource) -> u32 {
        // A unit's sections mostly read the counter set read last.
        let source = match self.last_source {
            Some(id) if self.sources.values.get(id as usize) == Some(source) => id,
            _ => self.sources.id(source),
        };
        self.last_source = Some(source);
        source
    }

    /// Adds one reading of the subject with id `subject` from the counter
    /// set with id `source` (see [`add`](Self::add)).
    #[cfg(test)]
    fn add_to(&mut self, subject: u32, source: u32, name: &str, point: Point) {
        let name = self.name_id(name);
        self.points.push(((subject, source, name), point));
    }

    /// Adds an extracted reading of snapshot `snapshot`, of the subject with
    /// id `subject` from the counter set with id `source`. The point is
    /// written field by field where it is stored: made first and moved in
    /// (a `Point`, even made in place), it went through the stack, written
    /// in parts and read back in wider ones (with the padding after the
    /// key), which the processor cannot forward from the pending writes: a
    /// stall on every reading, an eighth of the measuring's own time.
    ///
    /// Inlined into the measuring's loop over a unit's readings (a call
    /// per reading cost about as much as the cached look-up of its name).
    #[inline]
    pub(super) fn add_reading(
        &mut self,
        subject: u32,
        source: u32,
        snapshot: usize,
        reading: &crate::stats::extract::Reading<'_>,
    ) {
        /// A reading's place before its fields are written in.
        const BLANK: (KeyIds, Point) = (
            (0, 0, 0),
            Point {
                snapshot: 0,
                counter: crate::model::Counter {
                    value: 0,
                    bits: 0,
                    saturated: false,
                },
                unit: CounterUnit::Events,
                role: Role::Other,
                span: LineSpan {
                    first_line: 0,
                    last_line: 0,
                },
            },
        );
        let name = self.name_id(reading.name);
        self.points.push(BLANK);
        if let Some((key, point)) = self.points.last_mut() {
            *key = (subject, source, name);
            point.snapshot = snapshot;
            point.counter.value = reading.counter.value;
            point.counter.bits = reading.counter.bits;
            point.counter.saturated = reading.counter.saturated;
            point.unit = reading.unit;
            point.role = reading.role;
            point.span = reading.span;
        }
    }

    /// The id of the counter name `name`.
    #[inline]
    fn name_id(&mut self, name: &str) -> u32 {
        let at = (name.as_ptr() as usize, name.len());
        // A direct-mapped cache by address in front of the map: a unit's
        // few dozen names mostly get a slot each, found without hashing.
        let slot = ((at.0 >> 3) ^ at.1.rotate_left(5)) % NAME_SLOTS;
        match self.name_slots.get(slot) {
            Some(&(ptr, len, id)) if (ptr, len) == at => id,
            _ => {
                let id = match self.name_at.get(&at) {
                    Some(id) => *id,
                    None => {
                        let id = self.names.id(name);
                        self.name_at.insert(at, id);
                        id
                    }
                };
                if let Some(cached) = self.name_slots.get_mut(slot) {
                    *cached = (at.0, at.1, id);
                }
                id
            }
        }
    }

    /// Orders the readings by key, then snapshot (see [`SeriesKeys::series`]),
    /// giving perfquery's LID-named ports their CA name when a port view in
    /// `ports` tells it (two keys that become one merge their readings).
    pub(super) fn into_ordered(mut self, ports: &PortIndex<'_>) -> (SeriesKeys, Ordered) {
        // Each old subject id's id after the renaming (none: the same).
        let renamed = if ports.is_empty() {
            None
        } else {
            self.name_ports_by_ca(ports)
        };
        let (subject_rank, source_rank, name_rank) = (
            self.subject_ranks(),
            self.sources.ranks(),
            self.names.ranks(),
        );
        let rank = |ranks: &[u32], id: u32| ranks.get(id as usize).copied().unwrap_or(u32::MAX);
        let new_id = |old: u32| {
            renamed
                .as_ref()
                .and_then(|r: &Vec<u32>| r.get(old as usize).copied())
                .unwrap_or(old)
        };
        // One sort of small integer keys. Within a series, readings go by
        // snapshot; readings of one snapshot by the subject they were read
        // as (two merged subjects), then in arrival order: as the merge of
        // the per-series vectors this replaces did. The arrival position
        // makes every key unique, so an unstable sort is exact.
        let key_ranks = |(subject, source, name): KeyIds| {
            (
                rank(&subject_rank, new_id(subject)),
                rank(&source_rank, source),
                rank(&name_rank, name),
            )
        };
        // Bits that hold every rank of `ranks` (every arrival position).
        let width = |count: usize| {
            u32::BITS
                - u32::try_from(count.saturating_sub(1))
                    .unwrap_or(u32::MAX)
                    .leading_zeros()
        };
        let widths = [
            width(subject_rank.len()),
            width(source_rank.len()),
            width(name_rank.len()),
            width(self.points.len()),
        ];
        // The readings are gathered straight from the sorted words (no
        // vector of positions in between).
        let ordered = if renamed.is_none() && widths.iter().sum::<u32>() <= u64::BITS {
            // As below, packed in 64 bits: a host's few hundred subjects,
            // few sources and dozens of names and thousand readings fit,
            // and sorting words of half the size takes less work. Each
            // field gets the bits its largest value needs, so comparing the
            // words compares the fields in order.
            let [_, source_bits, name_bits, arrival_bits] = widths;
            let mut packed: Vec<u64> = self
                .points
                .iter()
                .enumerate()
                .map(|(at, (key, _))| {
                    let (a, b, c) = key_ranks(*key);
                    let key =
                        (u64::from(a) << source_bits | u64::from(b)) << name_bits | u64::from(c);
                    key << arrival_bits | u64::from(u32::try_from(at).unwrap_or(u32::MAX))
                })
                .collect();
            // Stable (keys are unique, so the order is the same): it finds
            // the runs a section's readings arrive in and merges them.
            packed.sort();
            let arrival = (1_u64 << arrival_bits) - 1;
            gather(
                &self.points,
                packed
                    .into_iter()
                    .map(|k| u32::try_from(k & arrival).unwrap_or(u32::MAX)),
                new_id,
            )
        } else if renamed.is_none() {
            // No merge: readings of a series arrive in snapshot order, so
            // key and arrival alone order them, packed in one integer.
            let mut packed: Vec<u128> = self
                .points
                .iter()
                .enumerate()
                .map(|(at, (key, _))| {
                    let (a, b, c) = key_ranks(*key);
                    (u128::from(a) << 96)
                        | (u128::from(b) << 64)
                        | (u128::from(c) << 32)
                        | u128::from(u32::try_from(at).unwrap_or(u32::MAX))
                })
                .collect();
            packed.sort();
            #[allow(clippy::cast_possible_truncation)] // the low 32 bits
            gather(&self.points, packed.into_iter().map(|k| k as u32), new_id)
        } else {
            let mut keyed: Vec<MergeOrder> = self
                .points
                .iter()
                .enumerate()
                .map(|(at, (key, point))| {
                    (
                        key_ranks(*key),
                        point.snapshot,
                        key.0,
                        u32::try_from(at).unwrap_or(u32::MAX),
                    )
                })
                .collect();
            keyed.sort_unstable();
            gather(
                &self.points,
                keyed.into_iter().map(|(_, _, _, at)| at),
                new_id,
            )
        };
        let keys = SeriesKeys {
            subjects: self.subjects.values,
            sources: self.sources.values,
            names: self.names.values,
        };
        (keys, ordered)
    }

    /// Renames subjects without a device whose (host, LID) the port index
    /// names. When a new name is another subject's, the subjects are
    /// interned again: each old id's new id is returned (their series merge).
    fn name_ports_by_ca(&mut self, ports: &PortIndex<'_>) -> Option<Vec<u32>> {
        let subjects = &mut self.subjects;
        let renames: Vec<(usize, SubjectKey, Subject)> = subjects
            .values
            .iter()
            .enumerate()
            .filter_map(|(at, subject)| {
                if subject.device.is_some() {
                    return None;
                }
                let owner = subject
                    .lid
                    .and_then(|l| ports.by_lid(subject.host.as_deref(), l))?;
                Some((
                    at,
                    Subject {
                        device: Some(owner.device.to_owned()),
                        ..subject.clone()
                    },
                ))
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|(at, subject)| (at, subjects.key(&SubjectRef::of(&subject)), subject))
            .collect();
        // A new name held by no other subject (renamed subjects had no
        // device, so no two of them take one name): renamed in place.
        if renames
            .iter()
            .all(|(_, key, _)| !subjects.ids.contains_key(key))
        {
            for (at, key, subject) in renames {
                let (Some(slot), Some(old)) =
                    (subjects.values.get_mut(at), subjects.keys.get_mut(at))
                else {
                    continue;
                };
                *slot = subject;
                subjects.ids.remove(old);
                *old = key;
                subjects
                    .ids
                    .insert(key, u32::try_from(at).unwrap_or(u32::MAX));
            }
            return None;
        }
        let old = std::mem::take(&mut subjects.values);
        subjects.keys.clear();
        subjects.ids.clear();
        let mut renamed: Vec<u32> = Vec::with_capacity(old.len());
        for mut subject in old {
            if subject.device.is_none() {
                if let Some(owner) = subject
                    .lid
                    .and_then(|l| ports.by_lid(subject.host.as_deref(), l))
                {
                    subject.device = Some(owner.device.to_owned());
                }
            }
            let key = subjects.key(&SubjectRef::of(&subject));
            renamed.push(subjects.id(key, || subject));
        }
        self.last_subject = None;
        Some(renamed)
    }
}

/// The readings of `points` at the positions `order` gives, in that
/// order, in one buffer, with the run of each series (its key's ids, the
/// subject's after `new_id`) in it.
fn gather(
    points: &[(KeyIds, Point)],
    order: impl ExactSizeIterator<Item = u32>,
    new_id: impl Fn(u32) -> u32,
) -> Ordered {
    let mut ordered = Vec::with_capacity(order.len());
    // Most series of a host hold one or two readings: room for a run
    // per reading is close, and never grown.
    let mut runs: Vec<(KeyIds, std::ops::Range<usize>)> = Vec::with_capacity(order.len());
    for at in order {
        let Some(&(key, point)) = points.get(at as usize) else {
            continue;
        };
        // Ids (after the renaming) stand for their ranks one to one:
        // a run ends where they change.
        let ids = (new_id(key.0), key.1, key.2);
        let at = ordered.len();
        ordered.push(point);
        match runs.last_mut() {
            Some((last, run)) if *last == ids => run.end = at + 1,
            _ => runs.push((ids, at..at + 1)),
        }
    }
    Ordered {
        points: ordered,
        runs,
    }
}

/// The interval between two snapshots, with its words: every counter read
/// in both snapshots shares it, so it is worked out once per pair.
pub(super) struct Interval {
    pub(super) seconds: Option<f64>,
    pub(super) source: IntervalSource,
}

impl Interval {
    pub(super) fn new(
        a: usize,
        b: usize,
        times: &[Option<Clocked>],
        options: &StatsOptions,
    ) -> Self {
        let (seconds, source) = interval(a, b, times, options);
        Self { seconds, source }
    }
}

pub(super) fn interval(
    a: usize,
    b: usize,
    times: &[Option<Clocked>],
    options: &StatsOptions,
) -> (Option<f64>, IntervalSource) {
    if let (Some(Some(ta)), Some(Some(tb))) = (times.get(a), times.get(b)) {
        if let Some(seconds) = gap(ta, tb, options) {
            return (
                Some(seconds),
                IntervalSource::InputTimes {
                    from: ta.source.as_str().into(),
                    to: tb.source.as_str().into(),
                },
            );
        }
    }
    match given_interval(options) {
        Some(s) => (Some(s), IntervalSource::Given),
        None => (None, IntervalSource::Unknown),
    }
}

/// `--interval`, when it is a usable number of seconds.
pub(super) fn given_interval(options: &StatsOptions) -> Option<f64> {
    options
        .interval_seconds
        .filter(|s| *s > 0.0 && s.is_finite())
}

/// Modification times of two snapshots' files closer than this are when
/// the files were written, not when the snapshots were taken: a copy (`cp`
/// without `-p`) or an unpacked archive writes every file of a host within
/// microseconds, and snapshots taken for a rate are seconds to minutes
/// apart. Read as an interval, 9 symbol errors over 73 µs were 123,000
/// errors a second.
pub(super) const MIN_FILE_TIME_GAP_SECONDS: f64 = 1.0;

/// The seconds from `earlier` to `later` as the interval between their
/// snapshots, when those times can be one: on one clock and increasing.
/// File modification times are the weakest clock: a given `--interval`
/// wins over them (the person who took the snapshots knows), and files
/// written under [`MIN_FILE_TIME_GAP_SECONDS`] apart give no interval.
pub(super) fn gap(earlier: &Clocked, later: &Clocked, options: &StatsOptions) -> Option<f64> {
    let seconds = later.seconds - earlier.seconds;
    if earlier.clock != later.clock || !(seconds > 0.0 && seconds.is_finite()) {
        return None;
    }
    if matches!(later.clock, Clock::Sleeps { .. }) && seconds < super::sleeps::MIN_SECONDS {
        return None;
    }
    let file_time = earlier.file_time || later.file_time;
    if file_time && (given_interval(options).is_some() || seconds < MIN_FILE_TIME_GAP_SECONDS) {
        return None;
    }
    Some(seconds)
}

/// The seconds between snapshots `a` and `b` when their times are two
/// files' modification times too close to be an interval (see
/// [`MIN_FILE_TIME_GAP_SECONDS`]): the note says so rather than that the
/// input has no time.
pub(super) fn file_times_too_close(a: usize, b: usize, times: &[Option<Clocked>]) -> Option<f64> {
    let (Some(Some(ta)), Some(Some(tb))) = (times.get(a), times.get(b)) else {
        return None;
    };
    let seconds = tb.seconds - ta.seconds;
    // Two snapshots of one file share its time: that is no copy.
    ((ta.file_time || tb.file_time)
        && ta.source != tb.source
        && ta.clock == tb.clock
        && (0.0..MIN_FILE_TIME_GAP_SECONDS).contains(&seconds))
    .then_some(seconds)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::perfquery::PerfAttribute;
    use crate::model::Counter;

    fn point(snapshot: usize) -> Point {
        Point {
            snapshot,
            counter: Counter::unknown_width(snapshot as u64),
            unit: CounterUnit::Events,
            role: Role::Errors,
            span: LineSpan::line(snapshot + 1),
        }
    }

    fn clocked(seconds: f64, file_time: bool) -> Clocked {
        Clocked {
            seconds,
            clock: Clock::Unix,
            source: format!("{seconds}"),
            file_time,
        }
    }

    /// A time the input prints is an interval at any positive gap, and
    /// wins over `--interval`; file modification times are one only when
    /// no interval is given and they are a second or more apart.
    #[test]
    fn file_times_are_the_weakest_clock() {
        let none = StatsOptions::default();
        let given = StatsOptions::default().with_interval(30.0);
        let printed = |s| clocked(s, false);
        let file = |s| clocked(s, true);
        assert_eq!(gap(&printed(10.0), &printed(10.5), &none), Some(0.5));
        assert_eq!(gap(&printed(10.0), &printed(10.5), &given), Some(0.5));
        assert_eq!(gap(&printed(10.0), &printed(10.0), &none), None);
        assert_eq!(gap(&file(10.0), &file(70.0), &none), Some(60.0));
        assert_eq!(gap(&file(10.0), &file(11.0), &none), Some(1.0));
        assert_eq!(gap(&file(10.0), &file(10.999), &none), None);
        assert_eq!(gap(&file(10.0), &file(70.0), &given), None);
        assert_eq!(gap(&printed(10.0), &file(70.0), &given), None);
        let times = [
            Some(file(10.0)),
            Some(file(10.000_073)),
            Some(printed(10.5)),
        ];
        assert!(file_times_too_close(0, 1, &times).is_some_and(|s| (s - 0.000_073).abs() < 1e-9));
        assert_eq!(file_times_too_close(1, 0, &times), None);
        // Two snapshots of one file: the same time, and no copy.
        assert_eq!(file_times_too_close(0, 0, &times), None);
        assert_eq!(interval(0, 1, &times, &none).0, None);
        assert_eq!(interval(0, 1, &times, &given).0, Some(30.0));
    }

    fn port(host: &str, device: Option<&str>, lid: Option<u32>, port: u32) -> Subject {
        Subject {
            host: Some(host.to_owned()),
            device: device.map(str::to_owned),
            lid,
            port: Some(port),
            ..Subject::default()
        }
    }

    /// The series come out in the order of their owned keys, whatever the
    /// order the readings arrived in, and a LID-named port that ibstat
    /// names merges with the CA-named one, its readings in snapshot order.
    #[test]
    fn series_are_ordered_by_key_and_lid_named_ports_merge() {
        let extended = CounterSource::Perfquery(PerfAttribute::PortCountersExtended);
        let basic = CounterSource::Perfquery(PerfAttribute::PortCounters);
        let nvlink = CounterSource::NvidiaSmiNvlink;
        let link = |host: &str, gpu, link| Subject {
            host: Some(host.to_owned()),
            gpu: Some(gpu),
            link: Some(link),
            ..Subject::default()
        };
        let readings = [
            (link("b", 1, 10), nvlink.clone(), "replay_errors", 0),
            (link("b", 1, 2), nvlink.clone(), "crc_errors", 0),
            (
                port("a", None, Some(7), 1),
                extended.clone(),
                "SymbolErrorCounter",
                0,
            ),
            (
                port("a", Some("mlx5_0"), Some(7), 1),
                extended.clone(),
                "SymbolErrorCounter",
                1,
            ),
            (
                port("a", None, Some(7), 1),
                basic.clone(),
                "PortXmitWait",
                2,
            ),
            (link("a", 0, 1), nvlink.clone(), "replay_errors", 2),
            (
                port("a", None, Some(7), 1),
                extended.clone(),
                "SymbolErrorCounter",
                3,
            ),
            (
                port("a", None, Some(9), 2),
                extended.clone(),
                "LinkDownedCounter",
                3,
            ),
        ];
        let mut gathered = Readings::default();
        for (subject, source, name, snapshot) in readings.clone() {
            gathered.add(&subject, &source, name, point(snapshot));
        }
        let ibstat = ibstat_of_host_a();
        let ports = PortIndex::of_documents([&ibstat]);
        assert_eq!(ports.by_lid(Some("a"), 7).map(|o| o.device), Some("mlx5_0"));
        let (keys, ordered) = gathered.into_ordered(&ports);
        let series = keys.series(&ordered);

        let mut expected: BTreeMap<(Subject, CounterSource, String), Vec<usize>> = BTreeMap::new();
        for (mut subject, source, name, snapshot) in readings {
            if subject.lid == Some(7) {
                subject.device = Some("mlx5_0".to_owned());
            }
            expected
                .entry((subject, source, name.to_owned()))
                .or_default()
                .push(snapshot);
        }
        let got: Vec<((Subject, CounterSource, String), Vec<usize>)> = series
            .into_iter()
            .map(|((subject, source, name), points)| {
                (
                    (subject.clone(), source.clone(), name.to_owned()),
                    points.iter().map(|p| p.snapshot).collect(),
                )
            })
            .collect();
        let want: Vec<((Subject, CounterSource, String), Vec<usize>)> =
            expected.into_iter().collect();
        assert_eq!(got, want);
        // The merged port: readings from snapshots 0, 1 and 3, in that order.
        assert!(got.iter().any(|(_, s)| s == &vec![0, 1, 3]));
    }

    /// ibstat on host `a`: `mlx5_0` port 1 has LID 7.
    fn ibstat_of_host_a() -> crate::input::Document {
        let mut ibstat = crate::input::read_all(
            "CA 'mlx5_0'\n\tCA type: MT4123\n\tNumber of ports: 1\n\tPort 1:\n\t\tState: Active\n\t\tBase lid: 7\n",
            &crate::ReadOptions::default(),
        )
        .unwrap();
        for section in &mut ibstat.sections {
            section.host = Some("a".to_owned());
        }
        ibstat
    }

    /// A LID-named port whose CA name no other subject holds is renamed in
    /// place: its series take the CA name and the order of the new key
    /// (after a device-less port that sorted after it before), with their
    /// readings unchanged.
    #[test]
    fn lid_named_ports_without_a_twin_are_renamed_in_place() {
        let extended = CounterSource::Perfquery(PerfAttribute::PortCountersExtended);
        let readings = [
            (port("a", None, Some(7), 1), "SymbolErrorCounter", 0),
            (port("a", None, Some(9), 1), "SymbolErrorCounter", 0),
            (port("a", None, Some(7), 1), "LinkDownedCounter", 0),
            (port("a", None, Some(7), 1), "SymbolErrorCounter", 1),
        ];
        let mut gathered = Readings::default();
        for (subject, name, snapshot) in &readings {
            gathered.add(subject, &extended, name, point(*snapshot));
        }
        let ibstat = ibstat_of_host_a();
        let ports = PortIndex::of_documents([&ibstat]);
        let (keys, ordered) = gathered.into_ordered(&ports);
        let got: Vec<(Subject, &str, Vec<usize>)> = keys
            .series(&ordered)
            .into_iter()
            .map(|((subject, _, name), points)| {
                (
                    subject.clone(),
                    name,
                    points.iter().map(|p| p.snapshot).collect(),
                )
            })
            .collect();
        let want = vec![
            (port("a", None, Some(9), 1), "SymbolErrorCounter", vec![0]),
            (
                port("a", Some("mlx5_0"), Some(7), 1),
                "LinkDownedCounter",
                vec![0],
            ),
            (
                port("a", Some("mlx5_0"), Some(7), 1),
                "SymbolErrorCounter",
                vec![0, 1],
            ),
        ];
        assert_eq!(got, want);
    }

    use proptest::prelude::*;

    type Key = (Subject, CounterSource, String);

    /// The shared subject and name of every series are its key's, and the
    /// series of one subject, or of one name, share one copy.
    #[test]
    fn shared_keys_are_the_series_keys_shared() {
        let nvlink = CounterSource::NvidiaSmiNvlink;
        let link = |gpu, link| Subject {
            host: Some("b".to_owned()),
            gpu: Some(gpu),
            link: Some(link),
            ..Subject::default()
        };
        let mut gathered = Readings::default();
        for snapshot in 0..2 {
            for (gpu, l) in [(0, 1), (0, 2), (1, 1)] {
                for name in ["replay_errors", "crc_errors"] {
                    gathered.add(&link(gpu, l), &nvlink, name, point(snapshot));
                }
            }
        }
        let (keys, ordered) = gathered.into_ordered(&PortIndex::of_documents([]));
        let (series, ids) = keys.series_with_ids(&ordered);
        let mut shared = SharedKeys::new(&keys);
        let got: Vec<(Arc<Subject>, Arc<str>)> = ids
            .keys
            .iter()
            .map(|ids| shared.get(*ids).unwrap())
            .collect();
        assert_eq!(got.len(), 6);
        for ((subject, name), ((want_subject, _, want_name), _)) in got.iter().zip(&series) {
            assert_eq!(&**subject, *want_subject);
            assert_eq!(&**name, *want_name);
        }
        for (a, b) in got.iter().zip(&got[1..]) {
            assert_eq!(Arc::ptr_eq(&a.0, &b.0), a.0 == b.0);
        }
        let replay: Vec<&Arc<str>> = got
            .iter()
            .map(|(_, name)| name)
            .filter(|name| &***name == "replay_errors")
            .collect();
        assert!(replay.len() == 3 && replay.iter().all(|n| Arc::ptr_eq(n, replay[0])));
    }

    proptest! {
        /// Ranking subjects by their keys (names as their ranks) ranks them
        /// as sorting the owned subjects does.
        #[test]
        fn subject_ranks_are_the_owned_subjects_ranks(
            subjects in proptest::collection::vec(
                (
                    proptest::option::of(0usize..3),
                    proptest::option::of(0usize..3),
                    proptest::option::of(0u32..3),
                    proptest::option::of(0u32..3),
                    proptest::option::of(0u32..2),
                ),
                0..30,
            ),
        ) {
            let hosts = ["node10", "node9", "a"];
            let devices = ["mlx5_1", "mlx5_10", "node9"];
            let mut gathered = Readings::default();
            for (host, device, lid, port, gpu) in subjects {
                let subject = Subject {
                    host: host.map(|h| hosts[h].to_owned()),
                    device: device.map(|d| devices[d].to_owned()),
                    lid,
                    port,
                    gpu,
                    ..Subject::default()
                };
                gathered.subject_id(&SubjectRef::of(&subject));
            }
            prop_assert_eq!(gathered.subject_ranks(), ranks(&gathered.subjects.values));
        }

        /// Subjects are numbered in the order first seen, whether found as
        /// the one just seen, as the one first seen after it, or by
        /// hashing: over links and ports named again in the order first
        /// seen (as `nvidia-smi nvlink -gt` names the links `-e` named),
        /// reversed, or at random.
        #[test]
        fn subjects_are_numbered_in_the_order_first_seen(
            named in proptest::collection::vec(
                (0usize..2, any::<bool>(), 0u32..3, 0u32..3),
                0..30,
            ),
            again in 0usize..3,
        ) {
            let subject = |(host, link, gpu, at): (usize, bool, u32, u32)| Subject {
                host: Some(["a", "b"][host].to_owned()),
                gpu: link.then_some(gpu),
                link: link.then_some(at),
                device: (!link).then(|| format!("mlx5_{gpu}")),
                port: (!link).then_some(at),
                ..Subject::default()
            };
            let mut subjects: Vec<Subject> = named.into_iter().map(subject).collect();
            let mut first_seen: Vec<Subject> = Vec::new();
            for s in &subjects {
                if !first_seen.contains(s) {
                    first_seen.push(s.clone());
                }
            }
            match again {
                0 => subjects.extend(first_seen.iter().cloned()),
                1 => subjects.extend(first_seen.iter().rev().cloned()),
                _ => {}
            }
            let mut gathered = Readings::default();
            for s in &subjects {
                let want = first_seen.iter().position(|f| f == s).unwrap();
                let got = gathered.subject_id(&SubjectRef::of(s));
                prop_assert_eq!(got as usize, want);
                prop_assert_eq!(gathered.subject(got), Some(s));
            }
        }

        /// The one sorted buffer gives every series the readings, and in
        /// the order, that the vector per series it replaced gave them: by
        /// owned key, merged LID-named ports (ibstat names LID 7 on `a`)
        /// holding their readings by snapshot, then by the subject they
        /// were read as (in order first seen), then in arrival order.
        #[test]
        fn one_sorted_buffer_orders_series_as_a_vector_per_series(
            readings in proptest::collection::vec(
                (0usize..2, any::<bool>(), 0usize..3, 0usize..2, 0usize..3, any::<bool>()),
                0..40,
            )
        ) {
            let sources = [
                CounterSource::Perfquery(PerfAttribute::PortCountersExtended),
                CounterSource::NvidiaSmiNvlink,
            ];
            let names = ["SymbolErrorCounter", "PortXmitWait", "LinkDownedCounter"];
            let mut snapshot = 0;
            let mut gathered = Readings::default();
            let mut first_seen: Vec<Subject> = Vec::new();
            // (renamed key) → (snapshot, old subject's first-seen id, arrival).
            let mut expected: BTreeMap<Key, Vec<(usize, usize, usize)>> =
                BTreeMap::new();
            for (arrival, (host, named, lid, source, name, next)) in readings.into_iter().enumerate() {
                if next {
                    snapshot += 1;
                }
                let subject = port(
                    ["a", "b"][host],
                    named.then_some("mlx5_0"),
                    [None, Some(7), Some(9)][lid],
                    1,
                );
                let old = match first_seen.iter().position(|s| *s == subject) {
                    Some(at) => at,
                    None => {
                        first_seen.push(subject.clone());
                        first_seen.len() - 1
                    }
                };
                let point = Point {
                    span: LineSpan::line(arrival + 1),
                    ..point(snapshot)
                };
                gathered.add(&subject, &sources[source], names[name], point);
                let mut key = subject;
                if key.device.is_none() && key.host.as_deref() == Some("a") && key.lid == Some(7) {
                    key.device = Some("mlx5_0".to_owned());
                }
                expected
                    .entry((key, sources[source].clone(), names[name].to_owned()))
                    .or_default()
                    .push((snapshot, old, arrival + 1));
            }
            let ibstat = ibstat_of_host_a();
            let ports = PortIndex::of_documents([&ibstat]);
            let (keys, ordered) = gathered.into_ordered(&ports);
            let got: Vec<(Key, Vec<(usize, usize)>)> = keys
                .series(&ordered)
                .into_iter()
                .map(|((subject, source, name), points)| {
                    (
                        (subject.clone(), source.clone(), name.to_owned()),
                        points.iter().map(|p| (p.snapshot, p.span.first_line)).collect(),
                    )
                })
                .collect();
            let want: Vec<(Key, Vec<(usize, usize)>)> = expected
                .into_iter()
                .map(|(key, mut points)| {
                    points.sort_by_key(|(snapshot, old, _)| (*snapshot, *old));
                    (key, points.into_iter().map(|(s, _, arrival)| (s, arrival)).collect())
                })
                .collect();
            prop_assert_eq!(got, want);
        }
    }
}
