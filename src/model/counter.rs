//! Hardware counters and their bit widths.
//!
//! InfiniBand counters do not wrap: they stick at all-ones (IBA 1.3, PortCounters).
//! A value equal to the field maximum therefore means "at least this many",
//! and no rate can be computed from it. Recording the width with the value is
//! what lets the statistics and rules say so instead of reporting a wrong rate.

use serde::{Deserialize, Serialize};

/// A counter value as printed, with the width of the hardware field it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Counter {
    /// The value the tool printed.
    pub value: u64,
    /// Width of the counter in bits (4, 8, 16, 32 or 64 for IB; 0 when unknown).
    pub bits: u8,
    /// True when `value` is the largest value the field can hold: the real
    /// count is at least this and the counter needs a reset to be useful again.
    pub saturated: bool,
}

impl Counter {
    /// A counter of the given width; `saturated` is derived from the width.
    #[must_use]
    pub fn new(value: u64, bits: u8) -> Self {
        let saturated = max_for_bits(bits).is_some_and(|max| value >= max);
        Self {
            value,
            bits,
            saturated,
        }
    }

    /// A counter whose width the tool does not tell; never reported as saturated.
    #[must_use]
    pub fn unknown_width(value: u64) -> Self {
        Self::new(value, 0)
    }

    /// The largest value the field can hold, if its width is known.
    #[must_use]
    pub fn max(&self) -> Option<u64> {
        max_for_bits(self.bits)
    }
}

/// `2^bits - 1`, or `None` for an unknown (0) or impossible (> 64) width.
#[must_use]
pub fn max_for_bits(bits: u8) -> Option<u64> {
    match bits {
        1..=63 => Some((1u64 << bits) - 1),
        64 => Some(u64::MAX),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saturation_is_the_all_ones_value_of_each_width() {
        assert!(Counter::new(15, 4).saturated);
        assert!(!Counter::new(14, 4).saturated);
        assert!(Counter::new(255, 8).saturated);
        assert!(Counter::new(65_535, 16).saturated);
        assert!(Counter::new(4_294_967_295, 32).saturated);
        assert!(!Counter::new(4_294_967_295, 64).saturated);
        assert!(Counter::new(u64::MAX, 64).saturated);
        assert!(!Counter::unknown_width(u64::MAX).saturated);
    }
}
