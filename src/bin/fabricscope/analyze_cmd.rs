//! `fabricscope analyze`: read dumps, run the rules, print the report.
//!
//! Batch runs stream: the inputs are grouped into units (the files of one
//! host directory; any other input alone), and units are read, parsed,
//! measured and judged on the pool's threads (rayon), a bounded number
//! ahead of the one being folded in order, by the pool thread that
//! finishes it ([`crate::ordered`]). Only each unit's compact result is
//! kept: its text and documents are dropped, and its measurements go to
//! temporary files ([`crate::spool`]) when the report is JSON. The fleet
//! rules then run over the results. Units whose documents turn out to name
//! the same host (pdsh pastes, prompts) are merged and read again together,
//! so a host's snapshots always pair.
//! Unreadable, binary or unrecognised files are listed as skipped, not fatal.

use crate::inputs::{list, InputOptions, Listing, Problem, Source};
use crate::naming::HostFrom;
use crate::ndjson_stream::{NdjsonOut, Safety, UnitLines};
use crate::output_file::OutputFile;
use crate::parse_cmd::read_input;
use crate::spool::{RenderedFindings, Spool, TempFile};
use clap::ValueEnum;
use fabricscope::analyze::records::{
    RecordLine, RecordsHeader, RECORDS_KIND, RECORDS_SCHEMA_VERSION,
};
use fabricscope::analyze::{analyze_unit, Analysis, UnitResult};
use fabricscope::report::diff::Snapshot;
use fabricscope::report::notable::Omitted;
use fabricscope::report::{self, NamedDocument, SkippedInput};
use fabricscope::rules::{Severity, Thresholds};
use fabricscope::{AnalyzeOptions, Document};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Below this many files a progress bar is noise.
const PROGRESS_MIN_FILES: usize = 32;

/// Units read ahead of the one being folded (per thread): bounds how many
/// hosts' results wait in memory to be folded in order.
const UNITS_AHEAD_PER_THREAD: usize = 8;

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
    /// (`30s`, `5m`, `500ms`, or seconds). Times the input prints win over
    /// it; it wins over the files' modification times.
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
    /// Which measurements the JSON report carries: `notable` (records that
    /// deviate: links below their host's best rate, bit error rates with
    /// errors, peer groups with outliers, rates of counters that moved;
    /// every throughput; what is left out is counted in a note) or `all`
    /// (every record: on a fleet
    /// most of the report, and mostly healthy links).
    #[arg(long, value_enum, default_value_t = MeasurementDetail::Notable, value_name = "WHICH")]
    measurements: MeasurementDetail,
    /// Text output: the verdict and the fleet summary only (lines cut at 120
    /// characters).
    #[arg(long, short)]
    quiet: bool,
    /// Text output: name every host in the fleet summary (the healthy ones,
    /// and all the hosts of a rule on more than eight).
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
    /// Write the per-host records of the inputs (NDJSON, see docs/json.md)
    /// instead of a report: one shard of a fleet analysed in slices (a
    /// Slurm job array). `fabricscope analyze SHARD.ndjson…` (or a
    /// directory of them) merges shards into the report of one run.
    #[arg(long, conflicts_with_all = ["include_sections", "baseline", "redact"])]
    emit_records: bool,
}

/// Which measurements the JSON report carries
/// ([`fabricscope::report::notable`]).
#[derive(Clone, Copy, ValueEnum)]
enum MeasurementDetail {
    /// The records that deviate, and a note counting the rest.
    Notable,
    /// Every record.
    All,
}

/// How to print the report.
#[derive(Clone, Copy, ValueEnum)]
enum ReportFormat {
    /// For people: verdict, then findings by host.
    Text,
    /// One JSON document with findings, summary and measurements (the
    /// parsed input too with `--include-sections`).
    Json,
    /// One JSON incident per line, streamed: each host's as it is
    /// analysed, then the fleet rules' (docs/report.md).
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
    // Opened before any input is read (see [`OutputFile`]); the host list
    // of `--list-hosts` is no report.
    let mut output = match &args.output {
        Some(path) if !args.list_hosts => Some(OutputFile::open(path)?),
        _ => None,
    };
    let input_options = InputOptions {
        hidden: args.hidden,
        host_from: args.host_from.clone(),
        exclude: output.as_ref().and_then(OutputFile::id),
    };
    // NDJSON streams as hosts finish, unless the whole report is needed
    // first (--baseline compares it; --include-sections reads every
    // document as one unit): those print the whole report's lines.
    let ndjson_streams = matches!(args.format, ReportFormat::Ndjson)
        && !args.include_sections
        && args.baseline.is_none();
    // These need every input listed before the first is read; any other
    // run reads the first hosts while the listing goes on ([`stream`]).
    let listed_first = args.list_hosts || args.include_sections || ndjson_streams;
    let mut listing = Listing::default();
    if listed_first {
        listing = list(&args.paths, &input_options);
        for note in &listing.notes {
            eprintln!("fabricscope: {note}");
        }
    }
    if args.list_hosts {
        return Ok(list_hosts(listing));
    }
    let named_failures = report_problems(&listing.problems);
    let options = AnalyzeOptions::default()
        .with_thresholds(thresholds)
        .with_interval(args.interval)
        .ignore_all(args.ignore.iter().cloned());
    let json = matches!(args.format, ReportFormat::Json);
    if args.emit_records {
        return emit_records(args, &input_options, &options, output.as_mut());
    }
    if ndjson_streams {
        return ndjson_streamed(args, listing, &options, named_failures, output.as_mut());
    }
    // --include-sections prints every document: they are held anyway, so
    // the documents are analysed as one unit, as before streaming.
    let (mut report, mut spool, docs, names, hosts, skipped, failed) = if args.include_sections {
        let (names, docs, modified_unix, skipped, failed) =
            read_all(std::mem::take(&mut listing.sources));
        let options = options.with_modified_unix(modified_unix);
        let report = (!docs.is_empty()).then(|| fabricscope::analyze(&docs, &options));
        let hosts = document_hosts(&docs);
        (report, None, docs, names, hosts, skipped, failed)
    } else {
        // Findings are stored on disk too, unless --baseline reorders them.
        let sink = if json {
            Sink::Json {
                store_findings: args.baseline.is_none(),
                notable: matches!(args.measurements, MeasurementDetail::Notable),
            }
        } else {
            Sink::Report
        };
        let walk = Inputs::Walk {
            paths: &args.paths,
            options: &input_options,
            listing: &mut listing,
        };
        let streamed = match stream(walk, &options, sink, None)? {
            Streaming::Done(streamed) => *streamed,
            Streaming::Shards(sources) => merge(&shard_paths(&sources)?, &options, sink, None)?,
        };
        // The walk's problems were said on stderr as it ended.
        let failed = named_count(&listing.problems) + streamed.named_failures;
        (
            streamed.report,
            streamed.spool,
            Vec::new(),
            Vec::new(),
            streamed.hosts,
            streamed.skipped,
            failed,
        )
    };
    let unread = unread_inputs(&listing.problems);
    let mut skipped = skipped;
    skipped.extend(unread);
    let named_failures = named_failures + failed;
    let Some(mut report) = report.take() else {
        let reasons: Vec<String> = skipped
            .iter()
            .map(|s| format!("{}: {}", s.input, s.reason))
            .collect();
        return Err(format!("nothing to analyse\n  {}", reasons.join("\n  ")));
    };
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
    if json && matches!(args.measurements, MeasurementDetail::Notable) {
        // The units' records were sifted as they were spooled; these are
        // the fleet step's (or, unspooled, the whole run's).
        let mut omitted = spool.as_ref().map_or_else(Default::default, |s| s.omitted);
        omitted.add(report::notable::keep_notable(&mut report.measurements));
        report.measurements.notes.extend(omitted.note());
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
        ReportFormat::Json if args.redact => {
            let mut text = Vec::new();
            emit_json(&report, spool.as_mut(), &named, &mut text)
                .map_err(|e| format!("cannot write the report: {e}"))?;
            String::from_utf8_lossy(&text).into_owned()
        }
        ReportFormat::Json => {
            write_json(&report, spool.as_mut(), &named, output.as_mut())?;
            let code = exit_code(&report, args.fail_on, named_failures, args.keep_going);
            // What is left of a fleet's run is let go of without freeing
            // it: the process ends now, and the system takes its memory
            // back whole. Freed, the report and the records held in memory
            // went back to the system page by page (`madvise`), about 3 ms
            // of the run's last step at a thousand hosts. The spool's files
            // are removed.
            std::mem::forget(report);
            if let Some(spool) = spool {
                spool.end_of_run();
            }
            return Ok(code);
        }
        ReportFormat::Ndjson | ReportFormat::Sarif if !args.redact => {
            let sarif = matches!(args.format, ReportFormat::Sarif);
            write_streamed(output.as_mut(), |w| {
                let w = w.writer();
                if sarif {
                    report::sarif::write(&report, w)?;
                    w.write_all(b"\n")
                } else {
                    report::ndjson::write(&report, w)
                }
            })?;
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
        redact_output(&out, hosts)
    } else {
        out
    };
    write_report_text(output.as_mut(), &out)?;
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
    status_exit_code(report.status, fail_on, named_failures, keep_going)
}

/// [`exit_code`] from the worst severity found.
fn status_exit_code(
    status: Option<Severity>,
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
        Some(level) if status.is_some_and(|worst| worst >= level) => ExitCode::from(1),
        _ => ExitCode::SUCCESS,
    }
}

/// The JSON report, written to stdout (or `path`) as it is serialised: a
/// fleet's report is hundreds of megabytes, no copy of it is built in memory.
fn write_json(
    report: &fabricscope::Report,
    spool: Option<&mut Spool>,
    named: &[NamedDocument<'_>],
    output: Option<&mut OutputFile>,
) -> Result<(), String> {
    write_streamed(output, |w| emit_json(report, spool, named, w))
}

/// Writes a report that `emit` produces piece by piece to `path` or stdout
/// (buffered), instead of building it as one string first. The writer is a
/// concrete buffered file or standard output, so that spooled measurements
/// go into it by the kernel ([`crate::spool::Output`]). A closed pipe ends
/// the program quietly.
fn write_streamed(
    output: Option<&mut OutputFile>,
    emit: impl FnOnce(&mut dyn crate::spool::Output) -> std::io::Result<()>,
) -> Result<(), String> {
    use std::io::{BufWriter, Write};
    match output {
        Some(out) => {
            let mut w = BufWriter::with_capacity(1 << 16, out.take_for_writing()?);
            emit(&mut w)
                .and_then(|()| w.flush())
                .map_err(|e| format!("cannot write {}: {e}", out.path().display()))
        }
        None => {
            let mut w = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
            match emit(&mut w).and_then(|()| w.flush()) {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
                Err(e) => {
                    eprintln!("fabricscope: cannot write output: {e}");
                    std::process::exit(2);
                }
                Ok(()) => Ok(()),
            }
        }
    }
}

/// The JSON report, with the spooled measurements (when the run spooled
/// them) in place of the report's own, and a final newline, to `w`
/// (buffered by the caller).
fn emit_json(
    report: &fabricscope::Report,
    spool: Option<&mut Spool>,
    named: &[NamedDocument<'_>],
    w: &mut dyn crate::spool::Output,
) -> std::io::Result<()> {
    match spool {
        Some(spool) => {
            spool.close()?;
            // Taken: read for the findings and incidents, then let go of
            // (its file removed) while the measurements are written.
            let stored_findings = spool.findings.take();
            let spooled = spool.measurements(&report.measurements);
            // The report is written with `null` for its measurements (its
            // last value: a spooled run has no documents), which is cut
            // off and replaced by the spooled records, copied as they are.
            const PLACEHOLDER: &[u8] = b"null\n}";
            let mut head = crate::spool::HoldBack::new(w.writer(), PLACEHOLDER.len());
            match stored_findings.as_ref() {
                Some(stored) => {
                    // The findings and incidents too: written as `null`,
                    // replaced by the stored findings' text and by the
                    // incidents written by hand (titles read back).
                    const FINDINGS: &[u8] = b"\n  \"findings\": null";
                    const INCIDENTS: &[u8] = b"\n  \"incidents\": null";
                    let ids = &spool.finding_ids;
                    let mut titles = stored.titles()?;
                    std::thread::scope(|scope| {
                        // The incidents are formatted, their titles read
                        // back, on a thread of their own while the head and
                        // the findings are written (the other core is idle
                        // at the end of a run).
                        let incidents_ahead = crate::spool::ahead(scope, move |w| {
                            crate::spool::write_incidents(&report.incidents, ids, &mut titles, w)
                        });
                        let mut findings = crate::spool::Splice::new(
                            &mut head,
                            FINDINGS,
                            FINDINGS.len() - b"null".len(),
                            |w| crate::spool::write_findings(&report.findings, ids, stored, w),
                        );
                        let mut incidents = crate::spool::Splice::new(
                            &mut findings,
                            INCIDENTS,
                            INCIDENTS.len() - b"null".len(),
                            |w| crate::spool::copy_ahead(incidents_ahead, w),
                        );
                        report::json::write_with(
                            report,
                            &(),
                            &(),
                            &(),
                            named,
                            true,
                            &mut incidents,
                        )?;
                        incidents.finish()?;
                        findings.finish()
                    })?;
                }
                None => {
                    report::json::write_with_measurements(report, &(), named, true, &mut head)?;
                }
            }
            if head.into_held()? != PLACEHOLDER {
                return Err(std::io::Error::other(
                    "the report's measurements are not its last value",
                ));
            }
            // Removing the spool's files frees their pages, milliseconds
            // at a thousand hosts: done beside the copy of the
            // measurements, the findings (their file, or the memory that
            // held them) at once and each category's file as soon as it is
            // copied (the spool removes them after
            // the run otherwise, on the run's last, single-threaded step).
            std::thread::scope(|scope| {
                let (copied, to_remove) = std::sync::mpsc::channel::<std::path::PathBuf>();
                scope.spawn(move || {
                    drop(stored_findings);
                    for path in to_remove {
                        let _ = std::fs::remove_file(path);
                    }
                });
                spooled.write_pretty(w, &mut |path| {
                    // The remover ends only when this sender is dropped.
                    let _ = copied.send(path.to_owned());
                })
            })?;
            w.write_all(b"\n}")?;
        }
        None => report::json::write(report, named, true, w.writer())?,
    }
    w.write_all(b"\n")?;
    w.flush()
}

/// The hosts documents name (sections and set-aside lines), for `--redact`.
fn document_hosts(docs: &[Document]) -> Vec<String> {
    let mut hosts: Vec<String> = docs
        .iter()
        .flat_map(|d| {
            d.sections
                .iter()
                .filter_map(|s| s.host.clone())
                .chain(d.unrecognised.iter().filter_map(|u| u.host.clone()))
        })
        .collect();
    hosts.sort_unstable();
    hosts.dedup();
    hosts
}

/// `--redact`: the analysis runs on the real input (hosts stay apart), and
/// what is printed has every identifier replaced.
/// File names need nothing extra: a file's host is its sections' host.
fn redact_output(out: &str, hosts: Vec<String>) -> String {
    let mut redactor = fabricscope::redact::Redactor::default();
    redactor.add_hosts(hosts);
    redactor.redact(out)
}

/// Prints `text` to standard output, or writes it to the report's file.
fn write_report_text(output: Option<&mut OutputFile>, text: &str) -> Result<(), String> {
    match output {
        None => write_output(None, text),
        Some(out) => write_streamed(Some(out), |w| w.writer().write_all(text.as_bytes())),
    }
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
    named_count(problems)
}

/// How many of `problems` are paths named on the command line.
fn named_count(problems: &[Problem]) -> usize {
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
                let hosts = doc.section_hosts();
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
                    (_, false) => (hosts.join(","), input.host_why.to_string()),
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

/// A progress bar over `files` files, on a terminal and for enough files.
/// `None` files: not known yet (the walk goes on while files are read):
/// the bar is hidden until [`show_progress`] has seen enough listed.
fn progress_bar(files: Option<usize>) -> Option<ProgressBar> {
    let enough = files.is_none_or(|f| f >= PROGRESS_MIN_FILES);
    (enough && std::io::stderr().is_terminal()).then(|| {
        let bar = match files {
            Some(files) => ProgressBar::new(files as u64),
            None => ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden()),
        };
        if let Ok(style) =
            ProgressStyle::with_template("{spinner} reading {pos}/{len} files {wide_bar} {eta}")
        {
            bar.set_style(style);
        }
        bar
    })
}

/// A walk has listed `files` so far: the bar's length, shown once there
/// are enough files for a bar (a hidden bar's draws cost nothing).
fn show_progress(bar: &ProgressBar, files: usize) {
    bar.set_length(files as u64);
    if files >= PROGRESS_MIN_FILES && bar.is_hidden() {
        bar.set_draw_target(ProgressDrawTarget::stderr());
    }
}

/// Parses one input; an input that gives nothing comes back with the reason.
fn read_one(input: crate::inputs::Input, progress: Option<&ProgressBar>) -> ReadOne {
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
    if let Some(bar) = progress {
        bar.inc(1);
    }
    // A file that could not be read at all is said on stderr even in
    // text output; one that holds no tool output is only listed.
    if let (Err(reason), true) = (&doc, input.bytes.is_err()) {
        eprintln!("fabricscope: {}: {reason}", input.name);
    }
    let named_failure = input.named && input.bytes.is_err();
    (input.name, input.modified_unix, named_failure, doc)
}

/// Inputs found while listing that could not be read and were not named on
/// the command line: the report lists them as skipped (named ones are errors).
fn unread_inputs(problems: &[Problem]) -> Vec<SkippedInput> {
    problems
        .iter()
        .filter(|p| !p.named)
        .map(|p| SkippedInput {
            input: p.input.clone(),
            reason: p.reason.clone(),
        })
        .collect()
}

/// `--format ndjson` of a batch run: each unit's incidents printed as the
/// unit is folded, then the fleet rules' ([`crate::ndjson_stream`]).
/// `--redact` renders the lines in memory first (it rewrites the text
/// once every host is known).
fn ndjson_streamed(
    args: &AnalyzeArgs,
    listing: Listing,
    options: &AnalyzeOptions,
    named_failures: usize,
    mut output: Option<&mut OutputFile>,
) -> Result<ExitCode, String> {
    let unread = unread_inputs(&listing.problems);
    let mut memory: Vec<u8> = Vec::new();
    // `--redact` rewrites the whole text at the end: rendered in memory.
    let target: Box<dyn std::io::Write + Send + '_> = match output.as_deref_mut() {
        _ if args.redact => Box::new(&mut memory),
        Some(out) => Box::new(out.take_for_writing()?),
        None => Box::new(std::io::stdout()),
    };
    let mut writer = std::io::BufWriter::with_capacity(1 << 16, target);
    let mut out = NdjsonOut::new(&mut writer);
    let listed = Inputs::Listed(listing.sources);
    let streamed = match stream(listed, options, Sink::Ndjson, Some(&mut out))? {
        Streaming::Done(streamed) => *streamed,
        Streaming::Shards(sources) => merge(
            &shard_paths(&sources)?,
            options,
            Sink::Ndjson,
            Some(&mut out),
        )?,
    };
    drop(out);
    drop(writer);
    let mut skipped = streamed.skipped;
    skipped.extend(unread);
    let Some(summary) = streamed.printed else {
        let reasons: Vec<String> = skipped
            .iter()
            .map(|s| format!("{}: {}", s.input, s.reason))
            .collect();
        return Err(format!("nothing to analyse\n  {}", reasons.join("\n  ")));
    };
    for s in &skipped {
        eprintln!("fabricscope: skipped {}: {}", s.input, s.reason);
    }
    if args.redact {
        let text = redact_output(&String::from_utf8_lossy(&memory), streamed.hosts);
        write_report_text(output, &text)?;
    }
    Ok(status_exit_code(
        summary.worst(),
        args.fail_on,
        named_failures + streamed.named_failures,
        args.keep_going,
    ))
}

/// A write to the report's output failed: a closed pipe ends the program
/// quietly (as [`write_streamed`] does), anything else is an error.
fn output_error(e: std::io::Error) -> String {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    format!("cannot write the report: {e}")
}

/// `--emit-records`: the header, then one line per unit, to the output.
fn emit_records(
    args: &AnalyzeArgs,
    input_options: &InputOptions,
    options: &AnalyzeOptions,
    output: Option<&mut OutputFile>,
) -> Result<ExitCode, String> {
    use std::io::Write;
    let mut listing = Listing::default();
    let walk = Inputs::Walk {
        paths: &args.paths,
        options: input_options,
        listing: &mut listing,
    };
    let Streaming::Done(mut streamed) = stream(walk, options, Sink::Records, None)? else {
        return Err("these are record shards already (--emit-records output): \
                    merge them with `fabricscope analyze SHARD...`"
            .to_owned());
    };
    let unread = unread_inputs(&listing.problems);
    let named_failures = named_count(&listing.problems);
    let header = RecordsHeader::new(options.interval_seconds, options.ignore.clone());
    let mut write = |w: &mut dyn Write| -> std::io::Result<()> {
        let mut w = std::io::BufWriter::with_capacity(1 << 16, w);
        serde_json::to_writer(&mut w, &header)?;
        w.write_all(b"\n")?;
        if let Some(records) = streamed.records.as_mut() {
            records.copy_to(&mut w)?;
        }
        if !unread.is_empty() {
            let line = RecordLine {
                unit: None,
                skipped: unread.clone(),
            };
            serde_json::to_writer(&mut w, &line)?;
            w.write_all(b"\n")?;
        }
        w.flush()
    };
    let result = match output {
        Some(out) => write(&mut out.take_for_writing()?),
        None => write(&mut std::io::stdout().lock()),
    };
    result.map_err(|e| format!("cannot write the records: {e}"))?;
    if !streamed.any {
        eprintln!("fabricscope: no input held tool output; the records list only skipped inputs");
    }
    let failed = named_failures + streamed.named_failures;
    Ok(if failed > 0 && !args.keep_going {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}

/// Whether `source` is a record shard (`--emit-records` output): a file
/// whose first line is a records header. A run whose first input is one
/// merges shards ([`merge`]).
fn is_record_shard(source: &Source) -> bool {
    shard_path(source).is_some()
}

fn shard_path(source: &Source) -> Option<PathBuf> {
    let Source::File { path, .. } = source else {
        return None;
    };
    let mut head = [0u8; 200];
    let n = std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
        .ok()?;
    RecordsHeader::starts(head.get(..n)?).then(|| path.clone())
}

/// The paths of record shards to merge: every input must be one.
fn shard_paths(sources: &[Source]) -> Result<Vec<PathBuf>, String> {
    sources
        .iter()
        .map(|s| {
            shard_path(s).ok_or_else(|| {
                "record shards (--emit-records output) and tool output cannot be analysed together"
                    .to_owned()
            })
        })
        .collect()
}

/// Orders unit keys (paths) directory by directory, as listing sorts them.
fn key_order(a: &str, b: &str) -> std::cmp::Ordering {
    a.split('/').cmp(b.split('/'))
}

/// Merges record shards: the fleet step over every shard's units, in the
/// order of their first inputs, so shards give the report of one run.
fn merge(
    paths: &[PathBuf],
    options: &AnalyzeOptions,
    out: Sink,
    mut ndjson: Option<&mut NdjsonOut<'_>>,
) -> Result<Streamed, String> {
    use std::io::BufRead;
    struct Shard {
        name: String,
        lines: std::io::Lines<std::io::BufReader<std::fs::File>>,
        next: Option<RecordLine>,
    }
    fn advance(shard: &mut Shard) -> Result<(), String> {
        shard.next = None;
        for line in shard.lines.by_ref() {
            let line = line.map_err(|e| format!("{}: {e}", shard.name))?;
            if line.trim().is_empty() {
                continue;
            }
            let record: RecordLine = serde_json::from_str(&line)
                .map_err(|e| format!("{}: not a unit record: {e}", shard.name))?;
            shard.next = Some(record);
            break;
        }
        Ok(())
    }
    let mut shards = Vec::new();
    for path in paths {
        let name = path.display().to_string();
        let file = std::fs::File::open(path).map_err(|e| format!("{name}: {e}"))?;
        let mut lines = std::io::BufReader::with_capacity(1 << 16, file).lines();
        let header = lines
            .next()
            .transpose()
            .map_err(|e| format!("{name}: {e}"))?
            .unwrap_or_default();
        let header: RecordsHeader = serde_json::from_str(&header)
            .map_err(|e| format!("{name}: not a record shard: {e}"))?;
        if header.kind != RECORDS_KIND || header.schema_version != RECORDS_SCHEMA_VERSION {
            return Err(format!(
                "{name}: records of schema {} ({}), this build reads schema {RECORDS_SCHEMA_VERSION}",
                header.schema_version, header.kind
            ));
        }
        if header.interval_seconds != options.interval_seconds || header.ignore != options.ignore {
            eprintln!(
                "fabricscope: {name} was written with other --interval/--ignore options than this merge; give the shards and the merge the same options"
            );
        }
        let mut shard = Shard {
            name,
            lines,
            next: None,
        };
        advance(&mut shard)?;
        shards.push(shard);
    }
    let mut analysis = Analysis::new(options);
    let mut spool = match out {
        Sink::Json {
            store_findings,
            notable,
        } => Some(
            Spool::new(store_findings, notable)
                .map_err(|e| format!("cannot create a temporary file: {e}"))?,
        ),
        _ => None,
    };
    let mut owner: HashMap<Option<String>, String> = HashMap::new();
    let mut hosts = Vec::new();
    let mut skipped = Vec::new();
    let mut any = false;
    loop {
        let mut best: Option<usize> = None;
        for (i, s) in shards.iter().enumerate() {
            let Some(line) = &s.next else { continue };
            let better = match best
                .and_then(|b| shards.get(b))
                .and_then(|b| b.next.as_ref())
            {
                None => true,
                Some(current) => key_order(line.key(), current.key()).is_lt(),
            };
            if better {
                best = Some(i);
            }
        }
        let Some(shard) = best.and_then(|b| shards.get_mut(b)) else {
            break;
        };
        let Some(line) = shard.next.take() else { break };
        advance(shard)?;
        skipped.extend(line.skipped);
        let Some(unit) = line.unit else { continue };
        any = true;
        for host in claimed_hosts(&unit) {
            if let Some(other) = owner.insert(host.map(str::to_owned), unit.key.clone()) {
                return Err(format!(
                    "{} is in two units ({other} and {}): give all of a host's files to one shard",
                    host.unwrap_or("a host without a name"),
                    unit.key
                ));
            }
        }
        hosts.extend(unit.host_names.iter().cloned());
        if let Some(out) = ndjson.as_deref_mut() {
            // Shards never split a host (refused above): every unit is
            // whole as it comes.
            let mut unit = unit;
            let lines = UnitLines::render(&mut unit.findings, true, 0);
            out.write_now(&lines.bytes).map_err(output_error)?;
            drop(analysis.add_result_printed(unit));
            continue;
        }
        fold_unit(&mut analysis, spool.as_mut(), unit, None, None).map_err(temp_error)?;
    }
    hosts.sort_unstable();
    hosts.dedup();
    let (report, printed) = conclude(analysis, any, ndjson, spool.as_mut())?;
    Ok(Streamed {
        report,
        any,
        records: None,
        spool,
        hosts,
        skipped,
        named_failures: 0,
        printed,
    })
}

/// Adds one unit to the analysis; with a spool, its measurements (and
/// findings, when the spool stores them) go to disk, without one they are
/// dropped. `rendered`: the unit's findings already formatted for the
/// spool (on the unit's thread), which then only copies them.
fn fold_unit(
    analysis: &mut Analysis,
    spool: Option<&mut Spool>,
    unit: UnitResult,
    rendered: Option<RenderedFindings>,
    sifted: Option<Omitted>,
) -> std::io::Result<()> {
    let Some(spool) = spool else {
        // Reports other than JSON do not print measurements: keeping them
        // would hold every unit's rates to the end (1.2 GB at 5,000 hosts).
        drop(analysis.add_result_taking_measurements(unit));
        return Ok(());
    };
    let m = match (spool.findings.as_mut(), rendered) {
        (Some(stored), Some(rendered)) if rendered.len() == unit.findings.len() => {
            // The store is called once per finding, in the unit's order.
            let mut next = 0;
            analysis.add_result_storing(unit, &mut |_| {
                next += 1;
                stored.store_record(rendered.record(next - 1))
            })?
        }
        (Some(stored), _) => analysis.add_result_storing(unit, &mut |f| stored.store(f))?,
        (None, _) => analysis.add_result_taking_measurements(unit),
    };
    spool.add(m, sifted)
}

/// The fleet step; the findings it adds are stored like the units' when
/// the spool stores findings.
fn finish(analysis: Analysis, spool: Option<&mut Spool>) -> std::io::Result<fabricscope::Report> {
    match spool {
        Some(spool) => match spool.findings.as_mut() {
            Some(stored) => {
                let (report, ids) = analysis.finish_storing(&mut |f| stored.store(f))?;
                spool.finding_ids = ids;
                Ok(report)
            }
            None => Ok(analysis.finish()),
        },
        None => Ok(analysis.finish()),
    }
}

/// What a streamed run produces.
#[derive(Clone, Copy)]
enum Sink {
    /// A report other than JSON: measurements are not printed.
    Report,
    /// A JSON report: measurements are spooled, and findings too when
    /// `store_findings` (light copies kept for the fleet step); only the
    /// notable measurements when `notable` (`--measurements notable`).
    Json { store_findings: bool, notable: bool },
    /// Record shards (`--emit-records`): unit results, no fleet step.
    Records,
    /// Streamed NDJSON: each unit's findings printed as it is folded
    /// ([`NdjsonOut`]), measurements dropped.
    Ndjson,
}

/// Writes one unit's record line.
fn write_record(
    file: &mut TempFile,
    unit: Option<UnitResult>,
    skipped: Vec<SkippedInput>,
) -> std::io::Result<()> {
    use std::io::Write;
    let w = file.writer()?;
    serde_json::to_writer(&mut *w, &RecordLine { unit, skipped })?;
    w.write_all(b"\n")
}

/// What streaming the inputs gave.
struct Streamed {
    /// Whether any input held tool output.
    any: bool,
    /// The record lines, with `--emit-records`.
    records: Option<TempFile>,
    /// The report (measurements of the units in `spool` when there is one),
    /// or nothing when no input held tool output.
    report: Option<fabricscope::Report>,
    /// The units' measurements, for a JSON report.
    spool: Option<Spool>,
    /// Hosts the documents named, for `--redact`.
    hosts: Vec<String>,
    /// Inputs that gave nothing.
    skipped: Vec<SkippedInput>,
    /// Named paths that could not be read.
    named_failures: usize,
    /// Streamed NDJSON: every finding printed, counted.
    printed: Option<fabricscope::report::Summary>,
}

/// The inputs of a run grouped into units: adjacent files of one host
/// directory (in a tree or an archive) form one unit; any other input (a
/// named file, a gzipped file, standard input) is a unit of its own. Units
/// that turn out to name the same host are merged later ([`stream`]).
#[derive(Default)]
struct Plan {
    sources: Vec<Source>,
    units: Vec<Vec<usize>>,
}

impl Plan {
    fn of(sources: Vec<Source>) -> Self {
        let mut plan = Plan::default();
        plan.add(sources);
        plan
    }

    /// Adds sources listed after the ones already planned.
    fn add(&mut self, sources: Vec<Source>) {
        for source in sources {
            let i = self.sources.len();
            let last_host = self.sources.last().and_then(Source::place_host);
            match (self.units.last_mut(), source.place_host()) {
                (Some(unit), Some(h)) if last_host == Some(h) => unit.push(i),
                _ => self.units.push(vec![i]),
            }
            self.sources.push(source);
        }
    }

    /// How many units are complete while the listing goes on: all but the
    /// last, which the host's next file may still join.
    fn settled(&self) -> usize {
        self.units.len().saturating_sub(1)
    }

    /// Unit `u`'s sources (copies: the plan is shared with the listing)
    /// and the number of its first.
    fn unit(&self, u: usize) -> (Vec<Source>, usize) {
        let unit = self.units.get(u).map_or(&[][..], Vec::as_slice);
        let sources = unit
            .iter()
            .filter_map(|&i| self.sources.get(i))
            .cloned()
            .collect();
        (sources, unit.first().copied().unwrap_or(0))
    }
}

/// Where a streamed run's inputs come from.
enum Inputs<'a> {
    /// Listed already.
    Listed(Vec<Source>),
    /// Listed on the calling thread while the pool analyses the units
    /// listed first ([`crate::inputs::list_each`]); the listing's notes
    /// and problems are said on stderr as it ends, and left in `listing`.
    Walk {
        paths: &'a [PathBuf],
        options: &'a InputOptions,
        listing: &'a mut Listing,
    },
}

/// A streamed run: its result, or, when its first input is a record shard
/// (`--emit-records` output), the listed inputs, to merge instead.
enum Streaming {
    Done(Box<Streamed>),
    Shards(Vec<Source>),
}

/// One unit read and analysed (phase A).
struct UnitRead {
    result: Option<UnitResult>,
    /// Streamed NDJSON: the unit's lines, rendered in parallel.
    lines: Option<UnitLines>,
    /// A JSON report storing findings: the unit's findings formatted as
    /// the spool stores them, in parallel.
    rendered: Option<RenderedFindings>,
    /// A JSON report of notable measurements: what sifting the unit's
    /// measurements left out (they were sifted in parallel).
    omitted: Option<Omitted>,
    /// Hosts of the documents' sections and set-aside lines (`--redact`).
    hosts: Vec<String>,
    skipped: Vec<SkippedInput>,
    named_failures: usize,
}

/// What a reading thread prepares of a unit's result for a JSON report,
/// so that the one thread folding the results in order does not.
#[derive(Clone, Copy, Default)]
struct ForJson {
    /// Format the findings as the finding spool stores them.
    render_findings: bool,
    /// Keep only the notable measurements (`--measurements notable`):
    /// sifted where they were made, most of a unit's records are freed
    /// there too, not handed to the folding thread to free.
    notable: bool,
}

/// Reads one unit and analyses it, or with `hosts_only` only learns which
/// hosts it names ([`fabricscope::analyze::unit_hosts`]), and prepares its
/// result for a JSON report as `json` asks.
fn read_unit(
    (sources, first): (Vec<Source>, usize),
    options: &AnalyzeOptions,
    progress: Option<&ProgressBar>,
    hosts_only: bool,
    ndjson: Option<Option<&Safety>>,
    json: ForJson,
) -> UnitRead {
    let mut docs = Vec::new();
    let mut times = Vec::new();
    let mut key: Option<String> = None;
    let mut skipped = Vec::new();
    let mut named_failures = 0;
    let mut dir = crate::inputs::OpenDir::default();
    let place_host = match ndjson {
        Some(_) => sources
            .first()
            .and_then(Source::place_host)
            .map(str::to_owned),
        None => None,
    };
    for input in sources.into_iter().flat_map(|s| s.read_in(&mut dir)) {
        let (name, modified, named_failure, doc) = read_one(input, progress);
        named_failures += usize::from(named_failure);
        match doc {
            Ok(doc) => {
                key.get_or_insert(name);
                docs.push(doc);
                times.push(modified);
            }
            Err(reason) => skipped.push(SkippedInput {
                input: name,
                reason,
            }),
        }
    }
    let (docs, times) = in_time_order(docs.into_iter().zip(times).collect(), |(_, t)| *t)
        .into_iter()
        .unzip::<_, _, Vec<Document>, Vec<Option<f64>>>();
    let hosts = document_hosts(&docs);
    let mut result = (!docs.is_empty()).then(|| {
        let mut r = if hosts_only {
            fabricscope::analyze::unit_hosts(&docs)
        } else {
            analyze_unit(&docs, &times, options)
        };
        r.key = key.unwrap_or_default();
        r
    });
    drop(docs);
    let lines = match (ndjson, result.as_mut()) {
        (Some(safety), Some(r)) if !hosts_only => {
            let at_once = safety.is_some_and(|s| s.prints_at_once(place_host.as_deref(), r));
            Some(UnitLines::render(&mut r.findings, at_once, first))
        }
        _ => None,
    };
    let rendered = match result.as_mut() {
        Some(r) if json.render_findings && !hosts_only => {
            // Stored as the report prints them: fingerprinted (the unit
            // step fingerprints its findings; this is for any without).
            for f in r.findings.iter_mut().filter(|f| f.fingerprint.is_empty()) {
                f.fingerprint = fabricscope::report::incident::finding_fingerprint(f);
            }
            Some(RenderedFindings::of(&r.findings))
        }
        _ => None,
    };
    let omitted = match result.as_mut() {
        Some(r) if json.notable && !hosts_only => Some(fabricscope::report::notable::keep_notable(
            &mut r.measured.measurements,
        )),
        _ => None,
    };
    UnitRead {
        result,
        lines,
        rendered,
        omitted,
        hosts,
        skipped,
        named_failures,
    }
}

/// The host names a unit's result claims; documents without a host all
/// share one name (`None`): anonymous pastes pair their snapshots, as they
/// did when every document was analysed together.
fn claimed_hosts(result: &UnitResult) -> impl Iterator<Item = Option<&str>> {
    result
        .host_names
        .iter()
        .map(|h| Some(h.as_str()))
        .chain((result.unnamed_hosts > 0).then_some(None))
}

/// The value behind `mutex` (a panic while it was held leaves it whole:
/// every update is a push or an assignment).
fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The root of `i` in a union-find forest.
fn root(parent: &mut [usize], mut i: usize) -> usize {
    while let Some(&p) = parent.get(i) {
        if p == i {
            break;
        }
        let grand = parent.get(p).copied().unwrap_or(p);
        if let Some(slot) = parent.get_mut(i) {
            *slot = grand;
        }
        i = p;
    }
    i
}

/// Reads and analyses the units in parallel and folds them in order as
/// they finish ([`crate::ordered::for_each_fed_in_order`]), keeping only
/// their results (and spooling their measurements for a JSON report).
/// [`Inputs::Walk`] lists the inputs meanwhile, on the calling thread: a
/// unit is read as soon as the walk has left its directory.
///
/// A host's documents must be one unit; a unit's hosts are known only once
/// it is parsed. When two units name the same host (a pdsh paste next to a
/// host directory, two pdsh snapshots in two files), the pass goes on only
/// to learn every unit's hosts (parsing, not analysing, the units not yet
/// started), then the overlapping units are merged and everything is
/// read again — rare, and correct.
///
/// When the first input is a record shard, nothing is read: the inputs
/// come back to be merged as shards.
fn stream(
    inputs: Inputs<'_>,
    options: &AnalyzeOptions,
    out: Sink,
    mut ndjson: Option<&mut NdjsonOut<'_>>,
) -> Result<Streaming, String> {
    let (plan, mut walk) = match inputs {
        Inputs::Listed(sources) => {
            if sources.first().is_some_and(is_record_shard) {
                return Ok(Streaming::Shards(sources));
            }
            (Plan::of(sources), None)
        }
        Inputs::Walk {
            paths,
            options,
            listing,
        } => (Plan::default(), Some((paths, options, listing))),
    };
    // Streamed NDJSON scans every input first, so it is given them listed.
    let safety = match (out, &walk) {
        (Sink::Ndjson, None) => Safety::scan(&plan.sources, &plan.units),
        _ => None,
    };
    let mut plan = Mutex::new(plan);
    let lines_for = matches!(out, Sink::Ndjson).then_some(safety.as_ref());
    let for_json = match out {
        Sink::Json {
            store_findings,
            notable,
        } => ForJson {
            render_findings: store_findings,
            notable,
        },
        _ => ForJson::default(),
    };
    let progress = progress_bar(match walk {
        Some(_) => None,
        None => Some(locked(&plan).sources.len()),
    });
    let ahead = rayon::current_num_threads().max(1) * UNITS_AHEAD_PER_THREAD;
    loop {
        if let Some(bar) = &progress {
            bar.set_position(0);
        }
        let mut fold = Fold::new(options, out)?;
        // Once two units named one host, everything is read again merged:
        // the rest of this pass only learns each unit's hosts (units
        // already started are read whole, and folded the same way).
        let hosts_only = AtomicBool::new(false);
        let mut shards_first = false;
        crate::ordered::for_each_fed_in_order(
            ahead,
            |u| {
                // The lock is let go of before the unit is read.
                let unit = locked(&plan).unit(u);
                read_unit(
                    unit,
                    options,
                    progress.as_ref(),
                    hosts_only.load(Ordering::Relaxed),
                    lines_for,
                    for_json,
                )
            },
            |u, read| {
                fold.add(u, read, ndjson.as_deref_mut())?;
                if fold.overlap {
                    hosts_only.store(true, Ordering::Relaxed);
                }
                Ok::<(), String>(())
            },
            |feeder| {
                let Some((paths, input_options, listing)) = walk.take() else {
                    feeder.extend_to(locked(&plan).units.len());
                    return;
                };
                *listing = crate::inputs::list_each(paths, input_options, &mut |batch| {
                    let mut plan = locked(&plan);
                    if plan.sources.is_empty() && batch.first().is_some_and(is_record_shard) {
                        shards_first = true;
                    }
                    plan.add(batch);
                    let (settled, files) = (plan.settled(), plan.sources.len());
                    drop(plan);
                    if let Some(bar) = &progress {
                        show_progress(bar, files);
                    }
                    if !shards_first {
                        feeder.extend_to(settled);
                    }
                });
                for note in &listing.notes {
                    eprintln!("fabricscope: {note}");
                }
                report_problems(&listing.problems);
                if !shards_first {
                    feeder.extend_to(locked(&plan).units.len());
                }
            },
        )?;
        let planned = plan.get_mut().unwrap_or_else(PoisonError::into_inner);
        if shards_first {
            return Ok(Streaming::Shards(std::mem::take(&mut planned.sources)));
        }
        if fold.overlap {
            if let Some(out) = ndjson.as_deref_mut() {
                out.restart();
            }
            let mut merged: Vec<Vec<usize>> = Vec::new();
            let mut slot_of_root: HashMap<usize, usize> = HashMap::new();
            for i in 0..planned.units.len() {
                let r = root(&mut fold.parent, i);
                let slot = *slot_of_root.entry(r).or_insert_with(|| {
                    merged.push(Vec::new());
                    merged.len() - 1
                });
                if let (Some(m), Some(u)) = (merged.get_mut(slot), planned.units.get(i)) {
                    m.extend(u.iter().copied());
                }
            }
            planned.units = merged;
            continue;
        }
        if let Some(bar) = &progress {
            bar.finish_and_clear();
        }
        // Every input is read: their list (a path and host per file, 20 MB
        // at 5,000 hosts) goes before the fleet step, the peak of the run.
        drop(safety);
        drop(plan);
        let Fold {
            analysis,
            spool,
            records,
            mut hosts,
            skipped,
            named_failures,
            any,
            ..
        } = fold;
        hosts.sort_unstable();
        hosts.dedup();
        let mut spool = spool;
        let (report, printed) =
            conclude(analysis, any && records.is_none(), ndjson, spool.as_mut())?;
        return Ok(Streaming::Done(Box::new(Streamed {
            report,
            any,
            records,
            spool,
            hosts,
            skipped,
            named_failures,
            printed,
        })));
    }
}

/// The report, or (streamed NDJSON) the summary of what was printed.
type Concluded = (
    Option<fabricscope::Report>,
    Option<fabricscope::report::Summary>,
);

/// The fleet step of a batch run (a merge of shards or a read of dumps):
/// with streamed NDJSON, the fleet rules' lines end the output and only the
/// summary is kept; otherwise the whole report is built. Nothing when no
/// input held tool output (or the run only emits records).
fn conclude(
    analysis: Analysis,
    report_wanted: bool,
    ndjson: Option<&mut NdjsonOut<'_>>,
    spool: Option<&mut Spool>,
) -> Result<Concluded, String> {
    match (report_wanted, ndjson) {
        (false, _) => Ok((None, None)),
        (true, Some(out)) => {
            let fleet = analysis.finish_printed();
            out.finish(&fleet.findings).map_err(output_error)?;
            Ok((None, Some(fleet.summary)))
        }
        (true, None) => {
            let report = match spool {
                Some(spool) if spool.findings.is_some() => finish_rendering(analysis, spool),
                spool => finish(analysis, spool),
            };
            Ok((Some(report.map_err(temp_error)?), None))
        }
    }
}

/// The fleet rules' findings formatted for the spool at once, per thread.
const FLEET_FINDINGS_PER_TASK: usize = 256;

/// [`finish`] for a spool that stores findings, with the fleet rules'
/// findings (thousands in a large fleet: an FL004 per odd port) formatted
/// on every thread rather than one by one as the fleet step hands them
/// over: they are held as handed over (each told the id it will be stored
/// under, the spool's next ones in turn), then formatted in parallel and
/// stored in that order, a batch at a time.
fn finish_rendering(analysis: Analysis, spool: &mut Spool) -> std::io::Result<fabricscope::Report> {
    let Some(stored) = spool.findings.as_mut() else {
        return finish(analysis, Some(spool));
    };
    let first = stored.next_id();
    // Held and formatted a batch at a time, so that memory stays flat
    // however many fleet findings there are (5,000 hosts give ~32,000).
    let mut held: Vec<fabricscope::rules::Finding> = Vec::new();
    let mut handed = 0_u64;
    let mut want = first;
    let (report, ids) = analysis.finish_storing(&mut |f| {
        held.push(f.clone());
        handed += 1;
        if held.len() >= FLEET_FINDINGS_PER_BATCH {
            store_rendered(&held, stored, &mut want)?;
            held.clear();
        }
        Ok(first + handed - 1)
    })?;
    store_rendered(&held, stored, &mut want)?;
    spool.finding_ids = ids;
    Ok(report)
}

/// Fleet findings held together before they are formatted (in tasks of
/// [`FLEET_FINDINGS_PER_TASK`]) and stored.
const FLEET_FINDINGS_PER_BATCH: usize = 16 * FLEET_FINDINGS_PER_TASK;

/// Formats `held` in parallel and stores it in order, checking that each
/// finding lands under the id it was told (`want`, the spool's next).
fn store_rendered(
    held: &[fabricscope::rules::Finding],
    stored: &mut crate::spool::FindingSpool,
    want: &mut u64,
) -> std::io::Result<()> {
    let rendered = held
        .par_chunks(FLEET_FINDINGS_PER_TASK)
        .map(RenderedFindings::of)
        .collect::<Vec<RenderedFindings>>();
    for r in &rendered {
        for i in 0..r.len() {
            if stored.store_record(r.record(i))? != *want {
                return Err(std::io::Error::other("a fleet finding's store id moved"));
            }
            *want += 1;
        }
    }
    Ok(())
}

/// The ordered half of [`stream`]: units folded into the analysis (or the
/// record file) in input order, and the hosts they claim, to find units
/// that must be merged.
struct Fold {
    analysis: Analysis,
    spool: Option<Spool>,
    records: Option<TempFile>,
    owner: HashMap<Option<String>, usize>,
    parent: Vec<usize>,
    overlap: bool,
    hosts: Vec<String>,
    skipped: Vec<SkippedInput>,
    named_failures: usize,
    any: bool,
}

fn temp_error(e: std::io::Error) -> String {
    format!("cannot write a temporary file: {e}")
}

impl Fold {
    fn new(options: &AnalyzeOptions, out: Sink) -> Result<Self, String> {
        Ok(Self {
            analysis: Analysis::new(options),
            spool: match out {
                Sink::Json {
                    store_findings,
                    notable,
                } => Some(Spool::new(store_findings, notable).map_err(temp_error)?),
                _ => None,
            },
            records: match out {
                Sink::Records => Some(TempFile::new("records").map_err(temp_error)?),
                _ => None,
            },
            owner: HashMap::new(),
            parent: Vec::new(),
            overlap: false,
            hosts: Vec::new(),
            skipped: Vec::new(),
            named_failures: 0,
            any: false,
        })
    }

    /// Folds unit number `index`, read; streamed NDJSON prints (or holds)
    /// its lines, flushed once the unit is folded.
    fn add(
        &mut self,
        index: usize,
        unit: UnitRead,
        mut ndjson: Option<&mut NdjsonOut<'_>>,
    ) -> Result<(), String> {
        self.fold(index, unit, ndjson.as_deref_mut())?;
        if let Some(out) = ndjson {
            out.flush().map_err(output_error)?;
        }
        Ok(())
    }

    /// Folds unit number `index` in: its hosts and skipped inputs, and its
    /// result into the record shard, the NDJSON output, or the analysis
    /// and spool.
    fn fold(
        &mut self,
        index: usize,
        unit: UnitRead,
        ndjson: Option<&mut NdjsonOut<'_>>,
    ) -> Result<(), String> {
        self.hosts.extend(unit.hosts);
        self.named_failures += unit.named_failures;
        if self.records.is_none() {
            self.skipped.extend(unit.skipped.iter().cloned());
        }
        let Some(result) = unit.result else {
            if let (Some(file), false) = (self.records.as_mut(), unit.skipped.is_empty()) {
                write_record(file, None, unit.skipped).map_err(temp_error)?;
            }
            return Ok(());
        };
        self.any = true;
        // Units come in order, and are counted as they come (the walk may
        // still be listing them): each is its own root until merged.
        while self.parent.len() <= index {
            self.parent.push(self.parent.len());
        }
        for host in claimed_hosts(&result) {
            let key = host.map(str::to_owned);
            match self.owner.get(&key) {
                Some(&other) => {
                    let (a, b) = (root(&mut self.parent, other), root(&mut self.parent, index));
                    if a != b {
                        if let Some(slot) = self.parent.get_mut(a.max(b)) {
                            *slot = a.min(b);
                        }
                        self.overlap = true;
                    }
                }
                None => {
                    self.owner.insert(key, index);
                }
            }
        }
        if self.overlap {
            return Ok(()); // this pass only learns the hosts now
        }
        if let Some(file) = self.records.as_mut() {
            write_record(file, Some(result), unit.skipped).map_err(temp_error)?;
            return Ok(());
        }
        if let Some(out) = ndjson {
            if let Some(lines) = unit.lines {
                out.unit(lines).map_err(output_error)?;
            }
            drop(self.analysis.add_result_printed(result));
            return Ok(());
        }
        fold_unit(
            &mut self.analysis,
            self.spool.as_mut(),
            result,
            unit.rendered,
            unit.omitted,
        )
        .map_err(temp_error)
    }
}

/// Reads and parses every input in parallel; inputs that give nothing are
/// returned as skipped with the reason.
fn read_all(sources: Vec<Source>) -> ReadResult {
    let progress = progress_bar(Some(sources.len()));
    let results: Vec<ReadOne> = sources
        .into_par_iter()
        .flat_map_iter(Source::read)
        .map(|input| read_one(input, progress.as_ref()))
        .collect();
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    let mut names = Vec::new();
    let mut documents = Vec::new();
    let mut times = Vec::new();
    let mut skipped = Vec::new();
    let mut named_failures = 0;
    let mut read = Vec::new();
    for (input, modified, named_failure, result) in results {
        named_failures += usize::from(named_failure);
        match result {
            Ok(doc) => read.push((input, doc, modified)),
            Err(reason) => skipped.push(SkippedInput { input, reason }),
        }
    }
    for (input, doc, modified) in in_time_order(read, |(_, _, t)| *t) {
        names.push(input);
        documents.push(doc);
        times.push(modified);
    }
    (names, documents, times, skipped, named_failures)
}

/// `items` in the order [`fabricscope::analyze::time_order`] gives (by file
/// time, when each has one): the documents are owned here, so they are
/// moved into that order rather than copied by `analyze_unit`.
fn in_time_order<T>(items: Vec<T>, time: impl Fn(&T) -> Option<f64>) -> Vec<T> {
    let times: Vec<Option<f64>> = items.iter().map(&time).collect();
    let Some(order) = fabricscope::analyze::time_order(items.len(), &times) else {
        return items;
    };
    let mut slots: Vec<Option<T>> = items.into_iter().map(Some).collect();
    order
        .into_iter()
        .filter_map(|i| slots.get_mut(i).and_then(Option::take))
        .collect()
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
    fn documents_go_in_time_order_only_when_each_has_a_time() {
        let timed = vec![
            ("after", Some(60.0)),
            ("before", Some(0.0)),
            ("same", Some(0.0)),
        ];
        let names = |v: Vec<(&'static str, Option<f64>)>| -> Vec<&'static str> {
            in_time_order(v, |(_, t)| *t)
                .into_iter()
                .map(|(n, _)| n)
                .collect()
        };
        // Stable: two files of the same second keep their order.
        assert_eq!(names(timed), ["before", "same", "after"]);
        let untimed = vec![
            ("after", Some(60.0)),
            ("stdin", None),
            ("before", Some(0.0)),
        ];
        assert_eq!(names(untimed), ["after", "stdin", "before"]);
        assert_eq!(names(vec![("one", Some(5.0))]), ["one"]);
    }

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
