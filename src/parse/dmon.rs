//! Scrolling monitor tables: `nvidia-smi dmon`, `nvidia-smi pmon` and
//! `dcgmi dmon`.
//!
//! `nvidia-smi dmon` / `pmon` (driver 580 captures): a header line
//! `# gpu    pwr  gtemp …` and a units line `# Idx      W      C …`, then one
//! row per GPU per sample, right-aligned under the headers. `-s` picks the
//! column groups (`pucvmet`: power/temperature, utilisation, clocks,
//! violations, memory, ECC/PCIe replay, PCIe throughput); `-o D`/`T`/`DT`
//! add `Date` (`YYYYMMDD`) and `Time` (`HH:MM:SS`) columns before `gpu`;
//! `pmon` prints `# gpu pid type … command` with `-` for idle slots. Long
//! runs repeat the two header lines; an identical repeat continues the
//! table.
//!
//! `dcgmi dmon -e 1009,1010,1011,1012 …`: no real capture exists, so the
//! format here follows NVIDIA/DCGM `dcgmi/DeviceMonitor.cpp`
//! (`SetHeaderForOutput`, `LockWatchAndUpdate`): a header `#` +
//! `setw(7) "Entity"` + each field's short name right-aligned in its
//! display width + 2 (`PCITX PCIRX NVLTX NVLRX` for the profiling fields
//! 1009–1012), a units line starting `Id`, rows `GPU 0` (or `Switch`,
//! `GPU-I`, `GPU-CI`, `vGPU`) followed by the values (`N/A` when blank,
//! doubles with three decimals, strings possibly containing spaces, which
//! are then cut by the header's column ends). The header repeats every 14
//! samples after an empty line, and Ctrl-C prints `dmon was stopped due to
//! receiving a signal.`

use crate::model::dmon::{
    Monitor, MonitorColumn, MonitorRow, MonitorTable, MonitorTool, MonitorValue,
};
use crate::parse::text::{is_help, quantity, Unread};
use crate::parse::timestamp::date_time_to_unix;
use crate::parse::{Block, Line, Parsed, Spec};
use std::fmt::Write as _;

pub(crate) const SMI_FORMAT: Spec<Monitor> = Spec {
    command: |argv| {
        argv.first() == Some(&"nvidia-smi")
            && matches!(argv.get(1), Some(&"dmon") | Some(&"pmon"))
            && !is_help(argv)
    },
    starts: |b| b == b'#',
    detect: |lines| detect(lines, false),
    parse,
    summary,
    attach_command: None,
    labels: &[],
};

pub(crate) const DCGMI_FORMAT: Spec<Monitor> = Spec {
    // `dcgmi dmon -l` lists the fields dmon could watch (long name, short
    // name, id): a catalogue, not a reading. Taken for dmon's output, each
    // of its lines was an unread line with "no monitor header", and the
    // advice was to paste the whole output.
    command: |argv| {
        argv.first() == Some(&"dcgmi")
            && argv.get(1) == Some(&"dmon")
            && !is_help(argv)
            && !argv.iter().any(|a| *a == "-l" || *a == "--list")
    },
    starts: |b| b == b'#',
    detect: |lines| detect(lines, true),
    parse,
    summary,
    attach_command: Some(attach_command),
    labels: &[],
};

/// Short names of DCGM fields this version knows by id (dcgm_fields.h;
/// the profiling fields are the ones NVLink diagnosis uses).
const DCGM_FIELDS: &[(&str, u16)] = &[
    ("TMPTR", 150),
    ("POWER", 155),
    ("GPUTL", 203),
    ("MCUTL", 204),
    ("GRACT", 1001),
    ("SMACT", 1002),
    ("SMOCC", 1003),
    ("TENSO", 1004),
    ("DRAMA", 1005),
    ("FP64A", 1006),
    ("FP32A", 1007),
    ("FP16A", 1008),
    ("PCITX", 1009),
    ("PCIRX", 1010),
    ("NVLTX", 1011),
    ("NVLRX", 1012),
];

/// Entity prefixes dcgmi prints (`HelperGetGroupIdPrefix`).
const ENTITIES: &[&str] = &[
    "GPU", "vGPU", "Switch", "GPU-I", "GPU-CI", "Link", "CPU", "Core",
];

/// A header line split into words with the column where each word ends.
#[derive(Debug, Clone, PartialEq)]
struct Header {
    tool: MonitorTool,
    /// Column names after the entity column, with their end offsets.
    columns: Vec<(String, usize)>,
    /// For nvidia-smi: position of the `gpu` word among all words.
    entity_at: usize,
}

/// Words of a line with the byte offset just past each.
fn words_with_ends(t: &str) -> Vec<(&str, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in t.char_indices().chain(std::iter::once((t.len(), ' '))) {
        match (c.is_whitespace(), start) {
            (true, Some(s)) => {
                if let Some(w) = t.get(s..i) {
                    out.push((w, i));
                }
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    out
}

fn header(t: &str) -> Option<Header> {
    let rest = t.trim_start().strip_prefix('#')?;
    let offset = t.len() - rest.len();
    let words: Vec<(&str, usize)> = words_with_ends(rest)
        .into_iter()
        .map(|(w, e)| (w, e + offset))
        .collect();
    let first = words.first()?.0;
    if first == "Entity" {
        let columns = words
            .iter()
            .skip(1)
            .map(|(w, e)| ((*w).to_owned(), *e))
            .collect();
        return Some(Header {
            tool: MonitorTool::DcgmiDmon,
            columns,
            entity_at: 0,
        });
    }
    let entity_at = words.iter().position(|(w, _)| *w == "gpu")?;
    let before_ok = words
        .iter()
        .take(entity_at)
        .all(|(w, _)| w.eq_ignore_ascii_case("date") || w.eq_ignore_ascii_case("time"));
    if !before_ok || words.len() < 2 {
        return None;
    }
    let tool = if words.get(entity_at + 1).is_some_and(|(w, _)| *w == "pid") {
        MonitorTool::NvidiaSmiPmon
    } else {
        MonitorTool::NvidiaSmiDmon
    };
    let columns = words
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != entity_at)
        .map(|(_, (w, e))| ((*w).to_owned(), *e))
        .collect();
    Some(Header {
        tool,
        columns,
        entity_at,
    })
}

/// The units line under a header: `# Idx W C …` (nvidia-smi) or `Id …` (dcgmi).
fn units_line(t: &str, h: &Header) -> Option<Vec<Option<String>>> {
    match h.tool {
        MonitorTool::DcgmiDmon => {
            let trimmed = t.trim_start();
            if !(trimmed.starts_with("Id") || trimmed.starts_with("ID")) || trimmed.starts_with('#')
            {
                return None;
            }
            let words = words_with_ends(t);
            let units = h
                .columns
                .iter()
                .map(|(_, end)| {
                    words
                        .iter()
                        .skip(1)
                        .find(|(_, e)| e == end)
                        .map(|(w, _)| (*w).to_owned())
                })
                .collect();
            Some(units)
        }
        _ => {
            let rest = t.trim_start().strip_prefix('#')?;
            let words: Vec<&str> = rest.split_whitespace().collect();
            if words.get(h.entity_at) != Some(&"Idx") || words.len() != h.columns.len() + 1 {
                return None;
            }
            Some(
                words
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| *i != h.entity_at)
                    .map(|(_, w)| Some((*w).to_owned()))
                    .collect(),
            )
        }
    }
}

fn detect(lines: &[Line<'_>], dcgmi: bool) -> Option<Block> {
    let first = lines.first()?;
    let h = header(first.text())?;
    if (h.tool == MonitorTool::DcgmiDmon) != dcgmi {
        return None;
    }
    let next = lines.iter().skip(1).find(|l| !l.is_blank())?;
    let ok =
        units_line(next.text(), &h).is_some() || (dcgmi && dcgmi_row(next.text(), &h).is_some());
    // Each header line has its own key, so repeated headers stay in one section.
    ok.then(|| Block::keyed(format!("header@{}", first.number)))
}

/// Splits a dcgmi row into entity and values.
fn dcgmi_row<'t>(t: &'t str, h: &Header) -> Option<(String, Vec<&'t str>)> {
    let words = words_with_ends(t);
    let (prefix, _) = words.first()?;
    let (id, id_end) = words.get(1)?;
    if !ENTITIES.contains(prefix) || !id.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let entity = format!("{prefix} {id}");
    let values: Vec<&str> = words.iter().skip(2).map(|(w, _)| *w).collect();
    if values.len() == h.columns.len() {
        return Some((entity, values));
    }
    // Strings with spaces: cut at the header's column ends.
    let mut out = Vec::new();
    let mut start = *id_end;
    for (_, end) in &h.columns {
        let piece = t.get(start..(*end).min(t.len()))?.trim();
        out.push(piece);
        start = *end;
    }
    let tail_empty = t.get(start..).is_none_or(|r| r.trim().is_empty());
    (tail_empty && out.iter().all(|v| !v.is_empty())).then_some((entity, out))
}

/// Reads any of the three monitors; the header says which.
#[must_use]
pub fn parse(lines: &[Line<'_>]) -> Parsed<Monitor> {
    let mut unread = Unread::default();
    let mut tables: Vec<MonitorTable> = Vec::new();
    let mut current: Option<Header> = None;
    let mut tool = None;
    let mut interrupted = false;
    let mut expect_units = false;
    for line in lines.iter().filter(|l| !l.is_blank()) {
        let t = line.text();
        if let Some(h) = header(t) {
            tool.get_or_insert(h.tool);
            let same = current.as_ref().is_some_and(|c| {
                c.tool == h.tool
                    && c.columns
                        .iter()
                        .map(|x| &x.0)
                        .eq(h.columns.iter().map(|x| &x.0))
            });
            if let (true, Some(table)) = (same, tables.last_mut()) {
                table.span = table.span.join(line.span());
            } else {
                tables.push(MonitorTable {
                    columns: h
                        .columns
                        .iter()
                        .map(|(name, _)| MonitorColumn {
                            name: name.clone(),
                            unit: None,
                            field_id: field_id(name),
                        })
                        .collect(),
                    rows: Vec::new(),
                    span: line.span(),
                });
            }
            current = Some(h);
            expect_units = true;
            continue;
        }
        let Some(h) = current.as_ref() else {
            unread.line(
                line,
                "no monitor header (`# gpu …` or `#Entity …`) before this line",
            );
            continue;
        };
        if expect_units {
            expect_units = false;
            if let Some(units) = units_line(t, h) {
                if let Some(table) = tables.last_mut() {
                    table.span = table.span.join(line.span());
                    for (c, u) in table.columns.iter_mut().zip(units) {
                        c.unit = c.unit.take().or(u);
                    }
                }
                continue;
            }
        }
        if t.trim() == "dmon was stopped due to receiving a signal." {
            interrupted = true;
            continue;
        }
        let row = match h.tool {
            MonitorTool::DcgmiDmon => dcgmi_row(t, h),
            _ => smi_row(t, h),
        };
        let Some((entity, values)) = row else {
            unread.line(
                line,
                &format!("not a row of the {} column(s) above", h.columns.len()),
            );
            continue;
        };
        let Some(table) = tables.last_mut() else {
            continue;
        };
        table.span = table.span.join(line.span());
        let gpu = match h.tool {
            MonitorTool::DcgmiDmon => entity.strip_prefix("GPU ").and_then(|n| n.parse().ok()),
            _ => entity.parse().ok(),
        };
        let values: Vec<MonitorValue> = values
            .iter()
            .map(|v| MonitorValue {
                text: (*v).to_owned(),
                number: quantity(v).filter(|(_, u)| u.is_empty()).map(|(n, _)| n),
            })
            .collect();
        let timestamp_unix = timestamp(&table.columns, &values);
        table.rows.push(MonitorRow {
            entity,
            gpu,
            values,
            timestamp_unix,
            line: line.number,
        });
    }
    let value = Monitor {
        tool: tool.unwrap_or(MonitorTool::NvidiaSmiDmon),
        tables,
        interrupted,
    };
    Parsed {
        value,
        warnings: unread.finish(),
    }
}

/// An nvidia-smi row: as many words as the header (pmon's last `command`
/// column takes any extra words).
fn smi_row<'t>(t: &'t str, h: &Header) -> Option<(String, Vec<&'t str>)> {
    let mut words: Vec<&str> = t.split_whitespace().collect();
    let expected = h.columns.len() + 1;
    if words.len() > expected && h.tool == MonitorTool::NvidiaSmiPmon {
        words.truncate(expected);
    }
    if words.len() != expected {
        return None;
    }
    let entity = words.remove(h.entity_at);
    if !entity.bytes().all(|b| b.is_ascii_digit()) || entity.is_empty() {
        return None;
    }
    Some((entity.to_owned(), words))
}

fn field_id(name: &str) -> Option<u16> {
    DCGM_FIELDS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, id)| *id)
}

fn timestamp(columns: &[MonitorColumn], values: &[MonitorValue]) -> Option<i64> {
    let find = |n: &str| {
        columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(n))
            .and_then(|i| values.get(i))
    };
    date_time_to_unix(&find("date")?.text, &find("time")?.text)
}

/// Sets DCGM field ids from `dcgmi dmon -e 1011,1012`, in column order.
pub(crate) fn attach_command(m: &mut Monitor, argv: &[&str]) {
    let Some(i) = argv.iter().position(|a| *a == "-e" || *a == "--field-ids") else {
        return;
    };
    let Some(list) = argv.get(i + 1) else {
        return;
    };
    let ids: Option<Vec<u16>> = list.split(',').map(|s| s.trim().parse().ok()).collect();
    let Some(ids) = ids else {
        return;
    };
    for table in &mut m.tables {
        if table.columns.len() == ids.len() {
            for (c, id) in table.columns.iter_mut().zip(&ids) {
                c.field_id = Some(*id);
            }
        }
    }
}

/// `10 sample row(s) of 2 GPU(s); columns pwr, gtemp, …`.
#[must_use]
pub fn summary(m: &Monitor) -> String {
    let rows: usize = m.tables.iter().map(|t| t.rows.len()).sum();
    let mut entities: Vec<&str> = m
        .tables
        .iter()
        .flat_map(|t| t.rows.iter().map(|r| r.entity.as_str()))
        .collect();
    entities.sort_unstable();
    entities.dedup();
    let cols: Vec<&str> = m
        .tables
        .first()
        .map(|t| t.columns.iter().take(6).map(|c| c.name.as_str()).collect())
        .unwrap_or_default();
    let mut s = format!("{rows} row(s) of {} entit(ies)", entities.len());
    if !cols.is_empty() {
        let _ = write!(s, "; columns {}", cols.join(", "));
    }
    if m.interrupted {
        s.push_str("; interrupted");
    }
    s
}

/// Renders the tables in the tool's layout: right-aligned columns one
/// space apart (7 wide for nvidia-smi, 15 for dcgmi, whose real widths
/// vary per field and are not reproduced).
#[must_use]
pub fn render(m: &Monitor) -> String {
    let mut s = String::new();
    for t in &m.tables {
        match m.tool {
            MonitorTool::DcgmiDmon => {
                let _ = write!(s, "#Entity ");
                for c in &t.columns {
                    let _ = write!(s, " {:>15}", c.name);
                }
                let _ = write!(s, "\n{:<8}", "Id");
                for c in &t.columns {
                    let _ = write!(s, " {:>15}", c.unit.as_deref().unwrap_or(""));
                }
                s.push('\n');
                for r in &t.rows {
                    let _ = write!(s, "{:>8}", r.entity);
                    for v in &r.values {
                        let _ = write!(s, " {:>15}", v.text);
                    }
                    s.push('\n');
                }
            }
            _ => {
                let _ = write!(s, "# gpu");
                for c in &t.columns {
                    let _ = write!(s, " {:>7}", c.name);
                }
                let _ = write!(s, "\n# Idx");
                for c in &t.columns {
                    let _ = write!(s, " {:>7}", c.unit.as_deref().unwrap_or("-"));
                }
                s.push('\n');
                for r in &t.rows {
                    let _ = write!(s, "{:>5}", r.entity);
                    for v in &r.values {
                        let _ = write!(s, " {:>7}", v.text);
                    }
                    s.push('\n');
                }
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::lines_of;
    use crate::span::LineSpan;

    const DMON_DT: &str = "#Date       Time        gpu    pwr  gtemp     sm  rxpci
#YYYYMMDD   HH:MM:SS    Idx      W      C      %   MB/s
 20261130   00:10:31      0    186     35     50      1
 20261130   00:10:31      1    190     37     51     12
#Date       Time        gpu    pwr  gtemp     sm  rxpci
#YYYYMMDD   HH:MM:SS    Idx      W      C      %   MB/s
 20261130   00:10:32      0    186     35    100      -
";

    #[test]
    fn dmon_with_date_and_time_and_a_repeated_header() {
        let p = parse(&lines_of(DMON_DT));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let m = &p.value;
        assert_eq!(m.tool, MonitorTool::NvidiaSmiDmon);
        assert_eq!(m.tables.len(), 1);
        let t = &m.tables[0];
        assert_eq!(t.rows.len(), 3);
        assert_eq!(t.columns[2].name, "pwr");
        assert_eq!(t.columns[2].unit.as_deref(), Some("W"));
        let r = &t.rows[1];
        assert_eq!(r.gpu, Some(1));
        assert_eq!(t.value(r, "rxpci").unwrap().number, Some(12.0));
        // `date -u -d '2026-11-30 00:10:31' +%s`
        assert_eq!(r.timestamp_unix, Some(1_795_997_431));
        assert_eq!(t.value(&t.rows[2], "rxpci").unwrap().number, None);
        assert_eq!(t.span, LineSpan::new(1, 7));
    }

    #[test]
    fn pmon_rows_with_idle_slots_and_commands() {
        let text = "# gpu         pid   type     sm    mem    command\n# Idx           #    C/G      %      %    name\n    0          -     -      -      -    -\n    1      12345     C     50     11    python train.py\n";
        let p = parse(&lines_of(text));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        assert_eq!(p.value.tool, MonitorTool::NvidiaSmiPmon);
        let t = &p.value.tables[0];
        assert_eq!(t.value(&t.rows[1], "pid").unwrap().number, Some(12345.0));
        assert_eq!(t.value(&t.rows[1], "command").unwrap().text, "python");
    }

    /// Laid out as DeviceMonitor.cpp does: `#` + setw(7) "Entity", each
    /// field in width+2, values right-aligned.
    const DCGMI: &str = "# Entity           PCITX           PCIRX           NVLTX           NVLRX
      Id               B               B               B               B
    GPU 0     1234567.000        2000.000  51234567890.000             N/A
    GPU 1             N/A             N/A             N/A             N/A

# Entity           PCITX           PCIRX           NVLTX           NVLRX
      Id               B               B               B               B
    GPU 0     1234999.000        2100.000  52234567890.000        1000.000

dmon was stopped due to receiving a signal.
";

    #[test]
    fn dcgmi_dmon_fields_by_name_and_id() {
        let p = parse(&lines_of(DCGMI));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let m = &p.value;
        assert_eq!(m.tool, MonitorTool::DcgmiDmon);
        assert!(m.interrupted);
        let t = &m.tables[0];
        assert_eq!(t.rows.len(), 3);
        assert_eq!(t.columns[2].field_id, Some(1011));
        assert_eq!(t.columns[0].unit.as_deref(), Some("B"));
        assert_eq!(
            t.value(&t.rows[0], "1011").unwrap().number,
            Some(51_234_567_890.0)
        );
        assert_eq!(t.value(&t.rows[0], "nvlrx").unwrap().number, None);
        assert_eq!(t.rows[2].gpu, Some(0));
        assert_eq!(t.rows[2].line, 8);
        assert_eq!(
            summary(m),
            "3 row(s) of 2 entit(ies); columns PCITX, PCIRX, NVLTX, NVLRX; interrupted"
        );
    }

    #[test]
    fn dcgmi_strings_with_spaces_are_cut_at_column_ends() {
        let text = "# Entity                   DEVNAME  POWER\n      Id                                W\n    GPU 0          NVIDIA H200     77.000\n";
        let p = parse(&lines_of(text));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let t = &p.value.tables[0];
        assert_eq!(t.value(&t.rows[0], "DEVNAME").unwrap().text, "NVIDIA H200");
        assert_eq!(t.value(&t.rows[0], "155").unwrap().number, Some(77.0));
        assert_eq!(t.columns[1].unit.as_deref(), Some("W"));
        assert_eq!(t.columns[0].unit, None);
    }

    #[test]
    fn command_line_field_ids_win() {
        let mut p = parse(&lines_of(
            "# Entity  AAAAA  BBBBB\n      Id\n    GPU 0      1      2\n",
        ))
        .value;
        attach_command(&mut p, &["dcgmi", "dmon", "-e", "1009,1010", "-c", "1"]);
        let t = &p.tables[0];
        assert_eq!(t.value(&t.rows[0], "1010").unwrap().number, Some(2.0));
    }

    #[test]
    fn a_different_header_starts_a_new_table_and_bad_rows_warn() {
        let text = "# gpu  pwr\n# Idx    W\n    0   77\n# gpu  rxpci  txpci\n# Idx   MB/s   MB/s\n    0   0   1\n    0   0\n";
        let p = parse(&lines_of(text));
        assert_eq!(p.value.tables.len(), 2);
        assert_eq!(p.value.tables[1].rows.len(), 1);
        assert_eq!(p.warnings.len(), 1);
        assert_eq!(p.warnings[0].span.first_line, 7);
    }

    #[test]
    fn detection_is_specific() {
        assert!(detect(&lines_of("# gpu    pwr\n# Idx      W\n"), false).is_some());
        assert!(detect(&lines_of("# gpu    pwr\n# Idx      W\n"), true).is_none());
        assert!(detect(
            &lines_of("# Port counters: Lid 1\nPortSelect:......1"),
            false
        )
        .is_none());
        assert!(detect(&lines_of("# gpu    pwr\n    0     77\n"), false).is_none());
        assert!(detect(&lines_of("#Entity  NVLTX\n      Id   B\n"), true).is_some());
    }

    #[test]
    fn render_then_parse_gives_the_same_model() {
        for text in [DMON_DT, DCGMI] {
            let first = parse(&lines_of(text)).value;
            let again = parse(&lines_of(&render(&first)));
            assert!(again.warnings.is_empty(), "{:?}", again.warnings);
            let strip = |mut m: Monitor| {
                m.interrupted = false;
                for t in &mut m.tables {
                    t.span = LineSpan::line(1);
                    t.rows.iter_mut().for_each(|r| r.line = 0);
                }
                m
            };
            assert_eq!(strip(first), strip(again.value));
        }
    }
}
