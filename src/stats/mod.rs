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
//! - [`sample`]: the neutral form ([`CounterSample`]) all tools are reduced to;
//!   `extract` (private) is the only code that knows tool models.
//! - [`rates`]: deltas that are never negative, saturation, units.
//! - [`ber`]: bit error rate with an exact Poisson interval, judged against a threshold.
//! - [`robust`]: median, MAD, robust z-scores, percentile summaries.
//! - [`trend`]: least-squares growth over three or more snapshots.
//! - [`measure()`]: all of the above over one or many documents.
//!
//! # Example
//! ```
//! use fabricscope::stats::{measure, StatsOptions};
//! let paste = "$ nvidia-smi nvlink -gt d\nGPU 0: NVIDIA H200 (UUID: GPU-1)\n\t Link 0: Data Tx: 0 KiB\n\
//!              $ nvidia-smi nvlink -gt d\nGPU 0: NVIDIA H200 (UUID: GPU-1)\n\t Link 0: Data Tx: 2097152 KiB\n";
//! let doc = fabricscope::read(paste, &Default::default()).unwrap();
//! let m = measure(&doc, &StatsOptions { interval_seconds: Some(2.0), ..Default::default() });
//! assert_eq!(m.throughput[0].gib_per_second, 1.0);
//! ```

pub mod ber;
mod extract;
mod measure;
pub mod rates;
pub mod robust;
pub mod sample;
pub mod trend;

pub use extract::Capacity;
pub use measure::{
    measure, measure_many, measure_sources, BitErrorRate, CounterRate, CounterTrend, Measurements,
    OutlierMember, PeerGroup, PeerGroupKind, RateStatus, SaturatedCounter, SnapshotInfo, Source,
    Throughput, TrafficBalance,
};
pub use sample::{CounterSample, CounterUnit, Direction, Layer, Role, Subject};

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

/// Settings of the statistics. `Default` gives the values documented on each field.
#[derive(Debug, Clone, PartialEq)]
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
