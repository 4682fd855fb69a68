//! Splitting cleaned lines into chunks (between prompts and headers), chunks
//! into per-host streams, and streams into recognised sections.

use super::clean::{class, classified_lines, clean_classified};
use super::framing::{
    address_may_frame, classify, closing_may_frame, command_may_frame, device_heading, fans_out,
    host_banner, labelled_may_frame, markdown_heading_unconfirmed, opening_may_frame,
    report_banner, script_heading, windows_prompt_may_frame, Framing, Prompt,
};
use super::hosts::{candidate_after, prefixed_hosts};
use super::kept::{Kept, COMPACT_FROM_BYTES};
use super::repair;
use super::{
    limit_warning, Document, MessageLevel, ReadOptions, Section, ToolMessage, Unrecognised,
    Warning, WarningKind,
};
use crate::parse::{
    first_byte, format_of_command, formats_starting_with, Block, Format, Kind, Line, FORMATS,
};
use crate::span::{spans_of, LineSpan};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::rc::Rc;

/// A run of content lines between two framing lines, with what the framing said.
#[derive(Default)]
struct Chunk {
    prompt: Option<(usize, Prompt)>,
    host: Option<String>,
    source: Option<String>,
    /// Where the chunk's lines sit in the one table of kept lines
    /// [`chunks`] leaves (a table per chunk was a second copy of every
    /// line).
    lines: Range<usize>,
    /// The host of the pdsh/clush prefix of the chunk's lines, if any
    /// (shared, not copied per line), as runs: each host with how many
    /// lines in a row it prefixed (pdsh prints runs of lines from one
    /// host). Empty when the input has no prefixed hosts (most inputs),
    /// whose chunks are then one stream each.
    prefixes: Vec<(Option<Rc<str>>, usize)>,
    /// The device a banner before the chunk's output names (`== mlx5_0
    /// ==`, [`device_heading`]): the device of mlxlink output under it,
    /// which does not name its own.
    device: Option<String>,
}

/// Everything the sectioner accumulates while walking the input.
struct Output<'o> {
    options: &'o ReadOptions,
    /// The document; without its sections when they go to `each`.
    doc: Document,
    /// Where each section goes as soon as it is read, if not to `doc`.
    each: Option<&'o mut dyn FnMut(Section)>,
    /// How many sections were found, read or past `max_sections`.
    sections: usize,
    /// Runs detection on body lines too ([`super::body`]) and classifies
    /// every line as framing or not (not only those the input scan left
    /// in doubt): the reading the shortcuts must equal, for the tests that
    /// check it.
    full_detection: bool,
    /// With `full_detection`: body lines where detection found something
    /// that skipping it would have missed (always empty unless a body-line
    /// shape is wrong).
    #[cfg(test)]
    body_misses: Vec<String>,
    /// Body lines met (with or without `full_detection`).
    #[cfg(test)]
    body_lines: usize,
    /// The input's last line with text, and the word set aside from it
    /// when the input ends inside it ([`set_aside_cut_word`]; empty
    /// otherwise): where a paste cut inside a line of output ends.
    last_line: Option<(usize, String)>,
}

/// The document of `text`, each section handed to `each` as soon as it is
/// read rather than kept in the document.
pub(super) fn split(text: &str, options: &ReadOptions, each: &mut dyn FnMut(Section)) -> Document {
    split_compact_from(text, options, false, COMPACT_FROM_BYTES, Some(each)).doc
}

/// [`split`] with its sections in the document.
#[cfg(test)]
fn split_with<'o>(text: &str, options: &'o ReadOptions, full_detection: bool) -> Output<'o> {
    split_compact_from(text, options, full_detection, COMPACT_FROM_BYTES, None)
}

/// [`split`], holding the lines compact when the input is `compact_from`
/// bytes or more (the tests compact every input), each section handed to
/// `each` or, without it, kept in the document.
fn split_compact_from<'o>(
    text: &str,
    options: &'o ReadOptions,
    full_detection: bool,
    compact_from: usize,
    each: Option<&'o mut dyn FnMut(Section)>,
) -> Output<'o> {
    let mut out = Output {
        options,
        doc: Document::default(),
        each,
        sections: 0,
        full_detection,
        #[cfg(test)]
        body_misses: Vec::new(),
        #[cfg(test)]
        body_lines: 0,
        last_line: None,
    };
    let compact = text.len() >= compact_from;
    let (mut lines, candidates, may_frame) = clean_lines(text, compact, &mut out);
    out.doc.repairs = repair_lines(&mut lines, &candidates);
    if out.last_line.is_none() {
        // Line `i` is the input's line `i + 1` until lines are kept.
        out.last_line = (0..lines.len())
            .rev()
            .find(|&i| lines.text(i).is_some_and(|t| !t.trim().is_empty()))
            .map(|i| (i + 1, String::new()));
    }
    out.doc.line_count = lines.len();
    let may_frame = (!full_detection).then_some(may_frame.as_slice());
    let (chunks, mut kept, framing, last_prompt) = chunks(lines, may_frame, options);
    out.doc.last_prompt = last_prompt;
    out.doc.framing = spans_of(framing);
    out.doc.framing.shrink_to_fit();
    let mut chunks = chunks.into_iter().peekable();
    while let Some(chunk) = chunks.next() {
        let heading = names_a_transcript(&chunk, chunks.peek());
        sectionize(chunk, heading, &mut kept, &mut out);
    }
    out.doc.unrecognised.sort_by_key(|u| u.span);
    out
}

/// Cleaned lines as the input scan gives them: the lines, the ascending
/// indexes of those a repair may change, and for each line whether it may
/// be a framing line (see [`clean_each_line`]).
type Cleaned<'a> = (Kept<'a>, Vec<usize>, Vec<bool>);

/// Numbered, cleaned lines, with over-long lines blanked and reported, and
/// the last word of an unterminated last line set aside; with the indexes
/// of the lines a repair may change and which lines may be framing (see
/// [`clean_each_line`]).
fn clean_lines<'a>(text: &'a str, compact: bool, out: &mut Output<'_>) -> Cleaned<'a> {
    let (mut lines, mut candidates, mut may_frame) = clean_each_line(text, compact, out);
    if !text.ends_with('\n') {
        if let Some(last) = may_frame.last_mut() {
            *last = true; // its text may change: classify what is left
        }
        let index = lines.len().saturating_sub(1);
        let earlier = lines.texts().take(index);
        if !lines
            .text(index)
            .is_some_and(|t| word_seen_at_line_end(t, earlier))
        {
            if let Some(mut last) = lines.take_one(index) {
                set_aside_cut_word(&mut last, out);
                // The line is shorter now; a candidate still, or newly one.
                if candidates.last() != Some(&index) && repair::may_change(last.text()) {
                    candidates.push(index);
                }
                lines.set(index, last);
            }
        }
    }
    (lines, candidates, may_frame)
}

/// Undoes paste damage ([`repair::apply_to`]). Only the lines a repair may
/// change are taken out of the table and set back (a mail-quoted input's
/// every line: a quoted run is told by the lines around it).
fn repair_lines(lines: &mut Kept<'_>, candidates: &[usize]) -> Vec<repair::Repair> {
    let quoted = repair::may_be_quoted(candidates.iter().filter_map(|&i| lines.text(i)));
    // The lines taken, and where the candidates are among them.
    let (taken, positions): (Vec<usize>, Vec<usize>) = if quoted {
        ((0..lines.len()).collect(), candidates.to_vec())
    } else {
        (candidates.to_vec(), (0..candidates.len()).collect())
    };
    let mut some = lines.take(taken.iter().copied());
    let repairs = repair::apply_to(&mut some, &positions);
    for (i, line) in taken.into_iter().zip(some) {
        lines.set(i, line);
    }
    repairs
}

/// Whether the last word of `last` also ends one of the lines before it
/// (`… Link layer: InfiniBand` after other ports printed the same): then it
/// is a whole word the tool prints, not a cut one, and is kept. A cut word
/// (`Infini`, `NV1`, `40`) almost never ends another line.
fn word_seen_at_line_end<'t>(last: &str, mut earlier: impl Iterator<Item = &'t str>) -> bool {
    let last_word = |t: &str| t.split_whitespace().last().map(str::to_owned);
    let Some(word) = last_word(last) else {
        return false;
    };
    if last.ends_with(char::is_whitespace) {
        return false;
    }
    earlier.any(|l| last_word(l).is_some_and(|w| w == word))
}

/// How the warning about a last word set aside begins.
pub(crate) const CUT_WORD: &str = "the input ends without a line end: the last word";

/// A paste that ends without a line end may have been cut inside its last
/// word (`Rate: 40` of `Rate: 400`, `NV1` of `NV18`): that word is not read.
/// The rest of the line is, and a `Name:` left without its value tells the
/// parser the value was cut. Complete pastes lose at most one word, which
/// the warning names.
fn set_aside_cut_word(line: &mut Line<'_>, out: &mut Output<'_>) {
    let text = line.text();
    let trimmed = text.trim_end();
    if trimmed.is_empty() || trimmed.len() < text.len() {
        return; // blank, or ends in white space: no word was cut
    }
    let word_start = trimmed.rfind(char::is_whitespace).map_or(0, |i| {
        i + trimmed
            .get(i..)
            .and_then(|r| r.chars().next())
            .map_or(1, char::len_utf8)
    });
    let word = trimmed.get(word_start..).unwrap_or_default();
    // `Name:....value`: keep the name and its dots, drop the value.
    let keep = match word.rfind(':') {
        Some(colon) => {
            let after = word.get(colon + 1..).unwrap_or_default();
            let dots = after.len() - after.trim_start_matches('.').len();
            word_start + colon + 1 + dots
        }
        None => word_start,
    };
    let dropped = text.get(keep..).unwrap_or_default().to_owned();
    if dropped.is_empty() {
        return;
    }
    let kept = text.get(..keep).unwrap_or_default().to_owned();
    let message = format!("{CUT_WORD} (`{dropped}`) may be cut and was not read");
    out.last_line = Some((line.number, dropped.clone()));
    out.doc.warnings.push(super::Warning::new(
        super::WarningKind::Truncated,
        line.span(),
        message.clone(),
    ));
    if kept.trim().is_empty() {
        out.doc.unrecognised.push(Unrecognised {
            span: line.span(),
            host: None,
            reason: message,
        });
    }
    line.text = Cow::Owned(kept);
}

/// Numbered, cleaned lines, with over-long lines blanked and reported, the
/// ascending indexes of the lines a repair may change
/// ([`repair::may_change`]), and for each line whether it may be a framing
/// line (`false` only where [`classify`] would find none). One scan of the
/// bytes finds the line ends and which lines hold a control byte, a byte
/// some repair looks for or a prompt's `$` `#` `%`; lines with none of
/// these (most tool output) are borrowed as they stand and only their
/// opening is tested for repairs and framing.
fn clean_each_line<'a>(text: &'a str, compact: bool, out: &mut Output<'_>) -> Cleaned<'a> {
    let max = out.options.max_line_bytes;
    // One allocation for the line table: counting line ends is cheap next to
    // growing a table of a million lines by doubling.
    let capacity = line_ends(text) + 1;
    let mut lines = Kept::with_capacity(text, capacity, compact);
    let mut may_frame = Vec::with_capacity(capacity);
    let mut candidates = Vec::new();
    for (i, (raw, bits)) in classified_lines(text).enumerate() {
        let number = i + 1;
        if raw.len() > max {
            out.doc.unrecognised.push(Unrecognised {
                span: LineSpan::line(number),
                host: None,
                reason: format!(
                    "line is {} bytes, longer than the limit of {max}",
                    raw.len()
                ),
            });
            lines.push(Line::new(number, ""));
            may_frame.push(false); // blank: never framing
            continue;
        }
        let text = clean_classified(raw, bits);
        let (candidate, frame) = if bits & class::CONTROL != 0 {
            (repair::may_change(&text), true)
        } else {
            plain_line_tests(&text, bits)
        };
        if candidate {
            candidates.push(i);
        }
        may_frame.push(frame);
        lines.push_line(number, text);
    }
    (lines, candidates, may_frame)
}

/// For a line with no control byte (no `class::CONTROL` in `bits`):
/// whether a repair may change it, and whether it may be a framing line.
/// A line the cleaning or a repair may change is classified as it ends
/// up; any other is the bytes the scan saw. Such a line holds no `\r`,
/// `\n`, vertical tab or form feed, so the indent that
/// [`repair::may_change_plain`] skips and the one `may_open_framing`
/// skips are the same spaces and tabs: they are skipped once, and the
/// byte after them answers both (but for a byte that is not ASCII, maybe
/// Unicode white space, which `may_change_plain` itself decides).
fn plain_line_tests(text: &str, bits: u8) -> (bool, bool) {
    let first = text.bytes().find(|&b| b != b' ' && b != b'\t');
    let candidate = bits & class::REPAIR_NOT_PAREN != 0
        || (bits & class::REPAIR != 0 && repair::may_change_paren(text))
        || match first {
            Some(b) if b.is_ascii() => {
                matches!(b, b'.' | b'[' | b'|') || (b == b'/' && text.starts_with("//"))
            }
            Some(_) => repair::may_change_plain(text),
            None => false,
        };
    let frame = candidate
        || bits & class::PROMPT != 0
        || opening_may_frame(first)
        || closing_may_frame(text)
        || labelled_may_frame(text)
        || command_may_frame(text)
        || address_may_frame(text)
        || windows_prompt_may_frame(text);
    (candidate, frame)
}

/// How many `\n` `text` holds, counted in vector adds
/// ([`count_bytes`](super::clean::count_bytes)).
fn line_ends(text: &str) -> usize {
    super::clean::count_bytes(text.as_bytes(), |b| b == b'\n')
}

/// Whether the paste names `name` as a host other than by a Markdown
/// heading of its weak shape: a pdsh prefix, an earlier chunk's host (a
/// prompt, a banner, a file), or a line after line `at` that is a prompt
/// at that host or a banner or label naming it (`later`, see
/// [`hosts_named_from`]).
fn named_as_host_elsewhere(
    name: &str,
    at: usize,
    hosts: &HashSet<Rc<str>>,
    chunks: &[Chunk],
    later: &HashMap<String, usize>,
) -> bool {
    hosts.contains(name)
        || chunks.iter().any(|c| c.host.as_deref() == Some(name))
        || later.get(name).is_some_and(|&last| last > at)
}

/// What the paste says of hosts elsewhere, for [`weak_heading_unnamed`].
struct HostEvidence<'e, 'a> {
    lines: &'e Kept<'a>,
    may_frame: Option<&'e [bool]>,
    hosts: &'e HashSet<Rc<str>>,
    chunks: &'e [Chunk],
}

/// Whether the host heading `text` (`#### rocev1`, naming `name` at line
/// `at`) is a Markdown heading of a weak host shape that the paste names as
/// a host nowhere else: then it is the author's title of what follows, no
/// host. Each name is asked once (`confirmed`); the later lines' hosts are
/// gathered in one pass when first needed (`later`). A call of its own:
/// host headings are rare, and [`chunks`] runs for every line.
#[cold]
#[inline(never)]
fn weak_heading_unnamed(
    text: &str,
    name: &str,
    at: usize,
    ctx: &HostEvidence<'_, '_>,
    confirmed: &mut HashMap<String, bool>,
    later: &mut Option<HashMap<String, usize>>,
) -> bool {
    if !markdown_heading_unconfirmed(text, name) {
        return false;
    }
    let later = later.get_or_insert_with(|| hosts_named_from(ctx.lines, at + 1, ctx.may_frame));
    let named = *confirmed
        .entry(name.to_owned())
        .or_insert_with(|| named_as_host_elsewhere(name, at, ctx.hosts, ctx.chunks, later));
    !named
}

/// The hosts lines `from` on name by a prompt at the host, or by a host
/// heading, banner or label that is not a weak Markdown heading, each with
/// the last line naming it. One pass over the lines that may frame, made
/// when the first weak heading asks: a search of the later lines per
/// heading would be quadratic in a paste of many such headings.
fn hosts_named_from(
    lines: &Kept<'_>,
    from: usize,
    may_frame: Option<&[bool]>,
) -> HashMap<String, usize> {
    let mut named = HashMap::new();
    for j in from.. {
        let Some(text) = lines.text(j) else { break };
        if !may_frame.is_none_or(|m| m.get(j).copied().unwrap_or(true)) {
            continue;
        }
        match classify(text) {
            Some(Framing::Prompt(p)) => {
                if let Some(host) = p.host {
                    named.insert(host, j);
                }
            }
            Some(Framing::HostHeading(h)) if !markdown_heading_unconfirmed(text, &h) => {
                named.insert(h, j);
            }
            _ => {}
        }
    }
    named
}

/// Whether `text`'s first character after its blanks is `=`, as
/// `text.trim_start().starts_with('=')` says, found bytewise past spaces
/// and tabs: [`chunks`] asks it of every line, and `trim_start` tests each
/// character against every Unicode blank.
fn opens_with_equals(text: &str) -> bool {
    match text.bytes().find(|b| !matches!(b, b' ' | b'\t')) {
        Some(b'=') => true,
        // Another blank, or a character beyond ASCII: as `trim_start`.
        Some(b) if !b.is_ascii_graphic() => text.trim_start().starts_with('='),
        _ => false,
    }
}

/// Cuts the input at framing lines and strips host prefixes. `may_frame`
/// says which of `lines` may be framing (the others are not classified);
/// `None` classifies every line. Returns the chunks, the table of their
/// lines (framing lines dropped, prefixes stripped; each chunk holds a
/// range of it: `lines` itself, its kept lines moved up in place), the
/// framing line numbers and the line of the last shell prompt.
fn chunks<'a>(
    mut lines: Kept<'a>,
    may_frame: Option<&[bool]>,
    options: &ReadOptions,
) -> (Vec<Chunk>, Kept<'a>, Vec<usize>, Option<usize>) {
    let mut framing_lines = Vec::new();
    let mut last_prompt = None;
    let hosts: HashSet<Rc<str>> = prefixed_hosts(lines.texts())
        .into_iter()
        .map(Rc::from)
        .collect();
    let mut chunks = vec![Chunk {
        host: options.default_host.clone(),
        ..Chunk::default()
    }];
    // How many lines are kept so far: line `i` read gives at most one kept
    // line, set at `kept`, never after `i`; the look-ahead at the next two
    // lines reads lines not yet read.
    let mut kept = 0;
    let mut source: Option<String> = None;
    let mut banner_host: Option<String> = None;
    // Whether a markdown fence opened a block that no fence closed yet.
    let mut fence_open = false;
    // AsciiDoc's `----` listing blocks, read as fences.
    let mut asciidoc = AsciiDocBlocks::default();
    // The prefix host of the last prefixed line: pdsh prints runs of lines
    // from one host, and a line that repeats it needs no set look-up.
    let mut last_host: Option<Rc<str>> = None;
    // Whether the paste names a Markdown heading's weak host name as a
    // host elsewhere, by name (asked once per name).
    let mut confirmed: HashMap<String, bool> = HashMap::new();
    let mut later_hosts: Option<HashMap<String, usize>> = None;
    let mut i = 0;
    while let Some(text) = lines.text(i) {
        let mut framing = if may_frame.is_none_or(|m| m.get(i).copied().unwrap_or(true))
            && !empty_prefixed_line(text, &hosts)
        {
            classify(text)
        } else {
            None
        };
        // `#### rocev1`: an author's heading whose word only may be a
        // host's, and that the paste names as a host nowhere else, is the
        // author's title of what follows, no host.
        // (Tested in place, the rare case a call of its own: this runs for
        // every line of every input.)
        if let Some(Framing::HostHeading(name)) = &framing {
            let ctx = HostEvidence {
                lines: &lines,
                may_frame,
                hosts: &hosts,
                chunks: &chunks,
            };
            if weak_heading_unnamed(text, name, i, &ctx, &mut confirmed, &mut later_hosts) {
                framing = Some(Framing::Heading);
            }
        }
        // Every input line was cleaned into the table: line `i` is the
        // input's line `i + 1` until kept lines are moved up (behind `i`).
        let number = i + 1;
        // `====…` / `  Environment Variables` / `====…`: a report's banner,
        // three framing lines read as the heading `==== title ====`.
        // The next lines are looked at only under a line of `=`: this
        // runs for every line of every input, so the line's first byte
        // after its blanks is found bytewise (`trim_start` tests every
        // Unicode blank, and most lines of `nvlink` are indented).
        let opens_banner = framing.is_none() && opens_with_equals(text);
        let banner = match opens_banner.then(|| (lines.text(i + 1), lines.text(i + 2))) {
            Some((Some(title), Some(last))) => report_banner(text, title, last, lines.text(i + 3))
                .map(|t| classify(&format!("==== {t} ===="))),
            _ => None,
        };
        if let Some(heading) = banner {
            let host = match heading {
                Some(Framing::HostHeading(name)) => {
                    banner_host = Some(name);
                    banner_host.clone()
                }
                // Like a script's heading: the output it sits in keeps
                // its host.
                _ => banner_host
                    .clone()
                    .or_else(|| chunks.last().and_then(|c| c.host.clone())),
            };
            push_chunk(&mut chunks, new_chunk(None, host, &source, options), kept);
            framing_lines.extend([number, number + 1, number + 2]);
            i += 3;
            continue;
        }
        if let Some(Framing::Rule) = framing {
            if let (Some(name), Some(Some(Framing::Rule))) = (
                lines.text(i + 1).and_then(host_banner),
                lines.text(i + 2).map(classify),
            ) {
                banner_host = Some(name);
                push_chunk(
                    &mut chunks,
                    new_chunk(None, banner_host.clone(), &source, options),
                    kept,
                );
                framing_lines.extend([number, number + 1, number + 2]);
                i += 3;
                continue;
            }
        }
        let asciidoc_delimiter = matches!(framing, Some(Framing::Rule)) && asciidoc.delimits(text);
        if asciidoc_delimiter {
            framing = Some(Framing::Fence);
        } else if asciidoc.may_note(text) {
            asciidoc.read(text);
        }
        if matches!(framing, Some(ref f) if *f != Framing::Rule) {
            framing_lines.push(number);
        }
        match framing {
            Some(Framing::Prompt(prompt)) => {
                last_prompt = Some(number);
                // `$ hostname` and the name it printed: the host of what
                // follows, as a heading is (a paste of two machines' runs
                // told apart only so was one host, and their counters a
                // growth).
                if let Some(name) = hostname_answer(&prompt, lines.text(i + 1)) {
                    banner_host = Some(name);
                    push_chunk(
                        &mut chunks,
                        new_chunk(None, banner_host.clone(), &source, options),
                        kept,
                    );
                    framing_lines.push(number + 1);
                    i += 2;
                    continue;
                }
                // `$ ssh nodeB` with no command: the prompts after it are
                // nodeB's, until another names its host.
                if prompt.argv.is_empty() && prompt.host.is_some() {
                    banner_host.clone_from(&prompt.host);
                }
                let host = prompt.host.clone().or_else(|| banner_host.clone());
                push_chunk(
                    &mut chunks,
                    new_chunk(Some((number, prompt)), host, &source, options),
                    kept,
                );
            }
            Some(Framing::FileHeader(name)) => {
                // The file's name is the host of what follows unless a prompt
                // or banner says otherwise, as for the CLI's dump trees.
                banner_host = host_of_file(&name);
                source = Some(name);
                push_chunk(
                    &mut chunks,
                    new_chunk(None, banner_host.clone(), &source, options),
                    kept,
                );
            }
            Some(Framing::HostHeading(name)) => {
                // Like a `clush -b` banner: the host of what follows, and
                // of prompts after it that name none.
                banner_host = Some(name);
                push_chunk(
                    &mut chunks,
                    new_chunk(None, banner_host.clone(), &source, options),
                    kept,
                );
                // A heading that gives the time too (`===== node01 | before
                // | 2026-08-13T07:53:30Z =====`) is also read as `date`
                // output: the time of the snapshot under it. (Not among
                // host-prefixed lines, whose count per prefix it would skew.)
                if hosts.is_empty() && crate::parse::date::heading_has_stamp(text) {
                    framing_lines.pop();
                    lines.keep_at(i, kept);
                    kept += 1;
                }
            }
            // A comment between a prompt and its output (`# 실행 결과 — …`
            // under `$ nvidia-smi -q -d ROW_REMAPPER`) leaves the command
            // its output: it ends only output already printed.
            Some(Framing::Heading)
                if chunks
                    .last()
                    .is_some_and(|c| c.prompt.is_some() && !chunk_has_text(c, &lines, kept)) =>
            {
                // `for d in …; do echo "== $d =="; mlxlink -d $d; done`:
                // the first banner, right under the loop's prompt, names
                // the device of the output the prompt's chunk holds.
                if let (Some(device), Some(chunk)) = (device_heading(text), chunks.last_mut()) {
                    chunk.device = Some(device.to_owned());
                }
            }
            Some(Framing::ExitMarker | Framing::Heading) => {
                // `echo "===== mlx5_1 ====="` in a loop over devices: a
                // decorated title inside a command's output does not move
                // that output to another machine (a host's name would be a
                // host heading), so it keeps the host of the output it
                // sits in. Other headings (prose, an exit marker) name no
                // host, as before.
                let heading = matches!(framing, Some(Framing::Heading));
                let device = heading.then(|| device_heading(text)).flatten();
                let host = banner_host.clone().or_else(|| {
                    (heading && (device.is_some() || script_heading(text.trim())))
                        .then(|| chunks.last().and_then(|c| c.host.clone()))
                        .flatten()
                });
                let mut chunk = new_chunk(None, host, &source, options);
                chunk.device = device.map(str::to_owned);
                push_chunk(&mut chunks, chunk, kept);
            }
            Some(Framing::Fence) => {
                // Fences come in pairs: the one that closes a block ends
                // the output in it (the prose, commands and logs after a
                // pasted block are not that tool's), and what follows is
                // read for what it is. One that opens a block goes on with
                // the command before it (`$ ibstat` above the fence). A
                // fence naming a language (```` ```text ````) always opens.
                let t = text.trim_start();
                let names_language = t
                    .trim_start_matches(['`', '~'])
                    .trim()
                    .bytes()
                    .next()
                    .is_some_and(|b| b.is_ascii_alphabetic());
                // A fence after text of the chunk: a prompt's output, where
                // the fence that opened its block is not in the paste (a
                // quote or excerpt that begins inside it), is closed by it
                // too; prose before an opening fence is read apart from the
                // block.
                let chunk = chunks.last();
                let has_text = chunk.is_some_and(|c| chunk_has_text(c, &lines, kept));
                let lost_opening = !fence_open
                    && !names_language
                    && has_text
                    && chunk.is_some_and(|c| c.prompt.is_some());
                if (fence_open && !names_language) || lost_opening {
                    fence_open = false;
                    // An AsciiDoc block holding only the command: its
                    // output is in the next block (under `.Example
                    // output`), which the command goes on in (it is not
                    // a run that printed nothing).
                    if asciidoc_delimiter && !has_text {
                        asciidoc.carried = chunks.last_mut().and_then(|c| {
                            let prompt = c.prompt.take_if(|(_, p)| !p.argv.is_empty())?;
                            Some((prompt, c.host.clone()))
                        });
                    }
                    push_chunk(
                        &mut chunks,
                        new_chunk(None, banner_host.clone(), &source, options),
                        kept,
                    );
                } else {
                    if let Some((prompt, host)) =
                        asciidoc.carried.take().filter(|_| asciidoc_delimiter)
                    {
                        push_chunk(
                            &mut chunks,
                            new_chunk(Some(prompt), host, &source, options),
                            kept,
                        );
                    } else if has_text {
                        push_chunk(
                            &mut chunks,
                            new_chunk(None, banner_host.clone(), &source, options),
                            kept,
                        );
                    }
                    fence_open = true;
                }
            }
            Some(Framing::Rule) | None if hosts.is_empty() => {
                // No host prefixes to strip: the line stays as it is.
                lines.keep_at(i, kept);
                kept += 1;
            }
            Some(Framing::Rule) | None => {
                // The line moves as it is (a repaired line's text is not
                // copied), its prefix, if any, stripped.
                let Some(line) = lines.take_one(i) else {
                    break;
                };
                let (host, stripped) = strip_prefix(line, &hosts, &mut last_host);
                if !hosts.is_empty() {
                    // `node03: ` alone is a host's empty output line: only
                    // its prefix is text, and that prefix is framing.
                    if host.is_some() && stripped.is_blank() {
                        framing_lines.push(number);
                    }
                    if let Some(chunk) = chunks.last_mut() {
                        match chunk.prefixes.last_mut() {
                            Some((last, n)) if same_host(last, &host) => *n += 1,
                            _ => chunk.prefixes.push((host, 1)),
                        }
                    }
                }
                lines.set(kept, stripped);
                kept += 1;
            }
        }
        i += 1;
    }
    lines.truncate(kept);
    if let Some(last) = chunks.last_mut() {
        last.lines.end = kept;
    }
    (chunks, lines, framing_lines, last_prompt)
}

/// AsciiDoc listing blocks (`[source,terminal]`, then the block between
/// two `----` lines), as documentation pages show a command and, in the
/// block after it, its output. A line of four dashes is such a delimiter
/// only under a block attribute line (`[source,…]`, `[listing]`,
/// `[literal]`), or when it closes a block one opened: elsewhere it stays
/// a rule. Before, the delimiter and the page's markup after a block (`+`,
/// `.Example output`) were unread lines of the output above them, and
/// the output of the block after a command's block had no command.
#[derive(Default)]
struct AsciiDocBlocks {
    /// The last line with text was a block attribute line.
    after_attribute: bool,
    /// A delimiter opened a block that none closed yet.
    open: bool,
    /// The prompt (and its host) of a block that held only it, until the
    /// next block opens or a line other than the page's markup comes.
    carried: Option<((usize, Prompt), Option<String>)>,
}

impl AsciiDocBlocks {
    /// Whether `text`, a rule, delimits a listing block (opening or
    /// closing it).
    fn delimits(&mut self, text: &str) -> bool {
        if text.trim_end() != "----" || !(self.open || self.after_attribute) {
            return false;
        }
        self.open = !self.open;
        self.after_attribute = false;
        true
    }

    /// Whether [`Self::read`] may change anything for `text`, asked of
    /// every line of every input: outside a block, with nothing carried,
    /// only a line whose first character after its blanks is `[` (an
    /// attribute line) can, and a line opening with another ASCII byte
    /// after ASCII blanks is passed over bytewise, without trimming.
    #[inline]
    fn may_note(&self, text: &str) -> bool {
        self.open
            || self.after_attribute
            || self.carried.is_some()
            || text
                .bytes()
                .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r'))
                .is_some_and(|b| !b.is_ascii() || b == b'[')
    }

    /// Takes note of a line that is no delimiter (see [`Self::may_note`]).
    #[cold]
    #[inline(never)]
    fn read(&mut self, text: &str) {
        let t = text.trim();
        if t.is_empty() {
            return;
        }
        self.after_attribute = !self.open
            && ["[source", "[listing", "[literal"]
                .iter()
                .any(|a| t.starts_with(a))
            && t.ends_with(']');
        // The page's markup between a command's block and its output's:
        // a list continuation `+`, a block title `.Example output`, the
        // attribute line.
        let markup = t == "+"
            || self.after_attribute
            || t.strip_prefix('.')
                .is_some_and(|title| title.starts_with(|c: char| c.is_alphabetic()));
        if !markup {
            self.carried = None;
        }
    }
}

/// Whether `chunk` holds a line with text among the `kept` lines so far
/// (it begins at its first, and stops at the first with text).
fn chunk_has_text(chunk: &Chunk, lines: &Kept<'_>, kept: usize) -> bool {
    (chunk.lines.start..kept).any(|k| lines.text(k).is_some_and(|t| !t.trim().is_empty()))
}

/// The host `hostname` (or `uname -n`) printed on the line after its
/// prompt: one word of letters, digits, dots and dashes, with a letter,
/// named by its first label (`node07.cluster.local` → `node07`, as the
/// CLI names a file's host from the same line and prompts name hosts).
fn hostname_answer(prompt: &Prompt, next: Option<&str>) -> Option<String> {
    let words: Vec<&str> = prompt.argv.iter().map(String::as_str).collect();
    let asks = matches!(
        words.as_slice(),
        ["hostname"] | ["hostname", "-s" | "-f" | "--short" | "--fqdn"] | ["uname", "-n"]
    );
    if !asks {
        return None;
    }
    let answer = next?.trim();
    let name = answer.split('.').next().unwrap_or(answer);
    let ok = !name.is_empty()
        && answer.len() <= 253
        && answer
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.'))
        && name.bytes().any(|b| b.is_ascii_alphabetic())
        && classify(answer).is_none();
    ok.then(|| name.to_owned())
}

/// `node07:` alone, where `node07` prefixes the paste's lines: pdsh's
/// empty output line of that host, not Salt's heading (and not worth a
/// classification: every blank line of a pdsh paste is one).
fn empty_prefixed_line(text: &str, hosts: &HashSet<Rc<str>>) -> bool {
    !hosts.is_empty()
        && text
            .trim_end()
            .strip_suffix(':')
            .is_some_and(|host| hosts.contains(host))
}

/// Adds a chunk whose lines begin at `start` of the kept lines, ending the
/// chunk before it there.
fn push_chunk(chunks: &mut Vec<Chunk>, mut chunk: Chunk, start: usize) {
    if let Some(last) = chunks.last_mut() {
        last.lines.end = start;
    }
    chunk.lines = start..start;
    chunks.push(chunk);
}

/// The host a file name implies: its directory (`node07/ibstat.txt` →
/// `node07`), or its name up to the first dot (`node07.txt` → `node07`) when
/// that name is not about a tool (`ibstat.txt`, `nvlink-errors.log`).
fn host_of_file(name: &str) -> Option<String> {
    const TOOL_WORDS: &[&str] = &[
        "ibv", "perf", "nvidia", "nvlink", "smi", "topo", "dcgm", "dmon", "pmon", "counter",
        "error", "link", "port", "date", "dump", "output", "paste", "stat",
    ];
    let mut parts = name.rsplit(['/', '\\']);
    let file = parts.next()?;
    let candidate = match parts
        .next()
        .filter(|dir| !dir.is_empty() && *dir != "." && *dir != "..")
    {
        Some(dir) => dir,
        None => {
            let stem = file.split('.').next()?;
            let lower = stem.to_ascii_lowercase();
            if TOOL_WORDS.iter().any(|w| lower.contains(w)) {
                return None;
            }
            stem
        }
    };
    let ok = !candidate.is_empty()
        && candidate.len() <= 128
        && candidate
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    ok.then(|| candidate.to_owned())
}

fn new_chunk(
    prompt: Option<(usize, Prompt)>,
    host: Option<String>,
    source: &Option<String>,
    options: &ReadOptions,
) -> Chunk {
    Chunk {
        prompt,
        host: host.or_else(|| options.default_host.clone()),
        source: source.clone(),
        lines: 0..0,
        prefixes: Vec::new(),
        device: None,
    }
}

/// Removes an accepted `host: ` prefix, returning the host. `last` is the
/// host of the last prefixed line, updated here.
fn strip_prefix<'a>(
    line: Line<'a>,
    hosts: &HashSet<Rc<str>>,
    last: &mut Option<Rc<str>>,
) -> (Option<Rc<str>>, Line<'a>) {
    if hosts.is_empty() {
        return (None, line);
    }
    let found = match candidate_after(line.text(), last.as_deref()) {
        // The line begins with the last host's prefix: that host again.
        Some((host, rest)) if last.as_deref() == Some(host) => last.as_ref().map(|h| (h, rest)),
        Some((host, rest)) => hosts.get(host).map(|h| (h, rest)),
        None => None,
    };
    let Some((host, rest)) = found.map(|(host, rest)| (Rc::clone(host), rest.len())) else {
        return (None, line);
    };
    *last = Some(Rc::clone(&host));
    let Line { number, text } = line;
    let text = match text {
        Cow::Borrowed(s) => Cow::Borrowed(s.get(s.len() - rest..).unwrap_or("")),
        Cow::Owned(s) => Cow::Owned(s.get(s.len() - rest..).unwrap_or("").to_owned()),
    };
    (Some(host), Line { number, text })
}

/// Splits one chunk, whose lines are `chunk.lines` of `kept`, into
/// per-host streams and each stream into sections. Each stream's lines
/// are taken from the compact table as it is read, and let go of after.
/// A label (`## ibv_devinfo`) with nothing under it, then a command typed
/// at a prompt: a page's heading over a transcript of its own prompts, not
/// a run that printed nothing. A collection script's label followed by the
/// next label (`### ibstat`, `### ibstatus`) is still such a run.
fn names_a_transcript(chunk: &Chunk, next: Option<&Chunk>) -> bool {
    let typed = |c: &Chunk| {
        c.prompt
            .as_ref()
            .is_some_and(|(_, p)| !p.label && !p.bare && !p.command.is_empty())
    };
    chunk.prompt.as_ref().is_some_and(|(_, p)| p.label) && next.is_some_and(typed)
}

/// `heading`: the chunk's prompt is a heading over the transcript of the
/// next ([`names_a_transcript`]).
fn sectionize(chunk: Chunk, heading: bool, kept: &mut Kept<'_>, out: &mut Output<'_>) {
    let Chunk {
        prompt,
        host: chunk_host,
        source,
        prefixes,
        lines,
        device,
    } = chunk;
    let hint = prompt.as_ref().and_then(|(_, p)| {
        let argv: Vec<&str> = p.argv.iter().map(String::as_str).collect();
        format_of_command(&argv)
    });
    let epoch_dates = prompt
        .as_ref()
        .is_some_and(|(_, p)| crate::parse::date::command_prints_epoch(&p.command));
    // `ibstatus; ibstat`: the hint is the first step's tool, and the
    // output may be the next step's (the first printed an error, or
    // nothing a parser reads).
    let one_step = prompt.as_ref().is_none_or(|(_, p)| {
        crate::parse::text::command_steps(&p.command)
            .nth(1)
            .is_none()
    });
    let mut sectionize_one = |prefix_host: Option<Rc<str>>, stream: &[Line<'_>]| {
        let host = prefix_host
            .map(|h| h.to_string())
            .or_else(|| chunk_host.clone());
        let ctx = StreamContext {
            hint,
            one_step,
            epoch_dates,
            heading,
            prompt: prompt.as_ref(),
            host,
            source: source.clone(),
            device: device.as_deref(),
        };
        sectionize_stream(stream, &ctx, out);
    };
    // Without prefixes (most inputs) the chunk is one stream as it stands.
    if prefixes.iter().all(|(host, _)| host.is_none()) {
        sectionize_one(None, &kept.take_range(lines));
        return;
    }
    // Group lines by their prefix host, keeping first-appearance order: pdsh
    // interleaves hosts, and each host's output must be read on its own.
    let (streams, grouped) = group_by_host(prefixes, lines.clone());
    for (host, range) in streams {
        match &grouped {
            Some(table) => sectionize_one(
                host,
                &kept.take(table.get(range).unwrap_or_default().iter().copied()),
            ),
            None => sectionize_one(
                host,
                &kept.take_range(lines.start + range.start..lines.start + range.end),
            ),
        }
    }
}

/// Each host's stream of the kept lines `lines`, in order of first
/// appearance, as a range of one table: of `lines` itself when every
/// host's lines follow one another (`None`: a paste of hosts one after
/// another; the range is relative to `lines.start`), else of the returned
/// table of line indexes, regrouped by host. `runs` are the prefix hosts
/// of `lines` with how many lines in a row each prefixed.
#[allow(clippy::type_complexity)]
fn group_by_host(
    runs: Vec<(Option<Rc<str>>, usize)>,
    lines: Range<usize>,
) -> (Vec<(Option<Rc<str>>, Range<usize>)>, Option<Vec<usize>>) {
    // The stream of each run, and each stream's host and line count.
    let mut index: HashMap<Option<Rc<str>>, usize> = HashMap::new();
    let mut streams: Vec<(Option<Rc<str>>, usize)> = Vec::new();
    let mut slots = Vec::with_capacity(runs.len());
    let mut in_order = true;
    for (host, n) in runs {
        let slot = match index.get(&host) {
            Some(&slot) => slot,
            None => {
                streams.push((host.clone(), 0));
                index.insert(host, streams.len() - 1);
                streams.len() - 1
            }
        };
        // A run of a host seen before, after another host: interleaved.
        in_order &= slots
            .last()
            .is_none_or(|&(last, _)| last == slot || slot == streams.len() - 1);
        if let Some((_, count)) = streams.get_mut(slot) {
            *count += n;
        }
        slots.push((slot, n));
    }
    // Where each stream begins in the (regrouped) table.
    let mut starts = Vec::with_capacity(streams.len());
    let mut at = 0;
    let ranges = streams
        .into_iter()
        .map(|(host, count)| {
            starts.push(at);
            at += count;
            (host, at - count..at)
        })
        .collect();
    if in_order {
        return (ranges, None);
    }
    // A counting sort of the runs into their streams' places.
    let mut grouped: Vec<usize> = vec![0; lines.len()];
    let mut from = lines.start;
    for (slot, n) in slots {
        let Some(start) = starts.get_mut(slot) else {
            continue;
        };
        let Some(dst) = grouped.get_mut(*start..*start + n) else {
            continue;
        };
        for (d, i) in dst.iter_mut().zip(from..from + n) {
            *d = i;
        }
        *start += n;
        from += n;
    }
    (ranges, Some(grouped))
}

/// Whether two prefix hosts are the same host.
fn same_host(a: &Option<Rc<str>>, b: &Option<Rc<str>>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => Rc::ptr_eq(a, b) || a == b,
        (None, None) => true,
        _ => false,
    }
}

struct StreamContext<'c> {
    hint: Option<&'static Format>,
    /// The prompt's command is one step: its first output is the hinted
    /// tool's, whatever other format it looks like.
    one_step: bool,
    /// The prompt runs `date +%s` in one of its steps: a bare number of
    /// seconds is its output (a time), wherever it comes.
    epoch_dates: bool,
    /// The prompt is a label heading the next chunk's transcript: with
    /// nothing under it, no section ([`names_a_transcript`]).
    heading: bool,
    prompt: Option<&'c (usize, Prompt)>,
    host: Option<String>,
    source: Option<String>,
    /// The device the chunk's banner names ([`Chunk::device`]).
    device: Option<&'c str>,
}

/// A section being collected.
struct Open<'a> {
    format: &'static Format,
    keys: Keys,
    lines: Collected<'a>,
    messages: Vec<ToolMessage>,
    /// The chunk's prompt line, for the first section of a chunk.
    prompt_line: Option<usize>,
    /// Non-blank lines still to come, for formats of fixed length.
    remaining: Option<usize>,
    /// Whether an indented line with text was collected: after one, an
    /// unindented line of prose is the author's, not the tool's.
    indented: bool,
    /// The section's parser, fed its lines as they are collected, for the
    /// formats whose parser is its own body-line test ([`Streamed`]).
    stream: Option<Streamed>,
}

/// A parser that reads a section while it is collected: its fast path
/// takes the section's common lines, each of them a body line (see
/// [`super::body`]), and reads them as they are met, so the sectioner
/// needs no shape test of its own there and the parser no second look at
/// them when the section ends. `nvidia-smi nvlink` (nearly two lines in
/// three of a fleet's dumps) and perfquery (most of the rest) read this
/// way; other formats are parsed from their collected lines in [`finish`].
enum Streamed {
    Nvlink(crate::parse::nvlink::Stream),
    /// perfquery's fast path is the body-line test itself
    /// ([`super::body::perfquery_field_parts`]), whose name and value the
    /// stream reads.
    Perfquery(crate::parse::perfquery::Stream),
}

impl Streamed {
    /// The stream of a new section of `format`, if its parser reads so.
    fn of(format: &Format) -> Option<Self> {
        match format.kind {
            Kind::Nvlink => Some(Streamed::Nvlink(crate::parse::nvlink::Stream::new())),
            Kind::Perfquery => Some(Streamed::Perfquery(crate::parse::perfquery::Stream::new())),
            _ => None,
        }
    }

    /// Reads `line` if the fast path takes it: a body line, then.
    fn read_body(&mut self, line: &Line<'_>) -> bool {
        match self {
            Streamed::Nvlink(s) => s.read_body(line),
            Streamed::Perfquery(s) => match super::body::perfquery_field_parts(line.text()) {
                Some((name, value)) => {
                    s.read_field(line, name, value);
                    true
                }
                None => false,
            },
        }
    }

    /// Reads a non-blank line of the section the fast path did not take.
    fn read(&mut self, line: &Line<'_>) {
        match self {
            Streamed::Nvlink(s) => s.read(line),
            Streamed::Perfquery(s) => s.read(line),
        }
    }

    /// What the parser read: the format's `parse` of the lines fed, which
    /// are `lines`.
    fn finish(self, lines: &[Line<'_>]) -> crate::parse::Parsed<crate::parse::SectionData> {
        match self {
            Streamed::Nvlink(s) => s.finish().map(crate::parse::SectionData::Nvlink),
            Streamed::Perfquery(s) => s.finish(lines).map(crate::parse::SectionData::Perfquery),
        }
    }
}

/// The block keys a section has met. A section meets a few (one per GPU
/// of an nvlink listing, one per perfquery header), held in a short list
/// searched in order; past [`Keys::LIST`] they move to a hash set, so a
/// hostile paste of endless keys stays linear. (A set per section hashed
/// every key and allocated its table, for sections of one or two keys.)
#[derive(Default)]
enum Keys {
    #[default]
    Empty,
    List(Vec<String>),
    Set(HashSet<String>),
}

impl Keys {
    /// Keys held in the list before they move to a set.
    const LIST: usize = 16;

    /// The keys `[key]`.
    fn of(key: String) -> Self {
        Keys::List(vec![key])
    }

    /// Adds `key` when new (`None`); hands it back when it was met before,
    /// as `HashSet::replace` hands back the equal key it held.
    fn replace(&mut self, key: String) -> Option<String> {
        match self {
            Keys::Empty => {
                *self = Keys::of(key);
                None
            }
            Keys::List(list) if list.contains(&key) => Some(key),
            Keys::List(list) if list.len() < Self::LIST => {
                list.push(key);
                None
            }
            Keys::List(list) => {
                let mut set: HashSet<String> = std::mem::take(list).into_iter().collect();
                set.insert(key);
                *self = Keys::Set(set);
                None
            }
            Keys::Set(set) => set.replace(key),
        }
    }

    /// Whether `key` was met.
    #[cfg(test)]
    fn contains(&self, key: &String) -> bool {
        match self {
            Keys::Empty => false,
            Keys::List(list) => list.contains(key),
            Keys::Set(set) => set.contains(key),
        }
    }
}

/// A section's lines: a range of its stream while they follow one another
/// (nearly always), a copy once a tool message inside the section leaves a
/// gap (a message is the section's, but not one of its lines).
enum Collected<'a> {
    Range(Range<usize>),
    Copied(Vec<Line<'a>>),
}

impl<'a> Collected<'a> {
    /// Adds line `i` of `stream`.
    fn push(&mut self, i: usize, stream: &[Line<'a>]) {
        match self {
            Collected::Range(r) if r.end == i => r.end = i + 1,
            Collected::Range(r) => {
                let mut copy = stream.get(r.clone()).unwrap_or_default().to_vec();
                copy.extend(stream.get(i).cloned());
                *self = Collected::Copied(copy);
            }
            Collected::Copied(lines) => lines.extend(stream.get(i).cloned()),
        }
    }

    /// The lines, `from` the stream they were collected from.
    fn of<'s>(&'s self, from: &'s [Line<'a>]) -> &'s [Line<'a>] {
        match self {
            Collected::Range(r) => from.get(r.clone()).unwrap_or_default(),
            Collected::Copied(lines) => lines,
        }
    }
}

fn sectionize_stream(stream: &[Line<'_>], ctx: &StreamContext<'_>, out: &mut Output<'_>) {
    let mut leading: Vec<Line<'_>> = Vec::new();
    let mut leading_messages: Vec<ToolMessage> = Vec::new();
    let mut open: Option<Open<'_>> = None;
    let mut produced = 0usize;
    // The author's lines set aside between or after a section's lines
    // ([`super::framing::prose_after_output`]).
    let mut aside: Vec<usize> = Vec::new();
    // The stream index of the last line set aside: a sign-off goes on
    // from it ([`super::framing::sign_off_after_output`]).
    let mut aside_at: Option<usize> = None;
    for (i, line) in stream.iter().enumerate() {
        // A body line of the open section continues it: no tool message,
        // no block of any format begins there (see `body`). A streamed
        // section's parser reads the lines its fast path takes, all body
        // lines, at once; the others are tested for the shape.
        let streamed = open
            .as_mut()
            .and_then(|o| o.stream.as_mut())
            .is_some_and(|s| s.read_body(line));
        let body = streamed
            || open
                .as_ref()
                .is_some_and(|o| super::body::continues(o.format.kind, line.text()));
        let detect_here = !body || out.full_detection;
        #[cfg(test)]
        {
            out.body_lines += usize::from(body);
        }
        // A blank line is no tool message and begins no block. A line the
        // streamed parser took holds its text (`Link N: …`, `Name:…value`):
        // not blank, without a second look at its opening.
        let blank = !streamed && line.is_blank();
        let message = if detect_here && !blank {
            // ibdiagnet marks its own findings `-E-`/`-W-` as the firmware
            // tools mark their failures: inside its output they are its lines.
            let in_ibdiagnet = open
                .as_ref()
                .is_some_and(|o| o.format.kind == Kind::IbdiagnetLog)
                || ctx.hint.is_some_and(|h| h.kind == Kind::IbdiagnetLog);
            tool_message(line, in_ibdiagnet, || no_gpu_level(ctx, open.as_ref()))
        } else {
            None
        };
        if let Some(message) = message {
            #[cfg(test)]
            if body {
                out.body_misses
                    .push(format!("line {}: a tool message", line.number));
            }
            match open.as_mut() {
                Some(o) => o.messages.push(message),
                None => leading_messages.push(message),
            }
            continue;
        }
        let mut block_here = false;
        if detect_here && !blank {
            // A one-step prompt naming a supported tool says what its
            // output is: the first section is that tool's, even where
            // another format's output looks the same (`nvidia-smi nvlink
            // -cBridge` prints the bare GPU lines of `nvidia-smi -L`).
            // Other formats are recognised once the named tool's output
            // has begun, or at once after a compound command's prompt
            // (its hint tried first). Under a prompt running `date +%s`,
            // a bare number of seconds is a date.
            // `watch`'s `Every 2.0s: nvidia-smi --query-gpu=… host: date`
            // header comes first under `watch …`'s prompt: it is the time
            // of the screen under it, not the named tool's first line (a
            // CSV row of the query's words, before).
            let only_hint = ctx.one_step
                && ctx.hint.is_some()
                && open.is_none()
                && produced == 0
                && !crate::parse::date::is_watch_header(line.text());
            let found = if ctx.epoch_dates && crate::parse::date::is_epoch_line(line.text()) {
                crate::parse::format_of_kind(Kind::Date).map(|f| (f, Block::of_lines("date", 1)))
            } else if only_hint {
                ctx.hint
                    .and_then(|f| (f.detect)(stream.get(i..).unwrap_or_default()).map(|b| (f, b)))
            } else {
                detect(stream.get(i..).unwrap_or_default(), ctx.hint)
            }
            .filter(|(format, _)| !gpu_header_of_open_listing(open.as_ref(), format, line));
            #[cfg(test)]
            if body {
                check_body_line(line, found.as_ref(), open.as_ref(), out);
            }
            block_here = found.is_some();
            if let Some((format, Block { key, lines })) = found {
                // A new key continues the open section; a key seen before
                // starts another. `replace` hashes once and hands back the
                // equal key already held, so the key is never copied.
                let starts_section = match open.as_mut() {
                    Some(o) if std::ptr::eq(o.format, format) => o.keys.replace(key),
                    _ => Some(key),
                };
                if let Some(key) = starts_section {
                    // Only the chunk's first output begins at its prompt:
                    // a second one (a repeated header after `sleep 60`)
                    // begins at its own first line.
                    let first_output = produced == 0 && open.is_none();
                    let prompt_line = if first_output && leading.iter().all(Line::is_blank) {
                        ctx.prompt.map(|(n, _)| *n)
                    } else {
                        None
                    };
                    if let Some(o) = open.take() {
                        finish(o, stream, ctx, out);
                        produced += 1;
                    }
                    open = Some(Open {
                        format,
                        keys: Keys::of(key),
                        lines: Collected::Range(i..i),
                        messages: std::mem::take(&mut leading_messages),
                        prompt_line,
                        remaining: lines,
                        indented: false,
                        // Full detection is the tests' oracle: it reads
                        // every section from its collected lines.
                        stream: if out.full_detection {
                            None
                        } else {
                            Streamed::of(format)
                        },
                    });
                }
            }
        }
        // The author's prose after a section's indented lines is not the
        // tool's: set aside, the section going on. Only where detection
        // ran and found nothing (a body line continues its section). Where
        // the paste lost all indentation (a mail archive), a paragraph
        // break before the line stands for it: `etc. for the other
        // nodes.` under a flattened `ibv_devinfo`, after its blank line.
        if !body && !blank && !block_here {
            if let Some(o) = open.as_ref() {
                let after_break = i
                    .checked_sub(1)
                    .and_then(|p| stream.get(p))
                    .is_some_and(Line::is_blank);
                let after_aside = aside_at.is_some() && aside_at == i.checked_sub(1);
                // A matrix tells its own lines apart by their words alone
                // ([`crate::parse::topo::may_be_its_line`]): a page that
                // collapsed all white space leaves neither an indent nor
                // a break before the prose under the legend.
                let own_lines_known = matches!(o.format.kind, Kind::TopoMatrix | Kind::TopoP2p);
                if ((o.indented || after_break || own_lines_known)
                    && super::framing::prose_after_output(
                        o.format.kind,
                        line.text(),
                        stream.get(..i).unwrap_or_default(),
                    ))
                    || (o.indented
                        && (after_break || after_aside)
                        && super::framing::sign_off_after_output(o.format.kind, line.text()))
                {
                    aside.push(line.number);
                    aside_at = Some(i);
                    continue;
                }
            }
        }
        match open.as_mut() {
            Some(o) => {
                o.indented |= !blank && line.text().starts_with([' ', '\t']);
                o.lines.push(i, stream);
                if let (Some(s), false, false) = (o.stream.as_mut(), streamed, blank) {
                    s.read(line);
                }
                if !blank {
                    o.remaining = o.remaining.map(|n| n.saturating_sub(1));
                }
                if o.remaining == Some(0) {
                    if let Some(o) = open.take() {
                        finish(o, stream, ctx, out);
                        produced += 1;
                    }
                }
            }
            None => leading.push(line.clone()),
        }
    }
    if let Some(o) = open.take() {
        finish(o, stream, ctx, out);
        produced += 1;
    }
    leftovers(leading, leading_messages, produced, ctx, out);
    set_aside(aside, ctx, out);
}

/// Lists the author's lines set aside after a tool's output (`aside`, in
/// ascending order) as unrecognised, in runs.
fn set_aside(aside: Vec<usize>, ctx: &StreamContext<'_>, out: &mut Output<'_>) {
    for span in spans_of(aside) {
        out.doc.unrecognised.push(Unrecognised {
            span,
            host: ctx.host.clone(),
            reason: "not the output of a supported tool (text after a tool's output)".to_owned(),
        });
    }
}

/// What full detection found at a body line of `open`: nothing, or a block
/// of the open format under a key it has not seen (which only continues the
/// section). Anything else is recorded as a miss of the shortcut.
#[cfg(test)]
fn check_body_line(
    line: &Line<'_>,
    found: Option<&(&'static Format, Block)>,
    open: Option<&Open<'_>>,
    out: &mut Output<'_>,
) {
    let Some((format, block)) = found else {
        return;
    };
    let continues = open.is_some_and(|o| {
        std::ptr::eq(o.format, *format) && !o.keys.contains(&block.key) && block.lines.is_none()
    });
    if !continues {
        out.body_misses.push(format!(
            "line {}: {} block `{}` at {:?}",
            line.number,
            format.name,
            block.key,
            line.text()
        ));
    }
}

/// Lines before the first recognised block: the hinted tool's output if the
/// prompt named a supported tool (it may print nothing recognisable, e.g.
/// `No devices were found`, or nothing at all), otherwise unrecognised.
fn leftovers(
    leading: Vec<Line<'_>>,
    messages: Vec<ToolMessage>,
    produced: usize,
    ctx: &StreamContext<'_>,
    out: &mut Output<'_>,
) {
    let has_text = leading.iter().any(|l| !l.is_blank());
    // A command run on other hosts prints under their prefixes or banners:
    // its prompt alone is no output of the prompt's host (an admin node
    // read as a host with nothing to judge).
    let printed_elsewhere = ctx.prompt.is_some_and(|(_, p)| fans_out(p));
    // A command line alone without a prompt sign and nothing under it
    // (`ibstat` in a notes' code block, then the next command) names the
    // command; it shows no run that printed nothing. Before, it became an
    // empty section ("0 port(s)") of a tool the paste holds no output of.
    let mentioned_only = ctx.prompt.is_some_and(|(_, p)| p.bare) || ctx.heading;
    match ctx.hint {
        Some(format) if has_text || (produced == 0 && !printed_elsewhere && !mentioned_only) => {
            // The author's prose after the tool's indented lines is set
            // aside here too, as in a section whose block was recognised
            // (a trimmed `ibstat` with no `CA type` line lands here).
            let mut indented = false;
            let mut aside: Vec<usize> = Vec::new();
            // Whether the line before was blank or set aside: where a
            // sign-off may begin ([`super::framing::sign_off_after_output`]).
            let mut after_break_or_aside = false;
            // A matrix tells its own lines apart by their words alone, as
            // in a recognised section: the author's `# output` between the
            // command and nvidia-smi's usage error is not the matrix's.
            let own_lines_known = matches!(format.kind, Kind::TopoMatrix | Kind::TopoP2p);
            for (at, line) in leading.iter().enumerate() {
                let above = leading.get(..at).unwrap_or_default();
                let set_aside = (indented || own_lines_known)
                    && !line.is_blank()
                    && (super::framing::prose_after_output(format.kind, line.text(), above)
                        || (after_break_or_aside
                            && super::framing::sign_off_after_output(format.kind, line.text())));
                if set_aside {
                    aside.push(line.number);
                }
                after_break_or_aside = line.is_blank() || set_aside;
                indented |= !line.is_blank() && line.text().starts_with([' ', '\t']);
            }
            let lines = if aside.is_empty() {
                Collected::Range(0..leading.len())
            } else {
                Collected::Copied(
                    leading
                        .iter()
                        .filter(|l| aside.binary_search(&l.number).is_err())
                        .cloned()
                        .collect(),
                )
            };
            set_aside(aside, ctx, out);
            let open = Open {
                format,
                keys: Keys::default(),
                lines,
                messages,
                prompt_line: ctx.prompt.map(|(n, _)| *n),
                remaining: None,
                indented: false,
                stream: None,
            };
            finish(open, &leading, ctx, out);
        }
        _ => {
            // No section holds them: they keep the host and the program of
            // the chunk they were printed in (`[root@gpu07 ~]# nvidia-smi`
            // then an NVML error), else their failure names neither.
            let prompted = ctx.prompt.and_then(|(_, p)| p.argv.first());
            out.doc.messages.extend(messages.into_iter().map(|m| {
                // Without a prompt, the program the message names itself
                // (`perfquery: iberror: failed: …`).
                let program = prompted.cloned().or_else(|| {
                    let (word, _) = m.text.split_once(": ")?;
                    is_supported_program(word).then(|| word.to_owned())
                });
                ToolMessage {
                    host: ctx.host.clone(),
                    program,
                    source: ctx.source.clone(),
                    ..m
                }
            }));
            let reason = match ctx.prompt {
                Some((_, p)) if !p.command.is_empty() => format!(
                    "output of `{}`, which is not a supported tool (or not in a form it recognises)",
                    p.argv.first().map_or(p.command.as_str(), String::as_str)
                ),
                _ => "not the output of a supported tool".to_owned(),
            };
            for span in spans_of(leading.iter().filter(|l| !l.is_blank()).map(|l| l.number)) {
                out.doc.unrecognised.push(Unrecognised {
                    span,
                    host: ctx.host.clone(),
                    reason: reason.clone(),
                });
            }
        }
    }
}

/// Whether `line`, where `format` would begin a block, is a GPU header of
/// the open `nvidia-smi nvlink` listing instead: `nvidia-smi -L` prints the
/// same `GPU N: NAME (UUID: …)` line, and a header with nothing under it
/// at the end of a listing (a GPU without NVLink, or the paste cut right
/// after it) read as `-L` output hid the cut and counted the GPU twice.
/// nvidia-smi prints no `-L` list inside its nvlink output: a new command
/// has a prompt, which ends the section. (nvlink's own detector still
/// begins a new listing at a GPU it has seen.)
fn gpu_header_of_open_listing(open: Option<&Open<'_>>, format: &Format, line: &Line<'_>) -> bool {
    format.kind == Kind::SmiList
        && open.is_some_and(|o| o.format.kind == Kind::Nvlink)
        && crate::parse::nvlink::is_gpu_header(line.text())
}

/// The format whose block starts here; the prompt's hint is tried first,
/// then every format in table order. Only the detectors of formats whose
/// blocks can start with the line's first byte run ([`Spec::starts`]): the
/// same answer as running them all, for a table look-up per line instead of
/// twenty detectors.
///
/// [`Spec::starts`]: crate::parse::Spec
fn detect(lines: &[Line<'_>], hint: Option<&'static Format>) -> Option<(&'static Format, Block)> {
    let first = first_byte(lines.first()?.text())?;
    let candidates = formats_starting_with(first);
    if let Some(f) = hint.filter(|f| (f.starts)(first)) {
        if let Some(block) = (f.detect)(lines) {
            return Some((f, block));
        }
    }
    FORMATS
        .iter()
        .enumerate()
        .filter(|(i, f)| candidates & (1 << i) != 0 && !hint.is_some_and(|h| std::ptr::eq(h, *f)))
        .find_map(|(_, f)| (f.detect)(lines).map(|b| (f, b)))
}

/// Parses a collected section, whose lines are `open.lines` of `from`, and
/// adds it to the document.
fn finish(open: Open<'_>, from: &[Line<'_>], ctx: &StreamContext<'_>, out: &mut Output<'_>) {
    let lines = open.lines.of(from);
    // A stream's lines ascend: its first and last lines with text bound
    // the section's (no need to test every line in between).
    let first_text = lines.iter().find(|l| !l.is_blank());
    let last_text = lines.iter().rev().find(|l| !l.is_blank());
    let numbers = first_text
        .into_iter()
        .chain(last_text)
        .map(|l| l.number)
        .chain(open.prompt_line)
        .chain(open.messages.iter().map(|m| m.line));
    let (first, last) = numbers.fold((usize::MAX, 0), |(lo, hi), n| (lo.min(n), hi.max(n)));
    let mut span = if last == 0 {
        match lines.first() {
            Some(l) => l.span(),
            None => return,
        }
    } else {
        LineSpan::new(first, last)
    };
    // Every section found is counted, read or not, so that the limit is
    // reported once, at the first section past it.
    out.sections += 1;
    if out.sections > out.options.max_sections {
        if out.sections == out.options.max_sections + 1 {
            out.doc.warnings.push(limit_warning(
                span,
                format!(
                    "more than {} sections; the rest of the input is listed as unrecognised",
                    out.options.max_sections
                ),
            ));
        }
        out.doc.unrecognised.push(Unrecognised {
            span,
            host: ctx.host.clone(),
            reason: "section limit reached".to_owned(),
        });
        return;
    }
    let mut parsed = match open.stream {
        Some(stream) => stream.finish(lines),
        None => (open.format.parse)(lines),
    };
    if let Some((number, word)) = &out.last_line {
        if mark_cut_line(&mut parsed.warnings, lines, *number, word) {
            // The line is this section's now: not also unrecognised.
            out.doc
                .unrecognised
                .retain(|u| u.span != LineSpan::line(*number));
            span = span.join(LineSpan::line(*number));
        }
    }
    // Only the output the prompt's command printed learns from its words.
    if let (Some((_, prompt)), Some(hint)) = (ctx.prompt, ctx.hint) {
        if hint.kind == open.format.kind {
            let argv: Vec<&str> = prompt.argv.iter().map(String::as_str).collect();
            parsed.value.attach_command(&argv);
        }
    }
    // The banner a loop over devices printed names the device of the
    // mlxlink output under it, where the command did not (`-d $d`, or no
    // prompt at all).
    if let (Some(device), crate::parse::SectionData::Mlxlink(m)) = (ctx.device, &mut parsed.value) {
        crate::parse::mlxlink::attach_banner_device(m, device);
    }
    // Relative file names in the output are the prompt's directory's.
    if let (Some((_, prompt)), crate::parse::SectionData::SysfsCounters(perf)) =
        (ctx.prompt, &mut parsed.value)
    {
        if let Some(dir) = &prompt.dir {
            crate::parse::sysfs_counters::attach_dir(perf, dir);
        }
    }
    // A syslog or journal line names its host (`Dec 07 10:00:00 gpu07
    // kernel: …`): the host of the kernel log when nothing else named one.
    let host = match (&ctx.host, &parsed.value) {
        (None, crate::parse::SectionData::KernelLog(log)) => log.syslog_host.clone(),
        _ => ctx.host.clone(),
    };
    let mut section = Section {
        kind: open.format.kind,
        host,
        command: ctx
            .prompt
            .map(|(_, p)| p.command.clone())
            .filter(|c| !c.is_empty()),
        source: ctx.source.clone(),
        span,
        data: parsed.value,
        warnings: parsed.warnings,
        messages: open.messages,
    };
    // An NCCL log names its hosts on every line: a log of several hosts
    // (one launcher's output for all nodes) is each host's section. The
    // prompt's host is where the job was launched (a login node), not the
    // host of the ranks; a pdsh prefix or a banner names the host whose
    // output this is, and stays.
    let host_of_prompt = ctx.prompt.is_some_and(|(_, p)| p.host == ctx.host);
    if ctx.host.is_none() || host_of_prompt {
        // A log of one host is that host's section, as it stands.
        if let Some(host) = single_nccl_host(&section) {
            section.host = Some(host);
            emit(out, section);
            return;
        }
        // Each host's copy counts against the section limit: past it, the
        // log stays one section.
        if let Some(per_host) = nccl_sections_per_host(&section)
            .filter(|s| out.sections + s.len() - 1 <= out.options.max_sections)
        {
            out.sections += per_host.len().saturating_sub(1);
            for each in per_host {
                emit(out, each);
            }
            return;
        }
    }
    // node_exporter's `instance` label (dcgm-exporter's, else its
    // `Hostname`) names the host of each series (a query's result across
    // the fleet): each instance is that host's
    // section, the first keeping the section's lines set aside, warnings
    // and messages. A pdsh prefix or a banner names the host, and stays.
    if ctx.host.is_none() || host_of_prompt {
        if let Some(per_host) = node_exporter_sections_per_host(&mut section)
            .or_else(|| dcgm_exporter_sections_per_host(&mut section))
            .or_else(|| kernel_log_sections_per_host(&mut section, lines))
            .filter(|s| out.sections + s.len() - 1 <= out.options.max_sections)
        {
            out.sections += per_host.len().saturating_sub(1);
            for each in per_host {
                emit(out, each);
            }
            return;
        }
    }
    // `dshbak -c` and `clush -b` fold the hosts whose output is the same
    // under one banner (`gpu[01-03]`): it is each of those hosts' output.
    // Read as one host, three hosts counted as one, and a fleet rule's
    // majority (firmware, peers) was a majority of banners, not of hosts.
    // Each copy counts against the section limit: past it, the section
    // stays one, named by its banner.
    let group = ctx
        .host
        .as_deref()
        .and_then(super::hosts::expand_hostlist)
        .filter(|hosts| out.sections + hosts.len() - 1 <= out.options.max_sections);
    if let Some(hosts) = &group {
        out.sections += hosts.len() - 1;
    }
    match group {
        Some(hosts) => {
            let last = hosts.len().saturating_sub(1);
            let mut section = Some(section);
            for (i, host) in hosts.into_iter().enumerate() {
                // A copy for each host but the last, which takes the section.
                let each_host = if i == last {
                    section.take()
                } else {
                    section.clone()
                };
                if let Some(mut each_host) = each_host {
                    each_host.host = Some(host);
                    emit(out, each_host);
                }
            }
        }
        None => emit(out, section),
    }
}

/// The one host an NCCL log's prefixes name, if they name exactly one.
fn single_nccl_host(section: &Section) -> Option<String> {
    match &section.data {
        crate::parse::SectionData::NcclLog(log) => match log.hosts.as_slice() {
            [host] => Some(host.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// The sections an NCCL log's prefixes name when they name several hosts
/// and the section has no host of its own: one copy per host holding
/// that host's lines, the first also keeping the section's warnings,
/// messages and the program's lines (`None` for any other section; one
/// host is [`single_nccl_host`]'s).
fn nccl_sections_per_host(section: &Section) -> Option<Vec<Section>> {
    let crate::parse::SectionData::NcclLog(log) = &section.data else {
        return None;
    };
    match log.hosts.as_slice() {
        [] | [_] => None,
        hosts => Some(
            hosts
                .iter()
                .enumerate()
                .map(|(i, host)| {
                    let mut data = log.of_host(host);
                    if i == 0 {
                        data.program_lines.clone_from(&log.program_lines);
                        data.other_nccl_lines = log.other_nccl_lines;
                    }
                    Section {
                        kind: section.kind,
                        host: Some(host.clone()),
                        command: section.command.clone(),
                        source: section.source.clone(),
                        span: section.span,
                        data: crate::parse::SectionData::NcclLog(data),
                        warnings: if i == 0 {
                            section.warnings.clone()
                        } else {
                            Vec::new()
                        },
                        messages: if i == 0 {
                            section.messages.clone()
                        } else {
                            Vec::new()
                        },
                    }
                })
                .collect(),
        ),
    }
}

/// The sections of a node_exporter section whose metrics name their
/// instance: one per instance, named by it (`None` for any other section,
/// or one naming none). Metrics of no instance stay the first section's,
/// under the section's host; the cut the paste ends in is the last's.
fn node_exporter_sections_per_host(section: &mut Section) -> Option<Vec<Section>> {
    let crate::parse::SectionData::NodeExporter(m) = &mut section.data else {
        return None;
    };
    if m.scrapes.iter().all(|s| s.instance.is_none()) {
        return None;
    }
    let scrapes = std::mem::take(&mut m.scrapes);
    let last = scrapes.len().saturating_sub(1);
    let mut other_metrics = std::mem::take(&mut m.other_metrics);
    let mut cut = m.cut.take();
    Some(sections_per_host(
        section,
        scrapes,
        |s| s.instance.clone(),
        |i, scrape| {
            crate::parse::SectionData::NodeExporter(crate::model::node_exporter::NodeExporter {
                scrapes: vec![scrape],
                other_metrics: std::mem::take(&mut other_metrics),
                cut: if i == last { cut.take() } else { None },
            })
        },
    ))
}

/// The sections of a dcgm-exporter section whose metrics name their host
/// (`instance`, else `Hostname`): one per host, as node_exporter's.
fn dcgm_exporter_sections_per_host(section: &mut Section) -> Option<Vec<Section>> {
    let crate::parse::SectionData::DcgmExporter(m) = &mut section.data else {
        return None;
    };
    if m.hosts.iter().all(|h| h.host.is_none()) {
        return None;
    }
    let hosts = std::mem::take(&mut m.hosts);
    let last = hosts.len().saturating_sub(1);
    let mut other_metrics = std::mem::take(&mut m.other_metrics);
    let mut cut = m.cut.take();
    Some(sections_per_host(
        section,
        hosts,
        |h| h.host.clone(),
        |i, h| {
            crate::parse::SectionData::DcgmExporter(crate::model::dcgm_exporter::DcgmExporter {
                hosts: vec![h],
                other_metrics: std::mem::take(&mut other_metrics),
                cut: if i == last { cut.take() } else { None },
            })
        },
    ))
}

/// The sections of a kernel log whose syslog prefixes name several hosts
/// (`Dec  1 10:00:01 node07 kernel: …`, a collector's file): one per host,
/// each read from that host's lines alone
/// ([`parse_per_host`](crate::parse::kernel_log::parse_per_host)), so
/// that a rule judges each host's events apart (`None` for any other
/// section, or a log naming one host or none).
fn kernel_log_sections_per_host(section: &mut Section, lines: &[Line<'_>]) -> Option<Vec<Section>> {
    let crate::parse::SectionData::KernelLog(log) = &mut section.data else {
        return None;
    };
    if log.syslog_hosts.is_empty() {
        return None;
    }
    let hosts = std::mem::take(&mut log.syslog_hosts);
    let logs = crate::parse::kernel_log::parse_per_host(lines, &hosts);
    Some(sections_per_host(
        section,
        logs,
        |l| l.syslog_host.clone(),
        |_, l| crate::parse::SectionData::KernelLog(l),
    ))
}

/// One section per group of a multi-host section (a Prometheus query's
/// result across hosts), named by the group's host or else the section's;
/// the section's warnings and messages go to the first. `data` makes the
/// `i`-th section's data of its group.
fn sections_per_host<T>(
    section: &mut Section,
    groups: Vec<T>,
    host_of: impl Fn(&T) -> Option<String>,
    mut data: impl FnMut(usize, T) -> crate::parse::SectionData,
) -> Vec<Section> {
    let mut warnings = std::mem::take(&mut section.warnings);
    let mut messages = std::mem::take(&mut section.messages);
    groups
        .into_iter()
        .enumerate()
        .map(|(i, group)| Section {
            kind: section.kind,
            host: host_of(&group).or_else(|| section.host.clone()),
            command: section.command.clone(),
            source: section.source.clone(),
            span: section.span,
            data: data(i, group),
            warnings: std::mem::take(&mut warnings),
            messages: std::mem::take(&mut messages),
        })
        .collect()
}

/// Hands `section` to the reader's callback, or keeps it in the document.
fn emit(out: &mut Output<'_>, section: Section) {
    match &mut out.each {
        Some(each) => each(section),
        None => out.doc.sections.push(section),
    }
}

/// What a section's warning about a line says when the input ends inside
/// that line of the tool's output ([`mark_cut_line`]).
pub(crate) const CUT_LINE: &str = "the input ends inside this line of the tool's output";

/// Marks the input's last line with text (`word`: the word set aside from
/// it when the input ends inside it, see [`set_aside_cut_word`]) as cut
/// rather than unreadable when the section's parser could not read it and
/// the line begins like the line before it or an earlier line of its
/// section (`GP` after an nvlink GPU's links; `Link 2: Remote Device 00`
/// under `Link 1: Remote Device 00000000:08:00.0: Link 46`, `  NI` under
/// `  NIC3: mlx5_3`): the paste stopped inside one of the tool's lines, a
/// cut that IN001 names, not a line the tool does not print (IN002); so
/// is a last line that ends inside a `[` it opened ([`ends_inside_bracket`]).
/// A last line of prose (`Any ideas?`) begins like no line of the output
/// and stays unread.
fn mark_cut_line(
    warnings: &mut Vec<Warning>,
    lines: &[Line<'_>],
    number: usize,
    word: &str,
) -> bool {
    // Most sections have no unread line there: the warnings first. A line
    // that was its cut word alone (`\t\t\tmax_mtu`) is blank once the word
    // is set aside: the section has it, but no warning on it.
    let unread = warnings
        .iter()
        .position(|w| w.kind == WarningKind::Unreadable && w.span.contains(number));
    // Without an unread line there, only the section that ends in the
    // set-aside line can hold it: the others are not scanned.
    if unread.is_none() && lines.last().map(|l| l.number) != Some(number) {
        return false;
    }
    let Some(at) = lines.iter().position(|l| l.number == number) else {
        return false;
    };
    let (Some(cut), Some(earlier)) = (lines.get(at), lines.get(..at)) else {
        return false;
    };
    if unread.is_none() && !(cut.is_blank() && earlier.iter().any(|l| !l.is_blank())) {
        return false;
    }
    let whole = format!("{}{word}", cut.text());
    // The line before first, then the section's earlier lines: `GP` after
    // a GPU's link lines begins like the listing's `GPU 0: …` header.
    let begins_like_earlier = earlier
        .iter()
        .rev()
        .filter(|l| !l.is_blank())
        .any(|l| begins_alike(l.text(), &whole));
    if !begins_like_earlier && !ends_inside_bracket(&whole) {
        return false;
    }
    // An unread run ending in the cut line keeps its lines before it.
    if let Some(w) = unread.and_then(|i| warnings.get_mut(i)) {
        if w.span.first_line < number {
            w.span = LineSpan::new(w.span.first_line, number - 1);
        } else if let Some(i) = unread {
            warnings.remove(i);
        }
    }
    warnings.push(Warning::new(
        WarningKind::Truncated,
        LineSpan::line(number),
        format!("{CUT_LINE} (`{}`): not read", whole.trim()),
    ));
    true
}

/// Whether `line` ends inside a `[` it opened: `… [PortXmitWait == 12]
/// [PortRcvData ==`, an `ibqueryerrors` port line the input ends in, whose
/// entries before the cut one were read.
fn ends_inside_bracket(line: &str) -> bool {
    line.rfind('[')
        .is_some_and(|open| line.get(open..).is_some_and(|rest| !rest.contains(']')))
}

/// Whether `cut` begins like `before`: its words but the last have the
/// shapes of `before`'s first words (digits standing for any number), and
/// its last word is the beginning of `before`'s next one.
fn begins_alike(before: &str, cut: &str) -> bool {
    fn shape(word: &str) -> String {
        let mut out = String::with_capacity(word.len());
        for c in word.chars() {
            if !(c.is_ascii_digit() && out.ends_with('9')) {
                out.push(if c.is_ascii_digit() { '9' } else { c });
            }
        }
        out
    }
    let before: Vec<&str> = before.split_whitespace().collect();
    let cut: Vec<&str> = cut.split_whitespace().collect();
    let Some((last, whole)) = cut.split_last() else {
        return false;
    };
    whole.iter().zip(&before).all(|(a, b)| shape(a) == shape(b))
        && before
            .get(whole.len())
            .is_some_and(|next| shape(next).starts_with(&shape(last)))
}

/// `ibwarn: …`, `ibpanic: …`, `iberror: …`, `ibstat: iberror: …`,
/// `src/query_smp.c:199; …`: diagnostics the tools print to stderr.
/// `in_ibdiagnet`: the line is in ibdiagnet's output, whose `-E-`/`-W-`
/// lines are its report, not the firmware tools' failures.
/// `no_gpu`: what nvidia-smi's `No devices were found` is here
/// ([`no_gpu_level`]), asked only of that line.
fn tool_message(
    line: &Line<'_>,
    in_ibdiagnet: bool,
    no_gpu: impl FnOnce() -> Option<MessageLevel>,
) -> Option<ToolMessage> {
    let t = crate::parse::text::trim(line.text());
    let found = crate::parse::text::infiniband_message_level(t)
        .or_else(|| nvidia_message(t))
        .or_else(|| t.eq_ignore_ascii_case(NO_DEVICES).then(no_gpu).flatten())
        .or_else(|| {
            firmware_tools_message(t)
                .filter(|_| !in_ibdiagnet && !crate::parse::ibdiagnet_log::is_check_line(t))
        })
        .or_else(|| shell_message(t))?;
    Some(ToolMessage {
        line: line.number,
        level: found,
        text: t.to_owned(),
        host: None,
        program: None,
        source: None,
    })
}

/// Error and warning lines of NVIDIA's firmware tools (mlxlink, mstflint,
/// mlxconfig print `-E- …` and `-W- …`, mstflint `mft_utils`): an option
/// the device does not support, a device that cannot be opened. Read as
/// output, each was an unread line of the block above it.
fn firmware_tools_message(t: &str) -> Option<MessageLevel> {
    if t.starts_with("-E- ") {
        Some(MessageLevel::Error)
    } else if t.starts_with("-W- ") {
        Some(MessageLevel::Warning)
    } else {
        None
    }
}

/// What the shell prints when the command is not installed: `-bash:
/// ibstat: command not found`, `zsh: command not found: ibstat`, dash's
/// `sh: 1: ibstat: not found`, and Ubuntu's `Command 'ibv_devinfo' not
/// found, but can be installed with:` (an error: the tool never ran), with
/// the `sudo apt install ibverbs-utils` advice under it (a warning line of
/// the same message). Read as output, they were unread lines of the tool
/// that was not there, and the paste's verdict did not say it never ran.
fn shell_message(t: &str) -> Option<MessageLevel> {
    const INSTALL_ADVICE: &[&str] = &[
        "sudo apt install ",
        "sudo apt-get install ",
        "sudo snap install ",
        "sudo dnf install ",
        "sudo yum install ",
        "apt install ",
        "Try: sudo apt install ",
        "See 'snap info ",
    ];
    if missing_command(t).is_some_and(is_supported_program) {
        Some(MessageLevel::Error)
    } else if INSTALL_ADVICE.iter().any(|p| t.starts_with(p)) && t.split_whitespace().count() <= 6 {
        Some(MessageLevel::Warning)
    } else {
        None
    }
}

/// The command a shell's "not found" line names. Only one of the tools
/// we read (or their wrappers) makes it a message of the paste: another
/// program's (`mlxfwmanager: command not found`) stays what it was, a line
/// of that program's unsupported output.
fn missing_command(t: &str) -> Option<&str> {
    let word = if let Some(rest) = t.strip_suffix(": command not found") {
        rest.rsplit(": ").next()
    } else if let Some(rest) = t.strip_prefix("zsh: command not found: ") {
        Some(rest)
    } else if t.starts_with("sh: ") {
        t.strip_suffix(": not found")?.rsplit(": ").next()
    } else {
        let rest = t.strip_prefix("Command '")?;
        let (name, after) = rest.split_once('\'')?;
        after.starts_with(" not found").then_some(name)
    }?;
    let word = word.trim();
    (!word.is_empty() && !word.contains(' ')).then_some(word)
}

/// Whether `program` is one whose output a format reads (`nvidia-smi`,
/// `dcgmi` and `rdma` need their subcommand for that).
fn is_supported_program(program: &str) -> bool {
    let base = program.rsplit('/').next().unwrap_or(program);
    matches!(base, "nvidia-smi" | "dcgmi" | "rdma")
        || crate::parse::format_of_command(&[base]).is_some()
}

/// What nvidia-smi prints in place of its output when the driver lists no
/// GPU at all.
const NO_DEVICES: &str = "No devices were found";

/// What a `No devices were found` line in this chunk is, under a prompt
/// running `nvidia-smi` (plain, `topo -m`, `-q` …): nvidia-smi's failure
/// (an error: the driver lists no GPU at all), or, where the command chose
/// a GPU (`-i N`), a warning that no GPU has that index (no fault of the
/// host). In `nvidia-smi nvlink` output it is the nvlink reader's note
/// (`nvidia-smi nvlink -i 7 -s` on a one-GPU host). Before, under plain
/// `nvidia-smi` it was an unread line of "a tool that is not supported" and
/// the verdict "nothing to analyse"; under `topo -m` an empty matrix and an
/// unread line; under `-i 9 -q` a query field cut before its value.
fn no_gpu_level(ctx: &StreamContext<'_>, open: Option<&Open<'_>>) -> Option<MessageLevel> {
    let (_, prompt) = ctx.prompt?;
    let in_nvlink = ctx.hint.is_some_and(|h| h.kind == Kind::Nvlink)
        || open.is_some_and(|o| o.format.kind == Kind::Nvlink);
    if in_nvlink || prompt.argv.first().is_none_or(|p| p != "nvidia-smi") {
        return None;
    }
    let chooses_gpu = prompt.argv.iter().any(|w| {
        w == "-i"
            || w == "--id"
            || w.starts_with("--id=")
            || w.strip_prefix("-i")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    });
    Some(if chooses_gpu {
        MessageLevel::Warning
    } else {
        MessageLevel::Error
    })
}

/// Error lines of nvidia-smi and dcgmi (`ERROR: Option … is not
/// recognized.`, `Failed to initialize NVML: …`, `Error: Unable to …`,
/// `NVIDIA-SMI has failed because …`). Only these exact openings: data
/// lines of the supported formats never start with them.
fn nvidia_message(t: &str) -> Option<MessageLevel> {
    const ERRORS: &[&str] = &[
        "ERROR: ",
        "Error: ",
        "Failed to ",
        "NVIDIA-SMI has failed",
        "Unable to determine the device handle",
        // Usage errors: `Option "-p2p" is missing its value.`, then
        // `Please run 'nvidia-smi -h' for help.`
        "Option \"",
        "Invalid combination of input arguments",
        "Please run 'nvidia-smi -h'",
        // `nvidia-smi dmon` and `pmon` on a GPU without the feature.
        "Not supported on the device",
    ];
    const WARNINGS: &[&str] = &["Warning: Unable to retrieve"];
    // `The -i command line argument must be used in conjunction with -n
    // or -p.` (`topo -m -i 0`, cfregly/ai-performance-engineering#8): the
    // rest is searched only after the opening, which prose rarely has.
    let misused_option = || t.starts_with("The -") && t.contains(" command line argument ");
    if ERRORS.iter().any(|p| t.starts_with(p)) || misused_option() {
        Some(MessageLevel::Error)
    } else if WARNINGS.iter().any(|p| t.starts_with(p)) {
        Some(MessageLevel::Warning)
    } else {
        None
    }
}

#[cfg(test)]
mod shell_message_tests {
    use super::{missing_command, shell_message};
    use crate::input::MessageLevel;

    #[test]
    fn the_shells_not_found_lines_name_their_command() {
        for (line, name) in [
            ("-bash: ibstat: command not found", "ibstat"),
            ("bash: line 1: perfquery: command not found", "perfquery"),
            ("sudo: ibv_devinfo: command not found", "ibv_devinfo"),
            ("zsh: command not found: nvidia-smi", "nvidia-smi"),
            ("sh: 1: iblinkinfo: not found", "iblinkinfo"),
            (
                "Command 'ibv_devinfo' not found, but can be installed with:",
                "ibv_devinfo",
            ),
            ("Command 'ibstat' not found, did you mean:", "ibstat"),
        ] {
            assert_eq!(missing_command(line), Some(name), "{line}");
            assert_eq!(shell_message(line), Some(MessageLevel::Error), "{line}");
        }
        // Another program's is not a message of the paste; nor is a tool
        // line that happens to end alike.
        for line in [
            "mlxfwmanager: command not found",
            "ibstat shows the port is not found",
            "\tNode description: not found",
            "Command 'ibstat' was run",
        ] {
            assert_eq!(shell_message(line), None, "{line}");
        }
        assert_eq!(
            shell_message("sudo apt install ibverbs-utils"),
            Some(MessageLevel::Warning)
        );
    }
}

#[cfg(test)]
mod file_header_tests {
    use super::host_of_file;
    use crate::input::{read_all, ReadOptions};

    #[test]
    fn a_file_header_names_the_host_of_what_follows() {
        let paste = "==> node07.txt <==\nCA 'mlx5_0'\n\tCA type: MT4123\n\tPort 1:\n\t\tState: Active\n\
                     ==> node08/ibstat.txt <==\nCA 'mlx5_0'\n\tCA type: MT4123\n\tPort 1:\n\t\tState: Down\n\
                     ==> ibstat.txt <==\n[root@gpu01 ~]# ibstat\nCA 'mlx5_0'\n\tCA type: MT4123\n";
        let doc = read_all(paste, &ReadOptions::default()).unwrap();
        let hosts: Vec<Option<&str>> = doc.sections.iter().map(|s| s.host.as_deref()).collect();
        assert_eq!(hosts, [Some("node07"), Some("node08"), Some("gpu01")]);
    }

    #[test]
    fn tool_named_files_imply_no_host() {
        for name in [
            "ibstat.txt",
            "nvlink-errors.log",
            "topo.txt",
            "perfquery",
            "paste.txt",
            "",
        ] {
            assert_eq!(host_of_file(name), None, "{name}");
        }
        assert_eq!(
            host_of_file("dumps/gpu-01/nvlink.txt").as_deref(),
            Some("gpu-01")
        );
        assert_eq!(host_of_file("login01.log").as_deref(), Some("login01"));
    }
}

#[cfg(test)]
mod collected_tests {
    use crate::input::{read_all, ReadOptions};

    /// A tool message inside a section is the section's message, not one
    /// of its lines: the parser never reads it (the lines around it are
    /// no longer one range of the stream, and are copied).
    #[test]
    fn a_message_inside_a_section_is_not_given_to_its_parser() {
        let paste = "CA 'mlx5_0'\n\tCA type: MT4123\n\tPort 1:\n\t\tState: Active\n\
                     ibwarn: [1] umad_release_ca: release mlx5_0\n\t\tPhysical state: LinkUp\n";
        let doc = read_all(paste, &ReadOptions::default()).unwrap();
        assert_eq!(doc.sections.len(), 1, "{doc:#?}");
        let section = &doc.sections[0];
        assert_eq!(section.messages.len(), 1);
        assert_eq!(section.messages[0].line, 5);
        assert!(section.warnings.is_empty(), "{:?}", section.warnings);
        assert_eq!((section.span.first_line, section.span.last_line), (1, 6));
    }
}

#[cfg(test)]
mod body_line_tests {
    use super::{split_compact_from, split_with};
    use crate::input::ReadOptions;
    use proptest::prelude::*;

    /// Every file under `dir`, recursively, as text.
    fn texts_under(dir: &std::path::Path, out: &mut Vec<(String, String)>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                texts_under(&path, out);
            } else if let Ok(bytes) = std::fs::read(&path) {
                let text = String::from_utf8_lossy(&bytes).into_owned();
                out.push((path.display().to_string(), text));
            }
        }
    }

    /// Reads `text` with and without the body-line shortcut: the documents
    /// must be equal, and at every body line full detection must find
    /// nothing the shortcut skips. Returns the body lines met.
    fn same_with_and_without_shortcut(name: &str, text: &str) -> usize {
        let options = ReadOptions::default();
        let fast = split_with(text, &options, false);
        let full = split_with(text, &options, true);
        assert!(
            full.body_misses.is_empty(),
            "{name}: detection at body lines: {:?}",
            full.body_misses
        );
        assert_eq!(fast.body_lines, full.body_lines, "{name}");
        assert!(fast.doc == full.doc, "{name}: documents differ");
        fast.body_lines
    }

    /// Every fixture, example, fuzz seed and shared corpus file (the
    /// latter when present beside the repository).
    fn every_sample() -> Vec<(String, String)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut texts = Vec::new();
        for dir in [
            "tests/fixtures",
            "examples",
            "fuzz/corpus",
            "../shared/corpus",
        ] {
            texts_under(&root.join(dir), &mut texts);
        }
        assert!(texts.len() > 100, "fixtures not found");
        texts
    }

    /// On every sample, holding the kept lines compact (as large inputs
    /// are) reads the same document as holding them as they are.
    #[test]
    fn compact_lines_read_as_lines_held_whole() {
        let options = ReadOptions::default();
        let mut compacted = 0;
        let read = |text: &str, compact_from: usize| {
            split_compact_from(text, &options, false, compact_from, None).doc
        };
        for (name, text) in every_sample() {
            let whole = read(&text, usize::MAX);
            let compact = read(&text, 0);
            assert!(compact == whole, "{name}: documents differ");
            compacted += usize::from(!whole.sections.is_empty());
        }
        assert!(compacted > 100, "only {compacted} samples had sections");
    }

    /// On every sample, skipping detection at body lines changes nothing.
    #[test]
    fn body_lines_skip_only_what_detection_would_not_use() {
        let texts = every_sample();
        let body: usize = texts
            .iter()
            .map(|(name, text)| same_with_and_without_shortcut(name, text))
            .sum();
        assert!(body > 5000, "only {body} body lines met");
    }

    /// Lines near the body-line shapes, and lines detectors look for.
    fn vocabulary() -> Vec<&'static str> {
        vec![
            "# Port counters: Lid 2 port 1 (CapMask: 0x5A00)",
            "# Port extended counters: Lid 2 port 1 (CapMask: 0x5A00 CapMask2: 0x0000000)",
            "PortSelect:......................1",
            "CounterSelect:...................0x0000",
            "SymbolErrorCounter:..............0",
            "LinkDownedCounter:...............2",
            "PortXmitData:....................7587792498942",
            "PortRcvData:.....................199964",
            "PortXmitWait:....................630448784",
            "Timestamp:.......................1",
            "Timestamp                                 : Tue Dec  1 12:00:00 2026",
            "Driver Version                            : 550.54.15",
            "GPU0XSYSSYS1:....1",
            "ibwarn: [1234] main: x",
            "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-e3e70682-c209-4cac-629f-6fbed82c07cd)",
            "GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-f3e70682-c209-4cac-629f-6fbed82c07cd)",
            "\t Link 0: Replay Errors: 0",
            "\t Link 0: CRC Errors: 0",
            "\t Link 1: Data Tx: 584268610202 KiB",
            "\t Link 0: 26.562 GB/s",
            "\t Link 1: 26.562 GB/s",
            "\t Link 4: <inactive>",
            "Link 2: 26.562 GB/s",
            "\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity",
            "GPU0\t X \tNV18\tPIX\t0-55\t0",
            "GPU0\t X \tNV18\tNV18\tPIX\t0-55,112-167\t0\t\tN/A",
            "NIC0\tPIX\tNODE\t X ",
            "GPU0\tX\tOK\tOK",
            "\tGPU0\tGPU1",
            " X    = Self",
            "GPU1\tNV18\t X \tSYS\t0-55\t0",
            "CA 'mlx5_0'",
            "\tCA type: MT4129",
            "\tPort 1:",
            "\t\tState: Active",
            "\t\tPhysical state: LinkUp",
            "\t\tRate: 400",
            "\t\tRate: ibwarn",
            "\t\tLink layer: InfiniBand",
            "\tPort 2:",
            "CA: 'mlx5_1'",
            "\tFirmware version: 28.39.1002",
            "Tue Dec  1 22:41:52 UTC 2026",
            "-------------------------------------------------------",
            "Port=1 Lid=0x0012 GUID=0x0002c903000a0b0c Device=4123 Port Name=node007/U1/HCA-1/P1",
            "symbol_error_counter=0x0000",
            "port_rcv_errors_extended=0x0000000000000005",
            "",
        ]
    }

    proptest! {
        #[test]
        fn body_lines_skip_only_what_detection_would_not_use_on_mixed_lines(
            picks in prop::collection::vec(
                prop_oneof![
                    4 => prop::sample::select(vocabulary()).prop_map(str::to_owned),
                    1 => "[A-Za-z0-9:. \t|#'_<>()-]{0,24}",
                ],
                0..40,
            )
        ) {
            let text = picks.join("\n");
            same_with_and_without_shortcut("generated", &text);
        }
    }
}

#[cfg(test)]
mod scan_tests {
    use super::{classify, clean_lines, repair_lines, split_with, Output};
    use crate::input::clean::clean_line;
    use crate::input::{repair, ReadOptions};
    use crate::parse::Line;
    use proptest::prelude::*;

    /// The lines and repairs as read before the one-scan shortcut: every
    /// line through `clean_line`, every line through the repairs, and the
    /// warnings about the input, read by the usual path.
    fn by_every_line(text: &str) -> (Vec<Line<'_>>, Vec<repair::Repair>) {
        let mut lines: Vec<Line<'_>> = text
            .lines()
            .enumerate()
            .map(|(i, raw)| Line {
                number: i + 1,
                text: clean_line(raw),
            })
            .collect();
        let repairs = repair::apply(&mut lines);
        (lines, repairs)
    }

    /// Pieces of damaged pastes: escapes, CR, C0/C1 controls, bytes that
    /// were not UTF-8, quoting, HTML, annotations, elisions, backticks,
    /// prefixes and plain tool lines.
    fn piece() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            "\u{1b}[1;31m",
            "\u{1b}[0m",
            "\u{1b}]0;t\u{7}",
            "\r",
            "\u{85}",
            "\u{9f}",
            "\u{a0}",
            "\u{fffd}",
            "\u{8}",
            "\u{7f}",
            "\u{1}",
            "&lt;",
            "&amp;",
            "<pre>",
            "</pre>",
            "<br>",
            "<span class=\"q\">",
            "</span>",
            "<!-- c -->",
            "&gt;&gt; ",
            "&#62;",
            "<inactive>",
            "\\#",
            "mlx5\\_0",
            "\\",
            "| GPU0 ",
            "|",
            "|---|:-:|",
            "+---+",
            "> ",
            ">",
            ">> ",
            "//",
            "// ",
            "...",
            "…",
            "[...]",
            "[snip]",
            "`",
            "```",
            " <-- this",
            " (= 212.5 Gb/s)",
            " ←",
            "——————>>",
            "---->",
            "<?xml version=\"1.0\"?>",
            "(",
            ")",
            "PortXmitData:....1",
            "\t Link 0: 26.562 GB/s",
            "GPU 0: NVIDIA H100 (UUID: GPU-1)",
            "CA 'mlx5_0'",
            "node01: ",
            " ",
            "\t",
            "x",
            "é",
            ".",
            "[",
            "==> a.txt <==",
            "",
        ])
    }

    /// Pieces of framing lines and near misses, with the damage that may
    /// hide or change them.
    fn framing_piece() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            "$ ",
            "$",
            "# ",
            "ibstat",
            "[root@node07 ~]# ",
            "user@node07:~$ ",
            "node07:~ % ",
            "(venv) ",
            "```",
            "~~~",
            "---",
            "----------",
            "==> ",
            " <==",
            "a.txt",
            "[exit 0]",
            "[exit ",
            "]",
            " ",
            "\t",
            "\u{a0}",
            "\u{3000}",
            "\u{1b}[0m",
            "\r",
            "> ",
            "&gt; ",
            "`",
            "...",
            "x",
            "PortXmitData:....1",
            "",
        ])
    }

    fn paste() -> impl Strategy<Value = String> {
        paste_of(piece())
    }

    fn paste_of(piece: impl Strategy<Value = &'static str>) -> impl Strategy<Value = String> {
        (
            prop::collection::vec(
                (
                    prop::collection::vec(piece, 0..5),
                    prop::sample::select(vec!["\n", "\r\n"]),
                ),
                0..12,
            ),
            any::<bool>(),
        )
            .prop_map(|(lines, cut)| {
                let mut text: String = lines
                    .iter()
                    .map(|(pieces, end)| pieces.concat() + end)
                    .collect();
                if cut {
                    text.pop();
                }
                text
            })
    }

    /// The lines and repairs of the one scan, with the lines held compact
    /// or as they are.
    fn read_fast(text: &str, compact: bool) -> (Vec<Line<'_>>, Vec<repair::Repair>) {
        let options = ReadOptions::default();
        let mut out: Output<'_> = split_with("", &options, false);
        let (mut lines, candidates, _) = clean_lines(text, compact, &mut out);
        let repairs = repair_lines(&mut lines, &candidates);
        let len = lines.len();
        (lines.take(0..len), repairs)
    }

    /// Quoted runs are told by every line around them, HTML-escaped
    /// quoting too (`&gt;` is a quote mark only once decoded): lines apart
    /// are not taken for a run. Each text here has three quoted lines with
    /// an unquoted line between them, so no run of three.
    #[test]
    fn quoted_lines_apart_are_repaired_as_among_all_lines() {
        for text in [
            "> a\nx\n> b\n> c\n",
            "&gt; a\nx\n&gt; b\n&gt; c\n",
            "<span>&gt; a</span>\nx\n&gt;&gt; b\n&gt; c\n",
        ] {
            let (every, every_repairs) = by_every_line(text);
            for compact in [false, true] {
                let (fast, repairs) = read_fast(text, compact);
                assert_eq!(fast, every, "{text:?}");
                assert_eq!(repairs, every_repairs, "{text:?}");
                assert!(fast.iter().any(|l| l.text().contains('>')), "{text:?}");
            }
        }
    }

    proptest! {
        /// The one scan's lines, cleaning and repair candidates give the
        /// same lines and repairs as cleaning and testing every line.
        #[test]
        fn one_scan_reads_like_every_line(text in paste(), compact in any::<bool>()) {
            let (fast, fast_repairs) = read_fast(&text, compact);
            let (mut slow, slow_repairs) = by_every_line(&text);
            // The cut-word rule changes the last line on both paths alike;
            // compare with it applied to the slow lines too.
            if !text.ends_with('\n') && !text.is_empty() {
                let options = ReadOptions::default();
                let mut out: Output<'_> = split_with("", &options, false);
                let (mut cut, _, _) = clean_lines(&text, false, &mut out);
                let cut = cut.take(0..cut.len());
                let mut plain: Vec<Line<'_>> = text
                    .lines()
                    .enumerate()
                    .map(|(i, raw)| Line { number: i + 1, text: clean_line(raw) })
                    .collect();
                if let (Some(last), Some(cut_last)) = (plain.last_mut(), cut.last()) {
                    last.text = cut_last.text.clone();
                }
                let repairs = repair::apply(&mut plain);
                prop_assert_eq!(&fast, &plain);
                prop_assert_eq!(&fast_repairs, &repairs);
                slow = plain;
            } else {
                prop_assert_eq!(&fast, &slow);
                prop_assert_eq!(&fast_repairs, &slow_repairs);
            }
            prop_assert_eq!(fast.len(), slow.len());
        }
    }

    proptest! {
        /// The bytewise test of a banner's opening line says what
        /// `trim_start` says, whatever blanks (Unicode ones too) lead.
        #[test]
        fn opens_with_equals_is_trim_start(
            text in "[ \t\u{0B}\u{0C}\r\u{85}\u{A0}\u{2003}\u{3000}]{0,4}[=a ═é]{0,3}",
        ) {
            prop_assert_eq!(super::opens_with_equals(&text), text.trim_start().starts_with('='), "{:?}", text);
        }
    }

    proptest! {
        /// Every line left unclassified by the input scan is one that
        /// `classify` finds no framing in, after cleaning, repairs and the
        /// cut last word.
        #[test]
        fn lines_left_unclassified_are_not_framing(
            text in prop_oneof![paste_of(framing_piece()), paste()],
        ) {
            let options = ReadOptions::default();
            let mut out: Output<'_> = split_with("", &options, false);
            let (mut lines, candidates, may_frame) = clean_lines(&text, false, &mut out);
            repair_lines(&mut lines, &candidates);
            prop_assert_eq!(may_frame.len(), lines.len());
            for (text, may) in lines.texts().zip(&may_frame) {
                if !may {
                    prop_assert_eq!(classify(text), None, "{:?}", text);
                }
            }
        }
    }

    proptest! {
        #[test]
        fn line_ends_are_counted(text in "[a\n\r]{0,600}") {
            prop_assert_eq!(super::line_ends(&text), text.matches('\n').count());
        }
    }

    #[test]
    fn clean_lines_stay_borrowed_and_untested_by_repairs() {
        let text = "CA 'mlx5_0'\n\tPort 1:\nPortXmitData:....1\n";
        let (mut lines, candidates, _) = clean_lines(
            text,
            false,
            &mut split_with("", &ReadOptions::default(), false),
        );
        assert!(lines
            .take(0..lines.len())
            .iter()
            .all(|l| matches!(l.text, std::borrow::Cow::Borrowed(_))));
        assert!(candidates.is_empty());
        // `(` alone makes a candidate only where `(= …)` or `(...)` may be
        // undone: not in a header's `(UUID: …)`.
        let (_, candidates, _) = clean_lines(
            "x\n> a\nGPU 0 (x)\n...\nb\u{1b}[0m\nGPU 1 (= x)\n",
            false,
            &mut split_with("", &ReadOptions::default(), false),
        );
        assert_eq!(candidates, [1, 3, 5]);
    }
}

#[cfg(test)]
mod group_tests {
    use super::{group_by_host, same_host};
    use crate::parse::Line;
    use proptest::prelude::*;
    use std::collections::HashMap;
    use std::rc::Rc;

    /// The grouping before streams were ranges of one table: a vector per
    /// host, lines pushed in order, hosts in order of first appearance.
    fn by_copying<'a>(
        hosts: &[Option<Rc<str>>],
        lines: &[Line<'a>],
    ) -> Vec<(Option<Rc<str>>, Vec<Line<'a>>)> {
        let mut streams: Vec<(Option<Rc<str>>, Vec<Line<'a>>)> = Vec::new();
        let mut index: HashMap<Option<Rc<str>>, usize> = HashMap::new();
        for (host, line) in hosts.iter().zip(lines) {
            let slot = *index.entry(host.clone()).or_insert_with(|| {
                streams.push((host.clone(), Vec::new()));
                streams.len() - 1
            });
            if let Some((_, l)) = streams.get_mut(slot) {
                l.push(line.clone());
            }
        }
        streams
    }

    proptest! {
        /// Streams as ranges (in place, or of a regrouped table) hold the
        /// lines the copied streams held, for runs in order or interleaved.
        #[test]
        fn streams_are_the_copied_streams(picks in prop::collection::vec(0usize..5, 0..60)) {
            let names: Vec<Option<Rc<str>>> = vec![
                None,
                Some(Rc::from("node01")),
                Some(Rc::from("node02")),
                Some(Rc::from("node03")),
                Some(Rc::from("node04")),
            ];
            let hosts: Vec<Option<Rc<str>>> =
                picks.iter().map(|&p| names.get(p).cloned().flatten()).collect();
            let texts: Vec<String> = (0..hosts.len()).map(|i| format!("line {i}")).collect();
            let lines: Vec<Line<'_>> = texts
                .iter()
                .enumerate()
                .map(|(i, t)| Line::new(i + 1, t))
                .collect();
            let mut runs: Vec<(Option<Rc<str>>, usize)> = Vec::new();
            for host in &hosts {
                match runs.last_mut() {
                    Some((last, n)) if same_host(last, host) => *n += 1,
                    _ => runs.push((host.clone(), 1)),
                }
            }
            let expected = by_copying(&hosts, &lines);
            let indexes: Vec<usize> = (0..lines.len()).collect();
            let (streams, grouped) = group_by_host(runs, 0..lines.len());
            let table: &[usize] = grouped.as_deref().unwrap_or(&indexes);
            let got: Vec<(Option<Rc<str>>, Vec<Line<'_>>)> = streams
                .into_iter()
                .map(|(h, r)| {
                    let picked = table.get(r).unwrap_or_default();
                    (h, picked.iter().filter_map(|&i| lines.get(i).cloned()).collect())
                })
                .collect();
            prop_assert_eq!(got, expected);
        }
    }
}

#[cfg(test)]
mod plain_line_tests {
    use super::super::framing::may_open_framing;
    use super::*;
    use proptest::prelude::*;

    /// The tests [`plain_line_tests`] replaced, one indent scan each.
    fn oracle(text: &str, bits: u8) -> (bool, bool) {
        let candidate = bits & class::REPAIR_NOT_PAREN != 0
            || (bits & class::REPAIR != 0 && repair::may_change_paren(text))
            || repair::may_change_plain(text);
        let frame = candidate || bits & class::PROMPT != 0 || may_open_framing(text);
        (candidate, frame)
    }

    proptest! {
        /// One shared indent scan answers as the two did, on lines without
        /// control bytes (indents of spaces, tabs and Unicode white space,
        /// every opening either test looks for).
        #[test]
        fn one_indent_scan_answers_as_two(
            text in "[ \t\u{a0}\u{3000}]{0,4}[./\\[`~=\\-(#$a\u{e9}\u{2014} ]{0,3}[ (=a/]{0,4}",
            bits in proptest::sample::select(vec![
                0,
                class::REPAIR,
                class::REPAIR | class::REPAIR_NOT_PAREN,
                class::PROMPT,
                class::REPAIR | class::PROMPT,
            ]),
        ) {
            prop_assert_eq!(plain_line_tests(&text, bits), oracle(&text, bits));
        }
    }
}
