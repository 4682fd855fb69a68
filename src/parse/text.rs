//! Small pieces shared by the line-oriented parsers: `Label: value` lines,
//! numbers that may be too large, quoted names, and the bookkeeping of lines
//! that could not be read.

use crate::diag::{merge_adjacent, Warning, WarningKind};
use crate::input::MessageLevel;
use crate::model::partial::{Partial, PartialReason};
use crate::parse::{Line, Parsed};
use crate::span::LineSpan;
use nom::bytes::complete::{tag, take_while1};
use nom::character::complete::{char, digit1, space0};
use nom::combinator::all_consuming;
use nom::sequence::delimited;
use nom::{IResult, Parser};

/// The steps of a shell command line: split at `;`, `&&`, `||` and
/// newlines, trimmed, empty ones dropped (`perfquery -x; sleep 60;
/// perfquery -x` is three). A pipe stays inside its step: it is one tool's
/// output, filtered.
pub(crate) fn command_steps(command: &str) -> impl Iterator<Item = &str> {
    command
        .split([';', '\n'])
        .flat_map(|s| s.split("&&"))
        .flat_map(|s| s.split("||"))
        .map(str::trim)
        .filter(|s| !s.is_empty())
}
/// A table indexed by byte: true for ASCII letters and digits and for the
/// bytes of `extra`. Scanners that test every byte of a name (host names,
/// counter and field names) make one load a byte where a chain of compares
/// was; built at compile time, since a lazily built table would be asked
/// for on every line.
pub(crate) const fn alphanumeric_and(extra: &[u8]) -> [bool; 256] {
    let mut table = [false; 256];
    let mut rest: &mut [bool] = &mut table;
    let mut byte: u8 = 0;
    while let [slot, tail @ ..] = rest {
        let mut wanted = byte.is_ascii_alphanumeric();
        let mut others = extra;
        while let [other, more @ ..] = others {
            wanted |= *other == byte;
            others = more;
        }
        *slot = wanted;
        byte = byte.wrapping_add(1);
        rest = tail;
    }
    table
}

/// Splits `Label: value` (any indentation, value may be empty) into
/// trimmed label and value. The label may contain spaces but not a colon.
pub(crate) fn label_value(line: &str) -> Option<(&str, &str)> {
    // A byte search: `:` is ASCII, never part of a longer character.
    let colon = line.as_bytes().iter().position(|&b| b == b':')?;
    let (label, value) = (line.get(..colon)?, line.get(colon + 1..)?);
    let label = trim(label);
    if label.is_empty() {
        return None;
    }
    Some((label, trim(value)))
}

/// `text` without the ` # note` an author added after a tool's value or
/// row (`Number of ports: 1 # 端口号`, `…, No, No     # pending Yes -> No`),
/// trimmed. For tools that print no ` #` in their values (ibstat,
/// nvidia-smi's CSV).
pub(crate) fn without_note(text: &str) -> &str {
    // A `#` found by a byte search first: most lines hold none, and the
    // two-byte pattern's searcher was set up for every line read (ibstat
    // reads every line through here).
    let bytes = text.as_bytes();
    let at = memchr::memchr_iter(b'#', bytes)
        .find(|&i| i > 0 && bytes.get(i - 1) == Some(&b' '))
        .map(|i| i - 1);
    match at {
        Some(at) => trim(text.get(..at).unwrap_or(text)),
        None => text,
    }
}

/// Words authors put in place of an identifier they hide before sharing
/// (`<redacted>`, `[hidden]`, `(masked)`), lower case.
const REDACTION_WORDS: &[&str] = &[
    "redacted",
    "hidden",
    "masked",
    "removed",
    "censored",
    "anonymized",
    "anonymised",
    "omitted",
];

/// Whether `text`, where a tool prints an identifier (a GUID, an
/// ibnetdiscover node name built from one), holds a placeholder an author
/// put in its place before sharing: such a word alone (`REDACTED`) or in
/// brackets (`9c05<redacted>`, `[hidden]`, `(masked)`), or a run of three or more `x`, `*` or `.`
/// (`0x9c05xxxxxxxx`, `****`, `0x...`), or `…`. Like a blanked identifier
/// ([`blank_identifier`]), it is unknown on purpose: asking for the whole
/// output would not bring it back, so the line is read and the id left
/// unknown, not reported unread. No identifier a tool prints holds any of
/// these (GUIDs are hex digits, `x` only in their `0x`). Called where an
/// identifier did not parse, so the rare case pays for the scan.
pub(crate) fn redacted_identifier(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut run = (0u8, 0usize);
    for &b in bytes {
        run = if b == run.0 { (b, run.1 + 1) } else { (b, 1) };
        if matches!(run.0, b'x' | b'X' | b'*' | b'.') && run.1 >= 3 {
            return true;
        }
    }
    if text.contains('…') {
        return true;
    }
    let lower = text.to_ascii_lowercase();
    if REDACTION_WORDS.contains(&lower.trim()) {
        return true;
    }
    [('<', '>'), ('[', ']'), ('(', ')')]
        .iter()
        .any(|&(open, close)| {
            lower.split(open).skip(1).any(|after| {
                after
                    .split_once(close)
                    .is_some_and(|(inside, _)| REDACTION_WORDS.contains(&inside.trim()))
            })
        })
}

/// Why a number could not be taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NumberError {
    /// Not digits at all.
    NotANumber,
    /// Digits, but more than the type holds.
    TooLarge,
}

/// A decimal unsigned number, telling "too large" apart from "not a number".
/// Surrounding white space is ignored. Digits are accumulated by hand, each
/// tested as it is added (parsers call this for every counter line, and the
/// fleet profile showed the combinator version, `str::parse`, and then a
/// test pass before the sum in it).
pub(crate) fn decimal_u64(text: &str) -> Result<u64, NumberError> {
    let digits = trim(text).as_bytes();
    if digits.is_empty() {
        return Err(NumberError::NotANumber);
    }
    // Nineteen digits always fit: no overflow test a digit (every value of
    // a dump is read here; only a twenty-digit one needs the checks).
    if digits.len() <= 19 {
        let mut n = 0_u64;
        for &b in digits {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                return Err(NumberError::NotANumber);
            }
            n = n * 10 + u64::from(d);
        }
        return Ok(n);
    }
    // Longer: a non-digit anywhere makes it not a number, even after the
    // sum has overflowed, so the scan goes on to the end either way.
    let mut n = Some(0_u64);
    for &b in digits {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return Err(NumberError::NotANumber);
        }
        n = n.and_then(|n| n.checked_mul(10)?.checked_add(u64::from(d)));
    }
    n.ok_or(NumberError::TooLarge)
}

/// `value` in decimal, as `Display` (and `serde_json`) write it, in
/// `digits`: the inverse of [`decimal_u64`]. For the writers that put a
/// number into every rate's derivation and every spooled record, where the
/// formatting machinery was most of the cost.
pub(crate) fn decimal_text(value: u64, digits: &mut [u8; 20]) -> &str {
    let mut rest = value;
    let mut used = 0;
    for slot in digits.iter_mut().rev() {
        *slot = b'0' + u8::try_from(rest % 10).unwrap_or(0);
        rest /= 10;
        used += 1;
        if rest == 0 {
            break;
        }
    }
    digits
        .get(digits.len() - used..)
        .and_then(|d| std::str::from_utf8(d).ok())
        .unwrap_or_default()
}

/// A decimal number that must fit in `u32`.
pub(crate) fn decimal_u32(text: &str) -> Result<u32, NumberError> {
    let v = decimal_u64(text)?;
    u32::try_from(v).map_err(|_| NumberError::TooLarge)
}

/// `0x`-prefixed (or bare) hexadecimal that must fit in `u32`.
/// Read byte by byte: every perfquery header holds one or two (`CapMask:
/// 0x5300`), and the combinator version cost more than the rest of the
/// header.
pub(crate) fn hex_u32(text: &str) -> Result<u32, NumberError> {
    let t = trim(text);
    let digits = t
        .strip_prefix("0x")
        .or_else(|| t.strip_prefix("0X"))
        .unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(NumberError::NotANumber);
    }
    hex_digits_value(digits)
}

/// The value of hex `digits` (all hex digits, at least one): leading zeros
/// do not count towards the 8 a `u32` holds.
fn hex_digits_value(digits: &str) -> Result<u32, NumberError> {
    let trimmed = digits.trim_start_matches('0');
    if trimmed.len() > 8 {
        Err(NumberError::TooLarge)
    } else if trimmed.is_empty() {
        Ok(0)
    } else {
        u32::from_str_radix(trimmed, 16).map_err(|_| NumberError::TooLarge)
    }
}

/// `text.split_once(needle)` for a short ASCII `needle`, by a byte scan:
/// the substring searcher's set-up costs more than the whole search of a
/// header line. Only the places holding the needle's first byte (found by
/// `memchr`) are compared: a test at every place was most of the cost of
/// each perfquery header. Linear for a fixed needle.
pub(crate) fn split_once_str<'t>(text: &'t str, needle: &str) -> Option<(&'t str, &'t str)> {
    let (h, n) = (text.as_bytes(), needle.as_bytes());
    let Some((&first, rest)) = n.split_first() else {
        return Some(("", text));
    };
    let mut from = 0;
    let at = loop {
        let at = from + memchr::memchr(first, h.get(from..)?)?;
        if h.get(at + 1..).is_some_and(|r| r.starts_with(rest)) {
            break at;
        }
        from = at + 1;
    };
    Some((text.get(..at)?, text.get(at + n.len()..)?))
}

/// `text.rsplit_once(needle)` for a short ASCII `needle` (see
/// [`split_once_str`]).
pub(crate) fn rsplit_once_str<'t>(text: &'t str, needle: &str) -> Option<(&'t str, &'t str)> {
    let (h, n) = (text.as_bytes(), needle.as_bytes());
    let Some((&first, rest)) = n.split_first() else {
        return Some((text, ""));
    };
    let mut end = h.len();
    let at = loop {
        let at = memchr::memrchr(first, h.get(..end)?)?;
        if h.get(at + 1..).is_some_and(|r| r.starts_with(rest)) {
            break at;
        }
        end = at;
    };
    Some((text.get(..at)?, text.get(at + n.len()..)?))
}

/// A finite decimal number such as `2.5`, `26.562` or `400`.
pub(crate) fn decimal_f64(text: &str) -> Option<f64> {
    let t = trim(text);
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    t.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// A number and the unit after it: `31 C` → (31, "C"), `-8 C`, `77.89 W`,
/// `0 %`, `1042 KB/s`, a bare `345`. `None` for `N/A`, `[N/A]` and text.
pub(crate) fn quantity(text: &str) -> Option<(f64, &str)> {
    let t = text.trim();
    let end = t.find(char::is_whitespace).unwrap_or(t.len());
    let (number, unit) = t.split_at(end);
    let digits = number.strip_prefix('-').unwrap_or(number);
    if digits.is_empty() || !digits.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let v = decimal_f64(digits)?;
    let v = if number.starts_with('-') { -v } else { v };
    Some((v, unit.trim()))
}

/// Whether a command line asks for help (`-h`, `--help`, `--help-query-gpu`):
/// its output is usage text, not the tool's data.
pub(crate) fn is_help(argv: &[&str]) -> bool {
    argv.iter()
        .any(|a| *a == "-h" || *a == "-?" || a.starts_with("--help"))
}

/// The text between the first pair of single quotes: `CA 'mlx5_0'` → `mlx5_0`.
pub(crate) fn single_quoted(text: &str) -> Option<&str> {
    let (_, after_open) = text.split_once('\'')?;
    let (name, _) = after_open.split_once('\'')?;
    Some(name)
}

/// Whether `t` is a rule: at least `min` bytes, every one `c` (`-----`
/// between ibdiagnet's blocks, `=====` around ibswinfo's description, a
/// page's rule under a `topo -m` header).
pub(crate) fn is_rule_of(t: &str, min: usize, c: u8) -> bool {
    t.len() >= min && t.bytes().all(|b| b == c)
}

/// [`str::trim`], with a fast path for the ASCII white space that
/// surrounds nearly every value: the Unicode tables are consulted only when
/// a non-ASCII byte sits at either end. Inlined with a first test of the
/// two end bytes: the parsers trim every line and most of its parts, which
/// are mostly trimmed already, and the call and both scans showed in the
/// fleet profile.
#[inline]
pub(crate) fn trim(text: &str) -> &str {
    let bytes = text.as_bytes();
    let kept = |b: Option<&u8>| b.is_some_and(|&b| b > b' ' && b < 0x80);
    if kept(bytes.first()) && kept(bytes.last()) {
        return text;
    }
    trim_ends(text)
}

/// How many of the first bytes of `bytes` are `byte`, compared eight at a
/// time: perfquery pads every `Name:` with dots to column 33, and the body
/// test and the parser each count them on every counter line (a
/// `take_while` count was a call and a branch a dot).
pub(crate) fn leading_count(bytes: &[u8], byte: u8) -> usize {
    let pattern = u64::from_ne_bytes([byte; 8]);
    let mut words = bytes.chunks_exact(8);
    let mut count = 0;
    for word in &mut words {
        let word = <[u8; 8]>::try_from(word).map_or(0, u64::from_le_bytes);
        let differ = word ^ pattern;
        if differ != 0 {
            // The lowest byte that differs is the first one, read as
            // little-endian.
            return count + (differ.trailing_zeros() / 8) as usize;
        }
        count += 8;
    }
    let rest = words.remainder();
    count + rest.iter().position(|&b| b != byte).unwrap_or(rest.len())
}

/// How many of the first bytes of `bytes` are ASCII letters or digits, or
/// `extra` (if ASCII; a non-ASCII `extra` is ignored), tested eight at a time: the name of every
/// perfquery counter line (`PortXmitData:…`) is scanned by the body test
/// and by the parser, and the byte-by-byte table scan it replaced was a
/// load, a test and a branch a byte.
#[inline]
pub(crate) fn alphanumeric_run(bytes: &[u8], extra: Option<u8>) -> usize {
    let extra = extra.filter(u8::is_ascii);
    let mut words = bytes.chunks_exact(8);
    let mut count = 0;
    for word in &mut words {
        let word = <[u8; 8]>::try_from(word).map_or(0, u64::from_le_bytes);
        let others = not_alphanumeric(word, extra);
        if others != 0 {
            // Read as little-endian: the lowest flagged byte is the first.
            return count + (others.trailing_zeros() / 8) as usize;
        }
        count += 8;
    }
    let rest = words.remainder();
    count
        + rest
            .iter()
            .position(|&b| !(b.is_ascii_alphanumeric() || Some(b) == extra))
            .unwrap_or(rest.len())
}

/// The high bit of each byte of `word` that is not an ASCII letter, digit
/// or `extra` (ASCII, or `None`). Each test adds a constant to the low seven bits of every
/// byte (no carry crosses a byte) so that the high bit says `>= lo` or
/// `> hi`; a byte with its own high bit set is never ASCII.
#[inline]
fn not_alphanumeric(word: u64, extra: Option<u8>) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = ONES * 0x80;
    let low = word & !HIGH;
    let between = |x: u64, lo: u8, hi: u8| {
        let at_least = x + ONES * u64::from(0x80_u8.wrapping_sub(lo));
        let above = x + ONES * u64::from(0x7f_u8.wrapping_sub(hi));
        at_least & !above & HIGH
    };
    let digit = between(low, b'0', b'9');
    // `| 0x20` lowers capitals and moves no other byte into `a..=z`.
    let letter = between(low | (ONES * 0x20), b'a', b'z');
    let other = extra.map_or(0, |e| between(low, e, e));
    !((digit | letter | other) & !word) & HIGH
}

/// [`trim`] of a text with white space or a non-ASCII byte at an end.
fn trim_ends(text: &str) -> &str {
    let is_space = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c);
    let bytes = text.as_bytes();
    let start = bytes
        .iter()
        .position(|b| !is_space(b))
        .unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|b| !is_space(b))
        .map_or(start, |i| i + 1);
    let ascii_ends = bytes.get(start).is_none_or(u8::is_ascii)
        && end
            .checked_sub(1)
            .and_then(|i| bytes.get(i))
            .is_none_or(u8::is_ascii);
    match text.get(start..end.max(start)) {
        Some(inner) if ascii_ends => inner,
        _ => text.trim(),
    }
}

/// The title of a line decorated alike on both sides, as a script prints
/// one between the steps or snapshots it runs (`echo "==== $(date) ===="`):
/// `==== Tue Dec  1 10:00:00 UTC 2026 ====`, `### after the test ###`,
/// `*** mt4123_pciconf0 ***`, `-- run 2 --`, `>>> node07 <<<`. Each side is
/// a run of at least two of one character (`>` opens, `<` closes), and the
/// title between them is not empty. One-sided lines are not titles: `#
/// Port counters: …` is perfquery's header, `## Summary: …` a tool's.
pub(crate) fn decorated_title(line: &str) -> Option<&str> {
    let t = line.trim();
    let (open, close) = match t.as_bytes().first()? {
        b'=' => ('=', '='),
        b'#' => ('#', '#'),
        b'*' => ('*', '*'),
        b'-' => ('-', '-'),
        b'>' => ('>', '<'),
        _ => return None,
    };
    let after_open = t.trim_start_matches(open);
    let title = after_open.trim_end_matches(close);
    let opened = t.len() - after_open.len();
    let closed = after_open.len() - title.len();
    let title = title.trim();
    (opened >= 2 && closed >= 2 && !title.is_empty()).then_some(title)
}

/// `Word N:` (e.g. `Port 1:`, `Link 12:`) → N, for the given word.
pub(crate) fn numbered_heading(line: &str, word: &str) -> Option<u32> {
    let t = trim(line);
    let parsed: IResult<&str, &str> = all_consuming(delimited(
        (tag(word), take_while1(|c: char| c == ' ' || c == '\t')),
        digit1,
        (space0, char(':')),
    ))
    .parse(t);
    parsed.ok().and_then(|(_, n)| n.parse().ok())
}

/// A field a tool always prints with a value, printed without one: the
/// line is unread where it stands, and `partial` (the port's or block's)
/// records it as [`PartialReason::CutLine`] unless the part is partial for
/// another reason (the latest blank of a part is the one kept). Only on
/// the output's last line was it cut mid-line by the end of the paste (the
/// input layer sets a cut-off last word aside); anywhere else the value
/// was blanked, by hand before sharing (a GUID, a LID) or by a tool in
/// between, and the rest of the part is there. [`settle_blank_value`]
/// tells the two apart once the section is read.
pub(crate) fn blank_value(
    line: &Line<'_>,
    name: &str,
    unread: &mut Unread,
    partial: &mut Option<Partial>,
) {
    unread.line(line, &blank_value_message(name));
    blank_identifier(line, name, partial);
}

/// An identifier field (a GUID, a GID, a capability mask) printed without
/// a value: left out on purpose before sharing (people blank their GUIDs
/// as they would a serial number), so the identifier is unknown, and no
/// line is unread: asking for the whole output would not bring it back.
/// On the last line of the paste it may have been cut instead: like
/// [`blank_value`], the part is marked until [`settle_blank_value`]
/// tells the two apart, and only a cut is then reported.
pub(crate) fn blank_identifier(line: &Line<'_>, name: &str, partial: &mut Option<Partial>) {
    if partial
        .as_ref()
        .is_none_or(|p| p.reason == PartialReason::CutLine)
    {
        *partial = Some(Partial::new(
            PartialReason::CutLine,
            vec![name.to_owned()],
            line.number,
        ));
    }
}

fn blank_value_message(name: &str) -> String {
    format!("`{name}` has no value")
}

/// A field whose value is only the beginning of one the tool prints
/// ([`begins_only`]: `State: Acti`, `state: PORT_ACT`, `Rate: 1`): like a
/// blank value ([`blank_value`]), the field is unknown, the line unread
/// where it stands and `partial` marked until [`settle_blank_value`] tells
/// a cut from the rest. On the output's last line the paste ended inside
/// the value (a paste that ends with a line end keeps its cut word): the
/// part is partial for that field, and no rule judges it on a word that
/// names no state. Anywhere else the value was garbled or edited, and
/// stays unread.
pub(crate) fn cut_value(
    line: &Line<'_>,
    name: &str,
    value: &str,
    unread: &mut Unread,
    partial: &mut Option<Partial>,
) {
    unread.line(line, &cut_value_message(name, value));
    blank_identifier(line, name, partial);
}

fn cut_value_message(name: &str, value: &str) -> String {
    format!("`{name}` value `{value}`{CUT_VALUE_END}")
}

/// How [`cut_value`]'s message ends.
const CUT_VALUE_END: &str = " is only the beginning of a value the tool prints";

/// Whether `value` is a proper beginning, ASCII case aside, of one of
/// `spellings` (`Acti` of `Active`, `1` of `100`) and none of them
/// whole: what is left of a value cut short.
pub(crate) fn begins_only<S: AsRef<str>>(
    value: &str,
    spellings: impl IntoIterator<Item = S>,
) -> bool {
    if value.is_empty() {
        return false;
    }
    let mut begins = false;
    for spelling in spellings {
        let spelling = spelling.as_ref();
        if spelling.eq_ignore_ascii_case(value) {
            return false;
        }
        begins |= spelling
            .get(..value.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(value));
    }
    begins
}

/// Settles a part's blank value ([`blank_value`]) once its section's
/// `lines` are read. On the last non-blank line it was cut by the end of
/// the paste: the part stays partial (`IN001` says so) and the line's
/// warning says it was cut, not unread. Anywhere else it was blanked: the
/// unread warning stands (`IN002`; none for an identifier) and the part is
/// whole but for that value.
pub(crate) fn settle_blank_value(
    partial: &mut Option<Partial>,
    lines: &[Line<'_>],
    warnings: &mut Vec<Warning>,
) {
    let Some((line, name)) = partial
        .as_ref()
        .filter(|p| p.reason == PartialReason::CutLine)
        .and_then(|p| Some((p.line, p.missing.first()?)))
    else {
        return;
    };
    let last = last_text_line(lines);
    if last != Some(line) {
        *partial = None;
        return;
    }
    // A value cut inside ([`cut_value`]) or none at all ([`blank_value`]).
    let cut_prefix = format!("`{name}` value `");
    let unread = warnings.iter().position(|w| {
        w.kind == WarningKind::Unreadable
            && w.span.last_line == line
            && (w.message == blank_value_message(name)
                || (w.message.starts_with(&cut_prefix) && w.message.ends_with(CUT_VALUE_END)))
    });
    let message = unread
        .and_then(|i| warnings.get(i))
        .map_or_else(|| blank_value_message(name), |w| w.message.clone());
    let cut = Warning::new(
        WarningKind::Truncated,
        LineSpan::line(line),
        format!("{message} (output cut short?)"),
    );
    let Some(w) = unread.and_then(|i| warnings.get_mut(i)) else {
        // A blank identifier ([`blank_identifier`]) left no unread line.
        warnings.push(cut);
        warnings.sort_by_key(|w| w.span);
        return;
    };
    if w.span.first_line == line {
        *w = cut;
    } else {
        // Merged with the same field left blank on the line before.
        w.span = LineSpan::new(w.span.first_line, line - 1);
        warnings.push(cut);
        warnings.sort_by_key(|w| w.span);
    }
}

/// The driver shared by the line-at-a-time parsers: feeds every non-blank
/// line to `read_line`, which fills the model or records what it could not
/// read, and returns the model with the merged warnings.
pub(crate) fn read_each_line<T: Default>(
    lines: &[Line<'_>],
    mut read_line: impl FnMut(&Line<'_>, &mut T, &mut Unread),
) -> Parsed<T> {
    let mut out = T::default();
    let mut unread = Unread::default();
    for line in lines.iter().filter(|l| !l.is_blank()) {
        read_line(line, &mut out, &mut unread);
    }
    Parsed {
        value: out,
        warnings: unread.finish(),
    }
}

/// Collects lines a parser could not use and turns them into merged warnings.
#[derive(Debug, Default)]
pub(crate) struct Unread {
    warnings: Vec<Warning>,
}

impl Unread {
    /// Records a line that could not be read, with the reason.
    pub(crate) fn line(&mut self, line: &Line<'_>, why: &str) {
        self.warnings.push(Warning::unreadable(line.span(), why));
    }

    /// Records a different kind of problem.
    pub(crate) fn warn(&mut self, kind: WarningKind, span: LineSpan, message: impl Into<String>) {
        self.warnings.push(Warning::new(kind, span, message));
    }

    /// Records the outcome of a failed number conversion for `label`.
    pub(crate) fn number(&mut self, line: &Line<'_>, label: &str, err: NumberError) {
        match err {
            NumberError::NotANumber => self.line(line, &format!("`{label}` is not a number")),
            NumberError::TooLarge => self.warn(
                WarningKind::OutOfRange,
                line.span(),
                format!("`{label}` is larger than its field can hold; value ignored"),
            ),
        }
    }

    /// The warnings, with runs of identical adjacent ones merged.
    pub(crate) fn finish(mut self) -> Vec<Warning> {
        merge_adjacent(&mut self.warnings);
        self.warnings
    }
}

/// How serious an infiniband-diags diagnostic line is, when the line is
/// one: `ibwarn: …`/`ibdebug: …` (the tool carried on), `iberror: …`/
/// `ibpanic: …` (the tool stopped), the same after the program name
/// (`perfquery: iberror: …`), and libibmad's `src/query_smp.c:199; …`.
/// The one detector: the input layer attaches these lines to their section
/// as messages, and parsers called on their own turn them into warnings.
pub(crate) fn infiniband_message_level(t: &str) -> Option<MessageLevel> {
    let level = |word: &str| match word {
        "ibpanic" | "iberror" => Some(MessageLevel::Error),
        "ibwarn" | "ibdebug" => Some(MessageLevel::Warning),
        _ => None,
    };
    // The first word ends at the first colon and holds no space: one scan
    // that stops at whichever comes first lets most lines go in a few
    // bytes (the input layer asks this of every line).
    let colon = t.bytes().position(|b| b == b':' || b == b' ')?;
    if t.as_bytes().get(colon) != Some(&b':') {
        return None;
    }
    let (first, rest) = (t.get(..colon)?, t.get(colon + 1..)?);
    if let Some(found) = level(first) {
        return Some(found);
    }
    // The word after the program name: every level word starts `ib`, so
    // most lines (`PortXmitData:....`) are passed over without splitting.
    // A first byte that is ASCII and not white space is where the generic
    // `trim_start` would stop too, found without decoding a character.
    let after = match rest.as_bytes().first() {
        Some(&b) if b > b' ' && b < 0x80 => rest,
        _ => rest.trim_start(),
    };
    if after.starts_with("ib") {
        if let Some(found) = level(after.split(':').next()?.trim_end()) {
            return Some(found);
        }
    }
    if !first.ends_with(".c") {
        return None;
    }
    let line_number = rest.split(';').next()?;
    let is_source_location =
        !line_number.is_empty() && line_number.chars().all(|c| c.is_ascii_digit());
    is_source_location.then_some(MessageLevel::Error)
}

/// The kind of warning a tool diagnostic line deserves when a parser meets
/// it: a warning-level message (the data may be partial) is suspicious, an
/// error-level one (the tool stopped) truncates the output.
pub(crate) fn tool_message_kind(t: &str) -> Option<WarningKind> {
    infiniband_message_level(t).map(|level| match level {
        MessageLevel::Warning => WarningKind::Suspicious,
        MessageLevel::Error => WarningKind::Truncated,
    })
}

/// The number of the last line with text: where a paste cut short stops.
pub(crate) fn last_text_line(lines: &[Line<'_>]) -> Option<usize> {
    lines.iter().rev().find(|l| !l.is_blank()).map(|l| l.number)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_in_identifiers_are_redactions_and_real_ids_are_not() {
        for text in [
            "S-9c05<redacted>",
            "b83f<REDACTED>",
            "0x0002c903[hidden]",
            "(masked)",
            "0x9c05xxxxxxxxxxxx",
            "H-XXXXXXXXXXXXXXXX",
            "0x****",
            "0x...",
            "fe80::…",
            "<anonymized>",
            "REDACTED",
        ] {
            assert!(redacted_identifier(text), "{text:?}");
        }
        for text in [
            "S-9c0503000a1b2c3d",
            "0x0002c90300293e1e",
            "0002:c903:0029:3e1e",
            "b83f03000aa1",
            "0xx12",
            "redacted-01",
            "<snip>",
            "",
        ] {
            assert!(!redacted_identifier(text), "{text:?}");
        }
    }

    #[test]
    fn titles_are_decorated_alike_on_both_sides() {
        for (line, title) in [
            (
                "==== Tue Dec  1 10:00:00 UTC 2026 ====",
                "Tue Dec  1 10:00:00 UTC 2026",
            ),
            ("  ### after the test ###", "after the test"),
            ("***mt4123_pciconf0***", "mt4123_pciconf0"),
            ("-- run 2 --", "run 2"),
            (">>> node07 <<<", "node07"),
            ("== a =========", "a"),
        ] {
            assert_eq!(decorated_title(line), Some(title), "{line:?}");
        }
        for line in [
            "# Port counters: Lid 1 port 1 (CapMask: 0x1600)",
            "## Summary: 5 nodes checked, 0 bad nodes found",
            "= a =",
            "==== a",
            "a ====",
            "========",
            "==== ====",
            "=== a ---",
            ">>> a >>>",
            "- a -",
            "",
        ] {
            assert_eq!(decorated_title(line), None, "{line:?}");
        }
    }

    /// Every byte value, at every position of a word, with each extra.
    #[test]
    fn alphanumeric_word_test_takes_exactly_letters_digits_and_extra() {
        for extra in [None, Some(b'_'), Some(b' '), Some(b'-'), Some(0xc3)] {
            for byte in 0..=u8::MAX {
                for at in 0..8 {
                    let mut word = [b'a'; 8];
                    word[at] = byte;
                    let wanted =
                        byte.is_ascii_alphanumeric() || (extra == Some(byte) && byte.is_ascii());
                    let expected = if wanted { 8 } else { at };
                    let mut text = word.to_vec();
                    text.push(b':');
                    assert_eq!(
                        alphanumeric_run(&text, extra).min(8),
                        expected,
                        "{byte:#x} at {at}, extra {extra:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn byte_tables_hold_letters_digits_and_the_extra_bytes_only() {
        for extra in [&b""[..], b"_", b" ", b"-._"] {
            let table = alphanumeric_and(extra);
            for byte in 0..=u8::MAX {
                let want = byte.is_ascii_alphanumeric() || extra.contains(&byte);
                assert_eq!(
                    table.get(usize::from(byte)),
                    Some(&want),
                    "{byte} with {extra:?}"
                );
            }
        }
    }

    /// The combinator version of [`hex_u32`], kept as its oracle.
    fn hex_u32_nom(text: &str) -> Result<u32, NumberError> {
        use nom::character::complete::hex_digit1;
        use nom::combinator::opt;
        use nom::sequence::preceded;
        fn alt_hex_prefix(i: &str) -> IResult<&str, &str> {
            nom::branch::alt((tag("0x"), tag("0X"))).parse(i)
        }
        let t = text.trim();
        let parsed: IResult<&str, &str> =
            all_consuming(preceded(opt(alt_hex_prefix), hex_digit1)).parse(t);
        match parsed {
            Ok((_, digits)) => hex_digits_value(digits),
            Err(_) => Err(NumberError::NotANumber),
        }
    }

    /// [`decimal_u64`] as it was: a test of every byte, then the sum.
    fn decimal_u64_two_pass(text: &str) -> Result<u64, NumberError> {
        let digits = trim(text).as_bytes();
        if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
            return Err(NumberError::NotANumber);
        }
        if digits.len() <= 19 {
            return Ok(digits
                .iter()
                .fold(0_u64, |n, d| n * 10 + u64::from(d - b'0')));
        }
        digits.iter().try_fold(0_u64, |n, d| {
            n.checked_mul(10)
                .and_then(|n| n.checked_add(u64::from(d - b'0')))
                .ok_or(NumberError::TooLarge)
        })
    }

    proptest::proptest! {
        /// The note is cut where `str::find(" #")` finds it.
        #[test]
        fn without_note_cuts_at_the_first_space_hash(t in "[ #a-z\u{7aef}]{0,24}") {
            let want = match t.find(" #") {
                Some(at) => trim(&t[..at]),
                None => t.as_str(),
            };
            proptest::prop_assert_eq!(without_note(&t), want);
        }

        /// Up to nineteen digits are read without overflow checks: the
        /// same value `str::parse` gives, and twenty or more as before.
        #[test]
        fn decimal_u64_reads_digits_as_parse(t in "[0-9]{1,22}") {
            let std = t.parse::<u64>().map_err(|_| NumberError::TooLarge);
            proptest::prop_assert_eq!(decimal_u64(&t), std);
        }

        /// Written as `Display` writes it, and read back to the value.
        #[test]
        fn decimal_text_writes_as_display(v in proptest::prelude::any::<u64>(), small in 0_u64..1000) {
            for n in [v, small, 0, u64::MAX] {
                let text = decimal_text(n, &mut [0; 20]).to_owned();
                proptest::prop_assert_eq!(&text, &n.to_string());
                proptest::prop_assert_eq!(decimal_u64(&text), Ok(n));
            }
        }

        #[test]
        fn hex_u32_reads_as_the_combinators_did(t in "[ \t]{0,2}(0x|0X|0|x)?[0-9a-fA-FgxX ]{0,12}[ \t\u{a0}]{0,2}") {
            proptest::prop_assert_eq!(hex_u32(&t), hex_u32_nom(&t));
        }

        /// Scanning eight bytes at a time counts as the byte-by-byte
        /// test does, for every byte value and each extra byte used.
        #[test]
        fn alphanumeric_run_counts_as_the_byte_test(
            bytes in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::prelude::any::<u8>(),
                    proptest::sample::select(b"azAZ09_ .:@[`{/".to_vec()),
                ],
                0..40,
            ),
            name in "[A-Za-z0-9_]{0,30}",
            extra in proptest::sample::select(vec![None, Some(b'_'), Some(b' '), Some(b'-')]),
        ) {
            let mut joined = name.into_bytes();
            joined.extend_from_slice(&bytes);
            for text in [&bytes[..], &joined[..]] {
                let slow = text
                    .iter()
                    .position(|&b| !(b.is_ascii_alphanumeric() || Some(b) == extra))
                    .unwrap_or(text.len());
                proptest::prop_assert_eq!(alphanumeric_run(text, extra), slow);
            }
        }

        /// Counting eight bytes at a time counts as `take_while` does.
        #[test]
        fn leading_count_counts_as_take_while(t in "[.]{0,40}[.a:]{0,20}") {
            let bytes = t.as_bytes();
            proptest::prop_assert_eq!(
                leading_count(bytes, b'.'),
                bytes.iter().take_while(|&&b| b == b'.').count()
            );
            proptest::prop_assert_eq!(
                leading_count(bytes, b'a'),
                bytes.iter().take_while(|&&b| b == b'a').count()
            );
        }

        /// The end-byte shortcut and the byte scans trim as `str::trim`.
        #[test]
        fn trim_trims_as_str_does(t in "[ \t\r\n\u{b}\u{c}\u{a0}\u{3000}\u{1}\u{7f}aé:]{0,8}") {
            proptest::prop_assert_eq!(trim(&t), t.trim());
        }

        /// The one-pass reading gives what the test-then-sum reading it
        /// replaced gave: the same value, and the same error for empty
        /// text, a non-digit anywhere (before or after an overflow),
        /// white space around or inside, and twenty digits or more.
        #[test]
        fn decimal_u64_reads_as_the_two_pass_version(
            t in "[ \t]{0,2}(0|1|9|18446744073709551615|18446744073709551616|99999999999999999999)?[0-9x. /:\u{a0}é]{0,24}[ \t\u{a0}]{0,2}",
            n in proptest::prelude::any::<u64>(),
        ) {
            proptest::prop_assert_eq!(decimal_u64(&t), decimal_u64_two_pass(&t));
            let n = n.to_string();
            for text in [n.clone(), format!("{n}0"), format!("{n}9x"), format!("{n}00000000000000000000"), format!(" {n} ")] {
                proptest::prop_assert_eq!(decimal_u64(&text), decimal_u64_two_pass(&text), "{:?}", text);
            }
        }

        #[test]
        fn byte_splits_split_as_str_does(t in "[a-z ]{0,6}( port | counters:| p|é)?[a-z é]{0,6}( port | counters)?[a-z0-9 ]{0,4}") {
            for needle in [" port ", " counters:", "p", "", " ", "ééé"] {
                proptest::prop_assert_eq!(split_once_str(&t, needle), t.split_once(needle));
                proptest::prop_assert_eq!(rsplit_once_str(&t, needle), t.rsplit_once(needle));
            }
        }
    }

    #[test]
    fn label_value_takes_the_first_colon() {
        assert_eq!(label_value("\t\tRate: 200"), Some(("Rate", "200")));
        assert_eq!(label_value("Port 1:"), Some(("Port 1", "")));
        assert_eq!(label_value("Time: 12:30"), Some(("Time", "12:30")));
        assert_eq!(label_value("no colon"), None);
        assert_eq!(label_value(": empty label"), None);
    }

    #[test]
    fn numbers_too_large_are_told_apart() {
        assert_eq!(decimal_u64("18446744073709551615"), Ok(u64::MAX));
        assert_eq!(
            decimal_u64("18446744073709551616"),
            Err(NumberError::TooLarge)
        );
        assert_eq!(decimal_u64("12a"), Err(NumberError::NotANumber));
        assert_eq!(decimal_u32("4294967296"), Err(NumberError::TooLarge));
        assert_eq!(hex_u32("0xa651ec48"), Ok(0xa651_ec48));
        assert_eq!(hex_u32("0x00000000a651ec48"), Ok(0xa651_ec48));
        assert_eq!(hex_u32("0x1a651ec48"), Err(NumberError::TooLarge));
    }

    #[test]
    fn fast_trim_and_numbers_agree_with_the_standard_library() {
        for s in [
            "",
            " ",
            "\t12 ",
            "12",
            " 1 2 ",
            "\u{a0}7\u{a0}",
            "\u{3000} x",
            "x\u{85}",
            "é ",
            " é",
            "\r\n",
            "\u{b}5\u{c}",
        ] {
            assert_eq!(trim(s), s.trim(), "{s:?}");
        }
        for s in [
            "0",
            "007",
            " 42\t",
            "18446744073709551615",
            "99999999999999999999",
            "",
            "-1",
            "+1",
            "1 2",
            "\u{a0}3",
            "١",
        ] {
            let std = match s.trim().parse::<u64>() {
                _ if s.trim().is_empty() || !s.trim().bytes().all(|b| b.is_ascii_digit()) => {
                    Err(NumberError::NotANumber)
                }
                Ok(v) => Ok(v),
                Err(_) => Err(NumberError::TooLarge),
            };
            assert_eq!(decimal_u64(s), std, "{s:?}");
        }
        assert_eq!(single_quoted("'a' 'b'"), Some("a"));
        assert_eq!(single_quoted("''"), Some(""));
        assert_eq!(single_quoted("no quote"), None);
    }

    #[test]
    fn headings_and_quotes() {
        assert_eq!(numbered_heading("\tPort 12:", "Port"), Some(12));
        assert_eq!(numbered_heading("Port x:", "Port"), None);
        assert_eq!(single_quoted("CA 'mlx5_0'"), Some("mlx5_0"));
        assert_eq!(single_quoted("CA 'mlx5_0"), None);
        assert_eq!(decimal_f64("2.5"), Some(2.5));
        assert_eq!(decimal_f64("1e9"), None);
        assert_eq!(quantity("-8 C"), Some((-8.0, "C")));
        assert_eq!(quantity(" 77.89 W"), Some((77.89, "W")));
        assert_eq!(quantity("345"), Some((345.0, "")));
        assert_eq!(quantity("N/A"), None);
        assert_eq!(quantity("-"), None);
    }

    /// The reading before the `ib` shortcut, kept as the reference.
    fn message_level_reference(t: &str) -> Option<MessageLevel> {
        let level = |word: &str| match word {
            "ibpanic" | "iberror" => Some(MessageLevel::Error),
            "ibwarn" | "ibdebug" => Some(MessageLevel::Warning),
            _ => None,
        };
        let (first, rest) = t.split_once(':')?;
        if first.contains(' ') {
            return None;
        }
        level(first)
            .or_else(|| level(rest.split(':').next()?.trim()))
            .or_else(|| {
                let line_number = rest.split(';').next()?;
                let is_source_location = first.ends_with(".c")
                    && !line_number.is_empty()
                    && line_number.chars().all(|c| c.is_ascii_digit());
                is_source_location.then_some(MessageLevel::Error)
            })
    }

    fn lines_under(dir: &std::path::Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                lines_under(&path, out);
            } else if let Ok(bytes) = std::fs::read(&path) {
                out.extend(String::from_utf8_lossy(&bytes).lines().map(str::to_owned));
            }
        }
    }

    #[test]
    fn message_levels_agree_with_the_reference_reading() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut lines: Vec<String> = [
            "ibwarn: x",
            "perfquery:  ibwarn : x",
            "perfquery: ibwarnx: x",
            "p:\tiberror",
            "p: ib",
            "p:",
            "src/x.c:12; y",
            "src/x.c:; y",
            "x.c:12",
            "a b: ibwarn: x",
            "p:\u{a0}ibwarn: x",
            "p: \u{3000}iberror: x",
            "p:\u{1f}ibwarn: x",
        ]
        .map(str::to_owned)
        .to_vec();
        lines_under(&root.join("tests/fixtures"), &mut lines);
        assert!(lines.len() > 10_000);
        for line in &lines {
            let t = line.trim();
            assert_eq!(
                infiniband_message_level(t),
                message_level_reference(t),
                "{t:?}"
            );
        }
    }

    #[test]
    fn tool_messages_by_severity() {
        let k = tool_message_kind;
        assert_eq!(k("ibwarn: [12] main: x"), Some(WarningKind::Suspicious));
        assert_eq!(
            k("perfquery: iberror: failed: y"),
            Some(WarningKind::Truncated)
        );
        assert_eq!(k("ibpanic: [1] main: z"), Some(WarningKind::Truncated));
        assert_eq!(k("PortSelect:......1"), None);
        assert_eq!(k("ibwarn:"), Some(WarningKind::Suspicious));
        assert_eq!(k("ib warn: x"), None);
        assert_eq!(k("no colon at all"), None);
        assert_eq!(k("Errors for x: iberror"), None);
        assert_eq!(k("perfquery:  ibwarn : x"), Some(WarningKind::Suspicious));
        assert_eq!(k("perfquery: ibwarnx: x"), None);
        assert_eq!(k("src/query_smp.c:199; x"), Some(WarningKind::Truncated));
        assert_eq!(k("src/query_smp.c:19x; x"), None);
        assert_eq!(k("src/query_smp.h:199; x"), None);
    }

    #[test]
    fn only_a_proper_beginning_of_a_spelling_is_a_cut_value() {
        let states = ["Down", "Active"];
        assert!(begins_only("Acti", states));
        assert!(begins_only("acti", states), "case aside");
        assert!(!begins_only("Active", states), "whole");
        assert!(!begins_only("Actix", states), "not a beginning");
        assert!(!begins_only("", states), "blank is another case");
        // `10` begins `100` but is a rate of its own.
        assert!(!begins_only("10", ["10", "100"]));
        assert!(begins_only("1", ["10", "100"]));
    }
}
