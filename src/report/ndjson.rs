//! One incident per line, for `jq`, log shippers and `grep`: each line is
//! self-contained, with the incident's fields, its findings in full (headline
//! first) and a `schema_version`.
//!
//! Two shapes:
//! - a whole [`Report`] ([`write()`], [`render`]): its incidents, worst first,
//!   `schema_version` [`SCHEMA_VERSION`];
//! - a stream written as hosts finish ([`write_part`], the batch
//!   `analyze --format ndjson`): the incidents of each unit of hosts as it
//!   is analysed (`"scope": "host"`), then those of the fleet rules
//!   (`"scope": "fleet"`), `schema_version` [`STREAM_SCHEMA_VERSION`]. The
//!   findings are those of the whole report; only their grouping differs
//!   where a fleet finding would have joined a host's incident.

use super::{Report, SCHEMA_VERSION};
use crate::rules::Finding;
use serde_json::{json, Value};

/// The `schema_version` of streamed lines ([`write_part`]): 4, the report's
/// shape ([`SCHEMA_VERSION`] 3) with incidents grouped per unit of hosts
/// and per fleet step, in that order, each line carrying its `scope`.
pub const STREAM_SCHEMA_VERSION: u32 = 4;

/// Which part of a streamed report a line belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The findings of one unit of hosts (a host's files), printed when the
    /// unit is analysed.
    Host,
    /// The findings of the fleet rules, printed after every unit.
    Fleet,
}

impl Scope {
    fn name(self) -> &'static str {
        match self {
            Self::Host => "host",
            Self::Fleet => "fleet",
        }
    }
}

/// Writes `findings` (settled: worst first, fingerprinted, as
/// [`crate::analyze::settle_unit_findings`] and
/// [`crate::analyze::Analysis::finish_printed`] give them) as the lines of
/// a streamed report: one incident per line, grouped among these findings
/// only, worst first, with `schema_version` [`STREAM_SCHEMA_VERSION`] and
/// `scope`.
///
/// ```
/// use fabricscope::report::ndjson::{write_part, Scope};
/// let paste = "$ ibstat\nCA 'mlx5_0'\n\tCA type: MT4123\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Polling\n\t\tLink layer: InfiniBand\n";
/// let doc = fabricscope::read(paste, &Default::default()).unwrap();
/// let mut unit = fabricscope::analyze::analyze_unit(&[doc], &[], &Default::default());
/// fabricscope::analyze::settle_unit_findings(&mut unit.findings);
/// let mut out = Vec::new();
/// write_part(&unit.findings, Scope::Host, &mut out).unwrap();
/// let line: serde_json::Value = serde_json::from_slice(&out).unwrap();
/// assert_eq!((line["scope"].as_str(), line["rule"].as_str()), (Some("host"), Some("IB001")));
/// assert_eq!(line["schema_version"], 4);
/// ```
///
/// # Errors
/// The writer's.
pub fn write_part(
    findings: &[Finding],
    scope: Scope,
    w: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    for incident in super::incident::group(findings) {
        let members: Vec<&Finding> = incident.members(findings).collect();
        let mut v = serde_json::to_value(&incident).unwrap_or(Value::Null);
        if let Some(m) = v.as_object_mut() {
            m.insert("schema_version".into(), json!(STREAM_SCHEMA_VERSION));
            m.insert("scope".into(), json!(scope.name()));
            m.insert("findings".into(), json!(members));
        }
        serde_json::to_writer(&mut *w, &v)?;
        w.write_all(b"\n")?;
    }
    Ok(())
}

/// One incident as a standalone JSON value.
#[must_use]
pub fn incident_value(report: &Report, incident: &super::Incident) -> Value {
    let findings: Vec<&crate::rules::Finding> = incident.members(&report.findings).collect();
    let mut v = serde_json::to_value(incident).unwrap_or(Value::Null);
    if let Some(m) = v.as_object_mut() {
        m.insert("schema_version".into(), json!(SCHEMA_VERSION));
        m.insert("findings".into(), json!(findings));
    }
    v
}

/// Each incident as one line of JSON, worst first; empty when nothing was found.
///
/// ```
/// use fabricscope::report::ndjson;
/// let paste = "$ ibstat\nCA 'mlx5_0'\n\tCA type: MT4123\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Polling\n\t\tLink layer: InfiniBand\n";
/// let doc = fabricscope::read(paste, &Default::default()).unwrap();
/// let report = fabricscope::analyze(&[doc], &Default::default());
/// let lines = ndjson::render(&report);
/// assert_eq!(lines.lines().count(), report.incidents.len());
/// let first: serde_json::Value = serde_json::from_str(lines.lines().next().unwrap()).unwrap();
/// assert_eq!(first["findings"][0]["rule"], "IB001");
/// ```
#[must_use]
pub fn render(report: &Report) -> String {
    let mut out = Vec::new();
    match write(report, &mut out) {
        Ok(()) => String::from_utf8(out).unwrap_or_default(),
        Err(_) => String::new(),
    }
}

/// Writes the lines of [`render`] one incident at a time, so a fleet's
/// report is never held as one string.
///
/// # Errors
/// The writer's.
pub fn write(report: &Report, w: &mut dyn std::io::Write) -> std::io::Result<()> {
    for i in &report.incidents {
        serde_json::to_writer(&mut *w, &incident_value(report, i))?;
        w.write_all(b"\n")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::{analyze, AnalyzeOptions};

    #[test]
    fn one_parsable_finding_per_line() {
        let text = "CA 'mlx5_0'\n\tCA type: MT4129\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Polling\n\t\tLink layer: InfiniBand\nCA 'mlx5_1'\n\tCA type: MT4129\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Disabled\n\t\tLink layer: InfiniBand\n";
        let doc = crate::input::read_all(text, &crate::ReadOptions::default()).unwrap();
        let report = analyze(&[doc], &AnalyzeOptions::default());
        let out = render(&report);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2);
        for l in lines {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert_eq!(v["rule"], "IB001");
            assert_eq!(v["schema_version"], SCHEMA_VERSION);
            assert_eq!(v["findings"][0]["rule"], "IB001");
        }
    }
}
