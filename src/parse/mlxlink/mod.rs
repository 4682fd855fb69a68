//! `mlxlink -d <device>` (and `-m`, `-c`, `-e`): titled sections of
//! `Name : value` records.
//!
//! The layout follows Mellanox/mstflint `mlxlink/modules/printutil`
//! (`MlxlinkCmdPrint`: a blank line, the title, a line of `-` as long as the
//! title, then one record per line, the name padded to a column) and the
//! record names of `mlxlink_commander.cpp` (`showOperationalInfo`,
//! `showTroubleshootingInfo`, `showBer`):
//!
//! ```text
//! Operational Info
//! ----------------
//! State                              : Active
//! Physical state                     : LinkUp
//! Speed                              : IB-NDR
//! Width                              : 4x
//! FEC                                : Standard_RS-FEC - (544,514)
//!
//! Troubleshooting Info
//! --------------------
//! Status Opcode                      : 0
//! Group Opcode                       : N/A
//! Recommendation                     : No issue was observed
//!
//! Physical Counters and BER Info
//! ------------------------------
//! Effective Physical Errors          : 0
//! Effective Physical BER             : 15E-255
//! Raw Physical BER                   : 2E-9
//! Link Down Counter                  : 1
//! ```
//!
//! Every section is kept as records; the fields the rules read are also
//! typed. `--json` output gives the same records (read in `json.rs`).

use crate::diag::WarningKind;
use crate::model::mlxlink::{Mlxlink, MlxlinkField, MlxlinkSection};
use crate::model::partial::{Partial, PartialReason};
use crate::parse::text::{decimal_u64, is_help, trim, Unread};
use crate::parse::{Block, Line, Parsed, Spec};

mod json;

pub(crate) const FORMAT: Spec<Mlxlink> = Spec {
    command: |argv| argv.first() == Some(&"mlxlink") && !is_help(argv),
    starts: |b| b.is_ascii_alphanumeric() || matches!(b, b'(' | b'/' | b'-' | b'{'),
    detect,
    parse,
    summary,
    attach_command: Some(attach_command),
    labels: &[],
};

/// A section title: words ending in `Info` or `Information` (`Operational
/// Info`, `Physical Counters and BER Info`, `Tool Information`).
fn is_title(t: &str) -> bool {
    let t = t.trim();
    (t.ends_with(" Info") || t.ends_with(" Information"))
        && t.len() < 60
        && !t.contains(':')
        && t.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, ' ' | '(' | ')' | '/' | '-'))
}

fn is_underline(t: &str) -> bool {
    let t = t.trim();
    t.len() >= 4 && t.chars().all(|c| c == '-')
}

/// A title with its underline, or with the ` #` a blog's heading anchors
/// leave (then followed by a record): the title without the anchor.
fn title_at<'t>(t: &'t str, next: Option<&str>) -> Option<&'t str> {
    let t = trim(t);
    if let Some(bare) = t.strip_suffix(" #").map(str::trim_end) {
        return (is_title(bare) && next.is_some_and(|n| record(n.trim()).is_some()))
            .then_some(bare);
    }
    (is_title(t) && next.is_some_and(is_underline)).then_some(t)
}

fn detect(lines: &[Line<'_>]) -> Option<Block> {
    if json::detect(lines) {
        // One key for every object: a second one is a second snapshot.
        return Some(Block::keyed("json"));
    }
    let mut it = lines.iter().filter(|l| !l.is_blank());
    let first = it.next()?.text();
    if let Some(name) = untitled_record(first) {
        // Keyed by the record: the same record again is a second reading
        // (the command run twice), while the other records of a titled
        // section never split it.
        return Some(Block::keyed(format!("record {name}")));
    }
    // Each title is its own key: a second `Operational Info` is a second
    // snapshot (or another port) and starts a new section.
    title_at(first, it.next().map(Line::text)).map(Block::keyed)
}

/// The title of records read without their section title.
const UNTITLED: &str = "";

/// Record names only `mlxlink`'s counter section prints
/// (`showBer`, `showTroubleshootingInfo`: `Effective Physical BER`,
/// `Raw Physical Errors Per Lane`, …).
const OWN_NAME_PREFIXES: &[&str] = &["Effective Physical ", "Raw Physical "];

/// A record no other tool prints, read without its title: what
/// `mlxlink -c | grep BER` (or `grep -e Effective -e Raw`, the way people
/// post the counters) leaves of the output. Its records are read as they
/// are, and the output is partial: the filter dropped the rest.
fn untitled_record(t: &str) -> Option<&str> {
    record(trim(t))
        .filter(|(name, value)| {
            !value.is_empty() && OWN_NAME_PREFIXES.iter().any(|p| name.starts_with(p))
        })
        .map(|(name, _)| name)
}

/// `State                : Active` → (`State`, `Active`).
fn record(t: &str) -> Option<(&str, &str)> {
    // No colon, no record: a byte search before the three-byte one.
    memchr::memchr(b':', t.as_bytes())?;
    let (name, value) = match t.find(" : ") {
        Some(i) => (t.get(..i)?, t.get(i + 3..)?),
        None => t.split_once(':')?,
    };
    let name = name.trim();
    (!name.is_empty()).then(|| (name, value.trim()))
}

/// `15E-255`, `2E-9`, `1.5e-12` → the number; `N/A` → none.
#[must_use]
pub fn ber(text: &str) -> Option<f64> {
    let v: f64 = text.trim().parse().ok()?;
    (v.is_finite() && v >= 0.0).then_some(v)
}

/// Reads `mlxlink` output.
#[must_use]
pub fn parse(lines: &[Line<'_>]) -> Parsed<Mlxlink> {
    let mut unread = Unread::default();
    let is_json = lines
        .iter()
        .find(|l| !l.is_blank())
        .is_some_and(|l| l.text().trim_start().starts_with('{'));
    let mut partial = None;
    let mut out = Mlxlink {
        sections: if is_json {
            json::sections(lines, &mut unread)
        } else {
            text_sections(lines, &mut unread, &mut partial)
        },
        partial,
        ..Mlxlink::default()
    };
    type_fields(&mut out, &mut unread, lines);
    Parsed {
        value: out,
        warnings: unread.finish(),
    }
}

/// The titled sections of the text form, records in order.
///
/// A last line that is neither a record nor a title, and reads as the
/// start of a record's name ([`looks_like_cut_name`]), is where the paste
/// ended mid-record: it is not read, and `partial` says so.
fn text_sections(
    lines: &[Line<'_>],
    unread: &mut Unread,
    partial: &mut Option<Partial>,
) -> Vec<MlxlinkSection> {
    let mut sections: Vec<MlxlinkSection> = Vec::new();
    let non_blank: Vec<&Line<'_>> = lines.iter().filter(|l| !l.is_blank()).collect();
    let mut i = 0;
    while let Some(line) = non_blank.get(i) {
        let t = line.text().trim();
        let next = non_blank.get(i + 1).map(|n| n.text());
        if let Some(title) = title_at(t, next) {
            sections.push(MlxlinkSection {
                title: title.to_owned(),
                fields: Vec::new(),
                span: line.span(),
            });
            // The underline belongs to the title; a record after ` #` does not.
            i += if next.is_some_and(is_underline) { 2 } else { 1 };
            continue;
        }
        i += 1;
        if sections.is_empty() && untitled_record(t).is_some() {
            sections.push(MlxlinkSection {
                title: UNTITLED.to_owned(),
                fields: Vec::new(),
                span: line.span(),
            });
            *partial = Some(Partial::new(
                PartialReason::NoHeader,
                vec![
                    "the section titles and the records a filter (`grep`) or the paste left out"
                        .to_owned(),
                ],
                line.number,
            ));
        }
        let Some(section) = sections.last_mut() else {
            unread.line(line, "mlxlink output before its first section title");
            continue;
        };
        match record(t) {
            Some((name, value)) => {
                section.fields.push(MlxlinkField {
                    name: name.to_owned(),
                    value: value.to_owned(),
                    line: line.number,
                });
                section.span = section.span.join(line.span());
            }
            None if i == non_blank.len() && looks_like_cut_name(t) => {
                unread.warn(
                    WarningKind::Truncated,
                    line.span(),
                    format!("the output ends inside a record (`{t}`): cut here"),
                );
                *partial = Some(Partial::new(
                    PartialReason::CutLine,
                    vec![format!("the rest of `{t}` and what follows it")],
                    line.number,
                ));
            }
            None => unread.line(line, "not a `Name : value` line of mlxlink"),
        }
    }
    sections
}

/// Whether a last line without `:` reads as the start of a record's name
/// (`Enabled Link S`): words of a name, not a tool's `-E-` message or a
/// sentence.
fn looks_like_cut_name(t: &str) -> bool {
    !t.starts_with('-')
        && t.len() <= 64
        && t.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, ' ' | '(' | ')' | '/' | '_'))
}

/// Fills the typed fields from the records.
fn type_fields(out: &mut Mlxlink, unread: &mut Unread, lines: &[Line<'_>]) {
    let text = |m: &Mlxlink, name: &str| {
        m.field(name)
            .map(|f| f.value.clone())
            .filter(|v| !v.is_empty() && v != "N/A")
    };
    out.state = text(out, "State");
    out.physical_state = text(out, "Physical state");
    out.speed = text(out, "Speed");
    out.fec = text(out, "FEC");
    out.recommendation = text(out, "Recommendation");
    out.width = text(out, "Width").and_then(|w| w.trim_end_matches(['x', 'X']).trim().parse().ok());
    let number = |m: &Mlxlink, name: &str, unread: &mut Unread| -> Option<u64> {
        let f = m.field(name)?;
        if f.value == "N/A" {
            return None;
        }
        match decimal_u64(&f.value) {
            Ok(v) => Some(v),
            Err(e) => {
                if let Some(line) = lines.iter().find(|l| l.number == f.line) {
                    unread.number(line, name, e);
                }
                None
            }
        }
    };
    out.effective_errors = number(out, "Effective Physical Errors", unread);
    out.link_down_counter = number(out, "Link Down Counter", unread);
    out.link_error_recovery_counter = number(out, "Link Error Recovery Counter", unread);
    for (name, slot) in [
        ("Effective Physical BER", &mut out.effective_ber),
        ("Raw Physical BER", &mut out.raw_ber),
    ] {
        let field = out
            .sections
            .iter()
            .flat_map(|s| &s.fields)
            .find(|f| f.name.eq_ignore_ascii_case(name));
        if let Some(f) = field {
            *slot = ber(&f.value);
            if slot.is_none() && f.value != "N/A" {
                unread.warn(
                    crate::diag::WarningKind::Unreadable,
                    crate::span::LineSpan::line(f.line),
                    format!("`{name}` is not a number like 15E-255"),
                );
            }
        }
    }
}

/// `mlx5_0: Active IB-NDR 4x, effective BER 1.5e-254` for people.
#[must_use]
pub fn summary(m: &Mlxlink) -> String {
    format!(
        "{}{} {} {}, {} sections",
        m.device
            .as_deref()
            .map(|d| format!("{d}: "))
            .unwrap_or_default(),
        m.state.as_deref().unwrap_or("state unknown"),
        m.speed.as_deref().unwrap_or("-"),
        m.width.map(|w| format!("{w}x")).unwrap_or_default(),
        m.sections.len()
    )
}

/// The device named by `-d`/`--device` on the command line.
pub(crate) fn attach_command(m: &mut Mlxlink, argv: &[&str]) {
    let mut it = argv.iter();
    while let Some(a) = it.next() {
        if *a == "-d" || *a == "--device" {
            m.device = it.next().map(|d| (*d).to_owned());
        } else if let Some(d) = a.strip_prefix("--device=") {
            m.device = Some(d.to_owned());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::lines_of;

    const SAMPLE: &str = "
Operational Info
----------------
State                              : Active
Physical state                     : LinkUp
Speed                              : IB-NDR
Width                              : 4x
FEC                                : Standard_RS-FEC - (544,514)
Loopback Mode                      : No Loopback
Auto Negotiation                   : ON

Troubleshooting Info
--------------------
Status Opcode                      : 0
Group Opcode                       : N/A
Recommendation                     : No issue was observed

Tool Information
----------------
Firmware Version                   : 28.39.1002
MFT Version                        : mft 4.28.0-92

Physical Counters and BER Info
------------------------------
Time Since Last Clear [Min]        : 5032.7
Effective Physical Errors          : 0
Effective Physical BER             : 15E-255
Raw Physical Errors Per Lane       : 120,98,143,77
Raw Physical BER                   : 3E-9
Link Down Counter                  : 1
Link Error Recovery Counter        : 0
";

    #[test]
    fn reads_sections_and_types_the_fields_rules_use() {
        let p = parse(&lines_of(SAMPLE));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let m = p.value;
        assert_eq!(m.sections.len(), 4);
        assert_eq!(m.state.as_deref(), Some("Active"));
        assert_eq!(m.width, Some(4));
        assert_eq!(m.recommendation.as_deref(), Some("No issue was observed"));
        assert_eq!(m.effective_ber, Some(15e-255));
        assert_eq!(m.raw_ber, Some(3e-9));
        assert_eq!(m.link_down_counter, Some(1));
        assert_eq!(
            m.field("MFT Version").map(|f| f.value.as_str()),
            Some("mft 4.28.0-92")
        );
    }

    #[test]
    fn detection_needs_the_underline_and_lines_are_accounted_for() {
        let lines = lines_of("Operational Info\n----------------\nState : Active\n");
        assert!(detect(&lines).is_some());
        assert!(detect(&lines_of("Operational Info\nState : Active\n")).is_none());
        let p = parse(&lines_of(
            "stray\nOperational Info\n----\nno colon here\nWidth : 4x\n",
        ));
        assert_eq!(p.value.width, Some(4));
        let covered = |n| p.warnings.iter().any(|w| w.span.contains(n));
        assert!(covered(1) && covered(4), "{:?}", p.warnings);
        for cut in 0..SAMPLE.len() {
            let _ = parse(&lines_of(&SAMPLE[..cut]));
        }
    }

    #[test]
    fn counter_records_without_their_title_are_read_as_partial() {
        // What `mlxlink -c | grep -e Effective -e Raw` leaves.
        let text = "Effective Physical Errors          : 12\n\
                    Effective Physical BER             : 3E-13\n\
                    Raw Physical Errors Per Lane       : 5,0,7,1\n\
                    Raw Physical BER                   : 4E-9\n";
        let lines = lines_of(text);
        assert_eq!(
            detect(&lines).map(|b| b.key),
            Some("record Effective Physical Errors".to_owned())
        );
        let p = parse(&lines);
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        assert_eq!(p.value.effective_errors, Some(12));
        assert_eq!(p.value.effective_ber, Some(3e-13));
        assert_eq!(p.value.raw_ber, Some(4e-9));
        assert_eq!(p.value.state, None);
        let partial = p.value.partial.as_ref().map(|p| p.reason);
        assert_eq!(partial, Some(PartialReason::NoHeader));
        // Records other tools print too do not open a block on their own,
        // and a record with no value is not mlxlink's for sure.
        assert!(detect(&lines_of("State                : Active\n")).is_none());
        assert!(detect(&lines_of("Raw Physical BER :\n")).is_none());
    }

    #[test]
    fn a_titled_counter_section_is_one_section() {
        // Its records of mlxlink's own names do not split it.
        assert!(SAMPLE.contains("\nEffective Physical BER"));
        let sections = crate::read(SAMPLE, &crate::ReadOptions::default())
            .map(|d| d.sections.len())
            .ok();
        assert_eq!(sections, Some(1));
    }
}
