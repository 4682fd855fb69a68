//! NVIDIA Xid and NVSwitch SXid lines of a kernel log.
//!
//! Line shapes (open-gpu-kernel-modules `nvErrorLog_va`, the NVSwitch
//! driver's `SXid` print, and pastes in public issues):
//! - `NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has
//!   fallen off the bus.`; older drivers `NVRM: Xid (0000:3b:00): 48, …`;
//!   lines without `pid=`/`name=`, or with nothing after the code;
//! - `nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 20034, Fatal, Link 30
//!   LTSSM Fault Up` (and `Non-fatal`), then its `… 20034, Data {…}` line.
//!
//! Each may follow a prefix: none, `[  123.456789] ` (dmesg),
//! `[Mon Dec  7 10:00:00 2026] ` (dmesg -T), `2026-12-07T10:00:00,123456+00:00 `
//! (dmesg --time-format iso), `kern  :err   : ` (dmesg -x),
//! `<6>[  123.456789] ` (dmesg -r: the record's priority, util-linux
//! `dmesg.c`), `Dec 07 10:00:00 host kernel: ` (syslog, journalctl, and
//! `Dec 07 10:00:00.123456` of -o short-precise),
//! `Mon 2026-12-07 10:00:00 UTC host kernel: ` (journalctl -o short-full),
//! `[  123.456789] host kernel: ` (journalctl -o short-monotonic) or
//! `2026-12-07T10:00:00.123456+00:00 host kernel: ` (ISO: rsyslog's RFC
//! 3339 times, journalctl -o short-iso and short-iso-precise), the last
//! four naming the host; between a syslog time and `kernel:` the host may
//! be followed by a level (`host NOTICE kernel: `, SONiC's rsyslog
//! template) or a facility and level (`kern.info kernel: `, OpenWrt's
//! `logread` after its `Mon Dec  7 10:00:00 2026 `). Time formats: systemd
//! `src/shared/logs-show.c`, util-linux `dmesg.c`. A prefix naming a
//! facility other than the kernel's (dmesg -x `user  :warn  : `, dmesg -r
//! `<14>`, syslog's `daemon.info`) is user space's line: another message
//! whatever it says, never judged as the kernel's. Other lines with such
//! a prefix, and other `NVRM:` lines, are the block's other messages:
//! counted, not read. A line cut before its code ends is partial: its GPU
//! is named, its code not judged.
//!
//! An adapter driver's lines (`mlx5_core`, `mlx4_core`: the driver, the
//! PCI address, an interface, `: `, the message) are read when they say
//! something of the link (Linux sources, and public pastes):
//! - `mlx5_core 0000:53:00.0 enp83s0f0np0: Link down` / `Link up`: the
//!   netdev's carrier (`mlx5e_update_carrier`, `netdev_info(…, "Link
//!   up\n")`, drivers/net/ethernet/mellanox/mlx5/core/en_main.c; as
//!   pasted in github.com/bigstack-oss/cubecos issue 733);
//! - `mlx5_core 0000:53:00.0 mlx5_3: Port: 1 Link ACTIVE` (`DOWN`, `INIT`,
//!   `ARMED`, `ACTIVE_DEFER`): the RDMA core's port state
//!   (`ib_cache_update`, `ibdev_info(device, "Port: %d Link %s\n", …)`,
//!   drivers/infiniband/core/cache.c, `ib_port_state_to_str`); the same
//!   shape from `mlx4_core` in a public Fedora guide, and both forms
//!   interleaved with `bond0` lines in a public flap paste;
//! - `mlx5_core 0000:5c:00.0: Port module event: module 0, Cable plugged`
//!   (`unplugged`) and `… Port module event[error]: module 0, Cable error,
//!   High Temperature` (`port_module`, drivers/net/ethernet/mellanox/mlx5/
//!   core/events.c, tables `mlx5_pme_status` and `mlx5_pme_error`: `Power
//!   budget exceeded`, `Long Range for non MLNX cable`, `Bus stuck(I2C or
//!   data shorted)`, `No EEPROM/retry timeout`, `Enforce part number
//!   list`, `Unknown identifier`, `High Temperature`, `Bad or shorted
//!   cable/module`, `Unknown status`), on older kernels with
//!   `mlx5_core_err`'s `mlx5_port_module_event:1131:(pid 0): ` before it
//!   (github.com/leptonai/gpud, github.com/geerlingguy/arm-nas issue 16);
//! - `mlx5_core 0000:3b:00.0: 63.008 Gb/s available PCIe bandwidth, limited
//!   by 8.0 GT/s PCIe x8 link at 0000:3a:00.0 (capable of 252.048 Gb/s with
//!   16.0 GT/s PCIe x16 link)`, and `… 252.048 Gb/s available PCIe
//!   bandwidth (16.0 GT/s PCIe x16 link)` when nothing limits it
//!   (`__pcie_print_link_status`, drivers/pci/pci.c; newer kernels add
//!   `, in Flit mode`).
//!
//! The driver's other lines are other kernel messages. IPoIB prints no
//! carrier line of its own (`ib0: lost carrier` is in no kernel source
//! this reads; a mlx5 IPoIB netdev's carrier is the `Link` line above). A
//! block's last line cut inside one of these shapes is partial: the
//! adapter is named, nothing is judged.
//!
//! PCIe AER error reports and the NVIDIA driver's lines about a GPU's
//! initialisation are read by `kernel_pcie`: an AER error's
//! status and bit lines are part of its event, and a `NVRM: The NVIDIA
//! GPU …` message takes the `NVRM:` lines that go on with it. A rate
//! limit's `aer_ratelimit: 25 callbacks suppressed` (lib/ratelimit.c: the
//! function's name, then the count; or after a device's `… AER: `) says
//! how many AER messages the kernel dropped: read, with its count.

use super::kernel_pcie::{aer_line, init_line, init_what, pci_id_in, AerLine, InitLine};
use crate::model::kernel_log::{
    AerEvent, AerSuppressed, BootMarker, GpuInitEvent, KernelLog, NicEvent, NicWhat, PcieBandwidth,
    XidEvent, XidSource,
};
use crate::model::partial::{Partial, PartialReason};
use crate::parse::text::Unread;
use crate::parse::{Block, Line, Parsed, Spec};
use crate::span::{spans_of, LineSpan};

pub(crate) const FORMAT: Spec<KernelLog> = Spec {
    command: |argv| matches!(argv.first(), Some(&"dmesg" | &"journalctl")),
    // `[` of dmesg's time, `NVRM`, `nvidia-nvswitch`, `kern`/`kernel`, a
    // month's or a weekday's initial, a year's first digit: a table look-up that keeps
    // the detector off most lines of other tools (`GPU`, `Link`, `Port…`);
    // `m` of a bare `mlx5_core 0000:…` line; `-` of a journal's boot line
    // before the first one; `<` of dmesg -r's `<6>`.
    starts: |b| {
        matches!(
            b,
            b'[' | b'N'
                | b'n'
                | b'k'
                | b'J'
                | b'F'
                | b'M'
                | b'A'
                | b'S'
                | b'O'
                | b'D'
                | b'1'
                | b'2'
                | b'm'
                | b'-'
                | b'p'
                | b'<'
                | b'T'
                | b'W'
        )
    },
    detect,
    parse,
    summary,
    attach_command: None,
    labels: &[
        "nvrm",
        "kernel",
        "nvidia-nvswitch0",
        "nvidia-nvswitch1",
        "nvidia-nvswitch2",
        "nvidia-nvswitch3",
        "nvidia-nvswitch4",
        "nvidia-nvswitch5",
        "nvidia-nvswitch6",
        "nvidia-nvswitch7",
    ],
};

/// What a kernel-log line's prefix says.
#[derive(Debug, Default, PartialEq)]
struct Prefix<'a> {
    time: Option<&'a str>,
    uptime: Option<f64>,
    host: Option<&'a str>,
    /// Whether the line carries a log prefix at all.
    logged: bool,
    /// Whether the prefix names a facility other than the kernel's
    /// (dmesg -x `user  :warn  : `, dmesg -r `<14>`, syslog's
    /// `daemon.info`): user space's line in the kernel's ring buffer or a
    /// log file, whatever it says.
    other_facility: bool,
}

/// What one line holds.
#[derive(Debug, PartialEq)]
enum Read<'a> {
    Event(Prefix<'a>, Body<'a>),
    /// An adapter driver's line about its link, cable or PCIe slot.
    Nic(Prefix<'a>, Nic<'a>),
    /// A PCIe AER line.
    Aer(Prefix<'a>, AerLine<'a>),
    /// A rate limit's report of dropped AER messages: the device the line
    /// names, the function, the count.
    Suppressed(Prefix<'a>, Suppressed<'a>),
    /// An NVIDIA driver line about a GPU's initialisation.
    Init(Prefix<'a>, InitLine<'a>),
    /// A kernel (or log) message that is no Xid/SXid.
    Other(Prefix<'a>),
    /// A journal's boot line, with the boot's id (`None` for `-- Reboot
    /// --`).
    Boot(Option<&'a str>),
    /// Not a kernel-log line.
    Foreign,
}

/// An Xid or SXid line after its prefix.
#[derive(Debug, PartialEq)]
struct Body<'a> {
    source: XidSource,
    device: Option<&'a str>,
    bus_id: Option<&'a str>,
    /// The code's digits, and whether anything follows them on the line.
    code: Option<(u32, bool)>,
    pid: Option<&'a str>,
    process: Option<&'a str>,
    message: Option<&'a str>,
}

/// Whether `text` holds `Xid (` (also in `SXid (`): a search for an `X`,
/// then a compare, ahead of anything else on every line detection asks
/// about.
fn has_xid(text: &str) -> bool {
    let b = text.as_bytes();
    memchr::memchr_iter(b'X', b).any(|i| b.get(i + 1..i + 5) == Some(b"id (".as_slice()))
}

/// Whether `text` holds one of the words an AER error's first line or a
/// GPU's initialisation line has: a search ahead of reading them.
fn has_pcie_or_init(text: &str) -> bool {
    let b = text.as_bytes();
    [
        "PCIe Bus Error",
        "error received",
        "error message received",
        "AER: enabled",
        "NVRM: ",
        "nvidia-drm ",
        "callbacks suppressed",
    ]
    .iter()
    .any(|w| memchr::memmem::find(b, w.as_bytes()).is_some())
}

/// Whether `text` holds `mlx`, a search ahead of the adapter reading on
/// every line detection asks about.
fn has_mlx(text: &str) -> bool {
    memchr::memmem::find(text.as_bytes(), b"mlx").is_some()
}

/// `-- Boot 0b5e3c1a9f6d4e2b8a7c6d5e4f3a2b1c --` (the new boot's id, 32
/// hex digits: systemd's `journalctl-show.c`, `"-- Boot "
/// SD_ID128_FORMAT_STR " --"`) or older systemd's `-- Reboot --`: the line
/// journalctl prints between two boots' entries. `Some(None)` for the
/// latter.
pub(crate) fn boot_marker(text: &str) -> Option<Option<&str>> {
    let t = text.trim();
    if t == "-- Reboot --" {
        return Some(None);
    }
    let id = t.strip_prefix("-- Boot ")?.strip_suffix(" --")?;
    (id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit())).then_some(Some(id))
}

/// Boot lines looked past, ahead of a block that begins with them
/// (`journalctl -k -g mlx5` prints one for each boot without a match).
const BOOT_LINES_AHEAD: usize = 16;

/// A block starts at an Xid or SXid line, or at an adapter driver's line
/// (`mlx5_core 0000:53:00.0 …: `, any message: `dmesg | grep mlx5` begins
/// with the probe's lines); every such line is a key of its own, so that a
/// run of them stays one section. A journal's boot line starts one when
/// such a line follows it (past other boot lines and blank lines): alone,
/// it says nothing of a kernel log.
fn detect(lines: &[Line<'_>]) -> Option<Block> {
    let first = lines.first()?;
    let text = first.text();
    // `T` and `W` start a block only as a weekday's time (journalctl -o
    // short-full, `logread`): reading it spares the searches below the
    // many other lines that begin so (`Total`, `TX`, `Warning`).
    let t = text.trim_start();
    if matches!(t.as_bytes().first(), Some(b'T' | b'W')) && weekday_time(t).is_none() {
        return None;
    }
    if boot_marker(text).is_some() {
        let next = lines
            .iter()
            .skip(1)
            .take(BOOT_LINES_AHEAD)
            .position(|l| !l.is_blank() && boot_marker(l.text()).is_none())?;
        return detect(lines.get(next + 1..)?)
            .map(|_| Block::keyed(format!("boot@{}", first.number)));
    }
    if has_xid(text) {
        return matches!(read_line(text), Read::Event(..))
            .then(|| Block::keyed(format!("xid@{}", first.number)));
    }
    if has_pcie_or_init(text) {
        return matches!(
            read_line(text),
            Read::Init(..)
                | Read::Suppressed(..)
                | Read::Aer(
                    _,
                    AerLine::Error { .. } | AerLine::Receipt { .. } | AerLine::Enabled { .. }
                )
        )
        .then(|| Block::keyed(format!("pcie@{}", first.number)));
    }
    if !has_mlx(text) {
        return None;
    }
    let (prefix, rest) = split_prefix(text);
    if prefix.other_facility {
        return None;
    }
    nic_head(rest)
        .filter(|h| h.pci.is_some())
        .map(|_| Block::keyed(format!("nic@{}", first.number)))
}

/// Reads a block of kernel-log lines.
#[must_use]
pub fn parse(lines: &[Line<'_>]) -> Parsed<KernelLog> {
    parse_until(lines, crate::parse::text::last_text_line(lines))
}

/// [`parse`], with `last` the number of the block's last line with text
/// (the line a cut may end inside), which need not be one of `lines`.
fn parse_until(lines: &[Line<'_>], last: Option<usize>) -> Parsed<KernelLog> {
    let mut out = KernelLog::default();
    let mut unread = Unread::default();
    let mut other: Vec<usize> = Vec::new();
    let mut hosts = HostsSeen::default();
    // The boot whose first line is still to come.
    let mut boot_opened: Option<usize> = None;
    let mut pcie = PcieState::default();
    for line in lines.iter().filter(|l| !l.is_blank()) {
        let read = read_line(line.text());
        if let Read::Event(p, _)
        | Read::Nic(p, _)
        | Read::Other(p)
        | Read::Aer(p, _)
        | Read::Suppressed(p, _)
        | Read::Init(p, _) = &read
        {
            if let Some(h) = p.host {
                hosts.see(h);
            }
            if let Some(b) = boot_opened.take().and_then(|i| out.boots.get_mut(i)) {
                b.first_time = p.time.map(str::to_owned);
            }
        }
        let boot = u32::try_from(out.boots.len()).unwrap_or(u32::MAX);
        if !matches!(read, Read::Other(_)) {
            pcie.interrupt(&mut out);
        }
        match read {
            Read::Boot(id) => {
                boot_opened = Some(out.boots.len());
                out.boots.push(BootMarker {
                    id: id.map(str::to_owned),
                    first_time: None,
                    span: LineSpan::line(line.number),
                });
            }
            Read::Event(prefix, body) => {
                if !fold_data_line(&mut out, &body, line.number) {
                    out.events
                        .push(event(prefix, body, line.number, Some(line.number) == last));
                }
            }
            Read::Nic(prefix, nic) => {
                match nic_event(prefix, nic, line.number, Some(line.number) == last) {
                    Some(e) => out.nic_events.push(NicEvent { boot, ..e }),
                    None => other.push(line.number),
                }
            }
            Read::Aer(prefix, aer) => pcie.aer(&mut out, prefix, aer, line.number),
            Read::Suppressed(prefix, s) => out.aer_suppressed.push(AerSuppressed {
                count: s.count,
                device: s.device.map(str::to_owned),
                function: s.function.map(str::to_owned),
                time: prefix.time.map(str::to_owned),
                uptime_seconds: prefix.uptime,
                span: LineSpan::line(line.number),
            }),
            Read::Init(prefix, init) => pcie.init(&mut out, prefix, init, line.number),
            Read::Other(_) if pcie.go_on(&mut out, line.text(), line.number) => {}
            Read::Other(_) => other.push(line.number),
            Read::Foreign => unread.line(line, "not a kernel log line"),
        }
    }
    pcie.finish(&mut out, last);
    out.other_messages = spans_of(other);
    match hosts.order.as_slice() {
        [host] => out.syslog_host = Some((*host).to_owned()),
        [] => {}
        several => out.syslog_hosts = several.iter().map(|h| (*h).to_owned()).collect(),
    }
    Parsed {
        value: out,
        warnings: unread.finish(),
    }
}

/// The hosts a block's syslog prefixes name, in the order of their first
/// lines: a set for a collector's file of a thousand hosts, and the last
/// one named for the runs of lines one host logs.
#[derive(Default)]
struct HostsSeen<'a> {
    order: Vec<&'a str>,
    known: std::collections::HashSet<&'a str>,
}

impl<'a> HostsSeen<'a> {
    fn see(&mut self, host: &'a str) {
        if self.order.last() != Some(&host) && self.known.insert(host) {
            self.order.push(host);
        }
    }
}

/// Each host's reading of a block whose syslog prefixes name several
/// hosts (a central collector's `/var/log/messages`, or `grep mlx5` of
/// several hosts' logs without pdsh's prefixes), in the order of
/// [`KernelLog::syslog_hosts`]: each read from its own lines alone, so
/// that one host's `Link down` and another's `Link up` are no one link's
/// change. A line naming no host (a journal's boot line, a message's
/// continuation) goes with the next named line when it is a boot line
/// (journalctl prints it before the new boot's first entry), else with
/// the line above. The warnings are the whole block's ([`parse`]'s): an
/// unread line is unread whoever's it is.
#[must_use]
pub(crate) fn parse_per_host(lines: &[Line<'_>], hosts: &[String]) -> Vec<KernelLog> {
    let last = crate::parse::text::last_text_line(lines);
    let index: std::collections::HashMap<&str, usize> = hosts
        .iter()
        .enumerate()
        .map(|(i, h)| (h.as_str(), i))
        .collect();
    let mut each: Vec<Vec<Line<'_>>> = vec![Vec::new(); hosts.len()];
    let mut current = 0usize;
    let mut boots_waiting: Vec<&Line<'_>> = Vec::new();
    for line in lines.iter().filter(|l| !l.is_blank()) {
        if boot_marker(line.text()).is_some() {
            boots_waiting.push(line);
            continue;
        }
        let (prefix, _) = split_prefix(line.text());
        if let Some(&i) = prefix.host.and_then(|h| index.get(h)) {
            current = i;
        }
        if let Some(lines) = each.get_mut(current) {
            lines.extend(boots_waiting.drain(..).cloned());
            lines.push(line.clone());
        }
    }
    if let Some(lines) = each.get_mut(current) {
        lines.extend(boots_waiting.drain(..).cloned());
    }
    each.iter()
        .zip(hosts)
        .map(|(lines, host)| {
            let mut log = parse_until(lines, last).value;
            log.syslog_host = Some(host.clone());
            log
        })
        .collect()
}

/// `3 Xid/SXid lines (2 devices), 5 adapter link/cable/PCIe lines (2
/// adapters), 4 other kernel messages`.
#[must_use]
pub fn summary(log: &KernelLog) -> String {
    let mut devices: Vec<(XidSource, Option<&str>, Option<&str>)> = Vec::new();
    for e in &log.events {
        let key = (e.source, e.device.as_deref(), e.bus_id.as_deref());
        if !devices.contains(&key) {
            devices.push(key);
        }
    }
    let mut parts = Vec::new();
    let others_read = !log.nic_events.is_empty()
        || !log.aer_events.is_empty()
        || !log.aer_suppressed.is_empty()
        || !log.gpu_init_events.is_empty();
    if !log.events.is_empty() || !others_read {
        parts.push(format!(
            "{} Xid/SXid line(s) ({} device(s))",
            log.events.len(),
            devices.len()
        ));
    }
    if !log.nic_events.is_empty() {
        let mut adapters: Vec<Option<&str>> = Vec::new();
        for e in &log.nic_events {
            if !adapters.contains(&e.pci.as_deref()) {
                adapters.push(e.pci.as_deref());
            }
        }
        parts.push(format!(
            "{} adapter link/cable/PCIe line(s) ({} adapter(s))",
            log.nic_events.len(),
            adapters.len()
        ));
    }
    if !log.aer_events.is_empty() {
        parts.push(format!("{} PCIe AER error(s)", log.aer_events.len()));
    }
    if !log.aer_suppressed.is_empty() {
        let dropped: u64 = log.aer_suppressed.iter().map(|s| s.count).sum();
        parts.push(format!("{dropped} AER message(s) the kernel suppressed"));
    }
    if !log.gpu_init_events.is_empty() {
        parts.push(format!(
            "{} GPU initialisation line(s)",
            log.gpu_init_events.len()
        ));
    }
    let mut s = parts.join(", ");
    let other = log.other_message_lines();
    if other > 0 {
        s.push_str(&format!(", {other} other kernel message(s)"));
    }
    if !log.boots.is_empty() {
        s.push_str(&format!(", over {} boots", log.boots.len() + 1));
    }
    s
}

/// Lines a NVRM message is continued over, at most (the driver's longest
/// `The NVIDIA GPU …` message takes eight).
const INIT_LINES: usize = 8;

/// What an AER error or a GPU's multi-line message still takes.
#[derive(Default)]
struct PcieState {
    /// The root port's receipt line no error line has taken yet: the
    /// port, its driver, the device it names, `Multiple`, its line.
    receipt: Option<Receipt>,
    /// The AER event the next status and bit lines of its device belong
    /// to ([`KernelLog::aer_events`]).
    open_aer: Option<usize>,
    /// The `The NVIDIA GPU …` message still going on, and its lines.
    open_init: Option<(usize, usize)>,
}

/// A receipt line, with what its event takes from it.
struct Receipt {
    event: AerEvent,
}

impl PcieState {
    /// Takes an AER line into its event.
    fn aer(&mut self, out: &mut KernelLog, prefix: Prefix<'_>, line: AerLine<'_>, number: usize) {
        self.open_init = None;
        let device = line.device();
        let driver = line.driver();
        let here = LineSpan::line(number);
        let blank = |device: Option<String>| AerEvent {
            device,
            driver: Some(driver.to_owned()),
            port: None,
            severity: None,
            layer: None,
            agent: None,
            vendor_device: None,
            status: None,
            bits: Vec::new(),
            multiple: false,
            time: prefix.time.map(str::to_owned),
            uptime_seconds: prefix.uptime,
            span: here,
            partial: None,
        };
        match line {
            AerLine::Receipt {
                severity,
                multiple,
                source,
                ..
            } => {
                self.flush_receipt(out);
                let mut event = blank(source.clone());
                event.severity = severity;
                event.multiple = multiple;
                event.port = Some(device.to_owned()).filter(|p| source.as_deref() != Some(p));
                event.driver = None;
                self.receipt = Some(Receipt { event });
                self.open_aer = None;
            }
            AerLine::Error {
                severity,
                layer,
                agent,
                ..
            } => {
                let mut event = blank(Some(device.to_owned()));
                event.severity = severity;
                event.layer = layer.map(str::to_owned);
                event.agent = agent.map(str::to_owned);
                if let Some(r) = self.receipt.take() {
                    event.multiple = r.event.multiple;
                    event.port = r
                        .event
                        .port
                        .or(r.event.device)
                        .filter(|p| p.as_str() != device);
                    event.span = r.event.span.join(here);
                    if event.time.is_none() && event.uptime_seconds.is_none() {
                        event.time = r.event.time;
                        event.uptime_seconds = r.event.uptime_seconds;
                    }
                }
                self.open_aer = Some(out.aer_events.len());
                out.aer_events.push(event);
            }
            AerLine::Enabled { port, .. } => {
                if !out.aer_enabled.iter().any(|p| p == port) {
                    out.aer_enabled.push(port.to_owned());
                }
            }
            AerLine::Status { .. } | AerLine::Bit { .. } | AerLine::Detail { .. }
                if self.receipt.as_ref().is_some_and(|r| {
                    matches!(line, AerLine::Detail { .. })
                        || r.event.device.as_deref() == Some(device)
                }) =>
            {
                // The receipt's own lines (`can't find device of ID00e5`),
                // or its device's when no error line came between.
                if let Some(r) = self.receipt.as_mut() {
                    r.event.span = r.event.span.join(here);
                    match line {
                        AerLine::Status {
                            vendor_device,
                            status,
                            ..
                        } => {
                            r.event.vendor_device = Some(vendor_device.to_owned());
                            r.event.status = status.map(str::to_owned);
                        }
                        AerLine::Bit { name, .. } => r.event.bits.push(name.to_owned()),
                        _ => {}
                    }
                }
            }
            AerLine::Status { .. } | AerLine::Bit { .. } | AerLine::Detail { .. } => {
                let open = self
                    .open_aer
                    .and_then(|i| out.aer_events.get_mut(i))
                    .filter(|e| {
                        e.device.as_deref() == Some(device)
                            || matches!(line, AerLine::Detail { .. })
                    });
                let event = match open {
                    Some(e) => e,
                    None => {
                        // The paste starts inside an event: its error line
                        // (the severity) is not shown.
                        let mut e = blank(Some(device.to_owned()));
                        e.partial = Some(Partial::new(
                            PartialReason::CutLine,
                            vec!["the error line (severity and type) above it".to_owned()],
                            number,
                        ));
                        self.open_aer = Some(out.aer_events.len());
                        out.aer_events.push(e);
                        let Some(e) = out.aer_events.last_mut() else {
                            return;
                        };
                        e
                    }
                };
                event.span = event.span.join(here);
                match line {
                    AerLine::Status {
                        vendor_device,
                        status,
                        ..
                    } => {
                        event.vendor_device = Some(vendor_device.to_owned());
                        event.status = status.map(str::to_owned);
                    }
                    AerLine::Bit { name, .. } => event.bits.push(name.to_owned()),
                    _ => {}
                }
            }
        }
    }

    /// A receipt no error line took: an event of its own.
    fn flush_receipt(&mut self, out: &mut KernelLog) {
        if let Some(r) = self.receipt.take() {
            out.aer_events.push(r.event);
        }
    }

    /// Takes a GPU's initialisation line.
    fn init(&mut self, out: &mut KernelLog, prefix: Prefix<'_>, line: InitLine<'_>, number: usize) {
        self.open_aer = None;
        let whole = line.what.is_some();
        let event = GpuInitEvent {
            bus_id: Some(line.bus_id.to_owned()),
            what: line.what,
            pci_id: line.pci_id.map(str::to_owned),
            message: line.message.trim().to_owned(),
            time: prefix.time.map(str::to_owned),
            uptime_seconds: prefix.uptime,
            span: LineSpan::line(number),
            partial: None,
        };
        self.open_init = (!whole).then_some((out.gpu_init_events.len(), 1));
        out.gpu_init_events.push(event);
        if !whole {
            self.close_if_whole(out);
        }
    }

    /// An `NVRM:` line that goes on with the open `The NVIDIA GPU …`
    /// message: taken into it. Returns whether it was.
    fn go_on(&mut self, out: &mut KernelLog, text: &str, number: usize) -> bool {
        let Some((i, n)) = self.open_init else {
            return false;
        };
        let (_, rest) = split_prefix(text);
        let Some(more) = rest.strip_prefix("NVRM:") else {
            self.interrupt(out);
            return false;
        };
        let Some(e) = out.gpu_init_events.get_mut(i) else {
            return false;
        };
        e.message.push(' ');
        e.message.push_str(more.trim());
        e.span = e.span.join(LineSpan::line(number));
        if e.pci_id.is_none() {
            e.pci_id = pci_id_in(&e.message).map(str::to_owned);
        }
        self.open_init = Some((i, n + 1));
        self.close_if_whole(out);
        true
    }

    /// Another kind of line ends the open message: it says what it says
    /// so far.
    fn interrupt(&mut self, out: &mut KernelLog) {
        if let Some(e) = self
            .open_init
            .take()
            .and_then(|(i, _)| out.gpu_init_events.get_mut(i))
        {
            e.what = init_what(&e.message);
        }
    }

    /// Closes the open message when its sentence ends (a line ending with
    /// `.`), or it has taken the most lines one takes.
    fn close_if_whole(&mut self, out: &mut KernelLog) {
        let Some((i, n)) = self.open_init else { return };
        let Some(e) = out.gpu_init_events.get_mut(i) else {
            return;
        };
        if e.message.ends_with('.') || n >= INIT_LINES {
            e.what = init_what(&e.message);
            self.open_init = None;
        }
    }

    /// At the block's end: a receipt left is an event whose error lines
    /// were cut; an event whose last line is the block's may have lost
    /// its bits; a message still going on is read for what it says.
    fn finish(&mut self, out: &mut KernelLog, last: Option<usize>) {
        if let Some(mut r) = self.receipt.take() {
            // Its error lines come right after it: the block ended first.
            if r.event.bits.is_empty() {
                r.event.partial = Some(Partial::new(
                    PartialReason::CutLine,
                    vec!["the error's lines after the receipt".to_owned()],
                    r.event.span.last_line,
                ));
            }
            out.aer_events.push(r.event);
        }
        if let Some(e) = self.open_aer.and_then(|i| out.aer_events.get_mut(i)) {
            if Some(e.span.last_line) == last && e.bits.is_empty() && e.partial.is_none() {
                let missing = if e.severity.is_none() {
                    "the severity and the error bits"
                } else {
                    "the error bits"
                };
                e.partial = Some(Partial::new(
                    PartialReason::CutLine,
                    vec![missing.to_owned()],
                    e.span.last_line,
                ));
            }
        }
        if let Some((i, _)) = self.open_init.take() {
            if let Some(e) = out.gpu_init_events.get_mut(i) {
                e.what = init_what(&e.message);
                if e.what.is_none() {
                    e.partial = Some(Partial::new(
                        PartialReason::CutLine,
                        vec!["what the driver says of the GPU".to_owned()],
                        e.span.last_line,
                    ));
                }
            }
        }
    }
}

/// An SXid's `Data {…}` line right under its event (same switch, same
/// code): part of that event. Returns whether it was folded.
fn fold_data_line(out: &mut KernelLog, body: &Body<'_>, number: usize) -> bool {
    let is_data =
        body.source == XidSource::Nvswitch && body.message.is_some_and(|m| m.starts_with("Data {"));
    let Some(prev) = out.events.last_mut().filter(|_| is_data) else {
        return false;
    };
    let same = prev.source == XidSource::Nvswitch
        && prev.device.as_deref() == body.device
        && prev.code == body.code.map(|(c, _)| c)
        && prev.span.last_line + 1 == number;
    if same {
        prev.span = prev.span.join(LineSpan::line(number));
    }
    same
}

/// The event of an Xid/SXid line. A code ending the block's last line may
/// have lost digits to the cut (`7` of `79`): not judged.
fn event(prefix: Prefix<'_>, body: Body<'_>, number: usize, last: bool) -> XidEvent {
    let code = match body.code {
        Some((code, followed)) if followed || !last => Some(code),
        _ => None,
    };
    let partial = code.is_none().then(|| {
        let missing = if body.bus_id.is_none() {
            "the device and the code"
        } else {
            "the code"
        };
        Partial::new(PartialReason::CutLine, vec![missing.to_owned()], number)
    });
    let fatal = body.message.and_then(fatality);
    XidEvent {
        source: body.source,
        bus_id: body.bus_id.map(str::to_owned),
        device: body.device.map(str::to_owned),
        code,
        pid: body.pid.map(str::to_owned),
        process: body.process.map(str::to_owned),
        message: body.message.map(str::to_owned),
        fatal,
        time: prefix.time.map(str::to_owned),
        uptime_seconds: prefix.uptime,
        span: LineSpan::line(number),
        partial,
    }
}

/// `Fatal` / `Non-fatal` / `Nonfatal` among the message's first words.
fn fatality(message: &str) -> Option<bool> {
    message
        .split([' ', ','])
        .filter(|w| !w.is_empty())
        .take(4)
        .find_map(|w| match w {
            "Fatal" | "fatal" => Some(true),
            "Non-fatal" | "Nonfatal" | "NonFatal" | "non-fatal" => Some(false),
            _ => None,
        })
}

/// A rate limit's `callbacks suppressed` line of the AER driver.
#[derive(Debug, PartialEq)]
struct Suppressed<'a> {
    device: Option<&'a str>,
    function: Option<&'a str>,
    count: u64,
}

/// `aer_ratelimit: 25 callbacks suppressed` (a function of the AER
/// driver: its name holds `aer`), or `pcieport 0000:00:01.0: AER: 25
/// callbacks suppressed`. Other functions' reports are other messages.
fn suppressed_line(text: &str) -> Option<Suppressed<'_>> {
    let before = text.trim_end().strip_suffix(" callbacks suppressed")?;
    let (head, count) = before.rsplit_once(' ')?;
    let count = count.parse::<u64>().ok()?;
    let head = head.strip_suffix(':')?;
    if let Some(head) = head.strip_suffix(": AER") {
        let (_, address) = head.split_once(' ')?;
        return is_pci_address(address).then_some(Suppressed {
            device: Some(address),
            function: None,
            count,
        });
    }
    let function = !head.is_empty()
        && head.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && head.contains("aer");
    function.then_some(Suppressed {
        device: None,
        function: Some(head),
        count,
    })
}

/// Reads one line: its prefix, then an Xid/SXid or another message.
fn read_line(text: &str) -> Read<'_> {
    if let Some(id) = boot_marker(text) {
        return Read::Boot(id);
    }
    let (prefix, rest) = split_prefix(text);
    if prefix.other_facility {
        return Read::Other(prefix);
    }
    // A cheap test of the line's last byte ahead of the words.
    if rest.trim_end().ends_with('d') {
        if let Some(s) = suppressed_line(rest) {
            return Read::Suppressed(prefix, s);
        }
    }
    if let Some(body) = xid_body(rest) {
        return Read::Event(prefix, body);
    }
    if let Some(init) = init_line(rest) {
        return Read::Init(prefix, init);
    }
    if let Some(aer) = aer_line(rest) {
        return Read::Aer(prefix, aer);
    }
    if let Some(nic) = nic_head(rest) {
        return Read::Nic(prefix, nic);
    }
    if prefix.logged || rest.starts_with("NVRM:") || rest.starts_with("nvidia-nvswitch") {
        Read::Other(prefix)
    } else {
        Read::Foreign
    }
}

/// The prefix of a kernel-log line and the message after it.
fn split_prefix(text: &str) -> (Prefix<'_>, &str) {
    let mut p = Prefix::default();
    let mut rest = text.trim_start();
    if let Some((kernel, r)) = strip_priority(rest).or_else(|| strip_facility(rest)) {
        p.logged = true;
        p.other_facility = !kernel;
        rest = r;
    }
    if let Some((time, uptime, r)) = bracket(rest) {
        p.logged = true;
        p.time = time;
        p.uptime = uptime;
        // journalctl -o short-monotonic: `[  12.345678] host kernel: …`.
        let Some((host, r)) = syslog_host(r) else {
            return (p, r);
        };
        p.host = Some(host);
        return (p, r);
    }
    if let Some((time, r)) = iso_time(rest)
        .or_else(|| bsd_time(rest))
        .or_else(|| weekday_time(rest))
    {
        p.logged = true;
        p.time = Some(time);
        rest = r;
        // `host kernel: …`: the syslog host, then the kernel's message
        // (with its own `[uptime]` where rsyslog keeps it).
        if let Some(tag) = kernel_tag(rest) {
            p.host = tag.host;
            p.other_facility |= !tag.kernel;
            rest = tag.rest;
            if let Some((_, uptime, r)) = bracket(rest) {
                p.uptime = uptime;
                rest = r;
            }
        }
    }
    // `kernel: NVRM: …`: a journal line whose time and host the author
    // cut away.
    if let Some(r) = rest.strip_prefix("kernel: ") {
        p.logged = true;
        rest = r.trim_start();
    }
    (p, rest)
}

/// `host kernel: ` after journalctl -o short-monotonic's `[seconds] `:
/// the host, and the kernel's message after it. A word with a colon or a
/// bracket is no host (`mlx5_core 0000:…`, `NVRM: …`).
fn syslog_host(text: &str) -> Option<(&str, &str)> {
    let (host, r) = text.split_once(' ')?;
    let r = r.strip_prefix("kernel:")?;
    is_host(host).then(|| (host, r.trim_start()))
}

/// Whether a word can be a syslog host: no colon, no bracket.
fn is_host(word: &str) -> bool {
    !word.is_empty() && !word.contains([':', '[', ']'])
}

/// The words between a syslog time and the kernel's message.
struct Tag<'a> {
    host: Option<&'a str>,
    /// Whether the line is the kernel's (no facility, or `kern.…`).
    kernel: bool,
    /// The message after `kernel:`.
    rest: &'a str,
}

/// `host kernel: `, `host NOTICE kernel: ` (SONiC's rsyslog template:
/// the severity in capitals), `kern.info kernel: ` (OpenWrt's `logread`:
/// facility and level) or `host kern.info kernel: `, after a syslog
/// time: the host, whether the facility is the kernel's, and the message.
fn kernel_tag(text: &str) -> Option<Tag<'_>> {
    let mut tag = Tag {
        host: None,
        kernel: true,
        rest: text,
    };
    // A host, then a level, then `kernel:`, each of the first two
    // optional.
    let (mut hosted, mut leveled) = (false, false);
    for _ in 0..3 {
        if let Some(after) = tag.rest.strip_prefix("kernel:") {
            tag.rest = after.trim_start();
            return Some(tag);
        }
        let (word, next) = tag.rest.split_once(' ')?;
        if leveled {
            return None;
        }
        if let Some(kernel) = level_word(word) {
            tag.kernel = kernel;
            leveled = true;
        } else if !hosted && !word.is_empty() {
            // A word with a colon (an IPv6 address) is no name, but
            // still the host's place.
            hosted = true;
            tag.host = is_host(word).then_some(word);
        } else {
            return None;
        }
        tag.rest = next.trim_start();
    }
    None
}

/// The syslog levels, as dmesg -x and `logread` print them.
const LEVELS: &[&str] = &[
    "emerg", "alert", "crit", "err", "error", "warn", "warning", "notice", "info", "debug",
];

/// The syslog facilities, as dmesg -x (util-linux `dmesg.c`,
/// `facility_names`) and `logread` print them.
const FACILITIES: &[&str] = &[
    "kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news", "uucp", "cron", "authpriv",
    "ftp", "res0", "res1", "res2", "res3", "local0", "local1", "local2", "local3", "local4",
    "local5", "local6", "local7",
];

/// A level word between the host and `kernel:`: SONiC's `NOTICE` (the
/// severity alone: `Some(true)`, the tag says the kernel), or
/// `kern.info` / `daemon.notice` (`Some(false)` for a facility other
/// than the kernel's).
fn level_word(word: &str) -> Option<bool> {
    if let Some((facility, level)) = word.split_once('.') {
        return (FACILITIES.contains(&facility) && LEVELS.contains(&level))
            .then_some(facility == "kern");
    }
    let capitals = word.bytes().all(|b| b.is_ascii_uppercase());
    (capitals && LEVELS.iter().any(|l| l.eq_ignore_ascii_case(word))).then_some(true)
}

/// dmesg -r's `<6>` (the record's facility and level as one number,
/// `<4>` a kernel warning, `<30>` a daemon's info): whether the facility
/// is the kernel's (0: a number below 8), and the text after it.
fn strip_priority(text: &str) -> Option<(bool, &str)> {
    let rest = text.strip_prefix('<')?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if !(1..=3).contains(&digits) {
        return None;
    }
    let number: u32 = rest.get(..digits)?.parse().ok()?;
    Some((number < 8, rest.get(digits..)?.strip_prefix('>')?))
}

/// dmesg -x's `kern  :err   : ` (facility and level, padded; `user  :`,
/// `daemon:`, `syslog:`, … for user space's lines): whether the facility
/// is the kernel's, and the text after it.
fn strip_facility(text: &str) -> Option<(bool, &str)> {
    let colon = text.bytes().take(10).position(|b| b == b':')?;
    let facility = text.get(..colon)?.trim_end_matches(' ');
    if !FACILITIES.contains(&facility) {
        return None;
    }
    let rest = text.get(colon + 1..)?;
    let (level, rest) = rest.split_once(':')?;
    let level = level.trim();
    (LEVELS.contains(&level) && rest.starts_with(' '))
        .then(|| (facility == "kern", rest.trim_start()))
}

/// `[  123.456789] ` (seconds since boot) or `[Mon Dec  7 10:00:00 2026] `
/// (dmesg -T): the time, and the text after the bracket.
fn bracket(text: &str) -> Option<(Option<&str>, Option<f64>, &str)> {
    let inner_and_rest = text.strip_prefix('[')?;
    let close = inner_and_rest.bytes().take(48).position(|b| b == b']')?;
    let inner = inner_and_rest.get(..close)?.trim();
    let rest = inner_and_rest.get(close + 1..)?.trim_start();
    // `[  +6.010643]` (dmesg -H, --time-format delta): time since the
    // line before, kept as printed.
    if inner.starts_with('+') {
        return Some((Some(inner), None, rest));
    }
    if let Ok(seconds) = inner.parse::<f64>() {
        return seconds.is_finite().then_some((None, Some(seconds), rest));
    }
    has_clock(inner).then_some((Some(inner), None, rest))
}

/// Whether `text` holds `DD:DD`.
fn has_clock(text: &str) -> bool {
    let b = text.as_bytes();
    b.windows(3)
        .any(|w| matches!(w, [a, b':', c] if a.is_ascii_digit() && c.is_ascii_digit()))
}

/// `2026-12-07T10:00:00.123456+00:00 ` (and dmesg's `,` decimals).
fn iso_time(text: &str) -> Option<(&str, &str)> {
    let (word, rest) = text.split_once(' ')?;
    let b = word.as_bytes();
    let dated = b.len() >= 16
        && b.get(..4).is_some_and(|y| y.iter().all(u8::is_ascii_digit))
        && b.get(4) == Some(&b'-')
        && b.get(10) == Some(&b'T')
        && has_clock(word);
    dated.then(|| (word, rest.trim_start()))
}

/// `Dec  7 10:00:00 ` / `Dec 07 10:00:00 `: syslog's time.
fn bsd_time(text: &str) -> Option<(&str, &str)> {
    const MONTHS: &[&str] = &[
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = text.get(..3)?;
    if !MONTHS.contains(&month) {
        return None;
    }
    let after_month = text.get(3..)?;
    let day_at = after_month.len() - after_month.trim_start().len();
    let after_day = after_month.trim_start();
    let day_len = after_day.bytes().take_while(u8::is_ascii_digit).count();
    if !(1..=2).contains(&day_len) {
        return None;
    }
    let after_day = after_day.get(day_len..)?;
    let clock = after_day.strip_prefix(' ')?;
    let clock_len = clock
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b':' || *b == b'.')
        .count();
    let clock_text = clock.get(..clock_len)?;
    if !has_clock(clock_text) {
        return None;
    }
    let end = 3 + day_at + day_len + 1 + clock_len;
    let rest = clock.get(clock_len..)?.strip_prefix(' ')?;
    Some((text.get(..end)?, rest.trim_start()))
}

/// A time that begins with the weekday: `Mon 2026-12-07 10:00:01 UTC `
/// (journalctl -o short-full: systemd's `TIMESTAMP_PRETTY`, the zone's
/// name last) or `Mon Dec  7 10:00:01 2026 ` (OpenWrt's `logread`, as
/// `ctime` prints it).
fn weekday_time(text: &str) -> Option<(&str, &str)> {
    const WEEKDAYS: &[&str] = &["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
    if !WEEKDAYS.contains(&text.get(..3)?) {
        return None;
    }
    let after = text.get(3..)?.strip_prefix(' ')?;
    let (first, r) = after.split_once(' ')?;
    let b = first.as_bytes();
    let dated = b.len() == 10
        && b.get(4) == Some(&b'-')
        && b.get(7) == Some(&b'-')
        && b.iter().all(|c| c.is_ascii_digit() || *c == b'-');
    let rest = if dated {
        let (clock, r) = r.split_once(' ')?;
        let (zone, r) = r.split_once(' ')?;
        if !has_clock(clock) || zone.is_empty() || zone.contains(':') {
            return None;
        }
        r
    } else {
        let (_, r) = bsd_time(after)?;
        let (year, r) = r.split_once(' ')?;
        if year.len() != 4 || !year.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        r
    };
    let end = text.len() - rest.len() - 1;
    Some((text.get(..end)?, rest.trim_start()))
}

/// `NVRM: Xid (PCI:…): CODE, …` or `nvidia-nvswitchN: SXid (PCI:…): CODE, …`.
fn xid_body(text: &str) -> Option<Body<'_>> {
    let (source, device, after) = if let Some(r) = text.strip_prefix("NVRM: Xid (") {
        (XidSource::Gpu, None, r)
    } else if text.starts_with("nvidia-nvswitch") {
        let (device, r) = text.split_once(": SXid (")?;
        if device.contains(' ') {
            return None;
        }
        (XidSource::Nvswitch, Some(device), r)
    } else {
        return None;
    };
    let after = after.strip_prefix("PCI:").unwrap_or(after);
    let mut body = Body {
        source,
        device,
        bus_id: None,
        code: None,
        pid: None,
        process: None,
        message: None,
    };
    // Cut inside the parentheses: the device is not known whole.
    let Some((bus, rest)) = after.split_once(')') else {
        return Some(body);
    };
    if bus.is_empty()
        || !bus
            .bytes()
            .all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.')
    {
        return None;
    }
    body.bus_id = Some(bus);
    let rest = rest.strip_prefix(':').unwrap_or(rest).trim_start();
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let Some(code) = rest.get(..digits).and_then(|d| d.parse::<u32>().ok()) else {
        return Some(body);
    };
    let after_code = rest.get(digits..).unwrap_or_default();
    body.code = Some((code, !after_code.is_empty()));
    let mut msg = after_code
        .strip_prefix(',')
        .unwrap_or(after_code)
        .trim_start();
    if let Some(r) = msg.strip_prefix("pid=") {
        let (pid, r) = r.split_once(", ").unwrap_or((r, ""));
        body.pid = Some(pid.trim_end_matches(','));
        msg = r;
    }
    if let Some(r) = msg.strip_prefix("name=") {
        let (name, r) = r.split_once(", ").unwrap_or((r, ""));
        body.process = Some(name.trim_end_matches(','));
        msg = r;
    }
    let msg = msg.trim();
    body.message = (!msg.is_empty()).then_some(msg);
    Some(body)
}

/// An adapter driver's line after its log prefix: `DRIVER PCI[ NAME]: MSG`.
#[derive(Debug, PartialEq)]
struct Nic<'a> {
    driver: &'a str,
    /// The PCI address; `None` when the line ends inside it.
    pci: Option<&'a str>,
    interface: Option<&'a str>,
    /// The message after `: `; `None` when the line ends before it.
    message: Option<&'a str>,
}

/// `dddd:bb:dd.f`: a PCI address as the kernel names a device.
pub(super) fn is_pci_address(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 12
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b':',
            10 => *c == b'.',
            _ => c.is_ascii_hexdigit(),
        })
}

/// Whether `text` is a start of a PCI address, cut before it ends.
fn is_pci_start(text: &str) -> bool {
    !text.is_empty()
        && text.len() < 12
        && text.bytes().enumerate().all(|(i, c)| match i {
            4 | 7 => c == b':',
            10 => c == b'.',
            _ => c.is_ascii_hexdigit(),
        })
}

/// `mlx5_core 0000:53:00.0 enp83s0f0np0: …`, `mlx4_core 0000:c3:00.0: …`:
/// an mlx driver's name, the PCI address, an interface. A line ending
/// inside the address names the driver only.
fn nic_head(text: &str) -> Option<Nic<'_>> {
    let (driver, rest) = text.split_once(' ')?;
    let known = driver.starts_with("mlx")
        && driver.len() <= 16
        && driver
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if !known {
        return None;
    }
    let mut nic = Nic {
        driver,
        pci: None,
        interface: None,
        message: None,
    };
    let pci = rest.get(..12).filter(|p| is_pci_address(p));
    let Some(pci) = pci else {
        return is_pci_start(rest.trim_end_matches(':')).then_some(nic);
    };
    nic.pci = Some(pci);
    let after = rest.get(12..).unwrap_or_default();
    let (interface, message) = if let Some(m) = after.strip_prefix(':') {
        (None, m)
    } else {
        let named = after.strip_prefix(' ')?;
        match named.split_once(':') {
            Some((name, m)) if !name.is_empty() && !name.contains(' ') => (Some(name), m),
            Some(_) => return None,
            // Cut inside the interface's name.
            None if !named.contains(' ') => return Some(nic),
            None => return None,
        }
    };
    nic.interface = interface;
    let message = message.trim();
    nic.message = (!message.is_empty()).then_some(message);
    Some(nic)
}

/// The event of an adapter's line, `None` for the driver's other messages.
/// On the block's last line, a start of one of the shapes read is a cut
/// line: the adapter is named, nothing is judged.
fn nic_event(prefix: Prefix<'_>, nic: Nic<'_>, number: usize, last: bool) -> Option<NicEvent> {
    let message = nic.message.unwrap_or_default();
    let what = nic_what(message).filter(|w| !last || whole_on_last_line(w));
    let missing = match (&what, last) {
        (Some(_), _) | (None, false) => None,
        (None, true) if nic.pci.is_none() => Some("the adapter and what the line says"),
        (None, true) => cut_shape(message),
    };
    if what.is_none() && missing.is_none() {
        return None;
    }
    Some(NicEvent {
        driver: nic.driver.to_owned(),
        pci: nic.pci.map(str::to_owned),
        interface: nic.interface.map(str::to_owned),
        what,
        time: prefix.time.map(str::to_owned),
        uptime_seconds: prefix.uptime,
        boot: 0,
        span: LineSpan::line(number),
        partial: missing.map(|m| Partial::new(PartialReason::CutLine, vec![m.to_owned()], number)),
    })
}

/// What a message says, when it is one of the shapes read, whole.
fn nic_what(message: &str) -> Option<NicWhat> {
    match message {
        "Link up" => return Some(NicWhat::Carrier { up: true }),
        "Link down" => return Some(NicWhat::Carrier { up: false }),
        _ => {}
    }
    if let Some(rest) = message.strip_prefix("Port: ") {
        let (port, state) = rest.split_once(" Link ")?;
        // `ib_port_state_to_str`'s words (and its `UNKNOWN`).
        let state_ok = matches!(
            state,
            "NOP" | "DOWN" | "INIT" | "ARMED" | "ACTIVE" | "ACTIVE_DEFER" | "UNKNOWN"
        );
        let port = port.parse().ok()?;
        return state_ok.then(|| NicWhat::PortState {
            port,
            state: state.to_owned(),
        });
    }
    if let Some(module) = module_event(message) {
        return Some(module);
    }
    pcie_bandwidth(message).map(NicWhat::PcieBandwidth)
}

/// The reasons `mlx5_pme_error` prints, whole: a reason ending the block's
/// last line that is none of these may have lost its end to the cut.
const MODULE_ERRORS: &[&str] = &[
    "Power budget exceeded",
    "Long Range for non MLNX cable",
    "Bus stuck(I2C or data shorted)",
    "No EEPROM/retry timeout",
    "Enforce part number list",
    "Unknown identifier",
    "High Temperature",
    "Bad or shorted cable/module",
    "Unknown status",
];

/// The statuses `mlx5_pme_status` prints.
const MODULE_STATUSES: &[&str] = &["Cable plugged", "Cable unplugged", "Cable error"];

/// Whether an event read from the block's last line is whole: its words
/// are ones the driver prints whole (a state, a status, a reason of the
/// tables), or its line ends with the shape's own last word.
fn whole_on_last_line(what: &NicWhat) -> bool {
    match what {
        // Closed sets of words, read whole only (`ACT` is no state).
        NicWhat::Carrier { .. } | NicWhat::PortState { .. } => true,
        NicWhat::Module { status, error, .. } => {
            MODULE_STATUSES.contains(&status.as_str())
                && error.as_deref().is_none_or(|e| MODULE_ERRORS.contains(&e))
        }
        // Its shape ends with `link)` (or `Flit mode`): a cut one does not
        // read.
        NicWhat::PcieBandwidth(_) => true,
    }
}

/// `Port module event: module 0, Cable plugged`, `Port module
/// event[error]: module 0, Cable error, High Temperature`, after the
/// `func:line:(pid N): ` of older kernels' `mlx5_core_err`.
fn module_event(message: &str) -> Option<NicWhat> {
    let at = memchr::memmem::find(message.as_bytes(), b"Port module event")?;
    let rest = message.get(at + "Port module event".len()..)?;
    let (error, rest) = match rest.strip_prefix("[error]: ") {
        Some(r) => (true, r),
        None => (false, rest.strip_prefix(": ")?),
    };
    let rest = rest.strip_prefix("module ")?;
    let (module, rest) = rest.split_once(", ")?;
    let module = module.parse().ok()?;
    let (status, reason) = if error {
        let (s, r) = rest.split_once(", ")?;
        (s, Some(r.trim()))
    } else {
        (rest.trim(), None)
    };
    (!status.is_empty()).then(|| NicWhat::Module {
        module,
        status: status.to_owned(),
        error: reason.filter(|r| !r.is_empty()).map(str::to_owned),
    })
}

/// `8.0 GT/s PCIe x8 link` → (`8.0 GT/s`, 8).
fn pcie_link(text: &str) -> Option<(&str, u32)> {
    let (speed, width) = text.trim().strip_suffix(" link")?.split_once(" PCIe x")?;
    speed
        .ends_with(" GT/s")
        .then_some(())
        .and_then(|()| Some((speed, width.parse().ok()?)))
}

/// `N.NNN Gb/s`'s number.
fn gbps(text: &str) -> Option<f64> {
    text.trim()
        .strip_suffix(" Gb/s")?
        .parse::<f64>()
        .ok()
        .filter(|g| g.is_finite())
}

/// The PCIe bandwidth line (`__pcie_print_link_status`).
fn pcie_bandwidth(message: &str) -> Option<PcieBandwidth> {
    const AVAILABLE: &str = " available PCIe bandwidth";
    let at = memchr::memmem::find(message.as_bytes(), AVAILABLE.as_bytes())?;
    let available_gbps = gbps(message.get(..at)?)?;
    let rest = message.get(at + AVAILABLE.len()..)?;
    let rest = rest.strip_suffix(", in Flit mode").unwrap_or(rest);
    if let Some(link) = rest.strip_prefix(" (").and_then(|r| r.strip_suffix(')')) {
        let (speed, width) = pcie_link(link)?;
        return Some(PcieBandwidth {
            available_gbps,
            speed: speed.to_owned(),
            width,
            limited_at: None,
            capable_gbps: None,
            capable_speed: None,
            capable_width: None,
        });
    }
    let rest = rest.strip_prefix(", limited by ")?.strip_suffix(')')?;
    let (limited, capable) = rest.split_once(" (capable of ")?;
    let (link, at_dev) = limited.split_once(" link at ")?;
    let (speed, width) = pcie_link(&format!("{link} link")).map(|(s, w)| (s.to_owned(), w))?;
    let (cap_bw, cap_link) = capable.split_once(" with ")?;
    let (cap_speed, cap_width) = pcie_link(cap_link)?;
    Some(PcieBandwidth {
        available_gbps,
        speed,
        width,
        limited_at: Some(at_dev.trim().to_owned()),
        capable_gbps: Some(gbps(cap_bw)?),
        capable_speed: Some(cap_speed.to_owned()),
        capable_width: Some(cap_width),
    })
}

/// What a message cut at the block's end lacks, when it is a start of one
/// of the shapes read (or one of them with its last word cut).
fn cut_shape(message: &str) -> Option<&'static str> {
    let starts = |whole: &str| whole.starts_with(message) || message.starts_with(whole);
    if message.is_empty() {
        return Some("what the line says");
    }
    if starts("Link down") || starts("Link up") || starts("Port: ") {
        return Some("the link state");
    }
    if message.contains("Port module event") || "Port module event".starts_with(message) {
        return Some("the module's status");
    }
    let digits = message
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b'.')
        .count();
    let after = message.get(digits..).unwrap_or_default();
    let bandwidth = " Gb/s available PCIe bandwidth";
    if digits > 0 && (bandwidth.starts_with(after) || after.starts_with(bandwidth)) {
        return Some("the PCIe link figures");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::WarningKind;
    use crate::parse::lines_of;

    fn read(text: &str) -> Parsed<KernelLog> {
        parse(&lines_of(text))
    }

    #[test]
    fn reads_the_xid_line_after_each_prefix() {
        let text = "\
[  123.456789] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.
[Mon Dec  7 10:00:00 2026] NVRM: Xid (PCI:0000:3b:00): 48, pid=1234, name=python3, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 0, subpartition 0.
Dec 07 10:00:01 gpu07 kernel: NVRM: Xid (PCI:0000:5e:00): 13, pid=77, name=train, Graphics Exception: ESR 0x405840=0x3e
2026-12-07T10:00:02.123456+00:00 gpu07 kernel: NVRM: Xid (PCI:0000:5e:00): 31, pid='<unknown>', name=<unknown>, Ch 00000008, intr 00000000. MMU Fault
Dec  7 10:00:03 gpu07 kernel: [ 99.5] NVRM: Xid (0000:86:00): 94, Contained ECC error
kern  :err   : 2026-12-07T10:00:04,859532+00:00 NVRM: Xid (PCI:0000:86:00): 119
NVRM: Xid (PCI:0000:86:00): 62, pid=1, name=x,
[  +6.010643] NVRM: Xid (PCI:0000:83:00): 119, pid=2, name=nvidia-smi, Timeout waiting for RPC from GSP!
kernel: NVRM: Xid (PCI:0000:dc:00): 45, pid=3, name=python3, Ch 00000001 caused by previous Xid 149
";
        let p = read(text);
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let e = &p.value.events;
        assert_eq!(e.len(), 9);
        assert_eq!(
            (e[7].time.as_deref(), e[7].uptime_seconds),
            (Some("+6.010643"), None)
        );
        assert_eq!(
            (e[8].code, e[8].bus_id.as_deref()),
            (Some(45), Some("0000:dc:00"))
        );
        assert_eq!(
            (e[0].bus_id.as_deref(), e[0].code, e[0].uptime_seconds),
            (Some("0000:3b:00"), Some(79), Some(123.456_789))
        );
        assert_eq!(e[0].pid.as_deref(), Some("1234"));
        assert_eq!(e[0].process.as_deref(), Some("python3"));
        assert_eq!(e[0].message.as_deref(), Some("GPU has fallen off the bus."));
        assert_eq!(e[1].time.as_deref(), Some("Mon Dec  7 10:00:00 2026"));
        assert_eq!(e[1].code, Some(48));
        assert_eq!(e[2].time.as_deref(), Some("Dec 07 10:00:01"));
        assert_eq!(
            e[3].time.as_deref(),
            Some("2026-12-07T10:00:02.123456+00:00")
        );
        assert_eq!(e[3].pid.as_deref(), Some("'<unknown>'"));
        assert_eq!(e[4].bus_id.as_deref(), Some("0000:86:00"));
        assert_eq!(e[4].time.as_deref(), Some("Dec  7 10:00:03"));
        assert_eq!(e[4].uptime_seconds, Some(99.5));
        assert_eq!(e[4].message.as_deref(), Some("Contained ECC error"));
        // Nothing after the code, on a line that is not the last: whole.
        assert_eq!(e[5].code, Some(119));
        assert_eq!(
            e[5].time.as_deref(),
            Some("2026-12-07T10:00:04,859532+00:00")
        );
        assert_eq!((e[6].code, e[6].message.as_deref()), (Some(62), None));
        assert!(e.iter().all(|e| e.partial.is_none()));
        assert_eq!(p.value.syslog_host.as_deref(), Some("gpu07"));
    }

    #[test]
    fn reads_sxid_lines_and_folds_their_data_line() {
        let text = "\
nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 20034, Fatal, Link 30 LTSSM Fault Up
nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 20034, Data {0x00000000, 0x00000001}
[ 50.1] nvidia-nvswitch3: SXid (PCI:0000:c2:00.0): 12028, Non-fatal, Link 33 egress non-posted PRIV error (First)
";
        let p = read(text);
        assert!(p.warnings.is_empty());
        let e = &p.value.events;
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].source, XidSource::Nvswitch);
        assert_eq!(e[0].device.as_deref(), Some("nvidia-nvswitch0"));
        assert_eq!(e[0].bus_id.as_deref(), Some("0000:05:00.0"));
        assert_eq!((e[0].code, e[0].fatal), (Some(20034), Some(true)));
        assert_eq!(e[0].span, LineSpan::new(1, 2));
        assert_eq!((e[1].code, e[1].fatal), (Some(12028), Some(false)));
    }

    #[test]
    fn other_kernel_lines_are_set_apart_and_foreign_lines_unread() {
        let text = "\
[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0
               NVRM: (PCI ID: 10de:26b5) installed in this system has
[ 1843.4] NVRM: Xid (PCI:0000:b3:00): 79, GPU has fallen off the bus.
Dec 07 10:00:00 gpu07 kernel: mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link ACTIVE
this is what I saw yesterday
";
        let p = read(text);
        assert_eq!(p.value.events.len(), 1);
        // The adapter's port line is read (see below).
        assert_eq!(p.value.nic_events.len(), 1);
        // The GPU's message the Xid line cuts short is one event that
        // says nothing whole.
        assert_eq!(p.value.gpu_init_events.len(), 1);
        assert_eq!(p.value.gpu_init_events[0].what, None);
        assert_eq!(p.value.gpu_init_events[0].span, LineSpan::new(1, 2));
        assert!(p.value.other_messages.is_empty());
        assert_eq!(p.warning_lines(), vec![(5, WarningKind::Unreadable)]);
    }

    #[test]
    fn a_line_cut_before_its_code_is_partial() {
        // Cut inside the parentheses, and a code ending the last line.
        let p = read("NVRM: Xid (PCI:0000:3b:0\nNVRM: Xid (PCI:0000:3b:00): 7");
        let e = &p.value.events;
        assert_eq!(e.len(), 2);
        assert_eq!((e[0].bus_id.as_deref(), e[0].code), (None, None));
        assert_eq!(
            e[0].partial.as_ref().unwrap().missing,
            vec!["the device and the code"]
        );
        assert_eq!(
            (e[1].bus_id.as_deref(), e[1].code),
            (Some("0000:3b:00"), None)
        );
        assert_eq!(
            e[1].partial.as_ref().unwrap().reason,
            PartialReason::CutLine
        );
        // Cut right after the colon.
        let p = read("[ 1.0] NVRM: Xid (PCI:0000:3b:00): ");
        assert_eq!(p.value.events[0].code, None);
        assert!(p.value.events[0].partial.is_some());
    }

    #[test]
    fn detection_wants_an_xid_line() {
        let yes = [
            "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=x, GPU has fallen off the bus.",
            "[Mon Dec  7 10:00:00 2026] NVRM: Xid (0000:3b:00): 48, DBE",
            "Dec 07 10:00:00 h kernel: nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 20034, Fatal, Link 30",
        ];
        for y in yes {
            assert!(detect(&lines_of(y)).is_some(), "{y}");
        }
        let no = [
            "PortXmitData:....................1234",
            "NVRM: loading NVIDIA UNIX Open Kernel Module",
            "the Xid (see above) was 79",
            "GPU 0: NVIDIA H100 (UUID: GPU-x)",
        ];
        for n in no {
            assert!(detect(&lines_of(n)).is_none(), "{n}");
        }
    }

    #[test]
    fn reads_adapter_link_module_and_pcie_lines() {
        let text = "\
[ 4435.115811] mlx5_core 0000:53:00.0 enp83s0f0np0: Link down
[ 4441.769587] mlx5_core 0000:53:00.0 mlx5_3: Port: 1 Link ACTIVE
Dec 07 10:00:00 gpu07 kernel: mlx5_core 0000:5c:00.0: Port module event: module 0, Cable unplugged
[Mon Dec  7 10:00:01 2026] mlx5_core 0000:5c:00.0: mlx5_port_module_event:1131:(pid 0): Port module event[error]: module 0, Cable error, High Temperature
mlx5_core 0000:3b:00.0: 63.008 Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe x8 link at 0000:3a:00.0 (capable of 252.048 Gb/s with 16.0 GT/s PCIe x16 link)
mlx5_core 0000:86:00.0: 252.048 Gb/s available PCIe bandwidth (16.0 GT/s PCIe x16 link)
mlx4_core 0000:c3:00.0 ibp195s0: Port: 2 Link INIT
mlx5_core 0000:53:00.0: firmware version: 28.39.1002
[ 4441.852238] bond0: (slave enp83s0f0np0): link status definitely up, 100000 Mbps full duplex
";
        let p = read(text);
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let e = &p.value.nic_events;
        assert_eq!(e.len(), 7);
        assert_eq!(e[0].driver, "mlx5_core");
        assert_eq!(e[0].pci.as_deref(), Some("0000:53:00.0"));
        assert_eq!(e[0].interface.as_deref(), Some("enp83s0f0np0"));
        assert_eq!(e[0].what, Some(NicWhat::Carrier { up: false }));
        assert_eq!(e[0].uptime_seconds, Some(4_435.115_811));
        assert_eq!(
            e[1].what,
            Some(NicWhat::PortState {
                port: 1,
                state: "ACTIVE".into()
            })
        );
        assert_eq!(e[1].interface.as_deref(), Some("mlx5_3"));
        assert_eq!(e[2].interface, None);
        assert_eq!(e[2].time.as_deref(), Some("Dec 07 10:00:00"));
        assert_eq!(
            e[2].what,
            Some(NicWhat::Module {
                module: 0,
                status: "Cable unplugged".into(),
                error: None
            })
        );
        assert_eq!(
            e[3].what,
            Some(NicWhat::Module {
                module: 0,
                status: "Cable error".into(),
                error: Some("High Temperature".into())
            })
        );
        let Some(NicWhat::PcieBandwidth(bw)) = &e[4].what else {
            panic!("{:?}", e[4]);
        };
        assert_eq!(
            (bw.available_gbps, bw.speed.as_str(), bw.width),
            (63.008, "8.0 GT/s", 8)
        );
        assert_eq!(bw.limited_at.as_deref(), Some("0000:3a:00.0"));
        assert_eq!(
            (
                bw.capable_gbps,
                bw.capable_speed.as_deref(),
                bw.capable_width
            ),
            (Some(252.048), Some("16.0 GT/s"), Some(16))
        );
        let Some(NicWhat::PcieBandwidth(full)) = &e[5].what else {
            panic!("{:?}", e[5]);
        };
        assert_eq!((full.width, full.limited_at.as_deref()), (16, None));
        assert_eq!(e[6].driver, "mlx4_core");
        assert!(e.iter().all(|e| e.partial.is_none()));
        // The probe's other line and bond0's are other kernel messages.
        assert_eq!(p.value.other_messages, vec![LineSpan::new(8, 9)]);
    }

    #[test]
    fn an_adapter_line_cut_at_the_end_is_partial() {
        for (text, missing) in [
            ("mlx5_core 0000:53:00.0 enp83s0f0np0: Link do", "the link state"),
            ("mlx5_core 0000:53:00.0 mlx5_3: Port: 1 Link ACT", "the link state"),
            (
                "mlx5_core 0000:5c:00.0: Port module event[error]: module 0, Cable error, High Temp",
                "the module's status",
            ),
            (
                "mlx5_core 0000:3b:00.0: 63.008 Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe x8 li",
                "the PCIe link figures",
            ),
            ("[ 1.0] mlx5_core 0000:5c:0", "the adapter and what the line says"),
        ] {
            let p = read(&format!("[ 0.5] mlx5_core 0000:01:00.0: firmware version: 1\n{text}"));
            let e = &p.value.nic_events;
            assert_eq!(e.len(), 1, "{text}");
            assert_eq!(e[0].what, None, "{text}");
            let partial = e[0].partial.as_ref().unwrap();
            assert_eq!(partial.missing, vec![missing], "{text}");
            assert_eq!(partial.reason, PartialReason::CutLine);
        }
        // The same starts on a line that is not the last are other messages.
        let p = read("mlx5_core 0000:53:00.0 mlx5_3: Port: 1 Link ACT\nmlx5_core 0000:53:00.0 eth1: Link up\n");
        assert_eq!(p.value.nic_events.len(), 1);
        assert_eq!(p.value.other_messages, vec![LineSpan::line(1)]);
        // A whole reason ending the paste is read.
        let p = read("mlx5_core 0000:5c:00.0: Port module event[error]: module 1, Cable error, Power budget exceeded");
        assert!(p.value.nic_events[0].partial.is_none());
    }

    #[test]
    fn detection_takes_an_adapter_line_and_nothing_like_it() {
        let yes = [
            "mlx5_core 0000:53:00.0 enp83s0f0np0: Link down",
            "[   10.6] mlx5_core 0004:01:00.0: firmware version: 16.27.2048",
            "Dec 07 10:00:00 h kernel: mlx4_core 0000:c3:00.0 ibp195s0: Port: 1 Link INIT",
        ];
        for y in yes {
            assert!(detect(&lines_of(y)).is_some(), "{y}");
        }
        let no = [
            "mlx5_0 port 1 ==> ib0 (Up)",
            "mlx5_core is the driver",
            "[  12.3] bond0: (slave enp83s0f0np0): link status definitely down",
            "Dec 07 10:00:00 h kernel: pci 0000:05:00.0: 4.000 Gb/s available PCIe bandwidth",
            "mlx5_core 0000:53:00.0 two words: Link down",
        ];
        for n in no {
            assert!(detect(&lines_of(n)).is_none(), "{n}");
        }
    }

    #[test]
    fn reads_the_journal_boot_lines_and_numbers_the_boots() {
        let text = "\
Dec 01 07:59:58 gpu07 kernel: mlx5_core 0000:4b:00.0 mlx5_2: Port: 1 Link DOWN
-- Boot 0b5e3c1a9f6d4e2b8a7c6d5e4f3a2b1c --
Dec 01 08:01:02 gpu07 kernel: Linux version 6.8.0-45-generic
Dec 01 08:01:20 gpu07 kernel: mlx5_core 0000:4b:00.0 mlx5_2: Port: 1 Link ACTIVE
-- Reboot --
-- Reboot --
Dec 02 09:00:00 gpu07 kernel: mlx5_core 0000:4b:00.0 mlx5_2: Port: 1 Link ACTIVE
";
        let p = read(text);
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let boots = &p.value.boots;
        assert_eq!(boots.len(), 3);
        assert_eq!(
            boots[0].id.as_deref(),
            Some("0b5e3c1a9f6d4e2b8a7c6d5e4f3a2b1c")
        );
        assert_eq!(boots[0].first_time.as_deref(), Some("Dec 01 08:01:02"));
        assert_eq!(boots[0].span, LineSpan::line(2));
        // Two boots in a row with no line between them: the first has none.
        assert_eq!(
            (boots[1].id.as_deref(), boots[1].first_time.as_deref()),
            (None, None)
        );
        assert_eq!(boots[2].first_time.as_deref(), Some("Dec 02 09:00:00"));
        let numbers: Vec<u32> = p.value.nic_events.iter().map(|e| e.boot).collect();
        assert_eq!(numbers, [0, 1, 3]);
        assert_eq!(p.value.other_messages, vec![LineSpan::line(3)]);
        assert!(
            summary(&p.value).ends_with("over 4 boots"),
            "{}",
            summary(&p.value)
        );
    }

    #[test]
    fn a_boot_line_starts_a_block_only_before_a_kernel_line() {
        let before = "-- Boot 0b5e3c1a9f6d4e2b8a7c6d5e4f3a2b1c --\n-- Reboot --\n\nDec 01 08:01:20 gpu07 kernel: mlx5_core 0000:4b:00.0 mlx5_2: Port: 1 Link ACTIVE\n";
        assert!(detect(&lines_of(before)).is_some());
        for no in [
            "-- Boot 0b5e3c1a9f6d4e2b8a7c6d5e4f3a2b1c --\nsome other text\n",
            "-- Reboot --\n",
            "-- Boot 0b5e3c1a9f --\nDec 01 08:01:20 gpu07 kernel: mlx5_core 0000:4b:00.0 mlx5_2: Port: 1 Link ACTIVE\n",
        ] {
            assert!(detect(&lines_of(no)).is_none(), "{no}");
        }
        assert_eq!(
            boot_marker("-- Logs begin at Mon 2026-11-30 10:00:00 UTC. --"),
            None
        );
    }

    #[test]
    fn reads_dmesg_raw_and_short_monotonic_prefixes() {
        // dmesg -r (`<6>`, with and without the time), dmesg -x, and
        // journalctl -o short-monotonic (`[seconds] host kernel: `).
        let text = "\
<6>[  812.004113] mlx5_core 0000:4b:00.0 ibp75s0: Link down
<4>mlx5_core 0000:4b:00.0 mlx5_2: Port: 1 Link DOWN
kern  :info  : [  815.5] mlx5_core 0000:4b:00.0 ibp75s0: Link up
[  901.250000] gn14 kernel: mlx5_core 0000:4b:00.0 mlx5_2: Port: 1 Link ACTIVE
<30>[  902.0] systemd-networkd[811]: ibp75s0: Gained carrier
";
        let p = read(text);
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let e = &p.value.nic_events;
        assert_eq!(e.len(), 4, "{e:#?}");
        assert_eq!(e[0].uptime_seconds, Some(812.004_113));
        assert_eq!(e[0].what, Some(NicWhat::Carrier { up: false }));
        assert_eq!(e[1].uptime_seconds, None);
        assert_eq!(e[2].uptime_seconds, Some(815.5));
        assert_eq!(e[3].uptime_seconds, Some(901.25));
        assert_eq!(p.value.syslog_host.as_deref(), Some("gn14"));
        assert_eq!(p.value.other_messages, vec![LineSpan::line(5)]);
        for y in [
            "<6>[  812.004113] mlx5_core 0000:4b:00.0 ibp75s0: Link down",
            "[  901.250000] gn14 kernel: mlx5_core 0000:4b:00.0 mlx5_2: Port: 1 Link ACTIVE",
        ] {
            assert!(detect(&lines_of(y)).is_some(), "{y}");
        }
        // Not a priority: `<` without digits and `>`.
        assert_eq!(strip_priority("<html>"), None);
        assert_eq!(strip_priority("<1234>x"), None);
    }

    #[test]
    fn reads_weekday_leveled_and_facility_prefixes() {
        // journalctl -o short-full; SONiC's rsyslog (`host LEVEL kernel:`);
        // OpenWrt's logread (`kern.info kernel:`, no host); a syslog
        // template with the facility after the host.
        let cases: &[(&str, Option<&str>, &str, Option<f64>)] = &[
            (
                "Mon 2026-12-07 10:00:01 UTC node07 kernel: mlx5_core 0000:4b:00.0 ibp75s0: Link down",
                Some("node07"),
                "Mon 2026-12-07 10:00:01 UTC",
                None,
            ),
            (
                "Thu 2026-12-10 23:59:59 CET gpu-a1 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=x, GPU has fallen off the bus.",
                Some("gpu-a1"),
                "Thu 2026-12-10 23:59:59 CET",
                None,
            ),
            (
                "Dec  7 10:00:01.123456 leaf01 NOTICE kernel: [ 5000.25] mlx5_core 0000:4b:00.0 ibp75s0: Link down",
                Some("leaf01"),
                "Dec  7 10:00:01.123456",
                Some(5000.25),
            ),
            (
                "Wed Dec  9 10:00:01 2026 kern.info kernel: [   12.5] mlx5_core 0000:4b:00.0 ibp75s0: Link down",
                None,
                "Wed Dec  9 10:00:01 2026",
                Some(12.5),
            ),
            (
                "Dec 07 10:00:01 node07 kern.warn kernel: mlx5_core 0000:4b:00.0 ibp75s0: Link down",
                Some("node07"),
                "Dec 07 10:00:01",
                None,
            ),
        ];
        for (line, host, time, uptime) in cases {
            let (p, rest) = split_prefix(line);
            assert_eq!(
                (p.host, p.time, p.uptime, p.other_facility),
                (*host, Some(*time), *uptime, false),
                "{line}"
            );
            assert!(
                rest.starts_with("mlx5_core") || rest.starts_with("NVRM:"),
                "{line}: {rest}"
            );
            assert!(detect(&lines_of(line)).is_some(), "{line}");
        }
        // dmesg -T and --time-format iso (with -x): the time, no host.
        for (line, time) in [
            ("[Mon Dec  7 10:00:01 2026] mlx5_core 0000:4b:00.0 ibp75s0: Link up", "Mon Dec  7 10:00:01 2026"),
            ("2026-12-07T10:00:01,123456+00:00 mlx5_core 0000:4b:00.0 ibp75s0: Link up", "2026-12-07T10:00:01,123456+00:00"),
            ("kern  :info  : 2026-12-07T10:00:01,123456+00:00 mlx5_core 0000:4b:00.0 ibp75s0: Link up", "2026-12-07T10:00:01,123456+00:00"),
        ] {
            let (p, rest) = split_prefix(line);
            assert_eq!((p.host, p.time), (None, Some(time)), "{line}");
            assert!(rest.starts_with("mlx5_core"), "{line}");
        }
        // Not a weekday time, not a tag: a word too many, a level in
        // lower case alone, a zone-less short-full.
        for line in [
            "Mon 2026-12-07 10:00:01 node07 kernel: x",
            "Dec 07 10:00:01 node07 info kernel: x",
            "Dec 07 10:00:01 node07 NOTICE extra kernel: x",
        ] {
            assert_eq!(split_prefix(line).0.host, None, "{line}");
        }
        // A host printed as an IPv6 address: no name, the message read.
        let (p, rest) =
            split_prefix("Dec 07 10:00:01 fd00::7 kernel: NVRM: Xid (PCI:0000:3b:00): 79");
        assert_eq!((p.host, rest), (None, "NVRM: Xid (PCI:0000:3b:00): 79"));
    }

    #[test]
    fn another_facilitys_lines_are_other_messages_never_judged() {
        // dmesg -x and dmesg -r show user space's lines in the kernel's
        // ring buffer; a syslog file another facility's lines tagged
        // `kernel` (util-linux dmesg.c facility_names).
        let text = "\
kern  :info  : [  812.0] mlx5_core 0000:4b:00.0 ibp75s0: Link down
user  :warn  : [  813.0] watch.sh: mlx5_core 0000:4b:00.0 ibp75s0: Link up
daemon:info  : [  814.0] systemd-networkd[811]: ibp75s0: Lost carrier
<14>[  815.0] mlx5_core 0000:4b:00.0 ibp75s0: Link up
Dec 07 10:00:01 node07 daemon.info kernel: mlx5_core 0000:4b:00.0 ibp75s0: Link up
kern  :info  : [  816.5] mlx5_core 0000:4b:00.0 ibp75s0: Link up
";
        let p = read(text);
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let e = &p.value.nic_events;
        assert_eq!(e.len(), 2, "{e:#?}");
        assert_eq!(
            (e[0].span, e[1].span),
            (LineSpan::line(1), LineSpan::line(6))
        );
        assert_eq!(p.value.other_messages, vec![LineSpan::new(2, 5)]);
        for no in [
            "user  :warn  : [  813.0] mlx5_core 0000:4b:00.0 ibp75s0: Link up",
            "<14>[  815.0] mlx5_core 0000:4b:00.0 ibp75s0: Link up",
            "<14>[  815.0] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=x, y",
            "Dec 07 10:00:01 node07 daemon.info kernel: mlx5_core 0000:4b:00.0 ibp75s0: Link up",
        ] {
            assert!(detect(&lines_of(no)).is_none(), "{no}");
        }
        assert_eq!(strip_priority("<6>x"), Some((true, "x")));
        assert_eq!(strip_priority("<30>x"), Some((false, "x")));
        assert_eq!(strip_facility("node1: info: x"), None);
    }

    #[test]
    fn reads_the_aer_rate_limits_dropped_messages() {
        let text = "\
[ 7306.530011] aer_ratelimit: 41 callbacks suppressed
Dec 07 10:00:00 gpu07 kernel: pcieport 0000:80:01.0: AER: 63 callbacks suppressed
[ 7307.1] net_ratelimit: 12 callbacks suppressed
";
        let p = read(text);
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let s = &p.value.aer_suppressed;
        assert_eq!(s.len(), 2, "{s:#?}");
        assert_eq!(
            (s[0].count, s[0].function.as_deref(), s[0].device.as_deref()),
            (41, Some("aer_ratelimit"), None)
        );
        assert_eq!(s[0].uptime_seconds, Some(7_306.530_011));
        assert_eq!(
            (s[1].count, s[1].function.as_deref(), s[1].device.as_deref()),
            (63, None, Some("0000:80:01.0"))
        );
        // Another function's rate limit is another message.
        assert_eq!(p.value.other_messages, vec![LineSpan::line(3)]);
        // A paste of `dmesg | grep -i aer` may begin with one.
        assert!(detect(&lines_of("aer_ratelimit: 41 callbacks suppressed")).is_some());
        assert!(detect(&lines_of("net_ratelimit: 12 callbacks suppressed")).is_none());
    }

    #[test]
    fn several_hosts_name_none() {
        let p = read(
            "Dec 07 10:00:00 a kernel: NVRM: Xid (PCI:0000:3b:00): 13, x\nDec 07 10:00:00 b kernel: NVRM: Xid (PCI:0000:3b:00): 13, x\n",
        );
        assert_eq!(p.value.syslog_host, None);
    }

    #[test]
    fn reads_aer_events_with_their_detail_lines() {
        // Bare lines, as pasted without dmesg's times (pop-os issue 751's
        // shape): every line is the event's, none unread.
        let text = "\
pcieport 0000:00:1d.0: AER: Multiple Corrected error received: 0000:03:00.0
pcieport 0000:00:1d.0: AER: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)
pcieport 0000:00:1d.0: AER: device [8086:a330] error status/mask=00000001/00002000
pcieport 0000:00:1d.0: AER: [ 0] RxErr
nvme 0000:03:00.0: AER: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)
nvme 0000:03:00.0: AER: device [144d:a808] error status/mask=00000041/0000e000
nvme 0000:03:00.0: AER: [ 0] RxErr                  (First)
nvme 0000:03:00.0: AER: [ 6] BadTLP
nvme 0000:03:00.0: AER: Error of this Agent is reported first
$ echo done
";
        let p = read(text);
        // Only the prompt line after the log is not the log's.
        let warned: Vec<_> = p.warnings.iter().map(|w| w.span.first_line).collect();
        assert_eq!(warned, [10], "{:?}", p.warnings);
        let e = &p.value.aer_events;
        assert_eq!(e.len(), 2, "{e:#?}");
        assert_eq!(e[0].device.as_deref(), Some("0000:00:1d.0"));
        assert_eq!((e[0].span.first_line, e[0].span.last_line), (1, 4));
        assert!(e[0].multiple);
        assert_eq!(e[1].device.as_deref(), Some("0000:03:00.0"));
        assert_eq!(
            e[1].severity,
            Some(crate::model::kernel_log::AerSeverity::Corrected)
        );
        assert_eq!(e[1].vendor_device.as_deref(), Some("144d:a808"));
        assert_eq!(e[1].bits, ["RxErr", "BadTLP"]);
        assert_eq!((e[1].span.first_line, e[1].span.last_line), (5, 9));
        assert_eq!(e[1].port.as_deref(), None);
        assert!(e.iter().all(|e| e.partial.is_none()));
    }

    #[test]
    fn an_aer_event_cut_at_the_end_is_partial_and_a_headless_one_too() {
        let p = read("[ 9.1] nvidia 0000:07:00.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Requester ID)\n");
        let e = &p.value.aer_events;
        assert_eq!(e.len(), 1);
        assert!(e[0].partial.is_some());
        let p = read("[ 9.2] nvidia 0000:07:00.0:   device [10de:2330] error status/mask=00004000/00000000\n[ 9.2] nvidia 0000:07:00.0:    [14] CmpltTO\n[ 9.3] NVRM: Xid (PCI:0000:07:00): 79, pid=1, name=x, GPU has fallen off the bus.\n");
        let e = &p.value.aer_events;
        assert_eq!(e.len(), 1, "{e:#?}");
        assert_eq!(e[0].severity, None);
        assert_eq!(e[0].bits, ["CmpltTO"]);
        assert!(e[0].partial.is_some());
    }

    #[test]
    fn a_multi_line_nvrm_message_is_one_event() {
        let text = "\
[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0
               NVRM: (PCI ID: 10de:26b5) installed in this system has
               NVRM: fallen off the bus and is not responding to commands.
[ 1843.439662] NVRM: The NVIDIA probe routine failed for 1 device(s).
";
        let p = read(text);
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let e = &p.value.gpu_init_events;
        assert_eq!(e.len(), 1);
        assert_eq!(
            e[0].what,
            Some(crate::model::kernel_log::GpuInitWhat::FallenOffBus)
        );
        assert_eq!(e[0].pci_id.as_deref(), Some("10de:26b5"));
        assert_eq!((e[0].span.first_line, e[0].span.last_line), (1, 3));
        assert_eq!(p.value.other_message_lines(), 1);
    }
}
