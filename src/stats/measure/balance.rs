//! How evenly traffic spreads over a GPU's links or a device's ports, and
//! counters that keep growing over three or more snapshots.

use super::super::robust;
use super::super::sample::{Direction, Layer, Role, Subject};
use super::super::trend;
use super::super::StatsOptions;
use super::fmt_num;
use super::peers::words_on;
use super::records::{CounterTrend, Throughput, TrafficBalance};
use super::timeline::{Clocked, Series};
use std::collections::BTreeMap;

pub(super) fn balance(throughput: &[Throughput]) -> Vec<TrafficBalance> {
    let mut groups: BTreeMap<(String, Direction, Layer, usize, usize), Vec<&Throughput>> =
        BTreeMap::new();
    for t in throughput.iter().filter(|t| !t.subject.is_aggregate()) {
        let Some(words) = balance_words(&t.subject) else {
            continue;
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
                .map(|t| Subject::clone(&t.subject))
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

/// The words of the group whose balance `subject`'s traffic counts in (a
/// GPU's links, a LID's or a device's ports), if any: written piece by
/// piece (every throughput of a unit asks, and two `format!`s each were
/// most of the balance's cost).
fn balance_words(subject: &Subject) -> Option<String> {
    let host = subject.host.as_deref();
    Some(match (subject.gpu, subject.lid, &subject.device) {
        (Some(gpu), _, _) => words_on(&["links of GPU "], Some(gpu), host),
        (None, Some(lid), _) => words_on(&["ports of lid "], Some(lid), host),
        (None, None, Some(d)) => words_on(&["ports of ", d], None, host),
        _ => return None,
    })
}

/// [`balance_words`] as it was written with `format!` (the oracle).
#[cfg(test)]
fn balance_words_formatted(subject: &Subject) -> Option<String> {
    let on = super::peers::host_words(subject.host.as_ref());
    Some(match (subject.gpu, subject.lid, &subject.device) {
        (Some(gpu), _, _) => format!("links of GPU {gpu}{on}"),
        (None, Some(lid), _) => format!("ports of lid {lid}{on}"),
        (None, None, Some(d)) => format!("ports of {d}{on}"),
        _ => return None,
    })
}

pub(super) fn trends(
    series: &Series<'_>,
    times: &[Option<Clocked>],
    options: &StatsOptions,
) -> Vec<CounterTrend> {
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
        // One clock; file modification times only where rates take them
        // as an interval too (far enough apart, and no interval given).
        let same_clock = clocks.as_ref().is_some_and(|c| {
            c.windows(2).all(|w| match w {
                [a, b] if a.file_time || b.file_time => {
                    super::timeline::gap(a, b, options).is_some()
                }
                [a, b] => a.clock == b.clock,
                _ => false,
            })
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
            subject: (*subject).clone(),
            counter: (*name).to_owned(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// A balance group's words written piece by piece are the
        /// `format!`ed ones: GPUs, LIDs and devices there or not, names
        /// with non-ASCII, braces, `%` and line breaks, numbers up to
        /// `u32::MAX`.
        #[test]
        fn balance_words_read_as_formatted(
            (host, device) in (
                proptest::option::of("[a-z0-9_ é{}%\\n]{0,8}"),
                proptest::option::of("[a-z0-9_ é{}%\\n]{0,8}"),
            ),
            (lid, port, gpu, link) in (
                proptest::option::of(prop_oneof![any::<u32>(), 0u32..300]),
                proptest::option::of(prop_oneof![Just(255u32), 0u32..300]),
                proptest::option::of(prop_oneof![any::<u32>(), 0u32..10]),
                proptest::option::of(0u32..18),
            ),
        ) {
            let subject = Subject { host, device, guid: None, lid, port, gpu, link, lane: None };
            prop_assert_eq!(balance_words(&subject), balance_words_formatted(&subject));
        }
    }
}
