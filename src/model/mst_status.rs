//! `mst status` (NVIDIA Firmware Tools, MFT; mstflint's `mst`): which
//! adapter sits at each PCI address, with its RDMA device, network
//! interfaces and NUMA node under `-v`, and the cable devices `mst cable
//! add` made.

use crate::span::LineSpan;
use serde::{Deserialize, Serialize};

/// Output of `mst status`, `mst status -v` (or `-vv`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MstStatus {
    /// The `MST modules:` lines as printed (`MST PCI module is not loaded`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub modules: Vec<String>,
    /// The devices, in the order printed: the `PCI devices:` table's rows
    /// (`-v`) or the `MST devices:` entries (plain `mst status`).
    pub devices: Vec<MstDevice>,
    /// The cable devices under `Cables:` (`mt4123_pciconf0_cable_0`, made
    /// by `mst cable add`), in the order printed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cables: Vec<String>,
    /// The devices under `Inband devices:` (reached through the fabric).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inband: Vec<String>,
}

/// One device: a `-v` row (`ConnectX7(rev:0)  /dev/mst/mt4129_pciconf0
/// ba:00.0  mlx5_0  net-ibp186s0  1`) or a plain entry
/// (`/dev/mst/mt4123_pciconf0 - PCI configuration cycles access.` with its
/// `domain:bus:dev.fn=…` and `Chip revision is: 00` lines).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MstDevice {
    /// The device type as printed (`ConnectX7(rev:0)`, `BlueField3(rev:1)`);
    /// `None` where the output does not print it (plain `mst status`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_type: Option<String>,
    /// The MST device (`/dev/mst/mt4129_pciconf0`); `None` when the MST
    /// modules are not loaded (`NA`) or the column is empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mst: Option<String>,
    /// The PCI function (`ba:00.0`, or with its domain); `None` when not
    /// printed (a plain entry whose `domain:bus:dev.fn=` line is missing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pci: Option<String>,
    /// How MST reaches the device, as plain `mst status` prints it (`PCI
    /// configuration cycles access`, `PCI direct access`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<String>,
    /// The chip revision plain `mst status` prints (`00`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chip_revision: Option<String>,
    /// The RDMA device on that function (`mlx5_0`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rdma: Option<String>,
    /// The network interfaces on that function, without MFT's `net-`
    /// prefix (`ibp186s0`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub netdevs: Vec<String>,
    /// The NUMA node the function is attached to; `None` when not printed
    /// or `-1` (a machine without NUMA information).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numa: Option<u32>,
    /// The lines this device was read from.
    pub span: LineSpan,
}
