//! Partial data: a row, block or port the paste did not hold in full.
//!
//! Absence of data is never evidence. A matrix row cut after five cells says
//! nothing about the sixth; a port block that ends after `State:` says
//! nothing about its rate. Parsers mark such parts with a [`Partial`] saying
//! what is missing and why, rules skip them for every comparison or count,
//! and the report says once where the paste looks cut (`IN001`).

use serde::{Deserialize, Serialize};

/// Why a part of the output is incomplete.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PartialReason {
    /// A matrix row with fewer cells (or affinity values) than the header
    /// has columns.
    ShortRow,
    /// A device the matrix header names has no row of its own.
    MissingRow,
    /// A matrix header without the columns of devices whose rows it shows
    /// (a `topo -m` whose NIC columns were cut out of the header, its NIC
    /// rows holding a cell per GPU column): the cells between those
    /// devices are unknown; every other cell was read.
    MissingColumns,
    /// A block stops before fields the tool always prints (cut by the end
    /// of the paste or by an elision).
    MissingFields,
    /// The block was pasted without its header line: what the header says
    /// (a device name, a LID) is unknown.
    NoHeader,
    /// A field printed without its value on the output's last line: the
    /// paste ended mid-line (the input layer sets a cut-off last word
    /// aside), and what the block prints after it is missing too. A value
    /// left blank where the output goes on was hidden, not cut: its line
    /// is unread and the block whole.
    CutLine,
    /// The author left lines out (`...`, `[snip]`) at its start, in it or
    /// right after it: what they held is unknown. Said by IN001 of a
    /// section next to an elision; no parsed part carries it.
    Elided,
    /// The tool itself printed only some of what it found and said so
    /// (`76 NICs found in the topology, only displaying 56 in the
    /// matrix.` above a `topo -m` header): the devices it left out are
    /// unknown, and may be the nearest to any device shown.
    NotShown,
}

impl PartialReason {
    /// A few words for people.
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            Self::ShortRow => "row cut short",
            Self::MissingRow => "row missing",
            Self::MissingColumns => "columns missing",
            Self::MissingFields => "fields missing",
            Self::NoHeader => "header missing",
            Self::CutLine => "last line cut",
            Self::Elided => "lines left out by the author",
            Self::NotShown => "left out by the tool",
        }
    }
}

/// What a partial part lacks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Partial {
    /// Why it is partial.
    pub reason: PartialReason,
    /// What is missing, in the tool's own words (`GPU6`, `Rate`,
    /// `PortXmitWait`, `CA name`).
    pub missing: Vec<String>,
    /// The line where the part stops (its last line read), or where the
    /// missing header should have been.
    pub line: usize,
}

impl Partial {
    /// A partial part of `reason`, lacking `missing`, stopping at `line`.
    #[must_use]
    pub fn new(reason: PartialReason, missing: Vec<String>, line: usize) -> Self {
        Self {
            reason,
            missing,
            line,
        }
    }

    /// `row cut short (missing GPU6, GPU7)`.
    #[must_use]
    pub fn describe(&self) -> String {
        if self.missing.is_empty() {
            self.reason.describe().to_owned()
        } else {
            format!(
                "{} (missing {})",
                self.reason.describe(),
                self.missing.join(", ")
            )
        }
    }
}
