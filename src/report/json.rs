//! The report as one JSON document: what `--format json` prints and what the
//! web page reads.
//!
//! Shape: `{schema_version, verdict, status, summary:{critical,error,warning,info},
//! findings, incidents, skipped_rules, rules_run, hosts, host_names,
//! sections, skipped_inputs?, measurements, document}` for
//! one input, or `documents: [{input, sections, unrecognised, warnings, …}]`
//! for several.

use super::{NamedDocument, Report};
use serde::Serialize;

/// A document with its input's name, as listed under `documents`.
#[derive(Serialize)]
struct Named<'a> {
    input: &'a str,
    #[serde(flatten)]
    document: &'a crate::input::Document,
}

/// The report and the documents it was made from, as one JSON value.
#[must_use]
pub fn to_value(report: &Report, documents: &[NamedDocument<'_>]) -> serde_json::Value {
    let mut value = serde_json::to_value(report).unwrap_or(serde_json::Value::Null);
    if let Some(map) = value.as_object_mut() {
        match documents {
            [one] => {
                map.insert(
                    "document".to_owned(),
                    serde_json::to_value(one.document).unwrap_or_default(),
                );
            }
            many => {
                let named: Vec<Named<'_>> = many
                    .iter()
                    .map(|d| Named {
                        input: d.input,
                        document: d.document,
                    })
                    .collect();
                map.insert(
                    "documents".to_owned(),
                    serde_json::to_value(named).unwrap_or_default(),
                );
            }
        }
    }
    value
}

/// The report as JSON text; `pretty` indents it for people.
#[must_use]
pub fn render(report: &Report, documents: &[NamedDocument<'_>], pretty: bool) -> String {
    let value = to_value(report, documents);
    let text = if pretty {
        serde_json::to_string_pretty(&value)
    } else {
        serde_json::to_string(&value)
    };
    text.unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::{analyze, AnalyzeOptions};

    #[test]
    fn json_has_the_fields_the_page_reads() {
        let text = "CA 'mlx5_0'\n\tCA type: MT4129\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Polling\n\t\tLink layer: InfiniBand\n";
        let doc = crate::input::read_all(text, &crate::ReadOptions::default()).unwrap();
        let report = analyze(std::slice::from_ref(&doc), &AnalyzeOptions::default());
        let v = to_value(
            &report,
            &[NamedDocument {
                input: "-",
                document: &doc,
            }],
        );
        assert_eq!(v["summary"]["critical"], 1);
        let f = &v["findings"][0];
        assert_eq!(f["rule"], "IB001");
        assert_eq!(f["severity"], "critical");
        assert_eq!(f["subject"]["device"], "mlx5_0");
        assert_eq!(f["subject"]["port"], 1);
        assert_eq!(f["evidence"][0]["first_line"], 3);
        assert_eq!(f["evidence"][0]["last_line"], 6);
        assert!(f["threshold"]["source"].as_str().unwrap().contains("NHC"));
        assert!(!f["remediation"].as_str().unwrap().is_empty());
        assert!(v["skipped_rules"][0]["reason"].is_string());
        assert_eq!(v["document"]["sections"][0]["kind"], "ibstat");
    }
}
