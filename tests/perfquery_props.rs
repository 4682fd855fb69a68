//! Property tests of the perfquery parser: what `render` prints, `parse`
//! reads back unchanged; arbitrary text never makes it panic.

// Test helpers may index and panic: a failed lookup is a failed test.
#![allow(clippy::panic, clippy::indexing_slicing, clippy::unwrap_used)]

use fabricscope::model::partial::PartialReason;
use fabricscope::model::perf_fields::FieldKind;
use fabricscope::model::perfquery::{PerfAttribute, PerfBlock, Perfquery};
use fabricscope::model::Counter;
use fabricscope::parse::lines_of;
use fabricscope::parse::perfquery::{parse, render};
use fabricscope::LineSpan;
use proptest::prelude::*;
use std::borrow::Cow;
use std::collections::BTreeMap;

const KNOWN: &[PerfAttribute] = &[
    PerfAttribute::PortCounters,
    PerfAttribute::PortCountersExtended,
    PerfAttribute::PortRcvErrorDetails,
    PerfAttribute::PortXmitDiscardDetails,
    PerfAttribute::PortXmitDataSl,
    PerfAttribute::PortRcvDataSl,
    PerfAttribute::PortExtendedSpeedsCounters,
    PerfAttribute::PortExtendedSpeedsCountersRsFec,
    PerfAttribute::PortSamplesControl,
    PerfAttribute::PortOpRcvCounters,
    PerfAttribute::PortFlowCtlCounters,
    PerfAttribute::PortVlOpPackets,
    PerfAttribute::PortVlOpData,
    PerfAttribute::PortVlXmitFlowCtlUpdateErrors,
    PerfAttribute::PortVlXmitWaitCounters,
    PerfAttribute::SwPortVlCongestion,
    PerfAttribute::PortRcvConCtrl,
    PerfAttribute::PortSlRcvFecn,
    PerfAttribute::PortSlRcvBecn,
    PerfAttribute::PortXmitConCtrl,
    PerfAttribute::PortVlXmitTimeCong,
];

fn attribute() -> impl Strategy<Value = PerfAttribute> {
    prop_oneof![
        4 => proptest::sample::select(KNOWN),
        1 => "[A-Z][A-Za-z0-9]{1,20}( [A-Za-z-]{1,8})?"
            .prop_map(|n| PerfAttribute::from_header_name(&n)),
    ]
}

/// A port id and the LID the parser should find in it.
fn port_id() -> impl Strategy<Value = (String, Option<u32>)> {
    prop_oneof![
        (1u32..49152).prop_map(|l| (format!("Lid {l}"), Some(l))),
        proptest::collection::vec(0u8..=36, 1..5).prop_map(|hops| {
            let path: Vec<String> = hops.iter().map(u8::to_string).collect();
            (
                format!("DR path slid 65535; dlid 65535; 0,{}", path.join(",")),
                None,
            )
        }),
        (1u32..49152, 1u32..65536).prop_map(|(l, s)| {
            (
                format!("Lid {l} DR path slid {s}; dlid 65535; 0,1"),
                Some(l),
            )
        }),
    ]
}

/// A value as libibmad would print a field of this kind.
fn printed(kind: FieldKind, seed: u64) -> Result<Counter, String> {
    match kind {
        FieldKind::Counter(bits) => {
            let max = fabricscope::model::counter::max_for_bits(bits).unwrap();
            // Hit the all-ones value often: saturation must survive the trip.
            let value = if seed % 4 == 0 {
                max
            } else {
                seed % max.saturating_add(1).max(1)
            };
            Ok(Counter::new(value, bits))
        }
        FieldKind::Hex(bits) => {
            let digits = usize::from(bits.div_ceil(8)) * 2;
            let mask = fabricscope::model::counter::max_for_bits(bits).unwrap();
            Err(format!("0x{:0digits$x}", seed & mask))
        }
        FieldKind::Number => Err((seed % 256).to_string()),
    }
}

/// Names outside every layout, with values of their own.
fn extras() -> impl Strategy<Value = (BTreeMap<String, u64>, BTreeMap<String, String>)> {
    (
        proptest::collection::btree_map("Zx[A-Za-z0-9_]{0,40}", any::<u64>(), 0..3),
        proptest::collection::btree_map(
            "Zy[A-Za-z0-9_]{0,20}",
            prop_oneof![
                "0x[0-9a-f]{1,16}",
                "[0-9]{1,3}\\.[0-9] Gbps",
                "[A-Za-z][A-Za-z ]{0,10}[a-z]"
            ],
            0..3,
        ),
    )
}

fn block() -> impl Strategy<Value = PerfBlock> {
    (
        attribute(),
        port_id(),
        proptest::option::of(0u32..=255),
        proptest::option::of(any::<u32>()),
        proptest::option::of(any::<u32>()),
        proptest::collection::vec((any::<bool>(), any::<u64>()), 0..64),
        extras(),
    )
        .prop_map(
            |(attribute, (port_id, lid), port, cap_mask, cap_mask2, picks, (xc, xf))| {
                let mut b = PerfBlock::new(attribute, port_id, LineSpan::line(1));
                b.lid = lid;
                b.port = port;
                b.all_ports = port == Some(255);
                b.cap_mask = cap_mask;
                b.cap_mask2 = cap_mask2;
                for ((name, kind), (keep, seed)) in b.attribute.field_names().zip(picks) {
                    if !keep {
                        continue;
                    }
                    match printed(kind, seed) {
                        Ok(c) => b.counters.insert(name.into_owned(), c).map(|_| ()),
                        Err(text) => b.fields.insert(name, text).map(|_| ()),
                    };
                }
                for (name, v) in xc {
                    b.counters.insert(name, Counter::unknown_width(v));
                }
                b.fields
                    .extend(xf.into_iter().map(|(name, text)| (Cow::Owned(name), text)));
                b
            },
        )
}

fn without_spans(mut p: Perfquery) -> Perfquery {
    for b in &mut p.blocks {
        b.span = LineSpan::line(1);
    }
    p
}

/// What a block rendered from `b` lacks, worked out from the layout's
/// names alone: the names after the last one it holds, up to where a part
/// that perfquery may leave out begins (perfquery.c and libibmad print
/// PortCounters' `PortXmitWait` only where the port counts it,
/// PortCountersExtended's unicast and multicast counters and its
/// additional error counters from `CounterSelect2` each whole or not at
/// all by version; every other layout whole).
fn lacks(b: &PerfBlock) -> Vec<String> {
    let names: Vec<String> = b
        .attribute
        .field_names()
        .map(|(n, _)| n.into_owned())
        .collect();
    let holds =
        |n: &String| b.counters.contains_key(n.as_str()) || b.fields.contains_key(n.as_str());
    let Some(last) = names.iter().rposition(holds) else {
        return Vec::new();
    };
    let parts: &[&str] = match b.attribute {
        PerfAttribute::PortCounters => &["PortXmitWait"],
        PerfAttribute::PortCountersExtended => &["PortUnicastXmitPkts", "CounterSelect2"],
        _ => &[],
    };
    names
        .iter()
        .skip(last + 1)
        .take_while(|n| !parts.contains(&n.as_str()))
        .cloned()
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn render_then_parse_gives_the_same_model(blocks in proptest::collection::vec(block(), 0..5)) {
        let model = Perfquery { blocks };
        let text = render(&model);
        let parsed = parse(&lines_of(&text));
        prop_assert!(parsed.warnings.is_empty(), "{:?}\n{}", parsed.warnings, text);
        let mut parsed = without_spans(parsed.value);
        // A block that stops inside a part of its layout is marked cut,
        // with what it lacks; the rest of it is the model.
        prop_assert_eq!(parsed.blocks.len(), model.blocks.len());
        for (got, want) in parsed.blocks.iter_mut().zip(&model.blocks) {
            let missing = lacks(want);
            let partial = got.partial.take();
            prop_assert_eq!(
                partial.map(|p| (p.reason, p.missing)),
                (!missing.is_empty()).then_some((PartialReason::MissingFields, missing))
            );
        }
        prop_assert_eq!(parsed, model);
    }

    #[test]
    fn arbitrary_lines_among_perfquery_lines_never_panic(
        blocks in proptest::collection::vec(block(), 1..3),
        junk in proptest::collection::vec(
            prop_oneof![
                any::<String>(),
                "#[ -~]{0,60}",
                "[A-Za-z]{1,40}:[.]{0,40}[ -~]{0,30}",
                "# [A-Za-z ]{0,30} counters: [ -~]{0,40}",
            ],
            0..20,
        ),
        positions in proptest::collection::vec(any::<prop::sample::Index>(), 0..20),
    ) {
        let rendered = render(&Perfquery { blocks });
        let mut lines: Vec<String> = rendered.lines().map(str::to_owned).collect();
        for (j, at) in junk.into_iter().zip(positions) {
            let i = at.index(lines.len() + 1);
            lines.insert(i, j);
        }
        let text = lines.join("\n");
        let line_count = text.lines().count();
        let parsed = parse(&lines_of(&text));
        for w in &parsed.warnings {
            prop_assert!(w.span.first_line >= 1 && w.span.last_line <= line_count);
        }
        let _ = fabricscope::input::read_all(&text, &Default::default());
    }
}
