//! Property tests of the sysfs counter reader: dumps shaped like `grep -H`,
//! `head`'s banners and a shell loop's read back every file's value with
//! its PortCounters width, and no line of any input is dropped silently.

// Test helpers may index and panic: a failed lookup is a failed test.
#![allow(clippy::panic, clippy::indexing_slicing, clippy::unwrap_used)]

use fabricscope::model::perfquery::{PerfAttribute, Perfquery};
use fabricscope::parse::lines_of;
use fabricscope::parse::sysfs_counters::parse;
use fabricscope::parse::Parsed;
use proptest::prelude::*;

/// Every `counters/` file, its perfquery name and its PortCounters width
/// (0: a data or packet counter, 32 or 64 bits; 64: extended only).
const FILES: &[(&str, &str, u8)] = &[
    ("symbol_error", "SymbolErrorCounter", 16),
    ("link_error_recovery", "LinkErrorRecoveryCounter", 8),
    ("link_downed", "LinkDownedCounter", 8),
    ("port_rcv_errors", "PortRcvErrors", 16),
    (
        "port_rcv_remote_physical_errors",
        "PortRcvRemotePhysicalErrors",
        16,
    ),
    (
        "port_rcv_switch_relay_errors",
        "PortRcvSwitchRelayErrors",
        16,
    ),
    ("port_xmit_discards", "PortXmitDiscards", 16),
    ("port_xmit_constraint_errors", "PortXmitConstraintErrors", 8),
    ("port_rcv_constraint_errors", "PortRcvConstraintErrors", 8),
    ("local_link_integrity_errors", "LocalLinkIntegrityErrors", 4),
    (
        "excessive_buffer_overrun_errors",
        "ExcessiveBufferOverrunErrors",
        4,
    ),
    ("VL15_dropped", "VL15Dropped", 16),
    ("port_xmit_wait", "PortXmitWait", 32),
    ("port_xmit_data", "PortXmitData", 0),
    ("port_rcv_data", "PortRcvData", 0),
    ("port_xmit_packets", "PortXmitPkts", 0),
    ("port_rcv_packets", "PortRcvPkts", 0),
    ("unicast_xmit_packets", "PortUnicastXmitPkts", 64),
    ("multicast_rcv_packets", "PortMulticastRcvPkts", 64),
];

/// One port of a dump: device, port number, and (file index, value) pairs.
type Port = (String, u32, Vec<(usize, u64)>);

#[derive(Debug, Clone, Copy)]
enum Shape {
    GrepH,
    Head,
    Loop,
}

/// One port's files: (file index, value), each file once.
fn port_files() -> impl Strategy<Value = Vec<(usize, u64)>> {
    proptest::sample::subsequence((0..FILES.len()).collect::<Vec<_>>(), 1..FILES.len())
        .prop_flat_map(|idx| {
            let n = idx.len();
            (
                Just(idx),
                proptest::collection::vec(
                    prop_oneof![
                        0u64..300,
                        Just(15),
                        Just(255),
                        Just(65_535),
                        any::<u32>().prop_map(u64::from),
                        any::<u64>()
                    ],
                    n,
                ),
            )
                .prop_map(|(idx, values)| idx.into_iter().zip(values).collect())
        })
}

/// What the paste shows: its shape, and per port the device, port and files.
fn dump() -> impl Strategy<Value = (Shape, Vec<Port>)> {
    (
        prop_oneof![Just(Shape::GrepH), Just(Shape::Head), Just(Shape::Loop)],
        proptest::collection::vec((0u32..4, 1u32..3, port_files()), 1..4),
    )
        .prop_map(|(shape, ports)| {
            // Each (device, port) once.
            let mut seen = Vec::new();
            let ports = ports
                .into_iter()
                .filter(|(d, p, _)| {
                    let fresh = !seen.contains(&(*d, *p));
                    seen.push((*d, *p));
                    fresh
                })
                .map(|(d, p, files)| (format!("mlx5_{d}"), p, files))
                .collect();
            (shape, ports)
        })
}

fn render(shape: Shape, ports: &[Port]) -> String {
    let mut out = String::new();
    for (device, port, files) in ports {
        let dir = format!("/sys/class/infiniband/{device}/ports/{port}/counters");
        if matches!(shape, Shape::Loop) {
            out.push_str(&format!(
                "{dir}$ for file in $(find . -type f); do\n    echo \"=== $file ===\"\n    cat \"$file\"\n    echo\ndone\n"
            ));
        }
        for (i, v) in files {
            let name = FILES[*i].0;
            match shape {
                Shape::GrepH => out.push_str(&format!("{dir}/{name}:{v}\n")),
                Shape::Head => out.push_str(&format!("==> {dir}/{name} <==\n{v}\n\n")),
                Shape::Loop => out.push_str(&format!("=== ./{name} ===\n{v}\n\n")),
            }
        }
    }
    out
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

proptest! {
    #[test]
    fn every_file_reads_back_with_its_width((shape, ports) in dump()) {
        let text = render(shape, &ports);
        let parsed = parse(&lines_of(&text));
        prop_assert!(parsed.warnings.is_empty(), "{:?}\n{text}", parsed.warnings);
        for (device, port, files) in &ports {
            let blocks: Vec<_> = parsed
                .value
                .blocks
                .iter()
                .filter(|b| b.port_id == *device && b.port == Some(*port))
                .collect();
            prop_assert!(!blocks.is_empty(), "{device} port {port}\n{text}");
            prop_assert!(blocks.iter().all(|b| b.partial.is_none()));
            let extended = files.iter().any(|(i, v)| {
                FILES[*i].2 == 64 || (FILES[*i].2 == 0 && *v > u64::from(u32::MAX))
            });
            for (i, v) in files {
                let (_, name, bits) = FILES[*i];
                let (attribute, bits) = match bits {
                    0 if extended => (PerfAttribute::PortCountersExtended, 64),
                    0 => (PerfAttribute::PortCounters, 32),
                    64 => (PerfAttribute::PortCountersExtended, 64),
                    b => (PerfAttribute::PortCounters, b),
                };
                let block = blocks.iter().find(|b| b.attribute == attribute).unwrap();
                let c = block.counter(name).unwrap();
                prop_assert_eq!(c.value, *v);
                prop_assert_eq!(c.bits, bits);
            }
        }
        if !matches!(shape, Shape::Loop) {
            no_line_dropped(&text, &parsed).map_err(TestCaseError::fail)?;
        }
    }

    /// Lines of any shape near the format's (no prompt: `$` and `#` are
    /// left out, so no line is a shell command) are read or warned about,
    /// and never make the parser panic.
    #[test]
    fn no_line_is_dropped_silently(
        lines in proptest::collection::vec(
            prop_oneof![
                "[a-z_/.=<> 0-9:]{0,40}",
                (proptest::sample::select(FILES), "[0-9a-z]{0,6}")
                    .prop_map(|((f, _, _), v)| format!("mlx5_0/ports/1/counters/{f}:{v}")),
                proptest::sample::select(FILES).prop_map(|(f, _, _)| format!("=== ./{f} ===")),
                proptest::sample::select(FILES).prop_map(|(f, _, _)| format!("==> {f} <==")),
                "[0-9]{1,22}",
            ],
            0..30,
        )
    ) {
        let text = lines.join("\n");
        let parsed = parse(&lines_of(&text));
        no_line_dropped(&text, &parsed).map_err(TestCaseError::fail)?;
    }
}
