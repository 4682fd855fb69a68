//! `nvidia-smi --query-gpu=FIELD,… --format=csv[,noheader][,nounits]`.
//!
//! Forms handled (driver 580 captures):
//! - with header: `index, name, utilization.gpu [%], power.draw [W], …` —
//!   the header names are nvidia-smi's canonical ones, which can differ
//!   from what was asked (`clocks.sm` → `clocks.current.sm`,
//!   `clocks_throttle_reasons.active` → `clocks_event_reasons.active`);
//! - values `0 %`, `345 MHz`, `77.55 W`, `143771 MiB`, or bare numbers with
//!   `nounits`; `[N/A]`, `[Not Supported]` and other bracketed states are
//!   kept as text and marked missing;
//! - `noheader`: rows only. Nothing in the rows says which tool printed
//!   them, so this form is recognised only after a prompt naming the
//!   command, and the column names come from its `--query-gpu=` list
//!   (see `SectionData::attach_command`).

use crate::model::smi_csv::{CsvRow, CsvValue, SmiCsv};
use crate::parse::text::{is_help, quantity, Unread};
use crate::parse::timestamp::date_time_to_unix;
use crate::parse::{Block, Line, Parsed, Spec};
use std::fmt::Write as _;

pub(crate) const FORMAT: Spec<SmiCsv> = Spec {
    command: |argv| {
        argv.first() == Some(&"nvidia-smi")
            && argv.iter().any(|a| a.starts_with("--query-"))
            && !is_help(argv)
    },
    starts: |b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'_' | b'.'),
    detect,
    parse,
    summary,
    attach_command: Some(attach_command),
    labels: &["name", "uuid"],
};

/// Prefixes of `--query-gpu` field names (`nvidia-smi --help-query-gpu`).
const FIELD_PREFIXES: &[&str] = &[
    "clocks.",
    "clocks_event_reasons.",
    "clocks_throttle_reasons.",
    "ecc.",
    "encoder.",
    "enforced.",
    "fan.",
    "inforom.",
    "memory.",
    "mig.",
    "pci.",
    "pcie.",
    "power.",
    "remapped_rows.",
    "retired_pages.",
    "temperature.",
    "utilization.",
];

/// Single-word field names.
const FIELD_WORDS: &[&str] = &[
    "index",
    "name",
    "uuid",
    "serial",
    "timestamp",
    "driver_version",
    "count",
    "pstate",
    "vbios_version",
    "persistence_mode",
    "compute_mode",
    "display_mode",
    "accounting.mode",
    "gpu_name",
    "gpu_uuid",
    "gpu_bus_id",
    "pid",
    "process_name",
    "used_memory",
];

/// `utilization.gpu [%]` → (`utilization.gpu`, Some(`%`)).
fn header_field(text: &str) -> Option<(&str, Option<&str>)> {
    let t = text.trim();
    let (name, unit) = match t.split_once(" [") {
        Some((n, rest)) => (n.trim(), Some(rest.strip_suffix(']')?)),
        None => (t, None),
    };
    let ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '.');
    ok.then_some((name, unit))
}

fn known_field(name: &str) -> bool {
    FIELD_WORDS.contains(&name) || FIELD_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// A header line: every column a field name, at least one a known one.
fn header(text: &str) -> Option<Vec<(&str, Option<&str>)>> {
    let cols: Option<Vec<_>> = text.split(',').map(header_field).collect();
    let cols = cols?;
    cols.iter().any(|(n, _)| known_field(n)).then_some(cols)
}

/// Whether `t`, met after a paragraph break under this CSV, may still be
/// one of its rows: it has as many values as the line above the break
/// (the header or the last row). nvidia-smi prints every row with the
/// header's count, so a line with another count there is the author's
/// (`Thanks, that is what I needed`), not a row it cut.
pub(crate) fn may_be_its_line(t: &str, above: &[Line<'_>]) -> bool {
    let values = |text: &str| crate::parse::text::without_note(text).split(',').count();
    above
        .iter()
        .rev()
        .find(|l| !l.is_blank())
        .is_none_or(|l| values(l.text()) == values(t))
}

/// Recognises a header followed by a row with as many values, or a lone
/// header (the query matched no GPU).
fn detect(lines: &[Line<'_>]) -> Option<Block> {
    let cols = header(lines.first()?.text())?;
    match lines.iter().skip(1).find(|l| !l.is_blank()) {
        Some(next) if header(next.text()).is_none() => {
            (next.text().split(',').count() == cols.len()).then(|| Block::keyed("csv"))
        }
        Some(_) => None,
        None => (cols.len() > 1).then(|| Block::keyed("csv")),
    }
}

/// Reads the CSV rows (and header, if printed).
#[must_use]
pub fn parse(lines: &[Line<'_>]) -> Parsed<SmiCsv> {
    let mut unread = Unread::default();
    let mut out = SmiCsv::default();
    for line in lines.iter().filter(|l| !l.is_blank()) {
        let t = line.text();
        if !out.header && out.rows.is_empty() {
            if let Some(cols) = header(t) {
                out.header = true;
                out.fields = cols.iter().map(|(n, _)| (*n).to_owned()).collect();
                out.units = cols.iter().map(|(_, u)| u.map(str::to_owned)).collect();
                continue;
            }
        }
        // `…, No, No     # pending Yes -> No`: a note an author added
        // after the row.
        let t = crate::parse::text::without_note(t);
        let cells: Vec<&str> = t.split(',').map(str::trim).collect();
        let expected = out
            .fields
            .len()
            .max(out.rows.first().map_or(0, |r| r.values.len()));
        if expected > 0 && cells.len() != expected {
            unread.line(
                line,
                &format!(
                    "{} value(s) where the other rows have {expected}",
                    cells.len()
                ),
            );
            continue;
        }
        let values = cells
            .iter()
            .enumerate()
            .map(|(i, c)| value(c, out.units.get(i).and_then(Option::as_deref)))
            .collect();
        out.rows.push(CsvRow {
            values,
            timestamp_unix_ms: None,
            line: line.number,
        });
    }
    fill_timestamps(&mut out);
    Parsed {
        value: out,
        warnings: unread.finish(),
    }
}

fn value(text: &str, header_unit: Option<&str>) -> CsvValue {
    let (number, unit) = match quantity(text) {
        // `0x0000000000000001` is a bit mask, not the number 0.
        Some((n, u)) if !text.starts_with("0x") && !u.contains(char::is_whitespace) => {
            let unit = if u.is_empty() { header_unit } else { Some(u) };
            (Some(n), unit.map(str::to_owned))
        }
        _ => (None, None),
    };
    CsvValue {
        text: text.to_owned(),
        number,
        unit,
    }
}

/// `2026/11/30 00:10:31.123` → epoch milliseconds (as UTC).
fn timestamp_ms(text: &str) -> Option<i64> {
    let (date, time) = text.trim().split_once(' ')?;
    let (hms, ms) = time.split_once('.').unwrap_or((time, "0"));
    let secs = date_time_to_unix(&date.replace('/', ""), hms)?;
    let ms: i64 = ms.get(..3.min(ms.len()))?.parse().ok()?;
    Some(secs * 1000 + ms)
}

fn fill_timestamps(out: &mut SmiCsv) {
    if let Some(i) = out.column("timestamp") {
        for row in &mut out.rows {
            row.timestamp_unix_ms = row.values.get(i).and_then(|v| timestamp_ms(&v.text));
        }
    }
}

/// Takes the field names of `--query-gpu=a,b,c` (or `--query-gpu a,b,c`).
pub(crate) fn attach_command(csv: &mut SmiCsv, argv: &[&str]) {
    let query = argv.iter().enumerate().find_map(|(i, a)| {
        let rest = a.strip_prefix("--query-")?;
        match rest.split_once('=') {
            Some((_, list)) => Some(list.to_owned()),
            None => argv.get(i + 1).map(|s| (*s).to_owned()),
        }
    });
    let Some(list) = query else {
        return;
    };
    csv.query = list.split(',').map(|f| f.trim().to_owned()).collect();
    if !csv.header && csv.fields.is_empty() {
        csv.fields = csv.query.clone();
    }
    fill_timestamps(csv);
}

/// `2 row(s) × 9 column(s): index, name, …`.
#[must_use]
pub fn summary(csv: &SmiCsv) -> String {
    let cols = csv
        .rows
        .first()
        .map_or(csv.fields.len(), |r| r.values.len());
    let mut s = format!("{} row(s) × {cols} column(s)", csv.rows.len());
    if csv.fields.is_empty() {
        s.push_str(", column names unknown (noheader without the command line)");
    } else {
        let shown: Vec<&str> = csv.fields.iter().take(4).map(String::as_str).collect();
        let more = if csv.fields.len() > 4 { ", …" } else { "" };
        let _ = write!(s, ": {}{more}", shown.join(", "));
    }
    s
}

/// Renders the CSV as the tool prints it (with a header when the model
/// knows the field names).
#[must_use]
pub fn render(csv: &SmiCsv) -> String {
    let mut s = String::new();
    if csv.header {
        let cols: Vec<String> = csv
            .fields
            .iter()
            .enumerate()
            .map(|(i, f)| match csv.units.get(i).and_then(Option::as_deref) {
                Some(u) => format!("{f} [{u}]"),
                None => f.clone(),
            })
            .collect();
        let _ = writeln!(s, "{}", cols.join(", "));
    }
    for r in &csv.rows {
        let vals: Vec<&str> = r.values.iter().map(|v| v.text.as_str()).collect();
        let _ = writeln!(s, "{}", vals.join(", "));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::lines_of;

    const WITH_HEADER: &str = "timestamp, index, name, utilization.gpu [%], memory.used [MiB], power.draw [W], temperature.gpu, clocks_event_reasons.hw_slowdown
2026/11/30 00:10:31.123, 0, NVIDIA H200, 100 %, 1551 MiB, 194.20 W, 35, Not Active
2026/11/30 00:10:32.125, 1, NVIDIA H200, [N/A], [Not Supported], 180.00 W, 37, Active
";

    #[test]
    fn a_note_after_a_row_is_not_a_value() {
        let text = "gpu_uuid, remapped_rows.pending, remapped_rows.failure\n\
                    GPU-1f2e3d4c-0000-1111-2222-333344445555, Yes, No     # before the reset, row 1, 2\n";
        let p = parse(&lines_of(text));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        assert_eq!(p.value.rows[0].values.len(), 3);
        assert_eq!(p.value.rows[0].values[2].text, "No");
    }

    #[test]
    fn header_names_units_and_missing_values() {
        let p = parse(&lines_of(WITH_HEADER));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let c = &p.value;
        assert!(c.header);
        assert_eq!(c.fields[3], "utilization.gpu");
        assert_eq!(c.units[4].as_deref(), Some("MiB"));
        let r0 = &c.rows[0];
        let power = c.value(r0, "power.draw").unwrap();
        assert_eq!(
            (power.number, power.unit.as_deref()),
            (Some(194.2), Some("W"))
        );
        assert_eq!(c.value(r0, "memory.used").unwrap().number, Some(1551.0));
        assert_eq!(c.value(r0, "name").unwrap().number, None);
        let r1 = &c.rows[1];
        assert!(c.value(r1, "utilization.gpu").unwrap().is_missing());
        assert!(c.value(r1, "memory.used").unwrap().is_missing());
        assert_eq!(
            c.value(r1, "clocks_throttle_reasons.hw_slowdown")
                .unwrap()
                .text,
            "Active"
        );
        // `date -u -d '2026-11-30 00:10:32' +%s` = 1795997432
        assert_eq!(r1.timestamp_unix_ms, Some(1_795_997_432_125));
        assert_eq!(r1.line, 3);
    }

    #[test]
    fn noheader_takes_names_from_the_command() {
        let text = "0, NVIDIA H200, 31, 77.32, 0x0000000000000001, Not Active\n1, NVIDIA H200, 33, 78.00, 0x0000000000000001, Not Active\n";
        let mut p = parse(&lines_of(text));
        assert!(p.warnings.is_empty());
        assert!(p.value.fields.is_empty());
        assert!(summary(&p.value).contains("column names unknown"));
        attach_command(
            &mut p.value,
            &[
                "nvidia-smi",
                "--query-gpu=index,name,temperature.gpu,power.draw,clocks_event_reasons.active,clocks_event_reasons.hw_thermal_slowdown",
                "--format=csv,noheader,nounits",
            ],
        );
        let c = &p.value;
        let r = &c.rows[1];
        assert_eq!(c.value(r, "temperature.gpu").unwrap().number, Some(33.0));
        assert_eq!(c.value(r, "power.draw").unwrap().number, Some(78.0));
        assert_eq!(
            c.value(r, "clocks_event_reasons.active").unwrap().number,
            None
        );
        assert_eq!(
            summary(c),
            "2 row(s) × 6 column(s): index, name, temperature.gpu, power.draw, …"
        );
    }

    #[test]
    fn rows_of_the_wrong_width_are_warned_about() {
        let text = "index, temperature.gpu\n0, 31\n1, 33, extra\n";
        let p = parse(&lines_of(text));
        assert_eq!(p.value.rows.len(), 1);
        assert_eq!(p.warnings[0].span.first_line, 3);
    }

    #[test]
    fn detection_needs_query_field_names() {
        assert!(detect(&lines_of("index, name, temperature.gpu\n0, H200, 31")).is_some());
        assert!(detect(&lines_of("index, name, temperature.gpu\n0, H200")).is_none());
        assert!(detect(&lines_of("a, b\n1, 2")).is_none());
        assert!(detect(&lines_of("Name, Value\nx, 1")).is_none());
        assert!(detect(&lines_of("0, NVIDIA H200, 31")).is_none());
    }

    #[test]
    fn render_then_parse_gives_the_same_model() {
        let first = parse(&lines_of(WITH_HEADER)).value;
        let again = parse(&lines_of(&render(&first))).value;
        assert_eq!(first, again);
    }
}
