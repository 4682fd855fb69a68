//! Wall-clock times printed by `date` (and, in the same layout, by other tools).
//!
//! Times matter because counters only become rates once the interval between
//! two snapshots is known. A zone name other than UTC/GMT (or a numeric
//! offset) cannot be turned into an absolute time without a zone database,
//! so the wall-clock reading is kept separately: two readings on the same host
//! in the same zone still give a correct interval.

use crate::span::LineSpan;
use serde::{Deserialize, Serialize};

/// One time stamp as printed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DateStamp {
    /// The text as printed, trimmed.
    pub text: String,
    /// Seconds since 1970-01-01 00:00:00 of the wall-clock reading, as if it
    /// were UTC (fractions kept). Differences between two readings in the
    /// same zone are true intervals.
    pub wall_clock_seconds: f64,
    /// Offset from UTC in seconds when the text says it (`+0000`, `UTC`,
    /// `-05:00`); `None` for zone names we cannot resolve (`CET`) and for
    /// stamps that carry no zone at all.
    pub utc_offset_seconds: Option<i32>,
    /// The zone as printed (`UTC`, `+0000`, `CET`), when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
    /// Where it was read.
    pub span: LineSpan,
}

impl DateStamp {
    /// Seconds since the Unix epoch, when the offset from UTC is known.
    #[must_use]
    pub fn timestamp_unix(&self) -> Option<f64> {
        self.utc_offset_seconds
            .map(|offset| self.wall_clock_seconds - f64::from(offset))
    }
}

/// The output of one `date` command.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Date {
    /// The stamp read (the first readable line).
    pub stamp: Option<DateStamp>,
}
