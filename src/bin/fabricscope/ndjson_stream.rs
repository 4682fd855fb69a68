//! `analyze --format ndjson` streamed: each unit's incidents are printed
//! as soon as the unit is folded, in input order, then the fleet rules'.
//!
//! A unit may be printed only when it is known to be whole: two units that
//! name the same host are merged and read again ([`crate::analyze_cmd`]),
//! and a unit printed before a later one named its host would be printed
//! wrong. Which host a file names is known only once it is parsed, so
//! before the run one pass over the files ([`Safety::scan`], one
//! Aho–Corasick automaton for every host name, case-insensitive) finds the
//! hosts that no other file so much as mentions. A unit is printed at once
//! when its files are those of one host directory, that host is in no
//! other unit and mentioned by no other file, and its text names no other
//! host; any other unit is held in a temporary file and printed after the
//! last unit (its place in the output depends on the input only, never on
//! thread timing). A host a file names is always spelled out in it (a
//! pdsh prefix, a prompt, a file header, `hostname` output), so the scan
//! can only hold too much, never too little.

use crate::inputs::Source;
use crate::spool::TempFile;
use aho_corasick::{AhoCorasick, MatchKind};
use fabricscope::analyze::UnitResult;
use fabricscope::report::ndjson::{write_part, Scope};
use fabricscope::rules::Finding;
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};
use std::io::Write;

/// The host directory a listed file lies in, when it has one.
fn path_host(source: &Source) -> Option<&str> {
    source.place_host()
}

/// The hosts whose units may be printed as soon as they are folded.
pub struct Safety {
    /// Hosts of one unit each that no file of another host mentions.
    alone: HashSet<String>,
}

impl Safety {
    /// Scans every file for the host names of the others; `None` when
    /// some input is not a file of a host directory (standard input, a
    /// gzipped file, a file named on its own): then any unit might name any
    /// host, and every unit is held to the end.
    pub fn scan(sources: &[Source], units: &[Vec<usize>]) -> Option<Self> {
        let hosts: Vec<&str> = sources.iter().map(path_host).collect::<Option<_>>()?;
        let mut units_of: HashMap<&str, usize> = HashMap::new();
        for unit in units {
            if let Some(h) = unit.first().and_then(|&i| hosts.get(i)) {
                *units_of.entry(h).or_default() += 1;
            }
        }
        let names: Vec<&str> = units_of.keys().copied().collect();
        let index: HashMap<&str, usize> = names.iter().enumerate().map(|(i, h)| (*h, i)).collect();
        let automaton = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .build(&names)
            .ok()?;
        let mentioned: Vec<bool> = sources
            .par_iter()
            .zip(&hosts)
            .map(|(source, own)| {
                let own = index.get(own).copied();
                let mut seen = Vec::new();
                // An unreadable file names nothing (it is skipped).
                let bytes = match source {
                    Source::File { path, stat, .. } => {
                        match crate::inputs::read_file(path, *stat) {
                            Ok((bytes, _)) => std::borrow::Cow::Owned(bytes),
                            Err(_) => return seen,
                        }
                    }
                    Source::Member(member) => match &member.bytes {
                        Ok(bytes) => std::borrow::Cow::Borrowed(bytes.as_slice()),
                        Err(_) => return seen,
                    },
                    _ => return seen,
                };
                for m in automaton.find_overlapping_iter(&bytes) {
                    let i = m.pattern().as_usize();
                    let word = |at: Option<&u8>| at.is_some_and(u8::is_ascii_alphanumeric);
                    let cut = word(m.start().checked_sub(1).and_then(|s| bytes.get(s)))
                        || word(bytes.get(m.end()));
                    if Some(i) != own && !cut {
                        seen.push(i);
                    }
                }
                seen
            })
            .fold(
                || vec![false; names.len()],
                |mut acc, seen| {
                    for i in seen {
                        if let Some(slot) = acc.get_mut(i) {
                            *slot = true;
                        }
                    }
                    acc
                },
            )
            .reduce(
                || vec![false; names.len()],
                |a, b| a.iter().zip(&b).map(|(x, y)| *x || *y).collect(),
            );
        let alone = names
            .iter()
            .zip(&mentioned)
            .filter(|(h, m)| !**m && units_of.get(**h) == Some(&1))
            .map(|(h, _)| (*h).to_owned())
            .collect();
        Some(Self { alone })
    }

    /// Whether the unit whose first input's place names `host` and whose
    /// result is `result` can be printed now: the files of one host
    /// directory whose text names that host only, a host no other unit can
    /// name.
    pub fn prints_at_once(&self, host: Option<&str>, result: &UnitResult) -> bool {
        let Some(host) = host else {
            return false;
        };
        result.unnamed_hosts == 0
            && result.host_names.len() == 1
            && result.host_names.first().map(String::as_str) == Some(host)
            && self.alone.contains(host)
    }
}

/// One unit's lines, rendered while the unit was analysed (in parallel).
pub struct UnitLines {
    /// The NDJSON lines.
    pub bytes: Vec<u8>,
    /// Whether they may be printed as soon as the unit is folded.
    pub at_once: bool,
    /// The unit's first input: a unit printed in a pass that then found
    /// two units naming one host is not printed again in the next.
    pub first: usize,
}

impl UnitLines {
    /// Settles the unit's findings and renders them.
    pub fn render(findings: &mut Vec<Finding>, at_once: bool, first: usize) -> Self {
        fabricscope::analyze::settle_unit_findings(findings);
        let mut bytes = Vec::new();
        // The findings the fleet step judges first are printed with its
        // lines (or replaced by its finding), not the unit's; a copy of the
        // rest only for the few units that have such a finding.
        let held = fabricscope::analyze::held_for_the_fleet;
        // Writing to memory does not fail.
        let _ = if findings.iter().any(held) {
            let printed: Vec<Finding> = findings.iter().filter(|f| !held(f)).cloned().collect();
            write_part(&printed, Scope::Host, &mut bytes)
        } else {
            write_part(findings, Scope::Host, &mut bytes)
        };
        Self {
            bytes,
            at_once,
            first,
        }
    }
}

/// Where the streamed lines go.
pub struct NdjsonOut<'w> {
    out: &'w mut (dyn Write + Send),
    /// Lines of units held to the end, in input order.
    held: Option<TempFile>,
    /// Units printed (by first input), across passes.
    printed: HashSet<usize>,
}

impl<'w> NdjsonOut<'w> {
    pub fn new(out: &'w mut (dyn Write + Send)) -> Self {
        Self {
            out,
            held: None,
            printed: HashSet::new(),
        }
    }

    /// A new pass over the units: what was held is read again.
    pub fn restart(&mut self) {
        self.held = None;
    }

    /// Prints a unit's lines, or holds them to the end.
    pub fn unit(&mut self, lines: UnitLines) -> std::io::Result<()> {
        if lines.at_once {
            if self.printed.insert(lines.first) {
                self.out.write_all(&lines.bytes)?;
            }
            return Ok(());
        }
        if self.held.is_none() {
            self.held = Some(TempFile::new("ndjson")?);
        }
        match self.held.as_mut() {
            Some(file) => file.writer()?.write_all(&lines.bytes),
            None => Ok(()),
        }
    }

    /// Prints lines now (units of record shards: always whole).
    pub fn write_now(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.out.write_all(bytes)
    }

    /// Makes the lines printed so far visible (after each chunk of units).
    pub fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }

    /// Prints the held units, then the fleet rules' findings.
    pub fn finish(&mut self, fleet: &[Finding]) -> std::io::Result<()> {
        if let Some(mut held) = self.held.take() {
            held.copy_to(&mut *self.out)?;
        }
        write_part(fleet, Scope::Fleet, &mut *self.out)?;
        self.out.flush()
    }
}
