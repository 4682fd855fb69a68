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
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "fabricscope",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": RULES.iter().map(|r| rule_descriptor(r)).collect::<Vec<_>>(),
            }},
            "results": report
                .incidents
                .iter()
                .filter_map(|i| incident_result(report, i))
                .collect::<Vec<_>>(),
            "properties": {
                "verdict": report.verdict,
                "summary": report.summary,
                "schema_version": super::SCHEMA_VERSION,
            },
        }],
    })
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
    serde_json::to_string_pretty(&to_value(report)).unwrap_or_default()
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
}
