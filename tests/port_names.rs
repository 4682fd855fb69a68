//! One port, one name: perfquery names ports by LID, and measurements (rates,
//! the peer-group outliers FL004 reports) and per-port findings (IB104) all give a LID the adapter
//! name the same port index reads from every port view — here `ibstatus`
//! alone, with no `ibstat` rates (statistics used to name LIDs only from
//! `ibstat` sections with rates, so measurements said `lid 12 port 1` where
//! IB104 said `mlx5_1 port 1 lid 12`).
// Test helpers: a failed step should fail the test loudly.
#![allow(clippy::panic, clippy::unwrap_used, clippy::indexing_slicing)]

use fabricscope::{AnalyzeOptions, ReadOptions};
use serde_json::Value;

/// `ibstatus` for six single-port adapters `mlx5_0`…`mlx5_5`, LIDs 11–16.
fn ibstatus() -> String {
    ibstatus_with([11, 12, 13, 14, 15, 16])
}

/// `ibstatus` for `mlx5_0`…`mlx5_5` with these LIDs.
fn ibstatus_with(lids: [u32; 6]) -> String {
    let mut out = String::from("$ ibstatus\n");
    for (i, lid) in lids.iter().enumerate() {
        out.push_str(&format!(
            "Infiniband device 'mlx5_{i}' port 1 status:\n\
             \tdefault gid:\t fe80:0000:0000:0000:0c42:a103:0012:{i:04x}\n\
             \tbase lid:\t 0x{:x}\n\
             \tsm lid:\t\t 0x1\n\
             \tstate:\t\t 4: ACTIVE\n\
             \tphys state:\t 5: LinkUp\n\
             \trate:\t\t 200 Gb/sec (4X HDR)\n\
             \tlink_layer:\t InfiniBand\n\n",
            lid
        ));
    }
    out
}

/// perfquery of every LID; LID 12 has receive and symbol errors, growing.
fn perfquery(snapshot: u64) -> String {
    let mut out = String::new();
    for lid in 11..=16u64 {
        let (rcv, symbol) = if lid == 12 {
            (400 + 300 * snapshot, 5000 + 4000 * snapshot)
        } else {
            (0, (lid - 9) * (1 + snapshot))
        };
        out.push_str(&format!(
            "$ perfquery {lid} 1\n# Port counters: Lid {lid} port 1 (CapMask: 0x5A00)\n\
             PortSelect:......................1\n\
             SymbolErrorCounter:..............{symbol}\n\
             LinkDownedCounter:...............0\n\
             PortRcvErrors:...................{rcv}\n"
        ));
    }
    out
}

/// Every `subject` object anywhere in `v`.
fn subjects<'v>(v: &'v Value, out: &mut Vec<&'v Value>) {
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                if k == "subject" {
                    out.push(child);
                }
                subjects(child, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|c| subjects(c, out)),
        _ => {}
    }
}

/// The text read as host `n1` and analysed with 10 s between snapshots;
/// the report and its JSON.
fn analyze_n1(text: &str) -> (fabricscope::Report, Value) {
    let doc = fabricscope::read_all(
        text,
        &ReadOptions::default().with_default_host("n1".to_owned()),
    )
    .unwrap();
    let report =
        fabricscope::analyze::analyze(&[doc], &AnalyzeOptions::default().with_interval(10.0));
    let json = serde_json::to_value(&report).unwrap();
    (report, json)
}

#[test]
fn a_lid_named_port_has_one_name_in_measurements_and_findings() {
    let text = format!("{}{}{}", ibstatus(), perfquery(0), perfquery(1));
    let (report, json) = analyze_n1(&text);

    let ids: Vec<&str> = report.findings.iter().map(|f| f.rule).collect();
    assert!(ids.contains(&"IB104"), "IB104 fires on LID 12: {ids:?}");
    // The peer-group outliers FL004 judges, and the rates, name LID 12.
    let outliers: Vec<_> = report
        .measurements
        .peer_groups
        .iter()
        .flat_map(|g| &g.outliers)
        .filter(|o| o.subject.lid == Some(12))
        .collect();
    assert!(!outliers.is_empty());
    assert!(report
        .measurements
        .counter_rates
        .iter()
        .any(|r| r.subject.lid == Some(12)));

    let mut all = Vec::new();
    subjects(&json, &mut all);
    let of_lid_12: Vec<&&Value> = all.iter().filter(|s| s["lid"] == 12).collect();
    assert!(!of_lid_12.is_empty());
    for s in &of_lid_12 {
        assert_eq!(s["device"], "mlx5_1", "LID 12 is mlx5_1 (ibstatus): {s}");
        assert_eq!(s["host"], "n1", "{s}");
    }
    // Every perfquery port got its adapter's name, in every record.
    for s in all.iter().filter(|s| s.get("lid").is_some()) {
        let lid = s["lid"].as_u64().unwrap();
        assert_eq!(s["device"], format!("mlx5_{}", lid - 11), "{s}");
    }
}

#[test]
fn a_reassigned_lid_takes_the_latest_name_and_is_noted() {
    // LID 12 is mlx5_1 in the first ibstatus, mlx5_4 in the second: the
    // latest wins everywhere, and the measurements say the LID changed hands.
    let later = ibstatus_with([11, 15, 13, 14, 12, 16]);
    let text = format!("{}{}{later}{}", ibstatus(), perfquery(0), perfquery(1));
    let (report, json) = analyze_n1(&text);
    let mut all = Vec::new();
    subjects(&json, &mut all);
    let names: std::collections::BTreeSet<String> = all
        .iter()
        .filter(|s| s["lid"] == 12)
        .map(|s| s["device"].to_string())
        .collect();
    assert_eq!(names.len(), 1, "one name for LID 12: {names:?}");
    let notes = &report.measurements.notes;
    assert!(
        notes
            .iter()
            .any(|n| n.contains("LID 12 on n1") && n.contains("re-assigned")),
        "{notes:?}"
    );
}
