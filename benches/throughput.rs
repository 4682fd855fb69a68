//! Throughput of the input layer and parsers on large synthetic pastes built
//! from realistic output. Prints MB/s and lines/s; run with
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

/// Runs `f` repeatedly for about a second and prints its throughput.
fn measure(name: &str, input: &str, mut f: impl FnMut(&str)) {
    let start = Instant::now();
    let mut runs = 0u32;
    while start.elapsed() < Duration::from_secs(1) || runs < 3 {
        f(black_box(input));
        runs += 1;
    }
    let per_run = start.elapsed().as_secs_f64() / f64::from(runs);
    let mb = input.len() as f64 / 1e6;
    let lines = input.lines().count() as f64;
    println!(
        "{name:<40} {mb:>8.2} MB  {:>9.1} MB/s  {:>12.0} lines/s  ({runs} runs)",
        mb / per_run,
        lines / per_run
    );
}

fn main() {
    let options = fabricscope::ReadOptions::default();
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
    let junk = "x".repeat(1 << 20) + "\n" + &"\n".repeat(1 << 20);
    measure("input::read, 1 MiB line + 1M empty lines", &junk, |t| {
        black_box(
            fabricscope::read_all(t, &options)
                .map(|d| d.line_count)
                .ok(),
        );
    });
}
