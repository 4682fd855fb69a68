//! Properties of the kernel-log (Xid/SXid) parser: generated lines read
//! back under every prefix; every line is accounted for once (an event, an
//! other kernel message, or an unread line); a paste cut at any column of
//! its last line never yields a code it does not show whole; no text makes
//! it panic.

// Test helpers fail loudly on bad fixtures, like the tests they serve.
#![allow(clippy::panic, clippy::unwrap_used, clippy::indexing_slicing)]

use fabricscope::parse::kernel_log::parse;
use fabricscope::parse::lines_of;
use proptest::prelude::*;

/// One generated line and what it should read as.
#[derive(Debug, Clone)]
enum Gen {
    /// An Xid or SXid line: its code and bus id as the line prints them.
    Event { code: u32, bus: String },
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
        1 => (prefix().prop_filter("a prefix", |p| !p.is_empty()))
            .prop_map(|p| (format!("{p}mlx5_core 0000:ab:00.0: Port: 1 Link ACTIVE"), Gen::Other)),
        1 => Just(("NVRM: GPU at PCI:0000:86:00: GPU-5c1d".to_owned(), Gen::Other)),
        1 => Just(("what I saw yesterday".to_owned(), Gen::Foreign)),
    ]
}

proptest! {
    #[test]
    fn lines_read_back_and_each_is_accounted_for_once(lines in prop::collection::vec(line(), 1..30)) {
        let text: String = lines.iter().map(|(l, _)| format!("{l}\n")).collect();
        let p = parse(&lines_of(&text));
        let mut events = p.value.events.iter();
        for (i, (_, gen)) in lines.iter().enumerate() {
            let number = i + 1;
            let in_event = p.value.events.iter().filter(|e| e.span.contains(number)).count();
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
                Gen::Other => prop_assert_eq!(in_other, 1),
                Gen::Foreign => prop_assert_eq!(unread, 1),
            }
        }
        prop_assert!(events.next().is_none());
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
    }

    #[test]
    fn no_text_makes_it_panic(text in "(\\PC|\\[|\\]|:|\\(|\\)|Xid |NVRM: |SXid | kernel: |\n){0,80}") {
        let _ = parse(&lines_of(&text));
    }
}
