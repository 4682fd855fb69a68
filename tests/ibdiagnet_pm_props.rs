//! Property tests of the `ibdiagnet2.pm` reader: dumps of any ports and
//! counters read back every value with its perfquery name and width, a dump
//! cut anywhere keeps every whole block, and no line of any input makes the
//! parser panic or is dropped silently.

// Test helpers may index and panic: a failed lookup is a failed test.
#![allow(clippy::panic, clippy::indexing_slicing, clippy::unwrap_used)]

use fabricscope::model::perfquery::{PerfAttribute, Perfquery};
use fabricscope::parse::ibdiagnet_pm::parse;
use fabricscope::parse::lines_of;
use fabricscope::parse::Parsed;
use proptest::prelude::*;

const RULE: &str = "-------------------------------------------------------";

/// ibdiagnet's names, perfquery's, and the width (64: the extended block).
const NAMES: &[(&str, &str, u8)] = &[
    ("symbol_error_counter", "SymbolErrorCounter", 16),
    ("link_error_recovery_counter", "LinkErrorRecoveryCounter", 8),
    ("link_downed_counter", "LinkDownedCounter", 8),
    ("port_rcv_errors", "PortRcvErrors", 16),
    ("port_xmit_discard", "PortXmitDiscards", 16),
    ("local_link_integrity_errors", "LocalLinkIntegrityErrors", 4),
    (
        "excessive_buffer_overrun_errors",
        "ExcessiveBufferOverrunErrors",
        4,
    ),
    ("vl15_dropped", "VL15Dropped", 16),
    ("port_xmit_wait", "PortXmitWait", 32),
    ("port_xmit_data", "PortXmitData", 32),
    ("port_rcv_pkts", "PortRcvPkts", 32),
    ("port_xmit_data_extended", "PortXmitData", 64),
    ("port_unicast_rcv_pkts", "PortUnicastRcvPkts", 64),
    ("symbol_error_counter_extended", "SymbolErrorCounter", 64),
    ("port_rcv_errors_extended", "PortRcvErrors", 64),
    ("port_xmit_wait_extended", "PortXmitWait", 64),
];

/// One port: number, LID, GUID low bits, and (name index, value, in hex).
type Port = (u32, u32, u32, Vec<(usize, u64, bool)>);

fn value(bits: u8) -> BoxedStrategy<u64> {
    let max = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    prop_oneof![0u64..300, Just(max), 0..=max].boxed()
}

/// The same counters for every port, as ibdiagnet prints them.
fn dump() -> impl Strategy<Value = Vec<Port>> {
    proptest::sample::subsequence((0..NAMES.len()).collect::<Vec<_>>(), 1..NAMES.len())
        .prop_flat_map(|names| {
            let port = (
                1u32..40,
                1u32..0xc000,
                any::<u32>(),
                names
                    .iter()
                    .map(|&i| (Just(i), value(NAMES[i].2), any::<bool>()))
                    .collect::<Vec<_>>(),
            );
            proptest::collection::vec(port, 1..5)
        })
        .prop_map(|ports| {
            // Each port once.
            let mut seen = Vec::new();
            ports
                .into_iter()
                .filter(|(p, _, g, _)| {
                    let fresh = !seen.contains(&(*p, *g));
                    seen.push((*p, *g));
                    fresh
                })
                .collect()
        })
}

fn guid(low: u32) -> String {
    format!("0x7cfe9003{low:08x}")
}

/// The dump, and the line (1-based) of each port's closing rule.
fn render(ports: &[Port]) -> (String, Vec<usize>) {
    let mut out = String::new();
    let mut ends = Vec::new();
    let push = |out: &mut String, text: &str| {
        out.push_str(text);
        out.push('\n');
    };
    for (port, lid, low, counters) in ports {
        push(&mut out, RULE);
        push(
            &mut out,
            &format!(
                "Port={port} Lid=0x{lid:04x} GUID={} Device=4123 Port Name=node{low}/U1/HCA-1/P{port}",
                guid(*low)
            ),
        );
        push(&mut out, RULE);
        for (i, v, hex) in counters {
            let text = if *hex {
                format!("{}=0x{v:016x}", NAMES[*i].0)
            } else {
                format!("{}={v}", NAMES[*i].0)
            };
            push(&mut out, &text);
        }
        // The next port's rule, or the closing one, ends the block.
        ends.push(out.matches('\n').count() + 1);
    }
    push(&mut out, RULE);
    (out, ends)
}

/// Whether every non-blank line is in a block or in a warning.
fn no_line_dropped(text: &str, parsed: &Parsed<Perfquery>) -> Result<(), String> {
    for line in lines_of(text).iter().filter(|l| !l.is_blank()) {
        let n = line.number;
        let in_block = parsed.value.blocks.iter().any(|b| b.span.contains(n));
        let warned = parsed.warnings.iter().any(|w| w.span.contains(n));
        if !in_block && !warned {
            return Err(format!(
                "line {n} `{}` neither read nor warned about",
                line.text()
            ));
        }
    }
    Ok(())
}

/// Whether `port`'s counters read back from `parsed`, whole.
fn reads_back(parsed: &Parsed<Perfquery>, port: &Port) -> Result<(), String> {
    let (number, lid, low, counters) = port;
    let blocks: Vec<_> = parsed
        .value
        .blocks
        .iter()
        .filter(|b| {
            b.port == Some(*number)
                && b.lid == Some(*lid)
                && b.fields.get("GUID") == Some(&guid(*low))
        })
        .collect();
    if blocks.is_empty() || blocks.iter().any(|b| b.partial.is_some()) {
        return Err(format!("port {number} lid {lid}: {blocks:?}"));
    }
    for (i, v, _) in counters {
        let (_, name, bits) = NAMES[*i];
        let attribute = if bits == 64 {
            PerfAttribute::PortCountersExtended
        } else {
            PerfAttribute::PortCounters
        };
        let c = blocks
            .iter()
            .find(|b| b.attribute == attribute)
            .and_then(|b| b.counter(name))
            .ok_or_else(|| format!("port {number}: {name} not read"))?;
        if (c.value, c.bits) != (*v, bits) {
            return Err(format!("port {number}: {name} = {c:?}, want {v} ({bits})"));
        }
    }
    Ok(())
}

proptest! {
    #[test]
    fn every_counter_reads_back_with_its_width(ports in dump()) {
        let (text, _) = render(&ports);
        let parsed = parse(&lines_of(&text));
        prop_assert!(parsed.warnings.is_empty(), "{:?}\n{text}", parsed.warnings);
        for port in &ports {
            reads_back(&parsed, port).map_err(TestCaseError::fail)?;
        }
        no_line_dropped(&text, &parsed).map_err(TestCaseError::fail)?;
    }

    /// A dump cut at any byte keeps every block whose closing rule it
    /// holds, whole, and drops no line it holds.
    #[test]
    fn a_cut_dump_keeps_every_whole_block(ports in dump(), at in any::<prop::sample::Index>()) {
        let (text, ends) = render(&ports);
        let mut cut = at.index(text.len() + 1);
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        let text = &text[..cut];
        let parsed = parse(&lines_of(text));
        let whole_lines = text.matches('\n').count();
        for (port, end) in ports.iter().zip(&ends) {
            if *end <= whole_lines {
                reads_back(&parsed, port).map_err(TestCaseError::fail)?;
            }
        }
        no_line_dropped(text, &parsed).map_err(TestCaseError::fail)?;
    }

    /// Lines of any shape near the format's never make the parser panic,
    /// and each is read or warned about.
    #[test]
    fn no_line_is_dropped_silently(
        lines in proptest::collection::vec(
            prop_oneof![
                "[a-zA-Z_=x0-9 /-]{0,40}",
                Just(RULE.to_owned()),
                (1u32..99, "[0-9a-fx]{0,6}", "[a-zA-Z0-9/ =]{0,12}")
                    .prop_map(|(p, l, n)| format!("Port={p} Lid={l} GUID=0x1 Device=1 Port Name={n}")),
                (proptest::sample::select(NAMES), "[0-9a-fx]{0,20}")
                    .prop_map(|((n, _, _), v)| format!("{n}={v}")),
            ],
            0..30,
        )
    ) {
        let text = lines.join("\n");
        let parsed = parse(&lines_of(&text));
        no_line_dropped(&text, &parsed).map_err(TestCaseError::fail)?;
    }
}
