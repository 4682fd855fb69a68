//! Dumps made by collection scripts and loops over hosts.
//!
//! - Each command's output after a line that names the command (`###
//!   ibstat`, `===== perfquery -x =====`, the `+ ibstat` of `set -x`,
//!   `[ibstat]`) instead of a shell prompt is read as the same dump with
//!   prompts: the same sections, nothing unrecognised, no unreadable line,
//!   the same findings. Before, each such line was an unreadable line of
//!   the section above it (and IN002 said lines went unjudged on every
//!   host of such a fleet).
//! - Each host's output after a heading that names the host (`====
//!   node05 ====`, Ansible's `node05 | CHANGED | rc=0 >>`, Salt's
//!   `node05:`) is read as that host's. Before, the paste was one host, and
//!   a port down on the first host was hidden by the same port up on the
//!   next.

// Test helpers: a broken fixture should fail loudly.
#![allow(clippy::panic, clippy::unwrap_used, clippy::indexing_slicing)]

use fabricscope::{analyze, read, AnalyzeOptions, Document, ReadOptions};
use std::path::Path;

/// Fixtures that each begin with a `$ command` prompt: ibstat, perfquery
/// (with a finding) and `nvidia-smi nvlink -e` (with lifetime errors).
const PARTS: &[&str] = &[
    "fleet-nine/2024-06-01/ibstat.node03.txt",
    "rules/IB101/fires_symbol_errors_alone.txt",
    "rules/NV005/fires_lifetime_history.txt",
];

/// Label styles seen in collection scripts' output, `{}` for the command.
const STYLES: &[&str] = &[
    "### {}",
    "## {} ##",
    "===== {} =====",
    "+ {}",
    "[{}]",
    "*** {} ***",
    ">>> {}",
    "---- {} ----",
    "# Command: {}",
    "#### Running: `{}` ####",
    "{}:",
];

/// The parts joined, each prompt line rewritten by `style` (`None`: kept).
fn dump(style: Option<&str>) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut text = String::new();
    for part in PARTS {
        let body = std::fs::read_to_string(root.join(part)).unwrap();
        let (first, rest) = body.split_once('\n').unwrap();
        let command = first.strip_prefix("$ ").unwrap();
        match style {
            Some(style) => text.push_str(&style.replace("{}", command)),
            None => text.push_str(first),
        }
        text.push('\n');
        text.push_str(rest);
        if !rest.ends_with('\n') {
            text.push('\n');
        }
    }
    text
}

/// Each section's kind and lines, and every warning's line and message.
fn shape(doc: &Document) -> (Vec<String>, Vec<String>) {
    let sections = doc
        .sections
        .iter()
        .map(|s| format!("{:?} {:?}", s.kind, s.span))
        .collect();
    let warnings = doc
        .all_warnings()
        .iter()
        .map(|w| format!("{:?} {}", w.span, w.message))
        .collect();
    (sections, warnings)
}

/// Every finding as rule, severity, subject and message.
fn findings(doc: Document) -> Vec<String> {
    analyze(&[doc], &AnalyzeOptions::default())
        .findings
        .iter()
        .map(|f| format!("{} {:?} {:?} {}", f.rule, f.severity, f.subject, f.message))
        .collect()
}

#[test]
fn a_labelled_dump_reads_as_the_same_dump_with_prompts() {
    let prompted = dump(None);
    let want = read(&prompted, &ReadOptions::default()).unwrap();
    assert!(want.sections.len() >= PARTS.len());
    assert!(want.unrecognised.is_empty(), "{:?}", want.unrecognised);
    let want_findings = findings(want.clone());
    assert!(
        want_findings.iter().any(|f| f.starts_with("IB101")),
        "{want_findings:?}"
    );
    for style in STYLES {
        let text = dump(Some(style));
        let doc = read(&text, &ReadOptions::default()).unwrap();
        assert!(
            doc.unrecognised.is_empty(),
            "{style}: {:?}",
            doc.unrecognised
        );
        assert!(
            doc.unaccounted_lines(&text).is_empty(),
            "{style}: lines unaccounted for"
        );
        assert_eq!(shape(&doc), shape(&want), "{style}");
        assert_eq!(findings(doc), want_findings, "{style}");
    }
}

#[test]
fn a_heading_that_names_no_command_ends_the_section_above_it() {
    // `## Notes ##` is no label, and no line of ibstat's either: a
    // script's heading, which ends the section above it unread, and the
    // prompt after it still starts its own.
    let text = dump(None).replacen("$ perfquery -x", "## Notes ##\n$ perfquery -x", 1);
    let notes = text.lines().position(|l| l == "## Notes ##").unwrap() + 1;
    let doc = read(&text, &ReadOptions::default()).unwrap();
    let want = read(&dump(None), &ReadOptions::default()).unwrap();
    let kinds = |d: &Document| d.sections.iter().map(|s| s.kind).collect::<Vec<_>>();
    assert_eq!(kinds(&doc), kinds(&want));
    assert!(doc.sections[0].span.last_line < notes);
    assert!(
        doc.framing.iter().any(|f| f.contains(notes)),
        "{:?}",
        doc.framing
    );
    assert!(doc.unaccounted_lines(&text).is_empty());
    assert!(
        !doc.all_warnings().iter().any(|w| w.span.contains(notes)),
        "{:?}",
        shape(&doc).1
    );
}

/// Three hosts' dumps, each after a heading in `style` naming its host
/// (`node05`, whose port is down, first), with or without their prompts,
/// each output line after `indent`.
fn hosts_dump(style: &str, prompts: bool, indent: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fleet-nine/2024-06-01");
    let mut text = String::new();
    for host in ["node05", "node06", "node04"] {
        text.push_str(&style.replace("{}", host));
        text.push('\n');
        let body = std::fs::read_to_string(root.join(format!("ibstat.{host}.txt"))).unwrap();
        for line in body.lines().filter(|l| prompts || !l.starts_with("$ ")) {
            if !line.is_empty() {
                text.push_str(indent);
            }
            text.push_str(line);
            text.push('\n');
        }
    }
    text
}

#[test]
fn a_loop_over_hosts_reads_each_host_apart() {
    let shapes = [
        ("==== {} ====", true, ""),
        ("==== {} ====", false, ""),
        ("### {}", true, ""),
        ("### {}", false, ""),
        ("[{}]", false, ""),
        (">>> {}", false, ""),
        ("== {} (10.0.0.5) ==", false, ""),
        // Ansible's ad-hoc command, and Salt's `cmd.run` (output indented).
        ("{} | CHANGED | rc=0 >>", false, ""),
        ("{}:", false, "    "),
    ];
    for (style, prompts, indent) in shapes {
        let text = hosts_dump(style, prompts, indent);
        let doc = read(&text, &ReadOptions::default()).unwrap();
        let mut hosts: Vec<&str> = doc
            .sections
            .iter()
            .filter_map(|s| s.host.as_deref())
            .collect();
        hosts.dedup();
        assert_eq!(hosts, ["node05", "node06", "node04"], "{style} {prompts}");
        assert_eq!(
            doc.sections.iter().filter(|s| s.host.is_none()).count(),
            0,
            "{style} {prompts}"
        );
        assert!(
            doc.unrecognised.is_empty(),
            "{style}: {:?}",
            doc.unrecognised
        );
        // One host's port down is not hidden by the same port up on the
        // hosts after it (read as one host, the paste was healthy).
        let report = analyze(&[doc], &AnalyzeOptions::default());
        let down: Vec<_> = report
            .findings
            .iter()
            .filter(|f| f.rule == "IB001")
            .map(|f| f.subject.host.as_deref())
            .collect();
        assert_eq!(down, [Some("node05")], "{style} {prompts}");
    }
}

#[test]
fn pdsh_empty_output_lines_are_no_host_headings() {
    // pdsh prints a host's empty output line as `node05: `; a chat tool
    // drops the space. Either way the host's output stays one section.
    let ibstat = |host: &str, cas: &[(&str, &str)], end: &str| {
        let mut text = String::new();
        for (i, (ca, state)) in cas.iter().enumerate() {
            if i > 0 {
                text.push_str(&format!("{host}{end}\n"));
            }
            for line in [
                format!("CA '{ca}'"),
                "\tCA type: MT4129".to_owned(),
                "\tNumber of ports: 1".to_owned(),
                "\tPort 1:".to_owned(),
                format!("\t\tState: {state}"),
            ] {
                text.push_str(&format!("{host}: {line}\n"));
            }
        }
        text
    };
    for end in [": ", ":"] {
        let text = ibstat("node05", &[("mlx5_0", "Down"), ("mlx5_1", "Active")], end)
            + &ibstat("node06", &[("mlx5_0", "Active"), ("mlx5_1", "Active")], end);
        let doc = read(&text, &ReadOptions::default()).unwrap();
        let hosts: Vec<&str> = doc
            .sections
            .iter()
            .filter_map(|s| s.host.as_deref())
            .collect();
        assert_eq!(hosts, ["node05", "node06"], "{end:?}");
        assert!(
            doc.unrecognised.is_empty(),
            "{end:?}: {:?}",
            doc.unrecognised
        );
    }
}
