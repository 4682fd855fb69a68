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

/// Decodes bytes as UTF-8. Invalid sequences become U+FFFD and NUL bytes are
/// dropped, each reported with the lines they were on; input that is mostly
/// non-text is refused as binary.
///
/// # Errors
/// [`Error::Binary`] when more than a tenth of the first 8 KiB is NUL or
/// control bytes other than tab, CR, LF, ESC, backspace.
pub fn decode(bytes: &[u8]) -> Result<(Cow<'_, str>, Vec<Warning>), Error> {
    let sample = bytes.get(..8192).unwrap_or(bytes);
    let odd = sample
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x1b | 0x08))
        .count();
    if !sample.is_empty() && odd as f64 / sample.len() as f64 > BINARY_FRACTION {
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
    if text.contains('\0') {
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
