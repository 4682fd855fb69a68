//! Which counter set a reading came from, as a type.
//!
//! Counters pair only within one set (`perfquery Port` and `perfquery Port
//! extended` print the same names with different widths), and rules pick
//! readings by their tool. They used to test a string's prefix
//! (`source.starts_with("perfquery")`), which a rename would silently turn
//! off; they now match this enum. JSON still carries the words
//! (`"perfquery Port extended"`, `"nvidia-smi nvlink"`).

use crate::model::perfquery::PerfAttribute;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::cmp::Ordering;
use std::fmt;

/// The tool (and for perfquery, the attribute) a counter was read from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CounterSource {
    /// `perfquery`, with the attribute its header names (`Port`, `Port extended`, …).
    Perfquery(PerfAttribute),
    /// `ibqueryerrors`.
    Ibqueryerrors,
    /// `dcgmi nvlink -e`.
    DcgmiNvlink,
    /// `nvidia-smi nvlink` (`-e`, `-gt`, `-c`).
    NvidiaSmiNvlink,
}

impl CounterSource {
    /// Whether the counters come from `perfquery` (any attribute).
    #[must_use]
    pub fn is_perfquery(&self) -> bool {
        matches!(self, Self::Perfquery(_))
    }

    /// Reads the words [`Display`](fmt::Display) writes.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "ibqueryerrors" => Some(Self::Ibqueryerrors),
            "dcgmi nvlink" => Some(Self::DcgmiNvlink),
            "nvidia-smi nvlink" => Some(Self::NvidiaSmiNvlink),
            _ => text
                .strip_prefix("perfquery ")
                .map(|h| Self::Perfquery(PerfAttribute::from_header_name(h))),
        }
    }

    /// The words before the attribute, and the attribute's header name:
    /// together they compare like the words, so sorting by source keeps the
    /// order the JSON had when sources were strings.
    pub(crate) fn words(&self) -> (&'static str, &str) {
        match self {
            Self::DcgmiNvlink => ("dcgmi nvlink", ""),
            Self::Ibqueryerrors => ("ibqueryerrors", ""),
            Self::NvidiaSmiNvlink => ("nvidia-smi nvlink", ""),
            Self::Perfquery(a) => ("perfquery ", a.header_name()),
        }
    }
}

impl fmt::Display for CounterSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (tool, attribute) = self.words();
        f.write_str(tool)?;
        f.write_str(attribute)
    }
}

impl Ord for CounterSource {
    fn cmp(&self, other: &Self) -> Ordering {
        // Equal sources are the common case when sorting readings: decided
        // without looking up an attribute's header name.
        if self == other {
            return Ordering::Equal;
        }
        // The tool words differ in their first letter, so comparing them
        // first, then the attribute, is the order of the whole words.
        self.words().cmp(&other.words())
    }
}

impl PartialOrd for CounterSource {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Serialize for CounterSource {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for CounterSource {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        Self::parse(&text)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown counter source {text:?}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip_and_sort_like_the_words() {
        let all = [
            CounterSource::Perfquery(PerfAttribute::PortCounters),
            CounterSource::Perfquery(PerfAttribute::PortCountersExtended),
            CounterSource::Perfquery(PerfAttribute::PortXmitDataSl),
            CounterSource::Perfquery(PerfAttribute::from_header_name("PortFoo")),
            CounterSource::Ibqueryerrors,
            CounterSource::DcgmiNvlink,
            CounterSource::NvidiaSmiNvlink,
        ];
        for a in &all {
            assert_eq!(CounterSource::parse(&a.to_string()).as_ref(), Some(a));
            let json = serde_json::to_string(a).unwrap();
            assert_eq!(json, format!("\"{a}\""));
            assert_eq!(&serde_json::from_str::<CounterSource>(&json).unwrap(), a);
            for b in &all {
                assert_eq!(a.cmp(b), a.to_string().cmp(&b.to_string()), "{a} vs {b}");
            }
        }
        assert_eq!(
            CounterSource::Perfquery(PerfAttribute::PortCountersExtended).to_string(),
            "perfquery Port extended"
        );
        assert!(CounterSource::parse("sminfo").is_none());
    }
}
