//! DG003: the GPU driver's own row-remapping flags, from `nvidia-smi -q`
//! (text or XML) or a CSV query with `remapped_rows.pending` and
//! `remapped_rows.failure`.
//!
//! Ampere and later GPUs replace a failing row of their memory with a spare
//! one. The driver decides; nvidia-smi prints its two verdicts as flags, and
//! this rule carries them into the report with what to do next.

use super::context::{Context, HostKey, SectionRef};
use super::{Coverage, Evidence, Finding, Severity, Subject, Threshold};
use crate::declare_rule;
use crate::model::smi_query::{Field, QueryGpu};
use crate::parse::SectionData;
use crate::span::LineSpan;
use std::collections::BTreeMap;

declare_rule! {
    /// ### What it detects
    /// A GPU whose row remapper reports `Pending: Yes` (a spare row is
    /// reserved for a failing one, and will replace it at the next GPU
    /// reset: `warning`) or `Remapping Failure Occurred: Yes` (a row could
    /// not be remapped: `error`), in `nvidia-smi -q` (`Remapped Rows`),
    /// `-q -x` (`<remapped_row_pending>`, `<remapped_row_failure>`) or a
    /// CSV query (`remapped_rows.pending`, `remapped_rows.failure`).
    ///
    /// ### Why it matters
    /// Row remapping (Ampere and later) is how the GPU retires failing
    /// memory rows: a remap takes effect only when the GPU is reset, and
    /// until then the driver keeps the failing page out of use (dynamic
    /// page offlining on A100/H100-class GPUs). Unaffected work keeps
    /// running, so a pending remap is a `warning`: the reset is owed before
    /// the GPU is trusted with all its memory again (NVIDIA's example: a
    /// VM migrated onto it). The failure flag is set when an uncorrectable
    /// error needs a remap the hardware cannot give: a bank that already
    /// has eight rows remapped for uncorrectable errors, a row already
    /// remapped, or 512 such remaps in all. NVIDIA's RMA policy for GPU
    /// memory qualifies the GPU for RMA when that flag is set and the
    /// field diagnostic confirms it: an `error`.
    ///
    /// The counts of remapped rows (`Correctable Error`, `Uncorrectable
    /// Error`) are not judged alone: they are lifetime entries in the
    /// GPU's InfoROM, remaps that already took effect, which is the
    /// mechanism working. Without a pending remap or a failure they are
    /// history, not news, and are only quoted in a finding's message.
    /// `N/A` (GPUs without a row remapper, such as V100 or T4, print
    /// `Remapped Rows : N/A`; MIG instances hide the values) and a section
    /// cut before its flags say nothing either way: absence of data is
    /// never evidence.
    ///
    /// ### Evidence
    /// The `Pending` and `Remapping Failure Occurred` lines that read
    /// `Yes` (or the CSV row), with the counts of remapped rows.
    ///
    /// ### What to do
    /// Pending: drain the GPU, then reset it (`nvidia-smi -r -i <id>`, with
    /// no process using it) or reboot the node; check that `Pending` reads
    /// `No` afterwards. Failure: drain the GPU and keep it out of service;
    /// run NVIDIA's field diagnostic and collect an
    /// `nvidia-bug-report.sh` for the hardware (RMA) case.
    ///
    /// ### Thresholds and sources
    /// The driver's own flags: NVIDIA GPU Memory Error Management
    /// (docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt: "Row Remapping",
    /// "Error Recovery and Response Flags", "RMA Policy": the events that
    /// set the failure flag); NVML `nvmlDeviceGetRemappedRows` (`isPending`:
    /// a reset is required to remap the row; `failureOccurred`);
    /// `nvidia-smi --help-query-gpu` (`remapped_rows.pending`: remapping
    /// pending on the next reboot; `remapped_rows.failure`). dcgm-exporter's
    /// `DCGM_FI_DEV_ROW_REMAP_FAILURE` and `_PENDING` (1 or 0) are the same
    /// two flags, read through DCGM from the same NVML call, with
    /// `DCGM_FI_DEV_{UN,}CORRECTABLE_REMAPPED_ROWS` the counts.
    pub static DG003 = {
        id: "DG003",
        name: "gpu-row-remap",
        family: Diagnostics,
        severity: Warning,
        summary: "GPU memory row remap pending a reset (warning) or failed (error)",
        needs: "nvidia-smi -q (or -q -d ROW_REMAPPER, or a CSV query with remapped_rows.pending,remapped_rows.failure), or dcgm-exporter's DCGM_FI_DEV_ROW_REMAP_FAILURE",
        check: check_row_remap,
    }
}

/// One of the remapper's yes/no flags, with the line it was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Flag {
    set: bool,
    line: usize,
}

/// What one GPU's row remapper says, from one reading.
#[derive(Debug, Default, PartialEq, Eq)]
struct Remapper {
    /// `Pending`; `None` when absent, `N/A` or unreadable.
    pending: Option<Flag>,
    /// `Remapping Failure Occurred`; `None` likewise.
    failure: Option<Flag>,
    /// Rows remapped for correctable errors.
    correctable: Option<u64>,
    /// Rows remapped for uncorrectable errors.
    uncorrectable: Option<u64>,
}

/// What a reading holds about a GPU's remapper.
#[derive(Debug, PartialEq, Eq)]
enum Reading {
    /// The tool answered `N/A` (no row remapper, or hidden by MIG): checked,
    /// nothing to judge.
    NotApplicable,
    /// At least one flag was read.
    Flags(Remapper),
}

/// `Pending` in `-q` text and XML.
const PENDING: &[&str] = &["Pending", "remapped_row_pending"];
/// `Remapping Failure Occurred` in `-q` text and XML.
const FAILURE: &[&str] = &["Remapping Failure Occurred", "remapped_row_failure"];

/// `Yes`/`No` as nvidia-smi prints the flags (NVML's 1/0 accepted too);
/// anything else (`N/A`, a value cut short) is unknown.
fn yes_no(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "yes" | "true" | "1" => Some(true),
        "no" | "false" | "0" => Some(false),
        _ => None,
    }
}

/// `N/A`, `[N/A]`, `Not Supported`, `[Not Supported]`: the tool says the
/// value does not exist on this GPU (as opposed to a value cut short).
fn not_applicable(text: &str) -> bool {
    let t = text.trim().trim_start_matches('[').trim_end_matches(']');
    t.eq_ignore_ascii_case("N/A") || t.eq_ignore_ascii_case("Not Supported")
}

/// The remapper of an `nvidia-smi -q` block (text or XML names); `None`
/// when the block has no `Remapped Rows` section or it was cut before its
/// flags.
fn of_query(gpu: &QueryGpu) -> Option<Reading> {
    let section = gpu.field(&[&["Remapped Rows", "remapped_rows"]])?;
    if section.children.is_empty() {
        // `Remapped Rows : N/A` on GPUs without a remapper; a bare heading
        // on the last line was cut.
        return section
            .value
            .as_deref()
            .filter(|v| not_applicable(v))
            .map(|_| Reading::NotApplicable);
    }
    let child = |names: &[&str]| Field::find_in(&section.children, &[names]);
    let flag = |names: &[&str]| {
        child(names).and_then(|f| {
            let set = yes_no(f.value.as_deref()?)?;
            Some(Flag { set, line: f.line })
        })
    };
    let count = |names: &[&str]| {
        child(names)
            .and_then(|f| f.value.as_deref())
            .and_then(|v| v.trim().parse::<u64>().ok())
    };
    let remapper = Remapper {
        pending: flag(PENDING),
        failure: flag(FAILURE),
        correctable: count(&["Correctable Error", "remapped_row_corr"]),
        uncorrectable: count(&["Uncorrectable Error", "remapped_row_unc"]),
    };
    if remapper.pending.is_some() || remapper.failure.is_some() {
        return Some(Reading::Flags(remapper));
    }
    // `N/A` flags (MIG hides them): an answer, not a cut.
    let said_na = [PENDING, FAILURE]
        .into_iter()
        .filter_map(child)
        .any(|f| f.value.as_deref().is_some_and(not_applicable));
    said_na.then_some(Reading::NotApplicable)
}

/// One GPU's latest remapper reading, with how to name it.
struct GpuRemap<'a> {
    at: SectionRef<'a>,
    subject: Subject,
    label: String,
    product: Option<String>,
    reading: Reading,
    /// `nvidia-smi -q`, `-q -x` or the CSV query.
    tool: &'static str,
}

/// Every GPU's latest reading, from `-q` blocks and CSV rows.
fn readings<'a>(ctx: &Context<'a>) -> Vec<GpuRemap<'a>> {
    let mut out = Vec::new();
    for (at, gpu) in ctx.smi_gpus() {
        let Some(reading) = of_query(gpu) else {
            continue;
        };
        let (subject, label) = super::nvlink::smi_gpu_named(&at, gpu);
        let xml = matches!(&at.section.data, SectionData::SmiQuery(q) if q.xml);
        out.push(GpuRemap {
            at,
            subject,
            label,
            product: gpu.product_name.clone(),
            reading,
            tool: if xml {
                "nvidia-smi -q -x"
            } else {
                "nvidia-smi -q"
            },
        });
    }
    // CSV: the last row of each GPU (a `-l` loop prints one per interval).
    type Key<'k> = (HostKey<'k>, String);
    let mut latest: BTreeMap<Key<'a>, GpuRemap<'a>> = BTreeMap::new();
    for at in ctx.sections() {
        let SectionData::SmiCsv(csv) = &at.section.data else {
            continue;
        };
        let pending_col = csv.column("remapped_rows.pending");
        let failure_col = csv.column("remapped_rows.failure");
        if pending_col.is_some() || failure_col.is_some() {
            read_csv(at, csv, pending_col, failure_col, &mut latest);
        }
    }
    out.extend(latest.into_values());
    out.extend(dcgm_readings(ctx));
    out
}

/// A GPU of dcgm-exporter's metrics as the GPU rules name it: host, index,
/// UUID and bus id as its labels print them; `GPU 1 (00000000:3B:00.0)`.
pub(super) fn dcgm_gpu_named(
    at: &SectionRef<'_>,
    gpu: &crate::model::dcgm_exporter::DcgmGpu,
) -> (Subject, String) {
    let subject = Subject {
        host: at.host().name().map(str::to_owned),
        gpu: gpu.index,
        gpu_uuid: gpu.uuid.clone(),
        bus_id: gpu.pci_bus_id.clone(),
        ..Subject::default()
    };
    let mut label = gpu
        .index
        .map_or_else(|| "GPU".to_owned(), |i| format!("GPU {i}"));
    match (&gpu.pci_bus_id, &gpu.uuid) {
        (Some(bus), _) => label.push_str(&format!(" ({bus})")),
        (None, Some(uuid)) => label.push_str(&format!(" ({uuid})")),
        (None, None) => {}
    }
    (subject, label)
}

/// dcgm-exporter's `DCGM_FI_DEV_ROW_REMAP_FAILURE` / `_PENDING` (1 or 0):
/// the flags nvidia-smi prints, read by the same NVML call.
fn dcgm_readings<'a>(ctx: &Context<'a>) -> Vec<GpuRemap<'a>> {
    let mut out = Vec::new();
    for at in ctx.sections() {
        let SectionData::DcgmExporter(m) = &at.section.data else {
            continue;
        };
        for gpu in m.hosts.iter().flat_map(|h| &h.gpus) {
            let flag = |r: Option<crate::model::dcgm_exporter::Reading>| {
                r.filter(|r| r.value <= 1).map(|r| Flag {
                    set: r.value == 1,
                    line: r.span.first_line,
                })
            };
            let remapper = Remapper {
                pending: flag(gpu.row_remap_pending),
                failure: flag(gpu.row_remap_failure),
                correctable: gpu.correctable_remapped_rows.map(|r| r.value),
                uncorrectable: gpu.uncorrectable_remapped_rows.map(|r| r.value),
            };
            if remapper.pending.is_none() && remapper.failure.is_none() {
                continue;
            }
            let (subject, label) = dcgm_gpu_named(&at, gpu);
            out.push(GpuRemap {
                at,
                subject,
                label,
                product: gpu.model_name.clone(),
                reading: Reading::Flags(remapper),
                tool: "dcgm-exporter",
            });
        }
    }
    out
}

/// Reads the remapper columns of every row of a CSV section into `latest`.
fn read_csv<'a>(
    at: SectionRef<'a>,
    csv: &'a crate::model::smi_csv::SmiCsv,
    pending_col: Option<usize>,
    failure_col: Option<usize>,
    latest: &mut BTreeMap<(HostKey<'a>, String), GpuRemap<'a>>,
) {
    for (n, row) in csv.rows.iter().enumerate() {
        let cell = |col: Option<usize>| col.and_then(|i| row.values.get(i));
        let flag = |col: Option<usize>| {
            cell(col).and_then(|v| yes_no(&v.text)).map(|set| Flag {
                set,
                line: row.line,
            })
        };
        let count = |names: &[&str]| {
            names
                .iter()
                .find_map(|n| csv.value(row, n))
                .and_then(|v| v.text.trim().parse::<u64>().ok())
        };
        let remapper = Remapper {
            pending: flag(pending_col),
            failure: flag(failure_col),
            correctable: count(&["remapped_rows.correctable", "remapped_rows.sbe"]),
            uncorrectable: count(&["remapped_rows.uncorrectable", "remapped_rows.dbe"]),
        };
        let reading = if remapper.pending.is_some() || remapper.failure.is_some() {
            Reading::Flags(remapper)
        } else if [pending_col, failure_col]
            .into_iter()
            .filter_map(cell)
            .any(|v| not_applicable(&v.text))
        {
            Reading::NotApplicable
        } else {
            continue;
        };
        let (subject, label, key) = super::gpu_pcie::csv_gpu(csv, row, at, n);
        let product = super::gpu_pcie::text_of(csv, row, "name");
        latest.insert(
            (at.host(), key),
            GpuRemap {
                at,
                subject,
                label,
                product,
                reading,
                tool: "nvidia-smi CSV query",
            },
        );
    }
}

/// DG003.
fn check_row_remap(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let gpus = readings(ctx);
    if gpus.is_empty() {
        return Coverage::Skipped(
            "no GPU row remapping flags in the input (nvidia-smi -q, -q -d ROW_REMAPPER, or a CSV query with remapped_rows.pending,remapped_rows.failure)"
                .to_owned(),
        );
    }
    for g in &gpus {
        if let Reading::Flags(r) = &g.reading {
            if let Some(f) = judge(g, r) {
                out.push(f);
            }
        }
    }
    Coverage::Checked(gpus.len())
}

/// The finding for a GPU whose remap is pending or failed, if it is.
fn judge(g: &GpuRemap<'_>, r: &Remapper) -> Option<Finding> {
    let pending = r.pending.filter(|f| f.set);
    let failure = r.failure.filter(|f| f.set);
    let severity = match (pending, failure) {
        (_, Some(_)) => Severity::Error,
        (Some(_), None) => Severity::Warning,
        (None, None) => return None,
    };
    let product = g
        .product
        .as_deref()
        .map(|p| format!(" ({p})"))
        .unwrap_or_default();
    let counts = match (r.correctable, r.uncorrectable) {
        (Some(c), Some(u)) => format!(
            " ({c} row(s) remapped for correctable errors, {u} for uncorrectable ones so far)"
        ),
        _ => String::new(),
    };
    let what = match (pending, failure) {
        (Some(_), Some(_)) => {
            "a row remapping failed, and another is pending a GPU reset: treat the GPU as faulty"
        }
        (None, Some(_)) => "a row remapping failed: the GPU could not replace a failing memory row",
        _ => "a row remap is pending: the GPU must be reset (or the node rebooted) to replace the failing memory row",
    };
    let mut finding = DG003
        .finding(
            g.subject.clone(),
            format!("{}{product}: {what}{counts}", g.label),
        )
        .severity(severity);
    if let Some(f) = failure {
        finding = finding.evidence(Evidence::new(
            if g.tool == "dcgm-exporter" {
                "dcgm-exporter: DCGM_FI_DEV_ROW_REMAP_FAILURE 1".to_owned()
            } else {
                format!("{}: Remapping Failure Occurred: Yes", g.tool)
            },
            LineSpan::line(f.line),
            g.at.source(),
        ));
    }
    if let Some(p) = pending {
        // A CSV row holds both flags on one line: cited once.
        if failure.is_none_or(|f| f.line != p.line) {
            finding = finding.evidence(Evidence::new(
                if g.tool == "dcgm-exporter" {
                    "dcgm-exporter: DCGM_FI_DEV_ROW_REMAP_PENDING 1".to_owned()
                } else {
                    format!("{}: Pending: Yes", g.tool)
                },
                LineSpan::line(p.line),
                g.at.source(),
            ));
        }
    }
    let (threshold, remediation) = if failure.is_some() {
        (
            Threshold::new(
                "Remapping Failure Occurred: No",
                "NVIDIA GPU Memory Error Management, RMA policy (failure flag set and confirmed by the field diagnostic); NVML nvmlDeviceGetRemappedRows failureOccurred",
            ),
            "Drain the GPU and keep it out of service; run NVIDIA's field diagnostic, collect nvidia-bug-report.sh and open a hardware (RMA) case.",
        )
    } else {
        (
            Threshold::new(
                "Pending: No",
                "NVIDIA GPU Memory Error Management: row remapping takes effect at the next GPU reset; NVML nvmlDeviceGetRemappedRows isPending",
            ),
            "Drain the GPU, then reset it (nvidia-smi -r -i <id>, no process using it) or reboot the node; check that Pending reads No afterwards.",
        )
    };
    Some(finding.threshold(threshold).remediation(remediation))
}

declare_rule! {
    /// ### What it detects
    /// A GPU whose `Volatile Uncorr. ECC` cell in the `nvidia-smi` summary
    /// table holds a count above 0.
    ///
    /// ### Why it matters
    /// The volatile count is the uncorrectable ECC errors the GPU's memory
    /// had since the driver last loaded: on a healthy GPU, even a busy,
    /// year-old one, it is 0. An uncorrectable error corrupted data that a
    /// job read (the driver raises Xid 48 or 94/95 and the job using the
    /// memory is stopped), and the failing page or row is only taken out of
    /// use for good once the GPU is reset: page retirement (pre-Ampere)
    /// and row remapping (Ampere and later) take effect then. Until then
    /// the GPU runs with a known-bad location, so it is a `warning`; what
    /// the remapper decided is DG003's (`nvidia-smi -q`). `N/A` (GPUs
    /// without ECC, or ECC off) and `ERR!` (DG004) are not counts, and a
    /// cell cut at the right is not read: no verdict.
    ///
    /// ### Evidence
    /// The GPU's first row, with the count.
    ///
    /// ### What to do
    /// Drain the GPU, then reset it (`nvidia-smi -r -i <id>`, no process
    /// using it) or reboot the node so that the row is remapped (or the
    /// page retired). Check `nvidia-smi -q -d ROW_REMAPPER` (or
    /// `-d PAGE_RETIREMENT` before Ampere) afterwards: a remapping failure
    /// or a count that comes back qualifies the GPU for NVIDIA's RMA
    /// process; run `dcgmi diag -r 3` before returning it to service.
    ///
    /// ### Thresholds and sources
    /// More than 0 since the driver loaded: NVIDIA GPU Memory Error
    /// Management (docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt: an
    /// uncorrectable error makes the row pending a remap, effective at the
    /// next GPU reset); NVIDIA Dynamic Page Retirement
    /// (docs.nvidia.com/deploy/dynamic-page-retirement: a retired page
    /// takes effect when the driver reloads); `nvidia-smi --help-query-gpu`
    /// (`ecc.errors.uncorrected.volatile.total`: volatile counters are
    /// reset at driver load); DCGM's health watch reports any DBE as a
    /// failure. dcgm-exporter's `DCGM_FI_DEV_ECC_DBE_VOL_TOTAL` (volatile
    /// double-bit errors, the same count) is judged alike.
    pub static DG005 = {
        id: "DG005",
        name: "gpu-volatile-uncorrectable-ecc",
        family: Diagnostics,
        severity: Warning,
        summary: "uncorrectable ECC errors since the driver loaded (nvidia-smi table)",
        needs: "nvidia-smi (the default summary table), on GPUs with ECC, or dcgm-exporter's DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
        check: check_volatile_ecc,
    }
}

/// DG005.
fn check_volatile_ecc(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let gpus = super::gpu_state::table_gpus(ctx);
    let mut judged = 0usize;
    for g in &gpus {
        let Some(count) = g.gpu.volatile_uncorrected_ecc_count else {
            continue;
        };
        judged += 1;
        if count == 0 {
            continue;
        }
        out.push(
            DG005
                .finding(
                    g.subject(),
                    format!(
                        "{}: {count} uncorrectable ECC error(s) since the driver loaded: the GPU must be reset to retire the failing memory",
                        g.label()
                    ),
                )
                .evidence(Evidence::new(
                    format!("nvidia-smi: GPU {} Volatile Uncorr. ECC {count}", g.gpu.index),
                    LineSpan::line(g.gpu.span.first_line),
                    g.at.source(),
                ))
                .threshold(Threshold::new(
                    "0 since the driver loaded",
                    "NVIDIA GPU Memory Error Management (row remap pending until GPU reset); NVIDIA Dynamic Page Retirement; nvidia-smi --help-query-gpu ecc.errors.uncorrected.volatile",
                ))
                .remediation(
                    "Drain the GPU, reset it (nvidia-smi -r -i <id>) or reboot the node; then check nvidia-smi -q -d ROW_REMAPPER (PAGE_RETIREMENT before Ampere) and run dcgmi diag -r 3 before returning it to service.",
                ),
        );
    }
    judged += dcgm_volatile_ecc(ctx, out);
    if judged == 0 {
        return Coverage::Skipped(if gpus.is_empty() {
            "no nvidia-smi summary table in the input".to_owned()
        } else {
            "no GPU of the nvidia-smi table prints a volatile uncorrectable ECC count (N/A, ERR! or cut)".to_owned()
        });
    }
    Coverage::Checked(judged)
}

/// DG005 on dcgm-exporter's `DCGM_FI_DEV_ECC_DBE_VOL_TOTAL`: the
/// uncorrectable (double-bit) ECC errors since the driver loaded, the count
/// nvidia-smi's table prints as `Volatile Uncorr. ECC`. How many GPUs were
/// read.
fn dcgm_volatile_ecc(ctx: &Context<'_>, out: &mut Vec<Finding>) -> usize {
    let mut judged = 0usize;
    for at in ctx.sections() {
        let SectionData::DcgmExporter(m) = &at.section.data else {
            continue;
        };
        for gpu in m.hosts.iter().flat_map(|h| &h.gpus) {
            let Some(r) = gpu.ecc_dbe_volatile else {
                continue;
            };
            judged += 1;
            if r.value == 0 {
                continue;
            }
            let (subject, label) = dcgm_gpu_named(&at, gpu);
            out.push(
                DG005
                    .finding(
                        subject,
                        format!(
                            "{label}: {} uncorrectable ECC error(s) since the driver loaded: the GPU must be reset to retire the failing memory",
                            r.value
                        ),
                    )
                    .evidence(Evidence::new(
                        format!("dcgm-exporter: DCGM_FI_DEV_ECC_DBE_VOL_TOTAL {}", r.value),
                        r.span,
                        at.source(),
                    ))
                    .threshold(Threshold::new(
                        "0 since the driver loaded",
                        "NVIDIA GPU Memory Error Management (row remap pending until GPU reset); NVIDIA Dynamic Page Retirement; DCGM field DCGM_FI_DEV_ECC_DBE_VOL_TOTAL (volatile double-bit errors)",
                    ))
                    .remediation(
                        "Drain the GPU, reset it (nvidia-smi -r -i <id>) or reboot the node; then check nvidia-smi -q -d ROW_REMAPPER (PAGE_RETIREMENT before Ampere) and run dcgmi diag -r 3 before returning it to service.",
                    ),
            );
        }
    }
    judged
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testing::{findings_of, skipped_reason};

    /// An `nvidia-smi -q` block of one A100 with the remapper's lines given
    /// (`None` leaves the section out; a value `N/A` alone prints the
    /// pre-Ampere one-line form).
    fn query(remap: Option<&str>) -> String {
        let mut s = String::from(
            "==============NVSMI LOG==============\n\n\
             Timestamp                                 : Sat Dec  5 09:00:00 2026\n\
             Driver Version                            : 550.90.07\n\
             CUDA Version                              : 12.4\n\n\
             Attached GPUs                             : 1\n\
             GPU 00000000:3B:00.0\n    \
             Product Name                          : NVIDIA A100-SXM4-80GB\n    \
             GPU UUID                              : GPU-0a1b2c3d-0000-1111-2222-333344445555\n    \
             Retired Pages\n        \
             Single Bit ECC                    : N/A\n        \
             Double Bit ECC                    : N/A\n        \
             Pending Page Blacklist            : N/A\n",
        );
        if let Some(r) = remap {
            s.push_str(r);
        }
        s.push_str(
            "    Temperature\n        \
             GPU Current Temp                  : 30 C\n",
        );
        s
    }

    fn rows(corr: u64, pending: &str, failure: &str) -> String {
        format!(
            "    Remapped Rows\n        \
             Correctable Error                 : {corr}\n        \
             Uncorrectable Error               : 0\n        \
             Pending                           : {pending}\n        \
             Remapping Failure Occurred        : {failure}\n        \
             Bank Remap Availability Histogram\n            \
             Max                           : 638 bank(s)\n            \
             High                          : 2 bank(s)\n"
        )
    }

    #[test]
    fn a_pending_remap_is_a_warning_citing_its_line() {
        let text = query(Some(&rows(2, "Yes", "No")));
        let f = findings_of(&DG003, &text);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].severity, Severity::Warning);
        assert_eq!(f[0].subject.bus_id.as_deref(), Some("00000000:3B:00.0"));
        assert!(f[0].message.contains("pending"), "{}", f[0].message);
        assert!(
            f[0].message.contains("2 row(s) remapped for correctable"),
            "{}",
            f[0].message
        );
        // Line 18 of the text: banner, blank, 3 header lines, blank,
        // Attached, GPU, 2 identity lines, 4 Retired Pages lines, the
        // heading, two counts, then Pending (counted by hand).
        let pending_line = text
            .lines()
            .position(|l| l.trim_start().starts_with("Pending    "))
            .map(|i| i + 1);
        assert_eq!(pending_line, Some(18));
        assert_eq!(f[0].evidence.len(), 1);
        assert_eq!(f[0].evidence[0].span, LineSpan::line(18));
    }

    #[test]
    fn a_failure_is_an_error_and_cites_both_flags_when_both_are_set() {
        let f = findings_of(&DG003, &query(Some(&rows(0, "No", "Yes"))));
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].severity, Severity::Error);
        assert_eq!(f[0].evidence[0].span, LineSpan::line(19));
        let f = findings_of(&DG003, &query(Some(&rows(0, "Yes", "Yes"))));
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].severity, Severity::Error);
        let lines: Vec<usize> = f[0].evidence.iter().map(|e| e.span.first_line).collect();
        assert_eq!(lines, [19, 18]);
    }

    #[test]
    fn counts_alone_are_history_and_quiet() {
        let text = query(Some(&rows(7, "No", "No")));
        assert!(findings_of(&DG003, &text).is_empty());
        assert_eq!(skipped_reason(&DG003, &text), None);
    }

    #[test]
    fn not_applicable_is_checked_and_quiet_and_absence_skips() {
        let one_line = query(Some("    Remapped Rows                         : N/A\n"));
        assert!(findings_of(&DG003, &one_line).is_empty());
        assert_eq!(skipped_reason(&DG003, &one_line), None);
        let mig = query(Some(&rows(0, "N/A", "N/A")));
        assert!(findings_of(&DG003, &mig).is_empty());
        assert_eq!(skipped_reason(&DG003, &mig), None);
        let why = skipped_reason(&DG003, &query(None)).unwrap_or_default();
        assert!(why.contains("no GPU row remapping flags"), "{why}");
    }

    #[test]
    fn a_section_cut_before_its_flags_is_not_judged() {
        let cut = query(None)
            .lines()
            .take(14)
            .chain([
                "    Remapped Rows",
                "        Correctable Error                 : 1",
            ])
            .collect::<Vec<_>>()
            .join("\n");
        assert!(findings_of(&DG003, &cut).is_empty());
        assert!(skipped_reason(&DG003, &cut).is_some());
    }

    #[test]
    fn xml_flags_are_read() {
        let text = "<?xml version=\"1.0\" ?>\n<nvidia_smi_log>\n\t<driver_version>550.90.07</driver_version>\n\t<attached_gpus>1</attached_gpus>\n\t<gpu id=\"00000000:3B:00.0\">\n\t\t<product_name>NVIDIA A100-SXM4-80GB</product_name>\n\t\t<remapped_rows>\n\t\t\t<remapped_row_corr>1</remapped_row_corr>\n\t\t\t<remapped_row_unc>0</remapped_row_unc>\n\t\t\t<remapped_row_pending>Yes</remapped_row_pending>\n\t\t\t<remapped_row_failure>No</remapped_row_failure>\n\t\t</remapped_rows>\n\t</gpu>\n</nvidia_smi_log>\n";
        let f = findings_of(&DG003, text);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].severity, Severity::Warning);
        assert_eq!(f[0].evidence[0].span, LineSpan::line(10));
        assert!(f[0].evidence[0].text.starts_with("nvidia-smi -q -x:"));
        assert_eq!(f[0].subject.bus_id.as_deref(), Some("00000000:3B:00.0"));
    }

    #[test]
    fn csv_rows_give_one_finding_per_gpu_at_their_latest_reading() {
        let text = "$ nvidia-smi --query-gpu=index,pci.bus_id,remapped_rows.correctable,remapped_rows.uncorrectable,remapped_rows.pending,remapped_rows.failure --format=csv\n\
                    index, pci.bus_id, remapped_rows.correctable, remapped_rows.uncorrectable, remapped_rows.pending, remapped_rows.failure\n\
                    0, 00000000:07:00.0, 0, 0, No, No\n\
                    1, 00000000:0B:00.0, 1, 0, Yes, No\n\
                    2, 00000000:48:00.0, 0, 3, No, Yes\n\
                    3, 00000000:4C:00.0, [N/A], [N/A], [N/A], [N/A]\n";
        let mut f = findings_of(&DG003, text);
        f.sort_by_key(|f| f.subject.gpu);
        assert_eq!(f.len(), 2, "{f:#?}");
        assert_eq!(f[0].subject.gpu, Some(1));
        assert_eq!(f[0].severity, Severity::Warning);
        assert_eq!(f[0].evidence[0].span, LineSpan::line(4));
        assert_eq!(f[1].subject.gpu, Some(2));
        assert_eq!(f[1].severity, Severity::Error);
        assert_eq!(f[1].evidence.len(), 1);
    }

    #[test]
    fn flag_words() {
        assert_eq!(yes_no(" Yes "), Some(true));
        assert_eq!(yes_no("No"), Some(false));
        assert_eq!(yes_no("N/A"), None);
        assert_eq!(yes_no("Ye"), None);
        assert!(not_applicable("[N/A]"));
        assert!(not_applicable("[Not Supported]"));
        assert!(!not_applicable("No"));
    }
}
