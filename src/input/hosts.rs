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

/// The prefix before `: ` (or a bare trailing `:`) if it is shaped like a
/// host name and starts at column 0.
pub(crate) fn candidate(line: &str) -> Option<(&str, &str)> {
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
    let mut counts: HashMap<&str, usize> = HashMap::new();
    let mut non_blank = 0usize;
    for line in lines {
        if line.trim().is_empty() {
            continue;
        }
        non_blank += 1;
        if let Some((host, _)) = candidate(line) {
            *counts.entry(host).or_default() += 1;
        }
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

#[cfg(test)]
mod tests {
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
