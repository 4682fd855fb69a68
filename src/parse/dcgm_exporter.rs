//! NVIDIA dcgm-exporter's GPU metrics, as fleet teams collect them: a
//! scrape (`curl -s localhost:9400/metrics`) or a query's result across
//! hosts (the Prometheus console, `promtool query instant`).
//!
//! ```text
//! # HELP DCGM_FI_DEV_XID_ERRORS Value of the last XID error encountered.
//! # TYPE DCGM_FI_DEV_XID_ERRORS gauge
//! DCGM_FI_DEV_XID_ERRORS{gpu="0",UUID="GPU-…",pci_bus_id="00000000:3B:00.0",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="gpu07",DCGM_FI_DRIVER_VERSION="550.90.07",err_code="79",err_msg="…"} 79
//! DCGM_FI_DEV_ROW_REMAP_FAILURE{gpu="0", UUID="GPU-…", instance="gpu07:9400", job="dcgm"} => 0 @[1765101600.123]
//! ```
//!
//! The line grammar (labels in any order, floats, time stamps, a query's
//! `=> v @[t]`) is `prometheus`'s, shared with
//! [`super::node_exporter`]. Which metrics exist is dcgm-exporter's CSV of
//! DCGM fields (`etc/default-counters.csv`, `etc/dcp-metrics-included.csv`):
//! each is a DCGM field id's name, its labels name the GPU.
//!
//! # Model: what the GPU rules already know
//! A metric whose meaning is exactly a field another reader gives a rule is
//! kept for that rule:
//! - `DCGM_FI_DEV_XID_ERRORS` is the *last* Xid code DCGM saw on the GPU
//!   (0: none), a gauge that keeps its value: DG006 judges the code by the
//!   Xid table, saying that when it happened and any earlier code are not
//!   shown.
//! - `DCGM_FI_DEV_ROW_REMAP_FAILURE` / `_PENDING` are the remapper's flags
//!   nvidia-smi prints (DG003), with `DCGM_FI_DEV_{UN,}CORRECTABLE_REMAPPED_ROWS`
//!   its counts.
//! - `DCGM_FI_DEV_ECC_DBE_VOL_TOTAL` is nvidia-smi's `Volatile Uncorr.
//!   ECC` (DG005).
//! - `DCGM_FI_DEV_NVLINK_*_ERROR_COUNT_TOTAL` are each GPU's lifetime
//!   totals over all its links: no link is named, and a lifetime total is
//!   history, so no rule judges one scrape of them: NV011 judges their
//!   rise between two scrapes of a host. (The legacy fields read 0 on Hopper and later whatever the
//!   links do: a zero says nothing either.)
//!
//! Every other `DCGM_FI_*` metric is kept as printed in the GPU's fields.
//! DCGM's "blank" values (`9223372036854775794`: the field is not
//! supported or has no value yet) are kept as printed, never read as
//! counts.
//!
//! # Hosts
//! An `instance` label (`gpu07:9400`) names the host, as node_exporter's
//! reader reads it; without one, dcgm-exporter's own `Hostname` label does.
//! Each host is a [`DcgmHost`] of its own, and the input layer makes each
//! one a section of that host.
//!
//! # Other metrics
//! Lines of other metrics (`go_*`, a metric of no GPU such as an
//! NVSwitch's) and their `# HELP`/`# TYPE` lines are set aside in
//! [`DcgmExporter::other_metrics`], counted once.

use crate::diag::WarningKind;
use crate::model::dcgm_exporter::{DcgmExporter, DcgmGpu, DcgmHost, Reading};
use crate::model::partial::{Partial, PartialReason};
use crate::parse::prometheus::{
    claims_command, count, float, host_of_instance, name_len, spans_of, Read, Sample,
};
use crate::parse::text::{trim, Unread};
use crate::parse::{Block, Line, Parsed, Spec};
use crate::span::LineSpan;
use std::collections::HashMap;

pub(crate) const FORMAT: Spec<DcgmExporter> = Spec {
    command,
    starts: |b| matches!(b, b'#' | b'D'),
    detect,
    parse,
    summary,
    attach_command: None,
    labels: &[],
};

/// The prefix of every DCGM metric (`DCGM_FI_…`, the exporter's own
/// `DCGM_EXP_…`).
const PREFIX: &str = "DCGM_";

/// DCGM's blank values start here (`DCGM_INT64_BLANK`, 0x7ffffffffffffff0):
/// not a reading.
const BLANK: u64 = 0x7fff_ffff_ffff_fff0;

/// `curl`/`wget` of dcgm-exporter's port 9400 or of a URL naming it
/// (`http://dcgm-exporter.monitoring.svc/metrics`), or a `promtool query`
/// of a DCGM metric (`prometheus::claims_command`).
fn command(argv: &[&str]) -> bool {
    claims_command(
        argv,
        |w| w.contains(":9400") || w.to_ascii_lowercase().contains("dcgm"),
        PREFIX,
    )
}

/// A DCGM metric line (with a value) or its `# HELP`/`# TYPE`.
fn detect(lines: &[Line<'_>]) -> Option<Block> {
    crate::parse::prometheus::detect(lines, PREFIX, "dcgm")
}

/// The host a line names: its `instance` (as node_exporter's reader reads
/// it), else dcgm-exporter's `Hostname`.
fn host_of(s: &Sample<'_>) -> Option<String> {
    s.label("instance")
        .map(host_of_instance)
        .or_else(|| s.label("Hostname"))
        .filter(|h| !h.is_empty())
        .map(str::to_owned)
}

/// How a GPU is known on its host: its index, else its UUID.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum GpuKey {
    Index(u32),
    Uuid(String),
}

fn gpu_key(s: &Sample<'_>) -> Option<GpuKey> {
    if let Some(i) = s.label("gpu").and_then(|g| g.parse::<u32>().ok()) {
        return Some(GpuKey::Index(i));
    }
    s.label("UUID")
        .or_else(|| s.label("uuid"))
        .filter(|u| !u.is_empty())
        .map(|u| GpuKey::Uuid(u.to_owned()))
}

/// One host's metrics as they are read.
#[derive(Default)]
struct Building {
    host: Option<String>,
    gpus: Vec<DcgmGpu>,
    index: HashMap<GpuKey, usize>,
    /// The time stamps seen: `None` before the first, `Some(None)` once
    /// two differ or a sample has none.
    timestamp: Option<Option<i64>>,
}

impl Building {
    /// The GPU `s` names, its identity labels recorded.
    fn gpu(&mut self, key: GpuKey, s: &Sample<'_>, span: LineSpan) -> &mut DcgmGpu {
        let next = self.gpus.len();
        let at = *self.index.entry(key).or_insert(next);
        if at == next {
            self.gpus.push(DcgmGpu {
                span,
                ..DcgmGpu::default()
            });
        }
        #[allow(clippy::indexing_slicing)] // a position of `gpus`
        let g = &mut self.gpus[at];
        g.span = g.span.join(span);
        let owned = |k: &str| s.label(k).filter(|v| !v.is_empty()).map(str::to_owned);
        if g.index.is_none() {
            g.index = s.label("gpu").and_then(|v| v.parse().ok());
        }
        for (slot, keys) in [
            (&mut g.uuid, &["UUID", "uuid"][..]),
            (&mut g.pci_bus_id, &["pci_bus_id"][..]),
            (&mut g.device, &["device"][..]),
            (&mut g.model_name, &["modelName"][..]),
            (&mut g.driver_version, &["DCGM_FI_DRIVER_VERSION"][..]),
        ] {
            if slot.is_none() {
                *slot = keys.iter().find_map(|k| owned(k));
            }
        }
        g
    }

    fn finish(self) -> DcgmHost {
        DcgmHost {
            host: self.host,
            gpus: self.gpus,
            timestamp_ms: self.timestamp.flatten(),
        }
    }
}

/// The hosts read, in the order first seen.
#[derive(Default)]
struct Hosts {
    list: Vec<Building>,
    index: HashMap<Option<String>, usize>,
}

impl Hosts {
    fn of(&mut self, host: Option<String>) -> &mut Building {
        let next = self.list.len();
        let at = *self.index.entry(host.clone()).or_insert(next);
        if at == next {
            self.list.push(Building {
                host,
                ..Building::default()
            });
        }
        #[allow(clippy::indexing_slicing)] // a position of `list`
        &mut self.list[at]
    }
}

/// Reads dcgm-exporter metric lines.
#[must_use]
pub fn parse(lines: &[Line<'_>]) -> Parsed<DcgmExporter> {
    let mut hosts = Hosts::default();
    let mut unread = Unread::default();
    let mut other: Vec<usize> = Vec::new();
    let mut cut: Option<Partial> = None;
    let last_line = crate::parse::text::last_text_line(lines);
    for line in lines.iter().filter(|l| !l.is_blank()) {
        let t = trim(line.text());
        let read = crate::parse::prometheus::read(t, PREFIX);
        let is_last = Some(line.number) == last_line;
        let cut_here = || Partial::new(PartialReason::CutLine, vec![t.to_owned()], line.number);
        match read {
            Some(Read::Meta(name)) if name.starts_with(PREFIX) => {}
            Some(Read::Meta(_)) => other.push(line.number),
            // The paste ends before the value: the GPU's, or the section's
            // when the line names no GPU.
            Some(Read::Sample(s)) if s.name.starts_with(PREFIX) && s.value.is_none() && is_last => {
                match gpu_key(&s) {
                    Some(key) => {
                        let g = hosts.of(host_of(&s)).gpu(key, &s, line.span());
                        g.partial = Some(Partial::new(
                            PartialReason::CutLine,
                            vec![s.name.to_owned()],
                            line.number,
                        ));
                    }
                    None => cut = Some(cut_here()),
                }
            }
            // A metric of no GPU (an NVSwitch's, a CPU's): another entity.
            Some(Read::Sample(s))
                if s.name.starts_with(PREFIX) && s.value.is_some() && gpu_key(&s).is_none() =>
            {
                other.push(line.number);
            }
            Some(Read::Sample(s)) if s.name.starts_with(PREFIX) => {
                read_sample(&s, line, &mut hosts, &mut unread);
            }
            Some(Read::Sample(s)) if s.value.is_some() => other.push(line.number),
            _ if is_last && may_begin_metric_line(t) => cut = Some(cut_here()),
            _ => unread.line(line, "not a Prometheus metric line"),
        }
    }
    Parsed {
        value: DcgmExporter {
            hosts: hosts.list.into_iter().map(Building::finish).collect(),
            other_metrics: spans_of(&other),
            cut,
        },
        warnings: unread.finish(),
    }
}

/// Whether `t`, the paste's last line cut short, may be the start of a
/// DCGM metric line (`DCGM_FI_DEV_XID_ERRORS{gpu="0",UU`, `DCGM_F`).
pub(crate) fn may_begin_metric_line(t: &str) -> bool {
    let n = name_len(t);
    let name = t.get(..n).unwrap_or_default();
    name.len() >= 6
        && name.starts_with(PREFIX)
        && t.get(n..)
            .is_some_and(|r| r.is_empty() || r.starts_with('{'))
}

/// What a metric is to the model.
enum Slot {
    LastXid,
    RemapFailure,
    RemapPending,
    CorrectableRows,
    UncorrectableRows,
    DbeVolatile,
    Nvlink(&'static str),
}

fn slot(name: &str) -> Option<Slot> {
    Some(match name {
        "DCGM_FI_DEV_XID_ERRORS" => Slot::LastXid,
        "DCGM_FI_DEV_ROW_REMAP_FAILURE" => Slot::RemapFailure,
        "DCGM_FI_DEV_ROW_REMAP_PENDING" => Slot::RemapPending,
        "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS" => Slot::CorrectableRows,
        "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS" => Slot::UncorrectableRows,
        "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL" => Slot::DbeVolatile,
        "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL" => Slot::Nvlink("crc_flit"),
        "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL" => Slot::Nvlink("crc_data"),
        "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL" => Slot::Nvlink("replay"),
        "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL" => Slot::Nvlink("recovery"),
        _ => return None,
    })
}

/// Records one GPU metric line.
fn read_sample(s: &Sample<'_>, line: &Line<'_>, hosts: &mut Hosts, unread: &mut Unread) {
    let (Some(key), Some(text)) = (gpu_key(s), s.value) else {
        unread.line(line, "a metric line without its value");
        return;
    };
    let b = hosts.of(host_of(s));
    b.timestamp = Some(match b.timestamp {
        None => s.timestamp_ms,
        Some(seen) => seen.filter(|t| Some(*t) == s.timestamp_ms),
    });
    let span = line.span();
    let g = b.gpu(key, s, span);
    let Some(slot) = slot(s.name) else {
        g.fields.insert(s.name.to_owned(), text.to_owned());
        return;
    };
    let value = float(text).and_then(count);
    let reading = match value {
        Some(v) if v >= BLANK => {
            // DCGM's blank: not supported, no value yet.
            g.fields.insert(s.name.to_owned(), text.to_owned());
            return;
        }
        Some(value) => Reading { value, span },
        None => {
            unread.warn(
                WarningKind::Unreadable,
                span,
                format!("`{}` is not a count (`{text}`)", s.name),
            );
            return;
        }
    };
    let into = match slot {
        Slot::LastXid => &mut g.last_xid,
        Slot::RemapFailure => &mut g.row_remap_failure,
        Slot::RemapPending => &mut g.row_remap_pending,
        Slot::CorrectableRows => &mut g.correctable_remapped_rows,
        Slot::UncorrectableRows => &mut g.uncorrectable_remapped_rows,
        Slot::DbeVolatile => &mut g.ecc_dbe_volatile,
        Slot::Nvlink(name) => {
            g.nvlink_totals.insert(name.to_owned(), reading);
            return;
        }
    };
    *into = Some(reading);
}

/// `dcgm-exporter metrics of 8 GPU(s) on 2 host(s); 40 other metric line(s) set aside`.
#[must_use]
pub fn summary(m: &DcgmExporter) -> String {
    let hosts = m.hosts.iter().filter(|h| h.host.is_some()).count();
    let gpus: usize = m.hosts.iter().map(|h| h.gpus.len()).sum();
    let mut out = format!("dcgm-exporter metrics of {gpus} GPU(s)");
    if hosts > 0 {
        out.push_str(&format!(" on {hosts} host(s)"));
    }
    let other = m.other_metric_lines();
    if other > 0 {
        out.push_str(&format!("; {other} other metric line(s) set aside"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::lines_of;

    fn read(text: &str) -> Parsed<DcgmExporter> {
        parse(&lines_of(text))
    }

    const LABELS: &str = "gpu=\"1\",UUID=\"GPU-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9\",pci_bus_id=\"00000000:3B:00.0\",device=\"nvidia1\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"gpu07\",DCGM_FI_DRIVER_VERSION=\"550.90.07\"";

    #[test]
    fn a_scrape_reads_each_gpu_with_its_identity_and_the_fields_rules_know() {
        let text = format!(
            "# HELP DCGM_FI_DEV_XID_ERRORS Value of the last XID error encountered.\n\
             # TYPE DCGM_FI_DEV_XID_ERRORS gauge\n\
             DCGM_FI_DEV_XID_ERRORS{{{LABELS},err_code=\"79\",err_msg=\"GPU has fallen off the bus\"}} 79\n\
             DCGM_FI_DEV_ROW_REMAP_FAILURE{{{LABELS}}} 0\n\
             DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS{{{LABELS}}} 2\n\
             DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{{{LABELS}}} 1\n\
             DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL{{{LABELS}}} 1.5e+03\n\
             DCGM_FI_DEV_MEMORY_TEMP{{{LABELS}}} 9223372036854775794\n\
             DCGM_FI_DEV_GPU_TEMP{{{LABELS}}} 41\n"
        );
        let p = read(&text);
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let [host] = p.value.hosts.as_slice() else {
            panic!("{:?}", p.value)
        };
        assert_eq!(host.host.as_deref(), Some("gpu07"));
        let [g] = host.gpus.as_slice() else {
            panic!("{:?}", host.gpus)
        };
        assert_eq!(g.index, Some(1));
        assert_eq!(g.pci_bus_id.as_deref(), Some("00000000:3B:00.0"));
        assert_eq!(g.device.as_deref(), Some("nvidia1"));
        assert_eq!(g.model_name.as_deref(), Some("NVIDIA H100 80GB HBM3"));
        assert_eq!(g.driver_version.as_deref(), Some("550.90.07"));
        assert_eq!(
            g.last_xid.map(|r| (r.value, r.span)),
            Some((79, LineSpan::line(3)))
        );
        assert_eq!(g.row_remap_failure.map(|r| r.value), Some(0));
        assert_eq!(g.uncorrectable_remapped_rows.map(|r| r.value), Some(2));
        assert_eq!(g.ecc_dbe_volatile.map(|r| r.value), Some(1));
        assert_eq!(g.nvlink_totals.get("replay").map(|r| r.value), Some(1500));
        // A blank is kept as printed, not read as a temperature.
        assert_eq!(
            g.fields.get("DCGM_FI_DEV_MEMORY_TEMP").map(String::as_str),
            Some("9223372036854775794")
        );
        assert_eq!(
            g.fields.get("DCGM_FI_DEV_GPU_TEMP").map(String::as_str),
            Some("41")
        );
        assert_eq!(g.span, LineSpan::new(3, 9));
    }

    #[test]
    fn instance_names_the_host_before_hostname_and_query_results_are_read() {
        let p = read(
            "DCGM_FI_DEV_XID_ERRORS{gpu=\"0\", UUID=\"GPU-a\", Hostname=\"dcgm-pod-x\", instance=\"gpu01:9400\", job=\"dcgm\"} => 0 @[1765101600.5]\n\
             DCGM_FI_DEV_XID_ERRORS{gpu=\"0\", UUID=\"GPU-b\", Hostname=\"gpu02\", job=\"dcgm\"} => 48 @[1765101600.5]\n\
             DCGM_FI_DEV_XID_ERRORS{instance=\"gpu01:9400\", gpu=\"1\", UUID=\"GPU-c\"} => 0 @[1765101600.5]\n",
        );
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let hosts: Vec<(Option<&str>, usize)> = p
            .value
            .hosts
            .iter()
            .map(|h| (h.host.as_deref(), h.gpus.len()))
            .collect();
        assert_eq!(hosts, [(Some("gpu01"), 2), (Some("gpu02"), 1)]);
        assert_eq!(p.value.hosts[0].timestamp_ms, Some(1_765_101_600_500));
        assert_eq!(p.value.hosts[1].gpus[0].last_xid.map(|r| r.value), Some(48));
    }

    #[test]
    fn other_metrics_and_gpu_less_metrics_are_set_aside_not_unread() {
        let p = read(
            "# HELP go_goroutines Number of goroutines.\n\
             # TYPE go_goroutines gauge\n\
             go_goroutines 8\n\
             DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",UUID=\"GPU-a\"} 40\n\
             DCGM_FI_DEV_NVSWITCH_LINK_STATUS{nvswitch=\"0\",nvlink=\"1\"} 1\n\
             this is prose\n\
             DCGM_FI_DEV_GPU_TEMP{gpu=\"1\",UUID=\"GPU-b\"} 41\n",
        );
        assert_eq!(p.warning_lines(), [(6, WarningKind::Unreadable)]);
        assert_eq!(
            p.value.other_metrics,
            [LineSpan::new(1, 3), LineSpan::line(5)]
        );
        assert!(summary(&p.value).contains("2 GPU(s); 4 other metric line(s)"));
    }

    #[test]
    fn a_cut_last_line_is_partial_and_bad_values_are_unread() {
        let p = read(
            "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",UUID=\"GPU-a\"} 40\n\
             DCGM_FI_DEV_XID_ERRORS{gpu=\"0\",UUID=\"GPU-a\"}\n",
        );
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let g = &p.value.hosts[0].gpus[0];
        assert_eq!(
            g.partial.as_ref().map(|c| c.missing.clone()),
            Some(vec!["DCGM_FI_DEV_XID_ERRORS".to_owned()])
        );
        assert_eq!(g.last_xid, None);
        let p = read(
            "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",UUID=\"GPU-a\"} 40\n\
             DCGM_FI_DEV_XID_ERRORS{gpu=\"0\",UU\n",
        );
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        assert_eq!(p.value.cut.as_ref().map(|c| c.line), Some(2));
        let p = read(
            "DCGM_FI_DEV_XID_ERRORS{gpu=\"0\",UUID=\"GPU-a\"} NaN\n\
             DCGM_FI_DEV_XID_ERRORS{gpu=\"0\",UUID=\"GPU-a\"} -1\n\
             DCGM_FI_DEV_XID_ERRORS{gpu=\"0\",UUID=\"GPU-a\"}\n\
             DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",UUID=\"GPU-a\"} 40\n",
        );
        let lines: Vec<usize> = p.warnings.iter().map(|w| w.span.first_line).collect();
        assert_eq!(lines, [1, 2, 3]);
        assert!(p.value.hosts[0].gpus[0].partial.is_none());
    }

    #[test]
    fn detection_wants_a_dcgm_metric_with_a_value() {
        let d = |text: &str| detect(&lines_of(text)).map(|b| b.key);
        assert_eq!(
            d("DCGM_FI_DEV_XID_ERRORS{UUID=\"GPU-a\",gpu=\"0\"} 0").as_deref(),
            Some("dcgm|DCGM_FI_DEV_XID_ERRORS|UUID=GPU-a|gpu=0")
        );
        assert_eq!(
            d("DCGM_FI_DEV_XID_ERRORS{gpu=\"0\", UUID=\"GPU-a\"} => 5 @[1]"),
            d("DCGM_FI_DEV_XID_ERRORS{UUID=\"GPU-a\",gpu=\"0\"} 0")
        );
        assert_eq!(
            d("# TYPE DCGM_FI_DEV_XID_ERRORS gauge").as_deref(),
            Some("dcgm|# TYPE DCGM_FI_DEV_XID_ERRORS")
        );
        for no in [
            "node_infiniband_symbol_error_total{device=\"mlx5_0\",port=\"1\"} 0",
            "DCGM_FI_DEV_XID_ERRORS{gpu=\"0\"}",
            "DCGM_FI_DEV_XID_ERRORS is what we alert on",
            "# HELP go_goroutines Number of goroutines.",
        ] {
            assert_eq!(d(no), None, "{no}");
        }
    }

    #[test]
    fn command_wants_port_9400_or_a_dcgm_query() {
        assert!(command(&["curl", "-s", "localhost:9400/metrics"]));
        assert!(command(&[
            "curl",
            "-s",
            "http://dcgm-exporter.monitoring.svc/metrics"
        ]));
        assert!(command(&[
            "promtool",
            "query",
            "instant",
            "http://p:9090",
            "DCGM_FI_DEV_XID_ERRORS"
        ]));
        assert!(!command(&["curl", "-s", "localhost:9100/metrics"]));
        assert!(!command(&[
            "promtool",
            "query",
            "instant",
            "http://p:9090",
            "node_load1"
        ]));
    }
}
