//! DG006: the Xid codes a kernel log shows for a GPU (and the SXid codes
//! for an NVSwitch), judged by NVIDIA's Xid catalog.
//!
//! `dmesg | grep -i xid` is the first thing an on-call engineer pastes. A
//! busy cluster logs application Xids (13, 31, 43, 45) every day, each a
//! job's fault; a single 79, 48 or 95 is a GPU that needs a reset or more.
//! One finding per device lists every code it logged, so the rare hardware
//! code is not lost among the application ones, and the application ones
//! alone never page anybody.

use super::context::{Context, HostKey, SectionRef};
use super::{Coverage, Evidence, Finding, Severity, Subject, Threshold};
use crate::declare_rule;
use crate::kb::{sxid_severity, xid_spec};
use crate::model::kernel_log::{XidEvent, XidSource};
use crate::parse::SectionData;
use std::collections::BTreeMap;

declare_rule! {
    /// ### What it detects
    /// A GPU whose kernel log shows NVIDIA Xid lines (`NVRM: Xid
    /// (PCI:0000:3b:00): 79, …`), or an NVSwitch showing SXid lines
    /// (`nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 20034, Fatal, …`), read
    /// from `dmesg` (plain, `-T`, `-x`), `journalctl -k` or syslog. One
    /// finding per GPU (by PCI bus id) or switch, listing each code with
    /// how many lines show it and the first and last time printed.
    ///
    /// ### Why it matters
    /// The driver logs an Xid for every error it meets on a GPU. Some are
    /// the application's (13 graphics exception, 31 memory page fault, 43
    /// channel stopped, 45 cleanup after them): NVIDIA's catalog resolves
    /// them by restarting the job, and one alone is `info` — "usually the
    /// job, not the GPU". Others are the GPU's: 48 (double-bit ECC), 95
    /// (uncontained ECC), 140 (unrecovered ECC), 64 (row remap failed), 74
    /// and Fatal 144–150 (NVLink), 79 (fallen off the bus), 62
    /// (micro-controller halt), 119/120 (GSP) and 154 (recovery action
    /// required) are `error`: the GPU needs a reset, the node a reboot, or
    /// the board a replacement; 63 (row remap pending), 92 (high single-bit
    /// ECC rate), 94 (contained ECC), 61 and Nonfatal 144–150 are
    /// `warning`. The finding takes the most severe code of its GPU. A
    /// code not in the table is `info`, saying so. A 45 that names the Xid
    /// causing it (`caused by previous Xid 149`) is as severe as that code
    /// at its least (an NVLink code whose `Fatal` word is not shown is a
    /// `warning`). A fatal SXid is an `error` (the switch's traffic stalls
    /// until the GPUs and switches are reset), a non-fatal one, or one
    /// whose line does not say, `info`. A line cut before its code ends
    /// names its GPU but is not judged.
    ///
    /// dcgm-exporter's `DCGM_FI_DEV_XID_ERRORS` is judged by the same
    /// table: it is the last Xid DCGM saw on a GPU (0: none), a gauge that
    /// keeps its code, after a GPU reset too, until DCGM restarts. It says
    /// neither when nor what came before, so a GPU's gauge is a finding of
    /// its own, at most a `warning`, saying so; the kernel log says when.
    ///
    /// ### Evidence
    /// For each code, its first line and its last line.
    ///
    /// ### What to do
    /// What NVIDIA's catalog says for the most severe code: restart the
    /// job (application codes; look at the GPU only if a code recurs on it
    /// across jobs); reset the GPU (`nvidia-smi -r -i <id>`, no process
    /// on it) for ECC, micro-controller and GSP codes and check
    /// `nvidia-smi -q -d ROW_REMAPPER`; reboot the node for 79; check the
    /// links (`nvidia-smi nvlink -s` / `-e`) for NVLink codes; open a
    /// hardware case when a remap fails (64) or a code comes back after the
    /// reset.
    ///
    /// ### Thresholds and sources
    /// One line of a code. Severity and action per code: NVIDIA Xid
    /// catalog (docs.nvidia.com/deploy/xid-errors, "Resolution Bucket
    /// (Immediate Action)": RESTART_APP, RESET_GPU, RESTART_BM), NVIDIA
    /// Dynamic Page Retirement (48, 63, 64), NVIDIA GPU Memory Error
    /// Management (63, 64, 94, 95), NVIDIA's NVSwitch SXid page (fatal and
    /// non-fatal SXids). NVLink 144–150 `Fatal`/`Nonfatal` per line:
    /// github.com/leptonai/gpud pull requests 1160 and 1174.
    pub static DG006 = {
        id: "DG006",
        name: "gpu-xid",
        family: Diagnostics,
        severity: Error,
        summary: "the kernel log shows NVIDIA Xid (GPU) or SXid (NVSwitch) errors",
        needs: "the kernel log's Xid lines (dmesg | grep -i xid, journalctl -k, syslog), or dcgm-exporter's DCGM_FI_DEV_XID_ERRORS",
        check: check_xid,
    }
}

/// The PCI address as nvidia-smi's and NVML's other outputs print it,
/// lower case: `0000:3b:00` → `0000:3b:00.0` (a GPU is function 0).
fn canonical_bus(bus: &str, source: XidSource) -> String {
    let mut b = bus.to_ascii_lowercase();
    if source == XidSource::Gpu && b.matches(':').count() == 2 && !b.contains('.') {
        b.push_str(".0");
    }
    b
}

/// One device's lines of one host.
struct Device<'a> {
    at: SectionRef<'a>,
    source: XidSource,
    device: Option<&'a str>,
    bus: String,
    events: Vec<&'a XidEvent>,
    /// Read from dcgm-exporter's last-Xid gauge, not a kernel log: the
    /// GPU's index and UUID when its labels name them.
    gauge: Option<(Option<u32>, Option<&'a str>)>,
}

/// A GPU's last Xid as dcgm-exporter's `DCGM_FI_DEV_XID_ERRORS` gauge
/// reads it, made the line the kernel log would have printed, with no
/// time: the gauge keeps the last code DCGM saw and says neither when nor
/// what came before. `None` for a GPU whose gauge reads 0 (no Xid seen).
struct Gauge<'a> {
    at: SectionRef<'a>,
    gpu: &'a crate::model::dcgm_exporter::DcgmGpu,
    event: XidEvent,
}

/// Every dcgm-exporter GPU's last-Xid gauge; the count of gauges read 0.
fn gauges<'a>(ctx: &Context<'a>) -> (Vec<Gauge<'a>>, usize) {
    let mut out = Vec::new();
    let mut quiet = 0usize;
    for at in ctx.sections() {
        let SectionData::DcgmExporter(m) = &at.section.data else {
            continue;
        };
        for gpu in m.hosts.iter().flat_map(|h| &h.gpus) {
            let Some(r) = gpu.last_xid else { continue };
            let Ok(code) = u32::try_from(r.value) else {
                continue;
            };
            if code == 0 {
                quiet += 1;
                continue;
            }
            out.push(Gauge {
                at,
                gpu,
                event: XidEvent {
                    source: XidSource::Gpu,
                    bus_id: gpu.pci_bus_id.clone(),
                    device: None,
                    code: Some(code),
                    pid: None,
                    process: None,
                    message: None,
                    fatal: None,
                    time: None,
                    uptime_seconds: None,
                    span: r.span,
                    partial: None,
                },
            });
        }
    }
    (out, quiet)
}

/// DG006.
fn check_xid(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    type Key<'a> = (HostKey<'a>, XidSource, Option<&'a str>, String, bool);
    let (gauges, quiet_gauges) = gauges(ctx);
    let mut devices: BTreeMap<Key<'_>, Device<'_>> = BTreeMap::new();
    let mut logs = 0usize;
    let mut quiet_logs = 0usize;
    for at in ctx.sections() {
        let SectionData::KernelLog(log) = &at.section.data else {
            continue;
        };
        // A log of adapter lines only (`dmesg | grep mlx5`) says nothing of
        // the GPUs: not a quiet one.
        if log.events.is_empty() && !log.nic_events.is_empty() {
            continue;
        }
        logs += 1;
        quiet_logs += usize::from(log.events.is_empty());
        for e in &log.events {
            let Some(bus) = &e.bus_id else { continue };
            let bus = canonical_bus(bus, e.source);
            let key = (at.host(), e.source, e.device.as_deref(), bus.clone(), false);
            devices
                .entry(key)
                .or_insert_with(|| Device {
                    at,
                    source: e.source,
                    device: e.device.as_deref(),
                    bus,
                    events: Vec::new(),
                    gauge: None,
                })
                .events
                .push(e);
        }
    }
    // A gauge is a GPU's own finding, apart from its kernel log's lines:
    // one says when, the other only what came last.
    for (n, g) in gauges.iter().enumerate() {
        let bus = g.gpu.pci_bus_id.clone().unwrap_or_default();
        let key = (
            g.at.host(),
            XidSource::Gpu,
            None,
            format!("{bus}#{n}"),
            true,
        );
        devices.insert(
            key,
            Device {
                at: g.at,
                source: XidSource::Gpu,
                device: None,
                bus,
                events: vec![&g.event],
                gauge: Some((g.gpu.index, g.gpu.uuid.as_deref())),
            },
        );
    }
    logs += quiet_gauges + gauges.len();
    quiet_logs += quiet_gauges;
    if logs == 0 {
        return Coverage::Skipped("no kernel log (Xid lines) in the input".to_owned());
    }
    let mut judged = quiet_logs;
    for d in devices.values() {
        if let Some(f) = finding(d) {
            judged += 1;
            out.push(f);
        }
    }
    if judged == 0 {
        return Coverage::Skipped(
            "every Xid line of the kernel log is cut before its code".to_owned(),
        );
    }
    Coverage::Checked(judged)
}

/// One code's lines on a device.
struct Code<'a> {
    code: u32,
    severity: Severity,
    first: &'a XidEvent,
    last: &'a XidEvent,
    count: usize,
    /// The Xid its lines name as their cause (`caused by previous Xid
    /// 149`), when that cause sets the severity.
    cause: Option<u32>,
}

/// The severity of one line. The driver's cleanup (45) names the Xid
/// that caused it (`Ch 00000001 caused by previous Xid 149`): the line is
/// then evidence of that code too, at the least it could be.
fn line_severity(e: &XidEvent, code: u32) -> Severity {
    match e.source {
        XidSource::Nvswitch => sxid_severity(e.fatal),
        XidSource::Gpu => {
            let own = xid_spec(code).map_or(Severity::Info, |s| s.severity_of(e.fatal));
            let cause = e
                .message
                .as_deref()
                .and_then(previous_xid)
                .and_then(xid_spec)
                .map_or(Severity::Info, |s| s.severity_of(None));
            own.max(cause)
        }
    }
}

/// `N` of `caused by previous Xid N`.
fn previous_xid(message: &str) -> Option<u32> {
    let (_, rest) = message.split_once("previous Xid ")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    rest.get(..digits)?.parse().ok()
}

/// The device's codes, most severe first, then by code.
fn codes<'a>(d: &Device<'a>) -> Vec<Code<'a>> {
    let mut codes: Vec<Code<'a>> = Vec::new();
    for e in &d.events {
        let Some(code) = e.code else { continue };
        let severity = line_severity(e, code);
        let own = match e.source {
            XidSource::Gpu => xid_spec(code).map_or(Severity::Info, |s| s.severity_of(e.fatal)),
            XidSource::Nvswitch => severity,
        };
        let cause = e
            .message
            .as_deref()
            .and_then(previous_xid)
            .filter(|_| severity > own);
        match codes.iter_mut().find(|c| c.code == code) {
            Some(c) => {
                c.count += 1;
                c.last = e;
                if severity > c.severity {
                    c.severity = severity;
                    c.cause = cause;
                }
            }
            None => codes.push(Code {
                code,
                severity,
                first: e,
                last: e,
                count: 1,
                cause,
            }),
        }
    }
    codes.sort_by(|a, b| b.severity.cmp(&a.severity).then(a.code.cmp(&b.code)));
    codes
}

/// `Xid` or `SXid`.
fn word(source: XidSource) -> &'static str {
    match source {
        XidSource::Gpu => "Xid",
        XidSource::Nvswitch => "SXid",
    }
}

/// `Xid 79 ×1 at T`, `Xid 13 ×4 from T1 to T2`.
fn describe_code(source: XidSource, c: &Code<'_>) -> String {
    let mut s = format!("{} {} ×{}", word(source), c.code, c.count);
    match (c.first.when(), c.last.when()) {
        (Some(a), Some(b)) if c.count > 1 && a != b => s.push_str(&format!(" from {a} to {b}")),
        (Some(a), _) => s.push_str(&format!(" at {a}")),
        _ => {}
    }
    if source == XidSource::Gpu {
        match xid_spec(c.code) {
            Some(spec) => s.push_str(&format!(" ({})", spec.meaning)),
            None => s.push_str(" (not in NVIDIA's Xid table this tool holds)"),
        }
        if let Some(spec) = c.cause.and_then(|n| xid_spec(n).map(|spec| (n, spec))) {
            s.push_str(&format!(", caused by Xid {} ({})", spec.0, spec.1.meaning));
        }
    } else if let Some(fatal) = c.first.fatal {
        s.push_str(if fatal { " (Fatal)" } else { " (Non-fatal)" });
    }
    s
}

/// The evidence of one line.
fn line_evidence(d: &Device<'_>, c: &Code<'_>, e: &XidEvent) -> Evidence {
    let mut text = format!("{} {}", word(d.source), c.code);
    if let Some(when) = e.when() {
        text.push_str(&format!(" at {when}"));
    }
    if let Some(p) = &e.process {
        text.push_str(&format!(" (process {p})"));
    }
    if let Some(m) = &e.message {
        text.push_str(": ");
        text.push_str(m);
    }
    Evidence::new(text, e.span, d.at.source())
}

/// The finding of a device with at least one judged line.
fn finding(d: &Device<'_>) -> Option<Finding> {
    let codes = codes(d);
    let worst = codes.first()?;
    // A GPU is known by its bus id (the key nvidia-smi, NVML's errors and
    // IN003 name it by, which joins their findings in one incident); a
    // switch by its device name and address, which are no GPU's.
    let mut subject = Subject::host(d.at.host().name());
    if let Some((index, uuid)) = d.gauge {
        subject.gpu = index;
        subject.gpu_uuid = uuid.map(str::to_owned);
    }
    match d.source {
        XidSource::Gpu if d.bus.is_empty() => {}
        XidSource::Gpu => subject.bus_id = Some(d.bus.clone()),
        XidSource::Nvswitch => {
            subject.device = Some(format!("NVSwitch {} ({})", d.device.unwrap_or("?"), d.bus));
        }
    }
    let what = subject.describe();
    let listed: Vec<String> = codes
        .iter()
        .map(|c| match (d.gauge, xid_spec(c.code)) {
            (Some(_), Some(spec)) => format!("Xid {} ({})", c.code, spec.meaning),
            (Some(_), None) => {
                format!("Xid {} (not in NVIDIA's Xid table this tool holds)", c.code)
            }
            (None, _) => describe_code(d.source, c),
        })
        .collect();
    let verdict = match worst.severity {
        Severity::Info if d.source == XidSource::Gpu => ": usually the job, not the GPU",
        Severity::Info => ": non-fatal, corrected by the switch",
        _ => "",
    };
    let cut = d.events.iter().filter(|e| e.code.is_none()).count();
    let cut_note = if cut > 0 {
        format!(" ({cut} more line(s) cut before the code, not judged)")
    } else {
        String::new()
    };
    let message = if d.gauge.is_some() {
        format!(
            "{what}: dcgm-exporter's last-Xid gauge (DCGM_FI_DEV_XID_ERRORS) reads {}{verdict}. It is only the last code DCGM saw on the GPU, at a time it does not show, and it keeps it (after a GPU reset too) until DCGM restarts: earlier codes are not shown, and the kernel log says when",
            listed.join("; ")
        )
    } else {
        format!(
            "{what}: the kernel log shows {}{verdict}{cut_note}",
            listed.join("; ")
        )
    };
    let remediation = match d.source {
        XidSource::Gpu => match xid_spec(worst.cause.unwrap_or(worst.code)) {
            Some(spec) => {
                let mut r = format!("For Xid {}: {}.", worst.cause.unwrap_or(worst.code), spec.action);
                if codes.iter().any(|c| xid_spec(c.code).is_none()) {
                    r.push_str(" Look up the codes not in the table in NVIDIA's Xid catalog (docs.nvidia.com/deploy/xid-errors).");
                }
                r
            }
            None => "Look the code up in NVIDIA's Xid catalog (docs.nvidia.com/deploy/xid-errors) and follow its resolution; collect nvidia-bug-report.sh if it recurs.".to_owned(),
        },
        XidSource::Nvswitch if worst.severity >= Severity::Error => "A fatal SXid stalls the switch's NVLink traffic: drain the node and reset the GPUs and NVSwitches (reboot the node); check the link the line names and its trunk; if it recurs on the same link, open a hardware case (NVIDIA's NVSwitch SXid page).".to_owned(),
        XidSource::Nvswitch => "Watch whether it recurs on the same link; look the SXid up on NVIDIA's NVSwitch SXid page.".to_owned(),
    };
    // A gauge's code may be months old, and kept after the reset that
    // cleared it: at most a warning until the kernel log says when.
    let severity = if d.gauge.is_some() {
        worst.severity.min(Severity::Warning)
    } else {
        worst.severity
    };
    let remediation = if d.gauge.is_some() {
        format!("Find when the GPU logged it and whether it recurs: dmesg -T | grep -i xid (or journalctl -k) on the host. {remediation}")
    } else {
        remediation
    };
    let mut f = DG006
        .finding(subject, message)
        .severity(severity)
        .threshold(Threshold::new(
            "one line of a code; severity per code",
            "NVIDIA Xid catalog (docs.nvidia.com/deploy/xid-errors, Resolution Bucket); NVIDIA Dynamic Page Retirement and GPU Memory Error Management (48, 63, 64, 94, 95); NVIDIA NVSwitch SXid page (Fatal / Non-fatal)",
        ))
        .remediation(remediation);
    if d.gauge.is_some() {
        for c in &codes {
            f = f.evidence(Evidence::new(
                format!(
                    "dcgm-exporter: DCGM_FI_DEV_XID_ERRORS {} (the last Xid DCGM saw; no time)",
                    c.code
                ),
                c.first.span,
                d.at.source(),
            ));
        }
        return Some(f);
    }
    for c in &codes {
        f = f.evidence(line_evidence(d, c, c.first));
        if c.count > 1 {
            f = f.evidence(line_evidence(d, c, c.last));
        }
    }
    Some(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cleanup_is_as_severe_as_the_xid_it_names() {
        let line = |code: u32, message: &str| XidEvent {
            source: XidSource::Gpu,
            bus_id: Some("0000:dc:00".into()),
            device: None,
            code: Some(code),
            pid: None,
            process: None,
            message: Some(message.into()),
            fatal: None,
            time: None,
            uptime_seconds: None,
            span: crate::span::LineSpan::line(1),
            partial: None,
        };
        assert_eq!(line_severity(&line(45, "Ch 00000001"), 45), Severity::Info);
        let after_nvlink = line(45, "Ch 00000001 caused by previous Xid 149");
        assert_eq!(line_severity(&after_nvlink, 45), Severity::Warning);
        let after_bus = line(45, "Ch 00000002 caused by previous Xid 79");
        assert_eq!(line_severity(&after_bus, 45), Severity::Error);
        assert_eq!(
            line_severity(&line(45, "previous Xid 13"), 45),
            Severity::Info
        );
    }

    #[test]
    fn bus_ids_read_as_nvidia_smi_prints_them() {
        assert_eq!(canonical_bus("0000:3B:00", XidSource::Gpu), "0000:3b:00.0");
        assert_eq!(
            canonical_bus("0000:05:00.0", XidSource::Nvswitch),
            "0000:05:00.0"
        );
    }
}
