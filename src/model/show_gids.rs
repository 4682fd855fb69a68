//! `show_gids` (NVIDIA/Mellanox OFED's script): each RDMA port's GID table
//! entries with their RoCE version and network interface.

use crate::span::LineSpan;
use serde::{Deserialize, Serialize};

/// Output of `show_gids [device]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ShowGids {
    /// Rows in the order printed.
    pub gids: Vec<GidEntry>,
    /// The script's closing `n_gids_found=N`: `None` when the paste does not
    /// hold it (cut, or trimmed by its author), so rows may follow the last
    /// one read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gids_found: Option<u32>,
}

/// One row: `mlx5_0  1  3  0000:0000:0000:0000:0000:ffff:0a00:0001  10.0.0.1  v2  ens1f0`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GidEntry {
    /// RDMA device name (`mlx5_0`).
    pub device: String,
    /// Port number (from 1).
    pub port: u32,
    /// Index in the port's GID table: what `NCCL_IB_GID_INDEX`, UCX's
    /// `UCX_IB_GID_INDEX` and perftest's `-x` name.
    pub index: u32,
    /// The GID as sysfs prints it (eight groups of four hex digits).
    pub gid: String,
    /// The IPv4 address of an IPv4-mapped GID (`::ffff:a.b.c.d`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipv4: Option<String>,
    /// `v1` or `v2`: the script prints what follows the `v` of sysfs's
    /// `gid_attrs/types` (`IB/RoCE v1`, `RoCE v2`); `None` when that file
    /// was unreadable (older kernels) and the column is empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The network interface the GID belongs to (`gid_attrs/ndevs`): a
    /// RoCE GID always has one; an InfiniBand port's GIDs have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub netdev: Option<String>,
    /// The line this row was read from.
    pub span: LineSpan,
}

impl GidEntry {
    /// Whether the GID is link-local (`fe80:0000:0000:0000:…`): every port
    /// has one, InfiniBand's default GID and RoCE's MAC-derived one alike;
    /// it is not routed beyond the subnet.
    #[must_use]
    pub fn is_link_local(&self) -> bool {
        self.gid
            .get(..19)
            .is_some_and(|p| p.eq_ignore_ascii_case("fe80:0000:0000:0000"))
    }

    /// Whether this is a RoCE v2 GID.
    #[must_use]
    pub fn is_v2(&self) -> bool {
        self.version.as_deref() == Some("v2")
    }

    /// A RoCE v2 GID that is not link-local (an IPv4-mapped or a global or
    /// unique-local IPv6 address): one that UDP/IP routing carries between
    /// subnets, what NCCL's own GID choice looks for.
    #[must_use]
    pub fn is_routable_v2(&self) -> bool {
        self.is_v2() && !self.is_link_local()
    }
}
