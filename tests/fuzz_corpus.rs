//! Replays the committed fuzz corpus and any crash artifacts through the same
//! calls the fuzz targets make, so every input that once crashed stays fixed
//! without needing nightly or cargo-fuzz.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::path::Path;

/// Runs one input through the call the named target makes. Returns false for
/// a target name this test does not know, so a new target cannot be forgotten.
fn run_target(target: &str, data: &[u8]) -> bool {
    let text = std::str::from_utf8(data).ok();
    match target {
        "input" => {
            let _ = fabricscope::read_bytes(data, &fabricscope::ReadOptions::default());
            if let Some(text) = text {
                assert_every_line_accounted_for(text);
            }
        }
        "format" => {
            if let Some(text) = text {
                fabricscope::parse::fuzz_format(text);
            }
        }
        "stats" => {
            if let Ok(doc) = fabricscope::read_bytes(data, &fabricscope::ReadOptions::default()) {
                let options = fabricscope::stats::StatsOptions::default().with_interval(2.0);
                let _ = fabricscope::stats::measure(&doc, &options);
            }
        }
        "analyze" => {
            if let Ok(doc) = fabricscope::read_bytes(data, &fabricscope::ReadOptions::default()) {
                let _ = fabricscope::analyze(&[doc], &fabricscope::AnalyzeOptions::default());
            }
        }
        _ => return false,
    }
    true
}

/// The input layer's "nothing silently lost" promise, which the `input` fuzz
/// target also asserts: every non-blank line ends up in a section, an
/// unrecognised range, a framing line or a tool message.
fn assert_every_line_accounted_for(text: &str) {
    let options = fabricscope::ReadOptions::default();
    if let Ok(doc) = fabricscope::input::read_all(text, &options) {
        let lost = doc.unaccounted_lines(text);
        assert!(lost.is_empty(), "lines {lost:?} are accounted for nowhere");
    }
}

fn replay(dir: &Path) -> usize {
    let Ok(targets) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut count = 0;
    for target in targets.flatten() {
        let name = target.file_name().to_string_lossy().into_owned();
        let Ok(files) = std::fs::read_dir(target.path()) else {
            continue;
        };
        for file in files.flatten() {
            let data = std::fs::read(file.path()).unwrap();
            // Name the input if replaying it panics.
            println!("replaying {}", file.path().display());
            assert!(
                run_target(&name, &data),
                "fuzz target `{name}` has no replay entry in tests/fuzz_corpus.rs"
            );
            count += 1;
        }
    }
    count
}

#[test]
fn fuzz_corpus_and_artifacts_replay_without_panic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let corpus = replay(&root.join("corpus"));
    let artifacts = replay(&root.join("artifacts"));
    println!("replayed {corpus} corpus inputs and {artifacts} crash artifacts");
    // A campaign's scratch corpora (laid out like fuzz/corpus) can be replayed
    // through the same checks without committing them.
    if let Some(extra) = std::env::var_os("FABRICSCOPE_FUZZ_REPLAY") {
        let extra = replay(Path::new(&extra));
        println!("replayed {extra} inputs from FABRICSCOPE_FUZZ_REPLAY");
    }
    assert!(corpus > 0, "the committed fuzz corpus is empty");
}

#[test]
fn every_fuzz_target_has_a_replay_entry() {
    let targets = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/fuzz_targets");
    for entry in std::fs::read_dir(targets).unwrap().flatten() {
        let name = entry
            .path()
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(
            run_target(&name, b""),
            "no replay entry for fuzz target `{name}`"
        );
    }
}
