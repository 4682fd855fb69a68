//! Properties of the kernel-log (Xid/SXid, adapter) parser: generated
//! lines read back under every prefix; every line is accounted for once
//! (an event, an other kernel message, or an unread line); a paste cut at
//! any column of its last line never yields a code, a link state, a module
//! status or PCIe figures it does not show whole; no text makes it panic.

// Test helpers fail loudly on bad fixtures, like the tests they serve.
#![allow(clippy::panic, clippy::unwrap_used, clippy::indexing_slicing)]

use fabricscope::model::kernel_log::{NicWhat, PcieBandwidth};
use fabricscope::parse::kernel_log::parse;
use fabricscope::parse::lines_of;
use proptest::prelude::*;

/// One generated line and what it should read as.
#[derive(Debug, Clone)]
enum Gen {
    /// An Xid or SXid line: its code and bus id as the line prints them.
    Event { code: u32, bus: String },
    /// An adapter's link, module or PCIe line: its address and what it says.
    Nic { pci: String, what: NicWhat },
    /// Another kernel message.
    Other,
    /// A line that is no kernel log's.
    Foreign,
}

fn prefix() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        (0u32..100_000, 0u32..1_000_000).prop_map(|(s, us)| format!("[{s:>5}.{us:06}] ")),
        (1u32..29, 0u32..24).prop_map(|(d, h)| format!("[Mon Dec {d:>2} {h:02}:00:00 2026] ")),
        (1u32..29, prop::sample::select(vec!["gpu01", "node-7"]))
            .prop_map(|(d, host)| format!("Dec {d:02} 10:00:00 {host} kernel: ")),
        Just("2026-12-07T10:00:00.123456+00:00 gpu01 kernel: ".to_owned()),
        Just("kern  :err   : 2026-12-07T10:00:00,123456+00:00 ".to_owned()),
        (
            0u32..24,
            prop::sample::select(vec!["Mon", "Tue", "Wed", "Sun"])
        )
            .prop_map(|(h, d)| format!("{d} 2026-12-07 {h:02}:00:01 UTC gpu01 kernel: ")),
        (
            1u32..29,
            prop::sample::select(vec!["NOTICE", "INFO", "ERR"])
        )
            .prop_map(|(d, l)| format!("Dec {d:>2} 10:00:00.123456 leaf01 {l} kernel: [ 51.5] ")),
        Just("Thu Dec 10 10:00:00 2026 kern.warn kernel: [ 7.25] ".to_owned()),
        Just("Dec 07 10:00:00 node-7 kern.info kernel: ".to_owned()),
    ]
}

fn line() -> impl Strategy<Value = (String, Gen)> {
    let event = (
        prefix(),
        0u32..0x100,
        1u32..200,
        prop::bool::ANY,
        prop::bool::ANY,
    )
        .prop_map(|(p, bus, code, switch, pid)| {
            if switch {
                let bus = format!("0000:{bus:02x}:00.0");
                (
                    format!("{p}nvidia-nvswitch1: SXid (PCI:{bus}): {code}, Non-fatal, Link 3 x"),
                    Gen::Event { code, bus },
                )
            } else {
                let bus = format!("0000:{bus:02x}:00");
                let middle = if pid { "pid=12, name=python3, " } else { "" };
                (
                    format!("{p}NVRM: Xid (PCI:{bus}): {code}, {middle}Some text."),
                    Gen::Event { code, bus },
                )
            }
        });
    prop_oneof![
        4 => event,
        3 => nic(),
        1 => (prefix().prop_filter("a prefix", |p| !p.is_empty()))
            .prop_map(|p| (format!("{p}mlx5_core 0000:ab:00.0: firmware version: 28.39.1002"), Gen::Other)),
        1 => Just(("NVRM: GPU at PCI:0000:86:00: GPU-5c1d".to_owned(), Gen::Other)),
        1 => Just(("what I saw yesterday".to_owned(), Gen::Foreign)),
        // User space's line of another facility: another message,
        // whatever it says.
        1 => prop::sample::select(vec![
            "user  :warn  : [ 813.0] x.sh: mlx5_core 0000:ab:00.0 ib0: Link down",
            "<14>[ 813.0] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=x, y",
            "Dec 07 10:00:00 gpu01 daemon.info kernel: mlx5_core 0000:ab:00.0 ib0: Link up",
        ])
        .prop_map(|l| (l.to_owned(), Gen::Other)),
    ]
}

/// What an adapter's line says, and its text after the address.
fn nic_what() -> impl Strategy<Value = (String, NicWhat)> {
    // `ACTIVE_DEFER` is left out: cut after `ACTIVE` it reads as `ACTIVE`,
    // a state as much up as it.
    let state = prop::sample::select(vec!["DOWN", "INIT", "ARMED", "ACTIVE"]);
    let reason = prop::sample::select(vec![
        "Power budget exceeded",
        "High Temperature",
        "Bus stuck(I2C or data shorted)",
        "Bad or shorted cable/module",
    ]);
    prop_oneof![
        prop::bool::ANY.prop_map(|up| (
            format!(" enp41s0f0np0: Link {}", if up { "up" } else { "down" }),
            NicWhat::Carrier { up }
        )),
        (1u32..3, state).prop_map(|(port, state)| (
            format!(" mlx5_1: Port: {port} Link {state}"),
            NicWhat::PortState { port, state: state.to_owned() }
        )),
        (0u32..40, prop::bool::ANY).prop_map(|(module, plugged)| {
            let status = if plugged { "Cable plugged" } else { "Cable unplugged" };
            (
                format!(": Port module event: module {module}, {status}"),
                NicWhat::Module { module, status: status.to_owned(), error: None },
            )
        }),
        (0u32..40, reason).prop_map(|(module, reason)| (
            format!(": mlx5_port_module_event:1131:(pid 0): Port module event[error]: module {module}, Cable error, {reason}"),
            NicWhat::Module {
                module,
                status: "Cable error".to_owned(),
                error: Some(reason.to_owned()),
            }
        )),
        (prop::sample::select(vec![1u32, 2, 4, 8]), 0u32..0x100).prop_map(|(width, up)| (
            format!(": {:.3} Gb/s available PCIe bandwidth, limited by 16.0 GT/s PCIe x{width} link at 0000:{up:02x}:01.0 (capable of 252.048 Gb/s with 16.0 GT/s PCIe x16 link)", 15.754 * f64::from(width)),
            NicWhat::PcieBandwidth(PcieBandwidth {
                available_gbps: format!("{:.3}", 15.754 * f64::from(width)).parse().unwrap(),
                speed: "16.0 GT/s".to_owned(),
                width,
                limited_at: Some(format!("0000:{up:02x}:01.0")),
                capable_gbps: Some(252.048),
                capable_speed: Some("16.0 GT/s".to_owned()),
                capable_width: Some(16),
            })
        )),
    ]
}

fn nic() -> impl Strategy<Value = (String, Gen)> {
    (prefix(), 0u32..0x100, nic_what()).prop_map(|(p, bus, (text, what))| {
        let pci = format!("0000:{bus:02x}:00.1");
        (format!("{p}mlx5_core {pci}{text}"), Gen::Nic { pci, what })
    })
}

proptest! {
    #[test]
    fn lines_read_back_and_each_is_accounted_for_once(lines in prop::collection::vec(line(), 1..30)) {
        let text: String = lines.iter().map(|(l, _)| format!("{l}\n")).collect();
        let p = parse(&lines_of(&text));
        let mut events = p.value.events.iter();
        let mut nics = p.value.nic_events.iter();
        for (i, (_, gen)) in lines.iter().enumerate() {
            let number = i + 1;
            let in_event = p.value.events.iter().filter(|e| e.span.contains(number)).count()
                + p.value.nic_events.iter().filter(|e| e.span.contains(number)).count();
            let in_other = p.value.other_messages.iter().filter(|s| s.contains(number)).count();
            let unread = p.warnings.iter().filter(|w| w.span.contains(number)).count();
            prop_assert_eq!(in_event + in_other + unread, 1, "line {}", number);
            match gen {
                Gen::Event { code, bus } => {
                    let e = events.next().unwrap();
                    prop_assert_eq!(e.span.first_line, number);
                    prop_assert_eq!(e.code, Some(*code));
                    prop_assert_eq!(e.bus_id.as_deref(), Some(bus.as_str()));
                }
                Gen::Nic { pci, what } => {
                    let e = nics.next().unwrap();
                    prop_assert_eq!(e.span.first_line, number);
                    prop_assert_eq!(e.pci.as_deref(), Some(pci.as_str()));
                    prop_assert_eq!(e.what.as_ref(), Some(what));
                }
                Gen::Other => prop_assert_eq!(in_other, 1),
                Gen::Foreign => prop_assert_eq!(unread, 1),
            }
        }
        prop_assert!(events.next().is_none());
        prop_assert!(nics.next().is_none());
    }

    #[test]
    fn a_line_cut_anywhere_shows_no_code_it_does_not_hold_whole(
        (text, gen) in line(),
        at in 0usize..200,
    ) {
        let cut = text.get(..at.min(text.len())).unwrap_or(&text);
        let p = parse(&lines_of(cut));
        if let (Gen::Event { code, .. }, Some(e)) = (&gen, p.value.events.first()) {
            if let Some(read) = e.code {
                prop_assert_eq!(read, *code, "{:?}", cut);
            } else {
                prop_assert!(e.partial.is_some());
            }
        }
        if let (Gen::Nic { what, .. }, Some(e)) = (&gen, p.value.nic_events.first()) {
            match &e.what {
                Some(read) => prop_assert_eq!(read, what, "{:?}", cut),
                None => prop_assert!(e.partial.is_some(), "{:?}", cut),
            }
        }
    }

    #[test]
    fn no_text_makes_it_panic(text in "(\\PC|\\[|\\]|:|\\(|\\)|Xid |NVRM: |SXid | kernel: |mlx5_core |0000:3b:00.0| Link |Port: |Port module event| Gb/s available PCIe bandwidth|\n){0,80}") {
        let _ = parse(&lines_of(&text));
    }
}
