//! `dcgmi nvlink -s` (link status) and `dcgmi nvlink -e -g <gpu>` (error
//! counters).
//!
//! No real capture exists in the corpus; the formats follow NVIDIA/DCGM
//! `dcgmi/Nvlink.cpp` (`DisplayNvLinkLinkStatus`,
//! `DisplayNvLinkErrorCountsForGpu`) and `dcgmi/DcgmiOutput.cpp`
//! (`DcgmiOutputTree`, widths 30/50), as quoted in issues DCGM#198 and
//! dcgm-exporter#576:
//!
//! ```text
//! +----------------------+
//! |  NvLink Link Status  |
//! +----------------------+
//! GPUs:
//!     gpuId 0:
//!         U U U U U U U U U U U U U U U U U U
//! NvSwitches:
//!     No NvSwitches found.
//!
//! Key: Up=U, Down=D, Disabled=X, Not Supported=_
//! ```
//!
//! ```text
//! +-----------------------------+------------------------------------------------+
//! | NVLINK Error Counts                                                          |
//! | GPU 0                                                                        |
//! +=============================+================================================+
//! | Link 0                      |                                                |
//! | -> CRC FLIT Error           | 0                                              |
//! | -> CRC Data Error           | 0                                              |
//! | -> Replay Error             | 0                                              |
//! | -> Recovery Error           | 0                                              |
//! +-----------------------------+------------------------------------------------+
//! ```
//!
//! The `-j` JSON form is not read.

use crate::model::dcgmi_nvlink::{
    DcgmLinkState, DcgmiLinkErrors, DcgmiLinkStatus, DcgmiNvlinkErrors, EntityLinks,
};
use crate::parse::text::is_help;
use crate::parse::text::{decimal_u64, numbered_heading, Unread};
use crate::parse::{Block, Line, Parsed, Spec};
use std::fmt::Write as _;

pub(crate) const STATUS_FORMAT: Spec<DcgmiLinkStatus> = Spec {
    command: |argv| is_nvlink(argv) && argv.iter().any(|a| *a == "-s" || *a == "--link-status"),
    starts: |b| matches!(b, b'+' | b'|'),
    detect: detect_status,
    parse: parse_status,
    summary: summary_status,
    attach_command: None,
    labels: &[],
};

pub(crate) const ERRORS_FORMAT: Spec<DcgmiNvlinkErrors> = Spec {
    command: |argv| is_nvlink(argv) && argv.iter().any(|a| *a == "-e" || *a == "--errors"),
    starts: |b| matches!(b, b'+' | b'|'),
    detect: detect_errors,
    parse: parse_errors,
    summary: summary_errors,
    attach_command: None,
    labels: &[],
};

fn is_nvlink(argv: &[&str]) -> bool {
    argv.first() == Some(&"dcgmi") && argv.get(1) == Some(&"nvlink") && !is_help(argv)
}

const STATUS_TITLE: &str = "NvLink Link Status";
const ERRORS_TITLE: &str = "NVLINK Error Counts";

/// `+-----+` or `+---+---+` (or with `=`).
fn is_box_rule(t: &str) -> bool {
    let t = t.trim();
    t.len() > 2
        && t.starts_with('+')
        && t.ends_with('+')
        && t.chars().all(|c| c == '+' || c == '-' || c == '=')
}

/// `| text |` → `text`, or for two cells `| a | b |` → `a | b`.
fn box_content(t: &str) -> Option<&str> {
    let t = t.trim();
    Some(t.strip_prefix('|')?.strip_suffix('|')?.trim())
}

fn detect_status(lines: &[Line<'_>]) -> Option<Block> {
    let mut it = lines.iter().filter(|l| !l.is_blank());
    let first = it.next()?.text();
    let title = if is_box_rule(first) {
        it.next()?.text()
    } else {
        first
    };
    // Rule and title get different keys, so a boxed title stays in the
    // section its rule opened; a second snapshot's rule starts a new one.
    let key = if title == first {
        "status-title"
    } else {
        "status-rule"
    };
    (box_content(title)? == STATUS_TITLE).then(|| Block::keyed(key))
}

fn detect_errors(lines: &[Line<'_>]) -> Option<Block> {
    let mut it = lines.iter().filter(|l| !l.is_blank());
    let first = it.next()?.text();
    let title = if is_box_rule(first) {
        it.next()?.text()
    } else {
        first
    };
    let key = if title == first {
        "errors-title"
    } else {
        "errors-rule"
    };
    (box_content(title)? == ERRORS_TITLE).then(|| Block::keyed(key))
}

/// Reads `dcgmi nvlink -s`.
#[must_use]
pub fn parse_status(lines: &[Line<'_>]) -> Parsed<DcgmiLinkStatus> {
    #[derive(PartialEq)]
    enum Part {
        Gpus,
        Switches,
    }
    let mut unread = Unread::default();
    let mut out = DcgmiLinkStatus::default();
    let mut part = Part::Gpus;
    let mut pending: Option<u32> = None;
    for line in lines.iter().filter(|l| !l.is_blank()) {
        let t = line.text().trim();
        if is_box_rule(t) || box_content(t) == Some(STATUS_TITLE) || t.starts_with("Key: Up=U") {
            continue;
        }
        match t {
            "GPUs:" => {
                part = Part::Gpus;
                continue;
            }
            "NvSwitches:" => {
                part = Part::Switches;
                continue;
            }
            "No GPUs found." | "No NvSwitches found." => continue,
            _ => {}
        }
        let word = if part == Part::Gpus {
            "gpuId"
        } else {
            "physicalId"
        };
        if let Some(id) = numbered_heading(t, word) {
            pending = Some(id);
            continue;
        }
        let states: Option<Vec<DcgmLinkState>> =
            t.split_whitespace().map(DcgmLinkState::parse).collect();
        match (states, pending.take()) {
            (Some(links), Some(id)) if !links.is_empty() => {
                let entry = EntityLinks {
                    id,
                    links,
                    line: line.number,
                };
                match part {
                    Part::Gpus => out.gpus.push(entry),
                    Part::Switches => out.nvswitches.push(entry),
                }
            }
            (Some(_), None) => unread.line(line, "link states without a `gpuId N:` line above"),
            _ => unread.line(line, "not a dcgmi nvlink status line"),
        }
    }
    Parsed {
        value: out,
        warnings: unread.finish(),
    }
}

/// Reads `dcgmi nvlink -e`.
#[must_use]
pub fn parse_errors(lines: &[Line<'_>]) -> Parsed<DcgmiNvlinkErrors> {
    let mut unread = Unread::default();
    let mut out = DcgmiNvlinkErrors::default();
    for line in lines.iter().filter(|l| !l.is_blank()) {
        let t = line.text().trim();
        if is_box_rule(t) {
            continue;
        }
        let Some(content) = box_content(t) else {
            unread.line(line, "not a row of the dcgmi table");
            continue;
        };
        if content == ERRORS_TITLE {
            continue;
        }
        if let Some(n) = content
            .strip_prefix("GPU ")
            .and_then(|n| n.trim().parse().ok())
        {
            out.gpu = Some(n);
            continue;
        }
        let (left, right) = content
            .split_once('|')
            .map_or((content, ""), |(l, r)| (l.trim(), r.trim()));
        if let Some(link) = numbered_heading(&format!("{left}:"), "Link") {
            out.links.push(DcgmiLinkErrors {
                link,
                span: line.span(),
                ..DcgmiLinkErrors::default()
            });
            continue;
        }
        let Some(name) = left.strip_prefix("->").map(str::trim) else {
            unread.line(line, "not a `Link N` or `-> counter` row");
            continue;
        };
        let Some(link) = out.links.last_mut() else {
            unread.line(line, "counter before any `Link N` row");
            continue;
        };
        let slot = match name {
            "CRC FLIT Error" => &mut link.crc_flit,
            "CRC Data Error" => &mut link.crc_data,
            "Replay Error" => &mut link.replay,
            "Recovery Error" => &mut link.recovery,
            _ => {
                unread.line(line, "unknown NVLink error counter");
                continue;
            }
        };
        match decimal_u64(right) {
            Ok(v) => {
                *slot = Some(v);
                link.span = link.span.join(line.span());
            }
            Err(e) => unread.number(line, name, e),
        }
    }
    Parsed {
        value: out,
        warnings: unread.finish(),
    }
}

/// `2 GPU(s): 36 link(s) up, 0 down, 0 disabled; no NvSwitches`.
#[must_use]
pub fn summary_status(s: &DcgmiLinkStatus) -> String {
    let count = |st: DcgmLinkState| {
        s.gpus
            .iter()
            .flat_map(|g| &g.links)
            .filter(|l| **l == st)
            .count()
    };
    let switches = if s.nvswitches.is_empty() {
        "no NvSwitches".to_owned()
    } else {
        format!("{} NvSwitch(es)", s.nvswitches.len())
    };
    format!(
        "{} GPU(s): {} link(s) up, {} down, {} disabled; {switches}",
        s.gpus.len(),
        count(DcgmLinkState::Up),
        count(DcgmLinkState::Down),
        count(DcgmLinkState::Disabled)
    )
}

/// `GPU 0: 18 link(s), 0 with errors`.
#[must_use]
pub fn summary_errors(e: &DcgmiNvlinkErrors) -> String {
    let with_errors = e
        .links
        .iter()
        .filter(|l| {
            [l.crc_flit, l.crc_data, l.replay, l.recovery]
                .iter()
                .any(|v| v.is_some_and(|n| n > 0))
        })
        .count();
    let gpu = e.gpu.map_or("GPU ?".to_owned(), |g| format!("GPU {g}"));
    format!(
        "{gpu}: {} link(s), {with_errors} with errors",
        e.links.len()
    )
}

/// Renders `dcgmi nvlink -s` as dcgmi prints it.
#[must_use]
pub fn render_status(s: &DcgmiLinkStatus) -> String {
    let mut out = String::from(
        "+----------------------+\n|  NvLink Link Status  |\n+----------------------+\nGPUs:\n",
    );
    let letters = |e: &EntityLinks| {
        e.links
            .iter()
            .map(|l| l.letter().to_string())
            .collect::<Vec<_>>()
            .join(" ")
    };
    if s.gpus.is_empty() {
        out.push_str("    No GPUs found.\n");
    }
    for g in &s.gpus {
        let _ = write!(out, "    gpuId {}:\n        {}\n", g.id, letters(g));
    }
    out.push_str("NvSwitches:\n");
    if s.nvswitches.is_empty() {
        out.push_str("    No NvSwitches found.\n");
    }
    for g in &s.nvswitches {
        let _ = write!(out, "    physicalId {}:\n        {}\n", g.id, letters(g));
    }
    out.push_str("\nKey: Up=U, Down=D, Disabled=X, Not Supported=_\n");
    out
}

/// Renders `dcgmi nvlink -e` as dcgmi's tree table (left 30, right 50).
#[must_use]
pub fn render_errors(e: &DcgmiNvlinkErrors) -> String {
    let rule = |c: char| {
        format!(
            "+{}+{}+\n",
            c.to_string().repeat(29),
            c.to_string().repeat(48)
        )
    };
    let row = |l: &str, r: &str| format!("| {l:<27} | {r:<46} |\n");
    let mut out = rule('-');
    let _ = writeln!(out, "| {ERRORS_TITLE:<77}|");
    if let Some(g) = e.gpu {
        let _ = writeln!(out, "| {:<77}|", format!("GPU {g}"));
    }
    out.push_str(&rule('='));
    for l in &e.links {
        out.push_str(&row(&format!("Link {}", l.link), ""));
        for (name, v) in [
            ("CRC FLIT Error", l.crc_flit),
            ("CRC Data Error", l.crc_data),
            ("Replay Error", l.replay),
            ("Recovery Error", l.recovery),
        ] {
            if let Some(v) = v {
                out.push_str(&row(&format!("-> {name}"), &v.to_string()));
            }
        }
    }
    out.push_str(&rule('-'));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::lines_of;
    use crate::span::LineSpan;

    const STATUS: &str = "+----------------------+
|  NvLink Link Status  |
+----------------------+
GPUs:
    gpuId 0:
        U U U U U U U U U U U U U U U U U U
    gpuId 1:
        U U D U U U U U U U U U U U U U X _
NvSwitches:
    No NvSwitches found.

Key: Up=U, Down=D, Disabled=X, Not Supported=_
";

    #[test]
    fn status_letters_per_gpu() {
        let lines = lines_of(STATUS);
        assert!(detect_status(&lines).is_some());
        assert!(detect_errors(&lines).is_none());
        let p = parse_status(&lines);
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let s = &p.value;
        assert_eq!(s.gpus.len(), 2);
        assert_eq!(s.gpus[1].links.len(), 18);
        assert_eq!(s.gpus[1].links[2], DcgmLinkState::Down);
        assert_eq!(s.gpus[1].links[16], DcgmLinkState::Disabled);
        assert_eq!(s.gpus[1].links[17], DcgmLinkState::NotSupported);
        assert_eq!(s.gpus[1].line, 8);
        assert_eq!(
            summary_status(s),
            "2 GPU(s): 33 link(s) up, 1 down, 1 disabled; no NvSwitches"
        );
        assert_eq!(parse_status(&lines_of(&render_status(s))).value, *s);
    }

    #[test]
    fn error_tree_per_link() {
        let e = DcgmiNvlinkErrors {
            gpu: Some(0),
            links: vec![
                DcgmiLinkErrors {
                    link: 0,
                    crc_flit: Some(0),
                    crc_data: Some(0),
                    replay: Some(0),
                    recovery: Some(0),
                    span: LineSpan::new(5, 9),
                },
                DcgmiLinkErrors {
                    link: 1,
                    crc_flit: Some(12),
                    crc_data: Some(3),
                    replay: Some(0),
                    recovery: Some(1),
                    span: LineSpan::new(10, 14),
                },
            ],
        };
        let text = render_errors(&e);
        // The layout of DcgmiOutputTree: 80 columns, separator at 30.
        assert!(text.lines().all(|l| l.len() == 80), "{text}");
        assert_eq!(text.lines().nth(5).unwrap().find('|').unwrap(), 0);
        assert_eq!(text.lines().nth(5).unwrap().get(30..31), Some("|"));
        let lines = lines_of(&text);
        assert!(detect_errors(&lines).is_some());
        let p = parse_errors(&lines);
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        assert_eq!(p.value, e);
        assert_eq!(summary_errors(&p.value), "GPU 0: 2 link(s), 1 with errors");
    }

    #[test]
    fn bad_counter_values_warn() {
        let text = "| NVLINK Error Counts |\n| Link 0 | |\n| -> Replay Error | many |\n| -> Weird Error | 1 |\n| -> CRC Data Error | 5 |\n";
        let p = parse_errors(&lines_of(text));
        let lines: Vec<usize> = p.warnings.iter().map(|w| w.span.first_line).collect();
        assert_eq!(lines, vec![3, 4]);
        assert_eq!(p.value.links[0].crc_data, Some(5));
    }
}
