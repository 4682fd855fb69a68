//! `ibstatus`: one block per port, read straight from sysfs by a shell script.
//!
//! Unlike ibstat, LIDs are hexadecimal here and the rate is the kernel's
//! sysfs string (`200 Gb/sec (4X HDR)`), which carries the width and the
//! generation name as well as the data rate.

use crate::model::ib::{LinkLayer, PhysState, PortState};
use crate::span::LineSpan;
use serde::{Deserialize, Serialize};

/// Output of `ibstatus` (all ports, one device, or `dev:port`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Ibstatus {
    /// Ports in the order printed.
    pub ports: Vec<IbstatusPort>,
    /// The script's `Fatal error:` message (`No devices`, `device 'x': sys
    /// files not found`), after which it printed nothing more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fatal_error: Option<String>,
    /// Ports read from fields pasted without their `Infiniband device '…'
    /// port N status:` header (the "relevant part" of a block, or a
    /// `grep`), one a run of fields in the script's order. Which device
    /// and port each is, is not in the paste: their `device` is empty and
    /// their `port` 0, and no rule takes two of them, or one of them and
    /// a named port, for one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headerless_ports: Vec<IbstatusPort>,
}

/// One `Infiniband device 'mlx5_0' port 1 status:` block.
///
/// Every field is `None` when the script printed `unknown` (the sysfs file was
/// missing or unreadable) or the line was absent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IbstatusPort {
    /// Device name, e.g. `mlx5_0`.
    pub device: String,
    /// Port number (from 1).
    pub port: u32,
    /// `default gid`: GID index 0, in the kernel's colon-separated form.
    pub default_gid: Option<String>,
    /// `base lid` (printed in hex); 0 means no LID assigned.
    pub base_lid: Option<u32>,
    /// `sm lid` (printed in hex); 0 means no subnet manager has configured the port.
    pub sm_lid: Option<u32>,
    /// `state` (`4: ACTIVE`).
    pub state: Option<PortState>,
    /// `phys state` (`5: LinkUp`).
    pub physical_state: Option<PhysState>,
    /// `rate` (`200 Gb/sec (4X HDR)`).
    pub rate: Option<SysfsRate>,
    /// `link_layer`; the script prints `IB` when the sysfs file is missing.
    pub link_layer: Option<LinkLayer>,
    /// Lines this port was read from.
    pub span: LineSpan,
    /// Set when the block stops before fields the script always prints
    /// (cut by the end of a paste, or an elision): what it lacks is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial: Option<crate::model::partial::Partial>,
}

impl IbstatusPort {
    /// A port with only its identity and span known.
    #[must_use]
    pub fn new(device: impl Into<String>, port: u32, span: LineSpan) -> Self {
        Self {
            device: device.into(),
            port,
            default_gid: None,
            base_lid: None,
            sm_lid: None,
            state: None,
            physical_state: None,
            rate: None,
            link_layer: None,
            span,
            partial: None,
        }
    }
}

/// The kernel's sysfs port rate: `<gbps> Gb/sec (<lanes>X[ <generation>])`.
///
/// `rate_gbps` is the data rate the kernel computes (lanes × nominal lane
/// rate), the same number ibstat prints as `Rate`, e.g. 4X HDR = 200, 4X EDR =
/// 100, 4X FDR = 56. Old kernels print no generation for SDR (`10 Gb/sec (4X)`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SysfsRate {
    /// Data rate in Gb/s (`2.5`, `100`, `400`).
    pub rate_gbps: f64,
    /// Active width as printed (`4X`); `None` if the parenthesis was missing.
    pub width: Option<String>,
    /// Lanes in the width (`4X` → 4).
    pub lanes: Option<u32>,
    /// Generation name (`SDR`, `DDR`, `QDR`, `FDR10`, `FDR`, `EDR`, `HDR`, `NDR`, `XDR`).
    pub generation: Option<String>,
}
