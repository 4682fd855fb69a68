//! End-to-end tests of [`measure`](super::measure()) on small pastes whose
//! expected figures are worked out by hand in the comments.

use super::ber::Verdict;
use super::*;
use crate::input::{read, ReadOptions};

fn doc(text: &str) -> crate::input::Document {
    read(text, &ReadOptions::default()).expect("recognised")
}

fn doc_on(host: &str, text: &str) -> crate::input::Document {
    read(
        text,
        &ReadOptions {
            default_host: Some(host.to_owned()),
            ..ReadOptions::default()
        },
    )
    .expect("recognised")
}

const IBSTAT: &str = "$ ibstat
CA 'mlx5_0'
\tCA type: MT4123
\tNumber of ports: 1
\tPort 1:
\t\tState: Active
\t\tPhysical state: LinkUp
\t\tRate: 100
\t\tBase lid: 12
";

fn extended(xmit: u64, rcv: u64) -> String {
    format!(
        "$ perfquery -x 12 1\n# Port extended counters: Lid 12 port 1 (CapMask: 0x5A00)\n\
         PortSelect:......................1\nCounterSelect:...................0x0000\n\
         PortXmitData:....................{xmit}\nPortRcvData:.....................{rcv}\n"
    )
}

fn basic(symbol: u64, downed: u64) -> String {
    format!(
        "$ perfquery 12 1\n# Port counters: Lid 12 port 1 (CapMask: 0x5A00)\n\
         PortSelect:......................1\nSymbolErrorCounter:..............{symbol}\n\
         LinkDownedCounter:...............{downed}\n"
    )
}

#[test]
fn data_counters_are_four_octet_words_timed_by_date() {
    // 250 000 000 words × 4 = 1e9 bytes in the 10 s between the two `date`s:
    // 1e8 B/s = 0.8 Gb/s on a 100 Gb/s port = 0.8 %.
    let text = format!(
        "{IBSTAT}$ date\nMon Nov 30 00:53:23 UTC 2026\n{}$ date\nMon Nov 30 00:53:33 UTC 2026\n{}",
        extended(1000, 7),
        extended(250_001_000, 7)
    );
    let m = measure(&doc(&text), &StatsOptions::default());
    assert_eq!(m.snapshots.len(), 2);
    assert_eq!(m.snapshots[0].time_seconds, Some(1_796_000_003.0));
    assert!(m.snapshots[0].time_is_unix);
    let tx = m
        .throughput
        .iter()
        .find(|t| t.direction == Direction::Tx)
        .unwrap();
    assert_eq!(tx.bytes, 1_000_000_000);
    assert_eq!(tx.interval_seconds, 10.0);
    assert!((tx.gbit_per_second - 0.8).abs() < 1e-12);
    assert!((tx.utilisation_percent.unwrap() - 0.8).abs() < 1e-9);
    assert_eq!(tx.subject.device.as_deref(), Some("mlx5_0"));
    let caps: Vec<f64> = m
        .link_capacities
        .iter()
        .map(|c| c.gbit_per_second)
        .collect();
    assert_eq!(caps, vec![100.0, 100.0]); // by LID 12 port 1 and by mlx5_0 port 1
    let rx = m
        .throughput
        .iter()
        .find(|t| t.direction == Direction::Rx)
        .unwrap();
    assert_eq!(rx.bytes, 0);
    let rate = m
        .counter_rates
        .iter()
        .find(|r| &*r.counter == "PortXmitData")
        .unwrap();
    assert!(
        matches!(rate.interval_source, IntervalSource::InputTimes { .. }),
        "{}",
        rate.interval_source
    );
    let json = serde_json::to_value(&m).unwrap();
    assert!(json["throughput"][0]["gib_per_second"].is_number());
}

#[test]
fn dates_printed_after_each_reading_time_that_reading() {
    // perfquery; date; (30 s later) perfquery; date: the second date times
    // the second reading, so the interval is 30 s, not 0.
    let text = format!(
        "{}$ date\nMon Nov 30 00:53:23 UTC 2026\n{}$ date\nMon Nov 30 00:53:53 UTC 2026\n",
        basic(0, 0),
        basic(30, 0)
    );
    let m = measure(&doc(&text), &StatsOptions::default());
    let r = m
        .counter_rates
        .iter()
        .find(|r| &*r.counter == "SymbolErrorCounter")
        .unwrap();
    assert_eq!(r.interval_seconds, Some(30.0));
    assert_eq!(r.counts_per_second, Some(1.0));
    // Zones we cannot resolve still give intervals between two readings of one host.
    let cet = text.replace("UTC", "CET");
    let m = measure(&doc(&cet), &StatsOptions::default());
    assert_eq!(m.counter_rates[0].interval_seconds, Some(30.0));
    assert!(!m.snapshots[0].time_is_unix);
}

#[test]
fn impossible_utilisation_and_disagreeing_intervals_are_pointed_out() {
    // 1e9 bytes in 10 s per the dates; told 0.05 s, which would be 160 Gb/s on
    // a 100 Gb/s port. The dates win, and the disagreement is noted.
    let text = format!(
        "{IBSTAT}$ date\nMon Nov 30 00:53:23 UTC 2026\n{}$ date\nMon Nov 30 00:53:33 UTC 2026\n{}",
        extended(1000, 7),
        extended(250_001_000, 7)
    );
    let m = measure(
        &doc(&text),
        &StatsOptions {
            interval_seconds: Some(0.05),
            ..StatsOptions::default()
        },
    );
    assert!(
        m.notes
            .iter()
            .any(|n| n.contains("10 s apart") && n.contains("0.05 s")),
        "{:?}",
        m.notes
    );
    // Without the dates the short interval is used, and the result is flagged.
    let undated = format!("{IBSTAT}{}{}", extended(1000, 7), extended(250_001_000, 7));
    let m = measure(
        &doc(&undated),
        &StatsOptions {
            interval_seconds: Some(0.05),
            ..StatsOptions::default()
        },
    );
    let tx = m
        .throughput
        .iter()
        .find(|t| t.direction == Direction::Tx)
        .unwrap();
    assert!((tx.utilisation_percent.unwrap() - 160.0).abs() < 1e-9);
    assert!(
        m.notes
            .iter()
            .any(|n| n.contains("more than their capacity")),
        "{:?}",
        m.notes
    );
}

#[test]
fn saturation_and_resets_give_no_rate_and_say_why() {
    let text = format!("{}{}", basic(100, 3), basic(65_535, 1));
    let m = measure(
        &doc(&text),
        &StatsOptions {
            interval_seconds: Some(10.0),
            ..StatsOptions::default()
        },
    );
    let sym = m
        .counter_rates
        .iter()
        .find(|r| &*r.counter == "SymbolErrorCounter")
        .unwrap();
    assert_eq!(sym.status, RateStatus::Saturated);
    assert_eq!(sym.increase, Some(65_435));
    assert_eq!(sym.counts_per_second, None);
    let down = m
        .counter_rates
        .iter()
        .find(|r| &*r.counter == "LinkDownedCounter")
        .unwrap();
    assert_eq!(down.status, RateStatus::CounterReset);
    assert_eq!((down.increase, down.counts_per_second), (None, None));
    assert!(m.notes.iter().any(|n| n.contains("counter reset")));
    let sat = &m.saturated_counters;
    assert_eq!(sat.len(), 1);
    assert_eq!((sat[0].value_at_least, sat[0].bits), (65_535, 16));
    assert!(sat[0].advice.contains("perfquery -x"));
    // A saturated error counter yields no BER.
    assert!(m.bit_error_rates.is_empty());
}

#[test]
fn same_three_errors_judged_by_the_interval() {
    // 3 symbol errors on a 100 Gb/s port: in 10 s (1e12 bits) the 95 % interval
    // 0.62e-12 … 8.8e-12 straddles 1e-12; over 90 days it is far below.
    let text = format!("{IBSTAT}{}{}", basic(0, 0), basic(3, 0));
    let short = measure(
        &doc(&text),
        &StatsOptions {
            interval_seconds: Some(10.0),
            ..StatsOptions::default()
        },
    );
    let b = &short.bit_error_rates[0];
    assert_eq!(b.errors, 3);
    assert!((b.bits - 1e12).abs() < 1.0);
    assert!((b.ber_point - 3e-12).abs() < 1e-24);
    assert_eq!(b.verdict, Verdict::Inconclusive);
    assert!(b.bits_needed.is_some());
    let long = measure(
        &doc(&text),
        &StatsOptions {
            interval_seconds: Some(90.0 * 86_400.0),
            ..StatsOptions::default()
        },
    );
    assert_eq!(long.bit_error_rates[0].verdict, Verdict::Within);
    // Without a link speed the BER falls back to bits received, or is not computed.
    let bare = measure(
        &doc(&format!("{}{}", basic(0, 0), basic(3, 0))),
        &StatsOptions {
            interval_seconds: Some(10.0),
            ..StatsOptions::default()
        },
    );
    assert!(bare.bit_error_rates.is_empty());
    assert!(bare.notes.iter().any(|n| n.contains("no BER")));
}

fn nvlink_errors(values: &[(u32, u64)]) -> String {
    let mut s = String::from("$ nvidia-smi nvlink -e\nGPU 0: NVIDIA H200 (UUID: GPU-1)\n");
    for (link, v) in values {
        s.push_str(&format!("\t Link {link}: Replay Errors: 0\n\t Link {link}: Recovery Errors: {v}\n\t Link {link}: CRC Errors: 0\n"));
    }
    s
}

#[test]
fn one_link_far_above_its_siblings_is_named_with_its_group() {
    // 17 links at 10–14 recoveries, link 14 at 480: 40× the median of 12.
    let mut values: Vec<(u32, u64)> = (0..18).map(|l| (l, 10 + u64::from(l % 5))).collect();
    values[14].1 = 480;
    let m = measure(&doc(&nvlink_errors(&values)), &StatsOptions::default());
    let group = m
        .peer_groups
        .iter()
        .find(|g| g.kind == PeerGroupKind::LinksOfGpu && g.counter == "recovery_errors")
        .unwrap();
    assert_eq!(group.size, 18);
    assert!(group.z_scores_computed);
    assert_eq!(group.outliers.len(), 1);
    let o = &group.outliers[0];
    assert_eq!(o.subject.link, Some(14));
    assert!((o.times_median.unwrap() - 40.0).abs() < 1e-9);
    assert!(
        o.explanation.contains("18 links of GPU 0"),
        "{}",
        o.explanation
    );
    // The same values in another order flag the same link.
    let mut shuffled = values.clone();
    shuffled.reverse();
    let again = measure(&doc(&nvlink_errors(&shuffled)), &StatsOptions::default());
    let g2 = again
        .peer_groups
        .iter()
        .find(|g| g.kind == PeerGroupKind::LinksOfGpu && g.counter == "recovery_errors")
        .unwrap();
    assert_eq!(
        g2.outliers
            .iter()
            .map(|o| o.subject.link)
            .collect::<Vec<_>>(),
        vec![Some(14)]
    );
}

#[test]
fn small_groups_and_small_counts_are_not_called_outliers() {
    let m = measure(
        &doc(&nvlink_errors(&[(0, 0), (1, 900)])),
        &StatsOptions::default(),
    );
    let g = m
        .peer_groups
        .iter()
        .find(|g| g.counter == "recovery_errors")
        .unwrap();
    assert!(!g.z_scores_computed && g.outliers.is_empty());
    // 3 recoveries where 17 siblings have none: z is large but 3 is not
    // unlikely for a Poisson count of mean 1.
    let mut values: Vec<(u32, u64)> = (0..18).map(|l| (l, 0)).collect();
    values[5].1 = 3;
    let m = measure(&doc(&nvlink_errors(&values)), &StatsOptions::default());
    let g = m
        .peer_groups
        .iter()
        .find(|g| g.counter == "recovery_errors")
        .unwrap();
    assert!(g.outliers.is_empty());
}

#[test]
fn three_snapshots_give_a_trend() {
    let text = [0u64, 10, 20]
        .iter()
        .map(|v| nvlink_errors(&[(0, *v), (1, 0)]))
        .collect::<String>();
    let m = measure(
        &doc(&text),
        &StatsOptions {
            interval_seconds: Some(10.0),
            ..StatsOptions::default()
        },
    );
    assert_eq!(m.trends.len(), 1);
    let t = &m.trends[0];
    assert_eq!(t.counter, "recovery_errors");
    assert!((t.slope_per_second - 1.0).abs() < 1e-12);
    assert!(t.still_rising);
    assert_eq!(t.snapshots, vec![0, 1, 2]);
}

#[test]
fn without_times_or_interval_rates_are_not_guessed() {
    let text = format!("{}{}", basic(0, 0), basic(3, 0));
    let m = measure(&doc(&text), &StatsOptions::default());
    assert!(m
        .counter_rates
        .iter()
        .all(|r| r.status == RateStatus::NoInterval && r.counts_per_second.is_none()));
    assert!(m.notes.iter().any(|n| n.contains("--interval")));
}

#[test]
fn the_same_link_across_a_fleet() {
    let docs: Vec<_> = (0..6)
        .map(|h| {
            let bad = if h == 4 { 5000 } else { 20 + h };
            doc_on(&format!("node{h}"), &nvlink_errors(&[(3, bad)]))
        })
        .collect();
    let m = measure_many(&docs, &StatsOptions::default());
    let g = m
        .peer_groups
        .iter()
        .find(|g| g.kind == PeerGroupKind::SamePortAcrossHosts)
        .unwrap();
    assert_eq!(g.size, 6);
    assert_eq!(g.group, "GPU 0 link 3 across hosts");
    assert_eq!(g.outliers.len(), 1);
    assert_eq!(g.outliers[0].subject.host.as_deref(), Some("node4"));
}

#[test]
fn idle_link_among_busy_siblings() {
    let gt = |kib: &[u64]| {
        let mut s = String::from("$ nvidia-smi nvlink -gt d\nGPU 0: NVIDIA H200 (UUID: GPU-1)\n");
        for (l, v) in kib.iter().enumerate() {
            s.push_str(&format!("\t Link {l}: Data Tx: {v} KiB\n"));
        }
        s
    };
    let text = format!("{}{}", gt(&[0, 0, 0, 0]), gt(&[1024, 1024, 0, 1024]));
    let m = measure(
        &doc(&text),
        &StatsOptions {
            interval_seconds: Some(1.0),
            ..StatsOptions::default()
        },
    );
    let b = &m.traffic_balance[0];
    assert_eq!(b.links, 4);
    assert_eq!(
        b.idle_links.iter().map(|s| s.link).collect::<Vec<_>>(),
        vec![Some(2)]
    );
    assert!((b.total_gib_per_second - 3.0 / 1024.0).abs() < 1e-12);
}

#[test]
fn lane_ecc_ber_uses_the_lane_share_of_the_link_speed() {
    // -s says 26.562 GB/s per direction = 212.496 Gb/s; two lanes share it, so
    // in 10 s each lane carries 1.06248e12 bits. 106 corrections on lane 1
    // give a point BER of 1e-10, far below the corrected-error threshold.
    let ec = |l0: u64, l1: u64| {
        format!(
            "$ nvidia-smi nvlink -ec\nGPU 0: NVIDIA H200 (UUID: GPU-1)\n\t Link 0:\n\t\t Lane 0 ECC Correction Count: {l0} (Overflow=0)\n\t\t Lane 1 ECC Correction Count: {l1} (Overflow=0)\n"
        )
    };
    let text = format!(
        "$ nvidia-smi nvlink -s\nGPU 0: NVIDIA H200 (UUID: GPU-1)\n\t Link 0: 26.562 GB/s\n{}{}",
        ec(374, 275),
        ec(374, 381)
    );
    let m = measure(
        &doc(&text),
        &StatsOptions {
            interval_seconds: Some(10.0),
            ..StatsOptions::default()
        },
    );
    let lane1 = m
        .bit_error_rates
        .iter()
        .find(|b| b.subject.lane == Some(1))
        .unwrap();
    assert_eq!(lane1.errors, 106);
    assert!((lane1.bits - 1.06248e12).abs() < 1e3, "{}", lane1.bits);
    assert!((lane1.ber_point - 106.0 / 1.06248e12).abs() < 1e-20);
    assert_eq!(lane1.threshold, 1e-6);
    assert_eq!(lane1.verdict, Verdict::Within);
    let lane0 = m
        .bit_error_rates
        .iter()
        .find(|b| b.subject.lane == Some(0))
        .unwrap();
    assert_eq!(lane0.errors, 0);
    // An overflowed lane is saturated, whatever its value.
    let over = measure(
        &doc(&ec(1, 2).replace("2 (Overflow=0)", "2 (Overflow=1)")),
        &StatsOptions::default(),
    );
    assert_eq!(over.saturated_counters.len(), 1);
    assert_eq!(over.saturated_counters[0].subject.lane, Some(1));
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn measured_rates_are_never_negative_and_resets_are_named(
            values in proptest::collection::vec((0u64..100_000, 0u64..100_000), 2..6),
            interval in 0.001f64..1e6,
        ) {
            let text: String = values
                .iter()
                .map(|(recovery, crc)| format!(
                    "$ nvidia-smi nvlink -e\nGPU 0: NVIDIA H200 (UUID: GPU-1)\n\t Link 0: Recovery Errors: {recovery}\n\t Link 0: CRC Errors: {crc}\n"
                ))
                .collect();
            let m = measure(&doc(&text), &StatsOptions { interval_seconds: Some(interval), ..StatsOptions::default() });
            prop_assert_eq!(m.counter_rates.len(), 2 * (values.len() - 1));
            for r in &m.counter_rates {
                match r.status {
                    RateStatus::Measured => prop_assert!(r.counts_per_second.unwrap() >= 0.0 && r.after >= r.before),
                    RateStatus::CounterReset => prop_assert!(r.after < r.before && r.counts_per_second.is_none()),
                    other => prop_assert!(false, "unexpected {:?}", other),
                }
            }
            for b in &m.bit_error_rates {
                prop_assert!(b.ber_lower <= b.ber_point && b.ber_point <= b.ber_upper);
            }
        }
    }
}

/// `basic` for any LID: every host's port has its own.
fn basic_at(lid: u32, symbol: u64) -> String {
    format!(
        "$ perfquery {lid} 1\n# Port counters: Lid {lid} port 1 (CapMask: 0x5A00)\n\
         PortSelect:......................1\nSymbolErrorCounter:..............{symbol}\n\
         LinkDownedCounter:...............0\n"
    )
}

#[test]
fn the_same_port_across_hosts_despite_their_lids() {
    // Six hosts, LIDs 11–16, no CA name: "port 1" is the same place on each.
    // Host 4 has 9 symbol errors, the others 0: median 0, so no "× the median".
    // Each host's dump is a file of its own, as in a batch run.
    let docs: Vec<_> = (0u32..6)
        .map(|h| {
            let symbol = if h == 4 { 9 } else { 0 };
            let doc = doc_on(&format!("node{h}"), &basic_at(11 + h, symbol));
            from_file(doc, &format!("node{h}/perfquery.txt"))
        })
        .collect();
    let m = measure_many(&docs, &StatsOptions::default());
    let g = m
        .peer_groups
        .iter()
        .find(|g| g.kind == PeerGroupKind::SamePortAcrossHosts && g.counter == "SymbolErrorCounter")
        .expect("one group across the six hosts");
    assert_eq!(g.size, 6);
    assert_eq!(g.group, "port 1 across hosts");
    assert_eq!(g.statistic, PeerStatistic::Value);
    assert_eq!(g.outliers.len(), 1);
    let o = &g.outliers[0];
    assert_eq!(o.subject.host.as_deref(), Some("node4"));
    // On a fleet its lines alone do not say which of a thousand files to open.
    assert_eq!(o.file.as_deref(), Some("node4/perfquery.txt"));
    assert!(o.times_median.is_none());
    assert!(
        o.explanation
            .contains("SymbolErrorCounter 9 while the median of the 6 port 1 across hosts is 0"),
        "{}",
        o.explanation
    );
    assert!(!o.explanation.contains("is of the"), "{}", o.explanation);
}

/// `doc` as read from `file` (the CLI names each section's file).
fn from_file(mut doc: crate::input::Document, file: &str) -> crate::input::Document {
    for section in &mut doc.sections {
        section.source = Some(file.to_owned());
    }
    doc
}

/// An outlier among a GPU's links names the file of its reading; read
/// from a paste, it names none. (A GPU's sum over its links is covered by
/// the fleet test that every evidence of a batch run names its file.)
#[test]
fn an_outlier_within_a_host_names_its_file() {
    let mut values: Vec<(u32, u64)> = (0..18).map(|l| (l, 10 + u64::from(l % 5))).collect();
    values[14].1 = 480;
    let text = nvlink_errors(&values);
    for (file, want) in [
        (Some("node0/nvlink_e.txt"), Some("node0/nvlink_e.txt")),
        (None, None),
    ] {
        let doc = match file {
            Some(f) => from_file(doc(&text), f),
            None => doc(&text),
        };
        let m = measure(&doc, &StatsOptions::default());
        let o = m
            .peer_groups
            .iter()
            .filter(|g| g.counter == "recovery_errors")
            .flat_map(|g| &g.outliers)
            .next()
            .expect("link 14 stands out");
        assert_eq!(o.file.as_deref(), want);
    }
}

#[test]
fn peer_statistic_keeps_its_json_names() {
    assert_eq!(
        serde_json::to_string(&PeerStatistic::Value).unwrap(),
        "\"value\""
    );
    assert_eq!(
        serde_json::to_string(&PeerStatistic::CountsPerSecond).unwrap(),
        "\"counts_per_second\""
    );
    assert_eq!(
        PeerStatistic::CountsPerSecond.to_string(),
        "counts_per_second"
    );
}

/// A unit's compact peer values are written as the array of `PeerValue`
/// objects record shards carry (field for field, `lid` left out when
/// absent) and read back equal.
#[test]
fn compact_peer_values_keep_their_json() {
    let mut docs: Vec<_> = (0u32..3)
        .map(|h| doc_on(&format!("node{h}"), &basic_at(11 + h, u64::from(h))))
        .collect();
    docs[1] = from_file(docs[1].clone(), "node1/perfquery.txt");
    docs.push(doc_on("node0", &nvlink_errors(&[(0, 1), (1, 0), (2, 7)])));
    let sources: Vec<Source<'_>> = docs
        .iter()
        .map(|document| Source {
            document,
            modified_unix: None,
        })
        .collect();
    let unit = measure_unit(&sources, &StatsOptions::default());
    let values: Vec<PeerValue> = unit.peer_values.iter().collect();
    assert!(values.len() >= 8, "{values:?}");
    assert!(values.iter().any(|v| v.lid.is_some()) && values.iter().any(|v| v.lid.is_none()));
    assert!(values.iter().any(|v| v.file.is_some()) && values.iter().any(|v| v.file.is_none()));
    let compact = serde_json::to_string(&unit.peer_values).unwrap();
    assert_eq!(compact, serde_json::to_string(&values).unwrap());
    let back: PeerValues = serde_json::from_str(&compact).unwrap();
    assert_eq!(back, unit.peer_values);
    assert_eq!(PeerValues::from(values), unit.peer_values);
}

/// `grep SymbolErrorCounter` over ibqueryerrors output keeps the port lines
/// and drops the `Errors for` headers that name their nodes. Each line still
/// prints its port GUID: lines of different GUIDs are different ports,
/// never two snapshots of one (their values are unrelated, so a "growth"
/// between them is invented); lines of one GUID are two readings of it.
#[test]
fn ibqueryerrors_port_lines_without_their_headers_are_told_apart_by_guid() {
    let two_ports = "GUID 0x0c42a10300aa0001 port 1: [SymbolErrorCounter == 3] [PortXmitWait == 1200]\n\
                     GUID 0x0c42a10300aa0002 port 1: [SymbolErrorCounter == 9] [PortXmitWait == 880000]\n";
    let m = measure(
        &doc(two_ports),
        &StatsOptions::default().with_interval(10.0),
    );
    assert!(
        m.counter_rates.is_empty(),
        "two ports read as one: {:?}",
        m.counter_rates
    );

    let one_port_twice = "$ ibqueryerrors\n\
                          GUID 0x0c42a10300aa0001 port 1: [SymbolErrorCounter == 3]\n\
                          $ ibqueryerrors\n\
                          GUID 0x0c42a10300aa0001 port 1: [SymbolErrorCounter == 9]\n";
    let m = measure(
        &doc(one_port_twice),
        &StatsOptions::default().with_interval(10.0),
    );
    assert_eq!(m.counter_rates.len(), 1, "{:?}", m.counter_rates);
    let r = &m.counter_rates[0];
    assert_eq!((r.before, r.after, r.increase), (3, 9, Some(6)));
    assert_eq!(
        r.subject.guid,
        Some(crate::model::ib::Guid(0x0c42_a103_00aa_0001))
    );
    assert_eq!(r.subject.device, None, "the paste names no node");
    assert_eq!(r.subject.to_string(), "0x0c42a10300aa0001 port 1");
}
