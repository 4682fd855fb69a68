//! What could not be measured, and why, kept typed until the snapshot ids
//! they name are final.
//!
//! A fleet is measured one host (unit) at a time, each numbering its
//! snapshots from 0; the fleet step shifts them to the run's numbering.
//! Notes that name snapshots therefore keep the ids as numbers and are
//! written as sentences only when the ids are known.

use super::fmt_num;
use serde::{Deserialize, Serialize};

/// One note of [`Measurements::notes`](super::Measurements::notes), before
/// it is written as a sentence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "note")]
pub enum Note {
    /// Two snapshots without times, and no `--interval`.
    NoInterval {
        /// Earlier snapshot id.
        from: usize,
        /// Later snapshot id.
        to: usize,
    },
    /// Two snapshots' times are their files' modification times, too close
    /// together to be the time between them (the files were written by one
    /// copy or unpacking), and no `--interval`.
    FileTimesTooClose {
        /// Earlier snapshot id.
        from: usize,
        /// Later snapshot id.
        to: usize,
        /// Seconds between the modification times.
        seconds: f64,
    },
    /// The input's times disagree with the given interval.
    IntervalDisagrees {
        /// Earlier snapshot id.
        from: usize,
        /// Later snapshot id.
        to: usize,
        /// Seconds between the snapshots' own times.
        seconds: f64,
        /// The interval given.
        given: f64,
    },
    /// A counter went down between two snapshots.
    CounterReset {
        /// The subject and counter in words.
        what: String,
        /// Earlier reading.
        before: u64,
        /// Later reading.
        after: u64,
        /// Earlier snapshot id.
        from: usize,
        /// Later snapshot id.
        to: usize,
    },
    /// A sentence that names no snapshot.
    Text(String),
}

impl Note {
    /// The note with its snapshot ids moved up by `by` (the snapshots of the
    /// units measured before it).
    #[must_use]
    pub fn shifted(self, by: usize) -> Self {
        match self {
            Self::NoInterval { from, to } => Self::NoInterval {
                from: from + by,
                to: to + by,
            },
            Self::FileTimesTooClose { from, to, seconds } => Self::FileTimesTooClose {
                from: from + by,
                to: to + by,
                seconds,
            },
            Self::IntervalDisagrees {
                from,
                to,
                seconds,
                given,
            } => Self::IntervalDisagrees {
                from: from + by,
                to: to + by,
                seconds,
                given,
            },
            Self::CounterReset {
                what,
                before,
                after,
                from,
                to,
            } => Self::CounterReset {
                what,
                before,
                after,
                from: from + by,
                to: to + by,
            },
            text @ Self::Text(_) => text,
        }
    }
}

impl std::fmt::Display for Note {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NoInterval { from, to } => write!(
                f,
                "snapshots {from} and {to}: no time in the input and no interval given, so no rates (give --interval)"
            ),
            Self::FileTimesTooClose { from, to, seconds } => write!(
                f,
                "snapshots {from} and {to}: their files' modification times are {} s apart, when the files were written (a copy or an unpacked archive), not when the snapshots were taken; no rates (give --interval)",
                fmt_num(*seconds)
            ),
            Self::IntervalDisagrees {
                from,
                to,
                seconds,
                given,
            } => write!(
                f,
                "snapshots {from} and {to}: the input's times are {} s apart but the given interval is {} s; the input's times were used",
                fmt_num(*seconds),
                fmt_num(*given)
            ),
            Self::CounterReset {
                what,
                before,
                after,
                from,
                to,
            } => write!(
                f,
                "{what}: went from {before} to {after} between snapshots {from} and {to}: counter reset (or another port), no rate"
            ),
            Self::Text(text) => f.write_str(text),
        }
    }
}
