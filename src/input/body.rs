//! Body lines: lines that continue an open section and cannot begin any
//! block, so that the sectioner need not run every format's detector on
//! them.
//!
//! Detection looks at every non-blank line, because any line may begin a
//! block of some format. Inside a perfquery or `nvidia-smi nvlink` section,
//! nearly every line is one of that tool's counter lines, and every detector
//! answers the same thing there: no block begins (or, for perfquery's
//! headless fields and nvlink's headless `-s` links, a block of the open
//! format keyed by its own line number, which only continues the section
//! and whose key no later line can repeat). A body line is therefore added
//! to the open section without asking: same sections, one shape test per
//! line instead of a dozen detectors.
//!
//! The shapes are deliberately narrow. Each is written so that the first
//! tests of every detector refuse it (see the notes on each), and the
//! `body_lines_*` tests of the splitter check the claim two ways: on every
//! line of every fixture and corpus file, detection run anyway at each body
//! line finds nothing that would change the document, and the documents
//! read with and without the shortcut are equal.

use crate::parse::Kind;

/// Whether `text` is a body line of an open section of `kind`: it continues
/// that section, and full detection would not begin a block there.
pub(super) fn continues(kind: Kind, text: &str) -> bool {
    match kind {
        Kind::Perfquery => perfquery_field(text),
        Kind::Nvlink => nvlink_link(text),
        Kind::Ibstat => ibstat_field(text),
        Kind::TopoMatrix => topo_row(text),
        // An NCCL line: its detector keys each line by its number, so it
        // only ever continues the section (no other detector reads a line
        // holding ` NCCL ` after a `host:pid:tid [dev]` prefix).
        Kind::NcclLog => crate::parse::nccl_log::is_nccl_line(text),
        _ => false,
    }
}

/// `text` after its leading spaces and tabs, found byte by byte (the
/// generic `trim_start_matches` with a set of chars decodes characters).
fn after_indent(text: &str) -> &str {
    let indent = text
        .bytes()
        .position(|b| b != b' ' && b != b'\t')
        .unwrap_or(text.len());
    text.get(indent..).unwrap_or_default()
}

/// perfquery's `PortXmitData:...............1234`: optional indentation, a
/// name of ASCII letters and digits starting with a capital, a colon, one
/// or more dots, and a value of letters and digits ending the line.
///
/// Why no detector begins a block at it: it holds no white space, one
/// colon and no `'`, `"`, `#`, `|`, `+`, `<`, `=`, `(`, `[` or `_`, so
/// every detector that wants a space (`CA '…'`, `GPU 0:`, `Link 0:`,
/// `Port 1:`, `Errors for`, `… Info`), a quote, a table rule, a markup or
/// comment byte, a clock (`12:30:05`, two colons) or nvidia-smi's padded
/// `Key : value` refuses it; ibv_devinfo's and ibstat's list names are
/// lower case. Two detectors read plain `Name:` lines and are kept out by
/// name: smi_query's `Timestamp:` (with `Driver Version` under it) and
/// topo's header-less rows, whose first word starts `GPU` or `NIC` (or
/// holds `_`, excluded above). perfquery's own detector finds only its
/// line-keyed header-less fields here.
fn perfquery_field(text: &str) -> bool {
    perfquery_field_parts(text).is_some()
}

/// The name and value of a [`perfquery_field`] line (`PortXmitData` and
/// `1234`), or `None` for any other line: a perfquery section's streamed
/// parser reads the field from them, without scanning the line again.
pub(super) fn perfquery_field_parts(text: &str) -> Option<(&str, &str)> {
    let t = after_indent(text);
    let bytes = t.as_bytes();
    let name_len = crate::parse::text::alphanumeric_run(bytes, None);
    let (name, rest) = bytes.split_at(name_len);
    if !name.first().is_some_and(u8::is_ascii_uppercase)
        || name.starts_with(b"GPU")
        || name.starts_with(b"NIC")
        || name == b"Timestamp"
    {
        return None;
    }
    let rest = rest.strip_prefix(b":")?;
    let dots = crate::parse::text::leading_count(rest, b'.');
    let value = rest.get(dots..).unwrap_or_default();
    if dots == 0
        || value.is_empty()
        || crate::parse::text::alphanumeric_run(value, None) != value.len()
    {
        return None;
    }
    // The name and the value are ASCII, so both cuts are on characters.
    Some((t.get(..name_len)?, t.get(name_len + 1 + dots..)?))
}

/// What follows `Link N: ` on an indented line, or `None` for any other
/// line: the part of a header-less `-s` link line [`nvlink_link`] judges.
fn link_payload(text: &str) -> Option<&[u8]> {
    let rest = after_indent(text).strip_prefix("Link ")?.as_bytes();
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 {
        return None;
    }
    rest.get(digits..)?.strip_prefix(b": ")
}

/// nvidia-smi's `Link 3: Replay Errors: 0`, `Link 0: Data Tx: 5842 KiB`,
/// `Link 5: 26.562 GB/s`, `Link 4: <inactive>`: optional indentation,
/// `Link`, a space, a link number, a colon and a space, then letters,
/// digits, spaces and `. / < > - _`, with any further colon followed by a
/// space.
///
/// Why no detector begins a block at it: every detector whose first byte
/// may be `L` wants another opening (`GPU `, `CA '…'`, `Port N:`, a
/// device name with a number right after its letters, a title ending
/// ` Info`, a dotted `Name:...`, a devinfo label, a lower-case HCA name) or
/// nvidia-smi's padded `Key : value`; a colon followed by a space cannot
/// be part of a `12:30:05` clock; without `|`, `(`, `=`, `'` or `#` no
/// table, port arrow, quote or comment matches. nvlink's own detector finds
/// only its line-keyed header-less `-s` links here.
fn nvlink_link(text: &str) -> bool {
    let Some(rest) = link_payload(text) else {
        return false;
    };
    // Each colon must be followed by a space: the bytes after the colons
    // are checked apart, so the scan of the rest is one table test a byte
    // (one fold testing both, carrying three values a byte, cost more).
    all_in(LINK_PAYLOAD, rest) && colons_spaced(rest)
}

/// Whether every `:` of `bytes` is followed by a space, tested eight
/// bytes a word: a colon's mark shifted one byte up must meet a space's.
/// Words overlap by a byte (each starts seven after the last, and the last
/// ends at the end), so every byte but the last is tested with the one
/// after it; the last must not be a colon. A search byte by byte for the
/// colons was seven instructions a byte, the largest part of the test of
/// every `nvidia-smi nvlink` line.
fn colons_spaced(bytes: &[u8]) -> bool {
    let Some(&last) = bytes.last() else {
        return true;
    };
    if last == b':' {
        return false;
    }
    if bytes.len() < 8 {
        return bytes
            .windows(2)
            .all(|pair| pair.first() != Some(&b':') || pair.get(1) == Some(&b' '));
    }
    let word_at = |i: usize| {
        bytes
            .get(i..i + 8)
            .and_then(|w| <[u8; 8]>::try_from(w).ok())
            .map_or(0, u64::from_le_bytes)
    };
    // Little-endian: the byte after byte k is the next byte up.
    let spaced = |word: u64| (bytes_equal(word, b':') << 8) & !bytes_equal(word, b' ') == 0;
    let mut at = 0;
    while at + 8 < bytes.len() {
        if !spaced(word_at(at)) {
            return false;
        }
        at += 7;
    }
    spaced(word_at(bytes.len() - 8))
}

/// The high bit of each byte of `word` that equals `byte`, and no other
/// bit: exact per byte (no borrow runs from one byte into the next, as in
/// the shorter `has_zero` trick).
fn bytes_equal(word: u64, byte: u8) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let x = word ^ (0x0101_0101_0101_0101 * u64::from(byte));
    !(((x & LOW7) + LOW7) | x | LOW7)
}

/// The labels of ibstat's CA and port fields that [`ibstat_field`] takes
/// (`Link layer` is left out: nvlink's detector reads `Link …` lines): the
/// tests' list, which [`is_ibstat_label`] matches.
#[cfg(test)]
const IBSTAT_LABELS: &[&str] = &[
    "CA type",
    "Number of ports",
    "Firmware version",
    "Hardware version",
    "Node GUID",
    "System image GUID",
    "State",
    "Physical state",
    "Rate",
    "Base lid",
    "LMC",
    "SM lid",
    "Capability mask",
    "Port GUID",
];

/// Whether `label` is one of ibstat's CA and port field labels that
/// [`ibstat_field`] takes (`Link layer` is left out: nvlink's detector
/// reads `Link …` lines). A `match`, which the compiler turns into a test
/// of the length and then at most a compare or two, where a search of the
/// list compared each label in turn on every body line.
fn is_ibstat_label(label: &str) -> bool {
    matches!(
        label,
        "CA type"
            | "Number of ports"
            | "Firmware version"
            | "Hardware version"
            | "Node GUID"
            | "System image GUID"
            | "State"
            | "Physical state"
            | "Rate"
            | "Base lid"
            | "LMC"
            | "SM lid"
            | "Capability mask"
            | "Port GUID"
    )
}

/// ibstat's indented `\t\tState: Active`, `\tFirmware version: 28.39.1002`
/// (a label [`is_ibstat_label`] takes, a colon, a space, a value of letters,
/// digits, spaces, `.` and `-`, not starting `ib`), or its `\tPort 1:`.
///
/// Why no detector begins a block at it: the labels are none of the
/// openings detectors want (`CA '…'`, `CA: `, `GPU `, `Link `,
/// `Timestamp`, `Errors for`, a devinfo label, an HCA name, a device name
/// with a number after its letters, a title ending ` Info`), none is
/// nvidia-smi's padded `Key : value` or perfquery's dotted field, the only
/// colon is followed by a space (no clock), and no `|`, `'`, `#`, `(`, `=`
/// or `<` appears. A value starting `ib` could be read as a tool message
/// (`Rate: ibwarn`). ibstat's own detector finds only its line-keyed
/// header-less `Port N:` here.
fn ibstat_field(text: &str) -> bool {
    let t = after_indent(text);
    if let Some(number) = t.strip_prefix("Port ").and_then(|r| r.strip_suffix(':')) {
        return !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit());
    }
    // The label ends at the first colon, which must be followed by a
    // space (no label holds a colon): found byte by byte, without a
    // substring searcher per line.
    let Some(colon) = t.bytes().position(|b| b == b':') else {
        return false;
    };
    let (Some(label), Some(value)) = (t.get(..colon), t.get(colon + 1..)) else {
        return false;
    };
    let Some(value) = value.strip_prefix(' ') else {
        return false;
    };
    is_ibstat_label(label)
        && !value.is_empty()
        && !value.starts_with("ib")
        && all_in(IBSTAT_VALUE, value.as_bytes())
}

/// `nvidia-smi topo -m`'s rows, `GPU0\t X \tNV18\t…\tPIX\t0-55,112-167\t0\t\tN/A`
/// and `NIC3\tNODE\t…\tSYS`: `GPU` or `NIC` and a number at column 0, a
/// tab, then only letters, digits, spaces, tabs, `,`, `-` and `/`.
///
/// Why no detector begins a block at it: it holds no colon, so none of the
/// `GPU 0:`, `Name: value`, `Key : value`, dotted-field, devinfo-label or
/// clock detectors matches; the device word is followed by a tab, not
/// nvidia-smi's `GPU 0`; and without `|`, `+`, `'`, `"`, `#`, `(`, `=`,
/// `<`, `.` or `_` no table, quote, comment, port arrow or HCA name does.
/// The header starts with a tab and the legend holds `=` or `:`, so
/// neither is a body line. topo's own detector finds only its line-keyed
/// header-less row here, which continues the matrix; the P2P matrix's
/// detector takes the row for a link matrix's and refuses it.
fn topo_row(text: &str) -> bool {
    let t = text.as_bytes();
    if !(t.starts_with(b"GPU") || t.starts_with(b"NIC")) {
        return false;
    }
    let rest = t.get(3..).unwrap_or_default();
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || rest.get(digits) != Some(&b'\t') {
        return false;
    }
    all_in(TOPO_ROW, rest.get(digits..).unwrap_or_default())
}

/// Sets of bytes, one bit each in a table indexed by byte: the body-line
/// shapes test every byte of nearly every line of a dump against a set,
/// and a table look-up is one load where the chains of comparisons were
/// several compares and branches a byte.
const ALNUM: u8 = 1;
/// [`nvlink_link`]'s payload: letters, digits, space, `: . / < > - _`.
const LINK_PAYLOAD: u8 = 2;
/// [`ibstat_field`]'s value: letters, digits, space, `.` and `-`.
const IBSTAT_VALUE: u8 = 4;
/// [`topo_row`]'s cells: letters, digits, tab, space, `,`, `-` and `/`.
const TOPO_ROW: u8 = 8;

/// The sets each byte is in.
const SETS: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut rest: &mut [u8] = &mut table;
    let mut byte: u8 = 0;
    while let [slot, tail @ ..] = rest {
        let alnum = byte.is_ascii_alphanumeric();
        let mut sets = 0;
        if alnum {
            sets |= ALNUM;
        }
        if alnum || matches!(byte, b':' | b' ' | b'.' | b'/' | b'<' | b'>' | b'-' | b'_') {
            sets |= LINK_PAYLOAD;
        }
        if alnum || matches!(byte, b' ' | b'.' | b'-') {
            sets |= IBSTAT_VALUE;
        }
        if alnum || matches!(byte, b'\t' | b' ' | b',' | b'-' | b'/') {
            sets |= TOPO_ROW;
        }
        *slot = sets;
        byte = byte.wrapping_add(1);
        rest = tail;
    }
    table
};

/// The sets `byte` is in.
#[inline]
fn sets_of(byte: u8) -> u8 {
    SETS.get(usize::from(byte)).copied().unwrap_or(0)
}

/// Whether every byte of `bytes` is in `set`: the sets of all the bytes
/// and-ed together, without a branch a byte.
fn all_in(set: u8, bytes: &[u8]) -> bool {
    bytes.iter().fold(set, |acc, &b| acc & sets_of(b)) & set != 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The `match` takes exactly the listed labels: each, and each one
    /// byte short, one byte longer, or with a byte changed.
    #[test]
    fn ibstat_label_match_takes_the_list() {
        for label in IBSTAT_LABELS {
            assert!(is_ibstat_label(label), "{label}");
            let mut variants = vec![
                label[..label.len() - 1].to_owned(),
                format!("{label} "),
                format!(" {label}"),
                label.to_lowercase(),
            ];
            for i in 0..label.len() {
                let mut bytes = label.as_bytes().to_vec();
                bytes[i] ^= 1;
                variants.push(String::from_utf8(bytes).unwrap_or_default());
            }
            for v in variants {
                assert_eq!(
                    is_ibstat_label(&v),
                    IBSTAT_LABELS.contains(&v.as_str()),
                    "{v:?}"
                );
            }
        }
        assert!(!is_ibstat_label("Link layer"));
        assert!(!is_ibstat_label(""));
    }

    /// The shapes as written before the byte-set table: comparisons byte
    /// by byte, the oracle of the table-driven tests.
    mod by_comparisons {
        use super::super::{after_indent, IBSTAT_LABELS};

        pub(super) fn perfquery_field(text: &str) -> bool {
            let t = after_indent(text).as_bytes();
            let name_len = t
                .iter()
                .position(|b| !b.is_ascii_alphanumeric())
                .unwrap_or(t.len());
            let (name, rest) = t.split_at(name_len);
            if !name.first().is_some_and(u8::is_ascii_uppercase)
                || name.starts_with(b"GPU")
                || name.starts_with(b"NIC")
                || name == b"Timestamp"
            {
                return false;
            }
            let Some(rest) = rest.strip_prefix(b":") else {
                return false;
            };
            let dots = rest.iter().take_while(|&&b| b == b'.').count();
            let value = rest.get(dots..).unwrap_or_default();
            dots > 0 && !value.is_empty() && value.iter().all(u8::is_ascii_alphanumeric)
        }

        pub(super) fn nvlink_link(text: &str) -> bool {
            let Some(rest) = super::super::link_payload(text) else {
                return false;
            };
            rest.iter().enumerate().all(|(i, &b)| match b {
                b':' => rest.get(i + 1) == Some(&b' '),
                b' ' | b'.' | b'/' | b'<' | b'>' | b'-' | b'_' => true,
                b => b.is_ascii_alphanumeric(),
            })
        }

        pub(super) fn ibstat_field(text: &str) -> bool {
            let t = after_indent(text);
            if let Some(number) = t.strip_prefix("Port ").and_then(|r| r.strip_suffix(':')) {
                return !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit());
            }
            let Some((label, value)) = t.split_once(':') else {
                return false;
            };
            let Some(value) = value.strip_prefix(' ') else {
                return false;
            };
            IBSTAT_LABELS.contains(&label)
                && !value.is_empty()
                && !value.starts_with("ib")
                && value
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b' ' | b'.' | b'-'))
        }

        pub(super) fn topo_row(text: &str) -> bool {
            let t = text.as_bytes();
            if !(t.starts_with(b"GPU") || t.starts_with(b"NIC")) {
                return false;
            }
            let rest = t.get(3..).unwrap_or_default();
            let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
            if digits == 0 || rest.get(digits) != Some(&b'\t') {
                return false;
            }
            rest.iter().skip(digits).all(|&b| {
                b.is_ascii_alphanumeric() || matches!(b, b'\t' | b' ' | b',' | b'-' | b'/')
            })
        }
    }

    /// Openings of the four shapes, for the generated lines below.
    fn opening() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            "",
            "\t ",
            "  ",
            "Link ",
            "\t Link 1",
            "Link 12: ",
            "PortXmitData:",
            "Port",
            "GPU",
            "NIC3",
            "GPU0\t",
            "\t\tState: ",
            "\tCA type: ",
            "\tPort 1",
            "Timestamp:",
            "ib",
        ])
    }

    proptest! {
        /// Every line an nvlink section's streamed parser reads at once
        /// (`split::Streamed`: the fast path) is a body line of nvlink:
        /// the sectioner skips detection there as it does at body lines.
        #[test]
        fn lines_the_nvlink_stream_takes_are_body_lines(
            t in "[ \t]{0,3}(Link|Lin|Link  )[ ]?[0-9]{0,11}(: |:|, |,)?(Replay Errors|CRC Errors|Data Tx|Raw Rx|Rx0|Remote Device|Low Power Mode|P2P is supported|x|[A-Za-z0-9 :_.<>\t]{0,6})?(: |:|  )?([0-9]{0,22}|[0-9]{0,9}\\.[0-9]{0,9}|<inactive>|inactive|<Inactive>)?( KiB| KBytes| GB/s|GB/s| kib| us| |:|\t)?[ \t:]?"
        ) {
            let line = crate::parse::Line::new(1, &t);
            let mut stream = crate::parse::nvlink::Stream::new();
            if stream.read_body(&line) {
                prop_assert!(continues(Kind::Nvlink, &t), "{:?}", t);
            }
        }
    }

    #[test]
    fn the_nvlink_stream_takes_the_common_link_lines() {
        for t in [
            "\t Link 0: 26.562 GB/s",
            "\t Link 4: <inactive>",
            "\t Link 17: Replay Errors: 0",
            "\t Link 1: Data Tx: 584268610202 KiB",
            "Link 2: Rx0: 0 KBytes",
        ] {
            let line = crate::parse::Line::new(1, t);
            assert!(
                crate::parse::nvlink::Stream::new().read_body(&line),
                "{t:?}"
            );
            assert!(continues(Kind::Nvlink, t), "{t:?}");
        }
    }

    /// perfquery lines: headers (whole, wrapped by a mail client, with a
    /// parenthesis left open), fields as printed and near them, cut
    /// values, repeats, values too large for their field, tool messages,
    /// ibcheckerrors lines, blank lines and junk.
    fn perfquery_vocabulary() -> Vec<&'static str> {
        vec![
            "# Port counters: Lid 2 port 1 (CapMask: 0x5A00)",
            "# Port extended counters: Lid 2 port 1 (CapMask: 0x5A00 CapMask2: 0x0000000)",
            "# Port counters: Lid 12",
            "port 1",
            "# Port extended counters: Lid 2 port 1 (CapMask: 0x5A00",
            "CapMask2: 0x0000000)",
            "# Port counters: Lid 2 port 1 (CapMask: 0x5A00) Bogus: 1",
            "PortSelect:......................1",
            "CounterSelect:...................0x0000",
            "CounterSelect:...................x0000",
            "PortXmitData:....................39045439878820",
            "PortXmitData:....................",
            "\tPortRcvData:.....................8250681009547",
            "  PortRcvPkts:.....................10523827818",
            "SymbolErrorCounter:..............0",
            "SymbolErrorCounter:..............65536",
            "SymbolErrorCounter:..............99999999999999999999999",
            "LinkDownedCounter:...............abc",
            "VL15Dropped:.....................0",
            "PortXmitWait:....................13735974",
            "Port_Xmit_Wait:..................1",
            "PortRcvErrors:0",
            "PortRcvErrors: ...... 7",
            "PortLocalPhysicalErrors:.........0",
            "MadeUpCounter:...................42",
            "ibwarn: [1234] main: No extended counter support indicated",
            "perfquery: iberror: failed: perfquery",
            "Error check on lid 2 (node) port 1:  FAILED",
            "#warn: counter SymbolErrorCounter = 100 \t(threshold 10) lid 2 port 1",
            "",
            "   ",
            "something else entirely",
        ]
    }

    proptest! {
        /// A perfquery section's stream, fed its lines as the sectioner
        /// feeds them (a body line's name and value, every other non-blank
        /// line whole), reads them as `parse` reads the lines: the model
        /// and the warnings, wrapped headers (which the stream leaves to
        /// `parse`) included.
        #[test]
        fn the_perfquery_stream_reads_as_parse(
            picks in prop::collection::vec(
                prop_oneof![
                    6 => prop::sample::select(perfquery_vocabulary()).prop_map(str::to_owned),
                    1 => "[A-Za-z0-9:. \t#_()-]{0,24}",
                ],
                0..40,
            )
        ) {
            let lines: Vec<crate::parse::Line<'_>> = picks
                .iter()
                .enumerate()
                .map(|(i, t)| crate::parse::Line::new(i + 1, t))
                .collect();
            let mut stream = crate::parse::perfquery::Stream::new();
            for line in lines.iter().filter(|l| !l.is_blank()) {
                match perfquery_field_parts(line.text()) {
                    Some((name, value)) => stream.read_field(line, name, value),
                    None => stream.read(line),
                }
            }
            let streamed = stream.finish(&lines);
            let parsed = crate::parse::perfquery::parse(&lines);
            prop_assert_eq!(streamed.value, parsed.value);
            prop_assert_eq!(streamed.warnings, parsed.warnings);
        }

        /// The parts are found exactly on the body lines, and are the
        /// name and value `perfquery`'s own `Name:....value` split finds.
        #[test]
        fn perfquery_field_parts_are_the_fields_name_and_value(
            parts in prop::collection::vec(
                prop_oneof![
                    opening().prop_map(str::to_owned),
                    "[A-Za-z0-9 \t.:_é-]{0,8}",
                ],
                0..5,
            )
        ) {
            let text = parts.concat();
            let found = perfquery_field_parts(&text);
            prop_assert_eq!(found.is_some(), by_comparisons::perfquery_field(&text));
            if let Some((name, value)) = found {
                let t = text.trim_start_matches([' ', '\t']);
                let (n, rest) = t.split_once(':').unwrap_or_default();
                prop_assert_eq!(name, n);
                prop_assert_eq!(value, rest.trim_start_matches('.'));
            }
        }
    }

    proptest! {
        /// The byte-set table accepts exactly the lines the comparisons did.
        #[test]
        fn body_shapes_match_the_comparisons(
            parts in prop::collection::vec(
                prop_oneof![
                    opening().prop_map(str::to_owned),
                    "[A-Za-z0-9 \t.:/<>_,#'()|=é\u{a0}-]{0,8}",
                ],
                0..5,
            )
        ) {
            let text = parts.concat();
            prop_assert_eq!(perfquery_field(&text), by_comparisons::perfquery_field(&text), "{:?}", text);
            prop_assert_eq!(nvlink_link(&text), by_comparisons::nvlink_link(&text), "{:?}", text);
            prop_assert_eq!(ibstat_field(&text), by_comparisons::ibstat_field(&text), "{:?}", text);
            prop_assert_eq!(topo_row(&text), by_comparisons::topo_row(&text), "{:?}", text);
        }
    }

    /// Bytes next to `:` and space in value and bit pattern, for the word
    /// tests (random words would hardly ever hold an equal byte).
    const BYTES: [u8; 10] = [0x00, 0x1f, 0x20, 0x21, 0x3a, 0x3b, 0x7f, 0x80, 0xa0, 0xba];

    proptest! {
        /// The word-wise colon test answers as a look at every colon's next
        /// byte does, for texts of every length around the word size.
        #[test]
        fn colons_are_tested_like_byte_by_byte(text in "[: a\u{e9}]{0,40}") {
            let bytes = text.as_bytes();
            let by_bytes = bytes
                .iter()
                .enumerate()
                .filter(|&(_, &b)| b == b':')
                .all(|(i, _)| bytes.get(i + 1) == Some(&b' '));
            prop_assert_eq!(colons_spaced(bytes), by_bytes, "{:?}", text);
        }

        /// Exactly the bytes equal to the one asked for are marked.
        #[test]
        fn bytes_equal_marks_exactly_the_equal_bytes(
            bytes in prop::array::uniform8(prop::sample::select(BYTES.to_vec())),
            byte in prop::sample::select(BYTES.to_vec()),
        ) {
            let marks = bytes_equal(u64::from_le_bytes(bytes), byte);
            for (i, b) in bytes.into_iter().enumerate() {
                prop_assert_eq!((marks >> (8 * i)) & 0xff, if b == byte { 0x80 } else { 0 });
            }
        }
    }

    proptest! {
        /// The byte scan leaves what `trim_start_matches` did.
        #[test]
        fn after_indent_trims_like_trim_start_matches(text in "[ \t\u{a0}\u{3000}a.:]{0,12}") {
            prop_assert_eq!(after_indent(&text), text.trim_start_matches([' ', '\t']));
        }
    }

    #[test]
    fn perfquery_fields_are_body_lines_and_near_misses_are_not() {
        for yes in [
            "PortXmitData:....................7587792498942",
            "CounterSelect:...................0x0000",
            "VL15Dropped:.....................0",
            "  LinkDownedCounter:.............2",
        ] {
            assert!(continues(Kind::Perfquery, yes), "{yes}");
        }
        for no in [
            "# Port extended counters: Lid 2 port 1",
            "PortXmitData:",
            "PortXmitData:....",
            "PortXmitData:7587",
            "PortXmitData:....75 87",
            "PortXmitData:....7587 ",
            "Port_Xmit:....1",
            "portXmitData:....1",
            "Timestamp:.......1",
            "GPU0XSYSSYS1:....1",
            "NIC0:....1",
            "ibwarn:....1",
            "Link 0: 26.562 GB/s",
        ] {
            assert!(!continues(Kind::Perfquery, no), "{no}");
        }
        assert!(!continues(Kind::Nvlink, "PortXmitData:....1"));
        assert!(!continues(Kind::Ibstat, "PortXmitData:....1"));
    }

    #[test]
    fn ibstat_fields_are_body_lines_and_near_misses_are_not() {
        for yes in [
            "\tCA type: MT4129",
            "\tFirmware version: 28.39.1002",
            "\tNode GUID: 0x946dae0300000000",
            "\tPort 1:",
            "\t\tState: Active",
            "\t\tPhysical state: LinkUp",
            "\t\tRate: 400",
            "\t\tCapability mask: 0xa751e848",
        ] {
            assert!(continues(Kind::Ibstat, yes), "{yes}");
        }
        for no in [
            "CA 'mlx5_0'",
            "\tCA: 'mlx5_0'",
            "\t\tLink layer: InfiniBand",
            "\tPort x:",
            "\tPort :",
            "\t\tState: ibwarn",
            "\t\tState:Active",
            "\t\tState: Active (x)",
            "\t\tRate: 12:30:05",
            "\t\tSpeed: 400",
        ] {
            assert!(!continues(Kind::Ibstat, no), "{no}");
        }
    }

    #[test]
    fn topo_rows_are_body_lines_and_near_misses_are_not() {
        for yes in [
            "GPU0\t X \tNV18\tNV18\tPIX\tNODE\tSYS\t0-55,112-167\t0\t\tN/A",
            "GPU7\tNV18\t X \tSYS\t56-111,168-223\t1\t\tN/A",
            "NIC3\tNODE\tNODE\tPIX\t X \tSYS",
            "GPU12\tNV4\t X ",
        ] {
            assert!(continues(Kind::TopoMatrix, yes), "{yes}");
        }
        for no in [
            "\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity",
            "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-e3e70682)",
            "GPU0 X NV18",
            "GPU\t X \tNV18",
            "GPU0\t X \tNV18\t0-55\t0\tN/A (x)",
            "  X    = Self",
            "Legend:",
            "NIC Legend:",
            "  NIC0: mlx5_0",
            "GPU0\t X \t12:30:05",
            "mlx5_0\tPIX",
        ] {
            assert!(!continues(Kind::TopoMatrix, no), "{no}");
        }
        assert!(!continues(Kind::Nvlink, "GPU0\t X \tNV18"));
    }

    #[test]
    fn nvlink_links_are_body_lines_and_near_misses_are_not() {
        for yes in [
            "\t Link 0: Replay Errors: 0",
            "\t Link 17: Data Tx: 584268610202 KiB",
            "\t Link 5: 26.562 GB/s",
            "Link 4: <inactive>",
            "\t Link 2: Rx0 Throughput: 10 KiB",
        ] {
            assert!(continues(Kind::Nvlink, yes), "{yes}");
        }
        for no in [
            "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-e3e70682)",
            "Link : 26 GB/s",
            "Link 0:26 GB/s",
            "Link 0, P2P is supported: true",
            "\t Link 0: Remote Device Type: 00000000:18:00.0",
            "\t Link 0: 26.562 GB/s (x)",
            "\t Link 0: 26.562 GB/s | x",
            "LinkDownedCounter:.....2",
        ] {
            assert!(!continues(Kind::Nvlink, no), "{no}");
        }
    }
}
