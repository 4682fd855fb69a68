//! `fabricscope analyze`: read dumps, run the rules, print the report.
//!
//! Inputs are read and parsed in parallel (rayon); the rules then run over
//! all documents together so fleet rules can compare hosts. Unreadable,
//! binary or unrecognised files are listed as skipped, not fatal.

use crate::inputs::{list, InputOptions, Listing, Problem, Source};
use crate::naming::HostFrom;
use crate::parse_cmd::read_input;
use clap::ValueEnum;
use fabricscope::report::diff::Snapshot;
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
    /// Files, directories of dumps or archives of them (.tar, .tar.gz, .tgz,
    /// .gz, .zip, sosreports); `-` or nothing reads standard input. Hosts are
    /// named from the text, then the path (see --host-from).
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
    /// One line per finding in text output, without evidence and
    /// remediation; lines cut at 120 characters.
    #[arg(long)]
    brief: bool,
    /// Put the parsed input (every section of every file) in the JSON report.
    /// Off by default: on a fleet it is many times the size of the findings;
    /// `fabricscope parse` prints it too.
    #[arg(long)]
    include_sections: bool,
    /// Text output: the verdict and the fleet summary only (lines cut at 120
    /// characters).
    #[arg(long, short)]
    quiet: bool,
    /// Text output: name the healthy hosts in the fleet summary.
    #[arg(long, short)]
    verbose: bool,
    /// Colour in text output: `auto` (on a terminal, unless NO_COLOR is set),
    /// `always` or `never`.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    color: ColorChoice,
    /// Write the report to FILE instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
    /// A JSON report of an earlier run (`--format json`): show only
    /// incidents that are new since then or got worse.
    #[arg(long, value_name = "OLD.json")]
    baseline: Option<PathBuf>,
    /// Go on when a path named on the command line cannot be read (it is
    /// still listed on stderr) instead of exiting with status 2.
    #[arg(long)]
    keep_going: bool,
    /// Read hidden and version-control directories too.
    #[arg(long)]
    hidden: bool,
    /// How to name hosts when the text does not: `auto` (file name when it
    /// differs between the files of a directory, else the directory), `dir`,
    /// `stem` or `regex:<expression>` (its first group, over the path below
    /// the directory given).
    #[arg(long, value_name = "RULE", default_value = "auto", value_parser = HostFrom::parse)]
    host_from: HostFrom,
    /// Print which host each input was given to, and why, then stop.
    #[arg(long)]
    list_hosts: bool,
    /// Replace host names, GUIDs, UUIDs, serial numbers and IP addresses
    /// consistently in the output (for sharing).
    #[arg(long)]
    redact: bool,
}

/// How to print the report.
#[derive(Clone, Copy, ValueEnum)]
enum ReportFormat {
    /// For people: verdict, then findings by host.
    Text,
    /// One JSON document with findings, summary and measurements (the
    /// parsed input too with `--include-sections`).
    Json,
    /// One JSON finding per line.
    Ndjson,
    /// SARIF 2.1.0 for code-scanning tools.
    Sarif,
    /// One row per incident, for spreadsheets.
    Csv,
    /// Summary and incidents as Markdown tables, for tickets.
    Markdown,
    /// One self-contained HTML file for a ticket.
    Html,
}

/// When to colour text output.
#[derive(Clone, Copy, ValueEnum)]
pub enum ColorChoice {
    /// On a terminal, unless NO_COLOR is set.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
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
    let listing = list(
        &args.paths,
        &InputOptions {
            hidden: args.hidden,
            host_from: args.host_from.clone(),
        },
    );
    for note in &listing.notes {
        eprintln!("fabricscope: {note}");
    }
    if args.list_hosts {
        return Ok(list_hosts(listing));
    }
    let named_failures = report_problems(&listing.problems);
    let (names, docs, modified_unix, mut skipped, failed) = read_all(listing.sources);
    skipped.extend(
        listing
            .problems
            .iter()
            .filter(|p| !p.named)
            .map(|p| SkippedInput {
                input: p.input.clone(),
                reason: p.reason.clone(),
            }),
    );
    let named_failures = named_failures + failed;
    let options = AnalyzeOptions::default()
        .with_thresholds(thresholds)
        .with_interval(args.interval)
        .ignore_all(args.ignore.iter().cloned())
        .with_modified_unix(modified_unix);
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

    let named: Vec<NamedDocument<'_>> = if args.include_sections {
        names
            .iter()
            .zip(&docs)
            .map(|(input, document)| NamedDocument { input, document })
            .collect()
    } else {
        Vec::new()
    };
    if let Some(path) = &args.baseline {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("--baseline {}: {e}", path.display()))?;
        let old = Snapshot::from_json(&text)
            .map_err(|e| format!("--baseline {}: {e}", path.display()))?;
        report = report::diff::only_new(&report, &old);
    }
    let width = (args.brief || args.quiet).then_some(120);
    let out = match args.format {
        ReportFormat::Text => {
            let color = match args.color {
                ColorChoice::Always => true,
                ColorChoice::Never => false,
                ColorChoice::Auto => {
                    args.output.is_none()
                        && std::io::stdout().is_terminal()
                        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                }
            };
            report::text::render(
                &report,
                &report::text::TextOptions::default()
                    .with_color(color)
                    .with_verbose(!args.brief)
                    .with_list_healthy(args.verbose)
                    .with_summary_only(args.quiet)
                    .with_max_width(width),
            )
        }
        // Redaction works on the rendered text, so a redacted report is
        // rendered whole first; otherwise it streams straight out.
        ReportFormat::Json if args.redact => report::json::render(&report, &named, true) + "\n",
        ReportFormat::Json => {
            write_json(&report, &named, args.output.as_deref())?;
            return Ok(exit_code(
                &report,
                args.fail_on,
                named_failures,
                args.keep_going,
            ));
        }
        ReportFormat::Ndjson => report::ndjson::render(&report),
        ReportFormat::Sarif => report::sarif::render(&report) + "\n",
        ReportFormat::Csv => report::csv::render(&report),
        ReportFormat::Markdown => report::markdown::render(&report),
        ReportFormat::Html => report::html::render(&report, &named),
    };
    let out = if args.redact {
        redact_output(&out, &docs)
    } else {
        out
    };
    write_output(args.output.as_deref(), &out)?;
    Ok(exit_code(
        &report,
        args.fail_on,
        named_failures,
        args.keep_going,
    ))
}

/// 2 when a path named on the command line could not be read (unless
/// `--keep-going`), 1 when a finding reaches `--fail-on`, else 0.
fn exit_code(
    report: &fabricscope::Report,
    fail_on: FailOn,
    named_failures: usize,
    keep_going: bool,
) -> ExitCode {
    let level = match fail_on {
        FailOn::Info => Some(Severity::Info),
        FailOn::Warning => Some(Severity::Warning),
        FailOn::Error => Some(Severity::Error),
        FailOn::Critical => Some(Severity::Critical),
        FailOn::Never => None,
    };
    match level {
        _ if named_failures > 0 && !keep_going => ExitCode::from(2),
        Some(level) if report.fails(level) => ExitCode::from(1),
        _ => ExitCode::SUCCESS,
    }
}

/// The JSON report, written to stdout (or `path`) as it is serialised: a
/// fleet's report is hundreds of megabytes, no copy of it is built in memory.
fn write_json(
    report: &fabricscope::Report,
    named: &[NamedDocument<'_>],
    path: Option<&std::path::Path>,
) -> Result<(), String> {
    use std::io::Write;
    fn emit(
        report: &fabricscope::Report,
        named: &[NamedDocument<'_>],
        w: impl Write,
    ) -> std::io::Result<()> {
        let mut w = std::io::BufWriter::with_capacity(1 << 16, w);
        report::json::write(report, named, true, &mut w)?;
        w.write_all(b"\n")?;
        w.flush()
    }
    match path {
        Some(p) => std::fs::File::create(p)
            .and_then(|file| emit(report, named, file))
            .map_err(|e| format!("cannot write {}: {e}", p.display())),
        None => match emit(report, named, std::io::stdout().lock()) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
            Err(e) => {
                eprintln!("fabricscope: cannot write output: {e}");
                std::process::exit(2);
            }
            Ok(()) => Ok(()),
        },
    }
}

/// `--redact`: the analysis runs on the real input (hosts stay apart), and
/// what is printed has every identifier replaced.
/// File names need nothing extra: a file's host is its sections' host.
fn redact_output(out: &str, docs: &[Document]) -> String {
    let mut redactor = fabricscope::redact::Redactor::default();
    let hosts = docs.iter().flat_map(|d| {
        d.sections
            .iter()
            .filter_map(|s| s.host.clone())
            .chain(d.unrecognised.iter().filter_map(|u| u.host.clone()))
    });
    redactor.add_hosts(hosts);
    redactor.redact(out)
}

/// Prints `text` to standard output, or writes it to `path`.
pub fn write_output(path: Option<&std::path::Path>, text: &str) -> Result<(), String> {
    match path {
        None => {
            out!("{text}");
            Ok(())
        }
        Some(p) => {
            std::fs::write(p, text).map_err(|e| format!("cannot write {}: {e}", p.display()))
        }
    }
}

/// Says on stderr what could not be read; returns how many of those paths
/// were named on the command line (each makes the exit status 2 unless
/// `--keep-going`).
fn report_problems(problems: &[Problem]) -> usize {
    for p in problems {
        eprintln!("fabricscope: {}: {}", p.input, p.reason);
    }
    problems.iter().filter(|p| p.named).count()
}

/// `--list-hosts`: each input, the host it is read as, and why; hosts the
/// text names (prompts, pdsh prefixes) are read from the parsed sections.
fn list_hosts(listing: Listing) -> ExitCode {
    report_problems(&listing.problems);
    let inputs: Vec<crate::inputs::Input> =
        listing.sources.into_iter().flat_map(Source::read).collect();
    let mut rows: Vec<(String, String, String)> = Vec::new();
    for input in &inputs {
        let (host, why) = match read_input(input) {
            Err(e) => ("-".to_owned(), format!("not read: {e}")),
            Ok(doc) => {
                let mut hosts: Vec<&str> = doc
                    .sections
                    .iter()
                    .filter_map(|s| s.host.as_deref())
                    .collect();
                hosts.sort_unstable();
                hosts.dedup();
                let from_text = hosts.iter().any(|h| Some(*h) != input.host.as_deref());
                match (hosts.as_slice(), from_text) {
                    _ if doc.sections.is_empty() => {
                        ("-".to_owned(), "no output of a supported tool".to_owned())
                    }
                    ([], _) => (
                        "(none)".to_owned(),
                        "no host in the text or the path".to_owned(),
                    ),
                    (_, true) => (
                        hosts.join(","),
                        "named in the text (prompt, pdsh prefix or file header)".to_owned(),
                    ),
                    (_, false) => (hosts.join(","), input.host_why.clone()),
                }
            }
        };
        rows.push((input.name.clone(), host, why));
    }
    let width = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
    let host_width = rows.iter().map(|r| r.1.chars().count()).max().unwrap_or(0);
    for (file, host, why) in &rows {
        outln!("{file:<width$}  {host:<host_width$}  {why}");
    }
    let mut distinct: Vec<&str> = rows
        .iter()
        .flat_map(|r| r.1.split(','))
        .filter(|h| *h != "-" && *h != "(none)")
        .collect();
    distinct.sort_unstable();
    distinct.dedup();
    eprintln!(
        "fabricscope: {} input(s), {} host(s)",
        rows.len(),
        distinct.len()
    );
    ExitCode::SUCCESS
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
    let results: Vec<ReadOne> = sources
        .into_par_iter()
        .flat_map_iter(Source::read)
        .map(|input| {
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
            // A file that could not be read at all is said on stderr even in
            // text output; one that holds no tool output is only listed.
            if let (Err(reason), true) = (&doc, input.bytes.is_err()) {
                eprintln!("fabricscope: {}: {reason}", input.name);
            }
            let named_failure = input.named && input.bytes.is_err();
            (input.name, input.modified_unix, named_failure, doc)
        })
        .collect();
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    let mut names = Vec::new();
    let mut documents = Vec::new();
    let mut times = Vec::new();
    let mut skipped = Vec::new();
    let mut named_failures = 0;
    for (input, modified, named_failure, result) in results {
        named_failures += usize::from(named_failure);
        match result {
            Ok(doc) => {
                names.push(input);
                documents.push(doc);
                times.push(modified);
            }
            Err(reason) => skipped.push(SkippedInput { input, reason }),
        }
    }
    (names, documents, times, skipped, named_failures)
}

/// One input after reading: its name, file time, whether it was a named
/// path that could not be read, and its document or why there is none.
type ReadOne = (String, Option<f64>, bool, Result<Document, String>);

/// Names, documents and file times of the inputs that were read, and the
/// inputs that were skipped, and how many named inputs could not be read.
type ReadResult = (
    Vec<String>,
    Vec<Document>,
    Vec<Option<f64>>,
    Vec<SkippedInput>,
    usize,
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
