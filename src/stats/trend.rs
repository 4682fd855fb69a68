//! Trends over three or more snapshots: is a counter still climbing, and when
//! will it reach a threshold (or its saturation value)?
//!
//! Two snapshots give one rate; a third tells a burst that stopped from a link
//! that keeps getting worse. The fit is ordinary least squares of value against
//! time, which for counters is the average rate over the whole series.

use super::StatsError;
use serde::Serialize;

/// A straight line through `(seconds, value)` points.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Fit {
    /// Number of points used.
    pub points: usize,
    /// Growth per second.
    pub slope_per_second: f64,
    /// Value at time 0 of the time axis given.
    pub intercept: f64,
    /// Fraction of variance explained (1 = perfectly steady growth); `None`
    /// when the values do not vary.
    pub r_squared: Option<f64>,
    /// Whether the last step still went up.
    pub still_rising: bool,
    /// Time of the last point.
    pub last_time: f64,
    /// Value of the last point.
    pub last_value: f64,
}

/// Least-squares fit of `(time_seconds, value)` points.
///
/// Points need not be sorted; they are ordered by time. Non-finite points are
/// skipped.
///
/// # Errors
/// [`StatsError::TooFewPoints`] with fewer than 3 finite points,
/// [`StatsError::NoTimeSpread`] when all points share one time.
///
/// ```
/// let f = fabricscope::stats::trend::fit(&[(0.0, 10.0), (10.0, 30.0), (20.0, 50.0)]).unwrap();
/// assert_eq!(f.slope_per_second, 2.0);
/// assert_eq!(f.seconds_to_reach(250.0), Some(100.0));
/// ```
pub fn fit(points: &[(f64, f64)]) -> Result<Fit, StatsError> {
    let mut p: Vec<(f64, f64)> = points
        .iter()
        .copied()
        .filter(|(t, v)| t.is_finite() && v.is_finite())
        .collect();
    if p.len() < 3 {
        return Err(StatsError::TooFewPoints);
    }
    p.sort_by(|a, b| a.0.total_cmp(&b.0));
    #[allow(clippy::cast_precision_loss)]
    let n = p.len() as f64;
    let mean_t = p.iter().map(|x| x.0).sum::<f64>() / n;
    let mean_v = p.iter().map(|x| x.1).sum::<f64>() / n;
    let stt: f64 = p.iter().map(|x| (x.0 - mean_t).powi(2)).sum();
    let svv: f64 = p.iter().map(|x| (x.1 - mean_v).powi(2)).sum();
    let stv: f64 = p.iter().map(|x| (x.0 - mean_t) * (x.1 - mean_v)).sum();
    if stt <= 0.0 {
        return Err(StatsError::NoTimeSpread);
    }
    let slope = stv / stt;
    let (last_time, last_value) = p.last().copied().unwrap_or((f64::NAN, f64::NAN));
    let before = p
        .len()
        .checked_sub(2)
        .and_then(|i| p.get(i))
        .map_or(last_value, |x| x.1);
    Ok(Fit {
        points: p.len(),
        slope_per_second: slope,
        intercept: mean_v - slope * mean_t,
        r_squared: (svv > 0.0).then(|| (stv * stv) / (stt * svv)),
        still_rising: last_value > before,
        last_time,
        last_value,
    })
}

impl Fit {
    /// Seconds after the last point until the line reaches `threshold`:
    /// `Some(0.0)` if already there, `None` if the line does not rise toward it.
    #[must_use]
    pub fn seconds_to_reach(&self, threshold: f64) -> Option<f64> {
        if self.last_value >= threshold {
            return Some(0.0);
        }
        (self.slope_per_second > 0.0).then(|| (threshold - self.last_value) / self.slope_per_second)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steady_growth() {
        let f = fit(&[(20.0, 50.0), (0.0, 10.0), (10.0, 30.0)]).unwrap();
        assert!((f.slope_per_second - 2.0).abs() < 1e-12);
        assert_eq!(f.r_squared, Some(1.0));
        assert!(f.still_rising);
        assert_eq!(f.seconds_to_reach(10.0), Some(0.0));
    }

    #[test]
    fn a_burst_that_stopped() {
        let f = fit(&[(0.0, 0.0), (10.0, 100.0), (20.0, 100.0), (30.0, 100.0)]).unwrap();
        assert!(!f.still_rising);
        assert!(f.slope_per_second > 0.0);
        let flat = fit(&[(0.0, 5.0), (1.0, 5.0), (2.0, 5.0)]).unwrap();
        assert_eq!(flat.r_squared, None);
        assert_eq!(flat.seconds_to_reach(6.0), None);
    }

    #[test]
    fn edge_cases_are_named() {
        assert_eq!(
            fit(&[(0.0, 1.0), (1.0, 2.0)]),
            Err(StatsError::TooFewPoints)
        );
        assert_eq!(
            fit(&[(0.0, 1.0), (0.0, 2.0), (0.0, 3.0)]),
            Err(StatsError::NoTimeSpread)
        );
        assert_eq!(
            fit(&[(0.0, 1.0), (1.0, f64::NAN), (2.0, 2.0)]),
            Err(StatsError::TooFewPoints)
        );
    }
}
