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
    let junk = "x".repeat(1 << 20) + "\n" + &"\n".repeat(1 << 20);
    measure("input::read, 1 MiB line + 1M empty lines", &junk, |t| {
        black_box(
            fabricscope::read_all(t, &options)
                .map(|d| d.line_count)
                .ok(),
        );
    });
}
