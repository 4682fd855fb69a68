//! Deltas and rates between two readings of one counter.
//!
//! InfiniBand counters do not wrap: they stop at all-ones. So a reading lower
//! than the one before means the counter was reset (or the reading is from a
//! different port), never a negative rate; and a reading at all-ones is a lower
//! bound whose rate is unknown.

use super::StatsError;
use crate::model::Counter;
use serde::Serialize;

/// How a counter changed between two readings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "change")]
pub enum Change {
    /// It grew (or stayed) by this much; a rate can be taken.
    Increase {
        /// `after − before`.
        by: u64,
    },
    /// It went down: reset, or not the same counter. No rate.
    Reset {
        /// Earlier reading.
        before: u64,
        /// Later reading.
        after: u64,
    },
    /// The later reading is saturated: it grew by at least `at_least`, the
    /// real growth is unknown.
    Saturated {
        /// `after − before` (0 if it was already saturated).
        at_least: u64,
    },
}

/// The change from `before` to `after`.
///
/// ```
/// use fabricscope::{model::Counter, stats::rates::{change, Change}};
/// assert_eq!(change(Counter::new(10, 16), Counter::new(15, 16)), Change::Increase { by: 5 });
/// assert_eq!(change(Counter::new(10, 16), Counter::new(3, 16)), Change::Reset { before: 10, after: 3 });
/// assert_eq!(change(Counter::new(10, 16), Counter::new(65_535, 16)), Change::Saturated { at_least: 65_525 });
/// ```
#[must_use]
pub fn change(before: Counter, after: Counter) -> Change {
    if after.value < before.value {
        return Change::Reset {
            before: before.value,
            after: after.value,
        };
    }
    let by = after.value - before.value;
    if after.saturated {
        Change::Saturated { at_least: by }
    } else {
        Change::Increase { by }
    }
}

/// `count / seconds`, never negative.
///
/// # Errors
/// [`StatsError::BadInterval`] when `seconds` is not a positive finite number.
pub fn per_second(count: u64, seconds: f64) -> Result<f64, StatsError> {
    if !(seconds.is_finite() && seconds > 0.0) {
        return Err(StatsError::BadInterval);
    }
    #[allow(clippy::cast_precision_loss)]
    Ok(count as f64 / seconds)
}

/// A count in bytes, for data units: checked, in `u128` so that even a
/// 64-bit counter of KiB fits.
#[must_use]
pub fn bytes(count: u64, bytes_per_count: u64) -> u128 {
    u128::from(count) * u128::from(bytes_per_count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_saturated_counter_that_stays_saturated_gives_no_growth() {
        let full = Counter::new(4_294_967_295, 32);
        assert_eq!(change(full, full), Change::Saturated { at_least: 0 });
        assert_eq!(per_second(10, 0.0), Err(StatsError::BadInterval));
        assert_eq!(per_second(10, f64::NAN), Err(StatsError::BadInterval));
        assert_eq!(bytes(u64::MAX, 1024), u128::from(u64::MAX) * 1024);
    }

    proptest! {
        #[test]
        fn rates_are_never_negative(a in any::<u64>(), b in any::<u64>(), bits in prop_oneof![Just(0u8), Just(16u8), Just(32u8), Just(64u8)], s in 1e-6f64..1e9) {
            let (ca, cb) = (Counter::new(a, bits), Counter::new(b, bits));
            match change(ca, cb) {
                Change::Increase { by } => {
                    prop_assert!(b >= a && by == b - a);
                    prop_assert!(per_second(by, s).unwrap() >= 0.0);
                }
                Change::Reset { .. } => prop_assert!(b < a),
                Change::Saturated { at_least } => prop_assert!(cb.saturated && at_least == b - a),
            }
        }
    }
}
