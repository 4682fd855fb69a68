//! Redaction: replaces the identifiers a paste carries about a site —
//! host names, GUIDs (and GIDs), UUIDs, serial numbers, IPv4 addresses — with
//! stand-ins, *consistently*: the same original always gets the same
//! stand-in, so a redacted paste still reads and analyses the same way (the
//! same port is the same port, the same host the same host).
//!
//! Stand-ins keep the original's shape so the tools' formats still parse:
//! `0x0002c90300317b50` → `0x0000000000000001`, `GPU-d4a1…` →
//! `GPU-00000000-0000-0000-0000-000000000001`, `10.1.2.3` → `192.0.2.1`
//! (the documentation ranges of RFC 5737), `node07` → `host-1`, a serial
//! number → `SERIAL-1`.
//!
//! One implementation for every client: the web page redacts before it builds
//! a share link, and the CLI's `--redact` redacts what it prints.
//!
//! Host names are the ones the input layer finds (prompts, `pdsh` prefixes,
//! `clush` banners, file headers); they are replaced wherever they appear as a
//! whole word, including as the part before the first dot of a longer name
//! (`node07.cluster.local`, `node07.txt`). A host name the input layer cannot
//! see (one only mentioned in an `iblinkinfo` node description, say) is not
//! replaced: check the result before sharing it.

use crate::input::{read_all, ReadOptions};
use serde::Serialize;
use std::collections::HashMap;

/// What kind of identifier a stand-in replaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
pub enum IdentifierKind {
    /// A host name found by the input layer.
    Host,
    /// `0x` and 16 hex digits, or colon-separated groups of four hex digits (GUIDs, GIDs).
    Guid,
    /// 8-4-4-4-12 hex digits, with any prefix such as `GPU-` kept.
    Uuid,
    /// The value after a `serial` key (`Serial Number : …`, `<serial>…`).
    Serial,
    /// A dotted-quad IPv4 address.
    Ip,
}

/// One original and its stand-in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
pub struct Replacement {
    /// What was replaced.
    pub kind: IdentifierKind,
    /// The text in the input.
    pub original: String,
    /// The text put in its place.
    pub replacement: String,
}

/// A redacted text and what was replaced in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
pub struct Redacted {
    /// The text with every identifier replaced.
    pub text: String,
    /// Every distinct original and its stand-in, in order of first
    /// appearance. Keep it to map a reply back; never share it.
    pub replacements: Vec<Replacement>,
}

/// Redacts a paste: finds its hosts with the input layer, then replaces
/// hosts, GUIDs, UUIDs, serials and IPs consistently.
///
/// ```
/// let paste = "[root@node07 ~]# ibstat\nCA 'mlx5_0'\n\tNode GUID: 0x0002c90300317b50\n\
///              \tSystem image GUID: 0x0002c90300317b50\n";
/// let out = fabricscope::redact::redact(paste);
/// assert!(!out.text.contains("node07") && !out.text.contains("0x0002c90300317b50"));
/// assert!(out.text.contains("[root@host-1 ~]#"));
/// assert_eq!(out.text.matches("0x0000000000000001").count(), 2);
/// ```
#[must_use]
pub fn redact(text: &str) -> Redacted {
    let mut redactor = Redactor::default();
    redactor.add_hosts(hosts_in(text));
    let text = redactor.redact(text);
    Redacted {
        text,
        replacements: redactor.into_replacements(),
    }
}

/// The hosts the input layer finds in `text` (no size limit: redaction must
/// see everything it is asked to redact).
#[must_use]
pub fn hosts_in(text: &str) -> Vec<String> {
    let options = ReadOptions::default().with_max_input_bytes(usize::MAX);
    let Ok(doc) = read_all(text, &options) else {
        return Vec::new();
    };
    let mut hosts: Vec<String> = Vec::new();
    let names = doc
        .sections
        .iter()
        .filter_map(|s| s.host.as_deref())
        .chain(doc.unrecognised.iter().filter_map(|u| u.host.as_deref()));
    for name in names {
        if !hosts.iter().any(|h| h == name) {
            hosts.push(name.to_owned());
        }
    }
    hosts
}

/// Replaces identifiers consistently across any number of texts (every file
/// of a batch, or a report's output): keep one `Redactor` for all of them.
#[derive(Debug, Default, Clone)]
pub struct Redactor {
    hosts: HashMap<String, String>,
    seen: HashMap<(IdentifierKind, String), String>,
    order: Vec<(IdentifierKind, String)>,
    counts: HashMap<IdentifierKind, usize>,
}

impl Redactor {
    /// Declares host names to replace wherever they appear as words.
    pub fn add_hosts<I, S>(&mut self, hosts: I)
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        for host in hosts {
            let host = host.into();
            if is_host_word(&host) && !self.hosts.contains_key(&host) {
                let stand_in = self.stand_in(IdentifierKind::Host, &host);
                self.hosts.insert(host, stand_in);
            }
        }
    }

    /// Every distinct original replaced so far and its stand-in.
    #[must_use]
    pub fn into_replacements(self) -> Vec<Replacement> {
        self.order
            .into_iter()
            .map(|key| {
                let replacement = self.seen.get(&key).cloned().unwrap_or_default();
                Replacement {
                    kind: key.0,
                    original: key.1,
                    replacement,
                }
            })
            .collect()
    }

    /// Redacts one text, line by line, in one pass over its characters.
    pub fn redact(&mut self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        for (i, line) in text.split('\n').enumerate() {
            if i > 0 {
                out.push('\n');
            }
            self.redact_line(line, &mut out);
        }
        out
    }

    fn redact_line(&mut self, line: &str, out: &mut String) {
        let serial = serial_value(line);
        let bytes = line.as_bytes();
        let mut i = 0;
        let mut copied = 0;
        while i < bytes.len() {
            // Identifiers start after a non-word byte that is not a dot, so
            // `5.4.0.1.2` is not read as an address from its second number.
            let boundary = i == 0
                || bytes
                    .get(i - 1)
                    .is_some_and(|b| !is_word_byte(*b) && *b != b'.');
            let found = if !boundary {
                None
            } else if serial.is_some_and(|(start, _)| start == i) {
                serial.map(|(start, end)| (IdentifierKind::Serial, start, end))
            } else {
                self.match_at(line, i)
            };
            match found {
                Some((kind, start, end)) => {
                    let original = line.get(start..end).unwrap_or("");
                    let stand_in = match kind {
                        IdentifierKind::Host => self.hosts.get(original).cloned(),
                        _ => None,
                    }
                    .unwrap_or_else(|| self.stand_in(kind, original));
                    out.push_str(line.get(copied..start).unwrap_or(""));
                    out.push_str(&stand_in);
                    copied = end;
                    i = end;
                }
                None => {
                    // Skip to the end of this word: matches start only at boundaries.
                    i += 1;
                    while i < bytes.len()
                        && is_word_byte(bytes.get(i - 1).copied().unwrap_or(b' '))
                        && is_word_byte(bytes.get(i).copied().unwrap_or(b' '))
                    {
                        i += 1;
                    }
                }
            }
        }
        out.push_str(line.get(copied..).unwrap_or(""));
    }

    /// The identifier starting at byte `i` of `line` (a word boundary), if any:
    /// `(kind, start, end)`.
    fn match_at(&self, line: &str, i: usize) -> Option<(IdentifierKind, usize, usize)> {
        let rest = line.get(i..)?;
        let after_ok = |len: usize| {
            line.as_bytes()
                .get(i + len)
                .is_none_or(|b| !is_word_byte(*b))
        };
        if let Some(len) = uuid_len(rest) {
            return Some((IdentifierKind::Uuid, i, i + len));
        }
        // A UUID after a prefix such as `GPU-` or `MIG-`.
        if let Some(dash) = rest.get(..5).and_then(|p| p.find('-')) {
            let prefix = rest.get(..dash)?;
            if dash > 0 && prefix.bytes().all(|b| b.is_ascii_uppercase()) {
                if let Some(len) = rest.get(dash + 1..).and_then(uuid_len) {
                    return Some((IdentifierKind::Uuid, i + dash + 1, i + dash + 1 + len));
                }
            }
        }
        if let Some(len) = hex_guid_len(rest).filter(|len| after_ok(*len)) {
            return Some((IdentifierKind::Guid, i, i + len));
        }
        if let Some(len) = colon_groups_len(rest) {
            return Some((IdentifierKind::Guid, i, i + len));
        }
        if let Some(len) = ipv4_len(rest) {
            return Some((IdentifierKind::Ip, i, i + len));
        }
        if !self.hosts.is_empty() {
            let word_len = rest
                .bytes()
                .take_while(|b| is_word_byte(*b) || *b == b'.')
                .count();
            let word = rest.get(..word_len)?.trim_end_matches('.');
            if self.hosts.contains_key(word) {
                return Some((IdentifierKind::Host, i, i + word.len()));
            }
            let short = word.split('.').next()?;
            if short.len() < word.len() && self.hosts.contains_key(short) {
                return Some((IdentifierKind::Host, i, i + short.len()));
            }
        }
        None
    }

    /// The stand-in of `original`, made on first sight.
    fn stand_in(&mut self, kind: IdentifierKind, original: &str) -> String {
        // Hex identifiers are the same whatever their case.
        let key = match kind {
            IdentifierKind::Guid | IdentifierKind::Uuid => (kind, original.to_ascii_lowercase()),
            _ => (kind, original.to_owned()),
        };
        if let Some(known) = self.seen.get(&key) {
            return known.clone();
        }
        let n = {
            let count = self.counts.entry(kind).or_insert(0);
            *count += 1;
            *count
        };
        let stand_in = match kind {
            IdentifierKind::Host => format!("host-{n}"),
            IdentifierKind::Serial => format!("SERIAL-{n}"),
            IdentifierKind::Ip => documentation_ip(n),
            IdentifierKind::Guid | IdentifierKind::Uuid => same_shape_hex(original, n),
        };
        self.seen.insert(key.clone(), stand_in.clone());
        self.order.push(key);
        stand_in
    }
}

/// Letters, digits, `_` and `-`: the bytes of a host name's label.
fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// Host names worth replacing: a word of host characters, not a bare number.
fn is_host_word(host: &str) -> bool {
    !host.is_empty()
        && host.bytes().all(|b| is_word_byte(b) || b == b'.')
        && !host.bytes().all(|b| b.is_ascii_digit())
}

fn hex_run(s: &str) -> usize {
    s.bytes().take_while(u8::is_ascii_hexdigit).count()
}

/// `0x` and exactly 16 hex digits.
fn hex_guid_len(s: &str) -> Option<usize> {
    let digits = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X"))?;
    (hex_run(digits) == 16).then_some(18)
}

/// Four or more groups of four hex digits joined by `:` (ibv_devinfo GUIDs, GIDs).
fn colon_groups_len(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut groups = 0;
    let mut at = 0;
    loop {
        let run = hex_run(s.get(at..)?);
        if run != 4 {
            break;
        }
        groups += 1;
        at += 4;
        if bytes.get(at) == Some(&b':') && s.get(at + 1..).is_some_and(|r| hex_run(r) == 4) {
            at += 1;
        } else {
            break;
        }
    }
    let end_ok = bytes
        .get(at)
        .is_none_or(|b| !is_word_byte(*b) && *b != b':');
    (groups >= 4 && end_ok).then_some(at)
}

/// 8-4-4-4-12 hex digits.
fn uuid_len(s: &str) -> Option<usize> {
    let mut at = 0;
    for (k, want) in [8usize, 4, 4, 4, 12].into_iter().enumerate() {
        if k > 0 {
            if s.as_bytes().get(at) != Some(&b'-') {
                return None;
            }
            at += 1;
        }
        if hex_run(s.get(at..)?) != want {
            return None;
        }
        at += want;
    }
    s.as_bytes()
        .get(at)
        .is_none_or(|b| !is_word_byte(*b))
        .then_some(at)
}

/// A dotted quad of numbers 0–255, not part of a longer dotted number.
fn ipv4_len(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut at = 0;
    for k in 0..4 {
        if k > 0 {
            if bytes.get(at) != Some(&b'.') {
                return None;
            }
            at += 1;
        }
        let digits = bytes
            .get(at..)?
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let value: u32 = s.get(at..at + digits)?.parse().ok()?;
        if digits == 0 || digits > 3 || value > 255 {
            return None;
        }
        at += digits;
    }
    let next = bytes.get(at).copied();
    let dotted_on = next == Some(b'.') && bytes.get(at + 1).is_some_and(u8::is_ascii_digit);
    (next.is_none_or(|b| !is_word_byte(b)) && !dotted_on).then_some(at)
}

/// The value after a `serial` key on this line: `(start, end)` in bytes.
fn serial_value(line: &str) -> Option<(usize, usize)> {
    let lower = line.to_ascii_lowercase();
    let key = lower.find("serial")?;
    let after_key = key + "serial".len();
    // The separator must follow the key's words closely (`Serial Number :`).
    let tail = lower.get(after_key..)?;
    let sep = tail.find([':', '=', '>']).filter(|d| {
        *d <= 48
            && tail.get(..*d).is_some_and(|between| {
                between
                    .bytes()
                    .all(|b| b.is_ascii_alphabetic() || b == b' ' || b == b'_')
            })
    })?;
    let value_start = after_key + sep + 1;
    let rest = line.get(value_start..)?;
    let skip = rest.len() - rest.trim_start().len();
    let start = value_start + skip;
    let len = line
        .get(start..)?
        .find(|c: char| c.is_whitespace() || "<\",;".contains(c))
        .unwrap_or(line.len() - start);
    let value = line.get(start..start + len)?;
    let placeholder = value.is_empty()
        || value.eq_ignore_ascii_case("n/a")
        || value.starts_with('[')
        || value.chars().all(|c| c == '0');
    (!placeholder).then_some((start, start + len))
}

/// The n-th address of the RFC 5737 documentation ranges, then of 10/8.
fn documentation_ip(n: usize) -> String {
    match n {
        1..=254 => format!("192.0.2.{n}"),
        255..=508 => format!("198.51.100.{}", n - 254),
        509..=762 => format!("203.0.113.{}", n - 508),
        _ => format!("10.{}.{}.{}", (n >> 16) & 255, (n >> 8) & 255, n & 255),
    }
}

/// `original` with its hex digits replaced by `n` in hex, right-aligned and
/// zero-padded, and every other character (`0x`, `-`, `:`) kept in place.
fn same_shape_hex(original: &str, n: usize) -> String {
    let skip_prefix = if original.starts_with("0x") || original.starts_with("0X") {
        2
    } else {
        0
    };
    let slots = original
        .bytes()
        .skip(skip_prefix)
        .filter(u8::is_ascii_hexdigit)
        .count();
    let digits = format!("{n:x}");
    let digits = digits
        .get(digits.len().saturating_sub(slots)..)
        .unwrap_or("");
    let mut fill =
        std::iter::repeat_n('0', slots.saturating_sub(digits.len())).chain(digits.chars());
    original
        .chars()
        .enumerate()
        .map(|(k, c)| {
            if k >= skip_prefix && c.is_ascii_hexdigit() {
                fill.next().unwrap_or('0')
            } else {
                c
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(r: &Redacted) -> Vec<IdentifierKind> {
        r.replacements.iter().map(|x| x.kind).collect()
    }

    #[test]
    fn hosts_from_prompts_and_pdsh_prefixes_are_replaced_everywhere() {
        let paste = "node01: CA 'mlx5_0'\nnode01: \tCA type: MT4123\nnode02: CA 'mlx5_0'\n\
                     node02: \tCA type: MT4123\nsee node01.cluster.local and node01.txt, not node011\n";
        let out = redact(paste);
        assert_eq!(
            out.text,
            "host-1: CA 'mlx5_0'\nhost-1: \tCA type: MT4123\nhost-2: CA 'mlx5_0'\n\
             host-2: \tCA type: MT4123\nsee host-1.cluster.local and host-1.txt, not node011\n"
        );
        assert_eq!(kinds(&out), [IdentifierKind::Host, IdentifierKind::Host]);
    }

    #[test]
    fn guids_uuids_ips_and_serials_keep_their_shape_and_stay_consistent() {
        let mut r = Redactor::default();
        let text = r.redact(
            "Port GUID: 0x0002C90300317B51 and 0x0002c90300317b50 again 0x0002C90300317B51\n\
             node_guid: 0002:c903:0031:7b50\nGID[0]: fe80:0000:0000:0000:0002:c903:0031:7b51\n\
             GPU 0: NVIDIA H200 (UUID: GPU-d4a16625-4536-2b66-d7f0-0060bf86bff4)\n\
             IP 10.12.0.7 mask 255.255.0.0, version 5.4.0.1.2, lid 0x0001\n\
             Serial Number                         : 1650124012345\n\
             Serial Number : N/A\n    <serial>1321021034567</serial>",
        );
        assert_eq!(
            text,
            "Port GUID: 0x0000000000000001 and 0x0000000000000002 again 0x0000000000000001\n\
             node_guid: 0000:0000:0000:0003\nGID[0]: 0000:0000:0000:0000:0000:0000:0000:0004\n\
             GPU 0: NVIDIA H200 (UUID: GPU-00000000-0000-0000-0000-000000000001)\n\
             IP 192.0.2.1 mask 192.0.2.2, version 5.4.0.1.2, lid 0x0001\n\
             Serial Number                         : SERIAL-1\n\
             Serial Number : N/A\n    <serial>SERIAL-2</serial>"
        );
    }

    #[test]
    fn a_redacted_paste_analyses_like_the_original() {
        let paste = include_str!("../www/examples/ib-two-hosts.txt");
        let out = redact(paste);
        let read = |t: &str| crate::input::read_all(t, &ReadOptions::default()).unwrap();
        let (before, after) = (read(paste), read(&out.text));
        assert_eq!(before.sections.len(), after.sections.len());
        for (b, a) in before.sections.iter().zip(&after.sections) {
            assert_eq!(b.kind, a.kind);
            assert_eq!(b.host.is_some(), a.host.is_some());
        }
        for r in &out.replacements {
            assert!(!out.text.contains(&r.original), "{} left in", r.original);
        }
        assert!(out
            .replacements
            .iter()
            .any(|r| r.kind == IdentifierKind::Host));
        assert!(out
            .replacements
            .iter()
            .any(|r| r.kind == IdentifierKind::Guid));
        let analyse = |d: &crate::Document| {
            crate::analyze(std::slice::from_ref(d), &Default::default())
                .findings
                .iter()
                .map(|f| (f.rule, f.severity))
                .collect::<Vec<_>>()
        };
        assert_eq!(analyse(&before), analyse(&after));
    }

    #[test]
    fn never_panics_on_odd_bytes() {
        for text in [
            "",
            "\n\n",
            "0x",
            "0x123",
            "1.2.3",
            "serial:",
            "é0x0002c90300317b50ü",
            "GPU-",
        ] {
            let _ = redact(text);
        }
    }
}
