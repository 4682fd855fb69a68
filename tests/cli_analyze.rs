//! The `analyze`, `rules` and `explain` commands as a user runs them: exit
//! codes, output formats, batch directories, threshold files.
#![cfg(feature = "cli")]
// Test helpers: a failed command should fail the test loudly.
#![allow(clippy::panic, clippy::unwrap_used, clippy::indexing_slicing)]

mod common;

use common::{code, repo, run, scratch, stdout};
use std::path::PathBuf;

fn fixture(rel: &str) -> PathBuf {
    repo("tests/fixtures/rules").join(rel)
}

#[test]
fn healthy_input_exits_0_with_a_healthy_verdict() {
    let o = run(&[
        "analyze",
        fixture("IB002/quiet_active.txt").to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    assert!(stdout(&o).starts_with("healthy: "), "{}", stdout(&o));
    assert!(
        !stdout(&o).contains('\x1b'),
        "no colour when stdout is not a terminal"
    );
}

#[test]
fn findings_at_or_above_fail_on_exit_1() {
    let f = fixture("IB001/fires_polling_next_to_active.txt");
    let f = f.to_str().unwrap();
    let o = run(&["analyze", f]);
    assert_eq!(code(&o), 1);
    assert!(stdout(&o).starts_with("error: 1 error"), "{}", stdout(&o));
    assert!(stdout(&o).contains("IB001"));
    // An error does not reach --fail-on critical.
    assert_eq!(code(&run(&["analyze", "--fail-on", "critical", f])), 0);
    assert_eq!(code(&run(&["analyze", "--fail-on", "never", f])), 0);
    // Ignoring the rule leaves nothing to fail on.
    assert_eq!(code(&run(&["analyze", "--ignore", "IB001", f])), 0);
}

#[test]
fn info_findings_do_not_fail_by_default() {
    // A lifetime count standing out among peers but under its limit.
    let f = fixture("FL004/fires_one_rail_stands_out.txt");
    let o = run(&["analyze", f.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    assert_eq!(
        code(&run(&["analyze", "--fail-on", "info", f.to_str().unwrap()])),
        1
    );
}

#[test]
fn json_ndjson_and_sarif_are_well_formed() {
    let f = fixture("IB001/fires_polling_next_to_active.txt");
    let f = f.to_str().unwrap();
    let json: serde_json::Value = serde_json::from_str(&stdout(&run(&[
        "analyze",
        "--format",
        "json",
        "--include-sections",
        f,
    ])))
    .unwrap();
    assert_eq!(json["summary"]["error"], 1);
    assert_eq!(json["findings"][0]["rule"], "IB001");
    assert!(json["findings"][0]["evidence"][0]["first_line"].is_u64());
    assert!(json["measurements"].is_object());
    assert_eq!(json["document"]["sections"][0]["kind"], "ibstat");
    assert!(json["skipped_rules"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["rule"] == "NV001"));

    let nd = stdout(&run(&["analyze", "--format", "ndjson", f]));
    assert_eq!(nd.lines().count(), 1);
    let line: serde_json::Value = serde_json::from_str(nd.trim()).unwrap();
    assert_eq!(line["rule"], "IB001");

    let sarif: serde_json::Value =
        serde_json::from_str(&stdout(&run(&["analyze", "--format", "sarif", f]))).unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    let result = &sarif["runs"][0]["results"][0];
    assert_eq!(result["ruleId"], "IB001");
    assert!(
        result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            .as_str()
            .unwrap()
            .ends_with("fires_polling_next_to_active.txt")
    );
}

#[test]
fn a_thresholds_file_changes_the_verdict_and_a_bad_one_is_a_usage_error() {
    let dir = scratch("thresholds");
    let good = dir.join("error_thresholds");
    std::fs::write(&good, "# site limits\nSymbolErrorCounter=5000\n").unwrap();
    let f = fixture("IB101/fires_symbol_errors_alone.txt");
    let f = f.to_str().unwrap();
    assert_eq!(code(&run(&["analyze", f])), 1);
    assert_eq!(
        code(&run(&[
            "analyze",
            "--thresholds",
            good.to_str().unwrap(),
            f
        ])),
        0
    );
    let bad = dir.join("bad");
    std::fs::write(&bad, "SymbolErrors=5\n").unwrap();
    let o = run(&["analyze", "--thresholds", bad.to_str().unwrap(), f]);
    assert_eq!(code(&o), 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("line 1"));
}

#[test]
fn batch_directories_name_hosts_and_skip_unreadable_files() {
    let dir = scratch("batch");
    for (host, file) in [
        ("node01", "FL003/fires_adapter_missing.txt"),
        ("node02", "IB002/quiet_active.txt"),
    ] {
        std::fs::create_dir_all(dir.join(host)).unwrap();
        std::fs::copy(fixture(file), dir.join(host).join("ibstat.txt")).unwrap();
    }
    std::fs::write(
        dir.join("node02").join("core.bin"),
        [0u8, 1, 2, 0, 0, 255, 0, 7].repeat(64),
    )
    .unwrap();
    let o = run(&[
        "analyze",
        "--format",
        "json",
        "--include-sections",
        dir.to_str().unwrap(),
    ]);
    let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let skipped = json["skipped_inputs"].as_array().unwrap();
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    assert!(skipped[0]["input"].as_str().unwrap().ends_with("core.bin"));
    assert!(skipped[0]["reason"].as_str().unwrap().contains("binary"));
    assert_eq!(json["documents"].as_array().unwrap().len(), 2);
}

/// A paste holding only a tool's failure is analysed (exit 1 on NVML's
/// lost GPU, an error), and its machine counted as a host beside another
/// unnamed dump's. Before, it was "nothing to analyse" (exit 2), and once
/// read it was not counted ("on 1 of 1 host(s)").
#[test]
fn a_dump_holding_only_a_tools_failure_is_judged_and_counted() {
    let dir = scratch("failure-only");
    let lost = dir.join("lost.txt");
    std::fs::write(
        &lost,
        "$ nvidia-smi\nUnable to determine the device handle for gpu 0000:B3:00.0: GPU is lost.  Reboot the system to recover this GPU\n",
    )
    .unwrap();
    let other = dir.join("other.txt");
    std::fs::write(&other, "$ ibstat\n-bash: ibstat: command not found\n").unwrap();
    let out = run(&["analyze", lost.to_str().unwrap()]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    let both = run(&[
        "analyze",
        "--format",
        "json",
        lost.to_str().unwrap(),
        other.to_str().unwrap(),
    ]);
    let report: serde_json::Value = serde_json::from_str(&stdout(&both)).unwrap();
    assert_eq!(report["hosts"], 2, "{}", report["verdict"]);
}

#[test]
fn nothing_readable_is_a_usage_error() {
    let dir = scratch("empty");
    let f = dir.join("notes.txt");
    std::fs::write(&f, "just some notes\n").unwrap();
    assert_eq!(code(&run(&["analyze", f.to_str().unwrap()])), 2);
    assert_eq!(
        code(&run(&[
            "analyze",
            "--interval",
            "3 weeks",
            f.to_str().unwrap()
        ])),
        2
    );
    assert_eq!(
        code(&run(&["analyze", "--ignore", "XX999", f.to_str().unwrap()])),
        2
    );
}

#[test]
fn rules_and_explain_print_the_catalogue() {
    let o = run(&["rules"]);
    assert_eq!(code(&o), 0);
    let text = stdout(&o);
    for id in ["FL001", "IB001", "IB113", "NV001", "TP001", "XS001"] {
        assert!(text.contains(id), "{id} missing from `rules`");
    }
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&run(&["rules", "--json"]))).unwrap();
    assert_eq!(json.as_array().unwrap().len(), text.lines().count());
    let o = run(&["explain", "ib001"]);
    assert_eq!(code(&o), 0);
    assert!(stdout(&o).contains("### What to do"));
    assert_eq!(code(&run(&["explain", "IB999"])), 2);
}

#[test]
fn a_closed_pipe_ends_output_quietly_instead_of_panicking() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    // More than a pipe buffer (64 KiB) of output, so writes meet the closed pipe.
    let fleet = repo("examples/fleet");
    let mut child = Command::new(env!("CARGO_BIN_EXE_fabricscope"))
        .args(["parse", "--format", "json"])
        .arg(&fleet)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    // The reader is dropped here: the rest of the output meets a closed pipe.
    assert!(first.starts_with('{'), "{first}");
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(out.status.success(), "{:?}", out.status);
}

#[test]
fn file_modification_times_give_the_interval_between_dumps() {
    use std::time::{Duration, UNIX_EPOCH};
    let dir = scratch("mtime").join("gpu01");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, second) in [
        ("during_gt_r_1.txt", 1_000_000_000),
        ("during_gt_r_2.txt", 1_000_000_002),
    ] {
        let to = dir.join(name);
        std::fs::copy(fixture(&format!("../own/h200-x2-driver580/{name}")), &to).unwrap();
        let file = std::fs::File::options().write(true).open(&to).unwrap();
        file.set_modified(UNIX_EPOCH + Duration::from_secs(second))
            .unwrap();
    }
    let out = run(&[
        "analyze",
        "--format",
        "json",
        dir.parent().unwrap().to_str().unwrap(),
    ]);
    let report: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let throughput = report["measurements"]["throughput"].as_array().unwrap();
    assert!(!throughput.is_empty(), "no rates from two timed dumps");
    for t in throughput {
        assert_eq!(t["interval_seconds"], 2.0, "{t}");
        assert_eq!(t["subject"]["host"], "gpu01");
    }
}

/// Two dumps of one host copied without their times (`cp`, an unpacked
/// archive) have modification times microseconds apart: that is when they
/// were written, not the time between the snapshots, and 9 symbol errors
/// over it are no error rate. With `--interval` the given time is used.
#[test]
fn file_modification_times_written_together_give_no_interval() {
    use std::time::{Duration, UNIX_EPOCH};
    let text = std::fs::read_to_string(repo(
        "tests/fixtures/rules/FL004/fires_rail_errors_growing_now.txt",
    ))
    .unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let (before, after) = lines.split_at(184);
    let dir = scratch("mtime-together").join("node1");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, part, nanos) in [
        ("perfquery_1.txt", before, 0),
        ("perfquery_2.txt", after, 73_000),
    ] {
        let to = dir.join(name);
        std::fs::write(&to, part.join("\n") + "\n").unwrap();
        let file = std::fs::File::options().write(true).open(&to).unwrap();
        file.set_modified(UNIX_EPOCH + Duration::new(1_000_000_000, nanos))
            .unwrap();
    }
    let report = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec![
            "analyze",
            "--format",
            "json",
            "--fail-on",
            "never",
            "--measurements",
            "all",
        ];
        args.extend(extra);
        args.push(dir.parent().unwrap().to_str().unwrap());
        serde_json::from_str(&stdout(&run(&args))).unwrap()
    };
    let rates_of = |r: &serde_json::Value| -> Vec<serde_json::Value> {
        r["measurements"]["counter_rates"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|set| {
                let mut counters = set["counters"].as_array().unwrap().clone();
                for c in &mut counters {
                    c["interval_seconds"] = set["interval_seconds"].clone();
                }
                counters
            })
            .collect()
    };
    // IB112's messages about the port: growth is growth whatever the
    // interval, but a rate needs one.
    let rising = |r: &serde_json::Value| -> Vec<String> {
        r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["rule"] == "IB112")
            .map(|f| f["message"].as_str().unwrap().to_owned())
            .collect()
    };
    let unknown = report(&[]);
    let rates = rates_of(&unknown);
    assert!(!rates.is_empty(), "the two dumps pair up");
    assert!(
        rates.iter().all(|r| r["status"] == "no_interval"),
        "{rates:?}"
    );
    let messages = rising(&unknown);
    assert!(!messages.is_empty(), "the symbol errors grew");
    for m in &messages {
        assert!(m.contains("grew by") && !m.contains("/s"), "{m}");
    }
    let notes = unknown["measurements"]["notes"].as_array().unwrap();
    assert!(
        notes.iter().any(|n| n
            .as_str()
            .unwrap()
            .contains("modification times are 0.000073 s apart")),
        "{notes:?}"
    );

    let given = report(&["--interval", "30s"]);
    let rates = rates_of(&given);
    assert!(
        rates.iter().all(|r| r["interval_seconds"] == 30.0),
        "{rates:?}"
    );
    assert!(rates.iter().any(|r| r["status"] == "measured"));
    // 9 errors in the 30 s given.
    let messages = rising(&given);
    assert!(!messages.is_empty());
    for m in &messages {
        assert!(m.contains("(0.300/s)"), "{m}");
    }
}

/// A report written into the directory being analysed is no input of the
/// next run: the second run over the directory reads the same dumps and
/// prints the same report (before, the first report was read as one more
/// input and listed as skipped).
#[test]
fn a_report_written_into_the_analysed_directory_is_not_read_back() {
    let dir = scratch("cli-report-in-input-dir");
    std::fs::copy(
        fixture("IB001/fires_polling_next_to_active.txt"),
        dir.join("ibstat.txt"),
    )
    .unwrap();
    let report = dir.join("report.json");
    let args = [
        "analyze",
        dir.to_str().unwrap(),
        "--format",
        "json",
        "-o",
        report.to_str().unwrap(),
    ];
    assert_eq!(code(&run(&args)), 1);
    let first = std::fs::read_to_string(&report).unwrap();
    assert!(first.contains("\"IB001\""), "{first}");
    assert_eq!(code(&run(&args)), 1);
    let second = std::fs::read_to_string(&report).unwrap();
    assert!(!second.contains("report.json"), "{second}");
    assert_eq!(first, second);
}

/// `-o` into a directory that does not exist fails with status 2 and
/// says why, without a report anywhere.
#[test]
fn an_output_path_that_cannot_be_written_fails_the_run() {
    let dir = scratch("cli-output-unwritable");
    let out = dir.join("missing").join("report.json");
    let o = run(&[
        "analyze",
        fixture("IB001/fires_polling_next_to_active.txt")
            .to_str()
            .unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 2, "{}", stdout(&o));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("cannot write"), "{err}");
    assert!(!out.exists());
}

/// A run with nothing to analyse leaves no empty report file behind.
#[test]
fn a_run_with_nothing_to_analyse_leaves_no_report_file() {
    let dir = scratch("cli-output-nothing");
    let input = dir.join("notes.txt");
    std::fs::write(&input, "just a sentence, no tool output\n").unwrap();
    let out = dir.join("report.json");
    let o = run(&[
        "analyze",
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 2, "{}", stdout(&o));
    assert!(!out.exists());
}
