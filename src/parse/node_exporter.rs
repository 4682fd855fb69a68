//! Prometheus node_exporter's InfiniBand metrics, as fleet teams collect
//! them: a scrape (`curl -s localhost:9100/metrics | grep node_infiniband`)
//! or a query's result across hosts (the Prometheus console, `promtool
//! query instant`).
//!
//! ```text
//! # HELP node_infiniband_symbol_error_total Number of minor link errors …
//! # TYPE node_infiniband_symbol_error_total counter
//! node_infiniband_symbol_error_total{device="mlx5_0",port="1"} 12
//! node_infiniband_link_downed_total{device="mlx5_0",instance="gpu07:9100",job="node",port="1"} 3 1765101600000
//! node_infiniband_state_id{device="mlx5_0", instance="gpu07:9100", port="1"} => 4 @[1765101600.123]
//! ```
//!
//! Labels come in any order, with any others beside them (`job`); the
//! value is a Prometheus float (`0`, `1.2345e+10`), then an optional time
//! stamp (milliseconds in the exposition format, seconds after `@[` in a
//! query result).
//!
//! # Model: perfquery's, through the sysfs reader
//! node_exporter reads the same sysfs files [`super::sysfs_counters`] reads
//! (through prometheus/procfs's `sysfs/class_infiniband.go`) and renames
//! them: `symbol_error_total` is `counters/symbol_error`. Each metric is
//! mapped back to its file and recorded by that reader's
//! `PortCounterFiles`, so the counters are perfquery's PortCounters (and
//! PortCountersExtended) fields with the hardware widths sysfs has
//! (`symbol_error` stops at 65535): every IB1xx rule, saturation, the
//! measurements and two-snapshot rates read them with no rule knowing the
//! format.
//!
//! Two conversions undo procfs's:
//! - procfs multiplies `port_xmit_data`/`port_rcv_data` (and the `_64`
//!   files) by 4, so node_exporter's `port_data_*_bytes_total` are octets;
//!   perfquery's PortXmitData counts 4-octet words, as the sysfs files do.
//!   The value is divided by 4 back into words: a 32-bit field stuck at
//!   all-ones (4294967295 words, 17179869180 octets) is then seen saturated,
//!   and octet rates are the model's own ×4, not ×16.
//! - the `legacy_*` metrics are procfs's `counters_ext/` files, where
//!   kernels before 4.5 put the 64-bit PortCountersExtended values
//!   (`port_xmit_data_64`, `port_unicast_rcv_packets`, …): read as the
//!   same extended counters.
//!
//! A value is a float: counts above 2^53 lose their last digits, which no
//! threshold or rate of this crate notices.
//!
//! `state_id`, `physical_state_id` and `rate_bytes_per_second` are the
//! port's state, physical state and rate, which the port rules (IB001,
//! IB002) judge as they judge `rdma link`'s; `node_infiniband_info` names
//! each adapter's firmware and type. Other InfiniBand metrics (the mlx5
//! `hw_counters`: `out_of_buffer_drops_total`, …) are kept as printed in the
//! port's block's fields, under their metric name.
//!
//! # Hosts
//! An `instance` label (`gpu07:9100`) names the host: each instance is a
//! [`Scrape`] of its own, and the input layer makes each one a section of
//! that host.
//!
//! # Other metrics
//! A scrape holds every collector's metrics (`node_cpu_seconds_total`,
//! `go_goroutines`): their lines, and their `# HELP`/`# TYPE` lines, are
//! set aside in [`NodeExporter::other_metrics`], counted once, not read one
//! by one as lines that could not be read.

use crate::diag::WarningKind;
use crate::model::ib::{PhysState, PortState};
use crate::model::node_exporter::{Adapter, NodeExporter, PortStatus, Scrape};
use crate::model::partial::{Partial, PartialReason};
use crate::model::perfquery::Perfquery;
use crate::parse::prometheus::{
    claims_command, count, float, host_of_instance, name_len, spans_of, Read, Sample,
};
use crate::parse::sysfs_counters::PortCounterFiles;
use crate::parse::text::{trim, Unread};
use crate::parse::{Block, Line, Parsed, Spec};
use crate::span::LineSpan;
use std::collections::HashMap;

pub(crate) const FORMAT: Spec<NodeExporter> = Spec {
    command,
    starts: |b| matches!(b, b'#' | b'n'),
    detect,
    parse,
    summary,
    attach_command: None,
    labels: &[],
};

/// The prefix of every InfiniBand metric.
const PREFIX: &str = "node_infiniband_";

/// `curl`/`wget` of node_exporter's port 9100 or of a URL naming it
/// (`http://node-exporter.monitoring.svc/metrics`), or a `promtool query`
/// of an InfiniBand metric (`prometheus::claims_command`; not any `/metrics` URL:
/// `curl gpu07:8080/metrics` may as well be dcgm-exporter's).
fn command(argv: &[&str]) -> bool {
    claims_command(
        argv,
        |w| {
            let lower = w.to_ascii_lowercase();
            w.contains(":9100")
                || lower.contains("node-exporter")
                || lower.contains("node_exporter")
        },
        PREFIX,
    )
}

/// A node_exporter metric and the sysfs `counters/` (or `counters_ext/`)
/// file it is read from; `true` where procfs multiplied the file's 4-octet
/// words by 4 (see the module doc).
const COUNTER_METRICS: &[(&str, &str, bool)] = &[
    ("symbol_error_total", "symbol_error", false),
    ("link_error_recovery_total", "link_error_recovery", false),
    ("link_downed_total", "link_downed", false),
    ("port_errors_received_total", "port_rcv_errors", false),
    (
        "port_receive_remote_physical_errors_total",
        "port_rcv_remote_physical_errors",
        false,
    ),
    (
        "port_receive_switch_relay_errors_total",
        "port_rcv_switch_relay_errors",
        false,
    ),
    (
        "port_discards_transmitted_total",
        "port_xmit_discards",
        false,
    ),
    (
        "port_constraint_errors_transmitted_total",
        "port_xmit_constraint_errors",
        false,
    ),
    (
        "port_constraint_errors_received_total",
        "port_rcv_constraint_errors",
        false,
    ),
    (
        "local_link_integrity_errors_total",
        "local_link_integrity_errors",
        false,
    ),
    (
        "excessive_buffer_overrun_errors_total",
        "excessive_buffer_overrun_errors",
        false,
    ),
    ("vl15_dropped_total", "VL15_dropped", false),
    ("port_transmit_wait_total", "port_xmit_wait", false),
    ("port_data_transmitted_bytes_total", "port_xmit_data", true),
    ("port_data_received_bytes_total", "port_rcv_data", true),
    ("port_packets_transmitted_total", "port_xmit_packets", false),
    ("port_packets_received_total", "port_rcv_packets", false),
    (
        "unicast_packets_transmitted_total",
        "unicast_xmit_packets",
        false,
    ),
    (
        "unicast_packets_received_total",
        "unicast_rcv_packets",
        false,
    ),
    (
        "multicast_packets_transmitted_total",
        "multicast_xmit_packets",
        false,
    ),
    (
        "multicast_packets_received_total",
        "multicast_rcv_packets",
        false,
    ),
    (
        "legacy_data_transmitted_bytes_total",
        "port_xmit_data_64",
        true,
    ),
    ("legacy_data_received_bytes_total", "port_rcv_data_64", true),
    (
        "legacy_packets_transmitted_total",
        "port_xmit_packets_64",
        false,
    ),
    (
        "legacy_packets_received_total",
        "port_rcv_packets_64",
        false,
    ),
    (
        "legacy_unicast_packets_transmitted_total",
        "port_unicast_xmit_packets",
        false,
    ),
    (
        "legacy_unicast_packets_received_total",
        "port_unicast_rcv_packets",
        false,
    ),
    (
        "legacy_multicast_packets_transmitted_total",
        "port_multicast_xmit_packets",
        false,
    ),
    (
        "legacy_multicast_packets_received_total",
        "port_multicast_rcv_packets",
        false,
    ),
];

fn counter_metric(name: &str) -> Option<(&'static str, bool)> {
    COUNTER_METRICS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, file, octets)| (*file, *octets))
}

/// An InfiniBand metric line (with a value) or its `# HELP`/`# TYPE`.
fn detect(lines: &[Line<'_>]) -> Option<Block> {
    crate::parse::prometheus::detect(lines, PREFIX, "prom")
}

/// One instance's metrics as they are read.
#[derive(Default)]
struct Building {
    instance: Option<String>,
    files: PortCounterFiles,
    ports: Vec<PortStatus>,
    adapters: Vec<Adapter>,
    /// The time stamps seen: `None` before the first, `Some(None)` once
    /// two differ or a sample has none.
    timestamp: Option<Option<i64>>,
}

impl Building {
    fn port_status(&mut self, device: &str, port: u32, span: LineSpan) -> &mut PortStatus {
        let at = match self
            .ports
            .iter()
            .position(|p| p.device == device && p.port == port)
        {
            Some(at) => at,
            None => {
                self.ports.push(PortStatus {
                    device: device.to_owned(),
                    port,
                    state: None,
                    physical_state: None,
                    rate_gbps: None,
                    span,
                });
                self.ports.len() - 1
            }
        };
        #[allow(clippy::indexing_slicing)] // a position of `ports`
        let p = &mut self.ports[at];
        p.span = p.span.join(span);
        p
    }

    fn finish(self) -> Scrape {
        Scrape {
            instance: self.instance,
            counters: Perfquery {
                blocks: self.files.finish(),
            },
            ports: self.ports,
            adapters: self.adapters,
            timestamp_ms: self.timestamp.flatten(),
        }
    }
}

/// The instances read, in the order first seen.
#[derive(Default)]
struct Scrapes {
    list: Vec<Building>,
    index: HashMap<Option<String>, usize>,
}

impl Scrapes {
    fn of(&mut self, instance: Option<&str>) -> &mut Building {
        let host = instance.map(|i| host_of_instance(i).to_owned());
        let next = self.list.len();
        let at = *self.index.entry(host.clone()).or_insert(next);
        if at == next {
            self.list.push(Building {
                instance: host,
                ..Building::default()
            });
        }
        #[allow(clippy::indexing_slicing)] // a position of `list`
        &mut self.list[at]
    }
}

/// Reads node_exporter metric lines.
#[must_use]
pub fn parse(lines: &[Line<'_>]) -> Parsed<NodeExporter> {
    let mut scrapes = Scrapes::default();
    let mut unread = Unread::default();
    let mut other: Vec<usize> = Vec::new();
    let mut cut: Option<Partial> = None;
    let last_line = crate::parse::text::last_text_line(lines);
    for line in lines.iter().filter(|l| !l.is_blank()) {
        let t = trim(line.text());
        let read = crate::parse::prometheus::read(t, PREFIX);
        let is_last = Some(line.number) == last_line;
        match read {
            Some(Read::Meta(name)) if name.starts_with(PREFIX) => {}
            Some(Read::Meta(_)) => other.push(line.number),
            // The paste ends before the value (or inside the name): cut.
            Some(Read::Sample(s)) if s.name.starts_with(PREFIX) && s.value.is_none() && is_last => {
                if !cut_port(&s, line, &mut scrapes) {
                    cut = Some(Partial::new(
                        PartialReason::CutLine,
                        vec![t.to_owned()],
                        line.number,
                    ));
                }
            }
            Some(Read::Sample(s)) if s.name.starts_with(PREFIX) => {
                read_sample(&s, line, &mut scrapes, &mut unread);
            }
            Some(Read::Sample(s)) if s.value.is_some() => other.push(line.number),
            _ if is_last && (may_begin_metric_line(t) || t.starts_with(PREFIX)) => {
                // The paste ends inside the line's name or labels.
                cut = Some(Partial::new(
                    PartialReason::CutLine,
                    vec![t.to_owned()],
                    line.number,
                ));
            }
            _ => unread.line(line, "not a Prometheus metric line"),
        }
    }
    Parsed {
        value: NodeExporter {
            scrapes: scrapes.list.into_iter().map(Building::finish).collect(),
            other_metrics: spans_of(&other),
            cut,
        },
        warnings: unread.finish(),
    }
}

/// Whether `t`, the paste's last line cut short, may be the start of an
/// InfiniBand metric line (`node_infiniband_symbol_error_total{dev`,
/// `node_infin`).
pub(crate) fn may_begin_metric_line(t: &str) -> bool {
    let n = name_len(t);
    let name = t.get(..n).unwrap_or_default();
    name.len() >= 8
        && (name.starts_with(PREFIX) || PREFIX.starts_with(name))
        && t.get(n..)
            .is_some_and(|r| r.is_empty() || r.starts_with('{'))
}

/// Marks the port of `s`, the paste's last line cut before its value,
/// cut there; `false` when the line names no port (the section's cut).
fn cut_port(s: &Sample<'_>, line: &Line<'_>, scrapes: &mut Scrapes) -> bool {
    let device = s.label("device").filter(|d| !d.is_empty());
    let port = s.label("port").and_then(|p| p.parse::<u32>().ok());
    let (Some(device), Some(port)) = (device, port) else {
        return false;
    };
    let metric = s.name.get(PREFIX.len()..).unwrap_or_default();
    scrapes
        .of(s.label("instance"))
        .files
        .cut(device, port, metric, line.number);
    true
}

/// Records one InfiniBand metric line.
fn read_sample(s: &Sample<'_>, line: &Line<'_>, scrapes: &mut Scrapes, unread: &mut Unread) {
    let metric = s.name.get(PREFIX.len()..).unwrap_or_default();
    let b = scrapes.of(s.label("instance"));
    b.timestamp = Some(match b.timestamp {
        None => s.timestamp_ms,
        Some(seen) => seen.filter(|t| Some(*t) == s.timestamp_ms),
    });
    let span = line.span();
    let device = s.label("device").filter(|d| !d.is_empty());
    if metric == "info" {
        let Some(device) = device else {
            unread.line(line, "an adapter's info without its device");
            return;
        };
        let owned = |k: &str| s.label(k).map(str::to_owned);
        b.adapters.push(Adapter {
            device: device.to_owned(),
            board_id: owned("board_id"),
            firmware_version: owned("firmware_version"),
            hca_type: owned("hca_type"),
            span,
        });
        return;
    }
    let port = s.label("port").and_then(|p| p.parse::<u32>().ok());
    let (Some(device), Some(port)) = (device, port) else {
        unread.line(line, "an InfiniBand metric without its device and port");
        return;
    };
    let Some(text) = s.value else {
        unread.line(line, "a metric line without its value");
        return;
    };
    let value = float(text).unwrap_or(f64::NAN);
    match metric {
        "state_id" | "physical_state_id" | "rate_bytes_per_second" => {
            let Some(v) = count(value) else {
                unread.warn(
                    WarningKind::Unreadable,
                    span,
                    format!("`{metric}` is not a whole number"),
                );
                return;
            };
            let p = b.port_status(device, port, span);
            match metric {
                // 5 is ACTIVE_DEFER: active, as the text form's
                // `ACTIVE_DEFER` is read.
                "state_id" => {
                    p.state = Some(if v == 5 {
                        PortState::Active
                    } else {
                        PortState::parse(&v.to_string())
                    })
                }
                "physical_state_id" => p.physical_state = Some(PhysState::parse(&v.to_string())),
                // procfs made bytes per second of the Gb/s sysfs prints.
                #[allow(clippy::cast_precision_loss)]
                _ => p.rate_gbps = Some(v as f64 / 125_000_000.0),
            }
        }
        _ => match counter_metric(metric) {
            Some((file, octets)) => match count(value) {
                Some(v) => {
                    let v = if octets { v / 4 } else { v };
                    b.files.counter(device, port, file, v, span);
                }
                None => unread.warn(
                    WarningKind::Unreadable,
                    span,
                    format!("`{metric}` is not a count (`{text}`)"),
                ),
            },
            // No rule knows it: kept as printed.
            None => b
                .files
                .field(device, port, metric.to_owned(), text.to_owned(), span),
        },
    }
}

/// `node_exporter InfiniBand metrics of 2 host(s), 4 port(s): 84 counters; 1200 other metric line(s) set aside`.
#[must_use]
pub fn summary(m: &NodeExporter) -> String {
    let hosts = m.scrapes.iter().filter(|s| s.instance.is_some()).count();
    let mut ports = 0;
    let mut counters = 0;
    for s in &m.scrapes {
        let mut seen: Vec<(&str, Option<u32>)> = Vec::new();
        for b in &s.counters.blocks {
            counters += b.counters.len();
            let key = (b.port_id.as_str(), b.port);
            if !seen.contains(&key) {
                seen.push(key);
            }
        }
        for p in &s.ports {
            let key = (p.device.as_str(), Some(p.port));
            if !seen.contains(&key) {
                seen.push(key);
            }
        }
        ports += seen.len();
    }
    let mut out = format!("node_exporter InfiniBand metrics of {ports} port(s)");
    if hosts > 0 {
        out.push_str(&format!(" on {hosts} host(s)"));
    }
    out.push_str(&format!(": {counters} counters"));
    let other = m.other_metric_lines();
    if other > 0 {
        out.push_str(&format!("; {other} other metric line(s) set aside"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A metric line of this reader's prefix.
    fn sample(t: &str) -> Option<Sample<'_>> {
        crate::parse::prometheus::sample(t, PREFIX)
    }
    use crate::model::perfquery::{PerfAttribute, PerfBlock};
    use crate::model::{Counter, IbCounter};
    use crate::parse::lines_of;

    fn read(text: &str) -> Parsed<NodeExporter> {
        parse(&lines_of(text))
    }

    fn value(b: &PerfBlock, id: IbCounter) -> Option<Counter> {
        b.counter(id).copied()
    }

    #[test]
    fn a_scrape_reads_as_sysfs_counters_with_their_widths() {
        let p = read(
            "# HELP node_infiniband_symbol_error_total Number of minor link errors detected on one or more physical lanes.\n\
             # TYPE node_infiniband_symbol_error_total counter\n\
             node_infiniband_symbol_error_total{device=\"mlx5_0\",port=\"1\"} 65535\n\
             node_infiniband_link_downed_total{port=\"1\",device=\"mlx5_0\"} 2\n\
             node_infiniband_port_transmit_wait_total{device=\"mlx5_0\",port=\"1\"} 1.2345e+06\n\
             node_infiniband_port_data_transmitted_bytes_total{device=\"mlx5_0\",port=\"1\"} 1.717986918e+10\n\
             node_infiniband_out_of_buffer_drops_total{device=\"mlx5_0\",port=\"1\"} 7\n",
        );
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let [scrape] = p.value.scrapes.as_slice() else {
            panic!("{:?}", p.value)
        };
        assert_eq!(scrape.instance, None);
        let [b] = scrape.counters.blocks.as_slice() else {
            panic!("{:?}", scrape.counters)
        };
        assert_eq!(b.attribute, PerfAttribute::PortCounters);
        assert_eq!((b.port_id.as_str(), b.port), ("mlx5_0", Some(1)));
        let symbol = value(b, IbCounter::SymbolErrorCounter).unwrap();
        assert_eq!(
            (symbol.value, symbol.bits, symbol.saturated),
            (65535, 16, true)
        );
        assert_eq!(
            value(b, IbCounter::LinkDownedCounter),
            Some(Counter::new(2, 8))
        );
        assert_eq!(
            value(b, IbCounter::PortXmitWait),
            Some(Counter::new(1_234_500, 32))
        );
        // 17179869180 octets are 4294967295 words: the 32-bit field, full.
        let data = value(b, IbCounter::PortXmitData).unwrap();
        assert_eq!((data.value, data.saturated), (4_294_967_295, true));
        assert_eq!(
            b.fields
                .get("out_of_buffer_drops_total")
                .map(String::as_str),
            Some("7")
        );
        assert_eq!(b.span, LineSpan::new(3, 7));
    }

    #[test]
    fn legacy_metrics_are_the_64_bit_counters_and_outrank_the_32_bit_ones() {
        // Sorted by name, as the exposition prints them: `legacy_` first.
        let p = read(
            "node_infiniband_legacy_data_transmitted_bytes_total{device=\"mlx4_0\",port=\"2\"} 8e+12\n\
             node_infiniband_legacy_unicast_packets_received_total{device=\"mlx4_0\",port=\"2\"} 61148\n\
             node_infiniband_port_data_transmitted_bytes_total{device=\"mlx4_0\",port=\"2\"} 3733440\n",
        );
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let blocks = &p.value.scrapes[0].counters.blocks;
        let [basic, ext] = blocks.as_slice() else {
            panic!("{blocks:?}")
        };
        assert_eq!(ext.attribute, PerfAttribute::PortCountersExtended);
        assert_eq!(
            value(ext, IbCounter::PortXmitData),
            Some(Counter::new(2_000_000_000_000, 64))
        );
        assert_eq!(ext.xmit_data_octets(), Some(8_000_000_000_000));
        assert_eq!(
            value(ext, IbCounter::PortUnicastRcvPkts),
            Some(Counter::new(61148, 64))
        );
        assert_eq!(value(basic, IbCounter::PortXmitData), None);
        assert_eq!(
            basic
                .fields
                .get("counters/port_xmit_data")
                .map(String::as_str),
            Some("933360")
        );
    }

    #[test]
    fn instances_are_hosts_and_query_results_are_read() {
        let p = read(
            "node_infiniband_symbol_error_total{device=\"mlx5_0\", instance=\"gpu01:9100\", job=\"node\", port=\"1\"} => 3 @[1765101600.5]\n\
             node_infiniband_symbol_error_total{device=\"mlx5_0\", instance=\"[fe80::1]:9100\", job=\"node\", port=\"1\"} => 0 @[1765101600.5]\n\
             node_infiniband_state_id{device=\"mlx5_0\", instance=\"gpu01:9100\", job=\"node\", port=\"1\"} => 1 @[1765101600.5]\n\
             node_infiniband_physical_state_id{device=\"mlx5_0\",instance=\"gpu01:9100\",port=\"1\"}\t2 1765101600500\n\
             node_infiniband_rate_bytes_per_second{device=\"mlx5_0\",instance=\"gpu01:9100\",port=\"1\"} 5e+10 1765101600500\n\
             node_infiniband_info{board_id=\"MT_0000000223\",device=\"mlx5_0\",firmware_version=\"20.31.1014\",hca_type=\"MT4123\",instance=\"gpu01:9100\"} 1\n",
        );
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let hosts: Vec<Option<&str>> = p
            .value
            .scrapes
            .iter()
            .map(|s| s.instance.as_deref())
            .collect();
        assert_eq!(hosts, [Some("gpu01"), Some("fe80::1")]);
        let gpu01 = &p.value.scrapes[0];
        let [port] = gpu01.ports.as_slice() else {
            panic!("{:?}", gpu01.ports)
        };
        assert_eq!(port.state, Some(PortState::Down));
        assert_eq!(port.physical_state, Some(PhysState::Polling));
        assert_eq!(port.rate_gbps, Some(400.0));
        assert_eq!(port.span, LineSpan::new(3, 5));
        assert_eq!(gpu01.adapters[0].hca_type.as_deref(), Some("MT4123"));
        assert_eq!(
            gpu01.adapters[0].firmware_version.as_deref(),
            Some("20.31.1014")
        );
        // The info line has no time stamp: the scrape's time is not one.
        assert_eq!(gpu01.timestamp_ms, None);
        assert_eq!(p.value.scrapes[1].timestamp_ms, Some(1_765_101_600_500));
    }

    #[test]
    fn other_metrics_are_set_aside_in_runs_not_unread() {
        let p = read(
            "# HELP node_cpu_seconds_total Seconds the CPUs spent in each mode.\n\
             # TYPE node_cpu_seconds_total counter\n\
             node_cpu_seconds_total{cpu=\"0\",mode=\"idle\"} 123456.78\n\
             node_infiniband_symbol_error_total{device=\"mlx5_0\",port=\"1\"} 0\n\
             node_load1 0.52\n\
             go_goroutines 8\n\
             # EOF\n",
        );
        assert_eq!(p.warning_lines(), [(7, WarningKind::Unreadable)]);
        assert_eq!(
            p.value.other_metrics,
            [LineSpan::new(1, 3), LineSpan::new(5, 6)]
        );
        assert_eq!(p.value.other_metric_lines(), 5);
        assert!(summary(&p.value).contains("5 other metric line(s) set aside"));
    }

    #[test]
    fn a_cut_last_line_is_partial_and_bad_values_are_unread() {
        let p = read(
            "node_infiniband_symbol_error_total{device=\"mlx5_0\",port=\"1\"} 0\n\
             node_infiniband_link_downed_total{device=\"mlx5_0\",port=\"1\"}\n",
        );
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let b = &p.value.scrapes[0].counters.blocks[0];
        let partial = b.partial.as_ref().unwrap();
        assert_eq!(partial.reason, PartialReason::CutLine);
        assert_eq!(partial.missing, ["link_downed_total"]);
        let p = read(
            "node_infiniband_symbol_error_total{device=\"mlx5_0\",port=\"1\"} 0\n\
             node_infiniband_link_downed_total{device=\"mlx5_0\",po\n",
        );
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        assert_eq!(p.value.cut.as_ref().map(|c| c.line), Some(2));
        let p = read(
            "node_infiniband_symbol_error_total{device=\"mlx5_0\",port=\"1\"} NaN\n\
             node_infiniband_link_downed_total{device=\"mlx5_0\",port=\"1\"} -1\n\
             node_infiniband_link_downed_total{device=\"mlx5_0\"} 1\n\
             node_infiniband_link_downed_total{device=\"mlx5_0\",port=\"1\"}\n\
             node_infiniband_link_downed_total{device=\"mlx5_0\",port=\"1\"} 1\n",
        );
        let lines: Vec<usize> = p.warnings.iter().map(|w| w.span.first_line).collect();
        assert_eq!(lines, [1, 2, 3, 4]);
        assert!(p.value.scrapes[0].counters.blocks[0].partial.is_none());
    }

    #[test]
    fn label_values_keep_escapes_commas_and_braces() {
        let s =
            sample("node_infiniband_info{board_id=\"a,b}\\\"c\",device=\"mlx5_0\",} 1").unwrap();
        assert_eq!(s.label("board_id"), Some("a,b}\"c"));
        assert_eq!(s.label("device"), Some("mlx5_0"));
        assert_eq!(s.value, Some("1"));
        for no in [
            "node_infiniband_x{device=\"mlx5_0\" 1",
            "node_infiniband_x{device=mlx5_0} 1",
            "node_infiniband_x{device=\"mlx5_0\"} one",
            "node_infiniband_x{device=\"mlx5_0\"} 1 2 3",
            "node_guid: 0x0002c903000e0b72",
        ] {
            assert_eq!(sample(no).and_then(|s| s.value), None, "{no}");
        }
    }

    #[test]
    fn detection_wants_an_infiniband_metric_with_a_value() {
        let d = |text: &str| detect(&lines_of(text)).map(|b| b.key);
        assert_eq!(
            d("node_infiniband_symbol_error_total{port=\"1\",device=\"mlx5_0\"} 0").as_deref(),
            Some("prom|node_infiniband_symbol_error_total|device=mlx5_0|port=1")
        );
        // Labels in another order are the same series.
        assert_eq!(
            d("node_infiniband_symbol_error_total{device=\"mlx5_0\", port=\"1\"} => 5 @[1]"),
            d("node_infiniband_symbol_error_total{port=\"1\",device=\"mlx5_0\"} 0")
        );
        assert_eq!(
            d("# TYPE node_infiniband_link_downed_total counter").as_deref(),
            Some("prom|# TYPE node_infiniband_link_downed_total")
        );
        for no in [
            "node_cpu_seconds_total{cpu=\"0\",mode=\"idle\"} 1",
            "# HELP node_cpu_seconds_total Seconds.",
            "node_infiniband_symbol_error_total{device=\"mlx5_0\",port=\"1\"}",
            "node_infiniband_symbol_error_total is what we watch",
            "# node_infiniband_symbol_error_total",
        ] {
            assert_eq!(d(no), None, "{no}");
        }
    }

    #[test]
    fn command_wants_port_9100_or_an_infiniband_query() {
        assert!(command(&["curl", "-s", "localhost:9100/metrics"]));
        assert!(command(&[
            "curl",
            "http://node-exporter.monitoring.svc/metrics"
        ]));
        assert!(command(&[
            "promtool",
            "query",
            "instant",
            "http://p:9090",
            "rate(node_infiniband_symbol_error_total[5m])"
        ]));
        // Any exporter may serve `/metrics` on another port: no claim.
        assert!(!command(&["curl", "-s", "gpu07:8080/metrics"]));
        assert!(!command(&[
            "promtool",
            "query",
            "instant",
            "http://p:9090",
            "up"
        ]));
        assert!(!command(&["curl", "https://example.com"]));
        assert!(!command(&["promtool", "check", "config"]));
    }

    #[test]
    fn every_counter_metric_names_a_counter_file() {
        // A metric mapped to a name the sysfs reader does not know would
        // be dropped: every one must be recorded.
        for (metric, _, _) in COUNTER_METRICS {
            let mut files = PortCounterFiles::default();
            let (file, _) = counter_metric(metric).unwrap();
            assert!(
                files.counter("d", 1, file, 1, LineSpan::line(1)),
                "{metric}"
            );
        }
    }
}
