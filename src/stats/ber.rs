//! Bit error rate with an exact (Garwood) Poisson confidence interval.
//!
//! A count of errors means little without the number of bits it was counted
//! over: three symbol errors in ten seconds at 100 Gb/s is a BER near 3e-12,
//! three in three months is below 1e-17. And a count of zero does not prove a
//! good link: zero errors over 1e9 bits only bounds the BER below about 3.7e-9.
//! So every estimate carries the interval the count supports, and the verdict
//! against a threshold is `Exceeds` or `Within` only when the whole interval
//! lies on one side.

use super::StatsError;
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, Gamma};

/// Two-sided exact confidence interval for the mean of a Poisson count `k`.
///
/// Lower bound `Γ⁻¹(α/2; k)` (0 when `k = 0`), upper bound `Γ⁻¹(1 − α/2; k + 1)`
/// with `α = 1 − confidence` (Garwood 1936), computed with statrs' gamma
/// quantile. For `k = 0` at 95 % this gives (0, 3.689).
///
/// # Errors
/// [`StatsError::InvalidConfidence`] unless `0 < confidence < 1` (NaN included).
///
/// ```
/// let (lo, hi) = fabricscope::stats::ber::poisson_interval(3, 0.95).unwrap();
/// assert!((lo - 0.6187).abs() < 1e-3 && (hi - 8.7673).abs() < 1e-3);
/// ```
pub fn poisson_interval(k: u64, confidence: f64) -> Result<(f64, f64), StatsError> {
    if !(confidence > 0.0 && confidence < 1.0) {
        return Err(StatsError::InvalidConfidence);
    }
    let alpha = 1.0 - confidence;
    #[allow(clippy::cast_precision_loss)] // counts above 2^53 lose only relative precision
    let k = k as f64;
    let lower = if k == 0.0 {
        0.0
    } else {
        gamma_quantile(k, alpha / 2.0)?
    };
    let upper = gamma_quantile(k + 1.0, 1.0 - alpha / 2.0)?;
    Ok((lower, upper))
}

fn gamma_quantile(shape: f64, p: f64) -> Result<f64, StatsError> {
    let gamma = Gamma::new(shape, 1.0).map_err(|_| StatsError::NotFinite)?;
    let q = gamma.inverse_cdf(p);
    if q.is_finite() {
        Ok(q)
    } else {
        Err(StatsError::NotFinite)
    }
}

/// A bit error rate and its confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BerEstimate {
    /// Errors counted.
    pub errors: u64,
    /// Bits the errors were counted over.
    pub bits: f64,
    /// `errors / bits`.
    pub point: f64,
    /// Lower end of the interval.
    pub lower: f64,
    /// Upper end of the interval.
    pub upper: f64,
    /// Confidence level of the interval (0.95 = 95 %).
    pub confidence: f64,
}

/// Estimates the BER of `errors` counted over `bits`.
///
/// # Errors
/// [`StatsError::NoBits`] when `bits` is zero, negative or NaN,
/// [`StatsError::NotFinite`] when it is infinite, and the errors of
/// [`poisson_interval`].
///
/// ```
/// use fabricscope::stats::ber::estimate;
/// let ten_seconds = estimate(3, 100e9 * 10.0, 0.95).unwrap();
/// let three_months = estimate(3, 100e9 * 90.0 * 86_400.0, 0.95).unwrap();
/// assert!(ten_seconds.upper > 1e-12 && three_months.upper < 1e-16);
/// ```
pub fn estimate(errors: u64, bits: f64, confidence: f64) -> Result<BerEstimate, StatsError> {
    estimate_with(errors, bits, confidence, poisson_interval)
}

/// [`estimate`] with the interval of a count found by `interval` (the
/// measuring keeps the intervals of the counts it has seen: see
/// `measure::rates::BerMemo`).
pub(crate) fn estimate_with(
    errors: u64,
    bits: f64,
    confidence: f64,
    interval: impl FnOnce(u64, f64) -> Result<(f64, f64), StatsError>,
) -> Result<BerEstimate, StatsError> {
    if bits.is_nan() || bits <= 0.0 {
        return Err(StatsError::NoBits);
    }
    if !bits.is_finite() {
        return Err(StatsError::NotFinite);
    }
    let (lo, hi) = interval(errors, confidence)?;
    #[allow(clippy::cast_precision_loss)]
    let point = errors as f64 / bits;
    Ok(BerEstimate {
        errors,
        bits,
        point,
        lower: lo / bits,
        upper: hi / bits,
        confidence,
    })
}

/// Where an estimate stands against a threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
pub enum Verdict {
    /// Even the lower bound is above the threshold: the link is worse than allowed.
    Exceeds,
    /// Even the upper bound is below the threshold: the link meets it.
    Within,
    /// The interval straddles the threshold: more bits (a longer interval) are needed.
    Inconclusive,
}

impl BerEstimate {
    /// Compares the interval with `threshold` (e.g. `1e-12`).
    #[must_use]
    pub fn judge(&self, threshold: f64) -> Verdict {
        if self.lower > threshold {
            Verdict::Exceeds
        } else if self.upper < threshold {
            Verdict::Within
        } else {
            Verdict::Inconclusive
        }
    }

    /// Bits that must pass error-free for the upper bound to fall below
    /// `threshold` (how long to wait before a clean link is proven clean).
    #[must_use]
    pub fn bits_needed_for(&self, threshold: f64) -> Option<f64> {
        self.bits_needed_with(threshold, poisson_interval)
    }

    /// [`bits_needed_for`](Self::bits_needed_for) with the Poisson
    /// interval found by `interval` (a memo of [`poisson_interval`], as
    /// [`estimate_with`] takes).
    pub(crate) fn bits_needed_with(
        &self,
        threshold: f64,
        interval: impl FnOnce(u64, f64) -> Result<(f64, f64), StatsError>,
    ) -> Option<f64> {
        let (_, hi) = interval(self.errors, self.confidence).ok()?;
        (threshold > 0.0).then(|| hi / threshold)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn matches_published_garwood_table() {
        // Garwood (1936) / standard tables, 95 %: k=0 → (0, 3.689), k=1 → (0.0253, 5.572),
        // k=10 → (4.795, 18.39).
        let close = |a: f64, b: f64| (a - b).abs() < 2e-3 * b.max(1.0);
        let (lo, hi) = poisson_interval(0, 0.95).unwrap();
        assert!(lo == 0.0 && close(hi, 3.689), "{hi}");
        let (lo, hi) = poisson_interval(1, 0.95).unwrap();
        assert!(close(lo, 0.0253) && close(hi, 5.572), "{lo} {hi}");
        let (lo, hi) = poisson_interval(10, 0.95).unwrap();
        assert!(close(lo, 4.795) && close(hi, 18.39), "{lo} {hi}");
    }

    #[test]
    fn rejects_bad_arguments_by_name() {
        assert_eq!(poisson_interval(1, 1.0), Err(StatsError::InvalidConfidence));
        assert_eq!(
            poisson_interval(1, f64::NAN),
            Err(StatsError::InvalidConfidence)
        );
        assert_eq!(estimate(1, 0.0, 0.95), Err(StatsError::NoBits));
        assert_eq!(estimate(1, f64::NAN, 0.95), Err(StatsError::NoBits));
        assert_eq!(estimate(1, f64::INFINITY, 0.95), Err(StatsError::NotFinite));
    }

    #[test]
    fn same_count_judged_by_the_bits_behind_it() {
        let short = estimate(3, 100e9 * 10.0, 0.95).unwrap();
        let long = estimate(3, 100e9 * 90.0 * 86_400.0, 0.95).unwrap();
        assert_eq!(short.judge(1e-12), Verdict::Inconclusive);
        assert_eq!(long.judge(1e-12), Verdict::Within);
        let bad = estimate(300, 100e9 * 10.0, 0.95).unwrap();
        assert_eq!(bad.judge(1e-12), Verdict::Exceeds);
        // Zero errors need ~3.7e12 bits to prove 1e-12 at 95 %.
        let needed = short.bits_needed_for(1e-12).unwrap();
        assert!(needed > 8e12 && needed < 9e12, "{needed}");
    }

    proptest! {
        #[test]
        fn interval_contains_point_and_shrinks_with_bits(k in 0u64..5_000, bits in 1e6f64..1e15, c in 0.5f64..0.999) {
            let e = estimate(k, bits, c).unwrap();
            prop_assert!(e.lower <= e.point && e.point <= e.upper);
            let more = estimate(k * 4, bits * 4.0, c).unwrap();
            prop_assert!(more.upper - more.lower < e.upper - e.lower);
        }

        #[test]
        fn higher_confidence_widens(k in 0u64..1_000) {
            let (l1, h1) = poisson_interval(k, 0.9).unwrap();
            let (l2, h2) = poisson_interval(k, 0.99).unwrap();
            prop_assert!(l2 <= l1 && h2 >= h1);
        }
    }
}
