//! Robust statistics for comparing a link, port or GPU with its peers.
//!
//! Error counters are heavy-tailed: one bad link can hold more errors than
//! all its siblings together, which drags a mean and inflates a standard
//! deviation until the bad link no longer looks unusual. The median and the
//! median absolute deviation (MAD) ignore such a value, so the robust
//! z-score `0.6745 · (x − median) / MAD` (Iglewicz & Hoaglin) still sees it.
//!
//! NaN handling: every function here ignores NaN inputs (they are not
//! samples); a slice with no finite values is [`StatsError::Empty`].

use super::StatsError;
use serde::{Deserialize, Serialize};

/// `Φ⁻¹(0.75)`: makes the MAD estimate σ for normal data.
const MAD_TO_SIGMA: f64 = 0.674_489_750_196_081_7;
/// `√(π/2)`: makes the mean absolute deviation estimate σ for normal data;
/// used when more than half the values are equal and the MAD is zero.
const MEAN_AD_TO_SIGMA: f64 = 1.253_314_137_315_500_3;

/// The finite values, sorted.
fn sorted(values: &[f64]) -> Result<Vec<f64>, StatsError> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return Err(StatsError::Empty);
    }
    v.sort_by(f64::total_cmp);
    Ok(v)
}

/// Linear-interpolation percentile (`p` in 0..=100) of already sorted values.
fn percentile_sorted(v: &[f64], p: f64) -> f64 {
    let last = v.len().saturating_sub(1);
    #[allow(clippy::cast_precision_loss)]
    let rank = (p / 100.0).clamp(0.0, 1.0) * last as f64;
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let below = rank.floor() as usize;
    let above = (below + 1).min(last);
    let lo = v.get(below).copied().unwrap_or(f64::NAN);
    let hi = v.get(above).copied().unwrap_or(lo);
    #[allow(clippy::cast_precision_loss)]
    let frac = rank - below as f64;
    lo + (hi - lo) * frac
}

/// The median of the finite values.
///
/// # Errors
/// [`StatsError::Empty`] when there is none.
///
/// ```
/// use fabricscope::stats::robust::median;
/// assert_eq!(median(&[3.0, 1.0, f64::NAN, 2.0, 10.0]).unwrap(), 2.5);
/// ```
pub fn median(values: &[f64]) -> Result<f64, StatsError> {
    Ok(percentile_sorted(&sorted(values)?, 50.0))
}

/// The `p`-th percentile (0–100, linear interpolation between ranks).
///
/// # Errors
/// [`StatsError::Empty`] when there is no finite value,
/// [`StatsError::InvalidPercentile`] when `p` is outside 0–100 or NaN.
pub fn percentile(values: &[f64], p: f64) -> Result<f64, StatsError> {
    if !(0.0..=100.0).contains(&p) {
        return Err(StatsError::InvalidPercentile);
    }
    Ok(percentile_sorted(&sorted(values)?, p))
}

/// Median absolute deviation from the median (unscaled).
///
/// # Errors
/// [`StatsError::Empty`] when there is no finite value.
pub fn mad(values: &[f64]) -> Result<f64, StatsError> {
    let m = median(values)?;
    let deviations: Vec<f64> = values
        .iter()
        .filter(|x| x.is_finite())
        .map(|x| (x - m).abs())
        .collect();
    median(&deviations)
}

/// Robust z-score of `x` against the group `values`.
///
/// `0.6745 · (x − median) / MAD`; when the MAD is zero (more than half the
/// group is identical, common for error counters that are mostly 0) the
/// mean absolute deviation scaled by `√(π/2)` takes its place. If that is
/// zero too, every member is equal: the score is 0 for `x` equal to the
/// median and ±∞ otherwise.
///
/// # Errors
/// [`StatsError::Empty`] for a group without finite values,
/// [`StatsError::NotFinite`] when `x` is NaN or infinite.
pub fn robust_z(x: f64, values: &[f64]) -> Result<f64, StatsError> {
    if !x.is_finite() {
        return Err(StatsError::NotFinite);
    }
    let scale = Scale::of(values)?;
    Ok(scale.z(x))
}

/// Median and spread of a group, computed once so that scoring every member is linear.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Scale {
    median: f64,
    /// Estimated σ (0 when every value is equal).
    sigma: f64,
    method: ScaleMethod,
}

/// Which spread estimate a z-score used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
pub enum ScaleMethod {
    /// `MAD / 0.6745`.
    Mad,
    /// `1.2533 · mean |x − median|` (MAD was zero).
    MeanAbsoluteDeviation,
    /// All values are equal: no spread.
    None,
}

impl Scale {
    fn of(values: &[f64]) -> Result<Self, StatsError> {
        let v = sorted(values)?;
        let median = percentile_sorted(&v, 50.0);
        let mut dev: Vec<f64> = v.iter().map(|x| (x - median).abs()).collect();
        dev.sort_by(f64::total_cmp);
        Ok(Self::of_sorted(median, &dev))
    }

    /// The scale of values whose median is `median` and whose deviations
    /// from it, sorted, are `dev`.
    fn of_sorted(median: f64, dev: &[f64]) -> Self {
        let mad = percentile_sorted(dev, 50.0);
        if mad > 0.0 {
            return Self {
                median,
                sigma: mad / MAD_TO_SIGMA,
                method: ScaleMethod::Mad,
            };
        }
        #[allow(clippy::cast_precision_loss)]
        let mean_ad = dev.iter().sum::<f64>() / dev.len() as f64;
        if mean_ad > 0.0 {
            Self {
                median,
                sigma: mean_ad * MEAN_AD_TO_SIGMA,
                method: ScaleMethod::MeanAbsoluteDeviation,
            }
        } else {
            Self {
                median,
                sigma: 0.0,
                method: ScaleMethod::None,
            }
        }
    }

    fn z(&self, x: f64) -> f64 {
        let d = x - self.median;
        if self.sigma > 0.0 {
            d / self.sigma
        } else if d == 0.0 {
            0.0
        } else {
            d.signum() * f64::INFINITY
        }
    }
}

/// Percentile summary of a group.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
// The TypeScript name; JSON never carries a struct's name.
#[cfg_attr(feature = "wasm", serde(rename = "Percentiles"))]
pub struct Summary {
    /// Number of finite values.
    pub count: usize,
    /// Smallest value.
    pub min: f64,
    /// 5th percentile.
    pub p5: f64,
    /// 25th percentile.
    pub p25: f64,
    /// Median.
    pub median: f64,
    /// 75th percentile.
    pub p75: f64,
    /// 95th percentile.
    pub p95: f64,
    /// Largest value.
    pub max: f64,
    /// Median absolute deviation (unscaled).
    pub mad: f64,
    /// `(max − min) / median`, as a percentage; `None` when the median is 0.
    pub spread_percent_of_median: Option<f64>,
}

/// Percentiles, MAD and spread of the finite values.
///
/// # Errors
/// [`StatsError::Empty`] when there is none.
pub fn summary(values: &[f64]) -> Result<Summary, StatsError> {
    let v = sorted(values)?;
    let median = percentile_sorted(&v, 50.0);
    let mut dev: Vec<f64> = v.iter().map(|x| (x - median).abs()).collect();
    dev.sort_by(f64::total_cmp);
    Ok(summary_of_sorted(&v, median, &dev))
}

/// The [`Summary`] of sorted finite `v`, given its median and its sorted
/// absolute deviations from it (both callers have them already).
fn summary_of_sorted(v: &[f64], median: f64, dev: &[f64]) -> Summary {
    let min = v.first().copied().unwrap_or(f64::NAN);
    let max = v.last().copied().unwrap_or(f64::NAN);
    Summary {
        count: v.len(),
        min,
        p5: percentile_sorted(v, 5.0),
        p25: percentile_sorted(v, 25.0),
        median,
        p75: percentile_sorted(v, 75.0),
        p95: percentile_sorted(v, 95.0),
        max,
        mad: percentile_sorted(dev, 50.0),
        spread_percent_of_median: (median != 0.0).then(|| (max - min) / median.abs() * 100.0),
    }
}

/// The summary and the outliers of one group, as [`summary`] and
/// [`outliers`] give them, from one sort of the values.
///
/// A peer group is summarised and then scored: each of the two sorted the
/// values and their deviations again (four sorts of the same numbers). Here
/// the values are sorted once, and their deviations from the median come
/// out sorted by merging the two runs either side of the median (on each
/// side `|x − median|` is monotone), so the figures are the same bit for
/// bit. The outer error is [`summary`]'s; the inner one is [`outliers`]'.
pub(crate) fn summary_and_outliers(
    values: &[f64],
    cutoff: f64,
) -> Result<(Summary, OutliersResult), StatsError> {
    // Room for every value at once: collected through the filter, the
    // vector grew (and was copied) a few times per peer group.
    let mut v: Vec<f64> = Vec::with_capacity(values.len());
    v.extend(values.iter().copied().filter(|x| x.is_finite()));
    if v.is_empty() {
        return Err(StatsError::Empty);
    }
    // Equal under `total_cmp` means the same bits: unstable is exact.
    v.sort_unstable_by(f64::total_cmp);
    let median = percentile_sorted(&v, 50.0);
    let dev = sorted_deviations(&v, median);
    let summary = summary_of_sorted(&v, median, &dev);
    if v.len() < MIN_GROUP_FOR_Z {
        return Ok((summary, Err(StatsError::GroupTooSmall)));
    }
    let scale = Scale::of_sorted(median, &dev);
    Ok((summary, Ok((flag(values, &scale, cutoff), scale.method))))
}

/// What [`outliers`] returns.
pub(crate) type OutliersResult = Result<(Vec<Flagged>, ScaleMethod), StatsError>;

/// `|x − median|` of the sorted `v`, sorted (as `sort_by(f64::total_cmp)`
/// orders them): the values below the median give their deviations in
/// falling order, the others in rising order, and the two runs are merged.
fn sorted_deviations(v: &[f64], median: f64) -> Vec<f64> {
    let split = v.partition_point(|x| x - median < 0.0);
    let (below, above) = v.split_at(split);
    let mut out = Vec::with_capacity(v.len());
    let mut low = below.iter().rev().map(|x| (x - median).abs()).peekable();
    let mut high = above.iter().map(|x| (x - median).abs()).peekable();
    loop {
        match (low.peek(), high.peek()) {
            (Some(a), Some(b)) => {
                if a.total_cmp(b).is_le() {
                    out.extend(low.next());
                } else {
                    out.extend(high.next());
                }
            }
            (Some(_), None) => {
                out.extend(low);
                break;
            }
            (None, _) => {
                out.extend(high);
                break;
            }
        }
    }
    out
}

/// The members of `values` whose |z| under `scale` is at least `cutoff`.
fn flag(values: &[f64], scale: &Scale, cutoff: f64) -> Vec<Flagged> {
    values
        .iter()
        .enumerate()
        .filter(|(_, x)| x.is_finite())
        .filter_map(|(index, &value)| {
            let z = scale.z(value);
            (z.abs() >= cutoff).then(|| Flagged {
                index,
                value,
                robust_z: z,
                times_median: (scale.median != 0.0).then(|| value / scale.median),
            })
        })
        .collect()
}

/// Groups smaller than this get a summary but no z-scores: with fewer
/// members the median and MAD are too unstable to call anything an outlier.
pub const MIN_GROUP_FOR_Z: usize = 5;

/// A member of a group whose robust z-score passes the cut-off.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Flagged {
    /// Position of the member in the input slice.
    pub index: usize,
    /// Its value.
    pub value: f64,
    /// Its robust z-score (±∞ when every other member is equal).
    pub robust_z: f64,
    /// `value / median` when the median is not 0.
    pub times_median: Option<f64>,
}

/// Members whose |robust z| ≥ `cutoff` (3.5 is the usual choice), with the
/// spread estimate used. The result depends on the values only, not on their
/// order, and is unchanged when all values are multiplied by a positive number.
///
/// # Errors
/// [`StatsError::GroupTooSmall`] with fewer than [`MIN_GROUP_FOR_Z`] finite
/// values, [`StatsError::Empty`] with none.
pub fn outliers(values: &[f64], cutoff: f64) -> Result<(Vec<Flagged>, ScaleMethod), StatsError> {
    let finite = values.iter().filter(|x| x.is_finite()).count();
    if finite == 0 {
        return Err(StatsError::Empty);
    }
    if finite < MIN_GROUP_FOR_Z {
        return Err(StatsError::GroupTooSmall);
    }
    let scale = Scale::of(values)?;
    Ok((flag(values, &scale, cutoff), scale.method))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn textbook_values() {
        let v = [1.0, 1.0, 2.0, 2.0, 4.0, 6.0, 9.0];
        assert_eq!(median(&v).unwrap(), 2.0);
        assert_eq!(mad(&v).unwrap(), 1.0);
        assert_eq!(percentile(&[1.0, 2.0, 3.0, 4.0], 25.0).unwrap(), 1.75);
        assert_eq!(median(&[]), Err(StatsError::Empty));
        assert_eq!(median(&[f64::NAN]), Err(StatsError::Empty));
        assert_eq!(percentile(&v, 101.0), Err(StatsError::InvalidPercentile));
        assert!((robust_z(9.0, &v).unwrap() - 0.6745 * 7.0).abs() < 1e-3);
    }

    #[test]
    fn one_hot_link_among_143_quiet_siblings() {
        let mut v: Vec<f64> = (0..143).map(|i| f64::from(10 + i % 5)).collect();
        v.push(480.0);
        let (flagged, method) = outliers(&v, 3.5).unwrap();
        assert_eq!(method, ScaleMethod::Mad);
        assert_eq!(flagged.len(), 1);
        assert_eq!(flagged[0].index, 143);
        assert!((flagged[0].times_median.unwrap() - 40.0).abs() < 1e-9);
    }

    #[test]
    fn mostly_zero_counters_fall_back_to_mean_deviation() {
        let v = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 50.0];
        let (flagged, method) = outliers(&v, 3.5).unwrap();
        assert_eq!(method, ScaleMethod::MeanAbsoluteDeviation);
        assert_eq!(flagged.iter().map(|f| f.index).collect::<Vec<_>>(), vec![7]);
        let (none, method) = outliers(&[7.0; 6], 3.5).unwrap();
        assert!(none.is_empty() && method == ScaleMethod::None);
    }

    #[test]
    fn small_groups_get_no_z_scores() {
        assert_eq!(outliers(&[1.0, 100.0], 3.5), Err(StatsError::GroupTooSmall));
        assert_eq!(summary(&[1.0, 100.0]).unwrap().count, 2);
    }

    proptest! {
        #[test]
        fn outliers_do_not_depend_on_order_or_scale(
            mut v in proptest::collection::vec(0.0f64..1e6, 5..60),
            k in 1e-3f64..1e3,
            seed in any::<u64>(),
        ) {
            let (base, _) = outliers(&v, 3.5).unwrap();
            let mut base_vals: Vec<f64> = base.iter().map(|f| f.value).collect();
            base_vals.sort_by(f64::total_cmp);
            let scaled: Vec<f64> = v.iter().map(|x| x * k).collect();
            let (s, _) = outliers(&scaled, 3.5).unwrap();
            prop_assert_eq!(s.iter().map(|f| f.index).collect::<Vec<_>>(), base.iter().map(|f| f.index).collect::<Vec<_>>());
            // A rotation is a reordering: the same values are flagged.
            let shift = usize::try_from(seed % v.len() as u64).unwrap();
            v.rotate_left(shift);
            let (r, _) = outliers(&v, 3.5).unwrap();
            let mut rv: Vec<f64> = r.iter().map(|f| f.value).collect();
            rv.sort_by(f64::total_cmp);
            prop_assert_eq!(rv, base_vals);
        }

        /// One sort gives what `summary` and `outliers` give, bit for bit:
        /// on values with ties, zeros, signs, NaN and infinities.
        #[test]
        fn summary_and_outliers_match_the_two_calls(
            v in proptest::collection::vec(
                prop_oneof![
                    3 => Just(0.0f64),
                    1 => Just(-0.0f64),
                    2 => 0.0f64..50.0,
                    2 => (0u32..20).prop_map(f64::from),
                    1 => -1e9f64..1e9,
                    1 => Just(f64::NAN),
                    1 => Just(f64::INFINITY),
                    1 => any::<f64>(),
                ],
                0..40,
            ),
            cutoff in prop_oneof![Just(3.5f64), 0.0f64..10.0],
        ) {
            let bits = |s: &Summary| {
                (s.count, [s.min, s.p5, s.p25, s.median, s.p75, s.p95, s.max, s.mad].map(f64::to_bits),
                 s.spread_percent_of_median.map(f64::to_bits))
            };
            let flagged = |r: &OutliersResult| r.as_ref().map(|(f, m)| {
                (f.iter().map(|f| (f.index, f.value.to_bits(), f.robust_z.to_bits(),
                    f.times_median.map(f64::to_bits))).collect::<Vec<_>>(), *m)
            }).map_err(Clone::clone);
            match (summary_and_outliers(&v, cutoff), summary(&v)) {
                (Ok((s, o)), Ok(want)) => {
                    prop_assert_eq!(bits(&s), bits(&want));
                    prop_assert_eq!(flagged(&o), flagged(&outliers(&v, cutoff)));
                }
                (Err(e), Err(want)) => prop_assert_eq!(e, want),
                (got, want) => prop_assert!(false, "{:?} vs {:?}", got.is_ok(), want.is_ok()),
            }
        }

        #[test]
        fn summary_is_ordered(v in proptest::collection::vec(-1e9f64..1e9, 1..50)) {
            let s = summary(&v).unwrap();
            prop_assert!(s.min <= s.p5 && s.p5 <= s.p25 && s.p25 <= s.median);
            prop_assert!(s.median <= s.p75 && s.p75 <= s.p95 && s.p95 <= s.max);
        }
    }
}
