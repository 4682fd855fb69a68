//! WebAssembly entry points for the page in `www/`. No logic lives here: each
//! function calls the library and returns JSON text, or throws a JS `Error`
//! with a message a person can act on.

use crate::analyze::{analyze as analyze_documents, AnalyzeOptions};
use crate::input::{read_all, Document, ReadOptions};
use crate::report::{html, json, NamedDocument, Report};
use serde::{Deserialize, Serialize};
use tsify_next::Tsify;
use wasm_bindgen::prelude::*;

/// Options the page may pass as JSON; unknown fields are ignored.
#[derive(Debug, Default, Deserialize, Tsify)]
#[serde(default)]
struct Options {
    /// Largest input accepted, in bytes.
    #[tsify(optional)]
    max_input_bytes: Option<usize>,
    /// Seconds between two snapshots, when the paste does not say.
    #[tsify(optional)]
    interval_seconds: Option<f64>,
    /// The same as people type it (`30s`, `2m`, `1h`, `45`); read by
    /// [`crate::stats::parse_interval`], the CLI's parser. Wins over
    /// `interval_seconds` when both are given.
    #[tsify(optional)]
    interval: Option<String>,
}

/// The TypeScript type of what `analyze` returns: the report with the
/// document it was made from (built by [`json::render`]; this struct only
/// declares its shape for the npm package's types).
#[derive(Serialize, Tsify)]
#[allow(dead_code)]
struct AnalysisReport {
    #[serde(flatten)]
    report: Report,
    document: Document,
}

impl Options {
    fn interval_seconds(&self) -> Result<Option<f64>, JsError> {
        match self.interval.as_deref().map(str::trim) {
            None | Some("") => Ok(self.interval_seconds),
            Some(text) => crate::stats::parse_interval(text)
                .map(Some)
                .map_err(|e| JsError::new(&format!("interval {text:?}: {e} (try 30s, 2m, 1h)"))),
        }
    }
}

/// The browser's default input limit: 16 MiB is far above a real paste and
/// keeps a tab's memory bounded.
const PAGE_MAX_INPUT_BYTES: usize = 16 << 20;

fn page_options(options_json: &str) -> Result<Options, JsError> {
    if options_json.trim().is_empty() {
        return Ok(Options::default());
    }
    serde_json::from_str(options_json).map_err(|e| JsError::new(&format!("bad options: {e}")))
}

fn read_options(page: &Options) -> ReadOptions {
    ReadOptions::default()
        .with_max_input_bytes(page.max_input_bytes.unwrap_or(PAGE_MAX_INPUT_BYTES))
}

/// Parses a paste and returns the document as JSON.
///
/// # Errors
/// Throws when the options are malformed or the input exceeds the size limit.
#[wasm_bindgen]
pub fn parse(text: &str, options_json: &str) -> Result<String, JsError> {
    let page = page_options(options_json)?;
    let doc = read_all(text, &read_options(&page)).map_err(|e| JsError::new(&e.to_string()))?;
    serde_json::to_string(&doc).map_err(|e| JsError::new(&e.to_string()))
}

/// Parses and diagnoses a paste; returns the report as JSON:
/// `{verdict, status, summary, findings, skipped_rules, …, document}`.
///
/// # Errors
/// Throws when the options are malformed or the input exceeds the size limit.
#[wasm_bindgen]
pub fn analyze(text: &str, options_json: &str) -> Result<String, JsError> {
    let (report, doc) = run(text, options_json)?;
    Ok(json::render(&report, &[named(&doc)], false))
}

/// Parses and diagnoses a paste; returns the report as one self-contained
/// HTML file (the same as `fabricscope analyze --format html`).
///
/// # Errors
/// Throws when the options are malformed or the input exceeds the size limit.
#[wasm_bindgen(js_name = analyzeHtml)]
pub fn analyze_html(text: &str, options_json: &str) -> Result<String, JsError> {
    let (report, doc) = run(text, options_json)?;
    Ok(html::render(&report, &[named(&doc)]))
}

fn run(text: &str, options_json: &str) -> Result<(Report, Document), JsError> {
    let page = page_options(options_json)?;
    let options = AnalyzeOptions::default().with_interval(page.interval_seconds()?);
    let doc = read_all(text, &read_options(&page)).map_err(|e| JsError::new(&e.to_string()))?;
    let report = analyze_documents(std::slice::from_ref(&doc), &options);
    Ok((report, doc))
}

fn named(document: &Document) -> NamedDocument<'_> {
    NamedDocument {
        input: "paste",
        document,
    }
}

/// Replaces hosts, GUIDs, UUIDs, serials and IPs consistently (see
/// [`crate::redact`]); returns JSON `{text, replacements: [{kind, original,
/// replacement}]}`.
#[wasm_bindgen]
#[must_use]
pub fn redact(text: &str) -> String {
    serde_json::to_string(&crate::redact::redact(text)).unwrap_or_default()
}

/// Reads a duration as people type it (`30s`, `2m`, `1h`, `500ms`, `45`) and
/// returns seconds: the CLI's `--interval` parser.
///
/// # Errors
/// Throws for anything else, and for zero or negative durations.
#[wasm_bindgen(js_name = parseInterval)]
pub fn parse_interval(text: &str) -> Result<f64, JsError> {
    crate::stats::parse_interval(text)
        .map_err(|e| JsError::new(&format!("interval {text:?}: {e} (try 30s, 2m, 1h)")))
}

/// The rule catalogue as JSON: `[{id, name, family, severity, summary, needs,
/// explanation}]`.
#[wasm_bindgen]
#[must_use]
pub fn rules() -> String {
    crate::rules::registry::catalogue_json().to_string()
}

/// The library version.
#[wasm_bindgen]
#[must_use]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_owned()
}
