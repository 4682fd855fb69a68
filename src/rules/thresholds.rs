//! Counter limits, with where each number comes from.
//!
//! The defaults are the values infiniband-diags documents in its
//! `error_thresholds` file (the limits `ibqueryerrors -T` and the legacy
//! `ibcheckerrs` use), plus the DCGM limits for NVLink. A file in the same
//! `Name=value` format (`#` starts a comment) overrides any of them, so a site
//! that already tuned `/etc/infiniband-diags/error_thresholds` can pass it
//! as is with `--thresholds`.
//!
//! A counter is reported when its value is *greater than* its limit, as
//! `ibqueryerrors` does.

use std::collections::BTreeMap;
use thiserror::Error;

/// Where the InfiniBand counter defaults come from.
pub const IB_DIAGS_SOURCE: &str =
    "infiniband-diags etc/error_thresholds (recommended values, also ibcheckerrs defaults)";
/// Where the per-second error rate default comes from.
pub const IB_RATE_SOURCE: &str = "infiniband-diags IBswcountlimits.pm (ibswportwatch rate limits)";
/// Where the NVLink CRC rate default comes from.
pub const DCGM_CRC_SOURCE: &str =
    "DCGM DcgmGPUHardwareLimits.h DCGM_LIMIT_MAX_NVLINK_CRC_ERROR (100 per second)";
/// Where the NVLink replay/recovery default comes from.
pub const DCGM_REPLAY_SOURCE: &str =
    "DCGM health watch NVLink: any replay or recovery increase fails (DCGM_FR_NVLINK_ERROR_CRITICAL)";

/// Where the lifetime NVLink error limit comes from.
pub const NVLINK_LIFETIME_SOURCE: &str = "DCGM judges NVLink replay/recovery/CRC by increase; AWS eks-node-monitoring-agent#261 downgraded DCGM's lifetime-counter check; marin-community/marin#9086: a link with 505 lifetime recoveries failed five days later";

/// Where the congestion share default comes from.
pub const XMIT_WAIT_SHARE_SOURCE: &str =
    "fabricscope: 10 % of the interval spent waiting for credit; ticks converted to time as NVIDIA's ibdiagnet manual, Congestion Assessment on InfiniBand Links, documents (tick 7: one tick per 8 bytes at the port's rate)";

/// Limits fabricscope adds under its own names (not counters). Rules look
/// them up through these constants, so the spelling lives here only.
pub const ERRORS_PER_SECOND: &str = "ErrorsPerSecond";
/// The congestion share limit's name.
pub const XMIT_WAIT_SHARE: &str = "PortXmitWaitShare";
/// The NVLink CRC rate limit's name.
pub const NVLINK_CRC_PER_SECOND: &str = "NvlinkCrcErrorsPerSecond";
/// The NVLink replay increase limit's name.
pub const NVLINK_REPLAY: &str = "NvlinkReplayErrors";
/// The NVLink recovery increase limit's name.
pub const NVLINK_RECOVERY: &str = "NvlinkRecoveryErrors";
/// The lifetime NVLink error count that keeps an outlier a warning.
pub const NVLINK_LIFETIME: &str = "NvlinkLifetimeErrors";

/// Every limit name that is not a counter's: the others name a counter the
/// counter tables know (a test holds the built-in limits to that).
pub const OWN_NAMES: &[&str] = &[
    ERRORS_PER_SECOND,
    XMIT_WAIT_SHARE,
    NVLINK_CRC_PER_SECOND,
    NVLINK_REPLAY,
    NVLINK_RECOVERY,
    NVLINK_LIFETIME,
];

/// The built-in limits: name, value, source.
const DEFAULTS: &[(&str, f64, &str)] = &[
    ("SymbolErrorCounter", 10.0, IB_DIAGS_SOURCE),
    ("LinkErrorRecoveryCounter", 10.0, IB_DIAGS_SOURCE),
    ("LinkDownedCounter", 10.0, IB_DIAGS_SOURCE),
    ("PortRcvErrors", 10.0, IB_DIAGS_SOURCE),
    ("PortRcvRemotePhysicalErrors", 100.0, IB_DIAGS_SOURCE),
    ("PortRcvSwitchRelayErrors", 100.0, IB_DIAGS_SOURCE),
    ("PortXmitDiscards", 100.0, IB_DIAGS_SOURCE),
    ("PortXmitConstraintErrors", 100.0, IB_DIAGS_SOURCE),
    ("PortRcvConstraintErrors", 100.0, IB_DIAGS_SOURCE),
    ("LocalLinkIntegrityErrors", 10.0, IB_DIAGS_SOURCE),
    ("ExcessiveBufferOverrunErrors", 10.0, IB_DIAGS_SOURCE),
    ("VL15Dropped", 100.0, IB_DIAGS_SOURCE),
    ("PortXmitWait", 1000.0, IB_DIAGS_SOURCE),
    // Not in error_thresholds: fabricscope's own names, same file format.
    (ERRORS_PER_SECOND, 10.0, IB_RATE_SOURCE),
    (XMIT_WAIT_SHARE, 0.10, XMIT_WAIT_SHARE_SOURCE),
    (NVLINK_CRC_PER_SECOND, 100.0, DCGM_CRC_SOURCE),
    (NVLINK_REPLAY, 0.0, DCGM_REPLAY_SOURCE),
    (NVLINK_RECOVERY, 0.0, DCGM_REPLAY_SOURCE),
    (NVLINK_LIFETIME, 500.0, NVLINK_LIFETIME_SOURCE),
];

/// One limit and where it comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct ThresholdEntry {
    /// The limit: values greater than this are reported.
    pub value: f64,
    /// Where the number comes from.
    pub source: String,
}

/// The limits in force for one analysis.
#[derive(Debug, Clone, PartialEq)]
pub struct Thresholds {
    entries: BTreeMap<String, ThresholdEntry>,
}

impl Default for Thresholds {
    fn default() -> Self {
        let entries = DEFAULTS
            .iter()
            .map(|(name, value, source)| {
                (
                    (*name).to_owned(),
                    ThresholdEntry {
                        value: *value,
                        source: (*source).to_owned(),
                    },
                )
            })
            .collect();
        Self { entries }
    }
}

/// Why a thresholds file was refused. A typo in a limit must not pass
/// silently, so every bad line is an error.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ThresholdsError {
    /// A line that is not `Name=value`.
    #[error("{file} line {line}: expected Name=value, found {text:?}")]
    Syntax {
        /// The file's name.
        file: String,
        /// Line number (from 1).
        line: usize,
        /// The line.
        text: String,
    },
    /// A name fabricscope does not know.
    #[error("{file} line {line}: unknown counter {name:?}; known: {known}")]
    UnknownName {
        /// The file's name.
        file: String,
        /// Line number.
        line: usize,
        /// The name.
        name: String,
        /// The known names.
        known: String,
    },
    /// A value that is not a non-negative number.
    #[error("{file} line {line}: {name} must be a non-negative number, found {value:?}")]
    BadValue {
        /// The file's name.
        file: String,
        /// Line number.
        line: usize,
        /// The name.
        name: String,
        /// The value as written.
        value: String,
    },
}

impl Thresholds {
    /// The limit for `name` (a tool counter name such as `PortRcvErrors`, or
    /// one of fabricscope's own such as `NvlinkCrcErrorsPerSecond`).
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&ThresholdEntry> {
        self.entries.get(name)
    }

    /// The limit's value, or the built-in default when the name is unknown.
    #[must_use]
    pub fn value(&self, name: &str) -> f64 {
        self.get(name).map_or(0.0, |e| e.value)
    }

    /// The limit for `name` and where it comes from, or `default` when
    /// the name is unknown: looked up once where a rule judges many
    /// readings, the source borrowed until a finding needs it.
    #[must_use]
    pub fn value_and_source<'a>(&'a self, name: &str, default: (f64, &'a str)) -> (f64, &'a str) {
        self.get(name)
            .map_or(default, |e| (e.value, e.source.as_str()))
    }

    /// Every limit, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &ThresholdEntry)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Applies an `error_thresholds` file over the current limits.
    ///
    /// # Errors
    /// A line that is not `Name=value`, an unknown name or a bad value.
    pub fn apply_file(&mut self, text: &str, file: &str) -> Result<(), ThresholdsError> {
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let content = raw.split('#').next().unwrap_or("").trim();
            if content.is_empty() {
                continue;
            }
            let Some((name, value)) = content.split_once('=') else {
                return Err(ThresholdsError::Syntax {
                    file: file.to_owned(),
                    line,
                    text: raw.to_owned(),
                });
            };
            let (name, value) = (name.trim(), value.trim());
            let Some(entry) = self.entries.get_mut(name) else {
                return Err(ThresholdsError::UnknownName {
                    file: file.to_owned(),
                    line,
                    name: name.to_owned(),
                    known: DEFAULTS
                        .iter()
                        .map(|(n, _, _)| *n)
                        .collect::<Vec<_>>()
                        .join(", "),
                });
            };
            let parsed = parse_value(value).filter(|v| v.is_finite() && *v >= 0.0);
            let Some(parsed) = parsed else {
                return Err(ThresholdsError::BadValue {
                    file: file.to_owned(),
                    line,
                    name: name.to_owned(),
                    value: value.to_owned(),
                });
            };
            *entry = ThresholdEntry {
                value: parsed,
                source: format!("{file} line {line}"),
            };
        }
        Ok(())
    }

    /// The defaults with a file applied.
    ///
    /// # Errors
    /// As [`Thresholds::apply_file`].
    pub fn from_file(text: &str, file: &str) -> Result<Self, ThresholdsError> {
        let mut t = Self::default();
        t.apply_file(text, file)?;
        Ok(t)
    }
}

/// Decimal, or `0x` hex as infiniband-diags' `strtoul(…, 0)` also accepts.
fn parse_value(text: &str) -> Option<f64> {
    if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        #[allow(clippy::cast_precision_loss)]
        return u64::from_str_radix(hex, 16).ok().map(|v| v as f64);
    }
    text.parse::<f64>().ok()
}

/// The built-in value of the threshold `name`, as the rule documentation
/// quotes it.
fn default_value(name: &str) -> Option<f64> {
    DEFAULTS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, v, _)| *v)
}

/// Replaces `{limit:Name}` with the built-in value of threshold `Name`
/// (`10`, `0.1`) and `{percent:Name}` with it as a percentage (`10 %`).
/// An unknown name is left as written, which the registry tests reject.
pub(crate) fn fill_placeholders(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(open) = rest.find('{') {
        let (before, tail) = rest.split_at(open);
        out.push_str(before);
        let filled = tail.find('}').and_then(|close| {
            let inner = tail.get(1..close)?;
            let (kind, name) = inner.split_once(':')?;
            let value = default_value(name)?;
            let text = match kind {
                "limit" => format!("{value}"),
                "percent" => format!("{} %", (value * 100.0 * 1e6).round() / 1e6),
                _ => return None,
            };
            Some((text, close))
        });
        match filled {
            Some((text, close)) => {
                out.push_str(&text);
                rest = tail.get(close + 1..).unwrap_or_default();
            }
            None => {
                out.push('{');
                rest = tail.get(1..).unwrap_or_default();
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_take_the_built_in_values() {
        assert_eq!(
            fill_placeholders("> {limit:SymbolErrorCounter} (x); {limit:PortXmitWait}"),
            "> 10 (x); 1000"
        );
        assert_eq!(
            fill_placeholders("{percent:PortXmitWaitShare} of it"),
            "10 % of it"
        );
        assert_eq!(
            fill_placeholders("{limit:NoSuchName} {x} {"),
            "{limit:NoSuchName} {x} {"
        );
    }

    #[test]
    fn defaults_are_the_documented_infiniband_diags_values() {
        let t = Thresholds::default();
        assert_eq!(t.value("SymbolErrorCounter"), 10.0);
        assert_eq!(t.value("PortRcvRemotePhysicalErrors"), 100.0);
        assert_eq!(t.value("PortXmitWait"), 1000.0);
        assert_eq!(t.value("NvlinkCrcErrorsPerSecond"), 100.0);
    }

    #[test]
    fn an_error_thresholds_file_overrides_and_names_itself_as_source() {
        let file = "# comment\n\n#SymbolErrorCounter=10\nSymbolErrorCounter = 3  # tighter\nPortXmitWait=0x10\n";
        let t = Thresholds::from_file(file, "site.thr").unwrap();
        let e = t.get("SymbolErrorCounter").unwrap();
        assert_eq!(e.value, 3.0);
        assert_eq!(e.source, "site.thr line 4");
        assert_eq!(t.value("PortXmitWait"), 16.0);
        assert_eq!(t.value("LinkDownedCounter"), 10.0);
    }

    #[test]
    fn typos_and_bad_values_are_refused_with_the_line() {
        let err = Thresholds::from_file("SymbolErrors=3\n", "f").unwrap_err();
        assert!(
            err.to_string().starts_with("f line 1: unknown counter"),
            "{err}"
        );
        let err = Thresholds::from_file("\nPortRcvErrors=-1\n", "f").unwrap_err();
        assert!(matches!(err, ThresholdsError::BadValue { line: 2, .. }));
        let err = Thresholds::from_file("PortRcvErrors 5\n", "f").unwrap_err();
        assert!(matches!(err, ThresholdsError::Syntax { line: 1, .. }));
    }
}
