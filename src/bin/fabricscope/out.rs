//! Writing to standard output without panicking.
//!
//! `println!` panics when stdout is closed early (`fabricscope rules | head`).
//! These macros write through a `Write` handle instead and end the process
//! quietly on a broken pipe, as Unix filters do; any other write error is
//! reported on stderr with exit status 2.

use std::io::Write;

/// Writes formatted text to stdout, handling a closed pipe.
pub fn write_stdout(args: std::fmt::Arguments<'_>) {
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_fmt(args) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("fabricscope: cannot write output: {e}");
        std::process::exit(2);
    }
}

/// `print!` that survives a closed pipe.
macro_rules! out {
    ($($arg:tt)*) => { $crate::out::write_stdout(format_args!($($arg)*)) };
}

/// `println!` that survives a closed pipe.
macro_rules! outln {
    () => { $crate::out::write_stdout(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::out::write_stdout(format_args!("{}\n", format_args!($($arg)*))) };
}
