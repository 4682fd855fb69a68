//! Record shards: a generated 12-node fleet (`scripts/gen-fleet.py`) split
//! into three slices, each written with `analyze --emit-records`, then
//! merged with `analyze SHARD…`, prints the JSON report of one run over
//! every dump: findings, incidents, summary, verdict and measurements.
#![cfg(feature = "cli")]
// Test helpers: a failed command should fail the test loudly.
#![allow(clippy::panic, clippy::unwrap_used, clippy::indexing_slicing)]

mod common;

use common::{generated_fleet, host_dirs, repo, run, run_ok, scratch};

/// The counter rates of a JSON report: report schema 3 writes them in rate
/// sets, each with its `counters`, and the notable report (the default)
/// counts the rates it left out in a note (of unchanged counters, and the
/// measured rates of traffic counters).
fn rates(report: &serde_json::Value) -> usize {
    let measurements = &report["measurements"];
    let kept: usize = measurements["counter_rates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|set| set["counters"].as_array().unwrap().len())
        .sum();
    let left_out = measurements["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(serde_json::Value::as_str)
        .flat_map(|note| note.split(", "))
        .filter_map(|part| part.rsplit("left out ").next())
        .filter_map(|part| {
            let (n, what) = part.split_once(' ')?;
            (what.starts_with("counter rate(s) of counters unchanged")
                || what.starts_with("measured counter rate(s) of traffic counters"))
            .then(|| n.parse::<usize>().unwrap())
        })
        .sum::<usize>();
    kept + left_out
}

#[test]
fn three_shards_merge_into_the_report_of_one_run() {
    let fleet = generated_fleet("shards-merge", 12);
    let root = fleet.parent().unwrap();
    let hosts = host_dirs(&fleet);
    assert_eq!(hosts.len(), 12);
    let single = run_ok(&[
        "analyze",
        fleet.to_str().unwrap(),
        "--format",
        "json",
        "--fail-on",
        "never",
    ]);
    let shard_dir = root.join("shards");
    std::fs::create_dir_all(&shard_dir).unwrap();
    for (i, slice) in hosts.chunks(4).enumerate() {
        let out = shard_dir.join(format!("shard{i}.ndjson"));
        let mut args = vec!["analyze", "--emit-records", "-o", out.to_str().unwrap()];
        args.extend(slice.iter().map(String::as_str));
        run_ok(&args);
        let text = std::fs::read_to_string(&out).unwrap();
        let header: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert_eq!(header["kind"], "fabricscope-unit-records");
        assert_eq!(header["schema_version"], 1);
        assert_eq!(
            text.lines().count(),
            1 + 4,
            "a header and one line per host"
        );
    }
    // Shards named in any order, or as their directory.
    let s = |i: usize| shard_dir.join(format!("shard{i}.ndjson"));
    let merged = run_ok(&[
        "analyze",
        s(2).to_str().unwrap(),
        s(0).to_str().unwrap(),
        s(1).to_str().unwrap(),
        "--format",
        "json",
        "--fail-on",
        "never",
    ]);
    let by_dir = run_ok(&[
        "analyze",
        shard_dir.to_str().unwrap(),
        "--format",
        "json",
        "--fail-on",
        "never",
    ]);
    let single: serde_json::Value = serde_json::from_slice(&single.stdout).unwrap();
    let merged_v: serde_json::Value = serde_json::from_slice(&merged.stdout).unwrap();
    // Findings of many rules, on every host: a merge that lost a shard or
    // a host would show.
    common::assert_findings_cover(single["findings"].as_array().unwrap(), 12);
    assert!(rates(&single) > 1000);
    common::assert_same_report(&single, &merged_v);
    assert!(
        single["measurements"] == merged_v["measurements"],
        "measurements differ"
    );
    assert_eq!(merged.stdout, by_dir.stdout);
}

#[test]
fn a_host_in_two_shards_is_refused() {
    let fleet = generated_fleet("shards-overlap", 12);
    let root = fleet.parent().unwrap();
    let host = fleet.join("gpu00003");
    let a = root.join("a.ndjson");
    let b = root.join("b.ndjson");
    run_ok(&[
        "analyze",
        "--emit-records",
        "-o",
        a.to_str().unwrap(),
        host.to_str().unwrap(),
    ]);
    run_ok(&[
        "analyze",
        "--emit-records",
        "-o",
        b.to_str().unwrap(),
        host.to_str().unwrap(),
    ]);
    let o = run(&["analyze", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("gpu00003 is in two units"));
}

/// Two pdsh snapshots of one host in two files are two units at first;
/// once read, both name the host, so they are merged and read again
/// together: their snapshots still pair into rates.
#[test]
fn two_files_naming_one_host_are_analysed_together() {
    let fixture = repo("tests/fixtures/rules/FL004/fires_rail_errors_growing_now.txt");
    let text = std::fs::read_to_string(&fixture).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let dir = scratch("shards-pdsh");
    let pdsh = |part: &[&str]| {
        part.iter()
            .map(|l| format!("n1: {l}\n"))
            .collect::<String>()
    };
    let (before, after) = lines.split_at(184);
    std::fs::write(dir.join("before.txt"), pdsh(before)).unwrap();
    std::fs::write(dir.join("after.txt"), pdsh(after)).unwrap();
    std::fs::write(dir.join("both.txt"), pdsh(&lines)).unwrap();
    let json = |files: &[&str]| -> serde_json::Value {
        let mut args = vec![
            "analyze",
            "--format",
            "json",
            "--interval",
            "30s",
            "--fail-on",
            "never",
        ];
        let paths: Vec<String> = files
            .iter()
            .map(|f| dir.join(f).to_str().unwrap().to_owned())
            .collect();
        args.extend(paths.iter().map(String::as_str));
        serde_json::from_slice(&run_ok(&args).stdout).unwrap()
    };
    let split = json(&["before.txt", "after.txt"]);
    let whole = json(&["both.txt"]);
    let n = rates(&split);
    assert!(n > 100, "{n} rates");
    assert_eq!(split["host_names"], serde_json::json!(["n1"]));
    assert_eq!(n, rates(&whole));
    let rules = |v: &serde_json::Value| -> Vec<String> {
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| format!("{} {}", f["rule"], f["message"]))
            .collect()
    };
    assert_eq!(rules(&split), rules(&whole));
}

/// Units that name one host are found in the first chunk; the chunks after
/// are then only parsed for their hosts (not analysed), and a second pair
/// found among them is merged too: the report is the one of the same
/// snapshots given in one file per host.
#[test]
fn overlaps_found_early_and_late_are_all_merged() {
    let fixture = repo("tests/fixtures/rules/FL004/fires_rail_errors_growing_now.txt");
    let text = std::fs::read_to_string(&fixture).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let (before, after) = lines.split_at(184);
    let dir = scratch("shards-overlaps");
    let pdsh = |host: &str, part: &[&str]| {
        part.iter()
            .map(|l| format!("{host}: {l}\n"))
            .collect::<String>()
    };
    let mut split = vec!["a0.txt".to_owned(), "a1.txt".to_owned()];
    std::fs::write(dir.join("a0.txt"), pdsh("n1", before)).unwrap();
    std::fs::write(dir.join("a1.txt"), pdsh("n1", after)).unwrap();
    std::fs::write(dir.join("a.txt"), pdsh("n1", &lines)).unwrap();
    let mut whole = vec!["a.txt".to_owned()];
    // Many more units than a chunk holds, then a second split host.
    for i in 0..80 {
        let name = format!("m{i:02}.txt");
        std::fs::write(dir.join(&name), pdsh(&format!("h{i:02}"), &lines)).unwrap();
        split.push(name.clone());
        whole.push(name);
    }
    std::fs::write(dir.join("z0.txt"), pdsh("n9", before)).unwrap();
    std::fs::write(dir.join("z1.txt"), pdsh("n9", after)).unwrap();
    std::fs::write(dir.join("z.txt"), pdsh("n9", &lines)).unwrap();
    split.extend(["z0.txt".to_owned(), "z1.txt".to_owned()]);
    whole.push("z.txt".to_owned());
    let json = |files: &[String]| -> serde_json::Value {
        let mut args = vec![
            "analyze".to_owned(),
            "--format".to_owned(),
            "json".to_owned(),
            "--interval".to_owned(),
            "30s".to_owned(),
            "--fail-on".to_owned(),
            "never".to_owned(),
        ];
        args.extend(
            files
                .iter()
                .map(|f| dir.join(f).to_str().unwrap().to_owned()),
        );
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        serde_json::from_slice(&run_ok(&args).stdout).unwrap()
    };
    let (split, whole) = (json(&split), json(&whole));
    assert_eq!(split["hosts"], 82);
    assert_eq!(split["hosts"], whole["hosts"]);
    let n = rates(&split);
    assert!(n > 82 * 100, "every host's snapshots pair: {n} rates");
    assert_eq!(n, rates(&whole));
    for key in ["verdict", "summary", "incidents"] {
        assert_eq!(split[key], whole[key], "{key}");
    }
    let rules = |v: &serde_json::Value| -> Vec<String> {
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| format!("{} {} {}", f["rule"], f["subject"], f["message"]))
            .collect()
    };
    assert_eq!(rules(&split), rules(&whole));
}
