//! DG008: a GPU the NVIDIA driver failed to bring up, that fell off the
//! bus without an Xid, or that the installed driver does not support.
//!
//! `nvidia-smi` then shows one GPU fewer (or `No devices were found`), and
//! no Xid says why: the kernel log's `RmInitAdapter failed!` line does.

use super::context::{Context, HostKey, SectionRef};
use super::pcie_aer::canonical;
use super::{Coverage, Evidence, Finding, Severity, Subject, Threshold};
use crate::declare_rule;
use crate::model::kernel_log::{GpuInitEvent, GpuInitWhat, XidSource};
use crate::parse::SectionData;
use std::collections::BTreeMap;

declare_rule! {
    /// ### What it detects
    /// A GPU whose kernel log shows the NVIDIA driver failing to
    /// initialise it (`NVRM: GPU 0000:3b:00.0: RmInitAdapter failed!
    /// (0x26:0xffff:1477)`, `NVRM: GPU 0000:3b:00.0: rm_init_adapter
    /// failed, device minor number 2`), falling off the bus without an Xid
    /// (`NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.`, `NVRM: The
    /// NVIDIA GPU 0000:b3:00.0 (PCI ID: 10de:26b5) installed in this system
    /// has fallen off the bus and is not responding to commands.`), or not
    /// supported by the driver installed (`NVRM: The NVIDIA GPU
    /// 0000:02:00.0 (PCI ID: 10de:1b38) installed in this system is not
    /// supported by the …`). One finding per GPU (by PCI address, which
    /// joins its Xid and PCIe AER findings in one incident).
    ///
    /// ### Why it matters
    /// A GPU the driver cannot initialise is not usable: `nvidia-smi`
    /// lists one GPU fewer or none, and jobs asking for all of the node's
    /// GPUs fail: `error`, when the log ran to its end (a prompt or other
    /// output follows it); when the paste may be cut after the failure, a
    /// bring-up may be in what was not pasted: `warning`, saying so. The same for a GPU that fell off the bus. When a
    /// later line of the same log shows the GPU up (the DRM device
    /// registered for it, `[drm] Initialized nvidia-drm … for
    /// 0000:3b:00.0`, or an Xid of it, which only a running GPU logs), the
    /// failure did not last: `warning` (a retry or a driver reload brought
    /// it up; it may fail again at the next boot). A GPU the installed
    /// driver does not support (a legacy GPU after the branch that
    /// dropped it, or the open kernel module on a GPU without GSP) is a
    /// configuration to fix, not a fault of the GPU: `warning`. A `fallen
    /// off the bus` line that an Xid 79 of the same GPU goes with is left
    /// to DG006. A message cut by the end of the paste names its GPU and is
    /// not judged.
    ///
    /// ### Evidence
    /// The first and the last failure line, and the line showing it up.
    ///
    /// ### What to do
    /// Check that the driver, its firmware and the kernel module match
    /// (`nvidia-smi`, `dmesg | grep -i -e NVRM -e gsp`, the installed
    /// packages): a driver upgrade half done or a module built for another
    /// kernel fails every GPU; on GSP errors, try the driver's other
    /// kernel module flavour or its GSP firmware setting as NVIDIA's
    /// README says. For one GPU of several: reseat it and its power
    /// cables, check its PCIe link (`lspci -vv -s <address>`) and the
    /// PCIe AER lines of its address, and update the system BIOS. Collect
    /// `nvidia-bug-report.sh` before opening a case. For an unsupported
    /// GPU: install the driver branch that supports it (the legacy branch,
    /// or the proprietary kernel module for a GPU without GSP).
    ///
    /// ### Thresholds and sources
    /// Any failure line. Line shapes: public pastes of the NVIDIA driver
    /// (github.com/NVIDIA/gpu-operator issues 649 and 1146,
    /// github.com/NVIDIA/NVSentinel issue 155, github.com/flatcar/Flatcar
    /// issue 1283, github.com/NVIDIA/open-gpu-kernel-modules issue 696).
    /// The later-success rule is fabricscope's own.
    pub static DG008 = {
        id: "DG008",
        name: "kernel-gpu-init-failed",
        family: Diagnostics,
        severity: Error,
        summary: "the kernel log shows a GPU the NVIDIA driver failed to initialise, that fell off the bus without an Xid, or that the driver does not support",
        needs: "the kernel log's NVRM lines (dmesg | grep NVRM, journalctl -k)",
        check: check_init,
    }
}

/// One GPU's lines of one host, in order: (section order, event).
struct Gpu<'a> {
    at: SectionRef<'a>,
    bus: String,
    lines: Vec<(usize, &'a GpuInitEvent)>,
    /// The order of the GPU's Xid lines, and whether one is a 79.
    xids: Vec<(usize, u32)>,
    /// Whether the log of its last line ran to its end (a prompt or other
    /// output follows): else the paste may be cut after it, and a missing
    /// bring-up is no evidence.
    whole: bool,
}

/// DG008.
fn check_init(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let mut gpus: BTreeMap<(HostKey<'_>, String), Gpu<'_>> = BTreeMap::new();
    let mut logs = 0usize;
    let mut xids: Vec<(HostKey<'_>, String, usize, u32)> = Vec::new();
    for (section, at) in ctx.sections().enumerate() {
        let SectionData::KernelLog(log) = &at.section.data else {
            continue;
        };
        for e in &log.events {
            if let (XidSource::Gpu, Some(bus)) = (e.source, &e.bus_id) {
                let order = section * 1_000_000 + e.span.first_line;
                xids.push((at.host(), canonical(bus), order, e.code.unwrap_or(0)));
            }
        }
        if log.gpu_init_events.is_empty() {
            continue;
        }
        logs += 1;
        let whole = !ctx.ends_input_mid_output(at);
        for e in &log.gpu_init_events {
            let Some(bus) = &e.bus_id else { continue };
            let bus = canonical(bus);
            let order = section * 1_000_000 + e.span.first_line;
            let g = gpus.entry((at.host(), bus.clone())).or_insert_with(|| Gpu {
                at,
                bus,
                lines: Vec::new(),
                xids: Vec::new(),
                whole: true,
            });
            g.lines.push((order, e));
            g.whole = whole;
        }
    }
    if logs == 0 {
        return Coverage::Skipped("no NVRM GPU initialisation line in the kernel log".to_owned());
    }
    for (host, bus, order, code) in xids {
        if let Some(g) = gpus.get_mut(&(host, bus)) {
            g.xids.push((order, code));
        }
    }
    let mut judged = 0usize;
    for g in gpus.values() {
        if let Some(f) = finding(g) {
            out.push(f);
        }
        // A GPU whose lines are whole is judged (quiet when it came up).
        judged += usize::from(g.lines.iter().any(|(_, e)| e.what.is_some()));
    }
    if judged == 0 {
        return Coverage::Skipped("every NVRM GPU message of the kernel log is cut".to_owned());
    }
    Coverage::Checked(judged)
}

/// Whether a line is a failure this rule judges.
fn is_failure(g: &Gpu<'_>, e: &GpuInitEvent) -> bool {
    match e.what {
        Some(GpuInitWhat::RmInitAdapterFailed { .. } | GpuInitWhat::RmInitFailed { .. }) => true,
        // DG006 says it, with its Xid 79.
        Some(GpuInitWhat::FallenOffBus) => !g.xids.iter().any(|(_, c)| *c == 79),
        _ => false,
    }
}

/// The evidence of one line.
fn evidence(g: &Gpu<'_>, e: &GpuInitEvent) -> Evidence {
    let text = match e.when() {
        Some(w) => format!("at {w}: {}", e.message),
        None => e.message.clone(),
    };
    Evidence::new(text, e.span, g.at.source())
}

/// The finding of a GPU with a failure or an unsupported line.
fn finding(g: &Gpu<'_>) -> Option<Finding> {
    let failures: Vec<&(usize, &GpuInitEvent)> =
        g.lines.iter().filter(|(_, e)| is_failure(g, e)).collect();
    let unsupported: Vec<&(usize, &GpuInitEvent)> = g
        .lines
        .iter()
        .filter(|(_, e)| e.what == Some(GpuInitWhat::NotSupported))
        .collect();
    let mut subject = Subject::host(g.at.host().name());
    subject.bus_id = Some(g.bus.clone());
    let what = subject.describe();
    let minor = g.lines.iter().find_map(|(_, e)| match e.what {
        Some(GpuInitWhat::RmInitFailed { minor }) => minor,
        _ => None,
    });
    let minor_note = minor.map_or(String::new(), |m| {
        format!(" (device minor number {m}, /dev/nvidia{m})")
    });
    let pci_id = g.lines.iter().find_map(|(_, e)| e.pci_id.as_deref());
    let id_note = pci_id.map_or(String::new(), |p| format!(" (PCI ID {p})"));
    let (severity, message, shown) = if let (Some(first), Some(last)) =
        (failures.first(), failures.last())
    {
        let up = g
            .lines
            .iter()
            .filter(|(o, e)| *o > last.0 && e.what == Some(GpuInitWhat::Initialized))
            .map(|(o, e)| (*o, Some(*e)))
            .chain(
                g.xids
                    .iter()
                    .filter(|(o, _)| *o > last.0)
                    .map(|(o, _)| (*o, None)),
            )
            .min_by_key(|(o, _)| *o);
        let codes: Vec<&str> = failures
            .iter()
            .filter_map(|(_, e)| match &e.what {
                Some(GpuInitWhat::RmInitAdapterFailed { code: Some(c) }) => Some(c.as_str()),
                _ => None,
            })
            .fold(Vec::new(), |mut v, c| {
                if !v.contains(&c) {
                    v.push(c);
                }
                v
            });
        let fell = failures
            .iter()
            .any(|(_, e)| e.what == Some(GpuInitWhat::FallenOffBus));
        let init = failures.len()
            - failures
                .iter()
                .filter(|(_, e)| e.what == Some(GpuInitWhat::FallenOffBus))
                .count();
        let mut said = Vec::new();
        if init > 0 {
            let mut s = format!("the driver failed to initialise it ({init} line(s)");
            if !codes.is_empty() {
                s.push_str(&format!(", RmInitAdapter {}", codes.join(", ")));
            }
            s.push(')');
            said.push(s);
        }
        if fell {
            said.push("it fell off the bus with no Xid".to_owned());
        }
        let mut shown = vec![first.1];
        if failures.len() > 1 {
            shown.push(last.1);
        }
        match up {
            Some((_, line)) => {
                if let Some(l) = line {
                    shown.push(l);
                }
                let how = if line.is_some() { "its DRM device was registered" } else { "it logged an Xid, which only a running GPU does" };
                (
                    Severity::Warning,
                    format!("{what}{minor_note}{id_note}: the kernel log shows {}; a later line shows it up ({how}): not a lasting failure, but it may fail again at the next boot", said.join(" and ")),
                    shown,
                )
            }
            None if g.whole || fell => (
                Severity::Error,
                format!("{what}{minor_note}{id_note}: the kernel log shows {}, and no later line shows it up: the GPU is not usable", said.join(" and ")),
                shown,
            ),
            None => (
                Severity::Warning,
                format!("{what}{minor_note}{id_note}: the kernel log shows {}; no later line shows it up, but the paste may be cut after it (no prompt follows the log): whether the GPU came up is not known", said.join(" and ")),
                shown,
            ),
        }
    } else {
        let first = unsupported.first()?;
        (
            Severity::Warning,
            format!("{what}{id_note}: the installed NVIDIA driver does not support this GPU, which stays unused: a configuration to fix, not a fault of the GPU"),
            vec![first.1],
        )
    };
    let remediation = if severity == Severity::Warning && failures.is_empty() {
        "Install the driver branch that supports this GPU (the legacy branch the message names, or the proprietary kernel module for a GPU without GSP, as the driver's README says).".to_owned()
    } else {
        format!("Check that the driver, its firmware and the kernel module match (nvidia-smi; dmesg | grep -i -e NVRM -e gsp; the installed packages): a half-done upgrade fails every GPU; on GSP errors try the driver's other kernel-module flavour or its GSP firmware setting as NVIDIA's README says. For one GPU of several: reseat it and its power cables, check its PCIe link (lspci -vv -s {}) and the kernel log's PCIe AER lines for it, update the system BIOS. Collect nvidia-bug-report.sh before opening a case.", g.bus)
    };
    let mut f = DG008
        .finding(subject, message)
        .severity(severity)
        .threshold(Threshold::new(
            "any failure line; a later line showing the GPU up, or a paste that may be cut after the failure, makes it a warning",
            "NVIDIA driver messages as pasted in github.com/NVIDIA/gpu-operator issues 649, 1146 and github.com/NVIDIA/NVSentinel issue 155; the later-success rule is fabricscope's own",
        ))
        .remediation(remediation);
    for e in shown {
        f = f.evidence(evidence(g, e));
    }
    Some(f)
}
