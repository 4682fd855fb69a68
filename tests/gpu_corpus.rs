//! Every GPU-side capture of the topology and telemetry formats, read
//! through the whole input layer (`fabricscope::read`), with values checked
//! against what the files say (read by eye, not from the code).
//!
//! The captures live in `../shared/corpus/` next to the repository; the
//! project's own ones are also copied into `tests/fixtures/own/` so the most
//! important checks run without the corpus. Public samples are read in
//! place only and skipped, with a message, when the corpus is absent.

// Helpers outside `#[test]` functions are test code too.
#![allow(clippy::panic, clippy::indexing_slicing, clippy::unwrap_used)]

use fabricscope::model::dcgmi_nvlink::DcgmLinkState;
use fabricscope::model::dmon::MonitorTool;
use fabricscope::model::smi_query::{ClockReason, SmiQuery};
use fabricscope::model::topo::{Link, P2pCapability, P2pStatus};
use fabricscope::{read, Document, Kind, ReadOptions, SectionData};
use std::path::{Path, PathBuf};

fn corpus() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    if dir.is_dir() {
        Some(dir)
    } else {
        println!("skipped: {} is absent", dir.display());
        None
    }
}

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/own")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn doc(text: &str) -> Document {
    read(text, &ReadOptions::default()).expect("a recognised section")
}

/// Reads a file and requires exactly these kinds, nothing unrecognised and
/// no warnings.
fn clean(text: &str, kinds: &[Kind], what: &str) -> Document {
    let d = doc(text);
    let got: Vec<Kind> = d.sections.iter().map(|s| s.kind).collect();
    assert_eq!(got, kinds, "{what}");
    assert!(d.unrecognised.is_empty(), "{what}: {:?}", d.unrecognised);
    assert!(
        d.all_warnings().is_empty(),
        "{what}: {:?}",
        d.all_warnings()
    );
    d
}

/// The own captures of our formats and the kinds each must give.
const OWN: &[(&str, &[Kind])] = &[
    ("topo_m.txt", &[Kind::TopoMatrix]),
    ("topo_mp.txt", &[Kind::TopoMatrix]),
    ("topo_p2p_a.txt", &[Kind::TopoP2p]),
    ("topo_p2p_n.txt", &[Kind::TopoP2p]),
    ("topo_p2p_r.txt", &[Kind::TopoP2p]),
    ("topo_p2p_w.txt", &[Kind::TopoP2p]),
    ("q.txt", &[Kind::SmiQuery]),
    ("q_clock_temp_perf.txt", &[Kind::SmiQuery]),
    ("q_d_supported.txt", &[Kind::SmiQuery]),
    ("during_q_perf.txt", &[Kind::SmiQuery]),
    ("qx.txt", &[Kind::SmiQuery]),
    ("query_csv.txt", &[Kind::SmiCsv]),
    ("query_csv_nounits.txt", &[Kind::SmiCsv]),
    ("smi_L.txt", &[Kind::SmiList]),
    ("dmon.txt", &[Kind::SmiDmon]),
    ("dmon_all.txt", &[Kind::SmiDmon]),
    ("dmon_t.txt", &[Kind::SmiDmon]),
    ("during_dmon.txt", &[Kind::SmiDmon]),
    ("during_dmon_all.txt", &[Kind::SmiDmon]),
    ("pmon.txt", &[Kind::SmiDmon]),
];

/// Failed commands: a section of the command's kind, no data, the error
/// as a tool message, no warnings.
const FAILED: &[(&str, Kind, usize)] = &[
    ("during_query.txt", Kind::SmiCsv, 1),
    ("during_dmon_nvlink.txt", Kind::SmiDmon, 2),
];

#[test]
fn every_own_capture_reads_cleanly() {
    let Some(dir) = corpus() else { return };
    for host in ["h200-x2-driver580", "h200-x1-driver580"] {
        for (file, kinds) in OWN {
            let path = dir.join("own").join(host).join(file);
            let text = std::fs::read_to_string(&path).unwrap();
            clean(&text, kinds, &path.display().to_string());
        }
        for (file, kind, messages) in FAILED {
            let path = dir.join("own").join(host).join(file);
            let d = doc(&std::fs::read_to_string(&path).unwrap());
            let s = &d.sections[0];
            assert_eq!((d.sections.len(), s.kind), (1, *kind), "{file}");
            assert_eq!(s.messages.len(), *messages, "{file}");
            assert!(
                d.all_warnings().is_empty() && d.unrecognised.is_empty(),
                "{file}"
            );
        }
    }
}

/// `topo -m -i 0` is refused with nvidia-smi's usage error: a message of
/// the tool (IN003 says the command line was refused), not a matrix, nor
/// an unread line of one.
#[test]
fn topo_usage_error_is_a_message_not_a_matrix() {
    let Some(dir) = corpus() else { return };
    let d = doc(&std::fs::read_to_string(dir.join("own/h200-x2-driver580/topo_m_i.txt")).unwrap());
    let SectionData::TopoMatrix(m) = &d.sections[0].data else {
        panic!("{:?}", d.sections[0].kind)
    };
    assert!(m.devices.is_empty() && m.partial.is_none());
    assert!(d.all_warnings().is_empty(), "{:?}", d.all_warnings());
    let messages = &d.sections[0].messages;
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert_eq!(messages[0].line, 2);
}

/// Help texts, versions and other commands' output are not tool data of
/// these formats; none of them may be claimed by a GPU format, and the
/// NVLink captures (another parser's) must not be claimed either.
#[test]
fn nothing_else_in_the_corpus_is_claimed() {
    let Some(dir) = corpus() else { return };
    let ours = [
        Kind::TopoMatrix,
        Kind::TopoP2p,
        Kind::SmiQuery,
        Kind::SmiCsv,
        Kind::SmiList,
        Kind::SmiDmon,
        Kind::DcgmiDmon,
        Kind::DcgmiNvlinkStatus,
        Kind::DcgmiNvlinkErrors,
    ];
    let mut files = Vec::new();
    for sub in [
        "own/h200-x2-driver580",
        "own/h200-x1-driver580",
        "public/nvlink",
        "public/ib",
    ] {
        let Ok(entries) = std::fs::read_dir(dir.join(sub)) else {
            continue;
        };
        for e in entries.flatten() {
            files.push(e.path());
        }
    }
    let ours_by_name: Vec<&str> = OWN
        .iter()
        .map(|(f, _)| *f)
        .chain(FAILED.iter().map(|(f, _, _)| *f))
        .collect();
    for path in files {
        let name = path.file_name().unwrap().to_str().unwrap();
        let is_own_gpu_file = path.parent().unwrap().to_str().unwrap().contains("/own/")
            && (ours_by_name.contains(&name) || name == "topo_m_i.txt");
        if is_own_gpu_file || name.starts_with("topo-m__") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let Ok(d) = fabricscope::read_all(&text, &ReadOptions::default()) else {
            continue;
        };
        for s in &d.sections {
            assert!(
                !ours.contains(&s.kind),
                "{} claimed as {:?} at {}",
                path.display(),
                s.kind,
                s.span
            );
        }
    }
}

/// `nvidia-smi nvlink -cBridge` prints bare `GPU N: … (UUID: …)` lines,
/// the same text as `nvidia-smi -L`: the prompt decides.
#[test]
fn the_prompt_decides_between_identical_outputs() {
    let gpus = "GPU 0: NVIDIA H200 (UUID: GPU-d4a16625-4536-2b66-d7f0-0060bf86bff4)\nGPU 1: NVIDIA H200 (UUID: GPU-46ba23f5-6332-1b57-d41e-06fa07553f24)\n";
    let kinds = |text: &str| -> Vec<Kind> { doc(text).sections.iter().map(|s| s.kind).collect() };
    assert_eq!(
        kinds(&format!("$ nvidia-smi nvlink -cBridge\n{gpus}")),
        [Kind::Nvlink]
    );
    assert_eq!(kinds(&format!("$ nvidia-smi -L\n{gpus}")), [Kind::SmiList]);
    assert_eq!(kinds(gpus), [Kind::SmiList]);
}

#[test]
fn topo_values_match_the_captures() {
    let d = clean(
        &fixture("h200-x2-driver580/topo_m.txt"),
        &[Kind::TopoMatrix],
        "topo_m",
    );
    let SectionData::TopoMatrix(m) = &d.sections[0].data else {
        unreachable!()
    };
    let c = m.cell("GPU0", "GPU1").unwrap();
    assert_eq!((c.value.clone(), c.line), (Link::Nvlink { count: 18 }, 3));
    assert_eq!(m.cell("GPU1", "GPU0").unwrap().line, 4);
    assert!(m.gpu_pairs_without_nvlink().is_empty());
    let g1 = m.device("GPU1").unwrap();
    assert_eq!(g1.cpu_affinity.as_deref(), Some("0-31"));
    assert_eq!(g1.numa_affinity.as_deref(), Some("0"));
    assert_eq!(g1.gpu_numa_id.as_deref(), Some("N/A"));
    assert_eq!(
        m.affinity_columns,
        ["CPU Affinity", "NUMA Affinity", "GPU NUMA ID"]
    );
    assert_eq!(m.legend.len(), 7);
    assert_eq!(m.pci_only, Some(false));
    assert_eq!(m.nics().count(), 0);

    let d = clean(
        &fixture("h200-x2-driver580/topo_mp.txt"),
        &[Kind::TopoMatrix],
        "topo_mp",
    );
    let SectionData::TopoMatrix(m) = &d.sections[0].data else {
        unreachable!()
    };
    assert_eq!(m.pci_only, Some(true));
    assert_eq!(m.gpu_pairs_without_nvlink()[0].value, Link::Phb);

    let d = clean(
        &fixture("h200-x2-driver580/topo_p2p_a.txt"),
        &[Kind::TopoP2p],
        "topo_p2p_a",
    );
    let SectionData::TopoP2p(p) = &d.sections[0].data else {
        unreachable!()
    };
    assert_eq!(p.capability, Some(P2pCapability::Atomics));
    assert_eq!(p.cell("GPU1", "GPU0").unwrap().value, P2pStatus::Ok);
    assert_eq!(p.not_ok().count(), 0);
}

#[test]
fn public_topo_sample_reads_in_place() {
    let Some(dir) = corpus() else { return };
    let path = dir.join("public/nvlink/topo-m__hpe-jp-elearning-h100pcie__1.txt");
    let d = clean(
        &std::fs::read_to_string(path).unwrap(),
        &[Kind::TopoMatrix],
        "hpe topo",
    );
    assert_eq!(d.sections[0].host.as_deref(), Some("dl380ag11"));
    let SectionData::TopoMatrix(m) = &d.sections[0].data else {
        unreachable!()
    };
    assert_eq!(
        m.cell("GPU1", "GPU0").unwrap().value,
        Link::Nvlink { count: 12 }
    );
    let g0 = m.device("GPU0").unwrap();
    assert_eq!(g0.cpu_affinity.as_deref(), Some("32-63,96-127"));
    assert_eq!(g0.numa_affinity.as_deref(), Some("1"));
}

fn query(name: &str) -> SmiQuery {
    let d = clean(&fixture(name), &[Kind::SmiQuery], name);
    match &d.sections[0].data {
        SectionData::SmiQuery(q) => q.clone(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn smi_query_values_match_the_captures() {
    let q = query("h200-x2-driver580/q.txt");
    assert_eq!(q.timestamp.as_deref(), Some("Mon Nov 30 00:10:31 2026"));
    // `date -u -d '2026-11-30 00:10:31' +%s`
    assert_eq!(q.timestamp_unix, Some(1_795_997_431));
    assert_eq!(q.driver_version.as_deref(), Some("580.159.04"));
    assert_eq!(q.cuda_version.as_deref(), Some("13.0"));
    assert_eq!(q.attached_gpus, Some(2));
    assert_eq!(q.gpus.len(), 2);
    let g0 = &q.gpus[0];
    assert_eq!(g0.bus_id, "00000000:00:06.0");
    assert_eq!(g0.product_name.as_deref(), Some("NVIDIA H200"));
    assert_eq!(
        g0.uuid.as_deref(),
        Some("GPU-d4a16625-4536-2b66-d7f0-0060bf86bff4")
    );
    assert_eq!(g0.temperature.gpu_c, Some(31.0));
    assert_eq!(g0.temperature.memory_c, Some(33.0));
    assert_eq!(g0.temperature.tlimit_c, Some(56.0));
    assert_eq!(g0.power.draw_w, Some(77.89));
    assert_eq!(g0.power.instant_w, Some(77.18));
    assert_eq!(g0.power.limit_w, Some(700.0));
    assert_eq!(g0.clocks.sm_mhz, Some(345.0));
    assert_eq!(g0.clocks.memory_mhz, Some(3201.0));
    assert_eq!(g0.max_clocks.graphics_mhz, Some(1980.0));
    assert_eq!(g0.performance_state.as_deref(), Some("P0"));
    let hw_thermal = g0
        .clock_event_reasons
        .iter()
        .find(|r| r.reason == ClockReason::HwThermalSlowdown)
        .unwrap();
    assert_eq!((hw_thermal.active, hw_thermal.line), (Some(false), 100));
    let idle = g0
        .clock_event_reasons
        .iter()
        .find(|r| r.reason == ClockReason::Idle)
        .unwrap();
    assert_eq!(idle.active, Some(true));
    assert_eq!(g0.active_slowdowns().count(), 0);
    // Clocks Event Reasons Counters, line 110: `HW Power Braking : 0 us`.
    let braking = g0
        .clock_event_counters
        .iter()
        .find(|c| c.reason == ClockReason::HwPowerBrakeSlowdown)
        .unwrap();
    assert_eq!((braking.microseconds, braking.line), (Some(0.0), 110));
    assert_eq!(g0.clock_event_counters.len(), 5);
    let sram = g0
        .ecc_errors
        .iter()
        .find(|e| e.path == "Aggregate/SRAM Correctable")
        .unwrap();
    assert_eq!((sram.value, sram.line), (Some(178_546), 155));
    assert_eq!(q.gpus[1].temperature.gpu_c, Some(33.0));
    assert_eq!(
        q.gpus[0]
            .field(&[&["PCI"], &["Bus Id"]])
            .unwrap()
            .value
            .as_deref(),
        Some("00000000:00:06.0")
    );

    let x = query("h200-x2-driver580/qx.txt");
    assert!(x.xml);
    // `date -u -d '2026-11-30 00:10:32' +%s`
    assert_eq!(x.timestamp_unix, Some(1_795_997_432));
    assert_eq!(x.gpus[0].uuid, g0.uuid);
    assert_eq!(x.gpus[0].temperature.gpu_c, Some(31.0));
    assert_eq!(x.gpus[0].power.draw_w, Some(77.68));
    assert_eq!(x.gpus[1].bus_id, "00000000:00:07.0");
    assert!(x.gpus[0]
        .clock_event_reasons
        .iter()
        .any(|r| r.reason == ClockReason::HwThermalSlowdown && r.active == Some(false)));

    let perf = query("h200-x2-driver580/during_q_perf.txt");
    let idle = perf.gpus[1]
        .clock_event_reasons
        .iter()
        .find(|r| r.reason == ClockReason::Idle)
        .unwrap();
    assert_eq!(idle.active, Some(false));
}

#[test]
fn csv_list_and_dmon_values_match_the_captures() {
    let d = clean(
        &fixture("h200-x2-driver580/query_csv.txt"),
        &[Kind::SmiCsv],
        "csv",
    );
    let SectionData::SmiCsv(c) = &d.sections[0].data else {
        unreachable!()
    };
    assert!(c.header);
    let r0 = &c.rows[0];
    let power = c.value(r0, "power.draw").unwrap();
    assert_eq!(
        (power.number, power.unit.as_deref()),
        (Some(77.55), Some("W"))
    );
    assert_eq!(c.value(r0, "clocks.sm").unwrap().number, Some(345.0));
    assert_eq!(
        c.value(&c.rows[1], "temperature.gpu").unwrap().number,
        Some(33.0)
    );
    assert_eq!(
        c.value(r0, "clocks_throttle_reasons.active").unwrap().text,
        "0x0000000000000001"
    );

    let d = clean(
        &fixture("h200-x2-driver580/query_csv_nounits.txt"),
        &[Kind::SmiCsv],
        "csv nounits",
    );
    let SectionData::SmiCsv(c) = &d.sections[0].data else {
        unreachable!()
    };
    assert!(!c.header);
    assert_eq!(c.fields.len(), 14);
    assert_eq!(
        c.value(&c.rows[0], "temperature.memory").unwrap().number,
        Some(32.0)
    );
    assert_eq!(
        c.value(&c.rows[1], "power.draw").unwrap().number,
        Some(78.0)
    );
    assert_eq!(
        c.value(&c.rows[1], "power.limit").unwrap().number,
        Some(700.0)
    );
    assert_eq!(
        c.value(&c.rows[0], "clocks_event_reasons.hw_thermal_slowdown")
            .unwrap()
            .text,
        "Not Active"
    );

    let d = clean(
        &fixture("h200-x2-driver580/smi_L.txt"),
        &[Kind::SmiList],
        "-L",
    );
    let SectionData::SmiList(l) = &d.sections[0].data else {
        unreachable!()
    };
    assert_eq!(
        l.gpus[1].uuid.as_deref(),
        Some("GPU-46ba23f5-6332-1b57-d41e-06fa07553f24")
    );

    let d = clean(
        &fixture("h200-x2-driver580/during_dmon_all.txt"),
        &[Kind::SmiDmon],
        "dmon",
    );
    let SectionData::SmiDmon(m) = &d.sections[0].data else {
        unreachable!()
    };
    assert_eq!(m.tool, MonitorTool::NvidiaSmiDmon);
    let t = &m.tables[0];
    assert_eq!(t.columns.len(), 21);
    assert_eq!(t.rows.len(), 6);
    let r = &t.rows[1];
    assert_eq!((r.gpu, r.line), (Some(1), 5));
    assert_eq!(t.value(r, "rxpci").unwrap().number, Some(12.0));
    assert_eq!(t.value(r, "pwr").unwrap().number, Some(180.0));
    assert_eq!(
        t.columns[t.column("rxpci").unwrap()].unit.as_deref(),
        Some("MB/s")
    );
    assert_eq!(t.value(&t.rows[4], "sm").unwrap().number, Some(100.0));
}

#[test]
fn x1_single_gpu_captures() {
    let Some(dir) = corpus() else { return };
    let text = std::fs::read_to_string(dir.join("own/h200-x1-driver580/q.txt")).unwrap();
    let d = clean(&text, &[Kind::SmiQuery], "x1 q");
    let SectionData::SmiQuery(q) = &d.sections[0].data else {
        unreachable!()
    };
    // `date -u -d '2026-11-30 00:12:56' +%s`
    assert_eq!(q.timestamp_unix, Some(1_795_997_576));
    assert_eq!(q.gpus[0].temperature.gpu_c, Some(33.0));
    assert_eq!(q.gpus[0].temperature.memory_c, Some(34.0));
    let text = std::fs::read_to_string(dir.join("own/h200-x1-driver580/topo_m.txt")).unwrap();
    let d = clean(&text, &[Kind::TopoMatrix], "x1 topo");
    let SectionData::TopoMatrix(m) = &d.sections[0].data else {
        unreachable!()
    };
    assert_eq!(m.gpus().count(), 1);
    assert_eq!(m.cell("GPU0", "GPU0").unwrap().value, Link::SelfCell);
    assert_eq!(
        m.device("GPU0").unwrap().cpu_affinity.as_deref(),
        Some("0-15")
    );
}

/// dcgmi is not installed on the capture hosts; these inputs are laid out
/// as DCGM's dcgmi/Nvlink.cpp prints them, behind a prompt as pasted.
#[test]
fn dcgmi_outputs_behind_prompts() {
    let text = "$ dcgmi nvlink -s
+----------------------+
|  NvLink Link Status  |
+----------------------+
GPUs:
    gpuId 0:
        U U U U U U U U U U U U U U U U U U
    gpuId 1:
        D D D D D D D D D D D D D D D D D D
NvSwitches:
    No NvSwitches found.

Key: Up=U, Down=D, Disabled=X, Not Supported=_
$ dcgmi dmon -e 1011,1012 -c 1
#Entity          NVLTX          NVLRX
      Id
    GPU 0  123456789.000            N/A
";
    let d = clean(text, &[Kind::DcgmiNvlinkStatus, Kind::DcgmiDmon], "dcgmi");
    let SectionData::DcgmiNvlinkStatus(s) = &d.sections[0].data else {
        unreachable!()
    };
    assert!(s.gpus[1].links.iter().all(|l| *l == DcgmLinkState::Down));
    let SectionData::DcgmiDmon(m) = &d.sections[1].data else {
        unreachable!()
    };
    let t = &m.tables[0];
    assert_eq!(
        t.value(&t.rows[0], "1011").unwrap().number,
        Some(123_456_789.0)
    );
    assert_eq!(t.value(&t.rows[0], "1012").unwrap().number, None);
}

/// Pieces people paste of `nvidia-smi -q`: every 30-line window of a real
/// capture, starting on any line (inside nested blocks, on a heading, on a
/// value line), is read as `-q` output for what it holds, never refused and
/// never mistaken for another tool; a window without a `GPU 0000:…` heading
/// describes a GPU whose identity is unknown, not one it invents.
#[test]
fn every_window_of_a_query_output_is_read_as_a_fragment() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gpu/h200-x2/q.txt"),
    )
    .unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut problems = Vec::new();
    for start in 1..lines.len().saturating_sub(30) {
        let window = lines[start..start + 30].join("\n") + "\n";
        let d = match fabricscope::read(&window, &ReadOptions::default()) {
            Ok(d) => d,
            Err(e) => {
                problems.push(format!("line {}: {e}", start + 1));
                continue;
            }
        };
        let lost = d.unaccounted_lines(&window);
        if !lost.is_empty() {
            problems.push(format!("line {}: lines lost {lost:?}", start + 1));
        }
        for s in &d.sections {
            let SectionData::SmiQuery(q) = &s.data else {
                problems.push(format!("line {}: read as {:?}", start + 1, s.kind));
                continue;
            };
            let headed = window.lines().any(|l| l.starts_with("GPU 0000"));
            if !headed && q.gpus.iter().any(|g| !g.headerless) {
                problems.push(format!("line {}: a GPU without a heading", start + 1));
            }
            if !headed && !q.gpus.iter().any(|g| g.headerless) {
                problems.push(format!("line {}: the fragment's GPU not read", start + 1));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
