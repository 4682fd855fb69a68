//! Throughput of the input layer and parsers on large synthetic pastes built
//! from realistic output. Prints MB/s, lines/s and how many times longer
//! than a plain line count of the same bytes (`str::lines().count()`, the
//! least any reader must do) each takes; run with
//! `cargo bench --bench throughput`. No timing is asserted anywhere: this is a
//! measurement, not a test.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::hint::black_box;
use std::time::{Duration, Instant};

/// A paste of `hosts` pdsh-prefixed ibstat outputs with 8 CAs each.
fn pdsh_ibstat(hosts: usize) -> String {
    let mut s = String::new();
    for h in 0..hosts {
        for ca in 0..8 {
            for line in [
                format!("CA 'mlx5_{ca}'"),
                "\tCA type: MT4129".to_owned(),
                "\tNumber of ports: 1".to_owned(),
                "\tFirmware version: 28.39.1002".to_owned(),
                "\tHardware version: 0".to_owned(),
                format!("\tNode GUID: 0xa088c20300e3{h:02x}{ca:02x}"),
                "\tSystem image GUID: 0xa088c20300e3142a".to_owned(),
                "\tPort 1:".to_owned(),
                "\t\tState: Active".to_owned(),
                "\t\tPhysical state: LinkUp".to_owned(),
                "\t\tRate: 400".to_owned(),
                format!("\t\tBase lid: {}", h * 8 + ca + 1),
                "\t\tLMC: 0".to_owned(),
                "\t\tSM lid: 1".to_owned(),
                "\t\tCapability mask: 0xa651e848".to_owned(),
                format!("\t\tPort GUID: 0xa088c20300e3{h:02x}{ca:02x}"),
                "\t\tLink layer: InfiniBand".to_owned(),
            ] {
                s.push_str(&format!("node{h:04}: {line}\n"));
            }
        }
    }
    s
}

/// `nvidia-smi nvlink -e` of 8 GPUs with 18 links each, behind a `$` prompt,
/// for `hosts` hosts one after another (about 12.6 KB a host).
fn nvlink_errors(hosts: usize) -> String {
    let mut s = String::new();
    for h in 0..hosts {
        s.push_str("$ nvidia-smi nvlink -e\n");
        for gpu in 0..8 {
            s.push_str(&format!(
                "GPU {gpu}: NVIDIA H100 80GB HBM3 (UUID: GPU-{h:08x}-0000-0000-0000-{gpu:012x})\n"
            ));
            for link in 0..18 {
                for (name, value) in [("Replay", h % 3), ("Recovery", 0), ("CRC", link % 5)] {
                    s.push_str(&format!("\t Link {link}: {name} Errors: {value}\n"));
                }
                s.push('\n');
            }
        }
    }
    s
}

/// `nvidia-smi nvlink -e` then `-gt r` from `hosts` hosts of 8 GPUs with 18
/// links each, behind `[root@host ~]#` prompts, as a fleet dump concatenates them.
fn nvlink_fleet(hosts: usize) -> String {
    let mut s = String::new();
    for h in 0..hosts {
        for (command, per_link) in [
            (
                "-e",
                &["Replay Errors: 0", "Recovery Errors: 0", "CRC Errors: 3"][..],
            ),
            (
                "-gt r",
                &["Raw Tx: 520106574 KiB", "Raw Rx: 549004536 KiB"][..],
            ),
        ] {
            s.push_str(&format!(
                "[root@gpu{h:04} ~]# nvidia-smi nvlink {command}\n"
            ));
            for gpu in 0..8 {
                s.push_str(&format!(
                    "GPU {gpu}: NVIDIA H100 80GB HBM3 (UUID: GPU-{h:08x}-0000-0000-0000-{gpu:012x})\n"
                ));
                for link in 0..18 {
                    for value in per_link {
                        s.push_str(&format!("\t Link {link}: {value}\n"));
                    }
                }
            }
        }
    }
    s
}

/// A paste of `hosts` pdsh-prefixed `perfquery -x -l` outputs, 8 ports each.
fn pdsh_perfquery(hosts: usize) -> String {
    let mut s = String::new();
    for h in 0..hosts {
        for port in 1..=8 {
            let mut block = vec![format!(
                "# Port extended counters: Lid {} port {port} (CapMask: 0x5300 CapMask2: 0x0000002)",
                h + 1
            )];
            block.push(format!("PortSelect:......................{port}"));
            block.push("CounterSelect:...................0x0000".to_owned());
            for (name, value) in [
                ("PortXmitData", 178_791_657_177_235u64),
                ("PortRcvData", 178_762_341_961_629),
                ("PortXmitPkts", 393_094_651_266),
                ("PortRcvPkts", 387_654_829_341),
                ("PortUnicastXmitPkts", 387_471_005_571),
                ("PortUnicastRcvPkts", 387_648_134_400),
                ("PortMulticastXmitPkts", 5_623_645_694),
                ("PortMulticastRcvPkts", 6_694_940),
                ("SymbolErrorCounter", 0),
                ("LinkErrorRecoveryCounter", 0),
                ("LinkDownedCounter", 1),
                ("PortRcvErrors", 0),
                ("PortXmitDiscards", 20_046),
                ("PortXmitWait", 41_864_608),
            ] {
                let dots = ".".repeat(32 - name.len());
                block.push(format!("{name}:{dots}{value}"));
            }
            for line in block {
                s.push_str(&format!("node{h:04}: {line}\n"));
            }
        }
    }
    s
}

/// An HGX-like `nvidia-smi topo -m` (8 GPUs all NV18, 10 NICs) behind a prompt.
fn topo_matrix(host: usize) -> String {
    let names: Vec<String> = (0..8)
        .map(|i| format!("GPU{i}"))
        .chain((0..10).map(|i| format!("NIC{i}")))
        .collect();
    let mut s = format!("[root@gpu{host:03} ~]# nvidia-smi topo -m\n");
    for n in &names {
        s.push('\t');
        s.push_str(n);
    }
    s.push_str("\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n");
    for (r, row) in names.iter().enumerate() {
        s.push_str(row);
        for c in 0..names.len() {
            let cell = match (r, c) {
                _ if r == c => " X ",
                (r, c) if r < 8 && c < 8 => "NV18",
                (r, c) if r.min(c) < 8 && r.max(c) - 8 == r.min(c) => "PIX",
                (r, c) if (r % 8) / 4 == (c % 8) / 4 => "NODE",
                _ => "SYS",
            };
            s.push('\t');
            s.push_str(cell);
        }
        if r < 8 {
            s.push_str(if r < 4 {
                "\t0-47\t0\t\tN/A"
            } else {
                "\t48-95\t1\t\tN/A"
            });
        }
        s.push('\n');
    }
    s.push_str("\nNIC Legend:\n\n");
    for i in 0..10 {
        s.push_str(&format!("  NIC{i}: mlx5_{i}\n"));
    }
    s
}

/// One GPU with `links` distinct `Link N:` status lines: a hostile paste.
fn one_gpu_many_links(links: usize) -> String {
    let mut s =
        String::from("GPU 0: NVIDIA H200 (UUID: GPU-d4a16625-4536-2b66-d7f0-0060bf86bff4)\n");
    for n in 0..links {
        s.push_str(&format!("\t Link {n}: 26.562 GB/s\n"));
    }
    s
}

/// Seconds per run of `f` on `input` (at least 3 runs, about a second).
fn seconds_per_run(input: &str, mut f: impl FnMut(&str)) -> f64 {
    let start = Instant::now();
    let mut runs = 0u32;
    while start.elapsed() < Duration::from_secs(1) || runs < 3 {
        f(black_box(input));
        runs += 1;
    }
    start.elapsed().as_secs_f64() / f64::from(runs)
}

/// Runs `f` repeatedly for about a second and prints its throughput, and
/// its time as a multiple of a plain line count over the same bytes.
fn measure(name: &str, input: &str, mut f: impl FnMut(&str)) {
    let start = Instant::now();
    let mut runs = 0u32;
    while start.elapsed() < Duration::from_secs(1) || runs < 3 {
        f(black_box(input));
        runs += 1;
    }
    let per_run = start.elapsed().as_secs_f64() / f64::from(runs);
    let count = seconds_per_run(input, |t| {
        black_box(t.lines().count());
    });
    let mb = input.len() as f64 / 1e6;
    let lines = input.lines().count() as f64;
    println!(
        "{name:<44} {mb:>6.2} MB {:>8.1} MB/s {:>11.0} lines/s {:>7.1}x line count ({runs} runs)",
        mb / per_run,
        lines / per_run,
        per_run / count
    );
}

fn main() {
    let options = fabricscope::ReadOptions::default();
    // Linear time: doubling a hostile input must about double the time
    // (the ratio printed should stay near 2; it was ~12 when finding a link
    // searched the GPU's list of links).
    let read = |t: &str| {
        let doc =
            fabricscope::read_all(t, &fabricscope::ReadOptions::default()).expect("within limits");
        black_box(doc.sections.len());
    };
    let half = seconds_per_run(&one_gpu_many_links(40_000), read);
    let full = seconds_per_run(&one_gpu_many_links(80_000), read);
    println!(
        "{:<40} 40k links {:.3} s, 80k links {:.3} s: ×{:.2} for ×2 input",
        "input::read, one GPU with many links",
        half,
        full,
        full / half
    );
    // The issue's yardstick: one 12 MB `nvidia-smi nvlink -e` paste.
    let errors = nvlink_errors(960);
    measure("input::read, nvlink -e 12 MB (960 hosts)", &errors, |t| {
        let doc = fabricscope::read_all(t, &options).expect("within limits");
        black_box(doc.sections.len());
    });
    // The same output as pdsh prints it, every line behind `host: `
    // (`scripts/bench-paste.py` times the CLI on such a paste).
    let pdsh_errors: String = (0..660)
        .flat_map(|h| {
            nvlink_errors(1)
                .lines()
                .skip(1)
                .map(|l| format!("gpu{h:05}: {l}\n"))
                .collect::<Vec<_>>()
        })
        .collect();
    measure(
        "input::read, pdsh nvlink -e 12 MB (660 hosts)",
        &pdsh_errors,
        |t| {
            let doc = fabricscope::read_all(t, &options).expect("within limits");
            black_box(doc.sections.len());
        },
    );
    let one_host = nvlink_errors(1);
    measure("parse::nvlink alone, -e of one host", &one_host, |t| {
        let lines = fabricscope::parse::lines_of(t);
        black_box(fabricscope::parse::nvlink::parse(&lines).value.gpus.len());
    });
    // A mixed fleet paste: each host's ibstat, perfquery, nvlink and topo
    // behind their prompts, as a collection script concatenates them.
    let mixed: String = (0..160)
        .map(|h| {
            let ibstat: String = pdsh_ibstat(1)
                .lines()
                .map(|l| format!("{}\n", l.split_once(": ").map_or(l, |(_, rest)| rest)))
                .collect();
            let perf: String = pdsh_perfquery(1)
                .lines()
                .map(|l| format!("{}\n", l.split_once(": ").map_or(l, |(_, rest)| rest)))
                .collect();
            format!(
                "[root@gpu{h:04} ~]# ibstat\n{ibstat}[root@gpu{h:04} ~]# perfquery -x -l\n{perf}{}{}",
                nvlink_fleet(1).replace("gpu0000", &format!("gpu{h:04}")),
                topo_matrix(h)
            )
        })
        .collect();
    measure("input::read, mixed paste (160 hosts)", &mixed, |t| {
        let doc = fabricscope::read_all(t, &options).expect("within limits");
        black_box(doc.sections.len());
    });
    // Linear time in the engine too: one paste of many hosts is one unit,
    // and doubling its hosts must about double the time of its analysis
    // (the ratio was ~4 when finding whether a section ends the input
    // walked the whole paste for each section).
    let analyze = |t: &str| {
        let doc = fabricscope::read_all(t, &options).expect("within limits");
        let report = fabricscope::analyze(&[doc], &fabricscope::AnalyzeOptions::default());
        black_box(report.findings.len());
    };
    let half_paste: String = mixed
        .split_inclusive('\n')
        .take(mixed.lines().count() / 2)
        .collect();
    let half = seconds_per_run(&half_paste, analyze);
    let full = seconds_per_run(&mixed, analyze);
    println!(
        "{:<40} 80 hosts {:.3} s, 160 hosts {:.3} s: ×{:.2} for ×2 input",
        "analyze, one paste of many hosts",
        half,
        full,
        full / half
    );
    let fleet = pdsh_ibstat(512);
    measure("input::read, pdsh ibstat x512 hosts", &fleet, |t| {
        let doc = fabricscope::read_all(t, &options).expect("within limits");
        black_box(doc.sections.len());
    });
    let plain: String = fleet
        .lines()
        .map(|l| l.split_once(": ").map_or(l, |(_, rest)| rest))
        .collect::<Vec<_>>()
        .join("\n");
    measure("parse::ibstat alone, 4096 CAs", &plain, |t| {
        let lines = fabricscope::parse::lines_of(t);
        black_box(fabricscope::parse::ibstat::parse(&lines).value.cas.len());
    });
    let nvlink = nvlink_fleet(128);
    measure("input::read, nvlink -e/-gt r x128 hosts", &nvlink, |t| {
        let doc = fabricscope::read_all(t, &options).expect("within limits");
        black_box(doc.sections.len());
    });
    let gpu_blocks: String = nvlink
        .lines()
        .filter(|l| !l.starts_with('['))
        .collect::<Vec<_>>()
        .join("\n");
    measure("parse::nvlink alone, 2048 GPU blocks", &gpu_blocks, |t| {
        let lines = fabricscope::parse::lines_of(t);
        black_box(fabricscope::parse::nvlink::parse(&lines).value.gpus.len());
    });
    let perf = pdsh_perfquery(512);
    measure("input::read, pdsh perfquery -x -l x512 hosts", &perf, |t| {
        let doc = fabricscope::read_all(t, &options).expect("within limits");
        black_box(doc.sections.len());
    });
    let plain: String = perf
        .lines()
        .map(|l| l.split_once(": ").map_or(l, |(_, rest)| rest))
        .collect::<Vec<_>>()
        .join("\n");
    measure("parse::perfquery alone, 4096 blocks", &plain, |t| {
        let lines = fabricscope::parse::lines_of(t);
        black_box(
            fabricscope::parse::perfquery::parse(&lines)
                .value
                .blocks
                .len(),
        );
    });
    // GPU side: 64 hosts' `nvidia-smi -q` behind prompts, and an 8-GPU,
    // 10-NIC `topo -m` repeated for 512 hosts.
    let q = include_str!("../tests/fixtures/own/h200-x2-driver580/q.txt");
    let queries: String = (0..64)
        .map(|h| {
            q.replace(
                "$ nvidia-smi -q",
                &format!("[root@gpu{h:03} ~]# nvidia-smi -q"),
            )
        })
        .collect();
    measure("input::read, nvidia-smi -q x64 hosts", &queries, |t| {
        let doc = fabricscope::read_all(t, &options).expect("within limits");
        black_box(doc.sections.len());
    });
    let topo: String = (0..512).map(topo_matrix).collect();
    measure("input::read, topo -m 8 GPU + 10 NIC x512", &topo, |t| {
        let doc = fabricscope::read_all(t, &options).expect("within limits");
        black_box(doc.sections.len());
    });
    let junk = "x".repeat(1 << 20) + "\n" + &"\n".repeat(1 << 20);
    measure("input::read, 1 MiB line + 1M empty lines", &junk, |t| {
        black_box(
            fabricscope::read_all(t, &options)
                .map(|d| d.line_count)
                .ok(),
        );
    });

    // The whole engine on a fleet: 32 copies of the bundled 12-host dump set,
    // each host file read as its own document, then every rule run once.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/fleet");
    let mut host_files: Vec<(String, String)> = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("examples/fleet").flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "txt") {
            let text = std::fs::read_to_string(&path).expect("readable example");
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            host_files.push((stem, text));
        }
    }
    let copies: Vec<(String, String)> = (0..32)
        .flat_map(|c| {
            host_files
                .iter()
                .map(move |(h, t)| (format!("{h}-{c:02}"), t.clone()))
        })
        .collect();
    let all: String = copies.iter().map(|(_, t)| t.as_str()).collect();
    measure("read + analyze, 384 host dumps", &all, |_| {
        let docs: Vec<fabricscope::Document> = copies
            .iter()
            .filter_map(|(host, text)| {
                let o = fabricscope::ReadOptions::default().with_default_host(host.clone());
                fabricscope::read_all(text, &o).ok()
            })
            .collect();
        let report = fabricscope::analyze(&docs, &fabricscope::AnalyzeOptions::default());
        black_box(report.findings.len());
    });
}
