//! NVIDIA Xid and NVSwitch SXid lines of a kernel log: `dmesg | grep -i
//! xid`, `dmesg -T`, `journalctl -k`, `/var/log/messages` or `syslog`.
//!
//! The driver logs an Xid when it meets an error on a GPU
//! (`NVRM: Xid (PCI:0000:3b:00): 79, pid=…, name=…, GPU has fallen off the
//! bus.`), and the NVSwitch driver an SXid for a switch
//! (`nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 20034, Fatal, Link 30 …`).
//! Each line is kept as printed: its time (as printed, or the seconds since
//! boot when that is all there is), the device and the code. The block's
//! other kernel messages are counted, not read.

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
        match (&self.time, self.uptime_seconds) {
            (Some(t), _) => Some(t.clone()),
            (None, Some(s)) => Some(format!("[{s:.6}]")),
            (None, None) => None,
        }
    }
}

/// A block of kernel-log lines.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelLog {
    /// Xid and SXid lines in order.
    pub events: Vec<XidEvent>,
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
