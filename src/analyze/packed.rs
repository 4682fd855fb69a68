//! The units' findings as a batch run holds them until the fleet step:
//! packed into one byte buffer, unpacked once, when the report is built.
//!
//! A [`Finding`] is several hundred bytes wide (its [`Subject`] alone has
//! five optional strings) before its heap parts, and a fleet has tens of
//! findings per host (5,000 hosts: 127,000). Held as findings while every
//! host is read, they were the largest part of the run's memory, and their
//! peak met that of the fleet facts. Packed, a light copy (rule, severity,
//! subject, fingerprint: see `fleet.rs`) takes the bytes of its strings and
//! a few bytes per number — about a fifth — and the findings are unpacked
//! only after the fleet rules have let go of the facts.
//!
//! The layout is private to this module and lives only in memory: numbers
//! as LEB128 varints, strings as their length then their bytes, the
//! subject's fields after a bitmask of those present, a threshold after a
//! 0 or 1 byte, and an evidence's file as 0 (none) or its length plus one.

use crate::rules::{Evidence, Finding, Severity, Subject, Threshold};
use crate::span::LineSpan;

/// Findings packed one after another, in the order they were pushed.
#[derive(Debug, Default)]
pub(crate) struct PackedFindings {
    bytes: Vec<u8>,
    /// The rules named so far (id, name): a finding stores its rule's index.
    rules: Vec<(&'static str, &'static str)>,
    len: usize,
}

/// Subject fields present, one bit each (in the order they are written).
mod has {
    pub const HOST: u16 = 1;
    pub const DEVICE: u16 = 1 << 1;
    pub const PORT: u16 = 1 << 2;
    pub const LID: u16 = 1 << 3;
    pub const GUID: u16 = 1 << 4;
    pub const GPU: u16 = 1 << 5;
    pub const GPU_UUID: u16 = 1 << 6;
    pub const GPU_UNKNOWN: u16 = 1 << 7;
    pub const BUS_ID: u16 = 1 << 8;
    pub const LINK: u16 = 1 << 9;
    pub const LANE: u16 = 1 << 10;
    pub const PEER_GPU: u16 = 1 << 11;
    pub const NIC: u16 = 1 << 12;
    pub const HEADERLESS_PORT: u16 = 1 << 13;
}

impl PackedFindings {
    /// How many findings are packed.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.len
    }

    /// Packs `f` after the others.
    pub(crate) fn push(&mut self, f: &Finding) {
        let rule = match self.rules.iter().rposition(|&(id, _)| id == f.rule) {
            Some(i) => i,
            None => {
                self.rules.push((f.rule, f.name));
                self.rules.len() - 1
            }
        };
        let out = &mut self.bytes;
        varint(out, rule as u64);
        out.push(severity_byte(f.severity));
        subject(out, &f.subject);
        string(out, &f.message);
        varint(out, f.evidence.len() as u64);
        for e in &f.evidence {
            string(out, &e.text);
            varint(out, e.span.first_line as u64);
            varint(out, e.span.last_line as u64);
            optional_string(out, e.source.as_deref());
        }
        match &f.threshold {
            None => out.push(0),
            Some(t) => {
                out.push(1);
                string(out, &t.value);
                string(out, &t.source);
            }
        }
        string(out, &f.remediation);
        string(out, &f.fingerprint);
        self.len += 1;
    }

    /// The findings, in the order they were pushed, in a vector with room
    /// for `room` more (the fleet rules' findings, appended without the
    /// copy a growing vector makes).
    pub(crate) fn unpack(self, room: usize) -> Vec<Finding> {
        let mut findings = Vec::with_capacity(self.len + room);
        let mut r = Reader {
            bytes: &self.bytes,
            at: 0,
        };
        for _ in 0..self.len {
            findings.push(r.finding(&self.rules));
        }
        debug_assert_eq!(r.at, self.bytes.len(), "every packed byte read");
        findings
    }
}

fn severity_byte(s: Severity) -> u8 {
    match s {
        Severity::Info => 0,
        Severity::Warning => 1,
        Severity::Error => 2,
        Severity::Critical => 3,
    }
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn string(out: &mut Vec<u8>, s: &str) {
    varint(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

fn optional_string(out: &mut Vec<u8>, s: Option<&str>) {
    match s {
        None => out.push(0),
        Some(s) => {
            varint(out, s.len() as u64 + 1);
            out.extend_from_slice(s.as_bytes());
        }
    }
}

fn subject(out: &mut Vec<u8>, s: &Subject) {
    let mut mask = 0;
    for (present, bit) in [
        (s.host.is_some(), has::HOST),
        (s.device.is_some(), has::DEVICE),
        (s.port.is_some(), has::PORT),
        (s.lid.is_some(), has::LID),
        (s.guid.is_some(), has::GUID),
        (s.gpu.is_some(), has::GPU),
        (s.gpu_uuid.is_some(), has::GPU_UUID),
        (s.gpu_unknown, has::GPU_UNKNOWN),
        (s.bus_id.is_some(), has::BUS_ID),
        (s.link.is_some(), has::LINK),
        (s.lane.is_some(), has::LANE),
        (s.peer_gpu.is_some(), has::PEER_GPU),
        (s.nic.is_some(), has::NIC),
        (s.headerless_port.is_some(), has::HEADERLESS_PORT),
    ] {
        if present {
            mask |= bit;
        }
    }
    varint(out, u64::from(mask));
    let text = |out: &mut Vec<u8>, v: &Option<String>| {
        if let Some(v) = v {
            string(out, v);
        }
    };
    let number = |out: &mut Vec<u8>, v: Option<u32>| {
        if let Some(v) = v {
            varint(out, u64::from(v));
        }
    };
    text(out, &s.host);
    text(out, &s.device);
    number(out, s.port);
    number(out, s.lid);
    if let Some(g) = s.guid {
        varint(out, g.0);
    }
    number(out, s.gpu);
    text(out, &s.gpu_uuid);
    text(out, &s.bus_id);
    number(out, s.link);
    number(out, s.lane);
    number(out, s.peer_gpu);
    text(out, &s.nic);
    number(out, s.headerless_port);
}

/// Reads back what [`PackedFindings::push`] wrote. Total: past the end it
/// reads zeros and empty strings (it never is, as a test checks), so it
/// cannot panic.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn byte(&mut self) -> u8 {
        let b = self.bytes.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }

    fn varint(&mut self) -> u64 {
        let mut v = 0_u64;
        let mut shift = 0;
        loop {
            let b = self.byte();
            if shift < 64 {
                v |= u64::from(b & 0x7f) << shift;
            }
            shift += 7;
            if b & 0x80 == 0 {
                return v;
            }
        }
    }

    fn u32(&mut self) -> u32 {
        u32::try_from(self.varint()).unwrap_or(u32::MAX)
    }

    fn usize(&mut self) -> usize {
        usize::try_from(self.varint()).unwrap_or(usize::MAX)
    }

    fn bytes_of(&mut self, len: usize) -> &[u8] {
        let start = self.at.min(self.bytes.len());
        let end = self.at.saturating_add(len).min(self.bytes.len());
        self.at = self.at.saturating_add(len);
        self.bytes.get(start..end).unwrap_or_default()
    }

    /// The next `len` bytes as text (pushed from a `&str`: valid UTF-8).
    fn text(&mut self, len: usize) -> String {
        String::from_utf8_lossy(self.bytes_of(len)).into_owned()
    }

    fn string(&mut self) -> String {
        let len = self.usize();
        self.text(len)
    }

    fn optional_string(&mut self) -> Option<String> {
        match self.usize() {
            0 => None,
            n => Some(self.text(n - 1)),
        }
    }

    fn subject(&mut self) -> Subject {
        let mask = u16::try_from(self.varint()).unwrap_or(0);
        let on = |bit: u16| mask & bit != 0;
        // In the order `subject` wrote them.
        Subject {
            host: on(has::HOST).then(|| self.string()),
            device: on(has::DEVICE).then(|| self.string()),
            port: on(has::PORT).then(|| self.u32()),
            lid: on(has::LID).then(|| self.u32()),
            guid: on(has::GUID).then(|| crate::model::ib::Guid(self.varint())),
            gpu: on(has::GPU).then(|| self.u32()),
            gpu_uuid: on(has::GPU_UUID).then(|| self.string()),
            gpu_unknown: on(has::GPU_UNKNOWN),
            bus_id: on(has::BUS_ID).then(|| self.string()),
            link: on(has::LINK).then(|| self.u32()),
            lane: on(has::LANE).then(|| self.u32()),
            peer_gpu: on(has::PEER_GPU).then(|| self.u32()),
            nic: on(has::NIC).then(|| self.string()),
            headerless_port: on(has::HEADERLESS_PORT).then(|| self.u32()),
        }
    }

    fn finding(&mut self, rules: &[(&'static str, &'static str)]) -> Finding {
        let (rule, name) = rules.get(self.usize()).copied().unwrap_or(("", ""));
        let severity = match self.byte() {
            0 => Severity::Info,
            1 => Severity::Warning,
            2 => Severity::Error,
            _ => Severity::Critical,
        };
        let subject = self.subject();
        let message = self.string();
        let evidence = (0..self.usize())
            .map(|_| {
                let text = self.string();
                let first_line = self.usize();
                let last_line = self.usize();
                Evidence {
                    text,
                    span: LineSpan {
                        first_line,
                        last_line,
                    },
                    source: self.optional_string(),
                }
            })
            .collect();
        let threshold = match self.byte() {
            0 => None,
            _ => Some(Threshold {
                value: self.string(),
                source: self.string(),
            }),
        };
        Finding {
            rule,
            name,
            severity,
            subject,
            message,
            evidence,
            threshold,
            remediation: self.string(),
            fingerprint: self.string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn any_text() -> impl Strategy<Value = String> {
        prop_oneof![Just(String::new()), "[a-z0-9_ ]{1,12}", "\\PC{0,20}"]
    }

    fn any_finding() -> impl Strategy<Value = Finding> {
        let rules = crate::rules::RULES;
        (
            0..rules.len(),
            0usize..4,
            // The subject strategy the incident and finding writer tests draw
            // from: quotes, escapes, accents, any numbers.
            crate::report::incident::tests::any_subject(),
            any_text(),
            proptest::collection::vec(
                (
                    any_text(),
                    any::<usize>(),
                    any::<usize>(),
                    proptest::option::of(any_text()),
                ),
                0..3,
            ),
            proptest::option::of((any_text(), any_text())),
            any_text(),
            any_text(),
        )
            .prop_map(
                move |(rule, sev, subject, message, evidence, threshold, remediation, print)| {
                    let rule = rules[rule];
                    Finding {
                        rule: rule.id,
                        name: rule.name,
                        severity: Severity::WORST_FIRST[sev],
                        subject,
                        message,
                        evidence: evidence
                            .into_iter()
                            .map(|(text, first_line, last_line, source)| Evidence {
                                text,
                                span: LineSpan {
                                    first_line,
                                    last_line,
                                },
                                source,
                            })
                            .collect(),
                        threshold: threshold.map(|(value, source)| Threshold { value, source }),
                        remediation,
                        fingerprint: print,
                    }
                },
            )
    }

    proptest! {
        /// Whatever the findings, unpacking gives them back equal and in
        /// order, and reads exactly the bytes that were packed.
        #[test]
        fn findings_unpack_as_they_were_packed(
            findings in proptest::collection::vec(any_finding(), 0..12),
        ) {
            let mut packed = PackedFindings::default();
            for f in &findings {
                packed.push(f);
            }
            prop_assert_eq!(packed.len(), findings.len());
            let bytes = packed.bytes.len();
            let mut r = Reader { bytes: &packed.bytes, at: 0 };
            for _ in 0..findings.len() {
                r.finding(&packed.rules);
            }
            prop_assert_eq!(r.at, bytes);
            let back = packed.unpack(3);
            prop_assert!(back.capacity() >= findings.len() + 3);
            prop_assert_eq!(back, findings);
        }
    }

    /// A light copy of a fleet finding takes a fraction of its width in
    /// memory: the point of packing.
    #[test]
    fn a_light_copy_packs_into_a_fraction_of_a_finding() {
        let finding = crate::rules::by_id("NV003")
            .unwrap()
            .finding(
                Subject {
                    host: Some("gpu00042".into()),
                    gpu: Some(3),
                    gpu_uuid: Some("GPU-e3e70682-c209-4cac-629f-6fbed82c07cd".into()),
                    link: Some(16),
                    ..Subject::default()
                },
                "",
            )
            .severity(Severity::Info);
        // As `fleet.rs` keeps it: no remediation or threshold.
        let finding = Finding {
            remediation: String::new(),
            threshold: None,
            fingerprint: "ce4b90ec00298300".into(),
            ..finding
        };
        let mut packed = PackedFindings::default();
        packed.push(&finding);
        assert!(
            packed.bytes.len() * 4 < std::mem::size_of::<Finding>(),
            "{} bytes packed, {} wide",
            packed.bytes.len(),
            std::mem::size_of::<Finding>()
        );
    }
}
