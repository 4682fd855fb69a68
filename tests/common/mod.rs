//! Helpers the command-line tests share: run the built binary, read what it
//! printed, find repository files, make scratch directories.
// Each test crate uses the helpers it needs.
#![allow(dead_code, clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A file of the repository, by its path from the root.
pub fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// Runs `fabricscope` with `args` and no standard input.
pub fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fabricscope"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// What the run printed on standard output.
pub fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

/// What the run printed on standard error.
pub fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

/// The exit status.
pub fn code(o: &Output) -> i32 {
    o.status.code().unwrap()
}

/// A scratch directory under the target dir, emptied first.
pub fn scratch(rel: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(rel);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
