//! An unmanaged switch's own alarms, as `ibswinfo` reads them from its
//! registers: power supplies, fans and temperature.

use super::context::{Context, SectionRef};
use super::{Coverage, Evidence, Finding, Severity, Subject, Threshold};
use crate::declare_rule;
use crate::model::ibswinfo::{Psu, SwitchVitals};
use crate::parse::SectionData;
use crate::span::LineSpan;

declare_rule! {
    /// ### What it detects
    /// A switch whose `ibswinfo` shows a power supply absent or unpowered
    /// (`PSUn status`), delivering no DC power, or with its fan failed; its
    /// chassis fans out of their range (`fan status | ERROR`); or its
    /// temperature at its own warning thresholds (`warn threshold (C)`,
    /// newer versions of the script).
    ///
    /// ### Why it matters
    /// An unmanaged switch has no management controller to raise an alarm:
    /// its LEDs turn red and nobody sees them. A switch that lost one of
    /// its two supplies runs on, without redundancy: the next failure takes
    /// every link of the switch down. Failed fans let the ASIC and the
    /// optics heat until links flap or the switch shuts down.
    ///
    /// ### Evidence
    /// The supply's lines, the fan group (with each fan's speed), the
    /// temperature lines.
    ///
    /// ### What to do
    /// Replace the power supply or reseat its cord (a supply with `DC power
    /// ERROR` may only lack AC input); replace the fan module; check the
    /// rack's airflow and the switch's temperature again; until then, watch
    /// the switch's links (`iblinkinfo`, `ibqueryerrors`).
    ///
    /// Not judged: the PSU lines of one ASIC of a director chassis
    /// (`…/S01/U1`, `…/L05/U2`: the chassis' supplies, which it reports
    /// as ERROR), and every status of a switch whose firmware reads
    /// `0.0000.0000` (its register queries failed: an `info` says so).
    ///
    /// ### Thresholds and sources
    /// The switch's own status bits as `ibswinfo` decodes them (MSPS
    /// power-supply register, FORE fan under/over-limit alerts) and its
    /// MTMP warning thresholds: `ERROR` where `OK` is expected; at or above
    /// the high threshold is an error, at or above the low one a warning.
    pub static IB009 = {
        id: "IB009",
        name: "switch-hardware-alarm",
        family: IbPort,
        severity: Warning,
        summary: "Unmanaged switch reports a power supply, fan or temperature alarm (ibswinfo)",
        needs: "ibswinfo",
        check: check_switch_vitals,
    }
}

/// `OK`, as ibswinfo prints a healthy status.
fn is_ok(status: Option<&str>) -> bool {
    status.is_none_or(|s| s == "OK")
}

fn subject(s: &SwitchVitals) -> Subject {
    Subject {
        device: s
            .description
            .clone()
            .or_else(|| s.part_number.clone())
            .map(|d| d.trim().to_owned()),
        guid: s.guid,
        ..Subject::default()
    }
}

/// `"MF0;leaf-02:MQM8790/U1"`, or the part number.
fn name(s: &SwitchVitals) -> String {
    s.description
        .as_deref()
        .or(s.part_number.as_deref())
        .map_or_else(
            || "the switch".to_owned(),
            |d| format!("switch {}", d.trim()),
        )
}

const REMEDY: &str = "Replace the power supply or reseat its cord (`DC power ERROR` may only mean no AC input); replace a failed fan module; check the rack's airflow; until then watch the switch's links (`iblinkinfo`, `ibqueryerrors`).";

/// An IB009 finding on switch `s`: its words, the lines that show it, and
/// the status it was held to. Every alarm has the same remedy.
fn alarm(
    s: &SwitchVitals,
    at: SectionRef<'_>,
    message: String,
    evidence: (String, LineSpan),
    threshold: Threshold,
) -> Finding {
    IB009
        .finding(subject(s), message)
        .evidence(Evidence::new(evidence.0, evidence.1, at.source()))
        .threshold(threshold)
        .remediation(REMEDY)
}

/// Whether the switch's registers could not be read: ibswinfo prints
/// firmware `0.0000.0000` when its register queries failed (an MFT
/// release's bug, stanford-rc/ibswinfo#8), and every status it decodes
/// after that is noise, not an alarm.
fn registers_unread(s: &SwitchVitals) -> bool {
    s.firmware
        .as_deref()
        .is_some_and(|f| f.bytes().any(|b| b == b'0') && f.bytes().all(|b| b == b'0' || b == b'.'))
}

/// One `info` for a switch whose registers could not be read: its PSU,
/// fan and temperature lines are not judged.
fn unread_registers(s: &SwitchVitals, at: SectionRef<'_>) -> Finding {
    IB009
        .finding(
            subject(s),
            format!(
                "{}: firmware reads {}, so its registers could not be read: the PSU, fan and temperature lines are not judged",
                name(s),
                s.firmware.as_deref().unwrap_or_default()
            ),
        )
        .severity(Severity::Info)
        .evidence(Evidence::new(
            format!(
                "ibswinfo: firmware version | {}",
                s.firmware.as_deref().unwrap_or_default()
            ),
            s.span,
            at.source(),
        ))
        .threshold(Threshold::new(
            "register data read (a firmware version other than 0.0000.0000)",
            "stanford-rc/ibswinfo#8: register queries failing under MFT 4.16",
        ))
        .remediation("Run ibswinfo again with a working MFT release (mlxreg/flint able to read the switch); judge the supplies from the switch's LEDs until then.")
}

/// Whether the switch is one ASIC of a director chassis (`CS7500/S01/U1`,
/// `…/L05/U2`: spine or leaf, unit): its PSU lines are the chassis' supplies,
/// which it is not wired to (stanford-rc/ibswinfo#14: ERROR on every PSU of
/// running spines and leaves).
fn director_member(s: &SwitchVitals) -> bool {
    let Some(d) = s.description.as_deref() else {
        return false;
    };
    let slot = |part: &str, letter: char| {
        part.strip_prefix(letter)
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    let parts: Vec<&str> = d.trim().split('/').collect();
    parts.windows(2).any(|w| match w {
        [board, unit] => (slot(board, 'S') || slot(board, 'L')) && slot(unit, 'U'),
        _ => false,
    })
}

/// A power supply absent, without DC power or with its fan failed.
fn psu_alarm(s: &SwitchVitals, psu: &Psu, at: SectionRef<'_>) -> Option<Finding> {
    let checks = [
        (&psu.status, "absent or unpowered (status ERROR)"),
        (&psu.dc_power, "no DC power"),
        (&psu.fan_status, "its fan failed"),
    ];
    let wrong: Vec<&str> = checks
        .iter()
        .filter(|(status, _)| !is_ok(status.as_deref()))
        .map(|(_, words)| *words)
        .collect();
    if wrong.is_empty() {
        return None;
    }
    let shown = |v: &Option<String>| v.as_deref().unwrap_or("?").to_owned();
    Some(alarm(
        s,
        at,
        format!(
            "{} PSU{}: {}; the switch runs without power redundancy",
            name(s),
            psu.index,
            wrong.join(", ")
        ),
        (
            format!(
                "ibswinfo: PSU{} status {}, DC power {}, fan status {}",
                psu.index,
                shown(&psu.status),
                shown(&psu.dc_power),
                shown(&psu.fan_status)
            ),
            psu.span,
        ),
        Threshold::new(
            "status, DC power and fan status OK",
            "the switch's power-supply register (MSPS) as ibswinfo decodes it",
        ),
    ))
}

/// The chassis fans out of their range.
fn fan_alarm(s: &SwitchVitals, at: SectionRef<'_>) -> Option<Finding> {
    let span = s.fans_span.filter(|_| !is_ok(s.fan_status.as_deref()))?;
    let status = s.fan_status.as_deref().unwrap_or("?");
    let speeds: Vec<String> = s
        .fans_rpm
        .iter()
        .map(|(n, rpm)| format!("#{n} {rpm}"))
        .collect();
    let speeds = if speeds.is_empty() {
        "none listed".to_owned()
    } else {
        speeds.join(", ")
    };
    Some(alarm(
        s,
        at,
        format!(
            "{}: a fan runs out of its range (fan status {status})",
            name(s)
        ),
        (
            format!("ibswinfo: fan status {status}; fans (rpm): {speeds}"),
            span,
        ),
        Threshold::new(
            "fan status OK",
            "the switch's fan under/over-limit alerts (FORE register) as ibswinfo decodes them",
        ),
    ))
}

/// The temperature at or above the switch's own warning thresholds (not
/// judged where the script prints none).
fn temperature_alarm(s: &SwitchVitals, at: SectionRef<'_>) -> Option<Finding> {
    let (t, (low, high), span) = (s.temperature_c?, s.warn_threshold_c?, s.temperature_span?);
    let (severity, which, limit) = if t >= high {
        (Severity::Error, "high", high)
    } else if t >= low {
        (Severity::Warning, "low", low)
    } else {
        return None;
    };
    Some(
        alarm(
            s,
            at,
            format!(
                "{} runs at {t} °C, at or above its {which} warning threshold ({limit} °C)",
                name(s)
            ),
            (
                format!("ibswinfo: temperature {t} °C, warn threshold {low}/{high} °C (low/high)"),
                span,
            ),
            Threshold::new(
                format!("below {low} °C (warning) and {high} °C (error)"),
                "the switch's own thresholds (MTMP register) as ibswinfo prints them",
            ),
        )
        .severity(severity),
    )
}

/// IB009.
fn check_switch_vitals(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let mut checked = 0;
    for at in ctx.sections() {
        let SectionData::Ibswinfo(info) = &at.section.data else {
            continue;
        };
        for s in &info.switches {
            checked += 1;
            if registers_unread(s) {
                out.push(unread_registers(s, at));
                continue;
            }
            // A director's spine or leaf ASIC reports the chassis supplies
            // it is not wired to: ERROR on every PSU of a unit that runs.
            if !director_member(s) {
                out.extend(s.psus.iter().filter_map(|psu| psu_alarm(s, psu, at)));
            }
            out.extend(fan_alarm(s, at));
            out.extend(temperature_alarm(s, at));
        }
    }
    if checked == 0 {
        return Coverage::Skipped("no ibswinfo output in the input".to_owned());
    }
    Coverage::Checked(checked)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testing::findings_of;

    fn switch(temperature: u32, threshold: Option<&str>, fans: &str) -> String {
        let rule = "-".repeat(49);
        let mut s = format!(
            "{d}\n MF0;ib-leaf-11:MSB7790/U1\n{d}\npart number        | MSB7790-ES2F\nGUID               | 0x1c34da0300cc0011\n{rule}\nPSU0 status        | OK\n     DC power      | OK\n     fan status    | OK\n{rule}\ntemperature (C)    | {temperature}\n",
            d = "=".repeat(49)
        );
        if let Some(t) = threshold {
            s.push_str(&format!("warn threshold (C) | {t} (low/high)\n"));
        }
        s.push_str(&format!(
            "{rule}\nfan status         | {fans}\nfan#1 (rpm)        | 8100\n{rule}\n"
        ));
        s
    }

    #[test]
    fn temperature_is_judged_by_the_switch_own_thresholds() {
        let f = findings_of(&IB009, &switch(72, Some("70/75"), "OK"));
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].severity, Severity::Warning);
        assert!(
            f[0].message.contains("low warning threshold (70 °C)"),
            "{}",
            f[0].message
        );
        let f = findings_of(&IB009, &switch(75, Some("70/75"), "OK"));
        assert_eq!(f[0].severity, Severity::Error);
        assert!(findings_of(&IB009, &switch(69, Some("70/75"), "OK")).is_empty());
        // Without thresholds (older script versions) a temperature is not
        // judged: no number of our own stands in for the switch's.
        assert!(findings_of(&IB009, &switch(95, None, "OK")).is_empty());
    }

    #[test]
    fn a_director_units_chassis_supplies_are_not_its_own() {
        // A spine ASIC of a CS7500 reports ERROR on supplies it is not
        // wired to; its own fans and temperature are still judged.
        let psu_error = |s: String| {
            s.replace("PSU0 status        | OK", "PSU0 status        | ERROR")
                .replace("DC power      | OK", "DC power      | ERROR")
        };
        let spine = psu_error(switch(50, None, "OK")).replace("MSB7790/U1", "CS7500/S01/U1");
        assert!(findings_of(&IB009, &spine).is_empty());
        let spine_fan = psu_error(switch(50, None, "ERROR")).replace("MSB7790/U1", "CS7500/L05/U2");
        let f = findings_of(&IB009, &spine_fan);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(f[0].message.contains("fan"), "{}", f[0].message);
        // A standalone switch's own supply in ERROR is an alarm.
        let f = findings_of(&IB009, &psu_error(switch(50, None, "OK")));
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].severity, Severity::Warning);
    }

    #[test]
    fn statuses_read_with_failed_register_queries_are_not_alarms() {
        let s = switch(80, Some("70/75"), "ERROR")
            .replace("PSU0 status        | OK", "PSU0 status        | ERROR")
            .replace(
                "GUID               | 0x1c34da0300cc0011\n",
                "GUID               | 0x1c34da0300cc0011\nfirmware version   | 0.0000.0000\n",
            );
        let f = findings_of(&IB009, &s);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].severity, Severity::Info);
        assert!(f[0].message.contains("not judged"), "{}", f[0].message);
    }

    #[test]
    fn a_fan_alarm_lists_the_fans_it_saw() {
        let f = findings_of(&IB009, &switch(50, None, "ERROR"));
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            f[0].evidence[0].text.contains("#1 8100"),
            "{:?}",
            f[0].evidence
        );
        assert_eq!(
            f[0].subject.device.as_deref(),
            Some("MF0;ib-leaf-11:MSB7790/U1")
        );
    }
}
