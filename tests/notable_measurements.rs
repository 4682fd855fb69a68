//! `--measurements notable` (the JSON report's default) against
//! `--measurements all` on a generated 12-node fleet with injected faults:
//! the same findings and verdict, every rate that moved kept but measured
//! traffic (its data is in throughput), and of the sifted kinds exactly the
//! records the documented rules keep — restated here from
//! docs/report.md, not taken from the code — with the rest counted in a note.
#![cfg(feature = "cli")]
// Test helpers: a failed command should fail the test loudly.
#![allow(clippy::panic, clippy::unwrap_used, clippy::indexing_slicing)]

mod common;

use common::{generated_fleet, run_ok};
use serde_json::Value;

fn report(fleet: &str, extra: &[&str]) -> Value {
    let mut args = vec!["analyze", fleet, "--format", "json", "--fail-on", "never"];
    args.extend(extra);
    serde_json::from_slice(&run_ok(&args).stdout).unwrap()
}

fn records<'a>(r: &'a Value, kind: &str) -> &'a Vec<Value> {
    r["measurements"][kind].as_array().unwrap()
}

/// `left out N <what>` in the notes, or 0.
fn left_out(r: &Value, what: &str) -> usize {
    let notes = records(r, "notes");
    let Some(note) = notes
        .iter()
        .filter_map(Value::as_str)
        .find(|n| n.starts_with("notable measurements only"))
    else {
        return 0;
    };
    note.split(", ")
        .find_map(|part| {
            let part = part.rsplit("left out ").next().unwrap();
            let (n, rest) = part.split_once(' ')?;
            rest.starts_with(what).then(|| n.parse().unwrap())
        })
        .unwrap_or(0)
}

#[test]
fn notable_measurements_keep_what_deviates_and_count_the_rest() {
    let fleet = generated_fleet("notable-measurements", 12);
    let fleet = fleet.to_str().unwrap();
    let notable = report(fleet, &[]);
    let all = report(fleet, &["--measurements", "all"]);

    for key in ["verdict", "summary", "findings", "incidents", "hosts"] {
        assert_eq!(notable[key], all[key], "{key} differs");
    }
    for kind in [
        "snapshots",
        "throughput",
        "saturated_counters",
        "traffic_balance",
        "trends",
    ] {
        assert_eq!(notable["measurements"][kind], all["measurements"][kind]);
    }
    // Counter rates: a counter that stood still between the snapshots
    // (same reading, measured or without an interval) is left out; so is
    // the measured rate of a traffic counter (data or packets: units
    // `four_octets`, `packets`, `kib`), whose bytes are in throughput; a
    // rate set left with no counters goes with them. Each kind is counted
    // in the note.
    let every = records(&all, "counter_rates");
    assert!(!every.is_empty());
    let mut unchanged = 0;
    let mut traffic = 0;
    let want: Vec<Value> = every
        .iter()
        .filter_map(|set| {
            let mut set = set.clone();
            let counters = set["counters"].as_array_mut().unwrap();
            counters.retain(|c| {
                let still = c["before"] == c["after"]
                    && (c["status"] == "measured" || c["status"] == "no_interval");
                let moving_traffic = c["status"] == "measured"
                    && ["four_octets", "packets", "kib"].contains(&c["unit"].as_str().unwrap());
                unchanged += usize::from(still);
                traffic += usize::from(!still && moving_traffic);
                !still && !moving_traffic
            });
            (!counters.is_empty()).then_some(set)
        })
        .collect();
    let got: Vec<Value> = records(&notable, "counter_rates").to_vec();
    assert_eq!(got, want);
    assert!(unchanged > 0, "healthy ports have error counters at rest");
    assert!(traffic > 0, "traffic counters move between snapshots");
    assert!(
        !got.is_empty(),
        "congestion counters move between snapshots"
    );
    assert_eq!(left_out(&notable, "counter rate"), unchanged);
    assert_eq!(left_out(&notable, "measured counter rate"), traffic);

    // Link capacities: kept when below the best of their kind (NVLink
    // link or InfiniBand port) on their host.
    let group = |c: &Value| {
        let s = &c["subject"];
        (
            s["host"].as_str().map(str::to_owned),
            s.get("gpu").is_some(),
        )
    };
    let every = records(&all, "link_capacities");
    let best = |g: &(Option<String>, bool)| {
        every
            .iter()
            .filter(|c| &group(c) == g)
            .map(|c| c["gbit_per_second"].as_f64().unwrap())
            .fold(f64::MIN, f64::max)
    };
    let want: Vec<&Value> = every
        .iter()
        .filter(|c| c["gbit_per_second"].as_f64().unwrap() < best(&group(c)))
        .collect();
    let got: Vec<&Value> = records(&notable, "link_capacities").iter().collect();
    assert_eq!(got, want);
    assert!(
        !got.is_empty(),
        "the fleet has a port trained at 200 of 400 Gb/s"
    );
    assert_eq!(left_out(&notable, "link capacity"), every.len() - got.len());

    // Bit error rates: kept when they counted errors or are not within.
    let every = records(&all, "bit_error_rates");
    let want: Vec<&Value> = every
        .iter()
        .filter(|b| b["errors"].as_u64().unwrap() > 0 || b["verdict"] != "within")
        .collect();
    let got: Vec<&Value> = records(&notable, "bit_error_rates").iter().collect();
    assert_eq!(got, want);
    assert!(!got.is_empty(), "the fleet has symbol errors rising");
    assert_eq!(
        left_out(&notable, "bit error rate"),
        every.len() - got.len()
    );

    // Peer groups: kept when they have outliers.
    let every = records(&all, "peer_groups");
    let want: Vec<&Value> = every
        .iter()
        .filter(|g| !g["outliers"].as_array().unwrap().is_empty())
        .collect();
    let got: Vec<&Value> = records(&notable, "peer_groups").iter().collect();
    assert_eq!(got, want);
    assert!(!got.is_empty());
    assert_eq!(left_out(&notable, "peer group"), every.len() - got.len());

    // Something was left out, and `all` says nothing about sifting.
    assert!(left_out(&notable, "link capacity") > 0);
    assert_eq!(left_out(&all, "link capacity"), 0);
    let with_note = records(&notable, "notes").len();
    assert_eq!(with_note, records(&all, "notes").len() + 1);
}

/// The unspooled path (`--include-sections` analyses the documents as one
/// unit) sifts the same way. It orders some kinds differently and numbers
/// the snapshots of the whole input in time order (a streamed run numbers
/// them unit by unit), so the records are compared as sets, without
/// snapshot ids.
#[test]
fn a_report_with_its_sections_is_sifted_the_same() {
    let fleet = generated_fleet("notable-sections", 12);
    let fleet = fleet.to_str().unwrap();
    let streamed = report(fleet, &[]);
    let whole = report(fleet, &["--include-sections"]);
    let sorted = |r: &Value, kind: &str| {
        let mut texts: Vec<String> = records(r, kind)
            .iter()
            .map(|record| {
                let mut record = record.clone();
                if let Some(fields) = record.as_object_mut() {
                    fields.remove("from_snapshot");
                    fields.remove("to_snapshot");
                }
                record.to_string()
            })
            .collect();
        texts.sort();
        texts
    };
    for kind in ["link_capacities", "bit_error_rates", "peer_groups", "notes"] {
        assert_eq!(sorted(&whole, kind), sorted(&streamed, kind), "{kind}");
    }
    assert!(left_out(&whole, "peer group") > 0);
}
