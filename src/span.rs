//! Where things came from in the input.
//!
//! Every section, warning and piece of evidence points back at the lines it
//! was read from, so the CLI and the web page can show the operator the exact
//! text behind a conclusion.

use serde::{Deserialize, Serialize};
use std::fmt;

/// An inclusive range of input lines, numbered from 1 as editors number them.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
pub struct LineSpan {
    /// First line of the range (1-based).
    pub first_line: usize,
    /// Last line of the range (1-based, inclusive).
    pub last_line: usize,
}

impl LineSpan {
    /// A span covering a single line.
    #[must_use]
    pub fn line(number: usize) -> Self {
        Self {
            first_line: number,
            last_line: number,
        }
    }

    /// A span from `first` to `last`; the bounds are swapped if given backwards.
    #[must_use]
    pub fn new(first: usize, last: usize) -> Self {
        Self {
            first_line: first.min(last),
            last_line: first.max(last),
        }
    }

    /// The smallest span covering both.
    #[must_use]
    pub fn join(self, other: Self) -> Self {
        Self {
            first_line: self.first_line.min(other.first_line),
            last_line: self.last_line.max(other.last_line),
        }
    }

    /// Whether `line` lies inside the span.
    #[must_use]
    pub fn contains(self, line: usize) -> bool {
        (self.first_line..=self.last_line).contains(&line)
    }

    /// Number of lines covered.
    #[must_use]
    pub fn len(self) -> usize {
        self.last_line - self.first_line + 1
    }

    /// Always false: a span covers at least one line.
    #[must_use]
    pub fn is_empty(self) -> bool {
        false
    }
}

impl fmt::Display for LineSpan {
    /// `line 7` or `lines 120–134`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.first_line == self.last_line {
            write!(f, "line {}", self.first_line)
        } else {
            write!(f, "lines {}–{}", self.first_line, self.last_line)
        }
    }
}

/// Collapses sorted line numbers into the fewest spans (`[3,4,5,9]` → `3–5, 9`).
#[must_use]
pub fn spans_of(lines: impl IntoIterator<Item = usize>) -> Vec<LineSpan> {
    let mut spans: Vec<LineSpan> = Vec::new();
    for line in lines {
        match spans.last_mut() {
            Some(last) if line == last.last_line + 1 || last.contains(line) => {
                last.last_line = last.last_line.max(line);
            }
            _ => spans.push(LineSpan::line(line)),
        }
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_single_lines_and_ranges_like_an_editor() {
        assert_eq!(LineSpan::line(7).to_string(), "line 7");
        assert_eq!(LineSpan::new(134, 120).to_string(), "lines 120–134");
    }

    #[test]
    fn collapses_consecutive_lines() {
        assert_eq!(
            spans_of([3, 4, 5, 9, 10, 12]),
            vec![
                LineSpan::new(3, 5),
                LineSpan::new(9, 10),
                LineSpan::line(12)
            ]
        );
    }
}
