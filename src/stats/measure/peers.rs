//! Peer groups: the links of a GPU, the ports of a device or host, the same
//! port across hosts, compared with robust statistics.

use super::super::robust::{self, ScaleMethod};
use super::super::sample::Subject;
use super::super::CounterSource;
use super::super::StatsOptions;
use super::fmt_num;
use super::records::{CounterRate, OutlierMember, PeerGroup, PeerGroupKind, PeerStatistic};
use super::timeline::{KeyIds, Series, SeriesIds};
use crate::model::ib::Guid;
use crate::span::LineSpan;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

/// A member value with where it came from. The subject is borrowed from
/// the unit's series (most members are never named: only outliers are).
pub(super) struct Member<'s> {
    subject: Who<'s>,
    value: f64,
    count: Option<u64>,
    lines: LineSpan,
    /// The file the lines are in (batch runs): on a fleet, lines alone do
    /// not say which of a host's score of files to open.
    file: Option<&'s str>,
}

/// Who a member is: borrowed from the unit's series (most members), a
/// place on one host (a member of a group across hosts), or owned (a GPU's
/// sum over its links) and boxed, so that a member stays small: a unit
/// fills thousands of them. Only outliers are named, so a subject is built
/// only for them ([`Who::to_subject`]).
enum Who<'s> {
    Borrowed(&'s Subject),
    /// A place (the subject without host and LID) with its host and LID.
    OnHost {
        place: &'s Subject,
        host: Option<&'s str>,
        lid: Option<u32>,
    },
    Owned(Box<Subject>),
}

impl Who<'_> {
    /// The member's subject, owned.
    fn to_subject(&self) -> Subject {
        match self {
            Self::Borrowed(subject) => Subject::clone(subject),
            Self::OnHost { place, host, lid } => Subject {
                host: host.map(str::to_owned),
                lid: *lid,
                ..Subject::clone(place)
            },
            Self::Owned(subject) => Subject::clone(subject),
        }
    }
}

/// The subject of a place's members that read 0 (never named: only
/// outliers are, and a reading of 0 is never one).
static NOBODY: Subject = Subject {
    host: None,
    device: None,
    guid: None,
    lid: None,
    port: None,
    gpu: None,
    link: None,
    lane: None,
};

/// (host, GPU, counter source, counter name): a GPU's sum over its links.
type GpuKey<'s> = (Option<&'s str>, u32, &'s CounterSource, &'s str);

/// (kind, group in words, counter source, counter name, statistic).
pub(super) type GroupKey = (PeerGroupKind, String, CounterSource, String, PeerStatistic);

/// A group within a unit while it is being filled: the words are an index
/// into the unit's distinct group words, source and name borrowed.
type UnitGroupKey<'s> = (
    PeerGroupKind,
    u32,
    &'s CounterSource,
    &'s str,
    PeerStatistic,
);

/// ` on {host}`, or nothing without a host (the oracles' words).
#[cfg(test)]
pub(super) fn host_words(host: Option<&String>) -> String {
    host.map_or_else(String::new, |h| format!(" on {h}"))
}

/// `parts`, then `number` in decimal, then ` on {host}` when there is a
/// host, written piece by piece into a string of their size: a group's
/// words, without `format!`'s machinery.
pub(super) fn words_on(parts: &[&str], number: Option<u32>, host: Option<&str>) -> String {
    let mut digits = [0; 20];
    let number = number.map_or("", |n| {
        crate::parse::text::decimal_text(u64::from(n), &mut digits)
    });
    let size: usize = parts.iter().map(|p| p.len()).sum();
    let on = host.map_or(0, |h| h.len() + 4);
    let mut out = String::with_capacity(size + number.len() + on);
    for part in parts {
        out.push_str(part);
    }
    out.push_str(number);
    if let Some(host) = host {
        out.push_str(" on ");
        out.push_str(host);
    }
    out
}

/// The groups `subject` belongs to: (kind, words), the words written by
/// [`words_on`]. A unit works this out once per distinct [`GroupsOf`]
/// (each perfquery port of a host has its own: a few hundred per fleet
/// host), and the nested `format!` calls it made were most of that cost.
pub(super) fn group_keys(subject: &Subject) -> Vec<(PeerGroupKind, String)> {
    let host = subject.host.as_deref();
    let words = |parts: &[&str], number: Option<u32>| words_on(parts, number, host);
    let mut keys = Vec::with_capacity(2);
    match (subject.gpu, subject.link, subject.lane) {
        (Some(gpu), Some(_), None) => keys.push((
            PeerGroupKind::LinksOfGpu,
            words(&["links of GPU "], Some(gpu)),
        )),
        (Some(gpu), Some(_), Some(_)) => keys.push((
            PeerGroupKind::LanesOfGpu,
            words(&["lanes of the links of GPU "], Some(gpu)),
        )),
        _ => {}
    }
    if subject.port.is_some()
        && !subject.is_aggregate()
        && subject.gpu.is_none()
        && subject.lane.is_none()
    {
        match (&subject.device, subject.lid) {
            (Some(device), _) => keys.push((
                PeerGroupKind::PortsOfDevice,
                words(&["ports of ", device], None),
            )),
            (None, Some(lid)) => keys.push((
                PeerGroupKind::PortsOfDevice,
                words(&["ports of lid "], Some(lid)),
            )),
            (None, None) => {}
        }
        let read = if host.is_some() {
            words(&["ports read"], None)
        } else {
            "ports read in the input".to_owned()
        };
        keys.push((PeerGroupKind::PortsOnHost, read));
    }
    keys
}

/// [`group_keys`] as it was written with `format!` (the oracle).
#[cfg(test)]
fn group_keys_formatted(subject: &Subject) -> Vec<(PeerGroupKind, String)> {
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
    keys
}

/// The peer groups within one unit (links of a GPU, ports of a device or
/// host, GPUs of a host), how many of them were left out because every
/// member reads 0, and the values the fleet step compares across hosts.
///
/// `rates` are in series order (as [`super::measure_unit`] makes them:
/// each series of n readings gives its n − 1 rates, one after the other);
/// `ids` are the series' keys as ids (one per series).
///
/// Most groups of a unit are never judged: a port of a device with one
/// port is a group of one, and most error counters read 0 everywhere. So
/// the groups are filled in two passes: the first notes each member's
/// group, and per group the size and largest value (all [`shortcut`]
/// reads); the second builds members only for the groups to be judged.
///
/// Everything a member is filed under is a small integer: each subject's
/// groups are worked out once (by its id), each (counter set, name) pair is
/// numbered, and a group is found by indexing a table with (the group's
/// kind and words, pair, statistic), not by hashing its key per member.
pub(super) fn peer_groups<'s>(
    series: &'s Series<'s>,
    ids: &SeriesIds,
    rates: &'s [CounterRate],
    files: &[Option<&'s str>],
    options: &StatsOptions,
) -> (Vec<PeerGroup>, usize, PeerValues) {
    let mut words = GroupWords::default();
    // Each subject's list of groups in `words`, by subject id.
    let mut lists: Vec<u32> = vec![u32::MAX; ids.subjects];
    let pairs = Pairs::of(ids);
    let mut groups = GroupFills::new(ids.subjects, pairs.count, series.len());
    // Where each member's value is, with its group.
    let mut joins: Vec<(u32, MemberAt)> = Vec::with_capacity(series.len() * 2);
    // Summed in order first seen (found through a table by the GPU's
    // number among the unit's and the pair), then walked in key order (as
    // a tree would).
    let mut gpu_sums: Vec<(GpuKey<'_>, GpuSum<'_>, u32)> = Vec::with_capacity(256);
    let mut gpu_ids: FxHashMap<(Option<&str>, u32), u32> = FxHashMap::default();
    let mut gpu_slots: Vec<u32> = Vec::new();
    // Each subject's GPU among `gpu_ids` (links only), by subject id.
    let mut gpu_of: Vec<u32> = vec![u32::MAX; ids.subjects];
    let mut last_gpu: Option<(Option<&str>, u32, u32)> = None;
    let mut across = PeerValuesBuilder::for_series(series, ids);
    // Where each series' rates start in `rates` (n readings, n − 1 rates).
    let mut next_rate = 0usize;
    for (at, (&((subject, source, name), points), &key)) in series.iter().zip(&ids.keys).enumerate()
    {
        let count = points.len().saturating_sub(1);
        let chunk = rates.get(next_rate..next_rate + count).unwrap_or_default();
        next_rate += count;
        let Some(last) = points.last() else { continue };
        if !last.role.compared_across_peers() || chunk.iter().any(CounterRate::compared_by_rate) {
            continue;
        }
        let (subject_id, _, _) = key;
        let pair = pairs.get(at);
        let value = last.counter.value;
        let list = list_of(&mut lists, &mut words, subject_id, subject);
        for &(kind, words_id, kw) in words.list(list) {
            #[allow(clippy::cast_precision_loss)]
            let group = groups.join(
                kw,
                pair,
                (kind, words_id, source, name, PeerStatistic::Value),
                value as f64,
            );
            joins.push((group, MemberAt::Series(at)));
        }
        // As `add_to_gpu_sum`: a GPU's links, not lanes, are summed.
        if let (Some(gpu), Some(_), None) = (subject.gpu, subject.link, subject.lane) {
            let host = subject.host.as_deref();
            let gpu_id = match gpu_of.get(subject_id as usize) {
                Some(&id) if id != u32::MAX => id,
                _ => {
                    let next = u32::try_from(gpu_ids.len()).unwrap_or(u32::MAX);
                    // A GPU's links come one after the other.
                    let id = match last_gpu {
                        Some((h, g, id)) if g == gpu && h == host => id,
                        _ => *gpu_ids.entry((host, gpu)).or_insert(next),
                    };
                    last_gpu = Some((host, gpu, id));
                    if id == next {
                        gpu_slots.resize(gpu_slots.len() + pairs.count, u32::MAX);
                    }
                    if let Some(slot) = gpu_of.get_mut(subject_id as usize) {
                        *slot = id;
                    }
                    id
                }
            };
            let cell = (gpu_id as usize) * pairs.count + pair as usize;
            if let Some(slot) = gpu_slots.get_mut(cell) {
                let file = file_at(files, last.snapshot);
                if *slot == u32::MAX {
                    *slot = u32::try_from(gpu_sums.len()).unwrap_or(u32::MAX);
                    gpu_sums.push((
                        (host, gpu, source, name),
                        GpuSum::new(last.span, file),
                        pair,
                    ));
                }
                if let Some((_, total, _)) = gpu_sums.get_mut(*slot as usize) {
                    total.add(value, last.span, file);
                }
            }
        }
        across.add(
            key,
            subject,
            source,
            name,
            value,
            (last.span, file_at(files, last.snapshot)),
        );
    }
    // Keys are unique (they were map keys), so an unstable sort is exact.
    gpu_sums.sort_unstable_by_key(|(key, _, _)| *key);
    // The host's words, worked out once per host (its GPUs are together).
    let mut host_kw: Option<(Option<&str>, u32, u32)> = None;
    for (at, &((host, _, source, name), GpuSum { sum, .. }, pair)) in gpu_sums.iter().enumerate() {
        let (words_id, kw) = match host_kw {
            Some((last, words_id, kw)) if last == host => (words_id, kw),
            _ => {
                let words_id = words.id(gpus_of_host_words(host));
                let kw = words.kw(PeerGroupKind::GpusOfHost, words_id);
                host_kw = Some((host, words_id, kw));
                (words_id, kw)
            }
        };
        #[allow(clippy::cast_precision_loss)]
        let group = groups.join(
            kw,
            pair,
            (
                PeerGroupKind::GpusOfHost,
                words_id,
                source,
                name,
                PeerStatistic::Value,
            ),
            sum as f64,
        );
        joins.push((group, MemberAt::GpuSum(at)));
    }
    // Latest measured rate of each counter: a series' rates are next to
    // each other, in snapshot order, and named by the series' key.
    let mut first_rate = 0usize;
    for (at, (&((subject, source, name), points), &(subject_id, _, _))) in
        series.iter().zip(&ids.keys).enumerate()
    {
        let count = points.len().saturating_sub(1);
        // Most series of a host are read once: they have no rate.
        if count == 0 {
            continue;
        }
        let chunk = rates
            .get(first_rate..first_rate + count)
            .unwrap_or_default();
        let chunk_start = first_rate;
        first_rate += count;
        let Some((offset, r)) = chunk
            .iter()
            .enumerate()
            .rev()
            .find(|(_, r)| r.compared_by_rate())
        else {
            continue;
        };
        let pair = pairs.get(at);
        let list = list_of(&mut lists, &mut words, subject_id, subject);
        for &(kind, words_id, kw) in words.list(list) {
            let group = groups.join(
                kw,
                pair,
                (kind, words_id, source, name, PeerStatistic::CountsPerSecond),
                r.counts_per_second.unwrap_or(f64::NAN),
            );
            joins.push((group, MemberAt::Rate(chunk_start + offset)));
        }
    }
    // Skipped and quiet groups are counted here, before the sort: the
    // order of the groups judged does not depend on them.
    let mut quiet = 0usize;
    let mut slots: Vec<Option<usize>> = vec![None; groups.fills.len()];
    let mut judged: Vec<(UnitGroupKey<'_>, Vec<Member<'_>>)> = Vec::with_capacity(64);
    for (slot, (key, fill)) in slots.iter_mut().zip(&groups.fills) {
        match fill.shortcut() {
            Shortcut::Skip => {}
            Shortcut::Quiet => quiet += 1,
            Shortcut::Judge => {
                *slot = Some(judged.len());
                judged.push((*key, Vec::with_capacity(fill.size)));
            }
        }
    }
    for (group, at) in joins {
        let Some(Some(slot)) = slots.get(group as usize) else {
            continue;
        };
        let Some((_, members)) = judged.get_mut(*slot) else {
            continue;
        };
        #[allow(clippy::cast_precision_loss)]
        let member = match at {
            MemberAt::Series(i) => series.get(i).and_then(|((subject, _, _), points)| {
                let last = points.last()?;
                Some(Member {
                    subject: Who::Borrowed(subject),
                    value: last.counter.value as f64,
                    count: Some(last.counter.value),
                    lines: last.span,
                    file: file_at(files, last.snapshot),
                })
            }),
            MemberAt::GpuSum(i) => gpu_sums
                .get(i)
                .map(|&((host, gpu, _, _), total, _)| gpu_sum_member(host, gpu, total)),
            MemberAt::Rate(i) => rates.get(i).map(|r| rate_member(r, files)),
        };
        members.extend(member);
    }
    let (out, judged_quiet) = judge_in_order(judged, &words, options);
    (out, quiet + judged_quiet, across.finish())
}

/// The list of groups (in `words`) of the subject with id `id`, worked out
/// the first time it is asked for.
fn list_of<'s>(
    lists: &mut [u32],
    words: &mut GroupWords<'s>,
    id: u32,
    subject: &'s Subject,
) -> u32 {
    match lists.get_mut(id as usize) {
        Some(list) if *list != u32::MAX => *list,
        Some(list) => {
            *list = words.list_id(subject);
            *list
        }
        None => words.list_id(subject),
    }
}

/// Each series' (counter set, name) pair as a number among the unit's
/// distinct pairs.
struct Pairs {
    of_series: Vec<u32>,
    count: usize,
}

impl Pairs {
    fn of(ids: &SeriesIds) -> Self {
        let mut count = 0u32;
        let mut next = |slot: &mut u32| {
            if *slot == u32::MAX {
                *slot = count;
                count += 1;
            }
            *slot
        };
        // A table of every (source, name) when it is small (a host reads a
        // few counter sets of a few dozen names), else a hash map.
        let of_series = match ids.sources.checked_mul(ids.names) {
            Some(cells) if cells <= 1 << 16 => {
                let mut table = vec![u32::MAX; cells];
                ids.keys
                    .iter()
                    .map(|&(_, source, name)| {
                        let cell = source as usize * ids.names + name as usize;
                        table.get_mut(cell).map_or(u32::MAX, &mut next)
                    })
                    .collect()
            }
            _ => {
                let mut map: FxHashMap<(u32, u32), u32> = FxHashMap::default();
                ids.keys
                    .iter()
                    .map(|&(_, source, name)| next(map.entry((source, name)).or_insert(u32::MAX)))
                    .collect()
            }
        };
        Self {
            of_series,
            count: count as usize,
        }
    }

    fn get(&self, series: usize) -> u32 {
        self.of_series.get(series).copied().unwrap_or(u32::MAX)
    }
}

/// Sorts a unit's groups to be judged into report order (kind, then the
/// group words in their first-seen rank, source, name, statistic) and
/// judges them; returns the groups and how many more turned out quiet.
fn judge_in_order<'s>(
    mut judged: Vec<(UnitGroupKey<'_>, Vec<Member<'s>>)>,
    words: &GroupWords<'_>,
    options: &StatsOptions,
) -> (Vec<PeerGroup>, usize) {
    let rank = words.ranks();
    let rank = |w: u32| rank.get(w as usize).copied().unwrap_or(u32::MAX);
    judged.sort_unstable_by(|((k1, w1, s1, n1, t1), _), ((k2, w2, s2, n2, t2), _)| {
        (k1, rank(*w1), s1, n1, t1).cmp(&(k2, rank(*w2), s2, n2, t2))
    });
    let ordered = judged
        .into_iter()
        .map(|((kind, at, source, name, statistic), members)| {
            (
                (
                    kind,
                    words.text(at).to_owned(),
                    source.clone(),
                    name.to_owned(),
                    statistic,
                ),
                members,
            )
        });
    judge_groups(ordered, options)
}

/// Adds a link's latest value to its GPU's sum over its links (a GPU's
/// links, not lanes, are summed; other subjects add nothing). The oracle's
/// way; [`peer_groups`] sums in a vector found through a table.
#[cfg(test)]
fn add_to_gpu_sum<'s>(
    gpu_sums: &mut FxHashMap<GpuKey<'s>, GpuSum<'s>>,
    subject: &'s Subject,
    source: &'s CounterSource,
    name: &'s str,
    value: u64,
    (lines, file): (LineSpan, Option<&'s str>),
) {
    if let (Some(gpu), Some(_), None) = (subject.gpu, subject.link, subject.lane) {
        gpu_sums
            .entry((subject.host.as_deref(), gpu, source, name))
            .or_insert_with(|| GpuSum::new(lines, file))
            .add(value, lines, file);
    }
}

/// A GPU's sum over its links, with the lines and file of its readings.
#[derive(Clone, Copy)]
struct GpuSum<'s> {
    sum: u64,
    lines: LineSpan,
    /// The links' one file; `None` once two links came from different
    /// files (the sum's lines then name no single file).
    file: Option<&'s str>,
    files_differ: bool,
}

impl<'s> GpuSum<'s> {
    fn new(lines: LineSpan, file: Option<&'s str>) -> Self {
        Self {
            sum: 0,
            lines,
            file,
            files_differ: false,
        }
    }

    fn add(&mut self, value: u64, lines: LineSpan, file: Option<&'s str>) {
        self.sum = self.sum.saturating_add(value);
        self.lines = self.lines.join(lines);
        // A GPU's links come from one snapshot, whose file is one string:
        // most often the very same one.
        let same_file = match (self.file, file) {
            (Some(a), Some(b)) => std::ptr::eq(a, b) || a == b,
            (a, b) => a.is_none() && b.is_none(),
        };
        self.files_differ |= !same_file;
    }

    /// The file all the links were read from, if one.
    fn file(&self) -> Option<&'s str> {
        self.file.filter(|_| !self.files_differ)
    }
}

/// The file of snapshot `snapshot`, from the unit's files by snapshot id.
fn file_at<'s>(files: &[Option<&'s str>], snapshot: usize) -> Option<&'s str> {
    files.get(snapshot).copied().flatten()
}

/// A counter's rate as a member: its later reading's lines and file.
fn rate_member<'s>(r: &'s CounterRate, files: &[Option<&'s str>]) -> Member<'s> {
    Member {
        subject: Who::Borrowed(&r.subject),
        value: r.counts_per_second.unwrap_or(f64::NAN),
        count: r.increase,
        lines: r.lines[1],
        file: file_at(files, r.to_snapshot),
    }
}

/// The words of the group of a host's GPUs (compared by their sums over links).
fn gpus_of_host_words(host: Option<&str>) -> String {
    host.map_or_else(|| "GPUs".to_owned(), |h| format!("GPUs on {h}"))
}

/// A GPU's sum over its links as a member of its host's GPUs.
#[allow(clippy::cast_precision_loss)]
fn gpu_sum_member<'s>(host: Option<&str>, gpu: u32, total: GpuSum<'s>) -> Member<'s> {
    Member {
        subject: Who::Owned(Box::new(Subject {
            host: host.map(str::to_owned),
            gpu: Some(gpu),
            ..Subject::default()
        })),
        value: total.sum as f64,
        count: Some(total.sum),
        lines: total.lines,
        file: total.file(),
    }
}

/// Where a member's value is: the latest reading of a series, a GPU's sum
/// over its links, or a rate (each an index).
#[derive(Clone, Copy)]
enum MemberAt {
    Series(usize),
    GpuSum(usize),
    Rate(usize),
}

/// A unit's groups while they are filled (see [`peer_groups`]): each key
/// once, with an id, and what [`shortcut`] reads of its members.
///
/// A group is found by (its kind and words as one number, the counter
/// pair's number, the statistic): in a table with a row per kind and words
/// when the unit is small enough for one (a host: a few dozen rows of a
/// few hundred cells), else in a hash map keyed by the same numbers.
struct GroupFills<'s> {
    /// Cells per row: two per counter pair (one per statistic).
    row: usize,
    /// The rows so far, one after the other (`u32::MAX`: no group yet).
    table: Option<Vec<u32>>,
    ids: FxHashMap<(u32, u32, PeerStatistic), u32>,
    fills: Vec<(UnitGroupKey<'s>, Fill)>,
}

/// A group's size and the largest of its finite values (ordered by
/// `total_cmp`, as [`shortcut`] orders them).
struct Fill {
    size: usize,
    max: Option<f64>,
}

impl Fill {
    /// What [`shortcut`] says of the group's members.
    fn shortcut(&self) -> Shortcut {
        Shortcut::of(self.size, self.max)
    }
}

impl<'s> GroupFills<'s> {
    /// Room for the groups of `subjects` subjects over `pairs` counter
    /// pairs (a subject has at most two kinds and words of its own, and a
    /// GPU's host one more) and `series` series.
    fn new(subjects: usize, pairs: usize, series: usize) -> Self {
        let row = pairs.saturating_mul(2);
        let most = subjects
            .saturating_mul(3)
            .saturating_add(1)
            .saturating_mul(row);
        Self {
            row,
            table: (most <= 1 << 22).then(Vec::new),
            ids: FxHashMap::default(),
            // A host fills a few hundred groups, about one for every two
            // of its series: room for one per series is not grown (each
            // doubling copied them all), and bounded for a huge unit.
            fills: Vec::with_capacity(series.min(1 << 14)),
        }
    }

    /// Adds a member with `value` to the group `key`, whose kind and words
    /// are `kw` and counter pair `pair`; returns its id.
    #[inline]
    fn join(&mut self, kw: u32, pair: u32, key: UnitGroupKey<'s>, value: f64) -> u32 {
        let statistic = key.4;
        let column = (pair as usize)
            .saturating_mul(2)
            .saturating_add(usize::from(statistic == PeerStatistic::CountsPerSecond));
        let cell = match &mut self.table {
            Some(table) if column < self.row => {
                let cell = kw as usize * self.row + column;
                if table.len() <= cell {
                    let rows = kw as usize + 1;
                    table.resize(rows * self.row, u32::MAX);
                }
                table.get_mut(cell)
            }
            _ => None,
        };
        let id = match cell {
            Some(id) if *id != u32::MAX => *id,
            Some(slot) => {
                let id = u32::try_from(self.fills.len()).unwrap_or(u32::MAX);
                self.fills.push((key, Fill { size: 0, max: None }));
                *slot = id;
                id
            }
            None => self.hashed(kw, pair, key),
        };
        if let Some((_, fill)) = self.fills.get_mut(id as usize) {
            fill.size += 1;
            if value.is_finite() {
                // `max_by` keeps the last of equal values: equal under
                // `total_cmp` means the same value, so either will do.
                fill.max = Some(match fill.max {
                    Some(m) if m.total_cmp(&value).is_gt() => m,
                    _ => value,
                });
            }
        }
        id
    }

    /// The id of a group outside the table (see [`GroupFills`]).
    #[cold]
    #[inline(never)]
    fn hashed(&mut self, kw: u32, pair: u32, key: UnitGroupKey<'s>) -> u32 {
        let statistic = key.4;
        if let Some(id) = self.ids.get(&(kw, pair, statistic)) {
            return *id;
        }
        let id = u32::try_from(self.fills.len()).unwrap_or(u32::MAX);
        self.fills.push((key, Fill { size: 0, max: None }));
        self.ids.insert((kw, pair, statistic), id);
        id
    }
}

/// What [`group_keys`] reads of a subject: host, GPU, whether it names a
/// link, a lane, a port, the all-ports aggregate, and the device (or, for
/// a port without one, the LID). The links of a GPU share one.
type GroupsOf<'s> = (
    Option<&'s str>,
    Option<u32>,
    [bool; 4],
    Option<&'s str>,
    Option<u32>,
);

fn groups_of(subject: &Subject) -> GroupsOf<'_> {
    (
        subject.host.as_deref(),
        subject.gpu,
        [
            subject.link.is_some(),
            subject.lane.is_some(),
            subject.port.is_some(),
            subject.is_aggregate(),
        ],
        subject.device.as_deref(),
        if subject.device.is_none() {
            subject.lid
        } else {
            None
        },
    )
}

/// The words of a unit's groups, each kept once; each subject's groups,
/// worked out once per [`GroupsOf`] (not once per link or port); each
/// (kind, words) numbered (a row of [`GroupFills`]); and, for the oracle,
/// the groups of the subject seen last.
#[derive(Default)]
struct GroupWords<'s> {
    ids: FxHashMap<String, u32>,
    texts: Vec<String>,
    /// Each list's run of `groups`.
    lists: Vec<std::ops::Range<usize>>,
    /// The lists' (kind, words id, kind and words' number), one after the
    /// other in one buffer (not a vector per list).
    groups: Vec<(PeerGroupKind, u32, u32)>,
    by_groups_of: FxHashMap<GroupsOf<'s>, u32>,
    kws: FxHashMap<(PeerGroupKind, u32), u32>,
    /// The keys and lists looked up last (a link's key and its lanes' key
    /// alternate), in the slot `next_key` names next.
    last_keys: [Option<(GroupsOf<'s>, u32)>; 4],
    next_key: usize,
    /// The slot of `last_keys` found or filled last.
    last_hit: usize,
    #[cfg(test)]
    last: Option<(&'s Subject, u32)>,
}

impl<'s> GroupWords<'s> {
    /// The groups `subject` belongs to, as (kind, words id, number).
    #[cfg(test)]
    fn of(&mut self, subject: &'s Subject) -> &[(PeerGroupKind, u32, u32)] {
        // Series of one subject borrow one key: most often the same reference.
        let seen = self
            .last
            .filter(|(s, _)| std::ptr::eq(*s, subject) || *s == subject);
        let list = match seen {
            Some((_, list)) => list,
            None => {
                let list = self.list_id(subject);
                self.last = Some((subject, list));
                list
            }
        };
        self.list(list)
    }

    /// The id of the list of groups `subject` belongs to (see [`Self::list`]).
    /// Once per subject: kept out of [`peer_groups`]' loops over series.
    #[inline(never)]
    fn list_id(&mut self, subject: &'s Subject) -> u32 {
        let key = groups_of(subject);
        // Subjects come in order: the links of a GPU, one after the other,
        // share one key (no hashing of the host's name per link). The key
        // found last is tried first, and the numbers of keys before their
        // names (a host's keys mostly share its name).
        let same = |k: &GroupsOf<'_>| {
            (k.1, k.2, k.4) == (key.1, key.2, key.4) && k.0 == key.0 && k.3 == key.3
        };
        let slots = self.last_keys.len();
        let found = (0..slots)
            .map(|back| (self.last_hit + slots - back) % slots)
            .find_map(|at| match self.last_keys.get(at) {
                Some(Some((k, list))) if same(k) => Some((at, *list)),
                _ => None,
            });
        if let Some((at, list)) = found {
            self.last_hit = at;
            return list;
        }
        if let Some(list) = self.by_groups_of.get(&key) {
            let list = *list;
            self.remember(key, list);
            return list;
        }
        let start = self.groups.len();
        for (kind, words) in group_keys(subject) {
            let id = self.id(words);
            let kw = self.kw(kind, id);
            self.groups.push((kind, id, kw));
        }
        self.lists.push(start..self.groups.len());
        let list = u32::try_from(self.lists.len() - 1).unwrap_or(u32::MAX);
        self.by_groups_of.insert(key, list);
        self.remember(key, list);
        list
    }

    fn remember(&mut self, key: GroupsOf<'s>, list: u32) {
        if let Some(slot) = self.last_keys.get_mut(self.next_key) {
            *slot = Some((key, list));
        }
        self.last_hit = self.next_key;
        self.next_key = (self.next_key + 1) % self.last_keys.len();
    }

    /// The list with id `list`: (kind, words id, number) of each group.
    fn list(&self, list: u32) -> &[(PeerGroupKind, u32, u32)] {
        self.lists
            .get(list as usize)
            .and_then(|run| self.groups.get(run.clone()))
            .unwrap_or_default()
    }

    /// The number of (`kind`, `words`), from 0 in the order first asked.
    fn kw(&mut self, kind: PeerGroupKind, words: u32) -> u32 {
        let next = u32::try_from(self.kws.len()).unwrap_or(u32::MAX);
        *self.kws.entry((kind, words)).or_insert(next)
    }

    fn id(&mut self, words: String) -> u32 {
        if let Some(id) = self.ids.get(words.as_str()) {
            return *id;
        }
        let id = u32::try_from(self.texts.len()).unwrap_or(u32::MAX);
        self.texts.push(words.clone());
        self.ids.insert(words, id);
        id
    }

    fn text(&self, id: u32) -> &str {
        self.texts.get(id as usize).map_or("", String::as_str)
    }

    /// Each words id's rank among the words in their order: comparing
    /// ranks compares the words.
    fn ranks(&self) -> Vec<u32> {
        let mut order: Vec<usize> = (0..self.texts.len()).collect();
        order.sort_unstable_by(|a, b| self.texts.get(*a).cmp(&self.texts.get(*b)));
        let mut ranks = vec![0; order.len()];
        for (rank, id) in order.into_iter().enumerate() {
            if let Some(r) = ranks.get_mut(id) {
                *r = u32::try_from(rank).unwrap_or(u32::MAX);
            }
        }
        ranks
    }
}

/// The two-pass [`peer_groups`]' oracle: a vector of members per group,
/// all of them (as before the two passes; kept for a test).
///
/// The peer groups within one unit (links of a GPU, ports of a device or
/// host, GPUs of a host), how many of them were left out because every
/// member reads 0, and the values the fleet step compares across hosts.
///
/// `rates` are in series order (as [`super::measure_unit`] makes them).
#[cfg(test)]
pub(super) fn peer_groups_oracle<'s>(
    series: &'s Series<'s>,
    ids: &SeriesIds,
    rates: &'s [CounterRate],
    files: &[Option<&'s str>],
    options: &StatsOptions,
) -> (Vec<PeerGroup>, usize, PeerValues) {
    let mut words = GroupWords::default();
    let mut groups: FxHashMap<UnitGroupKey<'_>, Vec<Member<'_>>> = FxHashMap::default();
    // Summed through a hash map, then walked in key order (as a tree would).
    let mut gpu_sums: FxHashMap<GpuKey<'_>, GpuSum<'_>> = FxHashMap::default();
    let mut across = PeerValuesBuilder::for_series(series, ids);
    // Series with news are compared by their rate alone.
    let with_news: std::collections::HashSet<(&Subject, &CounterSource, &str)> = rates
        .iter()
        .filter(|r| r.compared_by_rate())
        .map(|r| (&*r.subject, &r.source, &*r.counter))
        .collect();
    for (&((subject, source, name), points), &key) in series.iter().zip(&ids.keys) {
        let Some(last) = points.last() else { continue };
        if !last.role.compared_across_peers() || with_news.contains(&(subject, source, name)) {
            continue;
        }
        let value = last.counter.value;
        let file = file_at(files, last.snapshot);
        #[allow(clippy::cast_precision_loss)]
        let member = || Member {
            subject: Who::Borrowed(subject),
            value: value as f64,
            count: Some(value),
            lines: last.span,
            file,
        };
        for &(kind, at, _) in words.of(subject) {
            groups
                .entry((kind, at, source, name, PeerStatistic::Value))
                .or_default()
                .push(member());
        }
        add_to_gpu_sum(
            &mut gpu_sums,
            subject,
            source,
            name,
            value,
            (last.span, file),
        );
        across.add(key, subject, source, name, value, (last.span, file));
    }
    let mut gpu_sums: Vec<_> = gpu_sums.into_iter().collect();
    // Keys are unique (they were map keys), so an unstable sort is exact.
    gpu_sums.sort_unstable_by_key(|(key, _)| *key);
    for ((host, gpu, source, name), total) in gpu_sums {
        let at = words.id(gpus_of_host_words(host));
        groups
            .entry((
                PeerGroupKind::GpusOfHost,
                at,
                source,
                name,
                PeerStatistic::Value,
            ))
            .or_default()
            .push(gpu_sum_member(host, gpu, total));
    }
    // Latest measured rate of each counter: a series' rates are next to
    // each other, in snapshot order.
    let mut latest: Vec<&CounterRate> = Vec::new();
    for r in rates.iter().filter(|r| r.compared_by_rate()) {
        match latest.last_mut() {
            Some(last)
                if last.subject == r.subject
                    && last.source == r.source
                    && last.counter == r.counter =>
            {
                *last = r;
            }
            _ => latest.push(r),
        }
    }
    for r in latest {
        for &(kind, at, _) in words.of(&r.subject) {
            groups
                .entry((
                    kind,
                    at,
                    &r.source,
                    &r.counter,
                    PeerStatistic::CountsPerSecond,
                ))
                .or_default()
                .push(rate_member(r, files));
        }
    }
    // Skipped and quiet groups are counted here, before the sort: the
    // order of the groups judged does not depend on them.
    let mut quiet = 0usize;
    let ordered: Vec<_> = groups
        .into_iter()
        .filter(|(_, members)| match shortcut(members) {
            Shortcut::Skip => false,
            Shortcut::Quiet => {
                quiet += 1;
                false
            }
            Shortcut::Judge => true,
        })
        .collect();
    let (out, judged_quiet) = judge_in_order(ordered, &words, options);
    (out, quiet + judged_quiet, across.finish())
}

/// What a group's values say before any statistic is taken.
enum Shortcut {
    /// Fewer than two members, or no finite value: left out, not counted.
    Skip,
    /// Every finite value's maximum is 0: left out as quiet.
    Quiet,
    /// To be judged.
    Judge,
}

/// Decides, in one pass over the values, what [`judge_groups`] would do
/// with a group that is skipped or quiet (the maximum of the finite
/// values, ordered by `total_cmp` as the summary orders them, is 0), so
/// that such groups, most of them, are neither sorted nor summarised.
fn shortcut(members: &[Member<'_>]) -> Shortcut {
    let max = members
        .iter()
        .map(|m| m.value)
        .filter(|v| v.is_finite())
        .max_by(f64::total_cmp);
    Shortcut::of(members.len(), max)
}

impl Shortcut {
    /// The shortcut for a group of `size` members whose largest finite
    /// value (by `total_cmp`) is `max`.
    fn of(size: usize, max: Option<f64>) -> Self {
        match max {
            _ if size < 2 => Self::Skip,
            None => Self::Skip,
            // `==`, as the summary's check: -0.0 is 0 too.
            Some(0.0) => Self::Quiet,
            Some(_) => Self::Judge,
        }
    }
}

/// Compares each group's members with robust statistics: the summary and
/// the members far above their peers. Groups of one, and groups where every
/// member reads 0 (counted, returned second), are left out.
fn judge_groups<'s>(
    groups: impl IntoIterator<Item = (GroupKey, Vec<Member<'s>>)>,
    options: &StatsOptions,
) -> (Vec<PeerGroup>, usize) {
    let mut quiet = 0usize;
    let mut out = Vec::new();
    for ((kind, words, source, counter, statistic), members) in groups {
        match shortcut(&members) {
            Shortcut::Skip => continue,
            Shortcut::Quiet => {
                quiet += 1;
                continue;
            }
            Shortcut::Judge => {}
        }
        let values: Vec<f64> = members.iter().map(|m| m.value).collect();
        // Summary and scores from one sort (see `summary_and_outliers`).
        let Ok((summary, scored)) = robust::summary_and_outliers(&values, options.outlier_z) else {
            continue;
        };
        if summary.max == 0.0 {
            quiet += 1;
            continue;
        }
        let (flagged, scale, computed) = match scored {
            Ok((f, s)) => (f, Some(s), true),
            Err(_) => (Vec::new(), None, false),
        };
        // The counts' median is read only for an outlier above its peers.
        // When every member's value is its count (as a reading, a sum or a
        // value across hosts is), the counts are the values, all finite,
        // and their median is the summary's: no second sort.
        let mut count_median: Option<f64> = None;
        let mut count_median = || {
            *count_median.get_or_insert_with(|| {
                let counts_are_values = members
                    .iter()
                    .all(|m| m.count.map(|c| (c as f64).to_bits()) == Some(m.value.to_bits()));
                if counts_are_values {
                    return summary.median;
                }
                let counts: Vec<f64> = members
                    .iter()
                    .filter_map(|m| m.count)
                    .map(|c| c as f64)
                    .collect();
                robust::median(&counts).unwrap_or(0.0)
            })
        };
        let size = members.len();
        // The group's words, the same for each of its outliers.
        let about = GroupAbout {
            counter: &counter,
            unit: statistic.unit(),
            median: &fmt_num(summary.median),
            size,
            words: &words,
            scale,
        };
        let outliers = flagged
            .into_iter()
            .filter(|f| f.robust_z > 0.0)
            .filter_map(|f| {
                let member = members.get(f.index)?;
                let p = member
                    .count
                    .map(|c| poisson_tail(c, count_median().max(1.0)));
                if p.is_some_and(|p| p >= options.outlier_poisson_p) {
                    return None;
                }
                let subject = member.subject.to_subject();
                Some(OutlierMember {
                    explanation: about.explain(&subject, &f, p),
                    subject,
                    value: f.value,
                    robust_z: f.robust_z,
                    times_median: f.times_median,
                    poisson_tail_p: p,
                    lines: member.lines,
                    file: member.file.map(str::to_owned),
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
    (out, quiet)
}

/// The note saying how many peer groups were left out as all zero.
#[must_use]
pub fn quiet_note(quiet: usize) -> Option<String> {
    (quiet > 0).then(|| format!("{quiet} peer group(s) left out because every member reads 0"))
}

/// The latest reading of one counter of one port or link, kept for the
/// comparison of the same place across hosts (`same_port_across_hosts`):
/// what one unit hands to the fleet step for its peer groups.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeerValue {
    /// The place: the subject without host and LID (LIDs differ from host
    /// to host; the CA name and port number do not).
    pub place: Subject,
    /// Counter set.
    pub source: CounterSource,
    /// Counter name.
    pub counter: String,
    /// The host.
    pub host: String,
    /// The port's LID, when the reading named one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lid: Option<u32>,
    /// The reading.
    pub value: u64,
    /// Its lines.
    pub lines: LineSpan,
    /// The file they are in (batch runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

/// The [`PeerValue`]s of one unit, compact: a host hands the fleet step
/// about a thousand of them, which as owned values were two or three small
/// allocations each (host, counter name, CA name) made, moved and freed per
/// host. Here each host, counter name, place and counter set is kept once
/// and values name them by index (in the order first seen): the fleet step
/// looks each place up once per unit, not once per value. JSON carries the
/// same array of [`PeerValue`] objects.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PeerValues {
    hosts: Vec<String>,
    counters: Vec<String>,
    places: Vec<Subject>,
    sources: Vec<CounterSource>,
    /// The files values were read from (a host's score of files).
    files: Vec<String>,
    values: Vec<CompactValue>,
}

/// A [`PeerValue`] whose place, counter set, counter and host are indexes
/// into [`PeerValues`].
#[derive(Debug, Clone, Copy, PartialEq)]
struct CompactValue {
    place: u32,
    source: u32,
    counter: u32,
    host: u32,
    lid: Option<u32>,
    value: u64,
    lines: LineSpan,
    /// Index into `files`, or [`UNSEEN`] for none.
    file: u32,
}

impl PeerValues {
    /// Number of values.
    #[must_use]
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether there are none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The values, as owned [`PeerValue`]s, in order.
    pub fn iter(&self) -> impl Iterator<Item = PeerValue> + '_ {
        self.values.iter().map(|v| PeerValue {
            place: self.place(v.place).clone(),
            source: self.source(v.source).clone(),
            counter: text_at(&self.counters, v.counter).to_owned(),
            host: text_at(&self.hosts, v.host).to_owned(),
            lid: v.lid,
            value: v.value,
            lines: v.lines,
            file: self.file(v.file).map(str::to_owned),
        })
    }

    fn file(&self, at: u32) -> Option<&str> {
        self.files.get(at as usize).map(String::as_str)
    }

    fn place(&self, at: u32) -> &Subject {
        self.places.get(at as usize).unwrap_or(&NOBODY)
    }

    fn source(&self, at: u32) -> &CounterSource {
        self.sources
            .get(at as usize)
            .unwrap_or(&CounterSource::NvidiaSmiNvlink)
    }
}

fn text_at(texts: &[String], at: u32) -> &str {
    texts.get(at as usize).map_or("", String::as_str)
}

/// The id of `text` in `texts`, added when new.
fn intern(texts: &mut Vec<String>, ids: &mut FxHashMap<String, u32>, text: &str) -> u32 {
    if let Some(id) = ids.get(text) {
        return *id;
    }
    let id = u32::try_from(texts.len()).unwrap_or(u32::MAX);
    texts.push(text.to_owned());
    ids.insert(text.to_owned(), id);
    id
}

/// The id of `source` in `sources` (a handful: found by a scan), added when new.
fn source_id(sources: &mut Vec<CounterSource>, source: &CounterSource) -> u32 {
    let at = match sources.iter().position(|s| s == source) {
        Some(at) => at,
        None => {
            sources.push(source.clone());
            sources.len() - 1
        }
    };
    u32::try_from(at).unwrap_or(u32::MAX)
}

/// What names a place within [`PeerValues`]: the place's fields, its CA
/// name borrowed, and the port GUID when the tool printed one (a port of
/// a node the paste does not name is told apart by it alone).
type PlaceKey<'a> = (Option<&'a str>, Option<Guid>, [Option<u32>; 4]);

fn place_key(place: &Subject) -> PlaceKey<'_> {
    (
        place.device.as_deref(),
        place.guid,
        [place.port, place.gpu, place.link, place.lane],
    )
}

impl From<Vec<PeerValue>> for PeerValues {
    fn from(values: Vec<PeerValue>) -> Self {
        let mut out = Self {
            values: Vec::with_capacity(values.len()),
            ..Self::default()
        };
        let (mut host_ids, mut counter_ids) = (FxHashMap::default(), FxHashMap::default());
        let mut file_ids = FxHashMap::default();
        let mut place_ids: FxHashMap<Subject, u32> = FxHashMap::default();
        for v in values {
            let file = v
                .file
                .as_deref()
                .map_or(UNSEEN, |f| intern(&mut out.files, &mut file_ids, f));
            let host = intern(&mut out.hosts, &mut host_ids, &v.host);
            let counter = intern(&mut out.counters, &mut counter_ids, &v.counter);
            let source = source_id(&mut out.sources, &v.source);
            let place = match place_ids.get(&v.place) {
                Some(id) => *id,
                None => {
                    let id = u32::try_from(out.places.len()).unwrap_or(u32::MAX);
                    out.places.push(v.place.clone());
                    place_ids.insert(v.place, id);
                    id
                }
            };
            out.values.push(CompactValue {
                place,
                source,
                counter,
                host,
                lid: v.lid,
                value: v.value,
                lines: v.lines,
                file,
            });
        }
        out
    }
}

/// A [`PeerValue`] borrowed from [`PeerValues`]: the same fields, written
/// the same way.
#[derive(Serialize)]
struct PeerValueRef<'a> {
    place: &'a Subject,
    source: &'a CounterSource,
    counter: &'a str,
    host: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    lid: Option<u32>,
    value: u64,
    lines: LineSpan,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<&'a str>,
}

impl Serialize for PeerValues {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.values.iter().map(|v| PeerValueRef {
            place: self.place(v.place),
            source: self.source(v.source),
            counter: text_at(&self.counters, v.counter),
            host: text_at(&self.hosts, v.host),
            lid: v.lid,
            value: v.value,
            lines: v.lines,
            file: self.file(v.file),
        }))
    }
}

impl<'de> Deserialize<'de> for PeerValues {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Vec::<PeerValue>::deserialize(deserializer).map(Self::from)
    }
}

/// Fills [`PeerValues`] from a unit's series, given with their keys' ids:
/// each subject's place and each counter name is numbered the first time
/// its id is seen (no hashing of the text per value); the host is most
/// often the one of the value before, and the counter set too.
struct PeerValuesBuilder<'s> {
    out: PeerValues,
    /// Each subject's place (`UNSEEN`, or `NO_PLACE`) and host, by subject id.
    place_of: Vec<(u32, u32)>,
    place_ids: FxHashMap<PlaceKey<'s>, u32>,
    /// Each counter name's number, by name id (`UNSEEN`).
    counter_of: Vec<u32>,
    host_ids: FxHashMap<String, u32>,
    file_ids: FxHashMap<String, u32>,
    last_host: Option<(&'s str, u32)>,
    last_source: Option<(&'s CounterSource, u32)>,
    last_file: Option<(&'s str, u32)>,
}

/// Not looked up yet.
const UNSEEN: u32 = u32::MAX;
/// A subject without a place (no host, the all-ports aggregate, or none of
/// device, port, GPU, link and lane).
const NO_PLACE: u32 = u32::MAX - 1;

impl<'s> PeerValuesBuilder<'s> {
    /// Sized once for `series`: a host hands the fleet step hundreds of
    /// values, at most one per series (room for one per series is a little
    /// more than needed, and saves a pass counting them).
    fn for_series(series: &Series<'_>, ids: &SeriesIds) -> Self {
        Self {
            out: PeerValues {
                values: Vec::with_capacity(series.len()),
                places: Vec::with_capacity(ids.subjects),
                counters: Vec::with_capacity(ids.names),
                ..PeerValues::default()
            },
            place_of: vec![(UNSEEN, UNSEEN); ids.subjects],
            place_ids: FxHashMap::with_capacity_and_hasher(ids.subjects, Default::default()),
            counter_of: vec![UNSEEN; ids.names],
            host_ids: FxHashMap::default(),
            file_ids: FxHashMap::default(),
            last_host: None,
            last_source: None,
            last_file: None,
        }
    }

    /// Adds a host's latest value of a counter, named by its place on the
    /// host; the fleet step compares it with the other hosts' values.
    /// `key` is the series' key as ids; the reading is at its lines of its
    /// file (if it came from one).
    fn add(
        &mut self,
        key: KeyIds,
        subject: &'s Subject,
        source: &'s CounterSource,
        name: &'s str,
        value: u64,
        (lines, file): (LineSpan, Option<&'s str>),
    ) {
        let (subject_id, _, name_id) = key;
        // A subject's place and host, looked up at its first value.
        let (place, host) = match self.place_of.get(subject_id as usize) {
            Some(&(place, host)) if place != UNSEEN => (place, host),
            _ => {
                let place = self.place(subject);
                let host = if place == NO_PLACE {
                    UNSEEN
                } else {
                    self.host(subject)
                };
                if let Some(slot) = self.place_of.get_mut(subject_id as usize) {
                    *slot = (place, host);
                }
                (place, host)
            }
        };
        if place == NO_PLACE {
            return;
        }
        let source = match self.last_source {
            Some((last, id)) if std::ptr::eq(last, source) || last == source => id,
            _ => {
                let id = source_id(&mut self.out.sources, source);
                self.last_source = Some((source, id));
                id
            }
        };
        let counter = match self.counter_of.get(name_id as usize) {
            Some(&id) if id != UNSEEN => id,
            _ => {
                let id = u32::try_from(self.out.counters.len()).unwrap_or(u32::MAX);
                self.out.counters.push(name.to_owned());
                if let Some(slot) = self.counter_of.get_mut(name_id as usize) {
                    *slot = id;
                }
                id
            }
        };
        // A host's values come a file at a time.
        let file = match (file, self.last_file) {
            (None, _) => UNSEEN,
            (Some(f), Some((last, id))) if std::ptr::eq(f, last) || f == last => id,
            (Some(f), _) => {
                let id = intern(&mut self.out.files, &mut self.file_ids, f);
                self.last_file = Some((f, id));
                id
            }
        };
        self.out.values.push(CompactValue {
            place,
            source,
            counter,
            host,
            lid: subject.lid,
            value,
            lines,
            file,
        });
    }

    /// The number of `subject`'s host.
    fn host(&mut self, subject: &'s Subject) -> u32 {
        let host = subject.host.as_deref().unwrap_or_default();
        match self.last_host {
            Some((last, id)) if last == host => id,
            _ => {
                let id = intern(&mut self.out.hosts, &mut self.host_ids, host);
                self.last_host = Some((host, id));
                id
            }
        }
    }

    /// The number of `subject`'s place, or `NO_PLACE`.
    fn place(&mut self, subject: &'s Subject) -> u32 {
        if subject.host.is_none() || subject.is_aggregate() {
            return NO_PLACE;
        }
        // LIDs differ from host to host (every port has its own); the CA
        // name and port number do not, so they alone say "the same port".
        let key = place_key(subject);
        if key == (None, None, [None; 4]) {
            return NO_PLACE;
        }
        if let Some(id) = self.place_ids.get(&key) {
            return *id;
        }
        let id = u32::try_from(self.out.places.len()).unwrap_or(u32::MAX);
        // Built field by field: cloning the subject would copy the host's
        // name only to drop it.
        self.out.places.push(Subject {
            host: None,
            device: subject.device.clone(),
            guid: subject.guid,
            lid: None,
            port: subject.port,
            gpu: subject.gpu,
            link: subject.link,
            lane: subject.lane,
        });
        self.place_ids.insert(key, id);
        id
    }

    fn finish(self) -> PeerValues {
        self.out
    }
}

/// One place's readings across hosts, compact: a fleet of 1,000 hosts
/// holds about a million of them, and most error counters read 0, so only
/// the non-zero ones are stored (with their position among the members,
/// which keeps the members' order and so the statistics bit for bit).
#[derive(Debug)]
struct Place {
    place: Subject,
    members: u32,
    hosts: u32,
    last_host: Option<u32>,
    nonzero: Vec<PlaceReading>,
}

#[derive(Debug)]
struct PlaceReading {
    position: u32,
    host: u32,
    lid: Option<u32>,
    value: u64,
    lines: LineSpan,
    /// Index into [`AcrossHosts`]'s files, or [`UNSEEN`].
    file: u32,
}

/// A unit's value as the fleet step keys it: (place, counter set, counter)
/// as ids among every unit's, and the entry of `places` it joins.
type Joined = ((u32, u32, u32), usize);

/// The fleet step of the peer groups: every unit's [`PeerValue`]s, indexed
/// by place, counter set and counter, compared across hosts at the end.
///
/// Hosts must not be split over units (the engine merges units that name
/// the same host), so a place's members of one host arrive together.
///
/// This runs on the one thread that folds the units, so its work per value
/// is kept to integers: a unit's places, counter sets and counter names are
/// each looked up once, and the hosts of a fleet mostly list the same
/// values in the same order, so a value is first compared with the one at
/// its position in the unit before (no hashing at all when they match).
#[derive(Debug, Default)]
pub struct AcrossHosts {
    /// Places by their words (the groups' key), as positions in `places`.
    index: FxHashMap<(String, CounterSource, String), usize>,
    /// The same positions by (place, counter set, counter) ids.
    by_ids: FxHashMap<(u32, u32, u32), usize>,
    places: Vec<Place>,
    hosts: Vec<String>,
    host_ids: FxHashMap<String, u32>,
    /// The files of non-zero readings (the ones an outlier can name).
    files: Vec<String>,
    file_ids: FxHashMap<String, u32>,
    counters: Vec<String>,
    counter_ids: FxHashMap<String, u32>,
    /// Every unit's distinct places (without host and LID), each with an id.
    place_ids: FxHashMap<Subject, u32>,
    place_subjects: Vec<Subject>,
    sources: Vec<CounterSource>,
    /// The unit before's places, with their ids, by position.
    last_places: Vec<(Subject, u32)>,
    /// The unit before's counter names, with their ids, by position.
    last_counters: Vec<(String, u32)>,
    /// The unit before's values, joined, by position.
    last_joined: Vec<Joined>,
}

impl AcrossHosts {
    /// Adds one unit's values.
    pub fn add(&mut self, values: PeerValues) {
        let PeerValues {
            hosts,
            counters,
            places,
            sources,
            files,
            values,
        } = values;
        // Each of the unit's files is looked up when a non-zero reading
        // first names it (most readings are 0 and name none).
        let mut unit_files: Vec<u32> = vec![UNSEEN; files.len()];
        // The unit's hosts, counter names, places and counter sets, each
        // looked up once.
        let hosts: Vec<u32> = hosts
            .iter()
            .map(|h| intern(&mut self.hosts, &mut self.host_ids, h))
            .collect();
        // Hosts read the same counters in the same order: a name is first
        // compared with the one at its place in the unit before.
        let mut unit_counters: Vec<(String, u32)> = Vec::with_capacity(counters.len());
        for (at, name) in counters.into_iter().enumerate() {
            let id = match self.last_counters.get(at) {
                Some((last, id)) if *last == name => *id,
                _ => intern(&mut self.counters, &mut self.counter_ids, &name),
            };
            unit_counters.push((name, id));
        }
        let counters: Vec<u32> = unit_counters.iter().map(|(_, id)| *id).collect();
        self.last_counters = unit_counters;
        let sources: Vec<u32> = sources
            .iter()
            .map(|s| source_id(&mut self.sources, s))
            .collect();
        let mut unit_places: Vec<(Subject, u32)> = Vec::with_capacity(places.len());
        for (at, place) in places.into_iter().enumerate() {
            let id = match self.last_places.get(at) {
                Some((last, id)) if *last == place => *id,
                _ => match self.place_ids.get(&place) {
                    Some(id) => *id,
                    None => {
                        let id = u32::try_from(self.place_subjects.len()).unwrap_or(u32::MAX);
                        self.place_subjects.push(place.clone());
                        self.place_ids.insert(place.clone(), id);
                        id
                    }
                },
            };
            unit_places.push((place, id));
        }
        let mut joined: Vec<Joined> = Vec::with_capacity(values.len());
        for (at, v) in values.into_iter().enumerate() {
            let (Some(&host), Some(&counter), Some(&source), Some(&(_, place))) = (
                hosts.get(v.host as usize),
                counters.get(v.counter as usize),
                sources.get(v.source as usize),
                unit_places.get(v.place as usize),
            ) else {
                continue;
            };
            let ids = (place, source, counter);
            let slot = match self.last_joined.get(at) {
                Some(&(last, slot)) if last == ids => slot,
                _ => self.slot(ids),
            };
            joined.push((ids, slot));
            let Some(p) = self.places.get_mut(slot) else {
                continue;
            };
            if p.last_host != Some(host) {
                p.hosts += 1;
                p.last_host = Some(host);
            }
            if v.value != 0 {
                let file = match (
                    unit_files.get_mut(v.file as usize),
                    files.get(v.file as usize),
                ) {
                    (Some(id), Some(name)) => {
                        if *id == UNSEEN {
                            *id = intern(&mut self.files, &mut self.file_ids, name);
                        }
                        *id
                    }
                    _ => UNSEEN,
                };
                p.nonzero.push(PlaceReading {
                    position: p.members,
                    host,
                    lid: v.lid,
                    value: v.value,
                    lines: v.lines,
                    file,
                });
            }
            p.members += 1;
        }
        self.last_places = unit_places;
        self.last_joined = joined;
    }

    /// The entry of `places` for (place, counter set, counter) `ids`,
    /// added when new.
    fn slot(&mut self, ids: (u32, u32, u32)) -> usize {
        if let Some(i) = self.by_ids.get(&ids) {
            return *i;
        }
        let (place, source, counter) = ids;
        let place = self
            .place_subjects
            .get(place as usize)
            .unwrap_or(&NOBODY)
            .clone();
        let source = self
            .sources
            .get(source as usize)
            .cloned()
            .unwrap_or(CounterSource::NvidiaSmiNvlink);
        // Places are grouped by their words, as the report names them:
        // worked out once per place, not once per value.
        let by_words = (
            format!("{place} across hosts"),
            source,
            text_at(&self.counters, counter).to_owned(),
        );
        let i = match self.index.get(&by_words) {
            Some(i) => *i,
            None => {
                let i = self.places.len();
                self.places.push(Place {
                    place,
                    members: 0,
                    hosts: 0,
                    last_host: None,
                    nonzero: Vec::new(),
                });
                self.index.insert(by_words, i);
                i
            }
        };
        self.by_ids.insert(ids, i);
        i
    }

    /// The groups of places read on two or more hosts, in the order of
    /// their key, and how many were left out because every member reads 0.
    #[must_use]
    pub fn finish(self, options: &StatsOptions) -> (Vec<PeerGroup>, usize) {
        let Self {
            index,
            places,
            hosts,
            files,
            ..
        } = self;
        let mut keys: Vec<_> = index.into_iter().collect();
        keys.sort_unstable();
        // A place whose every reading is 0 is quiet: counted without
        // building its members (a thousand hosts, a thousand zeros).
        let mut quiet = 0usize;
        let groups = keys
            .into_iter()
            .filter_map(|((words, source, counter), i)| {
                let p = places.get(i)?;
                if p.hosts < 2 {
                    return None;
                }
                if p.nonzero.is_empty() {
                    quiet += 1;
                    return None;
                }
                let mut members: Vec<Member<'_>> = (0..p.members)
                    .map(|_| Member {
                        subject: Who::Borrowed(&NOBODY),
                        value: 0.0,
                        count: Some(0),
                        lines: LineSpan::default(),
                        file: None,
                    })
                    .collect();
                for r in &p.nonzero {
                    if let Some(m) = members.get_mut(r.position as usize) {
                        #[allow(clippy::cast_precision_loss)]
                        let value = r.value as f64;
                        // Named only if it is an outlier: no subject built here.
                        *m = Member {
                            subject: Who::OnHost {
                                place: &p.place,
                                host: hosts.get(r.host as usize).map(String::as_str),
                                lid: r.lid,
                            },
                            value,
                            count: Some(r.value),
                            lines: r.lines,
                            file: files.get(r.file as usize).map(String::as_str),
                        };
                    }
                }
                Some((
                    (
                        PeerGroupKind::SamePortAcrossHosts,
                        words,
                        source,
                        counter,
                        PeerStatistic::Value,
                    ),
                    members,
                ))
            });
        let (out, judged_quiet) = judge_groups(groups, options);
        (out, quiet + judged_quiet)
    }
}

/// What an outlier's explanation says of its group: the counter, the
/// statistic's unit, the median in words, the group's size and words, and
/// the spread estimate used.
struct GroupAbout<'a> {
    counter: &'a str,
    unit: &'a str,
    median: &'a str,
    size: usize,
    words: &'a str,
    scale: Option<ScaleMethod>,
}

impl GroupAbout<'_> {
    /// The explanation of the outlier `f`, a member `subject` with Poisson
    /// tail `p`: `node1 GPU 0 link 3: replay_errors 120 is 12.0× the median
    /// (10) of the 12 links of GPU 0 on node1 (robust z = 25.3; Poisson
    /// tail p = 1.2e-40)`.
    ///
    /// Written into one string, the group's median in words once per group
    /// (a fleet's groups across hosts explain thousands of outliers: a
    /// `format!` per part, and the median formatted per outlier, were most
    /// of their cost).
    fn explain(&self, subject: &Subject, f: &robust::Flagged, p: Option<f64>) -> String {
        use std::fmt::Write;
        let Self {
            counter,
            unit,
            median,
            size,
            words,
            scale,
        } = self;
        // The fixed words are about a hundred bytes: room for them, the
        // group's words and a subject, not grown.
        let mut out = String::with_capacity(160 + counter.len() + 2 * median.len() + words.len());
        let _ = write!(out, "{subject}");
        out.push_str(": ");
        out.push_str(counter);
        out.push(' ');
        super::push_num(&mut out, f.value);
        out.push_str(unit);
        let mut digits = [0; 20];
        let size =
            crate::parse::text::decimal_text(u64::try_from(*size).unwrap_or(u64::MAX), &mut digits);
        match f.times_median {
            None => {
                for part in [
                    " while the median of the ",
                    size,
                    " ",
                    words,
                    " is ",
                    median,
                    unit,
                ] {
                    out.push_str(part);
                }
            }
            Some(t) => {
                let _ = write!(out, " is {t:.1}× the median (");
                for part in [median, unit, ") of the ", size, " ", words] {
                    out.push_str(part);
                }
            }
        }
        let _ = write!(out, " (robust z = {:.1}", f.robust_z);
        out.push_str(match scale {
            Some(ScaleMethod::MeanAbsoluteDeviation) => {
                ", mean-deviation based since most peers are equal"
            }
            Some(ScaleMethod::None) => ", every other peer is equal",
            _ => "",
        });
        match p {
            Some(p) if p < 1e-300 => out.push_str("; Poisson tail p < 1e-300"),
            Some(p) => {
                let _ = write!(out, "; Poisson tail p = {p:.1e}");
            }
            None => {}
        }
        out.push(')');
        out
    }

    /// The explanation as it was written before [`Self::explain`] wrote it
    /// into one string (the oracle).
    #[cfg(test)]
    fn explain_formatted(
        &self,
        median: f64,
        subject: &Subject,
        f: &robust::Flagged,
        p: Option<f64>,
    ) -> String {
        let Self {
            counter,
            unit,
            size,
            words,
            scale,
            ..
        } = self;
        let median = super::fmt_num_formatted(median);
        let against = f.times_median.map_or_else(
            || format!("while the median of the {size} {words} is {median}{unit}"),
            |t| format!("is {t:.1}× the median ({median}{unit}) of the {size} {words}"),
        );
        format!(
            "{}: {counter} {}{unit} {against} (robust z = {:.1}{}{})",
            *subject,
            super::fmt_num_formatted(f.value),
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
        )
    }
}

/// `P(X ≥ k)` for `X ~ Poisson(λ)`: the regularised lower incomplete gamma `P(k, λ)`.
pub(super) fn poisson_tail(k: u64, lambda: f64) -> f64 {
    if k == 0 {
        return 1.0;
    }
    #[allow(clippy::cast_precision_loss)]
    statrs::function::gamma::gamma_lr(k as f64, lambda)
}

#[cfg(test)]
mod tests {
    use super::super::super::sample::{CounterUnit, Role};
    use super::super::rates::counter_rate;
    use super::super::timeline::{Interval, Point, Readings};
    use super::*;
    use crate::model::perfquery::PerfAttribute;
    use crate::model::port_index::PortIndex;
    use crate::model::Counter;
    use proptest::prelude::*;
    use std::sync::Arc;

    fn name() -> impl Strategy<Value = Option<String>> {
        proptest::option::of("[a-z0-9_ é{}%\\n]{0,8}")
    }

    fn number() -> impl Strategy<Value = f64> {
        prop_oneof![
            any::<f64>(),
            (0u64..100_000).prop_map(|i| i as f64),
            (0u64..100_000).prop_map(|i| i as f64 / 7.0),
            Just(0.0),
            Just(-0.0),
            Just(1e15),
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(f64::NEG_INFINITY),
        ]
    }

    proptest! {
        /// An outlier's explanation written into one string (the group's
        /// median in words once) reads as the `format!`s it replaced: every
        /// subject field there or not, whole and fractional numbers, NaN
        /// and ∞, with and without a times-the-median, every spread
        /// estimate, Poisson tails above, below and at 1e-300, and none.
        #[test]
        fn explanations_read_as_formatted(
            (host, device) in (name(), name()),
            (lid, port, gpu, link, lane) in (
                proptest::option::of(0u32..300),
                proptest::option::of(prop_oneof![Just(255u32), 0u32..300]),
                proptest::option::of(any::<u32>()),
                proptest::option::of(0u32..18),
                proptest::option::of(0u32..4),
            ),
            counter in "[A-Za-z_ é]{0,12}",
            per_second in any::<bool>(),
            (median, value, robust_z) in (number(), number(), number()),
            times_median in proptest::option::of(number()),
            size in 0usize..5_000,
            words in "[a-z0-9 é]{0,20}",
            scale in proptest::option::of(prop_oneof![
                Just(ScaleMethod::Mad),
                Just(ScaleMethod::MeanAbsoluteDeviation),
                Just(ScaleMethod::None),
            ]),
            p in proptest::option::of(prop_oneof![
                Just(1e-300),
                Just(0.0),
                Just(9.99e-301),
                (0.0f64..1.0),
                number(),
            ]),
        ) {
            let subject = Subject { host, device, guid: None, lid, port, gpu, link, lane };
            let statistic = if per_second {
                PeerStatistic::CountsPerSecond
            } else {
                PeerStatistic::Value
            };
            let about = GroupAbout {
                counter: &counter,
                unit: statistic.unit(),
                median: &fmt_num(median),
                size,
                words: &words,
                scale,
            };
            let f = robust::Flagged { index: 0, value, robust_z, times_median };
            prop_assert_eq!(
                about.explain(&subject, &f, p),
                about.explain_formatted(median, &subject, &f, p)
            );
        }

        /// A subject's groups written piece by piece are the `format!`ed
        /// ones: every field there or not, GPUs with links and lanes, the
        /// all-ports aggregate (255), names with non-ASCII, braces, `%` and
        /// line breaks, numbers up to `u32::MAX`.
        #[test]
        fn group_words_read_as_formatted(
            (host, device) in (name(), name()),
            (lid, port, gpu, link, lane) in (
                proptest::option::of(prop_oneof![any::<u32>(), 0u32..300]),
                proptest::option::of(prop_oneof![Just(255u32), 0u32..300]),
                proptest::option::of(prop_oneof![any::<u32>(), 0u32..10]),
                proptest::option::of(0u32..18),
                proptest::option::of(0u32..4),
            ),
        ) {
            let subject = Subject { host, device, guid: None, lid, port, gpu, link, lane };
            prop_assert_eq!(group_keys(&subject), group_keys_formatted(&subject));
        }

        /// The list of groups found for a subject, through the keys looked
        /// up last or the map, holds the subject's own groups: over the
        /// links of GPUs and ports of devices of two hosts, in any order
        /// (more keys than the look-up keeps).
        #[test]
        fn each_subject_gets_its_own_groups(
            named in proptest::collection::vec(
                (0usize..2, 0usize..3, 0u32..6, 0u32..3, any::<bool>()),
                0..60,
            ),
        ) {
            let subjects: Vec<Subject> = named
                .into_iter()
                .map(|(host, kind, number, at, lid)| {
                    let host = Some(["a", "b"][host].to_owned());
                    match kind {
                        0 => Subject { host, gpu: Some(number), link: Some(at), ..Subject::default() },
                        1 => Subject { host, gpu: Some(number), link: Some(at), lane: Some(0), ..Subject::default() },
                        _ => Subject {
                            host,
                            device: (!lid).then(|| format!("mlx5_{number}")),
                            lid: lid.then_some(number),
                            port: Some(at),
                            ..Subject::default()
                        },
                    }
                })
                .collect();
            let mut words = GroupWords::default();
            for subject in &subjects {
                let list = words.list_id(subject);
                let got: Vec<(PeerGroupKind, String)> = words
                    .list(list)
                    .iter()
                    .map(|&(kind, at, _)| (kind, words.text(at).to_owned()))
                    .collect();
                prop_assert_eq!(got, group_keys_formatted(subject));
            }
        }

        /// The two passes give the groups, quiet count and peer values of
        /// a vector of members per group: on GPU links and ports of one or
        /// two hosts, over one to three snapshots, most readings 0.
        #[test]
        fn two_passes_judge_as_members_per_group(
            readings in proptest::collection::vec(
                (0usize..2, 0usize..6, 0usize..3, 0usize..3, prop_oneof![3 => Just(0u64), 1 => 0u64..50, 1 => 0u64..5_000]),
                0..120,
            ),
            snapshots in 1usize..4,
        ) {
            let names = ["replay_errors", "SymbolErrorCounter", "data_tx_kib"];
            let roles = [Role::Errors, Role::BitErrors, Role::Other];
            let subject = |host: usize, who: usize| {
                let host = Some(["a", "b"][host].to_owned());
                if who < 4 {
                    Subject { host, gpu: Some(u32::from(who >= 2)), link: Some(who as u32 % 2), ..Subject::default() }
                } else {
                    Subject { host, device: Some(format!("mlx5_{}", who - 4)), lid: Some(who as u32), port: Some(1), ..Subject::default() }
                }
            };
            let sources = [
                CounterSource::NvidiaSmiNvlink,
                CounterSource::Perfquery(PerfAttribute::PortCountersExtended),
            ];
            let mut gathered = Readings::default();
            for snapshot in 0..snapshots {
                for (n, (host, who, name, bump, value)) in readings.iter().enumerate() {
                    let s = subject(*host, *who);
                    let point = Point {
                        snapshot,
                        counter: Counter::unknown_width(value + (*bump * snapshot * n) as u64),
                        unit: CounterUnit::Events,
                        role: roles[*name],
                        span: crate::span::LineSpan::line(n + 1),
                    };
                    gathered.add(&s, &sources[usize::from(*who >= 4)], names[*name], point);
                }
            }
            let (keys, ordered) = gathered.into_ordered(&PortIndex::of_documents([]));
            let (series, ids) = keys.series_with_ids(&ordered);
            let options = StatsOptions::default().with_interval(1.0);
            let times = vec![None; snapshots];
            let rates: Vec<CounterRate> = series
                .iter()
                .flat_map(|(key, points)| {
                    points.windows(2).filter_map(|pair| {
                        let [a, b] = pair else { return None };
                        let between = Interval::new(a.snapshot, b.snapshot, &times, &options);
                        let (subject, source, name) = *key;
                        Some(counter_rate((&Arc::new(subject.clone()), source, &Arc::from(name)), a, b, &between))
                    }).collect::<Vec<_>>()
                })
                .collect();
            // Snapshots in files of their own, the last one pasted (no file).
            let files: Vec<Option<&str>> = (0..snapshots)
                .map(|s| ["first.txt", "second.txt"].get(s).copied())
                .collect();
            let got = peer_groups(&series, &ids, &rates, &files, &options);
            let want = peer_groups_oracle(&series, &ids, &rates, &files, &options);
            prop_assert_eq!(&got.0, &want.0);
            prop_assert_eq!(got.1, want.1);
            prop_assert_eq!(&got.2, &want.2);
        }
    }
}
