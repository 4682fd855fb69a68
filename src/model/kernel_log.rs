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
    /// The journal's boot lines (`-- Boot … --`, `-- Reboot --`) in order:
    /// the log spans several boots.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub boots: Vec<BootMarker>,
    /// The block's other kernel messages (other `NVRM:` lines, other
    /// drivers'), in runs of lines: kept apart, not read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_messages: Vec<LineSpan>,
    /// The host the syslog/journal prefix names (`Dec 07 10:00:00 gpu07
    /// kernel: …`), when every such line names the same one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syslog_host: Option<String>,
}

impl KernelLog {
    /// How many lines [`Self::other_messages`] holds.
    #[must_use]
    pub fn other_message_lines(&self) -> usize {
        self.other_messages.iter().map(|s| s.len()).sum()
    }
}
