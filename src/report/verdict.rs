//! The one-line verdict a report opens with: a level people scan for
//! (`critical`, `healthy`, `not enough to judge`) and the sentence after it.
//! JSON carries it as one string, `level: detail`, as it always has.

use crate::rules::Severity;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// How the whole input fared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VerdictLevel {
    /// No finding above `info`.
    Healthy,
    /// No rule had the data it needs: nothing was judged, so nothing is
    /// known to be healthy either.
    NotEnoughToJudge,
    /// The worst finding's severity (`warning` or worse).
    Problem(Severity),
}

impl VerdictLevel {
    /// The word the verdict line starts with.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Healthy => "healthy",
            Self::NotEnoughToJudge => "not enough to judge",
            Self::Problem(severity) => severity.name(),
        }
    }

    fn parse(text: &str) -> Option<Self> {
        match text {
            "healthy" => Some(Self::Healthy),
            "not enough to judge" => Some(Self::NotEnoughToJudge),
            other => Severity::parse(other).map(Self::Problem),
        }
    }
}

/// The verdict line: its level and what follows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// The level the line starts with.
    pub level: VerdictLevel,
    /// The rest of the line: counts, hosts affected, rules run.
    pub detail: String,
    line: String,
}

impl Verdict {
    /// A verdict of `level` saying `detail`.
    #[must_use]
    pub fn new(level: VerdictLevel, detail: impl Into<String>) -> Self {
        let detail = detail.into();
        let line = format!("{}: {detail}", level.name());
        Self {
            level,
            detail,
            line,
        }
    }

    /// The same verdict with more said after it.
    #[must_use]
    pub fn with_note(self, note: &str) -> Self {
        Self::new(self.level, format!("{}; {note}", self.detail))
    }

    /// The whole line, `level: detail`.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.line
    }
}

impl std::ops::Deref for Verdict {
    type Target = str;
    fn deref(&self) -> &str {
        &self.line
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.line)
    }
}

impl PartialEq<&str> for Verdict {
    fn eq(&self, other: &&str) -> bool {
        self.line == *other
    }
}

impl Serialize for Verdict {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.line)
    }
}

impl<'de> Deserialize<'de> for Verdict {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let line = String::deserialize(d)?;
        let (head, detail) = line.split_once(": ").unwrap_or((line.as_str(), ""));
        let level = VerdictLevel::parse(head)
            .ok_or_else(|| serde::de::Error::custom(format!("not a verdict: {line:?}")))?;
        Ok(Self::new(level, detail))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verdict_reads_back_from_its_json_line() {
        for v in [
            Verdict::new(VerdictLevel::Healthy, "no problems found on 2 host(s)"),
            Verdict::new(VerdictLevel::NotEnoughToJudge, "no rule had its data"),
            Verdict::new(VerdictLevel::Problem(Severity::Critical), "1 critical"),
        ] {
            let json = serde_json::to_string(&v).unwrap();
            assert_eq!(serde_json::from_str::<Verdict>(&json).unwrap(), v);
        }
        assert!(serde_json::from_str::<Verdict>("\"fine: x\"").is_err());
    }
}
