//! GPU and NIC topology rules (`TP0xx`), from `nvidia-smi topo -m`.
//!
//! A system is built symmetric: its GPUs reach the same number of NVLink
//! peers with the same number of links, and each GPU has a NIC as close as
//! its siblings have. The odd GPU out is the finding; systems wired
//! irregularly by design (DGX-1V's hybrid cube mesh) stay quiet because
//! every GPU is equally irregular.

use super::context::{Context, HostKey, SectionRef};
use super::{Coverage, Evidence, Finding, Severity, Subject, Threshold};
use crate::declare_rule;
use crate::kb::pair_nvlink_expectation;
use crate::model::partial::PartialReason;
use crate::model::topo::{Cell, Device, Link, TopoMatrix};
use crate::span::LineSpan;
use std::collections::BTreeMap;

declare_rule! {
    /// ### What it detects
    /// A GPU that reaches fewer of its peers over NVLink than the other GPUs
    /// of the system do: some of its pairs go over PCIe (`PIX`, `NODE`,
    /// `SYS`…) where its siblings' pairs are `NV#`.
    ///
    /// ### Why it matters
    /// Peer-to-peer traffic to those GPUs crosses PCIe and maybe the CPU
    /// interconnect, at a fraction of NVLink bandwidth; NCCL rings through
    /// that GPU slow the whole job. A GPU whose NVLinks all failed to train
    /// looks exactly like this (vllm#16336 shows one B200 with `NODE`/`SYS`
    /// to every peer while the others were `NV18`).
    ///
    /// ### Evidence
    /// The GPU's row in `nvidia-smi topo -m` and the cells of the pairs
    /// without NVLink.
    ///
    /// ### What to do
    /// Check the GPU's links (`nvidia-smi nvlink -s`), `dmesg` for NVLink
    /// Xids and the fabric manager on NVSwitch systems; reset the GPU or
    /// reboot; then open a hardware case.
    ///
    /// A host of PCIe cards joined in pairs by NVLink bridges (each GPU has
    /// one NVLink peer) is built that way: a card with no peer there is most
    /// likely a card without a bridge (three cards, two bridged), not a lost
    /// link, so it is reported as info. `topo -m` alone cannot tell a
    /// missing bridge from a failed one; `nvidia-smi nvlink -s` can.
    ///
    /// A GPU whose row shows no NVLink to peers whose own rows show NVLink
    /// to it is in a matrix that disagrees with itself, which nvidia-smi
    /// never prints (a matrix edited by hand, or rows of two captures):
    /// reported as info, with both cells, and not judged.
    ///
    /// ### Thresholds and sources
    /// The most common number of NVLink peers among the system's GPUs.
    /// Research notes (topology heuristics, vllm#16336; nccl-tests#320 for a
    /// bridged pair beside a lone card).
    pub static TP001 = {
        id: "TP001",
        name: "gpu-pair-without-nvlink",
        family: Topology,
        severity: Error,
        summary: "GPU reaches fewer peers over NVLink than its siblings do",
        needs: "nvidia-smi topo -m",
        check: check_pairs_without_nvlink,
    }
}

declare_rule! {
    /// ### What it detects
    /// A GPU pair bonded by fewer NVLinks (`NV#`) than the system type has
    /// (knowledge base) or than most pairs have (`NV17` among `NV18`).
    ///
    /// ### Why it matters
    /// Bandwidth between the pair drops in proportion to the missing links.
    ///
    /// ### Evidence
    /// The pair's cell in `nvidia-smi topo -m` and the expected `NV#`.
    ///
    /// ### What to do
    /// Find the inactive link with `nvidia-smi nvlink -s` on both GPUs, then
    /// proceed as for an inactive link (reset, reseat, hardware case).
    ///
    /// ### Thresholds and sources
    /// `NV#` per system from the knowledge base (HGX H100/H200 8-GPU NV18,
    /// DGX A100 NV12 …) when the GPU model is in the input; otherwise the
    /// count shared by at least two thirds of the NVLink pairs.
    pub static TP002 = {
        id: "TP002",
        name: "nvlink-bond-below-peers",
        family: Topology,
        severity: Warning,
        summary: "GPU pair bonded by fewer NVLinks than the system's other pairs",
        needs: "nvidia-smi topo -m",
        check: check_bond_count,
    }
}

declare_rule! {
    /// ### What it detects
    /// A GPU whose nearest NIC is farther away (through the CPU's host
    /// bridge, another PCIe root or the other socket) than its siblings'
    /// nearest NICs are.
    ///
    /// ### Why it matters
    /// GPUDirect RDMA is fastest between a GPU and a NIC under the same PCIe
    /// switch (`PIX`/`PXB`). Across the host bridge (`PHB`, `NODE`) or the
    /// socket interconnect (`SYS`) the traffic is slower and loads the CPU:
    /// that GPU's inter-node bandwidth drops. It is a `warning` across
    /// sockets and `info` otherwise. One finding per host lists every such
    /// GPU (one cause, a NIC missing or in the wrong slot, usually moves
    /// several).
    ///
    /// Not reported where the host's design explains it: fewer NICs than
    /// GPUs, each NIC the nearest of as many GPUs (2 NICs for 8 GPUs: 4
    /// each), so that some GPUs reach their shared NIC across a PCIe
    /// switch or the host bridge (`PXB`, `NODE`) while its neighbours sit
    /// by it. A GPU whose nearest NIC is across sockets (`SYS`) is never
    /// taken for design. On one host a NIC missing from an even share
    /// looks like the design; the fleet rules comparing adapter lists
    /// find it.
    ///
    /// ### Evidence
    /// The GPUs' nearest-NIC cells in `nvidia-smi topo -m`.
    ///
    /// ### What to do
    /// Check that the NIC meant for this GPU is present and in the right
    /// slot (a missing NIC makes the GPU fall back to a far one); pin the
    /// job's NIC per GPU (`NCCL_IB_HCA`, UCX_NET_DEVICES) to the nearest one.
    ///
    /// ### Thresholds and sources
    /// The best distance most GPUs of the host have to a NIC. Research notes
    /// (NIC–GPU affinity: each GPU should have a `PIX`/`PXB` NIC on DGX/HGX).
    /// Not judged on a host with a single NIC, or with fewer NICs than NUMA
    /// nodes holding GPUs (from `NUMA Affinity`): some GPU is then far from
    /// every NIC by the count alone, and the matrix cannot tell a missing
    /// NIC from a host built with fewer (a cloud VM with one NIC for two
    /// sockets' GPUs); with one NIC there is no nearer one to pin to. NICs
    /// `PIX` to each other (the two ports of one dual-port adapter) count
    /// as one there: they sit in one place.
    /// A cut matrix is judged when every GPU row shows every NIC the header
    /// names (the NIC rows only repeat those cells), or when the usual
    /// distance holds for more than half of the GPUs. A matrix nvidia-smi
    /// drew with only some of the NICs it found (`76 NICs found in the
    /// topology, only displaying 56 in the matrix.`, vllm#14537) is not
    /// judged: a GPU far from every NIC shown may sit by one left out.
    pub static TP003 = {
        id: "TP003",
        name: "nic-far-from-gpu",
        family: Topology,
        severity: Warning,
        summary: "GPU's nearest NIC is farther away than its siblings' NICs",
        needs: "nvidia-smi topo -m with NICs",
        check: check_nic_distance,
    }
}

declare_rule! {
    /// ### What it detects
    /// GPUs whose CPU/NUMA affinity in `nvidia-smi topo -m` is inconsistent:
    /// GPUs on the same NUMA node listing different CPU sets, or one GPU
    /// without a NUMA node (`N/A`) while its siblings have one.
    ///
    /// ### Why it matters
    /// Launchers (NCCL, MPI, Slurm's GPU binding) pin each rank to the CPUs
    /// the driver reports for its GPU. A wrong or missing affinity puts the
    /// rank's threads and buffers on the far socket: every copy to the GPU
    /// and every GPUDirect transfer crosses the CPU interconnect. It usually
    /// comes from firmware ACPI tables (SRAT/SLIT), NPS or sub-NUMA settings
    /// that differ between sockets, or a VM that hides NUMA.
    ///
    /// ### Evidence
    /// The GPU rows' `CPU Affinity` and `NUMA Affinity` cells.
    ///
    /// ### What to do
    /// Compare the BIOS NUMA settings (NPS, SNC) with a good node; check
    /// `lscpu` and `/sys/bus/pci/devices/<gpu>/numa_node`; pin jobs
    /// explicitly until it is fixed.
    ///
    /// ### Thresholds and sources
    /// Consistency among the host's own GPUs (research notes: flag a GPU
    /// whose NUMA affinity differs from its NIC's or its peers').
    pub static TP004 = {
        id: "TP004",
        name: "gpu-affinity-mismatch",
        family: Topology,
        severity: Warning,
        summary: "GPU CPU/NUMA affinity inconsistent with its siblings'",
        needs: "nvidia-smi topo -m with CPU/NUMA Affinity columns",
        check: check_affinity,
    }
}

/// A topology matrix of one host, with the GPU names the input gives.
struct Matrix<'a> {
    at: SectionRef<'a>,
    m: &'a TopoMatrix,
}

impl<'a> Matrix<'a> {
    fn gpus(&self) -> Vec<&'a Device> {
        self.m.gpus().collect()
    }

    fn cell(&self, a: &Device, b: &Device) -> Option<&'a Cell<Link>> {
        self.m
            .cell_between(a, b)
            .or_else(|| self.m.cell_between(b, a))
    }

    /// Whether the usual value among the judged GPUs holds for `count` of
    /// them out of `total` GPUs. In a complete matrix the most common value
    /// is the usual one; in a cut one it must hold for more than half of
    /// all GPUs, so that no row the paste lost could change the verdict.
    fn baseline_holds(&self, count: usize, total: usize) -> bool {
        self.m.is_complete() || count * 2 > total
    }

    fn evidence(&self, text: String, line: Option<usize>) -> Evidence {
        Evidence::new(
            format!("nvidia-smi topo -m: {text}"),
            line.map_or(self.at.section.span, LineSpan::line),
            self.at.source(),
        )
    }

    fn subject(&self, gpu: &Device) -> Subject {
        Subject {
            host: self.at.host().name().map(str::to_owned),
            gpu: gpu_index(&gpu.name),
            ..Subject::default()
        }
    }
}

/// `GPU3` → 3.
pub(crate) fn gpu_index(name: &str) -> Option<u32> {
    name.strip_prefix("GPU").and_then(|n| n.parse().ok())
}

/// Matrices with NVLink information (not `-mp`) and at least two GPUs,
/// or, when there are none, why: a skip reason must tell a reader whose
/// matrix was read but set aside (a single GPU, the PCIe-only view) that
/// it was seen, not that the input has no matrix.
fn nvlink_matrices<'a>(ctx: &Context<'a>) -> Result<Vec<Matrix<'a>>, String> {
    let all = ctx.topo_matrices();
    let multi: Vec<_> = all
        .iter()
        .copied()
        .filter(|(_, m)| m.gpus().count() >= 2)
        .collect();
    let judged: Vec<Matrix<'a>> = multi
        .iter()
        .copied()
        .filter(|(_, m)| m.pci_only != Some(true))
        .map(|(at, m)| Matrix { at, m })
        .collect();
    if !judged.is_empty() {
        return Ok(judged);
    }
    Err(if all.is_empty() {
        "no nvidia-smi topo -m matrix with a GPU in the input".to_owned()
    } else if multi.is_empty() {
        format!(
            "{} nvidia-smi topo -m matrix(es) read, none with two or more GPUs",
            all.len()
        )
    } else {
        format!(
            "{} topology matrix(es) with two or more GPUs read, all the PCIe-only view (nvidia-smi topo -mp: no NV# in the legend or the cells), which does not show NVLink",
            multi.len()
        )
    })
}

/// The most common value; ties go to the larger.
fn mode(values: &[usize]) -> Option<(usize, usize)> {
    let mut best: Option<(usize, usize)> = None;
    for v in values {
        let n = values.iter().filter(|w| *w == v).count();
        if best.is_none_or(|(b, c)| n > c || (n == c && *v > b)) {
            best = Some((*v, n));
        }
    }
    best
}

/// A GPU's cells to each other GPU of its matrix (none where the paste
/// lost the pair).
type PeerCells<'m> = Vec<(&'m Device, Option<&'m Cell<Link>>)>;

/// TP001.
fn check_pairs_without_nvlink(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let matrices = match nvlink_matrices(ctx) {
        Ok(m) => m,
        Err(why) => return Coverage::Skipped(why),
    };
    for mx in &matrices {
        let all = mx.gpus();
        // Each GPU's cells to the others (none to itself), looked up once:
        // the checks below read every pair two or three times, and a
        // lookup by name walks the matrix.
        let rows: Vec<PeerCells<'_>> = all
            .iter()
            .map(|g| {
                all.iter()
                    .filter(|o| o.name != g.name)
                    .map(|o| (*o, mx.cell(g, o)))
                    .collect()
            })
            .collect();
        // GPUs whose connection to every other GPU is known (from its own
        // row or theirs): only their NVLink peers can be counted.
        let gpus: Vec<(&Device, &PeerCells<'_>)> = all
            .iter()
            .zip(&rows)
            .filter(|(_, row)| row.iter().all(|(_, c)| c.is_some()))
            .map(|(g, row)| (*g, row))
            .collect();
        let peers: Vec<usize> = gpus
            .iter()
            .map(|(_, row)| {
                row.iter()
                    .filter(|(_, c)| matches!(c.map(|c| &c.value), Some(Link::Nvlink { .. })))
                    .count()
            })
            .collect();
        let Some((expected, count)) = mode(&peers) else {
            continue;
        };
        if expected == 0 || !mx.baseline_holds(count, all.len()) {
            continue; // no NVLink in this system, or too little of the matrix
        }
        for ((g, row), n) in gpus.iter().zip(&peers) {
            if *n >= expected {
                continue;
            }
            let missing: Vec<(&Device, &Cell<Link>)> = row
                .iter()
                .filter_map(|(o, c)| c.map(|c| (*o, c)))
                .filter(|(_, c)| !matches!(c.value, Link::Nvlink { .. }))
                .collect();
            let list: Vec<String> = missing
                .iter()
                .map(|(o, c)| format!("{} over {}", o.name, c.value.label()))
                .collect();
            let mut f = TP001
                .finding(
                    mx.subject(g),
                    format!(
                        "{} reaches {n} peer(s) over NVLink where {count} of {} GPUs reach {expected}; without NVLink: {}",
                        g.name,
                        all.len(),
                        list.join(", ")
                    ),
                )
                .threshold(Threshold::new(
                    format!("{expected} NVLink peers (most common among the GPUs)"),
                    "peer comparison in the topology matrix",
                ))
                .remediation("Check the GPU's links (nvidia-smi nvlink -s) and dmesg for NVLink Xids (and the fabric manager on NVSwitch systems); reset the GPU or reboot; then open a hardware case.");
            // The other GPUs' own rows, for the pairs this row says have
            // no NVLink: a row that shows NVLink back to this GPU makes the
            // matrix disagree with itself, which nvidia-smi never prints
            // (edited by hand, or rows of two captures pasted together).
            let contradicted: Vec<(&Device, &Cell<Link>)> = missing
                .iter()
                .filter_map(|(o, _)| mx.m.cell_between(o, g).map(|c| (*o, c)))
                .filter(|(_, c)| matches!(c.value, Link::Nvlink { .. }))
                .collect();
            if !contradicted.is_empty() {
                let names: Vec<&str> = contradicted.iter().map(|(o, _)| o.name.as_str()).collect();
                f.message.push_str(&format!(
                    "; but the rows of {} show NVLink to {}: the matrix disagrees with itself (edited by hand, or rows of two captures), so this is not judged",
                    names.join(", "),
                    g.name
                ));
                for (o, c) in &contradicted {
                    f = f.evidence(mx.evidence(
                        format!("{} ↔ {}: {}", o.name, g.name, c.value.label()),
                        Some(c.line),
                    ));
                }
                f = f.severity(Severity::Info).remediation(
                    "Run nvidia-smi topo -m again and paste its whole output unedited; check the GPU's links with nvidia-smi nvlink -s.",
                );
            } else if expected == 1 {
                // Bridges join PCIe cards in pairs: one GPU without a peer
                // beside bridged pairs is how such hosts are built.
                f.message.push_str(
                    "; the others are NVLink-bridged pairs, so this is most likely a card without a bridge (by design), not a lost link",
                );
                f = f.severity(Severity::Info).remediation(
                    "Nothing to repair if the card was installed without a bridge. If it should have one, check that the bridge is seated and `nvidia-smi nvlink -s` shows its links active.",
                );
            }
            for (o, c) in &missing {
                f = f.evidence(mx.evidence(
                    format!("{} ↔ {}: {}", g.name, o.name, c.value.label()),
                    Some(c.line),
                ));
            }
            out.push(f);
        }
    }
    Coverage::Checked(matrices.len())
}

/// The GPU product name the input gives for each host (nvidia-smi nvlink,
/// else nvidia-smi -q).
fn gpu_names<'a>(ctx: &Context<'a>) -> BTreeMap<HostKey<'a>, String> {
    let mut names = BTreeMap::new();
    for (at, g) in ctx.smi_gpus() {
        if let Some(n) = &g.product_name {
            names.insert(at.host(), n.clone());
        }
    }
    // Link lines without their GPU header name no product, and a header
    // the input ends in alone may have lost the end of its name.
    for g in ctx
        .nvlink_gpus()
        .iter()
        .filter(|g| !g.headerless && (g.cut_at_header.is_none() || !g.status.is_empty()))
    {
        names.insert(g.host, g.name.to_owned());
    }
    names
}

/// TP002.
fn check_bond_count(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let matrices = match nvlink_matrices(ctx) {
        Ok(m) => m,
        Err(why) => return Coverage::Skipped(why),
    };
    let names = gpu_names(ctx);
    let mut checked = 0;
    for mx in &matrices {
        let gpus = mx.gpus();
        let mut pairs: Vec<(&Device, &Device, &Cell<Link>, u32)> = Vec::new();
        // Pairs whose cell the paste lost: any of them may be NVLink.
        let mut unknown = 0;
        for (i, a) in gpus.iter().enumerate() {
            for b in gpus.iter().skip(i + 1) {
                match mx.cell(a, b) {
                    Some(c) => {
                        if let Link::Nvlink { count } = c.value {
                            pairs.push((a, b, c, count));
                        }
                    }
                    None => unknown += 1,
                }
            }
        }
        if pairs.is_empty() {
            continue;
        }
        checked += 1;
        let gpu_count = u32::try_from(gpus.len()).unwrap_or(u32::MAX);
        let kb = names
            .get(&mx.at.host())
            .and_then(|name| pair_nvlink_expectation(name, gpu_count));
        let (expected, why, source) = match kb {
            Some(spec) => match spec.links_per_pair {
                Some(n) => (
                    n,
                    format!("NV{n} on {}", spec.system),
                    format!("fabricscope knowledge base: {}", spec.source),
                ),
                None => continue, // irregular by design (DGX-1V mesh)
            },
            None => {
                let counts: Vec<usize> = pairs.iter().map(|p| p.3 as usize).collect();
                let Some((n, share)) = mode(&counts) else {
                    continue;
                };
                // Lost pairs count against the common bond: whatever they
                // hold, it must still be the bond of two thirds of the pairs.
                if share * 3 < (counts.len() + unknown) * 2 {
                    continue; // no clear common bond: mixed by design
                }
                (
                    u32::try_from(n).unwrap_or(0),
                    format!("NV{n} on {share} of {} NVLink pairs", counts.len()),
                    "peer comparison in the topology matrix".to_owned(),
                )
            }
        };
        for (a, b, cell, count) in &pairs {
            if *count >= expected {
                continue;
            }
            out.push(
                TP002
                    .finding(
                        Subject {
                            peer_gpu: gpu_index(&b.name),
                            ..mx.subject(a)
                        },
                        format!(
                            "{} ↔ {} are bonded by NV{count}, {why}: {} link(s) missing",
                            a.name,
                            b.name,
                            expected - count
                        ),
                    )
                    .evidence(mx.evidence(
                        format!("{} ↔ {}: NV{count}", a.name, b.name),
                        Some(cell.line),
                    ))
                    .threshold(Threshold::new(format!("NV{expected}"), source.clone()))
                    .remediation("Find the inactive link with nvidia-smi nvlink -s on both GPUs; reset, reseat, then open a hardware case."),
            );
        }
    }
    if checked == 0 {
        return Coverage::Skipped("no NVLink pair in the topology matrices".to_owned());
    }
    Coverage::Checked(checked)
}

/// TP003.
fn check_nic_distance(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let with_nics: Vec<_> = ctx
        .topo_matrices()
        .iter()
        .copied()
        .filter(|(_, m)| m.nics().next().is_some() && m.gpus().count() >= 2)
        .collect();
    let matrices: Vec<Matrix<'_>> = with_nics
        .iter()
        .copied()
        // Without the header some NIC columns may be unnamed: the nearest
        // NIC could be one of them. A header that lost only the NIC
        // columns, above every NIC's row (a legend after them), still
        // shows each GPU–NIC cell: the GPU–NIC distances are all there.
        .filter(|(_, m)| {
            m.partial
                .as_ref()
                .is_none_or(|p| p.reason == PartialReason::MissingColumns)
        })
        .map(|(at, m)| Matrix { at, m })
        .collect();
    if matrices.is_empty() {
        let not_shown = with_nics.iter().any(|(_, m)| {
            m.partial
                .as_ref()
                .is_some_and(|p| p.reason == PartialReason::NotShown)
        });
        return Coverage::Skipped(if not_shown {
            "nvidia-smi left some NICs out of the topo -m matrix (too many to draw): a GPU's nearest NIC may be one it did not show".to_owned()
        } else {
            "no nvidia-smi topo -m matrix with NICs and two or more GPUs".to_owned()
        });
    }
    let matrices: Vec<&Matrix<'_>> = matrices
        .iter()
        .filter(|mx| nics_can_serve_every_numa_node(mx.m))
        .collect();
    if matrices.is_empty() {
        return Coverage::Skipped(
            "every topo -m matrix has a single NIC, or fewer NICs (the ports of one adapter counting once) than NUMA nodes with GPUs: some GPU is far from every NIC by the count alone, so comparing GPUs' nearest NICs tells nothing".to_owned(),
        );
    }
    for mx in matrices.iter().copied() {
        let gpus = mx.gpus();
        // Only GPUs whose row shows every NIC: a cut row's nearest NIC
        // may be the one it lost.
        let nics: Vec<&Device> = mx.m.nics().collect();
        let nearest: Vec<(&Device, Vec<&Cell<Link>>)> = gpus
            .iter()
            .filter(|g| nics.iter().all(|n| mx.m.cell_between(g, n).is_some()))
            .map(|g| (*g, mx.m.nearest_nics(&g.name)))
            .filter(|(_, cells)| !cells.is_empty())
            .collect();
        let ranks: Vec<usize> = nearest
            .iter()
            .filter_map(|(_, cells)| cells.first().map(|c| usize::from(c.value.distance_rank())))
            .collect();
        // The usual distance: most common best rank, ties to the closer one.
        let mut usual: Option<(usize, usize)> = None;
        for r in &ranks {
            let n = ranks.iter().filter(|x| *x == r).count();
            if usual.is_none_or(|(b, c)| n > c || (n == c && *r < b)) {
                usual = Some((*r, n));
            }
        }
        let Some((usual_rank, count)) = usual else {
            continue;
        };
        if !(every_gpu_row_shows_every_nic(mx.m, nearest.len(), gpus.len())
            || mx.baseline_holds(count, gpus.len()))
        {
            continue;
        }
        let usual_label = nearest
            .iter()
            .filter_map(|(_, c)| c.first())
            .find(|c| usize::from(c.value.distance_rank()) == usual_rank)
            .map_or_else(String::new, |c| c.value.label());
        let far: Vec<&(&Device, Vec<&Cell<Link>>)> = nearest
            .iter()
            .filter(|(_, cells)| {
                cells
                    .first()
                    .is_some_and(|c| usize::from(c.value.distance_rank()) > usual_rank)
            })
            .collect();
        if far.is_empty() || shared_by_design(&nearest, &far, nics.len(), gpus.len()) {
            continue;
        }
        out.push(far_gpus_finding(
            mx,
            &far,
            (&usual_label, count, nearest.len()),
        ));
    }
    Coverage::Checked(matrices.len())
}

/// Whether the GPUs farther from a NIC than their siblings are so by the
/// host's design: fewer NICs than GPUs, each NIC shared by as many GPUs
/// (`gpus / nics`, a whole number), each GPU with one nearest NIC, every
/// NIC the nearest of exactly its share, and none of the farther GPUs
/// across sockets (`SYS`). A host built with 2 NICs for 8 GPUs puts each
/// NIC by two GPUs (`PIX`) and reaches it from two more on the same
/// socket (`NODE`, `PXB`): four findings on every such host before, pages
/// of noise on a fleet of them, and nothing to fix. A NIC missing from a
/// host built with more breaks the even share (3 NICs for 4 GPUs) or
/// leaves a socket's GPUs with only `SYS`, and is still reported; one
/// that leaves an even share behind looks like the design on this host
/// alone, and the fleet rules comparing adapter lists find it.
fn shared_by_design(
    nearest: &[(&Device, Vec<&Cell<Link>>)],
    far: &[&(&Device, Vec<&Cell<Link>>)],
    nics: usize,
    gpus: usize,
) -> bool {
    if nics == 0 || gpus <= nics || gpus % nics != 0 || nearest.len() != gpus {
        return false;
    }
    if far
        .iter()
        .any(|(_, cells)| cells.iter().any(|c| matches!(c.value, Link::Sys)))
    {
        return false;
    }
    let share = gpus / nics;
    let mut per_nic: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, cells) in nearest {
        let [only] = cells.as_slice() else {
            return false;
        };
        *per_nic.entry(&only.to).or_default() += 1;
    }
    per_nic.len() == nics && per_nic.values().all(|n| *n == share)
}

/// The one finding of a matrix whose `far` GPUs' nearest NICs are
/// farther than the `usual` distance (its label, how many GPUs have it,
/// of how many judged): one per host, listing the GPUs, rather than one
/// per GPU, as one cause (a NIC missing, a riser in the wrong slot)
/// usually moves several. A `warning` when any of them reaches its
/// nearest NIC only across sockets (`SYS`), `info` otherwise. The subject
/// is the GPU and its nearest NIC when there is one GPU, the host
/// otherwise.
fn far_gpus_finding(
    mx: &Matrix<'_>,
    far: &[&(&Device, Vec<&Cell<Link>>)],
    (usual_label, count, judged): (&str, usize, usize),
) -> Finding {
    let across_sockets = far
        .iter()
        .any(|(_, cells)| cells.first().is_some_and(|c| matches!(c.value, Link::Sys)));
    let severity = if across_sockets {
        Severity::Warning
    } else {
        Severity::Info
    };
    let nic_names = |cells: &[&Cell<Link>]| -> String {
        cells
            .iter()
            .map(|c| {
                let rdma =
                    mx.m.device(&c.to)
                        .and_then(|d| d.rdma_device.clone())
                        .filter(|r| **r != *c.to)
                        .map(|r| format!(" ({r})"))
                        .unwrap_or_default();
                format!("{}{rdma}", c.to)
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (subject, message) = match far {
        [(g, cells)] => (
            Subject {
                nic: cells.first().map(|c| c.to.to_string()),
                ..mx.subject(g)
            },
            format!(
                "{}'s nearest NIC is {} away ({}), while {count} of {judged} GPUs have a NIC at {usual_label}",
                g.name,
                cells.first().map_or_else(String::new, |c| c.value.label()),
                nic_names(cells)
            ),
        ),
        _ => (
            Subject {
                host: mx.at.host().name().map(str::to_owned),
                ..Subject::default()
            },
            format!(
                "{} GPUs' nearest NICs are farther than their siblings': {}; while {count} of {judged} GPUs have a NIC at {usual_label}",
                far.len(),
                far.iter()
                    .map(|(g, cells)| format!(
                        "{} at {} ({})",
                        g.name,
                        cells.first().map_or_else(String::new, |c| c.value.label()),
                        nic_names(cells)
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
    };
    let mut f = TP003
        .finding(subject, message)
        .severity(severity)
        .threshold(Threshold::new(
            format!("{usual_label} (most GPUs' nearest NIC)"),
            "peer comparison in the topology matrix; GPUDirect RDMA wants PIX/PXB",
        ))
        .remediation("Check that the NIC meant for these GPUs is present and in the right slot; pin each GPU's NIC (NCCL_IB_HCA, UCX_NET_DEVICES) to the nearest one.");
    for (g, cells) in far {
        for c in cells {
            f = f.evidence(mx.evidence(
                format!("{} ↔ {}: {}", g.name, c.to, c.value.label()),
                Some(c.line),
            ));
        }
    }
    f
}

/// Whether all `judged` GPUs of `gpus` show a cell to every NIC, in a
/// header that names every NIC: then the GPU–NIC distances TP003 compares
/// are all there, and it judges as on a whole matrix whatever else the
/// paste lost. The NIC rows only repeat the GPU rows' cells (a paste cut
/// after the GPU rows, as `collect_env` reports print it, loses just
/// them), and a GPU row cut in its affinity cells kept its NIC cells. The
/// header must reach the affinity titles: one cut at the right could have
/// lost a NIC column, and with it a GPU's nearest NIC.
fn every_gpu_row_shows_every_nic(m: &TopoMatrix, judged: usize, gpus: usize) -> bool {
    judged == gpus && m.partial.is_none() && !m.affinity_columns.is_empty()
}

/// Whether the matrix's NICs could give every GPU a near NIC, so that a GPU
/// whose nearest NIC is farther than its siblings' says something (TP003).
///
/// Not with a single NIC: every GPU's nearest NIC is that one, and the
/// comparison only says where the GPUs sit. Not with fewer NICs than the
/// NUMA nodes the GPUs sit on (when every GPU row names its node): at least
/// one node has no NIC, so its GPUs are `SYS` (or `NODE`) from every NIC
/// by the count alone, and a missing NIC looks the same as a host built
/// with fewer. Unknown NUMA nodes leave the comparison on.
///
/// NICs are counted by place, not by port: the ports of one dual-port
/// adapter (two NICs `PIX` to each other, behind one bridge) sit where the
/// card sits, and serve one NUMA node between them (a two-socket host with
/// one dual-port card has two NICs and one place: its second socket's GPUs
/// are `SYS` from both by design).
fn nics_can_serve_every_numa_node(m: &TopoMatrix) -> bool {
    let places = nic_places(m);
    if places <= 1 {
        return false;
    }
    let nodes: Option<std::collections::BTreeSet<&str>> = m.gpus().map(numa_node).collect();
    nodes.is_none_or(|n| places >= n.len())
}

/// How many places the matrix's NICs sit at: groups of NICs joined by
/// `PIX` cells (one bridge between them: ports of one adapter, or cards
/// behind one switch). A cell the paste lost joins nothing, so an unknown
/// pair counts as two places and leaves the comparison on.
fn nic_places(m: &TopoMatrix) -> usize {
    let nics: Vec<&Device> = m.nics().collect();
    // Each NIC's group, by the index of its first member (few NICs: the
    // quadratic scan is small).
    let mut group: Vec<usize> = (0..nics.len()).collect();
    for (i, a) in nics.iter().enumerate() {
        for (j, b) in nics.iter().enumerate().skip(i + 1) {
            let joined = m
                .cell_between(a, b)
                .or_else(|| m.cell_between(b, a))
                .is_some_and(|c| matches!(c.value, Link::Pix));
            let (gi, gj) = (group.get(i).copied(), group.get(j).copied());
            if let (true, Some(gi), Some(gj)) = (joined, gi, gj) {
                if gi != gj {
                    let (keep, drop) = (gi.min(gj), gi.max(gj));
                    group
                        .iter_mut()
                        .filter(|g| **g == drop)
                        .for_each(|g| *g = keep);
                }
            }
        }
    }
    group.sort_unstable();
    group.dedup();
    group.len()
}

/// A NUMA affinity cell that names a node (not `N/A`, not empty).
fn numa_node(d: &Device) -> Option<&str> {
    d.numa_affinity
        .as_deref()
        .map(str::trim)
        .filter(|n| !n.is_empty() && !n.eq_ignore_ascii_case("N/A"))
}

/// A CPU affinity cell, trimmed; `None` when empty.
fn cpus_of(d: &Device) -> Option<&str> {
    d.cpu_affinity
        .as_deref()
        .map(str::trim)
        .filter(|c| !c.is_empty())
}

/// TP004.
fn check_affinity(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let matrices: Vec<Matrix<'_>> = ctx
        .topo_matrices()
        .iter()
        .copied()
        .filter(|(_, m)| {
            m.gpus()
                .filter(|g| g.cpu_affinity.is_some() || g.numa_affinity.is_some())
                .count()
                >= 2
        })
        .map(|(at, m)| Matrix { at, m })
        .collect();
    if matrices.is_empty() {
        return Coverage::Skipped(
            "no nvidia-smi topo -m matrix with affinity columns and two or more GPUs".to_owned(),
        );
    }
    for mx in &matrices {
        let all = mx.gpus();
        // A cut row's affinity values are missing or may be cut: only
        // complete rows are judged or compared with.
        let gpus: Vec<&Device> = all
            .iter()
            .copied()
            .filter(|g| g.partial.is_none())
            .collect();
        let with_node: Vec<&&Device> = gpus.iter().filter(|g| numa_node(g).is_some()).collect();
        // A GPU without a node among GPUs that have one.
        if with_node.len() * 2 > all.len() {
            for g in gpus.iter().filter(|g| numa_node(g).is_none()) {
                out.push(
                    TP004
                        .finding(
                            mx.subject(g),
                            format!(
                                "{} has no NUMA node (NUMA Affinity {}) while {} of {} GPUs have one",
                                g.name,
                                g.numa_affinity.as_deref().unwrap_or("missing"),
                                with_node.len(),
                                all.len()
                            ),
                        )
                        .evidence(mx.evidence(
                            format!(
                                "{}: CPU Affinity {}, NUMA Affinity {}",
                                g.name,
                                g.cpu_affinity.as_deref().unwrap_or("-"),
                                g.numa_affinity.as_deref().unwrap_or("-")
                            ),
                            g.line,
                        ))
                        .threshold(Threshold::new(
                            "a NUMA node like its siblings",
                            "consistency among the host's GPUs",
                        ))
                        .remediation("Compare BIOS NUMA settings (NPS, SNC) with a good node; check /sys/bus/pci/devices/<gpu>/numa_node; pin jobs explicitly until fixed."),
                );
            }
        }
        // A GPU listing the CPUs of another NUMA node, while a sibling on
        // its own node lists different ones: its affinity belongs elsewhere.
        for g in &with_node {
            let (Some(node), Some(cpus)) = (numa_node(g), cpus_of(g)) else {
                continue;
            };
            let elsewhere = with_node
                .iter()
                .find(|o| numa_node(o) != Some(node) && cpus_of(o) == Some(cpus));
            let sibling_differs = with_node.iter().any(|o| {
                o.name != g.name
                    && numa_node(o) == Some(node)
                    && cpus_of(o).is_some_and(|c| c != cpus)
            });
            let Some(other) = elsewhere else {
                continue;
            };
            if !sibling_differs {
                continue;
            }
            let other_node = numa_node(other).unwrap_or("?");
            out.push(
                TP004
                    .finding(
                        mx.subject(g),
                        format!(
                            "{} is on NUMA node {node} but lists CPUs {cpus}, the CPUs of node {other_node} ({} lists them too)",
                            g.name, other.name
                        ),
                    )
                    .evidence(mx.evidence(
                        format!("{}: CPU Affinity {cpus}, NUMA Affinity {node}", g.name),
                        g.line,
                    ))
                    .evidence(mx.evidence(
                        format!("{}: CPU Affinity {cpus}, NUMA Affinity {other_node}", other.name),
                        other.line,
                    ))
                    .threshold(Threshold::new(
                        format!("the CPUs its node-{node} siblings list"),
                        "consistency among the host's GPUs",
                    ))
                    .remediation("Compare BIOS NUMA settings (NPS, SNC) and lscpu with a good node; pin jobs explicitly until fixed."),
            );
        }
    }
    Coverage::Checked(matrices.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_names_give_indices() {
        assert_eq!(gpu_index("GPU7"), Some(7));
        assert_eq!(gpu_index("NIC0"), None);
    }

    #[test]
    fn a_lone_card_beside_bridged_pairs_is_info_and_a_lost_mesh_gpu_an_error() {
        use crate::rules::testing::findings_of;
        let row = |name: &str, cells: &[&str]| format!("{name}\t{}\t0-31\t0\n", cells.join("\t"));
        let header = |n: usize| {
            let cols: Vec<String> = (0..n).map(|i| format!("GPU{i}")).collect();
            format!("\t{}\tCPU Affinity\tNUMA Affinity\n", cols.join("\t"))
        };
        // Two bridged pairs and one card without a bridge.
        let pairs = header(3)
            + &row("GPU0", &[" X ", "NV4", "NODE"])
            + &row("GPU1", &["NV4", " X ", "NODE"])
            + &row("GPU2", &["NODE", "NODE", " X "]);
        let f = findings_of(&TP001, &pairs);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Info);
        assert!(
            f[0].message.contains("without a bridge"),
            "{}",
            f[0].message
        );
        // A mesh where each GPU reaches two peers: the one reaching none has
        // lost its links.
        let mesh = header(4)
            + &row("GPU0", &[" X ", "NV18", "NV18", "SYS"])
            + &row("GPU1", &["NV18", " X ", "NV18", "SYS"])
            + &row("GPU2", &["NV18", "NV18", " X ", "SYS"])
            + &row("GPU3", &["SYS", "SYS", "SYS", " X "]);
        let f = findings_of(&TP001, &mesh);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Error);
        // The same GPU's row edited to SYS while the other rows still show
        // NV18 to it: a matrix nvidia-smi never prints, not judged.
        let edited = header(4)
            + &row("GPU0", &[" X ", "NV18", "NV18", "NV18"])
            + &row("GPU1", &["NV18", " X ", "NV18", "NV18"])
            + &row("GPU2", &["NV18", "NV18", " X ", "NV18"])
            + &row("GPU3", &["SYS", "SYS", "SYS", " X "]);
        let f = findings_of(&TP001, &edited);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Info);
        assert!(
            f[0].message.contains("disagrees with itself"),
            "{}",
            f[0].message
        );
    }

    /// GPUs far from every NIC are one finding of the host, their cells
    /// its evidence; GPUs sharing a NIC by the host's design are none.
    #[test]
    fn far_gpus_are_one_finding_per_host_and_a_shared_nic_by_design_none() {
        use crate::rules::testing::findings_of;
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/rules/TP003/");
        let read = |name: &str| std::fs::read_to_string(format!("{dir}{name}")).unwrap();
        let f = findings_of(&TP003, &read("fires_eight_gpus_socket1_nics_missing.txt"));
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].severity, Severity::Warning);
        assert_eq!(f[0].subject.gpu, None);
        for gpu in ["GPU4 at SYS", "GPU5 at SYS", "GPU6 at SYS", "GPU7 at SYS"] {
            assert!(f[0].message.contains(gpu), "{}", f[0].message);
        }
        assert!(!f[0].message.contains("GPU3"), "{}", f[0].message);
        // Each far GPU's two NIC cells, and nothing else.
        assert_eq!(f[0].evidence.len(), 8, "{:?}", f[0].evidence);
        let lines: std::collections::BTreeSet<usize> =
            f[0].evidence.iter().map(|e| e.span.first_line).collect();
        assert_eq!(lines, (7..=10).collect());
        for by_design in [
            "quiet_two_nics_for_eight_gpus.txt",
            "quiet_gpu_pairs_share_a_nic_across_a_switch.txt",
        ] {
            assert!(
                findings_of(&TP003, &read(by_design)).is_empty(),
                "{by_design}"
            );
        }
        // GPU4 and GPU5 reach every NIC only across sockets while their
        // siblings of socket 1 sit by NIC1: never taken for design.
        let moved = read("quiet_two_nics_for_eight_gpus.txt")
            .replace(
                "GPU4\tNV18\tNV18\tNV18\tNV18\t X \tNV18\tNV18\tNV18\tSYS\tPIX",
                "GPU4\tNV18\tNV18\tNV18\tNV18\t X \tNV18\tNV18\tNV18\tSYS\tSYS",
            )
            .replace(
                "GPU5\tNV18\tNV18\tNV18\tNV18\tNV18\t X \tNV18\tNV18\tSYS\tPIX",
                "GPU5\tNV18\tNV18\tNV18\tNV18\tNV18\t X \tNV18\tNV18\tSYS\tSYS",
            );
        let f = findings_of(&TP003, &moved);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].severity, Severity::Warning);
    }

    /// The short legend of old drivers (`NV1 = Connected via NVLink with
    /// 1 hop`) has no `NV#` line: the matrix is still judged, and a
    /// matrix that is not judged is named in the skip reason as read.
    #[test]
    fn an_old_legend_is_judged_and_an_unjudged_matrix_is_named_in_the_reason() {
        use crate::rules::testing::{findings_of, skipped_reason};
        let old_legend = "\nLegend:\n  X   = Self\n  NV2 = Connected via NVLink with 2 hops\n  SYS = Connected via the PCIe or CPU subsystem\n";
        let row = |name: &str, cells: &[&str]| format!("{name}\t{}\t0-15\n", cells.join("\t"));
        let head = "\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\n";
        // GPU3 lost its links to a mesh of NV2 pairs; GPU0 ↔ GPU1 lost one.
        let lost = head.to_owned()
            + &row("GPU0", &[" X ", "NV1", "NV2", "SYS"])
            + &row("GPU1", &["NV1", " X ", "NV2", "SYS"])
            + &row("GPU2", &["NV2", "NV2", " X ", "SYS"])
            + &row("GPU3", &["SYS", "SYS", "SYS", " X "])
            + old_legend;
        let f = findings_of(&TP001, &lost);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].subject.gpu, Some(3));
        let f = findings_of(&TP002, &lost);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(
            (f[0].subject.gpu, f[0].subject.peer_gpu),
            (Some(0), Some(1))
        );
        // The PCIe-only view: read, but it cannot show NVLink.
        let mp = head.to_owned()
            + &row("GPU0", &[" X ", "PHB", "SYS", "SYS"])
            + &row("GPU1", &["PHB", " X ", "SYS", "SYS"])
            + &row("GPU2", &["SYS", "SYS", " X ", "PHB"])
            + &row("GPU3", &["SYS", "SYS", "PHB", " X "])
            + "\nLegend:\n  X    = Self\n  SYS  = Connection traversing PCIe as well as the SMP interconnect\n  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge\n";
        for rule in [&TP001, &TP002] {
            let why = skipped_reason(rule, &mp);
            assert!(
                why.as_deref().is_some_and(|r| r.contains("PCIe-only")),
                "{}: {why:?}",
                rule.id
            );
        }
        // One GPU: a matrix, but no pair to judge.
        let single = "\tGPU0\tCPU Affinity\nGPU0\t X \t0-15\n".to_owned() + old_legend;
        let why = skipped_reason(&TP001, &single);
        assert!(
            why.as_deref()
                .is_some_and(|r| r.contains("none with two or more GPUs")),
            "{why:?}"
        );
    }

    #[test]
    fn nic_distance_is_not_compared_when_the_nics_cannot_cover_every_numa_node() {
        use crate::rules::testing::{findings_of, skipped_reason};
        // Two GPUs on two sockets and one NIC beside GPU1: GPU0 is SYS from
        // the only NIC there is.
        let one_nic = "\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\n\
            GPU0\t X \tSYS\tSYS\t0-23\t0\n\
            GPU1\tSYS\t X \tPIX\t24-47\t1\n\
            NIC0\tSYS\tPIX\t X \n";
        let why = skipped_reason(&TP003, one_nic);
        assert!(
            why.as_deref().is_some_and(|r| r.contains("single NIC")),
            "{why:?}"
        );
        // Three GPU NUMA nodes, two NICs: one node has none by the count.
        let two_nics = "\tGPU0\tGPU1\tGPU2\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity\n\
            GPU0\t X \tSYS\tSYS\tPIX\tSYS\t0-15\t0\n\
            GPU1\tSYS\t X \tSYS\tSYS\tPIX\t16-31\t1\n\
            GPU2\tSYS\tSYS\t X \tSYS\tSYS\t32-47\t2\n\
            NIC0\tPIX\tSYS\tSYS\t X \tSYS\n\
            NIC1\tSYS\tPIX\tSYS\tSYS\t X \n";
        assert!(skipped_reason(&TP003, two_nics).is_some());
        // The same matrix without NUMA Affinity: the nodes are unknown, so
        // the comparison stays on and GPU2's far NICs are reported.
        let unknown_nodes: String = two_nics
            .lines()
            .map(|l| {
                let cells: Vec<&str> = l.split('\t').collect();
                let keep = if cells.len() > 7 {
                    &cells[..7]
                } else {
                    &cells[..]
                };
                format!("{}\n", keep.join("\t"))
            })
            .collect();
        let f = findings_of(&TP003, &unknown_nodes);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].subject.gpu, Some(2));
    }

    #[test]
    fn nic_distance_counts_a_dual_port_adapter_once() {
        use crate::rules::testing::{findings_of, skipped_reason};
        // Two GPUs on two sockets; the two ports of one adapter (PIX to
        // each other) by GPU0: GPU1 is SYS from both by the host's build.
        let dual_port = |between: &str| {
            format!(
                "\tGPU0\tGPU1\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity\n\
                 GPU0\t X \tSYS\tNODE\tNODE\t0-15\t0\n\
                 GPU1\tSYS\t X \tSYS\tSYS\t16-31\t1\n\
                 NIC0\tNODE\tSYS\t X \t{between}\n\
                 NIC1\tNODE\tSYS\t{between}\t X \n"
            )
        };
        let why = skipped_reason(&TP003, &dual_port("PIX"));
        assert!(
            why.as_deref().is_some_and(|r| r.contains("fewer NICs")),
            "{why:?}"
        );
        // Two cards in two places on the first socket: one could have
        // been the second socket's, and GPU1 is reported.
        let f = findings_of(&TP003, &dual_port("NODE"));
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].subject.gpu, Some(1));
    }

    /// An 8-GPU matrix whose NICs sit on the second socket: GPUs 0-2 are
    /// SYS from both, GPUs 3-7 NODE or PHB (four NODE, the usual distance,
    /// held by no majority). `gpu_rows` of the GPU rows are
    /// kept and the NIC rows dropped, as a paste cut after the GPU rows.
    fn far_socket_nics(gpu_rows: usize, affinity: bool) -> String {
        let titles = if affinity {
            "\tCPU Affinity\tNUMA Affinity"
        } else {
            ""
        };
        let mut text =
            format!("\tGPU0\tGPU1\tGPU2\tGPU3\tGPU4\tGPU5\tGPU6\tGPU7\tNIC0\tNIC1{titles}\n");
        for g in 0..gpu_rows {
            let mut cells: Vec<&str> = (0..8)
                .map(|p| if p == g { " X " } else { "NV18" })
                .collect();
            let (nic, cpus, node) = match g {
                0..=2 => ("SYS", "0-47", "0"),
                6 => ("PHB", "48-95", "1"),
                _ => ("NODE", "48-95", "1"),
            };
            cells.extend([nic, nic]);
            if affinity {
                cells.extend([cpus, node]);
            }
            text.push_str(&format!("GPU{g}\t{}\n", cells.join("\t")));
        }
        text
    }

    #[test]
    fn nic_distance_is_judged_when_only_the_nic_rows_are_missing() {
        use crate::rules::testing::findings_of;
        // Every GPU row, no NIC row: the GPU-NIC cells are all there, and
        // GPUs 0-2 are far, as in the whole matrix: one finding names them.
        let f = findings_of(&TP003, &far_socket_nics(8, true));
        assert_eq!(f.len(), 1, "{f:?}");
        for gpu in ["GPU0 at SYS", "GPU1 at SYS", "GPU2 at SYS"] {
            assert!(f[0].message.contains(gpu), "{}", f[0].message);
        }
        let lines: Vec<usize> = f[0].evidence.iter().map(|e| e.span.first_line).collect();
        assert_eq!(lines, vec![2, 2, 3, 3, 4, 4]);
        assert_eq!(f[0].severity, Severity::Warning);
        // Two GPU rows lost as well: three NODE against three SYS, no
        // majority of eight, and the lost rows could have made SYS usual.
        assert!(findings_of(&TP003, &far_socket_nics(6, true)).is_empty());
        // A header without its affinity titles may have been cut at the
        // right, and with it a NIC column: not judged on the lost NIC rows.
        assert!(findings_of(&TP003, &far_socket_nics(8, false)).is_empty());
    }

    #[test]
    fn mode_prefers_the_larger_on_ties() {
        assert_eq!(mode(&[7, 7, 6, 6]), Some((7, 2)));
        assert_eq!(mode(&[3]), Some((3, 1)));
        assert_eq!(mode(&[]), None);
    }
}
