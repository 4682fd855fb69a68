//! Property tests of the ibqueryerrors parser: text shaped like the tool's
//! reads back identically after a render, and arbitrary lines never make it
//! panic.

// Test helpers may index and panic: a failed lookup is a failed test.
#![allow(clippy::panic, clippy::indexing_slicing, clippy::unwrap_used)]

use fabricscope::model::ibqueryerrors::Ibqueryerrors;
use fabricscope::parse::ibqueryerrors::{parse, render};
use fabricscope::parse::lines_of;
use fabricscope::LineSpan;
use proptest::prelude::*;

const NAMES: &[&str] = &[
    "SymbolErrorCounter",
    "LinkErrorRecoveryCounter",
    "LinkDownedCounter",
    "PortRcvErrors",
    "PortXmitDiscards",
    "PortDLIDMappingErrors",
    "LocalLinkIntegrityErrors",
    "ExcessiveBufferOverrunErrors",
    "VL15Dropped",
    "PortXmitWait",
    "PortXmitData",
    "PortRcvData",
    "PortXmitPkts",
    "PortRcvPkts",
    "PortUnicastXmitPkts",
    "PortMulticastRcvPkts",
    "SomeVendorCounter",
];

fn value() -> impl Strategy<Value = u64> {
    prop_oneof![
        0u64..300,
        Just(15),
        Just(255),
        Just(65_535),
        Just(u64::from(u32::MAX)),
        any::<u64>()
    ]
}

/// ` [Name == v]` or ` [Name == v (1.234K)]`.
fn entry() -> impl Strategy<Value = String> {
    (proptest::sample::select(NAMES), value(), any::<bool>()).prop_map(|(n, v, human)| {
        if human {
            format!(" [{n} == {v} (1.234K)]")
        } else {
            format!(" [{n} == {v}]")
        }
    })
}

fn link() -> impl Strategy<Value = String> {
    let up = (
        proptest::sample::select(&["1X", "4X", "12X"][..]),
        proptest::sample::select(
            &[
                "2.5 Gbps",
                "10.0 Gbps (FDR10)",
                "25.78125 Gbps",
                "106.25 Gbps",
            ][..],
        ),
        proptest::sample::select(&["Active", "Armed", "Initialize"][..]),
    )
        .prop_map(|(w, s, st)| format!("({w:>3} {s:>18} {st:>6}/{:>8})", "LinkUp"));
    let down = proptest::sample::select(&["Polling", "Disabled", "Sleep"][..])
        .prop_map(|p| format!("(              {:>6}/{p:>8})", "Down"));
    let remote = prop_oneof![
        Just("           [  ] \"\" ( )".to_owned()),
        (
            any::<u64>(),
            1u32..49152,
            1u32..80,
            "[a-z0-9 ;:/]{0,20}",
            any::<bool>()
        )
            .prop_map(|(g, lid, port, desc, hint)| {
                let hint = if hint { "Could be 12X " } else { " " };
                format!("0x{g:016x} {lid:6} {port:4}[  ] \"{desc}\" ({hint})")
            }),
    ];
    (1u32..49152, 0u32..80, prop_oneof![up, down], remote).prop_map(|(lid, port, l, r)| {
        format!("       Link info: {lid:6}{port:4}[  ] =={l}==>  {r}")
    })
}

fn port_line() -> impl Strategy<Value = Vec<String>> {
    (
        any::<u64>(),
        prop_oneof![
            (0u32..255).prop_map(|p| p.to_string()),
            Just("ALL".to_owned())
        ],
        proptest::collection::vec(entry(), 1..8),
        proptest::option::of(link()),
    )
        .prop_map(|(g, port, entries, link)| {
            let mut lines = vec![format!("   GUID 0x{g:x} port {port}:{}", entries.concat())];
            lines.extend(link);
            lines
        })
}

fn node() -> impl Strategy<Value = Vec<String>> {
    (
        any::<bool>(),
        proptest::option::of(any::<u64>()),
        "[A-Za-z0-9;:/ _.\"-]{1,30}",
        proptest::collection::vec(port_line(), 1..4),
    )
        .prop_map(|(errors, guid, desc, ports)| {
            let what = if errors {
                "Errors for"
            } else {
                "Data Counters for"
            };
            let head = match guid {
                Some(g) => format!("{what} 0x{g:x} \"{desc}\""),
                None => format!("{what} \"{desc}\""),
            };
            std::iter::once(head)
                .chain(ports.into_iter().flatten())
                .collect()
        })
}

fn summary() -> impl Strategy<Value = Vec<String>> {
    (
        any::<u32>(),
        any::<u32>(),
        any::<u32>(),
        any::<u32>(),
        proptest::collection::vec((proptest::sample::select(NAMES), any::<u64>()), 0..4),
        0u32..5,
        proptest::collection::vec(proptest::sample::select(NAMES), 0..3),
    )
        .prop_map(|(n, bn, p, bp, thresholds, failures, suppressed)| {
            let mut lines = vec![
                String::new(),
                format!("## Summary: {n} nodes checked, {bn} bad nodes found"),
                format!("##          {p} ports checked, {bp} ports have errors beyond threshold"),
            ];
            let t: String = thresholds
                .iter()
                .map(|(k, v)| format!("[{k} = {v}]"))
                .collect();
            lines.push(format!("## Thresholds: {t}"));
            if failures > 0 {
                lines.push(format!("##          {failures} PMA query failures"));
            }
            lines.push(format!(
                "## Suppressed:{}",
                suppressed
                    .iter()
                    .map(|s| format!(" {s}"))
                    .collect::<String>()
            ));
            lines
        })
}

fn run() -> impl Strategy<Value = String> {
    (
        proptest::collection::vec(node(), 0..4),
        proptest::option::of(summary()),
    )
        .prop_map(|(nodes, summary)| {
            let mut lines: Vec<String> = nodes.into_iter().flatten().collect();
            lines.extend(summary.into_iter().flatten());
            lines.join("\n")
        })
}

fn without_spans(mut r: Ibqueryerrors) -> Ibqueryerrors {
    for n in &mut r.nodes {
        n.span = LineSpan::line(1);
        for p in &mut n.ports {
            p.span = LineSpan::line(1);
        }
    }
    r
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn what_was_read_renders_and_reads_back_the_same(text in run()) {
        let first = parse(&lines_of(&text)).value;
        let rendered = render(&first);
        let again = parse(&lines_of(&rendered));
        prop_assert!(again.warnings.is_empty(), "{:?}\n{}", again.warnings, rendered);
        prop_assert_eq!(without_spans(again.value), without_spans(first));
    }

    #[test]
    fn arbitrary_lines_never_panic(
        text in run(),
        junk in proptest::collection::vec(
            prop_oneof![
                any::<String>(),
                "   GUID [ -~]{0,60}",
                "Errors for [ -~]{0,30}",
                "##[ -~]{0,50}",
                "       Link info:[ -~]{0,80}",
            ],
            0..12,
        ),
        positions in proptest::collection::vec(any::<prop::sample::Index>(), 0..12),
    ) {
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        for (j, at) in junk.into_iter().zip(positions) {
            let i = at.index(lines.len() + 1);
            lines.insert(i, j);
        }
        let text = lines.join("\n");
        let count = text.lines().count();
        let parsed = parse(&lines_of(&text));
        for w in &parsed.warnings {
            prop_assert!(w.span.first_line >= 1 && w.span.last_line <= count);
        }
        let _ = render(&parsed.value);
        let _ = fabricscope::input::read_all(&text, &Default::default());
    }
}
