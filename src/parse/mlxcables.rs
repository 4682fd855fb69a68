//! `mlxcables` (NVIDIA Firmware Tools), after `mst cable add`:
//!
//! ```text
//! Querying Cables ....
//!
//! Cable #1:
//! ---------
//! Cable name    : mt4123_pciconf0_cable_0
//! >> No FW data to show
//! -------- Cable EEPROM --------
//! Identifier                     : QSFP28 (11h)
//! Technology                     : Copper cable unequalized (a0h)
//! Attenuation: 2.5GHz            : 3dB
//!              5.0GHz            : 5dB
//! OUI                            : 0x0002c9
//! Vendor                         : Mellanox
//! Serial number                  : MT2115VS01418
//! Part number                    : MCP1650-H002E26
//! Revision                       : A4
//! Temperature [c]                : N/A
//! Digital Diagnostic Monitoring  : NO
//! Length [m]                     : 2 m
//! ```
//!
//! Older releases print `Temperature : 40 C` and `Length : 3 m` without the
//! unit in the label. A `label : value` line the model has no field for is
//! kept as printed (`fields`); lines starting `>>` are the tool's notes.
//! mlxcables is not in mstflint; the shapes are those of public pastes (MFT
//! 4.x, SONiC's debug guide).

use crate::model::mlxcables::{Attenuation, Cable, CableField, Mlxcables};
use crate::parse::text::{quantity, read_each_line, Unread};
use crate::parse::{Block, Line, Parsed, Spec};

pub(crate) const FORMAT: Spec<Mlxcables> = Spec {
    command: |argv| argv.first().is_some_and(|c| *c == "mlxcables"),
    starts: |b| matches!(b, b'Q' | b'C'),
    detect,
    parse,
    summary,
    attach_command: None,
    labels: &["attenuation"],
};

/// `Querying Cables ....` opens a run; `Cable #N:` with its underline a
/// cable (its own key, so the cables of one run are one section).
fn detect(lines: &[Line<'_>]) -> Option<Block> {
    let t = lines.first()?.text().trim();
    if t.starts_with("Querying Cables") {
        return Some(Block::keyed("query"));
    }
    let n = cable_heading(t)?;
    let underlined = lines.get(1).is_some_and(|l| is_rule(l.text().trim()));
    underlined.then(|| Block::keyed(format!("cable {n}")))
}

/// `Cable #1:` → 1.
fn cable_heading(t: &str) -> Option<u32> {
    let rest = t.strip_prefix("Cable #")?.strip_suffix(':')?;
    (!rest.is_empty() && rest.len() <= 4 && rest.bytes().all(|b| b.is_ascii_digit()))
        .then(|| rest.parse().ok())
        .flatten()
}

/// A line of dashes (a heading's underline).
fn is_rule(t: &str) -> bool {
    !t.is_empty() && t.bytes().all(|b| b == b'-')
}

/// `-------- Cable EEPROM --------`: a part's title between dashes.
fn is_part_title(t: &str) -> bool {
    t.starts_with("--") && t.ends_with("--") && t.len() > 4
}

/// `Label   : value` split at the first ` :` (so `Attenuation: 2.5GHz
/// : 3dB` keeps its frequency in the label); `None` without one.
fn label_value(t: &str) -> Option<(&str, &str)> {
    let at = t.find(" :")?;
    let label = t.get(..at)?.trim();
    let value = t.get(at + 2..)?.trim();
    (!label.is_empty()).then_some((label, value))
}

/// The label without its unit: `Temperature [c]` → `Temperature`.
fn bare(label: &str) -> &str {
    match label.split_once(" [") {
        Some((name, unit)) if unit.ends_with(']') => name.trim_end(),
        _ => label,
    }
}

/// A number with an optional unit: `40 C`, `2 m`, `0.5 m`, `3dB`; `None`
/// for `N/A`.
fn number(value: &str) -> Option<f64> {
    if let Some((v, _)) = quantity(value) {
        return Some(v);
    }
    let end = value
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
        .unwrap_or(value.len());
    let (digits, _) = value.split_at(end);
    quantity(digits).map(|(v, _)| v)
}

/// `Attenuation: 2.5GHz` → `2.5GHz`; a continuation's bare `5.0GHz`.
fn frequency(label: &str, continues: bool) -> Option<&str> {
    let f = match label.strip_prefix("Attenuation:") {
        Some(f) => f.trim(),
        None if continues => label,
        None => return None,
    };
    (f.ends_with("Hz") && !f.contains(' ')).then_some(f)
}

/// Reads one `label : value` line into `c`; `false` when the line says
/// something the cable already has (a second `Vendor`).
fn field(
    c: &mut Cable,
    label: &str,
    value: &str,
    line: &Line<'_>,
    after_attenuation: bool,
) -> bool {
    if let Some(frequency) = frequency(label, after_attenuation) {
        c.attenuation.push(Attenuation {
            frequency: frequency.to_owned(),
            db: number(value),
        });
        return true;
    }
    let text = || (!value.is_empty()).then(|| value.to_owned());
    let slot = match bare(label) {
        "Cable name" => &mut c.name,
        "Identifier" => &mut c.identifier,
        "Technology" => &mut c.technology,
        "Compliance" => &mut c.compliance,
        "OUI" => &mut c.oui,
        "Vendor" => &mut c.vendor,
        "Serial number" => &mut c.serial_number,
        "Part number" => &mut c.part_number,
        "Revision" => &mut c.revision,
        "Temperature" => {
            let once = c.temperature_c.is_none();
            c.temperature_c = c.temperature_c.or_else(|| number(value));
            return once;
        }
        "Length" => {
            let once = c.length_m.is_none();
            c.length_m = c.length_m.or_else(|| number(value));
            return once;
        }
        "Digital Diagnostic Monitoring" => {
            let once = c.ddm.is_none();
            c.ddm = match value {
                "YES" | "Yes" | "yes" => Some(true),
                "NO" | "No" | "no" => Some(false),
                _ => c.ddm,
            };
            return once;
        }
        _ => {
            c.fields.push(CableField {
                label: label.to_owned(),
                value: value.to_owned(),
                span: line.span(),
            });
            return true;
        }
    };
    if slot.is_some() {
        return false;
    }
    *slot = text();
    true
}

/// Reads `mlxcables` output.
#[must_use]
pub fn parse(lines: &[Line<'_>]) -> Parsed<Mlxcables> {
    // Whether the line before was an `Attenuation` line (a bare
    // `5.0GHz : 5dB` below continues it).
    let mut after_attenuation = false;
    read_each_line(lines, |line, out: &mut Mlxcables, unread: &mut Unread| {
        let t = line.text().trim();
        let was_attenuation = std::mem::take(&mut after_attenuation);
        if t.starts_with("Querying Cables") || is_rule(t) || is_part_title(t) {
            // Headings; a part title is also the block's line.
        } else if let Some(n) = cable_heading(t) {
            out.cables.push(Cable {
                number: Some(n),
                span: line.span(),
                ..Cable::default()
            });
            return;
        } else if let Some(note) = t.strip_prefix(">>") {
            match out.cables.last_mut() {
                Some(c) => c.notes.push(note.trim().to_owned()),
                None => unread.line(line, "a note of `mlxcables` before its `Cable #N:`"),
            }
        } else if let Some((label, value)) = label_value(t) {
            if out.cables.is_empty() {
                // A block whose heading was cut off.
                out.cables.push(Cable {
                    span: line.span(),
                    ..Cable::default()
                });
            }
            let Some(c) = out.cables.last_mut() else {
                return;
            };
            if !field(c, label, value, line, was_attenuation) {
                unread.line(line, "a second value of a field of this cable");
                return;
            }
            after_attenuation = frequency(label, was_attenuation).is_some();
        } else {
            unread.line(line, "not a line of `mlxcables`");
            return;
        }
        if let Some(c) = out.cables.last_mut() {
            c.span = c.span.join(line.span());
        }
    })
}

/// `2 cable(s): 1 with a temperature (max 47 C)` for people.
#[must_use]
pub fn summary(m: &Mlxcables) -> String {
    let temps: Vec<f64> = m.cables.iter().filter_map(|c| c.temperature_c).collect();
    let mut s = format!("{} cable(s)", m.cables.len());
    if let Some(max) = temps.iter().copied().reduce(f64::max) {
        s.push_str(&format!(
            ": {} with a temperature (max {max} C)",
            temps.len()
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::lines_of;

    /// Two cables in the layout of MFT 4.x, shaped as pasted in public
    /// notes (values changed).
    const TWO: &str = "Querying Cables ....

Cable #1:
---------
Cable name    : mt4123_pciconf0_cable_0
>> No FW data to show
-------- Cable EEPROM --------
Identifier                     : QSFP28 (11h)
Technology                     : Copper cable unequalized (a0h)
Compliance                     : 50GBASE-CR, 100GBASE-CR2, or 200GBASE-CR4, HDR,EDR,FDR,    QDR,DDR,SDR
Attenuation: 2.5GHz            : 4dB
             5.0GHz            : 6dB
             25.78GHz          : 0dB
OUI                            : 0x0002c9
Vendor                         : Mellanox
Serial number                  : MT2231VS04417
Part number                    : MCP1650-H001E30
Revision                       : A3
Temperature [c]                : N/A
Digital Diagnostic Monitoring  : NO
Length [m]                     : 1 m

Cable #2:
---------
Cable name    : mt4123_pciconf1_cable_0
>> No FW data to show
-------- Cable EEPROM --------
Identifier                     : QSFP56 (11h)
Technology                     : 850 nm VCSEL (00h)
Wavelength [nm]                : 850
OUI                            : 0x0002c9
Vendor                         : Mellanox
Serial number                  : MT2304FT11872
Part number                    : MFS1S00-H010V
Revision                       : B1
Temperature [c]                : 47 C
Digital Diagnostic Monitoring  : YES
Length [m]                     : 10 m
";

    #[test]
    fn reads_every_cable() {
        let p = parse(&lines_of(TWO));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let c = &p.value.cables;
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].number, Some(1));
        assert_eq!(c[0].name.as_deref(), Some("mt4123_pciconf0_cable_0"));
        assert_eq!(c[0].notes, ["No FW data to show"]);
        assert_eq!(c[0].identifier.as_deref(), Some("QSFP28 (11h)"));
        assert_eq!(c[0].attenuation.len(), 3);
        assert_eq!(c[0].attenuation[1].frequency, "5.0GHz");
        assert_eq!(c[0].attenuation[1].db, Some(6.0));
        assert_eq!(c[0].part_number.as_deref(), Some("MCP1650-H001E30"));
        assert_eq!(c[0].temperature_c, None, "N/A: no diagnostics");
        assert_eq!(c[0].ddm, Some(false));
        assert_eq!(c[0].length_m, Some(1.0));
        assert_eq!((c[0].span.first_line, c[0].span.last_line), (3, 21));
        assert_eq!(c[1].temperature_c, Some(47.0));
        assert_eq!(c[1].ddm, Some(true));
        assert_eq!(c[1].length_m, Some(10.0));
        assert_eq!(c[1].fields.len(), 1);
        assert_eq!(c[1].fields[0].label, "Wavelength [nm]");
        assert_eq!(c[1].fields[0].value, "850");
        assert_eq!(
            summary(&p.value),
            "2 cable(s): 1 with a temperature (max 47 C)"
        );
    }

    #[test]
    fn reads_the_older_labels_without_units() {
        let p = parse(&lines_of(
            "Cable #1:\n---------\nCable name    : /dev/mst/mt52100_pci_cr0_cable_3\n\n>> No FW data to show\n\n-------- Cable EEPROM --------\nIdentifier    : SFP/SFP+/SFP28 (03h)\nTemperature   : 41 C\nLength        : 0.5 m\n",
        ));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let c = &p.value.cables[0];
        assert_eq!(c.temperature_c, Some(41.0));
        assert_eq!(c.length_m, Some(0.5));
    }

    #[test]
    fn other_lines_and_repeats_are_unread() {
        let p = parse(&lines_of(
            "Cable #1:\n---------\nVendor : Mellanox\nVendor : Other\nthe cable is hot\n",
        ));
        assert_eq!(p.value.cables[0].vendor.as_deref(), Some("Mellanox"));
        assert_eq!(p.warnings.len(), 2);
        assert!(p.warnings[0].span.contains(4));
        assert!(p.warnings[1].span.contains(5));
    }

    #[test]
    fn detection_wants_the_banner_or_an_underlined_heading() {
        assert!(detect(&lines_of("Querying Cables ....\n")).is_some());
        assert!(detect(&lines_of("Cable #2:\n---------\n")).is_some());
        assert!(detect(&lines_of("Cable #2:\nsee above\n")).is_none());
        assert!(detect(&lines_of("Cable #a:\n---------\n")).is_none());
    }
}
