//! Parsers: one module per tool output format, and the registry that lists them.
//!
//! # Adding a format
//! 1. Write `src/parse/<tool>.rs` with a `pub fn parse(lines: &[Line<'_>]) -> Parsed<Model>`,
//!    a `detect` function and a `pub(crate) const FORMAT: Format`.
//! 2. Add its model under `src/model/`.
//! 3. Add a [`Kind`] variant, a [`SectionData`] variant and the `FORMAT` to `FORMATS`.
//!
//! Every parser is lenient: it keeps what it could read and returns a
//! [`Warning`] for every non-blank line it could not use. nom stays an internal
//! detail of the modules; the public API speaks only of our types.

pub mod date;
pub mod dcgmi_diag;
pub mod dcgmi_nvlink;
pub mod dmon;
pub mod iblinkinfo;
pub mod ibqueryerrors;
pub mod ibstat;
pub mod ibstatus;
pub mod ibv_devinfo;
pub mod mlxlink;
pub mod nvlink;
pub mod perfquery;
pub mod smi_csv;
pub mod smi_list;
pub mod smi_query;
pub(crate) mod text;
pub mod timestamp;
pub mod topo;

use crate::diag::Warning;
use crate::model::date::Date;
use crate::model::dcgm::{DcgmiDiag, DcgmiHealth};
use crate::model::mlxlink::Mlxlink;
use crate::model::gpu::{DcgmiLinkStatus, DcgmiNvlinkErrors, Monitor, SmiCsv, SmiList, SmiQuery};
use crate::model::ib::Ibstat;
use crate::model::iblinkinfo::Iblinkinfo;
use crate::model::ibqueryerrors::Ibqueryerrors;
use crate::model::ibstatus::Ibstatus;
use crate::model::ibv_devinfo::IbvDevinfo;
use crate::model::nvlink::Nvlink;
use crate::model::perf::Perfquery;
use crate::model::topo::{TopoMatrix, TopoP2p};
use crate::span::LineSpan;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// One line of input, after cleaning, with its original line number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line<'a> {
    /// Line number in the original input (1-based).
    pub number: usize,
    /// The text with line ending, ANSI escapes and any host prefix removed.
    pub text: Cow<'a, str>,
}

impl<'a> Line<'a> {
    /// A line borrowed from the input.
    #[must_use]
    pub fn new(number: usize, text: &'a str) -> Self {
        Self {
            number,
            text: Cow::Borrowed(text),
        }
    }

    /// The line's text.
    #[must_use]
    pub fn text(&self) -> &str {
        &self.text
    }

    /// True for a line holding only white space.
    #[must_use]
    pub fn is_blank(&self) -> bool {
        self.text.trim().is_empty()
    }

    /// This line as a span.
    #[must_use]
    pub fn span(&self) -> LineSpan {
        LineSpan::line(self.number)
    }
}

/// Splits text into numbered lines, dropping `\r` and ANSI escapes, for callers
/// who hand a single tool's output straight to a parser.
#[must_use]
pub fn lines_of(text: &str) -> Vec<Line<'_>> {
    text.lines()
        .enumerate()
        .map(|(i, raw)| Line {
            number: i + 1,
            text: crate::input::clean::clean_line(raw),
        })
        .collect()
}

/// What a parser read, and what it could not.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Parsed<T> {
    /// Everything that could be read.
    pub value: T,
    /// Lines that could not be read and other problems, with line numbers.
    pub warnings: Vec<Warning>,
}

impl<T> Parsed<T> {
    /// A value with no warnings.
    pub fn clean(value: T) -> Self {
        Self {
            value,
            warnings: Vec::new(),
        }
    }

    /// Strict mode: the value only if every line was read without trouble.
    ///
    /// # Errors
    /// Returns the warnings when there is at least one.
    pub fn into_result(self) -> Result<T, Vec<Warning>> {
        if self.warnings.is_empty() {
            Ok(self.value)
        } else {
            Err(self.warnings)
        }
    }

    /// Converts the value, keeping the warnings.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Parsed<U> {
        Parsed {
            value: f(self.value),
            warnings: self.warnings,
        }
    }
}

/// Which tool printed a section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Kind {
    /// `ibstat`.
    Ibstat,
    /// `ibstatus`.
    Ibstatus,
    /// `ibv_devinfo`.
    IbvDevinfo,
    /// `iblinkinfo`.
    Iblinkinfo,
    /// `nvidia-smi nvlink` (any read-only mode).
    Nvlink,
    /// `perfquery`, any attribute.
    Perfquery,
    /// `ibqueryerrors`.
    Ibqueryerrors,
    /// `nvidia-smi topo -m` / `-mp`.
    TopoMatrix,
    /// `nvidia-smi topo -p2p r|w|n|a|p`.
    TopoP2p,
    /// `nvidia-smi -q` (text or `-x` XML).
    SmiQuery,
    /// `nvidia-smi --query-gpu=… --format=csv`.
    SmiCsv,
    /// `nvidia-smi -L`.
    SmiList,
    /// `nvidia-smi dmon` / `pmon`.
    SmiDmon,
    /// `dcgmi dmon`.
    DcgmiDmon,
    /// `dcgmi nvlink -s`.
    DcgmiNvlinkStatus,
    /// `dcgmi nvlink -e`.
    DcgmiNvlinkErrors,
    /// `dcgmi diag -r N`.
    DcgmiDiag,
    /// `dcgmi health -c`.
    DcgmiHealth,
    /// `mlxlink -d <device>`.
    Mlxlink,
    /// `date`: a wall-clock time between snapshots.
    Date,
}

impl Kind {
    /// The name used in JSON and on the command line.
    #[must_use]
    pub fn name(self) -> &'static str {
        format_of(self).map_or("unknown", |f| f.name)
    }
}

/// The parsed content of a section; the variant matches the section's [`Kind`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum SectionData {
    /// `ibstat` in any form.
    Ibstat(Ibstat),
    /// `ibstatus`.
    Ibstatus(Ibstatus),
    /// `ibv_devinfo`, plain, `-v` or `-l`.
    IbvDevinfo(IbvDevinfo),
    /// `iblinkinfo` in any form.
    Iblinkinfo(Iblinkinfo),
    /// `nvidia-smi nvlink` in any read-only mode.
    Nvlink(Nvlink),
    /// `perfquery` blocks.
    Perfquery(Perfquery),
    /// `ibqueryerrors` node reports and summary.
    Ibqueryerrors(Ibqueryerrors),
    /// `nvidia-smi topo -m` / `-mp`.
    TopoMatrix(TopoMatrix),
    /// `nvidia-smi topo -p2p`.
    TopoP2p(TopoP2p),
    /// `nvidia-smi -q`.
    SmiQuery(SmiQuery),
    /// `nvidia-smi --query-gpu=… --format=csv`.
    SmiCsv(SmiCsv),
    /// `nvidia-smi -L`.
    SmiList(SmiList),
    /// `nvidia-smi dmon` / `pmon`.
    SmiDmon(Monitor),
    /// `dcgmi dmon`.
    DcgmiDmon(Monitor),
    /// `dcgmi nvlink -s`.
    DcgmiNvlinkStatus(DcgmiLinkStatus),
    /// `dcgmi nvlink -e`.
    DcgmiNvlinkErrors(DcgmiNvlinkErrors),
    /// `dcgmi diag -r N`.
    DcgmiDiag(DcgmiDiag),
    /// `dcgmi health -c`.
    DcgmiHealth(DcgmiHealth),
    /// `mlxlink`.
    Mlxlink(Mlxlink),
    /// `date`.
    Date(Date),
}

impl SectionData {
    /// The kind of tool output this is.
    #[must_use]
    pub fn kind(&self) -> Kind {
        match self {
            Self::Ibstat(_) => Kind::Ibstat,
            Self::Date(_) => Kind::Date,
            Self::Ibstatus(_) => Kind::Ibstatus,
            Self::IbvDevinfo(_) => Kind::IbvDevinfo,
            Self::Iblinkinfo(_) => Kind::Iblinkinfo,
            Self::Nvlink(_) => Kind::Nvlink,
            Self::Perfquery(_) => Kind::Perfquery,
            Self::Ibqueryerrors(_) => Kind::Ibqueryerrors,
            Self::TopoMatrix(_) => Kind::TopoMatrix,
            Self::TopoP2p(_) => Kind::TopoP2p,
            Self::SmiQuery(_) => Kind::SmiQuery,
            Self::SmiCsv(_) => Kind::SmiCsv,
            Self::SmiList(_) => Kind::SmiList,
            Self::SmiDmon(_) => Kind::SmiDmon,
            Self::DcgmiDmon(_) => Kind::DcgmiDmon,
            Self::DcgmiNvlinkStatus(_) => Kind::DcgmiNvlinkStatus,
            Self::DcgmiNvlinkErrors(_) => Kind::DcgmiNvlinkErrors,
            Self::DcgmiDiag(_) => Kind::DcgmiDiag,
            Self::DcgmiHealth(_) => Kind::DcgmiHealth,
            Self::Mlxlink(_) => Kind::Mlxlink,
        }
    }

    /// A one-line description for people (`2 CAs, 2 ports: 1 Active, 1 Down`).
    #[must_use]
    pub fn summary(&self) -> String {
        match self {
            Self::Ibstat(v) => ibstat::summary(v),
            Self::Date(v) => date::summary(v),
            Self::Ibstatus(v) => ibstatus::summary(v),
            Self::IbvDevinfo(v) => ibv_devinfo::summary(v),
            Self::Iblinkinfo(v) => iblinkinfo::summary(v),
            Self::Nvlink(v) => nvlink::summary(v),
            Self::Perfquery(v) => perfquery::summary(v),
            Self::Ibqueryerrors(v) => ibqueryerrors::summary(v),
            Self::TopoMatrix(v) => topo::summary(v),
            Self::TopoP2p(v) => topo::summary_p2p(v),
            Self::SmiQuery(v) => smi_query::summary(v),
            Self::SmiCsv(v) => smi_csv::summary(v),
            Self::SmiList(v) => smi_list::summary(v),
            Self::SmiDmon(v) | Self::DcgmiDmon(v) => dmon::summary(v),
            Self::DcgmiNvlinkStatus(v) => dcgmi_nvlink::summary_status(v),
            Self::DcgmiNvlinkErrors(v) => dcgmi_nvlink::summary_errors(v),
            Self::DcgmiDiag(v) => dcgmi_diag::summary_diag(v),
            Self::DcgmiHealth(v) => dcgmi_diag::summary_health(v),
            Self::Mlxlink(v) => mlxlink::summary(v),
        }
    }

    /// Completes what only the command line tells: the field names of
    /// `--format=csv,noheader`, the capability of `topo -p2p`, the field ids
    /// of `dcgmi dmon -e`. `argv` is the command's words as the input layer
    /// found them after the prompt.
    pub(crate) fn attach_command(&mut self, argv: &[&str]) {
        match self {
            Self::TopoP2p(v) if v.capability.is_none() => {
                v.capability = topo::p2p_capability(argv);
            }
            Self::SmiCsv(v) => smi_csv::attach_command(v, argv),
            Self::DcgmiDmon(v) => dmon::attach_command(v, argv),
            Self::Mlxlink(v) => mlxlink::attach_command(v, argv),
            _ => {}
        }
    }
}

/// How the input layer recognises a block of output: the identity of the
/// block (a CA name, a GPU index, a port), so that a second block with the
/// same identity starts a new section (a second snapshot) instead of merging.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Block {
    pub key: String,
    /// For outputs of a known, fixed number of non-blank lines (`date`
    /// prints one): the section ends there, so text that follows is not
    /// swallowed by it (the table under `nvidia-smi`'s own time stamp).
    pub lines: Option<usize>,
}

impl Block {
    pub(crate) fn keyed(key: impl Into<String>) -> Self {
        Self {
            key: key.into(),
            lines: None,
        }
    }

    /// A block of exactly `lines` non-blank lines.
    pub(crate) fn of_lines(key: impl Into<String>, lines: usize) -> Self {
        Self {
            key: key.into(),
            lines: Some(lines),
        }
    }
}

/// A tool output format: how to recognise it and how to read it.
pub(crate) struct Format {
    /// The kind of section this format produces.
    pub kind: Kind,
    /// Name used in JSON (`"ibstat"`), equal to the serde name of `kind`.
    pub name: &'static str,
    /// Whether a shell command (words after wrappers such as `sudo`, with the
    /// program's base name first) prints this format.
    pub command: fn(&[&str]) -> bool,
    /// Whether a block of this format starts at `lines[0]` (looking ahead as
    /// needed). Must be cheap and specific: it runs on every line.
    pub detect: fn(&[Line<'_>]) -> Option<Block>,
    /// Reads a section of this format.
    pub parse: fn(&[Line<'_>]) -> Parsed<SectionData>,
}

/// Every supported format, in the order detection tries them.
pub(crate) static FORMATS: &[Format] = &[
    ibstat::FORMAT,
    ibstatus::FORMAT,
    ibv_devinfo::FORMAT,
    iblinkinfo::FORMAT,
    nvlink::FORMAT,
    perfquery::FORMAT,
    ibqueryerrors::FORMAT,
    topo::FORMAT,
    topo::P2P_FORMAT,
    smi_query::FORMAT,
    smi_csv::FORMAT,
    smi_list::FORMAT,
    dmon::SMI_FORMAT,
    dmon::DCGMI_FORMAT,
    dcgmi_nvlink::STATUS_FORMAT,
    dcgmi_nvlink::ERRORS_FORMAT,
    dcgmi_diag::DIAG_FORMAT,
    dcgmi_diag::HEALTH_FORMAT,
    mlxlink::FORMAT,
    date::FORMAT,
];

/// The format that produces `kind`.
pub(crate) fn format_of(kind: Kind) -> Option<&'static Format> {
    FORMATS.iter().find(|f| f.kind == kind)
}

/// Runs every GPU topology and telemetry parser over the same lines and
/// discards the results: the body of the `gpu` fuzz target and its replay
/// test, kept here so both call exactly the same code.
#[doc(hidden)]
pub fn run_gpu_parsers(lines: &[Line<'_>]) {
    let _ = topo::parse(lines);
    let _ = topo::parse_p2p(lines);
    let _ = smi_query::parse(lines);
    let _ = smi_csv::parse(lines);
    let _ = smi_list::parse(lines);
    let _ = dmon::parse(lines);
    let _ = dcgmi_nvlink::parse_status(lines);
    let _ = dcgmi_nvlink::parse_errors(lines);
    let _ = dcgmi_diag::parse_diag(lines);
    let _ = dcgmi_diag::parse_health(lines);
    let _ = mlxlink::parse(lines);
}

/// Names of all supported formats, for messages.
#[must_use]
pub fn supported_formats() -> Vec<&'static str> {
    FORMATS.iter().map(|f| f.name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_names_match_serde_names_and_are_unique() {
        let mut names = std::collections::HashSet::new();
        for f in FORMATS {
            let serde_name = serde_json::to_value(f.kind).unwrap();
            assert_eq!(serde_name, f.name, "format {:?}", f.kind);
            assert!(names.insert(f.name), "duplicate {}", f.name);
        }
    }
}
