//! The `fabricscope` command: a thin client of the library.
//!
//! Exit codes: 0 success, 1 findings at or above `--fail-on` (analyze),
//! 2 usage or input errors.

#[macro_use]
mod out;
mod allocator;
mod analyze_cmd;
mod archive;
mod diff_cmd;
mod inputs;
mod naming;
mod ndjson_stream;
mod ordered;
mod output_file;
mod parse_cmd;
mod rules_cmd;
mod spool;

use clap::{CommandFactory, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;

/// Examples and exit codes, shown under `--help`.
const AFTER_HELP: &str = "\
Examples:
  fabricscope analyze paste.txt                    diagnose one paste
  fabricscope analyze dumps/ --quiet               fleet summary of a directory of dumps
  fabricscope analyze fleet.tar.gz --format csv    incidents of an archive, one row each
  fabricscope analyze dumps/ --list-hosts          which file is which host, and why
  fabricscope analyze dumps/ --format json -o today.json
  fabricscope diff lastweek.json today.json        new / resolved / persisting incidents
  fabricscope analyze dumps/ --baseline lastweek.json
  fabricscope explain IB001

Exit codes:
  0  nothing at or above --fail-on (analyze); no news (diff)
  1  a finding at or above --fail-on (analyze); something new or worse (diff)
  2  usage or input error, or a path named on the command line could not be
     read (unless --keep-going)";

/// Reads InfiniBand and NVLink tool output and explains what is wrong.
#[derive(Parser)]
#[command(name = "fabricscope", version, about, long_about = None, after_help = AFTER_HELP)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print what was read from tool output: sections, hosts, parsed values.
    Parse(InputArgs),
    /// Diagnose tool output: findings with evidence, thresholds and remedies.
    #[command(after_help = AFTER_HELP)]
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
    /// Compare two JSON reports (`analyze --format json`): new, resolved and
    /// persisting incidents, and counters that grew.
    Diff(diff_cmd::DiffArgs),
    /// Print a shell completion script (`fabricscope completions bash`).
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff), generated from the command's own help.
    Man,
}

/// Where the input comes from and how to print the result.
#[derive(clap::Args)]
struct InputArgs {
    /// Files, directories of dumps or archives of them; `-` or nothing reads
    /// standard input.
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
    if matches!(cli.command, Command::Analyze(_) | Command::Parse(_)) {
        allocator::give_back_freed_memory_sooner();
    }
    let result = match cli.command {
        Command::Parse(args) => parse_cmd::run(&args),
        Command::Analyze(args) => analyze_cmd::run(&args),
        Command::Rules { json } => rules_cmd::list(json),
        Command::Explain { id } => rules_cmd::explain(&id),
        Command::Diff(args) => diff_cmd::run(&args),
        Command::Completions { shell } => {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "fabricscope", &mut out);
            out!("{}", String::from_utf8_lossy(&out));
            Ok(ExitCode::SUCCESS)
        }
        Command::Man => {
            let mut out = Vec::new();
            match clap_mangen::Man::new(Cli::command()).render(&mut out) {
                Ok(()) => {
                    out!("{}", String::from_utf8_lossy(&out));
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) => Err(format!("cannot render the man page: {e}")),
            }
        }
    };
    match result {
        Ok(code) => code,
        Err(message) => {
            eprintln!("fabricscope: {message}");
            ExitCode::from(2)
        }
    }
}
