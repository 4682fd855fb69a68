//! `mst status -v` (NVIDIA Firmware Tools, MFT): which adapter sits at each
//! PCI address, with its RDMA device, network interfaces and NUMA node.

use crate::span::LineSpan;
use serde::{Deserialize, Serialize};

/// Output of `mst status -v` (or `-vv`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MstStatus {
    /// The `MST modules:` lines as printed (`MST PCI module is not loaded`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub modules: Vec<String>,
    /// The `PCI devices:` table's rows, in the order printed.
    pub devices: Vec<MstDevice>,
}

/// One row: `ConnectX7(rev:0)  /dev/mst/mt4129_pciconf0  ba:00.0  mlx5_0  net-ibp186s0  1`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MstDevice {
    /// The device type as printed (`ConnectX7(rev:0)`, `BlueField3(rev:1)`).
    pub device_type: String,
    /// The MST device (`/dev/mst/mt4129_pciconf0`); `None` when the MST
    /// modules are not loaded (`NA`) or the column is empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mst: Option<String>,
    /// The PCI function (`ba:00.0`, or with its domain).
    pub pci: String,
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
    /// The line this row was read from.
    pub span: LineSpan,
}
