//! The fleet operator's day, end to end through the binary: honest inputs,
//! the walk, host naming, archives, incidents, the fleet summary, diffs and
//! baselines, and the CLI's polish (formats, colour, completions, man page).
#![cfg(feature = "cli")]
// Test helpers: a failed command should fail the test loudly.
#![allow(clippy::panic, clippy::unwrap_used, clippy::indexing_slicing)]

mod common;

use common::{code, repo, run, stderr, stdout};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_str(&stdout(o)).unwrap_or_else(|e| panic!("{e}: {}", stdout(o)))
}

/// A scratch directory of these tests, emptied first.
fn scratch(name: &str) -> PathBuf {
    common::scratch(&format!("cli_fleet/{name}"))
}

/// A copy of the nine host dumps of `examples/fleet` as `dir/nodeNN.txt`.
fn fleet_copy(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    for n in 1..=9 {
        let name = format!("node0{n}.txt");
        std::fs::copy(repo("examples/fleet").join(&name), dir.join(&name)).unwrap();
    }
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn a_typo_in_a_named_path_exits_2_with_a_stderr_line_unless_keep_going() {
    let good = repo("tests/fixtures/rules/IB002/quiet_active.txt");
    let o = run(&["analyze", s(&good), "/nonexistent/typo.txt"]);
    assert_eq!(code(&o), 2, "{}", stdout(&o));
    let err = stderr(&o);
    assert!(
        err.lines()
            .any(|l| l.contains("/nonexistent/typo.txt") && l.contains("no such file")),
        "{err}"
    );
    // The report of what could be read is still printed.
    assert!(stdout(&o).starts_with("healthy: "), "{}", stdout(&o));
    let o = run(&["analyze", "--keep-going", s(&good), "/nonexistent/typo.txt"]);
    assert_eq!(code(&o), 0);
    assert!(stderr(&o).contains("typo.txt"));
    // Unreadable files found inside a directory (here a dangling symbolic
    // link) are said on stderr and listed in the report; the exit status is
    // the report's.
    #[cfg(unix)]
    {
        let dir = scratch("dangling");
        std::fs::copy(&good, dir.join("node01.txt")).unwrap();
        std::os::unix::fs::symlink("gone.txt", dir.join("node02.txt")).unwrap();
        let o = run(&["analyze", "--format", "json", s(&dir)]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        assert!(stderr(&o).contains("node02.txt"), "{}", stderr(&o));
        let skipped = json(&o)["skipped_inputs"].clone();
        assert!(skipped.to_string().contains("node02.txt"), "{skipped}");
        let o = run(&["analyze", s(&dir)]);
        assert_eq!(code(&o), 0);
        assert!(
            stderr(&o).contains("node02.txt"),
            "text output says it on stderr too"
        );
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch("unreadable");
        std::fs::copy(&good, dir.join("node01.txt")).unwrap();
        let locked = dir.join("node02.txt");
        std::fs::copy(&good, &locked).unwrap();
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
        if std::fs::read(&locked).is_err() {
            // (root reads anything: then there is nothing to test)
            let o = run(&["analyze", "--format", "json", s(&dir)]);
            assert_eq!(code(&o), 0, "{}", stderr(&o));
            assert!(stderr(&o).contains("node02.txt"), "{}", stderr(&o));
            let skipped = json(&o)["skipped_inputs"].clone();
            assert!(skipped.to_string().contains("node02.txt"), "{skipped}");
        }
    }
}

#[test]
fn a_symlink_loop_is_read_once_and_hidden_directories_are_skipped() {
    let dir = scratch("loop");
    let host = dir.join("node01");
    std::fs::create_dir_all(&host).unwrap();
    std::fs::copy(repo("examples/fleet/node01.txt"), host.join("ibstat.txt")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink("..", host.join("again")).unwrap();
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    std::fs::copy(
        repo("examples/fleet/node02.txt"),
        dir.join(".git/node02.txt"),
    )
    .unwrap();
    let o = run(&["analyze", "--format", "json", "--include-sections", s(&dir)]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let docs = json(&o)["documents"].clone();
    // One document (serialised as `document` when alone).
    assert!(docs.is_null(), "read more than once: {docs}");
    assert_eq!(json(&o)["hosts"], 1);
    let err = stderr(&o);
    #[cfg(unix)]
    assert!(err.contains("loop"), "{err}");
    assert!(err.contains("hidden"), "{err}");
    // --hidden reads the .git directory too.
    let o = run(&[
        "analyze",
        "--hidden",
        "--format",
        "json",
        "--include-sections",
        s(&dir),
    ]);
    assert_eq!(json(&o)["documents"].as_array().unwrap().len(), 2);
}

#[test]
fn the_nine_dump_directory_names_nine_hosts() {
    let dir = repo("tests/fixtures/fleet-nine");
    let o = run(&["analyze", "--list-hosts", s(&dir)]);
    assert_eq!(code(&o), 0);
    let out = stdout(&o);
    for n in 1..=9 {
        assert!(
            out.lines()
                .any(|l| l.contains(&format!("ibstat.node0{n}.txt"))
                    && l.contains(&format!(" node0{n} "))),
            "{out}"
        );
    }
    let o = run(&["analyze", "--format", "json", "--fail-on", "never", s(&dir)]);
    let report = json(&o);
    assert_eq!(report["hosts"], 9, "{}", report["verdict"]);
    assert_eq!(report["host_names"].as_array().unwrap().len(), 9);
    // `--host-from stem` merges them, and says so.
    let o = run(&["analyze", "--list-hosts", "--host-from", "stem", s(&dir)]);
    assert!(stderr(&o).contains("9 different hosts"), "{}", stderr(&o));
    // A regex names them too.
    let o = run(&[
        "analyze",
        "--list-hosts",
        "--host-from",
        r"regex:\.(node\d+)\.txt$",
        s(&dir),
    ]);
    assert!(stdout(&o).contains(" node05 "), "{}", stdout(&o));
}

#[test]
fn hostname_output_and_host_directories_name_hosts() {
    let dir = scratch("naming");
    std::fs::create_dir_all(dir.join("2024-06-01")).unwrap();
    let dump = std::fs::read_to_string(repo("examples/fleet/node07.txt")).unwrap();
    std::fs::write(dir.join("2024-06-01/node07.txt"), &dump).unwrap();
    std::fs::write(
        dir.join("2024-06-01/capture.txt"),
        format!("$ hostname\ngpu-b12.example.org\n{dump}"),
    )
    .unwrap();
    let out = stdout(&run(&["analyze", "--list-hosts", s(&dir)]));
    assert!(
        out.contains("node07.txt") && out.contains(" node07 "),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.contains("capture.txt") && l.contains("gpu-b12") && l.contains("hostname")),
        "{out}"
    );
}

#[test]
fn a_tar_gz_of_a_fleet_directory_gives_the_directory_report() {
    let dir = scratch("archive");
    fleet_copy(&dir.join("fleet"));
    let tgz = dir.join("fleet.tar.gz");
    let status = Command::new("tar")
        .current_dir(&dir)
        .args(["czf", "fleet.tar.gz", "fleet"])
        .status()
        .unwrap();
    assert!(status.success());
    let key = |v: &serde_json::Value| {
        let findings: Vec<String> = v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| format!("{} {} {}", f["rule"], f["subject"], f["message"]))
            .collect();
        let incidents: Vec<String> = v["incidents"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| format!("{} {} {}", i["fingerprint"], i["rule"], i["findings"]))
            .collect();
        (
            v["verdict"].clone(),
            findings,
            incidents,
            v["host_names"].clone(),
        )
    };
    let from_dir = json(&run(&[
        "analyze",
        "--format",
        "json",
        s(&dir.join("fleet")),
    ]));
    let from_tgz = json(&run(&["analyze", "--format", "json", s(&tgz)]));
    assert!(!from_dir["findings"].as_array().unwrap().is_empty());
    assert_eq!(key(&from_dir), key(&from_tgz));
    // A zip of the directory gives the same report.
    let zipped = Command::new("zip")
        .current_dir(&dir)
        .args(["-qr", "fleet.zip", "fleet"])
        .status();
    if zipped.is_ok_and(|s| s.success()) {
        let from_zip = json(&run(&[
            "analyze",
            "--format",
            "json",
            s(&dir.join("fleet.zip")),
        ]));
        assert_eq!(key(&from_dir), key(&from_zip));
    }
    // A single gzipped dump reads in place too.
    let gz = dir.join("node02.txt.gz");
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "gzip -c {} > {}",
            s(&dir.join("fleet/node02.txt")),
            s(&gz)
        ))
        .status()
        .unwrap();
    assert!(status.success());
    let o = run(&["analyze", "--format", "json", "--include-sections", s(&gz)]);
    assert_eq!(
        json(&o)["document"]["sections"][0]["kind"],
        "ibstat",
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_sosreport_contributes_its_infiniband_and_nvidia_outputs() {
    let dir = scratch("sos");
    let sos = dir.join("sosreport-node07-2024-06-01-xkqjwe");
    std::fs::create_dir_all(sos.join("sos_commands/infiniband")).unwrap();
    std::fs::create_dir_all(sos.join("etc")).unwrap();
    std::fs::copy(
        repo("tests/fixtures/ibsim/port_down/node02_ibstat.txt"),
        sos.join("sos_commands/infiniband/ibstat"),
    )
    .unwrap();
    std::fs::write(sos.join("etc/hosts"), "127.0.0.1 localhost\n").unwrap();
    std::fs::write(sos.join("hostname"), "gpu-node-07.cluster\n").unwrap();
    let o = run(&["analyze", "--list-hosts", s(&dir)]);
    let out = stdout(&o);
    assert!(out.contains("sos_commands/infiniband/ibstat"), "{out}");
    assert!(out.contains("gpu-node-07"), "{out}");
    assert!(!out.contains("etc/hosts"), "{out}");
    let o = run(&["analyze", "--format", "json", s(&dir)]);
    assert_eq!(json(&o)["findings"][0]["subject"]["host"], "gpu-node-07");
}

#[test]
fn the_down_port_prints_one_incident_with_eight_supporting_counters() {
    let f = repo("tests/fixtures/incidents/down_port_stale_counters.txt");
    let o = run(&["analyze", s(&f)]);
    assert_eq!(code(&o), 1);
    let out = stdout(&o);
    // Headlines are indented by two spaces and start with a severity.
    let headlines: Vec<&str> = out
        .lines()
        .filter(|l| {
            ["critical", "error", "warning", "info"]
                .iter()
                .any(|s| l.starts_with(&format!("  {s}")))
        })
        .collect();
    assert_eq!(headlines.len(), 1, "{out}");
    assert!(headlines[0].contains("IB001"), "{out}");
    let supporting: Vec<&str> = out
        .lines()
        .filter(|l| l.trim_start().starts_with("+ "))
        .collect();
    assert_eq!(supporting.len(), 8, "{out}");
    assert!(supporting.iter().all(|l| l.contains(" IB1")), "{out}");
    assert!(out.contains("probable cause: a failing cable"), "{out}");
    // The same in JSON: one incident indexing all nine findings.
    let v = json(&run(&["analyze", "--format", "json", s(&f)]));
    let incidents = v["incidents"].as_array().unwrap();
    assert_eq!(incidents.len(), 1);
    let i = &incidents[0];
    assert_eq!(i["rule"], "IB001");
    assert_eq!(i["findings"].as_array().unwrap().len(), 9);
    assert_eq!(i["subject"]["device"], "mlx5_3");
    assert!(i["fingerprint"].as_str().unwrap().len() == 16);
    assert!(i["probable_cause"].is_string());
    assert_eq!(v["schema_version"], 3);
    // NDJSON: one line, the incident; SARIF: one result.
    let nd = stdout(&run(&["analyze", "--format", "ndjson", s(&f)]));
    assert_eq!(nd.lines().count(), 1);
    let line: serde_json::Value = serde_json::from_str(nd.trim()).unwrap();
    assert_eq!(line["findings"].as_array().unwrap().len(), 9);
    // Batch NDJSON streams host by host: its lines' own schema (4).
    assert_eq!(line["schema_version"], 4);
    assert_eq!(line["scope"], "host");
    let sarif = json(&run(&["analyze", "--format", "sarif", s(&f)]));
    assert_eq!(sarif["runs"][0]["results"].as_array().unwrap().len(), 1);
    assert_eq!(sarif["runs"][0]["properties"]["schema_version"], 3);
}

#[test]
fn the_fleet_summary_comes_first_and_brief_lines_fit_120_columns() {
    let fleet = repo("examples/fleet");
    let o = run(&["analyze", "--quiet", s(&fleet)]);
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[2].starts_with("== summary: "), "{out}");
    assert!(out.contains("  IB001         2  node05, node07"), "{out}");
    assert!(
        out.contains("healthy: 6 host(s) (--verbose lists them)"),
        "{out}"
    );
    assert!(
        !out.contains("\n== node05"),
        "--quiet prints no host blocks: {out}"
    );
    for args in [["--quiet"], ["--brief"]] {
        let out = stdout(&run(&["analyze", args[0], s(&fleet)]));
        for l in out.lines() {
            assert!(l.chars().count() <= 120, "{} chars: {l}", l.chars().count());
        }
    }
    let out = stdout(&run(&["analyze", "--quiet", "--verbose", s(&fleet)]));
    assert!(out.contains("healthy: fabric, node01, node03"), "{out}");
    // CSV and Markdown for tickets.
    let csv = stdout(&run(&["analyze", "--format", "csv", s(&fleet)]));
    let rows: Vec<&str> = csv.lines().collect();
    assert!(
        rows[0].starts_with("host,severity,rule,subject,title"),
        "{csv}"
    );
    assert!(
        rows.iter().any(|r| r.starts_with("node05,critical,IB001,")),
        "{csv}"
    );
    let md = stdout(&run(&["analyze", "--format", "markdown", s(&fleet)]));
    assert!(
        md.contains("| host | worst | incidents | headline |"),
        "{md}"
    );
}

#[test]
fn diff_of_two_runs_lists_exactly_the_injected_change() {
    let dir = scratch("diff");
    fleet_copy(&dir.join("monday"));
    fleet_copy(&dir.join("tuesday"));
    // node03 was healthy; on Tuesday its port is down.
    let node03 = dir.join("tuesday/node03.txt");
    let text = std::fs::read_to_string(&node03).unwrap();
    assert!(text.contains("State: Active"));
    std::fs::write(
        &node03,
        text.replacen("State: Active", "State: Down", 1).replacen(
            "Physical state: LinkUp",
            "Physical state: Polling",
            1,
        ),
    )
    .unwrap();
    let old = dir.join("monday.json");
    let new = dir.join("tuesday.json");
    for (src, out) in [("monday", &old), ("tuesday", &new)] {
        let o = run(&[
            "analyze",
            "--format",
            "json",
            "--output",
            s(out),
            s(&dir.join(src)),
        ]);
        assert!(stdout(&o).is_empty(), "--output writes the file only");
        assert!(out.exists());
    }
    let o = run(&["diff", s(&old), s(&new)]);
    assert_eq!(code(&o), 1, "something new: exit 1");
    let out = stdout(&o);
    let changes: Vec<&str> = out
        .lines()
        .filter(|l| {
            l.starts_with("new ") || l.starts_with("resolved ") || l.starts_with("changed ")
        })
        .collect();
    assert_eq!(changes.len(), 1, "{out}");
    assert!(
        changes[0].starts_with("new ") && changes[0].contains("node03"),
        "{out}"
    );
    assert!(changes[0].contains("IB001"), "{out}");
    let d = json(&run(&["diff", "--format", "json", s(&old), s(&new)]));
    assert_eq!(d["new"].as_array().unwrap().len(), 1);
    assert_eq!(d["resolved"].as_array().unwrap().len(), 0);
    assert_eq!(d["schema_version"], 3);
    // A run against itself: no news, exit 0.
    assert_eq!(code(&run(&["diff", s(&new), s(&new)])), 0);
    // --baseline shows only the new incident.
    let v = json(&run(&[
        "analyze",
        "--format",
        "json",
        "--baseline",
        s(&old),
        s(&dir.join("tuesday")),
    ]));
    let incidents = v["incidents"].as_array().unwrap();
    assert_eq!(incidents.len(), 1, "{incidents:?}");
    assert_eq!(incidents[0]["subject"]["host"], "node03");
    // Not a report: a usage error.
    assert_eq!(code(&run(&["diff", s(&node03), s(&new)])), 2);
}

#[test]
fn colour_completions_man_page_and_help() {
    let f = repo("tests/fixtures/incidents/down_port_stale_counters.txt");
    let coloured = stdout(&run(&["analyze", "--color", "always", s(&f)]));
    assert!(coloured.contains("\x1b["));
    let plain = stdout(&run(&["analyze", "--color", "never", s(&f)]));
    assert!(!plain.contains('\x1b'));
    let o = run(&["completions", "bash"]);
    assert_eq!(code(&o), 0);
    assert!(stdout(&o).contains("fabricscope"));
    let o = run(&["man"]);
    assert_eq!(code(&o), 0);
    assert!(stdout(&o).contains(".TH fabricscope"), "{}", stdout(&o));
    let parsed = json(&run(&["parse", "--format", "json", s(&f)]));
    assert_eq!(parsed["schema_version"], 3);
    assert_eq!(parsed["sections"][0]["kind"], "ibstat");
    let help = stdout(&run(&["--help"]));
    assert!(
        help.contains("Exit codes:") && help.contains("fabricscope diff"),
        "{help}"
    );
}

#[test]
fn a_gpu_with_every_nvlink_down_points_at_the_gpu_not_the_links() {
    let all = repo("tests/fixtures/rules/NV001/fires_all_inactive_sxm.txt");
    let v = json(&run(&["analyze", "--format", "json", s(&all)]));
    let i = &v["incidents"][0];
    assert_eq!(i["rule"], "NV001");
    assert!(
        i["probable_cause"].as_str().unwrap().contains("baseboard"),
        "{i}"
    );
    // Two links down of many: no cause claimed.
    let two = repo("tests/fixtures/rules/NV001/fires_two_links_inactive.txt");
    let v = json(&run(&["analyze", "--format", "json", s(&two)]));
    assert!(
        v["incidents"][0]["probable_cause"].is_null(),
        "{}",
        v["incidents"]
    );
}

#[test]
fn analyze_reads_the_json_that_parse_prints() {
    let dir = scratch("saved");
    let f = repo("tests/fixtures/incidents/down_port_stale_counters.txt");
    let fleet = repo("examples/fleet");
    for (input, name) in [(f.as_path(), "one.json"), (fleet.as_path(), "fleet.json")] {
        let saved = dir.join(name);
        let o = run(&["parse", "--format", "json", s(input)]);
        std::fs::write(&saved, o.stdout).unwrap();
        let key = |v: serde_json::Value| {
            let fs: Vec<String> = v["findings"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| format!("{} {} {}", f["rule"], f["subject"], f["message"]))
                .collect();
            (v["verdict"].clone(), fs)
        };
        let from_text = json(&run(&[
            "analyze",
            "--format",
            "json",
            "--fail-on",
            "never",
            s(input),
        ]));
        let from_json = json(&run(&[
            "analyze",
            "--format",
            "json",
            "--fail-on",
            "never",
            s(&saved),
        ]));
        assert!(!from_text["findings"].as_array().unwrap().is_empty());
        assert_eq!(key(from_text), key(from_json), "{name}");
    }
}
