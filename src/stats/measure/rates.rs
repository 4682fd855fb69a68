//! Per counter between two snapshots: the rate, saturation, the data
//! carried against the link's capacity, and bit error rates.

use super::super::ber::{self, Verdict};
use super::super::extract::{Capacities, Capacity, LinkKeyRef, Reading};
use super::super::rates::{self, Change};
use super::super::sample::{CounterUnit, Role, Subject};
use super::super::{CounterSource, StatsError, StatsOptions};
use super::fmt_num;
use super::records::{
    BitErrorRate, CounterRate, Derivation, RateStatus, SaturatedCounter, Throughput,
};
use super::timeline::{Interval, Point, Series};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

pub(super) fn saturated(
    subject: &Subject,
    source: &CounterSource,
    sample: &Reading<'_>,
    snapshot: usize,
) -> SaturatedCounter {
    let extended =
        matches!(source, CounterSource::Perfquery(a) if a.header_name().contains("extended"));
    let advice = if extended || sample.counter.bits == 64 {
        "the 64-bit counter is saturated: reset it (`perfquery -R`) before measuring"
    } else if matches!(
        source,
        CounterSource::Perfquery(_) | CounterSource::Ibqueryerrors
    ) {
        "the real count is at least this and its rate is unknown: read the 64-bit counters with \
         `perfquery -x`, or reset (`perfquery -R`, `ibqueryerrors -k`) and measure again"
    } else if *source == CounterSource::NvidiaSmiNvlink {
        "the counter can no longer show growth: reset the error counters (`nvidia-smi nvlink -re`; \
         `-r` is deprecated) and measure again"
    } else {
        "the counter can no longer show growth: reset it and measure again"
    };
    SaturatedCounter {
        subject: subject.clone(),
        source: source.clone(),
        counter: sample.name.to_owned(),
        value_at_least: sample.counter.value,
        bits: sample.counter.bits,
        snapshot,
        lines: sample.span,
        advice: advice.to_owned(),
    }
}

/// The rate of `counter` of `subject` (read from `source`) between the
/// readings `a` and `b`: the subject and the name are the unit's shared
/// ones (see `SharedKeys`), so a rate copies neither.
pub(super) fn counter_rate(
    (subject, source, counter): (&Arc<Subject>, &CounterSource, &Arc<str>),
    a: &Point,
    b: &Point,
    between: &Interval,
) -> CounterRate {
    let (ca, cb) = (a.counter, b.counter);
    let seconds = between.seconds;
    let change = rates::change(ca, cb);
    let (status, increase, counts_per_second, derivation) = match change {
        Change::Reset { before, after } => (
            RateStatus::CounterReset,
            None,
            None,
            Derivation::from(format!(
                "{after} < {before}: the counter was reset (or is another port's); no rate"
            )),
        ),
        Change::Saturated { at_least } => (
            RateStatus::Saturated,
            Some(at_least),
            None,
            Derivation::from(format!(
                "{} is the maximum of a {}-bit field: grew by at least {at_least}, rate unknown",
                cb.value, cb.bits
            )),
        ),
        // The words of these two are written when the rate is (see
        // `Derivation`): most rates of a fleet never are.
        Change::Increase { by } => match seconds.map(|s| (s, rates::per_second(by, s))) {
            Some((s, Ok(r))) => (
                RateStatus::Measured,
                Some(by),
                Some(r),
                Derivation::measured(cb.value, ca.value, s),
            ),
            _ => (
                RateStatus::NoInterval,
                Some(by),
                None,
                Derivation::no_interval(by),
            ),
        },
    };
    CounterRate {
        subject: Arc::clone(subject),
        source: source.clone(),
        counter: Arc::clone(counter),
        unit: b.unit,
        from_snapshot: a.snapshot,
        to_snapshot: b.snapshot,
        lines: [a.span, b.span],
        before: ca.value,
        after: cb.value,
        interval_seconds: seconds,
        interval_source: between.source.clone(),
        status,
        increase,
        counts_per_second,
        derivation,
        role: b.role,
        max: cb.max(),
    }
}

/// `(after − before)`, the `between` parts, then ` / seconds s`: a
/// throughput's derivation. Every throughput of a fleet has one: written
/// straight into a buffer of the right size, without the formatting
/// machinery (the `format!` was two thirds of a rate's cost).
fn derivation_words(after: u64, before: u64, between: &[&str], seconds: &str) -> String {
    // Two numbers of at most 20 digits, the words, the seconds' text.
    let between_len: usize = between.iter().map(|part| part.len()).sum();
    let mut words = String::with_capacity(2 * 20 + 9 + between_len + seconds.len());
    words.push('(');
    push_decimal(&mut words, after);
    words.push_str(" − ");
    push_decimal(&mut words, before);
    words.push(')');
    for part in between {
        words.push_str(part);
    }
    words.push_str(" / ");
    words.push_str(seconds);
    words.push_str(" s");
    words
}

/// Appends `value` in decimal, as `Display` writes it.
fn push_decimal(out: &mut String, value: u64) {
    out.push_str(crate::parse::text::decimal_text(value, &mut [0; 20]));
}

pub(super) fn capacity_of<'c>(
    subject: &Subject,
    capacities: &'c Capacities<'_>,
) -> Option<&'c Capacity> {
    let host = subject.host.as_deref();
    if let (Some(gpu), Some(link)) = (subject.gpu, subject.link) {
        return capacities.get(LinkKeyRef::Nvlink { host, gpu, link });
    }
    let port = subject.port?;
    subject
        .lid
        .and_then(|lid| capacities.get(LinkKeyRef::Lid { lid, port }))
        .or_else(|| {
            subject
                .device
                .as_deref()
                .and_then(|ca| capacities.get(LinkKeyRef::CaPort { host, ca, port }))
        })
}

/// `fmt_num` of the seconds formatted last, with their bits: a unit's
/// throughputs share a handful of intervals, each formatted once.
pub(super) type SecondsText = Option<(u64, String)>;

#[allow(clippy::cast_precision_loss)] // byte counts far below 2^100; f64 keeps 15 digits
pub(super) fn throughput(
    rate: &CounterRate,
    capacities: &Capacities<'_>,
    seconds_text: &mut SecondsText,
) -> Option<Throughput> {
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
    if !matches!(seconds_text, Some((bits, _)) if *bits == seconds.to_bits()) {
        *seconds_text = Some((seconds.to_bits(), fmt_num(seconds)));
    }
    let seconds_words = seconds_text.as_ref().map_or("", |(_, text)| text.as_str());
    let unit_words = match rate.unit {
        CounterUnit::FourOctets => "× 4 octets (the counter counts 4-octet words)",
        CounterUnit::Kib => "× 1024 bytes (KiB)",
        _ => "",
    };
    Some(Throughput {
        subject: Arc::clone(&rate.subject),
        direction,
        layer,
        counter: Arc::clone(&rate.counter),
        from_snapshot: rate.from_snapshot,
        to_snapshot: rate.to_snapshot,
        interval_seconds: seconds,
        bytes,
        bytes_per_second,
        gib_per_second: bytes_per_second / f64::from(1u32 << 30),
        gbit_per_second,
        capacity_gbit_per_second: capacity.map(|c| c.gbit_per_second),
        capacity_source: capacity.and_then(|c| capacities.words_of(c)).cloned(),
        utilisation_percent: capacity
            .filter(|c| c.gbit_per_second > 0.0)
            .map(|c| gbit_per_second / c.gbit_per_second * 100.0),
        derivation: throughput_words(rate.after, rate.before, unit_words, seconds_words),
    })
}

/// A throughput's derivation, `(after − before) unit words / seconds s`,
/// as `format!` writes it (see [`derivation_words`]).
fn throughput_words(after: u64, before: u64, unit_words: &str, seconds: &str) -> String {
    derivation_words(after, before, &[" ", unit_words], seconds)
}

/// Lanes seen per link, to split a link's capacity among its lanes.
pub(super) fn lanes_per_link(series: &Series<'_>) -> BTreeMap<Subject, u32> {
    let mut lanes: BTreeMap<Subject, BTreeSet<u32>> = BTreeMap::new();
    for ((subject, _, _), _) in series {
        if let Some(lane) = subject.lane {
            let link = Subject {
                lane: None,
                ..(*subject).clone()
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
pub(super) type Received<'t> = BTreeMap<(&'t Subject, usize, usize), &'t Throughput>;

/// Whether a counter counts corrected errors: its name holds `correct` or
/// begins with `ecc`, in any case. Compared letter by letter ignoring
/// case, not on a lowered copy of the name (one per bit error rate).
pub(super) fn is_corrected_count(name: &str) -> bool {
    let name = name.as_bytes();
    name.windows(7).any(|w| w.eq_ignore_ascii_case(b"correct"))
        || name
            .get(..3)
            .is_some_and(|p| p.eq_ignore_ascii_case(b"ecc"))
}

/// [`is_corrected_count`] as it was, on a lowered copy (the oracle).
#[cfg(test)]
fn is_corrected_count_lowered(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.contains("correct") || lower.starts_with("ecc")
}

/// What [`bit_error_rate`] works out again and again, kept per unit: a
/// host's bit-error counters mostly read the same few counts (most often
/// 0) over the same bits (one link speed, one interval), and each interval
/// is two gamma quantiles found by iteration, each text a float formatted.
/// The same inputs give the same outputs, so a kept one is the one that
/// would be worked out.
#[derive(Default)]
pub(super) struct BerMemo {
    /// Poisson interval by (count, confidence's bits).
    intervals: Vec<((u64, u64), PoissonInterval)>,
    /// Derivation words by (count, bits' bits, confidence's bits).
    derivations: Vec<((u64, u64, u64), String)>,
    /// Basis words by (capacity's source, share's bits, seconds' bits).
    bases: Vec<((String, u64, u64), String)>,
}

/// A Poisson interval, or why there is none.
type PoissonInterval = Result<(f64, f64), StatsError>;

/// The most entries a [`BerMemo`] list keeps (each is found by a scan).
const MEMO_ENTRIES: usize = 16;

impl BerMemo {
    fn interval(&mut self, k: u64, confidence: f64) -> PoissonInterval {
        let key = (k, confidence.to_bits());
        if let Some((_, found)) = self.intervals.iter().find(|(at, _)| *at == key) {
            return *found;
        }
        let found = ber::poisson_interval(k, confidence);
        if self.intervals.len() < MEMO_ENTRIES {
            self.intervals.push((key, found));
        }
        found
    }

    fn derivation(&mut self, errors: u64, bits: f64, confidence: f64) -> String {
        let key = (errors, bits.to_bits(), confidence.to_bits());
        if let Some((_, words)) = self.derivations.iter().find(|(at, _)| *at == key) {
            return words.clone();
        }
        let words = format!(
            "{errors} error(s) / {bits:.4e} bits; exact Poisson {:.0} % interval (Garwood)",
            confidence * 100.0
        );
        if self.derivations.len() < MEMO_ENTRIES {
            self.derivations.push((key, words.clone()));
        }
        words
    }

    fn basis(&mut self, source: &str, share: f64, seconds: f64) -> String {
        let found = self.bases.iter().find(|((s, sh, se), _)| {
            *sh == share.to_bits() && *se == seconds.to_bits() && s == source
        });
        if let Some((_, words)) = found {
            return words.clone();
        }
        let words = if share > 1.0 {
            format!("{source} / {share} lanes × {} s", fmt_num(seconds))
        } else {
            format!("{source} × {} s", fmt_num(seconds))
        };
        if self.bases.len() < MEMO_ENTRIES {
            self.bases.push((
                (source.to_owned(), share.to_bits(), seconds.to_bits()),
                words.clone(),
            ));
        }
        words
    }
}

pub(super) fn bit_error_rate(
    rate: &CounterRate,
    capacities: &Capacities<'_>,
    received: &Received<'_>,
    lanes: &BTreeMap<Subject, u32>,
    options: &StatsOptions,
    memo: &mut BerMemo,
) -> Result<Option<BitErrorRate>, String> {
    if rate.role != Role::BitErrors || rate.status != RateStatus::Measured {
        return Ok(None);
    }
    let (Some(seconds), Some(errors)) = (rate.interval_seconds, rate.increase) else {
        return Ok(None);
    };
    // The link of a lane; a link's or port's own subject otherwise (the
    // usual case: not copied).
    let lane_link;
    let link: &Subject = if rate.subject.lane.is_some() {
        lane_link = Subject {
            lane: None,
            ..Subject::clone(&rate.subject)
        };
        &lane_link
    } else {
        &rate.subject
    };
    let (bits, basis) = if let Some(cap) = capacity_of(link, capacities) {
        let share = match rate.subject.lane {
            Some(_) => f64::from(*lanes.get(link).unwrap_or(&1)),
            None => 1.0,
        };
        let words = capacities.words_of(cap).map_or("", |w| &**w);
        let basis = memo.basis(words, share, seconds);
        (cap.gbit_per_second * 1e9 / share * seconds, basis)
    } else if let Some(t) = received.get(&(link, rate.from_snapshot, rate.to_snapshot)) {
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
    let Ok(est) = ber::estimate_with(errors, bits, options.confidence, |k, c| memo.interval(k, c))
    else {
        return Ok(None);
    };
    let verdict = est.judge(threshold);
    let bits_needed = (verdict == Verdict::Inconclusive)
        .then(|| est.bits_needed_with(threshold, |k, c| memo.interval(k, c)))
        .flatten();
    Ok(Some(BitErrorRate {
        subject: Arc::clone(&rate.subject),
        counter: Arc::clone(&rate.counter),
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
        bits_needed,
        derivation: memo.derivation(errors, bits, options.confidence),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn measured_words_are_the_formatted_words() {
        assert_eq!(Derivation::measured(0, 0, 60.0).to_text(), "(0 − 0) / 60 s");
        assert_eq!(
            Derivation::measured(u64::MAX, 10, 2.5).to_string(),
            "(18446744073709551615 − 10) / 2.5 s"
        );
        assert_eq!(
            Derivation::no_interval(7).to_string(),
            "grew by 7; no interval known"
        );
    }

    proptest! {
        /// The hand-written throughput derivation is the `format!` one.
        #[test]
        fn throughput_words_match_format(
            after in any::<u64>(),
            before in prop_oneof![any::<u64>(), 0u64..1000],
            unit in 0usize..3,
            seconds in "[0-9.]{0,8}",
        ) {
            let unit_words = ["× 4 octets (the counter counts 4-octet words)", "× 1024 bytes (KiB)", ""][unit];
            prop_assert_eq!(
                throughput_words(after, before, unit_words, &seconds),
                format!("({after} − {before}) {unit_words} / {seconds} s")
            );
        }

        /// What a [`BerMemo`] hands back, kept or not, is what it would
        /// work out afresh: intervals, derivations and bases, over counts,
        /// bits and shares that repeat (more than it keeps, too).
        #[test]
        fn ber_memo_gives_what_it_would_work_out(
            asks in proptest::collection::vec(
                (0u64..4, 0usize..3, 0usize..3, 0usize..2, 0usize..20),
                1..60,
            ),
        ) {
            let bits = [1e9, 2.5e12, 8e11];
            let confidences = [0.95, 0.99];
            let shares = [1.0, 2.0, 4.0];
            let mut memo = BerMemo::default();
            for (k, b, share, c, extra) in asks {
                // `extra` spreads counts past the memo's room.
                let k = k + 10 * extra as u64;
                let confidence = confidences[c];
                prop_assert_eq!(memo.interval(k, confidence), ber::poisson_interval(k, confidence));
                prop_assert_eq!(
                    memo.derivation(k, bits[b], confidence),
                    format!(
                        "{k} error(s) / {:.4e} bits; exact Poisson {:.0} % interval (Garwood)",
                        bits[b],
                        confidence * 100.0
                    )
                );
                let seconds = bits[b] / 1e9;
                let share = shares[share];
                let want = if share > 1.0 {
                    format!("ibstat mlx5_0 port 1 / {share} lanes × {} s", fmt_num(seconds))
                } else {
                    format!("ibstat mlx5_0 port 1 × {} s", fmt_num(seconds))
                };
                prop_assert_eq!(memo.basis("ibstat mlx5_0 port 1", share, seconds), want);
                let est = ber::estimate_with(k, bits[b], confidence, |k, c| memo.interval(k, c));
                prop_assert_eq!(est, ber::estimate(k, bits[b], confidence));
            }
        }

        /// A corrected-error counter is told letter by letter as the
        /// lowered copy told it: any case, the words anywhere or cut short,
        /// other letters (non-ASCII too) around them.
        #[test]
        fn corrected_counts_are_told_as_on_a_lowered_copy(
            name in "[a-zA-Z_ éÉ]{0,4}(correct|CoRReCT|correc|ecc|ECC|Ec|ecC_x)?[a-zA-Z_ é]{0,6}",
        ) {
            prop_assert_eq!(is_corrected_count(&name), is_corrected_count_lowered(&name));
        }

        /// Numbers are written as `Display` writes them.
        #[test]
        fn decimals_are_written_as_display(v in any::<u64>(), small in 0u64..100_000) {
            for n in [v, small, 0, 9, 10, 99, 100, 101, u64::MAX] {
                let mut out = b"x".to_vec();
                super::super::records::push_decimal(&mut out, n);
                prop_assert_eq!(String::from_utf8(out).unwrap(), format!("x{n}"));
            }
        }

        /// Whole seconds are written as `fmt_num` writes them.
        #[test]
        fn seconds_words_are_fmt_num(
            seconds in prop_oneof![
                (0u64..2_000_000).prop_map(|s| s as f64),
                any::<f64>(),
                Just(1e15 - 1.0),
                Just(1e15),
                Just(-0.0),
                Just(0.5),
            ],
        ) {
            prop_assert_eq!(Derivation::seconds_words(seconds), fmt_num(seconds));
        }

        /// A rate's derivation, written when the rate is, has the words
        /// `counter_rate` formatted when it made the rate: the same text
        /// displayed, serialised, and written into a buffer (as a rate set
        /// writes it), and equal to the same text read back.
        #[test]
        fn derivations_are_the_words_formatted_before(
            after in any::<u64>(),
            before in prop_oneof![any::<u64>(), 0u64..1000],
            seconds in prop_oneof![
                (1u32..100_000).prop_map(f64::from),
                1e-3f64..1e7,
                Just(1e15),
                Just(2.5e15),
            ],
            measured in any::<bool>(),
        ) {
            let (derivation, want) = if measured {
                (
                    Derivation::measured(after, before, seconds),
                    format!("({after} − {before}) / {} s", fmt_num(seconds)),
                )
            } else {
                (
                    Derivation::no_interval(after),
                    format!("grew by {after}; no interval known"),
                )
            };
            prop_assert_eq!(derivation.to_text(), want.clone());
            prop_assert_eq!(derivation.to_string(), want.clone());
            let mut written = Vec::new();
            derivation.write_with(&derivation.seconds().map(fmt_num).unwrap_or_default(), &mut written);
            prop_assert_eq!(String::from_utf8(written).unwrap(), want.clone());
            prop_assert_eq!(serde_json::to_string(&derivation).unwrap(), serde_json::to_string(&want).unwrap());
            let read: Derivation = serde_json::from_str(&serde_json::to_string(&want).unwrap()).unwrap();
            prop_assert_eq!(&read, &derivation);
            prop_assert_eq!(read.to_string(), want);
        }
    }
}
