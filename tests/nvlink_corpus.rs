//! Every `nvidia-smi nvlink` capture we have goes through the whole input
//! layer: our own H200 captures (copied into `tests/fixtures/own/`) and the
//! public samples, which are read in place from the shared corpus and never
//! copied. Expected values were read off the files by eye.

// Test helpers fail loudly on bad fixtures, like the tests they serve.
#![allow(clippy::panic, clippy::unwrap_used, clippy::indexing_slicing)]

use fabricscope::model::nvlink::{Nvlink, NvlinkMode};
use fabricscope::{input, Document, Kind, ReadOptions, SectionData};
use std::path::{Path, PathBuf};

const X2: &str = "tests/fixtures/own/h200-x2-driver580";
const X1: &str = "tests/fixtures/own/h200-x1-driver580";
const PUBLIC: &str = "../shared/corpus/public/nvlink";

const GPU0_UUID: &str = "GPU-d4a16625-4536-2b66-d7f0-0060bf86bff4";
const GPU1_UUID: &str = "GPU-46ba23f5-6332-1b57-d41e-06fa07553f24";

fn text_of(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Reads a file that must be nvlink output only: every section nvlink, no
/// unrecognised line, no warning anywhere.
fn read_clean(path: &Path) -> Document {
    let doc = input::read(&text_of(path), &ReadOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(
        doc.sections.iter().all(|s| s.kind == Kind::Nvlink),
        "{}: {:?}",
        path.display(),
        doc.sections.iter().map(|s| s.kind).collect::<Vec<_>>()
    );
    assert!(
        doc.unrecognised.is_empty(),
        "{}: {:?}",
        path.display(),
        doc.unrecognised
    );
    assert!(
        doc.all_warnings().is_empty(),
        "{}: {:?}",
        path.display(),
        doc.all_warnings()
    );
    doc
}

fn nvlink(doc: &Document) -> Vec<&Nvlink> {
    doc.sections
        .iter()
        .filter_map(|s| match &s.data {
            SectionData::Nvlink(n) => Some(n),
            _ => None,
        })
        .collect()
}

/// The single nvlink model in a file.
fn only(dir: &str, file: &str) -> Nvlink {
    let doc = read_clean(&Path::new(dir).join(file));
    let models = nvlink(&doc);
    assert_eq!(models.len(), 1, "{file}: {} sections", models.len());
    models[0].clone()
}

/// `.txt` files of a directory that `keep` selects, sorted.
fn files(dir: &Path, keep: impl Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt") && keep(p))
        .collect();
    files.sort();
    files
}

/// Our captures of `nvidia-smi nvlink` modes (the help text is not data).
fn own_nvlink_files(dir: &Path) -> Vec<PathBuf> {
    files(dir, |p| {
        let text = text_of(p);
        let first = text.lines().next().unwrap_or_default();
        first.starts_with("$ nvidia-smi nvlink") && !first.contains(" -h")
    })
}

/// The public samples of `nvidia-smi nvlink` (the folder also has `topo -m`).
fn public_nvlink_files(dir: &Path) -> Vec<PathBuf> {
    files(dir, |p| {
        p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("nvlink-"))
    })
}

#[test]
fn every_own_capture_reads_cleanly_as_nvlink() {
    for dir in [X2, X1] {
        let files = own_nvlink_files(Path::new(dir));
        assert_eq!(files.len(), 27, "{dir}: {files:?}");
        for path in files {
            let doc = read_clean(&path);
            assert!(!doc.sections.is_empty(), "{}", path.display());
        }
    }
}

#[test]
fn every_public_sample_reads_cleanly_as_nvlink() {
    let dir = Path::new(PUBLIC);
    if !dir.is_dir() {
        println!("skipped: {PUBLIC} not present (public samples are not part of the repository)");
        return;
    }
    let files = public_nvlink_files(dir);
    assert_eq!(files.len(), 5, "{files:?}");
    for path in files {
        read_clean(&path);
    }
}

#[test]
fn h200_pair_has_18_links_at_26_562_on_each_gpu() {
    for file in [
        "nvlink_s.txt",
        "nvlink_status_long.txt",
        "during_nvlink_s.txt",
    ] {
        let m = only(X2, file);
        assert_eq!(m.modes, [NvlinkMode::Status], "{file}");
        assert_eq!(m.gpus.len(), 2);
        assert_eq!(m.gpus[0].uuid.as_deref(), Some(GPU0_UUID));
        assert_eq!(m.gpus[1].uuid.as_deref(), Some(GPU1_UUID));
        for gpu in &m.gpus {
            assert_eq!(gpu.name, "NVIDIA H200");
            let numbers: Vec<u32> = gpu.links.iter().map(|l| l.link).collect();
            assert_eq!(numbers, (0..18).collect::<Vec<_>>());
            assert!(gpu.links.iter().all(|l| l.speed_gb_per_s == Some(26.562)));
        }
    }
}

#[test]
fn filtered_and_invalid_link_queries() {
    let one = only(X2, "nvlink_i0_l0_s.txt");
    assert_eq!(one.gpus.len(), 1);
    assert_eq!(one.gpus[0].links.len(), 1);
    assert_eq!(one.gpus[0].links[0].speed_gb_per_s, Some(26.562));

    let bad = only(X2, "nvlink_badlink.txt");
    assert_eq!(bad.gpus[0].messages, ["Invalid Link"]);
    assert!(bad.gpus[0].links.is_empty());

    let caps = only(X2, "nvlink_i1_l5_c.txt");
    assert_eq!(caps.gpus[0].index, 1);
    assert_eq!(caps.gpus[0].links[0].link, 5);
    assert_eq!(caps.gpus[0].links[0].capabilities().len(), 6);

    for dir in [X2, X1] {
        let none = only(dir, "nvlink_badgpu.txt");
        assert_eq!(none.notes, ["No devices were found"]);
        assert!(none.gpus.is_empty());
    }
}

#[test]
fn error_counters_are_all_zero_after_the_copies() {
    for file in ["nvlink_e.txt", "after_e.txt"] {
        let m = only(X2, file);
        assert_eq!(m.modes, [NvlinkMode::ErrorCounters]);
        for gpu in &m.gpus {
            assert_eq!(gpu.links.len(), 18);
            for link in &gpu.links {
                let names: Vec<&str> = link.counters.keys().collect();
                assert_eq!(names, ["crc_errors", "recovery_errors", "replay_errors"]);
                assert!(link.counters.values().all(|c| c.value == 0 && !c.saturated));
            }
        }
    }
    let one = only(X2, "nvlink_i1_l5_e.txt");
    assert_eq!((one.gpus[0].index, one.gpus[0].links[0].link), (1, 5));
}

#[test]
fn lane_ecc_counts_are_real_and_non_zero() {
    let m = only(X2, "nvlink_ec.txt");
    assert_eq!(m.modes, [NvlinkMode::LaneEcc]);
    let g0 = &m.gpus[0];
    let count = |gpu: usize, link: u32, lane: usize| {
        m.gpus[gpu].link(link).unwrap().lanes()[lane]
            .ecc_correction_count
            .value
    };
    assert_eq!(count(0, 0, 0), 374);
    assert_eq!(count(0, 0, 1), 275);
    assert_eq!(count(0, 9, 0), 797);
    assert_eq!(count(1, 17, 0), 231);
    assert_eq!(count(1, 17, 1), 578);
    assert_eq!(g0.links.len(), 18);
    assert!(m
        .gpus
        .iter()
        .flat_map(|g| &g.links)
        .all(|l| l.lanes().len() == 2 && l.lanes().iter().all(|lane| !lane.overflow)));
}

#[test]
fn raw_and_data_throughput_counters_in_kib() {
    let r1 = only(X2, "during_gt_r_1.txt");
    let r2 = only(X2, "during_gt_r_2.txt");
    assert_eq!(r1.modes, [NvlinkMode::ThroughputRaw]);
    let raw = |m: &Nvlink, gpu: usize, link: u32, name: &str| {
        m.gpus[gpu].link(link).unwrap().counter(name).unwrap().value
    };
    assert_eq!(raw(&r1, 0, 0, "raw_tx_kib"), 520_106_574);
    assert_eq!(raw(&r2, 0, 0, "raw_tx_kib"), 567_093_100);
    assert_eq!(raw(&r2, 0, 0, "raw_rx_kib"), 568_085_223);
    assert_eq!(raw(&r1, 1, 0, "raw_tx_kib"), 503_474_986);
    assert_eq!(raw(&r1, 1, 17, "raw_rx_kib"), 549_004_536);

    let d = only(X2, "after_gt_d.txt");
    assert_eq!(d.modes, [NvlinkMode::ThroughputData]);
    assert_eq!(raw(&d, 0, 0, "data_tx_kib"), 279_640_129);
    assert_eq!(raw(&d, 0, 0, "data_rx_kib"), 279_434_972);

    let idle = only(X2, "p2p_before_gt_d.txt");
    assert!(idle
        .gpus
        .iter()
        .flat_map(|g| &g.links)
        .all(|l| l.counters.len() == 2 && l.counters.values().all(|c| c.value == 0)));
}

#[test]
fn two_snapshots_without_prompts_become_two_sections() {
    let strip = |file: &str| {
        text_of(&Path::new(X2).join(file))
            .lines()
            .filter(|l| !l.starts_with('$') && !l.starts_with("[exit"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let paste = format!(
        "{}\n{}\n",
        strip("during_gt_r_1.txt"),
        strip("during_gt_r_2.txt")
    );
    let doc = input::read(&paste, &ReadOptions::default()).unwrap();
    let models = nvlink(&doc);
    assert_eq!(models.len(), 2);
    assert!(doc.all_warnings().is_empty());
    let tx = |m: &Nvlink| m.gpus[0].links[0].counter("raw_tx_kib").unwrap().value;
    assert_eq!((tx(models[0]), tx(models[1])), (520_106_574, 567_093_100));
}

#[test]
fn remote_ends_capabilities_and_other_modes() {
    let p = only(X2, "nvlink_p.txt");
    assert_eq!(p.modes, [NvlinkMode::RemotePciBusId]);
    let r = only(X2, "nvlink_R.txt");
    assert_eq!(r.modes, [NvlinkMode::RemoteLinkInfo]);
    for m in [&p, &r] {
        let remotes: Vec<_> = m
            .gpus
            .iter()
            .flat_map(|g| &g.links)
            .map(|l| l.remote().cloned().unwrap())
            .collect();
        assert_eq!(remotes.len(), 36);
        assert!(remotes.iter().all(|r| r.is_unknown()));
    }
    assert!(r.gpus[1]
        .links
        .iter()
        .all(|l| l.remote().unwrap().link == Some(0)));

    let c = only(X2, "nvlink_c.txt");
    assert!(c
        .gpus
        .iter()
        .flat_map(|g| &g.links)
        .all(|l| l.capabilities().len() == 6 && l.capabilities().values().all(|v| *v)));

    let lp = only(X2, "nvlink_gLowPwrInfo.txt");
    assert_eq!(lp.gpus[1].low_power_threshold_unit_us, Some(100));
    assert_eq!(lp.gpus[1].low_power_threshold_range, Some((1, 8191)));
    assert!(lp.gpus.iter().flat_map(|g| &g.links).all(|l| {
        l.low_power_mode() == Some("Low Power State") && l.low_power_threshold_us() == Some(50_000)
    }));

    let info = only(X2, "nvlink_info.txt");
    assert_eq!(
        info.gpus[1].info.get("NVLE").map(String::as_str),
        Some("disabled")
    );
    assert_eq!(
        info.gpus[1]
            .info
            .get("Firmware Version")
            .map(String::as_str),
        Some("N/A")
    );

    let bridge = only(X2, "nvlink_cBridge.txt");
    assert_eq!(bridge.gpus.len(), 2);
    assert!(bridge.gpus.iter().all(|g| g.links.is_empty()));

    let width = only(X2, "nvlink_gLWidth.txt");
    assert_eq!(width.gpus[0].messages, ["Not supported"]);

    for dir in [X2, X1] {
        assert_eq!(
            only(dir, "nvlink_gBwMode.txt").bandwidth_mode.as_deref(),
            Some("FULL")
        );
    }
}

#[test]
fn a_gpu_without_nvlink_prints_nothing_and_that_is_an_empty_model() {
    for file in [
        "nvlink_s.txt",
        "nvlink_e.txt",
        "nvlink_gt_d.txt",
        "nvlink_ec.txt",
        "nvlink_R.txt",
    ] {
        let m = only(X1, file);
        assert_eq!(m, Nvlink::default(), "{file}");
    }
}

#[test]
fn nvidia_smi_list_and_help_are_not_nvlink() {
    for dir in [X2, X1] {
        for file in ["smi_L.txt", "nvlink_help.txt"] {
            let doc = input::read_all(
                &text_of(&Path::new(dir).join(file)),
                &ReadOptions::default(),
            )
            .unwrap();
            assert!(nvlink(&doc).is_empty(), "{dir}/{file}");
        }
    }
}

#[test]
fn public_samples_values() {
    let dir = Path::new(PUBLIC);
    if !dir.is_dir() {
        println!("skipped: {PUBLIC} not present (public samples are not part of the repository)");
        return;
    }
    let get = |file: &str| only(PUBLIC, file);
    let h100 = get("nvlink-s__hpe-jp-elearning-h100pcie__1.txt");
    for gpu in &h100.gpus {
        let inactive: Vec<u32> = gpu.inactive_links().map(|l| l.link).collect();
        assert_eq!(inactive, [4, 5, 10, 11, 16, 17]);
        assert_eq!(gpu.active_links().count(), 12);
    }
    let remote = get("nvlink-R__hpe-jp-elearning-h100pcie__1.txt");
    let l4 = remote.gpus[0].link(4).unwrap().remote().cloned().unwrap();
    assert_eq!(
        (l4.pci_bus_id.as_str(), l4.link),
        ("00000000:D5:00.0", Some(6))
    );
    assert_eq!(remote.gpus[1].links.len(), 12);

    let a100_pcie = get("nvlink-s__hpe-jp-elearning-a100pcie__1.txt");
    assert!(a100_pcie.gpus.iter().all(|g| g.all_links_inactive));
    let bad = get("nvlink-s__azurehpc-health-checks-testdata__bad.txt");
    assert_eq!(
        (bad.gpus[0].index, bad.gpus[0].all_links_inactive),
        (6, true)
    );
    let good = get("nvlink-s__azurehpc-health-checks-testdata__good.txt");
    assert_eq!(good.gpus[0].name, "NVIDIA A100-SXM4-80GB");
    assert_eq!(good.gpus[0].active_links().count(), 12);
    assert!(good.gpus[0]
        .links
        .iter()
        .all(|l| l.speed_gb_per_s == Some(25.0)));
}

/// The knowledge base agrees with every healthy capture we have, so a rule
/// built on it cannot flag these machines.
#[test]
fn knowledge_base_agrees_with_healthy_captures() {
    use fabricscope::kb::gpu_nvlink_expectation;
    let check = |m: &Nvlink| {
        for gpu in &m.gpus {
            let spec = gpu_nvlink_expectation(&gpu.name).unwrap_or_else(|| panic!("{}", gpu.name));
            assert_eq!(
                spec.link_slots,
                Some(gpu.links.len() as u32),
                "{}",
                gpu.name
            );
            assert_eq!(
                gpu.active_links().count() as u32,
                spec.active_links,
                "{}",
                gpu.name
            );
            for link in gpu.active_links() {
                assert_eq!(spec.is_full_speed(link.speed_gb_per_s.unwrap()), Some(true));
            }
        }
    };
    check(&only(X2, "nvlink_s.txt"));
    if Path::new(PUBLIC).is_dir() {
        check(&only(PUBLIC, "nvlink-s__hpe-jp-elearning-h100pcie__1.txt"));
        check(&only(
            PUBLIC,
            "nvlink-s__azurehpc-health-checks-testdata__good.txt",
        ));
        let pcie = only(PUBLIC, "nvlink-s__hpe-jp-elearning-a100pcie__1.txt");
        for gpu in &pcie.gpus {
            let spec = gpu_nvlink_expectation(&gpu.name).unwrap();
            assert!(gpu.all_links_inactive && spec.all_inactive_can_be_normal);
        }
    } else {
        println!("public samples skipped: {PUBLIC} not present");
    }
}

#[test]
fn pasted_forms_pdsh_prefixes_fences_and_prompts() {
    let pdsh = "node01: GPU 0: NVIDIA H200 (UUID: GPU-aaaa)
node02: GPU 0: NVIDIA H200 (UUID: GPU-bbbb)
node01: \t Link 0: 26.562 GB/s
node02: \t Link 0: <inactive>
node01: \t Link 1: 26.562 GB/s
node02: \t Link 1: 26.562 GB/s
";
    let doc = input::read(pdsh, &ReadOptions::default()).unwrap();
    assert!(doc.all_warnings().is_empty() && doc.unrecognised.is_empty());
    let hosts: Vec<_> = doc.sections.iter().map(|s| s.host.as_deref()).collect();
    assert_eq!(hosts, [Some("node01"), Some("node02")]);
    let models = nvlink(&doc);
    assert_eq!(models[0].gpus[0].active_links().count(), 2);
    assert_eq!(
        models[1].gpus[0]
            .inactive_links()
            .map(|l| l.link)
            .collect::<Vec<_>>(),
        [0]
    );

    let fenced = "```
[root@gpu07 ~]# nvidia-smi nvlink -s
GPU 0: Tesla V100-SXM2-16GB (UUID: GPU-xxx)
         Link 0: 25.781 GB/s
         Link 1: <inactive>
```
";
    let doc = read_clean_text(fenced);
    assert_eq!(doc.sections[0].host.as_deref(), Some("gpu07"));
    let m = nvlink(&doc)[0].clone();
    assert_eq!(m.gpus[0].links[0].speed_gb_per_s, Some(25.781));
    assert!(m.gpus[0].links[1].inactive);

    // Help text and `-L` after a real block do not break it.
    let mixed = "$ nvidia-smi nvlink -e
GPU 0: NVIDIA H200 (UUID: GPU-aaaa)
\t Link 0: Replay Errors: 0
$ nvidia-smi nvlink -gt d
GPU 0: NVIDIA H200 (UUID: GPU-aaaa)
\t Link 0: Data Tx: 5 KiB
";
    let doc = read_clean_text(mixed);
    let modes: Vec<_> = nvlink(&doc).iter().map(|m| m.modes.clone()).collect();
    assert_eq!(
        modes,
        [
            vec![NvlinkMode::ErrorCounters],
            vec![NvlinkMode::ThroughputData]
        ]
    );
}

#[test]
fn a_gpu_with_nothing_under_it_stays_in_the_same_section() {
    let text = "GPU 0: NVIDIA H100 PCIe (UUID: GPU-aaaa)
GPU 1: NVIDIA H100 PCIe (UUID: GPU-bbbb)
\t Link 0: 26.562 GB/s
";
    for paste in [text.to_owned(), format!("$ nvidia-smi nvlink -s\n{text}")] {
        let doc = read_clean_text(&paste);
        assert_eq!(doc.sections.len(), 1, "{paste}");
        let gpus: Vec<u32> = nvlink(&doc)[0].gpus.iter().map(|g| g.index).collect();
        assert_eq!(gpus, [0, 1]);
    }
}

fn read_clean_text(text: &str) -> Document {
    let doc = input::read(text, &ReadOptions::default()).unwrap();
    assert!(doc.all_warnings().is_empty(), "{:?}", doc.all_warnings());
    assert!(doc.unrecognised.is_empty(), "{:?}", doc.unrecognised);
    assert!(doc.sections.iter().all(|s| s.kind == Kind::Nvlink));
    doc
}

/// The output of one command, without the capture script's `$ …` and `[exit N]` lines.
fn tool_output(path: &Path) -> String {
    let text = text_of(path);
    let mut out = String::new();
    for line in text.lines() {
        if !line.starts_with("$ ") && !line.starts_with("[exit ") {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// Rendering a capture's model gives back nvidia-smi's exact bytes: the
/// model keeps everything the tool printed, in the tool's order.
#[test]
fn render_reproduces_our_captures_byte_for_byte() {
    use fabricscope::parse::nvlink::{render, render_mode};
    let mut checked = 0;
    for dir in [X2, X1] {
        for path in own_nvlink_files(Path::new(dir)) {
            let doc = read_clean(&path);
            let Some(m) = nvlink(&doc).first().map(|m| (*m).clone()) else {
                continue;
            };
            let rendered = match m.modes.as_slice() {
                [mode] => render_mode(&m, *mode),
                _ => render(&m),
            };
            assert_eq!(rendered, tool_output(&path), "{}", path.display());
            checked += 1;
        }
    }
    assert_eq!(checked, 54);
    if Path::new(PUBLIC).is_dir() {
        for file in [
            "nvlink-s__azurehpc-health-checks-testdata__good.txt",
            "nvlink-s__azurehpc-health-checks-testdata__bad.txt",
        ] {
            let path = Path::new(PUBLIC).join(file);
            let m = only(PUBLIC, file);
            assert_eq!(render(&m), text_of(&path), "{file}");
        }
    }
}
