//! Assembles measurements from documents: snapshots and their times, counter
//! rates, throughput and utilisation, saturation, BER, peer groups, balance
//! and trends.
//!
//! Linear in the input apart from sorting: counters are paired through one
//! map keyed by (subject, source, name), and every group is built in one pass.

//!
//! # Layout
//! - [`records`]: the record types the report carries.
//! - `timeline`: snapshots, their times, series of readings, intervals.
//! - `rates`: rates, saturation, throughput, bit error rates.
//! - `peers`: peer groups and outliers.
//! - `balance`: traffic balance and trends.

mod balance;
mod notes;
mod peers;
mod rates;
pub mod records;
mod sleeps;
mod timeline;

pub use records::*;

use super::extract::{extract, Capacities, Capacity, LinkKeyRef};
use super::sample::{Direction, Subject};
use super::StatsOptions;
use crate::input::Document;
use balance::{balance, trends};
pub use notes::Note;
use peers::peer_groups;
pub use peers::quiet_note;
pub use peers::{AcrossHosts, PeerValue, PeerValues};
use rates::{
    bit_error_rate, counter_rate, lanes_per_link, saturated, throughput, BerMemo, Received,
};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::sync::Arc;
use timeline::{section_times, Clock, Clocked, Interval, Readings, SharedKeys};

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

/// Measures documents with optional file times.
#[must_use]
pub fn measure_sources(sources: &[Source<'_>], options: &StatsOptions) -> Measurements {
    let unit = measure_unit(sources, options);
    let mut across = AcrossHosts::default();
    across.add(unit.peer_values);
    let mut m = unit.measurements;
    m.notes = unit.notes.iter().map(ToString::to_string).collect();
    let (groups, quiet) = across.finish(options);
    m.peer_groups.extend(groups);
    m.notes.extend(quiet_note(unit.quiet_groups + quiet));
    m
}

/// One unit's measurements (the documents of one host, or of the hosts a
/// group of documents names together), before the fleet step adds the
/// comparisons across hosts.
///
/// Snapshot ids and input indexes count from 0 within the unit; notes stay
/// typed so the fleet step can shift the ids they name.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UnitMeasurements {
    /// Everything measured within the unit; `notes` is empty (see `notes`)
    /// and `peer_groups` holds the groups within the unit.
    pub measurements: Measurements,
    /// What could not be measured, and why.
    pub notes: Vec<Note>,
    /// Peer groups within the unit left out because every member reads 0.
    pub quiet_groups: usize,
    /// The latest readings the fleet step compares across hosts.
    pub peer_values: PeerValues,
}

/// Measures one unit: everything [`measure_sources`] measures except the
/// peer groups across hosts, which need every unit (see [`AcrossHosts`]).
#[must_use]
pub fn measure_unit(sources: &[Source<'_>], options: &StatsOptions) -> UnitMeasurements {
    let mut m = Measurements::default();
    let mut notes: Vec<Note> = Vec::new();
    let mut times: Vec<Option<Clocked>> = Vec::new();
    // In the order read; the last of a link's capacities wins.
    let mut read_capacities = Vec::new();
    // Their words, each capacity's found by its position.
    let mut capacity_words: Vec<Arc<str>> = Vec::new();
    // Gathered through interned keys, then ordered once for a deterministic walk.
    let mut readings = Readings::default();
    // perfquery names ports by LID: the one port index (every port view,
    // the latest winning) gives them their CA name, as the rules do.
    let ports =
        crate::model::port_index::PortIndex::of_documents(sources.iter().map(|s| s.document));
    for conflict in ports.conflicts() {
        notes.push(Note::Text(conflict.to_string()));
    }

    // Every input's sections extracted first, so that the readings' buffer
    // is sized once for the unit (a host's inputs are a score of small
    // files: growing it input by input copied it over and over).
    let extracted: Vec<Vec<_>> = sources
        .iter()
        .map(|src| {
            src.document
                .sections
                .iter()
                .map(|section| (section, extract(section)))
                .collect()
        })
        .collect();
    readings.reserve(
        extracted
            .iter()
            .flatten()
            .map(|(_, ex)| ex.samples.len())
            .sum(),
        extracted
            .iter()
            .flatten()
            .map(|(_, ex)| ex.subjects.len())
            .sum(),
    );
    // Each counter set of the section at hand as an id among the unit's.
    let mut source_ids: Vec<Option<u32>> = Vec::new();
    // The GPU UUIDs each snapshot printed, by GPU number (NVLink sections).
    let mut gpu_uuids: Vec<Vec<(u32, &str)>> = Vec::new();
    for (input, (src, extracted)) in sources.iter().zip(extracted).enumerate() {
        let section_times = section_times(input, &src.document.framing, &extracted);
        for ((section, ex), time) in extracted.into_iter().zip(section_times) {
            // A section's capacities name its words by their positions
            // among its own: here, among the unit's.
            let base = u32::try_from(capacity_words.len()).unwrap_or(u32::MAX);
            capacity_words.extend(ex.capacity_words);
            read_capacities.extend(ex.capacities.into_iter().map(|(key, capacity)| {
                let source = capacity.source.saturating_add(base);
                (key, Capacity { source, ..capacity })
            }));
            if ex.samples.is_empty() {
                continue;
            }
            let id = m.snapshots.len();
            let time = time.or_else(|| {
                src.modified_unix.map(|t| Clocked {
                    seconds: t,
                    clock: Clock::Unix,
                    source: format!(
                        "modification time of {}",
                        section.source.as_deref().unwrap_or("the input file")
                    ),
                    file_time: true,
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
                time_is_unix: time.as_ref().is_some_and(|t| t.clock == Clock::Unix),
                time_source: time.as_ref().map(|t| t.source.clone()),
            });
            times.push(time);
            gpu_uuids.push(match &section.data {
                crate::parse::SectionData::Nvlink(nv) => nv
                    .gpus
                    .iter()
                    .filter_map(|g| Some((g.index, g.uuid.as_deref()?)))
                    .collect(),
                _ => Vec::new(),
            });
            // The section's subjects and counter sets, each looked up once.
            let mut ids: Vec<Option<u32>> = vec![None; ex.subjects.len()];
            source_ids.clear();
            source_ids.resize(ex.sources.len(), None);
            for sample in &ex.samples {
                let (Some(subject), Some(slot), Some(source), Some(source_slot)) = (
                    ex.subjects.get(sample.subject),
                    ids.get_mut(sample.subject),
                    ex.sources.get(sample.source),
                    source_ids.get_mut(sample.source),
                ) else {
                    continue;
                };
                let subject = *slot.get_or_insert_with(|| readings.subject_id(subject));
                let source_id = *source_slot.get_or_insert_with(|| readings.source_id(source));
                if sample.counter.saturated {
                    if let Some(subject) = readings.subject(subject) {
                        m.saturated_counters
                            .push(saturated(subject, source, sample, id));
                    }
                }
                readings.add_reading(subject, source_id, id, sample);
            }
        }
    }
    let capacities = Capacities::from_read(read_capacities, capacity_words);
    m.link_capacities = capacities
        .iter()
        .map(|(key, cap)| LinkCapacity {
            subject: match key {
                LinkKeyRef::Lid { lid, port } => Subject {
                    lid: Some(*lid),
                    port: Some(*port),
                    ..Subject::default()
                },
                LinkKeyRef::CaPort { host, ca, port } => Subject {
                    host: host.map(str::to_owned),
                    device: Some((*ca).to_owned()),
                    port: Some(*port),
                    ..Subject::default()
                },
                LinkKeyRef::Nvlink { host, gpu, link } => Subject {
                    host: host.map(str::to_owned),
                    gpu: Some(*gpu),
                    link: Some(*link),
                    ..Subject::default()
                },
            },
            gbit_per_second: cap.gbit_per_second,
            source: capacities.words_of(cap).cloned().unwrap_or_default(),
            lines: cap.span,
        })
        .collect();
    let (keys, ordered) = readings.into_ordered(&ports);
    let (series, series_ids) = keys.series_with_ids(&ordered);

    let mut missing_interval = BTreeSet::new();
    // Snapshot pairs that show one GPU number with two UUIDs: two
    // machines' output under one host name, not one GPU twice.
    let mut two_machines = BTreeSet::new();
    // Every counter of two snapshots shares their interval: worked out once.
    let mut intervals: FxHashMap<(usize, usize), Interval> = FxHashMap::default();
    m.counter_rates.reserve(
        series
            .iter()
            .map(|(_, points)| points.len().saturating_sub(1))
            .sum(),
    );
    let mut shared = SharedKeys::new(&keys);
    for ((key, points), ids) in series.iter().zip(&series_ids.keys) {
        if points.len() < 2 {
            continue;
        }
        let (_, source, _) = *key;
        let Some((subject, name)) = shared.get(*ids) else {
            continue;
        };
        for pair in points.windows(2) {
            let [a, b] = pair else { continue };
            if let Some(gpu) = subject.gpu {
                let uuid_in = |snapshot: usize| {
                    gpu_uuids
                        .get(snapshot)
                        .and_then(|u| u.iter().find(|(g, _)| *g == gpu))
                        .map(|(_, u)| *u)
                };
                if let (Some(x), Some(y)) = (uuid_in(a.snapshot), uuid_in(b.snapshot)) {
                    if x != y {
                        two_machines.insert((a.snapshot, b.snapshot, gpu));
                        continue;
                    }
                }
            }
            let between = intervals
                .entry((a.snapshot, b.snapshot))
                .or_insert_with(|| Interval::new(a.snapshot, b.snapshot, &times, options));
            let rate = counter_rate((&subject, source, &name), a, b, between);
            if rate.status == RateStatus::NoInterval {
                missing_interval.insert((a.snapshot, b.snapshot));
            }
            m.counter_rates.push(rate);
        }
    }
    for &(a, b) in &missing_interval {
        notes.push(match timeline::file_times_too_close(a, b, &times) {
            Some(seconds) => Note::FileTimesTooClose {
                from: a,
                to: b,
                seconds,
            },
            None => Note::NoInterval { from: a, to: b },
        });
    }
    for (a, b, gpu) in two_machines {
        notes.push(Note::Text(format!(
            "snapshots {a} and {b} show GPU {gpu} with two different UUIDs: two machines' output \
             under one host name (name each host's output), not two readings of one GPU; no \
             rates between them"
        )));
    }
    if let Some(given) = options.interval_seconds {
        let disagreeing: BTreeSet<(usize, usize, u64)> = m
            .counter_rates
            .iter()
            .filter(|r| matches!(r.interval_source, IntervalSource::InputTimes { .. }))
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
            notes.push(Note::IntervalDisagrees {
                from: a,
                to: b,
                seconds: f64::from_bits(bits),
                given,
            });
        }
    }
    for rate in &m.counter_rates {
        if rate.status == RateStatus::CounterReset {
            notes.push(Note::CounterReset {
                what: format!("{} {}", rate.subject, rate.counter),
                before: rate.before,
                after: rate.after,
                from: rate.from_snapshot,
                to: rate.to_snapshot,
            });
        }
    }
    let mut seconds_text: rates::SecondsText = None;
    m.throughput = m
        .counter_rates
        .iter()
        .filter_map(|r| throughput(r, &capacities, &mut seconds_text))
        .collect();
    let over: Vec<&Throughput> = m
        .throughput
        .iter()
        .filter(|t| t.utilisation_percent.is_some_and(|u| u > 105.0))
        .collect();
    if let Some(first) = over.first() {
        notes.push(Note::Text(format!(
            "{} link(s) carried more than their capacity (e.g. {} {:?} at {:.0} %): the interval is probably \
             longer than assumed, or the capacity belongs to another link",
            over.len(),
            first.subject,
            first.direction,
            first.utilisation_percent.unwrap_or(f64::NAN)
        )));
    }
    let lanes = lanes_per_link(&series);
    let received: Received<'_> = m
        .throughput
        .iter()
        .filter(|t| t.direction == Direction::Rx)
        .map(|t| ((&*t.subject, t.from_snapshot, t.to_snapshot), t))
        .collect();
    let mut bers = Vec::new();
    let mut memo = BerMemo::default();
    for rate in &m.counter_rates {
        match bit_error_rate(rate, &capacities, &received, &lanes, options, &mut memo) {
            Ok(Some(b)) => bers.push(b),
            Ok(None) => {}
            Err(note) => notes.push(Note::Text(note)),
        }
    }
    m.bit_error_rates = bers;
    // Each snapshot's file, by id: an outlier names the file of its lines.
    let files: Vec<Option<&str>> = m.snapshots.iter().map(|s| s.file.as_deref()).collect();
    let (groups, quiet_groups, peer_values) =
        peer_groups(&series, &series_ids, &m.counter_rates, &files, options);
    m.peer_groups = groups;
    m.traffic_balance = balance(&m.throughput);
    m.trends = trends(&series, &times, options);
    UnitMeasurements {
        measurements: m,
        notes,
        quiet_groups,
        peer_values,
    }
}

/// A number in words: whole numbers without a fraction, others to six
/// places without trailing zeros.
fn fmt_num(x: f64) -> String {
    let mut out = String::new();
    push_num(&mut out, x);
    out
}

/// Appends [`fmt_num`] of `x` to `out`. A whole number (below 10¹⁵, so
/// exact in an `f64`) is written as an integer, digit by digit, without
/// the formatting machinery (an outlier's explanation writes two numbers,
/// a fleet's peer groups thousands of explanations).
fn push_num(out: &mut String, x: f64) {
    use std::fmt::Write;
    if x.fract() == 0.0 && x.abs() < 1e15 {
        // `{:.0}` writes the sign of -0 too.
        if x.is_sign_negative() {
            out.push('-');
        }
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // whole, in range
        let whole = x.abs() as u64;
        out.push_str(crate::parse::text::decimal_text(whole, &mut [0; 20]));
    } else {
        let start = out.len();
        let _ = write!(out, "{x:.6}");
        let kept = out
            .get(start..)
            .map_or(0, |written| written.trim_end_matches('0').len());
        out.truncate(start + kept);
    }
}

/// [`fmt_num`] as it was written before its whole numbers were written as
/// integers (the oracle).
#[cfg(test)]
fn fmt_num_formatted(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        format!("{x:.6}").trim_end_matches('0').to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn numbers() -> impl Strategy<Value = f64> {
        prop_oneof![
            any::<f64>(),
            any::<i64>().prop_map(|i| i as f64),
            (0u64..10_000).prop_map(|i| i as f64),
            (0u64..10_000).prop_map(|i| -(i as f64)),
            (0u64..1_000_000).prop_map(|i| i as f64 / 1_000.0),
            Just(0.0),
            Just(-0.0),
            Just(1e15),
            Just(-1e15),
            Just(1e15 - 1.0),
            Just(1e15 - 0.5),
            Just(999_999_999_999_999.9),
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(f64::NEG_INFINITY),
            Just(f64::MIN_POSITIVE),
            Just(0.000_000_4),
            Just(2.5e-7),
        ]
    }

    proptest! {
        /// Whole numbers written as integers read as `{:.0}` wrote them,
        /// and the rest as before: signs, -0, the 10¹⁵ bound, NaN and ∞,
        /// tiny and huge values; appended after text already there.
        #[test]
        fn numbers_are_written_as_formatted(x in numbers()) {
            let want = fmt_num_formatted(x);
            prop_assert_eq!(fmt_num(x), want.clone());
            let mut out = "a 10".to_owned();
            push_num(&mut out, x);
            prop_assert_eq!(out, format!("a 10{want}"));
        }
    }
}
