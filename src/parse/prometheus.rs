//! The Prometheus text the exporters' readers share: the exposition
//! format (`curl …/metrics`) and a query's result (`promtool query
//! instant`, the console's `=> v @[t]`), one metric line at a time.
//!
//! ```text
//! # HELP name what it counts
//! # TYPE name counter
//! name{key="value",other="v"} 1.2345e+10 1765101600000
//! name{other="v", key="value"} => 3 @[1765101600.123]
//! ```
//!
//! Labels come in any order, with escapes in their values; the value is a
//! Prometheus float; the time stamp is milliseconds (exposition) or seconds
//! after `@[` (a query). What a metric means is each reader's
//! ([`super::node_exporter`], [`super::dcgm_exporter`]).

use crate::span::LineSpan;
use std::borrow::Cow;

/// A line's labels, in the order printed: key and value.
pub(crate) type Labels<'t> = Vec<(&'t str, Cow<'t, str>)>;

/// A metric line as read: its name, labels, value and time stamp.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sample<'t> {
    pub(crate) name: &'t str,
    pub(crate) labels: Labels<'t>,
    /// `None` when the line ends after the labels (a cut value).
    pub(crate) value: Option<&'t str>,
    /// Milliseconds since the epoch.
    pub(crate) timestamp_ms: Option<i64>,
}

impl Sample<'_> {
    pub(crate) fn label(&self, key: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.as_ref())
    }
}

/// What a line is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Read<'t> {
    /// `# HELP name …` or `# TYPE name …`: the metric's name.
    Meta(&'t str),
    Sample(Sample<'t>),
}

/// What the trimmed line `t` is: a `# HELP`/`# TYPE` comment, or a sample
/// of a metric named `prefix…` (each reader's own prefix).
pub(crate) fn read<'t>(t: &'t str, prefix: &str) -> Option<Read<'t>> {
    if t.starts_with('#') {
        meta(t).map(Read::Meta)
    } else {
        sample(t, prefix).map(Read::Sample)
    }
}

/// A metric name: ASCII letters, digits, `_` and `:`, not opening with a
/// digit.
pub(crate) fn name_len(t: &str) -> usize {
    let n = t
        .bytes()
        .position(|b| !(b.is_ascii_alphanumeric() || b == b'_' || b == b':'))
        .unwrap_or(t.len());
    if t.as_bytes().first().is_some_and(u8::is_ascii_digit) {
        0
    } else {
        n
    }
}

/// `# HELP name …` / `# TYPE name …`: the name.
pub(crate) fn meta(t: &str) -> Option<&str> {
    let rest = t
        .strip_prefix("# HELP ")
        .or_else(|| t.strip_prefix("# TYPE "))?;
    let rest = rest.trim_start_matches(' ');
    let n = name_len(rest);
    let name = rest.get(..n)?;
    let after = rest.get(n..)?;
    (n > 0 && (after.is_empty() || after.starts_with(' '))).then_some(name)
}

/// `{key="value",…}` at the start of `t`: the labels and the rest after
/// `}`; `None` when the braces do not close or a pair is malformed.
pub(crate) fn labels(t: &str) -> Option<(Labels<'_>, &str)> {
    let mut rest = t.strip_prefix('{')?;
    let mut out = Vec::new();
    loop {
        rest = rest.trim_start_matches([' ', ',']);
        if let Some(after) = rest.strip_prefix('}') {
            return Some((out, after));
        }
        let n = rest
            .bytes()
            .position(|b| !(b.is_ascii_alphanumeric() || b == b'_'))
            .unwrap_or(rest.len());
        let key = rest.get(..n).filter(|k| !k.is_empty())?;
        rest = rest.get(n..)?.trim_start_matches(' ');
        rest = rest.strip_prefix('=')?.trim_start_matches(' ');
        rest = rest.strip_prefix('"')?;
        let (value, after) = quoted(rest)?;
        out.push((key, value));
        rest = after;
        let next = rest.trim_start_matches(' ');
        if !(next.starts_with(',') || next.starts_with('}')) {
            return None;
        }
    }
}

/// A label value after its opening quote: the value, its escapes (`\"`,
/// `\\`, `\n`) undone, and the text after the closing quote.
pub(crate) fn quoted(t: &str) -> Option<(Cow<'_, str>, &str)> {
    let bytes = t.as_bytes();
    let end = bytes
        .iter()
        .enumerate()
        .scan(false, |escaped, (i, &b)| {
            let closing = b == b'"' && !*escaped;
            *escaped = b == b'\\' && !*escaped;
            Some((i, closing))
        })
        .find(|(_, closing)| *closing)
        .map(|(i, _)| i)?;
    let raw = t.get(..end)?;
    let after = t.get(end + 1..)?;
    if !raw.contains('\\') {
        return Some((Cow::Borrowed(raw), after));
    }
    let mut value = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => value.push('\n'),
                Some(other) => value.push(other),
                None => {}
            }
        } else {
            value.push(c);
        }
    }
    Some((Cow::Owned(value), after))
}

/// A metric line: `name{labels} value [ms]` (exposition) or `name{labels}
/// => value @[seconds]` (a query's result); `None` for any other line. A
/// bare name with neither labels nor value is a metric line only when it
/// begins with `prefix` (the reader's metrics, cut before their value).
pub(crate) fn sample<'t>(t: &'t str, prefix: &str) -> Option<Sample<'t>> {
    let n = name_len(t);
    let name = t.get(..n).filter(|n| !n.is_empty())?;
    let rest = t.get(n..)?;
    let (labels, rest) = if rest.starts_with('{') {
        labels(rest)?
    } else {
        (Vec::new(), rest)
    };
    if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    let mut words = rest.split_whitespace();
    let mut value = words.next();
    let mut timestamp_ms = None;
    if value == Some("=>") {
        value = words.next();
        if let Some(at) = words.next() {
            let seconds = at.strip_prefix("@[")?.strip_suffix(']')?;
            timestamp_ms = Some(seconds_to_ms(seconds.parse::<f64>().ok()?)?);
        }
    } else if let Some(ms) = words.next() {
        timestamp_ms = Some(ms.parse::<i64>().ok()?);
    }
    if words.next().is_some() || value.is_some_and(|v| float(v).is_none()) {
        return None;
    }
    // A bare word with no labels and no value is no metric line.
    if value.is_none() && labels.is_empty() && !t.starts_with(prefix) {
        return None;
    }
    Some(Sample {
        name,
        labels,
        value,
        timestamp_ms,
    })
}

/// The block a metric line (with a value) or its `# HELP`/`# TYPE` line
/// of a metric named `prefix…` starts, keyed `tag|…`: a comment by its
/// kind and metric, a sample by its metric and its labels in name order,
/// so the same series again is a second scrape.
pub(crate) fn detect(
    lines: &[crate::parse::Line<'_>],
    prefix: &str,
    tag: &str,
) -> Option<crate::parse::Block> {
    use crate::parse::Block;
    let t = crate::parse::text::trim(lines.first()?.text());
    if t.starts_with('#') {
        let name = meta(t)?;
        let what = t.get(..6).unwrap_or_default();
        return name
            .starts_with(prefix)
            .then(|| Block::keyed(format!("{tag}|{what} {name}")));
    }
    if !t.starts_with(prefix) {
        return None;
    }
    let s = sample(t, prefix)?;
    s.value?;
    let mut key = format!("{tag}|{}", s.name);
    let mut labels: Vec<_> = s.labels.iter().collect();
    labels.sort_unstable_by_key(|(k, _)| *k);
    for (k, v) in labels {
        key.push('|');
        key.push_str(k);
        key.push('=');
        key.push_str(v);
    }
    Some(Block::keyed(key))
}

/// Whether `argv` is an exporter's scrape or query: `curl`/`wget` of a URL
/// `names_exporter` says is the exporter's (its port, its service name),
/// or a `promtool query` of a metric named `prefix…`. A bare `/metrics`
/// URL is neither exporter's claim: a claim limits the first section to
/// that format, and any exporter may serve `/metrics` on a port of its
/// deployment's choosing (the scrape's metric names then say whose it is).
pub(crate) fn claims_command(
    argv: &[&str],
    names_exporter: impl Fn(&str) -> bool,
    prefix: &str,
) -> bool {
    let program = argv.first().map(|p| p.rsplit('/').next().unwrap_or(p));
    match program {
        Some("curl" | "wget") => argv.iter().skip(1).any(|w| names_exporter(w)),
        Some("promtool") => {
            argv.get(1).is_some_and(|w| *w == "query")
                && argv.iter().skip(2).any(|w| w.contains(prefix))
        }
        _ => false,
    }
}

#[allow(clippy::cast_possible_truncation)] // a time stamp in milliseconds
pub(crate) fn seconds_to_ms(s: f64) -> Option<i64> {
    (s.is_finite() && s >= 0.0).then(|| (s * 1000.0).round() as i64)
}

/// A Prometheus float: `0`, `1.2345e+10`, `NaN`, `+Inf`.
pub(crate) fn float(t: &str) -> Option<f64> {
    t.parse::<f64>().ok()
}

/// A counter's value as a count: finite, not negative, whole.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
pub(crate) fn count(v: f64) -> Option<u64> {
    // Saturating: 2^64 - 1 as a float is 2^64, the all-ones field.
    (v.is_finite() && v >= 0.0 && v.fract() == 0.0).then_some(v as u64)
}

/// The host an `instance` label names: `gpu07:9100` → `gpu07`,
/// `[fe80::1]:9100` → `fe80::1`.
pub(crate) fn host_of_instance(instance: &str) -> &str {
    if let Some(inner) = instance
        .strip_prefix('[')
        .and_then(|r| r.split_once(']'))
        .map(|(h, _)| h)
    {
        return inner;
    }
    match instance.rsplit_once(':') {
        Some((host, port))
            if !host.contains(':')
                && !port.is_empty()
                && port.bytes().all(|b| b.is_ascii_digit()) =>
        {
            host
        }
        _ => instance,
    }
}

/// Consecutive line numbers as runs.
pub(crate) fn spans_of(numbers: &[usize]) -> Vec<LineSpan> {
    let mut out: Vec<LineSpan> = Vec::new();
    for &n in numbers {
        match out.last_mut() {
            Some(s) if s.last_line + 1 == n => *s = s.join(LineSpan::line(n)),
            _ => out.push(LineSpan::line(n)),
        }
    }
    out
}
