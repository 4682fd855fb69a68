//! GPU topology: `nvidia-smi topo -m` (how each pair of devices is connected)
//! and `nvidia-smi topo -p2p` (whether peer-to-peer works between GPUs).
//!
//! The matrix is kept as the tool printed it — rows and columns of device
//! names — with typed cells, so rules can ask "is GPU0–GPU1 NVLink?" or
//! "which NIC is closest to GPU3?" without knowing the tool's spelling.

use crate::model::partial::Partial;
use crate::span::LineSpan;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::Arc;

/// What kind of device a matrix row or column is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeviceKind {
    /// `GPU<n>`.
    Gpu,
    /// `NIC<n>` (newer drivers) or an RDMA device name such as `mlx5_0`
    /// (older drivers print the device name as the column title).
    Nic,
}

/// One row/column of the matrix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Device {
    /// The name as printed (`GPU0`, `NIC3`, `mlx5_0`).
    pub name: String,
    /// GPU or NIC.
    pub kind: DeviceKind,
    /// The RDMA device behind a `NIC<n>` name, from the `NIC Legend:`
    /// (`NIC0: mlx5_0`); for older drivers the column name itself.
    pub rdma_device: Option<String>,
    /// `CPU Affinity` column (`0-31,64-95`), GPU rows only.
    pub cpu_affinity: Option<String>,
    /// `NUMA Affinity` column (`0`, `N/A`), GPU rows only, newer drivers.
    pub numa_affinity: Option<String>,
    /// `GPU NUMA ID` column (usually `N/A`; real ids on GH200/GB200).
    pub gpu_numa_id: Option<String>,
    /// Line of the device's row, if it had one.
    pub line: Option<usize>,
    /// Set when the device's row is cut short (cells or affinity values
    /// missing) or absent from a matrix whose header names the device:
    /// what is missing is unknown, never taken as a fact.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial: Option<Partial>,
}

/// How two devices are connected, in `topo -m` vocabulary.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum Link {
    /// `X`: the device itself.
    SelfCell,
    /// `NV<count>`: a bonded set of `count` NVLinks.
    Nvlink {
        /// Number of links in the bond.
        count: u32,
    },
    /// `PIX`: at most one PCIe bridge.
    Pix,
    /// `PXB`: several PCIe bridges, without the host bridge.
    Pxb,
    /// `PHB`: through a PCIe host bridge (the CPU).
    Phb,
    /// `NODE`: between host bridges within one NUMA node.
    Node,
    /// `SYS`, and the legacy `SOC` of 2017-era drivers: across the SMP
    /// interconnect between NUMA nodes (QPI/UPI/xGMI).
    Sys,
    /// Anything else, as printed.
    Unknown {
        /// The cell text.
        text: String,
    },
}

impl Link {
    /// Reads one cell; never fails (unknown text is kept).
    #[must_use]
    pub fn parse(text: &str) -> Self {
        Self::known(text).unwrap_or_else(|| Self::Unknown {
            text: text.trim().to_owned(),
        })
    }

    /// The link a cell names when it is one of the vocabulary's words or
    /// `NV<count>` (white space around it aside), else `None`: what
    /// [`Link::parse`] reads as other than unknown, decided without
    /// copying the text an unknown cell keeps (the topo parser asks this
    /// of every cell of a matrix pasted without its header).
    #[must_use]
    pub(crate) fn known(text: &str) -> Option<Self> {
        match text.trim() {
            "X" => Some(Self::SelfCell),
            "PIX" => Some(Self::Pix),
            "PXB" => Some(Self::Pxb),
            "PHB" => Some(Self::Phb),
            "NODE" => Some(Self::Node),
            "SYS" | "SOC" => Some(Self::Sys),
            t => t
                .strip_prefix("NV")
                .and_then(|n| n.parse().ok())
                .map(|count| Self::Nvlink { count }),
        }
    }

    /// Distance rank used to find the nearest device: lower is closer.
    /// Unknown cells rank last.
    #[must_use]
    pub fn distance_rank(&self) -> u8 {
        match self {
            Self::SelfCell => 0,
            Self::Nvlink { .. } => 1,
            Self::Pix => 2,
            Self::Pxb => 3,
            Self::Phb => 4,
            Self::Node => 5,
            Self::Sys => 6,
            Self::Unknown { .. } => 7,
        }
    }

    /// The spelling `nvidia-smi topo -m` uses.
    #[must_use]
    pub fn label(&self) -> String {
        match self {
            Self::SelfCell => "X".to_owned(),
            Self::Nvlink { count } => format!("NV{count}"),
            Self::Pix => "PIX".to_owned(),
            Self::Pxb => "PXB".to_owned(),
            Self::Phb => "PHB".to_owned(),
            Self::Node => "NODE".to_owned(),
            Self::Sys => "SYS".to_owned(),
            Self::Unknown { text } => text.clone(),
        }
    }
}

/// Peer-to-peer status between two GPUs (`nvidia-smi topo -p2p r|w|n|a|p`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum P2pStatus {
    /// `X`: the GPU itself.
    SelfCell,
    /// `OK`.
    Ok,
    /// `CNS`: chipset not supported.
    ChipsetNotSupported,
    /// `GNS`: GPU not supported.
    GpuNotSupported,
    /// `TNS`: topology not supported.
    TopologyNotSupported,
    /// `NS`: not supported.
    NotSupported,
    /// `DR`: disabled by registry key.
    DisabledByRegistry,
    /// `U`: unknown.
    Unknown,
    /// Anything else, as printed.
    Other {
        /// The cell text.
        text: String,
    },
}

impl P2pStatus {
    /// Reads one cell; never fails.
    #[must_use]
    pub fn parse(text: &str) -> Self {
        match text.trim() {
            "X" => Self::SelfCell,
            "OK" => Self::Ok,
            "CNS" => Self::ChipsetNotSupported,
            "GNS" => Self::GpuNotSupported,
            "TNS" => Self::TopologyNotSupported,
            "NS" => Self::NotSupported,
            "DR" => Self::DisabledByRegistry,
            "U" => Self::Unknown,
            t => Self::Other { text: t.to_owned() },
        }
    }

    /// The spelling the tool uses.
    #[must_use]
    pub fn label(&self) -> &str {
        match self {
            Self::SelfCell => "X",
            Self::Ok => "OK",
            Self::ChipsetNotSupported => "CNS",
            Self::GpuNotSupported => "GNS",
            Self::TopologyNotSupported => "TNS",
            Self::NotSupported => "NS",
            Self::DisabledByRegistry => "DR",
            Self::Unknown => "U",
            Self::Other { text } => text,
        }
    }
}

/// One cell of a matrix, with the line it was read from.
///
/// The device names are shared with the matrix's other cells, not copied
/// into each: a 16-device matrix has 256 cells, and two names per cell
/// were most of the allocations made reading one. They are written as
/// the strings they hold (serde's `rc` feature).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cell<T> {
    /// Row device name.
    pub from: Arc<str>,
    /// Column device name.
    pub to: Arc<str>,
    /// The cell's value.
    pub value: T,
    /// Line number of the row.
    pub line: usize,
}

/// A `Legend:` entry (`NV#  = Connection traversing a bonded set of # NVLinks`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LegendEntry {
    /// The symbol (`NV#`, `SYS`, `OK`).
    pub symbol: String,
    /// Its explanation, joined if the paste wrapped it.
    pub meaning: String,
    /// Lines it was read from.
    pub span: LineSpan,
}

/// `nvidia-smi topo -m` (`--matrix`) or `-mp` (`--matrix_pci`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TopoMatrix {
    /// Devices in column order (GPUs first, then NICs, as printed).
    pub devices: Vec<Device>,
    /// Every cell read, row by row. Where the header lost the NIC
    /// columns (`partial` says so), each GPU's cells to the NICs follow,
    /// taken from the NIC rows (one path, printed in both rows), with the
    /// NIC row's line.
    pub cells: Vec<Cell<Link>>,
    /// Titles of the columns after the device columns, as printed
    /// (`CPU Affinity`, `NUMA Affinity`, `GPU NUMA ID`): which ones appear
    /// tells the driver's age.
    pub affinity_columns: Vec<String>,
    /// Legend entries.
    pub legend: Vec<LegendEntry>,
    /// Whether this is the PCIe-only view (`-mp`), whose paths are not
    /// NVLink verdicts: `false` when any cell is `NV<n>` (whatever the
    /// legend says: old drivers print `NV1 = …`, not `NV#`), else `true`
    /// when the legend lists no `NV#`/`NV<n>` entry. `None` when there is
    /// neither an NVLink cell nor a legend.
    pub pci_only: Option<bool>,
    /// Set when the matrix was pasted without its header line: column
    /// names were recovered from the row labels and the `X` diagonal, and
    /// any column no row names is listed as missing (its cells are not read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial: Option<Partial>,
    /// Each device's row of cells, built on the first look-up.
    #[serde(skip)]
    rows: RowIndex,
}

/// Where each device's cells sit in [`TopoMatrix::cells`], and each
/// device by name, so that asking for one cell is two hash look-ups and
/// one read of a grid instead of scans of the device names and of a row
/// (rules ask for every GPU pair and GPU–NIC pair of every host: the scans
/// were a sixth of the rules' time on a fleet). Built lazily from the
/// public fields; a matrix whose cells or devices changed in number since
/// then is searched in full instead, so the index can never answer for
/// data it has not seen.
#[derive(Debug, Default)]
struct RowIndex {
    built: std::sync::OnceLock<Rows>,
}

#[derive(Debug)]
struct Rows {
    /// Cell positions by the position of the row's device (the first
    /// device of that name), in cell order.
    by_device: Vec<Vec<usize>>,
    /// The first device of each name, by position.
    by_name: FxHashMap<Box<str>, usize>,
    /// The first device of each RDMA device name, by position.
    by_rdma: FxHashMap<Box<str>, usize>,
    /// For each device, the position of the first device of its name
    /// (rows and columns are found by name).
    first: Vec<usize>,
    /// `grid[row * devices + column]`: the first cell of the row's device
    /// whose column is the column's device (both by first position).
    grid: Vec<Option<usize>>,
    /// For each cell, whether its column names a NIC (the last device of
    /// a name decides its kind): found once here, where the column is
    /// looked up anyway, rather than by name for every cell of every GPU's
    /// row.
    nic_column: Vec<bool>,
    cells: usize,
    devices: usize,
}

impl Rows {
    /// As [`TopoMatrix::device`], by position.
    fn device_at(&self, name: &str) -> Option<usize> {
        self.by_name
            .get(name)
            .or_else(|| self.by_rdma.get(name))
            .copied()
    }
}

/// A copy rebuilds its own index: the fields may be changed before use.
impl Clone for RowIndex {
    fn clone(&self) -> Self {
        Self::default()
    }
}

/// A cache, not data: two matrices are equal by their fields alone.
impl PartialEq for RowIndex {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl TopoMatrix {
    /// The cell for row `a`, column `b`. Names are device names (`GPU0`,
    /// `NIC1`) or, for NICs, the RDMA device (`mlx5_1`).
    #[must_use]
    pub fn cell(&self, a: &str, b: &str) -> Option<&Cell<Link>> {
        let Some(rows) = self.rows() else {
            return self.cell_by_scan(a, b);
        };
        let row = rows.first.get(rows.device_at(a)?)?;
        let column = rows.first.get(rows.device_at(b)?)?;
        let at = (*rows.grid.get(row * rows.devices + column)?)?;
        self.cells.get(at)
    }

    /// The cell for row `a`, column `b`, two devices of this matrix (as
    /// [`TopoMatrix::gpus`] and [`TopoMatrix::nics`] give them): the cell
    /// `cell(&a.name, &b.name)` gives, without looking the names up (rules
    /// ask for every pair of a host's devices). Devices of another matrix
    /// are looked up by name.
    #[must_use]
    pub fn cell_between(&self, a: &Device, b: &Device) -> Option<&Cell<Link>> {
        let (Some(rows), Some(pa), Some(pb)) = (self.rows(), self.place(a), self.place(b)) else {
            return self.cell(&a.name, &b.name);
        };
        let row = rows.first.get(pa)?;
        let column = rows.first.get(pb)?;
        let at = (*rows.grid.get(row * rows.devices + column)?)?;
        self.cells.get(at)
    }

    /// The position of `d` in [`TopoMatrix::devices`], if it is one of them
    /// (the same value, not an equal one).
    fn place(&self, d: &Device) -> Option<usize> {
        let size = std::mem::size_of::<Device>().max(1);
        let offset = (std::ptr::from_ref(d) as usize).checked_sub(self.devices.as_ptr() as usize)?;
        let at = offset / size;
        let same = offset % size == 0 && self.devices.get(at).is_some_and(|o| std::ptr::eq(o, d));
        same.then_some(at)
    }

    /// [`TopoMatrix::cell`] without the index: for a matrix changed since
    /// the index was built, and the tests' oracle.
    fn cell_by_scan(&self, a: &str, b: &str) -> Option<&Cell<Link>> {
        let a = self.device(a)?;
        let b = self.device(b)?;
        self.cells
            .iter()
            .find(|c| *c.from == *a.name && *c.to == *b.name)
    }

    /// The index, when it describes the current fields.
    fn rows(&self) -> Option<&Rows> {
        let rows = self.rows.built.get_or_init(|| self.build_rows());
        (rows.cells == self.cells.len() && rows.devices == self.devices.len()).then_some(rows)
    }

    fn build_rows(&self) -> Rows {
        let n = self.devices.len();
        let mut by_name: FxHashMap<Box<str>, usize> = FxHashMap::default();
        let mut by_rdma: FxHashMap<Box<str>, usize> = FxHashMap::default();
        let mut first = Vec::with_capacity(n);
        // Whether the last device of a name is a NIC, at the name's first
        // position (the last device of a name decides its kind).
        let mut nic = vec![false; n];
        for (i, d) in self.devices.iter().enumerate() {
            let at = *by_name.entry(d.name.as_str().into()).or_insert(i);
            first.push(at);
            if let Some(slot) = nic.get_mut(at) {
                *slot = d.kind == DeviceKind::Nic;
            }
            if let Some(r) = &d.rdma_device {
                by_rdma.entry(r.as_str().into()).or_insert(i);
            }
        }
        // A row has a cell per device, or fewer where the paste was cut.
        let mut by_device: Vec<Vec<usize>> = (0..n).map(|_| Vec::with_capacity(n)).collect();
        let mut grid = vec![None; n * n];
        let mut nic_column = vec![false; self.cells.len()];
        // A device by name, trying first the one at `guess`: rows come in
        // device order and so do the cells of a row, so most names are
        // found with one comparison instead of a hash look-up.
        let find = |name: &str, guess: usize| match self.devices.get(guess) {
            Some(d) if d.name == name => Some(guess),
            _ => by_name.get(name).copied(),
        };
        // Cells come row by row: the row's device is looked up once per row.
        let mut last: Option<(&str, Option<usize>)> = None;
        let mut next_row = 0;
        let mut next_column = 0;
        for (i, c) in self.cells.iter().enumerate() {
            let row = match last {
                Some((name, at)) if name == &*c.from => at,
                _ => {
                    let at = find(&c.from, next_row);
                    if let Some(at) = at {
                        next_row = at + 1;
                    }
                    next_column = 0;
                    last = Some((&*c.from, at));
                    at
                }
            };
            let Some(row) = row.and_then(|at| first.get(at).copied()) else {
                continue;
            };
            if let Some(cells) = by_device.get_mut(row) {
                cells.push(i);
            }
            let Some(column) = find(&c.to, next_column) else {
                continue;
            };
            next_column = column + 1;
            if let (Some(slot), Some(&at)) = (nic_column.get_mut(i), first.get(column)) {
                *slot = nic.get(at).copied().unwrap_or(false);
            }
            if let Some(slot) = first
                .get(column)
                .and_then(|&column| grid.get_mut(row * n + column))
            {
                slot.get_or_insert(i);
            }
        }
        Rows {
            by_device,
            by_name,
            by_rdma,
            first,
            grid,
            nic_column,
            cells: self.cells.len(),
            devices: n,
        }
    }

    /// A device by its name or, for NICs, its RDMA device name.
    #[must_use]
    pub fn device(&self, name: &str) -> Option<&Device> {
        self.devices.iter().find(|d| d.name == name).or_else(|| {
            self.devices
                .iter()
                .find(|d| d.rdma_device.as_deref() == Some(name))
        })
    }

    /// GPUs, in order.
    pub fn gpus(&self) -> impl Iterator<Item = &Device> {
        self.devices.iter().filter(|d| d.kind == DeviceKind::Gpu)
    }

    /// NICs, in order.
    pub fn nics(&self) -> impl Iterator<Item = &Device> {
        self.devices.iter().filter(|d| d.kind == DeviceKind::Nic)
    }

    /// Every unordered GPU pair whose connection is not NVLink, with the
    /// cell read from the lower-numbered GPU's row (or the other row if
    /// that one is missing). Pairs with no cell at all are left out.
    /// One pass over the cells, so fleets of large matrices stay cheap.
    #[must_use]
    pub fn gpu_pairs_without_nvlink(&self) -> Vec<&Cell<Link>> {
        let order = self.gpu_order();
        // For each unordered pair: the cell from the lower GPU's row if seen,
        // else the one from the upper GPU's row.
        let mut chosen: HashMap<(usize, usize), &Cell<Link>> = HashMap::new();
        for c in &self.cells {
            let (Some(&a), Some(&b)) = (order.get(&*c.from), order.get(&*c.to)) else {
                continue;
            };
            if a == b {
                continue;
            }
            let key = (a.min(b), a.max(b));
            let from_lower = a < b;
            match chosen.get(&key) {
                Some(prev) if !from_lower || order.get(&*prev.from) == Some(&key.0) => {}
                _ => {
                    chosen.insert(key, c);
                }
            }
        }
        let mut out: Vec<(&(usize, usize), &&Cell<Link>)> = chosen
            .iter()
            .filter(|(_, c)| !matches!(c.value, Link::Nvlink { .. }))
            .collect();
        out.sort_by_key(|(k, _)| **k);
        out.into_iter().map(|(_, c)| *c).collect()
    }

    /// True when the matrix holds every row in full.
    #[must_use]
    pub fn is_complete(&self) -> bool {
        self.partial.is_none() && self.devices.iter().all(|d| d.partial.is_none())
    }

    /// Whether the connection between `a` and `b` is known from either
    /// device's row.
    #[must_use]
    pub fn knows(&self, a: &str, b: &str) -> bool {
        self.cell(a, b).or_else(|| self.cell(b, a)).is_some()
    }

    /// Position of each GPU among the GPUs, by name.
    fn gpu_order(&self) -> HashMap<&str, usize> {
        self.gpus()
            .enumerate()
            .map(|(i, d)| (d.name.as_str(), i))
            .collect()
    }

    /// The NICs closest to `gpu` (all those tied at the best distance),
    /// with their cells from the GPU's row; empty when the GPU or the NICs
    /// are unknown.
    #[must_use]
    pub fn nearest_nics(&self, gpu: &str) -> Vec<&Cell<Link>> {
        let Some(rows) = self.rows() else {
            return self.nearest_nics_by_scan(gpu);
        };
        let Some(row) = rows
            .device_at(gpu)
            .and_then(|at| rows.first.get(at))
            .and_then(|&at| rows.by_device.get(at))
        else {
            return Vec::new();
        };
        // The row's NIC cells, by position: no name is looked up.
        let nic_cells = || {
            row.iter()
                .filter(|&&i| rows.nic_column.get(i).copied().unwrap_or(false))
                .filter_map(|&i| self.cells.get(i))
        };
        let Some(best) = nic_cells().map(|c| c.value.distance_rank()).min() else {
            return Vec::new();
        };
        nic_cells()
            .filter(|c| c.value.distance_rank() == best)
            .collect()
    }

    /// [`TopoMatrix::nearest_nics`] without the index.
    fn nearest_nics_by_scan(&self, gpu: &str) -> Vec<&Cell<Link>> {
        let Some(gpu) = self.device(gpu) else {
            return Vec::new();
        };
        // The last device of a name decides its kind (as a map built from
        // the list would).
        let is_nic = |name: &str| {
            self.devices
                .iter()
                .rev()
                .find(|d| d.name == name)
                .is_some_and(|d| d.kind == DeviceKind::Nic)
        };
        let cells: Vec<&Cell<Link>> = self
            .cells
            .iter()
            .filter(|c| *c.from == *gpu.name && is_nic(&c.to))
            .collect();
        nearest(cells)
    }
}

/// The cells tied at the best distance, in order.
fn nearest(cells: Vec<&Cell<Link>>) -> Vec<&Cell<Link>> {
    let best = cells.iter().map(|c| c.value.distance_rank()).min();
    cells
        .into_iter()
        .filter(|c| Some(c.value.distance_rank()) == best)
        .collect()
}

/// Which capability a `topo -p2p` matrix reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum P2pCapability {
    /// `r`.
    Read,
    /// `w`.
    Write,
    /// `rw` (seen in pastes; not in the driver 580 help).
    ReadWrite,
    /// `n`.
    Nvlink,
    /// `a`.
    Atomics,
    /// `p`.
    Pcie,
}

/// `nvidia-smi topo -p2p <cap>`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TopoP2p {
    /// The capability asked for, when the command line was seen.
    pub capability: Option<P2pCapability>,
    /// GPU names in column order.
    pub gpus: Vec<String>,
    /// Every cell read, row by row.
    pub cells: Vec<Cell<P2pStatus>>,
    /// Legend entries.
    pub legend: Vec<LegendEntry>,
}

impl TopoP2p {
    /// The cell for row `a`, column `b`.
    #[must_use]
    pub fn cell(&self, a: &str, b: &str) -> Option<&Cell<P2pStatus>> {
        self.cells.iter().find(|c| &*c.from == a && &*c.to == b)
    }

    /// Cells between two different GPUs whose status is not `OK`.
    pub fn not_ok(&self) -> impl Iterator<Item = &Cell<P2pStatus>> {
        self.cells
            .iter()
            .filter(|c| !matches!(c.value, P2pStatus::Ok | P2pStatus::SelfCell))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_read_every_spelling() {
        assert_eq!(Link::parse(" X "), Link::SelfCell);
        assert_eq!(Link::parse("NV18"), Link::Nvlink { count: 18 });
        assert_eq!(Link::parse("SOC"), Link::Sys);
        assert_eq!(
            Link::parse("NVX"),
            Link::Unknown {
                text: "NVX".to_owned()
            }
        );
        assert!(Link::parse("PIX").distance_rank() < Link::parse("SYS").distance_rank());
        assert_eq!(P2pStatus::parse("CNS"), P2pStatus::ChipsetNotSupported);
        assert_eq!(Link::Nvlink { count: 4 }.label(), "NV4");
    }

    fn matrix(
        devices: Vec<(usize, bool, Option<usize>)>,
        cells: Vec<(usize, usize, u32)>,
    ) -> TopoMatrix {
        // Few names, so that duplicates and RDMA names that are also
        // device names occur.
        let names = ["GPU0", "GPU1", "NIC0", "mlx5_0", "mlx5_1", "GPU2"];
        let name = |i: usize| names.get(i % names.len()).copied().unwrap_or("").to_owned();
        TopoMatrix {
            devices: devices
                .into_iter()
                .map(|(n, is_nic, rdma)| Device {
                    name: name(n),
                    kind: if is_nic {
                        DeviceKind::Nic
                    } else {
                        DeviceKind::Gpu
                    },
                    rdma_device: rdma.map(name),
                    cpu_affinity: None,
                    numa_affinity: None,
                    gpu_numa_id: None,
                    line: None,
                    partial: None,
                })
                .collect(),
            cells: cells
                .into_iter()
                .enumerate()
                .map(|(line, (a, b, v))| Cell {
                    from: name(a).into(),
                    to: name(b).into(),
                    value: match v {
                        0 => Link::Pix,
                        1 => Link::Node,
                        2 => Link::Sys,
                        n => Link::Nvlink { count: n },
                    },
                    line,
                })
                .collect(),
            ..TopoMatrix::default()
        }
    }

    /// [`Cell`] as it was, each cell owning copies of its names: the
    /// oracle of the shared names' written form.
    #[derive(Serialize)]
    struct OwnedCell<T> {
        from: String,
        to: String,
        value: T,
        line: usize,
    }

    proptest::proptest! {
        /// A cell with shared names is written as one owning its names
        /// was, and reads back as itself.
        #[test]
        fn shared_names_are_written_as_owned_ones(
            from in "\\PC{0,12}",
            to in "[\"\\\\a-z0-9_ é\t]{0,8}",
            count in 0u32..40,
            text in "\\PC{0,6}",
            unknown in proptest::bool::ANY,
            line in 0usize..100_000,
        ) {
            let value = if unknown {
                Link::Unknown { text }
            } else {
                Link::Nvlink { count }
            };
            let shared = Cell {
                from: Arc::from(from.as_str()),
                to: Arc::from(to.as_str()),
                value: value.clone(),
                line,
            };
            let owned = OwnedCell { from, to, value, line };
            let written = serde_json::to_string(&shared).unwrap();
            proptest::prop_assert_eq!(&written, &serde_json::to_string(&owned).unwrap());
            let back: Cell<Link> = serde_json::from_str(&written).unwrap();
            proptest::prop_assert_eq!(back, shared);
        }

        /// The index answers every look-up as the scans of the names and
        /// cells do, whatever the duplicates and RDMA names.
        #[test]
        fn the_index_answers_as_the_scans(
            devices in proptest::collection::vec(
                (0usize..6, proptest::bool::ANY, proptest::option::of(0usize..6)),
                0..8,
            ),
            cells in proptest::collection::vec((0usize..7, 0usize..7, 0u32..5), 0..40),
        ) {
            let m = matrix(devices, cells);
            let names = ["GPU0", "GPU1", "NIC0", "mlx5_0", "mlx5_1", "GPU2", "none"];
            let at = |c: Option<&Cell<Link>>| c.map(|c| c.line);
            let lines = |v: Vec<&Cell<Link>>| v.iter().map(|c| c.line).collect::<Vec<_>>();
            for a in &m.devices {
                for b in &m.devices {
                    proptest::prop_assert_eq!(
                        at(m.cell_between(a, b)),
                        at(m.cell_by_scan(&a.name, &b.name))
                    );
                }
            }
            for a in names {
                for b in names {
                    proptest::prop_assert_eq!(at(m.cell(a, b)), at(m.cell_by_scan(a, b)));
                }
                proptest::prop_assert_eq!(
                    lines(m.nearest_nics(a)),
                    lines(m.nearest_nics_by_scan(a))
                );
            }
        }
    }
}
