//! Saturation on the simulated fabric: `scenario.json` of the `counters`
//! scenario says which PortCounters fields were set beyond their width, and
//! the statistics must list exactly those as saturated.

use fabricscope::stats::{measure_many, StatsOptions};
use fabricscope::ReadOptions;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

#[test]
fn saturated_counters_match_the_scenario_ground_truth() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ibsim/counters");
    let scenario: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("scenario.json")).expect("scenario"),
    )
    .expect("json");
    let hosts = ["node01", "node02", "node03"];
    let docs: Vec<_> = hosts
        .iter()
        .map(|host| {
            let text = std::fs::read_to_string(dir.join(format!("{host}_perfquery.txt")))
                .expect("capture");
            let options = ReadOptions::default().with_default_host((*host).to_owned());
            fabricscope::read(&text, &options).expect("recognised")
        })
        .collect();
    let m = measure_many(&docs, &StatsOptions::default());
    let found: BTreeSet<(String, String)> = m
        .saturated_counters
        .iter()
        .map(|s| {
            (
                s.subject.host.clone().unwrap_or_default(),
                s.counter.clone(),
            )
        })
        .collect();
    let expected: BTreeSet<(String, String)> = scenario["counters_set"]
        .as_array()
        .expect("counters_set")
        .iter()
        .filter(|c| c["attribute"] == "PortCounters" && c["saturated"] == true)
        .filter(|c| hosts.contains(&c["node"].as_str().unwrap_or_default()))
        .map(|c| {
            (
                c["node"].as_str().unwrap_or_default().to_owned(),
                c["field"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    assert!(!expected.is_empty());
    // Every field the scenario saturated is reported...
    assert!(
        expected.is_subset(&found),
        "missing: {:?}",
        expected.difference(&found)
    );
    // ...and anything else reported is a field the scenario did not set at
    // all (ibsim reports QP1Dropped alongside VL15Dropped), never one it set
    // to a value within the field.
    let set_fields: BTreeSet<(String, String)> = scenario["counters_set"]
        .as_array()
        .expect("counters_set")
        .iter()
        .map(|c| {
            (
                c["node"].as_str().unwrap_or_default().to_owned(),
                c["field"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    for extra in found.difference(&expected) {
        assert!(
            !set_fields.contains(extra),
            "reported saturated but set within range: {extra:?}"
        );
    }
    assert!(m
        .saturated_counters
        .iter()
        .all(|s| s.advice.contains("perfquery -x")));
}
