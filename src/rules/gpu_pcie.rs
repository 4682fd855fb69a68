//! TP005: a busy GPU whose PCIe link runs below what the GPU and its slot
//! allow, from `nvidia-smi -q` (text or XML) or `--query-gpu` CSV.
//!
//! The link between a GPU and its PCIe switch carries everything that is
//! not NVLink: host copies, and GPUDirect RDMA between the GPU and its
//! rail's NIC. One that trained at half its width halves that rail.

use super::context::{Context, HostKey, SectionRef};
use super::{Coverage, Evidence, Finding, Subject, Threshold};
use crate::declare_rule;
use crate::model::gpu_pcie::PcieLink;
use crate::model::smi_csv::{CsvRow, SmiCsv};
use crate::parse::SectionData;
use crate::span::LineSpan;
use std::collections::BTreeMap;

/// GPU utilization at or above which a reading counts as "in use": the
/// driver lowers an idle GPU's link, and a GPU at half load or more is
/// busy by any sampling window.
pub const BUSY_PERCENT: f64 = 50.0;

declare_rule! {
    /// ### What it detects
    /// A GPU whose PCIe link runs at a lower generation or with fewer lanes
    /// than the GPU and the system allow (`Current` below `Max` in
    /// `nvidia-smi -q`, `pcie.link.*.current` below `pcie.link.*.max` in
    /// `--query-gpu` CSV) while the same reading shows the GPU busy
    /// (utilization ≥ 50 %).
    ///
    /// ### Why it matters
    /// Host copies and GPUDirect RDMA to the GPU's NIC cross this link: at
    /// x8 instead of x16, or Gen3 instead of Gen5, the GPU's rail gets a
    /// half or a quarter of its bandwidth, with no error counted anywhere.
    /// A riser or card not fully seated, a failing retimer or a BIOS link
    /// setting does it. `Max` already accounts for the slot (a x16 GPU in a
    /// x8 slot reports x8), so a lower current value is not the platform's
    /// design. An idle GPU lowers its link to save power ("may be reduced
    /// when the GPU is not in use", `nvidia-smi --help-query-gpu`): an idle
    /// or unknown utilization is not judged when its link is below its max;
    /// a link at its max generation and width is sound at any load.
    ///
    /// ### Evidence
    /// The link's `Current`/`Max` lines and the utilization line.
    ///
    /// ### What to do
    /// Drain the node; reseat the GPU (or its riser/baseboard cable) and
    /// check the slot's BIOS link settings; compare with
    /// `lspci -vv -s <bus id>` (`LnkSta: … (downgraded)`); if it trains
    /// down again, open a hardware case.
    ///
    /// ### Thresholds and sources
    /// Current below max under load (NVSentinel#890 compares
    /// `pcie.link.{gen,width}.current` with `.max`; GCP cluster-health-check
    /// checks the GPU's PCIe width); "in use" is utilization ≥ 50 %
    /// (fabricscope: idle links are lowered by the driver).
    pub static TP005 = {
        id: "TP005",
        name: "gpu-pcie-link-degraded",
        family: Topology,
        severity: Warning,
        summary: "Busy GPU's PCIe link below the generation or width it and its slot allow",
        needs: "nvidia-smi -q (or --query-gpu with pcie.link.* and utilization.gpu)",
        check: check_pcie_link,
    }
}

/// One GPU's latest link reading.
struct GpuLink<'a> {
    at: SectionRef<'a>,
    subject: Subject,
    label: String,
    product: Option<String>,
    link: PcieLink,
    /// `nvidia-smi -q` or `--query-gpu`.
    tool: &'static str,
}

/// TP005.
fn check_pcie_link(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let links = gpu_links(ctx);
    if links.is_empty() {
        return Coverage::Skipped(
            "no GPU PCIe link values in the input (nvidia-smi -q, or --query-gpu with pcie.link.*)"
                .to_owned(),
        );
    }
    let is_busy = |g: &GpuLink<'_>| {
        g.link
            .utilization_percent
            .is_some_and(|u| u >= BUSY_PERCENT)
    };
    let busy: Vec<&GpuLink<'_>> = links.iter().filter(|g| is_busy(g)).collect();
    // A link at its max generation and width is judged sound whatever the
    // load: the driver lowers an idle link, it never raises one.
    let at_max = links
        .iter()
        .filter(|g| g.link.is_at_max() && !is_busy(g))
        .count();
    if busy.is_empty() && at_max == 0 {
        return Coverage::Skipped(format!(
            "no reading shows a GPU busy (utilization ≥ {BUSY_PERCENT} %) or its link at its max: \
             an idle GPU's driver lowers its PCIe link, so a link below its max is judged only \
             under load"
        ));
    }
    for g in &busy {
        if let Some(finding) = judge(g) {
            out.push(finding);
        }
    }
    Coverage::Checked(busy.len() + at_max)
}

/// The finding for a busy GPU's link below its max, if it is.
fn judge(g: &GpuLink<'_>) -> Option<Finding> {
    let link = &g.link;
    if !link.is_below_max() {
        return None;
    }
    let shape = |gen: Option<u32>, width: Option<u32>| match (gen, width) {
        (Some(gen), Some(width)) => format!("Gen{gen} x{width}"),
        (Some(gen), None) => format!("Gen{gen}"),
        (None, Some(width)) => format!("x{width}"),
        (None, None) => "?".to_owned(),
    };
    let now = shape(link.gen_current, link.width_current);
    let max = shape(link.gen_max, link.width_max);
    // The share of bandwidth left, when every value is known.
    let share = match (
        link.gen_current,
        link.width_current,
        link.gen_max,
        link.width_max,
    ) {
        (Some(gc), Some(wc), Some(gm), Some(wm)) => PcieLink::gbytes_per_second(gc, wc)
            .zip(PcieLink::gbytes_per_second(gm, wm))
            .filter(|&(_, full)| full > 0.0)
            .map(|(now, full)| {
                format!(
                    ": {now:.0} of {full:.0} GB/s per direction ({:.0} %)",
                    100.0 * now / full
                )
            }),
        _ => None,
    }
    .unwrap_or_default();
    let utilization = link.utilization_percent.unwrap_or_default();
    let product = g
        .product
        .as_deref()
        .map(|p| format!(" ({p})"))
        .unwrap_or_default();
    let mut finding = TP005
        .finding(
            g.subject.clone(),
            format!(
                "{}{product}: PCIe link at {now} of {max} while {utilization:.0} % busy{share}",
                g.label
            ),
        )
        .evidence(Evidence::new(
            format!("{}: PCIe link {now} (max {max})", g.tool),
            link.link_lines,
            g.at.source(),
        ));
    if let Some(line) = link
        .utilization_line
        .filter(|l| !link.link_lines.contains(*l))
    {
        finding = finding.evidence(Evidence::new(
            format!("{}: GPU utilization {utilization:.0} %", g.tool),
            LineSpan::line(line),
            g.at.source(),
        ));
    }
    Some(
        finding
            .threshold(Threshold::new(
                format!("current generation and width = max while utilization ≥ {BUSY_PERCENT} %"),
                "NVML max link generation/width (what GPU and slot allow); NVSentinel#890, \
                 GCP cluster-health-check PCIe width check",
            ))
            .remediation(
                "Drain the node; reseat the GPU or its riser/cable, check the slot's BIOS link \
                 settings and `lspci -vv` LnkSta; open a hardware case if it trains down again.",
            ),
    )
}

/// Every GPU's latest PCIe link reading, from `-q` blocks and CSV rows.
fn gpu_links<'a>(ctx: &Context<'a>) -> Vec<GpuLink<'a>> {
    let mut links = Vec::new();
    for (at, gpu) in ctx.smi_gpus() {
        let Some(link) = PcieLink::of_query(gpu) else {
            continue;
        };
        let (subject, label) = super::nvlink::smi_gpu_named(&at, gpu);
        links.push(GpuLink {
            at,
            subject,
            label,
            product: gpu.product_name.clone(),
            link,
            tool: "nvidia-smi -q",
        });
    }
    // CSV: the last row of each GPU (a `-l` loop prints one per interval).
    type Key<'k> = (HostKey<'k>, String);
    let mut latest: BTreeMap<Key<'a>, GpuLink<'a>> = BTreeMap::new();
    for at in ctx.sections() {
        let SectionData::SmiCsv(csv) = &at.section.data else {
            continue;
        };
        for (n, row) in csv.rows.iter().enumerate() {
            let Some(link) = PcieLink::of_csv_row(csv, row) else {
                break;
            };
            let (subject, label, key) = csv_gpu(csv, row, at, n);
            let product = text_of(csv, row, "name");
            latest.insert(
                (at.host(), key),
                GpuLink {
                    at,
                    subject,
                    label,
                    product,
                    link,
                    tool: "nvidia-smi --query-gpu",
                },
            );
        }
    }
    links.extend(latest.into_values());
    links
}

/// A CSV value's text, unless the tool could not give one.
pub(super) fn text_of(csv: &SmiCsv, row: &CsvRow, name: &str) -> Option<String> {
    csv.value(row, name)
        .filter(|v| !v.is_missing() && !v.text.trim().is_empty())
        .map(|v| v.text.trim().to_owned())
}

/// The subject, label and identity of the GPU of a CSV row: its UUID, bus
/// id or index, as the query asked for them; a row with none of them is a
/// GPU of its own (row `n` of the section).
pub(super) fn csv_gpu(
    csv: &SmiCsv,
    row: &CsvRow,
    at: SectionRef<'_>,
    n: usize,
) -> (Subject, String, String) {
    let uuid = text_of(csv, row, "uuid").or_else(|| text_of(csv, row, "gpu_uuid"));
    let bus_id = text_of(csv, row, "pci.bus_id").or_else(|| text_of(csv, row, "gpu_bus_id"));
    let index = text_of(csv, row, "index").and_then(|i| i.parse::<u32>().ok());
    let known = uuid.is_some() || bus_id.is_some() || index.is_some();
    let label = match (&bus_id, index) {
        (Some(bus), _) => format!("GPU {bus}"),
        (None, Some(i)) => format!("GPU {i}"),
        (None, None) => uuid
            .as_deref()
            .map_or_else(|| "unknown GPU".to_owned(), |u| format!("GPU {u}")),
    };
    let key = uuid
        .clone()
        .or_else(|| bus_id.clone())
        .or_else(|| index.map(|i| i.to_string()))
        .unwrap_or_else(|| format!("{}:{}:{n}", at.doc, at.section.span.first_line));
    let subject = Subject {
        host: at.host().name().map(str::to_owned),
        gpu: index,
        gpu_uuid: uuid,
        bus_id,
        gpu_unknown: !known,
        ..Subject::default()
    };
    (subject, label, key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testing::{findings_of, skipped_reason};

    /// An `nvidia-smi -q` block with the link and utilization given.
    fn query(gen: (u32, u32), width: (&str, &str), util: &str) -> String {
        format!(
            "==============NVSMI LOG==============\n\n\
             Timestamp                                 : Tue Dec  1 10:00:00 2026\n\
             Driver Version                            : 570.86.15\n\
             CUDA Version                              : 12.8\n\n\
             Attached GPUs                             : 1\n\
             GPU 00000000:19:00.0\n    \
             Product Name                          : NVIDIA H100 80GB HBM3\n    \
             GPU UUID                              : GPU-1111aaaa-2222-3333-4444-555566667777\n    \
             PCI\n        \
             Bus                                   : 0x19\n        \
             Bus Id                                : 00000000:19:00.0\n        \
             GPU Link Info\n            \
             PCIe Generation\n                \
             Max                               : {}\n                \
             Current                           : {}\n            \
             Link Width\n                \
             Max                               : {}\n                \
             Current                           : {}\n    \
             Utilization\n        \
             Gpu                                   : {util}\n        \
             Memory                                : 40 %\n",
            gen.1, gen.0, width.1, width.0
        )
    }

    #[test]
    fn busy_gpu_at_half_width_is_a_warning() {
        let f = findings_of(&TP005, &query((5, 5), ("8x", "16x"), "98 %"));
        assert_eq!(f.len(), 1, "{f:#?}");
        let msg = &f[0].message;
        assert!(msg.contains("Gen5 x8 of Gen5 x16"), "{msg}");
        assert!(msg.contains("(50 %)"), "{msg}");
        assert_eq!(f[0].subject.bus_id.as_deref(), Some("00000000:19:00.0"));
        assert_eq!(f[0].evidence.len(), 2);
    }

    #[test]
    fn busy_gpu_at_a_lower_generation_is_a_warning() {
        let f = findings_of(&TP005, &query((3, 5), ("16x", "16x"), "100 %"));
        assert_eq!(f.len(), 1, "{f:#?}");
        assert!(
            f[0].message.contains("Gen3 x16 of Gen5 x16"),
            "{}",
            f[0].message
        );
    }

    #[test]
    fn idle_gpu_with_a_lowered_link_is_not_judged() {
        let text = query((1, 5), ("16x", "16x"), "0 %");
        assert!(findings_of(&TP005, &text).is_empty());
        let why = skipped_reason(&TP005, &text).unwrap_or_default();
        assert!(why.contains("idle"), "{why}");
    }

    #[test]
    fn an_idle_gpu_at_its_max_link_is_checked_and_quiet() {
        // Gen3 x16 of Gen3 x16 with no utilization read (a `-q` fragment):
        // nothing was lowered, so the link is sound at any load.
        let text = query((3, 3), ("16x", "16x"), "0 %");
        assert!(findings_of(&TP005, &text).is_empty());
        assert_eq!(skipped_reason(&TP005, &text), None);
        // Width at max but generation lowered: still not judged idle.
        let text = query((1, 4), ("16x", "16x"), "0 %");
        assert!(skipped_reason(&TP005, &text).is_some());
    }

    #[test]
    fn full_link_under_load_is_checked_and_quiet() {
        let text = query((5, 5), ("16x", "16x"), "97 %");
        assert!(findings_of(&TP005, &text).is_empty());
        assert_eq!(skipped_reason(&TP005, &text), None);
    }

    #[test]
    fn csv_rows_are_judged_by_their_latest_reading() {
        let text = "$ nvidia-smi --query-gpu=index,pci.bus_id,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,utilization.gpu --format=csv\n\
                    index, pci.bus_id, pcie.link.gen.current, pcie.link.gen.max, pcie.link.width.current, pcie.link.width.max, utilization.gpu [%]\n\
                    0, 00000000:19:00.0, 5, 5, 16, 16, 99 %\n\
                    1, 00000000:3B:00.0, 5, 5, 8, 16, 99 %\n\
                    2, 00000000:4C:00.0, 1, 5, 16, 16, 0 %\n";
        let f = findings_of(&TP005, text);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].subject.gpu, Some(1));
        assert!(f[0].message.contains("x8 of Gen5 x16"), "{}", f[0].message);
    }

    #[test]
    fn newer_csv_names_are_read_and_a_gpu_max_alone_is_no_max() {
        // Gen5 GPUs in a Gen4 host: `gpumax` 5 is the GPU's own; with the
        // host's 4 beside it, Gen4 is the link's max and is no finding.
        let text = "$ nvidia-smi --query-gpu=index,pcie.link.gen.gpucurrent,pcie.link.gen.gpumax,pcie.link.gen.hostmax,utilization.gpu --format=csv,noheader\n\
                    0, 4, 5, 4, 99 %\n\
                    1, 3, 5, 4, 99 %\n\
                    2, 4, 5, [N/A], 99 %\n";
        let f = findings_of(&TP005, text);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].subject.gpu, Some(1));
        assert!(f[0].message.contains("Gen3 of Gen4"), "{}", f[0].message);
    }

    #[test]
    fn no_link_values_skip_the_rule() {
        let why = skipped_reason(&TP005, "GPU 0: NVIDIA H100 (UUID: GPU-1)\n").unwrap_or_default();
        assert!(why.contains("no GPU PCIe link values"), "{why}");
    }
}
