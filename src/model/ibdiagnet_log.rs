//! ibdiagnet's console output and its `ibdiagnet2.log`: the checks it ran
//! over the whole fabric, each problem on a `-E-` (error) or `-W-`
//! (warning) line, and the summary table of every stage's counts.
//!
//! Only the problems whose shape is known are read into fields: a link
//! trained below what both ends enable, and a port counter that grew
//! during the run or is over ibdiagnet's threshold. Every other `-E-`/`-W-`
//! line is kept as printed, read and not judged.

use crate::model::ib::Guid;
use crate::span::LineSpan;
use serde::{Deserialize, Serialize};

/// What ibdiagnet printed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IbdiagnetLog {
    /// Links ibdiagnet found trained slower or narrower than expected.
    pub links: Vec<LinkCheck>,
    /// Port counters ibdiagnet flagged.
    pub counters: Vec<CounterCheck>,
    /// The `Summary` table: one row per stage.
    pub stages: Vec<StageSummary>,
    /// Other `-E-`/`-W-` lines, as printed (without the level mark).
    pub messages: Vec<Message>,
}

/// How ibdiagnet marked a line: `-E-` or `-W-`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// `-E-`.
    Error,
    /// `-W-`.
    Warning,
}

/// Which of a link's properties a [`LinkCheck`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkProperty {
    /// `Unexpected actual link speed`: the lane speed in Gb/s.
    Speed,
    /// `Unexpected actual link width`: `1x`, `4x`…
    Width,
}

/// One end of a link as ibdiagnet names it: `S<system guid>/N<node
/// guid>/P<port>` or `<node description>/P<port>` (`ime2/U1/P1`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkEnd {
    /// The name as printed.
    pub name: String,
    /// The node: its description, or the `S…/N…` part.
    pub node: String,
    /// The node GUID (`N…`), when the name carries one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_guid: Option<Guid>,
    /// The port number (`P<n>`); `None` when the name ends otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u32>,
}

/// `-E- Link: <end>(<--><end>) - Unexpected actual link speed 2.5
/// (enable_speed1="2.5 or 5 or 10", enable_speed2="2.5 or 5 or 10"
/// therefore final speed should be 10)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkCheck {
    /// `-E-` or `-W-`.
    pub level: Level,
    /// Speed or width.
    pub property: LinkProperty,
    /// The first end named.
    pub end: LinkEnd,
    /// The other end, when named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer: Option<LinkEnd>,
    /// The value the link trained at, as printed (`2.5`, `1x`).
    pub actual: String,
    /// What ibdiagnet says it should be (`should be 10`), from both ends'
    /// enabled values; `None` when the line was cut before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// The text in parentheses after the value, as printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The line.
    pub span: LineSpan,
}

/// A port counter ibdiagnet flagged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CounterCheck {
    /// `-E-` or `-W-` (the line's, or its block header's).
    pub level: Level,
    /// The port as ibdiagnet names it (`S…/N…/P20`, `node/U1/P1`, or
    /// `lid=0x0012 dev=4123 …`).
    pub port: String,
    /// ibdiagnet's counter name (`symbol_error_counter`).
    pub counter: String,
    /// The value: the growth during the run when `during_run`, else the
    /// counter's value.
    pub value: u64,
    /// The threshold ibdiagnet judged it by, when printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<u64>,
    /// True for `increased during the run (difference value=…)`: the
    /// counter grew between ibdiagnet's two readings of it.
    pub during_run: bool,
    /// The line(s).
    pub span: LineSpan,
}

/// A row of the `Summary` table: `-I- Discovery   3   0`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageSummary {
    /// The stage's name (`Fabric Discover`, `Speed / Width checks`).
    pub stage: String,
    /// Warnings counted in the stage.
    pub warnings: u64,
    /// Errors counted in the stage.
    pub errors: u64,
    /// The row's comment, when printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// The line.
    pub span: LineSpan,
}

/// An `-E-`/`-W-` line this reader keeps as printed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// `-E-` or `-W-`.
    pub level: Level,
    /// The text after the mark.
    pub text: String,
    /// The line.
    pub span: LineSpan,
}

impl IbdiagnetLog {
    /// True when the summary counts errors or warnings in some stage.
    #[must_use]
    pub fn summary_counts_problems(&self) -> bool {
        self.stages.iter().any(|s| s.errors + s.warnings > 0)
    }

    /// True when a problem line of any kind was read.
    #[must_use]
    pub fn has_problem_lines(&self) -> bool {
        !(self.links.is_empty() && self.counters.is_empty() && self.messages.is_empty())
    }
}
