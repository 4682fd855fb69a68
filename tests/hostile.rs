//! Hostile input: garbage, truncations, bit flips of every real sample, and
//! pathological shapes. Reading must never panic, must stay within its limits,
//! and must account for every line (nothing silently dropped).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use fabricscope::{read_all, read_bytes, Error, ReadOptions};
use std::path::{Path, PathBuf};

/// Every real sample available: our own fixtures in the repo, and the shared
/// corpus beside the checkout when it is there.
fn samples() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs = vec![root.join("tests/fixtures"), root.join("examples")];
    let shared = root.join("../shared/corpus");
    if shared.is_dir() {
        dirs.push(shared);
    } else {
        println!("note: ../shared/corpus is absent; only the repo's own fixtures are used");
    }
    let mut files = Vec::new();
    for d in dirs {
        walk(&d, &mut files);
    }
    files.retain(|f| f.extension().is_some_and(|e| e == "txt"));
    files.sort();
    files
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// A small deterministic generator (xorshift), so failures reproduce.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

#[test]
fn every_sample_accounts_for_every_line() {
    let files = samples();
    assert!(!files.is_empty());
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let doc = read_all(&text, &ReadOptions::default()).unwrap();
        let lost = doc.unaccounted_lines(&text);
        assert!(
            lost.is_empty(),
            "{}: lines {lost:?} are neither read nor reported",
            f.display()
        );
    }
    println!("{} samples fully accounted for", files.len());
}

#[test]
fn bit_flips_and_truncations_of_every_sample_never_panic() {
    let mut rng = Rng(0x5eed_f00d_cafe_d00d);
    let mut runs = 0;
    for f in samples() {
        let original = std::fs::read(&f).unwrap();
        if original.is_empty() {
            continue;
        }
        for _ in 0..12 {
            let mut bytes = original.clone();
            for _ in 0..=rng.below(8) {
                let i = rng.below(bytes.len());
                bytes[i] ^= 1 << rng.below(8);
            }
            if let Ok(doc) = read_bytes(&bytes, &ReadOptions::default()) {
                let text = String::from_utf8_lossy(&bytes).replace('\0', "");
                assert!(
                    doc.unaccounted_lines(&text).is_empty(),
                    "{}: a bit-flipped copy loses lines",
                    f.display()
                );
            }
            runs += 1;
        }
        for cut in [
            1,
            original.len() / 3,
            original.len() / 2,
            original.len() - 1,
        ] {
            let _ = read_bytes(&original[..cut], &ReadOptions::default());
            runs += 1;
        }
    }
    println!("{runs} mutated inputs read without panic");
}

#[test]
fn random_garbage_is_reported_not_fatal() {
    let mut rng = Rng(42);
    for len in [0, 1, 7, 100, 4096, 65_536] {
        let bytes: Vec<u8> = (0..len).map(|_| (rng.next() & 0xff) as u8).collect();
        match read_bytes(&bytes, &ReadOptions::default()) {
            Ok(doc) => assert!(doc.sections.is_empty() || len < 4096),
            Err(Error::Binary { reason }) => assert!(!reason.is_empty()),
            Err(e) => panic!("unexpected error {e}"),
        }
    }
    let text = "lorem ipsum\nthis is not a tool\n";
    let err = fabricscope::read(text, &ReadOptions::default()).unwrap_err();
    assert!(
        matches!(err, Error::NothingRecognised { lines: 2, .. }),
        "{err}"
    );
}

#[test]
fn one_huge_line_is_listed_not_parsed() {
    let options = ReadOptions::default();
    let huge = "A".repeat(30 << 20);
    let text = format!("CA 'mlx5_0'\n\tCA type: MT4123\n{huge}\n\tNumber of ports: 1\n");
    let doc = read_all(&text, &options).unwrap();
    assert_eq!(doc.sections.len(), 1);
    let long = doc
        .unrecognised
        .iter()
        .find(|u| u.span.first_line == 3)
        .expect("line 3 listed");
    assert!(
        long.reason.contains("longer than the limit"),
        "{}",
        long.reason
    );
}

#[test]
fn millions_of_empty_lines_and_repeated_headers_stay_bounded() {
    let options = ReadOptions::default();
    let blank = "\n".repeat(1_000_000);
    let doc = read_all(&blank, &options).unwrap();
    assert!(doc.sections.is_empty() && doc.unrecognised.is_empty());

    let header = "CA 'mlx5_0'\n\tCA type: MT4123\n".repeat(110_000);
    let doc = read_all(&header, &options).unwrap();
    assert_eq!(doc.sections.len(), options.max_sections);
    // Said once, not for each of the 10,000 sections past the limit.
    let limit_warnings = doc
        .warnings
        .iter()
        .filter(|w| w.message.contains("sections"))
        .count();
    assert_eq!(limit_warnings, 1);
    assert_eq!(doc.unrecognised.len(), 110_000 - options.max_sections);
    assert!(doc.unaccounted_lines(&header).is_empty());
}

#[test]
fn oversized_input_is_refused_with_a_clear_error() {
    let options = ReadOptions::default().with_max_input_bytes(1000);
    let err = read_all(&"x".repeat(1001), &options).unwrap_err();
    assert_eq!(
        err.to_string(),
        "input is 1001 bytes, more than the limit of 1000 bytes"
    );
}
