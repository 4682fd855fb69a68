//! `perfquery`: port performance counters read through the PMA by
//! infiniband-diags (`perfquery.c`), printed by libibmad (`dump.c`).
//!
//! Forms handled:
//! - every attribute header, `# <Name> counters: <portid> port <n>` with an
//!   optional `(CapMask: 0x5300)` or `(CapMask: 0x5300 CapMask2: 0x0000002)`
//!   (plain, `-x`, `-E`, `-D`, `-X`, `-S`, `-T` with or without RS-FEC, and
//!   the congestion/VL attributes), and `# PortSamplesControl: …` (`-c`);
//! - LID and directed-route port ids (`Lid 2052`, `DR path slid 65535;
//!   dlid 65535; 0,1`), and the `-a` aggregate printed as `port 255`;
//! - `-l` and port lists: blocks back to back with no blank line between;
//! - `-x` with or without the AdditionalPortCountersExtended error counters
//!   (older perfquery prints them even when CapMask2 says unsupported);
//! - the dotted `Name:.....value` lines. The value is everything after the
//!   dots, never split on `.`: values such as `2.5 Gbps` exist elsewhere in
//!   libibmad's output and hex values are kept as printed;
//! - a last line cut short (name and dots, no value), and tool messages
//!   (`ibwarn: … No extended counter support indicated`, `perfquery:
//!   iberror: failed: …`) when they reach the parser.
//!
//! Counter widths come from [`PerfAttribute::field_kind`]; a value larger
//! than its field can hold is reported as out of range and not kept (the
//! hardware cannot print it, so the line is corrupt), never wrapped.

use crate::diag::WarningKind;
use crate::model::counter::max_for_bits;
use crate::model::counter_id::{CounterId, KnownCounter};
use crate::model::partial::{Partial, PartialReason};
use crate::model::perf_fields::{self, FieldKind};
use crate::model::perfquery::{PerfAttribute, PerfBlock, Perfquery};
use crate::model::Counter;
use crate::parse::text::{
    blank_value, decimal_u32, decimal_u64, hex_u32, read_each_line, rsplit_once_str,
    settle_blank_value, split_once_str, tool_message_kind, trim, NumberError, Unread,
};
use crate::parse::{Block, Line, Parsed, Spec};
use std::borrow::Cow;

pub(crate) const FORMAT: Spec<Perfquery> = Spec {
    command: |argv| argv.first() == Some(&"perfquery"),
    starts: |b| b == b'#' || b.is_ascii_alphabetic(),
    detect,
    parse,
    summary,
    attach_command: None,
    labels: &["port", "lid", "sl", "dlid", "slid"],
};

/// libibmad pads `Name:` with dots so that values start at this column.
const VALUE_COLUMN: usize = 33;

/// Reads `perfquery` output.
#[must_use]
pub fn parse(lines: &[Line<'_>]) -> Parsed<Perfquery> {
    parse_reusing(lines, true)
}

/// [`parse`], taking the headers the open-header test parsed if `reuse`
/// (the tests read each text both ways).
fn parse_reusing(lines: &[Line<'_>], reuse: bool) -> Parsed<Perfquery> {
    let mut seen = Vec::new();
    let (lines, joined) = join_wrapped_headers(lines, &mut seen);
    if !reuse {
        seen.clear();
    }
    let mut seen = SeenHeaders {
        headers: seen.into_iter().peekable(),
    };
    let mut names = FieldNames::take();
    let mut parsed = read_each_line(&lines, |line, out, unread| {
        read_line(line, out, unread, &mut seen, &mut names);
    });
    names.give_back();
    settle_blank_values(&mut parsed, &lines);
    mark_cut_blocks(&mut parsed.value);
    for (first, second) in joined {
        parsed.warnings.push(crate::diag::Warning::new(
            WarningKind::Suspicious,
            crate::span::LineSpan::new(first, second),
            "a `# … counters:` header wrapped onto two lines (by a mail client?) was joined",
        ));
    }
    parsed.warnings.sort_by_key(|w| w.span);
    parsed
}

/// A perfquery section read line by line while the input layer collects
/// it, as `nvidia-smi nvlink`'s is: the input layer's body-line test of a
/// perfquery section (`input::body`) finds a field line's name and value,
/// and hands them here, so that the field is read once, as it is met,
/// instead of being scanned by the body test and again by [`parse`] when
/// the section ends (two scans of every counter line of a fleet's dumps).
///
/// Fed the section's non-blank lines in order, [`Stream::finish`] is
/// [`parse`] of the section's lines: a field line is what [`read_line`]
/// reads straight into its field, any other line is read by
/// [`read_line`] itself; the one thing a line cannot be read for on its
/// own, a header a mail client wrapped onto the next line, makes the
/// stream stop reading and [`Stream::finish`] parse the lines whole.
pub(crate) struct Stream {
    out: Perfquery,
    unread: Unread,
    names: FieldNames,
    /// A `# … counters:` header that may have been wrapped was met: the
    /// section is parsed from its lines when it ends.
    open_header: bool,
}

impl Stream {
    /// A stream for a section that has not read a line yet.
    pub(crate) fn new() -> Self {
        Self {
            out: Perfquery::default(),
            unread: Unread::default(),
            names: FieldNames::take(),
            open_header: false,
        }
    }

    /// Reads the field line `line`, whose name and value (`PortXmitData`,
    /// `1234`) the input layer's body-line test found: an indent, a name
    /// of ASCII letters and digits starting with a capital, a colon, dots
    /// and a value of letters and digits ending the line. [`read_line`]
    /// reads such a line straight into its field under the same name and
    /// value.
    pub(crate) fn read_field(&mut self, line: &Line<'_>, name: &str, value: &str) {
        if !self.open_header {
            read_dotted(
                line,
                name,
                value,
                &mut self.out,
                &mut self.unread,
                &mut self.names,
            );
        }
    }

    /// Reads a non-blank line of the section that is not a field line.
    pub(crate) fn read(&mut self, line: &Line<'_>) {
        if self.open_header {
            return;
        }
        // A header is parsed once, by the open-header test, as `parse`
        // parses it (see `join_wrapped_headers`).
        let t = trim(line.text());
        let mut seen = Vec::new();
        let open = is_open_header_noting(t, &mut |header| {
            seen.push(SeenHeader {
                number: line.number,
                text: t,
                header,
            });
        });
        if open {
            self.open_header = true;
            return;
        }
        let mut seen = SeenHeaders {
            headers: seen.into_iter().peekable(),
        };
        read_line(
            line,
            &mut self.out,
            &mut self.unread,
            &mut seen,
            &mut self.names,
        );
    }

    /// The section, whose lines are `lines`, as [`parse`] reads them.
    pub(crate) fn finish(self, lines: &[Line<'_>]) -> Parsed<Perfquery> {
        self.names.give_back();
        if self.open_header {
            return parse(lines);
        }
        // What `parse_reusing` does once its lines are read, with no
        // header joined.
        let mut parsed = Parsed {
            value: self.out,
            warnings: self.unread.finish(),
        };
        settle_blank_values(&mut parsed, lines);
        mark_cut_blocks(&mut parsed.value);
        parsed.warnings.sort_by_key(|w| w.span);
        parsed
    }
}

/// Settles each block's blank value ([`settle_blank_value`]): a cut on
/// the output's last line, blanked anywhere else.
fn settle_blank_values(parsed: &mut Parsed<Perfquery>, lines: &[Line<'_>]) {
    for block in &mut parsed.value.blocks {
        settle_blank_value(&mut block.partial, lines, &mut parsed.warnings);
    }
}

/// Marks each block that stops inside a part of its attribute's layout
/// that perfquery prints whole (cut by the end of a paste, by `head`, by a
/// value cut off mid-word) as partial, with the fields it lacks: `IN001`
/// says so. What the block does hold is read and judged as usual. Blocks
/// already partial for another reason (no header, ibcheckerrors) keep it;
/// one cut at a value lacks that field and the rest of its part.
fn mark_cut_blocks(out: &mut Perfquery) {
    for block in &mut out.blocks {
        // A field printed without its value was cut there: it is where
        // the block stops, though it holds no value.
        let cut_value = match &block.partial {
            None => None,
            Some(p) if p.reason == PartialReason::CutLine => p.missing.first().cloned(),
            Some(_) => continue,
        };
        let missing = perf_fields::missing_after_last(
            block.attribute.layout(),
            block.attribute.optional_parts(),
            |name| {
                block.counters.contains_key(name)
                    || block.fields.contains_key(name)
                    || cut_value.as_deref() == Some(name)
            },
        );
        match block.partial.as_mut() {
            Some(cut) => cut.missing.extend(missing),
            None if !missing.is_empty() => {
                block.partial = Some(Partial::new(
                    PartialReason::MissingFields,
                    missing,
                    block.span.last_line,
                ));
            }
            None => {}
        }
    }
}

/// Joins a `# … counters:` header that a mail client wrapped onto the next
/// line (`# Port counters: Lid 12` / `port 1`, or a `(CapMask:` left
/// open): the continuation is not a dotted field, not a header, and the
/// header alone lacks its port or its closing parenthesis. Returns the
/// lines with each pair joined under the first line's number, and the
/// joined pairs.
///
/// When no header is open (nearly always) the lines are kept, and `seen`
/// gets the headers the test parsed, for [`read_line`] to take instead of
/// parsing each a second time; otherwise `seen` is left empty.
fn join_wrapped_headers<'l, 'a>(
    lines: &'l [Line<'a>],
    seen: &mut Vec<SeenHeader<'l>>,
) -> (std::borrow::Cow<'l, [Line<'a>]>, Vec<(usize, usize)>) {
    // Almost every dump has no header that could be open: keep its lines.
    let Some(first_open) = lines.iter().position(|l| {
        let t = trim(l.text());
        is_open_header_noting(t, &mut |header| {
            seen.push(SeenHeader {
                number: l.number,
                text: t,
                header,
            });
        })
    }) else {
        return (std::borrow::Cow::Borrowed(lines), Vec::new());
    };
    seen.clear();
    let mut out: Vec<Line<'a>> = Vec::with_capacity(lines.len());
    out.extend(lines.iter().take(first_open).cloned());
    let mut joined = Vec::new();
    let mut i = first_open;
    while let Some(line) = lines.get(i) {
        i += 1;
        let t = line.text().trim();
        if is_open_header(t) {
            let next = lines.get(i).map(|l| l.text().trim());
            let continues = next.is_some_and(|n| {
                !n.is_empty() && !n.starts_with('#') && dotted_field(n).is_none() && n.len() < 80
            });
            if let (true, Some(next_line), Some(n)) = (continues, lines.get(i), next) {
                let text = format!("{t} {n}");
                if Header::parse(&text).is_some_and(|h| h.port.is_some() || h.cap_mask.is_some()) {
                    joined.push((line.number, next_line.number));
                    out.push(Line {
                        number: line.number,
                        text: std::borrow::Cow::Owned(text),
                    });
                    i += 1;
                    continue;
                }
            }
        }
        out.push(line.clone());
    }
    (std::borrow::Cow::Owned(out), joined)
}

/// Whether the trimmed line `t` is a whole perfquery header: an attribute's
/// `# … counters:`, its port id and its port number.
pub(crate) fn is_whole_header(t: &str) -> bool {
    t.starts_with('#') && Header::parse_target(t).is_some_and(|(h, _)| h.port.is_some())
}

/// A `# … counters:` header that lacks its port or its closing
/// parenthesis: the start of a header a mail client may have wrapped.
fn is_open_header(t: &str) -> bool {
    is_open_header_noting(t, &mut |_| {})
}

/// [`is_open_header`], handing `note` the header it parsed, if it did.
fn is_open_header_noting<'t>(t: &'t str, note: &mut impl FnMut(Option<Header<'t>>)) -> bool {
    t.starts_with('#')
        && split_once_str(t, " counters:").is_some()
        && (t.matches('(').count() > t.matches(')').count() || {
            let header = Header::parse(t);
            let open = header.as_ref().is_some_and(|h| h.port.is_none());
            note(header);
            open
        })
}

/// A line's [`Header::parse`], made while looking for an open header.
struct SeenHeader<'t> {
    /// The line's number: lines are read in order, so older ones are dropped.
    number: usize,
    /// The trimmed text parsed; the header is reused only for this very
    /// text (same address and length), so it is the parse of that text.
    text: &'t str,
    header: Option<Header<'t>>,
}

/// The [`SeenHeader`]s of a section, in line order.
struct SeenHeaders<'t> {
    headers: std::iter::Peekable<std::vec::IntoIter<SeenHeader<'t>>>,
}

impl<'t> SeenHeaders<'t> {
    /// `Header::parse(t)` for the trimmed text `t` of the line numbered
    /// `number`: the one already made, if that line's was, else a new one.
    fn parse<'u>(&mut self, number: usize, t: &'u str) -> Option<Header<'u>>
    where
        't: 'u,
    {
        while self.headers.peek().is_some_and(|s| s.number < number) {
            self.headers.next();
        }
        match self.headers.peek() {
            Some(s) if s.number == number && std::ptr::eq(s.text, t) => {
                self.headers.next().and_then(|s| s.header)
            }
            _ => Header::parse(t),
        }
    }
}

/// The port id given to counter lines pasted without their header.
pub const UNKNOWN_PORT: &str = "(header missing)";

fn read_line(
    line: &Line<'_>,
    out: &mut Perfquery,
    unread: &mut Unread,
    seen: &mut SeenHeaders<'_>,
    names: &mut FieldNames,
) {
    let t = trim(line.text());
    // Nearly every line is a padded field (`PortXmitData:.....1234`), which
    // none of the tests below takes: they want a `#` (an ibcheckerrors
    // warning, a header), a space (`Error check on lid`) or a tool message,
    // whose first word is a level word, whose text after the colon starts
    // `ib`, or whose first word ends `.c`; a field's name holds no `.` and
    // its colon is followed by a dot. Such a line goes straight to its
    // field.
    if let Some((name, value)) = dotted_field(t) {
        let dot_after_colon = t.as_bytes().get(name.len() + 1) == Some(&b'.');
        let level_word = matches!(name, "ibpanic" | "iberror" | "ibwarn" | "ibdebug");
        if dot_after_colon && !level_word {
            return read_dotted(line, name, value, out, unread, names);
        }
    }
    read_other_line(line, t, out, unread, seen, names);
}

/// [`read_line`] for any line, tried in turn as an ibcheckerrors warning,
/// a verdict, a header, a tool message and a field.
fn read_other_line(
    line: &Line<'_>,
    t: &str,
    out: &mut Perfquery,
    unread: &mut Unread,
    seen: &mut SeenHeaders<'_>,
    names: &mut FieldNames,
) {
    if let Some(warn) = ibcheckerrors_warn(t) {
        return read_checkerrors_warn(line, &warn, out, unread, names);
    }
    if t.starts_with("Error check on lid ") {
        return; // ibcheckerrors' verdict line: its #warn lines hold the values
    }
    if let Some(header) = seen.parse(line.number, t) {
        if !header.unknown_keys.is_empty() {
            unread.warn(
                WarningKind::Suspicious,
                line.span(),
                format!(
                    "unexpected header detail(s) ignored: {}",
                    header.unknown_keys.join(", ")
                ),
            );
        }
        out.blocks.push(header.into_block(line));
        return;
    }
    if let Some(kind) = tool_message_kind(t) {
        let what = match kind {
            WarningKind::Truncated => "perfquery reported an error; output may be incomplete",
            _ => "perfquery warned",
        };
        return unread.warn(kind, line.span(), format!("{what}: {t}"));
    }
    let Some((name, value)) = dotted_field(t) else {
        return unread.line(line, "not a perfquery `Name:....value` line");
    };
    read_dotted(line, name, value, out, unread, names);
}

/// Reads one `Name:....value` field into the block it belongs to (a new
/// header-less block if there is none).
fn read_dotted(
    line: &Line<'_>,
    name: &str,
    value: &str,
    out: &mut Perfquery,
    unread: &mut Unread,
    names: &mut FieldNames,
) {
    let name = crate::model::perf_fields::modern_name(name).unwrap_or(name);
    if out.blocks.last().is_none_or(|b| {
        b.partial.as_ref().is_some_and(|p| {
            p.reason == PartialReason::MissingFields && b.port_id.starts_with("ibcheckerrors")
        })
    }) {
        // Counter lines with no header above them: the dotted names are
        // unmistakable, so they are read, under a port that is unknown.
        let mut block = PerfBlock::new(headless_attribute(name), UNKNOWN_PORT, line.span());
        block.partial = Some(Partial::new(
            PartialReason::NoHeader,
            vec!["`# … counters:` header (LID and port)".to_owned()],
            line.number,
        ));
        out.blocks.push(block);
        unread.warn(
            WarningKind::Truncated,
            line.span(),
            "counter lines without their `# … counters:` header: the LID and port are unknown",
        );
    }
    if let Some(block) = out.blocks.last_mut() {
        block.span = block.span.join(line.span());
        read_field(line, name, value, block, unread, names);
    }
}

/// The attribute of a headless block, from its first field: the 64-bit
/// PortCountersExtended when the name is one only it prints.
fn headless_attribute(first: &str) -> PerfAttribute {
    let basic = PerfAttribute::PortCounters.field_kind(first).is_some();
    let extended = PerfAttribute::PortCountersExtended
        .field_kind(first)
        .is_some();
    if extended && !basic {
        PerfAttribute::PortCountersExtended
    } else {
        PerfAttribute::PortCounters
    }
}

/// One `ibcheckerrors` `#warn:` line.
#[derive(Clone, Copy)]
struct CheckWarn<'t> {
    name: &'t str,
    value: u64,
    threshold: Option<u64>,
    lid: Option<u32>,
    port: Option<u32>,
}

/// `#warn: counter SymbolErrors = 65535 (threshold 10) lid 3 port 1` (a tab
/// before the parenthesis):
/// what `ibcheckerrors` printed for a counter over its threshold.
fn ibcheckerrors_warn(t: &str) -> Option<CheckWarn<'_>> {
    let rest = t
        .strip_prefix("#warn:")?
        .trim_start()
        .strip_prefix("counter ")?;
    let (name, rest) = rest.split_once('=')?;
    let name = name.trim();
    let rest = rest.trim_start();
    let digits_end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let value = rest.get(..digits_end)?.parse().ok()?;
    let rest = rest.get(digits_end..)?;
    let threshold = rest
        .split_once("(threshold")
        .and_then(|(_, r)| r.split(')').next())
        .and_then(|n| n.trim().parse().ok());
    let word_after = |key: &str| -> Option<u32> {
        let mut words = rest.split_whitespace();
        words.find(|w| *w == key)?;
        words
            .next()?
            .trim_end_matches(|c: char| !c.is_ascii_digit())
            .parse()
            .ok()
    };
    let ok = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    ok.then(|| CheckWarn {
        name,
        value,
        threshold,
        lid: word_after("lid"),
        port: word_after("port"),
    })
}

/// Adds an `ibcheckerrors` `#warn:` reading to the block of its port: the
/// value as evidence, with the threshold the tool quoted. The block holds
/// only what was over its threshold, so it is partial: the counters it
/// does not list are unknown, not zero.
fn read_checkerrors_warn(
    line: &Line<'_>,
    warn: &CheckWarn<'_>,
    out: &mut Perfquery,
    unread: &mut Unread,
    names: &mut FieldNames,
) {
    let CheckWarn {
        name,
        value,
        threshold,
        lid,
        port,
    } = *warn;
    let name = crate::model::perf_fields::modern_name(name).unwrap_or(name);
    let port_id = match lid {
        Some(l) => format!("ibcheckerrors Lid {l}"),
        None => "ibcheckerrors".to_owned(),
    };
    let same = out
        .blocks
        .last()
        .is_some_and(|b| b.port_id == port_id && b.port == port && b.lid == lid);
    if !same {
        let mut block = PerfBlock::new(PerfAttribute::PortCounters, port_id, line.span());
        block.lid = lid;
        block.port = port;
        block.partial = Some(Partial::new(
            PartialReason::MissingFields,
            vec!["counters under their ibcheckerrors threshold".to_owned()],
            line.number,
        ));
        out.blocks.push(block);
    }
    let Some(block) = out.blocks.last_mut() else {
        return;
    };
    block.span = block.span.join(line.span());
    read_field(line, name, &value.to_string(), block, unread, names);
    if let Some(t) = threshold {
        block
            .fields
            .insert(Cow::Owned(format!("{name}Threshold")), t.to_string());
    }
}

/// `Name:.....value` → (`Name`, `value`); the value may be empty when the
/// output was cut. The name is a letter, then letters, digits and `_`
/// (`VL15Dropped`, `PortXmitData`), scanned eight bytes at a time: every
/// line of every dump goes through here, and the nom version and then the
/// byte-by-byte scan it replaced were the parser's largest self cost in
/// the fleet profile.
pub(crate) fn dotted_field(t: &str) -> Option<(&str, &str)> {
    let bytes = t.as_bytes();
    if !bytes.first()?.is_ascii_alphabetic() {
        return None;
    }
    let name_len = crate::parse::text::alphanumeric_run(bytes, Some(b'_'));
    if bytes.get(name_len) != Some(&b':') {
        return None;
    }
    let dots = crate::parse::text::leading_count(bytes.get(name_len + 1..)?, b'.');
    let name = t.get(..name_len)?;
    let value = t.get(name_len + 1 + dots..)?;
    // Dots pad every name shorter than the value column; a line cut right
    // after the colon has nothing at all.
    let padded = dots > 0 || value.is_empty() || name_len + 1 >= VALUE_COLUMN;
    padded.then(|| (name, trim(value)))
}

/// The counter id and field kind of each field name met so far, in the
/// order printed: every port block prints the same names in the same
/// order, so the name at the cursor is nearly always the one asked for,
/// found with one comparison instead of a hash of the name and a search of
/// the attribute's layout. Both answers depend only on the name and the
/// layout, so a remembered answer is the answer. Kept per thread across
/// parses (a fleet holds thousands of one-block dumps), and taken by each
/// parse for its whole run (the per-line look-up of the thread's copy and
/// its borrow flag showed). Bounded: a paste of endless distinct names
/// misses (and pays a short scan), never grows.
#[derive(Default)]
struct FieldNames {
    seen: Vec<FieldName>,
    /// Where the next name is expected.
    next: usize,
}

struct FieldName {
    /// The attribute's layout (by address: the tables are statics).
    layout: &'static [crate::model::perf_fields::Spec],
    name: Box<str>,
    known: Known,
}

/// What the tables say of a field name in an attribute's layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Known {
    /// The counter id the name has in any layout.
    id: Option<KnownCounter>,
    /// The field's kind in this layout.
    kind: Option<FieldKind>,
    /// The layout's spelling of the name, when it lists it as a single
    /// field: a block's field is keyed by it instead of a copy.
    spelling: Option<&'static str>,
}

impl Known {
    /// Looked up in the tables.
    fn of(layout: &'static [crate::model::perf_fields::Spec], name: &str) -> Self {
        let (kind, spelling) = crate::model::perf_fields::kind_and_spelling_in(layout, name);
        Self {
            id: KnownCounter::from_name(name),
            kind,
            spelling,
        }
    }
}

impl FieldNames {
    /// How many names are remembered (the widest attributes print a few
    /// dozen).
    const CAPACITY: usize = 64;

    /// What the tables say of `name` in `attribute`'s layout.
    fn of(&mut self, attribute: &PerfAttribute, name: &str) -> Known {
        let layout = attribute.layout();
        let is = |f: &FieldName| std::ptr::eq(f.layout, layout) && *f.name == *name;
        let at = match self.seen.get(self.next) {
            Some(f) if is(f) => Some(self.next),
            _ => self.seen.iter().position(is),
        };
        if let Some((i, f)) = at.and_then(|i| Some((i, self.seen.get(i)?))) {
            self.next = i + 1;
            return f.known;
        }
        let known = Known::of(layout, name);
        if self.seen.len() < Self::CAPACITY {
            self.seen.push(FieldName {
                layout,
                name: name.into(),
                known,
            });
            self.next = self.seen.len();
        }
        known
    }
}

thread_local! {
    static FIELD_NAMES: std::cell::Cell<FieldNames> = std::cell::Cell::default();
}

impl FieldNames {
    /// This thread's memo, taken for one parse (an empty one if the thread
    /// is being torn down).
    fn take() -> Self {
        FIELD_NAMES
            .try_with(std::cell::Cell::take)
            .unwrap_or_default()
    }

    /// Hands the memo back to this thread for the next parse.
    fn give_back(self) {
        // Only fails while the thread is torn down: the memo is dropped.
        let _ = FIELD_NAMES.try_with(|names| names.set(self));
    }
}

fn read_field(
    line: &Line<'_>,
    name: &str,
    value: &str,
    block: &mut PerfBlock,
    unread: &mut Unread,
    names: &mut FieldNames,
) {
    if value.is_empty() {
        // Cut by the end of the paste, or blanked ([`blank_value`]). Cut
        // where the value was, the block lacks what the layout prints
        // after it ([`mark_cut_blocks`]).
        blank_value(line, name, unread, &mut block.partial);
        return;
    }
    // The id is looked up once, for the duplicate test and the insert.
    let Known { id, kind, spelling } = names.of(&block.attribute, name);
    let key = || spelling.map_or_else(|| Cow::Owned(name.to_owned()), Cow::Borrowed);
    // The usual line, a counter whose value fits its field, is inserted
    // at once: the insert says whether it was there before, so the
    // counters are searched once, and no other warning comes before the
    // duplicate's (the same warnings, in the same order, as below).
    if let (Some(FieldKind::Counter(bits)), Ok(v)) = (kind, decimal_u64(value)) {
        if max_for_bits(bits).is_none_or(|max| v <= max) {
            let replaced = block
                .counters
                .insert(counter_id(name, id), Counter::new(v, bits));
            // `fields` never holds a counter of the block's attribute: a
            // name goes there only when its kind (fixed by name and
            // attribute) is not a counter, or as an ibcheckerrors
            // `…Threshold`, which no layout names as a counter. So the
            // string search of `fields` (a few `memcmp`s a counter line)
            // is made only by the tests' oracle.
            if replaced.is_some() || (fields_checked_always() && block.fields.contains_key(name)) {
                warn_repeated(line, name, unread);
            }
            return;
        }
    }
    let repeated = match id {
        Some(k) => block.counters.contains_key(k),
        None => block.counters.contains_key(name),
    };
    if repeated || block.fields.contains_key(name) {
        warn_repeated(line, name, unread);
    }
    match kind {
        Some(FieldKind::Counter(bits)) => read_counter(line, name, id, value, bits, block, unread),
        Some(FieldKind::Hex(_)) => {
            if is_hex(value) {
                block.fields.insert(key(), value.to_owned());
            } else {
                unread.line(line, &format!("`{name}` is not a hexadecimal number"));
            }
        }
        Some(FieldKind::Number) => match decimal_u64(value) {
            Ok(_) => {
                block.fields.insert(key(), value.to_owned());
            }
            Err(e) => unread.number(line, name, e),
        },
        None => match decimal_u64(value) {
            Ok(v) => {
                block
                    .counters
                    .insert(counter_id(name, id), Counter::unknown_width(v));
            }
            Err(NumberError::TooLarge) => unread.number(line, name, NumberError::TooLarge),
            Err(NumberError::NotANumber) => {
                block.fields.insert(key(), value.to_owned());
            }
        },
    }
}

/// Whether the counter fast path of [`read_field`] searches `fields` too
/// (as it once did): only when a test asks, to show the search finds
/// nothing.
#[cfg(not(test))]
const fn fields_checked_always() -> bool {
    false
}

/// The fields perfquery prints after `PortRcvErrors` in a PortCounters
/// block, all zero: tests that write a block's first counters by hand end
/// it with these, so that it is whole (a block that stops early is cut).
#[cfg(test)]
pub(crate) const PORT_COUNTERS_AFTER_RCV_ERRORS: &str = "PortRcvRemotePhysicalErrors:.....0\nPortRcvSwitchRelayErrors:........0\nPortXmitDiscards:................0\nPortXmitConstraintErrors:........0\nPortRcvConstraintErrors:.........0\nCounterSelect2:..................0x00\nLocalLinkIntegrityErrors:........0\nExcessiveBufferOverrunErrors:....0\nQP1Dropped:......................0\nVL15Dropped:.....................0\nPortXmitData:....................0\nPortRcvData:.....................0\nPortXmitPkts:....................0\nPortRcvPkts:.....................0\nPortXmitWait:....................0\n";

#[cfg(test)]
thread_local! {
    /// Set by the tests that read a text both ways.
    static CHECK_FIELDS_ALWAYS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

#[cfg(test)]
fn fields_checked_always() -> bool {
    CHECK_FIELDS_ALWAYS.with(std::cell::Cell::get)
}

/// A field printed twice in one block.
fn warn_repeated(line: &Line<'_>, name: &str, unread: &mut Unread) {
    unread.warn(
        WarningKind::Suspicious,
        line.span(),
        format!("`{name}` appears twice in one block (a header missing?); the later value is kept"),
    );
}

/// The id of counter `name`, already looked up as `known`.
fn counter_id(name: &str, known: Option<KnownCounter>) -> CounterId {
    known.map_or_else(|| CounterId::from_name(name), CounterId::Known)
}

fn read_counter(
    line: &Line<'_>,
    name: &str,
    id: Option<KnownCounter>,
    value: &str,
    bits: u8,
    block: &mut PerfBlock,
    unread: &mut Unread,
) {
    match decimal_u64(value) {
        Ok(v) if max_for_bits(bits).is_some_and(|max| v > max) => unread.warn(
            WarningKind::OutOfRange,
            line.span(),
            format!("`{name}` is {v}, more than its {bits}-bit field can hold; value ignored"),
        ),
        Ok(v) => {
            block
                .counters
                .insert(counter_id(name, id), Counter::new(v, bits));
        }
        Err(e) => unread.number(line, name, e),
    }
}

fn is_hex(value: &str) -> bool {
    value
        .strip_prefix("0x")
        .is_some_and(|d| !d.is_empty() && d.chars().all(|c| c.is_ascii_hexdigit()))
}

/// A parsed `# … counters: <portid> port <n> (CapMask: …)` header.
#[derive(Debug, PartialEq)]
struct Header<'t> {
    attribute: PerfAttribute,
    port_id: &'t str,
    port: Option<u32>,
    cap_mask: Option<u32>,
    cap_mask2: Option<u32>,
    unknown_keys: Vec<String>,
}

impl<'t> Header<'t> {
    fn parse(t: &'t str) -> Option<Self> {
        let (mut header, details) = Self::parse_target(t)?;
        header.read_details(details);
        Some(header)
    }

    /// [`Header::parse`] without reading the details (`CapMask: …`),
    /// which never decide whether a line is a header, nor its attribute
    /// and port: what the detector needs of every header, before the
    /// parser reads it whole. Returns the header and its unread details.
    fn parse_target(t: &'t str) -> Option<(Self, &'t str)> {
        let rest = t.strip_prefix('#')?.trim_start();
        let (attribute, rest) = match rest.strip_prefix("PortSamplesControl:") {
            Some(r) => (PerfAttribute::PortSamplesControl, r),
            None => {
                let (name, r) = split_once_str(rest, " counters:")?;
                (attribute_named(trim(name))?, r)
            }
        };
        let rest = trim(rest);
        // The last `(`, found by a byte search (`(` is ASCII, never part of
        // a longer character; the char searcher set up per header showed,
        // and then the byte-by-byte scan back over the details).
        let last_open = |r: &'t str| {
            let at = memchr::memrchr(b'(', r.as_bytes())?;
            Some((r.get(..at)?, r.get(at + 1..)?))
        };
        let (target, details) = match rest.strip_suffix(')').and_then(last_open) {
            Some((target, details)) => (target.trim_end(), details),
            None => (rest, ""),
        };
        let (port_id, port) = match rsplit_once_str(target, " port ") {
            Some((id, n)) => match decimal_u32(trim(n)) {
                Ok(n) => (trim(id), Some(n)),
                Err(_) => (target, None),
            },
            None => (target, None),
        };
        if port_id.is_empty() {
            return None;
        }
        let header = Header {
            attribute,
            port_id,
            port,
            cap_mask: None,
            cap_mask2: None,
            unknown_keys: Vec::new(),
        };
        Some((header, details))
    }

    /// `CapMask: 0x5300 CapMask2: 0x0000002`.
    fn read_details(&mut self, details: &str) {
        // ASCII details (all real ones) are cut at ASCII white space, byte
        // by byte; `split_whitespace` decodes characters, and is kept for
        // the rest (where it also cuts at other white space).
        if details.is_ascii() {
            // The white space `char::is_whitespace` knows among ASCII.
            let is_space = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r');
            let bytes = details.as_bytes();
            let mut at = 0;
            let words = std::iter::from_fn(move || {
                let start = at + bytes.get(at..)?.iter().position(|b| !is_space(b))?;
                let rest = bytes.get(start..)?;
                at = start + rest.iter().position(is_space).unwrap_or(rest.len());
                details.get(start..at)
            });
            self.read_words(words);
        } else {
            self.read_words(details.split_whitespace());
        }
    }

    /// The `Key: value` words of the details, in order.
    fn read_words<'w>(&mut self, mut words: impl Iterator<Item = &'w str>) {
        while let Some(key) = words.next() {
            let value = words.next().map(hex_u32);
            match (key, value) {
                ("CapMask:", Some(Ok(v))) => self.cap_mask = Some(v),
                ("CapMask2:", Some(Ok(v))) => self.cap_mask2 = Some(v),
                _ => self.unknown_keys.push(key.to_owned()),
            }
        }
    }

    fn into_block(self, line: &Line<'_>) -> PerfBlock {
        let mut block = PerfBlock::new(self.attribute, self.port_id, line.span());
        block.lid = lid_of(self.port_id);
        block.port = self.port;
        block.all_ports = self.port == Some(ALL_PORTS);
        block.cap_mask = self.cap_mask;
        block.cap_mask2 = self.cap_mask2;
        block
    }
}

/// perfquery's port number for "all ports" (`-a`, AllPortSelect).
const ALL_PORTS: u32 = 255;

/// Known header names, or a plausible unknown one (words of letters,
/// digits, `-` and `_`), so stray `# comment: …` lines are not taken.
fn attribute_named(name: &str) -> Option<PerfAttribute> {
    let plausible = !name.is_empty()
        && name.len() <= 64
        && name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b' ' | b'-' | b'_'));
    plausible.then(|| PerfAttribute::from_header_name(name))
}

/// `Lid 133`, `Lid 5 DR path …` → the LID.
fn lid_of(port_id: &str) -> Option<u32> {
    let rest = port_id.strip_prefix("Lid ")?;
    decimal_u32(rest.split(' ').next()?).ok()
}

/// Recognises a header followed by a dotted field line.
fn detect(lines: &[Line<'_>]) -> Option<Block> {
    let first = trim(lines.first()?.text());
    let line = lines.first().map_or(0, |l| l.number);
    if ibcheckerrors_warn(first).is_some() {
        return Some(Block::keyed(format!("ibcheckerrors at line {line}")));
    }
    if !first.starts_with('#') {
        return detect_headless(lines);
    }
    // Read once, for the wrapped-header test and the block's key; the
    // details (`CapMask: …`) decide neither, so they are left to the
    // parser.
    let header = Header::parse_target(first).map(|(h, _)| h);
    // The port test first: a whole header (nearly all) needs no search.
    if header.as_ref().is_none_or(|h| h.port.is_none()) && first.contains(" counters:") {
        // A header wrapped onto two lines: the parser joins them.
        let next = trim(lines.iter().skip(1).find(|l| !l.is_blank())?.text());
        if Header::parse_target(&format!("{first} {next}")).is_some_and(|(h, _)| h.port.is_some()) {
            return Some(Block::keyed(format!("wrapped header at line {line}")));
        }
    }
    let header = header?;
    // stderr diagnostics can land between a header and its first line.
    let next = lines
        .iter()
        .skip(1)
        .map(|l| trim(l.text()))
        .find(|t| !t.is_empty() && tool_message_kind(t).is_none())?;
    dotted_field(next)?;
    Some(Block::keyed(block_key(&header)))
}

/// `{attribute:?}|{port_id}|{port:?}`, the key of a header's block, written
/// piece by piece: every section of a fleet starts with one, and the
/// `format!` of the three (two of them through `Debug`) cost as much as
/// the rest of the detector.
fn block_key(header: &Header<'_>) -> String {
    use std::fmt::Write;
    let mut key = String::with_capacity(header.port_id.len() + 48);
    // A known attribute's `Debug` is one `write_str` of its name.
    let _ = write!(key, "{:?}", header.attribute);
    key.push('|');
    key.push_str(header.port_id);
    match header.port {
        Some(port) => {
            key.push_str("|Some(");
            key.push_str(crate::parse::text::decimal_text(
                u64::from(port),
                &mut [0; 20],
            ));
            key.push(')');
        }
        None => key.push_str("|None"),
    }
    key
}

/// Three dotted `Name:....value` lines in a row whose names are PortCounters
/// or PortCountersExtended fields (today's or pre-2009 spellings): counter
/// lines whose header was lost. Keyed by line, so that inside a full
/// perfquery section they continue it.
fn detect_headless(lines: &[Line<'_>]) -> Option<Block> {
    let known = |t: &str| {
        dotted_field(t).is_some_and(|(name, value)| {
            let name = crate::model::perf_fields::modern_name(name).unwrap_or(name);
            !value.is_empty()
                && (PerfAttribute::PortCounters.field_kind(name).is_some()
                    || PerfAttribute::PortCountersExtended
                        .field_kind(name)
                        .is_some())
        })
    };
    // Three known lines in a row; the first unknown one ends the look.
    let mut known_in_a_row = 0;
    for line in lines.iter().filter(|l| !l.is_blank()).take(3) {
        if !known(trim(line.text())) {
            break;
        }
        known_in_a_row += 1;
    }
    let all = known_in_a_row == 3;
    let line = lines.first().map_or(0, |l| l.number);
    all.then(|| Block::keyed(format!("headless at line {line}")))
}

/// Renders a model in perfquery's own layout: each header, then the fields
/// in libibmad's order with dots up to column 33, then any fields the
/// layout does not list. Used by the round-trip tests.
#[must_use]
pub fn render(perf: &Perfquery) -> String {
    let mut s = String::new();
    for block in &perf.blocks {
        render_block(block, &mut s);
    }
    s
}

fn render_block(block: &PerfBlock, s: &mut String) {
    s.push_str("# ");
    s.push_str(block.attribute.header_name());
    s.push_str(match block.attribute {
        PerfAttribute::PortSamplesControl => ": ",
        _ => " counters: ",
    });
    s.push_str(&block.port_id);
    if let Some(port) = block.port {
        s.push_str(&format!(" port {port}"));
    }
    match (block.cap_mask, block.cap_mask2) {
        (Some(m), Some(m2)) => s.push_str(&format!(" (CapMask: 0x{m:02X} CapMask2: 0x{m2:07X})")),
        (Some(m), None) => s.push_str(&format!(" (CapMask: 0x{m:02X})")),
        (None, Some(m2)) => s.push_str(&format!(" (CapMask2: 0x{m2:07X})")),
        (None, None) => {}
    }
    s.push('\n');
    let mut printed = std::collections::HashSet::new();
    for (name, _) in block.attribute.field_names() {
        if let Some(c) = block.counters.get(&*name) {
            push_field(s, &name, &c.value.to_string());
        } else if let Some(v) = block.fields.get(name.as_ref()) {
            push_field(s, &name, v);
        } else {
            continue;
        }
        printed.insert(name);
    }
    for (id, c) in &block.counters {
        if !printed.contains(id.name()) {
            push_field(s, id.name(), &c.value.to_string());
        }
    }
    for (name, v) in &block.fields {
        if !printed.contains(&**name) && !block.counters.contains_key(&**name) {
            push_field(s, name, v);
        }
    }
}

/// `name:` and dots up to [`VALUE_COLUMN`], as `_mad_dump_field` does (no
/// dots at all for names of 32 characters or more).
fn push_field(s: &mut String, name: &str, value: &str) {
    s.push_str(name);
    s.push(':');
    let used = name.len() + 1;
    if used < VALUE_COLUMN {
        s.extend(std::iter::repeat_n('.', VALUE_COLUMN - used));
    }
    s.push_str(value);
    s.push('\n');
}

/// `3 blocks: 2 × PortCountersExtended, 1 × PortRcvErrorDetails (Lid 1719)`.
#[must_use]
pub fn summary(perf: &Perfquery) -> String {
    if perf.blocks.is_empty() {
        return "no counter blocks".to_owned();
    }
    let mut by_attribute: Vec<(&str, usize)> = Vec::new();
    let mut ports: Vec<&str> = Vec::new();
    for b in &perf.blocks {
        let name = match &b.attribute {
            PerfAttribute::PortCounters => "PortCounters",
            PerfAttribute::PortCountersExtended => "PortCountersExtended",
            other => other.header_name(),
        };
        match by_attribute.iter_mut().find(|(n, _)| *n == name) {
            Some((_, count)) => *count += 1,
            None => by_attribute.push((name, 1)),
        }
        if !ports.contains(&b.port_id.as_str()) {
            ports.push(&b.port_id);
        }
    }
    let kinds: Vec<String> = by_attribute
        .iter()
        .map(|(n, c)| format!("{c} × {n}"))
        .collect();
    let shown: Vec<&str> = ports.iter().take(3).copied().collect();
    let more = if ports.len() > 3 { ", …" } else { "" };
    format!(
        "{} block(s): {} ({}{more})",
        perf.blocks.len(),
        kinds.join(", "),
        shown.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Remembered answers are the answers: any sequence of names and
        /// attributes gets what the tables say, as if looked up afresh.
        #[test]
        fn field_names_answer_as_the_tables_do(
            asks in proptest::collection::vec((0usize..3, proptest::sample::select(vec![
                "PortSelect", "CounterSelect", "SymbolErrorCounter", "PortXmitData",
                "PortXmitWait", "XmtDataSL3", "XmtDataSL16", "Weird", "PortRcvData",
                "LinkDownedCounter", "CounterSelect2",
            ])), 0..200),
        ) {
            let attributes = [
                PerfAttribute::PortCounters,
                PerfAttribute::PortCountersExtended,
                PerfAttribute::PortXmitDataSl,
            ];
            let mut names = FieldNames::default();
            for (a, name) in asks {
                let attribute = &attributes[a];
                let known = names.of(attribute, name);
                proptest::prop_assert_eq!(
                    (known.id, known.kind),
                    (KnownCounter::from_name(name), attribute.field_kind(name))
                );
                // The spelling, when there is one, is the name's.
                proptest::prop_assert!(known.spelling.is_none_or(|s| s == name));
                proptest::prop_assert_eq!(
                    known.spelling,
                    crate::model::perf_fields::spelling_in(attribute.layout(), name)
                );
            }
        }
    }
    use crate::parse::lines_of;

    /// Lines of perfquery output and near it: headers whole, wrapped,
    /// open, odd, with unknown details; ibcheckerrors lines; fields;
    /// blanks.
    fn perfquery_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let line = prop_oneof![
            proptest::sample::select(vec![
                "# Port counters: Lid 17 port 3 (CapMask: 0x5A00)",
                "# Port extended counters: Lid 2 port 1 (CapMask: 0x5A00 CapMask2: 0x0000000)",
                "# Port extended counters: Lid 2 port 1 (CapMask: 0x5A00 Odd: 1)",
                "  # Port counters: Lid 4 port 255 (CapMask: 0x1)  ",
                "# Port counters: Lid 17",
                "port 3",
                "# Port counters: Lid 17 port 3 (CapMask:",
                "0x5A00)",
                "# PortSamplesControl: Lid 1 port 1",
                "# Port counters: Lid 17 port x",
                "# comment: nothing",
                "#warn: counter SymbolErrors = 65535 \t(threshold 10) lid 3 port 1",
                "Error check on lid 3 (x) port 1:  FAILED ",
                "PortSelect:......................3",
                "SymbolErrorCounter:..............65535",
                "PortXmitData:....................123",
                "ibwarn: [1] mad_rpc: timeout",
                "",
                "   ",
            ])
            .prop_map(str::to_owned),
            "#[ A-Za-z0-9:()x]{0,30}",
        ];
        proptest::collection::vec(line, 0..12).prop_map(|ls| ls.join("\n"))
    }

    /// [`detect`] as it was: every header read whole (details too), the
    /// key written by `format!`.
    fn detect_by_format(lines: &[Line<'_>]) -> Option<Block> {
        let first = lines.first()?.text().trim();
        let line = lines.first().map_or(0, |l| l.number);
        if ibcheckerrors_warn(first).is_some() {
            return Some(Block::keyed(format!("ibcheckerrors at line {line}")));
        }
        if !first.starts_with('#') {
            return detect_headless(lines);
        }
        let header = Header::parse(first);
        if header.as_ref().is_none_or(|h| h.port.is_none()) && first.contains(" counters:") {
            let next = lines.iter().skip(1).find(|l| !l.is_blank())?.text().trim();
            if Header::parse(&format!("{first} {next}")).is_some_and(|h| h.port.is_some()) {
                return Some(Block::keyed(format!("wrapped header at line {line}")));
            }
        }
        let header = header?;
        let next = lines
            .iter()
            .skip(1)
            .map(|l| l.text().trim())
            .find(|t| !t.is_empty() && tool_message_kind(t).is_none())?;
        dotted_field(next)?;
        Some(Block::keyed(format!(
            "{:?}|{}|{:?}",
            header.attribute, header.port_id, header.port
        )))
    }

    /// [`perfquery_text`]'s lines and headers of other attributes, ports
    /// and port ids (unknown attributes, directed routes, no port, the
    /// largest port, odd details).
    fn detection_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let line = prop_oneof![
            perfquery_text(),
            proptest::sample::select(vec![
                "# Odd-thing_2 counters: Lid 2 port 4294967295 (CapMask: 0x5A00 Odd: x)",
                "# Port extended counters: DR path slid 65535; dlid 65535; 0,1 port 255 (CapMask: 0x5300 CapMask2: 0x0000002)",
                "# PortXmitDataSL counters: Lid 9 port 0 (CapMask: zz)",
                "# PortSamplesControl: Lid 1 port 1 (CapMask: 0x1",
                "# Port counters: Lid 2",
                "# Port counters: Lid 2 port 1 (",
                "# Port counters: port 1",
                "# Port counters: Lid 2 port 4294967296",
                "PortXmitWait:....................",
                "ibwarn: [1] mad_rpc: timeout",
                "LinkDownedCounter:...............3",
            ])
            .prop_map(str::to_owned),
        ];
        proptest::collection::vec(line, 0..6).prop_map(|ls| ls.join("\n"))
    }

    proptest::proptest! {
        /// Leaving the details to the parser and writing the key piece by
        /// piece detects what reading the whole header and `format!` did,
        /// from every line of a text.
        #[test]
        fn detection_reads_as_whole_headers_and_format(text in detection_text()) {
            let lines = lines_of(&text);
            for start in 0..=lines.len() {
                let rest = lines.get(start..).unwrap_or_default();
                proptest::prop_assert_eq!(detect(rest), detect_by_format(rest));
            }
        }
    }

    proptest::proptest! {
        /// Taking the headers the open-header test parsed reads every text
        /// as parsing each header line afresh did.
        #[test]
        fn reused_headers_read_as_parsed_afresh(text in perfquery_text()) {
            let lines = lines_of(&text);
            proptest::prop_assert_eq!(parse_reusing(&lines, true), parse_reusing(&lines, false));
        }
    }

    /// Fields, counters, odd values, repeats and ibcheckerrors warnings
    /// under headers of attributes that print different kinds for one
    /// name (`PortSelect`, `CounterSelect2`, `Weird`), and header-less.
    fn fields_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::strategy::Strategy;
        let line = proptest::sample::select(vec![
            "# Port counters: Lid 17 port 3 (CapMask: 0x5A00)",
            "# Port extended counters: Lid 2 port 1 (CapMask: 0x5A00 CapMask2: 0x0000000)",
            "# PortXmitDataSL counters: Lid 2 port 1",
            "# PortSamplesControl: Lid 1 port 1",
            "# Odd counters: Lid 2 port 1",
            "#warn: counter SymbolErrors = 65535 \t(threshold 10) lid 3 port 1",
            "#warn: counter PortXmitData = 7 \t(threshold 1) lid 3 port 1",
            "#warn: counter Weird = 7 \t(threshold 1) lid 3 port 1",
            "PortSelect:......................3",
            "PortSelect:......................0x3",
            "CounterSelect:...................0x0000",
            "CounterSelect:...................7",
            "CounterSelect2:..................0x00",
            "SymbolErrorCounter:..............65535",
            "SymbolErrorCounter:..............65536",
            "SymbolErrorCounter:..............x",
            "SymbolErrorsThreshold:...........5",
            "PortXmitData:....................123",
            "PortXmitData:....................99999999999999999999999",
            "XmtDataSL3:......................4",
            "Weird:...........................5",
            "Weird:...........................2.5 Gbps",
            "WeirdThreshold:..................1",
            "PortXmitWait:....................",
            "",
        ]);
        proptest::collection::vec(line, 0..16).prop_map(|ls| ls.join("\n"))
    }

    proptest::proptest! {
        /// A counter line's repeat test finds what it did when it also
        /// searched `fields` for the name: `fields` never holds a counter.
        #[test]
        fn counter_repeats_need_no_search_of_fields(text in fields_text()) {
            let lines = lines_of(&text);
            let fast = parse(&lines);
            CHECK_FIELDS_ALWAYS.with(|c| c.set(true));
            let searched = parse(&lines);
            CHECK_FIELDS_ALWAYS.with(|c| c.set(false));
            proptest::prop_assert_eq!(fast, searched);
        }
    }

    /// ibcheckerrors puts `<Name>Threshold` into `fields`: no attribute
    /// has a counter so named, so `fields` holds no counter of its block.
    #[test]
    fn no_counter_is_named_as_a_threshold() {
        let names = [
            "Port",
            "Port extended",
            "PortRcvErrorDetails",
            "PortXmitDiscardDetails",
            "PortXmitDataSL",
            "PortRcvDataSL",
            "PortExtendedSpeedsCounters",
            "PortExtendedSpeedsCounters with RS-FEC Active",
            "PortOpRcvCounters",
            "PortFlowCtlCounters",
            "PortVLOpPackets",
            "PortVLOpData",
            "PortVLXmitFlowCtlUpdateErrors",
            "PortVLXmitWaitCounters",
            "SwPortVLCongestion",
            "PortRcvConCtrl",
            "PortSLRcvFECN",
            "PortSLRcvBECN",
            "PortXmitConCtrl",
            "PortVLXmitTimeCong",
        ];
        let attributes = names
            .iter()
            .map(|name| PerfAttribute::from_header_name(name))
            .chain([PerfAttribute::PortSamplesControl]);
        let mut seen = 0;
        for attribute in attributes {
            assert!(!matches!(attribute, PerfAttribute::Other(_)));
            for (name, kind) in attribute.field_names() {
                seen += 1;
                if matches!(kind, FieldKind::Counter(_)) {
                    assert!(!name.ends_with("Threshold"), "{name}");
                }
            }
        }
        assert!(seen > 100);
    }

    /// Written from `perfquery` on an HDR switch port; counters chosen to
    /// exercise the narrow fields.
    const BASIC: &str = "# Port counters: Lid 17 port 3 (CapMask: 0x5A00)
PortSelect:......................3
CounterSelect:...................0x0000
SymbolErrorCounter:..............65535
LinkErrorRecoveryCounter:........255
LinkDownedCounter:...............3
PortRcvErrors:...................12
PortRcvRemotePhysicalErrors:.....0
PortRcvSwitchRelayErrors:........0
PortXmitDiscards:................20046
PortXmitConstraintErrors:........0
PortRcvConstraintErrors:.........0
CounterSelect2:..................0x00
LocalLinkIntegrityErrors:........15
ExcessiveBufferOverrunErrors:....14
QP1Dropped:......................0
VL15Dropped:.....................0
PortXmitData:....................4294967295
PortRcvData:.....................1234
PortXmitPkts:....................99
PortRcvPkts:.....................98
PortXmitWait:....................7
";

    #[test]
    fn basic_counters_carry_their_widths_and_saturation() {
        let parsed = parse(&lines_of(BASIC));
        assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
        let b = &parsed.value.blocks[0];
        assert_eq!(b.attribute, PerfAttribute::PortCounters);
        assert_eq!(
            (b.port_id.as_str(), b.lid, b.port),
            ("Lid 17", Some(17), Some(3))
        );
        assert_eq!(
            (b.cap_mask, b.cap_mask2, b.all_ports),
            (Some(0x5A00), None, false)
        );
        let c = |n: &str| *b.counter(n).unwrap();
        assert_eq!(
            c("SymbolErrorCounter"),
            Counter {
                value: 65535,
                bits: 16,
                saturated: true
            }
        );
        assert!(c("LinkErrorRecoveryCounter").saturated);
        assert_eq!(c("LinkDownedCounter").bits, 8);
        assert!(c("LocalLinkIntegrityErrors").saturated);
        assert!(!c("ExcessiveBufferOverrunErrors").saturated);
        assert!(c("PortXmitData").saturated);
        assert_eq!(b.xmit_data_octets(), Some(4 * 4_294_967_295));
        assert_eq!(b.fields["CounterSelect"], "0x0000");
        assert_eq!(b.fields["CounterSelect2"], "0x00");
        assert_eq!(b.fields["PortSelect"], "3");
        assert_eq!(b.counters.len(), 18);
        assert_eq!((b.span.first_line, b.span.last_line), (1, 22));
    }

    #[test]
    fn render_reproduces_the_tool_text_exactly() {
        let parsed = parse(&lines_of(BASIC)).value;
        assert_eq!(render(&parsed), BASIC);
    }

    #[test]
    fn extended_header_with_cap_mask2_and_dr_path() {
        let text = "# Port extended counters: DR path slid 65535; dlid 65535; 0,1 port 255 (CapMask: 0x5300 CapMask2: 0x0000002)
PortSelect:......................255
CounterSelect:...................0x0000
PortXmitData:....................18446744073709551615
PortRcvData:.....................5
";
        let parsed = parse(&lines_of(text));
        assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
        let b = &parsed.value.blocks[0];
        assert!(b.is_extended());
        assert_eq!(b.port_id, "DR path slid 65535; dlid 65535; 0,1");
        assert_eq!((b.lid, b.port, b.all_ports), (None, Some(255), true));
        assert_eq!((b.cap_mask, b.cap_mask2), (Some(0x5300), Some(2)));
        assert!(b.counter("PortXmitData").unwrap().saturated);
        assert_eq!(b.counter("PortRcvData").unwrap().bits, 64);
        assert_eq!(b.xmit_data_octets(), None);
    }

    #[test]
    fn values_beyond_the_field_are_out_of_range_not_wrapped() {
        let text = "# Port counters: Lid 1 port 1 (CapMask: 0x1B01)\nLinkDownedCounter:...............256\nLocalLinkIntegrityErrors:........16\nSymbolErrorCounter:..............99999999999999999999\nPortRcvErrors:...................12x\n";
        let parsed = parse(&lines_of(text));
        let b = &parsed.value.blocks[0];
        assert!(b.counters.is_empty());
        let kinds = parsed.warning_lines();
        assert_eq!(
            kinds,
            vec![
                (2, WarningKind::OutOfRange),
                (3, WarningKind::OutOfRange),
                (4, WarningKind::OutOfRange),
                (5, WarningKind::Unreadable)
            ]
        );
    }

    #[test]
    fn loop_ports_blocks_split_at_each_header() {
        let text = "# PortRcvErrorDetails counters: Lid 1719 port 2\nPortSelect:......................2\nCounterSelect:...................0x0000\nPortLocalPhysicalErrors:.........7\n# PortXmitDiscardDetails counters: Lid 1719 port 2\nPortSelect:......................2\nCounterSelect:...................0x0000\nPortInactiveDiscards:............65535\n";
        let parsed = parse(&lines_of(text));
        assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
        let blocks = &parsed.value.blocks;
        assert_eq!(blocks.len(), 2);
        assert_eq!(
            blocks[0].counter("PortLocalPhysicalErrors").unwrap().value,
            7
        );
        assert_eq!(blocks[1].attribute, PerfAttribute::PortXmitDiscardDetails);
        assert!(blocks[1].counter("PortInactiveDiscards").unwrap().saturated);
        assert_eq!(
            (blocks[1].span.first_line, blocks[1].span.last_line),
            (5, 8)
        );
    }

    #[test]
    fn samples_control_is_read_as_fields() {
        let text = "# PortSamplesControl: Lid 3 port 1\nOpCode:..........................0x01\nPortSelect:......................1\nTick:............................0x00\nCounterWidth:....................4\nOptionMask:......................0x0000000000000000\nSampleInterval:..................0\nCounterSelect14:.................0x0000\n";
        let parsed = parse(&lines_of(text));
        assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
        let b = &parsed.value.blocks[0];
        assert_eq!(b.attribute, PerfAttribute::PortSamplesControl);
        assert!(b.counters.is_empty());
        assert_eq!(b.fields["CounterWidth"], "4");
        assert_eq!(b.fields["OptionMask"], "0x0000000000000000");
        assert_eq!(render(&parsed.value), text);
    }

    #[test]
    fn rs_fec_and_two_bit_counters() {
        let text = "# PortExtendedSpeedsCounters with RS-FEC Active counters: Lid 9 port 1\nPortSelect:......................1\nCounterSelect:...................0x0000000000000000\nFECCorrectableSymbolCtrLane3:....41\n# PortVLXmitFlowCtlUpdateErrors counters: Lid 9 port 1\nPortVLXmitFlowCtlUpdateErrors10:.3\n";
        let parsed = parse(&lines_of(text));
        assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
        let [fec, vl] = &parsed.value.blocks[..] else {
            panic!()
        };
        assert_eq!(
            fec.attribute,
            PerfAttribute::PortExtendedSpeedsCountersRsFec
        );
        assert_eq!(
            fec.counter("FECCorrectableSymbolCtrLane3").unwrap().bits,
            32
        );
        let c = vl.counter("PortVLXmitFlowCtlUpdateErrors10").unwrap();
        assert_eq!((c.bits, c.saturated), (2, true));
    }

    #[test]
    fn unknown_attributes_and_fields_keep_their_values() {
        let text = "# PortVendorThing counters: Lid 4 port 1\nPortSelect:......................1\nSpeed:...........................2.5 Gbps\nWeirdCount:......................77\n";
        let parsed = parse(&lines_of(text));
        assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
        let b = &parsed.value.blocks[0];
        assert_eq!(b.attribute, PerfAttribute::Other("PortVendorThing".into()));
        assert_eq!(b.fields["Speed"], "2.5 Gbps");
        assert_eq!(b.counter("WeirdCount"), Some(&Counter::unknown_width(77)));
        assert_eq!(b.counter("PortSelect"), Some(&Counter::unknown_width(1)));
    }

    #[test]
    fn cut_lines_tool_messages_and_junk_are_reported() {
        let text = "PortXmitData:....................5\n# Port counters: Lid 1 port 1 (CapMask: 0x5300)\nSymbolErrorCounter:..............1\nibwarn: [123] dump_perfcounters: PerfMgt ClassPortInfo CapMask 0x5A00; No extended counter support indicated\nhello world\nperfquery: iberror: failed: perfquery\nPortRcvData:.....\n";
        let parsed = parse(&lines_of(text));
        // The first line, with no header above it, is read as a block of
        // its own whose port is unknown.
        assert_eq!(parsed.value.blocks[0].port_id, UNKNOWN_PORT);
        assert_eq!(
            parsed.value.blocks[1]
                .counter("SymbolErrorCounter")
                .unwrap()
                .value,
            1
        );
        let kinds = parsed.warning_lines();
        assert_eq!(
            kinds,
            vec![
                (1, WarningKind::Truncated),
                (4, WarningKind::Suspicious),
                (5, WarningKind::Unreadable),
                (6, WarningKind::Truncated),
                (7, WarningKind::Truncated),
            ]
        );
    }

    proptest::proptest! {
        /// Header details cut byte by byte read as `split_whitespace` cut
        /// them.
        #[test]
        fn details_read_as_split_whitespace(details in "[ \t\x0b\x0c\r\n\x1ca-zA-Z0-9:\u{a0}]{0,30}") {
            let header = |read: &dyn Fn(&mut Header<'_>)| {
                let mut h = Header {
                    attribute: PerfAttribute::PortCounters,
                    port_id: "",
                    port: None,
                    cap_mask: None,
                    cap_mask2: None,
                    unknown_keys: Vec::new(),
                };
                read(&mut h);
                h
            };
            let fast = header(&|h| h.read_details(&details));
            let old = header(&|h| h.read_words(details.split_whitespace()));
            proptest::prop_assert_eq!(fast, old);
        }
    }

    #[test]
    fn detection_needs_a_header_and_a_field() {
        let key = |t: &str| detect(&lines_of(t)).map(|b| b.key);
        assert!(key(
            "# Port counters: Lid 1 port 1 (CapMask: 0x5300)\nPortSelect:......................1"
        )
        .is_some());
        assert!(
            key("# PortSamplesControl: Lid 1 port 1\nOpCode:..........................0x01")
                .is_some()
        );
        assert!(key("# Port counters: Lid 1 port 1\nhello").is_none());
        assert!(key(
            "# Port counters: Lid 1 port 1\nibwarn: [1] x: y\nPortSelect:......................1"
        )
        .is_some());
        assert!(key("# Topology file: generated on Mon\n#").is_none());
        assert!(key("## Summary: 3 nodes checked, 0 bad nodes found\nx:y").is_none());
        assert_ne!(
            key("# Port counters: Lid 1 port 1\nA:..1"),
            key("# Port counters: Lid 1 port 2\nA:..1")
        );
    }

    #[test]
    fn long_names_get_no_dots_and_values_keep_their_dots() {
        let mut s = String::new();
        push_field(&mut s, "PortVLXmitFlowCtlUpdateErrors10", "3");
        assert_eq!(s, "PortVLXmitFlowCtlUpdateErrors10:.3\n");
        s.clear();
        push_field(&mut s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456", "1");
        assert_eq!(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456:1\n");
        assert_eq!(
            dotted_field("LinkSpeedActive:.................2.5 Gbps"),
            Some(("LinkSpeedActive", "2.5 Gbps"))
        );
        assert_eq!(dotted_field("Lid 3: x"), None);
        assert_eq!(dotted_field("Note: x"), None);
        assert_eq!(dotted_field("PortRcvData:"), Some(("PortRcvData", "")));
    }

    fn cut_of(text: &str) -> Option<(PartialReason, Vec<String>, usize)> {
        let parsed = parse(&lines_of(text));
        let block = parsed.value.blocks.first()?;
        block.partial.clone().map(|p| (p.reason, p.missing, p.line))
    }

    /// A value left blank inside a block (hidden before sharing) is an
    /// unread line and the block is whole but for it; only on the output's
    /// last line is a blank value a cut, with the rest of its part.
    #[test]
    fn a_blank_value_cuts_its_block_only_on_the_last_line() {
        let data = "# Port extended counters: Lid 2 port 1 (CapMask: 0x1400)\nPortSelect:......................1\nCounterSelect:...................0x0000\nPortXmitData:....................10\nPortRcvData:.....................20\nPortXmitPkts:....................3\nPortRcvPkts:.....................4\n";
        let blanked = data.replace("....20\n", "....\n");
        let parsed = parse(&lines_of(&blanked));
        let block = &parsed.value.blocks[0];
        assert_eq!(block.partial, None);
        assert_eq!(block.counter("PortRcvData"), None);
        assert_eq!(block.counter("PortRcvPkts").map(|c| c.value), Some(4));
        let warnings: Vec<(usize, WarningKind, &str)> = parsed
            .warnings
            .iter()
            .map(|w| (w.span.first_line, w.kind, w.message.as_str()))
            .collect();
        assert_eq!(
            warnings,
            [(5, WarningKind::Unreadable, "`PortRcvData` has no value")]
        );
        // The same blank, and another on the last line: that one is a cut.
        let cut = blanked.replace("....4\n", "....\n");
        let parsed = parse(&lines_of(&cut));
        assert_eq!(
            parsed.value.blocks[0].partial,
            Some(Partial::new(
                PartialReason::CutLine,
                vec!["PortRcvPkts".to_owned()],
                7
            ))
        );
        let warnings = parsed.warning_lines();
        assert_eq!(
            warnings,
            [(5, WarningKind::Unreadable), (7, WarningKind::Truncated)]
        );
        // A blank line after the cut one changes nothing.
        assert_eq!(
            parse(&lines_of(&format!("{cut}\n"))).value.blocks[0].partial,
            parsed.value.blocks[0].partial
        );
    }

    /// A block that stops inside a part its layout prints whole is cut,
    /// and lacks the rest of that part; one that ends where a part that
    /// perfquery may leave out begins is whole, as are old dumps that
    /// end at `RcvPkts` (no PortXmitWait support) and leave out fields in
    /// the middle (no `QP1Dropped`, no `CounterSelect2`).
    #[test]
    fn blocks_that_stop_inside_a_part_are_cut() {
        let head = "# Port counters: Lid 9 port 2 (CapMask: 0x1400)\nPortSelect:......................2\nCounterSelect:...................0x0000\nSymbolErrorCounter:..............3\nLinkErrorRecoveryCounter:........0\nLinkDownedCounter:...............1\nPortRcvErrors:...................0\n";
        let (reason, missing, line) = cut_of(head).expect("cut");
        assert_eq!(reason, PartialReason::MissingFields);
        assert_eq!(
            missing.first().map(String::as_str),
            Some("PortRcvRemotePhysicalErrors")
        );
        assert_eq!(missing.last().map(String::as_str), Some("PortRcvPkts"));
        assert!(!missing
            .iter()
            .any(|m| m == "PortXmitWait" || m == "SymbolErrorCounter"));
        assert_eq!(line, 7);
        let whole = format!("{head}{PORT_COUNTERS_AFTER_RCV_ERRORS}");
        assert_eq!(cut_of(&whole), None);
        // Without PortXmitWait (a port that does not count it, old tools).
        let no_wait = whole.replace("PortXmitWait:....................0\n", "");
        assert_eq!(cut_of(&no_wait), None);
        let old = "# Port counters: Lid 30 port 1\nPortSelect:......................1\nCounterSelect:...................0x0000\nSymbolErrors:....................0\nLinkRecovers:....................2\nLinkDowned:......................0\nRcvErrors:.......................0\nRcvRemotePhysErrors:.............0\nRcvSwRelayErrors:................0\nXmtDiscards:.....................4\nXmtConstraintErrors:.............0\nRcvConstraintErrors:.............0\nLinkIntegrityErrors:.............0\nExcBufOverrunErrors:.............0\nVL15Dropped:.....................0\nXmtData:.........................91822\nRcvData:.........................82731\nXmtPkts:.........................1207\nRcvPkts:.........................1198\n";
        assert_eq!(cut_of(old), None);
        // Extended: the data counters alone, or with the unicast and
        // multicast ones, are whole; the error counters cut are not.
        let data = "# Port extended counters: Lid 2 port 1 (CapMask: 0x1400)\nPortSelect:......................1\nCounterSelect:...................0x0000\nPortXmitData:....................10\nPortRcvData:.....................20\nPortXmitPkts:....................3\nPortRcvPkts:.....................4\n";
        assert_eq!(cut_of(data), None);
        let (_, missing, _) =
            cut_of(&data.replace("PortRcvPkts:.....................4\n", "")).expect("cut");
        assert_eq!(missing, ["PortRcvPkts"]);
        let errors = format!("{data}PortUnicastXmitPkts:.............3\nPortUnicastRcvPkts:..............4\nPortMulticastXmitPkts:...........0\nPortMulticastRcvPkts:............0\nCounterSelect2:..................0x00000000\nSymbolErrorCounter:..............0\n");
        let (_, missing, line) = cut_of(&errors).expect("cut");
        assert_eq!(
            missing.first().map(String::as_str),
            Some("LinkErrorRecoveryCounter")
        );
        assert_eq!(missing.last().map(String::as_str), Some("QP1Dropped"));
        assert_eq!(line, 13);
        // A value cut off with the paste (`Name:....` left) is missing too.
        let (_, missing, _) =
            cut_of(&format!("{data}PortUnicastXmitPkts:.............")).expect("cut");
        assert_eq!(
            missing.first().map(String::as_str),
            Some("PortUnicastXmitPkts")
        );
    }
}
