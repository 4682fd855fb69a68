//! Property tests of the input layer: whatever is pasted, reading never
//! panics, every reported line lies inside the input, and no line is lost.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use fabricscope::{read_all, read_bytes, ReadOptions};
use proptest::prelude::*;

/// Lines that look like pieces of real pastes, to mix with noise.
fn paste_line() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("$ ibstat".to_owned()),
        Just("[root@node07 ~]# ibstat mlx5_0 1".to_owned()),
        Just("node07: CA 'mlx5_0'".to_owned()),
        Just("CA 'mlx5_0'".to_owned()),
        Just("CA: 'mlx5_1'".to_owned()),
        Just("\tCA type: MT4123".to_owned()),
        Just("\tPort 1:".to_owned()),
        Just("\t\tState: Active".to_owned()),
        Just("\t\tRate: 200".to_owned()),
        Just("\t\tSM lid: 0".to_owned()),
        Just("ibpanic: [1] main: stat of IB device 'mlx5_8' failed".to_owned()),
        Just("```".to_owned()),
        Just("==> node08/ibstat.txt <==".to_owned()),
        Just("---------------".to_owned()),
        Just("node[01-02] (2)".to_owned()),
        Just("[exit 0]".to_owned()),
        Just("\u{1b}[4mGPU0\tGPU1\u{1b}[0m".to_owned()),
        Just(String::new()),
        "[ -~\t]{0,40}",
        any::<String>(),
    ]
}

fn paste() -> impl Strategy<Value = String> {
    (prop::collection::vec(paste_line(), 0..40), any::<bool>())
        .prop_map(|(lines, crlf)| lines.join(if crlf { "\r\n" } else { "\n" }))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn reading_never_panics_and_spans_lie_inside_the_input(text in paste()) {
        let doc = read_all(&text, &ReadOptions::default()).unwrap();
        let n = doc.line_count;
        prop_assert_eq!(n, text.lines().count());
        for s in &doc.sections {
            prop_assert!(s.span.first_line >= 1 && s.span.last_line <= n, "section {:?} outside 1..={}", s.span, n);
            for w in &s.warnings {
                prop_assert!(w.span.first_line >= 1 && w.span.last_line <= n, "warning {:?} outside 1..={}", w.span, n);
            }
        }
        for u in &doc.unrecognised {
            prop_assert!(u.span.first_line >= 1 && u.span.last_line <= n);
        }
        for w in &doc.warnings {
            prop_assert!(w.span.first_line >= 1 && w.span.last_line <= n);
        }
    }

    #[test]
    fn no_line_is_silently_dropped(text in paste()) {
        let doc = read_all(&text, &ReadOptions::default()).unwrap();
        prop_assert_eq!(doc.unaccounted_lines(&text), Vec::<usize>::new());
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        let _ = read_bytes(&bytes, &ReadOptions::default());
    }

    #[test]
    fn host_prefixes_attach_every_section_to_its_host(hosts in prop::collection::vec("node[0-9]{2}", 1..4)) {
        let mut text = String::new();
        for h in &hosts {
            text.push_str(&format!("{h}: CA 'mlx5_0'\n{h}: \tCA type: MT4123\n{h}: \tPort 1:\n{h}: \t\tState: Active\n"));
        }
        let doc = read_all(&text, &ReadOptions::default()).unwrap();
        let mut unique = hosts.clone();
        unique.dedup();
        for s in &doc.sections {
            prop_assert!(s.host.as_ref().is_some_and(|h| hosts.contains(h)), "section host {:?}", s.host);
        }
        prop_assert!(doc.unrecognised.is_empty());
    }
}

/// Found by the `input` fuzz target: a pdsh line holding only its host
/// prefix (`node03: `, a host's empty output line) was accounted nowhere.
#[test]
fn a_prefix_only_line_is_accounted_for() {
    let text = "node03: CA 'mlx5_0'\nnode03: \tCA type: MT4129\nnode03: ";
    let doc = read_all(text, &ReadOptions::default()).unwrap();
    assert_eq!(doc.unaccounted_lines(text), Vec::<usize>::new());
    assert_eq!(doc.sections.len(), 1);
}

/// `nvidia-smi` prints its own time stamp above its table: the stamp is a
/// one-line `date` section and the table a section of its own
/// (`smi_table`), instead of being swallowed as unreadable lines of the
/// date.
#[test]
fn a_time_stamp_does_not_swallow_the_text_below_it() {
    let text =
        "$ nvidia-smi\nMon Nov 30 00:10:30 2026\n+------+\n| NVIDIA-SMI 580.159.04 |\n+------+\n";
    let doc = read_all(text, &ReadOptions::default()).unwrap();
    assert_eq!(doc.sections.len(), 2);
    assert_eq!(doc.sections[0].kind.name(), "date");
    assert!(
        doc.sections[0].warnings.is_empty(),
        "{:?}",
        doc.sections[0].warnings
    );
    assert_eq!(doc.sections[0].span.last_line, 2);
    assert_eq!(doc.sections[1].kind.name(), "smi_table");
    let span = doc.sections[1].span;
    assert_eq!((span.first_line, span.last_line), (3, 5));
    assert!(doc.unrecognised.is_empty(), "{:?}", doc.unrecognised);
}
