//! IB015: the PCIe AER errors a kernel log shows for a device (a GPU, an
//! adapter, a root port), judged by their severity and, for corrected
//! ones, by how fast they come.
//!
//! A GPU or adapter that drops off the bus, or a job that stalls on slow
//! transfers, often shows PCIe errors first. A healthy, busy, year-old host
//! logs a corrected error now and then (a receiver error the link's retry
//! fixed): news, not a page. An uncorrected one lost a transaction; a
//! storm of corrected ones is a marginal slot, riser or card.

use super::context::{Context, HostKey, SectionRef};
use super::{Coverage, Evidence, Finding, Severity, Subject, Threshold};
use crate::declare_rule;
use crate::model::kernel_log::{AerEvent, AerSeverity, AerSuppressed, KernelLog};
use crate::parse::SectionData;
use std::collections::{BTreeMap, BTreeSet};

declare_rule! {
    /// ### What it detects
    /// A device whose kernel log shows PCIe Advanced Error Reporting (AER)
    /// errors: `nvidia 0000:07:00.0: PCIe Bus Error: severity=Corrected,
    /// type=Physical Layer, (Receiver ID)` with its `device [10de:2330]
    /// error status/mask=…` and `[ 0] RxErr` lines, and the root port's
    /// `pcieport 0000:00:03.1: AER: Corrected error received: …` line
    /// before it (also kernels before 4.19, `…, id=00e8(Receiver ID)` and
    /// `Receiver Error`, and 6.x's `Correctable`/`Uncorrectable`), read
    /// from `dmesg` (plain, `-T`), `journalctl -k` or syslog. One finding
    /// per device (the device the error line names, not only the root
    /// port that received it), named as a GPU when its vendor id is
    /// NVIDIA's (`10de`), its driver `nvidia`, or the paste shows an Xid or
    /// an NVRM line for its address (then it joins the GPU's other
    /// findings in one incident), as an adapter when its vendor id is
    /// Mellanox's (`15b3`), its driver `mlx5_core`/`mlx4_core`, or the paste
    /// shows adapter lines for its address.
    ///
    /// ### Why it matters
    /// An uncorrected fatal error leaves the link unreliable: the kernel
    /// resets the link and the device's driver usually loses the device
    /// (a GPU falls off the bus): `error`. An uncorrected non-fatal error
    /// lost a transaction (a completion timeout, a poisoned TLP): the
    /// device's driver may recover, the job may not: `warning`. A corrected
    /// error was fixed by the link's own replay, nothing was lost: a few
    /// on a busy host are `info`. Ten or more corrected errors on one
    /// device within five seconds are a storm: the link is marginal and
    /// retrying (bandwidth drops, the next error may be uncorrected), and
    /// the kernel itself starts to hold back such lines at that rate:
    /// `warning`, with the count and the window. Without printed times the
    /// rate is not known and not judged. When the kernel's rate limit
    /// dropped AER messages (`aer_ratelimit: 25 callbacks suppressed`, or
    /// `pcieport 0000:00:01.0: AER: 25 callbacks suppressed`), it printed
    /// its burst and dropped that many more within its interval: errors
    /// that happened and are not in the log, a storm by the same measure:
    /// `warning` (a fatal or non-fatal error still ranks above it). The
    /// line is the device's it names, else the one device the log's AER
    /// errors name; with several or none it is the host's, `PCIe AER
    /// (device not named)`. A log that shows the AER service enabled at
    /// boot (`pcieport 0000:00:03.1: AER: enabled with IRQ 28`) and no
    /// error and no dropped message is checked and quiet. An event cut by the end of the
    /// paste names its device and is not judged (IN001); what the paste
    /// does not show is no evidence of a quiet link.
    ///
    /// ### Evidence
    /// The first and the last event of each severity (with its bits).
    ///
    /// ### What to do
    /// Check the link's width and speed against what the device can do
    /// (`lspci -vv -s <address>`: `LnkCap` against `LnkSta`, and the AER
    /// status registers under `Capabilities: [100 v2] Advanced Error
    /// Reporting`), and the device's own counters
    /// (`/sys/bus/pci/devices/<address>/aer_dev_correctable`, `…_fatal`,
    /// `…_nonfatal`; `mlxlink -d <address> --port_type PCIE -c` for an
    /// adapter). Reseat the card and its riser or cable, move it to
    /// another slot to see whether the errors follow the card or stay with
    /// the slot, and update the system BIOS and the device's firmware. For
    /// a fatal error on a GPU, drain the node and reboot it; open a
    /// hardware case if the errors come back.
    ///
    /// ### Thresholds and sources
    /// Severities and line shapes: Linux drivers/pci/pcie/aer.c
    /// (`aer_print_error`: `PCIe Bus Error: severity=%s, type=%s, (%s)`,
    /// `  device [%04x:%04x] error status/mask=%08x/%08x`, the bit names
    /// of `aer_correctable_error_string` and
    /// `aer_uncorrectable_error_string`); `callbacks suppressed`:
    /// lib/ratelimit.c (`___ratelimit`, `"%s: %d callbacks suppressed"`,
    /// the function's name). The storm threshold is
    /// fabricscope's own, set at the kernel's default rate limit for its
    /// messages (`DEFAULT_RATELIMIT_BURST` 10 per
    /// `DEFAULT_RATELIMIT_INTERVAL` 5 s, include/linux/ratelimit_types.h),
    /// which newer kernels apply to each device's AER lines: more than the
    /// kernel itself prints in that time is more than a healthy link's
    /// odd retry.
    pub static IB015 = {
        id: "IB015",
        name: "kernel-pcie-aer",
        family: IbPort,
        severity: Warning,
        summary: "the kernel log shows PCIe AER errors for a device (GPU, adapter, port): fatal, non-fatal, or a storm of corrected ones",
        needs: "the kernel log's AER lines (dmesg | grep -i -e aer -e 'PCIe Bus Error', journalctl -k)",
        check: check_aer,
    }
}

/// Corrected errors on one device within [`STORM_WINDOW_SECONDS`] that
/// make a storm: the kernel's default printk burst (10).
const STORM_COUNT: usize = 10;

/// The storm's window: the kernel's default printk rate-limit interval.
const STORM_WINDOW_SECONDS: f64 = 5.0;

/// Evidence lines of `callbacks suppressed` at most.
const MAX_SUPPRESSED_SHOWN: usize = 4;

/// What a device is, as the paste tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Gpu,
    Nvswitch,
    Adapter,
    Other,
}

/// One device's AER events of one host.
struct Device<'a> {
    at: SectionRef<'a>,
    /// Empty for the kernel's dropped messages no device is named for.
    address: String,
    events: Vec<&'a AerEvent>,
    /// The kernel's reports of messages it dropped for the device.
    suppressed: Vec<&'a AerSuppressed>,
}

impl<'a> Device<'a> {
    /// The device at `address` on `at`'s host, added empty when new.
    fn of<'m>(
        devices: &'m mut BTreeMap<(HostKey<'a>, String), Device<'a>>,
        at: SectionRef<'a>,
        address: String,
    ) -> &'m mut Device<'a> {
        devices
            .entry((at.host(), address.clone()))
            .or_insert_with(|| Device {
                at,
                address,
                events: Vec::new(),
                suppressed: Vec::new(),
            })
    }
}

/// The device a `callbacks suppressed` line is of: the one it names, else
/// the one device every AER error of its log names (a rate limit of the
/// AER driver's dropped that device's messages); empty when the log's
/// errors name several devices or none (the line does not say whose).
fn suppressed_device(log: &KernelLog, s: &AerSuppressed) -> String {
    if let Some(d) = &s.device {
        return canonical(d);
    }
    let mut named = log.aer_events.iter().filter_map(|e| e.device.as_deref());
    match named.next().map(canonical) {
        Some(first) if named.all(|d| canonical(d) == first) => first,
        _ => String::new(),
    }
}

/// A PCI address as a key: lower case, `.0` when the function is not
/// printed (the Xid line's `0000:3b:00`).
pub(crate) fn canonical(address: &str) -> String {
    let mut a = address.to_ascii_lowercase();
    if a.matches(':').count() == 2 && !a.contains('.') {
        a.push_str(".0");
    }
    a
}

/// The addresses a host's kernel logs name as a GPU's (Xid, NVRM lines)
/// and as an adapter's (mlx lines).
#[derive(Default)]
struct Known {
    gpus: BTreeSet<String>,
    nvswitches: BTreeSet<String>,
    adapters: BTreeSet<String>,
}

impl Known {
    fn add(&mut self, log: &KernelLog) {
        for e in &log.events {
            if let Some(b) = &e.bus_id {
                match e.source {
                    crate::model::kernel_log::XidSource::Gpu => self.gpus.insert(canonical(b)),
                    crate::model::kernel_log::XidSource::Nvswitch => {
                        self.nvswitches.insert(canonical(b))
                    }
                };
            }
        }
        for e in &log.gpu_init_events {
            if let Some(b) = &e.bus_id {
                self.gpus.insert(canonical(b));
            }
        }
        for e in &log.nic_events {
            if let Some(p) = &e.pci {
                self.adapters.insert(canonical(p));
            }
        }
    }
}

/// What the device is: by its vendor id, its driver, or what the host's
/// log shows at its address.
fn kind(d: &Device<'_>, known: Option<&Known>) -> Kind {
    let vendor = d
        .events
        .iter()
        .find_map(|e| e.vendor_device.as_deref())
        .and_then(|v| v.split_once(':'))
        .map(|(v, _)| v.to_ascii_lowercase());
    let driver = d.events.iter().find_map(|e| e.driver.as_deref());
    let in_log =
        |set: fn(&Known) -> &BTreeSet<String>| known.is_some_and(|k| set(k).contains(&d.address));
    if driver.is_some_and(|n| n.starts_with("nvidia-nvswitch")) || in_log(|k| &k.nvswitches) {
        Kind::Nvswitch
    } else if vendor.as_deref() == Some("10de") || driver == Some("nvidia") || in_log(|k| &k.gpus) {
        Kind::Gpu
    } else if vendor.as_deref() == Some("15b3")
        || driver.is_some_and(|n| n.starts_with("mlx"))
        || in_log(|k| &k.adapters)
    {
        Kind::Adapter
    } else {
        Kind::Other
    }
}

/// IB015.
fn check_aer(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let mut devices: BTreeMap<(HostKey<'_>, String), Device<'_>> = BTreeMap::new();
    let mut known: BTreeMap<HostKey<'_>, Known> = BTreeMap::new();
    let mut logs = 0usize;
    let mut quiet_logs = 0usize;
    for at in ctx.sections() {
        let SectionData::KernelLog(log) = &at.section.data else {
            continue;
        };
        known.entry(at.host()).or_default().add(log);
        if log.aer_events.is_empty() && log.aer_enabled.is_empty() && log.aer_suppressed.is_empty()
        {
            continue;
        }
        logs += 1;
        // A log from boot (the AER service's `enabled` line) with no error
        // is a quiet one; not one where the kernel dropped AER messages.
        quiet_logs += usize::from(log.aer_events.is_empty() && log.aer_suppressed.is_empty());
        for s in &log.aer_suppressed {
            Device::of(&mut devices, at, suppressed_device(log, s))
                .suppressed
                .push(s);
        }
        for e in &log.aer_events {
            let Some(address) = &e.device else { continue };
            Device::of(&mut devices, at, canonical(address))
                .events
                .push(e);
        }
    }
    if logs == 0 {
        return Coverage::Skipped("no PCIe AER line in the kernel log".to_owned());
    }
    let mut judged = quiet_logs;
    for ((host, _), d) in &devices {
        if let Some(f) = finding(d, kind(d, known.get(host))) {
            judged += 1;
            out.push(f);
        }
    }
    if judged == 0 {
        return Coverage::Skipped(
            "every AER event of the kernel log is cut before its severity".to_owned(),
        );
    }
    Coverage::Checked(judged)
}

/// An event's time as seconds: since boot, else the time printed read as a
/// date (a year-less syslog time in one year).
fn seconds(e: &AerEvent) -> Option<f64> {
    e.uptime_seconds.or_else(|| {
        let t = e.time.as_deref()?;
        crate::parse::date::parse_stamp(t, e.span)
            .map(|d| d.wall_clock_seconds)
            .or_else(|| crate::parse::date::yearless_seconds(t, 2001))
    })
}

/// The most corrected events within the storm window, and the first and
/// last of them; `None` when one lacks a time.
fn densest<'a>(events: &[&'a AerEvent]) -> Option<(usize, &'a AerEvent, &'a AerEvent)> {
    let mut timed: Vec<(f64, &AerEvent)> = events
        .iter()
        .map(|e| seconds(e).map(|s| (s, *e)))
        .collect::<Option<_>>()?;
    timed.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut best: Option<(usize, &AerEvent, &AerEvent)> = None;
    let mut start = 0usize;
    for (end, (t, e)) in timed.iter().enumerate() {
        while timed
            .get(start)
            .is_some_and(|(s, _)| t - s > STORM_WINDOW_SECONDS)
        {
            start += 1;
        }
        let n = end + 1 - start;
        if best.is_none_or(|(b, _, _)| n > b) {
            let first = timed.get(start).map_or(*e, |(_, f)| *f);
            best = Some((n, first, e));
        }
    }
    best
}

/// `RxErr ×3, BadTLP ×1`.
fn bits_words(events: &[&AerEvent]) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for b in events.iter().flat_map(|e| e.bits.iter()) {
        match counts.iter_mut().find(|(n, _)| n == b) {
            Some((_, c)) => *c += 1,
            None => counts.push((b, 1)),
        }
    }
    counts
        .iter()
        .map(|(n, c)| format!("{n} ×{c}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The evidence of one event.
fn evidence(d: &Device<'_>, e: &AerEvent) -> Evidence {
    let mut text = format!(
        "PCIe {} error",
        e.severity.map_or("(cut)", AerSeverity::words)
    );
    if let Some(layer) = &e.layer {
        text.push_str(&format!(", {layer}"));
    }
    if let Some(when) = e.when() {
        text.push_str(&format!(" at {when}"));
    }
    if let Some(v) = &e.vendor_device {
        text.push_str(&format!(", device [{v}]"));
    }
    if !e.bits.is_empty() {
        text.push_str(&format!(": {}", e.bits.join(", ")));
    }
    if let Some(p) = &e.port {
        text.push_str(&format!(" (received by root port {p})"));
    }
    Evidence::new(text, e.span, d.at.source())
}

/// The finding of a device with at least one judged event.
fn finding(d: &Device<'_>, kind: Kind) -> Option<Finding> {
    let of = |s: AerSeverity| -> Vec<&AerEvent> {
        d.events
            .iter()
            .copied()
            .filter(|e| e.severity == Some(s))
            .collect()
    };
    let (fatal, nonfatal, corrected) = (
        of(AerSeverity::Fatal),
        of(AerSeverity::NonFatal),
        of(AerSeverity::Corrected),
    );
    let dropped: u64 = d.suppressed.iter().map(|s| s.count).sum();
    if fatal.is_empty() && nonfatal.is_empty() && corrected.is_empty() && dropped == 0 {
        return None;
    }
    let mut subject = Subject::host(d.at.host().name());
    let driver = d.events.iter().find_map(|e| e.driver.as_deref());
    match kind {
        Kind::Gpu => subject.bus_id = Some(d.address.clone()),
        Kind::Nvswitch => subject.device = Some(format!("NVSwitch ({})", d.address)),
        Kind::Adapter => subject.device = Some(format!("adapter {}", d.address)),
        Kind::Other if d.address.is_empty() => {
            subject.device = Some("PCIe AER (device not named)".to_owned());
        }
        // By its address only: a receipt line names no driver.
        Kind::Other => subject.device = Some(format!("PCIe device {}", d.address)),
    }
    let what = match (kind, driver) {
        (Kind::Other, Some(n)) => format!("{} ({n})", subject.describe()),
        _ => subject.describe(),
    };
    let mut parts = Vec::new();
    for (events, words) in [
        (&fatal, "uncorrected fatal"),
        (&nonfatal, "uncorrected non-fatal"),
        (&corrected, "corrected"),
    ] {
        if events.is_empty() {
            continue;
        }
        let bits = bits_words(events);
        let mut p = format!("{} {words} PCIe error(s)", events.len());
        if !bits.is_empty() {
            p.push_str(&format!(" ({bits})"));
        }
        parts.push(p);
    }
    if dropped > 0 {
        parts.push(format!(
            "{dropped} more AER message(s) the kernel's rate limit dropped ({} `callbacks suppressed` line(s))",
            d.suppressed.len()
        ));
    }
    let storm = densest(&corrected);
    let (severity, verdict) = if !fatal.is_empty() {
        (
            Severity::Error,
            ": a fatal error leaves the link unreliable; the kernel resets it and the device's driver may lose the device".to_owned(),
        )
    } else if !nonfatal.is_empty() {
        (
            Severity::Warning,
            ": an uncorrected error lost a transaction; the link still works".to_owned(),
        )
    } else if dropped > 0 {
        // The kernel prints its burst (10 per 5 s) and drops the rest: a
        // drop is more errors within its interval than a storm takes.
        (
            Severity::Warning,
            format!(": a storm, at least {dropped} errors the log does not show (the kernel prints {STORM_COUNT} per {STORM_WINDOW_SECONDS:.0} s and dropped the rest): the link is marginal and retrying"),
        )
    } else {
        match storm {
            Some((n, first, last)) if n >= STORM_COUNT => {
                let span = match (first.when(), last.when()) {
                    (Some(a), Some(b)) if a != b => format!(" (from {a} to {b})"),
                    (Some(a), _) => format!(" (at {a})"),
                    _ => String::new(),
                };
                (
                    Severity::Warning,
                    format!(": a storm, {n} corrected errors within {STORM_WINDOW_SECONDS:.0} s{span}: the link is marginal and retrying"),
                )
            }
            Some((n, _, _)) => (
                Severity::Info,
                format!(": at most {n} within {STORM_WINDOW_SECONDS:.0} s, fewer than the {STORM_COUNT} a storm takes; the link's retry corrected them, a busy link logs a few"),
            ),
            None => (
                Severity::Info,
                ": the link's retry corrected them; the lines print no time, so whether they came as a storm is not known".to_owned(),
            ),
        }
    };
    let cut = d.events.iter().filter(|e| e.severity.is_none()).count();
    let cut_note = if cut > 0 {
        format!(" ({cut} more event(s) cut, not judged)")
    } else {
        String::new()
    };
    let ports: BTreeSet<&str> = d.events.iter().filter_map(|e| e.port.as_deref()).collect();
    let port_note = if ports.is_empty() {
        String::new()
    } else {
        format!(
            "; received by root port {}",
            ports.into_iter().collect::<Vec<_>>().join(", ")
        )
    };
    let message = format!(
        "{what}: the kernel log shows {}{verdict}{port_note}{cut_note}",
        parts.join(", ")
    );
    let target = if d.address.is_empty() {
        "<address>"
    } else {
        d.address.as_str()
    };
    let mut remediation = format!(
        "Compare the link's width and speed with what the device can do (lspci -vv -s {target}: LnkCap against LnkSta, and the AER status under Advanced Error Reporting) and read its error counters (/sys/bus/pci/devices/{target}/aer_dev_correctable, aer_dev_nonfatal, aer_dev_fatal"
    );
    if kind == Kind::Adapter {
        remediation.push_str(&format!("; mlxlink -d {target} --port_type PCIE -c"));
    }
    remediation.push_str("). Reseat the card and check its riser or cable, move it to another slot to see whether the errors follow the card or the slot, and update the system BIOS and the device's firmware.");
    if severity == Severity::Error && kind == Kind::Gpu {
        remediation.push_str(" After a fatal error on a GPU, drain the node and reboot it; open a hardware case if the errors come back.");
    } else if severity == Severity::Info {
        remediation.push_str(" A few corrected errors need nothing: watch whether they grow.");
    }
    let mut f = IB015
        .finding(subject, message)
        .severity(severity)
        .threshold(Threshold::new(
            format!("uncorrected fatal: error; non-fatal: warning; {STORM_COUNT} or more corrected within {STORM_WINDOW_SECONDS:.0} s on one device, or any AER messages the kernel's rate limit dropped (`callbacks suppressed`): warning"),
            "Linux drivers/pci/pcie/aer.c (severities, bit names); storm: fabricscope's own, at the kernel's default printk rate limit (10 per 5 s, include/linux/ratelimit_types.h); `%s: %d callbacks suppressed`: lib/ratelimit.c",
        ))
        .remediation(remediation);
    for events in [&fatal, &nonfatal, &corrected] {
        if let (Some(first), Some(last)) = (events.first(), events.last()) {
            f = f.evidence(evidence(d, first));
            if events.len() > 1 {
                f = f.evidence(evidence(d, last));
            }
        }
    }
    for s in d.suppressed.iter().take(MAX_SUPPRESSED_SHOWN) {
        let mut text = format!("the kernel dropped {} AER message(s)", s.count);
        if let Some(func) = &s.function {
            text.push_str(&format!(" ({func}'s rate limit)"));
        }
        if let Some(when) = s.when() {
            text.push_str(&format!(" at {when}"));
        }
        f = f.evidence(Evidence::new(text, s.span, d.at.source()));
    }
    Some(f)
}
