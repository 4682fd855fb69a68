//! `--format html` and `--redact`: what the CLI prints for a ticket, and the
//! same redaction as the web page's share link.
#![cfg(feature = "cli")]
// Test helpers: a failed command should fail the test loudly.
#![allow(clippy::panic, clippy::unwrap_used, clippy::indexing_slicing)]

mod common;

use common::{repo, run, stdout};

#[test]
fn analyze_prints_one_self_contained_html_file() {
    let path = repo("www/examples/ibsim-ports-down.txt");
    let out = run(&["analyze", path.to_str().unwrap(), "--format", "html"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "findings still set the exit status"
    );
    let html = stdout(&out);
    assert!(html.starts_with("<!doctype html>"));
    assert!(
        html.contains("<h2 class=\"host\">node02</h2>"),
        "grouped by host"
    );
    assert!(html.contains("<code>IB001</code>"));
    assert!(!html.contains("<script") && !html.contains(" src="));
}

#[test]
fn analyze_redact_replaces_hosts_and_guids_in_every_format() {
    let path = repo("www/examples/ib-two-hosts.txt");
    // The parsed input (with every GUID) is in the JSON only on request.
    let plain = stdout(&run(&[
        "analyze",
        path.to_str().unwrap(),
        "--format",
        "json",
        "--include-sections",
    ]));
    let redacted = stdout(&run(&[
        "analyze",
        path.to_str().unwrap(),
        "--format",
        "json",
        "--include-sections",
        "--redact",
    ]));
    assert!(plain.contains("ib-node07") && plain.contains("0x946dae03004a3c10"));
    assert!(!redacted.contains("ib-node07") && !redacted.contains("0x946dae03004a3c10"));
    let (p, r): (serde_json::Value, serde_json::Value) = (
        serde_json::from_str(&plain).unwrap(),
        serde_json::from_str(&redacted).unwrap(),
    );
    assert_eq!(p["summary"], r["summary"], "same findings");
    assert_eq!(
        p["findings"].as_array().unwrap().len(),
        r["findings"].as_array().unwrap().len()
    );
    let hosts: Vec<&str> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["subject"]["host"].as_str())
        .collect();
    assert!(hosts.iter().all(|h| h.starts_with("host-")), "{hosts:?}");
    let text = stdout(&run(&["analyze", path.to_str().unwrap(), "--redact"]));
    assert!(!text.contains("ib-node07") && text.contains("host-1"));
}

#[test]
fn parse_redact_redacts_before_reading_and_consistently_across_files() {
    let dir = repo("examples/fleet");
    let out = stdout(&run(&[
        "parse",
        dir.to_str().unwrap(),
        "--format",
        "json",
        "--redact",
    ]));
    assert!(
        !out.contains("node02"),
        "host names from file names are replaced too"
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let hosts: std::collections::BTreeSet<&str> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["sections"].as_array().unwrap())
        .filter_map(|s| s["host"].as_str())
        .collect();
    assert!(
        hosts.len() > 2 && hosts.iter().all(|h| h.starts_with("host-")),
        "{hosts:?}"
    );
}
