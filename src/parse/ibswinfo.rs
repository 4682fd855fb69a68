//! `ibswinfo -d <device>` (Stanford's `ibswinfo.sh`): `label | value`
//! lines (labels padded to 18 columns) between `=` and `-` rules:
//!
//! ```text
//! =================================================
//!  MF0;leaf-02:MQM8790/U1
//! =================================================
//! part number        | MQM8790-HS2F
//! ports              | 80
//! -------------------------------------------------
//! PSU0 status        | OK
//!      P/N           | MTEF-PSF-AC-C
//!      DC power      | OK
//!      fan status    | OK
//!      power (W)     | 287
//! -------------------------------------------------
//! temperature (C)    | 47
//! max temp (C)       | 52
//! warn threshold (C) | 70/75 (low/high)
//! -------------------------------------------------
//! fan status         | OK
//! fan#1 (rpm)        | 5959
//! ```
//!
//! The `-o inventory|status|vitals` forms (`psu0.status : OK`) are other
//! layouts and are not read.

use crate::model::ib::Guid;
use crate::model::ibswinfo::{Ibswinfo, Psu, SwitchVitals};
use crate::parse::text::{decimal_u32, read_each_line, trim, Unread};
use crate::parse::{Block, Line, Parsed, Spec};
use crate::span::LineSpan;

pub(crate) const FORMAT: Spec<Ibswinfo> = Spec {
    command: |argv| {
        argv.first()
            .is_some_and(|c| *c == "ibswinfo" || *c == "ibswinfo.sh")
    },
    starts: |b| matches!(b, b'=' | b'p'),
    detect,
    parse,
    summary,
    attach_command: None,
    labels: &[],
};

/// A rule of `=` (around the description) or `-` (between groups).
fn is_rule(t: &str, c: u8) -> bool {
    crate::parse::text::is_rule_of(t, 20, c)
}

/// `label | value`, the label trimmed; `None` for other lines.
fn label_value(raw: &str) -> Option<(&str, &str)> {
    let (label, value) = raw.split_once(" | ")?;
    Some((label.trim(), value.trim()))
}

/// Reads `ibswinfo` output.
#[must_use]
pub fn parse(lines: &[Line<'_>]) -> Parsed<Ibswinfo> {
    // Whether the line before was the opening `=` rule of a block, so
    // that this one is the switch's description.
    let mut after_opening = false;
    read_each_line(lines, |line, out: &mut Ibswinfo, unread: &mut Unread| {
        let raw = line.text();
        let t = trim(raw);
        if is_rule(t, b'=') {
            // The first `=` of a block opens it; the second closes the
            // description.
            let opens = out.switches.last().is_none_or(has_fields) && !after_opening;
            if opens {
                out.switches.push(SwitchVitals {
                    span: line.span(),
                    ..SwitchVitals::default()
                });
            }
            after_opening = opens;
            extend(out, line);
            return;
        }
        if is_rule(t, b'-') {
            after_opening = false;
            extend(out, line);
            return;
        }
        if std::mem::take(&mut after_opening) {
            if let Some(s) = out.switches.last_mut() {
                s.description = Some(t.to_owned());
                s.span = s.span.join(line.span());
            }
            return;
        }
        let Some((label, value)) = label_value(raw) else {
            unread.line(line, "not an ibswinfo `label | value` line");
            return;
        };
        if out.switches.is_empty() {
            // Pasted from below its opening rules.
            out.switches.push(SwitchVitals {
                span: line.span(),
                ..SwitchVitals::default()
            });
        }
        let indented = raw.starts_with(' ');
        if let Some(s) = out.switches.last_mut() {
            s.span = s.span.join(line.span());
            read_field(s, label, value, indented, line, unread);
        }
    })
}

/// Whether a block has read a `label | value` line: an `=` rule after it
/// opens the next block, one before it closes the description.
fn has_fields(s: &SwitchVitals) -> bool {
    s.part_number.is_some()
        || s.serial_number.is_some()
        || s.product_name.is_some()
        || s.ports.is_some()
        || s.guid.is_some()
        || s.firmware.is_some()
        || !s.other.is_empty()
        || !s.psus.is_empty()
        || s.temperature_c.is_some()
        || s.fan_status.is_some()
        || !s.fans_rpm.is_empty()
}

/// Stretches the last switch's span over a rule line.
fn extend(out: &mut Ibswinfo, line: &Line<'_>) {
    if let Some(s) = out.switches.last_mut() {
        s.span = s.span.join(line.span());
    }
}

fn number(value: &str, label: &str, line: &Line<'_>, unread: &mut Unread) -> Option<u32> {
    match decimal_u32(value) {
        Ok(n) => Some(n),
        Err(e) => {
            unread.number(line, label, e);
            None
        }
    }
}

fn read_field(
    s: &mut SwitchVitals,
    label: &str,
    value: &str,
    indented: bool,
    line: &Line<'_>,
    unread: &mut Unread,
) {
    if indented {
        let Some(psu) = s.psus.last_mut() else {
            unread.line(
                line,
                "a power supply's line with no `PSUn status` line before it",
            );
            return;
        };
        psu.span = psu.span.join(line.span());
        // A field printed without its value (blanked, or a register
        // ibswinfo could not read) is unknown, never a failed state.
        if value.trim().is_empty() {
            unread.line(line, "a power supply's field with no value");
            return;
        }
        let v = Some(value.to_owned());
        match label {
            "P/N" => psu.part_number = v,
            "S/N" => psu.serial_number = v,
            "DC power" => psu.dc_power = v,
            "fan status" => psu.fan_status = v,
            "power (W)" => psu.power_w = number(value, label, line, unread),
            _ => unread.line(line, "unknown power supply field"),
        }
        return;
    }
    if let Some(index) = label
        .strip_prefix("PSU")
        .and_then(|r| r.strip_suffix(" status"))
    {
        match decimal_u32(index) {
            Ok(index) => {
                // `PSU1 status        | ` with nothing after it: the status
                // is unknown (the lines under it still belong to this PSU),
                // not the ERROR that a missing supply prints.
                let status = (!value.trim().is_empty()).then(|| value.to_owned());
                if status.is_none() {
                    unread.line(line, "a power supply's status with no value");
                }
                s.psus.push(Psu {
                    index,
                    status,
                    span: line.span(),
                    ..Psu::default()
                });
            }
            Err(_) => unread.line(line, "`PSUn status` without a number"),
        }
        return;
    }
    let here = line.span();
    if let Some(reading) = numbered(label, value, ("fan#", " (rpm)"), line, unread) {
        grow(&mut s.fans_span, here);
        s.fans_rpm.extend(reading);
        return;
    }
    if let Some(reading) = numbered(label, value, ("QSFP#", " (C)"), line, unread) {
        grow(&mut s.temperature_span, here);
        s.module_temperatures_c.extend(reading);
        return;
    }
    let v = Some(value.to_owned());
    match label {
        "temperature (C)" | "max temp (C)" | "warn threshold (C)" => {
            grow(&mut s.temperature_span, here);
        }
        "fan status" => grow(&mut s.fans_span, here),
        _ => {}
    }
    match label {
        "part number" => s.part_number = v,
        "serial number" => s.serial_number = v,
        "product name" => s.product_name = v,
        "ports" => s.ports = number(value, label, line, unread),
        "GUID" => match Guid::parse(value) {
            Some(g) => s.guid = Some(g),
            None => unread.line(line, "`GUID` is not a GUID"),
        },
        "firmware version" => s.firmware = v,
        "temperature (C)" => s.temperature_c = number(value, label, line, unread),
        "max temp (C)" => s.max_temperature_c = number(value, label, line, unread),
        "warn threshold (C)" => {
            let pair = value
                .split_whitespace()
                .next()
                .and_then(|p| p.split_once('/'))
                .and_then(|(lo, hi)| Some((decimal_u32(lo).ok()?, decimal_u32(hi).ok()?)));
            match pair {
                Some(p) => s.warn_threshold_c = Some(p),
                None => unread.line(line, "`warn threshold (C)` is not `low/high`"),
            }
        }
        // Nothing after the bar: unknown, not a fan alarm.
        "fan status" if value.trim().is_empty() => {
            unread.line(line, "`fan status` with no value");
        }
        "fan status" => s.fan_status = v,
        "revision" | "PSID" | "CPLD" | "uptime (d-h:m:s)" => {
            s.other.push((label.to_owned(), value.to_owned()));
        }
        _ => unread.line(line, "unknown ibswinfo field"),
    }
}

/// Stretches a group's span over one more line.
fn grow(span: &mut Option<LineSpan>, line: LineSpan) {
    *span = Some(span.map_or(line, |s| s.join(line)));
}

/// A numbered reading, `fan#3 (rpm) | 5959` → `(3, 5959)`, for labels
/// between `affixes`; `None` for other labels, and `Some(None)` for one
/// whose numbers could not be read (said unread).
fn numbered(
    label: &str,
    value: &str,
    affixes: (&str, &str),
    line: &Line<'_>,
    unread: &mut Unread,
) -> Option<Option<(u32, u32)>> {
    let n = label.strip_prefix(affixes.0)?.strip_suffix(affixes.1)?;
    Some(
        match (decimal_u32(n.trim()), number(value, label, line, unread)) {
            (Ok(n), Some(v)) => Some((n, v)),
            (Err(_), _) => {
                unread.line(line, &format!("`{}N` without a number", affixes.0));
                None
            }
            _ => None,
        },
    )
}

/// The opening `=` rule of a block with its description and `=` rule
/// after it, or a `part number | …` line of a block whose rules were cut.
fn detect(lines: &[Line<'_>]) -> Option<Block> {
    let first = lines.first()?;
    let t = trim(first.text());
    let key = || Block::keyed(format!("ibswinfo at line {}", first.number));
    if is_rule(t, b'=') {
        let mut next = lines
            .iter()
            .skip(1)
            .filter(|l| !l.is_blank())
            .map(|l| trim(l.text()));
        let (_, closing, field) = (next.next()?, next.next()?, next.next()?);
        return (is_rule(closing, b'=') && label_value(field).is_some()).then(key);
    }
    label_value(first.text())
        .is_some_and(|(label, _)| label == "part number")
        .then(key)
}

/// `MQM8790-HS2F: 2 PSUs, 9 fans, 47 °C`.
fn summary(d: &Ibswinfo) -> String {
    let parts: Vec<String> = d
        .switches
        .iter()
        .map(|s| {
            let name = s
                .description
                .as_deref()
                .or(s.part_number.as_deref())
                .unwrap_or("switch");
            let temp = s
                .temperature_c
                .map(|t| format!(", {t} °C"))
                .unwrap_or_default();
            format!(
                "{name}: {} PSU(s), {} fan(s){temp}",
                s.psus.len(),
                s.fans_rpm.len()
            )
        })
        .collect();
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::lines_of;

    const RULE: &str = "-------------------------------------------------";
    const DOUBLE: &str = "=================================================";

    fn sample(psu1_dc: &str, fans: &str, threshold: bool) -> String {
        let mut s = format!(
            "{DOUBLE}\n MF0;ib-leaf-09:MSB7790/U1\n{DOUBLE}\npart number        | MSB7790-ES2F\nserial number      | MT1900X01234\nproduct name       | Scorpion IB EDR Unmanaged\nrevision           | AN\nports              | 36\nPSID               | MT_1880110032\nGUID               | 0x1c34da0300aa0101\nfirmware version   | 11.2008.2102\n{RULE}\nuptime (d-h:m:s)   | 12d-03:04:05\n{RULE}\n"
        );
        for (i, dc) in [(0, "OK"), (1, psu1_dc)] {
            s.push_str(&format!("PSU{i} status        | OK\n     P/N           | MTEF-PSF-AC-A\n     S/N           | MT1900X0999{i}\n     DC power      | {dc}\n     fan status    | OK\n     power (W)     | 7{i}\n"));
        }
        s.push_str(&format!(
            "{RULE}\ntemperature (C)    | 44\nmax temp (C)       | 55\n"
        ));
        if threshold {
            s.push_str("warn threshold (C) | 70/75 (low/high)\n");
        }
        s.push_str(&format!("{RULE}\nfan status         | {fans}\nfan#1 (rpm)        | 8400\nfan#2 (rpm)        | 7300\n{RULE}\n"));
        s
    }

    #[test]
    fn reads_a_switch_block() {
        let text = sample("ERROR", "OK", true);
        let p = parse(&lines_of(&text));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let s = &p.value.switches[..];
        assert_eq!(s.len(), 1);
        let s = &s[0];
        assert_eq!(s.description.as_deref(), Some("MF0;ib-leaf-09:MSB7790/U1"));
        assert_eq!(s.part_number.as_deref(), Some("MSB7790-ES2F"));
        assert_eq!(s.ports, Some(36));
        assert_eq!(s.guid, Guid::parse("0x1c34da0300aa0101"));
        assert_eq!(s.psus.len(), 2);
        assert_eq!(s.psus[1].dc_power.as_deref(), Some("ERROR"));
        assert_eq!(s.psus[1].power_w, Some(71));
        assert_eq!((s.temperature_c, s.max_temperature_c), (Some(44), Some(55)));
        assert_eq!(s.warn_threshold_c, Some((70, 75)));
        assert_eq!(s.fans_rpm, [(1, 8400), (2, 7300)]);
        assert_eq!(s.fan_status.as_deref(), Some("OK"));
        assert_eq!(s.other.len(), 3);
    }

    #[test]
    fn a_status_printed_without_its_value_is_unknown_and_unread() {
        let text = sample("OK", "OK", false)
            .replace("PSU1 status        | OK", "PSU1 status        | ")
            .replace("fan status         | OK", "fan status         |")
            .replace(
                "     DC power      | OK\n     fan status    | OK\n     power (W)     | 70",
                "     DC power      | \n     fan status    | OK\n     power (W)     | 70",
            );
        let p = parse(&lines_of(&text));
        let s = &p.value.switches[0];
        assert_eq!(s.psus.len(), 2);
        assert_eq!(s.psus[1].status, None);
        assert_eq!(
            s.psus[1].dc_power.as_deref(),
            Some("OK"),
            "its lines stay its own"
        );
        assert_eq!(s.psus[0].dc_power, None);
        assert_eq!(s.fan_status, None);
        assert_eq!(p.warnings.len(), 3, "{:?}", p.warnings);
    }

    #[test]
    fn two_runs_are_two_switches_and_odd_lines_are_said() {
        let text = format!(
            "{}{}\nsomething else\n",
            sample("OK", "OK", false),
            sample("OK", "ERROR", false)
        );
        let p = parse(&lines_of(&text));
        assert_eq!(p.value.switches.len(), 2);
        assert_eq!(p.value.switches[1].fan_status.as_deref(), Some("ERROR"));
        assert_eq!(p.warnings.len(), 1, "{:?}", p.warnings);
    }

    #[test]
    fn detects_the_block_and_nothing_else() {
        assert!(detect(&lines_of(&sample("OK", "OK", false))).is_some());
        assert!(detect(&lines_of("part number        | MQM8790-HS2F\n")).is_some());
        for text in [
            "=================================================\nTitle\n=================================================\nplain text\n",
            "==========\n",
            "part number: 123\n",
        ] {
            assert!(detect(&lines_of(text)).is_none(), "{text}");
        }
    }

    /// A switch block in the script's layout (`%-18s | %s`), from values.
    fn render(psus: &[(bool, bool, bool, u32)], temperature: u32, fans: &[u32]) -> String {
        let ok = |b: bool| if b { "OK" } else { "ERROR" };
        let kv = |k: &str, v: &str| format!("{k:<18} | {v}\n");
        let mut s = format!("{DOUBLE}\n MF0;leaf:MQM8790/U1\n{DOUBLE}\n");
        s.push_str(&kv("part number", "MQM8790-HS2F"));
        s.push_str(&format!("{RULE}\n"));
        for (i, (present, dc, fan, watts)) in psus.iter().enumerate() {
            s.push_str(&kv(&format!("PSU{i} status"), ok(*present)));
            s.push_str(&kv("     DC power", ok(*dc)));
            s.push_str(&kv("     fan status", ok(*fan)));
            s.push_str(&kv("     power (W)", &watts.to_string()));
        }
        s.push_str(&format!("{RULE}\n"));
        s.push_str(&kv("temperature (C)", &temperature.to_string()));
        s.push_str(&format!("{RULE}\n"));
        s.push_str(&kv("fan status", "OK"));
        for (n, rpm) in fans.iter().enumerate() {
            s.push_str(&kv(&format!("fan#{} (rpm)", n + 1), &rpm.to_string()));
        }
        s
    }

    proptest::proptest! {
        /// Whatever the supplies, temperature and fans, the block reads
        /// back as the values it was written from, without a warning.
        #[test]
        fn a_rendered_block_reads_back(
            psus in proptest::collection::vec((proptest::bool::ANY, proptest::bool::ANY, proptest::bool::ANY, 0u32..2000), 0..4),
            temperature in 0u32..120,
            fans in proptest::collection::vec(0u32..30000, 0..12),
        ) {
            let p = parse(&lines_of(&render(&psus, temperature, &fans)));
            proptest::prop_assert!(p.warnings.is_empty(), "{:?}", p.warnings);
            proptest::prop_assert_eq!(p.value.switches.len(), 1);
            let s = &p.value.switches[0];
            let status = |o: &Option<String>| o.as_deref() == Some("OK");
            let got: Vec<(bool, bool, bool, u32)> = s.psus.iter().map(|p| (
                status(&p.status), status(&p.dc_power), status(&p.fan_status), p.power_w.unwrap_or(u32::MAX),
            )).collect();
            proptest::prop_assert_eq!(got, psus);
            proptest::prop_assert_eq!(s.temperature_c, Some(temperature));
            let want: Vec<(u32, u32)> = (1..).zip(fans).collect();
            proptest::prop_assert_eq!(&s.fans_rpm, &want);
        }

        /// Any line is read or said unread, never lost, and never panics.
        #[test]
        fn every_line_is_read_or_said(lines in proptest::collection::vec("[ -~]{0,60}", 0..30)) {
            let text = lines.join("\n");
            let input = lines_of(&text);
            let p = parse(&input);
            for line in input.iter().filter(|l| !l.is_blank()) {
                let read = p.value.switches.iter().any(|s| s.span.contains(line.number));
                let said = p.warnings.iter().any(|w| w.span.contains(line.number));
                proptest::prop_assert!(read || said, "line {} lost: {:?}", line.number, line.text());
            }
        }
    }
}
