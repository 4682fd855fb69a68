//! The statistics engine: snapshots, rates, saturation, bit error rates with
//! confidence, outliers among peers, trends and traffic balance.
//!
//! Counters printed once say how much happened since the last reset, which
//! could be a minute or a year. Two snapshots of the same counters, and the
//! time between them, say how fast things are happening now; that is what an
//! operator needs. This module turns parsed sections into such measurements,
//! each naming its subject (host, device, port, GPU, link, lane), the
//! snapshots and input lines it came from, and how it was computed.
//!
//! # Layout
//! - [`sample`]: the neutral vocabulary (subject, unit, role) all tools are reduced to;
//!   `extract` (private) is the only code that knows tool models.
//! - [`rates`]: deltas that are never negative, saturation, units.
//! - [`ber`]: bit error rate with an exact Poisson interval, judged against a threshold.
//! - [`robust`]: median, MAD, robust z-scores, percentile summaries.
//! - [`trend`]: least-squares growth over three or more snapshots.
//! - [`measure()`]: all of the above over one or many documents.
//!
//! # What [`Measurements`] holds (JSON field names)
//! - `snapshots`: each counter-bearing section, its host, lines and time (`time_seconds`,
//!   `time_is_unix`, `time_source`: a `date` line, an `nvidia-smi -q` Timestamp, a file time).
//! - `link_capacities`: link speeds read from ibstat, iblinkinfo and `nvidia-smi nvlink -s`
//!   (`gbit_per_second` per direction, line code removed, with their source).
//! - `counter_rates`: every counter seen in two successive snapshots: `before`, `after`,
//!   `increase`, `counts_per_second` (in `unit`), `interval_seconds` and where it came from,
//!   `status` (`measured`, `counter_reset`, `saturated`, `no_interval`), `derivation`.
//! - `throughput`: per link/port and direction: `bytes`, `bytes_per_second`, `gib_per_second`,
//!   `gbit_per_second`, `capacity_gbit_per_second`, `utilisation_percent`.
//! - `saturated_counters`: value at its field maximum (`value_at_least`, `bits`, `advice`).
//! - `bit_error_rates`: `errors`, `bits`, `bits_basis`, `ber_point`/`ber_lower`/`ber_upper`,
//!   `confidence`, `threshold`, `verdict` (`exceeds`, `within`, `inconclusive`), `bits_needed`.
//! - `peer_groups`: per group of peers and counter, a percentile `summary` and the `outliers`
//!   (robust z, × median, Poisson tail, a sentence naming the group and its size).
//! - `traffic_balance`: per GPU or device and direction: total, per-link percentiles,
//!   `spread_percent`, `idle_links`.
//! - `trends`: least-squares slope, `still_rising`, `seconds_to_saturation`.
//! - `notes`: what could not be computed and why (no interval, reset, no link speed).
//!
//! Every record names its [`Subject`] (host, device, port GUID, lid, port, GPU, link, lane) and the
//! snapshot ids or input lines it came from.
//!
//! # Example
//! ```
//! use fabricscope::stats::{measure, StatsOptions};
//! let paste = "$ nvidia-smi nvlink -gt d\nGPU 0: NVIDIA H200 (UUID: GPU-1)\n\t Link 0: Data Tx: 0 KiB\n\
//!              $ nvidia-smi nvlink -gt d\nGPU 0: NVIDIA H200 (UUID: GPU-1)\n\t Link 0: Data Tx: 2097152 KiB\n";
//! let doc = fabricscope::read(paste, &Default::default()).unwrap();
//! let m = measure(&doc, &StatsOptions::default().with_interval(2.0));
//! assert_eq!(m.throughput[0].gib_per_second, 1.0);
//! ```

pub mod ber;
mod extract;
mod measure;
pub mod rates;
pub mod robust;
pub mod sample;
mod source;
pub mod trend;

/// The report's writers' decimal numbers (see `measure::records`).
pub(crate) use measure::records::push_decimal;
pub use measure::{
    measure, measure_many, measure_sources, measure_unit, quiet_note, AcrossHosts, BitErrorRate,
    CounterRate, CounterTrend, Derivation, IntervalSource, LinkCapacity, Measurements, Note,
    OutlierMember, PeerGroup, PeerGroupKind, PeerStatistic, PeerValue, PeerValues, RateStatus,
    SaturatedCounter, SnapshotInfo, Source, Throughput, TrafficBalance, UnitMeasurements,
};
pub use sample::{CounterUnit, Direction, Layer, Role, Subject};
pub use source::CounterSource;

use thiserror::Error;

/// Why a statistic could not be computed. Small and `Copy`, like statrs' errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum StatsError {
    /// No finite value to work on.
    #[error("no finite values")]
    Empty,
    /// Fewer members than a robust z-score needs.
    #[error(
        "group too small for a robust z-score (fewer than {} members)",
        robust::MIN_GROUP_FOR_Z
    )]
    GroupTooSmall,
    /// A confidence level outside (0, 1).
    #[error("confidence must be strictly between 0 and 1")]
    InvalidConfidence,
    /// A percentile outside 0–100.
    #[error("percentile must be between 0 and 100")]
    InvalidPercentile,
    /// A BER needs a positive number of bits.
    #[error("no bits were carried, so no bit error rate")]
    NoBits,
    /// An interval that is not a positive finite number of seconds.
    #[error("the interval must be a positive number of seconds")]
    BadInterval,
    /// A trend needs three points.
    #[error("a trend needs at least 3 snapshots")]
    TooFewPoints,
    /// All points share one time.
    #[error("all snapshots have the same time")]
    NoTimeSpread,
    /// A value or intermediate result is infinite or NaN.
    #[error("value is not finite")]
    NotFinite,
}

/// Settings of the statistics. `Default` gives the values documented on each
/// field; the chainable `with_…` methods change one (the struct is
/// `#[non_exhaustive]`: settings will be added without breaking callers):
///
/// ```
/// use fabricscope::stats::StatsOptions;
/// let options = StatsOptions::default().with_interval(30.0).with_confidence(0.99);
/// assert_eq!(options.interval_seconds, Some(30.0));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct StatsOptions {
    /// Seconds between successive snapshots of the same counters, used when
    /// the input carries no times (`--interval 30s`). Default: none.
    pub interval_seconds: Option<f64>,
    /// Confidence level of BER intervals. Default 0.95.
    pub confidence: f64,
    /// Post-correction BER threshold (symbol errors, CRC errors). Default
    /// 1e-12, the IBTA/ibdiagnet and DCGM figure.
    pub ber_threshold: f64,
    /// Threshold for counters of *corrected* errors (NVLink ECC corrections,
    /// FEC-corrected blocks), whose raw BER is normally far above 1e-12.
    /// Default 1e-6, the order at which fabric tools start warning about
    /// pre-FEC BER (commonly cited, see research notes; adjust to your policy).
    pub corrected_ber_threshold: f64,
    /// |robust z| at or above which a peer is an outlier. Default 3.5
    /// (Iglewicz & Hoaglin).
    pub outlier_z: f64,
    /// For counts, the outlier must also be unlikely under a Poisson law with
    /// the group's median as mean (at least 1): tail probability below this.
    /// Default 0.001. Keeps "3 errors where siblings have 0" from being called out.
    pub outlier_poisson_p: f64,
}

impl Default for StatsOptions {
    fn default() -> Self {
        Self {
            interval_seconds: None,
            confidence: 0.95,
            ber_threshold: 1e-12,
            corrected_ber_threshold: 1e-6,
            outlier_z: 3.5,
            outlier_poisson_p: 1e-3,
        }
    }
}

impl StatsOptions {
    /// Seconds between successive snapshots when the input carries no
    /// times; takes a number or an `Option` (`None`: unknown).
    #[must_use]
    pub fn with_interval(mut self, seconds: impl Into<Option<f64>>) -> Self {
        self.interval_seconds = seconds.into();
        self
    }

    /// Confidence level of BER intervals (0.95 by default).
    #[must_use]
    pub fn with_confidence(mut self, confidence: f64) -> Self {
        self.confidence = confidence;
        self
    }

    /// Post-correction BER threshold (1e-12 by default).
    #[must_use]
    pub fn with_ber_threshold(mut self, threshold: f64) -> Self {
        self.ber_threshold = threshold;
        self
    }

    /// Threshold for counters of corrected errors (1e-6 by default).
    #[must_use]
    pub fn with_corrected_ber_threshold(mut self, threshold: f64) -> Self {
        self.corrected_ber_threshold = threshold;
        self
    }

    /// |robust z| at or above which a peer is an outlier (3.5 by default).
    #[must_use]
    pub fn with_outlier_z(mut self, z: f64) -> Self {
        self.outlier_z = z;
        self
    }

    /// Poisson tail probability below which a count outlier is called out
    /// (0.001 by default).
    #[must_use]
    pub fn with_outlier_poisson_p(mut self, p: f64) -> Self {
        self.outlier_poisson_p = p;
        self
    }
}

#[cfg(test)]
mod tests;

/// Reads an interval as people type it: `30s`, `2.5 s`, `500ms`, `5m`, `1h`,
/// `2d`, or a bare number of seconds (`30`). For the CLI's `--interval` and
/// the web page's field.
///
/// # Errors
/// [`StatsError::BadInterval`] for anything else, and for zero, negative or
/// non-finite durations.
///
/// ```
/// use fabricscope::stats::parse_interval;
/// assert_eq!(parse_interval("2s"), Ok(2.0));
/// assert_eq!(parse_interval("500ms"), Ok(0.5));
/// assert_eq!(parse_interval("5m"), Ok(300.0));
/// assert!(parse_interval("0s").is_err() && parse_interval("soon").is_err());
/// ```
pub fn parse_interval(text: &str) -> Result<f64, StatsError> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number.parse().map_err(|_| StatsError::BadInterval)?;
    let scale = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "s" | "sec" | "secs" | "second" | "seconds" => 1.0,
        "ms" => 1e-3,
        "m" | "min" | "mins" | "minute" | "minutes" => 60.0,
        "h" | "hour" | "hours" => 3600.0,
        "d" | "day" | "days" => 86_400.0,
        _ => return Err(StatsError::BadInterval),
    };
    let seconds = value * scale;
    if seconds.is_finite() && seconds > 0.0 {
        Ok(seconds)
    } else {
        Err(StatsError::BadInterval)
    }
}
