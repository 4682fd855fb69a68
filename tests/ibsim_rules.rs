//! Rules against fabrics simulated by ibsim and read by the real
//! infiniband-diags tools (tests/fixtures/ibsim). Each scenario's
//! `scenario.json` is the ground truth, written from the scenario's
//! definition, never from tool output: what was cut, narrowed or set.

// Test helpers: a broken fixture should fail loudly.
#![allow(clippy::panic, clippy::unwrap_used, clippy::indexing_slicing)]

use fabricscope::rules::Finding;
use fabricscope::{analyze, read_bytes, AnalyzeOptions, Document, ReadOptions, Report, Severity};
use serde_json::Value;
use std::path::Path;

fn scenario(name: &str) -> (Value, Report) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/ibsim")
        .join(name);
    let truth: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("scenario.json")).unwrap()).unwrap();
    let mut docs: Vec<Document> = Vec::new();
    for capture in truth["captures"].as_array().unwrap() {
        let file = capture["file"].as_str().unwrap();
        let bytes = std::fs::read(dir.join(file)).unwrap();
        let options =
            ReadOptions::default().with_default_host(capture["host"].as_str().map(str::to_owned));
        if let Ok(mut doc) = read_bytes(&bytes, &options) {
            for s in &mut doc.sections {
                s.source = Some(file.to_owned());
            }
            docs.push(doc);
        }
    }
    let report = analyze(&docs, &AnalyzeOptions::default());
    (truth, report)
}

fn of<'a>(report: &'a Report, rule: &str) -> Vec<&'a Finding> {
    report.findings.iter().filter(|f| f.rule == rule).collect()
}

/// Findings at warning or worse about the fabric: the input rules (IN0xx)
/// speak of the capture, where `ibstatus` fails by construction (ibsim
/// provides no sysfs) and IN003 says so.
fn at_least_warning(report: &Report) -> Vec<String> {
    report
        .findings
        .iter()
        .filter(|f| f.severity >= Severity::Warning && !f.rule.starts_with("IN"))
        .map(|f| format!("{} {}", f.rule, f.message))
        .collect()
}

#[test]
fn healthy_fabric_raises_nothing() {
    let (_, report) = scenario("healthy");
    assert!(
        at_least_warning(&report).is_empty(),
        "{:#?}",
        at_least_warning(&report)
    );
}

#[test]
fn no_subnet_manager_is_named_on_the_port_read() {
    let (truth, report) = scenario("no_sm");
    assert!(truth["expected_hca_ports"]
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["problem"] == "no_sm"));
    // The fabric as iblinkinfo shows it (every trained link Initialize: no
    // SM running) is one finding for the whole fabric, however many links
    // wait and however many listings were taken; the host's own port read
    // (ibstat) is more evidence of the same cause, under that finding.
    let f = of(&report, "IB002");
    assert_eq!(f.len(), 1, "{f:#?}");
    let fabric = f[0];
    assert_eq!(
        fabric.subject.host.as_deref(),
        Some("node01"),
        "{fabric:#?}"
    );
    assert!(fabric.subject.device.is_none());
    assert!(
        fabric.message.contains("no subnet manager"),
        "{}",
        fabric.message
    );
    let own: Vec<_> = fabric
        .evidence
        .iter()
        .filter(|e| e.text.starts_with("ibstat: ") && e.text.contains("SM lid: 0"))
        .collect();
    assert_eq!(own.len(), 1, "{fabric:#?}");
    assert!(of(&report, "IB001").is_empty());
    assert!(
        of(&report, "IB003").is_empty(),
        "missing LID is a consequence"
    );
}

#[test]
fn cut_cables_are_down_ports_on_their_hosts() {
    let (truth, report) = scenario("port_down");
    let mut want: Vec<(String, u64)> = truth["cut_ports"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| truth["hosts"].as_array().unwrap().contains(&c["node"]))
        .map(|c| {
            (
                c["node"].as_str().unwrap().to_owned(),
                c["port"].as_u64().unwrap(),
            )
        })
        .collect();
    want.sort();
    let mut got: Vec<(String, u64)> = of(&report, "IB001")
        .iter()
        .map(|f| {
            (
                f.subject.host.clone().unwrap_or_default(),
                u64::from(f.subject.port.unwrap()),
            )
        })
        .collect();
    got.sort();
    assert_eq!(got, want);
    // Each of those hosts has no other port: the host is off the fabric.
    assert!(of(&report, "IB001")
        .iter()
        .all(|f| f.severity == Severity::Critical));
}

#[test]
fn narrowed_link_is_found_from_both_ends() {
    let (truth, report) = scenario("narrow_link");
    let narrow = &truth["narrow_links"][0];
    let node = narrow["b"][0].as_str().unwrap();
    let f = of(&report, "IB006");
    assert!(!f.is_empty());
    assert!(
        f.iter().any(|f| f
            .subject
            .device
            .as_deref()
            .is_some_and(|d| d.starts_with(node))),
        "{f:#?}"
    );
    // Only the narrowed link: every finding names node04 or its peer switch port.
    let switch = narrow["a"][0].as_str().unwrap();
    for finding in f {
        let d = finding.subject.device.as_deref().unwrap_or("");
        assert!(
            d.starts_with(node) || d.contains(switch),
            "unexpected IB006 on {d}: {}",
            finding.message
        );
    }
}

/// The counter rule that judges each PortCounters field (spec table).
fn rule_for(field: &str) -> Option<&'static str> {
    Some(match field {
        "SymbolErrorCounter" => "IB101",
        "LinkErrorRecoveryCounter" => "IB102",
        "LinkDownedCounter" => "IB103",
        "PortRcvErrors" => "IB104",
        "PortRcvRemotePhysicalErrors" => "IB105",
        "LocalLinkIntegrityErrors" => "IB106",
        "ExcessiveBufferOverrunErrors" => "IB107",
        "PortXmitDiscards" => "IB108",
        "PortXmitWait" => "IB109",
        "PortXmitConstraintErrors" | "PortRcvConstraintErrors" => "IB110",
        _ => return None,
    })
}

#[test]
fn counters_over_their_limits_are_reported_and_the_others_are_not() {
    let (truth, report) = scenario("counters");
    let hosts = truth["hosts"].as_array().unwrap();
    let mut checked = 0;
    for set in truth["counters_set"].as_array().unwrap() {
        if !hosts.contains(&set["node"]) || set["attribute"] != "PortCounters" {
            continue; // switch ports are read through ibqueryerrors, below
        }
        let node = set["node"].as_str().unwrap();
        let field = set["field"].as_str().unwrap();
        let Some(rule) = rule_for(field) else {
            continue;
        };
        let on_port: Vec<&Finding> = of(&report, rule)
            .into_iter()
            .filter(|f| f.subject.host.as_deref() == Some(node))
            .filter(|f| u64::from(f.subject.port.unwrap_or(0)) == set["port"].as_u64().unwrap())
            .filter(|f| f.message.contains(field))
            .collect();
        let over = set["over_threshold"].as_bool().unwrap();
        assert_eq!(
            !on_port.is_empty(),
            over,
            "{node} {field} = {} (over: {over}): {on_port:#?}",
            set["expected_value"]
        );
        if set["saturated"].as_bool().unwrap() {
            assert!(
                of(&report, "IB111")
                    .iter()
                    .any(|f| f.subject.host.as_deref() == Some(node) && f.message.contains(field)),
                "{node} {field} saturated but IB111 is silent"
            );
        }
        checked += 1;
    }
    assert!(
        checked >= 10,
        "only {checked} ground-truth counters checked"
    );
}

#[test]
fn fabric_wide_reports_name_the_node_not_the_host_that_ran_them() {
    let (_, report) = scenario("counters");
    let fabric: Vec<&Finding> = report
        .findings
        .iter()
        .filter(|f| {
            f.evidence.iter().any(|e| {
                e.source
                    .as_deref()
                    .is_some_and(|s| s.starts_with("ibqueryerrors"))
            })
        })
        .collect();
    assert!(!fabric.is_empty());
    for f in fabric {
        assert_eq!(f.subject.host, None, "{}", f.message);
        assert!(f.subject.device.is_some());
    }
}
