//! `nvidia-smi -L`: the GPUs (and MIG devices) with their UUIDs.

use serde::{Deserialize, Serialize};

/// A GPU line of `nvidia-smi -L`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListedGpu {
    /// The index (`GPU 0:`).
    pub index: u32,
    /// Product name.
    pub name: String,
    /// `GPU-…` UUID.
    pub uuid: Option<String>,
    /// MIG devices listed under it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mig_devices: Vec<ListedMig>,
    /// Line number.
    pub line: usize,
    /// The line stops before the `)` closing its UUID (which is whole):
    /// where the input ends, the paste was cut there, and GPUs listed
    /// after it are unknown (IN001 says so); elsewhere a harmless slip.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unclosed: bool,
}

/// A MIG line of `nvidia-smi -L` (`  MIG 1g.10gb     Device  0: (UUID: MIG-…)`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListedMig {
    /// Profile (`1g.10gb`).
    pub profile: String,
    /// Device index within the GPU.
    pub device: u32,
    /// `MIG-…` UUID.
    pub uuid: Option<String>,
    /// Line number.
    pub line: usize,
}

/// `nvidia-smi -L` / `--list-gpus`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SmiList {
    /// GPUs in order.
    pub gpus: Vec<ListedGpu>,
}
