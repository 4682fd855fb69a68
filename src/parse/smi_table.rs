//! `nvidia-smi` without arguments: the boxed summary table.
//!
//! ```text
//! +-----------------------------------------------------------------------------------------+
//! | NVIDIA-SMI 580.159.04             Driver Version: 580.159.04     CUDA Version: 13.0     |
//! +-----------------------------------------+------------------------+----------------------+
//! | GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
//! | Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
//! |                                         |                        |               MIG M. |
//! |=========================================+========================+======================|
//! |   0  NVIDIA H200                    On  |   00000000:00:06.0 Off |                    0 |
//! | N/A   33C    P0             77W /  700W |       0MiB / 143771MiB |      0%      Default |
//! |                                         |                        |             Disabled |
//! +-----------------------------------------+------------------------+----------------------+
//! ```
//!
//! Drivers up to 535 print the same cells in 79 columns (`| GPU  Name
//! Persistence-M| Bus-Id        Disp.A |`, a `|----…` rule under the
//! banner); before MIG (driver < 450) a block has two rows, not three. The
//! header says how many: its rows between the rule under the banner and
//! the `|===…` rule. Then come the `MIG devices:` table (on MIG-enabled
//! GPUs) and the `Processes:` table, whose rows are read too (no rule
//! judges them).
//!
//! A GPU block with fewer rows than the header (the paste ended inside
//! it) or a row without its closing `|` (cut at the right by a terminal or
//! a chat tool) is marked partial: its missing cells are unknown. A cell
//! that prints `ERR!` (NVML could not read the field) is recorded by its
//! column name wherever it is read.

use crate::model::partial::{Partial, PartialReason};
use crate::model::smi_table::{SmiTable, TableGpu, TableMigDevice, TableProcess, ERR};
use crate::parse::text::Unread;
use crate::parse::{Block, Line, Parsed, Spec};
use std::fmt::Write as _;

pub(crate) const FORMAT: Spec<SmiTable> = Spec {
    // Not claimed by command: bare `nvidia-smi` is how the input layer
    // tells a tool name from prose, and the table is told by its shape.
    command: |_| false,
    starts: |b| b == b'+' || b == b'|',
    detect,
    parse,
    summary,
    attach_command: None,
    labels: &[],
};

/// The column names of a block's cells, row by row (`MIG M.` alone in the
/// third row).
const CELLS: [[&str; 3]; 3] = [
    [
        "GPU  Name  Persistence-M",
        "Bus-Id  Disp.A",
        "Volatile Uncorr. ECC",
    ],
    [
        "Fan  Temp  Perf  Pwr:Usage/Cap",
        "Memory-Usage",
        "GPU-Util  Compute M.",
    ],
    ["", "", "MIG M."],
];

/// `text` after leading spaces and tabs (bytewise).
fn after_indent(text: &str) -> &str {
    let n = text
        .bytes()
        .position(|b| b != b' ' && b != b'\t')
        .unwrap_or(text.len());
    text.get(n..).unwrap_or_default()
}

/// `| NVIDIA-SMI 580.…`: the banner (after the indent).
fn is_banner(t: &str) -> bool {
    t.strip_prefix('|')
        .is_some_and(|r| after_indent(r).starts_with("NVIDIA-SMI "))
}

/// `| GPU  Name …`: the GPU table's first header row.
fn is_gpu_header(t: &str) -> bool {
    t.strip_prefix('|').is_some_and(|r| {
        after_indent(r)
            .strip_prefix("GPU")
            .is_some_and(|r| after_indent(r).starts_with("Name"))
    })
}

/// A table rule: `+---+---+`, `|----+---|`, `|====+===|`. `Some(true)` for
/// a rule of `=`.
fn rule(t: &str) -> Option<bool> {
    let t = t.trim_end();
    let b = t.as_bytes();
    if b.len() < 3 || !matches!(b.first(), Some(b'+' | b'|')) {
        return None;
    }
    let mut equals = false;
    let mut dashes = false;
    for &c in b {
        match c {
            b'=' => equals = true,
            b'-' => dashes = true,
            b'+' | b'|' => {}
            _ => return None,
        }
    }
    (equals || dashes).then_some(equals)
}

/// A block starts at the table's top rule with the banner under it, at the
/// banner itself, or at the `| GPU  Name` header of a table pasted without
/// its banner. Only the top rule keys the block `nvidia-smi` (a second one
/// is a second run); the others are keyed by their line, so that they
/// continue a table already open. Two byte tests refuse every other line.
fn detect(lines: &[Line<'_>]) -> Option<Block> {
    let first = lines.first()?;
    let t = after_indent(first.text());
    match t.as_bytes() {
        [b'+', b'-', ..] => {
            // The banner under it first: a prefix test, where the rule
            // test reads the whole line.
            let next = after_indent(lines.get(1)?.text());
            (is_banner(next) && rule(t) == Some(false)).then(|| Block::keyed("nvidia-smi"))
        }
        [b'|', ..] if is_banner(t) || is_gpu_header(t) => {
            Some(Block::keyed(format!("line {}", first.number)))
        }
        _ => None,
    }
}

/// Which table a line is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Zone {
    /// Before any table's header.
    Top,
    /// The GPU table's header (banner to `|===`).
    GpuHeader,
    /// The GPU blocks.
    Gpus,
    /// The `MIG devices:` header.
    MigHeader,
    /// Its rows.
    Migs,
    /// The `Processes:` header.
    ProcHeader,
    /// Its rows.
    Procs,
}

/// A table row's cells, and whether it ends with its `|` (a row without
/// it was cut at the right: its last cell may be cut short).
struct Row<'t> {
    cells: Vec<&'t str>,
    closed: bool,
}

/// `|   0  NVIDIA H200    On  |   00000000:00:06.0 Off |   0 |` → cells.
fn row(t: &str) -> Option<Row<'_>> {
    let inner = t.strip_prefix('|')?;
    let trimmed = inner.trim_end();
    let (inner, closed) = match trimmed.strip_suffix('|') {
        Some(i) => (i, true),
        None => (trimmed, false),
    };
    Some(Row {
        cells: inner.split('|').collect(),
        closed,
    })
}

/// The parser's state.
struct Reader {
    out: SmiTable,
    unread: Unread,
    zone: Zone,
    /// Header rows of the GPU table (rows per block), once seen.
    header_rows: Option<usize>,
    /// Rows read of the open GPU block; `None` when none is open.
    block_rows: Option<usize>,
    /// The processes table has `GI`/`CI` columns.
    proc_instances: bool,
}

/// Reads `nvidia-smi`'s table.
#[must_use]
pub fn parse(lines: &[Line<'_>]) -> Parsed<SmiTable> {
    let mut r = Reader {
        out: SmiTable::default(),
        unread: Unread::default(),
        zone: Zone::Top,
        header_rows: None,
        block_rows: None,
        proc_instances: false,
    };
    for line in lines.iter().filter(|l| !l.is_blank()) {
        r.line(line);
    }
    r.close_block(None);
    Parsed {
        value: r.out,
        warnings: r.unread.finish(),
    }
}

impl Reader {
    fn line(&mut self, line: &Line<'_>) {
        let t = after_indent(line.text());
        if let Some(equals) = rule(t) {
            self.rule(equals, line);
            return;
        }
        if is_banner(t) {
            self.close_block(None);
            self.banner(t);
            self.zone = Zone::GpuHeader;
            self.header_rows = Some(0);
            return;
        }
        if let Some(title) = t.strip_prefix('|').map(str::trim) {
            let title = title.trim_end_matches('|').trim_end();
            if title.starts_with("Processes:") {
                self.close_block(None);
                self.zone = Zone::ProcHeader;
                self.proc_instances = false;
                return;
            }
            if title.starts_with("MIG devices:") {
                self.close_block(None);
                self.zone = Zone::MigHeader;
                return;
            }
        }
        if self.zone == Zone::Top && is_gpu_header(t) {
            self.zone = Zone::GpuHeader;
            self.header_rows = Some(0);
        }
        let Some(row) = row(t) else {
            self.unread.line(line, "not a row of nvidia-smi's table");
            return;
        };
        match self.zone {
            Zone::Top => self.unread.line(line, "a table row before any header"),
            Zone::GpuHeader => {
                self.header_rows = self.header_rows.map(|n| n + 1);
            }
            Zone::MigHeader => {}
            Zone::ProcHeader => {
                self.proc_instances |= t.contains(" GI ");
            }
            Zone::Gpus => self.gpu_row(&row, line),
            Zone::Migs => self.mig_row(&row, line),
            Zone::Procs => self.process_row(&row, line),
        }
    }

    /// `+---` ends a GPU block; `|===` ends a header.
    fn rule(&mut self, equals: bool, line: &Line<'_>) {
        if equals {
            self.zone = match self.zone {
                Zone::GpuHeader | Zone::Top => Zone::Gpus,
                Zone::MigHeader => Zone::Migs,
                Zone::ProcHeader => Zone::Procs,
                z => z,
            };
        } else if self.zone == Zone::Gpus {
            self.close_block(Some(line.number));
        }
    }

    /// `| NVIDIA-SMI 580.159.04   Driver Version: 580.159.04   CUDA Version: 13.0 |`.
    fn banner(&mut self, t: &str) {
        let word_after = |label: &str| {
            let (_, rest) = crate::parse::text::split_once_str(t, label)?;
            rest.split_whitespace()
                .next()
                .filter(|w| *w != "|")
                .map(str::to_owned)
        };
        self.out.smi_version = word_after("NVIDIA-SMI ");
        self.out.driver_version = word_after("Driver Version:");
        self.out.cuda_version = word_after("CUDA Version:");
    }

    /// Closes the open GPU block: at its closing rule (`rule_line`), or
    /// without one (a new block, another table, the end of the input),
    /// when it is partial if it has fewer rows than the header.
    fn close_block(&mut self, rule_line: Option<usize>) {
        let Some(rows) = self.block_rows.take() else {
            return;
        };
        let expected = self.header_rows.filter(|&n| n > 0).unwrap_or(3);
        let Some(gpu) = self.out.gpus.last_mut() else {
            return;
        };
        if rule_line.is_none() && rows < expected && gpu.partial.is_none() {
            let missing = CELLS
                .iter()
                .take(expected)
                .skip(rows)
                .flatten()
                .filter(|c| !c.is_empty())
                .map(|c| (*c).to_owned())
                .collect();
            gpu.partial = Some(Partial::new(
                PartialReason::MissingFields,
                missing,
                gpu.span.last_line,
            ));
        }
    }

    /// A row of the GPU table: the first of a block (its first cell opens
    /// with the index) or the next of the open block.
    fn gpu_row(&mut self, row: &Row<'_>, line: &Line<'_>) {
        let first = row.cells.first().copied().unwrap_or_default();
        let index = first
            .split_whitespace()
            .next()
            .and_then(|w| crate::parse::text::decimal_u32(w).ok());
        let rows = match (index, self.block_rows) {
            (Some(index), _) => {
                self.close_block(None);
                self.out.gpus.push(TableGpu {
                    index,
                    span: line.span(),
                    ..TableGpu::default()
                });
                0
            }
            (None, Some(n)) => n,
            (None, None) => {
                self.unread
                    .line(line, "a GPU row without the row naming its GPU");
                return;
            }
        };
        self.block_rows = Some(rows + 1);
        let Some(gpu) = self.out.gpus.last_mut() else {
            return;
        };
        gpu.span = gpu.span.join(line.span());
        let before = gpu.err_fields.len();
        match rows {
            0 => first_row(gpu, row),
            1 => second_row(gpu, row),
            2 => third_row(gpu, row),
            _ => {
                self.unread.line(line, "more rows than the header has");
                return;
            }
        }
        if gpu.err_fields.len() == before && line.text().contains(ERR) {
            // `ERR!` where the cells are not where expected: said anyway.
            gpu.err_fields.push(format!("row {}", rows + 1));
        }
        if (!row.closed || row.cells.len() < 3) && gpu.partial.is_none() {
            let read = if row.closed {
                row.cells.len()
            } else {
                row.cells.len().saturating_sub(1)
            };
            let missing = CELLS
                .get(rows)
                .into_iter()
                .flatten()
                .skip(read)
                .filter(|c| !c.is_empty())
                .map(|c| (*c).to_owned())
                .collect();
            gpu.partial = Some(Partial::new(PartialReason::ShortRow, missing, line.number));
        }
    }

    /// `|  0    1   0   0  |  13MiB / 40192MiB | 98  0 |  7   0    5    1    1 |`
    /// and the rows under it (BAR1 usage), whose first cell is blank.
    fn mig_row(&mut self, row: &Row<'_>, line: &Line<'_>) {
        let first = row.cells.first().copied().unwrap_or_default();
        let words: Vec<&str> = first.split_whitespace().collect();
        match words.as_slice() {
            [gpu, gi, ci, dev] => match crate::parse::text::decimal_u32(gpu) {
                Ok(gpu) => self.out.mig_devices.push(TableMigDevice {
                    gpu,
                    gpu_instance: (*gi).to_owned(),
                    compute_instance: (*ci).to_owned(),
                    device: (*dev).to_owned(),
                    memory_usage: row.cells.get(1).map(|c| c.trim().to_owned()),
                    span: line.span(),
                }),
                Err(_) => self.unread.line(line, "a MIG device row without its GPU"),
            },
            [] => match self.out.mig_devices.last_mut() {
                Some(d) => d.span = d.span.join(line.span()),
                None => self.unread.line(line, "a MIG row before any device"),
            },
            _ => self.unread.line(line, "not a MIG device row"),
        }
    }

    /// `|    0   N/A  N/A   2111354      C   ...venv/bin/python      818MiB |`,
    /// or `No running processes found`.
    fn process_row(&mut self, row: &Row<'_>, line: &Line<'_>) {
        let text = row.cells.join("|");
        let words: Vec<&str> = text.split_whitespace().collect();
        if words.first() == Some(&"No") && text.contains("processes found") {
            return;
        }
        let skip = if self.proc_instances { 2 } else { 0 };
        let (Some(gpu), Some(memory)) = (words.first(), words.last()) else {
            return;
        };
        let pid = words.get(1 + skip).and_then(|w| w.parse::<u64>().ok());
        let kind = words.get(2 + skip);
        let name = words.get(3 + skip..words.len().saturating_sub(1));
        let instance = |i: usize| words.get(i).filter(|_| skip > 0).map(|w| (*w).to_owned());
        match (pid, kind, name) {
            (Some(pid), Some(kind), Some(name)) if !name.is_empty() => {
                self.out.processes.push(TableProcess {
                    gpu: (*gpu).to_owned(),
                    gpu_instance: instance(1),
                    compute_instance: instance(2),
                    pid,
                    kind: (*kind).to_owned(),
                    name: name.join(" "),
                    memory: (*memory).to_owned(),
                    line: line.number,
                });
            }
            _ => self.unread.line(line, "not a process row"),
        }
    }
}

/// Notes `ERR!` in `value` under `field`.
fn note_err(gpu: &mut TableGpu, field: &str, value: &str) {
    if value == ERR {
        gpu.err_fields.push(field.to_owned());
    }
}

/// A cell's value when it is whole: `Some` only for a cell closed by `|`
/// (the last cell of a row cut at the right may be cut short).
fn whole<'t>(row: &Row<'t>, i: usize) -> Option<&'t str> {
    let cell = row.cells.get(i)?;
    (row.closed || i + 1 < row.cells.len()).then_some(*cell)
}

/// `   0  NVIDIA H200    On  | 00000000:00:06.0 Off |   0 `.
fn first_row(gpu: &mut TableGpu, row: &Row<'_>) {
    if let Some(cell) = whole(row, 0) {
        let words: Vec<&str> = cell.split_whitespace().collect();
        if let [_, name @ .., mode] = words.as_slice() {
            if name.is_empty() {
                gpu.name = (*mode).to_owned();
            } else {
                gpu.name = name.join(" ");
                gpu.persistence_mode = Some((*mode).to_owned());
            }
        }
        note_err(gpu, "Name", &gpu.name.clone());
        if let Some(mode) = gpu.persistence_mode.clone() {
            note_err(gpu, "Persistence-M", &mode);
        }
    }
    if let Some(cell) = whole(row, 1) {
        let mut words = cell.split_whitespace();
        gpu.bus_id = words.next().map(str::to_owned);
        gpu.display_active = words.next().map(str::to_owned);
        if let Some(b) = gpu.bus_id.clone() {
            note_err(gpu, "Bus-Id", &b);
        }
        if let Some(d) = gpu.display_active.clone() {
            note_err(gpu, "Disp.A", &d);
        }
    }
    if let Some(cell) = whole(row, 2) {
        let ecc = cell.trim();
        if !ecc.is_empty() {
            gpu.volatile_uncorrected_ecc = Some(ecc.to_owned());
            gpu.volatile_uncorrected_ecc_count = ecc.parse().ok();
            note_err(gpu, "Volatile Uncorr. ECC", ecc);
        }
    }
}

/// The number before `unit` (`33C`, `77W`, `0%`).
fn number_with(value: &str, unit: &str) -> Option<u32> {
    value.strip_suffix(unit)?.parse().ok()
}

/// `N/A   33C    P0    77W /  700W |   0MiB / 143771MiB |   0%   Default `.
fn second_row(gpu: &mut TableGpu, row: &Row<'_>) {
    if let Some(cell) = whole(row, 0) {
        // ` / ` with its spaces: `N/A` holds a bare `/`.
        let (left, cap) = crate::parse::text::split_once_str(cell, " / ").unwrap_or((cell, ""));
        let words: Vec<&str> = left.split_whitespace().collect();
        if let [fan, temp, perf, usage] = words.as_slice() {
            gpu.fan = Some((*fan).to_owned());
            gpu.temperature = Some((*temp).to_owned());
            gpu.temperature_c = number_with(temp, "C");
            gpu.performance_state = Some((*perf).to_owned());
            gpu.power_usage = Some((*usage).to_owned());
            gpu.power_usage_w = number_with(usage, "W");
            for (field, v) in [
                ("Fan", *fan),
                ("Temp", *temp),
                ("Perf", *perf),
                ("Pwr:Usage", *usage),
            ] {
                note_err(gpu, field, v);
            }
        }
        let cap = cap.trim();
        if !cap.is_empty() {
            gpu.power_cap = Some(cap.to_owned());
            gpu.power_cap_w = number_with(cap, "W");
            note_err(gpu, "Pwr:Cap", cap);
        }
    }
    if let Some(cell) = whole(row, 1) {
        let usage = cell.trim();
        if !usage.is_empty() {
            gpu.memory_usage = Some(usage.to_owned());
            let (used, total) =
                crate::parse::text::split_once_str(usage, " / ").unwrap_or((usage, ""));
            gpu.memory_used_mib = used.trim().strip_suffix("MiB").and_then(|n| n.parse().ok());
            gpu.memory_total_mib = total
                .trim()
                .strip_suffix("MiB")
                .and_then(|n| n.parse().ok());
            if used.trim() == ERR || total.trim() == ERR {
                gpu.err_fields.push("Memory-Usage".to_owned());
            }
        }
    }
    if let Some(cell) = whole(row, 2) {
        let mut words = cell.split_whitespace();
        if let Some(util) = words.next() {
            gpu.utilization = Some(util.to_owned());
            gpu.utilization_pct = number_with(util, "%");
            note_err(gpu, "GPU-Util", util);
        }
        let mode: Vec<&str> = words.collect();
        if !mode.is_empty() {
            let mode = mode.join(" ");
            note_err(gpu, "Compute M.", &mode);
            gpu.compute_mode = Some(mode);
        }
    }
}

/// `   |    |   Disabled `: only `MIG M.` is printed.
fn third_row(gpu: &mut TableGpu, row: &Row<'_>) {
    if let Some(cell) = whole(row, 2) {
        let mig = cell.trim();
        if !mig.is_empty() {
            gpu.mig_mode = Some(mig.to_owned());
            note_err(gpu, "MIG M.", mig);
        }
    }
}

/// `2 GPU(s): NVIDIA H200; driver 580.159.04; 1 GPU(s) with ERR!`.
#[must_use]
pub fn summary(t: &SmiTable) -> String {
    let mut names: Vec<&str> = t.gpus.iter().map(|g| g.name.as_str()).collect();
    names.dedup();
    let mut s = format!("{} GPU(s): {}", t.gpus.len(), names.join(", "));
    if let Some(d) = &t.driver_version {
        let _ = write!(s, "; driver {d}");
    }
    let err = t.gpus.iter().filter(|g| g.has_err()).count();
    if err > 0 {
        let _ = write!(s, "; {err} GPU(s) with ERR!");
    }
    if !t.mig_devices.is_empty() {
        let _ = write!(s, "; {} MIG device(s)", t.mig_devices.len());
    }
    if !t.processes.is_empty() {
        let _ = write!(s, "; {} process(es)", t.processes.len());
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::partial::PartialReason;
    use crate::parse::lines_of;

    /// Driver 550+ layout, two GPUs, values made up.
    const NEW: &str = "\
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 570.133.20             Driver Version: 570.133.20     CUDA Version: 12.8     |
+-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|                                         |                        |               MIG M. |
|=========================================+========================+======================|
|   0  NVIDIA H100 80GB HBM3          On  |   00000000:18:00.0 Off |                    0 |
| N/A   41C    P0            312W /  700W |   70121MiB /  81559MiB |     97%      Default |
|                                         |                        |             Disabled |
+-----------------------------------------+------------------------+----------------------+
|   1  NVIDIA H100 80GB HBM3          On  |   00000000:2A:00.0 Off |                    3 |
| N/A   ERR!   P0              ERR! / ERR!|       1MiB /  81559MiB |      0%   E. Process |
|                                         |                        |              Enabled |
+-----------------------------------------+------------------------+----------------------+

+-----------------------------------------------------------------------------------------+
| Processes:                                                                              |
|  GPU   GI   CI              PID   Type   Process name                        GPU Memory |
|        ID   ID                                                               Usage      |
|=========================================================================================|
|    0   N/A  N/A          881200      C   /opt/conda/bin/python3                 70110MiB |
+-----------------------------------------------------------------------------------------+
";

    /// Driver 390 layout: two rows a GPU, no CUDA version, processes
    /// without GI/CI. Values made up.
    const OLD: &str = "\
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 390.30                 Driver Version: 390.30                    |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|===============================+======================+======================|
|   0  Tesla K80           On   | 00000000:00:1E.0 Off |                    0 |
| N/A   47C    P0    71W / 149W |  10410MiB / 11441MiB |      0%      Default |
+-------------------------------+----------------------+----------------------+

+-----------------------------------------------------------------------------+
| Processes:                                                       GPU Memory |
|  GPU       PID   Type   Process name                             Usage      |
|=============================================================================|
|    0      4107      C   python                                     10400MiB |
+-----------------------------------------------------------------------------+
";

    #[test]
    fn reads_every_field_of_the_driver_580_layout() {
        let p = parse(&lines_of(NEW));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let t = &p.value;
        assert_eq!(t.smi_version.as_deref(), Some("570.133.20"));
        assert_eq!(t.driver_version.as_deref(), Some("570.133.20"));
        assert_eq!(t.cuda_version.as_deref(), Some("12.8"));
        assert!(!t.is_wsl());
        let g = &t.gpus[0];
        assert_eq!(g.index, 0);
        assert_eq!(g.name, "NVIDIA H100 80GB HBM3");
        assert_eq!(g.persistence_mode.as_deref(), Some("On"));
        assert_eq!(g.bus_id.as_deref(), Some("00000000:18:00.0"));
        assert_eq!(g.display_active.as_deref(), Some("Off"));
        assert_eq!(g.volatile_uncorrected_ecc_count, Some(0));
        assert_eq!(g.fan.as_deref(), Some("N/A"));
        assert_eq!(g.temperature_c, Some(41));
        assert_eq!(g.performance_state.as_deref(), Some("P0"));
        assert_eq!((g.power_usage_w, g.power_cap_w), (Some(312), Some(700)));
        assert_eq!(
            (g.memory_used_mib, g.memory_total_mib),
            (Some(70121), Some(81559))
        );
        assert_eq!(g.utilization_pct, Some(97));
        assert_eq!(g.compute_mode.as_deref(), Some("Default"));
        assert_eq!(g.mig_mode.as_deref(), Some("Disabled"));
        assert_eq!((g.span.first_line, g.span.last_line), (8, 10));
        assert!(g.err_fields.is_empty() && g.partial.is_none());
        let g = &t.gpus[1];
        assert_eq!(g.err_fields, ["Temp", "Pwr:Usage", "Pwr:Cap"]);
        assert_eq!(g.volatile_uncorrected_ecc_count, Some(3));
        assert_eq!(g.compute_mode.as_deref(), Some("E. Process"));
        assert_eq!(g.mig_mode.as_deref(), Some("Enabled"));
        assert!(g.partial.is_none());
        assert_eq!(t.processes.len(), 1);
        let pr = &t.processes[0];
        assert_eq!(
            (pr.gpu.as_str(), pr.pid, pr.kind.as_str()),
            ("0", 881_200, "C")
        );
        assert_eq!(pr.gpu_instance.as_deref(), Some("N/A"));
        assert_eq!(pr.name, "/opt/conda/bin/python3");
        assert_eq!(pr.memory, "70110MiB");
        assert_eq!(
            summary(t),
            "2 GPU(s): NVIDIA H100 80GB HBM3; driver 570.133.20; 1 GPU(s) with ERR!; 1 process(es)"
        );
    }

    /// Before MIG the header has two rows, and so has a block: whole.
    #[test]
    fn reads_the_two_row_layout_of_old_drivers() {
        let p = parse(&lines_of(OLD));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let t = &p.value;
        assert_eq!(t.cuda_version, None);
        let g = &t.gpus[0];
        assert_eq!(g.name, "Tesla K80");
        assert_eq!(g.mig_mode, None);
        assert!(g.partial.is_none(), "{:?}", g.partial);
        assert_eq!(t.processes[0].pid, 4107);
        assert_eq!(t.processes[0].gpu_instance, None);
        assert_eq!(t.processes[0].name, "python");
    }

    /// A whole row of `ERR!` (the GPU's name too) in the 79-column layout.
    #[test]
    fn names_every_field_that_prints_err() {
        let text = "\
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|                               |                      |               MIG M. |
|===============================+======================+======================|
|   4  ERR!                On   | 00000000:83:00.0 Off |                 ERR! |
|ERR!  ERR! ERR!    ERR! / ERR! |      0MiB / 46068MiB |    ERR!      Default |
|                               |                      |                 ERR! |
+-------------------------------+----------------------+----------------------+
";
        let p = parse(&lines_of(text));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let g = &p.value.gpus[0];
        assert_eq!(g.index, 4);
        assert_eq!(g.name, "ERR!");
        assert_eq!(g.volatile_uncorrected_ecc.as_deref(), Some("ERR!"));
        assert_eq!(g.volatile_uncorrected_ecc_count, None);
        assert_eq!(
            g.err_fields,
            [
                "Name",
                "Volatile Uncorr. ECC",
                "Fan",
                "Temp",
                "Perf",
                "Pwr:Usage",
                "Pwr:Cap",
                "GPU-Util",
                "MIG M."
            ]
        );
        assert_eq!(g.memory_used_mib, Some(0));
    }

    /// The paste ends after a block's second row: the block is partial,
    /// missing its `MIG M.` row.
    #[test]
    fn a_block_cut_by_the_end_of_the_paste_is_partial() {
        let cut: String = NEW.lines().take(13).map(|l| format!("{l}\n")).collect();
        let p = parse(&lines_of(&cut));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        assert!(p.value.gpus[0].partial.is_none());
        let partial = p.value.gpus[1].partial.as_ref().unwrap();
        assert_eq!(partial.reason, PartialReason::MissingFields);
        assert_eq!(partial.missing, ["MIG M."]);
        assert_eq!(partial.line, 13);
    }

    /// Every row cut at column 70 (a chat tool's width): the ECC cell is
    /// not read, and each block is partial.
    #[test]
    fn rows_cut_at_the_right_are_partial_and_their_cut_cells_unread() {
        let cut: String = NEW
            .lines()
            .take(15)
            .map(|l| format!("{}\n", l.get(..70).unwrap_or(l)))
            .collect();
        let p = parse(&lines_of(&cut));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        for g in &p.value.gpus {
            assert_eq!(g.volatile_uncorrected_ecc, None);
            assert_eq!(g.volatile_uncorrected_ecc_count, None);
            let partial = g.partial.as_ref().unwrap();
            assert_eq!(partial.reason, PartialReason::ShortRow);
            assert_eq!(partial.missing, ["Volatile Uncorr. ECC"]);
        }
        assert_eq!(p.value.gpus[0].bus_id.as_deref(), Some("00000000:18:00.0"));
        assert_eq!(p.value.gpus[0].utilization, None);
        assert_eq!(p.value.gpus[1].err_fields, ["Temp", "Pwr:Usage", "Pwr:Cap"]);
    }

    #[test]
    fn reads_the_mig_devices_table() {
        let text = "\
+-----------------------------------------------------------------------------+
| MIG devices:                                                                |
+------------------+----------------------+-----------+-----------------------+
| GPU  GI  CI  MIG |         Memory-Usage |        Vol|         Shared        |
|      ID  ID  Dev |           BAR1-Usage | SM     Unc| CE  ENC  DEC  OFA  JPG|
|                  |                      |        ECC|                       |
|==================+======================+===========+=======================|
|  0    1   0   0  |     19MiB / 40192MiB | 98      0 |  7   0    5    1    1 |
|                  |      0MiB / 65535MiB |           |                       |
+------------------+----------------------+-----------+-----------------------+
|  0    2   0   1  |     11MiB / 40192MiB | 98      0 |  7   0    5    1    1 |
|                  |      0MiB / 65535MiB |           |                       |
+------------------+----------------------+-----------+-----------------------+
";
        let p = parse(&lines_of(text));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let m = &p.value.mig_devices;
        assert_eq!(m.len(), 2);
        assert_eq!(
            (m[1].gpu, m[1].gpu_instance.as_str(), m[1].device.as_str()),
            (0, "2", "1")
        );
        assert_eq!(m[0].memory_usage.as_deref(), Some("19MiB / 40192MiB"));
        assert_eq!((m[0].span.first_line, m[0].span.last_line), (8, 9));
    }

    /// A line that is not the table's is a warning, never dropped.
    #[test]
    fn a_foreign_line_is_reported() {
        let text = format!("{NEW}this is not a table line\n");
        let p = parse(&lines_of(&text));
        assert_eq!(p.warning_lines().len(), 1);
        assert_eq!(p.warning_lines()[0].0, 24);
    }

    #[test]
    fn detects_the_table_by_its_opening_only() {
        let at = |text: &str| detect(&lines_of(text)).map(|b| b.key);
        assert_eq!(at(NEW).as_deref(), Some("nvidia-smi"));
        assert_eq!(at(OLD).as_deref(), Some("nvidia-smi"));
        // The banner and the header, pasted without the rule above them,
        // continue the open table (keyed by their line).
        assert_eq!(at(NEW.lines().nth(1).unwrap()).as_deref(), Some("line 1"));
        assert_eq!(at(OLD.lines().nth(3).unwrap()).as_deref(), Some("line 1"));
        // The processes table's rule, a GPU row, a dcgmi rule, prose.
        assert_eq!(
            at(&NEW.lines().skip(16).collect::<Vec<_>>().join("\n")),
            None
        );
        assert_eq!(at(NEW.lines().nth(7).unwrap()), None);
        assert_eq!(
            at("+---------------------------+\n| Diagnostic | Result |\n"),
            None
        );
        assert_eq!(at("GPU 0: NVIDIA H100 (UUID: GPU-1)"), None);
        assert_eq!(at("| GPU ID | Name |"), None);
    }
}
