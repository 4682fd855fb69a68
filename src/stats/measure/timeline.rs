//! Snapshots on a time line: when each counter-bearing section was read,
//! which readings form one series, and the interval between two snapshots.

use super::super::extract::Extracted;
use super::super::sample::{CounterUnit, Role, Subject};
use super::super::{CounterSource, StatsOptions};
use super::records::IntervalSource;
use crate::span::LineSpan;
use std::collections::{BTreeMap, HashMap};

/// A snapshot's time on a clock.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Clocked {
    pub(super) seconds: f64,
    /// `None` for Unix time; the host for a wall clock of unknown zone.
    pub(super) wall_clock_of: Option<Option<String>>,
    pub(super) source: String,
}

/// One reading of a series. Whose counter it is (subject, source, name) is
/// the series' key, not repeated here: a fleet has millions of readings.
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
pub(super) fn section_times(
    sections: &[(&crate::input::Section, Extracted)],
) -> Vec<Option<Clocked>> {
    let clocked = |section: &crate::input::Section, ex: &Extracted| {
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
pub(super) fn section_lid_for(section: &crate::input::Section, ca: &str) -> Option<u32> {
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

/// Whose counter a series is: subject, source and counter name.
pub(super) type SeriesKey = (Subject, CounterSource, String);

/// Every series of a unit, ordered by key (for a deterministic walk), each
/// with its readings in snapshot order. A sorted vector, not a tree: it is
/// built once and only walked, and one sort compares keys far fewer times
/// than inserting each into a map (the key comparisons were most of the
/// measuring time of a batch run).
pub(super) type Series = Vec<(SeriesKey, Vec<Point>)>;

/// Orders the readings gathered per key into [`Series`], giving
/// perfquery's LID-named ports their CA name when ibstat told it (two keys
/// that become one merge their readings).
pub(super) fn order_series(
    unordered: HashMap<SeriesKey, Vec<Point>>,
    ca_of_lid: &BTreeMap<(Option<String>, u32), String>,
) -> Series {
    let mut series: Series = if ca_of_lid.is_empty() {
        unordered.into_iter().collect()
    } else {
        let mut named: HashMap<SeriesKey, Vec<Point>> = HashMap::with_capacity(unordered.len());
        for ((mut subject, source, name), points) in unordered {
            if subject.device.is_none() {
                if let Some(ca) = subject
                    .lid
                    .and_then(|l| ca_of_lid.get(&(subject.host.clone(), l)))
                {
                    subject.device = Some(ca.clone());
                }
            }
            named
                .entry((subject, source, name))
                .or_default()
                .extend(points);
        }
        let mut series: Series = named.into_iter().collect();
        for (_, points) in &mut series {
            points.sort_by_key(|p| p.snapshot);
        }
        series
    };
    // Keys are unique (they were map keys), so an unstable sort is exact.
    series.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    series
}

pub(super) fn interval(
    a: usize,
    b: usize,
    times: &[Option<Clocked>],
    options: &StatsOptions,
) -> (Option<f64>, IntervalSource) {
    if let (Some(Some(ta)), Some(Some(tb))) = (times.get(a), times.get(b)) {
        let seconds = tb.seconds - ta.seconds;
        if ta.wall_clock_of == tb.wall_clock_of && seconds > 0.0 && seconds.is_finite() {
            return (
                Some(seconds),
                IntervalSource::InputTimes {
                    from: ta.source.clone(),
                    to: tb.source.clone(),
                },
            );
        }
    }
    match options
        .interval_seconds
        .filter(|s| *s > 0.0 && s.is_finite())
    {
        Some(s) => (Some(s), IntervalSource::Given),
        None => (None, IntervalSource::Unknown),
    }
}
