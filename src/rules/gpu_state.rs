//! DG004: a GPU that `nvidia-smi`'s summary table prints with `ERR!`.
//!
//! nvidia-smi prints `ERR!` in a field when NVML answered the query with an
//! error other than "not supported": the driver could not read the GPU.
//! One such cell on a data-center GPU is the sign on-call engineers look
//! for first, and it is easy to miss in a table of eight healthy rows.

use super::context::{Context, HostKey, SectionRef};
use super::{Coverage, Evidence, Finding, Severity, Subject, Threshold};
use crate::declare_rule;
use crate::model::smi_table::{SmiTable, TableGpu};
use crate::parse::SectionData;
use std::collections::BTreeMap;

declare_rule! {
    /// ### What it detects
    /// A GPU whose block of the `nvidia-smi` summary table prints `ERR!`
    /// in any field: the name, persistence mode, bus id, fan, temperature,
    /// performance state, power, memory, utilisation, compute or MIG mode,
    /// or the volatile uncorrectable ECC count; and a `--query-gpu …
    /// --format=csv` row with NVML's error for a field in place of its
    /// value (`[GPU requires reset]`, `[GPU is lost]`, `[Unknown Error]`;
    /// not `[N/A]` or `[Not Supported]`). A lone `[Unknown Error]` in a
    /// row whose other fields read is a `warning`: a driver or board can
    /// print it for one field it cannot read on a healthy GPU.
    ///
    /// ### Why it matters
    /// nvidia-smi prints `ERR!` where NVML returned an error for the field
    /// (not `N/A`, which means the GPU does not have it): the driver could
    /// not talk to the GPU. A whole row of `ERR!` (name, fan, temperature,
    /// power, ECC) is a GPU in a failed state — typically after an Xid such
    /// as 79 (fallen off the bus) or 119/120 (GSP timeouts), and jobs on it
    /// fail or hang. It is an `error` however many fields say it: even one
    /// unreadable sensor on a data-center GPU is NVML failing on that GPU.
    /// One case is not judged: under WSL (nvidia-smi's version differs from
    /// the Windows driver's in the banner) `GPU-Util` alone prints `ERR!`
    /// on healthy GPUs, a limitation of WSL, not a fault. A block cut short
    /// (the paste ended inside it, or its rows were cut at the right) is
    /// judged only on the cells it shows: an `ERR!` there is evidence; the
    /// absence of one is not.
    ///
    /// ### Evidence
    /// The GPU's block of the table, and the fields that print `ERR!`.
    ///
    /// ### What to do
    /// Drain the GPU. Look for the Xid the driver logged for it
    /// (`dmesg | grep -i xid`, `journalctl -k | grep -i NVRM`) and act on
    /// the Xid catalog's resolution for that code. Then reset the GPU
    /// (`nvidia-smi -r -i <id>`, with no process using it) or reboot the
    /// node; if the GPU fell off the bus or `ERR!` comes back, collect
    /// `nvidia-bug-report.sh` and open a hardware case.
    ///
    /// ### Thresholds and sources
    /// Any `ERR!`: nvidia-smi's marker for a field NVML could not read
    /// (nvidia-smi(1): `N/A` is for fields that do not apply; NVML returns
    /// an error such as `NVML_ERROR_GPU_IS_LOST` for a GPU it lost). NVIDIA
    /// Xid catalog (docs.nvidia.com/deploy/xid-errors) for the cause and
    /// resolution. Public cases: a row of `ERR!` under Xid 119 "Timeout
    /// waiting for RPC from GSP" (github.com/NVIDIA/open-gpu-kernel-modules
    /// issue 446); `GPU-Util` `ERR!` alone under WSL
    /// (github.com/microsoft/WSL issue 7162).
    pub static DG004 = {
        id: "DG004",
        name: "gpu-field-err",
        family: Diagnostics,
        severity: Error,
        summary: "nvidia-smi prints ERR! for a GPU: NVML could not read it",
        needs: "nvidia-smi (the default summary table, or --query-gpu CSV)",
        check: check_err,
    }
}

/// One GPU's block, with the table and section it was read from.
pub(super) struct TableGpuRef<'a> {
    pub at: SectionRef<'a>,
    pub table: &'a SmiTable,
    pub gpu: &'a TableGpu,
}

impl TableGpuRef<'_> {
    /// Host, GPU index and bus id.
    pub fn subject(&self) -> Subject {
        Subject {
            host: self.at.host().name().map(str::to_owned),
            gpu: Some(self.gpu.index),
            bus_id: self.gpu.bus_id.clone(),
            ..Subject::default()
        }
    }

    /// `GPU 4 (00000000:83:00.0) (NVIDIA A40)`: the subject, then the
    /// product when it was read.
    pub fn label(&self) -> String {
        let mut label = self.subject().describe();
        let name = self.gpu.name.as_str();
        if !name.is_empty() && name != crate::model::smi_table::ERR {
            label.push_str(" (");
            label.push_str(name);
            label.push(')');
        }
        label
    }
}

/// Every GPU of every `nvidia-smi` table, the latest block of each (a
/// host's GPU printed by several runs is judged on the last).
pub(super) fn table_gpus<'a>(ctx: &Context<'a>) -> Vec<TableGpuRef<'a>> {
    let mut latest: BTreeMap<(HostKey<'a>, u32), TableGpuRef<'a>> = BTreeMap::new();
    for at in ctx.sections() {
        if let SectionData::SmiTable(table) = &at.section.data {
            for gpu in &table.gpus {
                latest.insert((at.host(), gpu.index), TableGpuRef { at, table, gpu });
            }
        }
    }
    latest.into_values().collect()
}

/// Whether the block's `ERR!` is WSL's `GPU-Util` alone.
fn wsl_utilisation_only(g: &TableGpuRef<'_>) -> bool {
    g.table.is_wsl() && g.gpu.err_fields.iter().all(|f| f == "GPU-Util")
}

/// NVML's errors as `--query-gpu … --format=csv` prints them in a cell
/// (NVML's error string in brackets): the CSV form of the table's `ERR!`.
/// `[N/A]` and `[Not Supported]` are fields the GPU lacks, `[Insufficient
/// Permissions]` the user's; these say NVML cannot reach the GPU.
const CSV_NVML_ERRORS: &[&str] = &["[GPU requires reset]", "[GPU is lost]", "[Unknown Error]"];

/// NVML's catch-all error: a GPU NVML cannot reach prints it in every
/// field, but a driver or board can print it for one field it cannot
/// read (a power or clock field under vGPU or an old driver) on a GPU
/// that reads every other: alone in a row that reads otherwise it is a
/// `warning`, not a GPU in a failed state.
const CSV_UNKNOWN_ERROR: &str = "[Unknown Error]";

/// The severity of a CSV row with NVML errors: `[GPU requires reset]`
/// and `[GPU is lost]` name the GPU's state, an `error` in any field;
/// `[Unknown Error]` is one when it is in two fields or more, or in every
/// field the GPU has (not `[N/A]`/`[Not Supported]`), and a `warning` when
/// one field of a row that reads otherwise prints it.
fn csv_row_severity(errors: &[&str], readable_fields: usize) -> Severity {
    let unknown = errors
        .iter()
        .filter(|e| e.eq_ignore_ascii_case(CSV_UNKNOWN_ERROR))
        .count();
    if unknown == errors.len() && unknown < 2 && readable_fields > unknown {
        Severity::Warning
    } else {
        Severity::Error
    }
}

/// DG004 over `--query-gpu` CSV rows: a row whose cells print an NVML
/// error. Before, a row of `[GPU requires reset]` was read as values the
/// GPU did not have, and the verdict was "healthy". Returns the rows
/// judged.
fn check_csv_errors(ctx: &Context<'_>, out: &mut Vec<Finding>) -> usize {
    let mut judged = 0usize;
    for at in ctx.sections() {
        let SectionData::SmiCsv(csv) = &at.section.data else {
            continue;
        };
        let (index_at, bus_at) = (csv.column("index"), csv.column("pci.bus_id"));
        for row in &csv.rows {
            judged += 1;
            let mut fields: Vec<&str> = Vec::new();
            let mut errors: Vec<&str> = Vec::new();
            // Fields the GPU has: not `[N/A]` / `[Not Supported]`, not
            // the row's index or bus id (which always read).
            let mut readable = 0usize;
            for (i, v) in row.values.iter().enumerate() {
                let t = v.text.trim();
                if Some(i) != index_at
                    && Some(i) != bus_at
                    && !t.eq_ignore_ascii_case("[N/A]")
                    && !t.eq_ignore_ascii_case("[Not Supported]")
                {
                    readable += 1;
                }
                if let Some(e) = CSV_NVML_ERRORS.iter().find(|e| e.eq_ignore_ascii_case(t)) {
                    fields.push(csv.fields.get(i).map_or("a column", String::as_str));
                    errors.push(e);
                }
            }
            let Some(&error) = errors.first() else {
                continue;
            };
            let severity = csv_row_severity(&errors, readable);
            let cell = |at: Option<usize>| {
                at.and_then(|i| row.values.get(i))
                    .filter(|v| !v.is_missing())
            };
            let subject = Subject {
                host: at.host().name().map(str::to_owned),
                gpu: cell(index_at).and_then(|v| v.text.trim().parse().ok()),
                bus_id: cell(bus_at).map(|v| v.text.trim().to_owned()),
                ..Subject::default()
            };
            let fields = fields.join(", ");
            out.push(
                DG004
                    .finding(
                        subject.clone(),
                        if severity == Severity::Error {
                            format!(
                                "{}: nvidia-smi prints {error} for it: NVML cannot read the GPU, which is in a failed state ({fields})",
                                subject.describe()
                            )
                        } else {
                            format!(
                                "{}: nvidia-smi prints {error} for {fields} alone while the GPU's other fields read: NVML could not read that field (a field this driver or board cannot read, or the first sign of a GPU failing)",
                                subject.describe()
                            )
                        },
                    )
                    .severity(severity)
                    .evidence(Evidence::new(
                        format!("nvidia-smi --query-gpu: {error} in {fields}"),
                        crate::span::LineSpan::line(row.line),
                        at.source(),
                    ))
                    .threshold(Threshold::new(
                        "no field reads ERR! (in CSV: an NVML error in brackets)",
                        "nvidia-smi prints NVML's error for a field it could not read (`[N/A]` is for fields the GPU lacks); NVIDIA Xid catalog (docs.nvidia.com/deploy/xid-errors) for the cause",
                    ))
                    .remediation(
                        "Drain the GPU; find the Xid the driver logged for it (dmesg | grep -i xid) and follow the Xid catalog's resolution; reset the GPU (nvidia-smi -r -i <id>, no process using it) or reboot the node; if it fell off the bus or the error returns, collect nvidia-bug-report.sh and open a hardware case.",
                    ),
            );
        }
    }
    judged
}

/// DG004.
fn check_err(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let gpus = table_gpus(ctx);
    let mut judged = check_csv_errors(ctx, out);
    for g in &gpus {
        if !g.gpu.has_err() {
            // A cut block without `ERR!` in what it shows says nothing.
            judged += usize::from(g.gpu.partial.is_none());
            continue;
        }
        judged += 1;
        if wsl_utilisation_only(g) {
            continue;
        }
        out.push(finding(g));
    }
    if judged == 0 {
        return Coverage::Skipped(if gpus.is_empty() {
            "no nvidia-smi summary table in the input".to_owned()
        } else {
            "every GPU block of the nvidia-smi table is cut short".to_owned()
        });
    }
    Coverage::Checked(judged)
}

/// The finding for a GPU printing `ERR!`.
fn finding(g: &TableGpuRef<'_>) -> Finding {
    let fields = g.gpu.err_fields.join(", ");
    let all = g.gpu.err_fields.len() >= 4;
    let what = if all {
        "nvidia-smi prints ERR! across its row: NVML cannot read the GPU, which is in a failed state"
    } else {
        "nvidia-smi prints ERR! for part of its row: NVML failed to read the GPU"
    };
    DG004
        .finding(
            g.subject(),
            format!("{}: {what} ({fields})", g.label()),
        )
        .evidence(Evidence::new(
            format!("nvidia-smi: GPU {} prints ERR! in {fields}", g.gpu.index),
            g.gpu.span,
            g.at.source(),
        ))
        .threshold(Threshold::new(
            "no field reads ERR!",
            "nvidia-smi prints ERR! where NVML returned an error for the field (N/A is for fields the GPU lacks); NVIDIA Xid catalog (docs.nvidia.com/deploy/xid-errors) for the cause",
        ))
        .remediation(
            "Drain the GPU; find the Xid the driver logged for it (dmesg | grep -i xid) and follow the Xid catalog's resolution; reset the GPU (nvidia-smi -r -i <id>, no process using it) or reboot the node; if it fell off the bus or ERR! returns, collect nvidia-bug-report.sh and open a hardware case.",
        )
}
