//! `fabricscope analyze`: read dumps, run the rules, print the report.
//!
//! Inputs are read and parsed in parallel (rayon); the rules then run over
//! all documents together so fleet rules can compare hosts. Unreadable,
//! binary or unrecognised files are listed as skipped, not fatal.

use crate::inputs::{list, Source};
use crate::parse_cmd::read_input;
use clap::ValueEnum;
use fabricscope::report::{self, NamedDocument, SkippedInput};
use fabricscope::rules::{Severity, Thresholds};
use fabricscope::{AnalyzeOptions, Document};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

/// Below this many files a progress bar is noise.
const PROGRESS_MIN_FILES: usize = 32;

/// Arguments of `fabricscope analyze`.
#[derive(clap::Args)]
pub struct AnalyzeArgs {
    /// Files or directories of dumps (a directory's subdirectory names become
    /// hosts); `-` or nothing reads standard input.
    paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    format: ReportFormat,
    /// Exit with 1 when a finding is at or above this severity.
    #[arg(long, value_enum, default_value_t = FailOn::Warning)]
    fail_on: FailOn,
    /// An infiniband-diags `error_thresholds` file (`Name=value` lines) that
    /// overrides the default counter limits.
    #[arg(long, value_name = "FILE")]
    thresholds: Option<PathBuf>,
    /// Time between two snapshots in the input when it does not say
    /// (`30s`, `5m`, `500ms`, or seconds).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    interval: Option<f64>,
    /// Rule ids not to run (comma-separated or repeated).
    #[arg(long, value_delimiter = ',', value_name = "ID")]
    ignore: Vec<String>,
    /// One line per finding in text output, without evidence and remediation.
    #[arg(long)]
    brief: bool,
}

/// How to print the report.
#[derive(Clone, Copy, ValueEnum)]
enum ReportFormat {
    /// For people: verdict, then findings by host.
    Text,
    /// One JSON document with findings, summary and the parsed input.
    Json,
    /// One JSON finding per line.
    Ndjson,
    /// SARIF 2.1.0 for code-scanning tools.
    Sarif,
}

/// The severity that makes the exit status 1.
#[derive(Clone, Copy, ValueEnum)]
enum FailOn {
    Info,
    Warning,
    Error,
    Critical,
    /// Always exit 0 when the input could be read.
    Never,
}

/// `30s`, `1.5m`, `500ms`, `2h`, or a bare number of seconds: the library's
/// one duration grammar ([`fabricscope::stats::parse_interval`]), which the
/// web page uses too.
fn parse_duration(text: &str) -> Result<f64, String> {
    fabricscope::stats::parse_interval(text)
        .map_err(|_| format!("not a positive duration: {text:?} (try 30s, 5m, 500ms, 1h)"))
}

pub fn run(args: &AnalyzeArgs) -> Result<ExitCode, String> {
    let thresholds = match &args.thresholds {
        None => Thresholds::default(),
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            Thresholds::from_file(&text, &path.display().to_string()).map_err(|e| e.to_string())?
        }
    };
    for id in &args.ignore {
        if fabricscope::rules::by_id(id).is_none() {
            return Err(format!(
                "--ignore {id}: no such rule (see `fabricscope rules`)"
            ));
        }
    }
    let (names, docs, modified_unix, skipped) = read_all(list(&args.paths));
    let options = AnalyzeOptions {
        thresholds,
        interval_seconds: args.interval,
        ignore: args.ignore.clone(),
        modified_unix,
    };
    if docs.is_empty() {
        let reasons: Vec<String> = skipped
            .iter()
            .map(|s| format!("{}: {}", s.input, s.reason))
            .collect();
        return Err(format!("nothing to analyse\n  {}", reasons.join("\n  ")));
    }
    let mut report = fabricscope::analyze(&docs, &options);
    report.skipped_inputs = skipped;
    // The text report lists skipped inputs itself; machine formats keep
    // stdout clean and say it on stderr.
    if !matches!(args.format, ReportFormat::Text) {
        for s in &report.skipped_inputs {
            eprintln!("fabricscope: skipped {}: {}", s.input, s.reason);
        }
    }

    let named: Vec<NamedDocument<'_>> = names
        .iter()
        .zip(&docs)
        .map(|(input, document)| NamedDocument { input, document })
        .collect();
    let out = match args.format {
        ReportFormat::Text => {
            let color = std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
            report::text::render(
                &report,
                &report::text::TextOptions {
                    color,
                    verbose: !args.brief,
                    ..report::text::TextOptions::default()
                },
            )
        }
        ReportFormat::Json => report::json::render(&report, &named, true) + "\n",
        ReportFormat::Ndjson => report::ndjson::render(&report),
        ReportFormat::Sarif => report::sarif::render(&report) + "\n",
    };
    out!("{out}");
    let fail_on = match args.fail_on {
        FailOn::Info => Some(Severity::Info),
        FailOn::Warning => Some(Severity::Warning),
        FailOn::Error => Some(Severity::Error),
        FailOn::Critical => Some(Severity::Critical),
        FailOn::Never => None,
    };
    Ok(match fail_on {
        Some(level) if report.fails(level) => ExitCode::from(1),
        _ => ExitCode::SUCCESS,
    })
}

/// Reads and parses every input in parallel; inputs that give nothing are
/// returned as skipped with the reason.
fn read_all(sources: Vec<Source>) -> ReadResult {
    let progress =
        (sources.len() >= PROGRESS_MIN_FILES && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::new(sources.len() as u64);
            if let Ok(style) =
                ProgressStyle::with_template("{spinner} reading {pos}/{len} files {wide_bar} {eta}")
            {
                bar.set_style(style);
            }
            bar
        });
    let results: Vec<(String, Option<f64>, Result<Document, String>)> = sources
        .into_par_iter()
        .map(|source| {
            let input = source.read();
            let doc = read_input(&input).and_then(|d| {
                if d.sections.is_empty() {
                    Err(format!(
                        "no output of a supported tool found in {} line(s)",
                        d.line_count
                    ))
                } else {
                    Ok(d)
                }
            });
            if let Some(bar) = &progress {
                bar.inc(1);
            }
            (input.name, input.modified_unix, doc)
        })
        .collect();
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    let mut names = Vec::new();
    let mut documents = Vec::new();
    let mut times = Vec::new();
    let mut skipped = Vec::new();
    for (input, modified, result) in results {
        match result {
            Ok(doc) => {
                names.push(input);
                documents.push(doc);
                times.push(modified);
            }
            Err(reason) => skipped.push(SkippedInput { input, reason }),
        }
    }
    (names, documents, times, skipped)
}

/// Names, documents and file times of the inputs that were read, and the
/// inputs that were skipped.
type ReadResult = (
    Vec<String>,
    Vec<Document>,
    Vec<Option<f64>>,
    Vec<SkippedInput>,
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30s"), Ok(30.0));
        assert_eq!(parse_duration("5m"), Ok(300.0));
        assert_eq!(parse_duration("500ms"), Ok(0.5));
        assert_eq!(parse_duration("2"), Ok(2.0));
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("3 weeks").is_err());
    }
}
