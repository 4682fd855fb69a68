use super::*;
use crate::parse::lines_of;
use crate::span::LineSpan;

const H200: &str = "NVIDIA H200";

fn read(text: &str) -> Parsed<Nvlink> {
    parse(&lines_of(text))
}

fn clean(text: &str) -> Nvlink {
    let parsed = read(text);
    assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
    parsed.value
}

#[test]
fn status_with_speeds_and_inactive_links() {
    let text = "GPU 0: NVIDIA H100 PCIe (UUID: GPU-6968dfc2)
         Link 0: 26.562 GB/s
         Link 4: <inactive>
GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-c7e253b0)
\t Link 11: 25 GB/s
";
    let m = clean(text);
    assert_eq!(m.modes, [NvlinkMode::Status]);
    assert_eq!(m.gpus.len(), 2);
    let g0 = &m.gpus[0];
    assert_eq!((g0.index, g0.name.as_str()), (0, "NVIDIA H100 PCIe"));
    assert_eq!(g0.uuid.as_deref(), Some("GPU-6968dfc2"));
    assert_eq!(g0.links[0].speed_gb_per_s, Some(26.562));
    assert!(!g0.links[0].inactive);
    assert!(g0.links[1].inactive);
    assert_eq!(g0.links[1].speed_gb_per_s, None);
    assert_eq!(g0.span, LineSpan::new(1, 3));
    assert_eq!(m.gpus[1].links[0].link, 11);
    assert_eq!(m.gpus[1].links[0].speed_gb_per_s, Some(25.0));
    assert_eq!(
        summary(&m),
        "2 GPU(s), 3 link(s) (-s): 2 active, 1 inactive"
    );
}

#[test]
fn all_links_inactive_in_both_spellings() {
    let text = "GPU 0: NVIDIA A100-PCIE-40GB (UUID: GPU-3fb1)
NVML: Unable to retrieve NVLink information as all links are inActive
GPU 6: NVIDIA A100-SXM4-80GB (UUID: GPU-9667)
NVML: Unable to retrieve NVLink information as all links are inactive
";
    let m = clean(text);
    assert!(m
        .gpus
        .iter()
        .all(|g| g.all_links_inactive && g.links.is_empty()));
    assert_eq!(
        m.notes,
        ["GPU 0: all links inactive", "GPU 6: all links inactive"]
    );
    assert!(summary(&m).ends_with("2 GPU(s) with all links inactive"));
}

#[test]
fn error_counters_and_v100_crc_saturation() {
    let text = "GPU 0: NVIDIA H200 (UUID: GPU-d4a1)
\t Link 0: Replay Errors: 3
\t Link 0: Recovery Errors: 1
\t Link 0: CRC Errors: 65535

\t Link 1: Replay Errors: 0
GPU 1: Tesla V100-SXM2-16GB (UUID: GPU-8dfc)
\t Link 0: CRC Errors: 65535
\t Link 1: CRC Errors: 12
";
    let m = clean(text);
    assert_eq!(m.modes, [NvlinkMode::ErrorCounters]);
    let h200 = &m.gpus[0].links[0];
    assert_eq!(h200.counter("replay_errors").map(|c| c.value), Some(3));
    assert_eq!(h200.counter("recovery_errors").map(|c| c.value), Some(1));
    let crc = h200.counter("crc_errors").unwrap();
    assert_eq!((crc.value, crc.bits, crc.saturated), (65_535, 0, false));
    assert_eq!(h200.span, LineSpan::new(2, 4));
    let v100 = &m.gpus[1];
    let stuck = v100.links[0].counter("crc_errors").unwrap();
    assert_eq!((stuck.bits, stuck.saturated), (16, true));
    assert!(!v100.links[1].counter("crc_errors").unwrap().saturated);
}

#[test]
fn lane_ecc_blocks_attach_to_their_link_heading() {
    let text = "GPU 0: NVIDIA H200 (UUID: GPU-d4a1)
\t Link 0:
\t\t Lane 0 ECC Correction Count: 374 (Overflow=0)
\t\t Lane 1 ECC Correction Count: 275 (Overflow=0)

\t Link 9:
\t\t Lane 0 ECC Correction Count: 797 (Overflow=1)
";
    let m = clean(text);
    assert_eq!(m.modes, [NvlinkMode::LaneEcc]);
    let links = &m.gpus[0].links;
    assert_eq!(links.len(), 2);
    assert_eq!(links[0].lanes().len(), 2);
    assert_eq!(links[0].lanes()[1].lane, 1);
    assert_eq!(links[0].lanes()[1].ecc_correction_count.value, 275);
    assert_eq!(links[1].link, 9);
    assert!(links[1].lanes()[0].overflow);
    assert!(!links[0].lanes()[0].overflow);
}

#[test]
fn a_lane_without_a_link_heading_is_a_warning() {
    let parsed = read(
        "GPU 0: NVIDIA H200 (UUID: GPU-d4a1)\n\t\t Lane 0 ECC Correction Count: 1 (Overflow=0)\n",
    );
    assert_eq!(parsed.warnings.len(), 1);
    assert_eq!(parsed.warnings[0].span, LineSpan::line(2));
    assert!(parsed.value.gpus[0].links.is_empty());
}

#[test]
fn throughput_counters_keep_kib_in_their_names() {
    let text = "GPU 0: NVIDIA H200 (UUID: GPU-d4a1)
\t Link 0: Data Tx: 279640129 KiB
\t Link 0: Data Rx: 279640130 KiB
GPU 1: NVIDIA H200 (UUID: GPU-46ba)
\t Link 0: Raw Tx: 520106574 KiB
\t Link 0: Raw Rx: 24 KiB
";
    let m = clean(text);
    assert_eq!(
        m.modes,
        [NvlinkMode::ThroughputData, NvlinkMode::ThroughputRaw]
    );
    let d = &m.gpus[0].links[0];
    assert_eq!(d.counter("data_tx_kib").map(|c| c.value), Some(279_640_129));
    assert_eq!(d.counter("data_rx_kib").map(|c| c.value), Some(279_640_130));
    let r = &m.gpus[1].links[0];
    assert_eq!(r.counter("raw_tx_kib").map(|c| c.value), Some(520_106_574));
    assert_eq!(r.counter("raw_rx_kib").map(|c| c.value), Some(24));
}

#[test]
fn legacy_counters_two_per_line() {
    let text = "GPU 0: Tesla V100-SXM2-16GB (UUID: GPU-8dfc)
         Link 0: Rx0: 0 KBytes, Tx0: 0 KBytes
         Link 1: Rx0: 100 KBytes, Tx0: 5 KBytes
";
    let m = clean(text);
    assert_eq!(m.modes, [NvlinkMode::LegacyCounters]);
    let l1 = &m.gpus[0].links[1];
    assert_eq!(l1.counter("rx0_kib").map(|c| c.value), Some(100));
    assert_eq!(l1.counter("tx0_kib").map(|c| c.value), Some(5));
}

#[test]
fn capabilities_use_stable_keys() {
    let text = "GPU 1: NVIDIA H200 (UUID: GPU-46ba)
\t Link 5, P2P is supported: true
\t Link 5, Access to system memory supported: true
\t Link 5, P2P atomics supported: false
\t Link 5, System memory atomics supported: true
\t Link 5, SLI is supported: false
\t Link 5, Link is supported: true
";
    let m = clean(text);
    let caps = &m.gpus[0].links[0].capabilities();
    assert_eq!(caps.len(), 6);
    assert_eq!(caps.get("p2p_supported"), Some(&true));
    assert_eq!(caps.get("system_memory_access_supported"), Some(&true));
    assert_eq!(caps.get("p2p_atomics_supported"), Some(&false));
    assert_eq!(caps.get("sli_supported"), Some(&false));
    assert_eq!(caps.get("link_supported"), Some(&true));
}

#[test]
fn remote_pci_and_remote_link_info_merge_on_one_link() {
    let text = "GPU 0: NVIDIA H100 PCIe (UUID: GPU-6968)
               Link 4: Remote Device 00000000:D5:00.0: Link 6
               Link 4: 00000000:D5:00.0
               Link 5: FFFFFFFF:FF:FF.0
";
    let m = clean(text);
    assert_eq!(
        m.modes,
        [NvlinkMode::RemoteLinkInfo, NvlinkMode::RemotePciBusId]
    );
    let l4 = m.gpus[0].links[0].remote().unwrap();
    assert_eq!(
        (l4.pci_bus_id.as_str(), l4.link),
        ("00000000:D5:00.0", Some(6))
    );
    let l5 = m.gpus[0].links[1].remote().unwrap();
    assert!(l5.is_unknown());
    assert_eq!(l5.link, None);
}

#[test]
fn low_power_info_bandwidth_mode_and_info() {
    let text = "GPU NVLINK bandwidth mode: FULL
GPU 0: NVIDIA H200 (UUID: GPU-d4a1)
\t NVLE: disabled
\t Firmware Version: N/A
\t Low Power Threshold are in units of 100 us
\t Range of Low Power Threshold values are 1 to 8191

\t Link 0: Low Power Mode: Low Power State
\t Link 0: Low Power Threshold: 50000 us
";
    let m = clean(text);
    assert_eq!(m.bandwidth_mode.as_deref(), Some("FULL"));
    assert_eq!(
        m.modes,
        [
            NvlinkMode::BandwidthMode,
            NvlinkMode::Info,
            NvlinkMode::LowPowerInfo
        ]
    );
    let gpu = &m.gpus[0];
    assert_eq!(gpu.info.get("NVLE").map(String::as_str), Some("disabled"));
    assert_eq!(
        gpu.info.get("Firmware Version").map(String::as_str),
        Some("N/A")
    );
    assert_eq!(gpu.low_power_threshold_unit_us, Some(100));
    assert_eq!(gpu.low_power_threshold_range, Some((1, 8191)));
    let l0 = &gpu.links[0];
    assert_eq!(l0.low_power_mode(), Some("Low Power State"));
    assert_eq!(l0.low_power_threshold_us(), Some(50_000));
}

#[test]
fn headers_only_messages_and_no_output() {
    let m = clean("GPU 0: NVIDIA H200 (UUID: GPU-d4a1)\nGPU 1: NVIDIA H200 (UUID: GPU-46ba)\n");
    assert_eq!(m.gpus.len(), 2);
    assert!(m
        .gpus
        .iter()
        .all(|g| g.links.is_empty() && g.messages.is_empty()));
    assert!(m.modes.is_empty());

    let m = clean("GPU 0: NVIDIA H200 (UUID: GPU-d4a1)\n\t Invalid Link\n");
    assert_eq!(m.gpus[0].messages, ["Invalid Link"]);
    let m = clean("GPU 0: NVIDIA H200 (UUID: GPU-d4a1)\nNot supported\n");
    assert_eq!(m.gpus[0].messages, ["Not supported"]);
    assert_eq!(summary(&m), "1 GPU(s), 0 link(s); GPU 0: Not supported");

    let m = clean("No devices were found\n");
    assert_eq!(m.notes, ["No devices were found"]);
    assert!(m.gpus.is_empty());
    assert_eq!(summary(&m), "No devices were found");

    let empty = read("");
    assert!(empty.warnings.is_empty());
    assert_eq!(empty.value, Nvlink::default());
    assert_eq!(summary(&empty.value), "no NVLink output under the command");
}

#[test]
fn bad_lines_are_warnings_and_the_rest_is_kept() {
    let text = "\t Link 0: 25 GB/s
GPU 0: NVIDIA H200 (UUID: GPU-d4a1)
\t Link 0: 26.562 GB/s
\t Link 1: fast
\t Link 2: Data Tx: 99999999999999999999 KiB
...
\t Link 3: 26.562 GB/s
\t Link 3: 26.562 GB/s
";
    let parsed = read(text);
    let kinds = parsed.warning_lines();
    assert_eq!(
        kinds,
        [
            (1, WarningKind::Truncated),
            (4, WarningKind::Unreadable),
            (5, WarningKind::OutOfRange),
            (6, WarningKind::Truncated),
            (8, WarningKind::Suspicious),
        ]
    );
    // The link line above the first header belongs to an unknown GPU.
    let lone = &parsed.value.gpus[0];
    assert!(lone.headerless && lone.name.is_empty());
    assert_eq!(lone.links[0].speed_gb_per_s, Some(25.0));
    let links: Vec<u32> = parsed.value.gpus[1].links.iter().map(|l| l.link).collect();
    assert_eq!(links, [0, 3]);
    assert!(!parsed.value.gpus[1].headerless);
    assert_eq!(parsed.value.modes, [NvlinkMode::Status]);

    // A GPU field with no link line above it has no GPU to belong to; after
    // a headerless link line it belongs to that (unknown) GPU.
    let orphan = read("\t NVLE: disabled\n\t Link 0: Replay Errors: 1\n\t NVLE: disabled\n");
    let kinds = orphan.warning_lines();
    assert_eq!(
        kinds,
        [(1, WarningKind::Unreadable), (2, WarningKind::Truncated)]
    );
    let gpu = &orphan.value.gpus[0];
    assert_eq!(gpu.links[0].counters["replay_errors"].value, 1);
    assert_eq!(gpu.info["NVLE"], "disabled");
    assert_eq!(
        orphan.value.modes,
        [NvlinkMode::ErrorCounters, NvlinkMode::Info]
    );
}

#[test]
fn link_lines_without_a_gpu_header_belong_to_an_unknown_gpu() {
    // An NHC error quoting `nvidia-smi nvlink -s` lines: no GPU header,
    // `Inactive` capitalised as newer drivers print it.
    let text = "\t Link 4: Inactive\n\t Link 5: Inactive\n\t Link 6: 26.562 GB/s\n";
    let lines = lines_of(text);
    assert_eq!(detect(&lines).map(|b| b.key).as_deref(), Some("line 1"));
    // One quoted line is not a listing; a header-led listing is keyed by GPU.
    assert!(detect(&lines[2..]).is_none());
    assert!(detect(&lines_of("Link 4: Inactive\nsome prose")).is_none());
    let parsed = read(text);
    let m = &parsed.value;
    assert_eq!(m.gpus.len(), 1);
    let g = &m.gpus[0];
    assert!(g.headerless);
    assert_eq!(g.inactive_links().count(), 2);
    assert_eq!(g.active_links().count(), 1);
    assert_eq!(parsed.warnings.len(), 1);
    assert_eq!(parsed.warnings[0].kind, WarningKind::Truncated);
    assert!(summary(m).contains("unknown GPU"), "{}", summary(m));
    // Rendered without the header it did not have, and read back the same.
    assert_eq!(read(&render(m)).value, *m);
}

#[test]
fn capability_lines_without_a_gpu_header_belong_to_an_unknown_gpu() {
    // `nvidia-smi nvlink --capabilities -i 1` output quoted in a fence of
    // its own, below the command's: no GPU header, no indent.
    let text = "Link 0, P2P is supported: true\nLink 0, SLI is supported: false\n\
                Link 1, P2P is supported: true\nLink 1, Link is supported: false\n";
    let lines = lines_of(text);
    assert_eq!(detect(&lines).map(|b| b.key).as_deref(), Some("line 1"));
    // One quoted line is not a listing; a label nvidia-smi does not print
    // after `Link 2,` is prose.
    assert!(detect(&lines[3..]).is_none());
    assert!(detect(&lines_of("Link 0, P2P is supported: true\nsome prose")).is_none());
    assert!(detect(&lines_of(
        "Link 2, as I said, is down: true\nLink 3, as I said, is up: true"
    ))
    .is_none());
    // Not a pair of one mode: a status line and a capability line.
    assert!(detect(&lines_of(
        "Link 0: 26.562 GB/s\nLink 0, P2P is supported: true"
    ))
    .is_none());
    let parsed = read(text);
    let m = &parsed.value;
    assert_eq!(m.gpus.len(), 1);
    let g = &m.gpus[0];
    assert!(g.headerless);
    assert_eq!(m.modes, [NvlinkMode::Capabilities]);
    assert_eq!(g.links.len(), 2);
    assert_eq!(g.links[0].capabilities().get("sli_supported"), Some(&false));
    assert_eq!(
        g.links[1].capabilities().get("link_supported"),
        Some(&false)
    );
    assert_eq!(parsed.warnings.len(), 1);
    assert_eq!(parsed.warnings[0].kind, WarningKind::Truncated);
}

#[test]
fn a_header_without_its_closing_paren_is_read() {
    // The line lost its `)`: the header is read, its whole UUID kept.
    let text = "GPU 0: NVIDIA H100 NVL (UUID: GPU-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9\n\
                \t Link 0: 26.562 GB/s\n";
    let m = clean(text);
    assert_eq!(
        m.gpus[0].uuid.as_deref(),
        Some("GPU-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9")
    );
    assert_eq!(m.gpus[0].name, "NVIDIA H100 NVL");
    assert!(is_gpu_header("GPU 1: NVIDIA H100 NVL (UUID: GPU-0a1b"));
    assert!(is_gpu_header("  GPU 1: NVIDIA H100 NVL (UUID: GPU-0a1b)"));
    assert!(!is_gpu_header("GPU 00000000:18:00.0"));
    assert!(!is_gpu_header("\t Link 0: 26.562 GB/s"));
}

#[test]
fn a_header_alone_says_it_shows_nothing() {
    let text = "GPU 0: NVIDIA H100 NVL (UUID: GPU-a)\n\t Link 0: 26.562 GB/s\n\
                GPU 1: NVIDIA H100 NVL (UUID: GPU-b)\n\
                GPU 2: NVIDIA H100 NVL (UUID: GPU-c)\n\
                \tNVML: Unable to retrieve NVLink information as all links are inActive\n";
    let m = clean(text);
    let alone: Vec<bool> = m.gpus.iter().map(NvlinkGpu::header_only).collect();
    assert_eq!(alone, [false, true, false]);
}

#[test]
fn detection_wants_nvlink_lines_after_a_uuid_header() {
    let header = "GPU 0: NVIDIA H200 (UUID: GPU-d4a1)\n";
    let det = |next: &str| detect(&lines_of(&format!("{header}{next}")));
    assert_eq!(
        det("\t Link 0: 26.562 GB/s").map(|b| b.key),
        Some("GPU 0".into())
    );
    assert!(det("\n\t Link 0:").is_some());
    assert!(det("NVML: Unable to retrieve NVLink information as all links are inActive").is_some());
    assert!(det("\t NVLE: disabled").is_some());
    assert!(det("\t Invalid Link").is_some());
    // A GPU that exposes no NVLink (a VM's passed-through SXM board):
    // nvidia-smi nvlink's own answer, before read as no tool's output.
    assert!(det("Device does not have or support Nvlink").is_some());
    assert!(det("\t Link 0: something new").is_some());
    // `nvidia-smi -L`: headers and nothing else.
    assert!(det("GPU 1: NVIDIA H200 (UUID: GPU-46ba)").is_none());
    assert!(det("GPU 1: NVIDIA H200 (UUID: GPU-46ba)\n$ nvidia-smi -q").is_none());
    // A bare header before a GPU with links belongs to the same output.
    assert!(det("GPU 1: NVIDIA H200 (UUID: GPU-46ba)\n\t Link 0: <inactive>").is_some());
    assert!(det("").is_none());
    assert!(det("Not supported").is_none());
    // No UUID (redacted, or trimmed by hand): a header only with a link
    // line right under it. Before, its links were read as an unknown
    // GPU's, and a lone `-e` line as nothing.
    assert_eq!(
        detect(&lines_of("GPU 0: Tesla V100\n\t Link 0: 25.781 GB/s")).map(|b| b.key),
        Some("GPU 0".into())
    );
    assert!(detect(&lines_of(
        "GPU 3: NVIDIA GB300\n\t Link 0: Replay Errors: 0"
    ))
    .is_some());
    assert!(detect(&lines_of("GPU 0: Tesla V100\n\tPower: 300 W")).is_none());
    assert!(detect(&lines_of(
        "GPU 0: Tesla V100\nGPU 1: Tesla V100\n\t Link 0: <inactive>"
    ))
    .is_none());
    // `nvidia-smi -q` prints `GPU 00000000:18:00.0`.
    assert!(detect(&lines_of(
        "GPU 00000000:18:00.0\n    Product Name: NVIDIA H200"
    ))
    .is_none());
    assert_eq!(
        detect(&lines_of("GPU NVLINK bandwidth mode: FULL")).map(|b| b.key),
        Some("bandwidth mode".into())
    );
}

#[test]
fn command_hint_covers_nvlink_but_not_its_help() {
    assert!(is_nvlink_command(&["nvidia-smi", "nvlink", "-s"]));
    assert!(is_nvlink_command(&["nvidia-smi", "nvlink", "-gt", "r"]));
    // The long options are the same commands.
    assert!(is_nvlink_command(&[
        "nvidia-smi",
        "nvlink",
        "--capabilities",
        "-i",
        "1"
    ]));
    assert!(is_nvlink_command(&[
        "nvidia-smi",
        "nvlink",
        "--status",
        "--id",
        "0"
    ]));
    assert!(!is_nvlink_command(&["nvidia-smi", "nvlink", "-h"]));
    assert!(!is_nvlink_command(&["nvidia-smi", "-L"]));
    assert!(!is_nvlink_command(&["nvidia-smi", "topo", "-m"]));
}

#[test]
fn snake_case_keys() {
    assert_eq!(snake_case("CRC Errors"), "crc_errors");
    assert_eq!(snake_case("  Data  Tx "), "data_tx");
    assert_eq!(snake_case("CRC-Flit Errors"), "crc_flit_errors");
    assert_eq!(capability_key("P2P is supported"), "p2p_supported");
    assert_eq!(capability_key("Some new capability"), "some_new_capability");
    assert_eq!(counter_key("Rx0", CounterUnit::KBytes), "rx0_kib");
}

#[test]
fn render_then_parse_gives_the_same_model_for_every_mode() {
    let text = format!(
        "GPU 0: {H200} (UUID: GPU-d4a1)
\t Link 0: 26.562 GB/s
\t Link 1: <inactive>
\t Link 0, P2P is supported: true
\t Link 0: Replay Errors: 0
\t Link 0: CRC Errors: 7
\t Link 0:
\t\t Lane 0 ECC Correction Count: 374 (Overflow=0)
\t Link 0: Data Tx: 10 KiB
\t Link 0: Raw Rx: 11 KiB
\t Link 0: Rx0: 1 KBytes, Tx0: 2 KBytes
\t Link 0: Remote Device 00000000:D5:00.0: Link 6
\t Link 1: FFFFFFFF:FF:FF.0
\t Link 0: Low Power Mode: Low Power State
GPU 6: NVIDIA A100-SXM4-80GB (UUID: GPU-9667)
NVML: Unable to retrieve NVLink information as all links are inactive
"
    );
    let first = clean(&text);
    let again = clean(&render(&first));
    assert_eq!(without_spans(first), without_spans(again));
}

pub(super) fn without_spans(mut m: Nvlink) -> Nvlink {
    for gpu in &mut m.gpus {
        gpu.span = LineSpan::line(1);
        for link in &mut gpu.links {
            link.span = LineSpan::line(1);
        }
    }
    m.modes.sort();
    m.notes.sort();
    m
}

thread_local! {
    /// Link records examined while finding the record a line belongs to
    /// (one per look-up with the index; a search of the list examined up to
    /// every link of the GPU).
    pub(super) static LINKS_EXAMINED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// One GPU with `links` distinct `Link N:` lines, each printed twice (status
/// and a counter), as a hostile or corrupted paste may hold.
fn many_links(links: u32) -> String {
    let mut s = String::from("GPU 0: NVIDIA H200 (UUID: GPU-d4a1)\n");
    for n in 0..links {
        s.push_str(&format!("\t Link {n}: 26.562 GB/s\n"));
    }
    for n in 0..links {
        s.push_str(&format!("\t Link {n}: Replay Errors: 0\n"));
    }
    s
}

fn links_examined(text: &str) -> (u64, usize) {
    LINKS_EXAMINED.with(|n| n.set(0));
    let m = clean(text);
    let links = m.gpus[0].links.len();
    (LINKS_EXAMINED.with(std::cell::Cell::get), links)
}

#[test]
fn doubling_the_links_of_one_gpu_at_most_doubles_the_work() {
    let (small, small_links) = links_examined(&many_links(5_000));
    let (large, large_links) = links_examined(&many_links(10_000));
    assert_eq!((small_links, large_links), (5_000, 10_000));
    assert!(small >= 10_000, "every link line is looked up: {small}");
    assert!(
        large <= 2 * small,
        "finding a link must not cost more as links accumulate: {small} → {large}"
    );
}

/// Links in any order, repeated or not, are found as a search of the list
/// finds them: one record per number, in order of first mention, each
/// with the last value printed for it. (Link N usually sits at index N and
/// needs no index; these orders break that pattern at every point.)
mod link_order {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn links_are_found_in_any_order(numbers in proptest::collection::vec(0u32..40, 0..120)) {
            let mut text = String::from("GPU 0: NVIDIA H200 (UUID: GPU-d4a1)\n");
            for (i, n) in numbers.iter().enumerate() {
                text.push_str(&format!("\t Link {n}: Replay Errors: {i}\n"));
            }
            let m = read(&text).value;
            let mut expected: Vec<(u32, u64)> = Vec::new();
            for (i, &n) in numbers.iter().enumerate() {
                let i = i as u64;
                match expected.iter_mut().find(|(link, _)| *link == n) {
                    Some(slot) => slot.1 = i,
                    None => expected.push((n, i)),
                }
            }
            let got: Vec<(u32, u64)> = m
                .gpus
                .first()
                .map(|g| {
                    g.links
                        .iter()
                        .map(|l| (l.link, l.counter(NvCounter::ReplayErrors).map_or(u64::MAX, |c| c.value)))
                        .collect()
                })
                .unwrap_or_default();
            prop_assert_eq!(got, expected);
        }
    }
}

#[test]
fn doubling_links_listed_backwards_at_most_doubles_the_work() {
    let backwards = |links: u32| {
        let mut s = String::from("GPU 0: NVIDIA H200 (UUID: GPU-d4a1)\n");
        for n in (0..links).rev() {
            s.push_str(&format!("\t Link {n}: 26.562 GB/s\n"));
            s.push_str(&format!("\t Link {n}: Replay Errors: 0\n"));
        }
        s
    };
    let (small, small_links) = links_examined(&backwards(5_000));
    let (large, large_links) = links_examined(&backwards(10_000));
    assert_eq!((small_links, large_links), (5_000, 10_000));
    assert!(large <= 2 * small, "{small} → {large}");
}

/// The fast path (link lines straight to their record) reads every listing
/// as the general reader does: same model, same warnings.
mod fast_path {
    use super::*;
    use proptest::prelude::*;

    fn line() -> impl Strategy<Value = String> {
        prop_oneof![
            prop::sample::select(vec![
                "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-e3e70682)",
                "GPU 1: Tesla V100-SXM2-16GB (UUID: GPU-f3e7)",
                "\t Link 0: Replay Errors: 0",
                "\t Link 0: Recovery Errors: 3",
                "\t Link 1: CRC Errors: 65535",
                "\t Link 1: Data Tx: 584268610202 KiB",
                "\t Link 1: Raw Rx: 147 KiB",
                "\t Link 2: Rx0: 0 KBytes, Tx0: 0 KBytes",
                "\t Link 2: 26.562 GB/s",
                "\t Link 3: <inactive>",
                "\t Link 3: Inactive",
                "\t Link 4: Remote Device 00000000:D5:00.0: Link 6",
                "\t Link 5: Low Power Mode: Low Power State",
                "\t Link 0, P2P is supported: true",
                "\t Link 0:",
                "\t\tLane 0 ECC Correction Count: 374 (Overflow=0)",
                "Link 7: 25 GB/s",
                "Link 99999999999: 25 GB/s",
                "\t Link 1: CRC Errors: 99999999999999999999999",
                "Not supported",
                "",
            ])
            .prop_map(str::to_owned),
            (
                0u32..20,
                "[A-Z][A-Za-z0-9 ]{0,10}",
                0u64..u64::MAX,
                prop::sample::select(vec!["", " KiB", " KBytes", " kib", "  KiB"])
            )
                .prop_map(|(n, name, v, unit)| format!("\t Link {n}: {name}: {v}{unit}")),
            (0u32..20, 0u32..1000, "[0-9]{0,4}")
                .prop_map(|(n, i, f)| format!(" Link {n}: {i}.{f} GB/s")),
        ]
    }

    proptest! {
        #[test]
        fn fast_path_reads_as_the_general_reader(lines in prop::collection::vec(line(), 0..40)) {
            let text = lines.join("\n");
            let lines = lines_of(&text);
            prop_assert_eq!(parse(&lines), parse_general(&lines));
        }
    }
}

proptest::proptest! {
    /// A GPU header's block key is what `format!` wrote.
    #[test]
    fn gpu_keys_are_formatted_as_display_writes_them(index in proptest::prelude::any::<u32>()) {
        proptest::prop_assert_eq!(gpu_key(index), format!("GPU {index}"));
    }
}

#[test]
fn gpu_keys_at_the_ends_of_the_range() {
    for index in [0, 9, 10, u32::MAX] {
        assert_eq!(gpu_key(index), format!("GPU {index}"));
    }
}
