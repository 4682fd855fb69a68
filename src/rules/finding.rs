//! What a rule produces: findings with their subject, evidence and threshold.

use super::Severity;
use crate::span::LineSpan;
use serde::{Deserialize, Serialize};

/// What a finding is about. Only the fields that apply are set.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
pub struct Subject {
    /// Host name, when the input names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// InfiniBand device (CA) such as `mlx5_0`, or a switch description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// InfiniBand port number.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<u32>,
    /// An InfiniBand port whose adapter and number the input does not show
    /// (its fields pasted without the `CA '…'`/`Port N:` or ibstatus
    /// header lines): its place among such ports of the host, from 1 in
    /// input order. `device` and `port` are then empty: they are not
    /// guessed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headerless_port: Option<u32>,
    /// InfiniBand LID.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lid: Option<u32>,
    /// InfiniBand port or node GUID (`0x…`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "wasm", tsify(type = "string"))]
    pub guid: Option<crate::model::ib::Guid>,
    /// GPU index as nvidia-smi numbers it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu: Option<u32>,
    /// GPU UUID (`GPU-…`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_uuid: Option<String>,
    /// True when the finding is about a GPU the input does not name (link
    /// lines pasted without their `GPU N:` header): `gpu` is then empty.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub gpu_unknown: bool,
    /// PCI bus id of a GPU (`00000000:18:00.0`), when that is how the tool names it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bus_id: Option<String>,
    /// NVLink link number on the GPU.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<u32>,
    /// Lane within a link or port.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lane: Option<u32>,
    /// Second GPU of a pair (topology findings).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peer_gpu: Option<u32>,
    /// NIC name as `topo -m` prints it (`NIC0` or `mlx5_0`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nic: Option<String>,
}

impl Subject {
    /// A subject on `host`.
    #[must_use]
    pub fn host(host: Option<&str>) -> Self {
        Self {
            host: host.map(str::to_owned),
            ..Self::default()
        }
    }

    /// `mlx5_0 port 1`, `GPU 3 link 7`, `GPU 0 ↔ GPU 5`: the subject without its host.
    #[must_use]
    pub fn describe(&self) -> String {
        let mut out = String::with_capacity(24);
        self.write_description(&mut out);
        out
    }

    /// Appends [`describe`](Self::describe)'s text to `out`: a finding's
    /// message usually starts with its subject, written in place. The
    /// parts are pushed as they are, numbers without the formatting
    /// machinery: a fleet has tens of thousands of findings.
    pub(crate) fn write_description(&self, out: &mut String) {
        use super::wording::push_u64;
        let mut parts = 0usize;
        // Separates a part from the one before it.
        let mut part = |out: &mut String| {
            if parts > 0 {
                out.push(' ');
            }
            parts += 1;
        };
        // `mlx5_0 port 1 LID 12` when the adapter is known, `LID 12 port 1`
        // when perfquery only gave the LID.
        match (&self.device, self.lid) {
            (Some(d), _) => {
                part(out);
                out.push_str(d);
            }
            (None, Some(l)) => {
                part(out);
                out.push_str("LID ");
                push_u64(out, l.into());
            }
            // Neither the node nor the LID is known (ibqueryerrors port
            // lines pasted without their `Errors for` header): the GUID
            // printed on the line is what names the port, and `port 1`
            // alone would read as one port for all of them.
            (None, None) => {
                if let (Some(g), Some(_)) = (&self.guid, self.port) {
                    use std::fmt::Write;
                    part(out);
                    let _ = write!(out, "{g}");
                }
            }
        }
        if let Some(p) = self.port {
            part(out);
            out.push_str("port ");
            push_u64(out, p.into());
        }
        // `#`: a place among the header-less ports, not a port number.
        if let Some(n) = self.headerless_port {
            part(out);
            out.push_str("header-less port #");
            push_u64(out, n.into());
        }
        if let (Some(_), Some(l)) = (&self.device, self.lid) {
            part(out);
            out.push_str("LID ");
            push_u64(out, l.into());
        }
        if self.device.is_none() && self.port.is_none() {
            if let Some(g) = &self.guid {
                use std::fmt::Write;
                part(out);
                let _ = write!(out, "{g}");
            }
        }
        if let Some(g) = self.gpu {
            part(out);
            out.push_str("GPU ");
            push_u64(out, g.into());
        } else if self.gpu_unknown {
            part(out);
            out.push_str("unknown GPU");
        }
        if let Some(b) = &self.bus_id {
            // `GPU 3 (00000000:4E:00.0)` when the index is known too.
            if self.gpu.is_some() {
                out.push_str(" (");
                out.push_str(b);
                out.push(')');
            } else {
                part(out);
                out.push_str("GPU ");
                out.push_str(b);
            }
        }
        if let Some(l) = self.link {
            part(out);
            out.push_str("link ");
            push_u64(out, l.into());
        }
        if let Some(l) = self.lane {
            part(out);
            out.push_str("lane ");
            push_u64(out, l.into());
        }
        if let Some(p) = self.peer_gpu {
            part(out);
            out.push_str("↔ GPU ");
            push_u64(out, p.into());
        }
        if let Some(n) = &self.nic {
            part(out);
            if !n.starts_with("NIC") {
                out.push_str("NIC ");
            }
            out.push_str(n);
        }
        if parts == 0 {
            out.push_str(WHOLE_HOST);
        }
    }
}

/// What [`Subject::describe`] says of a subject that is a whole host (or
/// nothing at all): the host's own name is given beside it.
pub(crate) const WHOLE_HOST: &str = "host";

/// One piece of evidence: a value or statistic, and the lines it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
pub struct Evidence {
    /// The value as a person would say it (`SymbolErrorCounter = 4312`).
    pub text: String,
    /// The input lines it was read from.
    #[serde(flatten)]
    pub span: LineSpan,
    /// The file it was read from, in batch runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

impl Evidence {
    /// Evidence read from `span` of `source`.
    #[must_use]
    pub fn new(text: impl Into<String>, span: LineSpan, source: Option<&str>) -> Self {
        Self {
            text: text.into(),
            span,
            source: source.map(str::to_owned),
        }
    }
}

/// The limit a value was judged against, and where that limit comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
pub struct Threshold {
    /// The limit as a person would say it (`> 10`, `≥ 100/s`, `Active/LinkUp`).
    pub value: String,
    /// Where the number comes from (`infiniband-diags error_thresholds`, `DCGM`…).
    pub source: String,
}

impl Threshold {
    /// A threshold with its source.
    #[must_use]
    pub fn new(value: impl Into<String>, source: impl Into<String>) -> Self {
        Self {
            value: value.into(),
            source: source.into(),
        }
    }
}

/// A problem found by a rule, with everything needed to explain it.
///
/// Read back from JSON (`fabricscope diff`, `--baseline`), the rule id is
/// looked up in the registry: a report naming a rule this build does not
/// know is refused rather than misread.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
#[non_exhaustive]
pub struct Finding {
    /// The rule's id (`IB001`).
    pub rule: &'static str,
    /// The rule's name (`port-down`).
    pub name: &'static str,
    /// How bad it is.
    pub severity: Severity,
    /// What it is about.
    pub subject: Subject,
    /// One line for people.
    pub message: String,
    /// The values behind the conclusion, with their input lines.
    pub evidence: Vec<Evidence>,
    /// The limit the values were judged against, when there is one.
    pub threshold: Option<Threshold>,
    /// What to do about it.
    pub remediation: String,
    /// Stable id of the rule and subject, independent of line numbers and
    /// input order (set by [`crate::analyze()`]; empty before).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub fingerprint: String,
}

/// A finding as JSON holds it, before its rule is looked up.
#[derive(Deserialize)]
struct FindingWire {
    rule: String,
    severity: Severity,
    subject: Subject,
    message: String,
    #[serde(default)]
    evidence: Vec<Evidence>,
    #[serde(default)]
    threshold: Option<Threshold>,
    #[serde(default)]
    remediation: String,
    #[serde(default)]
    fingerprint: String,
}

impl<'de> Deserialize<'de> for Finding {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let wire = FindingWire::deserialize(deserializer)?;
        Finding::try_from(wire).map_err(serde::de::Error::custom)
    }
}

impl TryFrom<FindingWire> for Finding {
    type Error = String;

    fn try_from(w: FindingWire) -> Result<Self, String> {
        let rule = super::by_id(&w.rule).ok_or_else(|| format!("unknown rule {:?}", w.rule))?;
        Ok(Finding {
            rule: rule.id,
            name: rule.name,
            severity: w.severity,
            subject: w.subject,
            message: w.message,
            evidence: w.evidence,
            threshold: w.threshold,
            remediation: w.remediation,
            fingerprint: w.fingerprint,
        })
    }
}

impl Finding {
    /// Sets the severity.
    #[must_use]
    pub fn severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }

    /// Adds a piece of evidence.
    #[must_use]
    pub fn evidence(mut self, evidence: Evidence) -> Self {
        self.evidence.push(evidence);
        self
    }

    /// Adds evidence when there is some.
    #[must_use]
    pub fn evidence_opt(mut self, evidence: Option<Evidence>) -> Self {
        self.evidence.extend(evidence);
        self
    }

    /// Sets the threshold.
    #[must_use]
    pub fn threshold(mut self, threshold: Threshold) -> Self {
        self.threshold = Some(threshold);
        self
    }

    /// Sets the remediation.
    #[must_use]
    pub fn remediation(mut self, text: impl Into<String>) -> Self {
        self.remediation = text.into();
        self
    }

    /// The first input line the finding points at, for sorting and SARIF.
    #[must_use]
    pub fn first_span(&self) -> Option<(&Option<String>, LineSpan)> {
        self.evidence.first().map(|e| (&e.source, e.span))
    }

    /// Appends the finding as `serde_json`'s pretty printer prints it
    /// `depth` levels deep in a document (the report's `findings` are at
    /// depth 2): its opening brace first, its fields `depth + 1` levels
    /// deep, the bytes its `Serialize` gives (a test compares them).
    ///
    /// A fleet's findings are formatted as they are stored, tens of
    /// thousands of them: through `serde`, each key of the finding, its
    /// subject, evidence and threshold was a call chain and an escape scan,
    /// most of the time spent on findings after the rules ran. Strings that
    /// need an escape still go through `serde_json`.
    pub fn write_pretty(&self, depth: usize, out: &mut Vec<u8>) {
        use crate::report::incident::pretty::{array, subject, word, Object};
        // Every field named: a new one fails to compile here until it is
        // written too.
        let Finding {
            rule,
            name,
            severity,
            subject: about,
            message,
            evidence,
            threshold,
            remediation,
            fingerprint,
        } = self;
        let mut o = Object::begin(out, depth);
        o.str("rule", rule);
        o.str("name", name);
        word(o.key("severity"), severity.name());
        let field = o.depth;
        subject(o.key("subject"), field, about);
        o.str("message", message);
        array(o.key("evidence"), field, evidence, Evidence::write_pretty);
        match threshold {
            Some(t) => t.write_pretty(field, o.key("threshold")),
            None => o.key("threshold").extend_from_slice(b"null"),
        }
        o.str("remediation", remediation);
        if !fingerprint.is_empty() {
            o.str("fingerprint", fingerprint);
        }
        o.end();
    }
}

impl Evidence {
    /// Appends the evidence as [`Finding::write_pretty`] writes it at
    /// `depth`: its span's lines flattened into its fields.
    fn write_pretty(&self, depth: usize, out: &mut Vec<u8>) {
        let Evidence { text, span, source } = self;
        let mut o = crate::report::incident::pretty::Object::begin(out, depth);
        o.str("text", text);
        let LineSpan {
            first_line,
            last_line,
        } = *span;
        o.uint("first_line", first_line);
        o.uint("last_line", last_line);
        if let Some(source) = source {
            o.str("source", source);
        }
        o.end();
    }
}

impl Threshold {
    /// Appends the threshold as [`Finding::write_pretty`] writes it at `depth`.
    fn write_pretty(&self, depth: usize, out: &mut Vec<u8>) {
        let Threshold { value, source } = self;
        let mut o = crate::report::incident::pretty::Object::begin(out, depth);
        o.str("value", value);
        o.str("source", source);
        o.end();
    }
}

/// A rule that could not run, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
pub struct SkippedRule {
    /// The rule's id.
    pub rule: &'static str,
    /// What was missing.
    pub reason: String,
}

/// A skipped rule as JSON holds it, before its rule is looked up.
#[derive(Deserialize)]
struct SkippedRuleWire {
    rule: String,
    reason: String,
}

impl<'de> Deserialize<'de> for SkippedRule {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let wire = SkippedRuleWire::deserialize(deserializer)?;
        SkippedRule::try_from(wire).map_err(serde::de::Error::custom)
    }
}

impl TryFrom<SkippedRuleWire> for SkippedRule {
    type Error = String;

    fn try_from(w: SkippedRuleWire) -> Result<Self, String> {
        let rule = super::by_id(&w.rule).ok_or_else(|| format!("unknown rule {:?}", w.rule))?;
        Ok(SkippedRule {
            rule: rule.id,
            reason: w.reason,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`Subject::describe`] as it was written before it wrote into one
    /// string: parts collected and joined.
    fn describe_oracle(s: &Subject) -> String {
        let mut parts: Vec<String> = Vec::new();
        match (&s.device, s.lid) {
            (Some(d), _) => parts.push(d.clone()),
            (None, Some(l)) => parts.push(format!("LID {l}")),
            (None, None) => {
                if let (Some(g), Some(_)) = (&s.guid, s.port) {
                    parts.push(g.to_string());
                }
            }
        }
        if let Some(p) = s.port {
            parts.push(format!("port {p}"));
        }
        if let (Some(_), Some(l)) = (&s.device, s.lid) {
            parts.push(format!("LID {l}"));
        }
        if s.device.is_none() && s.port.is_none() {
            if let Some(g) = &s.guid {
                parts.push(g.to_string());
            }
        }
        if let Some(g) = s.gpu {
            parts.push(format!("GPU {g}"));
        } else if s.gpu_unknown {
            parts.push("unknown GPU".to_owned());
        }
        if let Some(b) = &s.bus_id {
            match (s.gpu, parts.last_mut()) {
                (Some(_), Some(gpu)) => gpu.push_str(&format!(" ({b})")),
                _ => parts.push(format!("GPU {b}")),
            }
        }
        if let Some(l) = s.link {
            parts.push(format!("link {l}"));
        }
        if let Some(l) = s.lane {
            parts.push(format!("lane {l}"));
        }
        if let Some(p) = s.peer_gpu {
            parts.push(format!("↔ GPU {p}"));
        }
        if let Some(n) = &s.nic {
            parts.push(if n.starts_with("NIC") {
                n.clone()
            } else {
                format!("NIC {n}")
            });
        }
        if parts.is_empty() {
            "host".to_owned()
        } else {
            parts.join(" ")
        }
    }

    /// Text with what JSON must escape (quotes, backslashes, control
    /// characters), what it must not (accents, other scripts) and plain
    /// words.
    fn any_text() -> impl proptest::strategy::Strategy<Value = String> {
        "(\\PC|[a-z0-9 _.:-]|\"|\\\\|[\t\n\r\u{0}\u{1}\u{1f}\u{7f}]|\u{301}|→){0,10}"
    }

    proptest::proptest! {
        /// A finding written by hand is the text `serde_json`'s pretty
        /// printer writes for it at the same depth, whatever its strings,
        /// subject, evidence (none, several, with and without a source),
        /// threshold and fingerprint (empty: left out).
        #[test]
        fn finding_written_by_hand_is_serdes(
            subject in crate::report::incident::tests::any_subject(),
            rule in proptest::sample::select(vec!["IB001", "FL004", "a\"b\\c", "é\u{1}\n"]),
            severity in proptest::sample::select(Severity::WORST_FIRST.to_vec()),
            (message, remediation) in (any_text(), any_text()),
            fingerprint in proptest::prop_oneof![proptest::strategy::Just(String::new()), any_text()],
            evidence in proptest::collection::vec(
                (any_text(), proptest::num::usize::ANY, 0usize..100, proptest::option::of(any_text())),
                0..4,
            ),
            threshold in proptest::option::of((any_text(), any_text())),
            depth in 0usize..40,
        ) {
            let f = Finding {
                rule,
                name: rule,
                severity,
                subject,
                message,
                evidence: evidence
                    .into_iter()
                    .map(|(text, first_line, last_line, source)| Evidence {
                        text,
                        span: LineSpan { first_line, last_line },
                        source,
                    })
                    .collect(),
                threshold: threshold.map(|(value, source)| Threshold { value, source }),
                remediation,
                fingerprint,
            };
            let mut written = Vec::new();
            f.write_pretty(depth, &mut written);
            // The pretty text with `depth` more levels after every newline
            // (no string holds a raw newline: JSON escapes it).
            let want = serde_json::to_string_pretty(&f)
                .unwrap_or_default()
                .replace('\n', &format!("\n{}", "  ".repeat(depth)));
            proptest::prop_assert_eq!(String::from_utf8(written).unwrap_or_default(), want);
        }
    }

    /// A port known by its GUID alone (ibqueryerrors port lines pasted
    /// without the header naming their node) is named by it: `port 1`
    /// alone would say the same of every such port.
    #[test]
    fn a_port_known_only_by_its_guid_is_named_by_it() {
        let port = |guid| Subject {
            port: Some(1),
            guid: Some(crate::model::ib::Guid(guid)),
            ..Subject::default()
        };
        assert_eq!(
            port(0x0c42_a103_00dc_f8e2).describe(),
            "0x0c42a10300dcf8e2 port 1"
        );
        assert_ne!(port(1).describe(), port(2).describe());
        // A node or LID names the port: the GUID is not repeated.
        let named = Subject {
            device: Some("leaf-01".to_owned()),
            ..port(1)
        };
        assert_eq!(named.describe(), "leaf-01 port 1");
        let by_lid = Subject {
            lid: Some(12),
            ..port(1)
        };
        assert_eq!(by_lid.describe(), "LID 12 port 1");
    }

    #[test]
    fn describe_says_every_combination_of_fields_as_joined_parts_did() {
        // Every subset of the fields (an empty device name included: its
        // part is empty but still separated).
        for bits in 0u32..(1 << 12) {
            let on = |i: u32| bits & (1 << i) != 0;
            let s = Subject {
                host: on(0).then(|| "gpu01".to_owned()),
                device: on(1).then(|| {
                    if on(11) {
                        String::new()
                    } else {
                        "mlx5_0".to_owned()
                    }
                }),
                port: on(2).then_some(1),
                lid: on(3).then_some(12),
                guid: on(4).then_some(crate::model::ib::Guid(0x1234)),
                gpu: on(5).then_some(3),
                gpu_unknown: on(6),
                bus_id: on(7).then(|| "00000000:18:00.0".to_owned()),
                link: on(8).then_some(7),
                lane: on(9).then_some(2),
                peer_gpu: on(10).then_some(5),
                nic: on(11).then(|| {
                    if on(6) {
                        "NIC0".to_owned()
                    } else {
                        "mlx5_1".to_owned()
                    }
                }),
                ..Subject::default()
            };
            assert_eq!(s.describe(), describe_oracle(&s), "{s:?}");
            let mut after = "GPU 1: ".to_owned();
            s.write_description(&mut after);
            assert_eq!(after, format!("GPU 1: {}", describe_oracle(&s)), "{s:?}");
        }
    }
}
