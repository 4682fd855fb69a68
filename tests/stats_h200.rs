//! The statistics engine on real captures: two `nvidia-smi nvlink -gt r`
//! snapshots of an H200 pair taken about 2 s apart while GPU 0 copied to GPU 1
//! (7600 GiB in 20.69 s = 367 GiB/s one way, measured by the copying program).

use fabricscope::stats::{measure_many, Direction, StatsOptions};
use std::path::Path;

fn corpus(name: &str) -> Option<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/corpus/own/h200-x2-driver580")
        .join(name);
    match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(_) => {
            println!("skipping: corpus file {} not present", path.display());
            None
        }
    }
}

#[test]
fn copy_rate_across_18_links_matches_the_measured_copy() {
    let (Some(first), Some(second)) = (corpus("during_gt_r_1.txt"), corpus("during_gt_r_2.txt"))
    else {
        return;
    };
    let docs: Vec<_> = [first, second]
        .iter()
        .map(|t| fabricscope::read(t, &Default::default()).unwrap())
        .collect();
    let options = StatsOptions {
        interval_seconds: Some(2.0),
        ..StatsOptions::default()
    };
    let m = measure_many(&docs, &options);
    assert_eq!(m.snapshots.len(), 2);
    for gpu in [0, 1] {
        for direction in [Direction::Tx, Direction::Rx] {
            let links: Vec<_> = m
                .throughput
                .iter()
                .filter(|t| t.subject.gpu == Some(gpu) && t.direction == direction)
                .collect();
            assert_eq!(links.len(), 18, "GPU {gpu} {direction:?}");
            let total: f64 = links.iter().map(|t| t.gib_per_second).sum();
            let min = links
                .iter()
                .map(|t| t.gib_per_second)
                .fold(f64::INFINITY, f64::min);
            let max = links.iter().map(|t| t.gib_per_second).fold(0.0, f64::max);
            println!(
                "GPU {gpu} {direction:?}: total {total:.1} GiB/s, per link {min:.2}–{max:.2} GiB/s"
            );
        }
    }
    for b in &m.traffic_balance {
        println!(
            "{} {:?}: {} links, total {:.1} GiB/s, median {:.3}, spread {:?} %",
            b.group,
            b.direction,
            b.links,
            b.total_gib_per_second,
            b.per_link_gib_per_second.median,
            b.spread_percent
        );
    }
    println!(
        "{}",
        serde_json::to_string_pretty(&m.throughput.first()).unwrap()
    );
    println!("notes: {:?}", m.notes);
}
