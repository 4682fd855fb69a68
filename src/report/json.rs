//! The report as one JSON document: what `--format json` prints and what the
//! web page reads.
//!
//! Shape: `{schema_version, verdict, status, summary:{critical,error,warning,info},
//! findings, incidents, skipped_rules, rules_run, hosts, host_names,
//! sections, skipped_inputs?, measurements}`, plus the parsed input when
//! asked for: `document` for one input, or `documents: [{input, sections,
//! unrecognised, warnings, …}]` for several. A fleet's parsed input is many
//! times the size of its findings, so batch runs leave it out unless
//! `--include-sections` asks (`fabricscope parse` prints it too).
//!
//! The report is serialised straight to text or to a writer, never through
//! an intermediate `serde_json::Value` (which cost ~10× the text in memory).

use super::{NamedDocument, Report};
use serde::Serialize;

/// A document with its input's name, as listed under `documents`.
#[derive(Serialize)]
struct Named<'a> {
    input: &'a str,
    #[serde(flatten)]
    document: &'a crate::input::Document,
}

/// The report with (or without) the documents it was made from.
#[derive(Serialize)]
struct Out<'a> {
    #[serde(flatten)]
    report: &'a Report,
    #[serde(skip_serializing_if = "Option::is_none")]
    document: Option<&'a crate::input::Document>,
    #[serde(skip_serializing_if = "Option::is_none")]
    documents: Option<Vec<Named<'a>>>,
}

impl<'a> Out<'a> {
    /// No documents: no `document(s)` key. One: `document`. Several: `documents`.
    fn new(report: &'a Report, documents: &[NamedDocument<'a>]) -> Self {
        let (document, documents) = match documents {
            [] => (None, None),
            [one] => (Some(one.document), None),
            many => (
                None,
                Some(
                    many.iter()
                        .map(|d| Named {
                            input: d.input,
                            document: d.document,
                        })
                        .collect(),
                ),
            ),
        };
        Self {
            report,
            document,
            documents,
        }
    }
}

/// The report and the documents it was made from (none: the report alone),
/// as one JSON value.
#[must_use]
pub fn to_value(report: &Report, documents: &[NamedDocument<'_>]) -> serde_json::Value {
    serde_json::to_value(Out::new(report, documents)).unwrap_or(serde_json::Value::Null)
}

/// The report as JSON text; `pretty` indents it for people. Pass no
/// documents to leave the parsed input out.
///
/// ```
/// use fabricscope::report::json;
/// let paste = "$ ibstat\nCA 'mlx5_0'\n\tCA type: MT4123\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Polling\n\t\tLink layer: InfiniBand\n";
/// let doc = fabricscope::read(paste, &Default::default()).unwrap();
/// let report = fabricscope::analyze(&[doc], &Default::default());
/// let json: serde_json::Value = serde_json::from_str(&json::render(&report, &[], false)).unwrap();
/// assert_eq!(json["findings"][0]["rule"], "IB001");
/// assert_eq!(json["incidents"].as_array().map(Vec::len), Some(report.incidents.len()));
/// ```
#[must_use]
pub fn render(report: &Report, documents: &[NamedDocument<'_>], pretty: bool) -> String {
    let out = Out::new(report, documents);
    let text = if pretty {
        serde_json::to_string_pretty(&out)
    } else {
        serde_json::to_string(&out)
    };
    text.unwrap_or_default()
}

/// Writes the report as JSON to `writer` without building the text in
/// memory first (batch reports of thousands of hosts).
///
/// # Errors
/// The writer's errors.
pub fn write(
    report: &Report,
    documents: &[NamedDocument<'_>],
    pretty: bool,
    writer: impl std::io::Write,
) -> std::io::Result<()> {
    let out = Out::new(report, documents);
    let result = if pretty {
        serde_json::to_writer_pretty(writer, &out)
    } else {
        serde_json::to_writer(writer, &out)
    };
    result.map_err(std::io::Error::from)
}

/// The report's fields before `measurements`, in the order [`Report`]
/// serialises them: lets a batch run write measurements it kept on disk
/// ([`write_with_measurements`]) without holding them. A test checks that
/// it writes what [`write`] writes.
#[derive(Serialize)]
struct Head<'a, F: Serialize, I: Serialize> {
    schema_version: u32,
    verdict: &'a super::verdict::Verdict,
    status: Option<crate::rules::Severity>,
    summary: &'a super::Summary,
    findings: &'a F,
    incidents: &'a I,
    skipped_rules: &'a [crate::rules::SkippedRule],
    rules_run: usize,
    hosts: usize,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    host_names: &'a [String],
    sections: usize,
    #[serde(skip_serializing_if = "<[super::SkippedInput]>::is_empty")]
    skipped_inputs: &'a [super::SkippedInput],
}

/// The report with its measurements given separately.
#[derive(Serialize)]
struct HeadWith<'a, F: Serialize, I: Serialize, M: Serialize> {
    #[serde(flatten)]
    head: Head<'a, F, I>,
    measurements: &'a M,
    #[serde(skip_serializing_if = "Option::is_none")]
    document: Option<&'a crate::input::Document>,
    #[serde(skip_serializing_if = "Option::is_none")]
    documents: Option<Vec<Named<'a>>>,
}

/// Like [`write()`], with `measurements` written in place of the report's
/// own: anything that serialises as the report writes its measurements
/// ([`ReportMeasurements`](super::measurements::ReportMeasurements): counter
/// rates in rate sets) does (batch runs stream them back from disk).
///
/// # Errors
/// The writer's errors, and the measurements' own.
pub fn write_with_measurements<M: Serialize>(
    report: &Report,
    measurements: &M,
    documents: &[NamedDocument<'_>],
    pretty: bool,
    writer: impl std::io::Write,
) -> std::io::Result<()> {
    write_with(
        report,
        &report.findings,
        &report.incidents,
        measurements,
        documents,
        pretty,
        writer,
    )
}

/// Like [`write_with_measurements`], with the findings and incidents given
/// separately too: anything that serialises as the report's `findings` and
/// `incidents` does (batch runs read findings back from disk, the report
/// holding light copies, and complete the incidents' titles).
///
/// # Errors
/// The writer's errors, and the findings' and measurements' own.
pub fn write_with<F: Serialize, I: Serialize, M: Serialize>(
    report: &Report,
    findings: &F,
    incidents: &I,
    measurements: &M,
    documents: &[NamedDocument<'_>],
    pretty: bool,
    writer: impl std::io::Write,
) -> std::io::Result<()> {
    let out = Out::new(report, documents);
    let with = HeadWith {
        head: Head {
            schema_version: report.schema_version,
            verdict: &report.verdict,
            status: report.status,
            summary: &report.summary,
            findings,
            incidents,
            skipped_rules: &report.skipped_rules,
            rules_run: report.rules_run,
            hosts: report.hosts,
            host_names: &report.host_names,
            sections: report.sections,
            skipped_inputs: &report.skipped_inputs,
        },
        measurements,
        document: out.document,
        documents: out.documents,
    };
    let result = if pretty {
        serde_json::to_writer_pretty(writer, &with)
    } else {
        serde_json::to_writer(writer, &with)
    };
    result.map_err(std::io::Error::from)
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
        let bare = to_value(&report, &[]);
        assert_eq!(bare["findings"], v["findings"]);
        assert!(bare.get("document").is_none() && bare.get("documents").is_none());
        let mut written = Vec::new();
        write(&report, &[], false, &mut written).unwrap();
        let mut full = report.clone();
        full.host_names = vec!["h1".into()];
        full.skipped_inputs = vec![crate::report::SkippedInput {
            input: "x".into(),
            reason: "y".into(),
        }];
        for (pretty, report) in [(false, &report), (true, &report), (true, &full)] {
            let mut whole = Vec::new();
            write(report, &[], pretty, &mut whole).unwrap();
            let mut with = Vec::new();
            let measurements =
                crate::report::measurements::ReportMeasurements(&report.measurements);
            write_with_measurements(report, &measurements, &[], pretty, &mut with).unwrap();
            assert_eq!(
                String::from_utf8(with).unwrap(),
                String::from_utf8(whole).unwrap()
            );
        }
        assert_eq!(
            String::from_utf8(written).unwrap(),
            render(&report, &[], false)
        );
    }
}
