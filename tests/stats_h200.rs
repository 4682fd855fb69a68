//! The statistics engine on real captures of an H200 pair (NV18, 18 links of
//! 26.562 GB/s per GPU); see the corpus README for how they were taken.
//!
//! Expected figures come from the copying program, not from this crate:
//! - `during_gt_r_1/2`: `-gt r` about 2 s apart during a one-way copy GPU 0 → 1
//!   of 7600 GiB in 20.69 s = 367 GiB/s of payload;
//! - `p2p_before_gt_d` / `after_gt_d`: `-gt d` before and after a bidirectional
//!   copy of 9598 GiB in 26.11 s (4799 GiB each way).

use fabricscope::stats::{measure_many, Direction, Layer, StatsOptions, Throughput};
use std::path::Path;

fn corpus(name: &str) -> Option<fabricscope::Document> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/corpus/own/h200-x2-driver580")
        .join(name);
    match std::fs::read_to_string(&path) {
        Ok(text) => Some(fabricscope::read(&text, &Default::default()).expect("recognised")),
        Err(_) => {
            println!("skipping: corpus file {} not present", path.display());
            None
        }
    }
}

fn links(t: &[Throughput], gpu: u32, direction: Direction) -> Vec<&Throughput> {
    t.iter()
        .filter(|t| t.subject.gpu == Some(gpu) && t.direction == direction)
        .collect()
}

fn total(links: &[&Throughput]) -> f64 {
    links.iter().map(|t| t.gib_per_second).sum()
}

#[test]
fn one_way_copy_seen_in_raw_counters_two_seconds_apart() {
    let (Some(first), Some(second)) = (corpus("during_gt_r_1.txt"), corpus("during_gt_r_2.txt"))
    else {
        return;
    };
    let options = StatsOptions::default().with_interval(2.0);
    let m = measure_many(&[first, second], &options);
    assert_eq!(m.snapshots.len(), 2);
    assert!(m.throughput.iter().all(|t| t.layer == Layer::Raw));
    let sent = links(&m.throughput, 0, Direction::Tx);
    let received = links(&m.throughput, 1, Direction::Rx);
    assert_eq!((sent.len(), received.len()), (18, 18));
    let (sent_total, received_total) = (total(&sent), total(&received));
    println!("GPU 0 Tx {sent_total:.1} GiB/s, GPU 1 Rx {received_total:.1} GiB/s (raw, 2 s)");
    // Raw counters carry the 367 GiB/s payload plus protocol overhead: more, but
    // not by more than 15 %.
    assert!((367.0..367.0 * 1.15).contains(&sent_total), "{sent_total}");
    // What one side sends the other receives.
    assert!((sent_total / received_total - 1.0).abs() < 0.01);
    // Every link carries its share: per link ≈ total / 18, spread well under 1 %.
    let gpu0_tx = m
        .traffic_balance
        .iter()
        .find(|b| b.group == "links of GPU 0" && b.direction == Direction::Tx)
        .expect("balance of GPU 0 Tx");
    assert_eq!(gpu0_tx.links, 18);
    assert!(gpu0_tx.idle_links.is_empty());
    assert!(gpu0_tx.spread_percent.unwrap() < 1.0);
    // 26.562 GB/s is not known here (no -s in these files), so no utilisation.
    assert!(sent.iter().all(|t| t.utilisation_percent.is_none()));
    for b in &m.traffic_balance {
        println!(
            "{} {:?}: {} links, {:.1} GiB/s, per link {:.2}–{:.2} (median {:.3}), spread {:.2} %",
            b.group,
            b.direction,
            b.links,
            b.total_gib_per_second,
            b.per_link_gib_per_second.min,
            b.per_link_gib_per_second.max,
            b.per_link_gib_per_second.median,
            b.spread_percent.unwrap_or(f64::NAN)
        );
    }
}

#[test]
fn bidirectional_copy_in_data_counters_before_and_after() {
    let (Some(before), Some(after), Some(speeds)) = (
        corpus("p2p_before_gt_d.txt"),
        corpus("after_gt_d.txt"),
        corpus("nvlink_s.txt"),
    ) else {
        return;
    };
    let options = StatsOptions::default().with_interval(26.11);
    let m = measure_many(&[speeds, before, after], &options);
    for gpu in [0, 1] {
        for direction in [Direction::Tx, Direction::Rx] {
            let l = links(&m.throughput, gpu, direction);
            assert_eq!(l.len(), 18);
            let gib = total(&l) * 26.11;
            // 9598 GiB moved in all, half each way.
            assert!(
                (gib - 4799.0).abs() < 0.01 * 4799.0,
                "GPU {gpu} {direction:?}: {gib} GiB"
            );
            // Capacity from `-s`: 26.562 GB/s × 8 = 212.5 Gb/s per direction.
            let u = l.first().unwrap().utilisation_percent.unwrap();
            let expected = 4799.0 / 18.0 * 1.073_741_824 * 8.0 / 26.11 / 212.496 * 100.0;
            assert!((u - expected).abs() < 1.0, "{u} vs {expected}");
        }
    }
    let spread = m
        .traffic_balance
        .iter()
        .find(|b| b.group == "links of GPU 0" && b.direction == Direction::Tx)
        .and_then(|b| b.spread_percent)
        .unwrap();
    println!("bidirectional copy, GPU 0 Tx spread over 18 links: {spread:.2} %");
    // Research notes: 279.2–280.0 M KiB per link, i.e. about 0.3 %.
    assert!(spread > 0.05 && spread < 0.5, "{spread}");
}

#[test]
fn the_busiest_ecc_lanes_stand_out_from_their_36_siblings() {
    // nvlink_ec.txt: lifetime ECC corrections per lane on a healthy H200 pair;
    // GPU 1 link 8 lane 0 holds the largest count (1580) of that GPU's 36 lanes.
    let Some(ec) = corpus("nvlink_ec.txt") else {
        return;
    };
    let m = measure_many(&[ec], &StatsOptions::default());
    let gpu1 = m
        .peer_groups
        .iter()
        .find(|g| g.group == "lanes of the links of GPU 1")
        .expect("lane group");
    assert_eq!(gpu1.size, 36);
    assert_eq!(gpu1.summary.max, 1580.0);
    assert!(gpu1
        .outliers
        .iter()
        .any(|o| o.subject.link == Some(8) && o.subject.lane == Some(0) && o.value == 1580.0));
    for o in &gpu1.outliers {
        println!("{}", o.explanation);
        assert!(o.value > gpu1.summary.p75);
    }
}
