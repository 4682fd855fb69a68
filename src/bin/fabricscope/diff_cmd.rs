//! `fabricscope diff OLD.json NEW.json`: what changed between two runs.

use crate::analyze_cmd::write_output;
use clap::ValueEnum;
use fabricscope::report::diff::{diff, render_text, Snapshot};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `fabricscope diff`.
#[derive(clap::Args)]
pub struct DiffArgs {
    /// The older report (`analyze --format json`).
    old: PathBuf,
    /// The newer report.
    new: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = DiffFormat::Text)]
    format: DiffFormat,
    /// Write to FILE instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
}

/// How to print the comparison.
#[derive(Clone, Copy, ValueEnum)]
enum DiffFormat {
    /// One line per change.
    Text,
    /// One JSON document: new, resolved, persisting, counters_grew.
    Json,
}

fn load(path: &Path) -> Result<Snapshot, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    Snapshot::from_json(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Exit 0 when nothing is new or worse, 1 when something is (as `diff(1)`).
pub fn run(args: &DiffArgs) -> Result<ExitCode, String> {
    let d = diff(&load(&args.old)?, &load(&args.new)?);
    let text = match args.format {
        DiffFormat::Text => render_text(&d),
        DiffFormat::Json => serde_json::to_string_pretty(&d).map_err(|e| e.to_string())? + "\n",
    };
    write_output(args.output.as_deref(), &text)?;
    Ok(if d.has_news() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
