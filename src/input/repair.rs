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
//! Undone:
//! - **mail quoting**: a run of three or more lines starting with `>` (any
//!   depth, `> ` or `>> `) or `//` (output pasted into source as a comment)
//!   loses its quote marks;
//! - **HTML archive source**: `&lt;`, `&gt;`, `&amp;`, `&quot;`, `&#39;`,
//!   `&nbsp;` are decoded, `<pre>`, `</pre>`, `<code>`, `</code>` and a
//!   trailing `<br>` removed;
//! - **author annotations**: a trailing `<-- this one` (or `<==`, `←`), a
//!   drawn arrow `————>>> note` and a hand-added unit conversion
//!   `(= 12.5 GB/s)` at the end of a line;
//! - **inline code**: a lone backtick opening or closing a line (a block
//!   wrapped in single-backtick inline code);
//! - **elisions**: a line holding only `...`, `[...]`, `…` or `[snip]`.
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
/// of [`may_need_repair`]'s bytes, mail quoting a quote mark at the start.
pub(crate) fn may_change(t: &str) -> bool {
    may_need_repair(t) || quote_depth(t).is_some()
}

/// [`may_change`] for a line known to hold none of the bytes `&` `<` `>`
/// `(` `` ` `` `E2` (the input scan's `class::REPAIR`): only its opening
/// is left to test.
pub(crate) fn may_change_plain(t: &str) -> bool {
    t.starts_with("//") || opening_byte(t).is_some_and(|b| matches!(b, b'.' | b'['))
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

/// [`may_change`] for a line whose only byte among `&` `<` `>` `(` `` ` ``
/// `E2` is `(` (the input scan's `class::REPAIR` without
/// `class::REPAIR_NOT_PAREN`), most often a perfquery or `nvidia-smi
/// nvlink` header (`(CapMask: …)`, `(UUID: …)`). Of the per-line fixes only
/// two can act on such a line: [`unannotate`]'s `(= …)` at its end (every
/// other annotation needs `<`, `>` or `←`) and [`unelide`]'s `(...)`,
/// which opens with `(`. Mail quoting needs `>` or `//`, left to
/// [`may_change_plain`]. Saying yes more often than needed is harmless:
/// [`apply_to`] still tests each fix.
pub(crate) fn may_change_paren(t: &str) -> bool {
    opening_byte(t) == Some(b'(') || t.contains(" (=")
}

/// [`apply`], looking only at `candidates` (ascending indexes into
/// `lines`): every line [`may_change`] holds for must be among them, and
/// no other line is touched. Most tool output has few or none, and the
/// rest of its lines cost nothing here.
pub(crate) fn apply_to(lines: &mut [Line<'_>], candidates: &[usize]) -> Vec<Repair> {
    let mut repairs = Vec::new();
    if candidates.is_empty() {
        return repairs;
    }
    let quoted = candidates.iter().any(|&i| {
        lines
            .get(i)
            .is_some_and(|l| quote_depth(l.text()).is_some())
    });
    if quoted {
        record(&mut repairs, RepairKind::MailQuoting, unquote(lines));
    }
    // `nvidia-smi -q -x` is XML: its entities are not paste damage. Both
    // openings hold `<`, so only candidates can be one.
    let xml = candidates.iter().any(|&i| {
        lines.get(i).is_some_and(|l| {
            let t = l.text().trim_start();
            t.starts_with("<?xml") || t.starts_with("<!DOCTYPE nvidia_smi_log")
        })
    });
    let mut fixes: Vec<(RepairKind, Fix)> = vec![
        (RepairKind::Annotation, unannotate),
        (RepairKind::InlineCode, untick),
        (RepairKind::Elision, unelide),
    ];
    if !xml {
        fixes.insert(0, (RepairKind::Html, unhtml));
    }
    for (kind, changed) in per_line(lines, candidates, &fixes) {
        record(&mut repairs, kind, changed);
    }
    repairs.sort_by_key(|r| r.span);
    repairs
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
    // unhtml: `&` `<`; unannotate: `<` `>` `(` `←` (E2 …); untick: a
    // backtick; unelide: a first byte among `.` `[` `(` `<` `…` (E2 …).
    t.bytes()
        .any(|b| matches!(b, b'&' | b'<' | b'>' | b'(' | b'`' | 0xe2))
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

const ENTITIES: [(&str, &str); 7] = [
    ("&nbsp;", " "),
    ("&#160;", " "),
    ("&lt;", "<"),
    ("&gt;", ">"),
    ("&quot;", "\""),
    ("&#39;", "'"),
    ("&amp;", "&"),
];
const TAGS: [&str; 6] = ["<pre>", "</pre>", "<code>", "</code>", "<tt>", "</tt>"];

fn unhtml(t: &str) -> Option<String> {
    // Entities begin with `&`, tags with `<`: most lines have neither, and
    // need no lower-case copy.
    if !t.bytes().any(|b| b == b'&' || b == b'<') {
        return None;
    }
    let lower = t.to_ascii_lowercase();
    let has_entity = ENTITIES.iter().any(|(e, _)| t.contains(e));
    let has_tag = TAGS.iter().any(|tag| lower.contains(tag));
    let trimmed = lower.trim_end();
    let trailing_br = ["<br>", "<br/>", "<br />"]
        .iter()
        .find(|b| trimmed.ends_with(*b));
    if !has_entity && !has_tag && trailing_br.is_none() {
        return None;
    }
    let mut out = t.trim_end().to_owned();
    if let Some(br) = trailing_br {
        out.truncate(out.len() - br.len());
    }
    for tag in TAGS {
        while let Some(at) = out.to_ascii_lowercase().find(tag) {
            out.replace_range(at..at + tag.len(), "");
        }
    }
    // `&amp;` last, so `&amp;lt;` becomes `&lt;` and not `<`.
    for (entity, text) in ENTITIES {
        out = out.replace(entity, text);
    }
    Some(out)
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
    matches!(
        t.trim(),
        "..." | "…" | "[...]" | "[…]" | "(...)" | "[snip]" | "<snip>" | "...snip..." | "[ ... ]"
    )
    .then(String::new)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        /// A line the quick test passes over is one no fix would change.
        #[test]
        fn lines_passed_over_need_no_fix(
            line in "[ \t]{0,2}[-.`<>()&;\\[\\] a-z0-9=←…—]{0,24}",
        ) {
            if !may_need_repair(&line) {
                prop_assert_eq!(unhtml(&line), None);
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
            line in "[ \t]{0,2}[-.(=)/ a-zA-Z0-9:\\[\\]]{0,24}",
        ) {
            let strong = line
                .bytes()
                .any(|b| matches!(b, b'&' | b'<' | b'>' | b'`' | 0xe2));
            if !strong && !may_change_paren(&line) && !may_change_plain(&line) {
                prop_assert_eq!(unhtml(&line), None);
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
}
