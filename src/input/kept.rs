//! The input's lines, held compact while they wait to be read.
//!
//! A [`Line`] is 32 bytes: a number and a `Cow` text. A table of them for
//! every input line was as large as a pdsh paste itself (12 MB for a 12 MB
//! paste), and was held beside the input, then beside the lines kept of
//! it. A large input's lines are stored here instead from the start: 12
//! bytes a line, a number and where the text sits in the input. A text the
//! cleaning or a repair changed is owned, and moved here as it is.
//!
//! One table serves the whole reading: cleaning pushes every line; repairs
//! take the lines they may change and set them back; framing lines and
//! prefixes are then dropped in place, each line read giving at most one
//! kept line at or before its own place ([`Kept::set`], [`Kept::truncate`]).
//! The lines of one stream at a time (a host's, or a chunk's) are made into
//! [`Line`]s again to be read, and let go of when it is read.

use crate::parse::Line;
use std::borrow::Cow;
use std::ops::Range;

/// Inputs from this size on keep their lines compact. Below it (every
/// file of a dump tree, most pastes) the table is small, and compacting it
/// would cost a second pass over every line (2-3 % of a fleet run's CPU)
/// to save nothing that matters.
pub(super) const COMPACT_FROM_BYTES: usize = 1 << 20;

/// A kept line: its number, and its text as a range of the input, or (at
/// [`OWNED`]) the index of its owned text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Row {
    number: u32,
    start: u32,
    len: u32,
}

/// `Row::start` of a line whose text is owned; `Row::len` is then its
/// index in the owned texts.
const OWNED: u32 = u32::MAX;

/// The lines of one input.
pub(super) struct Kept<'a> {
    store: Store<'a>,
}

enum Store<'a> {
    /// A small input's lines as they are.
    Lines(Vec<Line<'a>>),
    /// A large input's lines, compact.
    Rows {
        input: &'a str,
        rows: Vec<Row>,
        /// The texts that are not a slice of the input, taken when read.
        owned: Vec<String>,
    },
}

impl<'a> Kept<'a> {
    /// No lines yet, with room for `lines` of `input`; held `compact` or
    /// as they are (the sectioner compacts inputs of
    /// [`COMPACT_FROM_BYTES`] or more). An input of 4 GiB or more is never
    /// compact: its line numbers and places may not fit a row.
    pub(super) fn with_capacity(input: &'a str, lines: usize, compact: bool) -> Self {
        let store = if compact && input.len() < OWNED as usize {
            Store::Rows {
                input,
                rows: Vec::with_capacity(lines),
                owned: Vec::new(),
            }
        } else {
            Store::Lines(Vec::with_capacity(lines))
        };
        Self { store }
    }

    /// How many lines are kept.
    pub(super) fn len(&self) -> usize {
        match &self.store {
            Store::Lines(lines) => lines.len(),
            Store::Rows { rows, .. } => rows.len(),
        }
    }

    /// Keeps `line`. Compact, a slice of the input is kept as its place in
    /// it; any other text (owned, or borrowed from elsewhere) is moved to
    /// the owned texts.
    pub(super) fn push(&mut self, line: Line<'a>) {
        match &mut self.store {
            Store::Lines(lines) => lines.push(line),
            Store::Rows { input, rows, owned } => rows.push(row_of(input, owned, line, None)),
        }
    }

    /// [`Kept::push`] of the line `number` reading `text`, made where it is
    /// stored. Made first and then matched on the store, every line of
    /// every input went through the stack: written there a word at a time
    /// and copied out two words at a time, which the processor cannot
    /// forward from the pending writes (a stall on each line, 2 % of a
    /// 1,000-host run's CPU).
    pub(super) fn push_line(&mut self, number: usize, text: Cow<'a, str>) {
        match &mut self.store {
            Store::Lines(lines) => lines.push(Line { number, text }),
            Store::Rows { input, rows, owned } => {
                rows.push(row_of(input, owned, Line { number, text }, None));
            }
        }
    }

    /// The text of line `i`.
    pub(super) fn text(&self, i: usize) -> Option<&str> {
        match &self.store {
            Store::Lines(lines) => lines.get(i).map(Line::text),
            Store::Rows { input, rows, owned } => {
                let row = rows.get(i)?;
                if row.start == OWNED {
                    owned.get(row.len as usize).map(String::as_str)
                } else {
                    let start = row.start as usize;
                    input.get(start..start + row.len as usize)
                }
            }
        }
    }

    /// Every line's text, in order.
    pub(super) fn texts(&self) -> impl ExactSizeIterator<Item = &str> {
        (0..self.len()).map(|i| self.text(i).unwrap_or_default())
    }

    /// Line `i`, moved out (its place left blank), to be changed or kept.
    pub(super) fn take_one(&mut self, i: usize) -> Option<Line<'a>> {
        match &mut self.store {
            Store::Lines(lines) => lines
                .get_mut(i)
                .map(|l| std::mem::replace(l, Line::new(0, ""))),
            Store::Rows { input, rows, owned } => {
                let row = rows.get(i).copied()?;
                Some(line_of(input, owned, row))
            }
        }
    }

    /// Puts `line` at `i`, a place that holds a line (one taken, or one
    /// already read that a line read later replaces). An owned text is
    /// moved in, not copied.
    pub(super) fn set(&mut self, i: usize, line: Line<'a>) {
        let (input, rows, owned) = match &mut self.store {
            Store::Lines(lines) => {
                if let Some(place) = lines.get_mut(i) {
                    *place = line;
                }
                return;
            }
            Store::Rows { input, rows, owned } => (*input, rows, owned),
        };
        let Some(place) = rows.get_mut(i) else {
            return;
        };
        // The row's own owned slot, if it has one (emptied when taken), is
        // reused for an owned text.
        let slot = (place.start == OWNED).then_some(place.len as usize);
        *place = row_of(input, owned, line, slot);
    }

    /// Moves line `from` to place `to` (at or before it) as it stands,
    /// without taking it out and putting it back: the line left at `from`
    /// is one already read (a framing line's, or a blank left by
    /// [`Kept::take_one`]), to be cut off by [`Kept::truncate`]. Taken out
    /// and put back, every line of an input with no host prefixes went
    /// through the stack, written a word at a time and read back two words
    /// at a time, which the processor cannot forward from the pending
    /// writes: half of the line framing's samples.
    pub(super) fn keep_at(&mut self, from: usize, to: usize) {
        if from == to {
            return;
        }
        match &mut self.store {
            Store::Lines(lines) => {
                if from < lines.len() && to < lines.len() {
                    lines.swap(from, to);
                }
            }
            Store::Rows { rows, .. } => {
                if from < rows.len() && to < rows.len() {
                    rows.swap(from, to);
                }
            }
        }
    }

    /// Keeps the first `len` lines; a compact table gives back the memory
    /// of the rest (a small input's table ends with its reading anyway).
    pub(super) fn truncate(&mut self, len: usize) {
        match &mut self.store {
            Store::Lines(lines) => lines.truncate(len),
            Store::Rows { rows, owned, .. } => {
                rows.truncate(len);
                rows.shrink_to_fit();
                owned.shrink_to_fit();
            }
        }
    }

    /// The lines `range`, to be read once: borrowed when the lines are
    /// held as they are, else made (their owned texts moved out).
    pub(super) fn take_range(&mut self, range: Range<usize>) -> Cow<'_, [Line<'a>]> {
        match self.store {
            Store::Lines(ref lines) => Cow::Borrowed(lines.get(range).unwrap_or_default()),
            Store::Rows { .. } => Cow::Owned(self.take(range)),
        }
    }

    /// The lines at `indexes` (each taken once), in that order: moved out
    /// of the table, or made from its rows.
    pub(super) fn take(&mut self, indexes: impl IntoIterator<Item = usize>) -> Vec<Line<'a>> {
        let indexes = indexes.into_iter();
        match &mut self.store {
            Store::Lines(lines) => indexes
                .filter_map(|i| {
                    lines
                        .get_mut(i)
                        .map(|l| std::mem::replace(l, Line::new(0, "")))
                })
                .collect(),
            Store::Rows { input, rows, owned } => indexes
                .filter_map(|i| rows.get(i).map(|&row| line_of(input, owned, row)))
                .collect(),
        }
    }
}

/// The row of `line`: its place in `input`, or its text moved to `owned`
/// (into `slot` when given, else at the end).
fn row_of<'a>(input: &'a str, owned: &mut Vec<String>, line: Line<'a>, slot: Option<usize>) -> Row {
    let Line { number, text } = line;
    let place = match &text {
        Cow::Borrowed("") => Some((0, 0)),
        Cow::Borrowed(s) => place_in(input, s),
        Cow::Owned(_) => None,
    };
    let (start, len) = place.unwrap_or_else(|| {
        let text = text.into_owned();
        let index = match slot.and_then(|i| owned.get_mut(i).map(|place| (i, place))) {
            Some((i, place)) => {
                *place = text;
                i
            }
            None => {
                owned.push(text);
                owned.len() - 1
            }
        };
        (OWNED, u32::try_from(index).unwrap_or(u32::MAX))
    });
    // Below 4 GiB of input, a line number fits (a line is a byte at least).
    let number = u32::try_from(number).unwrap_or(u32::MAX);
    Row { number, start, len }
}

/// Where `s` sits in `input`, if it is a slice of it (a compact input is
/// below 4 GiB, so its places fit a row and never start at [`OWNED`]).
fn place_in(input: &str, s: &str) -> Option<(u32, u32)> {
    let start = (s.as_ptr() as usize).checked_sub(input.as_ptr() as usize)?;
    let end = start.checked_add(s.len())?;
    let same = input
        .get(start..end)
        .is_some_and(|t| std::ptr::eq(t.as_ptr(), s.as_ptr()));
    match (same, u32::try_from(start), u32::try_from(s.len())) {
        (true, Ok(start), Ok(len)) => Some((start, len)),
        _ => None,
    }
}

/// The line `row` names, in `input` or (moved out) in `owned`.
fn line_of<'a>(input: &'a str, owned: &mut [String], row: Row) -> Line<'a> {
    let text = if row.start == OWNED {
        Cow::Owned(
            owned
                .get_mut(row.len as usize)
                .map(std::mem::take)
                .unwrap_or_default(),
        )
    } else {
        let start = row.start as usize;
        Cow::Borrowed(
            input
                .get(start..start + row.len as usize)
                .unwrap_or_default(),
        )
    };
    Line {
        number: row.number as usize,
        text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_row_is_under_half_a_line_s_size() {
        assert!(std::mem::size_of::<Row>() * 2 < std::mem::size_of::<Line<'_>>());
    }

    #[test]
    fn slices_of_the_input_are_places_and_other_texts_are_owned() {
        let input = "alpha\nbeta gamma\n";
        let elsewhere = String::from("beta");
        let mut kept = Kept::with_capacity(input, 4, true);
        kept.push(Line::new(1, &input[0..5]));
        kept.push(Line::new(2, &elsewhere)); // equal text, not the input's
        kept.push(Line {
            number: 3,
            text: Cow::Owned("repaired".to_owned()),
        });
        kept.push(Line::new(4, ""));
        let Store::Rows { rows, .. } = &kept.store else {
            panic!("held compact");
        };
        assert_eq!(rows.iter().filter(|r| r.start == OWNED).count(), 2);
        let lines = kept.take([3, 0, 2, 1]);
        let texts: Vec<(usize, &str)> = lines.iter().map(|l| (l.number, l.text())).collect();
        assert_eq!(texts, [(4, ""), (1, "alpha"), (3, "repaired"), (2, "beta")]);
        assert!(matches!(lines[1].text, Cow::Borrowed(_)));
    }

    #[test]
    fn lines_held_whole_are_lent() {
        let input = "alpha\n";
        let mut kept = Kept::with_capacity(input, 1, false);
        kept.push(Line::new(1, &input[0..5]));
        assert!(matches!(kept.store, Store::Lines(_)));
        assert!(matches!(kept.take_range(0..1), Cow::Borrowed([_])));
    }

    proptest! {
        /// Whatever mix of input slices and owned texts goes in, the same
        /// lines come out, compact or not.
        #[test]
        fn lines_come_back_as_they_went_in(
            input in "[a-c\n ]{0,40}",
            compact in any::<bool>(),
            picks in prop::collection::vec((0usize..40, 0usize..40, any::<bool>()), 0..20),
        ) {
            let mut kept = Kept::with_capacity(&input, picks.len(), compact);
            let mut expected = Vec::new();
            for (i, &(a, b, owned)) in picks.iter().enumerate() {
                let (lo, hi) = (a.min(b).min(input.len()), a.max(b).min(input.len()));
                let slice = &input[lo..hi];
                let line = if owned {
                    Line { number: i + 1, text: Cow::Owned(slice.to_owned()) }
                } else {
                    Line::new(i + 1, slice)
                };
                expected.push(line.clone());
                kept.push(line);
            }
            prop_assert_eq!(kept.take_range(0..picks.len()).into_owned(), expected.clone());
            let mut kept_again = Kept::with_capacity(&input, 0, compact);
            for line in &expected {
                kept_again.push(line.clone());
            }
            let mut reversed = expected;
            reversed.reverse();
            prop_assert_eq!(kept_again.take((0..picks.len()).rev()), reversed);
        }

        /// Lines kept in place (each read line set at or before its own
        /// place, some changed to owned texts, some moved up as they stand
        /// with `keep_at`, the rest dropped) come back as they were kept,
        /// compact or not.
        #[test]
        fn lines_kept_in_place_are_the_lines_kept(
            input in "[a-c\n ]{0,40}",
            compact in any::<bool>(),
            picks in prop::collection::vec((0usize..40, 0usize..40, 0u8..5), 0..20),
        ) {
            let mut kept = Kept::with_capacity(&input, picks.len(), compact);
            let mut pushed = Vec::new();
            for (i, &(a, b, how)) in picks.iter().enumerate() {
                let (lo, hi) = (a.min(b).min(input.len()), a.max(b).min(input.len()));
                let slice = &input[lo..hi];
                pushed.push(slice);
                kept.push(if how == 0 {
                    Line { number: i + 1, text: Cow::Owned(slice.to_owned()) }
                } else {
                    Line::new(i + 1, slice)
                });
            }
            prop_assert_eq!(kept.texts().collect::<Vec<_>>(), pushed.clone());
            // Keeps lines whose `how` is not 3; those with `how` 2 are
            // changed to owned texts on the way, those with `how` 4 moved
            // up as they stand.
            let mut expected = Vec::new();
            let mut next = 0;
            for (i, &(_, _, how)) in picks.iter().enumerate() {
                // Lines before `i` may have been replaced; `i` is as pushed.
                prop_assert_eq!(kept.text(i), pushed.get(i).copied());
                if how == 3 {
                    continue;
                }
                if how == 4 {
                    expected.push(Line::new(i + 1, pushed[i]));
                    kept.keep_at(i, next);
                    next += 1;
                    continue;
                }
                let mut line = kept.take_one(i).unwrap();
                if how == 2 {
                    line.text = Cow::Owned(format!("{}!", line.text()));
                }
                expected.push(line.clone());
                kept.set(next, line);
                next += 1;
            }
            kept.truncate(next);
            prop_assert_eq!(kept.len(), next);
            prop_assert_eq!(kept.take(0..next), expected);
        }
    }
}
