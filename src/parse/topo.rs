//! `nvidia-smi topo -m` / `-mp` / `--matrix` and `nvidia-smi topo -p2p r|w|n|a|p`.
//!
//! Forms handled (observed in driver 580 captures and in public pastes from
//! R384 onwards):
//! - a header row of device columns (`GPU0 … GPUn`, then `NIC0 …` on newer
//!   drivers or RDMA names such as `mlx5_0` on older ones), followed by the
//!   affinity columns the driver knows: `CPU Affinity` (all), `NUMA Affinity`
//!   (later), `GPU NUMA ID` (R525+). The raw header starts with a tab and is
//!   wrapped in ANSI underline, which the input layer strips;
//! - one row per device: its name, one cell per column (`X`, `NV#`, `PIX`,
//!   `PXB`, `PHB`, `NODE`, `SYS`, legacy `SOC`; `OK`, `CNS`, `GNS`, `TNS`,
//!   `NS`, `DR`, `U` in the `-p2p` form), then the affinity values. NIC rows
//!   have no affinity values;
//! - `Legend:` entries (`NV#  = …`) and the `NIC Legend:` (`NIC0: mlx5_0`).
//!
//! Paste damage survived: tabs expanded to any run of spaces, re-indented
//! lines, blank lines between rows, cells fused by lost separators (`SYSSYS`,
//! `NV18NV18`), fused headers (`NIC11NIC12`), and legend lines wrapped onto
//! the next line. Cells are read with a scanner over the known vocabulary
//! rather than by splitting, which is what makes the fused forms readable.

use crate::model::partial::{Partial, PartialReason};
use crate::model::topo::{
    Cell, Device, DeviceKind, LegendEntry, Link, P2pCapability, P2pStatus, TopoMatrix, TopoP2p,
};
use crate::parse::text::{is_help, trim, Unread};
use crate::parse::{Block, Line, Parsed, Spec};
use crate::span::LineSpan;
use std::borrow::Cow;
use std::fmt::Write as _;
use std::sync::Arc;

pub(crate) const FORMAT: Spec<TopoMatrix> = Spec {
    command: |argv| is_topo(argv) && argv.iter().any(|a| MATRIX_FLAGS.contains(a)),
    starts: |b| b.is_ascii_alphanumeric() || b == b'[',
    detect: |lines| match classify(lines)? {
        // nvidia-smi's notice that it left NICs out, over the header.
        MatrixKind::Notice => Some(Block::keyed("topo notice")),
        // Rows match too inside a full matrix: keyed by line, a row
        // continues the matrix it is in rather than starting another.
        MatrixKind::Links if header(lines.first()?.text()).is_none() => Some(Block::keyed(
            format!("topo row at line {}", lines.first()?.number),
        )),
        MatrixKind::Links => Some(Block::keyed("topo")),
        MatrixKind::P2p => None,
    },
    parse,
    summary,
    attach_command: None,
    labels: &["legend", "nic", "gpu"],
};

pub(crate) const P2P_FORMAT: Spec<TopoP2p> = Spec {
    command: |argv| is_topo(argv) && argv.iter().any(|a| *a == "-p2p" || *a == "--p2pstatus"),
    starts: |b| b.is_ascii_alphabetic() || b == b'[',
    detect: |lines| (classify(lines)? == MatrixKind::P2p).then(|| Block::keyed("topo-p2p")),
    parse: parse_p2p,
    summary: summary_p2p,
    attach_command: Some(attach_p2p_command),
    labels: &["legend", "gpu"],
};

const MATRIX_FLAGS: &[&str] = &["-m", "-mp", "--matrix", "--matrix_pci"];

fn is_topo(argv: &[&str]) -> bool {
    argv.first() == Some(&"nvidia-smi") && argv.get(1) == Some(&"topo") && !is_help(argv)
}

/// The affinity columns, in the order drivers print them.
const AFFINITY_TITLES: &[&str] = &["CPU Affinity", "NUMA Affinity", "GPU NUMA ID"];

/// Cell words of `topo -m`, longest first where one is a prefix of another.
const LINK_WORDS: &[&str] = &["NODE", "PIX", "PXB", "PHB", "SYS", "SOC", "X"];
/// Cell words of `topo -p2p`.
const P2P_WORDS: &[&str] = &["CNS", "GNS", "TNS", "OK", "NS", "DR", "X", "U"];

/// Which words a matrix's cells are made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Vocabulary {
    /// `topo -m`: `X`, `NV#`, `PIX` … `SYS`, legacy `SOC`.
    Links,
    /// `topo -p2p`: `X`, `OK`, `CNS` … `U`.
    P2p,
}

impl Vocabulary {
    fn words(self) -> &'static [&'static str] {
        match self {
            Self::Links => LINK_WORDS,
            Self::P2p => P2P_WORDS,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MatrixKind {
    Links,
    P2p,
    /// nvidia-smi's notice over a `Links` header ([`nics_not_shown`]).
    Notice,
}

/// The header row: device columns, then affinity column titles.
///
/// The names are borrowed from the line where they can be: detection reads
/// a matrix's header twice before the parser reads it again, and only the
/// parser keeps them.
#[derive(Debug)]
struct Header<'t> {
    devices: Vec<Cow<'t, str>>,
    affinity: Vec<&'static str>,
    /// Line it was read from (0 until the reader sets it).
    line: usize,
}

/// Reads a header row; `None` unless it names `GPU0` and nothing but
/// device names and affinity titles.
/// Whether `text` holds a `[` or `GPU0`: what every header has (the `[`
/// of an unescaped underline code may split `GPU0`). Two vectorised
/// searches (memchr, then the SIMD substring search of `str::contains`)
/// instead of stopping at every `G`.
fn may_be_header(text: &str) -> bool {
    text.contains('[') || text.contains("GPU0")
}

fn header(text: &str) -> Option<Header<'_>> {
    // Detection asks this of many lines (twice: matrix and p2p): those
    // without `GPU0` (or a `[` of the codes below, which could split it)
    // cannot be a header. One pass over the bytes decides.
    if !may_be_header(text) {
        return None;
    }
    // Pastes that lost the ESC byte keep the underline codes as text
    // (`[4mGPU0\tGPU1…[0m`), as in many collect-env dumps: their names
    // are read from a copy without the codes, so they are copied out.
    if text.contains("[4m") || text.contains("[0m") {
        let unescaped = text.replace("[4m", "").replace("[0m", "");
        let h = labelled_header(unescaped.trim())?;
        return Some(Header {
            devices: h
                .devices
                .into_iter()
                .map(|d| Cow::Owned(d.into_owned()))
                .collect(),
            affinity: h.affinity,
            line: h.line,
        });
    }
    labelled_header(text.trim())
}

/// [`header_in`] of `t`, or of what follows a report's label before it:
/// environment reports print the matrix as the value of a `Label: `
/// (`GPU topology: GPU0    CPU Affinity …`, the header's leading tab
/// replaced by the label), and without this the whole matrix under it
/// went unrecognised. Only a header that reads whole after the label
/// counts, so `Label: value` lines of other tools stay what they are.
fn labelled_header(t: &str) -> Option<Header<'_>> {
    header_in(t).or_else(|| header_in(after_label(t)?))
}

/// The text after a leading `Label:` of words (letters, digits, spaces,
/// `-`, `_`, `.`), starting with a letter and followed by white space;
/// `None` when `t` has no such label.
fn after_label(t: &str) -> Option<&str> {
    let (label, rest) = t.split_once(':')?;
    (is_label(label) && rest.starts_with([' ', '\t'])).then(|| rest.trim_start())
}

/// Whether `label` (the text before a colon) is a label of words: it
/// starts with a letter and holds only letters, digits, spaces, `-`, `_`
/// and `.`.
fn is_label(label: &str) -> bool {
    label
        .as_bytes()
        .first()
        .is_some_and(u8::is_ascii_alphabetic)
        && label
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b' ' | b'-' | b'_' | b'.'))
}

/// Whether `t`, a line at column 0 after a matrix, is another report's
/// `Label: value` line or `Label:` heading (`Nvidia driver version:
/// 550.90.07`, `ulimit soft: 1048576`, `CPU:`), as environment reports
/// (vLLM's and PyTorch's collect_env, SGLang's check_env, ScaleLLM's)
/// print right under the legend. `topo -m` prints no such line: its only
/// colons are in the `Legend:` titles and the NIC legend's `NIC0: mlx5_0`.
/// Left in the section, the line was glued to the last legend entry's
/// meaning as if the entry had wrapped, and so lost without a word.
pub(crate) fn foreign_label_line(t: &str) -> bool {
    let t = trim(t);
    let Some((label, rest)) = t.split_once(':') else {
        return false;
    };
    is_label(label)
        && (rest.is_empty() || rest.starts_with([' ', '\t']))
        && !matches!(t, "Legend:" | "NIC Legend:")
        && nic_legend_entry(t).is_none()
        && header(t).is_none()
}

/// [`header`] of a line without underline codes, trimmed.
fn header_in(t: &str) -> Option<Header<'_>> {
    let (device_part, affinity_part) = match t.find(AFFINITY_TITLES.first()?) {
        Some(i) => (t.get(..i)?, t.get(i..)?),
        None => (t, ""),
    };
    let mut devices = Vec::new();
    let mut rest = device_part.trim_start();
    while !rest.is_empty() {
        if let Some(after) = elision(rest) {
            devices.push(Cow::Borrowed(ELIDED));
            rest = after.trim_start();
            continue;
        }
        let (name, after) = device_name(rest)?;
        devices.push(Cow::Borrowed(name));
        rest = after.trim_start();
    }
    if !devices.iter().any(|d| d == "GPU0") {
        return None;
    }
    let mut affinity = Vec::new();
    let mut rest = affinity_part.trim_start();
    while !rest.is_empty() {
        let title = AFFINITY_TITLES.iter().find(|t| rest.starts_with(**t))?;
        affinity.push(*title);
        rest = rest.get(title.len()..)?.trim_start();
    }
    Some(Header {
        devices,
        affinity,
        line: 0,
    })
}

/// A device name at the start of `s`: letters, optional digits, optional
/// `_` + letters + digits, with at least one digit (`GPU0`, `NIC12`,
/// `mlx5_0`, `bnxt_re3`). Stops where the next name's letters start, so
/// fused names split.
fn device_name(s: &str) -> Option<(&str, &str)> {
    let bytes = s.as_bytes();
    let mut i = 0;
    while bytes.get(i).is_some_and(u8::is_ascii_alphabetic) {
        i += 1;
    }
    if i == 0 {
        return None;
    }
    let digits_start = i;
    while bytes.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    let mut has_digit = i > digits_start;
    if bytes.get(i) == Some(&b'_') {
        let mut j = i + 1;
        while bytes.get(j).is_some_and(u8::is_ascii_alphabetic) {
            j += 1;
        }
        let d = j;
        while bytes.get(j).is_some_and(u8::is_ascii_digit) {
            j += 1;
        }
        if j > d {
            i = j;
            has_digit = true;
        }
    }
    has_digit
        .then(|| (s.get(..i), s.get(i..)))
        .and_then(|(a, b)| Some((a?, b?)))
}

/// A row: device name, cell texts, and the values after the cells.
#[derive(Debug, PartialEq)]
struct Row<'t> {
    /// The whole line, for where its values stand ([`placed_values`]).
    line: &'t str,
    name: &'t str,
    /// The header column the name is in (the first, if it is in several);
    /// `usize::MAX` for a device the header's `...` hides.
    column: usize,
    cells: Vec<&'t str>,
    values: Vec<&'t str>,
}

/// Reads a row against the header's device columns: a name the header
/// lists, one to `columns.len()` cells, then the affinity values
/// (`GPU0  X  NV18 SYS … 0-47  0  N/A`).
///
/// Hand-written on purpose. The same grammar written with nom (device
/// name, cell of a vocabulary, value start and values as parsers; kept in
/// this file's history with its timing harness, commit "topo matrix rows
/// as a nom grammar") gave identical results on 400,000 generated rows,
/// fused, cut and no-break-spaced ones included, but read them 1.5–1.8×
/// slower, and headerless rows 1.4–1.7× slower, in the same release run.
/// The scanner is as small, and its pieces (`device_name`, `cell_token`,
/// `starts_value`) are tested one by one.
fn row<'t>(text: &'t str, columns: &[Cow<'_, str>], vocabulary: Vocabulary) -> Option<Row<'t>> {
    let (name, mut rest) = device_name(text.trim_start())?;
    // A device the header's `...` hides has a row of its own, in no column.
    let column = match columns.iter().position(|c| c == name) {
        Some(column) => column,
        None if columns.iter().any(|c| c == ELIDED) => usize::MAX,
        None => return None,
    };
    // Room for a cell per column at once: a full row (nearly every row)
    // fills them all, where growing by doubling reallocated three times.
    let mut cells = Vec::with_capacity(columns.len());
    while cells.len() < columns.len() {
        rest = rest.trim_start();
        if rest.is_empty() || starts_value(rest) {
            break;
        }
        let (cell, after) = cell_token(rest, vocabulary);
        cells.push(cell);
        rest = after;
    }
    if cells.is_empty() {
        return None;
    }
    Some(Row {
        line: text,
        name,
        column,
        cells,
        values: rest.split_whitespace().collect(),
    })
}

/// A row of a device the header has no column for, with a cell for each
/// of the header's columns: a `topo -m` whose NIC columns were cut out of
/// the header (a screen cut at its width, or by hand), its NIC rows still
/// holding a cell per GPU column (`NIC0  NODE  PIX  NODE …`). Read only
/// under a header of GPUs alone, none hidden by `...`; the row must hold
/// exactly one link word per column, no `X` (its own cell was in a column
/// the header lacks) and nothing after them. Its name is in no column
/// (`usize::MAX`), as a device behind a header's `...`.
fn row_without_column<'t>(
    text: &'t str,
    columns: &[Cow<'_, str>],
    vocabulary: Vocabulary,
) -> Option<Row<'t>> {
    if vocabulary != Vocabulary::Links || !columns.iter().all(|c| c.starts_with("GPU")) {
        return None;
    }
    let (name, mut rest) = device_name(text.trim_start())?;
    if name.starts_with("GPU") || columns.iter().any(|c| c == name) {
        return None;
    }
    let mut cells = Vec::with_capacity(columns.len());
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            break;
        }
        let (cell, after) = cell_token(rest, vocabulary);
        if cells.len() == columns.len() || cell == "X" || !is_link_cell(cell) {
            return None;
        }
        cells.push(cell);
        rest = after;
    }
    (cells.len() == columns.len()).then(|| Row {
        line: text,
        name,
        column: usize::MAX,
        cells,
        values: Vec::new(),
    })
}

/// Affinity values start with a digit or are `N/A`.
fn starts_value(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_digit()) || s.starts_with("N/A")
}

/// One cell at the start of `s`: a known word (or `NV<digits>` for links),
/// else everything up to the next white space.
fn cell_token(s: &str, vocabulary: Vocabulary) -> (&str, &str) {
    if vocabulary == Vocabulary::Links {
        if let Some(digits) = s.strip_prefix("NV") {
            let n = digits.bytes().take_while(u8::is_ascii_digit).count();
            if n > 0 {
                return s.split_at(2 + n);
            }
        }
    }
    // The first byte is compared before the word: most words differ
    // there, and a whole-word comparison is a call of `memcmp` each.
    let first = s.as_bytes().first();
    if let Some(w) = vocabulary
        .words()
        .iter()
        .find(|w| w.as_bytes().first() == first && s.starts_with(**w))
    {
        return s.split_at(w.len());
    }
    let end = s.find(char::is_whitespace).unwrap_or(s.len());
    s.split_at(end)
}

/// `SYM  = meaning` → (SYM, meaning).
fn legend_entry(text: &str) -> Option<(&str, &str)> {
    let (symbol, meaning) = trim(text).split_once('=')?;
    let symbol = trim(symbol);
    let ok = !symbol.is_empty()
        && symbol.len() <= 6
        && symbol
            .chars()
            .all(|c| c.is_ascii_uppercase() || c == '#' || c.is_ascii_digit());
    ok.then(|| (symbol, trim(meaning)))
}

/// What the legends of `topo -m` and `topo -p2p` say, by driver: today's
/// `NV#` / `SYS` … `PIX`, the older `SOC` and `PCIe switch` forms, and
/// the short legend of 2017 drivers (`NV2 = Connected via NVLink with 2
/// hops`). `#` stands for the number of an `NV<n>` entry. A meaning that
/// is one of these whole is ended: the line under it is not its rest.
const KNOWN_MEANINGS: &[&str] = &[
    "Self",
    "Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)",
    "Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node",
    "Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)",
    "Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)",
    "Connection traversing multiple PCIe switches (without traversing the PCIe Host Bridge)",
    "Connection traversing at most a single PCIe bridge",
    "Connection traversing a single PCIe switch",
    "Connection traversing a bonded set of # NVLinks",
    "Connection traversing PCIe as well as the SMP link between CPU sockets(e.g. QPI)",
    "Connected via NVLink with # hops",
    "Connected via the PCIe or CPU subsystem",
    "Status Ok",
    "Chipset not supported",
    "GPU not supported",
    "Topology not supported",
    "Not supported",
    "Disabled by regkey",
    "Unknown",
];

/// How `text` stands against `known`, white space aside (a terminal wraps
/// a line anywhere, in a word too) and `#` in `known` standing for `#` or
/// a number: `None` where it departs from it, `Some(true)` when it is all
/// of it, `Some(false)` when it is a beginning of it.
fn against(known: &str, text: &str) -> Option<bool> {
    let mut k = known
        .bytes()
        .filter(|b| !b.is_ascii_whitespace())
        .peekable();
    let mut t = text.bytes().filter(|b| !b.is_ascii_whitespace()).peekable();
    while let Some(b) = t.next() {
        match k.next() {
            Some(b'#') if b.is_ascii_digit() => while t.next_if(u8::is_ascii_digit).is_some() {},
            Some(kb) if kb == b => {}
            _ => return None,
        }
    }
    Some(k.peek().is_none())
}

/// The meaning of a legend entry with `t`, the line under it, taken as its
/// wrapped rest; `None` when `t` cannot be that. A meaning nvidia-smi
/// prints whole is ended, and a beginning of one goes on only with what
/// completes it further: the author's question under the legend (`So GPU0
/// and GPU1 should be on NVLink but show SYS, why?`) was glued to the
/// `NV#` entry's meaning as if it had wrapped, and lost without a word. A
/// meaning none of the known ones begins with (a driver's new entry) takes
/// the line as before, and so does a beginning of one whose rest departs
/// from it, unless the line reads as prose.
pub(crate) fn wrapped_meaning(meaning: &str, t: &str) -> Option<String> {
    let t = trim(t);
    let states: Vec<Option<bool>> = KNOWN_MEANINGS.iter().map(|k| against(k, meaning)).collect();
    if states.contains(&Some(true)) {
        return None;
    }
    let known_start = states.iter().any(Option::is_some);
    if known_start {
        let joined = format!("{meaning}{t}");
        let goes_on = KNOWN_MEANINGS
            .iter()
            .zip(&states)
            .any(|(k, s)| s.is_some() && against(k, &joined).is_some());
        // A meaning the terminal cut whose rest departs from every known
        // one may be a driver's wording we do not know: the line is its
        // rest unless it reads as the author's.
        if !goes_on && crate::input::framing::reads_as_prose(t) {
            return None;
        }
    }
    Some(format!("{meaning} {t}"))
}

/// The meaning of the legend entry `above` ends in, its wrapped lines
/// under it included; `None` when `above` does not end in a legend entry
/// and its rest (a blank line between is a paragraph break: nothing
/// wraps across it). At most a few wrapped lines are looked back over.
fn meaning_above(above: &[Line<'_>]) -> Option<String> {
    const MAX_WRAPPED: usize = 3;
    let back = above
        .iter()
        .rev()
        .take(MAX_WRAPPED + 1)
        .take_while(|l| !l.is_blank())
        .position(|l| legend_entry(l.text()).is_some())?;
    let at = above.len().checked_sub(back + 1)?;
    let (_, first) = legend_entry(above.get(at)?.text())?;
    above
        .get(at + 1..)?
        .iter()
        .try_fold(first.to_owned(), |m, l| wrapped_meaning(&m, l.text()))
}

/// Whether `t`, an unindented line met in a `topo -m` or `topo -p2p`
/// section after the lines `above` it, may be nvidia-smi's: a header, a
/// row (a device name then a cell), a legend title or entry, a NIC legend
/// entry, a rule under the header, or the wrapped rest of the legend
/// entry right above ([`wrapped_meaning`]). The input layer sets aside
/// the author's prose that is none of these
/// ([`crate::input::framing::prose_after_output`]).
pub(crate) fn may_be_its_line(above: &[Line<'_>], t: &str) -> bool {
    let t = trim(t);
    let starts_row = device_name(t).is_some_and(|(_, rest)| {
        let rest = rest.trim_start();
        let (cell, _) = cell_token(rest, Vocabulary::Links);
        is_link_cell(cell) || P2P_WORDS.contains(&cell_token(rest, Vocabulary::P2p).0)
    });
    matches!(t, "Legend:" | "NIC Legend:")
        || starts_row
        || legend_entry(t).is_some()
        || nic_legend_entry(t).is_some()
        || is_ruler(t)
        || header(t).is_some()
        || meaning_above(above).is_some_and(|m| wrapped_meaning(&m, t).is_some())
}

/// `NIC0: mlx5_0` → (NIC0, mlx5_0).
fn nic_legend_entry(text: &str) -> Option<(&str, &str)> {
    let (nic, name) = text.trim().split_once(':')?;
    let nic = nic.trim();
    let name = name.trim();
    let ok = nic.starts_with("NIC")
        && nic.len() > 3
        && nic.bytes().skip(3).all(|b| b.is_ascii_digit())
        && !name.is_empty()
        && !name.contains(char::is_whitespace);
    ok.then_some((nic, name))
}

/// How far detection looks ahead for the legend that tells the two forms
/// apart when the rows alone cannot (a single GPU prints only `X`).
const LOOKAHEAD: usize = 64;

/// nvidia-smi's notice that the matrix shows only some of the NICs it
/// found, printed above the header where there are more than it draws
/// (vllm#14537: `76 NICs found in the topology, only displaying 56 in the
/// matrix.`): found and shown. The suffix is compared first, so another
/// line costs a comparison of its last bytes.
fn nics_not_shown(t: &str) -> Option<(usize, usize)> {
    let t = trim(t);
    let rest = t.strip_suffix(" in the matrix.")?;
    let (found, rest) = rest.split_once(" NICs found in the topology, only displaying ")?;
    let found = found.parse().ok()?;
    let shown = rest.parse().ok()?;
    (shown < found).then_some((found, shown))
}

/// Whether a matrix starts at `lines[0]`, and of which kind.
fn classify(lines: &[Line<'_>]) -> Option<MatrixKind> {
    let first = lines.first()?.text();
    // A line starting with a digit opens a matrix only as nvidia-smi's
    // notice over a header: one byte, then a suffix, before anything else
    // (this runs on every line of every input that starts with a digit).
    let lead = first.bytes().find(|b| !matches!(b, b' ' | b'\t'));
    if lead.is_some_and(|b| b.is_ascii_digit()) {
        nics_not_shown(first)?;
        let rest = lines.get(1..)?;
        let next = rest.iter().position(|l| !l.is_blank())?;
        let under = rest.get(next..)?;
        header(under.first()?.text())?;
        return (classify(under)? == MatrixKind::Links).then_some(MatrixKind::Notice);
    }
    let Some(h) = header(first) else {
        return headless_row(first).map(|_| MatrixKind::Links);
    };
    let first_row = lines
        .iter()
        .skip(1)
        .find(|l| !l.is_blank() && !is_ruler(trim(l.text())))?;
    if !h.affinity.is_empty() {
        row(first_row.text(), &h.devices, Vocabulary::Links)?;
        return Some(MatrixKind::Links);
    }
    let r = row(first_row.text(), &h.devices, Vocabulary::P2p)?;
    let p2p_cells = r.cells.iter().any(|c| P2P_WORDS.contains(c) && *c != "X");
    let p2p_legend = lines
        .iter()
        .take(LOOKAHEAD)
        .any(|l| legend_entry(l.text()).is_some_and(|(s, _)| s == "OK" || s == "CNS"));
    if p2p_cells || p2p_legend {
        Some(MatrixKind::P2p)
    } else {
        row(first_row.text(), &h.devices, Vocabulary::Links).map(|_| MatrixKind::Links)
    }
}

/// A line of `-` or `=` under a header (a page's or a report's rule, as
/// in `GPU0  GPU1 …` over `-------`): nvidia-smi prints none, and the rows
/// follow it.
fn is_ruler(t: &str) -> bool {
    use crate::parse::text::is_rule_of;
    is_rule_of(t, 3, b'-') || is_rule_of(t, 3, b'=')
}

/// A `topo -m` row pasted without the header above it: `GPU3`, then at
/// least three cells of the link vocabulary with exactly one `X` (the
/// diagonal), then nothing or affinity values. Returns the row's name, its
/// cells, the position of its `X` and the text after the cells.
fn headless_row(text: &str) -> Option<(&str, Vec<&str>, usize, &str)> {
    let (name, mut rest) = device_name(text.trim_start())?;
    let mut cells = Vec::new();
    loop {
        rest = rest.trim_start();
        if rest.is_empty() || starts_value(rest) {
            break;
        }
        let (cell, after) = cell_token(rest, Vocabulary::Links);
        if !is_link_cell(cell) {
            return None;
        }
        cells.push(cell);
        rest = after;
    }
    let mut xs = cells.iter().enumerate().filter(|(_, c)| **c == "X");
    let (x, _) = xs.next()?;
    let ok = xs.next().is_none()
        && cells.len() >= 3
        && (name.starts_with("GPU") || name.starts_with("NIC") || name.contains('_'));
    ok.then_some((name, cells, x, rest))
}

/// Whether `cell` is a known word, or a cell [`Link::parse`] reads as
/// something other than itself (`NV18`, or text it trims), decided without
/// building the unknown cell that parse would make of the rest (detection
/// asks this of every line that starts with a device name: the `NIC0:` of
/// each NIC legend line made one).
fn is_link_cell(cell: &str) -> bool {
    cell.trim().len() != cell.len() || Link::known(cell).is_some()
}

/// Column names recovered from rows pasted without their header: each
/// row's `X` names its own column; GPU columns come first and in order
/// (`GPU3`'s `X` in column 3 means columns 0–2 are `GPU0`–`GPU2`). Columns
/// no row names stay unknown (`?` + position) and are not read.
fn recover_header(lines: &[Line<'_>]) -> Option<Header<'static>> {
    let rows: Vec<(&str, usize, usize)> = lines
        .iter()
        .filter(|l| !l.is_blank())
        .take_while(|l| l.text().trim() != "Legend:")
        .filter_map(|l| headless_row(l.text()).map(|(n, cells, x, _)| (n, cells.len(), x)))
        .collect();
    let width = rows.iter().map(|(_, w, _)| *w).max()?;
    let mut columns: Vec<Option<String>> = vec![None; width];
    for (name, _, x) in &rows {
        if let Some(slot) = columns.get_mut(*x) {
            *slot = Some((*name).to_owned());
        }
    }
    // GPU<k> with its X in column k: the GPUs before it fill the columns before.
    let gpu_at_own_index = rows
        .iter()
        .filter(|(n, _, _)| n.starts_with("GPU"))
        .all(|(n, _, x)| n.get(3..).and_then(|d| d.parse::<usize>().ok()) == Some(*x));
    if gpu_at_own_index {
        let last_gpu = rows
            .iter()
            .filter(|(n, _, _)| n.starts_with("GPU"))
            .map(|(_, _, x)| *x)
            .max()?;
        for (i, slot) in columns.iter_mut().enumerate().take(last_gpu) {
            if slot.is_none() {
                *slot = Some(format!("GPU{i}"));
            }
        }
    }
    let devices = columns
        .into_iter()
        .enumerate()
        .map(|(i, c)| Cow::Owned(c.unwrap_or_else(|| format!("{UNNAMED}{i}"))))
        .collect();
    let values = lines
        .iter()
        .filter_map(|l| row_values_count(l.text()))
        .max()
        .unwrap_or(0);
    Some(Header {
        devices,
        affinity: AFFINITY_TITLES.iter().copied().take(values).collect(),
        line: lines.first().map_or(0, |l| l.number),
    })
}

/// How many affinity values follow the cells of a headerless row.
fn row_values_count(text: &str) -> Option<usize> {
    let (name, _, _, values) = headless_row(text)?;
    name.starts_with("GPU")
        .then(|| values.split_whitespace().count())
}

/// Prefix of the names given to columns no row names.
const UNNAMED: &str = "?";

/// The column a header's `...` stands for: columns a person cut out of a
/// wide matrix (`GPU0  ...  CPU Affinity`). Named like an unnamed column,
/// so that its cells are skipped and it is no device.
const ELIDED: &str = "?...";

/// The text after an elision mark (`...`, `…`) at the start of `s`.
fn elision(s: &str) -> Option<&str> {
    let dots = s.bytes().take_while(|&b| b == b'.').count();
    if dots >= 3 {
        return s.get(dots..);
    }
    s.strip_prefix('\u{2026}')
}

/// What the shared reader collects for either form.
#[derive(Default)]
struct Raw<'t> {
    header: Option<Header<'t>>,
    rows: Vec<(usize, Row<'t>)>,
    legend: Vec<LegendEntry>,
    nic_legend: Vec<(String, String)>,
    /// nvidia-smi's notice above the header that it shows only some of
    /// the NICs it found ([`nics_not_shown`]): found, shown, and its line.
    not_shown: Option<(usize, usize, usize)>,
}

fn read<'t>(
    lines: &'t [Line<'t>],
    vocabulary: Vocabulary,
    unread: &mut Unread,
    recovered: Option<Header<'t>>,
) -> Raw<'t> {
    #[derive(PartialEq)]
    enum Part {
        Matrix,
        Legend,
        NicLegend,
    }
    let mut raw = Raw {
        header: recovered,
        ..Raw::default()
    };
    let mut part = Part::Matrix;
    // Whether a blank line came right before: a paragraph break, which
    // no legend entry wraps across.
    let mut after_break = false;
    for line in lines {
        if line.is_blank() {
            after_break = true;
            continue;
        }
        let broken = std::mem::replace(&mut after_break, false);
        let t = trim(line.text());
        if t == "Legend:" {
            part = Part::Legend;
            continue;
        }
        if t == "NIC Legend:" {
            part = Part::NicLegend;
            continue;
        }
        if part == Part::NicLegend {
            if let Some((nic, name)) = nic_legend_entry(t) {
                raw.nic_legend.push((nic.to_owned(), name.to_owned()));
                continue;
            }
        }
        if let Some((symbol, meaning)) = legend_entry(t) {
            raw.legend.push(LegendEntry {
                symbol: symbol.to_owned(),
                meaning: meaning.to_owned(),
                span: line.span(),
            });
            part = Part::Legend;
            continue;
        }
        if raw.header.is_none() && raw.not_shown.is_none() {
            if let Some((found, shown)) = nics_not_shown(t) {
                raw.not_shown = Some((found, shown, line.number));
                continue;
            }
        }
        if raw.header.is_none() {
            if let Some(mut h) = header(t) {
                h.line = line.number;
                raw.header = Some(h);
                continue;
            }
        }
        if raw.header.is_some() && raw.rows.is_empty() && is_ruler(t) {
            // The rule a blog or a report put under the header: layout,
            // as a blank line is.
            continue;
        }
        if let Some(h) = &raw.header {
            if let Some(r) = row(line.text(), &h.devices, vocabulary)
                .or_else(|| row_without_column(line.text(), &h.devices, vocabulary))
            {
                raw.rows.push((line.number, r));
                continue;
            }
        }
        if part == Part::Legend && !broken {
            if let Some(last) = raw.legend.last_mut() {
                if let Some(meaning) = wrapped_meaning(&last.meaning, t) {
                    last.meaning = meaning;
                    last.span = last.span.join(line.span());
                    continue;
                }
            }
        }
        let why = if raw.header.is_none() {
            "no `GPU0 …` header row before this line"
        } else {
            "not a topology row or legend line"
        };
        unread.line(line, why);
    }
    raw
}

/// Reads `nvidia-smi topo -m` / `-mp`.
#[must_use]
pub fn parse(lines: &[Line<'_>]) -> Parsed<TopoMatrix> {
    let mut unread = Unread::default();
    let mut raw = read(lines, Vocabulary::Links, &mut unread, None);
    let mut headless: Option<Partial> = None;
    if raw.header.is_none() {
        if let Some(h) = recover_header(lines) {
            unread = Unread::default();
            unread.warn(
                crate::diag::WarningKind::Truncated,
                LineSpan::line(h.line),
                format!(
                    "no header line: column names recovered from the row labels and the X diagonal ({})",
                    h.devices.join(" ")
                ),
            );
            let mut missing = vec!["header line".to_owned()];
            missing.extend(
                h.devices
                    .iter()
                    .enumerate()
                    .filter(|(_, d)| d.starts_with(UNNAMED))
                    .map(|(i, _)| format!("name of column {}", i + 1)),
            );
            headless = Some(Partial::new(PartialReason::NoHeader, missing, h.line));
            raw = read(lines, Vocabulary::Links, &mut unread, Some(h));
        }
    }
    let mut out = TopoMatrix::default();
    out.legend = raw.legend;
    let Some(header) = raw.header else {
        // Rows without a header and without a GPU row to recover it from
        // (a paste that starts at `NIC9 …`): nothing was judged, and the
        // report must say so rather than find the matrix healthy.
        if let Some(first) = lines.iter().find(|l| !l.is_blank()) {
            out.partial = Some(Partial::new(
                PartialReason::NoHeader,
                vec!["header line".to_owned(), "GPU rows".to_owned()],
                first.number,
            ));
        }
        out.pci_only = pci_only(&out.legend, &out.cells);
        return Parsed {
            value: out,
            warnings: unread.finish(),
        };
    };
    out.partial = headless;
    out.affinity_columns = header.affinity.iter().map(|s| (*s).to_owned()).collect();
    out.devices = header
        .devices
        .iter()
        .filter(|name| !name.starts_with(UNNAMED))
        .map(|name| new_device(name, &raw.nic_legend))
        .collect();
    if header.devices.iter().any(|d| d == ELIDED) {
        // The devices behind the `...` that have rows are known; their
        // links to the elided columns, and devices without rows, are not.
        for (_, r) in raw.rows.iter().filter(|(_, r)| r.column == usize::MAX) {
            if !out.devices.iter().any(|d| d.name == r.name) {
                out.devices.push(new_device(r.name, &raw.nic_legend));
            }
        }
        out.partial = Some(Partial::new(
            PartialReason::MissingFields,
            vec!["the columns elided by `...`".to_owned()],
            header.line,
        ));
        unread.warn(
            crate::diag::WarningKind::Truncated,
            LineSpan::line(header.line),
            "the header elides columns with `...`: the links to the devices it hides are unknown",
        );
    }
    let elided = header.devices.iter().any(|d| d == ELIDED);
    // The devices whose columns the header lost, once each, in row order.
    let mut columnless: Vec<&str> = Vec::new();
    if !elided {
        for (_, r) in raw.rows.iter().filter(|(_, r)| r.column == usize::MAX) {
            if !columnless.contains(&r.name) {
                columnless.push(r.name);
            }
        }
    }
    let columns_cut = !columnless.is_empty();
    if columns_cut {
        let legend_seen = !out.legend.is_empty() || !raw.nic_legend.is_empty();
        mark_columns_cut(
            &mut out,
            &columnless,
            (&raw.nic_legend, legend_seen),
            &header,
            &mut unread,
        );
    }
    // At most a cell per row and column: one allocation, not a doubling
    // series (a 16-device matrix holds 256 cells).
    out.cells
        .reserve(raw.rows.len().saturating_mul(header.devices.len()));
    let names = shared_names(&header);
    let wider_whole_after = wider_whole_rows_after(&raw.rows, &header);
    for ((number, r), wider_after) in raw.rows.iter().zip(wider_whole_after) {
        check_width(*number, r, &header, &mut unread);
        let from = row_name(&names, r);
        let columns = header.devices.iter().zip(&names);
        for ((col, to), text) in columns.zip(trusted_cells(r, &header)) {
            if col.starts_with(UNNAMED) {
                continue;
            }
            out.cells.push(Cell {
                from: Arc::clone(&from),
                to: Arc::clone(to),
                value: Link::parse(text),
                line: *number,
            });
        }
        if let Some(d) = out.devices.iter_mut().find(|d| d.name == r.name) {
            d.line = Some(*number);
            let placed = placed_values(r, &header);
            // A row whose values stop short while a wider row below it is
            // whole was not cut (neither the paste's end nor a terminal's
            // width cuts a line and spares a longer one after it): its
            // values ran together as printed (`0-45,92-1370` where the
            // CPU affinity filled its column and the NUMA node followed).
            // Which value is which is unknown: none is read.
            // So was one whose last value ends in a `GPU NUMA ID` `N/A`
            // with a value run onto it (`0N/A`) that [`unfused`] could not
            // take apart.
            let cells_whole = r.cells.len() >= header.devices.len();
            let short = d.kind == DeviceKind::Gpu && cells_whole && !placed.reaches_last;
            let why = if !short {
                None
            } else if wider_after > screen_width(r.line.trim_end()) {
                Some("a wider row below is whole")
            } else if r
                .values
                .last()
                .is_some_and(|v| v.len() > 3 && v.ends_with("N/A"))
            {
                Some("the last runs into `N/A`")
            } else {
                None
            };
            if let Some(why) = why {
                unread.warn(
                    crate::diag::WarningKind::Unreadable,
                    LineSpan::line(*number),
                    format!(
                        "{}'s affinity values (`{}`) do not fill the header's {} column(s), and {why}: they ran together as printed and are not read",
                        r.name,
                        r.values.join(" "),
                        header.affinity.len()
                    ),
                );
                continue;
            }
            d.partial = row_partial(*number, r, &header, d.kind, &placed);
            // A row that stops before its last affinity column may have
            // lost the end of the last value it shows: that one is not kept.
            let trusted = if placed.reaches_last {
                placed.values.len()
            } else {
                placed.values.len().saturating_sub(1)
            };
            for (title, value) in placed.values.iter().take(trusted) {
                if cut_at_the_left(title, value) {
                    // `-31,64-95` of `0-31,64-95`: the paste lost the
                    // value's first characters, and what is left is no
                    // CPU list of the GPU's.
                    let what = format!("CPU Affinity: `{value}` cut at the left");
                    match &mut d.partial {
                        Some(p) => p.missing.push(what),
                        None => {
                            d.partial =
                                Some(Partial::new(PartialReason::ShortRow, vec![what], *number));
                        }
                    }
                    unread.warn(
                        crate::diag::WarningKind::Truncated,
                        LineSpan::line(*number),
                        format!(
                            "{}'s CPU Affinity `{value}` begins with `{}`: its first characters were cut off, and it is not read",
                            r.name,
                            value.chars().next().unwrap_or('-')
                        ),
                    );
                    continue;
                }
                let slot = match *title {
                    "CPU Affinity" => &mut d.cpu_affinity,
                    "NUMA Affinity" => &mut d.numa_affinity,
                    _ => &mut d.gpu_numa_id,
                };
                *slot = Some((*value).to_owned());
            }
        }
    }
    if columns_cut {
        mirror_columnless_cells(&mut out, &columnless);
    }
    mark_missing_rows(&mut out, &raw.rows, &header);
    out.pci_only = pci_only(&out.legend, &out.cells);
    if let Some((found, shown, line)) = raw.not_shown {
        // Any GPU's nearest NIC may be one not shown: the GPU–NIC
        // distances are not all there, whatever else the matrix lost.
        out.partial = Some(Partial::new(
            PartialReason::NotShown,
            vec![format!("{} of the {found} NICs found", found - shown)],
            line,
        ));
    }
    for (nic, _) in &raw.nic_legend {
        if !out.devices.iter().any(|d| &d.name == nic) {
            unread.warn(
                crate::diag::WarningKind::Suspicious,
                LineSpan::line(lines.first().map_or(1, |l| l.number)),
                format!("the NIC legend names {nic}, which has no column in the matrix"),
            );
        }
    }
    Parsed {
        value: out,
        warnings: in_line_order(unread),
    }
}

/// Whether a matrix is the PCIe-only view (`nvidia-smi topo -mp`), whose
/// legend has no NVLink entry and whose cells never name NVLink: NVLink
/// rules must not read its PCIe paths as links lost. The cells decide
/// first: any `NV<n>` cell is NVLink shown, whatever the legend says
/// (drivers of 2017 and earlier, and hand-shortened pastes, print
/// `NV1 = Connected via NVLink …` instead of `NV#`). Without an NVLink
/// cell, a legend that lists `NV#` or `NV<n>` says the view could show
/// NVLink (none is there); one that lists neither says it is `-mp`.
/// `None` when there is neither an NVLink cell nor a legend to tell.
fn pci_only(legend: &[LegendEntry], cells: &[Cell<Link>]) -> Option<bool> {
    if cells.iter().any(|c| matches!(c.value, Link::Nvlink { .. })) {
        return Some(false);
    }
    if legend.is_empty() {
        return None;
    }
    let nvlink_entry = legend.iter().any(|e| {
        e.symbol
            .strip_prefix("NV")
            .is_some_and(|n| n == "#" || (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())))
    });
    Some(!nvlink_entry)
}

/// Each column's name, made once for the cells of every row to share.
fn shared_names(header: &Header<'_>) -> Vec<Arc<str>> {
    header.devices.iter().map(|d| Arc::from(&**d)).collect()
}

/// The shared name of a row's device: that of the column [`row`] found
/// its name in (not searched for again), or, for a device hidden behind a
/// header's `...` (in no column), a name of its own.
fn row_name(names: &[Arc<str>], row: &Row<'_>) -> Arc<str> {
    names
        .get(row.column)
        .map_or_else(|| Arc::from(row.name), Arc::clone)
}

/// The cells of a row that can be trusted. A row with fewer cells than
/// columns and nothing after them was cut: its last cell may be cut
/// mid-word (`NV1` of `NV18`) and is left out with the missing ones.
fn trusted_cells<'r, 't>(r: &'r Row<'t>, header: &Header<'_>) -> &'r [&'t str] {
    let cut = r.cells.len() < header.devices.len() && r.values.is_empty();
    let keep = if cut {
        r.cells.len().saturating_sub(1)
    } else {
        r.cells.len()
    };
    r.cells.get(..keep).unwrap_or_default()
}

/// For each row, the screen width of the widest GPU row after it with a
/// cell per column and a value per affinity title (0 if none): one pass
/// from the last row up.
fn wider_whole_rows_after(rows: &[(usize, Row<'_>)], header: &Header<'_>) -> Vec<usize> {
    let mut widest = 0;
    let mut out = vec![0; rows.len()];
    for (slot, (_, r)) in out.iter_mut().zip(rows).rev() {
        *slot = widest;
        let whole = r.name.starts_with("GPU")
            && r.cells.len() >= header.devices.len()
            && r.values.len() >= header.affinity.len();
        if whole {
            widest = widest.max(screen_width(r.line.trim_end()));
        }
    }
    out
}

/// What a row lacks: cells for the last columns, or (GPU rows) the
/// affinity values the header announces. A row whose last value may be
/// cut mid-word counts that value as missing too.
fn row_partial(
    number: usize,
    r: &Row<'_>,
    header: &Header<'_>,
    kind: DeviceKind,
    placed: &Placed<'_>,
) -> Option<Partial> {
    let cells = trusted_cells(r, header).len();
    let mut missing: Vec<String> = header
        .devices
        .iter()
        .skip(cells)
        .map(|d| (**d).to_owned())
        .collect();
    if kind == DeviceKind::Gpu && !placed.reaches_last {
        // The last value read may be a cut one: count it missing too,
        // with every column after the one before it.
        let kept = placed
            .values
            .len()
            .checked_sub(2)
            .and_then(|i| placed.values.get(i))
            .map_or(0, |(title, _)| {
                header
                    .affinity
                    .iter()
                    .position(|t| t == title)
                    .map_or(0, |i| i + 1)
            });
        missing.extend(header.affinity.iter().skip(kept).map(|t| (*t).to_owned()));
    }
    (!missing.is_empty()).then(|| Partial::new(PartialReason::ShortRow, missing, number))
}

/// A row's affinity values, each with the title of its column.
struct Placed<'t> {
    values: Vec<(&'static str, &'t str)>,
    /// The row has a value in the header's last affinity column: it was
    /// printed to its end, and a column it has no value in is blank (what
    /// nvidia-smi prints where the driver knows no affinity, as in many
    /// virtual machines), not cut off.
    reaches_last: bool,
}

/// Places a row's affinity values under the header's titles.
///
/// A row with a value per title takes them in order. A row with fewer
/// either lost its end or printed some columns blank: where the driver
/// knows no CPU or NUMA affinity (many virtual machines) nvidia-smi
/// prints nothing between their tabs (`PXB<TAB><TAB><TAB><TAB>N/A`).
/// The tabs tell the two apart: nvidia-smi ends the cells with one tab
/// and separates the values with one, plus an empty field before `GPU
/// NUMA ID` (`0-47<TAB>0<TAB><TAB>N/A`), so every further tab is a blank
/// column. A paste that turned the tabs into spaces keeps their stops
/// (every value starts at a multiple of 8 on the screen), and the
/// spaces count as the tabs they were. A short row whose values do not
/// all stand on tab stops, or do not fit the layout, is read in order:
/// its missing columns are the last ones.
fn placed_values<'t>(r: &Row<'t>, header: &Header<'_>) -> Placed<'t> {
    let titles = &header.affinity;
    if r.values.len() < titles.len() {
        if let Some(placed) = placed_by_tabs(r, titles) {
            return placed;
        }
        if let Some(values) = unfused(&r.values, titles) {
            return Placed {
                values: titles.iter().copied().zip(values).collect(),
                reaches_last: true,
            };
        }
    }
    Placed {
        values: titles
            .iter()
            .copied()
            .zip(r.values.iter().copied())
            .collect(),
        reaches_last: r.values.len() >= titles.len(),
    }
}

/// A row's affinity values where nvidia-smi ran some together, taken
/// apart; `None` unless each comes apart one way only.
///
/// A CPU list that fills its column runs into the NUMA node after it
/// (`48-95,144-1911` is `48-95,144-191` and `1`), and a NUMA node into
/// the `N/A` of `GPU NUMA ID` (`0N/A`); vllm#17516 prints every GPU row
/// so, none wider to show the layout. A row whose last value ends in
/// the `N/A` of `GPU NUMA ID` was printed to its end (a cut does not
/// leave a whole `N/A` after a fused value): `N/A` comes off the end of
/// a value, and a CPU list gives up the NUMA node at its end where one
/// split alone leaves a list that still ascends ([`cpu_list_then_node`]).
fn unfused<'t>(values: &[&'t str], titles: &[&'static str]) -> Option<Vec<&'t str>> {
    if titles.last() != Some(&"GPU NUMA ID") || !values.last()?.ends_with("N/A") {
        return None;
    }
    let mut out = Vec::with_capacity(titles.len());
    for v in values {
        match v.strip_suffix("N/A").filter(|p| !p.is_empty()) {
            Some(p) if p == "N/A" || p.bytes().all(|b| b.is_ascii_digit()) => {
                out.extend([p, v.get(p.len()..)?]);
            }
            Some(_) => return None,
            None => out.push(v),
        }
    }
    if out.len() + 1 == titles.len() && titles.first() == Some(&"CPU Affinity") {
        let (cpus, node) = cpu_list_then_node(out.first()?)?;
        out.splice(0..1, [cpus, node]);
    }
    (out.len() == titles.len()).then_some(out)
}

/// A CPU list with a NUMA node run onto its end, taken apart where only
/// one split of its last number leaves both a list whose numbers ascend
/// (`0-47,96-1430` → `0-47,96-143` and `0`: `96-14`, `96-1` descend)
/// and a node without a leading zero. `None` where no split or more than
/// one does (`0-1511`: `0-151` and `1`, or `0-15` and `11`).
fn cpu_list_then_node(value: &str) -> Option<(&str, &str)> {
    if !value
        .bytes()
        .all(|b| b.is_ascii_digit() || b == b'-' || b == b',')
    {
        return None;
    }
    let start = value.rfind(['-', ',']).map_or(0, |i| i + 1);
    // The number before the last one, which the last must exceed.
    let before = value
        .get(..start.saturating_sub(1))
        .and_then(|head| head.rsplit(['-', ',']).next())
        .and_then(|n| n.parse::<u64>().ok());
    let digits = value.get(start..)?;
    let mut found = None;
    for cut in 1..digits.len() {
        let (last, node) = digits.split_at(cut);
        let bare = |n: &str| n == "0" || !n.starts_with('0');
        let Ok(number) = last.parse::<u64>() else {
            continue;
        };
        if bare(last) && bare(node) && before.is_none_or(|b| number > b) {
            if found.is_some() {
                return None;
            }
            found = Some(start + cut);
        }
    }
    found.map(|at| value.split_at(at))
}

/// [`placed_values`] by the row's tab stops; `None` where they do not
/// say.
fn placed_by_tabs<'t>(r: &Row<'t>, titles: &[&'static str]) -> Option<Placed<'t>> {
    // The fields nvidia-smi prints after the cells: a title each, and the
    // empty one before `GPU NUMA ID`.
    let layout: Vec<Option<&'static str>> = titles
        .iter()
        .flat_map(|&t| {
            let pad = (t == "GPU NUMA ID").then_some(None);
            pad.into_iter().chain([Some(t)])
        })
        .collect();
    let last_cell = r.cells.last()?;
    let mut end = screen_column(r.line, last_cell) + last_cell.chars().count();
    let mut field = 0usize;
    let mut values = Vec::with_capacity(r.values.len());
    for value in &r.values {
        let start = screen_column(r.line, value);
        if start % 8 != 0 || start <= end {
            return None;
        }
        // One tab separates; each further one is an empty field.
        let tabs = start / 8 - end / 8;
        field += tabs.checked_sub(1)?;
        let title = (*layout.get(field)?)?;
        values.push((title, *value));
        field += 1;
        end = start + value.chars().count();
    }
    Some(Placed {
        reaches_last: field == layout.len(),
        values,
    })
}

/// The screen column `part` (a slice of `line`) starts at.
fn screen_column(line: &str, part: &str) -> usize {
    let offset = (part.as_ptr() as usize).saturating_sub(line.as_ptr() as usize);
    screen_width(line.get(..offset).unwrap_or_default())
}

/// How wide `text` is on a terminal: tabs move to the next stop of 8.
fn screen_width(text: &str) -> usize {
    text.chars().fold(0, |col, c| {
        if c == '\t' {
            (col / 8 + 1) * 8
        } else {
            col + 1
        }
    })
}

/// Whether an affinity value lost its first characters: a CPU list never
/// begins with `-` or `,` (`-31,64-95` is what is left of `0-31,64-95`).
fn cut_at_the_left(title: &str, value: &str) -> bool {
    title == "CPU Affinity" && value.starts_with(['-', ','])
}

/// A header of GPU columns alone above rows of devices it has no column
/// for ([`row_without_column`]): the NIC columns were cut out of the
/// header. The rows' devices are read, with their cells to each GPU; the
/// cells between them are unknown, and the matrix says so. A NIC the NIC
/// legend names without a row is a device whose row is missing. The NIC
/// rows are all there when a legend follows them (nvidia-smi prints every
/// row before it); otherwise rows after the last may be cut too, and the
/// matrix says that as well.
fn mark_columns_cut(
    out: &mut TopoMatrix,
    names: &[&str],
    (nic_legend, legend_seen): (&[(String, String)], bool),
    header: &Header<'_>,
    unread: &mut Unread,
) {
    for name in names
        .iter()
        .copied()
        .chain(nic_legend.iter().map(|(nic, _)| nic.as_str()))
    {
        if !out.devices.iter().any(|d| d.name == name) {
            out.devices.push(new_device(name, nic_legend));
        }
    }
    let list = names.join(", ");
    let mut missing = vec![format!(
        "header columns {list}: the cells between them not read"
    )];
    let rows_whole = legend_seen;
    if !rows_whole {
        missing.push("rows after the last one read (no legend after them)".to_owned());
    }
    let reason = if rows_whole {
        PartialReason::MissingColumns
    } else {
        PartialReason::MissingFields
    };
    out.partial = Some(Partial::new(reason, missing, header.line));
    unread.warn(
        crate::diag::WarningKind::Truncated,
        LineSpan::line(header.line),
        format!(
            "the header has no column for {list}, whose rows hold a cell per GPU column: their columns were cut out of the header; their cells to the GPUs are read, those between them are unknown"
        ),
    );
}

/// Each GPU's cells to the devices whose columns the header lost, taken
/// from those devices' rows: nvidia-smi prints one path between two
/// devices in both of their rows, so a NIC row's `PIX` under `GPU1` is
/// GPU1's cell to that NIC. Each keeps the line of the row it was read
/// from. The rules that read a GPU's row (its nearest NIC) then find its
/// NICs as in a whole matrix.
fn mirror_columnless_cells(out: &mut TopoMatrix, columnless: &[&str]) {
    let mirrored: Vec<Cell<Link>> = out
        .cells
        .iter()
        .filter(|c| columnless.contains(&&*c.from) && !columnless.contains(&&*c.to))
        .map(|c| Cell {
            from: Arc::clone(&c.to),
            to: Arc::clone(&c.from),
            value: c.value.clone(),
            line: c.line,
        })
        .collect();
    out.cells.extend(mirrored);
}

/// Devices the header names with no row at all, once rows have begun:
/// the paste stopped (or skipped) before them.
fn mark_missing_rows(out: &mut TopoMatrix, rows: &[(usize, Row<'_>)], header: &Header<'_>) {
    let last = rows.last().map_or(header.line, |(n, _)| *n);
    for d in &mut out.devices {
        if d.line.is_none() {
            d.partial = Some(Partial::new(
                PartialReason::MissingRow,
                vec![d.name.clone()],
                last,
            ));
        }
    }
}

/// Row checks run after the lines were read; warnings are given in line order.
fn in_line_order(unread: Unread) -> Vec<crate::diag::Warning> {
    let mut w = unread.finish();
    w.sort_by_key(|w| w.span);
    w
}

fn new_device(name: &str, nic_legend: &[(String, String)]) -> Device {
    let kind = if name.starts_with("GPU") {
        DeviceKind::Gpu
    } else {
        DeviceKind::Nic
    };
    let rdma_device = match kind {
        DeviceKind::Gpu => None,
        DeviceKind::Nic if name.starts_with("NIC") => nic_legend
            .iter()
            .find(|(nic, _)| nic == name)
            .map(|(_, dev)| dev.clone()),
        DeviceKind::Nic => Some(name.to_owned()),
    };
    Device {
        name: name.to_owned(),
        kind,
        rdma_device,
        cpu_affinity: None,
        numa_affinity: None,
        gpu_numa_id: None,
        line: None,
        partial: None,
    }
}

/// Warns about rows with fewer cells than columns, or more values than the
/// affinity columns hold: a sign the paste lost or fused something.
fn check_width(number: usize, r: &Row<'_>, header: &Header<'_>, unread: &mut Unread) {
    let span = LineSpan::line(number);
    if r.cells.len() < header.devices.len() {
        unread.warn(
            crate::diag::WarningKind::Truncated,
            span,
            format!(
                "row {} has {} cell(s) for {} column(s); the missing ones are unknown",
                r.name,
                r.cells.len(),
                header.devices.len()
            ),
        );
    }
    if r.values.len() > header.affinity.len() {
        unread.warn(
            crate::diag::WarningKind::Unreadable,
            span,
            format!(
                "row {} has {} value(s) after its cells, more than the {} affinity column(s); the extra ones are ignored",
                r.name,
                r.values.len(),
                header.affinity.len()
            ),
        );
    }
}

/// Reads `nvidia-smi topo -p2p <cap>`.
#[must_use]
pub fn parse_p2p(lines: &[Line<'_>]) -> Parsed<TopoP2p> {
    let mut unread = Unread::default();
    let raw = read(lines, Vocabulary::P2p, &mut unread, None);
    let mut out = TopoP2p {
        legend: raw.legend,
        ..TopoP2p::default()
    };
    if let Some(header) = raw.header {
        let names = shared_names(&header);
        for (number, r) in &raw.rows {
            check_width(*number, r, &header, &mut unread);
            let from = row_name(&names, r);
            for (to, text) in names.iter().zip(&r.cells) {
                out.cells.push(Cell {
                    from: Arc::clone(&from),
                    to: Arc::clone(to),
                    value: P2pStatus::parse(text),
                    line: *number,
                });
            }
        }
        out.gpus = header.devices.into_iter().map(Cow::into_owned).collect();
    }
    Parsed {
        value: out,
        warnings: in_line_order(unread),
    }
}

/// `topo -p2p` prints which capability it shows only in its command line.
fn attach_p2p_command(p2p: &mut TopoP2p, argv: &[&str]) {
    if p2p.capability.is_none() {
        p2p.capability = p2p_capability(argv);
    }
}

/// The capability named by `-p2p <cap>` on a command line.
pub(crate) fn p2p_capability(argv: &[&str]) -> Option<P2pCapability> {
    let i = argv
        .iter()
        .position(|a| *a == "-p2p" || *a == "--p2pstatus")?;
    match *argv.get(i + 1)? {
        "r" => Some(P2pCapability::Read),
        "w" => Some(P2pCapability::Write),
        "rw" => Some(P2pCapability::ReadWrite),
        "n" => Some(P2pCapability::Nvlink),
        "a" => Some(P2pCapability::Atomics),
        "p" => Some(P2pCapability::Pcie),
        _ => None,
    }
}

/// `2 GPU(s), 4 NIC(s); GPU pairs: 1 NV18` or `…: 1 without NVLink`.
#[must_use]
pub fn summary(m: &TopoMatrix) -> String {
    let gpus = m.gpus().count();
    let nics = m.nics().count();
    let mut kinds: Vec<(String, usize)> = Vec::new();
    let names: Vec<&str> = m.gpus().map(|d| d.name.as_str()).collect();
    for (i, a) in names.iter().enumerate() {
        for b in names.iter().skip(i + 1) {
            if let Some(c) = m.cell(a, b) {
                let label = c.value.label();
                match kinds.iter_mut().find(|(k, _)| *k == label) {
                    Some((_, n)) => *n += 1,
                    None => kinds.push((label, 1)),
                }
            }
        }
    }
    let pairs: Vec<String> = kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
    let view = if m.pci_only == Some(true) {
        " (PCIe only)"
    } else {
        ""
    };
    let mut s = format!("{gpus} GPU(s), {nics} NIC(s){view}");
    if !pairs.is_empty() {
        let _ = write!(s, "; GPU pairs: {}", pairs.join(", "));
    }
    s
}

/// `2 GPU(s); 2 pair(s) OK, 0 not OK`.
#[must_use]
pub fn summary_p2p(p: &TopoP2p) -> String {
    let pairs = p
        .cells
        .iter()
        .filter(|c| c.value != P2pStatus::SelfCell)
        .count();
    let bad = p.not_ok().count();
    format!(
        "{} GPU(s); {} ordered pair(s): {} OK, {} not OK",
        p.gpus.len(),
        pairs,
        pairs - bad,
        bad
    )
}

/// Renders the matrix as the tool prints it (tab-separated, without the
/// ANSI underline).
#[must_use]
pub fn render(m: &TopoMatrix) -> String {
    let mut s = String::new();
    for d in &m.devices {
        let _ = write!(s, "\t{}", d.name);
    }
    for t in &m.affinity_columns {
        let _ = write!(s, "\t{t}");
    }
    s.push('\n');
    for d in &m.devices {
        if d.line.is_none() {
            continue;
        }
        s.push_str(&d.name);
        for col in &m.devices {
            let cell = m
                .cells
                .iter()
                .find(|c| *c.from == *d.name && *c.to == *col.name);
            let label = cell.map_or(String::new(), |c| c.value.label());
            let _ = write!(s, "\t{label}");
        }
        for t in &m.affinity_columns {
            let v = match t.as_str() {
                "CPU Affinity" => &d.cpu_affinity,
                "NUMA Affinity" => &d.numa_affinity,
                _ => &d.gpu_numa_id,
            };
            if let Some(v) = v {
                let _ = write!(s, "\t{v}");
            }
        }
        s.push('\n');
    }
    if !m.legend.is_empty() {
        s.push_str("\nLegend:\n\n");
        for e in &m.legend {
            let _ = writeln!(s, "  {:<4} = {}", e.symbol, e.meaning);
        }
    }
    let nics: Vec<&Device> = m
        .nics()
        .filter(|d| d.name.starts_with("NIC") && d.rdma_device.is_some())
        .collect();
    if !nics.is_empty() {
        s.push_str("\nNIC Legend:\n\n");
        for d in nics {
            let _ = writeln!(
                s,
                "  {}: {}",
                d.name,
                d.rdma_device.as_deref().unwrap_or("")
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::lines_of;

    /// Eight GPUs and four NICs as a newer driver prints them (tabs,
    /// NIC legend), shortened to two GPUs and two NICs.
    const WITH_NICS: &str = "\tGPU0\tGPU1\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID
GPU0\t X \tNV18\tPIX\tSYS\t0-47,96-143\t0\t\tN/A
GPU1\tNV18\t X \tSYS\tPXB\t48-95,144-191\t1\t\tN/A
NIC0\tPIX\tSYS\t X \tSYS
NIC1\tSYS\tPXB\tSYS\t X

Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  NV#  = Connection traversing a bonded set of # NVLinks

NIC Legend:

  NIC0: mlx5_0
  NIC1: mlx5_1
";

    #[test]
    fn reads_gpus_nics_affinity_and_the_nic_legend() {
        let p = parse(&lines_of(WITH_NICS));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let m = &p.value;
        assert_eq!(m.devices.len(), 4);
        assert_eq!(
            m.cell("GPU0", "GPU1").unwrap().value,
            Link::Nvlink { count: 18 }
        );
        assert_eq!(m.cell("GPU0", "GPU1").unwrap().line, 2);
        assert_eq!(m.cell("GPU1", "mlx5_1").unwrap().value, Link::Pxb);
        assert_eq!(m.cell("NIC1", "GPU1").unwrap().line, 5);
        let gpu1 = m.device("GPU1").unwrap();
        assert_eq!(gpu1.cpu_affinity.as_deref(), Some("48-95,144-191"));
        assert_eq!(gpu1.numa_affinity.as_deref(), Some("1"));
        assert_eq!(gpu1.gpu_numa_id.as_deref(), Some("N/A"));
        assert_eq!(
            m.device("NIC1").unwrap().rdma_device.as_deref(),
            Some("mlx5_1")
        );
        assert_eq!(m.device("NIC0").unwrap().cpu_affinity, None);
        assert_eq!(m.pci_only, Some(false));
        assert!(m.gpu_pairs_without_nvlink().is_empty());
        let near: Vec<&str> = m.nearest_nics("GPU0").iter().map(|c| &*c.to).collect();
        assert_eq!(near, vec!["NIC0"]);
        assert_eq!(summary(m), "2 GPU(s), 2 NIC(s); GPU pairs: 1 NV18");
    }

    #[test]
    fn old_drivers_name_nics_by_device_and_print_soc() {
        let text = "        GPU0    GPU1    mlx5_0  CPU Affinity
GPU0     X      SOC     PHB     0-11
GPU1    SOC      X      SOC     12-23
mlx5_0  PHB     SOC      X
";
        let p = parse(&lines_of(text));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let m = &p.value;
        assert_eq!(m.affinity_columns, vec!["CPU Affinity"]);
        assert_eq!(
            m.device("mlx5_0").unwrap().rdma_device.as_deref(),
            Some("mlx5_0")
        );
        let missing = m.gpu_pairs_without_nvlink();
        assert_eq!(missing.len(), 1);
        assert_eq!(missing[0].value, Link::Sys);
        assert_eq!(m.device("GPU1").unwrap().numa_affinity, None);
        assert_eq!(m.pci_only, None);
    }

    /// The legend of 2017-era drivers (and of hand-shortened pastes)
    /// names `NV1`/`NV2`, not `NV#`: the matrix still shows NVLink.
    #[test]
    fn an_old_legend_naming_nv_n_is_not_the_pcie_only_view() {
        let text = "        GPU0    GPU1    GPU2    CPU Affinity
GPU0     X      NV2     SYS     0-11
GPU1    NV2      X      SYS     0-11
GPU2    SYS     SYS      X      12-23

Legend:
  X   = Self
  NV2 = Connected via NVLink with 2 hops
  SYS = Connected via the PCIe or CPU subsystem
";
        let p = parse(&lines_of(text));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let m = &p.value;
        assert_eq!(m.pci_only, Some(false));
        assert_eq!(summary(m), "3 GPU(s), 0 NIC(s); GPU pairs: 1 NV2, 2 SYS");
    }

    /// What decides the view: an NVLink cell first, then the legend.
    #[test]
    fn the_pcie_only_view_follows_the_cells_then_the_legend() {
        let matrix = |cell: &str| {
            format!(
                "        GPU0    GPU1    CPU Affinity
GPU0     X      {cell}     0-7
GPU1    {cell}      X      0-7
"
            )
        };
        let pci = |text: String| parse(&lines_of(&text)).value.pci_only;
        let legend_mp = "
Legend:
  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge
";
        let legend_nv = "  NV#  = Connection traversing a bonded set of # NVLinks\n";
        let legend_nv_old = "  NV4 = Connected via NVLink with 4 hops\n";
        // `-mp`: no NVLink entry and no NVLink cell.
        assert_eq!(pci(matrix("PHB") + legend_mp), Some(true));
        // `-m` on a host without NVLink: the legend still lists NV#.
        assert_eq!(pci(matrix("PHB") + legend_mp + legend_nv), Some(false));
        assert_eq!(pci(matrix("SYS") + legend_mp + legend_nv_old), Some(false));
        // An NVLink cell is NVLink shown, even where the legend was cut
        // before its NV# line (the last one modern drivers print).
        assert_eq!(pci(matrix("NV12") + legend_mp), Some(false));
        assert_eq!(pci(matrix("NV12")), Some(false));
        // Neither a legend nor an NVLink cell: unknown.
        assert_eq!(pci(matrix("PHB")), None);
    }

    #[test]
    fn fused_cells_and_headers_and_wrapped_legend_survive() {
        let text = "   GPU0 GPU1 GPU2 NIC10NIC11 CPU Affinity NUMA Affinity
   GPU0  X  NV18NV18 SYSSYS 0-31 0
GPU1 NV18 X NV18 NODE NODE 0-31 0

 GPU2 NV17 NV18  X  PIX PIX 32-63 1
NIC10 SYS NODE PIX  X PIX
NIC11 SYS NODE PIX PIX  X
Legend:
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA
nodes (e.g., QPI/UPI)
  NV#  = Connection traversing a bonded set of # NVLinks
";
        let p = parse(&lines_of(text));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let m = &p.value;
        assert_eq!(m.devices.len(), 5);
        assert_eq!(
            m.cell("GPU0", "GPU2").unwrap().value,
            Link::Nvlink { count: 18 }
        );
        assert_eq!(m.cell("GPU0", "NIC11").unwrap().value, Link::Sys);
        assert_eq!(m.cell("GPU2", "GPU0").unwrap().line, 5);
        assert_eq!(
            m.device("GPU2").unwrap().numa_affinity.as_deref(),
            Some("1")
        );
        assert!(m.legend[0].meaning.ends_with("NUMA nodes (e.g., QPI/UPI)"));
        assert_eq!(m.legend[0].span, LineSpan::new(9, 10));
        let near: Vec<&str> = m.nearest_nics("GPU2").iter().map(|c| &*c.to).collect();
        assert_eq!(near, vec!["NIC10", "NIC11"]);
        // GPU0 row says NV18 to GPU2 while GPU2's row says NV17: rules see both.
        assert_eq!(
            m.cell("GPU2", "GPU0").unwrap().value,
            Link::Nvlink { count: 17 }
        );
    }

    #[test]
    fn blank_affinity_columns_are_blank_not_cut() {
        // A VM's driver knows no CPU or NUMA affinity: nvidia-smi prints
        // nothing between their tabs and `N/A` under GPU NUMA ID. Tabs as
        // printed, and turned into spaces by the paste, read alike.
        let tabs = "\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n\
                    GPU0\t X \tNV8\tPIX\t\t\t\tN/A\n\
                    GPU1\tNV8\t X \tPIX\t\t\t\tN/A\n\
                    NIC0\tPIX\tPIX\t X \n";
        let spaces: String = tabs.lines().map(|l| expand_tabs(l) + "\n").collect();
        for text in [tabs.to_owned(), spaces] {
            let p = parse(&lines_of(&text));
            let gpu0 = &p.value.devices[0];
            assert_eq!(gpu0.partial, None, "{text}");
            assert_eq!(gpu0.gpu_numa_id.as_deref(), Some("N/A"));
            assert_eq!(
                (gpu0.cpu_affinity.as_ref(), gpu0.numa_affinity.as_ref()),
                (None, None)
            );
            assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        }
        // Rows cut before their last column stay cut, whatever their tabs.
        for (row, missing) in [
            (
                "GPU0\t X \tNV8\tPIX\t0-47\t0",
                vec!["NUMA Affinity", "GPU NUMA ID"],
            ),
            (
                "GPU0\t X \tNV8\tPIX\t\t\t",
                vec!["CPU Affinity", "NUMA Affinity", "GPU NUMA ID"],
            ),
            (
                "GPU0\t X \tNV8\tPIX\t0-4",
                vec!["CPU Affinity", "NUMA Affinity", "GPU NUMA ID"],
            ),
            // Not on tab stops: read in order, the last ones missing.
            (
                "GPU0 X NV8 PIX    N/A",
                vec!["CPU Affinity", "NUMA Affinity", "GPU NUMA ID"],
            ),
        ] {
            let text =
                format!("\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n{row}\n");
            let p = parse(&lines_of(&text));
            let partial = p.value.devices[0].partial.as_ref().expect(row);
            assert_eq!(partial.missing, missing, "{row}");
        }
        // A full row is read in order, as printed.
        let full = "\tGPU0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\nGPU0\t X \t0-15\t0\t\tN/A\n";
        let d = &parse(&lines_of(full)).value.devices[0];
        assert_eq!(
            (
                d.cpu_affinity.as_deref(),
                d.numa_affinity.as_deref(),
                d.gpu_numa_id.as_deref()
            ),
            (Some("0-15"), Some("0"), Some("N/A"))
        );
    }

    #[test]
    fn values_run_together_above_a_wider_whole_row_are_unread_not_cut() {
        // The CPU affinity filled its column and the NUMA node followed it
        // with no space (`0-4511`: `0-451` and `1`, or `0-45` and `11`);
        // the rows below are whole and wider: no cut, the values are
        // unknown.
        let text = "        GPU0    GPU1    CPU Affinity       NUMA Affinity   GPU NUMA ID\n\
                    GPU0     X      NV18    0-4511               N/A\n\
                    GPU1    NV18     X      46-91,138-183      1               N/A\n";
        let p = parse(&lines_of(text));
        let gpu0 = &p.value.devices[0];
        assert_eq!(gpu0.partial, None);
        assert_eq!(
            (gpu0.cpu_affinity.as_ref(), gpu0.numa_affinity.as_ref()),
            (None, None)
        );
        assert_eq!(p.value.devices[1].numa_affinity.as_deref(), Some("1"));
        assert_eq!(p.warnings.len(), 1, "{:?}", p.warnings);
        assert_eq!(p.warnings[0].span, LineSpan::line(2));
        // The same short row as the matrix's last is cut.
        let last = "        GPU0    GPU1    CPU Affinity       NUMA Affinity   GPU NUMA ID\n\
                    GPU1    NV18     X      46-91,138-183      1               N/A\n\
                    GPU0     X      NV18    0-4511               N/A\n";
        let p = parse(&lines_of(last));
        assert!(p.value.devices[0].partial.is_some());
        // One split alone ascends (`0-45,92-137` and `0`): read.
        let one_way = text.replace("0-4511", "0-45,92-1370");
        let p = parse(&lines_of(&one_way));
        let gpu0 = &p.value.devices[0];
        assert_eq!(
            (gpu0.cpu_affinity.as_deref(), gpu0.numa_affinity.as_deref()),
            (Some("0-45,92-137"), Some("0"))
        );
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    }

    #[test]
    fn values_run_together_in_every_row_come_apart_where_one_way_only() {
        // vllm#17516's shape: no row is wider than the others; each ends
        // in the `N/A` of GPU NUMA ID, with the NUMA node run onto it or
        // onto the CPU list before it.
        let text = "        GPU0    GPU1    GPU2    CPU Affinity    NUMA Affinity   GPU NUMA ID\n\
                    GPU0     X      NV12    NV12    0-31,64-95 0N/A\n\
                    GPU1    NV12     X      NV12    32-63,96-1271               N/A\n\
                    GPU2    NV12    NV12     X      0-1511N/A\n";
        let p = parse(&lines_of(text));
        let got = |i: usize| {
            let d = &p.value.devices[i];
            (
                d.cpu_affinity.as_deref(),
                d.numa_affinity.as_deref(),
                d.gpu_numa_id.as_deref(),
                d.partial.is_some(),
            )
        };
        assert_eq!(got(0), (Some("0-31,64-95"), Some("0"), Some("N/A"), false));
        assert_eq!(
            got(1),
            (Some("32-63,96-127"), Some("1"), Some("N/A"), false)
        );
        // `0-151` and `1`, or `0-15` and `11`: not read, and not cut
        // (a whole `N/A` ends it).
        assert_eq!(got(2), (None, None, None, false));
        assert_eq!(p.warnings.len(), 1, "{:?}", p.warnings);
        assert_eq!(p.warnings[0].span, LineSpan::line(4));
    }

    #[test]
    fn the_notice_of_nics_not_shown_opens_the_matrix_and_marks_it() {
        assert_eq!(
            nics_not_shown("76 NICs found in the topology, only displaying 56 in the matrix."),
            Some((76, 56))
        );
        for other in [
            "76 NICs found in the topology, only displaying 76 in the matrix.",
            "76 NICs found in the topology.",
            "8 GPUs found in the topology, only displaying 4 in the matrix.",
        ] {
            assert_eq!(nics_not_shown(other), None, "{other}");
        }
        let text = "12 NICs found in the topology, only displaying 2 in the matrix.\n\
                    \tGPU0\tGPU1\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n\
                    GPU0\t X \tNV18\tPIX\tSYS\t0-47\t0\t\tN/A\n\
                    GPU1\tNV18\t X \tSYS\tNODE\t48-95\t1\t\tN/A\n";
        let lines = lines_of(text);
        assert_eq!(
            (FORMAT.detect)(&lines).map(|b| b.key),
            Some("topo notice".to_owned())
        );
        // Over anything but a matrix header it is no matrix.
        assert_eq!(
            (FORMAT.detect)(&lines_of(&text.replace("\tGPU0", "\tfoo"))),
            None
        );
        let p = parse(&lines);
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let partial = p.value.partial.as_ref().unwrap();
        assert_eq!(partial.reason, PartialReason::NotShown);
        assert_eq!((partial.missing.len(), partial.line), (1, 1));
        assert_eq!(p.value.devices.len(), 4);
    }

    #[test]
    fn a_cpu_list_gives_up_its_node_only_where_one_split_ascends() {
        for (value, want) in [
            ("0-47,96-1430", Some(("0-47,96-143", "0"))),
            ("48-95,144-1911", Some(("48-95,144-191", "1"))),
            ("0-70", Some(("0-7", "0"))),
            ("41", Some(("4", "1"))),
            ("0,2,41", Some(("0,2,4", "1"))),
            ("0-1511", None),
            ("123", None),
            ("0-7", None),
            ("7", None),
            ("0-4,N/A", None),
        ] {
            assert_eq!(cpu_list_then_node(value), want, "{value}");
        }
    }

    #[test]
    fn a_legend_entry_ends_where_its_known_meaning_does_and_at_a_break() {
        let matrix = "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\n\
                      GPU0\t X \tSYS\t0-23\t0\n\
                      GPU1\tSYS\t X \t24-47\t1\n\nLegend:\n\n  X    = Self\n";
        let nv = "  NV#  = Connection traversing a bonded set of # NVLinks\n";
        // Right under a meaning printed whole, or after a blank line: the
        // line is no rest of the entry, and is reported, not glued.
        for tail in [
            format!("{nv}So GPU0 and GPU1 should be on NVLink but show SYS, why?\n"),
            format!("{nv}\n0x1c4\n"),
            "  SYS  = Connection traversing PCIe as well as the SMP interconnect\n\nbetween NUMA nodes (e.g., QPI/UPI)\n".to_owned(),
            "  PIX  = Connection traversing at most a single PCIe bridge\nbridges within a NUMA node\n".to_owned(),
        ] {
            let text = format!("{matrix}{tail}");
            let p = parse(&lines_of(&text));
            let last = p.value.legend.last().unwrap();
            assert_eq!(last.span.first_line, last.span.last_line, "{tail}");
            let unread: Vec<usize> = p.warnings.iter().map(|w| w.span.first_line).collect();
            assert_eq!(unread, vec![text.lines().count()], "{tail}");
        }
        // A wrapped meaning still reads whole, wrapped mid-word or twice.
        let wrapped = "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host\n\
                       Bridges within a NUMA node\n\
                       \x20 SYS  = Connection traversing PCIe as well as the SMP interconnect between NUM\n\
                       A nodes (e.g., QPI/\n\
                       UPI)\n\
                       \x20 NV4 = Connected via NVLink with 4\n\
                       hops\n";
        let p = parse(&lines_of(&format!("{matrix}{wrapped}")));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let spans: Vec<(usize, usize)> = p
            .value
            .legend
            .iter()
            .map(|e| (e.span.first_line, e.span.last_line))
            .collect();
        assert_eq!(spans, vec![(7, 7), (8, 9), (10, 12), (13, 14)]);
        // A known beginning whose rest is worded otherwise (a driver we do
        // not know) takes it too, unless it reads as the author's.
        let sys = "Connection traversing PCIe as well as the SMP interconnect between NUMA";
        assert!(wrapped_meaning(sys, "nodes (e.g., QPI/UPI/xGMI)").is_some());
        assert_eq!(wrapped_meaning(sys, "so why is this slow"), None);
        // An entry no driver we know prints takes the line under it, as
        // before.
        let new =
            "  C2C  = Connection traversing a chip-to-chip link between the\nCPU and the GPU\n";
        let p = parse(&lines_of(&format!("{matrix}{new}")));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        assert!(p.value.legend[1].meaning.ends_with("the CPU and the GPU"));
    }

    #[test]
    fn the_tools_own_lines_are_told_from_the_authors() {
        let above_text = "Legend:\n  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host\n";
        let above = lines_of(above_text);
        for own in [
            "Bridges within a NUMA node",
            "Legend:",
            "NIC Legend:",
            "X    = Self",
            "NIC0: mlx5_0",
            "GPU0 X NV18 0-47 0",
            "mlx5_0 PIX SYS",
            "GPU0\tGPU1\tCPU Affinity",
            "-----",
        ] {
            assert!(may_be_its_line(&above, own), "{own:?}");
        }
        let whole = lines_of("  NV#  = Connection traversing a bonded set of # NVLinks\n");
        for authors in [
            "So GPU0 and GPU1 should be on NVLink but show SYS, why?",
            "GPU0 and GPU1 are on one switch",
        ] {
            assert!(!may_be_its_line(&whole, authors), "{authors:?}");
        }
        // Under the `-p2p` legend's last entries too.
        for whole in ["Disabled by regkey", "Unknown", "Self"] {
            assert_eq!(wrapped_meaning(whole, "So why is P2P off?"), None);
        }
        // Across a blank line nothing wraps.
        let broken_text = format!("{above_text}\n");
        let broken = lines_of(&broken_text);
        assert!(!may_be_its_line(&broken, "Bridges within a NUMA node"));
    }

    /// `line` with its tabs turned into spaces to stops of 8.
    fn expand_tabs(line: &str) -> String {
        let mut out = String::new();
        for c in line.chars() {
            if c == '\t' {
                out.push(' ');
                while out.chars().count() % 8 != 0 {
                    out.push(' ');
                }
            } else {
                out.push(c);
            }
        }
        out
    }

    #[test]
    fn damaged_rows_are_warned_about_and_kept() {
        let text = "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \t0-7\nGPU1\tNV4\t X \t0-7\t9\tjunk\nsomething else\n";
        let p = parse(&lines_of(text));
        let lines: Vec<usize> = p.warnings.iter().map(|w| w.span.first_line).collect();
        assert_eq!(lines, vec![2, 3, 4]);
        assert_eq!(
            p.value.cell("GPU1", "GPU0").unwrap().value,
            Link::Nvlink { count: 4 }
        );
        assert_eq!(
            p.value.device("GPU0").unwrap().cpu_affinity.as_deref(),
            Some("0-7")
        );
    }

    #[test]
    fn ansi_underlined_header_reads_standalone() {
        let text = "\t\u{1b}[4mGPU0\tGPU1\tCPU Affinity\u{1b}[0m\nGPU0\t X \tPHB\t0-31\nGPU1\tPHB\t X \t0-31\n";
        let p = parse(&lines_of(text));
        assert!(p.warnings.is_empty());
        assert_eq!(p.value.gpu_pairs_without_nvlink()[0].value, Link::Phb);
    }

    #[test]
    fn underline_codes_that_lost_their_escape_byte_are_ignored() {
        let text = "\t[4mGPU0\tGPU1\tCPU Affinity\tNUMA Affinity[0m\nGPU0\t X \tSYS\t0-15\t0\nGPU1\tSYS\t X \t16-31\t1\n";
        let lines = lines_of(text);
        assert_eq!(classify(&lines), Some(MatrixKind::Links));
        let p = parse(&lines);
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        assert_eq!(p.value.gpu_pairs_without_nvlink()[0].value, Link::Sys);
        assert_eq!(p.value.affinity_columns.len(), 2);
    }

    #[test]
    fn p2p_matrix_reads_statuses() {
        let text = " \tGPU0\tGPU1\tGPU2\t\n GPU0\tX\tOK\tCNS\t\n GPU1\tOK\tX\tNS\t\n GPU2\tCNS\tNS\tX\t\n\nLegend:\n\n  X    = Self\n  OK   = Status Ok\n  CNS  = Chipset not supported\n";
        let lines = lines_of(text);
        assert_eq!(classify(&lines), Some(MatrixKind::P2p));
        let p = parse_p2p(&lines);
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        assert_eq!(p.value.gpus.len(), 3);
        assert_eq!(
            p.value.cell("GPU0", "GPU2").unwrap().value,
            P2pStatus::ChipsetNotSupported
        );
        assert_eq!(p.value.not_ok().count(), 4);
        assert_eq!(
            summary_p2p(&p.value),
            "3 GPU(s); 6 ordered pair(s): 2 OK, 4 not OK"
        );
        assert_eq!(
            p2p_capability(&["nvidia-smi", "topo", "-p2p", "w"]),
            Some(P2pCapability::Write)
        );
    }

    #[test]
    fn single_gpu_forms_are_told_apart_by_columns_and_legend() {
        let m = lines_of(
            "\tGPU0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\nGPU0\t X \t0-15\t0\t\tN/A\n",
        );
        assert_eq!(classify(&m), Some(MatrixKind::Links));
        let p = lines_of(" \tGPU0\t\n GPU0\tX\t\n\nLegend:\n\n  X    = Self\n  OK   = Status Ok\n");
        assert_eq!(classify(&p), Some(MatrixKind::P2p));
    }

    #[test]
    fn header_pre_check_is_a_gpu0_or_bracket_search() {
        for (text, expected) in [
            ("\tGPU0\tGPU1\tCPU Affinity", true),
            ("GPU0", true),
            ("[4mGPU", true),
            ("GPU1 GPU 0 GPU", false),
            ("G", false),
            ("GPU", false),
            ("", false),
            ("xxGPU0", true),
        ] {
            assert_eq!(may_be_header(text), expected, "{text:?}");
        }
    }

    #[test]
    fn a_header_is_read_after_a_report_label_and_report_fields_are_foreign() {
        for labelled in [
            "GPU topology: GPU0      CPU Affinity    NUMA Affinity   GPU NUMA ID",
            "NVIDIA Topology:\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity",
            "Topology: [4mGPU0\tGPU1\tCPU Affinity[0m",
        ] {
            let h = header(labelled).unwrap_or_else(|| panic!("{labelled:?}"));
            assert_eq!(h.devices[0], "GPU0", "{labelled:?}");
        }
        for no in [
            "GPU topology:GPU0 CPU Affinity",
            "GPU 0: NVIDIA L40S (UUID: GPU-0a1b)",
            "GPU topology: GPU0 is on NVLink",
            "1x: GPU0 CPU Affinity",
        ] {
            assert!(header(no).is_none(), "{no:?}");
        }
        for foreign in [
            "Nvidia driver version: 560.35.03",
            "ulimit soft: 1048576",
            "cuDNN version: Probably one of the following:",
            "CPU:",
        ] {
            assert!(foreign_label_line(foreign), "{foreign:?}");
        }
        for own in [
            "Legend:",
            "NIC Legend:",
            "NIC0: mlx5_0",
            "X = Self",
            "nodes (e.g., QPI/UPI)",
            "GPU0\t X \tNV18\t0-23\t0",
            "GPU topology: GPU0\tCPU Affinity",
            "12:30:05 GPU0",
        ] {
            assert!(!foreign_label_line(own), "{own:?}");
        }
    }

    #[test]
    fn columns_elided_with_dots_are_unknown_and_the_rest_is_read() {
        for mark in ["...", "\u{2026}", "....."] {
            let text = format!(
                "        GPU0    {mark}    GPU7    CPU Affinity    NUMA Affinity\n\
                 GPU0     X      {mark}    NV18    0-47            0\n\
                 GPU3    NV18    {mark}    NV18    0-47            0\n\
                 GPU7    NV18    {mark}     X      48-95           1\n"
            );
            let p = parse(&lines_of(&text));
            let m = p.value;
            let names: Vec<&str> = m.devices.iter().map(|d| d.name.as_str()).collect();
            // GPU3 is behind the dots: known from its own row.
            assert_eq!(names, ["GPU0", "GPU7", "GPU3"], "{mark}");
            assert_eq!(
                m.cell("GPU3", "GPU7").map(|c| &c.value),
                Some(&Link::Nvlink { count: 18 }),
                "{mark}"
            );
            assert_eq!(
                m.cell("GPU0", "GPU7").map(|c| &c.value),
                Some(&Link::Nvlink { count: 18 }),
                "{mark}"
            );
            assert_eq!(m.cells.len(), 6, "no cell for the elided columns: {mark}");
            let gpu3 = m.devices.iter().find(|d| d.name == "GPU3");
            assert_eq!(gpu3.and_then(|d| d.cpu_affinity.as_deref()), Some("0-47"));
            assert_eq!(
                m.partial.as_ref().map(|p| p.reason),
                Some(PartialReason::MissingFields)
            );
            assert!(!m.is_complete());
            assert!(
                p.warnings.iter().any(|w| w.span.first_line == 1),
                "the header line is warned about: {:?}",
                p.warnings
            );
        }
        // Without dots, a row the header does not name is not a row.
        let p = parse(&lines_of(
            "        GPU0    GPU1    CPU Affinity\nGPU0     X      NV18    0-47\nGPU5    NV18     X      0-47\n",
        ));
        assert_eq!(p.value.devices.len(), 2);
        assert!(p.value.partial.is_none());
    }

    #[test]
    fn nic_rows_under_a_header_that_lost_its_nic_columns_are_read() {
        let text = "        GPU0    GPU1    GPU2    CPU Affinity    NUMA Affinity\n\
                    GPU0     X      NV12    NV12  -23,48-71       0\n\
                    GPU1    NV12     X      NV12  ,48-71          0\n\
                    GPU2    NV12    NV12     X    24-47,72-95     1\n\
                    NIC0    PIX     NODE    SYS\n\
                    NIC1    SYS     SYS     PIX\n\
                    \nNIC Legend:\n\n  NIC0: mlx5_2\n  NIC1: mlx5_3\n";
        let p = parse(&lines_of(text));
        let m = &p.value;
        assert!(
            p.warnings
                .iter()
                .all(|w| w.kind == crate::diag::WarningKind::Truncated),
            "no line unread: {:?}",
            p.warnings
        );
        let nics: Vec<(&str, Option<&str>)> = m
            .nics()
            .map(|d| (d.name.as_str(), d.rdma_device.as_deref()))
            .collect();
        assert_eq!(nics, [("NIC0", Some("mlx5_2")), ("NIC1", Some("mlx5_3"))]);
        // Read from the NIC's row, found from the GPU's side as well.
        assert_eq!(m.cell("NIC0", "GPU0").map(|c| &c.value), Some(&Link::Pix));
        assert_eq!(
            m.cell("GPU0", "NIC0").map(|c| (&c.value, c.line)),
            Some((&Link::Pix, 5))
        );
        let near: Vec<&str> = m.nearest_nics("GPU2").iter().map(|c| &*c.to).collect();
        assert_eq!(near, ["NIC1"]);
        assert!(
            m.cell("NIC0", "NIC1").is_none(),
            "the NIC-to-NIC cells are unknown"
        );
        let partial = m.partial.as_ref().unwrap();
        assert_eq!(partial.reason, PartialReason::MissingColumns);
        assert_eq!(partial.line, 1);
        assert!(partial.missing[0].contains("NIC0, NIC1"), "{partial:?}");
        assert!(m.nics().all(|d| d.partial.is_none()));
        // CPU lists cut at the left are not read; the NUMA node is.
        for gpu in ["GPU0", "GPU1"] {
            let d = m.device(gpu).unwrap();
            assert_eq!(d.cpu_affinity, None, "{gpu}");
            assert_eq!(d.numa_affinity.as_deref(), Some("0"), "{gpu}");
            let partial = d.partial.as_ref().unwrap();
            assert!(
                partial.missing[0].contains("cut at the left"),
                "{partial:?}"
            );
        }
        let gpu2 = m.device("GPU2").unwrap();
        assert_eq!(gpu2.cpu_affinity.as_deref(), Some("24-47,72-95"));
        assert!(gpu2.partial.is_none());

        // Without a legend after them, rows after the last may be cut.
        let unended = text.split("\n\n").next().unwrap();
        let m = parse(&lines_of(unended)).value;
        let partial = m.partial.unwrap();
        assert_eq!(partial.reason, PartialReason::MissingFields);
        assert_eq!(partial.missing.len(), 2);
    }

    #[test]
    fn rows_the_header_has_no_column_for_need_a_cell_per_column() {
        let header = "        GPU0    GPU1    CPU Affinity\n\
                      GPU0     X      NV18    0-47\n\
                      GPU1    NV18     X      0-47\n";
        for row in [
            "NIC0    PIX\n",                 // a cell short
            "NIC0    PIX     SYS     SYS\n", // a cell over
            "NIC0    PIX      X\n",          // its own cell: its column existed
            "NIC0    PIX     SYS     0-47\n",
            "NIC0    PIX     fine\n",
            "GPU5    NV18    NV18\n", // a GPU the header lacks is no NIC
        ] {
            let p = parse(&lines_of(&format!("{header}{row}")));
            assert_eq!(p.value.devices.len(), 2, "{row}");
            assert!(p.value.partial.is_none(), "{row}");
            assert!(
                p.warnings
                    .iter()
                    .any(|w| w.kind == crate::diag::WarningKind::Unreadable),
                "{row}"
            );
        }
        // A header with a NIC column keeps the rule of the whole matrix.
        let p = parse(&lines_of(
            "        GPU0    GPU1    NIC0    CPU Affinity\n\
             GPU0     X      NV18    PIX     0-47\n\
             GPU1    NV18     X      PIX     0-47\n\
             NIC0    PIX     PIX      X\n\
             NIC1    PIX     PIX\n",
        ));
        assert_eq!(p.value.nics().count(), 1);
    }

    #[test]
    fn detection_needs_a_gpu0_header_and_a_row() {
        assert_eq!(classify(&lines_of("GPU0 GPU1\nsomething")), None);
        assert_eq!(classify(&lines_of("CA 'mlx5_0'\n\tCA type: MT4123")), None);
        assert_eq!(
            classify(&lines_of("GPU 0: NVIDIA H200 (UUID: GPU-1)\n")),
            None
        );
        assert_eq!(classify(&lines_of("# gpu pwr\n# Idx W\n")), None);
    }

    /// A rule under the header (a page's reformatted table) is layout:
    /// the matrix is whole, with no unread line and no recovered header.
    #[test]
    fn a_rule_under_the_header_is_layout() {
        let text = "      GPU0  GPU1  NIC0  CPU Affinity   NUMA Affinity\n\
                    ------------------------------------------------------\n\
                    GPU0   X    NV12  PIX   0-23           0\n\
                    GPU1  NV12   X    SYS   24-47          1\n\
                    NIC0  PIX   SYS    X\n";
        let lines = lines_of(text);
        assert_eq!(classify(&lines), Some(MatrixKind::Links));
        let p = parse(&lines);
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        assert_eq!(p.value.devices.len(), 3);
        assert!(p.value.partial.is_none(), "{:?}", p.value.partial);
        // A rule after the rows is no part of them.
        let after = format!("{text}-----\n");
        assert!(!parse(&lines_of(&after)).warnings.is_empty());
    }

    #[test]
    fn render_then_parse_gives_the_same_model() {
        let first = parse(&lines_of(WITH_NICS)).value;
        let again = parse(&lines_of(&render(&first)));
        assert!(again.warnings.is_empty(), "{:?}", again.warnings);
        let strip = |mut m: TopoMatrix| {
            m.cells.iter_mut().for_each(|c| c.line = 0);
            m.devices
                .iter_mut()
                .for_each(|d| d.line = d.line.map(|_| 0));
            m.legend.iter_mut().for_each(|e| e.span = LineSpan::line(1));
            m
        };
        assert_eq!(strip(first), strip(again.value));
    }

    #[test]
    fn row_pieces_device_names() {
        assert_eq!(device_name("GPU0 X"), Some(("GPU0", " X")));
        assert_eq!(device_name("mlx5_0\tPIX"), Some(("mlx5_0", "\tPIX")));
        assert_eq!(device_name("bnxt_re3"), Some(("bnxt_re3", "")));
        assert_eq!(device_name("GPU2"), Some(("GPU2", "")));
        // Fused header names split where the next name's letters start.
        assert_eq!(device_name("NIC11NIC12"), Some(("NIC11", "NIC12")));
        // `_` without digits after it is not part of the name.
        assert_eq!(device_name("mlx5_x"), Some(("mlx5", "_x")));
        for no_name in ["GPU", "0GPU", " GPU0", "", "N/A", "_0"] {
            assert_eq!(device_name(no_name), None, "{no_name}");
        }
    }

    /// [`cell_token`] as first written, every word compared whole: the
    /// oracle of the first-byte test.
    fn cell_token_by_words(s: &str, vocabulary: Vocabulary) -> (&str, &str) {
        if vocabulary == Vocabulary::Links {
            if let Some(digits) = s.strip_prefix("NV") {
                let n = digits.bytes().take_while(u8::is_ascii_digit).count();
                if n > 0 {
                    return s.split_at(2 + n);
                }
            }
        }
        if let Some(w) = vocabulary.words().iter().find(|w| s.starts_with(**w)) {
            return s.split_at(w.len());
        }
        let end = s.find(char::is_whitespace).unwrap_or(s.len());
        s.split_at(end)
    }

    /// Whether a headerless row's cell is known, as first written: the
    /// model's reading built, unknown text and all.
    fn is_link_cell_by_parse(cell: &str) -> bool {
        LINK_WORDS.contains(&cell)
            || match Link::parse(cell) {
                Link::Unknown { text } => text != cell,
                _ => true,
            }
    }

    proptest::proptest! {
        /// A cell is known to a headerless row as it was when the model's
        /// reading of it was built.
        #[test]
        fn link_cells_are_known_as_by_parse(
            s in "[ \t\u{a0}]?(NODE|PIX|PXB|PHB|SYS|SOC|X|NV|N|V|[0-9]|:|mlx5_0|\\+|-|é){0,4}[ \t]?"
        ) {
            proptest::prop_assert_eq!(is_link_cell(&s), is_link_cell_by_parse(&s));
        }

        /// The first-byte test before each word cuts every cell as
        /// comparing the words whole did.
        #[test]
        fn cells_are_cut_as_by_whole_words(
            s in "(NODE|PIX|PXB|PHB|SYS|SOC|X|CNS|GNS|TNS|OK|NS|DR|U|NV|N|P|S|[0-9 \t?é]){0,4}"
        ) {
            for vocabulary in [Vocabulary::Links, Vocabulary::P2p] {
                proptest::prop_assert_eq!(
                    cell_token(&s, vocabulary),
                    cell_token_by_words(&s, vocabulary)
                );
            }
        }
    }

    #[test]
    fn row_pieces_cells_come_apart_by_their_words() {
        let links = |s| cell_token(s, Vocabulary::Links);
        assert_eq!(links("NV18NV18"), ("NV18", "NV18"));
        assert_eq!(links("SYSSYS"), ("SYS", "SYS"));
        assert_eq!(links("NODE "), ("NODE", " "));
        assert_eq!(links("NV4"), ("NV4", ""));
        // Not a word: kept whole up to the space, as printed.
        assert_eq!(links("NV? SYS"), ("NV?", " SYS"));
        let p2p = |s| cell_token(s, Vocabulary::P2p);
        assert_eq!(p2p("CNSOK"), ("CNS", "OK"));
        assert_eq!(p2p("NS\tX"), ("NS", "\tX"));
        // NVLink counts are not cells of the p2p form.
        assert_eq!(p2p("NV18NV18"), ("NV18NV18", ""));
        assert!(starts_value("0-47") && starts_value("N/A") && !starts_value("NV4"));
    }

    #[test]
    fn rows_read_label_cells_and_affinity() {
        let columns: Vec<Cow<str>> = ["GPU0", "GPU1", "NIC0"].map(Cow::from).into();
        let r = row(
            "GPU0\t X \tNV18SYS\t0-47\t0\t\tN/A",
            &columns,
            Vocabulary::Links,
        );
        assert_eq!(
            r,
            Some(Row {
                line: "GPU0\t X \tNV18SYS\t0-47\t0\t\tN/A",
                name: "GPU0",
                column: 0,
                cells: vec!["X", "NV18", "SYS"],
                values: vec!["0-47", "0", "N/A"],
            })
        );
        // A no-break space separates like any other white space.
        let nbsp = row("GPU1\u{a0}NV18\u{a0}X", &columns, Vocabulary::Links);
        assert_eq!(nbsp.map(|r| r.cells), Some(vec!["NV18", "X"]));
        // Cells stop at the column count; the rest are values.
        let long = row("NIC0 SYS SYS X PIX", &columns, Vocabulary::Links);
        assert_eq!(
            long.map(|r| (r.cells.len(), r.values)),
            Some((3, vec!["PIX"]))
        );
        // A name the header does not list, or no cell at all, is no row.
        assert_eq!(row("GPU7 X SYS SYS", &columns, Vocabulary::Links), None);
        assert_eq!(row("GPU0 0-47 0", &columns, Vocabulary::Links), None);
    }

    #[test]
    fn headless_rows_need_known_cells_and_one_diagonal() {
        let text = "GPU2  SYS SYS X NV4 PIX 0-47 0";
        let (name, cells, x, values) = headless_row(text).unwrap();
        assert_eq!((name, cells.len(), x, values), ("GPU2", 5, 2, "0-47 0"));
        assert_eq!(row_values_count(text), Some(2));
        assert!(headless_row("GPU2 SYS SYS X what 0-47").is_none());
        assert!(headless_row("GPU2 SYS X X SYS").is_none());
        assert!(headless_row("GPU2 SYS X").is_none());
    }
}
