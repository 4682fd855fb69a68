//! NVIDIA Xid and NVSwitch SXid lines of a kernel log: `dmesg | grep -i
//! xid`, `dmesg -T`, `journalctl -k`, `/var/log/messages` or `syslog`.
//!
//! The driver logs an Xid when it meets an error on a GPU
//! (`NVRM: Xid (PCI:0000:3b:00): 79, pid=…, name=…, GPU has fallen off the
//! bus.`), and the NVSwitch driver an SXid for a switch
//! (`nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 20034, Fatal, Link 30 …`).
//! Each line is kept as printed: its time (as printed, or the seconds since
//! boot when that is all there is), the device and the code.
//!
//! The InfiniBand/Ethernet adapter driver's lines about its links are read
//! too ([`NicEvent`]): a netdev's `Link up`/`Link down`, the RDMA core's
//! `Port: 1 Link ACTIVE`, a cable module's `Port module event`, and the
//! PCIe bandwidth line the driver prints at probe. The block's other kernel
//! messages are counted, not read.
//!
//! The PCIe AER driver's error reports ([`AerEvent`]) and the NVIDIA
//! driver's lines about a GPU that failed to initialise, fell off the bus
//! without an Xid, or is not supported by the driver ([`GpuInitEvent`])
//! are read too.

use super::partial::Partial;
use crate::span::LineSpan;
use serde::{Deserialize, Serialize};

/// Which driver logged the event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum XidSource {
    /// The GPU driver (`NVRM: Xid`).
    Gpu,
    /// The NVSwitch driver (`nvidia-nvswitchN: SXid`).
    Nvswitch,
}

/// One Xid or SXid line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct XidEvent {
    /// GPU or NVSwitch.
    pub source: XidSource,
    /// The PCI address in the parentheses, without `PCI:` (`0000:3b:00`
    /// for a GPU, `0000:05:00.0` for a switch); `None` when the line is cut
    /// before it ends.
    pub bus_id: Option<String>,
    /// The switch's device name (`nvidia-nvswitch0`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// The code, when the line shows it whole (digits then `,`, or digits
    /// ending a line that is not the block's last).
    pub code: Option<u32>,
    /// `pid=` as printed (`1234`, `'<unknown>'`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<String>,
    /// `name=` as printed (`python3`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process: Option<String>,
    /// The message after the code (and after `pid=`/`name=`), as printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Whether the driver marks it `Fatal` (SXid `Fatal`, NVLink Xid
    /// `… Fatal XC0 …`) or not (`Non-fatal`, `Nonfatal`); `None` when the
    /// line does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fatal: Option<bool>,
    /// The time as printed (`Mon Dec  7 10:00:00 2026`, `Dec 07 10:00:00`,
    /// `2026-12-07T10:00:00.123456+00:00`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    /// Seconds since boot (`[  123.456789]`), when printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uptime_seconds: Option<f64>,
    /// The line (and an SXid's `Data {…}` line right under it).
    pub span: LineSpan,
    /// Set when the line is cut before its code ends: no code is judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial: Option<Partial>,
}

impl XidEvent {
    /// The time to show: as printed, else `[seconds]` since boot.
    #[must_use]
    pub fn when(&self) -> Option<String> {
        when_printed(self.time.as_deref(), self.uptime_seconds)
    }
}

/// What an adapter driver's line says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum NicWhat {
    /// A netdev's carrier (`mlx5_core 0000:53:00.0 enp83s0f0np0: Link
    /// down`): `up` true for `Link up`.
    Carrier {
        /// `Link up` (true) or `Link down` (false).
        up: bool,
    },
    /// The RDMA core's port state (`mlx5_core 0000:53:00.0 mlx5_3: Port: 1
    /// Link ACTIVE`): `DOWN`, `INIT`, `ARMED`, `ACTIVE`, `ACTIVE_DEFER`.
    PortState {
        /// The port number.
        port: u32,
        /// The state as printed.
        state: String,
    },
    /// A cable module's event (`Port module event: module 0, Cable
    /// plugged`, `Port module event[error]: module 0, Cable error, High
    /// Temperature`).
    Module {
        /// The module (cage) number.
        module: u32,
        /// `Cable plugged`, `Cable unplugged`, `Cable error`, as printed.
        status: String,
        /// The error's reason after an `[error]` event's status.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// The PCIe bandwidth line (`63.008 Gb/s available PCIe bandwidth,
    /// limited by 8.0 GT/s PCIe x8 link at 0000:3a:00.0 (capable of 252.048
    /// Gb/s with 16.0 GT/s PCIe x16 link)`, or `… (16.0 GT/s PCIe x16
    /// link)` when nothing limits it).
    PcieBandwidth(PcieBandwidth),
}

/// The figures of a PCIe bandwidth line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PcieBandwidth {
    /// The available bandwidth, Gb/s.
    pub available_gbps: f64,
    /// The link speed it is available at (`8.0 GT/s`), as printed.
    pub speed: String,
    /// The link width it is available at (8 for `x8`).
    pub width: u32,
    /// The device whose link limits it (`0000:3a:00.0`, `<unknown>`), when
    /// something does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limited_at: Option<String>,
    /// What the device is capable of, when something limits it: bandwidth
    /// (Gb/s), speed and width.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capable_gbps: Option<f64>,
    /// The speed the device is capable of (`16.0 GT/s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capable_speed: Option<String>,
    /// The width the device is capable of (16 for `x16`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capable_width: Option<u32>,
}

/// One line of an InfiniBand/Ethernet adapter's driver (`mlx5_core`,
/// `mlx4_core`) about its link, cable or PCIe slot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NicEvent {
    /// The driver the line names first (`mlx5_core`).
    pub driver: String,
    /// The adapter's PCI address (`0000:53:00.0`); `None` when the line is
    /// cut inside it.
    pub pci: Option<String>,
    /// The interface named after the address: a netdev (`enp83s0f0np0`,
    /// `ib0`) on `Link` lines, an RDMA device (`mlx5_3`) on `Port:` lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interface: Option<String>,
    /// What the line says; `None` when it is cut before that is whole.
    pub what: Option<NicWhat>,
    /// The time as printed (see [`XidEvent::time`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    /// Seconds since boot (`[  123.456789]`), when printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uptime_seconds: Option<f64>,
    /// How many of the journal's boot lines ([`KernelLog::boots`]) come
    /// before it: 0 in the log's first boot (and in a log without them).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub boot: u32,
    /// The line.
    pub span: LineSpan,
    /// Set when the line is cut before what it says is whole: the adapter
    /// is named, nothing is judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial: Option<Partial>,
}

impl NicEvent {
    /// The time to show: as printed, else `[seconds]` since boot.
    #[must_use]
    pub fn when(&self) -> Option<String> {
        when_printed(self.time.as_deref(), self.uptime_seconds)
    }
}

/// The severity a PCIe AER line names (`severity=Corrected`,
/// `Uncorrected (Non-Fatal)`, `Uncorrected (Fatal)`; newer kernels say
/// `Correctable` / `Uncorrectable`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AerSeverity {
    /// Corrected by the link's own retry: no data lost.
    Corrected,
    /// Uncorrected, non-fatal: a transaction was lost, the link works.
    NonFatal,
    /// Uncorrected, fatal: the link is unreliable, the device reset.
    Fatal,
}

impl AerSeverity {
    /// As the kernel names it (older kernels' words).
    #[must_use]
    pub fn words(self) -> &'static str {
        match self {
            Self::Corrected => "Corrected",
            Self::NonFatal => "Uncorrected (Non-Fatal)",
            Self::Fatal => "Uncorrected (Fatal)",
        }
    }
}

/// One PCIe AER error a kernel log shows (drivers/pci/pcie/aer.c): the
/// `PCIe Bus Error: severity=…, type=…, (…)` line of the device the error
/// names, with its `device [vvvv:dddd] error status/mask=…` line and its
/// `[ 0] RxErr` bit lines, and the root port's `AER: … error received: …`
/// line before it. A receipt line no `PCIe Bus Error` line follows is an
/// event of its own, naming the device it names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AerEvent {
    /// The PCI address of the device the error names (`0000:3b:00.0`);
    /// `None` when no line names it whole.
    pub device: Option<String>,
    /// The driver the line names first (`pcieport`, `nvidia`,
    /// `mlx5_core`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    /// The root port whose receipt line came before it (`pcieport
    /// 0000:00:03.1: AER: Corrected error received: …`), when that is
    /// another device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<String>,
    /// The severity; `None` when the line is cut before it.
    pub severity: Option<AerSeverity>,
    /// `Physical Layer`, `Data Link Layer`, `Transaction Layer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layer: Option<String>,
    /// `Receiver ID`, `Requester ID`, `Completer ID`, `Transmitter ID`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// `10de:2330` of the `device [10de:2330] …` line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vendor_device: Option<String>,
    /// The error status register as printed (`00000001`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// The error bits named (`RxErr`, `BadTLP`, `Receiver Error`), in
    /// order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bits: Vec<String>,
    /// The receipt said `Multiple`: more errors were received than logged.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub multiple: bool,
    /// The time as printed (see [`XidEvent::time`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    /// Seconds since boot (`[  123.456789]`), when printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uptime_seconds: Option<f64>,
    /// The lines (receipt, error, status, bits, TLP header).
    pub span: LineSpan,
    /// Set when the block ends inside the event (its bits may be missing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial: Option<Partial>,
}

impl AerEvent {
    /// The time to show: as printed, else `[seconds]` since boot.
    #[must_use]
    pub fn when(&self) -> Option<String> {
        when_printed(self.time.as_deref(), self.uptime_seconds)
    }
}

/// A rate limit's report that the kernel dropped AER messages: `aer_ratelimit:
/// 25 callbacks suppressed` (lib/ratelimit.c `___ratelimit`: `"%s: %d
/// callbacks suppressed"`, the name of the function whose messages were
/// held back), or the same after a device (`pcieport 0000:00:01.0: AER: 25
/// callbacks suppressed`). The kernel printed its burst, then dropped this
/// many: errors that happened and are not in the log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AerSuppressed {
    /// How many messages the kernel dropped.
    pub count: u64,
    /// The device the line names, when it names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// The function the rate limit is of (`aer_ratelimit`), when the line
    /// names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
    /// The time as printed (see [`XidEvent::time`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    /// Seconds since boot (`[  123.456789]`), when printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uptime_seconds: Option<f64>,
    /// The line.
    pub span: LineSpan,
}

impl AerSuppressed {
    /// The time to show: as printed, else `[seconds]` since boot.
    #[must_use]
    pub fn when(&self) -> Option<String> {
        when_printed(self.time.as_deref(), self.uptime_seconds)
    }
}

/// What an NVIDIA driver line says of a GPU's initialisation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum GpuInitWhat {
    /// `NVRM: GPU 0000:3b:00.0: RmInitAdapter failed! (0x26:0xffff:1477)`,
    /// with the code in the parentheses.
    RmInitAdapterFailed {
        /// `0x26:0xffff:1477`, as printed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<String>,
    },
    /// `NVRM: GPU 0000:3b:00.0: rm_init_adapter failed, device minor
    /// number 2`.
    RmInitFailed {
        /// The device minor number (`/dev/nvidia2`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        minor: Option<u32>,
    },
    /// A GPU fallen off the bus, said without an Xid (`NVRM: GPU
    /// 0000:3b:00.0: GPU has fallen off the bus.`, `NVRM: The NVIDIA GPU
    /// 0000:b3:00.0 (PCI ID: 10de:26b5) installed in this system has
    /// fallen off the bus and is not responding to commands.`).
    FallenOffBus,
    /// `NVRM: The NVIDIA GPU 0000:02:00.0 (PCI ID: 10de:1b38) installed in
    /// this system is not supported by the … driver release` (or by the
    /// open `nvidia.ko`, without GSP).
    NotSupported,
    /// `[drm] Initialized nvidia-drm 0.0.0 20160202 for 0000:3b:00.0 on
    /// minor 1`: the GPU was initialised (the DRM device is registered
    /// only on a GPU the driver brought up).
    Initialized,
}

/// One NVIDIA driver line about a GPU's initialisation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuInitEvent {
    /// The GPU's PCI address as printed (`0000:3b:00.0`, `0000:3b:00`).
    pub bus_id: Option<String>,
    /// What it says; `None` when the block ends before that is whole.
    pub what: Option<GpuInitWhat>,
    /// `10de:2330` of a `(PCI ID: …)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pci_id: Option<String>,
    /// The message as printed (a multi-line message joined).
    pub message: String,
    /// The time as printed (see [`XidEvent::time`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    /// Seconds since boot (`[  123.456789]`), when printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uptime_seconds: Option<f64>,
    /// The line (and the `NVRM:` lines that continue its message).
    pub span: LineSpan,
    /// Set when the block ends before the message is whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial: Option<Partial>,
}

impl GpuInitEvent {
    /// The time to show: as printed, else `[seconds]` since boot.
    #[must_use]
    pub fn when(&self) -> Option<String> {
        when_printed(self.time.as_deref(), self.uptime_seconds)
    }
}

/// Whether a boot number is the log's first boot (not written out).
#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The line `journalctl` prints between two boots' entries (`journalctl -k
/// -b all`, `--since …`): `-- Boot 0b5e3c1a9f6d4e2b8a7c6d5e4f3a2b1c --`
/// (the new boot's id), or `-- Reboot --` from older systemd. The host
/// rebooted there: the seconds since boot start again, and a link's
/// bring-up follows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BootMarker {
    /// The boot's id (32 hex digits); `None` for `-- Reboot --`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The time printed on the first kernel line after it: about when the
    /// boot began (a journal keeps the kernel's first lines of a boot).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_time: Option<String>,
    /// The marker's line.
    pub span: LineSpan,
}

/// A kernel line's time to show: as printed, else `[seconds]` since
/// boot (dmesg's own form), else none.
fn when_printed(time: Option<&str>, uptime_seconds: Option<f64>) -> Option<String> {
    match (time, uptime_seconds) {
        (Some(t), _) => Some(t.to_owned()),
        (None, Some(s)) => Some(format!("[{s:.6}]")),
        (None, None) => None,
    }
}

/// A block of kernel-log lines.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelLog {
    /// Xid and SXid lines in order.
    pub events: Vec<XidEvent>,
    /// Adapter link, cable-module and PCIe bandwidth lines in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nic_events: Vec<NicEvent>,
    /// PCIe AER errors in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aer_events: Vec<AerEvent>,
    /// The kernel's reports of AER messages its rate limit dropped, in
    /// order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aer_suppressed: Vec<AerSuppressed>,
    /// The ports whose AER service the log shows enabled (`pcieport
    /// 0000:00:03.1: AER: enabled with IRQ 28`, printed at boot): the log
    /// covers the time AER errors would be printed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aer_enabled: Vec<String>,
    /// NVIDIA driver lines about a GPU's initialisation, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpu_init_events: Vec<GpuInitEvent>,
    /// The journal's boot lines (`-- Boot … --`, `-- Reboot --`) in order:
    /// the log spans several boots.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub boots: Vec<BootMarker>,
    /// The block's other messages (other `NVRM:` lines, other drivers',
    /// and user space's lines of another facility that dmesg -x / -r or a
    /// syslog file shows among the kernel's), in runs of lines: kept
    /// apart, not read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_messages: Vec<LineSpan>,
    /// The host the syslog/journal prefix names (`Dec 07 10:00:00 gpu07
    /// kernel: …`), when every such line names the same one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syslog_host: Option<String>,
    /// The hosts the syslog/journal prefixes name, in the order of their
    /// first lines, when they name more than one (a central collector's
    /// file): the input reads each host's lines as a section of its own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub syslog_hosts: Vec<String>,
}

impl KernelLog {
    /// How many lines [`Self::other_messages`] holds.
    #[must_use]
    pub fn other_message_lines(&self) -> usize {
        self.other_messages.iter().map(|s| s.len()).sum()
    }
}
