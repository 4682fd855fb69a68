//! Warnings: what a parser could not read, said with line numbers.
//!
//! Parsers are lenient: they keep what they could read and describe the rest
//! here instead of failing the whole input because of one bad line.

use crate::span::LineSpan;
use serde::{Deserialize, Serialize};
use std::fmt;

/// What kind of trouble a warning reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
pub enum WarningKind {
    /// Lines that belong to a section but could not be read. They are not
    /// used for any conclusion.
    Unreadable,
    /// A number too large for the counter it belongs to.
    OutOfRange,
    /// The output stops early (cut-off paste, `ibpanic`, missing fields).
    Truncated,
    /// Input bytes that are not valid UTF-8 or are control characters.
    BadBytes,
    /// A limit (input size, line length, section count) was reached.
    Limit,
    /// A value that was read but looks inconsistent with the rest.
    Suspicious,
}

/// A problem found while reading, tied to the input lines it concerns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
pub struct Warning {
    /// What kind of problem this is.
    pub kind: WarningKind,
    /// The input lines concerned.
    #[serde(flatten)]
    pub span: LineSpan,
    /// A sentence for people, without the line numbers (see `Display`).
    pub message: String,
}

impl Warning {
    /// A warning of the given kind about `span`.
    #[must_use]
    pub fn new(kind: WarningKind, span: LineSpan, message: impl Into<String>) -> Self {
        Self {
            kind,
            span,
            message: message.into(),
        }
    }

    /// Lines that could not be read.
    #[must_use]
    pub fn unreadable(span: LineSpan, message: impl Into<String>) -> Self {
        Self::new(WarningKind::Unreadable, span, message)
    }
}

impl fmt::Display for Warning {
    /// `could not read lines 120–134: expected "Link N: …"`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            WarningKind::Unreadable => write!(f, "could not read {}: {}", self.span, self.message),
            _ => write!(f, "{}: {}", self.span, self.message),
        }
    }
}

/// Merges unreadable-line warnings with the same message on adjacent lines,
/// so a 15-line block of junk is one warning, not fifteen.
pub(crate) fn merge_adjacent(warnings: &mut Vec<Warning>) {
    let mut merged: Vec<Warning> = Vec::with_capacity(warnings.len());
    for w in warnings.drain(..) {
        if let Some(last) = merged.last_mut() {
            if last.kind == w.kind
                && last.message == w.message
                && w.span.first_line <= last.span.last_line + 1
                && w.span.first_line >= last.span.first_line
            {
                last.span = last.span.join(w.span);
                continue;
            }
        }
        merged.push(w);
    }
    *warnings = merged;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unreadable_warning_reads_like_the_brief() {
        let w = Warning::unreadable(LineSpan::new(120, 134), "not a perfquery field");
        assert_eq!(
            w.to_string(),
            "could not read lines 120–134: not a perfquery field"
        );
    }

    #[test]
    fn adjacent_identical_warnings_merge() {
        let mut ws = vec![
            Warning::unreadable(LineSpan::line(4), "x"),
            Warning::unreadable(LineSpan::line(5), "x"),
            Warning::unreadable(LineSpan::line(7), "x"),
            Warning::unreadable(LineSpan::line(8), "y"),
        ];
        merge_adjacent(&mut ws);
        let spans: Vec<_> = ws.iter().map(|w| w.span).collect();
        assert_eq!(
            spans,
            vec![LineSpan::new(4, 5), LineSpan::line(7), LineSpan::line(8)]
        );
    }
}
