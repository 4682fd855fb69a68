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

use crate::span::LineSpan;
use crate::stats::robust::{ScaleMethod, Summary};
use crate::stats::{
    CounterRate, CounterSource, CounterUnit, Derivation, Direction, IntervalSource, Layer,
    Measurements, OutlierMember, PeerGroup, PeerGroupKind, RateStatus, SnapshotInfo, Subject,
    Throughput,
};
// The layout's pieces, the escape check and the number writer are the
// incidents' and findings' too.
use super::incident::pretty::{array, newline, plain, str as push_str, word as push_word, Object};
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
    derivation: &'a Derivation,
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

/// A record written as `serde_json`'s pretty printer prints it `depth`
/// levels deep in a document (two spaces a level after every newline),
/// without going through `serde`.
///
/// A fleet's JSON report is mostly snapshots, rate sets and throughput,
/// written one unit at a time by the one thread that folds the units in:
/// through `serde`, each key was a call chain and an escape scan, and
/// writing those three records was half of that thread's time. The bytes
/// are the ones `serde_json::to_writer_pretty` writes (a test compares
/// them); numbers and the rare string that needs escaping still go through
/// `serde_json`, so they are formatted by the same code.
pub trait WritePretty {
    /// Appends the record to `out`, its opening brace first (the caller
    /// writes what precedes it), its fields `depth + 1` levels deep.
    fn write_pretty(&self, depth: usize, out: &mut Vec<u8>);
}

impl<T: WritePretty + ?Sized> WritePretty for &T {
    fn write_pretty(&self, depth: usize, out: &mut Vec<u8>) {
        (**self).write_pretty(depth, out);
    }
}

/// The measurement writers' own fields of an [`Object`]: numbers and
/// enums through `serde_json` (so they are formatted by the same code), and
/// the statistics' subject.
///
/// Inlined, as [`Object::key`]: the key is a literal where they are called.
impl Object<'_> {
    #[inline(always)]
    fn f64(&mut self, key: &str, value: f64) {
        push_f64(self.key(key), value);
    }

    #[inline(always)]
    fn json<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) {
        push_json(self.key(key), value);
    }

    #[inline(always)]
    fn subject(&mut self, key: &str, subject: &Subject) {
        let depth = self.depth;
        write_subject(self.key(key), depth, subject);
    }
}

/// `value` as compact JSON, which for a scalar is what the pretty printer
/// writes too.
fn push_json<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    // Writing to a vector does not fail, and these values serialise.
    let _ = serde_json::to_writer(&mut *out, value);
}

/// A float as `serde_json` writes it: `0.0`, the rate of most counters
/// (which do not move), written as it is, any other through `serde_json`.
fn push_f64(out: &mut Vec<u8>, value: f64) {
    if value.to_bits() == 0 {
        out.extend_from_slice(b"0.0");
    } else {
        push_json(out, &value);
    }
}

/// A string of pieces, written as one JSON string.
fn push_pieces(out: &mut Vec<u8>, pieces: &[&str]) {
    if pieces.iter().all(|p| plain(p)) {
        out.push(b'"');
        for p in pieces {
            out.extend_from_slice(p.as_bytes());
        }
        out.push(b'"');
    } else {
        push_json(out, &pieces.concat());
    }
}

/// A rate's derivation as a JSON string, `seconds` being its seconds'
/// text (see [`Derivation::write_with`]).
fn push_derivation(out: &mut Vec<u8>, derivation: &Derivation, seconds: &str) {
    match derivation.as_text() {
        // Text read back might need escapes.
        Some(text) => push_str(out, text),
        // Numbers and fixed words need none.
        None => {
            out.push(b'"');
            derivation.write_with(seconds, out);
            out.push(b'"');
        }
    }
}

/// A unit's name as its `Serialize` writes it (`rename_all = "snake_case"`).
const fn unit_word(unit: CounterUnit) -> &'static str {
    match unit {
        CounterUnit::Events => "events",
        CounterUnit::Packets => "packets",
        CounterUnit::FourOctets => "four_octets",
        CounterUnit::Kib => "kib",
    }
}

/// A status's name as its `Serialize` writes it (`rename_all = "snake_case"`).
const fn status_word(status: RateStatus) -> &'static str {
    match status {
        RateStatus::Measured => "measured",
        RateStatus::CounterReset => "counter_reset",
        RateStatus::Saturated => "saturated",
        RateStatus::NoInterval => "no_interval",
    }
}

/// A direction's name as its `Serialize` writes it (`rename_all = "snake_case"`).
const fn direction_word(direction: Direction) -> &'static str {
    match direction {
        Direction::Tx => "tx",
        Direction::Rx => "rx",
    }
}

/// A layer's name as its `Serialize` writes it (`rename_all = "snake_case"`).
const fn layer_word(layer: Layer) -> &'static str {
    match layer {
        Layer::Data => "data",
        Layer::Raw => "raw",
    }
}

/// A [`LineSpan`] whose opening brace is `depth` levels deep.
fn write_span(out: &mut Vec<u8>, depth: usize, span: LineSpan) {
    let mut o = Object::begin(out, depth);
    o.uint("first_line", span.first_line);
    o.uint("last_line", span.last_line);
    o.end();
}

/// A [`Subject`] as its derived `Serialize` writes it (absent parts left out).
fn write_subject(out: &mut Vec<u8>, depth: usize, subject: &Subject) {
    let mut o = Object::begin(out, depth);
    if let Some(host) = &subject.host {
        o.str("host", host);
    }
    if let Some(device) = &subject.device {
        o.str("device", device);
    }
    if let Some(guid) = &subject.guid {
        o.str("guid", &guid.to_string());
    }
    let numbers = [
        ("lid", subject.lid),
        ("port", subject.port),
        ("gpu", subject.gpu),
        ("link", subject.link),
        ("lane", subject.lane),
    ];
    for (key, value) in numbers {
        if let Some(v) = value {
            o.u64(key, u64::from(v));
        }
    }
    o.end();
}

/// A [`CounterSource`] as its `Display` words.
fn push_source(out: &mut Vec<u8>, source: &CounterSource) {
    let (tool, attribute) = source.words();
    push_pieces(out, &[tool, attribute]);
}

impl WritePretty for RateSet<'_> {
    fn write_pretty(&self, depth: usize, out: &mut Vec<u8>) {
        let Some(first) = self.0.first() else {
            out.extend_from_slice(b"null");
            return;
        };
        let mut o = Object::begin(out, depth);
        o.subject("subject", &first.subject);
        push_source(o.key("source"), &first.source);
        o.uint("from_snapshot", first.from_snapshot);
        o.uint("to_snapshot", first.to_snapshot);
        {
            let inner = o.depth;
            let w = o.key("lines");
            w.push(b'[');
            for (i, span) in first.lines.iter().enumerate() {
                if i > 0 {
                    w.push(b',');
                }
                newline(w, inner + 1);
                write_span(w, inner + 1, *span);
            }
            newline(w, inner);
            w.push(b']');
        }
        if let Some(seconds) = first.interval_seconds {
            o.f64("interval_seconds", seconds);
        }
        {
            let w = o.key("interval_source");
            match &first.interval_source {
                IntervalSource::InputTimes { from, to } => {
                    push_pieces(w, &["input times: ", from, " → ", to]);
                }
                other => push_json(w, other),
            }
        }
        {
            let inner = o.depth;
            let w = o.key("counters");
            w.push(b'[');
            // A set's measured rates share its interval: its seconds are
            // formatted once for their derivations.
            let mut seconds_text: Option<(u64, String)> = None;
            for (i, r) in self.0.iter().enumerate() {
                if i > 0 {
                    w.push(b',');
                }
                newline(w, inner + 1);
                let mut c = Object::begin(w, inner + 1);
                c.str("counter", &r.counter);
                push_word(c.key("unit"), unit_word(r.unit));
                c.u64("before", r.before);
                c.u64("after", r.after);
                push_word(c.key("status"), status_word(r.status));
                if let Some(increase) = r.increase {
                    c.u64("increase", increase);
                }
                if let Some(rate) = r.counts_per_second {
                    c.f64("counts_per_second", rate);
                }
                let seconds = match r.derivation.seconds() {
                    Some(seconds) => {
                        if !matches!(&seconds_text, Some((bits, _)) if *bits == seconds.to_bits()) {
                            seconds_text =
                                Some((seconds.to_bits(), Derivation::seconds_words(seconds)));
                        }
                        seconds_text.as_ref().map_or("", |(_, text)| text.as_str())
                    }
                    None => "",
                };
                push_derivation(c.key("derivation"), &r.derivation, seconds);
                c.end();
            }
            if !self.0.is_empty() {
                newline(w, inner);
            }
            w.push(b']');
        }
        o.end();
    }
}

impl WritePretty for Throughput {
    fn write_pretty(&self, depth: usize, out: &mut Vec<u8>) {
        let mut o = Object::begin(out, depth);
        o.subject("subject", &self.subject);
        push_word(o.key("direction"), direction_word(self.direction));
        push_word(o.key("layer"), layer_word(self.layer));
        o.str("counter", &self.counter);
        o.uint("from_snapshot", self.from_snapshot);
        o.uint("to_snapshot", self.to_snapshot);
        o.f64("interval_seconds", self.interval_seconds);
        o.json("bytes", &self.bytes);
        o.f64("bytes_per_second", self.bytes_per_second);
        o.f64("gib_per_second", self.gib_per_second);
        o.f64("gbit_per_second", self.gbit_per_second);
        if let Some(capacity) = self.capacity_gbit_per_second {
            o.f64("capacity_gbit_per_second", capacity);
        }
        if let Some(source) = &self.capacity_source {
            o.str("capacity_source", source);
        }
        if let Some(percent) = self.utilisation_percent {
            o.f64("utilisation_percent", percent);
        }
        o.str("derivation", &self.derivation);
        o.end();
    }
}

impl WritePretty for SnapshotInfo {
    fn write_pretty(&self, depth: usize, out: &mut Vec<u8>) {
        let mut o = Object::begin(out, depth);
        o.uint("id", self.id);
        o.uint("input", self.input);
        // A kind's name is its serialised name.
        push_str(o.key("kind"), self.kind.name());
        if let Some(host) = &self.host {
            o.str("host", host);
        }
        if let Some(file) = &self.file {
            o.str("file", file);
        }
        // The span is flattened into the snapshot's fields.
        o.uint("first_line", self.span.first_line);
        o.uint("last_line", self.span.last_line);
        if let Some(seconds) = self.time_seconds {
            o.f64("time_seconds", seconds);
        }
        push_bool(o.key("time_is_unix"), self.time_is_unix);
        if let Some(source) = &self.time_source {
            o.str("time_source", source);
        }
        o.end();
    }
}

/// A group kind's name as its `Serialize` writes it (`rename_all = "snake_case"`).
const fn kind_word(kind: PeerGroupKind) -> &'static str {
    match kind {
        PeerGroupKind::LinksOfGpu => "links_of_gpu",
        PeerGroupKind::LanesOfGpu => "lanes_of_gpu",
        PeerGroupKind::GpusOfHost => "gpus_of_host",
        PeerGroupKind::PortsOfDevice => "ports_of_device",
        PeerGroupKind::PortsOnHost => "ports_on_host",
        PeerGroupKind::SamePortAcrossHosts => "same_port_across_hosts",
    }
}

/// A scale method's name as its `Serialize` writes it (`rename_all = "snake_case"`).
const fn scale_word(scale: ScaleMethod) -> &'static str {
    match scale {
        ScaleMethod::Mad => "mad",
        ScaleMethod::MeanAbsoluteDeviation => "mean_absolute_deviation",
        ScaleMethod::None => "none",
    }
}

/// `true` or `false`.
fn push_bool(out: &mut Vec<u8>, value: bool) {
    out.extend_from_slice(if value { b"true" } else { b"false" });
}

impl WritePretty for Summary {
    fn write_pretty(&self, depth: usize, out: &mut Vec<u8>) {
        // Every field named: a new one fails to compile here until it is
        // written too.
        let Summary {
            count,
            min,
            p5,
            p25,
            median,
            p75,
            p95,
            max,
            mad,
            spread_percent_of_median,
        } = *self;
        let mut o = Object::begin(out, depth);
        o.uint("count", count);
        o.f64("min", min);
        o.f64("p5", p5);
        o.f64("p25", p25);
        o.f64("median", median);
        o.f64("p75", p75);
        o.f64("p95", p95);
        o.f64("max", max);
        o.f64("mad", mad);
        // `None` is written as `null`: the field is not skipped.
        o.json("spread_percent_of_median", &spread_percent_of_median);
        o.end();
    }
}

impl WritePretty for OutlierMember {
    fn write_pretty(&self, depth: usize, out: &mut Vec<u8>) {
        let OutlierMember {
            subject,
            value,
            robust_z,
            times_median,
            poisson_tail_p,
            lines,
            file,
            explanation,
        } = self;
        let mut o = Object::begin(out, depth);
        o.subject("subject", subject);
        o.f64("value", *value);
        o.f64("robust_z", *robust_z);
        if let Some(times) = times_median {
            o.f64("times_median", *times);
        }
        if let Some(p) = poisson_tail_p {
            o.f64("poisson_tail_p", *p);
        }
        let inner = o.depth;
        write_span(o.key("lines"), inner, *lines);
        if let Some(file) = file {
            o.str("file", file);
        }
        o.str("explanation", explanation);
        o.end();
    }
}

/// A peer group, its summary and outliers written by hand too: a fleet has
/// a group per counter and host, and one per port across the hosts.
impl WritePretty for PeerGroup {
    fn write_pretty(&self, depth: usize, out: &mut Vec<u8>) {
        let PeerGroup {
            kind,
            group,
            source,
            counter,
            statistic,
            size,
            summary,
            z_scores_computed,
            scale,
            outliers,
        } = self;
        let mut o = Object::begin(out, depth);
        push_word(o.key("kind"), kind_word(*kind));
        o.str("group", group);
        push_source(o.key("source"), source);
        o.str("counter", counter);
        push_word(o.key("statistic"), statistic.as_str());
        o.uint("size", *size);
        let inner = o.depth;
        summary.write_pretty(inner, o.key("summary"));
        push_bool(o.key("z_scores_computed"), *z_scores_computed);
        if let Some(scale) = scale {
            push_word(o.key("scale"), scale_word(*scale));
        }
        array(o.key("outliers"), inner, outliers, |member, depth, w| {
            member.write_pretty(depth, w)
        });
        o.end();
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::Kind;
    use crate::stats::PeerStatistic;
    use proptest::prelude::*;
    use std::sync::Arc;

    /// What `serde_json`'s pretty printer writes for `value` at `depth`:
    /// the pretty text with `depth` more levels after every newline (the
    /// spool's formatter, and the report's layout).
    fn oracle<T: Serialize>(value: &T, depth: usize) -> String {
        let pretty = serde_json::to_string_pretty(value).unwrap();
        pretty.replace('\n', &format!("\n{}", "  ".repeat(depth)))
    }

    fn written<T: WritePretty>(value: &T, depth: usize) -> String {
        let mut out = Vec::new();
        value.write_pretty(depth, &mut out);
        String::from_utf8(out).unwrap()
    }

    /// Text with what JSON must escape (quotes, backslashes, control
    /// characters) and what it must not (UTF-8), or plain words.
    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-zA-Z0-9 ./:_-]{0,16}",
            "[a-z\"\\\\\n\t\r\u{1}\u{1f}\u{7f}é−→ ]{0,12}",
        ]
    }

    fn subject() -> impl Strategy<Value = Subject> {
        (
            proptest::option::of(text()),
            proptest::option::of(text()),
            proptest::array::uniform5(proptest::option::of(any::<u32>())),
            proptest::option::of(any::<u64>()),
        )
            .prop_map(
                |(host, device, [lid, port, gpu, link, lane], guid)| Subject {
                    host,
                    device,
                    guid: guid.map(crate::model::ib::Guid),
                    lid,
                    port,
                    gpu,
                    link,
                    lane,
                },
            )
    }

    fn span() -> impl Strategy<Value = LineSpan> {
        (any::<usize>(), any::<usize>()).prop_map(|(first_line, last_line)| LineSpan {
            first_line,
            last_line,
        })
    }

    /// Floats of every kind, non-finite ones (written as `null`) included.
    fn float() -> impl Strategy<Value = f64> {
        prop_oneof![
            any::<f64>(),
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(0.0),
            Just(-0.0),
            Just(60.0),
            0.0..1e12f64,
        ]
    }

    fn interval_source() -> impl Strategy<Value = IntervalSource> {
        prop_oneof![
            Just(IntervalSource::Given),
            Just(IntervalSource::Unknown),
            (text(), text()).prop_map(|(from, to)| IntervalSource::InputTimes {
                from: Arc::from(from.as_str()),
                to: Arc::from(to.as_str()),
            }),
        ]
    }

    /// One rate of a set: its own fields (the set's are the first's).
    type OwnFields = (
        String,
        usize,
        u64,
        u64,
        usize,
        Option<u64>,
        Option<f64>,
        (String, usize, f64),
    );

    fn own_fields() -> impl Strategy<Value = OwnFields> {
        (
            text(),
            0usize..4,
            any::<u64>(),
            any::<u64>(),
            0usize..4,
            proptest::option::of(any::<u64>()),
            proptest::option::of(float()),
            // The derivation: text (read back, a reset), or a measured
            // rate's or a rate's without an interval, written from their
            // numbers (the seconds of a set's rates mostly one interval).
            (
                text(),
                0usize..3,
                prop_oneof![Just(60.0), Just(2.5), Just(60.0), float()],
            ),
        )
    }

    /// A rate built through its deserializer (its private fields are the
    /// measuring's), then given the fields JSON cannot carry (NaN).
    #[allow(clippy::too_many_arguments)]
    fn rate(
        subject: &Subject,
        source: &CounterSource,
        snapshots: (usize, usize),
        lines: [LineSpan; 2],
        seconds: Option<f64>,
        interval: &IntervalSource,
        own: &OwnFields,
    ) -> CounterRate {
        let (counter, unit, before, after, status, increase, rate, derivation) = own;
        let units = ["events", "packets", "four_octets", "kib"];
        let statuses = ["measured", "counter_reset", "saturated", "no_interval"];
        let mut r: CounterRate = serde_json::from_value(serde_json::json!({
            "subject": {},
            "source": "nvidia-smi nvlink",
            "counter": counter,
            "unit": units[*unit],
            "from_snapshot": snapshots.0,
            "to_snapshot": snapshots.1,
            "lines": [{"first_line": 1, "last_line": 1}, {"first_line": 1, "last_line": 1}],
            "interval_source": "unknown",
            "status": statuses[*status],
            "before": before,
            "after": after,
            "derivation": derivation.0,
        }))
        .unwrap();
        match derivation.1 {
            1 => r.derivation = Derivation::measured(*after, *before, derivation.2),
            2 => r.derivation = Derivation::no_interval(*after),
            _ => {}
        }
        r.subject = Arc::new(subject.clone());
        r.source = source.clone();
        r.lines = lines;
        r.interval_seconds = seconds;
        r.interval_source = interval.clone();
        r.increase = *increase;
        r.counts_per_second = *rate;
        r
    }

    fn source() -> impl Strategy<Value = CounterSource> {
        prop_oneof![
            Just(CounterSource::NvidiaSmiNvlink),
            Just(CounterSource::Ibqueryerrors),
            Just(CounterSource::DcgmiNvlink),
            "[A-Za-z \"\\\\é]{0,10}"
                .prop_map(|h| CounterSource::parse(&format!("perfquery {h}")).unwrap()),
        ]
    }

    proptest! {
        /// A rate set written by hand is what `serde_json` writes of it.
        #[test]
        fn rate_sets_are_written_as_serde_writes_them(
            subject in subject(),
            source in source(),
            snapshots in (any::<usize>(), any::<usize>()),
            lines in (span(), span()),
            seconds in proptest::option::of(float()),
            interval in interval_source(),
            owns in proptest::collection::vec(own_fields(), 1..5),
            depth in 0usize..40,
        ) {
            let rates: Vec<CounterRate> = owns
                .iter()
                .map(|own| rate(&subject, &source, snapshots, [lines.0, lines.1], seconds, &interval, own))
                .collect();
            let set = RateSet(&rates);
            prop_assert_eq!(written(&set, depth), oracle(&set, depth));
        }

        /// So is a throughput record.
        #[test]
        fn throughput_is_written_as_serde_writes_it(
            subject in subject(),
            tx in any::<bool>(),
            raw in any::<bool>(),
            counter in text(),
            snapshots in (any::<usize>(), any::<usize>()),
            floats in proptest::array::uniform4(float()),
            bytes in prop_oneof![any::<u128>(), any::<u64>().prop_map(u128::from)],
            capacity in proptest::option::of(float()),
            capacity_source in proptest::option::of(text()),
            utilisation in proptest::option::of(float()),
            derivation in text(),
            depth in 0usize..40,
        ) {
            let t = Throughput {
                subject: Arc::new(subject),
                direction: if tx { Direction::Tx } else { Direction::Rx },
                layer: if raw { Layer::Raw } else { Layer::Data },
                counter: Arc::from(counter),
                from_snapshot: snapshots.0,
                to_snapshot: snapshots.1,
                interval_seconds: floats[0],
                bytes,
                bytes_per_second: floats[1],
                gib_per_second: floats[2],
                gbit_per_second: floats[3],
                capacity_gbit_per_second: capacity,
                capacity_source: capacity_source.map(Arc::from),
                utilisation_percent: utilisation,
                derivation,
            };
            prop_assert_eq!(written(&t, depth), oracle(&t, depth));
        }

        /// A peer group, its summary and outliers too: with and without a
        /// scale, no outliers or several, optional floats absent, and any
        /// float (NaN and infinities written as `null`).
        #[test]
        fn peer_groups_are_written_as_serde_writes_them(
            kind in proptest::sample::select(vec![
                PeerGroupKind::LinksOfGpu,
                PeerGroupKind::LanesOfGpu,
                PeerGroupKind::GpusOfHost,
                PeerGroupKind::PortsOfDevice,
                PeerGroupKind::PortsOnHost,
                PeerGroupKind::SamePortAcrossHosts,
            ]),
            (group, counter) in (text(), text()),
            source in source(),
            counts_per_second in any::<bool>(),
            size in any::<usize>(),
            (count, floats) in (any::<usize>(), proptest::array::uniform8(float())),
            spread in proptest::option::of(float()),
            z_scores_computed in any::<bool>(),
            scale in proptest::option::of(proptest::sample::select(vec![
                ScaleMethod::Mad,
                ScaleMethod::MeanAbsoluteDeviation,
                ScaleMethod::None,
            ])),
            outliers in proptest::collection::vec(
                (
                    subject(),
                    (float(), float()),
                    (proptest::option::of(float()), proptest::option::of(float())),
                    (span(), proptest::option::of(text())),
                    text(),
                ),
                0..4,
            ),
            depth in 0usize..40,
        ) {
            let [min, p5, p25, median, p75, p95, max, mad] = floats;
            let g = PeerGroup {
                kind,
                group,
                source,
                counter,
                statistic: if counts_per_second {
                    PeerStatistic::CountsPerSecond
                } else {
                    PeerStatistic::Value
                },
                size,
                summary: Summary {
                    count,
                    min,
                    p5,
                    p25,
                    median,
                    p75,
                    p95,
                    max,
                    mad,
                    spread_percent_of_median: spread,
                },
                z_scores_computed,
                scale,
                outliers: outliers
                    .into_iter()
                    .map(|(subject, (value, robust_z), (times_median, poisson_tail_p), (lines, file), explanation)| {
                        OutlierMember {
                            subject,
                            value,
                            robust_z,
                            times_median,
                            poisson_tail_p,
                            lines,
                            file,
                            explanation,
                        }
                    })
                    .collect(),
            };
            prop_assert_eq!(written(&g, depth), oracle(&g, depth));
        }

        /// And a snapshot, its span flattened into its fields.
        #[test]
        fn snapshots_are_written_as_serde_writes_them(
            ids in (any::<usize>(), any::<usize>()),
            kind in prop_oneof![
                Just(Kind::Perfquery),
                Just(Kind::Ibstat),
                Just(Kind::Nvlink),
                Just(Kind::Date),
            ],
            host in proptest::option::of(text()),
            file in proptest::option::of(text()),
            span in span(),
            seconds in proptest::option::of(float()),
            unix in any::<bool>(),
            time_source in proptest::option::of(text()),
            depth in 0usize..40,
        ) {
            let s = SnapshotInfo {
                id: ids.0,
                input: ids.1,
                kind,
                host,
                file,
                span,
                time_seconds: seconds,
                time_is_unix: unix,
                time_source,
            };
            prop_assert_eq!(written(&s, depth), oracle(&s, depth));
        }
    }
}
