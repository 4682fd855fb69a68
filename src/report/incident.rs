//! Incidents: one broken thing, its evidence grouped under it.
//!
//! A down port with stale error counters yields IB001 and up to eight
//! counter findings about the same port; an operator wants one line saying
//! "this port is down" with the counters as supporting evidence, and a
//! probable cause when the evidence agrees. [`group`] builds one
//! [`Incident`] per subject:
//!
//! - an InfiniBand port (joined across tools by host + device + port, host +
//!   LID + port, or its port GUID, which is unique in a fabric);
//! - a GPU (by host + index, UUID or PCI bus id) with its NVLinks;
//! - anything else by its exact subject.
//!
//! The most severe finding is the headline (port and link state rules before
//! counters, fleet comparisons last), the rest support it. Several ports of
//! one switch in trouble together become one incident about the switch, and
//! three or more down ports of one host one incident about the host.
//!
//! Fingerprints ([`finding_fingerprint`], [`Incident::fingerprint`]) hash
//! the rule and subject only, never line numbers or input order, so two runs
//! can be compared (`fabricscope diff`, `--baseline`). A LID is left out when
//! the device or GUID names the port: the subnet manager may renumber.

use crate::rules::{Finding, Severity, Subject};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// One broken thing: a headline finding, supporting findings and a probable
/// cause.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
#[non_exhaustive]
pub struct Incident {
    /// Stable id of the subject (`fabricscope diff` matches on it).
    pub fingerprint: String,
    /// The headline's severity (the worst of the incident).
    pub severity: Severity,
    /// What is broken: the headline's subject, completed from the
    /// supporting findings (a LID from perfquery, a device from ibstat).
    pub subject: Subject,
    /// The headline finding's message.
    pub title: String,
    /// The headline finding's rule id.
    pub rule: String,
    /// Indexes into the report's findings: the headline first, then the
    /// supporting findings worst first.
    pub findings: Vec<usize>,
    /// What the findings together point at, when they agree.
    pub probable_cause: Option<String>,
}

impl Incident {
    /// The incident's findings in `findings` (the report's list its indexes
    /// point into): the headline first, then the supporting ones.
    pub fn members<'r>(
        &self,
        findings: &'r [Finding],
    ) -> impl Iterator<Item = &'r Finding> + use<'r, '_> {
        self.findings.iter().filter_map(|&i| findings.get(i))
    }
}

impl Incident {
    /// Appends the incident as the pretty JSON report prints an element of
    /// its `incidents` (`serde_json::to_writer_pretty`'s bytes, its opening
    /// brace first, its fields `depth + 1` levels deep), with `title` in
    /// place of its own when given (a batch run's light copies leave it
    /// empty: it is the stored headline's message).
    ///
    /// A fleet's report has tens of thousands of incidents, written on one
    /// thread at the end of the run: through `serde` each key was a call
    /// chain and a scan for escapes, and most of the writing of the report
    /// that is not copied from disk. Strings that need escaping still go
    /// through `serde_json`; a test compares the bytes with serde's.
    pub fn write_pretty(&self, depth: usize, title: Option<&str>, out: &mut Vec<u8>) {
        let Incident {
            fingerprint,
            severity,
            subject,
            title: own_title,
            rule,
            findings,
            probable_cause,
        } = self;
        let mut o = pretty::Object::begin(out, depth);
        o.str("fingerprint", fingerprint);
        pretty::word(o.key("severity"), severity.name());
        let field = o.depth;
        pretty::subject(o.key("subject"), field, subject);
        o.str("title", title.unwrap_or(own_title));
        o.str("rule", rule);
        pretty::array(o.key("findings"), field, findings, |index, _, out| {
            pretty::usize(out, *index)
        });
        match probable_cause {
            Some(cause) => o.str("probable_cause", cause),
            None => o.key("probable_cause").extend_from_slice(b"null"),
        }
        o.end();
    }
}

/// The pieces of `serde_json`'s pretty layout (two spaces a level) that
/// the report's hand writers share: [`Incident::write_pretty`],
/// `Finding::write_pretty` and the measurements' `WritePretty`.
pub(crate) mod pretty {
    use crate::rules::Subject;

    /// A newline and 32 levels of indent: an indent that deep or less is
    /// the start of it.
    const LINE: &[u8; 65] = b"\n                                                                ";

    /// A newline and `depth` levels of indent.
    ///
    /// Written for every field of every record: the whole of [`LINE`] is
    /// copied and the vector cut back to the indent, a copy of known
    /// length the compiler makes in a few moves, where copying just the
    /// indent (of a length known only when running) was a call to
    /// `memcpy`, as long as the rest of writing a key.
    #[inline(always)]
    pub(crate) fn newline(out: &mut Vec<u8>, depth: usize) {
        let end = out.len() + 1 + depth * 2;
        if depth * 2 < LINE.len() {
            out.extend_from_slice(LINE);
            out.truncate(end);
        } else {
            out.push(b'\n');
            out.resize(end, b' ');
        }
    }

    /// A comma and [`LINE`].
    const COMMA_LINE: &[u8; 66] =
        b",\n                                                                ";

    /// The key of an object's field (`first`: no comma before it) at
    /// `depth`, up to its value.
    ///
    /// Inlined into every writer (a key is written for every field of
    /// every record: 3.6 million on 1,000 hosts), so that `key` is a
    /// literal, copied in a few moves instead of by a call to `memcpy`.
    /// The comma, newline and indent are one copy of known length, as in
    /// [`newline`], and the key's opening quote is written over the space
    /// after the indent.
    #[inline(always)]
    pub(crate) fn key(out: &mut Vec<u8>, depth: usize, first: bool, key: &str) {
        let comma = usize::from(!first);
        // Comma, newline, indent, quote.
        let end = out.len() + comma + 1 + depth * 2 + 1;
        if depth * 2 < LINE.len() - 1 {
            if first {
                out.extend_from_slice(LINE);
            } else {
                out.extend_from_slice(COMMA_LINE);
            }
            out.truncate(end);
            if let Some(quote) = out.last_mut() {
                *quote = b'"';
            }
        } else {
            if !first {
                out.push(b',');
            }
            newline(out, depth);
            out.push(b'"');
        }
        out.extend_from_slice(key.as_bytes());
        out.extend_from_slice(b"\": ");
    }

    /// An object being written: its opening brace at [`Object::begin`],
    /// its fields one level deeper than it, each started by
    /// [`Object::key`] (the comma before all but the first), and its
    /// closing brace at [`Object::end`] (`{}` when it has no field, as
    /// `serde_json` writes it).
    pub(crate) struct Object<'o> {
        out: &'o mut Vec<u8>,
        /// The fields' depth.
        pub(crate) depth: usize,
        empty: bool,
    }

    impl<'o> Object<'o> {
        pub(crate) fn begin(out: &'o mut Vec<u8>, depth: usize) -> Self {
            out.push(b'{');
            Self {
                out,
                depth: depth + 1,
                empty: true,
            }
        }

        /// Starts the field `name` (plain ASCII: no escapes) and hands the
        /// writer for its value. Inlined, as the field writers below: their
        /// `name` is a literal where they are called ([`key`]).
        #[inline(always)]
        pub(crate) fn key(&mut self, name: &str) -> &mut Vec<u8> {
            key(self.out, self.depth, self.empty, name);
            self.empty = false;
            self.out
        }

        #[inline(always)]
        pub(crate) fn str(&mut self, name: &str, value: &str) {
            str(self.key(name), value);
        }

        #[inline(always)]
        pub(crate) fn uint(&mut self, name: &str, value: usize) {
            usize(self.key(name), value);
        }

        #[inline(always)]
        pub(crate) fn u64(&mut self, name: &str, value: u64) {
            u64(self.key(name), value);
        }

        pub(crate) fn end(self) {
            if !self.empty {
                newline(self.out, self.depth - 1);
            }
            self.out.push(b'}');
        }
    }

    /// `items` as a JSON array whose elements sit `depth + 1` levels deep
    /// (`[]` when empty, as `serde_json` writes it), each written by
    /// `write` at that depth.
    pub(crate) fn array<T>(
        out: &mut Vec<u8>,
        depth: usize,
        items: &[T],
        write: impl Fn(&T, usize, &mut Vec<u8>),
    ) {
        if items.is_empty() {
            out.extend_from_slice(b"[]");
            return;
        }
        out.push(b'[');
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            newline(out, depth + 1);
            write(item, depth + 1, out);
        }
        newline(out, depth);
        out.push(b']');
    }

    /// A word known to need no escape, as a JSON string.
    #[inline]
    pub(crate) fn word(out: &mut Vec<u8>, word: &str) {
        out.push(b'"');
        out.extend_from_slice(word.as_bytes());
        out.push(b'"');
    }

    /// Whether `text` needs no escape in a JSON string: no control
    /// character, quote or backslash (everything else, UTF-8 included, is
    /// written as is).
    pub(crate) fn plain(text: &str) -> bool {
        // No early exit: the whole string is checked in a few vector steps
        // (a byte-by-byte search that stops at the first escape was most
        // of the time spent writing a finding: its remediation and
        // message are long, and need no escape).
        !text.bytes().fold(false, |seen, b| {
            seen | (b < 0x20) | (b == b'"') | (b == b'\\')
        })
    }

    /// `text` as a JSON string: as it is when nothing in it needs an
    /// escape, else by `serde_json`.
    pub(crate) fn str(out: &mut Vec<u8>, text: &str) {
        if plain(text) {
            word(out, text);
        } else {
            // Writing to a vector does not fail.
            let _ = serde_json::to_writer(&mut *out, text);
        }
    }

    /// A number as `serde_json` writes it.
    #[inline]
    pub(crate) fn u64(out: &mut Vec<u8>, value: u64) {
        // Most counters read zero, or a digit: one byte, pushed.
        match u8::try_from(value) {
            Ok(digit @ 0..=9) => out.push(b'0' + digit),
            _ => crate::stats::push_decimal(out, value),
        }
    }

    /// A number as `serde_json` writes it.
    pub(crate) fn usize(out: &mut Vec<u8>, value: usize) {
        match u64::try_from(value) {
            Ok(v) => u64(out, v),
            Err(_) => {
                let _ = serde_json::to_writer(&mut *out, &value);
            }
        }
    }

    /// A subject as its derived `Serialize` writes it pretty at `depth`
    /// (absent parts left out; `{}` when none is set).
    pub(crate) fn subject(out: &mut Vec<u8>, depth: usize, subject: &Subject) {
        // Every field named: a new one fails to compile here until it is
        // written too.
        let Subject {
            host,
            device,
            port,
            headerless_port,
            lid,
            guid,
            gpu,
            gpu_uuid,
            gpu_unknown,
            bus_id,
            link,
            lane,
            peer_gpu,
            nic,
        } = subject;
        let mut o = Object::begin(out, depth);
        let text = |o: &mut Object<'_>, name: &str, value: &Option<String>| {
            if let Some(v) = value {
                o.str(name, v);
            }
        };
        let number = |o: &mut Object<'_>, name: &str, value: &Option<u32>| {
            if let Some(v) = value {
                o.u64(name, u64::from(*v));
            }
        };
        text(&mut o, "host", host);
        text(&mut o, "device", device);
        number(&mut o, "port", port);
        number(&mut o, "headerless_port", headerless_port);
        number(&mut o, "lid", lid);
        if let Some(g) = guid {
            o.str("guid", &g.to_string());
        }
        number(&mut o, "gpu", gpu);
        text(&mut o, "gpu_uuid", gpu_uuid);
        if *gpu_unknown {
            o.key("gpu_unknown").extend_from_slice(b"true");
        }
        text(&mut o, "bus_id", bus_id);
        number(&mut o, "link", link);
        number(&mut o, "lane", lane);
        number(&mut o, "peer_gpu", peer_gpu);
        text(&mut o, "nic", nic);
        o.end();
    }
}

/// FNV-1a, 64 bits: stable across runs, platforms and Rust versions (unlike
/// `std`'s hasher). The fingerprints hash as they write ([`FnvWriter`]);
/// this is their test oracle.
#[cfg(test)]
fn fnv(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// The subject as a canonical string: every field that names the thing,
/// without the LID when a device or GUID names it.
fn subject_key(s: &Subject, with_lane: bool) -> String {
    let mut key = String::new();
    let _ = write_subject_key(&mut key, s, with_lane);
    key
}

/// Writes [`subject_key`]'s text to `w`.
fn write_subject_key(
    w: &mut impl std::fmt::Write,
    s: &Subject,
    with_lane: bool,
) -> std::fmt::Result {
    let lid = if s.device.is_some() || s.guid.is_some() {
        None
    } else {
        s.lid
    };
    write!(
        w,
        "host={:?};device={:?};port={:?};lid={:?};guid={:?};gpu={:?};uuid={:?};bus={:?};link={:?};lane={:?};peer={:?};nic={:?}",
        s.host,
        s.device,
        s.port,
        lid,
        s.guid.map(|g| g.to_string()),
        s.gpu,
        s.gpu_uuid,
        s.bus_id,
        s.link,
        if with_lane { s.lane } else { None },
        s.peer_gpu,
        s.nic
    )?;
    // Written only when set: the keys of every other subject, and so
    // their fingerprints, stay as they were.
    if let Some(n) = s.headerless_port {
        write!(w, ";headerless_port={n}")?;
    }
    Ok(())
}

/// FNV-1a over text as it is written: [`fnv`] of the same text, without
/// building it first.
struct FnvWriter(u64);

impl FnvWriter {
    /// Hashes `bytes`.
    fn bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }

    /// Hashes what `{:?}` prints for `value`: `None`, or `Some("text")`
    /// (text that `Debug` would escape goes through `fmt`).
    fn debug_str(&mut self, value: Option<&str>) {
        use std::fmt::Write;
        match value {
            None => self.bytes(b"None"),
            Some(text)
                if text
                    .bytes()
                    .all(|b| (b' '..=b'~').contains(&b) && b != b'"' && b != b'\\') =>
            {
                self.bytes(b"Some(\"");
                self.bytes(text.as_bytes());
                self.bytes(b"\")");
            }
            Some(text) => {
                let _ = write!(self, "{:?}", Some(text));
            }
        }
    }

    /// Hashes what `{:?}` prints for `value`: `None` or `Some(12)`.
    fn debug_u32(&mut self, value: Option<u32>) {
        let Some(n) = value else {
            return self.bytes(b"None");
        };
        let mut digits = [0_u8; 10];
        let mut at = digits.len();
        let mut left = n;
        loop {
            at -= 1;
            if let Some(d) = digits.get_mut(at) {
                *d = b'0' + u8::try_from(left % 10).unwrap_or(0);
            }
            left /= 10;
            if left == 0 {
                break;
            }
        }
        self.bytes(b"Some(");
        self.bytes(digits.get(at..).unwrap_or_default());
        self.bytes(b")");
    }

    /// Hashes [`write_subject_key`]'s text for `s`, byte for byte,
    /// without formatting it.
    fn subject_key(&mut self, s: &Subject, with_lane: bool) {
        let lid = if s.device.is_some() || s.guid.is_some() {
            None
        } else {
            s.lid
        };
        self.bytes(b"host=");
        self.debug_str(s.host.as_deref());
        self.bytes(b";device=");
        self.debug_str(s.device.as_deref());
        self.bytes(b";port=");
        self.debug_u32(s.port);
        self.bytes(b";lid=");
        self.debug_u32(lid);
        self.bytes(b";guid=");
        match s.guid {
            // `Guid`'s text: 0x and sixteen hex digits.
            Some(g) => {
                self.bytes(b"Some(\"0x");
                self.bytes(hex16(g.0).as_bytes());
                self.bytes(b"\")");
            }
            None => self.bytes(b"None"),
        }
        self.bytes(b";gpu=");
        self.debug_u32(s.gpu);
        self.bytes(b";uuid=");
        self.debug_str(s.gpu_uuid.as_deref());
        self.bytes(b";bus=");
        self.debug_str(s.bus_id.as_deref());
        self.bytes(b";link=");
        self.debug_u32(s.link);
        self.bytes(b";lane=");
        self.debug_u32(if with_lane { s.lane } else { None });
        self.bytes(b";peer=");
        self.debug_u32(s.peer_gpu);
        self.bytes(b";nic=");
        self.debug_str(s.nic.as_deref());
        if let Some(n) = s.headerless_port {
            use std::fmt::Write;
            let _ = write!(self, ";headerless_port={n}");
        }
    }
}

impl std::fmt::Write for FnvWriter {
    fn write_str(&mut self, text: &str) -> std::fmt::Result {
        for b in text.bytes() {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
        Ok(())
    }
}

/// The stable fingerprint of a finding: its rule and subject. Hashed as it
/// is formatted (every finding of a fleet gets one), and formatted without
/// `fmt`: the bytes of `finding;rule={rule};` and the subject's key text
/// (each field that is set) written straight into the hash.
#[must_use]
pub fn finding_fingerprint(f: &Finding) -> String {
    let mut h = FnvWriter(0xcbf2_9ce4_8422_2325);
    h.bytes(b"finding;rule=");
    h.bytes(f.rule.as_bytes());
    h.bytes(b";");
    h.subject_key(&f.subject, true);
    hex16(h.0)
}

/// `format!("{h:016x}")`: its digits pushed into a string made to size
/// (every finding has a fingerprint; collecting the digits as characters
/// cost several times as much).
fn hex16(h: u64) -> String {
    let mut text = String::with_capacity(16);
    for i in (0..16).rev() {
        let digit = u32::try_from((h >> (i * 4)) & 0xf).unwrap_or(0);
        text.push(char::from_digit(digit, 16).unwrap_or('0'));
    }
    text
}

/// The stable fingerprint of an incident about `subject`: the hash of
/// `incident;` and the subject's key text, hashed as written.
#[must_use]
pub fn incident_fingerprint(subject: &Subject) -> String {
    let mut h = FnvWriter(0xcbf2_9ce4_8422_2325);
    h.bytes(b"incident;");
    h.subject_key(subject, false);
    hex16(h.0)
}

/// Sets every finding's fingerprint.
pub fn fingerprint_all(findings: &mut [Finding]) {
    for f in findings {
        f.fingerprint = finding_fingerprint(f);
    }
}

/// A name a finding's subject is known by, borrowed from the subject (no
/// allocation per finding: a fleet has hundreds of thousands of findings).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key<'a> {
    /// Host, device and port number.
    Port(&'a str, &'a str, u32),
    /// Host, LID and port number.
    Lid(&'a str, u32, u32),
    /// Port GUID and port number (unique in a fabric: no host).
    Guid(crate::model::ib::Guid, u32),
    /// Host and GPU index.
    Gpu(&'a str, u32),
    /// GPU UUID.
    Uuid(&'a str),
    /// Host and PCI bus id, lower case.
    Bus(&'a str, std::borrow::Cow<'a, str>),
    /// Anything else: the whole subject.
    Subject(String),
}

/// A PCI bus id as a key: lower case, the domain of four digits and the
/// function `.0` when not printed, so that nvidia-smi's
/// `00000000:3B:00.0`, NVML's `0000:3A:00.0` and the kernel log's
/// `0000:3a:00` (DG006 adds the `.0`) name one GPU.
fn bus_key(b: &str) -> std::borrow::Cow<'_, str> {
    let long_domain = b
        .split_once(':')
        .is_some_and(|(d, _)| d.len() > 4 && d.bytes().take(d.len() - 4).all(|c| c == b'0'));
    let bare = b.matches(':').count() == 2 && !b.contains('.');
    if !long_domain && !bare && !b.bytes().any(|c| c.is_ascii_uppercase()) {
        return std::borrow::Cow::Borrowed(b);
    }
    let mut key = b.to_ascii_lowercase();
    if long_domain {
        if let Some((d, _)) = b.split_once(':') {
            key.replace_range(..d.len() - 4, "");
        }
    }
    if bare {
        key.push_str(".0");
    }
    std::borrow::Cow::Owned(key)
}

/// The keys a finding's subject is known by; findings sharing a key are
/// about the same thing.
fn keys(s: &Subject) -> Vec<Key<'_>> {
    let host = s.host.as_deref().unwrap_or("");
    // A GPU pair or a GPU–NIC path is its own subject.
    if s.peer_gpu.is_some() || (s.nic.is_some() && s.gpu.is_none()) {
        return vec![Key::Subject(subject_key(s, false))];
    }
    // At most three keys (device, LID and GUID of a port; GPU, UUID and
    // bus of a GPU): room for them at once, not grown push by push on the
    // run's one thread (60,000 grows on a 1,000-host fleet).
    let mut k = Vec::with_capacity(3);
    if let Some(port) = s.port {
        if let Some(d) = &s.device {
            k.push(Key::Port(host, d, port));
        }
        if let Some(l) = s.lid {
            k.push(Key::Lid(host, l, port));
        }
        if let Some(g) = s.guid {
            // Port GUIDs are unique in a fabric: iblinkinfo's view of a host
            // port (no host name) joins the host's own ibstat.
            k.push(Key::Guid(g, port));
        }
    }
    if s.port.is_none() && s.device.is_none() && s.lid.is_none() {
        if let Some(g) = s.gpu {
            k.push(Key::Gpu(host, g));
        }
        if let Some(u) = &s.gpu_uuid {
            k.push(Key::Uuid(u));
        }
        if let Some(b) = &s.bus_id {
            k.push(Key::Bus(host, bus_key(b)));
        }
    }
    if k.is_empty() {
        k.push(Key::Subject(subject_key(s, false)));
    }
    k
}

/// The first finding known by each key. A fleet has hundreds of thousands
/// of keys: they are held as 64-bit hashes, and a hit is checked against
/// the first finding's own keys, so two keys that share a hash are still
/// told apart (the rare second one is held whole).
#[derive(Default)]
struct FirstWithKey<'a> {
    /// Keyed by the FNV hash itself, mixed by Fx (one multiply), not
    /// hashed again with SipHash.
    by_hash: rustc_hash::FxHashMap<u64, usize>,
    collided: HashMap<Key<'a>, usize>,
}

impl<'a> FirstWithKey<'a> {
    /// The first finding known by `key`; `None` when `finding` is the first.
    fn get_or_insert(
        &mut self,
        key: Key<'a>,
        finding: usize,
        findings: &'a [Finding],
    ) -> Option<usize> {
        self.get_or_insert_hashed(fnv_key(&key), key, finding, findings)
    }

    /// [`get_or_insert`](Self::get_or_insert) with the key's hash given
    /// (tests force collisions).
    fn get_or_insert_hashed(
        &mut self,
        hash: u64,
        key: Key<'a>,
        finding: usize,
        findings: &'a [Finding],
    ) -> Option<usize> {
        match self.by_hash.get(&hash) {
            None => {
                self.by_hash.insert(hash, finding);
                None
            }
            Some(&j) => {
                let same = findings
                    .get(j)
                    .is_some_and(|f| keys(&f.subject).contains(&key));
                if same {
                    return Some(j);
                }
                match self.collided.get(&key) {
                    Some(&j) => Some(j),
                    None => {
                        self.collided.insert(key, finding);
                        None
                    }
                }
            }
        }
    }
}

/// A key's 64-bit hash (FNV-1a over its fields: the same in every run).
fn fnv_key(key: &Key<'_>) -> u64 {
    struct Fnv(u64);
    impl std::hash::Hasher for Fnv {
        fn finish(&self) -> u64 {
            self.0
        }
        fn write(&mut self, bytes: &[u8]) {
            for b in bytes {
                self.0 ^= u64::from(*b);
                self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
            }
        }
    }
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    std::hash::Hash::hash(key, &mut h);
    std::hash::Hasher::finish(&h)
}

/// Union–find over finding indexes.
struct Groups(Vec<usize>);

impl Groups {
    fn find(&mut self, i: usize) -> usize {
        let mut root = i;
        while let Some(&p) = self.0.get(root) {
            if p == root {
                break;
            }
            root = p;
        }
        // Path compression.
        let mut j = i;
        while let Some(&p) = self.0.get(j) {
            if p == root {
                break;
            }
            if let Some(slot) = self.0.get_mut(j) {
                *slot = root;
            }
            j = p;
        }
        root
    }

    fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            let (lo, hi) = (ra.min(rb), ra.max(rb));
            if let Some(slot) = self.0.get_mut(hi) {
                *slot = lo;
            }
        }
    }
}

/// Headline order: worst first; at equal severity, state rules (IB0xx,
/// NV0xx, XS) before counters (IB1xx) before fleet comparisons (FL).
fn rank(f: &Finding) -> (std::cmp::Reverse<Severity>, u8, &'static str) {
    let family = if f.rule.starts_with("FL") {
        3
    } else if f.rule.starts_with("IB1") {
        2
    } else if f.rule.starts_with("TP") {
        1
    } else {
        0
    };
    (std::cmp::Reverse(f.severity), family, f.rule)
}

/// The counter an FL004 finding is about (`SymbolErrorCounter 1234 while …`
/// → `SymbolErrorCounter`).
fn fleet_counter(f: &Finding) -> Option<&str> {
    let message = f
        .message
        .split_once(": ")
        .map_or(f.message.as_str(), |(_, m)| m);
    message.split_whitespace().next()
}

/// Whether grouping reads the message of this rule's findings ([`kept`]:
/// FL004's counter; `probable_cause`: NV007's and NV001's wording).
/// Light copies of other findings may leave it out (incidents of such a
/// headline then have an empty `title`: the finding's message).
#[must_use]
pub fn reads_message(rule: &str) -> bool {
    matches!(rule, "FL004" | "NV007" | "NV001")
}

/// Whether grouping reads the evidence of this rule's findings ([`kept`]:
/// IB1xx evidence is what FL004 repeats).
#[must_use]
pub fn reads_evidence(rule: &str) -> bool {
    rule.starts_with("IB1")
}

/// Drops FL004 findings that repeat what an IB1xx finding already says about
/// the same counter of the same port: the port's own limit was crossed, its
/// standing among peers adds nothing.
#[must_use]
pub fn drop_repeats(findings: Vec<Finding>) -> Vec<Finding> {
    let keep = kept(&findings);
    findings
        .into_iter()
        .zip(keep)
        .filter_map(|(f, k)| k.then_some(f))
        .collect()
}

/// Which findings [`drop_repeats`] keeps, in their order (`false`: an FL004
/// finding that repeats an IB1xx finding). Reads the evidence of IB1xx
/// findings and the message of FL004 ones only.
#[must_use]
pub fn kept(findings: &[Finding]) -> Vec<bool> {
    let mut said: rustc_hash::FxHashMap<Key<'_>, Vec<&str>> = rustc_hash::FxHashMap::default();
    for f in findings.iter().filter(|f| reads_evidence(f.rule)) {
        for k in keys(&f.subject) {
            said.entry(k)
                .or_default()
                .extend(f.evidence.iter().map(|e| e.text.as_str()));
        }
    }
    findings
        .iter()
        .map(|f| {
            if f.rule != "FL004" || said.is_empty() {
                return true;
            }
            let Some(counter) = fleet_counter(f) else {
                return true;
            };
            let needle = format!("{counter} =");
            !keys(&f.subject).iter().any(|k| {
                said.get(k)
                    .is_some_and(|texts| texts.iter().any(|t| t.contains(&needle)))
            })
        })
        .collect()
}

/// Fills fields the headline's subject lacks from the supporting findings
/// (same host only), and drops the lane: an incident is about a port or link.
fn merged_subject(findings: &[&Finding]) -> Subject {
    let mut s = filled_subject(findings);
    // Several links of one GPU: the incident is about the GPU (any two
    // findings naming different links, or one a link and one none).
    let first_link = findings.first().map(|f| f.subject.link);
    if findings.iter().any(|f| Some(f.subject.link) != first_link) {
        s.link = None;
    }
    s
}

/// The headline's subject with the fields it lacks taken from the
/// supporting findings of its host, without a lane.
fn filled_subject(findings: &[&Finding]) -> Subject {
    let mut s = findings
        .first()
        .map(|f| f.subject.clone())
        .unwrap_or_default();
    for f in findings.iter().skip(1) {
        let o = &f.subject;
        if o.host != s.host && o.host.is_some() && s.host.is_some() {
            continue;
        }
        s.host = s.host.or_else(|| o.host.clone());
        s.device = s.device.or_else(|| o.device.clone());
        s.port = s.port.or(o.port);
        s.lid = s.lid.or(o.lid);
        s.guid = s.guid.or(o.guid);
        s.gpu = s.gpu.or(o.gpu);
        s.gpu_uuid = s.gpu_uuid.or_else(|| o.gpu_uuid.clone());
        s.bus_id = s.bus_id.or_else(|| o.bus_id.clone());
    }
    s.lane = None;
    s
}

/// [`merged_subject`] as it was (the link dropped when a set of the links
/// has more than one): the test oracle for the scan that replaced the set.
#[cfg(test)]
fn merged_subject_reference(findings: &[&Finding]) -> Subject {
    let mut s = filled_subject(findings);
    let links: std::collections::BTreeSet<Option<u32>> =
        findings.iter().map(|f| f.subject.link).collect();
    if links.len() > 1 {
        s.link = None;
    }
    s
}

/// Counter findings that point at the physical link (cable, transceiver).
const LINK_ERROR_RULES: &[&str] = &[
    "IB101", "IB102", "IB103", "IB104", "IB106", "IB112", "IB113",
];

/// What the incident's findings agree on, if anything.
fn probable_cause(findings: &[&Finding]) -> Option<String> {
    let headline = findings.first()?;
    let has = |rule: &str| findings.iter().any(|f| f.rule == rule);
    let link_errors: Vec<&str> = {
        let mut v: Vec<&str> = findings
            .iter()
            .filter(|f| LINK_ERROR_RULES.contains(&f.rule))
            .map(|f| f.rule)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    if headline.rule == "IB001" && !link_errors.is_empty() {
        return Some(format!(
            "a failing cable or transceiver: the port's error counters ({}) show a bad link \
             before it went down — reseat or replace the cable/transceiver, then clear the counters",
            link_errors.join(", ")
        ));
    }
    if headline.rule == "IB001" {
        return None;
    }
    if has("IB101") && (has("IB102") || has("IB103")) {
        return Some(
            "a marginal physical link (cable, transceiver or port): bit errors and retraining \
             on the same port"
                .to_owned(),
        );
    }
    let thermal = findings.iter().any(|f| {
        f.rule == "NV007"
            && f.severity >= Severity::Warning
            && f.message.to_ascii_lowercase().contains("thermal")
    });
    if thermal && (has("NV002") || has("NV006")) {
        return Some(
            "cooling: the GPU's clocks are held down by heat and its NVLink throughput dropped \
             with them — check fans, airflow and the heatsink before suspecting the links"
                .to_owned(),
        );
    }
    let all_links_down = findings
        .iter()
        .any(|f| f.rule == "NV001" && f.message.contains("has no active NVLink"));
    let card_links_down = findings.iter().any(|f| {
        f.rule == "NV001"
            && f.message.contains("has no active NVLink")
            && f.message.contains(crate::rules::nvlink::PCIE_CARD)
    });
    if card_links_down {
        return Some(
            "every NVLink of this PCIe card is down while an odd number of its peers have \
             theirs up, so some bridged card lacks its partner: the bridge (unseated or failed) \
             or the card — reseat the bridge, then open a hardware case"
                .to_owned(),
        );
    }
    if all_links_down {
        return Some(
            "every NVLink of this GPU is down: the GPU or its baseboard/NVSwitch tray, not the \
             individual links or bridges — reset the GPU, then open a hardware case"
                .to_owned(),
        );
    }
    None
}

/// Groups findings (already worst first) into incidents, worst first.
///
/// A fleet's report has tens of thousands of findings and incidents, and
/// this runs on one thread at the end of a batch run: the groups are listed
/// by their root (the first finding of each, so in the order a tree keyed by
/// root gave), and each incident is built with no set or list of its own
/// beyond its member indexes.
#[must_use]
pub fn group(findings: &[Finding]) -> Vec<Incident> {
    group_in_tasks(findings, INCIDENTS_PER_TASK)
}

/// [`group`], building the incidents of `per_task` groups per task.
fn group_in_tasks(findings: &[Finding], per_task: usize) -> Vec<Incident> {
    let mut groups = grouped_by_keys(findings);
    // A group's root is its smallest index (a union keeps the lower root),
    // so lists are opened in ascending root order.
    let mut list_of_root: Vec<usize> = vec![usize::MAX; findings.len()];
    let mut lists: Vec<Vec<usize>> = Vec::new();
    for i in 0..findings.len() {
        let root = groups.find(i);
        let slot = match list_of_root.get(root).copied() {
            Some(slot) if slot != usize::MAX => slot,
            _ => {
                lists.push(Vec::new());
                if let Some(s) = list_of_root.get_mut(root) {
                    *s = lists.len() - 1;
                }
                lists.len() - 1
            }
        };
        if let Some(list) = lists.get_mut(slot) {
            list.push(i);
        }
    }
    drop(list_of_root);
    merge_switches(findings, &mut lists);
    merge_host_ports_down(findings, &mut lists);
    // Each group becomes its incident on its own, so runs of them are
    // built at once on the threads there are (the rest of the fleet step
    // holds one), and joined in their order.
    let mut incidents = crate::analyze::parallel::flat_map_chunks(&mut lists, per_task, |lists| {
        let mut incidents: Vec<Incident> = Vec::with_capacity(lists.len());
        let mut fs: Vec<&Finding> = Vec::new();
        for list in lists {
            let mut list = std::mem::take(list);
            if list.len() > 1 {
                sort_by_rank(findings, &mut list);
            }
            fs.clear();
            fs.extend(list.iter().filter_map(|&i| findings.get(i)));
            incidents.extend(incident_of(&fs, list, merged_subject));
        }
        incidents
    });
    sort_worst_first(&mut incidents);
    incidents
}

/// Incidents [`group`] builds in one task.
const INCIDENTS_PER_TASK: usize = 512;

/// Findings joined when they share a key (port, LID, GUID, GPU, …).
fn grouped_by_keys(findings: &[Finding]) -> Groups {
    let mut groups = Groups((0..findings.len()).collect());
    let mut first_with_key = FirstWithKey::default();
    for (i, f) in findings.iter().enumerate() {
        for k in keys(&f.subject) {
            if let Some(j) = first_with_key.get_or_insert(k, i, findings) {
                groups.union(i, j);
            }
        }
    }
    groups
}

/// An incident's findings, worst first, then in input order.
fn sort_by_rank(findings: &[Finding], list: &mut [usize]) {
    list.sort_by(|&a, &b| {
        let (fa, fb) = (findings.get(a), findings.get(b));
        fa.map(rank).cmp(&fb.map(rank)).then(a.cmp(&b))
    });
}

/// The incident of `fs` (its findings, headline first; `list` their
/// indexes), its subject merged by `merged` unless it is a switch's.
fn incident_of(
    fs: &[&Finding],
    list: Vec<usize>,
    merged: fn(&[&Finding]) -> Subject,
) -> Option<Incident> {
    let headline = *fs.first()?;
    let mut fingerprint = None;
    let (subject, cause) = if let Some((subject, ports)) = is_switch_group(fs) {
        let cause = if only_trained_slow(fs) {
            // Links that came up narrower or slower than both ends allow,
            // and nothing else: a failing ASIC, power or cooling shows as
            // errors and flaps, not as a clean lower speed. Before, four
            // HCA links at EDR on an HDR switch whose other links ran HDR
            // were "suspect the switch before 4 separate cables".
            format!(
                "{ports} ports of this switch trained below what both ends support: a \
                 cause they share before {ports} separate faults — cables (or \
                 transceivers) rated for the lower speed, or the speeds enabled on \
                 the switch or on the adapters"
            )
        } else {
            format!(
                "{ports} ports of this switch degraded together: suspect the switch (its \
                 ASIC, power, cooling or firmware) before {ports} separate cables"
            )
        };
        (subject, Some(cause))
    } else if let Some((subject, ports)) = is_host_ports_down_group(fs) {
        // Told apart from an incident about the host itself (a fleet
        // comparison, a tool's failure), whose subject is the same.
        fingerprint = Some(host_ports_down_fingerprint(&subject));
        (
            subject,
            Some(format!(
                "{ports} ports of this host are down together: a cause they share before \
                 {ports} separate cables or adapters — the switch they reach or the cable \
                 bundle to it, the adapters disabled in firmware, or a host whose ports were \
                 never cabled (not yet on the fabric)"
            )),
        )
    } else {
        (merged(fs), probable_cause(fs))
    };
    Some(Incident {
        fingerprint: fingerprint.unwrap_or_else(|| incident_fingerprint(&subject)),
        severity: headline.severity,
        subject,
        title: headline.message.clone(),
        rule: headline.rule.to_owned(),
        findings: list,
        probable_cause: cause,
    })
}

/// Incidents worst first, then by host, then by their headline's place.
fn sort_worst_first(incidents: &mut [Incident]) {
    // A total order: every incident has findings, and no finding is in two
    // incidents, so the first ones tell any two apart.
    crate::analyze::parallel::sort_unstable_by(incidents, |a, b| {
        b.severity
            .cmp(&a.severity)
            .then_with(|| a.subject.host.cmp(&b.subject.host))
            .then_with(|| a.findings.first().cmp(&b.findings.first()))
    });
}

/// [`group`] as it was (a tree of groups by root, a set of links per
/// incident, incidents collected without their count): the test oracle.
/// It shares the key union, the incident builder and the sorts, which did
/// not change.
#[cfg(test)]
fn group_reference(findings: &[Finding]) -> Vec<Incident> {
    let mut groups = grouped_by_keys(findings);
    let mut members: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for i in 0..findings.len() {
        let root = groups.find(i);
        members.entry(root).or_default().push(i);
    }
    let mut lists: Vec<Vec<usize>> = members.into_values().collect();
    merge_switches(findings, &mut lists);
    merge_host_ports_down(findings, &mut lists);
    let mut incidents: Vec<Incident> = lists
        .into_iter()
        .filter_map(|mut list| {
            sort_by_rank(findings, &mut list);
            let fs: Vec<&Finding> = list.iter().filter_map(|&i| findings.get(i)).collect();
            incident_of(&fs, list, merged_subject_reference)
        })
        .collect();
    sort_worst_first(&mut incidents);
    incidents
}

/// Ports of one switch with incidents of their own, from fabric-wide tools
/// (no host; the switch named by its description and GUID or LID).
const SWITCH_MIN_PORTS: usize = 3;

fn switch_of(s: &Subject) -> Option<String> {
    if s.host.is_some() || s.port.is_none() {
        return None;
    }
    let device = s.device.as_deref()?;
    // Host adapters in iblinkinfo are named `host mlx5_0`; switches by
    // their node description.
    if device.contains(" mlx") || device.contains(" ibp") {
        return None;
    }
    Some(format!(
        "{device};{}",
        s.guid
            .map(|g| g.to_string())
            .or_else(|| s.lid.map(|l| l.to_string()))
            .unwrap_or_default()
    ))
}

/// Joins the incidents of three or more ports of one switch.
fn merge_switches(findings: &[Finding], lists: &mut Vec<Vec<usize>>) {
    let keys: Vec<Option<String>> = lists
        .iter()
        .map(|list| {
            let headline = list
                .iter()
                .filter_map(|&i| findings.get(i))
                .min_by_key(|f| rank(f))?;
            degraded_switch_port(headline).then(|| switch_of(&headline.subject))?
        })
        .collect();
    join_lists(lists, keys, SWITCH_MIN_PORTS);
}

/// Whether every degraded port of a switch's group says only that its link
/// trained below its ends' capability (IB006 from iblinkinfo's "Could
/// be", IB008's trained-down link), with no error counter or state beside.
fn only_trained_slow(fs: &[&Finding]) -> bool {
    fs.iter()
        .filter(|f| degraded_switch_port(f))
        .all(|f| matches!(f.rule, "IB006" | "IB008"))
}

/// A finding that says a switch port is degraded: a `warning` or worse
/// (a port whose only finding is an `info`, lifetime PortXmitWait say, is
/// history, not damage) about a port other than 0, the switch's own
/// management port, which no cable reaches. Only such ports make "ports
/// of this switch degraded together".
fn degraded_switch_port(f: &Finding) -> bool {
    f.severity >= Severity::Warning && f.subject.port.is_some_and(|p| p != 0)
}

/// Ports of one host down together, each an incident of its own, that
/// make one incident about the host: a GPU server's rails, all down.
const HOST_MIN_DOWN_PORTS: usize = 3;

/// The host of a port that is down (an IB001 `warning` or `error`: the
/// `info` of a port that came up is not one), named or header-less.
fn host_of_port_down(f: &Finding) -> Option<&str> {
    let port = f.subject.port.is_some() || f.subject.headerless_port.is_some();
    (f.rule == "IB001" && f.severity >= Severity::Warning && port).then_some(())?;
    f.subject.host.as_deref()
}

/// Joins the incidents of three or more down ports of one host, each
/// headed by its port's IB001: one cause is likelier than that many
/// cables, and one incident instead of eight is what an on-call engineer
/// reads first.
fn merge_host_ports_down(findings: &[Finding], lists: &mut Vec<Vec<usize>>) {
    let keys: Vec<Option<String>> = lists
        .iter()
        .map(|list| {
            let headline = list
                .iter()
                .filter_map(|&i| findings.get(i))
                .min_by_key(|f| rank(f))?;
            host_of_port_down(headline).map(str::to_owned)
        })
        .collect();
    join_lists(lists, keys, HOST_MIN_DOWN_PORTS);
}

/// Joins into one the lists that share a key, where at least `min` do;
/// the others are kept as they are, in their order, the joined ones after.
fn join_lists(lists: &mut Vec<Vec<usize>>, keys: Vec<Option<String>>, min: usize) {
    let mut by_key: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (n, key) in keys.into_iter().enumerate() {
        if let Some(key) = key {
            by_key.entry(key).or_default().push(n);
        }
    }
    let mut merged: Vec<Vec<usize>> = Vec::new();
    let mut gone = vec![false; lists.len()];
    for group in by_key.into_values() {
        if group.len() < min {
            continue;
        }
        let mut all = Vec::new();
        for n in group {
            if let (Some(list), Some(g)) = (lists.get(n), gone.get_mut(n)) {
                all.extend(list.iter().copied());
                *g = true;
            }
        }
        merged.push(all);
    }
    let mut kept: Vec<Vec<usize>> = lists
        .drain(..)
        .zip(gone)
        .filter(|(_, g)| !g)
        .map(|(l, _)| l)
        .collect();
    kept.extend(merged);
    *lists = kept;
}

/// A group of several down ports of one host ([`merge_host_ports_down`]):
/// the host's subject and the number of ports.
fn is_host_ports_down_group(fs: &[&Finding]) -> Option<(Subject, usize)> {
    let host = host_of_port_down(fs.first()?)?;
    let mut ports: Vec<(Option<&str>, Option<u32>, Option<u32>)> = fs
        .iter()
        .filter(|f| host_of_port_down(f) == Some(host))
        .map(|f| {
            let s = &f.subject;
            (s.device.as_deref(), s.port, s.headerless_port)
        })
        .collect();
    ports.sort_unstable();
    ports.dedup();
    (ports.len() >= HOST_MIN_DOWN_PORTS).then(|| {
        (
            Subject {
                host: Some(host.to_owned()),
                ..Subject::default()
            },
            ports.len(),
        )
    })
}

/// The fingerprint of a host's down-ports incident: `incident;ports-down;`
/// and the host's subject key.
fn host_ports_down_fingerprint(subject: &Subject) -> String {
    let mut h = FnvWriter(0xcbf2_9ce4_8422_2325);
    h.bytes(b"incident;ports-down;");
    h.subject_key(subject, false);
    hex16(h.0)
}

/// A group spanning several ports of one switch: the switch's subject and
/// the number of ports.
fn is_switch_group(fs: &[&Finding]) -> Option<(Subject, usize)> {
    let first = fs.first()?;
    switch_of(&first.subject)?;
    let mut ports: Vec<u32> = fs
        .iter()
        .filter(|f| degraded_switch_port(f))
        .filter_map(|f| f.subject.port)
        .collect();
    ports.sort_unstable();
    ports.dedup();
    (ports.len() >= SWITCH_MIN_PORTS).then(|| {
        (
            Subject {
                device: first.subject.device.clone(),
                guid: first.subject.guid,
                lid: first.subject.lid,
                ..Subject::default()
            },
            ports.len(),
        )
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::analyze::{analyze, AnalyzeOptions};

    /// [`finding_fingerprint`] as it was: the key formatted with `fmt`.
    fn finding_fingerprint_formatted(f: &Finding) -> String {
        use std::fmt::Write;
        let mut h = FnvWriter(0xcbf2_9ce4_8422_2325);
        let _ = write!(h, "finding;rule={};", f.rule);
        let _ = write_subject_key(&mut h, &f.subject, true);
        format!("{:016x}", h.0)
    }

    fn any_text() -> impl proptest::strategy::Strategy<Value = Option<String>> {
        proptest::option::of("(\\PC|[a-z0-9_.:-]|\"|\\\\|\t|\n|'|\u{301}){0,8}")
    }

    fn any_number() -> impl proptest::strategy::Strategy<Value = Option<u32>> {
        proptest::option::of(proptest::prop_oneof![0u32..20, proptest::num::u32::ANY])
    }

    /// Any subject: quotes, escapes, accents and control characters in its
    /// names, any numbers (the finding writer's test draws from it too).
    pub(crate) fn any_subject() -> impl proptest::strategy::Strategy<Value = Subject> {
        use proptest::strategy::Strategy;
        (
            (any_text(), any_text(), any_text(), any_text(), any_text()),
            (
                any_number(),
                any_number(),
                any_number(),
                any_number(),
                any_number(),
                any_number(),
            ),
            proptest::option::of(proptest::num::u64::ANY),
            proptest::bool::ANY,
        )
            .prop_map(
                |(
                    (host, device, gpu_uuid, bus_id, nic),
                    (port, lid, gpu, link, lane, peer_gpu),
                    guid,
                    gpu_unknown,
                )| {
                    Subject {
                        host,
                        device,
                        port,
                        headerless_port: None,
                        lid,
                        guid: guid.map(crate::model::ib::Guid),
                        gpu,
                        gpu_uuid,
                        gpu_unknown,
                        bus_id,
                        link,
                        lane,
                        peer_gpu,
                        nic,
                    }
                },
            )
    }

    proptest::proptest! {
        /// The fingerprint hashed byte by byte is the one hashed as `fmt`
        /// formatted it, for any subject: quotes, escapes, accents and
        /// control characters in its names, any numbers.
        #[test]
        fn fingerprint_is_the_formatted_one(
            subject in any_subject(),
            rule in proptest::sample::select(vec!["IB001", "NV003", "FL004"]),
        ) {
            let f = finding(rule, subject, "m", "e");
            proptest::prop_assert_eq!(finding_fingerprint(&f), finding_fingerprint_formatted(&f));
            proptest::prop_assert_eq!(
                incident_fingerprint(&f.subject),
                fnv(&format!("incident;{}", subject_key(&f.subject, false)))
            );
        }
    }
    proptest::proptest! {
        /// A number is written as `serde_json` writes it, a single digit
        /// (pushed as one byte) as any other, and so is a key at any depth
        /// (its comma, newline and indent copied whole and cut back up to
        /// 31 levels, pushed one by one below).
        #[test]
        fn numbers_and_keys_are_written_as_serde_writes_them(
            value in proptest::prop_oneof![0u64..=12, proptest::num::u64::ANY],
            depth in 0usize..40,
            first in proptest::bool::ANY,
        ) {
            let mut out = Vec::new();
            pretty::u64(&mut out, value);
            proptest::prop_assert_eq!(out, serde_json::to_vec(&value).unwrap());
            let mut out = b"{".to_vec();
            pretty::key(&mut out, depth, first, "counts_per_second");
            let indent = "  ".repeat(depth);
            let comma = if first { "" } else { "," };
            proptest::prop_assert_eq!(
                String::from_utf8(out).unwrap(),
                format!("{{{comma}\n{indent}\"counts_per_second\": ")
            );
        }
    }
    proptest::proptest! {
        /// An incident written by hand is the text serde's pretty printer
        /// writes for it as an element of the report's `incidents`, with
        /// or without a title in place of its own, whatever its subject,
        /// strings (quotes, escapes, control characters, accents) and
        /// findings.
        #[test]
        fn incident_written_by_hand_is_serdes(
            subject in any_subject(),
            (fingerprint, title, rule, cause) in (any_text(), any_text(), any_text(), any_text()),
            other_title in any_text(),
            findings in proptest::collection::vec(proptest::prop_oneof![0usize..30, proptest::num::usize::ANY], 0..5),
            severity in proptest::sample::select(Severity::WORST_FIRST.to_vec()),
        ) {
            #[derive(Serialize)]
            struct Root<'a> {
                incidents: &'a [Incident],
            }
            let mut incident = Incident {
                fingerprint: fingerprint.unwrap_or_default(),
                severity,
                subject,
                title: title.unwrap_or_default(),
                rule: rule.unwrap_or_default(),
                findings,
                probable_cause: cause,
            };
            let by_hand = |incident: &Incident, title: Option<&str>| {
                let mut out = b"{\n  \"incidents\": [\n    ".to_vec();
                incident.write_pretty(2, title, &mut out);
                out.extend_from_slice(b"\n  ]\n}");
                String::from_utf8(out).unwrap_or_default()
            };
            let by_serde = |incident: &Incident| {
                serde_json::to_string_pretty(&Root { incidents: std::slice::from_ref(incident) })
                    .unwrap_or_default()
            };
            proptest::prop_assert_eq!(by_hand(&incident, None), by_serde(&incident));
            if let Some(other) = other_title {
                let written = by_hand(&incident, Some(&other));
                incident.title = other;
                proptest::prop_assert_eq!(written, by_serde(&incident));
            }
        }
    }

    use crate::rules::{by_id, Evidence};
    use crate::span::LineSpan;

    fn finding(rule: &str, subject: Subject, message: &str, evidence: &str) -> Finding {
        by_id(rule)
            .map(|r| {
                r.finding(subject, message).evidence(Evidence::new(
                    evidence,
                    LineSpan::line(1),
                    None,
                ))
            })
            .unwrap()
    }

    #[test]
    fn fingerprints_hash_the_text_they_always_hashed() {
        // The hash as it was computed before it was streamed: the text
        // built whole, then hashed.
        let oracle = |f: &Finding| {
            fnv(&format!(
                "finding;rule={};{}",
                f.rule,
                subject_key(&f.subject, true)
            ))
        };
        let subjects = [
            Subject::default(),
            port("gpu01", 12),
            Subject {
                host: Some("gpu02".into()),
                device: Some("mlx5_0".into()),
                lid: Some(3),
                guid: Some(crate::model::ib::Guid(0xabcd)),
                gpu: Some(1),
                gpu_uuid: Some("GPU-1".into()),
                bus_id: Some("00000000:18:00.0".into()),
                link: Some(4),
                lane: Some(2),
                peer_gpu: Some(5),
                nic: Some("NIC0".into()),
                ..Subject::default()
            },
        ];
        for subject in subjects {
            let f = finding("NV003", subject, "m", "e");
            assert_eq!(finding_fingerprint(&f), oracle(&f));
        }
        // A pinned value: fingerprints are stable across releases.
        assert_eq!(
            finding_fingerprint(&finding("IB001", Subject::default(), "m", "e")),
            fnv("finding;rule=IB001;host=None;device=None;port=None;lid=None;guid=None;gpu=None;uuid=None;bus=None;link=None;lane=None;peer=None;nic=None")
        );
    }

    fn port(host: &str, lid: u32) -> Subject {
        Subject {
            host: Some(host.into()),
            lid: Some(lid),
            port: Some(1),
            ..Subject::default()
        }
    }

    /// A finding of `rule` about a subject drawn from few values, so that
    /// subjects share ports, LIDs, GUIDs, GPUs, UUIDs, bus ids and switches.
    fn any_finding() -> impl proptest::strategy::Strategy<Value = Finding> {
        use proptest::prelude::*;
        let small = || proptest::option::of(0u32..3);
        let text = |values: &'static [&'static str]| {
            proptest::option::of(proptest::sample::select(values).prop_map(str::to_owned))
        };
        (
            (
                text(&["h1", "h2"]),
                text(&["mlx5_0", "Switch A", "h1 mlx5_1"]),
                small(),
                small(),
                proptest::option::of(0u64..3),
                small(),
            ),
            (
                text(&["GPU-a", "GPU-b"]),
                text(&["00:1a.0", "00:1A.0"]),
                small(),
                small(),
                text(&["NIC0"]),
            ),
            proptest::sample::select(vec![
                "IB001", "IB101", "IB102", "IB103", "IB112", "NV001", "NV002", "NV003", "NV007",
                "FL004", "TP002",
            ]),
            proptest::sample::select(vec![
                "GPU 1 has no active NVLink",
                "thermal slowdown",
                "SymbolErrorCounter 12 while peers",
                "",
            ]),
        )
            .prop_map(
                |(
                    (host, device, port, lid, guid, gpu),
                    (uuid, bus, link, peer, nic),
                    rule,
                    message,
                )| {
                    let subject = Subject {
                        host,
                        device,
                        port,
                        headerless_port: None,
                        lid,
                        guid: guid.map(crate::model::ib::Guid),
                        gpu,
                        gpu_uuid: uuid,
                        bus_id: bus,
                        link,
                        peer_gpu: peer.filter(|p| *p == 2),
                        nic,
                        ..Subject::default()
                    };
                    finding(rule, subject, message, "SymbolErrorCounter = 4")
                },
            )
    }

    proptest::proptest! {
        /// Grouping gives the incidents it gave with a tree of groups and
        /// a set of links per incident, whatever the findings share.
        #[test]
        fn group_is_the_reference_grouping(
            findings in proptest::collection::vec(any_finding(), 0..40),
        ) {
            proptest::prop_assert_eq!(group(&findings), group_reference(&findings));
        }
    }

    proptest::proptest! {
        /// The same with the groups built a few at a time: the tasks'
        /// incidents are joined in order.
        #[test]
        fn group_in_tasks_is_the_reference_grouping(
            findings in proptest::collection::vec(any_finding(), 0..60),
            per_task in 1usize..5,
        ) {
            proptest::prop_assert_eq!(group_in_tasks(&findings, per_task), group_reference(&findings));
        }
    }

    #[test]
    fn keys_sharing_a_hash_are_still_told_apart() {
        let gpu = |host: &str, g: u32| Subject {
            host: Some(host.into()),
            gpu: Some(g),
            ..Subject::default()
        };
        let findings: Vec<Finding> = [gpu("a", 0), gpu("a", 1), gpu("a", 0), gpu("b", 1)]
            .into_iter()
            .map(|s| finding("NV003", s, "m", "e"))
            .collect();
        // Every key hashes to 0: only the check against the first finding's
        // own keys can tell them apart.
        let mut first = FirstWithKey::default();
        let got: Vec<Option<usize>> = findings
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let k = keys(&f.subject).remove(0);
                first.get_or_insert_hashed(0, k, i, &findings)
            })
            .collect();
        assert_eq!(got, [None, None, Some(0), None]);
        assert_eq!(first.collided.len(), 2);
        // With real hashes: the same answer.
        let mut first = FirstWithKey::default();
        let real: Vec<Option<usize>> = findings
            .iter()
            .enumerate()
            .map(|(i, f)| first.get_or_insert(keys(&f.subject).remove(0), i, &findings))
            .collect();
        assert_eq!(real, got);
    }

    #[test]
    fn a_down_port_and_its_counters_are_one_incident_with_a_cause() {
        let text = "$ ibstat\nCA 'mlx5_0'\n\tCA type: MT4129\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Polling\n\t\tRate: 400\n\t\tBase lid: 7\n\t\tSM lid: 1\n\t\tLink layer: InfiniBand\n$ perfquery\n# Port counters: Lid 7 port 1 (CapMask: 0x5A00)\nPortSelect:......................1\nSymbolErrorCounter:..............4000\nLinkErrorRecoveryCounter:........40\nLinkDownedCounter:...............40\nPortRcvErrors:...................400\n".to_owned()
            + crate::parse::perfquery::PORT_COUNTERS_AFTER_RCV_ERRORS;
        let doc = crate::input::read_all(&text, &crate::ReadOptions::default()).unwrap();
        let r = analyze(&[doc], &AnalyzeOptions::default());
        assert!(r.findings.len() >= 5, "{:#?}", r.findings);
        assert_eq!(r.incidents.len(), 1, "{:#?}", r.incidents);
        let i = &r.incidents[0];
        assert_eq!(i.rule, "IB001");
        assert_eq!(i.findings.len(), r.findings.len());
        assert_eq!(r.findings[i.findings[0]].rule, "IB001");
        assert_eq!(i.subject.device.as_deref(), Some("mlx5_0"));
        assert_eq!(i.subject.lid, Some(7));
        assert!(
            i.probable_cause.as_deref().unwrap().contains("cable"),
            "{i:?}"
        );
    }

    #[test]
    fn fingerprints_ignore_lines_order_and_lids_of_named_ports() {
        let mut a = finding("IB101", port("n1", 4), "x", "SymbolErrorCounter = 9");
        let mut b = a.clone();
        b.evidence[0].span = LineSpan::line(77);
        b.message = "other words".into();
        assert_eq!(finding_fingerprint(&a), finding_fingerprint(&b));
        a.subject.device = Some("mlx5_0".into());
        b.subject.device = Some("mlx5_0".into());
        b.subject.lid = Some(9);
        assert_eq!(finding_fingerprint(&a), finding_fingerprint(&b));
        let c = finding("IB102", a.subject.clone(), "x", "y");
        assert_ne!(finding_fingerprint(&a), finding_fingerprint(&c));
        // Fixed value: the hash must not change between releases.
        assert_eq!(fnv(""), "cbf29ce484222325");
    }

    #[test]
    fn fleet_outliers_do_not_repeat_a_counter_limit() {
        let ib = finding(
            "IB101",
            port("n1", 4),
            "m",
            "perfquery: SymbolErrorCounter = 1234",
        );
        let same = finding(
            "FL004",
            port("n1", 4),
            "n1 lid 4 port 1: SymbolErrorCounter 1234 while the median is 0",
            "SymbolErrorCounter value = 1234",
        );
        let other = finding(
            "FL004",
            port("n1", 4),
            "n1 lid 4 port 1: PortXmitWait 99 while the median is 0",
            "PortXmitWait value = 99",
        );
        let elsewhere = finding(
            "FL004",
            port("n2", 4),
            "n2 lid 4 port 1: SymbolErrorCounter 1234 while the median is 0",
            "SymbolErrorCounter value = 1234",
        );
        let kept = drop_repeats(vec![ib, same, other, elsewhere]);
        let messages: Vec<&str> = kept.iter().map(|f| f.message.as_str()).collect();
        assert_eq!(kept.len(), 3, "{messages:?}");
        assert!(messages.iter().any(|m| m.contains("PortXmitWait")));
        assert!(messages.iter().any(|m| m.starts_with("n2")));
    }

    #[test]
    fn one_gpu_named_by_three_forms_of_its_bus_id_is_one_incident() {
        let on = |bus: &str| Subject {
            host: Some("g1".into()),
            bus_id: Some(bus.into()),
            ..Subject::default()
        };
        let fs = vec![
            finding("DG006", on("0000:3a:00.0"), "GPU 0000:3a:00.0: Xid 79", "e"),
            finding(
                "IN003",
                on("0000:3A:00.0"),
                "nvidia-smi failed: GPU lost",
                "e",
            ),
            finding("DG004", on("00000000:3A:00.0"), "ERR!", "e"),
            finding("DG006", on("0000:3b:00.0"), "GPU 0000:3b:00.0: Xid 13", "e"),
        ];
        let inc = group(&fs);
        assert_eq!(inc.len(), 2, "{inc:?}");
        assert_eq!(bus_key("0000:3a:00"), "0000:3a:00.0");
        assert_eq!(bus_key("00000000:3A:00.0"), "0000:3a:00.0");
        assert_eq!(bus_key("0000:3a:00.1"), "0000:3a:00.1");
    }

    #[test]
    fn all_links_of_a_gpu_and_heat_with_slow_links() {
        let gpu = |link: Option<u32>| Subject {
            host: Some("g1".into()),
            gpu: Some(3),
            link,
            ..Subject::default()
        };
        let fs = vec![
            finding(
                "NV001",
                gpu(None),
                "GPU 3 (H100) has no active NVLink (18 expected)",
                "e",
            ),
            finding("NV003", gpu(Some(2)), "GPU 3 link 2: replay errors", "e"),
        ];
        let inc = group(&fs);
        assert_eq!(inc.len(), 1);
        assert!(inc[0]
            .probable_cause
            .as_deref()
            .unwrap()
            .contains("baseboard"));
        let hot = Subject {
            host: Some("g1".into()),
            gpu_uuid: Some("GPU-1".into()),
            bus_id: Some("00000000:18:00.0".into()),
            ..Subject::default()
        };
        let slow = Subject {
            host: Some("g1".into()),
            gpu: Some(0),
            gpu_uuid: Some("GPU-1".into()),
            link: Some(4),
            ..Subject::default()
        };
        let fs = vec![
            finding("NV002", slow, "GPU 0 link 4 runs at 13 GB/s", "e"),
            finding(
                "NV007",
                hot,
                "GPU 00000000:18:00.0 at 91 °C: clocks slowed by HW Thermal Slowdown right now",
                "e",
            ),
        ];
        // NV002 carries a link, so it is keyed by its port-less GPU UUID only
        // through the GPU subject: give it the same UUID.
        let inc = group(&fs);
        assert_eq!(inc.len(), 1, "{inc:#?}");
        assert!(inc[0]
            .probable_cause
            .as_deref()
            .unwrap()
            .starts_with("cooling"));
    }

    #[test]
    fn several_ports_of_one_switch_are_one_incident() {
        let sw = |p: u32| Subject {
            device: Some("MF0;leaf01:MQM8700/U1".into()),
            guid: Some(crate::model::ib::Guid(2)),
            lid: Some(2),
            port: Some(p),
            ..Subject::default()
        };
        let fs: Vec<Finding> = (1..=4)
            .map(|p| finding("IB006", sw(p), "runs at 1X", "iblinkinfo"))
            .collect();
        let inc = group(&fs);
        assert_eq!(inc.len(), 1, "{inc:#?}");
        assert_eq!(inc[0].findings.len(), 4);
        assert!(inc[0].probable_cause.as_deref().unwrap().contains("switch"));
        assert_eq!(inc[0].subject.port, None);
        // Two ports are two incidents.
        assert_eq!(group(fs.get(..2).unwrap()).len(), 2);
    }

    #[test]
    fn only_degraded_ports_make_a_switch_incident() {
        let sw = |p: u32| Subject {
            device: Some("MF0;spine02:SX6036/U1".into()),
            guid: Some(crate::model::ib::Guid(3)),
            lid: Some(3),
            port: Some(p),
            ..Subject::default()
        };
        let warn = |p: u32| {
            let mut f = finding("IB108", sw(p), "discards", "ibqueryerrors");
            f.severity = Severity::Warning;
            f
        };
        let info = |p: u32| {
            let mut f = finding("IB109", sw(p), "PortXmitWait history", "ibqueryerrors");
            f.severity = Severity::Info;
            f
        };
        // Two degraded ports among congestion history and the switch's
        // management port 0: no "ports degraded together".
        let mut fs = vec![warn(5), warn(6), info(0), info(1), info(2), info(3)];
        let inc = group(&fs);
        assert!(inc.iter().all(|i| i.probable_cause.is_none()), "{inc:#?}");
        assert_eq!(inc.len(), 6, "{inc:#?}");
        // A third degraded port: one incident of the three, the history apart.
        fs.push(warn(8));
        let inc = group(&fs);
        let switch: Vec<&Incident> = inc.iter().filter(|i| i.probable_cause.is_some()).collect();
        assert_eq!(switch.len(), 1, "{inc:#?}");
        assert_eq!(switch[0].findings.len(), 3);
        assert!(switch[0]
            .probable_cause
            .as_deref()
            .unwrap()
            .starts_with("3 ports of this switch"));
    }

    #[test]
    fn switch_ports_that_only_trained_slow_blame_what_they_share_not_the_switch() {
        let sw = |p: u32| Subject {
            device: Some("Quantum Mellanox Technologies".into()),
            guid: Some(crate::model::ib::Guid(7)),
            lid: Some(10),
            port: Some(p),
            ..Subject::default()
        };
        let slow = |p: u32| {
            let mut f = finding("IB006", sw(p), "runs at 4X 25.78125 Gbps", "iblinkinfo");
            f.severity = Severity::Warning;
            f
        };
        let mut fs = vec![slow(21), slow(22), slow(23), slow(24)];
        let inc = group(&fs);
        let cause = inc
            .iter()
            .find_map(|i| i.probable_cause.as_deref())
            .expect("one switch incident");
        assert!(
            cause.starts_with("4 ports of this switch trained below"),
            "{cause}"
        );
        assert!(!cause.contains("ASIC"), "{cause}");
        // With a port's errors among them, the switch is suspected as before.
        let mut errors = finding("IB101", sw(25), "symbol errors", "perfquery");
        errors.severity = Severity::Warning;
        fs.push(errors);
        let inc = group(&fs);
        let cause = inc
            .iter()
            .find_map(|i| i.probable_cause.as_deref())
            .expect("one switch incident");
        assert!(cause.contains("suspect the switch"), "{cause}");
    }

    #[test]
    fn several_down_ports_of_one_host_are_one_incident() {
        let port = |host: &str, dev: &str| Subject {
            host: Some(host.into()),
            device: Some(dev.into()),
            port: Some(1),
            ..Subject::default()
        };
        let mut fs: Vec<Finding> = ["mlx5_0", "mlx5_1", "mlx5_3", "mlx5_4"]
            .iter()
            .map(|d| {
                let mut f = finding("IB001", port("gpu07", d), "is Down/Disabled", "ibstat");
                f.severity = Severity::Error;
                f
            })
            .collect();
        // A counter of one of them joins it; a port of another host, and a
        // fleet finding about the host itself, stay apart.
        fs.push(finding(
            "IB103",
            port("gpu07", "mlx5_0"),
            "link downed 40",
            "perfquery",
        ));
        let mut other = finding(
            "IB001",
            port("gpu08", "mlx5_0"),
            "is Down/Polling",
            "ibstat",
        );
        other.severity = Severity::Error;
        fs.push(other);
        fs.push(finding(
            "FL003",
            Subject {
                host: Some("gpu07".into()),
                ..Subject::default()
            },
            "fewer adapters",
            "ibstat",
        ));
        let inc = group(&fs);
        assert_eq!(inc.len(), 3, "{inc:#?}");
        let host = inc
            .iter()
            .find(|i| i.findings.len() == 5)
            .expect("one incident of gpu07's down ports");
        assert_eq!(host.subject.host.as_deref(), Some("gpu07"));
        assert_eq!(host.subject.device, None);
        assert!(host
            .probable_cause
            .as_deref()
            .unwrap()
            .contains("4 ports of this host"));
        let fleet = inc.iter().find(|i| i.rule == "FL003").unwrap();
        assert_eq!(fleet.subject, host.subject);
        assert_ne!(fleet.fingerprint, host.fingerprint);
        // Two down ports are two incidents; an info (a port that came up) is none.
        assert_eq!(group(fs.get(..2).unwrap()).len(), 2);
        let came_up: Vec<Finding> = (0..4)
            .map(|n| {
                let mut f = finding(
                    "IB001",
                    port("gpu09", &format!("mlx5_{n}")),
                    "came up",
                    "ibstat",
                );
                f.severity = Severity::Info;
                f
            })
            .collect();
        assert_eq!(group(&came_up).len(), 4);
    }
}
