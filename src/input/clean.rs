//! Cleaning raw terminal text: line endings, ANSI escapes, control bytes,
//! and bytes that are not UTF-8.

use crate::diag::{Warning, WarningKind};
use crate::error::Error;
use crate::span::spans_of;
use std::borrow::Cow;

/// Removes a trailing `\r`, ANSI escape sequences (colours, underline,
/// cursor moves, OSC titles), backspace overstrikes and other control
/// characters except tabs. Borrowed when nothing needed removing.
#[must_use]
pub fn clean_line(raw: &str) -> Cow<'_, str> {
    let raw = raw.strip_suffix('\r').unwrap_or(raw);
    if !has_control(raw) {
        return Cow::Borrowed(raw);
    }
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => skip_escape(&mut chars),
            '\u{8}' => {
                out.pop();
            }
            '\t' => out.push('\t'),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Whether `raw` holds a control character other than tab: C0 (below
/// 0x20), DEL, or C1 (U+0080–U+009F, bytes `C2 80`–`C2 9F`). Scans bytes,
/// so that the common clean line is not decoded character by character.
fn has_control(raw: &str) -> bool {
    let bytes = raw.as_bytes();
    bytes.iter().enumerate().any(|(i, &b)| {
        (b < 0x20 && b != b'\t')
            || b == 0x7f
            || (b == 0xc2 && bytes.get(i + 1).is_some_and(|n| (0x80..=0x9f).contains(n)))
    })
}

/// What one byte may mean to the cleaning and repair passes (bits of
/// [`class_of`]).
pub(crate) mod class {
    /// C0 control bytes but tab (CR and ESC among them), DEL, and `C2`
    /// (the first byte of a C1 control): [`clean_line`](super::clean_line)
    /// may change a line holding one.
    pub(crate) const CONTROL: u8 = 1;
    /// `&` `<` `>` `(` `` ` `` `\` and `E2` (the first byte of `←`, `…`,
    /// `—`): a per-line repair needs one (see `repair::may_need_repair`).
    pub(crate) const REPAIR: u8 = 2;
    /// `\n`.
    pub(crate) const NEWLINE: u8 = 4;
    /// The [`REPAIR`] bytes but `(`: `(` is in the headers of perfquery
    /// and `nvidia-smi nvlink` (`(CapMask: …)`, `(UUID: …)`), where only
    /// its own two repairs could apply (see `repair::may_change_paren`);
    /// a line with one of these may need any repair.
    pub(crate) const REPAIR_NOT_PAREN: u8 = 8;
    /// `$` `#` `%`: every shell prompt holds one (see `framing::may_frame`).
    pub(crate) const PROMPT: u8 = 16;
}

/// The [`class`] bits of one byte.
const fn class_of(byte: u8) -> u8 {
    let mut bits = 0;
    if (byte < 0x20 && byte != b'\t' && byte != b'\n') || byte == 0x7f || byte == 0xc2 {
        bits |= class::CONTROL;
    }
    if matches!(byte, b'&' | b'<' | b'>' | b'(' | b'`' | b'\\' | 0xe2) {
        bits |= class::REPAIR;
    }
    if matches!(byte, b'&' | b'<' | b'>' | b'`' | b'\\' | 0xe2) {
        bits |= class::REPAIR_NOT_PAREN;
    }
    if matches!(byte, b'$' | b'#' | b'%') {
        bits |= class::PROMPT;
    }
    if byte == b'\n' {
        bits |= class::NEWLINE;
    }
    bits
}

/// [`class_of`] every byte value, for the one scan of the input that finds,
/// per line, whether it may need cleaning or repair. Built at compile time
/// (a `OnceLock` would be asked on every line).
const BYTE_CLASSES: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut rest: &mut [u8] = &mut table;
    let mut byte: u8 = 0;
    while let [slot, tail @ ..] = rest {
        *slot = class_of(byte);
        byte = byte.wrapping_add(1);
        rest = tail;
    }
    table
};

/// The lines of `text` as [`str::lines`] cuts them, each with the
/// [`class`] bits of its bytes or-ed together (a `\r` before the line end
/// counts as [`class::CONTROL`]). The line ends are found by `memchr`
/// (a vector search) and each line's bits by [`classes_of`], instead of
/// one loop testing every byte for a line end too. A line whose bits hold
/// neither `CONTROL` nor `REPAIR` (most lines of tool output) is read as
/// it stands, without [`clean_line`]'s or the repairs' own scans.
pub(crate) fn classified_lines(text: &str) -> impl Iterator<Item = (&str, u8)> {
    let bytes = text.as_bytes();
    let mut ends = memchr::memchr_iter(b'\n', bytes);
    let mut start = 0;
    std::iter::from_fn(move || {
        let (end, next) = match ends.next() {
            Some(newline) => (newline, newline + 1),
            // The last line, when the text does not end with a line end.
            None if start < bytes.len() => (bytes.len(), bytes.len()),
            None => return None,
        };
        let bits = classes_of(bytes.get(start..end).unwrap_or_default());
        let mut line_end = end;
        if next > end && line_end > start && bytes.get(line_end - 1) == Some(&b'\r') {
            line_end -= 1;
        }
        let line = text.get(start..line_end).unwrap_or_default();
        start = next;
        Some((line, bits))
    })
}

/// The [`class`] bits of the bytes of one line (which holds no `\n`),
/// or-ed together four bytes a step: the look-ups are independent, and
/// the loop has no test but its bound.
fn classes_of(line: &[u8]) -> u8 {
    let class = |b: u8| BYTE_CLASSES.get(usize::from(b)).copied().unwrap_or(0);
    let mut quads = line.chunks_exact(4);
    let mut bits = 0u8;
    for quad in &mut quads {
        if let [a, b, c, d] = *quad {
            bits |= class(a) | class(b) | class(c) | class(d);
        }
    }
    quads
        .remainder()
        .iter()
        .fold(bits, |bits, &b| bits | class(b))
}

/// [`clean_line`] of a line [`classified_lines`] gave with `bits`: the line
/// itself, without another scan, when it holds no control byte.
#[must_use]
pub(crate) fn clean_classified(raw: &str, bits: u8) -> Cow<'_, str> {
    if bits & class::CONTROL == 0 {
        Cow::Borrowed(raw)
    } else {
        clean_line(raw)
    }
}

/// Skips the rest of an escape sequence after ESC.
fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    match chars.next() {
        // CSI: parameters and intermediates, then one final byte.
        Some('[') => {
            for c in chars.by_ref() {
                if ('\u{40}'..='\u{7e}').contains(&c) {
                    break;
                }
            }
        }
        // OSC: up to BEL or ESC \.
        Some(']') => {
            while let Some(c) = chars.next() {
                if c == '\u{7}' {
                    break;
                }
                if c == '\u{1b}' {
                    chars.next();
                    break;
                }
            }
        }
        // Two-byte sequences such as ESC ( B: skip one more.
        Some('(' | ')') => {
            chars.next();
        }
        _ => {}
    }
}

/// How much of a sample may be NUL or other non-text bytes before the input
/// is treated as a binary file rather than damaged text.
const BINARY_FRACTION: f64 = 0.10;

/// The C0 control bytes text may hold (bit per byte value): tab, LF, CR,
/// ESC, backspace: the test oracle of [`odd_bytes`].
#[cfg(test)]
const TEXT_CONTROLS: u32 = 1 << 0x09 | 1 << 0x0a | 1 << 0x0d | 1 << 0x1b | 1 << 0x08;

/// Decodes bytes as UTF-8. Invalid sequences become U+FFFD and NUL bytes are
/// dropped, each reported with the lines they were on; input that is mostly
/// non-text is refused as binary.
///
/// # Errors
/// [`Error::Binary`] when more than a tenth of the first 8 KiB is NUL or
/// control bytes other than tab, CR, LF, ESC, backspace.
pub fn decode(bytes: &[u8]) -> Result<(Cow<'_, str>, Vec<Warning>), Error> {
    let sample = bytes.get(..8192).unwrap_or(bytes);
    if let Some(odd) = binary_odd_bytes(sample) {
        return Err(Error::Binary {
            reason: format!(
                "{odd} of the first {} bytes are NUL or control bytes",
                sample.len()
            ),
        });
    }
    let mut warnings = Vec::new();
    let text = match std::str::from_utf8(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => {
            let bad_lines = lines_with(bytes, |chunk| std::str::from_utf8(chunk).is_err());
            for span in spans_of(bad_lines) {
                warnings.push(Warning::new(
                    WarningKind::BadBytes,
                    span,
                    "bytes that are not UTF-8 were replaced by U+FFFD",
                ));
            }
            Cow::Owned(String::from_utf8_lossy(bytes).into_owned())
        }
    };
    // NUL is an odd byte, but the odd bytes are now counted only in
    // samples full of control bytes (`binary_odd_bytes`), so no count
    // rules it out: a vector search for it over the whole text does.
    if memchr::memchr(0, text.as_bytes()).is_some() {
        for span in spans_of(lines_with(text.as_bytes(), |chunk| chunk.contains(&0))) {
            warnings.push(Warning::new(
                WarningKind::BadBytes,
                span,
                "NUL bytes were removed",
            ));
        }
        return Ok((Cow::Owned(text.replace('\0', "")), warnings));
    }
    Ok((text, warnings))
}

/// The bytes summed at a time in a byte-wide count: at most 255 (the
/// count must fit a `u8`), and a multiple of 32 so that each chunk is
/// whole vector steps. 255 left a 15-byte tail per chunk for a scalar
/// loop, which cost a third of the count.
const SUM_CHUNK: usize = 224;

/// How many bytes of `sample` are odd (see [`odd_bytes`]) when they are
/// more than [`BINARY_FRACTION`] of it: a binary file, then; `None` for
/// text. The odd bytes are among the C0 controls, which are counted first
/// with one compare a byte: in most text (line ends, some tabs) they are
/// too few for the odd ones to be many, and the five compares a byte of
/// the exact count (a cost on every file read) are not made. Text dense
/// in tabs and line ends (topo's matrix) is counted exactly.
fn binary_odd_bytes(sample: &[u8]) -> Option<usize> {
    let too_many = |n: usize| n as f64 / sample.len() as f64 > BINARY_FRACTION;
    if sample.is_empty() || !too_many(control_bytes(sample)) {
        return None;
    }
    let odd = odd_bytes(sample);
    too_many(odd).then_some(odd)
}

/// How many bytes of `sample` are C0 controls (below 0x20): at least as
/// many as the odd bytes.
fn control_bytes(sample: &[u8]) -> usize {
    count_bytes(sample, |b| b < 0x20)
}

/// How many bytes of `bytes` pass `test`, counted branch-free in byte-wide
/// sums of [`SUM_CHUNK`] bytes at a time, which compile to vector compares
/// and adds (a count in `usize` widens every byte first). Inlined, so that
/// each `test` is compiled into its own loop.
#[inline(always)]
pub(crate) fn count_bytes(bytes: &[u8], test: impl Fn(u8) -> bool) -> usize {
    bytes
        .chunks(SUM_CHUNK)
        .map(|chunk| usize::from(chunk.iter().fold(0u8, |n, &b| n + u8::from(test(b)))))
        .sum()
}

/// How many bytes of `sample` are C0 controls other than tab, LF, CR, ESC
/// and backspace.
/// Counted branch-free in byte-wide sums of [`SUM_CHUNK`] bytes at a
/// time, with a compare per allowed control instead of a shift by the
/// byte: both compile to vector compares and adds (a `usize` count widens
/// every byte, and a per-byte shift does not vectorise), so the count over
/// every small file's whole text costs a fraction of an instruction per
/// byte.
fn odd_bytes(sample: &[u8]) -> usize {
    count_bytes(sample, |b| {
        let allowed = (b == 0x09) | (b == 0x0a) | (b == 0x0d) | (b == 0x1b) | (b == 0x08);
        (b < 0x20) & !allowed
    })
}

/// 1-based numbers of the lines for which `test` holds.
fn lines_with(bytes: &[u8], test: impl Fn(&[u8]) -> bool) -> Vec<usize> {
    bytes
        .split(|&b| b == b'\n')
        .enumerate()
        .filter(|(_, chunk)| test(chunk))
        .map(|(i, _)| i + 1)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest::proptest! {
        /// A line's classes, four look-ups a step and the rest one by one,
        /// are the classes of its bytes or-ed together, whatever its length
        /// and wherever its odd bytes sit.
        #[test]
        fn line_classes_are_its_bytes_classes(
            line in proptest::collection::vec(
                proptest::prop_oneof![
                    4 => b'a'..=b'z',
                    1 => proptest::sample::select(b"\t\r\x1b\x7f\xc2\xe2&<>(`\\$#%: ".to_vec()),
                    1 => 0_u8..=255,
                ],
                0..80,
            ),
        ) {
            let want = line.iter().fold(0, |bits, &b| bits | class_of(b));
            proptest::prop_assert_eq!(classes_of(&line), want);
        }
    }

    proptest! {
        /// The one scan cuts lines as `str::lines` does, and a line it
        /// finds no control byte in is what `clean_line` would leave it.
        #[test]
        fn classified_lines_read_like_lines_and_clean_line(
            text in "([\u{0}-\u{1f}\u{7f}\u{80}-\u{a0}\u{fffd}é←… a-z&<>(`\\\\.\\[\\]/$#%|]|\u{1b}\\[0m|\r\n){0,40}",
        ) {
            let scanned: Vec<(&str, u8)> = classified_lines(&text).collect();
            let lines: Vec<&str> = text.lines().collect();
            prop_assert_eq!(scanned.iter().map(|(l, _)| *l).collect::<Vec<_>>(), lines);
            for (raw, bits) in scanned {
                let cleaned = clean_classified(raw, bits);
                prop_assert_eq!(&cleaned, &clean_line(raw));
                if bits & class::CONTROL == 0 {
                    prop_assert!(matches!(cleaned, Cow::Borrowed(_)));
                }
                let repair_byte = raw.bytes().any(|b| matches!(b, b'&' | b'<' | b'>' | b'(' | b'`' | b'\\' | 0xe2));
                prop_assert_eq!(bits & class::REPAIR != 0, repair_byte);
                let strong = raw.bytes().any(|b| matches!(b, b'&' | b'<' | b'>' | b'`' | b'\\' | 0xe2));
                prop_assert_eq!(bits & class::REPAIR_NOT_PAREN != 0, strong);
                let prompt = raw.bytes().any(|b| matches!(b, b'$' | b'#' | b'%'));
                prop_assert_eq!(bits & class::PROMPT != 0, prompt);
            }
        }

        /// The vector-friendly count equals the count by the allowed-controls
        /// bit set, byte by byte.
        #[test]
        fn odd_bytes_are_counted_like_the_bit_set(bytes in prop::collection::vec(any::<u8>(), 0..700)) {
            let by_bits = bytes
                .iter()
                .filter(|&&b| b < 0x20 && (TEXT_CONTROLS >> (b & 0x1f)) & 1 == 0)
                .count();
            prop_assert_eq!(odd_bytes(&bytes), by_bits);
        }

        /// The control-byte pre-count refuses what the exact count alone
        /// does, with the same count, on samples dense in controls too.
        #[test]
        fn binary_test_by_precount_is_the_exact_test(
            bytes in prop::collection::vec(
                prop_oneof![any::<u8>(), Just(b'\t'), Just(b'\n'), Just(b'\r'), Just(0u8), Just(b'a')],
                0..400,
            ),
        ) {
            let odd = odd_bytes(&bytes);
            let binary = !bytes.is_empty() && odd as f64 / bytes.len() as f64 > BINARY_FRACTION;
            prop_assert_eq!(binary_odd_bytes(&bytes), binary.then_some(odd));
            prop_assert!(control_bytes(&bytes) >= odd);
        }

        /// The branch-free count refuses and accepts what counting control
        /// bytes one by one does.
        #[test]
        fn binary_test_counts_odd_bytes(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
            let odd = bytes
                .iter()
                .filter(|&&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x1b | 0x08))
                .count();
            let binary = !bytes.is_empty() && odd as f64 / bytes.len() as f64 > BINARY_FRACTION;
            prop_assert_eq!(matches!(decode(&bytes), Err(Error::Binary { .. })), binary);
        }
    }

    #[test]
    fn control_bytes_are_found_like_control_characters() {
        for s in [
            "plain",
            "tab\there",
            "é ü ✓ ←",
            "\u{1b}[0m",
            "a\u{7f}",
            "c1\u{85}x",
            "\u{9f}",
            "\u{a0}nbsp",
            "\u{100}",
            "x\u{0}",
        ] {
            let by_char = s.chars().any(|c| c.is_control() && c != '\t');
            assert_eq!(has_control(s), by_char, "{s:?}");
        }
    }

    #[test]
    fn strips_colours_underline_and_carriage_returns() {
        assert_eq!(clean_line("\u{1b}[4mGPU0\tGPU1\u{1b}[0m\r"), "GPU0\tGPU1");
        assert_eq!(clean_line("\u{1b}]0;title\u{7}$ ibstat"), "$ ibstat");
        assert_eq!(clean_line("plain"), "plain");
        assert!(matches!(clean_line("plain"), Cow::Borrowed(_)));
        assert_eq!(clean_line("ab\u{8}c"), "ac");
    }

    #[test]
    fn invalid_utf8_is_replaced_and_reported_by_line() {
        let (text, warnings) = decode(b"ok\nbad \xff here\nok\n").unwrap();
        assert!(text.contains('\u{fffd}'));
        assert_eq!(warnings.len(), 1);
        assert_eq!(warnings[0].span.first_line, 2);
    }

    #[test]
    fn a_few_nul_bytes_are_removed_but_binary_is_refused() {
        let (text, warnings) = decode(b"CA 'mlx5_0'\n\0\n").unwrap();
        assert_eq!(text, "CA 'mlx5_0'\n\n");
        assert_eq!(warnings[0].span.first_line, 2);
        assert!(matches!(decode(&[0u8; 64]), Err(Error::Binary { .. })));
    }
}
