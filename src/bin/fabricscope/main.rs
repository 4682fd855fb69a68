//! The `fabricscope` command: a thin client of the library.
//!
//! Exit codes: 0 success, 1 findings at or above `--fail-on` (analyze),
//! 2 usage or input errors.

#[macro_use]
mod out;
mod analyze_cmd;
mod inputs;
mod parse_cmd;
mod rules_cmd;

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;

/// Reads InfiniBand and NVLink tool output and explains what is wrong.
#[derive(Parser)]
#[command(name = "fabricscope", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print what was read from tool output: sections, hosts, parsed values.
    Parse(InputArgs),
    /// Diagnose tool output: findings with evidence, thresholds and remedies.
    Analyze(analyze_cmd::AnalyzeArgs),
    /// List the rules.
    Rules {
        /// Print the catalogue as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print one rule's documentation (`fabricscope explain IB001`).
    Explain {
        /// The rule's id (or name).
        id: String,
    },
}

/// Where the input comes from and how to print the result.
#[derive(clap::Args)]
struct InputArgs {
    /// Files or directories of dumps (a directory's name becomes the host of
    /// the files in it); `-` or nothing reads standard input.
    paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Replace host names, GUIDs, UUIDs, serial numbers and IP addresses
    /// consistently before printing (for sharing).
    #[arg(long)]
    redact: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    /// For people.
    Text,
    /// One JSON document.
    Json,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Parse(args) => parse_cmd::run(&args),
        Command::Analyze(args) => analyze_cmd::run(&args),
        Command::Rules { json } => rules_cmd::list(json),
        Command::Explain { id } => rules_cmd::explain(&id),
    };
    match result {
        Ok(code) => code,
        Err(message) => {
            eprintln!("fabricscope: {message}");
            ExitCode::from(2)
        }
    }
}
