//! Tool models → neutral readings, link capacities and time stamps.
//!
//! The only place in `stats` that knows tool formats. Each function takes one
//! parsed section and says what it contributes: counters (perfquery,
//! `nvidia-smi nvlink -e/-ec/-gt`), capacities (ibstat rate, iblinkinfo
//! width × speed, `nvidia-smi nvlink -s`), or a time (`date`).

use super::sample::{CounterUnit, Direction, Layer, Role, Subject};
use super::CounterSource;
use crate::input::Section;
use crate::model::dcgmi_nvlink::DcgmiNvlinkErrors;
use crate::model::iblinkinfo::Iblinkinfo;
use crate::model::ibqueryerrors::Ibqueryerrors;
use crate::model::ibstat::Ibstat;
use crate::model::nvlink::Nvlink;
use crate::model::perfquery::Perfquery;
use crate::model::smi_query::SmiQuery;
use crate::model::Counter;
use crate::parse::SectionData;
use crate::span::LineSpan;
use serde::Serialize;

/// Where a link's capacity is known from.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum LinkKey {
    /// An InfiniBand port addressed by LID (fabric-wide).
    Lid { lid: u32, port: u32 },
    /// A CA port by name on a host.
    CaPort {
        host: Option<String>,
        ca: String,
        port: u32,
    },
    /// An NVLink of a GPU on a host.
    Nvlink {
        host: Option<String>,
        gpu: u32,
        link: u32,
    },
}

/// Capacity of one link in one direction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Capacity {
    /// Data rate per direction, Gb/s.
    pub gbit_per_second: f64,
    /// How it was found (`ibstat Rate`, `iblinkinfo 4X × 25.78125 Gb/s per lane`…).
    pub source: String,
    /// Lines it was read from.
    pub span: LineSpan,
}

/// One counter reading of a section in the neutral form: its subject an
/// index into the section's subjects and its name borrowed from the section (a host has a
/// thousand readings but a few hundred subjects: neither is copied per reading).
#[derive(Debug)]
pub(crate) struct Reading<'d> {
    /// Position of the subject in [`Extracted::subjects`].
    pub subject: usize,
    /// Where the counter set comes from.
    pub source: CounterSource,
    /// The counter's name as the model keys it (lane suffix removed).
    pub name: &'d str,
    /// Value, width, saturation.
    pub counter: Counter,
    /// What one count stands for.
    pub unit: CounterUnit,
    /// What the counter tells.
    pub role: Role,
    /// Input lines it was read from.
    pub span: LineSpan,
}

/// What one section contributes.
#[derive(Debug, Default)]
pub(crate) struct Extracted<'d> {
    /// The subjects the readings name, each once per place it is read.
    pub subjects: Vec<Subject>,
    pub samples: Vec<Reading<'d>>,
    pub capacities: Vec<(LinkKey, Capacity)>,
    /// `(wall-clock seconds, offset from UTC if known, text, span)`.
    pub time: Option<(f64, Option<f64>, String, LineSpan)>,
}

impl Extracted<'_> {
    /// Adds a subject; its position names it in readings.
    fn subject(&mut self, subject: Subject) -> usize {
        self.subjects.push(subject);
        self.subjects.len() - 1
    }
}

/// Reads what a section offers to the statistics.
pub(crate) fn extract(section: &Section) -> Extracted<'_> {
    let host = section.host.clone();
    let mut out = Extracted::default();
    match &section.data {
        SectionData::Perfquery(p) => perfquery(p, host.as_ref(), &mut out),
        SectionData::Nvlink(n) => nvlink(n, host.as_ref(), &mut out),
        SectionData::Ibstat(i) => ibstat(i, host.as_ref(), &mut out),
        SectionData::Iblinkinfo(i) => iblinkinfo(i, &mut out),
        SectionData::Ibqueryerrors(q) => ibqueryerrors(q, host.as_ref(), &mut out),
        SectionData::DcgmiNvlinkErrors(d) => dcgmi_nvlink(d, host.as_ref(), &mut out),
        SectionData::SmiQuery(q) => out.time = smi_query_time(q, section.span),
        SectionData::Date(d) => {
            out.time = d.stamp.as_ref().map(|s| {
                (
                    s.wall_clock_seconds,
                    s.timestamp_unix(),
                    s.text.clone(),
                    s.span,
                )
            });
        }
        _ => {}
    }
    out
}

/// `nvidia-smi -q` prints `Timestamp : Mon Nov 30 00:53:23 2026` in the
/// host's zone without naming it: a wall-clock reading, good for intervals
/// between readings of the same host.
#[allow(clippy::cast_precision_loss)] // seconds since 1970 fit f64 exactly
fn smi_query_time(q: &SmiQuery, span: LineSpan) -> Option<(f64, Option<f64>, String, LineSpan)> {
    let seconds = q.timestamp_unix? as f64;
    let text = q.timestamp.clone().unwrap_or_default();
    Some((
        seconds,
        None,
        format!("nvidia-smi -q Timestamp {text}"),
        span,
    ))
}

/// `ibqueryerrors` lists, per port, the counters above threshold (or all
/// data counters with `--counters`); ports are named by node description.
fn ibqueryerrors<'d>(q: &'d Ibqueryerrors, host: Option<&String>, out: &mut Extracted<'d>) {
    for node in &q.nodes {
        for port in &node.ports {
            let subject = out.subject(Subject {
                host: host.cloned(),
                device: Some(node.desc.clone()),
                lid: port.link.as_ref().map(|l| l.lid),
                port: Some(port.port),
                ..Subject::default()
            });
            for (name, counter) in port.counters.iter().map(|(id, c)| (id.name(), c)) {
                let (unit, role) = perf_unit_and_role(name);
                out.samples.push(Reading {
                    subject,
                    source: CounterSource::Ibqueryerrors,
                    name,
                    counter: *counter,
                    unit,
                    role,
                    span: port.span,
                });
            }
        }
    }
}

/// `dcgmi nvlink -e`: per-link CRC, replay and recovery counts (width not printed).
fn dcgmi_nvlink(d: &DcgmiNvlinkErrors, host: Option<&String>, out: &mut Extracted<'_>) {
    let Some(gpu) = d.gpu else { return };
    for link in &d.links {
        let subject = out.subject(Subject {
            host: host.cloned(),
            gpu: Some(gpu),
            link: Some(link.link),
            ..Subject::default()
        });
        let counters = [
            ("crc_flit_errors", link.crc_flit, Role::BitErrors),
            ("crc_data_errors", link.crc_data, Role::BitErrors),
            ("replay_errors", link.replay, Role::Errors),
            ("recovery_errors", link.recovery, Role::Errors),
        ];
        for (name, value, role) in counters {
            let Some(value) = value else { continue };
            out.samples.push(Reading {
                subject,
                source: CounterSource::DcgmiNvlink,
                name,
                counter: Counter::unknown_width(value),
                unit: CounterUnit::Events,
                role,
                span: link.span,
            });
        }
    }
}

/// PortXmitData/PortRcvData (and the per-SL data counters) count 4-octet words.
fn perf_unit_and_role(name: &str) -> (CounterUnit, Role) {
    let traffic = |direction| Role::Traffic {
        direction,
        layer: Layer::Data,
    };
    if name.starts_with("PortXmitData") {
        return (CounterUnit::FourOctets, traffic(Direction::Tx));
    }
    if name.starts_with("PortRcvData") {
        return (CounterUnit::FourOctets, traffic(Direction::Rx));
    }
    if name.contains("Pkts") || name.contains("Packets") {
        return (CounterUnit::Packets, Role::Other);
    }
    if name.starts_with("SymbolError") {
        return (CounterUnit::Events, Role::BitErrors);
    }
    if name.contains("XmitWait") || name.contains("Wait") {
        return (CounterUnit::Events, Role::Congestion);
    }
    if [
        "error", "discard", "dropped", "downed", "recovery", "fec", "overrun", "block",
    ]
    .iter()
    .any(|w| contains_ignoring_ascii_case(name, w))
    {
        return (CounterUnit::Events, Role::Errors);
    }
    (CounterUnit::Events, Role::Other)
}

/// Whether `haystack` contains `needle` (lower-case ASCII) when ASCII
/// letters are compared without case: `to_ascii_lowercase().contains()`
/// without a copy of the name per reading.
fn contains_ignoring_ascii_case(haystack: &str, needle: &str) -> bool {
    let needle = needle.as_bytes();
    needle.is_empty()
        || haystack
            .as_bytes()
            .windows(needle.len())
            .any(|w| w.eq_ignore_ascii_case(needle))
}

/// `ErrorDetectionCounterLane[3]` → (`ErrorDetectionCounterLane`, Some(3)).
fn lane_suffix(name: &str) -> (&str, Option<u32>) {
    if let Some(open) = name.rfind('[') {
        if let (Some(inner), Some(base)) = (
            name.get(open + 1..name.len().saturating_sub(1)),
            name.get(..open),
        ) {
            if name.ends_with(']') {
                if let Ok(lane) = inner.parse() {
                    return (base, Some(lane));
                }
            }
        }
    }
    (name, None)
}

fn perfquery<'d>(p: &'d Perfquery, host: Option<&String>, out: &mut Extracted<'d>) {
    // A block without its header names no port: two of them in two
    // snapshots may be different ports, so no rate or peer group uses them.
    let headed = p.blocks.iter().filter(|b| {
        b.partial
            .as_ref()
            .is_none_or(|x| x.reason != crate::model::partial::PartialReason::NoHeader)
    });
    for block in headed {
        out.samples.reserve(block.counters.len());
        let source = CounterSource::Perfquery(block.attribute.clone());
        let port = Subject {
            host: host.cloned(),
            lid: block.lid,
            port: block.port,
            device: if block.lid.is_none() {
                Some(block.port_id.clone())
            } else {
                None
            },
            ..Subject::default()
        };
        // The block's subject, and one per lane its per-lane counters name.
        let mut whole: Option<usize> = None;
        let mut lanes: Vec<(u32, usize)> = Vec::new();
        for (name, counter) in block.counters.iter().map(|(id, c)| (id.name(), c)) {
            let (base, lane) = lane_suffix(name);
            let (unit, role) = perf_unit_and_role(base);
            let subject = match lane {
                None => *whole.get_or_insert_with(|| out.subject(port.clone())),
                Some(lane) => match lanes.iter().find(|(l, _)| *l == lane) {
                    Some((_, at)) => *at,
                    None => {
                        let at = out.subject(Subject {
                            lane: Some(lane),
                            ..port.clone()
                        });
                        lanes.push((lane, at));
                        at
                    }
                },
            };
            out.samples.push(Reading {
                subject,
                source: source.clone(),
                name: base,
                counter: *counter,
                unit,
                role,
                span: block.span,
            });
        }
    }
}

fn nvlink_role(name: &str) -> (CounterUnit, Role) {
    let traffic = |direction, layer| (CounterUnit::Kib, Role::Traffic { direction, layer });
    match name {
        "data_tx_kib" => traffic(Direction::Tx, Layer::Data),
        "data_rx_kib" => traffic(Direction::Rx, Layer::Data),
        "raw_tx_kib" => traffic(Direction::Tx, Layer::Raw),
        "raw_rx_kib" => traffic(Direction::Rx, Layer::Raw),
        "tx0_kib" | "tx1_kib" => traffic(Direction::Tx, Layer::Data),
        "rx0_kib" | "rx1_kib" => traffic(Direction::Rx, Layer::Data),
        "crc_errors" | "crc_flit_errors" | "crc_data_errors" => {
            (CounterUnit::Events, Role::BitErrors)
        }
        n if n.ends_with("_kib") => (CounterUnit::Kib, Role::Other),
        _ => (CounterUnit::Events, Role::Errors),
    }
}

fn nvlink<'d>(n: &'d Nvlink, host: Option<&String>, out: &mut Extracted<'d>) {
    // The words of the last link speed: a host's links mostly share one.
    let mut speed_words: Option<(u64, String)> = None;
    // Links of an unknown GPU (no header in the paste) cannot be matched
    // with the same GPU in another snapshot: no rate is computed for them.
    for gpu in n.gpus.iter().filter(|g| !g.headerless) {
        for link in &gpu.links {
            out.samples.reserve(link.counters.len() + link.lanes.len());
            let subject = Subject {
                host: host.cloned(),
                gpu: Some(gpu.index),
                link: Some(link.link),
                ..Subject::default()
            };
            if let Some(speed) = link.speed_gb_per_s {
                let source = match &speed_words {
                    Some((bits, words)) if *bits == speed.to_bits() => words.clone(),
                    _ => {
                        let words =
                            format!("nvidia-smi nvlink -s: {speed} GB/s per direction × 8 bits");
                        speed_words = Some((speed.to_bits(), words.clone()));
                        words
                    }
                };
                out.capacities.push((
                    LinkKey::Nvlink {
                        host: host.cloned(),
                        gpu: gpu.index,
                        link: link.link,
                    },
                    Capacity {
                        gbit_per_second: speed * 8.0,
                        source,
                        span: link.span,
                    },
                ));
            }
            let lanes = link.lanes.iter().map(|lane| Subject {
                lane: Some(lane.lane),
                ..subject.clone()
            });
            let lanes: Vec<usize> = lanes.map(|s| out.subject(s)).collect();
            let at = if link.counters.is_empty() {
                None
            } else {
                Some(out.subject(subject))
            };
            for (name, counter) in link.counters.iter().map(|(id, c)| (id.name(), c)) {
                let Some(subject) = at else { break };
                let (unit, role) = nvlink_role(name);
                out.samples.push(Reading {
                    subject,
                    source: CounterSource::NvidiaSmiNvlink,
                    name,
                    counter: *counter,
                    unit,
                    role,
                    span: link.span,
                });
            }
            for (lane, subject) in link.lanes.iter().zip(lanes) {
                let counter = Counter {
                    saturated: lane.ecc_correction_count.saturated || lane.overflow,
                    ..lane.ecc_correction_count
                };
                out.samples.push(Reading {
                    subject,
                    source: CounterSource::NvidiaSmiNvlink,
                    name: "ecc_correction_count",
                    counter,
                    unit: CounterUnit::Events,
                    role: Role::BitErrors,
                    span: link.span,
                });
            }
        }
    }
}

fn ibstat(i: &Ibstat, host: Option<&String>, out: &mut Extracted<'_>) {
    for ca in &i.cas {
        for port in &ca.ports {
            let Some(rate) = port.rate_gbps else { continue };
            // SDR/DDR/QDR rates (10/20/40) are signalling rates of an 8b/10b code.
            let eight_ten = rate <= 40.0 && !port.fdr10;
            let capacity = Capacity {
                gbit_per_second: if eight_ten { rate * 0.8 } else { rate },
                source: if eight_ten {
                    format!(
                        "ibstat {} port {} Rate: {rate} Gb/s × 0.8 (8b/10b)",
                        ca.name, port.number
                    )
                } else {
                    format!("ibstat {} port {} Rate: {rate} Gb/s", ca.name, port.number)
                },
                span: port.span,
            };
            if let Some(lid) = port.base_lid.filter(|l| *l != 0 && *l != 65_535) {
                out.capacities.push((
                    LinkKey::Lid {
                        lid,
                        port: port.number,
                    },
                    capacity.clone(),
                ));
            }
            out.capacities.push((
                LinkKey::CaPort {
                    host: host.cloned(),
                    ca: ca.name.clone(),
                    port: port.number,
                },
                capacity,
            ));
        }
    }
}

/// Data rate of one lane from its signalling rate: 8b/10b up to QDR
/// (10 Gb/s), 64b/66b from FDR10/FDR (10.3125, 14.0625) and EDR (25.78125);
/// PAM4 rates (HDR 53.125, NDR 106.25) are quoted here as the 64b/66b figure,
/// which matches the nominal 200/400 Gb/s within 3 %.
fn lane_data_gbps(signalling: f64) -> f64 {
    if signalling <= 10.0 {
        signalling * 0.8
    } else {
        signalling * 64.0 / 66.0
    }
}

fn iblinkinfo(info: &Iblinkinfo, out: &mut Extracted<'_>) {
    for node in &info.nodes {
        for port in &node.ports {
            let (Some(lanes), Some(speed)) = (
                port.width.as_ref().and_then(|w| w.lanes),
                port.speed_gbps_per_lane,
            ) else {
                continue;
            };
            let capacity = Capacity {
                gbit_per_second: f64::from(lanes) * lane_data_gbps(speed),
                source: format!(
                    "iblinkinfo {lanes}X × {speed} Gb/s per lane (line-code overhead removed)"
                ),
                span: port.span,
            };
            if let Some(remote) = &port.remote {
                out.capacities.push((
                    LinkKey::Lid {
                        lid: remote.lid,
                        port: remote.port,
                    },
                    capacity.clone(),
                ));
            }
            out.capacities.push((
                LinkKey::Lid {
                    lid: port.lid,
                    port: port.port,
                },
                capacity,
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_counters_are_four_octet_words() {
        assert_eq!(
            perf_unit_and_role("PortXmitData").0,
            CounterUnit::FourOctets
        );
        assert_eq!(
            perf_unit_and_role("PortRcvDataSL3").0,
            CounterUnit::FourOctets
        );
        assert_eq!(perf_unit_and_role("PortXmitPkts").1, Role::Other);
        assert_eq!(perf_unit_and_role("SymbolErrorCounter").1, Role::BitErrors);
        assert_eq!(
            perf_unit_and_role("LinkErrorRecoveryCounter").1,
            Role::Errors
        );
        assert_eq!(perf_unit_and_role("PortXmitWait").1, Role::Congestion);
        assert_eq!(
            lane_suffix("ErrorDetectionCounterLane[3]"),
            ("ErrorDetectionCounterLane", Some(3))
        );
        assert_eq!(lane_suffix("PortXmitData"), ("PortXmitData", None));
        for (hay, needle) in [
            ("PortRcvErrors", "error"),
            ("LinkDownedCounter", "downed"),
            ("VL15Dropped", "dropped"),
            ("FECCorrectableBlockCounter", "fec"),
            ("PortXmitWait", "error"),
            ("", "fec"),
            ("Fe", "fec"),
        ] {
            assert_eq!(
                contains_ignoring_ascii_case(hay, needle),
                hay.to_ascii_lowercase().contains(needle),
                "{hay} {needle}"
            );
        }
    }

    #[test]
    fn lane_rates_lose_their_line_code() {
        assert!((4.0 * lane_data_gbps(25.781_25) - 100.0).abs() < 1e-9);
        assert!((4.0 * lane_data_gbps(10.0) - 32.0).abs() < 1e-9);
    }
}
