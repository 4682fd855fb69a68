//! Property tests of the MFT readers, plain `mst status` and `mlxcables`:
//! generated outputs are read whole (every device, cable and field, no
//! unread line), the work grows with the output (n copies of an entry are n
//! entries, each line read once), and arbitrary lines anywhere never make
//! them panic or lose a line.

// Test helpers: a failing case should fail loudly.
#![allow(clippy::panic, clippy::indexing_slicing, clippy::unwrap_used)]

use fabricscope::parse::lines_of;
use fabricscope::parse::{mlxcables, mst_status};
use fabricscope::{read_all, ReadOptions};
use proptest::prelude::*;

/// One plain `mst status` entry of device `n` at bus `bus`.
fn entry(n: usize, bus: u8, rev: u8) -> String {
    format!(
        "/dev/mst/mt4123_pciconf{n}         - PCI configuration cycles access.\n                                   domain:bus:dev.fn=0000:{bus:02x}:00.0 addr.reg=88 data.reg=92 cr_bar.gw_offset=-1\n                                   Chip revision is: {rev:02x}\n"
    )
}

/// Plain `mst status` with `buses.len()` devices and `cables` cables.
fn plain(buses: &[(u8, u8)], cables: usize) -> String {
    let mut s = String::from(
        "MST modules:\n------------\n    MST PCI module is not loaded\n    MST PCI configuration module loaded\n\nMST devices:\n------------\n",
    );
    for (n, (bus, rev)) in buses.iter().enumerate() {
        s.push_str(&entry(n, *bus, *rev));
    }
    if cables > 0 {
        s.push_str("\nCables:\n-------------------\n");
        for c in 0..cables {
            s.push_str(&format!("mt4123_pciconf0_cable_{c}\n\n"));
        }
    }
    s
}

/// One `mlxcables` block; `temp` in whole °C or `None` for `N/A`.
fn cable(n: usize, temp: Option<u8>, metres: u8) -> String {
    let t = temp.map_or_else(|| "N/A".to_owned(), |t| format!("{t} C"));
    format!(
        "Cable #{n}:\n---------\nCable name    : mt4123_pciconf{n}_cable_0\n>> No FW data to show\n-------- Cable EEPROM --------\nIdentifier                     : QSFP56 (11h)\nAttenuation: 2.5GHz            : 4dB\n             5.0GHz            : 6dB\nVendor                         : Mellanox\nPart number                    : MCP1650-H00{metres}AE30\nTemperature [c]                : {t}\nLength [m]                     : {metres} m\n\n"
    )
}

fn cables(specs: &[(Option<u8>, u8)]) -> String {
    let mut s = String::from("Querying Cables ....\n\n");
    for (i, (t, m)) in specs.iter().enumerate() {
        s.push_str(&cable(i + 1, *t, *m));
    }
    s
}

fn junk() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "Cable #[0-9]{1,3}:",
        "-{1,20}",
        "-------- [ -~]{0,20} --------",
        "[ -~]{0,20} : [ -~]{0,20}",
        "Attenuation: [ -~]{0,10} : [ -~]{0,6}",
        "/dev/mst/[ -~]{0,20} - [ -~]{0,30}",
        "   domain:bus:dev.fn=[ -~]{0,30}",
        "   Chip revision is: [ -~]{0,4}",
        "(Cables|MST devices|Inband devices|Cable devices):",
    ]
}

/// `text` with `junk` lines inserted at `positions`.
fn with_junk(text: &str, junk: Vec<String>, positions: Vec<prop::sample::Index>) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    for (j, at) in junk.into_iter().zip(positions) {
        let i = at.index(lines.len() + 1);
        lines.insert(i, j);
    }
    lines.join("\n")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn plain_mst_status_is_read_whole(
        buses in proptest::collection::vec((any::<u8>(), any::<u8>()), 1..12),
        n_cables in 0usize..12,
    ) {
        let text = plain(&buses, n_cables);
        let p = mst_status::parse(&lines_of(&text));
        prop_assert!(p.warnings.is_empty(), "{:?}\n{}", p.warnings, text);
        prop_assert_eq!(p.value.devices.len(), buses.len());
        prop_assert_eq!(p.value.cables.len(), n_cables);
        for (d, (bus, rev)) in p.value.devices.iter().zip(&buses) {
            let pci = format!("0000:{bus:02x}:00.0");
            let rev = format!("{rev:02x}");
            prop_assert_eq!(d.pci.as_deref(), Some(pci.as_str()));
            prop_assert_eq!(d.chip_revision.as_deref(), Some(rev.as_str()));
            prop_assert_eq!(d.span.len(), 3);
        }
    }

    #[test]
    fn mlxcables_is_read_whole(
        specs in proptest::collection::vec((proptest::option::of(0u8..120), 1u8..10), 1..10),
    ) {
        let text = cables(&specs);
        let p = mlxcables::parse(&lines_of(&text));
        prop_assert!(p.warnings.is_empty(), "{:?}\n{}", p.warnings, text);
        prop_assert_eq!(p.value.cables.len(), specs.len());
        for (c, (t, m)) in p.value.cables.iter().zip(&specs) {
            prop_assert_eq!(c.temperature_c, t.map(f64::from));
            prop_assert_eq!(c.length_m, Some(f64::from(*m)));
            prop_assert_eq!(c.attenuation.len(), 2);
        }
        // Through the whole reader: one section, nothing unaccounted.
        let doc = read_all(&text, &ReadOptions::default()).unwrap();
        prop_assert_eq!(doc.sections.len(), 1, "{:?}", doc.sections.iter().map(|s| s.kind).collect::<Vec<_>>());
        prop_assert!(doc.unaccounted_lines(&text).is_empty());
    }

    /// Linear by construction: n copies of one entry are n entries and
    /// each line is read once (no line is looked at again per entry).
    #[test]
    fn copies_are_counted_once_each(n in 1usize..200) {
        let text = plain(&vec![(0x4b, 0); n], n);
        let p = mst_status::parse(&lines_of(&text));
        prop_assert!(p.warnings.is_empty());
        prop_assert_eq!((p.value.devices.len(), p.value.cables.len()), (n, n));
        let specs = vec![(Some(40u8), 2u8); n];
        let p = mlxcables::parse(&lines_of(&cables(&specs)));
        prop_assert!(p.warnings.is_empty());
        prop_assert_eq!(p.value.cables.len(), n);
    }

    #[test]
    fn arbitrary_lines_never_panic_nor_get_lost(
        buses in proptest::collection::vec((any::<u8>(), any::<u8>()), 0..4),
        specs in proptest::collection::vec((proptest::option::of(0u8..120), 1u8..10), 0..4),
        junk in proptest::collection::vec(junk(), 0..12),
        positions in proptest::collection::vec(any::<prop::sample::Index>(), 0..12),
    ) {
        let text = with_junk(&format!("{}{}", plain(&buses, 2), cables(&specs)), junk, positions);
        let count = text.lines().count();
        for w in mst_status::parse(&lines_of(&text))
            .warnings
            .iter()
            .chain(&mlxcables::parse(&lines_of(&text)).warnings)
        {
            prop_assert!(w.span.first_line >= 1 && w.span.last_line <= count);
        }
        let _ = mst_status::summary(&mst_status::parse(&lines_of(&text)).value);
        let _ = mlxcables::summary(&mlxcables::parse(&lines_of(&text)).value);
        let doc = read_all(&text, &ReadOptions::default()).unwrap();
        prop_assert!(doc.unaccounted_lines(&text).is_empty(), "{}", text);
    }
}
