//! Undoing paste damage: what mail clients, forum archives and authors did
//! to tool output before it reached us.
//!
//! One mechanism for every parser: each [`RepairKind`] is a rewrite of the
//! cleaned lines, applied before the input is split into sections, and every
//! rewrite is recorded as a [`Repair`] (what was undone, on which lines) in
//! the document. Line numbers never change and no line is dropped: a line
//! that was only damage (an elision marker) becomes blank and its repair
//! accounts for it.
//!
//! Undone, in this order (a repair sees what the ones before it left):
//! - **HTML archive source**: known tags (`span`, `a`, `p`, `br`, `pre`,
//!   `code`, `tt`, `b`, `i`, `em`, `strong`, `font`, `div`, `hr`, with
//!   their attributes, any case) and `<!-- … -->` comments are removed
//!   anywhere in a line, and named (`&lt;`, `&quot;`, `&nbsp;`, …) and
//!   numeric (`&#39;`, `&#x3e;`) entities decoded; any other `<word>`
//!   (nvidia-smi's `<inactive>`) is text. A line that held only tags
//!   (`</span><br>`) becomes blank. First, so that quote marks an archive
//!   escaped (`&gt;&gt; text`) are quote marks to the next repair;
//! - **mail quoting**: a run of three or more lines starting with `>` (any
//!   depth, `> ` or `>> `) or `//` (output pasted into source as a comment)
//!   loses its quote marks;
//! - **markdown tables**: a run of lines opening with `|` that holds a
//!   markdown separator row (`|---|:--:|`, no `+`) becomes tab-separated
//!   cells, the separator row blank (dcgmi's boxes draw `+---+` rules);
//! - **markdown escapes**: a backslash before markdown punctuation
//!   (`\#`, `mlx5\_0`) is removed, on lines with no other backslash;
//! - **author annotations**: a trailing `<-- this one` (or `<==`, `←`), a
//!   drawn arrow `————>>> note` and a hand-added unit conversion
//!   `(= 12.5 GB/s)` at the end of a line;
//! - **inline code**: a lone backtick opening or closing a line (a block
//!   wrapped in single-backtick inline code);
//! - **elisions**: a line holding only `...`, `[...]`, `…` or `[snip]`, or
//!   a remark in words saying lines were left out (`...omitted`, `(snip)`,
//!   `[truncated]`, `… 12 more lines`, `...省略...`).
//!
//! Not undone (left to the parsers' warnings): indentation lost in markdown,
//! redacted ids (`GPU-...`, `0x...`), ranges condensed by hand (`Link 0-17:`).

use crate::parse::Line;
use crate::span::{spans_of, LineSpan};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// A kind of paste damage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
pub enum RepairKind {
    /// `> ` mail or forum quoting.
    MailQuoting,
    /// HTML entities and tags from an archive page's source.
    Html,
    /// Arrows and unit conversions an author appended to a line.
    Annotation,
    /// Markdown inline-code backticks around a block of output.
    InlineCode,
    /// A line standing for lines the author left out.
    Elision,
    /// Backslashes a markdown writer put before punctuation (`\#`, `\_`).
    MarkdownEscape,
    /// A table redrawn as a markdown table (`| a | b |` rows, `|---|`).
    MarkdownTable,
}

impl RepairKind {
    /// What was undone, for people.
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            Self::MailQuoting => "mail quoting (`> `)",
            Self::Html => "HTML entities and tags",
            Self::Annotation => "author annotations at line ends",
            Self::InlineCode => "markdown inline-code backticks",
            Self::Elision => "elision markers (lines the author left out)",
            Self::MarkdownEscape => "markdown backslash escapes",
            Self::MarkdownTable => "markdown table pipes",
        }
    }
}

/// One repair applied to the input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
pub struct Repair {
    /// What was undone.
    pub kind: RepairKind,
    /// Lines it was undone on (one record per contiguous run).
    #[serde(flatten)]
    pub span: LineSpan,
    /// `undid: mail quoting (`> `) on lines 3–40`.
    pub note: String,
}

/// Applies every repair to `lines`, in place, and returns what was undone:
/// [`apply_to`] with every line tested (the reading the input scan's
/// shortcut must equal, for the tests).
#[cfg(test)]
pub(crate) fn apply(lines: &mut [Line<'_>]) -> Vec<Repair> {
    let candidates: Vec<usize> = (0..lines.len())
        .filter(|&i| lines.get(i).is_some_and(|l| may_change(l.text())))
        .collect();
    apply_to(lines, &candidates)
}

/// Whether any repair could change line `t`: the per-line fixes need one
/// of [`may_need_repair`]'s bytes, mail quoting a quote mark at the start,
/// a markdown table a `|` at the start.
pub(crate) fn may_change(t: &str) -> bool {
    may_need_repair(t) || quote_depth(t).is_some() || opens_with_pipe(t)
}

/// [`may_change`] for a line known to hold none of the bytes `&` `<` `>`
/// `(` `` ` `` `\` `E2` (the input scan's `class::REPAIR`): only its
/// opening is left to test.
pub(crate) fn may_change_plain(t: &str) -> bool {
    t.starts_with("//") || opening_byte(t).is_some_and(|b| matches!(b, b'.' | b'[' | b'|'))
}

/// [`crate::parse::first_byte`] (the first byte after white space), found
/// byte by byte: this runs on every line of the input, and the generic trim
/// decodes characters. A byte that is not ASCII may be Unicode white space:
/// then the generic trim decides.
fn opening_byte(t: &str) -> Option<u8> {
    // The ASCII white space of `char::is_whitespace`, vertical tab included.
    match t
        .bytes()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c))
    {
        Some(b) if b.is_ascii() => Some(b),
        Some(_) => crate::parse::first_byte(t),
        None => None,
    }
}

/// Whether `t` opens with `|` (after white space): a row of a markdown
/// table, or of a dcgmi box, which [`unpipe`] tells apart by the run's
/// separator row.
fn opens_with_pipe(t: &str) -> bool {
    opening_byte(t) == Some(b'|')
}

/// [`may_change`] for a line whose only byte among `&` `<` `>` `(` `` ` ``
/// `\` `E2` is `(` (the input scan's `class::REPAIR` without
/// `class::REPAIR_NOT_PAREN`), most often a perfquery or `nvidia-smi
/// nvlink` header (`(CapMask: …)`, `(UUID: …)`). Of the per-line fixes only
/// two can act on such a line: [`unannotate`]'s `(= …)` at its end (every
/// other annotation needs `<`, `>` or `←`) and [`unelide`]'s `(...)`,
/// which opens with `(`. Mail quoting needs `>` or `//`, a markdown table
/// an opening `|`, both left to [`may_change_plain`]. Saying yes more
/// often than needed is harmless: [`apply_to`] still tests each fix.
pub(crate) fn may_change_paren(t: &str) -> bool {
    opening_byte(t) == Some(b'(') || t.contains(" (=")
}

/// [`apply`], looking only at `candidates` (ascending indexes into
/// `lines`): every line [`may_change`] holds for must be among them, and
/// no other line is touched. Most tool output has few or none, and the
/// rest of its lines cost nothing here.
///
/// HTML goes first: an archive escapes quote marks (`&gt;&gt; text`) and
/// leaves lines holding only tags (`</span><br>`) between quoted lines, so
/// quoting is only seen once the HTML is undone. A repair changes only
/// lines holding its own bytes, and a line decoding gives a quote mark or
/// an opening `|` held `&` or `<` before, so was a candidate already.
pub(crate) fn apply_to(lines: &mut [Line<'_>], candidates: &[usize]) -> Vec<Repair> {
    let mut repairs = Vec::new();
    if candidates.is_empty() {
        return repairs;
    }
    // `nvidia-smi -q -x` is XML: its entities are not paste damage. Both
    // openings hold `<`, so only candidates can be one.
    let xml = candidates.iter().any(|&i| {
        lines.get(i).is_some_and(|l| {
            let t = l.text().trim_start();
            t.starts_with("<?xml") || t.starts_with("<!DOCTYPE nvidia_smi_log")
        })
    });
    let html = if xml {
        Vec::new()
    } else {
        per_line(lines, candidates, &[(RepairKind::Html, unhtml)])
    };
    let quoted = candidates.iter().any(|&i| {
        lines
            .get(i)
            .is_some_and(|l| quote_depth(l.text()).is_some())
    });
    if quoted {
        record(&mut repairs, RepairKind::MailQuoting, unquote(lines));
    }
    for (kind, changed) in html {
        record(&mut repairs, kind, changed);
    }
    record(
        &mut repairs,
        RepairKind::MarkdownTable,
        unpipe(lines, candidates),
    );
    let fixes: [(RepairKind, Fix); 4] = [
        (RepairKind::MarkdownEscape, unescape),
        (RepairKind::Annotation, unannotate),
        (RepairKind::InlineCode, untick),
        (RepairKind::Elision, unelide),
    ];
    for (kind, changed) in per_line(lines, candidates, &fixes) {
        record(&mut repairs, kind, changed);
    }
    repairs.sort_by_key(|r| r.span);
    repairs
}

/// Whether any of `candidates` (the texts of the lines a repair may
/// change) is mail-quoted, or may be once its HTML is undone: then
/// [`apply_to`] must be given every line, not only the candidates, for it
/// tells a quoted run by the lines around it. Otherwise the candidates
/// alone are repaired as they would be among all lines.
pub(crate) fn may_be_quoted<'t>(mut candidates: impl Iterator<Item = &'t str>) -> bool {
    candidates
        .any(|t| quote_depth(t).is_some() || unhtml(t).is_some_and(|u| quote_depth(&u).is_some()))
}

fn record(repairs: &mut Vec<Repair>, kind: RepairKind, changed: Vec<usize>) {
    for span in spans_of(changed) {
        repairs.push(Repair {
            kind,
            span,
            note: format!("undid: {} on {span}", kind.describe()),
        });
    }
}

/// A rewrite of one line: the repaired text, or `None` when there was
/// nothing to undo.
type Fix = fn(&str) -> Option<String>;

/// Rewrites each candidate line with each fix in turn (a fix sees what the
/// fixes before it left), in one pass over the lines; returns, for each fix, the
/// numbers of the lines it changed.
fn per_line(
    lines: &mut [Line<'_>],
    candidates: &[usize],
    fixes: &[(RepairKind, Fix)],
) -> Vec<(RepairKind, Vec<usize>)> {
    let mut changed: Vec<(RepairKind, Vec<usize>)> =
        fixes.iter().map(|(kind, _)| (*kind, Vec::new())).collect();
    for &i in candidates {
        let Some(line) = lines.get_mut(i) else {
            continue;
        };
        if !may_need_repair(line.text()) {
            continue;
        }
        for ((_, fix), (_, numbers)) in fixes.iter().zip(changed.iter_mut()) {
            if let Some(fixed) = fix(line.text()) {
                line.text = Cow::Owned(fixed);
                numbers.push(line.number);
            }
        }
    }
    changed
}

/// Whether any per-line fix could change `t`: each needs one of these
/// bytes (the first test of each fix says which), so a line with none of
/// them — most lines of tool output — is passed over after one scan instead
/// of one scan per fix. A fix only changes lines that hold its bytes, so
/// the fixes after it see the same line and skip it too.
fn may_need_repair(t: &str) -> bool {
    // unhtml: `&` `<`; unescape: `\`; unannotate: `<` `>` `(` `←` (E2 …);
    // untick: a backtick; unelide: a first byte among `.` `[` `(` `<` `…`
    // (E2 …).
    t.bytes()
        .any(|b| matches!(b, b'&' | b'<' | b'>' | b'(' | b'`' | b'\\' | 0xe2))
        || crate::parse::first_byte(t).is_some_and(|b| matches!(b, b'.' | b'['))
}

/// `>> text` → (depth, `text`); `// text` (output pasted into C source as a
/// comment) counts as one level.
fn quote_depth(t: &str) -> Option<(usize, &str)> {
    if let Some(r) = t.strip_prefix("//") {
        return Some((1, r.strip_prefix(' ').unwrap_or(r)));
    }
    let mut rest = t;
    let mut depth = 0;
    while let Some(r) = rest.strip_prefix('>') {
        depth += 1;
        rest = r.strip_prefix(' ').unwrap_or(r);
    }
    (depth > 0).then_some((depth, rest))
}

/// Mail quoting: runs of three or more quoted lines (blank lines inside a
/// run are kept in it).
fn unquote(lines: &mut [Line<'_>]) -> Vec<usize> {
    let mut changed = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let start = i;
        let mut quoted = 0;
        let mut end = i;
        while let Some(line) = lines.get(end) {
            if quote_depth(line.text()).is_some() {
                quoted += 1;
            } else if !line.is_blank() {
                break;
            }
            end += 1;
        }
        if quoted >= 3 {
            for line in lines.get_mut(start..end).unwrap_or_default() {
                if let Some((_, rest)) = quote_depth(line.text()) {
                    let rest = rest.to_owned();
                    line.text = Cow::Owned(rest);
                    changed.push(line.number);
                }
            }
        }
        i = end.max(start + 1);
    }
    changed
}

/// The tags an archive page wraps a message in (MHonArc's `<span
/// class="quotelev1">` quoting, `<p>`, `<br>`, links, `<pre>`, font
/// changes): a closed set, so that a `<word>` a tool prints (nvidia-smi's
/// `<inactive>`, usage text's `<lid|guid>`) is never taken for one.
const HTML_TAGS: [&str; 14] = [
    "a", "b", "br", "code", "div", "em", "font", "hr", "i", "p", "pre", "span", "strong", "tt",
];

/// Named entities an archive page writes, and what they stand for. A
/// no-break space is a space to the parsers.
const ENTITIES: [(&str, char); 26] = [
    ("amp", '&'),
    ("lt", '<'),
    ("gt", '>'),
    ("quot", '"'),
    ("apos", '\''),
    ("nbsp", ' '),
    ("copy", '©'),
    ("reg", '®'),
    ("trade", '™'),
    ("hellip", '…'),
    ("mdash", '—'),
    ("ndash", '–'),
    ("lsquo", '‘'),
    ("rsquo", '’'),
    ("ldquo", '“'),
    ("rdquo", '”'),
    ("laquo", '«'),
    ("raquo", '»'),
    ("middot", '·'),
    ("bull", '•'),
    ("deg", '°'),
    ("times", '×'),
    ("micro", 'µ'),
    ("plusmn", '±'),
    ("larr", '←'),
    ("rarr", '→'),
];

/// HTML source: known tags and comments removed, entities decoded, in one
/// pass from left to right. What a decoded entity gives is not read again,
/// so `&amp;lt;` becomes `&lt;` (the page showed `&lt;`) and `&lt;br&gt;`
/// becomes `<br>`, text the page showed, not a tag.
fn unhtml(t: &str) -> Option<String> {
    // Entities begin with `&`, tags with `<`: most lines have neither.
    if !t.bytes().any(|b| b == b'&' || b == b'<') {
        return None;
    }
    let mut out = String::with_capacity(t.len());
    let mut changed = false;
    let mut rest = t;
    while let Some(at) = rest.find(['&', '<']) {
        let (before, tail) = rest.split_at(at);
        out.push_str(before);
        let undone = if tail.starts_with('<') {
            tag_len(tail).map(|len| (len, None))
        } else {
            entity(tail).map(|(len, c)| (len, Some(c)))
        };
        let skip = match undone {
            Some((len, text)) => {
                out.extend(text);
                changed = true;
                len
            }
            None => {
                out.push_str(tail.get(..1).unwrap_or_default());
                1
            }
        };
        rest = tail.get(skip..).unwrap_or_default();
    }
    out.push_str(rest);
    changed.then(|| out.trim_end().to_owned())
}

/// How far a tag or comment is looked for its end, in bytes: an archive's
/// tags and comments are far shorter, and a bound keeps a line of many
/// unclosed `<span "…` linear to read.
const MAX_TAG: usize = 1024;

/// The length of the tag or comment `t` opens with (`t` starts with `<`):
/// `<!-- … -->`, or `<name …>` / `</name>` / `<name/>` with a name of
/// [`HTML_TAGS`] in any case and attributes that assign (`class="x"`);
/// `None` for anything else, and for a tag not closed within [`MAX_TAG`]
/// bytes.
fn tag_len(t: &str) -> Option<usize> {
    if let Some(body) = t.strip_prefix("<!--") {
        return body
            .as_bytes()
            .windows(3)
            .take(MAX_TAG)
            .position(|w| w == b"-->")
            .map(|end| 4 + end + 3);
    }
    let after_slash = t
        .strip_prefix("</")
        .unwrap_or_else(|| t.get(1..).unwrap_or_default());
    let name_len = after_slash
        .bytes()
        .take_while(u8::is_ascii_alphanumeric)
        .count();
    let name = after_slash.get(..name_len)?;
    if !HTML_TAGS.iter().any(|tag| tag.eq_ignore_ascii_case(name)) {
        return None;
    }
    let opened = t.len() - after_slash.len() + name_len;
    let rest = after_slash.get(name_len..)?;
    let attributes_len = match rest.bytes().next()? {
        b'>' => 0,
        b'/' if rest.starts_with("/>") => 1,
        b' ' | b'\t' => attributes_end(rest)?,
        _ => return None,
    };
    Some(opened + attributes_len + 1)
}

/// Where the attributes of a tag end (the index of its `>` in `t`, which
/// starts with white space): quoted values may hold `>`. Attributes must
/// assign (`href="…"`) or be empty (`<br />`), so that prose in angle
/// brackets (`<a lot of them>`) is not a tag.
fn attributes_end(t: &str) -> Option<usize> {
    let mut quote = None;
    let mut assigns = false;
    for (i, b) in t.bytes().enumerate().take(MAX_TAG) {
        match (quote, b) {
            (Some(q), _) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'"' | b'\'') => quote = Some(b),
            (None, b'=') => assigns = true,
            (None, b'>') => {
                let blank = t
                    .get(..i)
                    .is_some_and(|a| a.bytes().all(|c| c == b'/' || c.is_ascii_whitespace()));
                return (assigns || blank).then_some(i);
            }
            (None, _) => {}
        }
    }
    None
}

/// The entity `t` opens with (`t` starts with `&`), as its length and the
/// character it stands for: a name of [`ENTITIES`], `&#NN;` or `&#xNN;`.
/// A numeric entity for a control character (a line end among them) is
/// left as it stands: decoding must not cut or blank a line.
fn entity(t: &str) -> Option<(usize, char)> {
    let body = t.get(1..)?;
    let end = body.bytes().take(10).position(|b| b == b';')?;
    let name = body.get(..end)?;
    let c = if let Some(number) = name.strip_prefix('#') {
        let code = match number.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => number.parse().ok()?,
        };
        let c = char::from_u32(code)?;
        if c.is_control() && c != '\t' {
            return None;
        }
        if c == '\u{a0}' {
            ' '
        } else {
            c
        }
    } else {
        ENTITIES.iter().find(|(n, _)| *n == name)?.1
    };
    Some((end + 2, c))
}

/// Which bytes a markdown writer puts a backslash before, so that the
/// renderer shows them as themselves: `#` (a heading), `_` `*` (emphasis),
/// `|` (a table), `[` `]` (a link), `<` `>` (HTML, a quote), `-` (a list)
/// and the backtick (code).
const MARKDOWN_ESCAPED: &[u8] = b"#_*|[]<>-`";

/// Markdown escapes: `\# gpu pwr` (nvidia-smi dmon's header), `mlx5\_0`.
///
/// The tools we read print a backslash only in text that came from
/// elsewhere: Windows paths (`C:\Program Files\NVIDIA Corporation`),
/// prompts (`PS C:\Users\ops>`), escapes in log text (`\n`, `\t`, `\\`),
/// a shell line continued (`\` at the end). Each of those puts a backslash
/// before a letter, a digit, white space, another backslash or the line's
/// end, never only before markdown punctuation. So a line is unescaped
/// only when every backslash in it stands before one of
/// [`MARKDOWN_ESCAPED`]; a line with any other backslash is left whole.
/// The one real use this can still meet, a regular expression on a
/// command line (`grep "State\|Rate"`), is framing, not tool output.
fn unescape(t: &str) -> Option<String> {
    if !t.contains('\\') {
        return None;
    }
    let bytes = t.as_bytes();
    let all_escapes = bytes.iter().enumerate().all(|(i, &b)| {
        b != b'\\'
            || bytes
                .get(i + 1)
                .is_some_and(|next| MARKDOWN_ESCAPED.contains(next))
    });
    all_escapes.then(|| t.replace('\\', ""))
}

/// Whether `t` is a markdown table's separator row: `|`, then two or more
/// cells of dashes with an optional colon at either end (`---`, `:--`,
/// `:-:`) between pipes. Only `-` `:` `|` and white space: the box rules
/// of dcgmi and nvidia-smi (`+------+---+`, `|------+------|`) hold `+`,
/// their rows text, and a one-cell `|------|` could be a box's rule.
fn is_markdown_separator(t: &str) -> bool {
    let Some(inner) = t.trim().strip_prefix('|') else {
        return false;
    };
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    inner.contains('|')
        && inner.split('|').all(|cell| {
            let cell = cell.trim();
            let cell = cell.strip_prefix(':').unwrap_or(cell);
            let cell = cell.strip_suffix(':').unwrap_or(cell);
            !cell.is_empty() && cell.bytes().all(|b| b == b'-')
        })
}

/// A markdown table row as `topo -m` prints its rows: the cells, trimmed,
/// joined by tabs. The outer pipes go; `\|` is a pipe inside a cell.
fn table_row(t: &str) -> String {
    let t = t.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let mut cells = Vec::new();
    let mut cell = String::new();
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                chars.next();
                cell.push('|');
            }
            '|' => cells.push(std::mem::take(&mut cell)),
            c => cell.push(c),
        }
    }
    // After the closing pipe nothing is left: no cell.
    if !cell.trim().is_empty() || cells.is_empty() {
        cells.push(cell);
    }
    cells
        .iter()
        .map(|c| c.trim())
        .collect::<Vec<_>>()
        .join("\t")
}

/// Markdown tables: each run of consecutive lines opening with `|` that
/// holds a separator row ([`is_markdown_separator`]) has its rows turned
/// into tab-separated cells ([`table_row`]) and its separator rows blanked.
/// A run without one (a dcgmi box's rows between its `+---+` rules) is left
/// alone. Every such line opens with `|`, so is among the candidates.
fn unpipe(lines: &mut [Line<'_>], candidates: &[usize]) -> Vec<usize> {
    let mut changed = Vec::new();
    let mut run: Vec<usize> = Vec::new();
    let mut flush = |run: &mut Vec<usize>, lines: &mut [Line<'_>]| {
        let has_separator = run.iter().any(|&i| {
            lines
                .get(i)
                .is_some_and(|l| is_markdown_separator(l.text()))
        });
        if has_separator {
            for &i in run.iter() {
                if let Some(line) = lines.get_mut(i) {
                    let text = if is_markdown_separator(line.text()) {
                        String::new()
                    } else {
                        table_row(line.text())
                    };
                    line.text = Cow::Owned(text);
                    changed.push(line.number);
                }
            }
        }
        run.clear();
    };
    for &i in candidates {
        if !lines.get(i).is_some_and(|l| opens_with_pipe(l.text())) {
            continue;
        }
        // A table's rows are lines in a row (by number: `lines` may be
        // the candidates alone).
        let number = |i: usize| lines.get(i).map(|l| l.number);
        if run
            .last()
            .is_some_and(|&last| number(last).map(|n| n + 1) != number(i))
        {
            flush(&mut run, lines);
        }
        run.push(i);
    }
    flush(&mut run, lines);
    changed
}

/// Where a drawn arrow pointing right starts: four or more dashes (`-`,
/// `—`, `–`, `=`, `─`) ending in `>` (`——————>>>note`, `value---->>>`).
fn right_arrow(t: &str) -> Option<usize> {
    let mut run_start = None;
    let mut run = 0;
    for (i, c) in t.char_indices() {
        if matches!(c, '-' | '—' | '–' | '=' | '─') {
            if run == 0 {
                run_start = Some(i);
            }
            run += 1;
        } else {
            if c == '>' && run >= 4 {
                return run_start;
            }
            run = 0;
        }
    }
    None
}

fn unannotate(t: &str) -> Option<String> {
    // Every annotation holds `<` or `←` (arrows pointing left), `>` (drawn
    // arrows pointing right) or `(` (`(= …)`); `←` begins with byte E2.
    if !t.bytes().any(|b| matches!(b, b'<' | b'>' | b'(' | 0xe2)) {
        return None;
    }
    // `==> file <==` is tail's file header, not an annotation arrow.
    if super::framing::file_header(t).is_some() {
        return None;
    }
    let arrow = [" <--", " <==", " ←"]
        .iter()
        .filter_map(|a| t.find(a))
        .chain(right_arrow(t))
        .min();
    if let Some(at) = arrow {
        return Some(t.get(..at)?.trim_end().to_owned());
    }
    let trimmed = t.trim_end();
    if trimmed.ends_with(')') {
        if let Some(open) = trimmed.rfind(" (=") {
            return Some(trimmed.get(..open)?.trim_end().to_owned());
        }
    }
    None
}

/// A lone backtick opening a line or closing it (`` `~$ ibstatus ``,
/// `` link_layer: Ethernet` ``): single-backtick inline code stretched over
/// a block. Fences (```` ``` ````) are the framing layer's.
fn untick(t: &str) -> Option<String> {
    if t.bytes().filter(|&b| b == b'`').count() != 1 || t.trim_start().starts_with("```") {
        return None;
    }
    let trimmed = t.trim_end();
    if let Some(rest) = trimmed.strip_suffix('`') {
        return Some(rest.to_owned());
    }
    t.strip_prefix('`').map(str::to_owned)
}

fn unelide(t: &str) -> Option<String> {
    // Every marker opens with `.`, `[`, `(`, `<` or `…` (byte E2).
    let opens = crate::parse::first_byte(t);
    if !opens.is_some_and(|b| matches!(b, b'.' | b'[' | b'(' | b'<' | 0xe2)) {
        return None;
    }
    let t = t.trim();
    (matches!(
        t,
        "..." | "…" | "[...]" | "[…]" | "(...)" | "[snip]" | "<snip>" | "...snip..." | "[ ... ]"
    ) || elision_with_remark(t)
        || worded_elision(t))
    .then(String::new)
}

/// Words that say lines were left out, as a whole remark (lower case).
const ELISION_WORDS: &[&str] = &[
    "snip",
    "snipped",
    "omitted",
    "omit",
    "truncated",
    "elided",
    "trimmed",
    "skipped",
    "cut",
    "省略",
    "略",
    "中略",
    "以下省略",
    "后略",
    "後略",
    "省略若干行",
    "此处省略",
];

/// What a worded remark may say was left out (`40 lines omitted`,
/// `output truncated`, `12 more ports`).
const ELIDED_THINGS: &[&str] = &[
    "line", "lines", "row", "rows", "port", "ports", "link", "links", "node", "nodes", "entries",
    "entry", "output", "rest", "others",
];

/// An elision marker in words, the whole line: a remark saying lines were
/// left out ([`elision_remark`]) after dots (`...omitted`, `... 12 more
/// lines`, `...省略...`) or in brackets (`(snip)`, `<omitted>`,
/// `[truncated]`). Before, such a line was an unread line of the output it
/// cut short (IN002) where a bare `...` made the output partial (IN001).
/// Narrow on purpose: only such a remark makes the line an elision, so a
/// sentence after dots (`... and then it failed`) stays the author's.
fn worded_elision(t: &str) -> bool {
    let wrapped = [('(', ')'), ('[', ']'), ('<', '>')]
        .iter()
        .find_map(|&(open, close)| t.strip_prefix(open)?.strip_suffix(close));
    let inner = match wrapped {
        Some(inner) => inner,
        None if t.starts_with("...") || t.starts_with('…') => t,
        None => return false,
    };
    elision_remark(inner.trim_matches(['.', '…', ' ', '\t']))
}

/// Whether `remark` says lines were left out: one of [`ELISION_WORDS`],
/// or at most four words, an optional count, an optional thing
/// ([`ELIDED_THINGS`]) and an elision word (`40 lines omitted`, `output
/// truncated`), or `more` and a thing (`12 more lines`).
fn elision_remark(remark: &str) -> bool {
    let lower = remark.to_lowercase();
    if ELISION_WORDS.contains(&lower.as_str()) {
        return true;
    }
    let words: Vec<&str> = lower.split_whitespace().collect();
    if words.len() > 4 {
        return false;
    }
    let rest = match words.split_first() {
        Some((n, rest)) if n.bytes().all(|b| b.is_ascii_digit()) => rest,
        _ => words.as_slice(),
    };
    match rest {
        ["more", thing] => ELIDED_THINGS.contains(thing),
        [thing, word] | [thing, "were" | "are", word] => {
            ELIDED_THINGS.contains(thing) && ELISION_WORDS.contains(word)
        }
        _ => false,
    }
}

/// An elision marker with the author's remark on what was left out: `...
/// (12 more links, all true)`, `[... 40 lines omitted ...]`, `(... output
/// truncated ...)`. Before, such a line was an unread line of the output
/// it cut short, and the output was judged as if whole.
fn elision_with_remark(t: &str) -> bool {
    let dots = |s: &str| s.starts_with("...") || s.starts_with('…');
    let wrapped = t
        .strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .or_else(|| t.strip_prefix('(').and_then(|r| r.strip_suffix(')')));
    if let Some(inner) = wrapped {
        return dots(inner.trim_start());
    }
    let remark = t.trim_start_matches(['.', '…']).trim_start();
    dots(t) && remark.starts_with('(') && remark.ends_with(')')
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        /// A line the quick test passes over is one no fix would change.
        #[test]
        fn lines_passed_over_need_no_fix(
            line in "[ \t]{0,2}[-.`<>()&;#_|*\\\\\\[\\] a-z0-9=←…—]{0,24}",
        ) {
            if !may_need_repair(&line) {
                prop_assert_eq!(unhtml(&line), None);
                prop_assert_eq!(unescape(&line), None);
                prop_assert_eq!(unannotate(&line), None);
                prop_assert_eq!(untick(&line), None);
                prop_assert_eq!(unelide(&line), None);
            }
        }
    }

    proptest! {
        /// The byte scan finds the opening byte the generic trim finds.
        #[test]
        fn opening_byte_is_the_first_byte_after_white_space(
            line in "[ \t\n\r\u{b}\u{c}\u{1c}\u{85}\u{a0}\u{2003}\u{3000}]{0,3}[.\\[(/a-zé\u{a0} ]{0,4}",
        ) {
            prop_assert_eq!(opening_byte(&line), crate::parse::first_byte(&line));
        }

        /// A line with `(` as its only repair byte that the paren test
        /// passes over is one no repair would change.
        #[test]
        fn paren_lines_passed_over_need_no_fix(
            line in "[ \t]{0,2}[-.(=)/| a-zA-Z0-9:\\[\\]]{0,24}",
        ) {
            let strong = line
                .bytes()
                .any(|b| matches!(b, b'&' | b'<' | b'>' | b'`' | b'\\' | 0xe2));
            if !strong && !may_change_paren(&line) && !may_change_plain(&line) {
                prop_assert_eq!(unhtml(&line), None);
                prop_assert_eq!(unescape(&line), None);
                prop_assert!(!opens_with_pipe(&line));
                prop_assert_eq!(unannotate(&line), None);
                prop_assert_eq!(untick(&line), None);
                prop_assert_eq!(unelide(&line), None);
                prop_assert!(quote_depth(&line).is_none());
            }
        }
    }

    #[test]
    fn paren_test_keeps_the_repairs_of_parenthesised_lines() {
        for line in ["\t Link 5: 26.562 GB/s (= 212.5 Gb/s)", "(...)", "  (...)"] {
            assert!(may_change_paren(line), "{line}");
        }
        for line in [
            "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-e3e70682)",
            "# Port counters: Lid 2 port 1 (CapMask: 0x5A00)",
        ] {
            assert!(!may_change_paren(line), "{line}");
            assert!(unannotate(line).is_none() && unelide(line).is_none());
        }
    }

    use super::*;
    use crate::parse::lines_of;

    fn repaired(text: &str) -> (Vec<String>, Vec<Repair>) {
        let mut lines = lines_of(text);
        let repairs = apply(&mut lines);
        (lines.iter().map(|l| l.text().to_owned()).collect(), repairs)
    }

    #[test]
    fn mail_quoting_is_removed_from_runs_and_noted() {
        let (lines, repairs) = repaired(
            "Hi,\n> $ ibstat\n> CA 'mlx5_0'\n>\n>> \tPort 1:\n>> \t\tState: Active\nthanks\n",
        );
        assert_eq!(lines[1], "$ ibstat");
        assert_eq!(lines[4], "\tPort 1:");
        assert_eq!(lines[6], "thanks");
        assert_eq!(repairs.len(), 1);
        assert_eq!(repairs[0].span, LineSpan::new(2, 6));
        assert!(
            repairs[0].note.starts_with("undid: mail quoting"),
            "{}",
            repairs[0].note
        );
        // Two quoted lines are a quote in prose, not a pasted output.
        let (lines, repairs) = repaired("> one\n> two\nprose\n");
        assert_eq!(lines[0], "> one");
        assert!(repairs.is_empty());
    }

    #[test]
    fn html_annotations_and_elisions_are_undone_without_losing_lines() {
        let (lines, repairs) = repaired(
            "<pre>GPU 0: NVIDIA H100<br>\n\t Link 3: &lt;inactive&gt;\n...\n\t Link 4: 26.562 GB/s   <-- this one\n\t Link 5: 26.562 GB/s (= 212.5 Gb/s)\n",
        );
        assert_eq!(lines.len(), 5);
        assert_eq!(lines[0], "GPU 0: NVIDIA H100");
        assert_eq!(lines[1], "\t Link 3: <inactive>");
        assert_eq!(lines[2], "");
        assert_eq!(lines[3], "\t Link 4: 26.562 GB/s");
        assert_eq!(lines[4], "\t Link 5: 26.562 GB/s");
        let kinds: Vec<RepairKind> = repairs.iter().map(|r| r.kind).collect();
        assert!(kinds.contains(&RepairKind::Html));
        assert!(kinds.contains(&RepairKind::Annotation));
        assert!(kinds.contains(&RepairKind::Elision));
        assert_eq!(unhtml("&amp;lt;"), Some("&lt;".to_owned()));
        assert_eq!(
            unannotate("CA 'mlx4_0'     ——————————>>>> the first card").as_deref(),
            Some("CA 'mlx4_0'")
        );
        assert_eq!(
            unannotate("\t\tPort GUID: 0x7cfe900300a41c51---------->>>look").as_deref(),
            Some("\t\tPort GUID: 0x7cfe900300a41c51")
        );
        assert_eq!(
            untick("link_layer: Ethernet`").as_deref(),
            Some("link_layer: Ethernet")
        );
        assert_eq!(untick("`~$ ibstatus").as_deref(), Some("~$ ibstatus"));
        assert_eq!(untick("```"), None);
        assert_eq!(untick("a `b` c"), None);
        // iblinkinfo's own `==>` and box rules are not arrows.
        assert_eq!(
            unannotate("  1   1[  ] ==( 4X 25.78125 Gbps Active/  LinkUp)==>  2 1[ ]"),
            None
        );
        assert_eq!(unannotate("+-----------+------+"), None);
    }

    #[test]
    fn elisions_with_a_remark_are_elisions() {
        for line in [
            "   ... (12 more links, all true)",
            "… (truncated)",
            "[... 40 lines omitted ...]",
            "[…snip…]",
            "(... output truncated ...)",
        ] {
            assert_eq!(unelide(line).as_deref(), Some(""), "{line:?}");
        }
        for line in [
            "... and then it failed (again)",
            "(see above)",
            "[PortXmitWait == 5]",
            "......",
            "...(",
        ] {
            assert_eq!(unelide(line), None, "{line:?}");
        }
    }

    #[test]
    fn elisions_in_words_are_elisions_and_sentences_are_not() {
        for line in [
            "...omitted",
            "... omitted ...",
            "... (omitted)",
            "(snip)",
            "<snip>",
            "<omitted>",
            "[truncated]",
            "[Truncated]",
            "...省略...",
            "…省略…",
            "… more lines",
            "... 37 more lines",
            "...40 lines omitted...",
            "[output truncated]",
            "(12 more ports)",
            "  ...snipped",
        ] {
            assert_eq!(unelide(line).as_deref(), Some(""), "{line:?}");
        }
        for line in [
            "... and then it failed",
            "...omitted the second port on purpose",
            "(see above)",
            "omitted",
            "snip",
            "<hostname>",
            "[Switch]",
            "... more",
            "...1 2 3",
            "(output)",
            "[lines omitted by the tool were 3]",
        ] {
            assert_eq!(unelide(line), None, "{line:?}");
        }
    }

    #[test]
    fn a_quoted_html_escaped_reply_is_read_as_the_tools_output() {
        let paste = "On Tue, Alice wrote:\n> $ nvidia-smi nvlink -s\n> GPU 0: NVIDIA H800 (UUID: GPU-a1b2)\n> \t Link 0: 26.562 GB/s\n> \t Link 1: &lt;inactive&gt;   &lt;-- this one\n> ...\nAny idea?\n";
        let doc = crate::input::read(paste, &crate::ReadOptions::default()).unwrap();
        assert_eq!(doc.sections.len(), 1, "{doc:#?}");
        assert_eq!(doc.sections[0].kind, crate::Kind::Nvlink);
        // The reply's own prose after the quote is reported, the tool's
        // lines are read.
        let warned: Vec<usize> = doc.sections[0]
            .warnings
            .iter()
            .map(|w| w.span.first_line)
            .collect();
        assert!(
            warned.iter().all(|l| *l >= 7),
            "{:?}",
            doc.sections[0].warnings
        );
        let kinds: Vec<RepairKind> = doc.repairs.iter().map(|r| r.kind).collect();
        for k in [
            RepairKind::MailQuoting,
            RepairKind::Html,
            RepairKind::Annotation,
            RepairKind::Elision,
        ] {
            assert!(kinds.contains(&k), "{k:?} not noted: {:?}", doc.repairs);
        }
        assert!(doc.unaccounted_lines(paste).is_empty());
    }

    #[test]
    fn clean_tool_output_is_left_alone() {
        let text = "CA 'mlx5_0'\n\tPort 1:\n\t\tState: Active\n\t\tRate: 400\n";
        let (lines, repairs) = repaired(text);
        assert!(repairs.is_empty());
        assert_eq!(lines.join("\n") + "\n", text);
    }
    proptest! {
        /// A line without `&` or `<` is never changed by the HTML repair.
        #[test]
        fn html_needs_an_ampersand_or_angle_bracket(line in "[^&<]{0,40}") {
            prop_assert_eq!(unhtml(&line), None);
        }

        /// A `<word>` whose name is not one of the known tags is text,
        /// whatever surrounds it (nvidia-smi's `<inactive>`).
        #[test]
        fn unknown_angle_bracket_words_are_text(
            before in "[ \ta-zA-Z0-9:]{0,12}",
            name in "/?[a-zA-Z_][a-zA-Z0-9_|-]{0,10}",
            after in "[ \ta-zA-Z0-9:]{0,12}",
        ) {
            let bare = name.trim_start_matches('/');
            prop_assume!(!HTML_TAGS.iter().any(|t| t.eq_ignore_ascii_case(bare)));
            prop_assume!(!bare.starts_with("!--"));
            let line = format!("{before}<{name}>{after}");
            prop_assert_eq!(unhtml(&line), None);
        }

        /// Decoding never makes a line end or another control character:
        /// a line stays one line.
        #[test]
        fn decoded_entities_never_cut_a_line(
            line in "([a-z ]|&#[0-9]{1,7};|&#[xX][0-9a-fA-F]{1,6};|&[a-z]{2,6};|<br>){0,12}",
        ) {
            if let Some(out) = unhtml(&line) {
                prop_assert!(!out.chars().any(|c| c.is_control() && c != '\t'), "{:?}", out);
            }
        }

        /// A line without a backslash is never changed by the markdown
        /// escape repair, nor one where a backslash stands before anything
        /// but markdown punctuation (a Windows path, `\n`, a line
        /// continuation).
        #[test]
        fn escapes_need_a_backslash_before_markdown_punctuation(
            plain in "[^\\\\]{0,40}",
            before in "[ a-z#_|]{0,8}",
            after in "[a-zA-Z0-9 \\\\]",
            rest in "[ a-z\\\\#_]{0,8}",
        ) {
            prop_assert_eq!(unescape(&plain), None);
            let line = format!("{before}\\{after}{rest}");
            prop_assert_eq!(unescape(&line), None);
        }

        /// Lines not opening with `|`, and runs of `|` lines without a
        /// markdown separator row (dcgmi's boxes), are never changed by the
        /// table repair.
        #[test]
        fn tables_need_pipe_rows_and_a_separator(
            rows in prop::collection::vec(
                prop_oneof![
                    "[ ]{0,2}[|+][-=+ a-zA-Z0-9:]{0,30}[|+]?",
                    "[ a-zA-Z0-9:-]{0,30}\\|[-|: ]{0,10}",
                    "[-:| ]{0,12}",
                ],
                0..8,
            ),
        ) {
            let rows: Vec<String> = rows
                .into_iter()
                .filter(|r| !is_markdown_separator(r))
                .collect();
            let mut lines: Vec<Line<'_>> = rows
                .iter()
                .enumerate()
                .map(|(i, r)| Line::new(i + 1, r))
                .collect();
            let all: Vec<usize> = (0..lines.len()).collect();
            prop_assert!(unpipe(&mut lines, &all).is_empty());
            for (line, row) in lines.iter().zip(&rows) {
                prop_assert_eq!(line.text(), row.as_str());
            }
        }
    }

    #[test]
    fn mail_archive_source_is_decoded_before_its_quoting() {
        let lines = [
            "<!-- body=\"start\" -->",
            "<p>On Mon, Ann Lee wrote:",
            "<br>",
            "<span class=\"quotelev2\">&gt;&gt; ibv_devinfo on the nodes:",
            "</span><br>",
            "<span class=\"quotelev2\">&gt;&gt; hca_id: mthca7",
            "</span><br>",
            "<span class=\"quotelev2\">&gt;&gt; fw_ver: 1.0.700",
            "</span><BR/>",
            "<span class=\"quotelev2\">&gt;&gt; state: PORT_ACTIVE (4)",
            "</span><br />",
        ];
        let (got, repairs) = repaired(&(lines.join("\n") + "\n"));
        assert_eq!(got[0], "");
        assert_eq!(got[1], "On Mon, Ann Lee wrote:");
        assert_eq!(got[2], "");
        assert_eq!(got[3], "ibv_devinfo on the nodes:");
        assert_eq!(got[4], "");
        assert_eq!(got[5], "hca_id: mthca7");
        assert_eq!(got[8], "");
        assert_eq!(got[9], "state: PORT_ACTIVE (4)");
        assert_eq!(got[10], "");
        let spans = |kind| -> Vec<LineSpan> {
            repairs
                .iter()
                .filter(|r| r.kind == kind)
                .map(|r| r.span)
                .collect()
        };
        assert_eq!(spans(RepairKind::Html), vec![LineSpan::new(1, 11)]);
        // Quoting is noted on the lines it changed; the blanks between
        // them are the HTML repair's.
        assert_eq!(
            spans(RepairKind::MailQuoting),
            [4, 6, 8, 10].map(LineSpan::line).to_vec()
        );
    }

    #[test]
    fn html_tags_are_a_closed_set_and_entities_are_decoded() {
        let cases = [
            (
                "<A HREF=\"http://x/\">http://x/</A> here",
                Some("http://x/ here"),
            ),
            ("<b>Rate:</b> <i>400</i>", Some("Rate: 400")),
            ("<font color=red>Down</font>", Some("Down")),
            ("<p><p><pre>", Some("")),
            ("<hr>", Some("")),
            ("a <!-- x > y --> b", Some("a  b")),
            (
                "&#62;&#x3E;&#X3e; &apos;q&apos; &hellip;",
                Some(">>> 'q' …"),
            ),
            ("&amp;lt;", Some("&lt;")),
            ("&lt;br&gt;", Some("<br>")),
            ("a&#160;b&#xa0;c", Some("a b c")),
            // Text, not tags or entities.
            ("\t Link 3: <inactive>", None),
            ("Usage: perfquery <lid|guid> [port]", None),
            ("x <a lot of them> y", None),
            ("<span class=\"q\"", None),
            ("<!-- not closed", None),
            ("<bond0> <brx> <p-1>", None),
            ("AT&T; a &unknown; b &#10; c", None),
        ];
        for (line, want) in cases {
            assert_eq!(unhtml(line).as_deref(), want, "{line}");
        }
    }

    #[test]
    fn xml_output_keeps_its_entities_and_tags() {
        let text =
            "<?xml version=\"1.0\" ?>\n<nvidia_smi_log>\n\t<b>&lt;x&gt;</b>\n</nvidia_smi_log>\n";
        let (lines, repairs) = repaired(text);
        assert!(repairs.is_empty(), "{repairs:?}");
        assert_eq!(lines[2], "\t<b>&lt;x&gt;</b>");
    }

    #[test]
    fn an_html_archived_quoted_ibv_devinfo_is_read() {
        let mut paste = String::from("<!-- body=\"start\" -->\n<p>Here it is:\n<br>\n");
        for field in [
            "hca_id: mthca3",
            "fw_ver: 1.1.0",
            "node_guid: 0002:c903:0011:2a40",
            "phys_port_cnt: 1",
            "port: 1",
            "state: PORT_ACTIVE (4)",
            "max_mtu: 2048 (4)",
            "active_mtu: 2048 (4)",
            "sm_lid: 1",
            "port_lid: 5",
        ] {
            paste.push_str(&format!(
                "<span class=\"quotelev3\">&gt;&gt;&gt; {field}\n</span><br>\n"
            ));
        }
        let doc = crate::input::read(&paste, &crate::ReadOptions::default()).unwrap();
        let kinds: Vec<&str> = doc.sections.iter().map(|s| s.kind.name()).collect();
        assert_eq!(kinds, ["ibv_devinfo"], "{doc:#?}");
        assert!(doc.unaccounted_lines(&paste).is_empty());
    }

    #[test]
    fn markdown_escapes_are_removed_where_every_backslash_is_one() {
        let cases = [
            ("\\# gpu   pwr  temp", Some("# gpu   pwr  temp")),
            ("CA 'mlx5\\_0'", Some("CA 'mlx5_0'")),
            (
                "\\*\\*bold\\*\\* \\[x\\] \\<y\\> \\- \\`z\\` a\\|b",
                Some("**bold** [x] <y> - `z` a|b"),
            ),
            (r"C:\Program Files\NVIDIA Corporation\NVSMI", None),
            (r"C:\_tools\x", None),
            (r"PS C:\Users\ops>", None),
            (r"nvidia-smi topo -m \", None),
            (r"a\\_b", None),
            (r"line\n\_x", None),
            ("no backslash # _ |", None),
        ];
        for (line, want) in cases {
            assert_eq!(unescape(line).as_deref(), want, "{line}");
        }
        // An escaped elision is an elision once unescaped.
        let (lines, repairs) = repaired("\\[snip\\]\n");
        assert_eq!(lines[0], "");
        let kinds: Vec<RepairKind> = repairs.iter().map(|r| r.kind).collect();
        assert_eq!(kinds, [RepairKind::MarkdownEscape, RepairKind::Elision]);
    }

    #[test]
    fn a_quoted_escaped_dmon_header_is_read() {
        let paste = "It prints:\n> \\# gpu   pwr  temp    sm   mem\n> \\# Idx     W     C     %     %\n>     0    97    71    40    12\n>     1    95    69    38    11\n\nThanks\n";
        let doc = crate::input::read(paste, &crate::ReadOptions::default()).unwrap();
        let kinds: Vec<&str> = doc.sections.iter().map(|s| s.kind.name()).collect();
        assert!(kinds.contains(&"smi_dmon"), "{doc:#?}");
        let repaired: Vec<RepairKind> = doc.repairs.iter().map(|r| r.kind).collect();
        assert!(
            repaired.contains(&RepairKind::MarkdownEscape),
            "{:?}",
            doc.repairs
        );
        assert!(doc.unaccounted_lines(paste).is_empty());
    }

    #[test]
    fn markdown_tables_become_tab_separated_rows() {
        let text = "| | GPU0 | GPU1 | CPU Affinity |\n|---|:--|--:|:-:|\n| GPU0 | X | NV4 | 0-15 |\n|GPU1|NV4|X|0-15\n| a \\| b | c |\n\nafter\n";
        let (lines, repairs) = repaired(text);
        assert_eq!(lines[0], "\tGPU0\tGPU1\tCPU Affinity");
        assert_eq!(lines[1], "");
        assert_eq!(lines[2], "GPU0\tX\tNV4\t0-15");
        assert_eq!(lines[3], "GPU1\tNV4\tX\t0-15");
        assert_eq!(lines[4], "a | b\tc");
        assert_eq!(lines[6], "after");
        assert_eq!(repairs.len(), 1, "{repairs:?}");
        assert_eq!(repairs[0].kind, RepairKind::MarkdownTable);
        assert_eq!(repairs[0].span, LineSpan::new(1, 5));
        for not_separator in [
            "|---|",
            "|---||---|",
            "+---+---+",
            "|---+---|",
            "|::|--|",
            "|===|===|",
        ] {
            assert!(!is_markdown_separator(not_separator), "{not_separator}");
        }
        assert!(is_markdown_separator("  |---|---"));
    }

    #[test]
    fn dcgmi_boxes_are_not_markdown_tables() {
        let text = "+---------------------------+----------------+\n| Diagnostic                | Result         |\n+===========================+================+\n|-----  Metadata  ----------+----------------|\n| DCGM Version              | 3.3.5          |\n|-----  Deployment  --------+----------------|\n| software                  | Pass           |\n+---------------------------+----------------+\n";
        let (lines, repairs) = repaired(text);
        assert!(repairs.is_empty(), "{repairs:?}");
        assert_eq!(lines.join("\n") + "\n", text);
    }

    #[test]
    fn a_markdown_topo_table_is_read_as_a_matrix() {
        let paste = "| GPU0 | GPU1 | CPU Affinity | NUMA Affinity | |\n|---|---|---|---|---|\n| GPU0 | X | SYS | 0-23 | 0 |\n| GPU1 | SYS | X | 24-47 | 1 |\n";
        let doc = crate::input::read(paste, &crate::ReadOptions::default()).unwrap();
        let kinds: Vec<&str> = doc.sections.iter().map(|s| s.kind.name()).collect();
        assert_eq!(kinds, ["topo_matrix"], "{doc:#?}");
        assert!(doc.unaccounted_lines(paste).is_empty());
    }
}
