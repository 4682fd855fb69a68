//! `dcgmi diag -r N` result tables and `dcgmi health -c` reports.
//!
//! Both are boxed tables of two cells. The layouts follow NVIDIA/DCGM
//! `dcgmi/Diag.cpp` (`DIAG_HEADER`, `DIAG_DATA`, `DisplayVerboseInfo`, which
//! wraps messages every 45 characters, mid-word included) and
//! `dcgmi/Health.cpp` with `DcgmiOutputTree(28, 60)` (messages wrapped at
//! word boundaries), and the shapes in public threads (DCGM#55 for 3.0,
//! go-dcgm#52 and IBM/autopilot#68 for 3.3, DCGM#253 for 4.2):
//!
//! ```text
//! Successfully ran diagnostic for group.
//! +---------------------------+------------------------------------------------+
//! | Diagnostic                | Result                                         |
//! +===========================+================================================+
//! |-----  Metadata  ----------+------------------------------------------------|
//! | DCGM Version              | 4.2.3                                          |
//! |-----  Deployment  --------+------------------------------------------------|
//! | software                  | Pass                                           |
//! |                           | GPU0: Pass                                     |
//! +-----  Hardware  ----------+------------------------------------------------+
//! | memory                    | Fail                                           |
//! |                           | GPU0: Fail                                     |
//! | Warning: GPU0             | A message wrapped every forty-five characters, |
//! |                           |  mid-word if need be                           |
//! +---------------------------+------------------------------------------------+
//! ```
//!
//! DCGM 4 prints the test row with `Warn` but each entity row without it: a
//! GPU whose result is a warning reads `GPU1: Fail` under `pcie | Warn`
//! (`HelperDisplayDiagResult`'s default `DDR_NO_DISPLAY_WARN`), so the
//! test row, not its entity rows, is the verdict.
//!
//! DCGM 2 and 3 print one row per group of GPUs instead (`| PCIe | Fail -
//! GPU: 2 |`, `|  | Pass - GPUs: 0, 1 |`) and `| Warning | GPU 2 … |`.
//!
//! ```text
//! +---------------------------+----------------------------------------------------------+
//! | Health Monitor Report                                                                |
//! +===========================+==========================================================+
//! | Overall Health            | Warning                                                  |
//! | GPU                       |                                                          |
//! | -> 0                      | Warning                                                  |
//! |    -> Errors              |                                                          |
//! |       -> PCIe system      | Warning                                                  |
//! |                           | Detected more than 8 PCIe replays per minute for GPU 0 : |
//! |                           |  13                                                      |
//! +---------------------------+----------------------------------------------------------+
//! ```
//!
//! `--iterations N` prints `Running iteration 2 of 3...` before each run's
//! table (each starts its own section) and `Passed all 3 runs of the
//! diagnostic` or `Aborting the iterative runs …` after the last; text after
//! a table's closing rule does not make it a cut table, and dcgmi's lone
//! `Error: …` (the diagnostic could not run) is no table at all.
//!
//! The `-j` JSON forms are not read.

use crate::diag::WarningKind;
use crate::model::dcgmi_diag::{
    DcgmiDiag, DcgmiHealth, DiagEntityResult, DiagField, DiagMessage, DiagOutcome, DiagTest,
    HealthEntity, HealthIncident, HealthState,
};
use crate::parse::text::{is_help, Unread};
use crate::parse::{Block, Line, Parsed, Spec};

pub(crate) const DIAG_FORMAT: Spec<DcgmiDiag> = Spec {
    command: |argv| is_dcgmi(argv, "diag"),
    starts: |b| matches!(b, b'S' | b'R' | b'+' | b'|'),
    detect: detect_diag,
    parse: parse_diag,
    summary: summary_diag,
    attach_command: None,
    labels: &[],
};

pub(crate) const HEALTH_FORMAT: Spec<DcgmiHealth> = Spec {
    command: |argv| is_dcgmi(argv, "health"),
    starts: |b| matches!(b, b'+' | b'|'),
    detect: detect_health,
    parse: parse_health,
    summary: summary_health,
    attach_command: None,
    labels: &[],
};

fn is_dcgmi(argv: &[&str], sub: &str) -> bool {
    argv.first() == Some(&"dcgmi") && argv.get(1) == Some(&sub) && !is_help(argv)
}

const SUCCESS: &str = "Successfully ran diagnostic for group.";
const HEALTH_TITLE: &str = "Health Monitor Report";
/// Characters of message per line in `dcgmi diag` (`DATA_INFO_TAG_LEN`).
const DIAG_WRAP: usize = 45;

/// `+-----+-----+` or `+=====+`: a rule without a word in it.
fn is_rule(t: &str) -> bool {
    let t = t.trim();
    t.len() > 2
        && (t.starts_with('+') || t.starts_with('|'))
        && t.chars().all(|c| matches!(c, '+' | '-' | '=' | '|'))
}

/// `|-----  Metadata  ----------+---…|` or `+-----  Stress  ---…+`: the word.
fn category(t: &str) -> Option<&str> {
    let t = t.trim();
    let inner = t.strip_prefix('|').or_else(|| t.strip_prefix('+'))?;
    if !inner.starts_with("---") {
        return None;
    }
    let first = inner.split('+').next()?;
    let word = first.trim_matches(|c: char| c == '-' || c.is_whitespace());
    (!word.is_empty() && word.chars().all(|c| c.is_alphanumeric() || c == ' ')).then_some(word)
}

/// `| a | b |` → (`a`, ` b`): the name trimmed, the value with its leading
/// padding after the first space kept (wrapping needs it), trailing trimmed.
fn cells(t: &str) -> Option<(&str, &str)> {
    let t = t.trim();
    let inner = t.strip_prefix('|')?.strip_suffix('|')?;
    let (name, value) = inner.split_once('|')?;
    let value = value.strip_prefix(' ').unwrap_or(value).trim_end();
    Some((name.trim_end(), value))
}

/// A one-cell row: `| Health Monitor Report      |`.
fn single_cell(t: &str) -> Option<&str> {
    let t = t.trim();
    let inner = t.strip_prefix('|')?.strip_suffix('|')?;
    (!inner.contains('|')).then(|| inner.trim())
}

fn first_non_blank<'l, 'a>(lines: &'l [Line<'a>]) -> impl Iterator<Item = &'l Line<'a>> {
    lines.iter().filter(|l| !l.is_blank())
}

fn detect_diag(lines: &[Line<'_>]) -> Option<Block> {
    let mut it = first_non_blank(lines);
    let first = it.next()?.text().trim();
    if first == SUCCESS {
        return Some(Block::keyed("diag-success"));
    }
    // `--iterations N`: each run's table is its own section.
    if first.starts_with("Running iteration ") && is_iteration_line(first) {
        return Some(Block::keyed("diag-iteration"));
    }
    // A paste that starts mid-table, at a category row: each category is its
    // own key, so the rows of one table stay in one section.
    if let Some(word) = category(first) {
        let known = [
            "Metadata",
            "Deployment",
            "Hardware",
            "Integration",
            "Stress",
        ];
        return known
            .iter()
            .any(|k| k.eq_ignore_ascii_case(word))
            .then(|| Block::keyed(format!("diag-category-{word}")));
    }
    let (row, key) = if is_rule(first) {
        (it.next()?.text(), "diag-rule")
    } else {
        (first, "diag-title")
    };
    let (name, value) = cells(row)?;
    (name.trim() == "Diagnostic" && value.trim() == "Result").then(|| Block::keyed(key))
}

fn detect_health(lines: &[Line<'_>]) -> Option<Block> {
    let mut it = first_non_blank(lines);
    let first = it.next()?.text();
    // A paste that starts at the verdict row, without the title box.
    if cells(first).is_some_and(|(name, _)| name.trim() == "Overall Health") {
        return Some(Block::keyed("health-overall"));
    }
    let (row, key) = if is_rule(first) {
        (it.next()?.text(), "health-rule")
    } else {
        (first, "health-title")
    };
    (single_cell(row)? == HEALTH_TITLE).then(|| Block::keyed(key))
}

/// `GPU0` / `GPU 2` → 2.
fn gpu_of(entity: &str) -> Option<u32> {
    let rest = entity.trim().strip_prefix("GPU")?;
    rest.trim().parse().ok()
}

/// `GPU0: Fail` (DCGM 4 entity row).
fn entity_row(value: &str) -> Option<(&str, DiagOutcome)> {
    let (entity, outcome) = value.trim().split_once(": ")?;
    let outcome = DiagOutcome::parse(outcome)?;
    let entity = entity.trim();
    (!entity.is_empty()
        && !entity.contains(' ')
        && entity.chars().any(|c| c.is_ascii_digit())
        && entity
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_'))
    .then_some((entity, outcome))
}

/// `Pass`, `Fail - GPU: 2`, `Pass - GPUs: 0, 1`, `Skip - All`.
fn outcome_row(value: &str) -> Option<(DiagOutcome, Option<&str>)> {
    let v = value.trim();
    match v.split_once(" - ") {
        Some((o, detail)) => Some((DiagOutcome::parse(o)?, Some(detail.trim()))),
        None => Some((DiagOutcome::parse(v)?, None)),
    }
}

/// Entities named by a DCGM 2/3 detail: `All`, `GPU: 2`, `GPUs: 0, 1`.
fn detail_entities(detail: &str, outcome: DiagOutcome, line: usize) -> Vec<DiagEntityResult> {
    let d = detail.trim();
    if let Some((_, list)) = d.split_once(':') {
        let gpus: Vec<u32> = list
            .split(',')
            .filter_map(|n| n.trim().parse().ok())
            .collect();
        if !gpus.is_empty() {
            return gpus
                .into_iter()
                .map(|g| DiagEntityResult {
                    entity: format!("GPU{g}"),
                    gpu: Some(g),
                    outcome,
                    line,
                })
                .collect();
        }
    }
    vec![DiagEntityResult {
        entity: d.to_owned(),
        gpu: None,
        outcome,
        line,
    }]
}

/// The lines `dcgmi diag --iterations N` prints around its tables:
/// `Running iteration 2 of 3...`, `Passed all 3 runs of the diagnostic`,
/// `Aborting the iterative runs of the diagnostic due to failure: …`
/// (dcgmi/Diag.cpp `RunStartDiag`). The failure they report is in the
/// table's own `Fail` rows.
fn is_iteration_line(t: &str) -> bool {
    if let Some(rest) = t.strip_prefix("Running iteration ") {
        return rest.ends_with("...")
            && rest
                .trim_end_matches('.')
                .split_once(" of ")
                .is_some_and(|(i, n)| {
                    [i, n]
                        .iter()
                        .all(|x| !x.is_empty() && x.bytes().all(|b| b.is_ascii_digit()))
                });
    }
    if let Some(rest) = t.strip_prefix("Passed all ") {
        return rest
            .strip_suffix(" runs of the diagnostic")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    }
    t.starts_with("Aborting the iterative runs of the diagnostic due to failure:")
}

/// Appends a wrapped continuation to a message. dcgmi diag cuts every 45
/// characters, so a full previous piece continues mid-word unless the next
/// piece starts with a space; shorter pieces ended at a space.
fn join_wrapped(text: &mut String, previous_len: usize, next: &str, wrap: Option<usize>) {
    let glued = wrap.is_some_and(|w| previous_len >= w) && !next.starts_with(' ');
    if !glued && !text.is_empty() {
        text.push(' ');
    }
    text.push_str(next.trim());
}

/// Reads `dcgmi diag -r N`.
#[must_use]
pub fn parse_diag(lines: &[Line<'_>]) -> Parsed<DcgmiDiag> {
    let mut unread = Unread::default();
    let mut out = DcgmiDiag::default();
    let mut section: Option<String> = None;
    let mut test: Option<DiagTest> = None;
    // Length of the last message piece, for unwrapping.
    let mut last_piece: Option<usize> = None;
    let mut closed = false;
    // Whether any part of the table was printed: dcgmi prints only an
    // `Error: …` line when the diagnostic could not run (dcgmi/Diag.cpp
    // `HelperDisplayFailureMessage`), and that output is whole.
    let mut table_seen = false;
    let last = crate::parse::text::last_text_line(lines);
    let finish = |test: &mut Option<DiagTest>, out: &mut DcgmiDiag| {
        if let Some(t) = test.take() {
            out.tests.push(t);
        }
    };
    for line in lines.iter().filter(|l| !l.is_blank()) {
        let t = line.text().trim();
        if t == SUCCESS {
            table_seen = true;
            continue;
        }
        if t.starts_with('|') || t.starts_with('+') {
            table_seen = true;
        }
        if let Some(word) = category(t) {
            finish(&mut test, &mut out);
            section = Some(word.to_owned());
            last_piece = None;
            closed = false;
            continue;
        }
        if is_rule(t) {
            closed = !out.tests.is_empty() || test.is_some();
            continue;
        }
        // `dcgmi diag --iterations N` prints these between and after its
        // tables (dcgmi/Diag.cpp `RunStartDiag`): dcgmi's own words, not a
        // row, and not a sign that the table before them was cut.
        if is_iteration_line(t) {
            continue;
        }
        // Only a row of the table reopens it; other text after the closing
        // rule is read (or not) below, but leaves the table whole.
        if t.starts_with('|') || t.starts_with('+') {
            closed = false;
        }
        let Some((name, value)) = cells(t) else {
            // The output's last row without its closing `|`: the paste
            // ended inside it. Its value may be cut too, so it is not read,
            // and the table stays open (`complete` false): IN001 says so.
            if t.starts_with('|') && Some(line.number) == last {
                unread.warn(
                    WarningKind::Truncated,
                    line.span(),
                    "the table's last row ends without its closing `|`: cut here, its value is unknown",
                );
            } else {
                unread.line(line, "not a row of the dcgmi diag table");
            }
            continue;
        };
        let name = name.trim();
        if name == "Diagnostic" && value.trim() == "Result" {
            continue;
        }
        let in_metadata = section
            .as_deref()
            .is_some_and(|s| s.eq_ignore_ascii_case("Metadata"));
        if !name.is_empty() && in_metadata {
            out.metadata.push(DiagField {
                name: name.to_owned(),
                value: value.trim().to_owned(),
                line: line.number,
            });
            continue;
        }
        // DCGM 2/3 print a Deployment check's message as `Error`
        // (dcgmi/Diag.cpp HelperDisplayDeploymentResult), DCGM 4 as `Warning`.
        let message_level = ["Warning", "Error", "Info"]
            .into_iter()
            .find(|w| name == *w || name.starts_with(&format!("{w}:")));
        if let Some(level) = message_level {
            let Some(current) = test.as_mut() else {
                unread.line(line, "a message row before any test row");
                continue;
            };
            let entity = name
                .split_once(':')
                .map(|(_, e)| e.trim().to_owned())
                .filter(|e| !e.is_empty());
            let gpu = entity.as_deref().and_then(gpu_of).or_else(|| {
                let v = value.trim();
                v.strip_prefix("GPU ")
                    .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
                    .and_then(|n| n.parse().ok())
            });
            current.messages.push(DiagMessage {
                level: level.to_ascii_lowercase(),
                entity,
                gpu,
                text: value.trim().to_owned(),
                span: line.span(),
            });
            current.span = current.span.join(line.span());
            last_piece = Some(value.trim_end().chars().count());
            continue;
        }
        if !name.is_empty() {
            finish(&mut test, &mut out);
            let mut new = DiagTest {
                category: section.clone(),
                name: name.to_owned(),
                outcome: None,
                entities: Vec::new(),
                messages: Vec::new(),
                span: line.span(),
            };
            match outcome_row(value) {
                Some((outcome, detail)) => {
                    new.outcome = Some(outcome);
                    if let Some(d) = detail {
                        new.entities = detail_entities(d, outcome, line.number);
                    }
                }
                None => unread.line(line, "test result is not Pass, Fail, Warn, Skip or Not Run"),
            }
            test = Some(new);
            last_piece = None;
            continue;
        }
        // An unnamed row: an entity's result, another group's result (DCGM
        // 2/3), or the continuation of a wrapped message.
        let Some(current) = test.as_mut() else {
            unread.line(line, "a continuation row before any test row");
            continue;
        };
        current.span = current.span.join(line.span());
        if let Some((entity, outcome)) = entity_row(value) {
            current.entities.push(DiagEntityResult {
                entity: entity.to_owned(),
                gpu: gpu_of(entity),
                outcome,
                line: line.number,
            });
            last_piece = None;
        } else if let Some((outcome, Some(detail))) = outcome_row(value) {
            current
                .entities
                .extend(detail_entities(detail, outcome, line.number));
            current.outcome = current.outcome.max(Some(outcome));
            last_piece = None;
        } else if let (Some(previous), Some(message)) = (last_piece, current.messages.last_mut()) {
            join_wrapped(&mut message.text, previous, value, Some(DIAG_WRAP));
            message.span = message.span.join(line.span());
            last_piece = Some(value.trim_end().chars().count());
        } else {
            unread.line(
                line,
                "an unnamed row that is neither a result nor a message",
            );
        }
    }
    finish(&mut test, &mut out);
    out.complete = closed || !table_seen;
    Parsed {
        value: out,
        warnings: unread.finish(),
    }
}

/// Reads `dcgmi health -c`.
#[must_use]
pub fn parse_health(lines: &[Line<'_>]) -> Parsed<DcgmiHealth> {
    let mut unread = Unread::default();
    let mut out = DcgmiHealth::default();
    let mut group: Option<String> = None;
    for line in lines.iter().filter(|l| !l.is_blank()) {
        let t = line.text().trim();
        if is_rule(t) || single_cell(t) == Some(HEALTH_TITLE) {
            continue;
        }
        let Some((raw_name, value)) = cells(t) else {
            unread.line(line, "not a row of the dcgmi health table");
            continue;
        };
        let value = value.trim();
        let name = raw_name.trim();
        // `-> 0` is an entity (one space of padding), `   -> Errors` and
        // `      -> PCIe system` are nested under it.
        let indent = raw_name.len() - raw_name.trim_start().len();
        let arrowed = name.strip_prefix("->").map(str::trim);
        match (name, arrowed) {
            ("Overall Health", _) => {
                out.overall = HealthState::parse(value);
                out.overall_line = Some(line.number);
                if out.overall.is_none() {
                    unread.line(line, "overall health is not Healthy, Warning or Failure");
                }
            }
            ("", _) => {
                let incident = out
                    .entities
                    .last_mut()
                    .and_then(|e| e.incidents.last_mut().map(|i| (i, &mut e.span)));
                match incident {
                    Some((i, span)) if !value.is_empty() => {
                        join_wrapped(&mut i.message, 0, value, None);
                        i.span = i.span.join(line.span());
                        *span = span.join(line.span());
                    }
                    _ if value.is_empty() => {}
                    _ => unread.line(line, "a message row outside any incident"),
                }
            }
            (_, Some("Errors")) => {}
            (_, Some(label)) if indent <= 2 => {
                out.entities.push(HealthEntity {
                    group: group.clone().unwrap_or_else(|| "GPU".to_owned()),
                    id: label.to_owned(),
                    state: HealthState::parse(value),
                    incidents: Vec::new(),
                    span: line.span(),
                });
            }
            (_, Some(system)) => match out.entities.last_mut() {
                Some(e) => {
                    e.incidents.push(HealthIncident {
                        system: system.to_owned(),
                        state: HealthState::parse(value),
                        message: String::new(),
                        span: line.span(),
                    });
                    e.span = e.span.join(line.span());
                }
                None => unread.line(line, "a subsystem row before any entity"),
            },
            (group_name, None) => {
                group = Some(group_name.to_owned());
            }
        }
    }
    Parsed {
        value: out,
        warnings: unread.finish(),
    }
}

/// `2 tests: 1 Fail, 1 Warn` for people.
#[must_use]
pub fn summary_diag(d: &DcgmiDiag) -> String {
    let count = |o| d.tests.iter().filter(|t| t.outcome == Some(o)).count();
    format!(
        "{} tests: {} Pass, {} Fail, {} Warn, {} Skip{}",
        d.tests.len(),
        count(DiagOutcome::Pass),
        count(DiagOutcome::Fail),
        count(DiagOutcome::Warn),
        count(DiagOutcome::Skip),
        if d.complete {
            ""
        } else {
            " (table not closed: may be cut)"
        }
    )
}

/// `overall Warning, 1 entity with incidents` for people.
#[must_use]
pub fn summary_health(h: &DcgmiHealth) -> String {
    format!(
        "overall {}, {} entit{} with incidents",
        h.overall.map_or("unknown", |s| match s {
            HealthState::Healthy => "Healthy",
            HealthState::Warning => "Warning",
            HealthState::Failure => "Failure",
            HealthState::InternalError => "Internal error",
        }),
        h.entities.len(),
        if h.entities.len() == 1 { "y" } else { "ies" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::lines_of;
    use crate::span::LineSpan;

    const V4: &str = "Successfully ran diagnostic for group.
+---------------------------+------------------------------------------------+
| Diagnostic                | Result                                         |
+===========================+================================================+
|-----  Metadata  ----------+------------------------------------------------|
| DCGM Version              | 4.2.3                                          |
| Driver Version Detected   | 570.148.08                                     |
| GPU Device IDs Detected   | 2330, 2330                                     |
|-----  Deployment  --------+------------------------------------------------|
| software                  | Pass                                           |
|                           | GPU0: Pass                                     |
|                           | GPU1: Pass                                     |
+-----  Hardware  ----------+------------------------------------------------+
| memory                    | Fail                                           |
|                           | GPU0: Pass                                     |
|                           | GPU1: Fail                                     |
| Warning: GPU1             | Memory error detected on GPU 1: a DBE was foun |
|                           | d at address 0x12; drain the GPU and reset it. |
|                           |  Then run it again                             |
+-----  Integration  -------+------------------------------------------------+
| pcie                      | Warn                                           |
|                           | GPU0: Warn                                     |
|                           | GPU1: Pass                                     |
| Warning: GPU0             | PCIe replays detected                          |
+---------------------------+------------------------------------------------+
";

    #[test]
    fn reads_the_dcgm4_table_and_unwraps_messages() {
        let p = parse_diag(&lines_of(V4));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let d = p.value;
        assert!(d.complete);
        assert_eq!(d.metadata("DCGM Version"), Some("4.2.3"));
        assert_eq!(d.tests.len(), 3);
        let mem = &d.tests[1];
        assert_eq!(mem.category.as_deref(), Some("Hardware"));
        assert_eq!(mem.outcome, Some(DiagOutcome::Fail));
        assert_eq!(mem.entities[1].gpu, Some(1));
        assert_eq!(mem.messages[0].gpu, Some(1));
        assert_eq!(
            mem.messages[0].text,
            "Memory error detected on GPU 1: a DBE was found at address 0x12; drain the GPU and reset it. Then run it again"
        );
        assert_eq!(mem.messages[0].span, LineSpan::new(17, 19));
        assert_eq!(d.tests[2].outcome, Some(DiagOutcome::Warn));
    }

    const V3: &str =
        "+---------------------------+------------------------------------------------+
| Diagnostic                | Result                                         |
+===========================+================================================+
|-----  Deployment  --------+------------------------------------------------|
| Denylist                  | Pass                                           |
+-----  Integration  -------+------------------------------------------------+
| PCIe                      | Pass - GPUs: 0, 1                              |
|                           | Fail - GPU: 2                                  |
| Warning                   | GPU 2 GPU to Host bandwidth is below threshold |
+-----  Stress  ------------+------------------------------------------------+
| SM Stress                 | Skip - All                                     |
";

    #[test]
    fn reads_the_dcgm3_layout_and_says_when_the_table_is_not_closed() {
        let p = parse_diag(&lines_of(V3));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let d = p.value;
        assert!(!d.complete, "no closing rule");
        let pcie = &d.tests[1];
        assert_eq!(
            pcie.outcome,
            Some(DiagOutcome::Fail),
            "the worst of its rows"
        );
        assert_eq!(pcie.entities.len(), 3);
        assert_eq!(pcie.messages[0].gpu, Some(2));
        assert_eq!(d.tests[2].outcome, Some(DiagOutcome::Skip));
    }

    #[test]
    fn health_report_reads_entities_incidents_and_wrapped_messages() {
        let text = "+---------------------------+----------------------------------------------------------+
| Health Monitor Report                                                                |
+===========================+==========================================================+
| Overall Health            | Failure                                                  |
| GPU                       |                                                          |
| -> 3                      | Failure                                                  |
|    -> Errors              |                                                          |
|       -> NVLINK system    | Failure                                                  |
|                           | GPU 3's NvLink link 7 is currently down Check DCGM and   |
|                           | system logs for errors.                                  |
|       -> PCIe system      | Warning                                                  |
|                           | Detected more than 8 PCIe replays per minute for GPU 3 : |
|                           |  21                                                      |
+---------------------------+----------------------------------------------------------+
";
        let p = parse_health(&lines_of(text));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let h = p.value;
        assert_eq!(h.overall, Some(HealthState::Failure));
        assert_eq!(h.entities.len(), 1);
        let e = &h.entities[0];
        assert_eq!((e.group.as_str(), e.id.as_str()), ("GPU", "3"));
        assert_eq!(e.incidents.len(), 2);
        assert_eq!(e.incidents[0].system, "NVLINK system");
        assert_eq!(
            e.incidents[0].message,
            "GPU 3's NvLink link 7 is currently down Check DCGM and system logs for errors."
        );
        assert_eq!(e.incidents[1].state, Some(HealthState::Warning));
        assert!(e.incidents[1].message.ends_with(": 21"));
    }

    #[test]
    fn text_after_the_closing_rule_leaves_the_table_whole() {
        for after in [
            "Passed all 3 runs of the diagnostic",
            "Aborting the iterative runs of the diagnostic due to failure: The diagnostic returned failure",
            "Running iteration 2 of 3...",
        ] {
            let text = format!("{V4}{after}\n");
            let p = parse_diag(&lines_of(&text));
            assert!(p.warnings.is_empty(), "{after}: {:?}", p.warnings);
            assert!(p.value.complete, "{after}: the table was closed");
        }
        // Other text after the table is not read, and does not cut it.
        let p = parse_diag(&lines_of(&format!(
            "{V4}command terminated with exit code 226\n"
        )));
        assert!(p.value.complete);
        assert_eq!(p.warnings.len(), 1, "{:?}", p.warnings);
        // A row after the closing rule reopens the table.
        let p = parse_diag(&lines_of(&format!(
            "{V4}| eud                       | Pass\n"
        )));
        assert!(!p.value.complete);
    }

    #[test]
    fn each_iteration_starts_a_block_and_an_error_alone_is_no_cut_table() {
        let it = lines_of("Running iteration 1 of 2...\nSuccessfully ran diagnostic for group.\n");
        assert!(detect_diag(&it).is_some());
        let not = lines_of("Running iteration one of two...\n");
        assert!(detect_diag(&not).is_none());
        let p = parse_diag(&lines_of(
            "Error: Unable to complete diagnostic for group 2. Return: (-30) The NVVS returned an error.\n",
        ));
        assert!(p.value.complete, "no table was begun");
        assert!(p.value.tests.is_empty());
        // A table begun and cut stays open.
        let p = parse_diag(&lines_of(&V4[..V4.find("|-----  Deployment").unwrap()]));
        assert!(!p.value.complete);
    }

    #[test]
    fn every_line_is_accounted_for_and_nothing_panics() {
        let text =
            "| Diagnostic | Result |\n| memory | Exploded |\n|  | stray continuation |\ngarbage\n";
        let p = parse_diag(&lines_of(text));
        for n in 2..=4 {
            assert!(
                p.warnings.iter().any(|w| w.span.contains(n)),
                "line {n} not accounted for: {:?}",
                p.warnings
            );
        }
        for cut in 0..V4.len() {
            if V4.is_char_boundary(cut) {
                let _ = parse_diag(&lines_of(&V4[..cut]));
                let _ = parse_health(&lines_of(&V4[..cut]));
            }
        }
    }
}
