//! Measurements as the report writes them (report schema 3): counter rates
//! in **rate sets**.
//!
//! A rate is one counter between two snapshots; a port read twice gives
//! 20–40 of them, which share their subject, counter set, snapshots, lines
//! and interval (the interval's source alone names two files: ~190 bytes).
//! Written one by one, rates were half of a fleet's JSON report, most of
//! it repeated (1,000 generated hosts: 285 MB of JSON, 181 MB in sets). The report writes each run of consecutive rates that share
//! those fields once, with the rates' own fields under `counters`:
//!
//! ```json
//! {"subject": {…}, "source": "perfquery Port extended", "from_snapshot": 2,
//!  "to_snapshot": 3, "lines": [{…}, {…}], "interval_seconds": 60.0,
//!  "interval_source": "input times: … → …",
//!  "counters": [{"counter": "SymbolErrorCounter", "unit": "events",
//!                "before": 0, "after": 0, "status": "measured",
//!                "increase": 0, "counts_per_second": 0.0,
//!                "derivation": "(0 − 0) / 60 s"}, …]}
//! ```
//!
//! Nothing is lost: each counter with its set's fields is exactly the rate
//! [`Measurements::counter_rates`] holds, in the same order (reading a
//! report back flattens the sets; a report of schema 2, one rate per
//! entry, reads back too). Everything else is written as
//! [`Measurements`] serialises it.

use crate::stats::{CounterRate, CounterUnit, Measurements, RateStatus};
use serde::ser::{SerializeSeq, SerializeStruct};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Whether two rates belong to one set: same subject, counter set,
/// snapshots, lines and interval.
fn same_set(a: &CounterRate, b: &CounterRate) -> bool {
    a.subject == b.subject
        && a.source == b.source
        && a.from_snapshot == b.from_snapshot
        && a.to_snapshot == b.to_snapshot
        && a.lines == b.lines
        && a.interval_seconds.map(f64::to_bits) == b.interval_seconds.map(f64::to_bits)
        && a.interval_source == b.interval_source
}

/// The rate sets of `rates`: runs of consecutive rates sharing a set's
/// fields, in order.
pub fn rate_sets(rates: &[CounterRate]) -> impl Iterator<Item = RateSet<'_>> {
    rates.chunk_by(same_set).map(RateSet)
}

/// Consecutive rates sharing subject, counter set, snapshots, lines and
/// interval (never empty), written once with their counters.
#[derive(Debug, Clone, Copy)]
pub struct RateSet<'a>(&'a [CounterRate]);

impl Serialize for RateSet<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let Some(first) = self.0.first() else {
            return serializer.serialize_none();
        };
        let fields = if first.interval_seconds.is_some() {
            8
        } else {
            7
        };
        let mut s = serializer.serialize_struct("RateSet", fields)?;
        s.serialize_field("subject", &first.subject)?;
        s.serialize_field("source", &first.source)?;
        s.serialize_field("from_snapshot", &first.from_snapshot)?;
        s.serialize_field("to_snapshot", &first.to_snapshot)?;
        s.serialize_field("lines", &first.lines)?;
        if let Some(seconds) = first.interval_seconds {
            s.serialize_field("interval_seconds", &seconds)?;
        }
        s.serialize_field("interval_source", &first.interval_source)?;
        s.serialize_field("counters", &Counters(self.0))?;
        s.end()
    }
}

/// The counters of a set: each rate's own fields.
struct Counters<'a>(&'a [CounterRate]);

/// One rate without its set's fields.
#[derive(Serialize)]
struct Counter<'a> {
    counter: &'a str,
    unit: CounterUnit,
    before: u64,
    after: u64,
    status: RateStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    increase: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    counts_per_second: Option<f64>,
    derivation: &'a str,
}

impl Serialize for Counters<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        for r in self.0 {
            seq.serialize_element(&Counter {
                counter: &r.counter,
                unit: r.unit,
                before: r.before,
                after: r.after,
                status: r.status,
                increase: r.increase,
                counts_per_second: r.counts_per_second,
                derivation: &r.derivation,
            })?;
        }
        seq.end()
    }
}

/// `counter_rates` as rate sets.
struct RateSets<'a>(&'a [CounterRate]);

impl Serialize for RateSets<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(rate_sets(self.0))
    }
}

/// Measurements as the report writes them: [`Measurements`]' fields in its
/// order, `counter_rates` as rate sets.
#[derive(Debug, Clone, Copy)]
pub struct ReportMeasurements<'a>(pub &'a Measurements);

impl Serialize for ReportMeasurements<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let m = self.0;
        let mut s = serializer.serialize_struct("Measurements", 10)?;
        s.serialize_field("snapshots", &m.snapshots)?;
        s.serialize_field("link_capacities", &m.link_capacities)?;
        s.serialize_field("counter_rates", &RateSets(&m.counter_rates))?;
        s.serialize_field("throughput", &m.throughput)?;
        s.serialize_field("saturated_counters", &m.saturated_counters)?;
        s.serialize_field("bit_error_rates", &m.bit_error_rates)?;
        s.serialize_field("peer_groups", &m.peer_groups)?;
        s.serialize_field("traffic_balance", &m.traffic_balance)?;
        s.serialize_field("trends", &m.trends)?;
        s.serialize_field("notes", &m.notes)?;
        s.end()
    }
}

/// For `#[serde(serialize_with)]` on the report's `measurements`.
pub(super) fn serialize<S: Serializer>(m: &Measurements, serializer: S) -> Result<S::Ok, S::Error> {
    ReportMeasurements(m).serialize(serializer)
}

/// The report's measurements as JSON holds them: rates still in sets.
#[derive(Deserialize)]
struct Wire {
    snapshots: Vec<crate::stats::SnapshotInfo>,
    link_capacities: Vec<crate::stats::LinkCapacity>,
    counter_rates: Vec<serde_json::Map<String, serde_json::Value>>,
    throughput: Vec<crate::stats::Throughput>,
    saturated_counters: Vec<crate::stats::SaturatedCounter>,
    bit_error_rates: Vec<crate::stats::BitErrorRate>,
    peer_groups: Vec<crate::stats::PeerGroup>,
    traffic_balance: Vec<crate::stats::TrafficBalance>,
    trends: Vec<crate::stats::CounterTrend>,
    notes: Vec<String>,
}

/// The rates of one entry of `counter_rates`: a rate set (schema 3) gives
/// each counter with the set's fields, a single rate (schema 2) itself.
fn flatten(
    mut entry: serde_json::Map<String, serde_json::Value>,
    out: &mut Vec<CounterRate>,
) -> Result<(), serde_json::Error> {
    let Some(counters) = entry.remove("counters") else {
        out.push(CounterRate::deserialize(serde_json::Value::Object(entry))?);
        return Ok(());
    };
    let counters = Vec::<serde_json::Map<String, serde_json::Value>>::deserialize(counters)?;
    for mut counter in counters {
        for (key, value) in &entry {
            counter.insert(key.clone(), value.clone());
        }
        out.push(CounterRate::deserialize(serde_json::Value::Object(
            counter,
        ))?);
    }
    Ok(())
}

/// For `#[serde(deserialize_with)]` on the report's `measurements`.
pub(super) fn deserialize<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Measurements, D::Error> {
    let w = Wire::deserialize(deserializer)?;
    let mut counter_rates = Vec::with_capacity(w.counter_rates.len());
    for entry in w.counter_rates {
        flatten(entry, &mut counter_rates).map_err(serde::de::Error::custom)?;
    }
    Ok(Measurements {
        snapshots: w.snapshots,
        link_capacities: w.link_capacities,
        counter_rates,
        throughput: w.throughput,
        saturated_counters: w.saturated_counters,
        bit_error_rates: w.bit_error_rates,
        peer_groups: w.peer_groups,
        traffic_balance: w.traffic_balance,
        trends: w.trends,
        notes: w.notes,
    })
}
