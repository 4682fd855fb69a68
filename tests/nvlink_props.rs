//! Properties of the `nvidia-smi nvlink` parser: whatever model it can
//! represent survives render → parse, and no text makes it panic.

// Test helpers fail loudly on bad fixtures, like the tests they serve.
#![allow(clippy::panic, clippy::unwrap_used, clippy::indexing_slicing)]

use fabricscope::model::nvlink::{
    LaneEcc, LinkDetail, Nvlink, NvlinkGpu, NvlinkLink, NvlinkMode, NvlinkNote, NvlinkRemote,
};
use fabricscope::model::Counter;
use fabricscope::parse::lines_of;
use fabricscope::parse::nvlink::{parse, render};
use fabricscope::LineSpan;
use proptest::collection::{btree_map, btree_set, vec};
use proptest::option;
use proptest::prelude::*;
use std::collections::BTreeMap;

const NAMES: &[&str] = &[
    "NVIDIA H200",
    "NVIDIA H100 PCIe",
    "NVIDIA A100-SXM4-80GB",
    "Tesla V100-SXM2-16GB",
    "NVIDIA GB200",
];
const ERROR_COUNTERS: &[&str] = &[
    "replay_errors",
    "recovery_errors",
    "crc_errors",
    "crc_flit_errors",
];
const KIB_COUNTERS: &[&str] = &[
    "data_tx_kib",
    "data_rx_kib",
    "raw_tx_kib",
    "raw_rx_kib",
    "rx0_kib",
    "tx0_kib",
    "rx1_kib",
];
const CAPABILITIES: &[&str] = &[
    "p2p_supported",
    "system_memory_access_supported",
    "p2p_atomics_supported",
    "system_memory_atomics_supported",
    "sli_supported",
    "link_supported",
];
const BUS_IDS: &[&str] = &["00000000:D5:00.0", "FFFFFFFF:FF:FF.0", "00000000:05:00.0"];
const ALL_INACTIVE: &str = "NVML: Unable to retrieve NVLink information as all links are inActive";

#[derive(Debug, Clone)]
enum Status {
    None,
    Speed(f64),
    Inactive,
}

fn status() -> impl Strategy<Value = Status> {
    prop_oneof![
        Just(Status::None),
        (0u32..200_000).prop_map(|m| Status::Speed(f64::from(m) / 1000.0)),
        Just(Status::Inactive),
    ]
}

fn link(v100: bool) -> impl Strategy<Value = NvlinkLink> {
    (
        status(),
        btree_map(proptest::sample::select(ERROR_COUNTERS), any::<u64>(), 0..3),
        btree_map(proptest::sample::select(KIB_COUNTERS), any::<u64>(), 0..3),
        vec((any::<u64>(), any::<bool>()), 0..3),
        btree_map(proptest::sample::select(CAPABILITIES), any::<bool>(), 0..4),
        option::of((proptest::sample::select(BUS_IDS), option::of(0u32..64))),
        option::of(proptest::sample::select(
            &["Low Power State", "Full Power State"][..],
        )),
        option::of(any::<u64>()),
    )
        .prop_map(
            move |(status, errors, kib, lanes, caps, remote, mode, threshold)| {
                let mut link = NvlinkLink::default();
                match status {
                    Status::None => {}
                    Status::Speed(s) => link.speed_gb_per_s = Some(s),
                    Status::Inactive => link.inactive = true,
                }
                for (name, value) in errors.into_iter().chain(kib) {
                    let counter = if v100 && name == "crc_errors" {
                        Counter::new(value, 16)
                    } else {
                        Counter::unknown_width(value)
                    };
                    link.counters.insert(name.to_owned(), counter);
                }
                // As the parser leaves it: no detail unless one was printed.
                link.set_detail(LinkDetail {
                    lanes: lanes
                        .into_iter()
                        .zip(0u32..)
                        .map(|((count, overflow), lane)| LaneEcc {
                            lane,
                            ecc_correction_count: Counter::unknown_width(count),
                            overflow,
                        })
                        .collect(),
                    capabilities: caps.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
                    remote: remote.map(|(bus, far)| NvlinkRemote {
                        pci_bus_id: bus.to_owned(),
                        link: far,
                    }),
                    low_power_mode: mode.map(str::to_owned),
                    low_power_threshold_us: threshold,
                });
                link
            },
        )
}

fn gpu() -> impl Strategy<Value = NvlinkGpu> {
    (0u32..16, proptest::sample::select(NAMES)).prop_flat_map(|(index, name)| {
        let v100 = name.contains("V100");
        (
            option::of("GPU-[0-9a-f]{8}-[0-9a-f]{4}"),
            btree_set(0u32..18, 0..5),
            vec(link(v100), 5),
            any::<bool>(),
            option::of(proptest::sample::select(
                &["Invalid Link", "Not supported"][..],
            )),
            btree_map(
                proptest::sample::select(&["NVLE", "Firmware Version", "MSE"][..]),
                "[A-Za-z0-9/.]{1,8}",
                0..3,
            ),
            option::of(1u64..1000),
            option::of((0u64..10, 10u64..10_000)),
        )
            .prop_map(
                move |(uuid, numbers, links, dark, message, info, unit, range)| {
                    let links = numbers
                        .into_iter()
                        .zip(links)
                        .map(|(n, mut l)| {
                            l.link = n;
                            l
                        })
                        .filter(has_content)
                        .collect();
                    let mut messages = Vec::new();
                    if dark {
                        messages.push(ALL_INACTIVE.to_owned());
                    }
                    messages.extend(message.map(str::to_owned));
                    NvlinkGpu {
                        index,
                        name: name.to_owned(),
                        uuid,
                        links,
                        all_links_inactive: dark,
                        info: info
                            .into_iter()
                            .map(|(k, v)| (k.to_owned(), v))
                            .collect::<BTreeMap<_, _>>(),
                        low_power_threshold_unit_us: unit,
                        low_power_threshold_range: range,
                        messages,
                        span: LineSpan::line(1),
                        headerless: false,
                    }
                },
            )
    })
}

/// A link the renderer prints at least one line for.
fn has_content(l: &NvlinkLink) -> bool {
    l.speed_gb_per_s.is_some()
        || l.inactive
        || !l.counters.is_empty()
        || !l.lanes().is_empty()
        || !l.capabilities().is_empty()
        || l.remote().is_some()
        || l.low_power_mode().is_some()
        || l.low_power_threshold_us().is_some()
}

fn model() -> impl Strategy<Value = Nvlink> {
    (vec(gpu(), 0..4), option::of("[A-Z]{3,6}"), any::<bool>()).prop_map(
        |(gpus, bandwidth_mode, no_devices)| {
            let mut notes: Vec<NvlinkNote> = Vec::new();
            if no_devices {
                notes.push(NvlinkNote::NoDevices);
            }
            for g in gpus.iter().filter(|g| g.all_links_inactive) {
                notes.push(NvlinkNote::AllLinksInactive { gpu: g.index });
            }
            let mut m = Nvlink {
                gpus,
                modes: Vec::new(),
                bandwidth_mode,
                notes,
            };
            m.modes = modes_with_content(&m);
            m
        },
    )
}

/// The modes a model has something to print for.
fn modes_with_content(m: &Nvlink) -> Vec<NvlinkMode> {
    let links: Vec<&NvlinkLink> = m.gpus.iter().flat_map(|g| &g.links).collect();
    let any_counter =
        |pred: &dyn Fn(&str) -> bool| links.iter().any(|l| l.counters.keys().any(pred));
    let legacy = |k: &str| {
        k.starts_with("rx") && k.ends_with("_kib") || k.starts_with("tx") && k.ends_with("_kib")
    };
    let mut modes = Vec::new();
    let mut add = |present: bool, mode| {
        if present {
            modes.push(mode);
        }
    };
    add(
        links
            .iter()
            .any(|l| l.speed_gb_per_s.is_some() || l.inactive),
        NvlinkMode::Status,
    );
    add(
        links.iter().any(|l| !l.capabilities().is_empty()),
        NvlinkMode::Capabilities,
    );
    add(
        any_counter(&|k| !k.ends_with("_kib")),
        NvlinkMode::ErrorCounters,
    );
    add(
        links.iter().any(|l| !l.lanes().is_empty()),
        NvlinkMode::LaneEcc,
    );
    add(
        any_counter(&|k| k.starts_with("data_")),
        NvlinkMode::ThroughputData,
    );
    add(
        any_counter(&|k| k.starts_with("raw_")),
        NvlinkMode::ThroughputRaw,
    );
    add(any_counter(&legacy), NvlinkMode::LegacyCounters);
    add(
        links
            .iter()
            .any(|l| l.remote().is_some_and(|r| r.link.is_none())),
        NvlinkMode::RemotePciBusId,
    );
    add(
        links
            .iter()
            .any(|l| l.remote().is_some_and(|r| r.link.is_some())),
        NvlinkMode::RemoteLinkInfo,
    );
    add(
        links
            .iter()
            .any(|l| l.low_power_mode().is_some() || l.low_power_threshold_us().is_some())
            || m.gpus.iter().any(|g| {
                g.low_power_threshold_unit_us.is_some() || g.low_power_threshold_range.is_some()
            }),
        NvlinkMode::LowPowerInfo,
    );
    add(m.bandwidth_mode.is_some(), NvlinkMode::BandwidthMode);
    add(m.gpus.iter().any(|g| !g.info.is_empty()), NvlinkMode::Info);
    modes
}

/// Spans, mode order, note order and link order depend on layout, not content.
fn normalised(mut m: Nvlink) -> Nvlink {
    for gpu in &mut m.gpus {
        gpu.span = LineSpan::line(1);
        for link in &mut gpu.links {
            link.span = LineSpan::line(1);
        }
        gpu.links.sort_by_key(|l| l.link);
    }
    m.modes.sort();
    m.notes.sort();
    m
}

proptest! {
    #[test]
    fn render_then_parse_gives_the_model_back(m in model()) {
        let text = render(&m);
        let parsed = parse(&lines_of(&text));
        prop_assert!(parsed.warnings.is_empty(), "{:?}\n{}", parsed.warnings, text);
        prop_assert_eq!(normalised(parsed.value), normalised(m), "{}", text);
    }

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC*") {
        let _ = parse(&lines_of(&text));
        let _ = fabricscope::input::read_all(&text, &Default::default());
    }

    #[test]
    fn nvlink_like_fragments_never_panic(
        lines in vec(prop_oneof![
            Just("GPU 0: NVIDIA H200 (UUID: GPU-1)".to_owned()),
            Just("GPU 99999999999: X (UUID:".to_owned()),
            "\t Link [0-9]{1,12}: [0-9.]{0,8} GB/s",
            "\t Link [0-9]{1,3}:",
            "\t\t Lane [0-9]{1,12} ECC Correction Count: [0-9]{0,22} \\(Overflow=[0-9]{0,3}\\)",
            "\t Link [0-9]{1,3}: Remote Device [0-9A-F:.]{0,20}: Link [0-9]{0,12}",
            "\t Link [0-9]{1,3}, [A-Za-z ]{0,10}: (true|false|maybe)",
            "\t Link [0-9]{1,3}: [A-Za-z0-9 ]{0,8}: [0-9]{0,25} (KiB|KBytes)?(, Tx0: [0-9]{0,3} KBytes)?",
            "Range of Low Power Threshold values are [0-9]{0,25} to [0-9 ]{0,4}",
            "\\PC{0,40}",
        ], 0..30)
    ) {
        let text = lines.join("\n");
        let _ = parse(&lines_of(&text));
        let _ = fabricscope::input::read_all(&format!("$ nvidia-smi nvlink -s\n{text}"), &Default::default());
    }
}
