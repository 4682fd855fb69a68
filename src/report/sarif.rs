//! SARIF 2.1.0, for code-scanning dashboards (GitHub code scanning, IDEs).
//!
//! Rule metadata comes from the registry; each result points at the input
//! file and line span of its first piece of evidence, with the other pieces
//! as related locations. Standard input is named `stdin`.
//!
//! One result per incident: the headline finding is the result, the
//! supporting findings' evidence are further related locations and the
//! findings themselves are listed in its properties. The incident's
//! fingerprint is the result's `partialFingerprints`, so code-scanning
//! dashboards track it across runs.

use super::Report;
use crate::rules::{Evidence, Finding, Rule, Severity, RULES};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::{json, Value};

/// The SARIF level for a severity (SARIF has no "critical").
fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Info => "note",
        Severity::Warning => "warning",
        Severity::Error | Severity::Critical => "error",
    }
}

fn rule_descriptor(rule: &Rule) -> Value {
    json!({
        "id": rule.id,
        "name": rule.name,
        "shortDescription": { "text": rule.summary },
        "fullDescription": { "text": rule.summary },
        "help": { "text": rule.explanation(), "markdown": rule.explanation() },
        "defaultConfiguration": { "level": level(rule.severity) },
        "properties": { "tags": [rule.family.title()], "needs": rule.needs },
    })
}

fn location(e: &Evidence) -> Value {
    json!({
        "physicalLocation": {
            "artifactLocation": { "uri": e.source.as_deref().unwrap_or("stdin") },
            "region": { "startLine": e.span.first_line, "endLine": e.span.last_line },
        },
        "message": { "text": e.text },
    })
}

fn incident_result(report: &Report, incident: &super::Incident) -> Option<Value> {
    let mut members = incident.members(&report.findings);
    let head = members.next()?;
    let mut r = result(head);
    let support: Vec<&Finding> = members.collect();
    if let Some(m) = r.as_object_mut() {
        let mut related: Vec<Value> = m
            .get("relatedLocations")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for f in &support {
            for e in &f.evidence {
                let mut l = location(e);
                if let Some(o) = l.as_object_mut() {
                    o.insert("id".to_owned(), json!(related.len() + 1));
                }
                related.push(l);
            }
        }
        if !related.is_empty() {
            m.insert("relatedLocations".to_owned(), Value::Array(related));
        }
        m.insert(
            "partialFingerprints".to_owned(),
            json!({ "fabricscopeIncident/v1": incident.fingerprint }),
        );
        if let Some(props) = m.get_mut("properties").and_then(Value::as_object_mut) {
            props.insert("incident".to_owned(), json!(incident));
            props.insert("supporting".to_owned(), json!(support));
        }
    }
    Some(r)
}

fn result(f: &Finding) -> Value {
    let index = RULES.iter().position(|r| r.id == f.rule);
    let mut evidence = f.evidence.iter();
    let locations: Vec<Value> = evidence.next().map(location).into_iter().collect();
    let related: Vec<Value> = evidence
        .enumerate()
        .map(|(i, e)| {
            let mut l = location(e);
            if let Some(m) = l.as_object_mut() {
                m.insert("id".to_owned(), json!(i + 1));
            }
            l
        })
        .collect();
    let mut r = json!({
        "ruleId": f.rule,
        "level": level(f.severity),
        "message": { "text": format!("{} — {}", f.message, f.remediation) },
        "locations": locations,
        "properties": {
            "severity": f.severity,
            "subject": f.subject,
            "threshold": f.threshold,
            "remediation": f.remediation,
        },
    });
    if let Some(m) = r.as_object_mut() {
        if let Some(i) = index {
            m.insert("ruleIndex".to_owned(), json!(i));
        }
        if !related.is_empty() {
            m.insert("relatedLocations".to_owned(), Value::Array(related));
        }
    }
    r
}

/// The report as a SARIF 2.1.0 log with one run.
#[must_use]
pub fn to_value(report: &Report) -> Value {
    serde_json::to_value(Log(report)).unwrap_or(Value::Null)
}

/// The SARIF log as indented JSON text.
///
/// ```
/// use fabricscope::report::sarif;
/// let paste = "$ ibstat\nCA 'mlx5_0'\n\tCA type: MT4123\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Polling\n\t\tLink layer: InfiniBand\n";
/// let doc = fabricscope::read(paste, &Default::default()).unwrap();
/// let report = fabricscope::analyze(&[doc], &Default::default());
/// let log: serde_json::Value = serde_json::from_str(&sarif::render(&report)).unwrap();
/// assert_eq!(log["version"], "2.1.0");
/// assert_eq!(log["runs"][0]["results"][0]["ruleId"], "IB001");
/// ```
#[must_use]
pub fn render(report: &Report) -> String {
    let mut out = Vec::new();
    match write(report, &mut out) {
        Ok(()) => String::from_utf8(out).unwrap_or_default(),
        Err(_) => String::new(),
    }
}

/// Writes the SARIF log as indented JSON, the same text as [`render`], one
/// result at a time: a fleet's log (hundreds of megabytes at thousands of
/// hosts) is never held as one JSON tree or one string.
///
/// # Errors
/// The writer's.
pub fn write(report: &Report, w: &mut dyn std::io::Write) -> std::io::Result<()> {
    let mut ser = serde_json::Serializer::pretty(w);
    Log(report)
        .serialize(&mut ser)
        .map_err(std::io::Error::from)
}

/// The log, with its results serialised as they are made. Keys are written
/// sorted, as a `serde_json` map orders them, so the streamed text and the
/// text of [`to_value`]'s tree are the same.
struct Log<'a>(&'a Report);

/// The run's results, one incident at a time.
struct Results<'a>(&'a Report);

/// The single run of the log.
struct Run<'a>(&'a Report);

impl Serialize for Log<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(3))?;
        m.serialize_entry("$schema", "https://json.schemastore.org/sarif-2.1.0.json")?;
        m.serialize_entry("runs", &[Run(self.0)])?;
        m.serialize_entry("version", "2.1.0")?;
        m.end()
    }
}

impl Serialize for Run<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let report = self.0;
        let mut m = s.serialize_map(Some(3))?;
        m.serialize_entry(
            "properties",
            &json!({
                "verdict": report.verdict,
                "summary": report.summary,
                "schema_version": super::SCHEMA_VERSION,
            }),
        )?;
        m.serialize_entry("results", &Results(report))?;
        m.serialize_entry(
            "tool",
            &json!({ "driver": {
                "name": "fabricscope",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": RULES.iter().map(|r| rule_descriptor(r)).collect::<Vec<_>>(),
            }}),
        )?;
        m.end()
    }
}

impl Serialize for Results<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let report = self.0;
        let mut seq = s.serialize_seq(None)?;
        for i in &report.incidents {
            if let Some(r) = incident_result(report, i) {
                seq.serialize_element(&r)?;
            }
        }
        seq.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::{analyze, AnalyzeOptions};

    #[test]
    fn results_point_at_rules_and_input_lines() {
        let text = "CA 'mlx5_0'\n\tCA type: MT4129\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Polling\n\t\tLink layer: InfiniBand\n";
        let mut doc = crate::input::read_all(text, &crate::ReadOptions::default()).unwrap();
        doc.sections[0].source = Some("dumps/n1/ibstat.txt".into());
        let report = analyze(&[doc], &AnalyzeOptions::default());
        let v = to_value(&report);
        assert_eq!(v["version"], "2.1.0");
        let run = &v["runs"][0];
        let r = &run["results"][0];
        assert_eq!(r["ruleId"], "IB001");
        assert_eq!(r["level"], "error");
        let idx = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(run["tool"]["driver"]["rules"][idx]["id"], "IB001");
        let loc = &r["locations"][0]["physicalLocation"];
        assert_eq!(loc["artifactLocation"]["uri"], "dumps/n1/ibstat.txt");
        assert_eq!(loc["region"]["startLine"], 3);
        assert_eq!(loc["region"]["endLine"], 6);
    }

    #[test]
    fn streamed_log_is_the_text_of_the_tree() {
        let text = "n1: CA 'mlx5_0'\nn1: \tCA type: MT4129\nn1: \tPort 1:\nn1: \t\tState: Down\nn1: \t\tPhysical state: Polling\nn1: \t\tLink layer: InfiniBand\nn2: CA 'mlx5_0'\nn2: \tCA type: MT4129\nn2: \tPort 1:\nn2: \t\tState: Active\nn2: \t\tPhysical state: LinkUp\nn2: \t\tRate: 100\nn2: \t\tBase lid: 0\nn2: \t\tSM lid: 0\nn2: \t\tLink layer: InfiniBand\n";
        let doc = crate::input::read_all(text, &crate::ReadOptions::default()).unwrap();
        let report = analyze(&[doc], &AnalyzeOptions::default());
        assert!(report.incidents.len() >= 2, "{report:#?}");
        let tree = serde_json::to_string_pretty(&to_value(&report)).unwrap();
        assert_eq!(render(&report), tree);
    }
}
