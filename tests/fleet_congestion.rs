//! A generated fleet of healthy, busy, year-old hosts with a few real faults
//! (issue 9, item 5): congestion is not a fault, faults are still found.
//!
//! Every host has two adapters and, for each, `ibstat` plus two `perfquery
//! -x` snapshots a minute apart (with `date` before each). Lifetime counters
//! are what a busy fabric accumulates over months: `PortXmitWait` from a
//! thousand to tens of billions of ticks, terabytes of `PortXmitData`, a
//! reboot's `LinkDownedCounter`, a handful of symbol errors and discards
//! under their limits. Between the snapshots the healthy ports carry traffic
//! and wait a few per cent of the time, and no error counter grows.
//!
//! The values come from a seeded generator in this file, so the fleet is the
//! same on every run; `FABRICSCOPE_FLEET_HOSTS` changes its size (default
//! 1,000, the size of the report). The test asserts that no healthy
//! host gets a finding at warning or worse, and that every injected fault is
//! reported at warning or worse on its host and adapter.

// Test code: a failed unwrap or index is a failed test.
#![allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]

use fabricscope::{analyze, AnalyzeOptions, Document, Finding, ReadOptions, Severity};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// splitmix64: a small, well-mixed generator, good enough for test data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    #[allow(clippy::cast_precision_loss)]
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Log-uniform between `lo` and `hi`.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    fn log_uniform(&mut self, lo: f64, hi: f64) -> u64 {
        (lo.ln() + self.unit() * (hi.ln() - lo.ln())).exp() as u64
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// What is wrong with one adapter's port, if anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    None,
    /// Cable pulled: `Down` / `Polling`.
    Down,
    /// Port disabled: `Down` / `Disabled`.
    Disabled,
    /// No subnet manager answer: `Initializing` / `LinkUp`.
    NoSm,
    /// Trained at a quarter of the fleet's rate (1X of 4X).
    Narrow,
    /// Symbol errors and link recoveries climbing between the snapshots.
    SymbolErrorsClimbing,
    /// The link went down between the snapshots.
    LinkDownedNow,
    /// Receive errors climbing between the snapshots.
    RcvErrorsClimbing,
    /// Local link integrity errors climbing.
    IntegrityClimbing,
    /// Waiting for credit 40 % of the interval: real, sustained congestion.
    HeavyCongestion,
}

const FAULTS: [Fault; 9] = [
    Fault::Down,
    Fault::Disabled,
    Fault::NoSm,
    Fault::Narrow,
    Fault::SymbolErrorsClimbing,
    Fault::LinkDownedNow,
    Fault::RcvErrorsClimbing,
    Fault::IntegrityClimbing,
    Fault::HeavyCongestion,
];

/// Seconds between the two snapshots.
const INTERVAL: u64 = 60;
/// The fleet's rate, Gb/s (NDR 4X).
const RATE_GBPS: u64 = 400;

#[derive(Debug, Clone, Copy, Default)]
struct Counters {
    xmit_data: u64,
    rcv_data: u64,
    xmit_pkts: u64,
    rcv_pkts: u64,
    symbol: u64,
    recovery: u64,
    downed: u64,
    rcv_errors: u64,
    xmit_discards: u64,
    integrity: u64,
    vl15: u64,
    xmit_wait: u64,
}

fn perfquery_x(out: &mut String, lid: u32, c: &Counters) {
    let _ = writeln!(out, "$ perfquery -x {lid} 1");
    let _ = writeln!(
        out,
        "# Port extended counters: Lid {lid} port 1 (CapMask: 0x5A00 CapMask2: 0x0000002)"
    );
    let rows: [(&str, u64); 24] = [
        ("PortSelect", 1),
        ("CounterSelect", 0),
        ("PortXmitData", c.xmit_data),
        ("PortRcvData", c.rcv_data),
        ("PortXmitPkts", c.xmit_pkts),
        ("PortRcvPkts", c.rcv_pkts),
        ("PortUnicastXmitPkts", c.xmit_pkts),
        ("PortUnicastRcvPkts", c.rcv_pkts),
        ("PortMulticastXmitPkts", 0),
        ("PortMulticastRcvPkts", 0),
        ("SymbolErrorCounter", c.symbol),
        ("LinkErrorRecoveryCounter", c.recovery),
        ("LinkDownedCounter", c.downed),
        ("PortRcvErrors", c.rcv_errors),
        ("PortRcvRemotePhysicalErrors", 0),
        ("PortRcvSwitchRelayErrors", 0),
        ("PortXmitDiscards", c.xmit_discards),
        ("PortXmitConstraintErrors", 0),
        ("PortRcvConstraintErrors", 0),
        ("LocalLinkIntegrityErrors", c.integrity),
        ("ExcessiveBufferOverrunErrors", 0),
        ("VL15Dropped", c.vl15),
        ("PortXmitWait", c.xmit_wait),
        ("QP1Dropped", 0),
    ];
    for (name, value) in rows {
        let dots = ".".repeat(33usize.saturating_sub(name.len() + 1));
        if name == "CounterSelect" {
            let _ = writeln!(out, "{name}:{dots}0x{value:04x}");
        } else {
            let _ = writeln!(out, "{name}:{dots}{value}");
        }
    }
}

fn ibstat_ca(out: &mut String, ca: &str, lid: u32, guid: u64, fault: Fault) {
    let (state, phys, rate, lid) = match fault {
        Fault::Down => ("Down", "Polling", 10, 65535),
        Fault::Disabled => ("Down", "Disabled", 10, 65535),
        Fault::NoSm => ("Initializing", "LinkUp", RATE_GBPS, 65535),
        Fault::Narrow => ("Active", "LinkUp", RATE_GBPS / 4, lid),
        _ => ("Active", "LinkUp", RATE_GBPS, lid),
    };
    let _ = write!(
        out,
        "CA '{ca}'\n\tCA type: MT4129\n\tNumber of ports: 1\n\tFirmware version: 28.39.1002\n\tHardware version: 0\n\tNode GUID: 0x{guid:016x}\n\tSystem image GUID: 0x{guid:016x}\n\tPort 1:\n\t\tState: {state}\n\t\tPhysical state: {phys}\n\t\tRate: {rate}\n\t\tBase lid: {lid}\n\t\tLMC: 0\n\t\tSM lid: 1\n\t\tCapability mask: 0xa751e84a\n\t\tPort GUID: 0x{guid:016x}\n\t\tLink layer: InfiniBand\n"
    );
}

/// Lifetime counters of a healthy port on a busy, year-old host.
fn lifetime(rng: &mut Rng) -> Counters {
    let xmit_data = rng.log_uniform(1e9, 1e14);
    let rcv_data = rng.log_uniform(1e9, 1e14);
    Counters {
        xmit_data,
        rcv_data,
        xmit_pkts: xmit_data / 1024,
        rcv_pkts: rcv_data / 1024,
        // Most ports have none; a few have a handful, under the limit.
        symbol: if rng.below(10) == 0 { rng.below(11) } else { 0 },
        recovery: 0,
        // A reboot or two.
        downed: rng.below(4),
        rcv_errors: if rng.below(20) == 0 { rng.below(5) } else { 0 },
        xmit_discards: if rng.below(10) == 0 { rng.below(60) } else { 0 },
        integrity: 0,
        vl15: rng.below(30),
        // Thousands to tens of billions of ticks: congestion history.
        xmit_wait: rng.log_uniform(1e3, 5e10),
    }
}

/// The same port a minute later.
#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]
fn later(rng: &mut Rng, c: &Counters, fault: Fault) -> Counters {
    let words_per_second_at_line_rate = RATE_GBPS as f64 * 1e9 / 32.0;
    let ticks_per_second = RATE_GBPS as f64 * 1e9 / 64.0;
    let utilisation = rng.unit() * 0.6;
    let wait_share = if fault == Fault::HeavyCongestion {
        0.4
    } else {
        rng.unit() * 0.03
    };
    let sent = (words_per_second_at_line_rate * utilisation * INTERVAL as f64) as u64;
    let received = (words_per_second_at_line_rate * rng.unit() * 0.6 * INTERVAL as f64) as u64;
    let mut n = Counters {
        xmit_data: c.xmit_data + sent,
        rcv_data: c.rcv_data + received,
        xmit_pkts: c.xmit_pkts + sent / 1024,
        rcv_pkts: c.rcv_pkts + received / 1024,
        xmit_wait: c.xmit_wait + (ticks_per_second * wait_share * INTERVAL as f64) as u64,
        ..*c
    };
    match fault {
        Fault::SymbolErrorsClimbing => {
            n.symbol += 4000 + rng.below(2000);
            n.recovery += 3;
        }
        Fault::LinkDownedNow => n.downed += 1,
        Fault::RcvErrorsClimbing => n.rcv_errors += 900 + rng.below(200),
        Fault::IntegrityClimbing => n.integrity += 5,
        _ => {}
    }
    n
}

struct Fleet {
    documents: Vec<Document>,
    /// (host, adapter) → fault, for the faulty ports only.
    faults: BTreeMap<(String, String), Fault>,
    hosts: Vec<String>,
}

fn fleet(hosts: usize, snapshots: usize) -> Fleet {
    let mut rng = Rng(0x00C0_FFEE_2026_1201);
    // Faults go to hosts spread through the fleet, one each.
    let stride = hosts / (FAULTS.len() + 1);
    let mut faults = BTreeMap::new();
    let mut documents = Vec::with_capacity(hosts);
    let mut names = Vec::with_capacity(hosts);
    for h in 0..hosts {
        let host = format!("gpu{:04}", h + 1);
        let fault_here = (h > 0 && h % stride == 0)
            .then(|| FAULTS.get(h / stride - 1).copied())
            .flatten();
        let mut text = String::new();
        let mut ports = Vec::new();
        let _ = writeln!(text, "$ ibstat");
        for a in 0..2u32 {
            let ca = format!("mlx5_{a}");
            let lid = u32::try_from(2 * h).unwrap() + a + 2;
            let fault = if a == 1 {
                fault_here.unwrap_or(Fault::None)
            } else {
                Fault::None
            };
            if fault != Fault::None {
                faults.insert((host.clone(), ca.clone()), fault);
            }
            ibstat_ca(
                &mut text,
                &ca,
                lid,
                0xb83f_d203_0000_0000 | u64::from(lid),
                fault,
            );
            ports.push((lid, fault, lifetime(&mut rng)));
        }
        for s in 0..snapshots {
            let _ = writeln!(
                text,
                "$ date\nTue Dec  1 10:{:02}:00 UTC 2026",
                s * usize::try_from(INTERVAL / 60).unwrap()
            );
            for (lid, fault, counters) in &mut ports {
                if matches!(fault, Fault::Down | Fault::Disabled | Fault::NoSm) {
                    continue; // perfquery cannot reach a port without a LID
                }
                if s > 0 {
                    *counters = later(&mut rng, counters, *fault);
                }
                perfquery_x(&mut text, *lid, counters);
            }
        }
        let options = ReadOptions::default().with_default_host(host.clone());
        documents.push(fabricscope::read(&text, &options).unwrap());
        names.push(host);
    }
    Fleet {
        documents,
        faults,
        hosts: names,
    }
}

fn reported(f: &Finding) -> bool {
    f.severity >= Severity::Warning
}

/// Warning-or-worse findings per host, and the rules behind them.
fn by_host(findings: &[Finding]) -> BTreeMap<String, Vec<&Finding>> {
    let mut out: BTreeMap<String, Vec<&Finding>> = BTreeMap::new();
    for f in findings.iter().filter(|f| reported(f)) {
        if let Some(h) = &f.subject.host {
            out.entry(h.clone()).or_default().push(f);
        }
    }
    out
}

fn fleet_size() -> usize {
    std::env::var("FABRICSCOPE_FLEET_HOSTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000)
}

fn check(snapshots: usize) {
    let fleet = fleet(fleet_size(), snapshots);
    let report = analyze(&fleet.documents, &AnalyzeOptions::default());
    let hosts = by_host(&report.findings);
    let faulty: BTreeSet<&str> = fleet.faults.keys().map(|(h, _)| h.as_str()).collect();

    let mut false_positive_hosts = 0;
    let mut by_rule: BTreeMap<&str, usize> = BTreeMap::new();
    let mut example = None;
    for host in &fleet.hosts {
        if faulty.contains(host.as_str()) {
            continue;
        }
        if let Some(list) = hosts.get(host) {
            false_positive_hosts += 1;
            for f in list {
                *by_rule.entry(f.rule).or_default() += 1;
            }
            example.get_or_insert_with(|| format!("{}: {}", list[0].rule, list[0].message));
        }
    }
    let info_xmit_wait = report
        .findings
        .iter()
        .filter(|f| f.rule == "IB109" && f.severity == Severity::Info)
        .count();
    println!(
        "{} hosts, {snapshots} snapshot(s): {false_positive_hosts} healthy hosts with a warning or worse {by_rule:?}; {} IB109 info findings; findings by severity {:?}",
        fleet.hosts.len(),
        info_xmit_wait,
        report.summary
    );
    assert_eq!(
        false_positive_hosts,
        0,
        "healthy hosts reported at warning or worse, by rule {by_rule:?}; e.g. {}",
        example.unwrap_or_default()
    );

    for ((host, ca), fault) in &fleet.faults {
        let needs_snapshots = matches!(
            fault,
            Fault::SymbolErrorsClimbing
                | Fault::LinkDownedNow
                | Fault::RcvErrorsClimbing
                | Fault::IntegrityClimbing
                | Fault::HeavyCongestion
        );
        if needs_snapshots && snapshots < 2 {
            continue;
        }
        let found = hosts.get(host).is_some_and(|list| {
            list.iter()
                .any(|f| f.subject.device.as_deref().is_none_or(|d| d == ca))
        });
        assert!(
            found,
            "{host} {ca}: {fault:?} not reported at warning or worse; its findings: {:?}",
            report
                .findings
                .iter()
                .filter(|f| f.subject.host.as_deref() == Some(host))
                .map(|f| format!("{} {} {}", f.rule, f.severity, f.message))
                .collect::<Vec<_>>()
        );
    }
}

#[test]
fn one_snapshot_of_a_busy_fleet_raises_no_false_alarm_and_finds_the_broken_ports() {
    check(1);
}

#[test]
fn two_snapshots_of_a_busy_fleet_find_every_fault_and_nothing_else() {
    check(2);
}
