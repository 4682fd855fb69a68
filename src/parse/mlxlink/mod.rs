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
//! `-m` adds `Module Info`, whose first records are the module's live
//! readings, each followed by the module's alarm range in brackets
//! (`prepareDDMSection`, `getValueAndThresholdsStr`): one value for the
//! module, or one per lane joined by `,` (`getStringFromVector`: three
//! decimals, none for a whole number), and `N/A` for the whole record when
//! the module has no digital diagnostics (passive copper, `Digital
//! Diagnostic Monitoring : No`):
//!
//! ```text
//! Module Info
//! -----------
//! Temperature [C]                    : 47 [-5..75]
//! Voltage [mV]                       : 3288.4 [2970..3630]
//! Bias Current [mA]                  : 7.912,8.004,7.950,8.120 [2..15]
//! Rx Power Current [dBm]             : 1.204,-14.310,0.987,1.330 [-10.41..6]
//! Tx Power Current [dBm]             : 1.012,1.230,0.998,1.105 [-8.508..5]
//! ```
//!
//! A lane with no light reads `-40` dBm (`getPower`'s floor for 0 µW); a
//! module that stores no thresholds prints `[0..0]`.
//!
//! Every section is kept as records; the fields the rules read are also
//! typed. `--json` output gives the same records (read in `json.rs`).

use crate::diag::WarningKind;
use crate::model::mlxlink::{
    Mlxlink, MlxlinkField, MlxlinkSection, ModuleQuantity, ModuleRange, ModuleReading,
};
use crate::model::partial::{Partial, PartialReason};
use crate::parse::text::{decimal_f64, decimal_u64, is_help, trim, Unread};
use crate::parse::{Block, Line, Parsed, Spec};
use crate::span::LineSpan;

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
        // Records before any title: what a filter (`mlxlink -c | grep -E
        // "State|BER|Counter"`) leaves. This section is mlxlink's (its
        // command said so, or a record only mlxlink prints began it), so
        // any record of it is read, not only those that recognise it.
        // A record's name starts with a letter (`State`, `Symbol BER`): a
        // JSON member's quoted key is no text record.
        let text_record = record(trim(t)).is_some_and(|(name, value)| {
            !value.is_empty() && name.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
        });
        if sections.is_empty() && text_record {
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
    out.module = module_readings(&out.sections, unread);
}

/// The title of the section `-m` prints.
const MODULE_INFO: &str = "Module Info";

/// The typed readings of `Module Info`, in the order printed.
fn module_readings(sections: &[MlxlinkSection], unread: &mut Unread) -> Vec<ModuleReading> {
    sections
        .iter()
        .filter(|s| s.title.eq_ignore_ascii_case(MODULE_INFO))
        .flat_map(|s| &s.fields)
        .filter_map(|f| {
            let quantity = ModuleQuantity::of_name(&f.name)?;
            module_reading(quantity, f, unread)
        })
        .collect()
}

/// `1.2,-40,N/A [-10.41..6]` → the values and the range. `None` for a
/// record printed `N/A` (no diagnostics: nothing was measured) and for one
/// that cannot be read, which is reported: a reading is judged whole or not
/// at all.
fn module_reading(
    quantity: ModuleQuantity,
    f: &MlxlinkField,
    unread: &mut Unread,
) -> Option<ModuleReading> {
    let text = f.value.trim();
    if text.is_empty() || text.eq_ignore_ascii_case("N/A") {
        return None;
    }
    let span = LineSpan::line(f.line);
    let (values_text, range_text) = match text.split_once('[') {
        Some((values, range)) => (values, Some(range.trim())),
        None => (text, None),
    };
    let mut values = Vec::new();
    for lane in values_text.split(',').map(str::trim) {
        if lane.eq_ignore_ascii_case("N/A") {
            values.push(None);
        } else if let Some(v) = signed_decimal(lane) {
            values.push(Some(v));
        } else {
            unread.warn(
                WarningKind::Unreadable,
                span,
                format!("`{}`: `{lane}` is not a number like -2.514", f.name),
            );
            return None;
        }
    }
    let range = match range_text {
        None => None,
        Some(r) => match r.strip_suffix(']') {
            Some(inner) => {
                let bounds = inner
                    .split_once("..")
                    .and_then(|(low, high)| Some((signed_decimal(low)?, signed_decimal(high)?)));
                if bounds.is_none() {
                    unread.warn(
                        WarningKind::Unreadable,
                        span,
                        format!("`{}`: `[{r}` is not a range like [-10.41..6]", f.name),
                    );
                }
                bounds.map(|(low, high)| ModuleRange { low, high })
            }
            None => {
                // `Rx Power Current [dBm] : 1.2,1.3 [-10.4` : the paste
                // ended inside the range; the values are whole.
                unread.warn(
                    WarningKind::Truncated,
                    span,
                    format!("`{}` ends inside the module's range (`[{r}`): cut here, the reading is not judged", f.name),
                );
                None
            }
        },
    };
    Some(ModuleReading {
        quantity,
        unit: unit_of(&f.name).to_owned(),
        values,
        range,
        line: f.line,
    })
}

/// `Rx Power Current [dBm]` → `dBm`; empty when the name has no unit.
fn unit_of(name: &str) -> &str {
    name.split_once('[')
        .and_then(|(_, rest)| rest.split_once(']'))
        .map_or("", |(unit, _)| unit.trim())
}

/// `-40.000`, `3288.4`, `6` → the number.
fn signed_decimal(text: &str) -> Option<f64> {
    let t = text.trim();
    let (negative, digits) = match t.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, t),
    };
    let v = decimal_f64(digits)?;
    Some(if negative { -v } else { v })
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

/// The device a banner above the output names (`== mlx5_1 ==` printed by
/// a loop over devices): the output's device when its command named none,
/// or only a shell variable (`mlxlink -d $d`) or `xargs`'s placeholder
/// (`mlxlink -d {}`).
pub(crate) fn attach_banner_device(m: &mut Mlxlink, device: &str) {
    if m.device
        .as_deref()
        .is_none_or(|d| d.starts_with('$') || d.starts_with('{'))
    {
        m.device = Some(device.to_owned());
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

    const MODULE: &str = "
Operational Info
----------------
State                              : Active
Physical state                     : LinkUp

Module Info
-----------
Temperature [C]                    : 47 [-5..75]
Voltage [mV]                       : 3288.4 [2970..3630]
Bias Current [mA]                  : 7.912,8.004,7.950,8.120 [2..15]
Rx Power Current [dBm]             : 1.204,-14.310,0.987,-40.000 [-10.41..6]
Tx Power Current [dBm]             : 1,1.230,N/A,1.105 [-8.508..5]
Identifier                         : OSFP
";

    fn module_of(text: &str) -> Parsed<Mlxlink> {
        parse(&lines_of(text))
    }

    #[test]
    fn module_readings_are_typed_per_lane_with_the_modules_range() {
        let p = module_of(MODULE);
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let r = &p.value.module;
        let quantities: Vec<ModuleQuantity> = r.iter().map(|r| r.quantity).collect();
        assert_eq!(
            quantities,
            [
                ModuleQuantity::Temperature,
                ModuleQuantity::Voltage,
                ModuleQuantity::BiasCurrent,
                ModuleQuantity::RxPower,
                ModuleQuantity::TxPower
            ]
        );
        assert_eq!(r[0].values, [Some(47.0)]);
        assert_eq!(r[0].unit, "C");
        assert_eq!(
            r[0].range,
            Some(ModuleRange {
                low: -5.0,
                high: 75.0
            })
        );
        assert_eq!(r[1].values, [Some(3288.4)]);
        assert_eq!(r[1].unit, "mV");
        assert_eq!(r[2].values.len(), 4);
        assert_eq!(
            r[2].range,
            Some(ModuleRange {
                low: 2.0,
                high: 15.0
            })
        );
        // The dark lane reads -40: a value, judged by the rule, not here.
        assert_eq!(
            r[3].values,
            [Some(1.204), Some(-14.31), Some(0.987), Some(-40.0)]
        );
        assert_eq!(r[3].unit, "dBm");
        assert_eq!(
            r[3].range,
            Some(ModuleRange {
                low: -10.41,
                high: 6.0
            })
        );
        // A lane printed N/A is kept as unknown, in its place.
        assert_eq!(r[4].values, [Some(1.0), Some(1.23), None, Some(1.105)]);
        assert_eq!(r[4].line, 13);
        // The records stay as printed.
        assert_eq!(
            p.value.field("Identifier").map(|f| f.value.as_str()),
            Some("OSFP")
        );
    }

    #[test]
    fn no_diagnostics_no_range_and_empty_thresholds_are_not_invented() {
        // Passive copper without DDM: every reading N/A, nothing typed.
        let text = "Module Info\n-----------\nTemperature [C]                    : N/A\nRx Power Current [dBm]             : N/A\nDigital Diagnostic Monitoring      : No\n";
        let p = module_of(text);
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        assert!(p.value.module.is_empty());
        assert_eq!(p.value.sections[0].fields.len(), 3);
        // Passive copper with DDM but no thresholds: `[0..0]`, not a range.
        let p = module_of(
            "Module Info\n-----------\nBias Current [mA]                  : 0,0,0,0 [0..0]\n",
        );
        let range = p.value.module[0].range;
        assert_eq!(
            range,
            Some(ModuleRange {
                low: 0.0,
                high: 0.0
            })
        );
        assert!(!range.is_some_and(ModuleRange::is_set));
        // Values without brackets: read, with no range.
        let p = module_of(
            "Module Info\n-----------\nRx Power Current [dBm]             : -2,-3,-2,-1\n",
        );
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        assert_eq!(
            p.value.module[0].values,
            [Some(-2.0), Some(-3.0), Some(-2.0), Some(-1.0)]
        );
        assert_eq!(p.value.module[0].range, None);
        // The same names outside Module Info are not the module's readings.
        let p = module_of(
            "Device Info\n-----------\nTemperature [C]                    : 60 [0..100]\n",
        );
        assert!(p.value.module.is_empty());
    }

    #[test]
    fn cut_or_unreadable_readings_are_reported_not_guessed() {
        // Cut inside the range: the values are kept, the range is not.
        let p = module_of(
            "Module Info\n-----------\nRx Power Current [dBm]             : 1.2,-14.3 [-10.4\n",
        );
        assert_eq!(p.value.module[0].values, [Some(1.2), Some(-14.3)]);
        assert_eq!(p.value.module[0].range, None);
        assert!(
            p.warnings
                .iter()
                .any(|w| w.kind == WarningKind::Truncated && w.span.contains(3)),
            "{:?}",
            p.warnings
        );
        // A value that is not a number: no reading, and the line is named.
        let p = module_of("Module Info\n-----------\nBias Current [mA]                  : 7.9,x,8 [2..15]\nVoltage [mV]                       : 3300 [low..high]\n");
        assert!(p
            .value
            .module
            .iter()
            .all(|r| r.quantity != ModuleQuantity::BiasCurrent));
        assert_eq!(p.value.module[0].range, None);
        let covered = |n| p.warnings.iter().any(|w| w.span.contains(n));
        assert!(covered(3) && covered(4), "{:?}", p.warnings);
        for cut in 0..MODULE.len() {
            let _ = module_of(&MODULE[..cut]);
        }
    }

    #[test]
    fn json_module_info_gives_the_same_readings() {
        let text = "{\n   \"result\" : {\n      \"output\" : {\n         \"Module Info\" : {\n            \"Rx Power Current [dBm]\" : \"0.512,-12.870 [-10.41..6]\",\n            \"Temperature [C]\" : \"52 [-5..75]\"\n         }\n      }\n   }\n}\n";
        let p = module_of(text);
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let r = &p.value.module;
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(r[0].quantity, ModuleQuantity::RxPower);
        assert_eq!(r[0].values, [Some(0.512), Some(-12.87)]);
        assert_eq!(
            r[1].range,
            Some(ModuleRange {
                low: -5.0,
                high: 75.0
            })
        );
    }

    #[test]
    fn quantity_names_need_the_whole_word() {
        assert_eq!(
            ModuleQuantity::of_name("Rx Power Current [dBm]"),
            Some(ModuleQuantity::RxPower)
        );
        assert_eq!(
            ModuleQuantity::of_name("Voltage"),
            Some(ModuleQuantity::Voltage)
        );
        assert_eq!(ModuleQuantity::of_name("Rx Power Type"), None);
        assert_eq!(ModuleQuantity::of_name("Temperatures"), None);
        assert_eq!(unit_of("Bias Current [mA]"), "mA");
        assert_eq!(unit_of("Voltage"), "");
        assert_eq!(signed_decimal("-40.000"), Some(-40.0));
        assert_eq!(signed_decimal("--4"), None);
        assert_eq!(signed_decimal("-"), None);
    }
}
