//! Confusion counts per category, and the list of every disagreement.

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// True/false positives and negatives of one category.
#[derive(Debug, Default, Clone, Copy)]
pub struct Confusion {
    pub tp: usize,
    pub fp: usize,
    pub fn_: usize,
    pub tn: usize,
}

impl Confusion {
    /// Counts one case: `expected` from the ground truth, `reported` by the analyzer.
    pub fn add(&mut self, expected: bool, reported: bool) {
        match (expected, reported) {
            (true, true) => self.tp += 1,
            (false, true) => self.fp += 1,
            (true, false) => self.fn_ += 1,
            (false, false) => self.tn += 1,
        }
    }
}

/// Whether a category's disagreements fail the test, or are only shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    /// Part of the requirement: any false positive or negative fails.
    Required,
    /// Context for the log (what the dumps cannot show, or nice-to-haves).
    Informative,
}

/// Every category's counts, plus the disagreements in words.
#[derive(Debug, Default)]
pub struct Tally {
    categories: BTreeMap<(usize, String), (Gate, Confusion)>,
    order: usize,
    /// Disagreements of required categories: each fails the test.
    pub failures: Vec<String>,
    /// Disagreements of informative categories.
    pub notes: Vec<String>,
}

impl Tally {
    /// Lists a category before any case, so the table keeps a reading order
    /// and shows categories that saw no case.
    pub fn declare(&mut self, category: &str, gate: Gate) {
        if self.categories.keys().any(|(_, name)| name == category) {
            return;
        }
        self.order += 1;
        self.categories.insert(
            (self.order, category.to_owned()),
            (gate, Confusion::default()),
        );
    }

    /// Counts one case of `category`; on a disagreement records `why`.
    pub fn case(
        &mut self,
        category: &str,
        gate: Gate,
        expected: bool,
        reported: bool,
        why: impl FnOnce() -> String,
    ) {
        let key = match self.categories.keys().find(|(_, name)| name == category) {
            Some(k) => k.clone(),
            None => {
                self.order += 1;
                (self.order, category.to_owned())
            }
        };
        let entry = self
            .categories
            .entry(key)
            .or_insert((gate, Confusion::default()));
        entry.1.add(expected, reported);
        if expected != reported {
            let kind = if expected {
                "false negative"
            } else {
                "false positive"
            };
            let line = format!("[{category}] {kind}: {}", why());
            match gate {
                Gate::Required => self.failures.push(line),
                Gate::Informative => self.notes.push(line),
            }
        }
    }

    /// The counts of a category (zero when it never saw a case).
    pub fn get(&self, category: &str) -> Confusion {
        self.categories
            .iter()
            .find(|((_, name), _)| name == category)
            .map(|(_, (_, c))| *c)
            .unwrap_or_default()
    }

    /// The confusion table, one line per category.
    pub fn table(&self) -> String {
        let width = self
            .categories
            .keys()
            .map(|(_, n)| n.len())
            .max()
            .unwrap_or(8);
        let mut s = format!(
            "{:<width$}  {:>5} {:>5} {:>5} {:>5}  gate\n",
            "category", "TP", "FP", "FN", "TN"
        );
        for ((_, name), (gate, c)) in &self.categories {
            let gate = match gate {
                Gate::Required => "required",
                Gate::Informative => "informative",
            };
            let _ = writeln!(
                s,
                "{name:<width$}  {:>5} {:>5} {:>5} {:>5}  {gate}",
                c.tp, c.fp, c.fn_, c.tn
            );
        }
        s
    }
}
