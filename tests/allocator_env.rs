//! `analyze` and `parse` run with mimalloc's purge delay set
//! (`MIMALLOC_PURGE_DELAY`, see `src/bin/fabricscope/allocator.rs`): they
//! replace themselves once with the variable set, unless the caller set
//! it. Seen from outside through the running process's environment
//! (Linux `/proc`).

#![cfg(target_os = "linux")]

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The command `args` (reading standard input) started with `extra` in
/// its environment, held open on its standard input until its environment
/// shows `MIMALLOC_PURGE_DELAY` (or a few seconds pass): the value it runs
/// with, and its exit status.
fn purge_delay_seen(args: &[&str], extra: Option<&str>) -> (Option<String>, bool) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_fabricscope"));
    command
        .args(args)
        .env_remove("MIMALLOC_PURGE_DELAY")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if let Some(value) = extra {
        command.env("MIMALLOC_PURGE_DELAY", value);
    }
    let mut child = command.spawn().expect("the command starts");
    let environ = format!("/proc/{}/environ", child.id());
    let started = Instant::now();
    let mut seen = None;
    while seen.is_none() && started.elapsed() < Duration::from_secs(10) {
        if let Ok(bytes) = std::fs::read(&environ) {
            seen = bytes
                .split(|&b| b == 0)
                .filter_map(|v| v.strip_prefix(b"MIMALLOC_PURGE_DELAY="))
                .map(|v| String::from_utf8_lossy(v).into_owned())
                .next_back();
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut stdin = child.stdin.take().expect("its input is piped");
    stdin
        .write_all(b"CA 'mlx5_0'\n\tCA type: MT4129\n")
        .expect("the command reads its input");
    drop(stdin);
    let status = child.wait().expect("the command ends");
    (seen, status.success())
}

const ANALYZE: &[&str] = &["analyze", "-", "--fail-on", "never"];
const PARSE: &[&str] = &["parse", "-"];

#[test]
fn the_command_runs_with_a_short_purge_delay() {
    for args in [ANALYZE, PARSE] {
        let (seen, ok) = purge_delay_seen(args, None);
        assert_eq!(seen.as_deref(), Some("10"), "{args:?}");
        assert!(
            ok,
            "{args:?}: the replaced process read its input and succeeded"
        );
    }
}

#[test]
fn a_purge_delay_the_caller_set_is_kept() {
    let (seen, ok) = purge_delay_seen(ANALYZE, Some("250"));
    assert_eq!(seen.as_deref(), Some("250"));
    assert!(ok);
}
