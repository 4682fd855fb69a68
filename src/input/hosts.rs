//! `pdsh`/`clush` host prefixes: `node07: CA 'mlx5_0'`.
//!
//! A prefix is only taken as a host when the input shows a pattern of them:
//! the same host-shaped word before `: ` on several lines, and such lines
//! making up a good share of the input. Single words that tools themselves
//! print as labels (`State: Active` in `ibstat mlx5_0 1`) are never hosts.

use std::collections::{HashMap, HashSet};

/// Labels any tool may print at column 0 in `Label: value` form (messages,
/// usage texts); each format adds its own through `Spec::labels`.
const GENERIC_LABELS: &[&str] = &[
    "warning", "warn", "error", "note", "usage", "ibwarn", "ibpanic", "iberror", "info", "debug",
    "status", "result", "total", "host", "hostname", "device", "model", "output", "input",
];

/// Share of non-blank lines that must carry an accepted prefix.
const MIN_COVERAGE: f64 = 0.4;

/// The bytes a host name holds (ASCII letters, digits, `-`, `.`, `_`), a
/// table indexed by byte: one load a byte where the tests were a chain of
/// compares, on most lines of every input.
const HOST_BYTES: [bool; 256] = crate::parse::text::alphanumeric_and(b"-._");

/// The prefix before `: ` (or a bare trailing `:`) if it is shaped like a
/// host name and starts at column 0.
pub(crate) fn candidate(line: &str) -> Option<(&str, &str)> {
    // The host is the text before the first colon and holds only ASCII
    // letters, digits, `-`, `.` and `_`, at most 64 of them: the first
    // other byte must be that colon, within 65 bytes. Tool output lines
    // (indented, or `Name:....value`, or tab-separated) end the scan in a
    // few bytes instead of a search of the whole line.
    // Letters and digits are skipped eight at a time
    // ([`alphanumeric_run`](crate::parse::text::alphanumeric_run)): a
    // byte-a-look-up loop over the whole name (perfquery's
    // `PortXmitData:…` on most lines of a dump) showed in the fleet
    // profile. A plain loop goes on from a `-`, `.` or `_` that stops the
    // run; a `take(65).position` chain was a call of its own.
    let head = line.as_bytes().get(..65).unwrap_or(line.as_bytes());
    let run = crate::parse::text::alphanumeric_run(head, None);
    let mut colon = None;
    for (i, &b) in head.iter().enumerate().skip(run) {
        if !HOST_BYTES.get(usize::from(b)).copied().unwrap_or(false) {
            colon = Some(i);
            break;
        }
    }
    let colon = colon?;
    if line.as_bytes().get(colon) != Some(&b':') {
        return None;
    }
    let host = line.get(..colon)?;
    let rest = line.get(colon + 1..)?;
    let rest = if rest.is_empty() {
        rest
    } else {
        rest.strip_prefix(' ')?
    };
    let shaped = !host.is_empty()
        && host.len() <= 64
        && host.starts_with(|c: char| c.is_ascii_alphanumeric())
        && (host
            .chars()
            .any(|c| c.is_ascii_digit() || c == '-' || c == '.')
            || host.chars().all(|c| c.is_ascii_lowercase()))
        && !is_label_any_case(host);
    shaped.then_some((host, rest))
}

/// [`candidate`] for a line that may carry the same prefix as the line
/// before: when it begins with `known:` (a host [`candidate`] accepted), the
/// answer is that host without checking its shape again. pdsh prints runs
/// of lines from one host; this keeps the per-line cost to a comparison.
pub(crate) fn candidate_after<'l>(
    line: &'l str,
    known: Option<&str>,
) -> Option<(&'l str, &'l str)> {
    if let Some(known) = known.filter(|k| !k.is_empty() && !k.contains(':')) {
        if let Some(after) = line.strip_prefix(known).and_then(|r| r.strip_prefix(':')) {
            // As in `candidate`: the first colon ends the host (`known`
            // holds none), and a non-empty rest must begin with a space.
            let rest = if after.is_empty() {
                after
            } else {
                after.strip_prefix(' ')?
            };
            return Some((line.get(..known.len())?, rest));
        }
    }
    candidate(line)
}

/// [`is_label`] of the lower-case `word`, lowered on the stack: this runs
/// on every prefixed line of a pdsh paste. Labels are short ASCII words.
fn is_label_any_case(word: &str) -> bool {
    let mut buf = [0u8; 64];
    let Some(lower) = buf.get_mut(..word.len()) else {
        return is_label(&word.to_ascii_lowercase());
    };
    lower.copy_from_slice(word.as_bytes());
    lower.make_ascii_lowercase();
    std::str::from_utf8(lower).is_ok_and(is_label)
}

/// True for a word some tool prints as a column-0 label.
fn is_label(word: &str) -> bool {
    static ALL: std::sync::OnceLock<HashSet<&'static str>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        let tools = crate::parse::FORMATS.iter().flat_map(|f| f.labels.iter());
        GENERIC_LABELS.iter().chain(tools).copied().collect()
    })
    .contains(word)
}

/// Hosts that prefix lines of this input, or an empty set if the input is
/// not host-prefixed.
pub(crate) fn prefixed_hosts<'a>(lines: impl Iterator<Item = &'a str>) -> HashSet<String> {
    let bound = lines.size_hint().1;
    prefixed_hosts_within(lines, bound)
}

/// [`prefixed_hosts`], given at most how many lines there are: no more
/// lines are read once too many lacked a prefix for the rest to reach
/// [`MIN_COVERAGE`]. Accepted hosts cover at most the non-blank lines that
/// had a candidate prefix, so when the lines without one pass 60 % of the
/// bound (hence of the non-blank lines), coverage is below 40 % (by at
/// least a fifth of a line's share, far above the rounding of the f64
/// ratio). Tool output, where no line has one, is left after 60 % of it.
fn prefixed_hosts_within<'a>(
    lines: impl Iterator<Item = &'a str>,
    bound: Option<usize>,
) -> HashSet<String> {
    // The reasoning above holds while the threshold is at least 40 %.
    const _: () = assert!(MIN_COVERAGE >= 0.4);
    // Past this many lines without a prefix the input is not prefixed.
    let misses_allowed = bound.map_or(usize::MAX, |b| b.saturating_mul(3) / 5);
    let mut misses = 0usize;
    let mut counts: HashMap<&str, usize> = HashMap::new();
    let mut non_blank = 0usize;
    // The host of the line before and how many lines in a row it prefixed,
    // counted in the map when the run ends (one look-up a run, not a line).
    let mut run: Option<(&str, usize)> = None;
    for line in lines {
        // Every host [`candidate`] accepts begins with a letter or digit,
        // and so does every line `candidate_after` reads as the last host
        // again: a line that does not (indented tool output, `#` headers,
        // blank lines) is a miss or blank without that call, made for
        // most lines of every input only to learn it is not prefixed.
        let found = if line
            .as_bytes()
            .first()
            .is_some_and(u8::is_ascii_alphanumeric)
        {
            candidate_after(line, run.map(|(h, _)| h))
        } else if crate::parse::is_blank(line) {
            continue;
        } else {
            None
        };
        non_blank += 1;
        if let Some((host, _)) = found {
            match run.as_mut() {
                Some((h, n)) if *h == host => *n += 1,
                _ => {
                    if let Some((h, n)) = run.replace((host, 1)) {
                        *counts.entry(h).or_default() += n;
                    }
                }
            }
        } else {
            misses += 1;
            if misses > misses_allowed {
                return HashSet::new();
            }
        }
    }
    if let Some((h, n)) = run {
        *counts.entry(h).or_default() += n;
    }
    let accepted: HashSet<String> = counts
        .iter()
        .filter(|(_, &n)| n >= 2)
        .map(|(h, _)| (*h).to_owned())
        .collect();
    let covered: usize = counts
        .iter()
        .filter(|(h, _)| accepted.contains(**h))
        .map(|(_, n)| n)
        .sum();
    if non_blank > 0 && covered as f64 / non_blank as f64 >= MIN_COVERAGE {
        accepted
    } else {
        HashSet::new()
    }
}

/// The most hosts one host list may name ([`expand_hostlist`]): more is
/// no banner of a paste anyone reads (and a hostile `n[1-99999999]` would
/// copy a section a hundred million times).
pub(crate) const MAX_GROUP: usize = 4096;

/// The hosts a pdsh/clush host list names: `gpu[01-03]` (`dshbak -c` and
/// `clush -b` fold hosts whose output is the same under one banner),
/// `node[1,4-5]`, `rack[1-2]-n[01-02]`, `gpu[01-02],login1`. Ranges keep
/// the zero padding of their first number, as pdsh writes them. `None`
/// for one host, for anything that is not a well-formed list, and for
/// lists of more than [`MAX_GROUP`] hosts.
pub(crate) fn expand_hostlist(name: &str) -> Option<Vec<String>> {
    if !name.contains(['[', ',']) {
        return None;
    }
    let mut hosts: Vec<String> = Vec::new();
    for term in top_level_terms(name)? {
        let mut expanded = vec![String::new()];
        let mut rest = term;
        while !rest.is_empty() {
            let (literal, group) = match rest.split_once('[') {
                Some((literal, after)) => {
                    let (inside, tail) = after.split_once(']')?;
                    rest = tail;
                    (literal, Some(inside))
                }
                None => (std::mem::take(&mut rest), None),
            };
            if literal.contains([']', ',']) {
                return None;
            }
            for h in &mut expanded {
                h.push_str(literal);
            }
            if let Some(inside) = group {
                let members = range_members(inside)?;
                if expanded.len().saturating_mul(members.len()) + hosts.len() > MAX_GROUP {
                    return None;
                }
                expanded = expanded
                    .iter()
                    .flat_map(|h| members.iter().map(move |m| format!("{h}{m}")))
                    .collect();
            }
        }
        if expanded.iter().any(String::is_empty) || hosts.len() + expanded.len() > MAX_GROUP {
            return None;
        }
        hosts.extend(expanded);
    }
    (hosts.len() > 1).then_some(hosts)
}

/// `name` split at the commas outside brackets; `None` when a bracket is
/// left open or closed twice.
fn top_level_terms(name: &str) -> Option<Vec<&str>> {
    let mut terms = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, b) in name.bytes().enumerate() {
        match b {
            b'[' if depth == 0 => depth = 1,
            b']' if depth == 1 => depth = 0,
            b'[' | b']' => return None,
            b',' if depth == 0 => {
                terms.push(name.get(start..i)?);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return None;
    }
    terms.push(name.get(start..)?);
    Some(terms)
}

/// The numbers inside one pair of brackets: `01-03,7` is 01, 02, 03, 7.
fn range_members(inside: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    for item in inside.split(',') {
        let (low, high) = item.split_once('-').unwrap_or((item, item));
        let digits =
            |t: &str| !t.is_empty() && t.len() <= 9 && t.bytes().all(|b| b.is_ascii_digit());
        if !digits(low) || !digits(high) {
            return None;
        }
        let (a, b): (u32, u32) = (low.parse().ok()?, high.parse().ok()?);
        if b < a || out.len() + (b - a) as usize >= MAX_GROUP {
            return None;
        }
        let width = if low.starts_with('0') { low.len() } else { 0 };
        out.extend((a..=b).map(|n| format!("{n:0width$}")));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn host_lists_expand_as_pdsh_writes_them() {
        let e = |n: &str| expand_hostlist(n);
        assert_eq!(e("gpu[01-03]").unwrap(), ["gpu01", "gpu02", "gpu03"]);
        assert_eq!(e("node[1,4-5]").unwrap(), ["node1", "node4", "node5"]);
        assert_eq!(
            e("r[1-2]-n[08-09]").unwrap(),
            ["r1-n08", "r1-n09", "r2-n08", "r2-n09"]
        );
        assert_eq!(
            e("gpu[09-10],login1").unwrap(),
            ["gpu09", "gpu10", "login1"]
        );
        assert_eq!(e("n[098-101]").unwrap(), ["n098", "n099", "n100", "n101"]);
        // One host, or no list at all.
        for one in [
            "gpu07",
            "gpu[07]",
            "gpu[0-x]",
            "gpu[3-1]",
            "gpu[01-03",
            "gpu]01[",
            "a,,b",
            "n[1-99999999]",
            "[1-2]x[",
            "gpu[[1-2]]",
        ] {
            assert_eq!(e(one), None, "{one}");
        }
        assert_eq!(
            e(&format!("n[1-{MAX_GROUP}]")).map(|h| h.len()),
            Some(MAX_GROUP)
        );
        assert_eq!(e(&format!("n[0-{MAX_GROUP}]")), None);
    }

    use proptest::prelude::*;

    /// [`candidate`] as first written (a search for the first colon, then
    /// the shape of what precedes it): the reading the byte scan must equal.
    fn candidate_by_search(line: &str) -> Option<(&str, &str)> {
        let colon = line.find(':')?;
        let host = line.get(..colon)?;
        let rest = line.get(colon + 1..)?;
        let rest = if rest.is_empty() {
            rest
        } else {
            rest.strip_prefix(' ')?
        };
        let shaped = !host.is_empty()
            && host.len() <= 64
            && host.starts_with(|c: char| c.is_ascii_alphanumeric())
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.' || c == '_')
            && (host
                .chars()
                .any(|c| c.is_ascii_digit() || c == '-' || c == '.')
                || host.chars().all(|c| c.is_ascii_lowercase()))
            && !is_label_any_case(host);
        shaped.then_some((host, rest))
    }

    proptest! {
        /// The byte scan reads every line as the search did: prefixes of
        /// every length around the 64-byte limit, labels, odd bytes.
        #[test]
        fn candidate_agrees_with_a_search_for_the_colon(
            host in "([a-zA-Z0-9._-]{0,3}[\t é/:]?){0,3}|[a-z0-9-]{60,68}|State|Rate|node0[1-3]",
            sep in prop::sample::select(vec![":", ": ", ":x", " : ", "", "::", ":\t"]),
            rest in "[a-zA-Z0-9:. \t-]{0,8}",
        ) {
            let line = format!("{host}{sep}{rest}");
            prop_assert_eq!(candidate(&line), candidate_by_search(&line));
        }

        /// Knowing the host of the line before changes no answer.
        #[test]
        fn candidate_after_agrees_with_candidate(
            before in "[a-zA-Z0-9._:-]{1,12}(: .{0,4})?",
            line in "[a-zA-Z0-9._: -]{0,16}",
        ) {
            let known = candidate(&before).map(|(host, _)| host);
            prop_assert_eq!(candidate_after(&line, known), candidate(&line));
            // The same host on the next line, as pdsh prints it.
            if let Some(host) = known {
                for next in [format!("{host}: {line}"), format!("{host}:"), format!("{host}:{line}")] {
                    prop_assert_eq!(candidate_after(&next, known), candidate(&next));
                }
            }
        }
    }

    proptest! {
        /// What lets `prefixed_hosts_within` skip the candidate test: a line
        /// whose first byte is not an ASCII letter or digit has no
        /// candidate prefix, whatever host the line before had.
        #[test]
        fn only_lines_opening_with_a_letter_or_digit_have_a_candidate(
            before in "[a-zA-Z0-9._:-]{1,12}(: .{0,4})?",
            line in "[ \t#:._é\u{a0}-]?[a-zA-Z0-9._: -]{0,16}",
        ) {
            let known = candidate(&before).map(|(host, _)| host);
            if !line.as_bytes().first().is_some_and(u8::is_ascii_alphanumeric) {
                prop_assert_eq!(candidate_after(&line, known), None);
                prop_assert_eq!(candidate(&line), None);
            }
        }
    }

    proptest! {
        /// Leaving early gives the hosts reading every line gives: on
        /// inputs that mix prefixed lines of a few hosts, labels, blank
        /// lines and tool output in any share.
        #[test]
        fn leaving_early_finds_the_hosts_every_line_finds(
            lines in prop::collection::vec(
                prop::sample::select(vec![
                    "node07: CA 'mlx5_0'",
                    "node07: \tPort 1:",
                    "node08: \t\tState: Active",
                    "gpu-1:",
                    "node09: x",
                    "State: Active",
                    "\tPort 1:",
                    "PortXmitData:....1",
                    "GPU 0: NVIDIA H100",
                    "",
                    "  ",
                ]),
                0..40,
            ),
        ) {
            let every = prefixed_hosts_within(lines.iter().copied(), None);
            prop_assert_eq!(prefixed_hosts(lines.iter().copied()), every);
        }
    }

    use super::*;

    #[test]
    fn pdsh_output_is_prefixed() {
        let text = "node07: CA 'mlx5_0'\nnode07: \tCA type: MT4123\nnode08: CA 'mlx5_0'\nnode08: \tCA type: MT4123\n";
        let hosts = prefixed_hosts(text.lines());
        assert!(hosts.contains("node07") && hosts.contains("node08"));
    }

    #[test]
    fn ibstat_single_port_labels_are_not_hosts() {
        let text = "CA: 'mlx5_0'\nPort 1:\nState: Active\nPhysical state: LinkUp\nRate: 200\nState: Down\nRate: 40\n";
        assert!(prefixed_hosts(text.lines()).is_empty());
    }

    #[test]
    fn a_stray_prefixed_line_does_not_make_a_pattern() {
        let text = "CA 'mlx5_0'\n\tCA type: MT4123\nnode1: hello\n\tNumber of ports: 1\n\tFirmware version: 1\n";
        assert!(prefixed_hosts(text.lines()).is_empty());
    }
}
