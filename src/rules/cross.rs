//! Verdicts joining several tools (`XS0xx`): one per GPU and its rail.
//!
//! A GPU node's unit of work is a GPU with its NVLinks and the InfiniBand
//! port of the NIC next to it (its *rail*). `nvidia-smi topo -m` says which
//! NIC is next to which GPU, `ibstat` (or `ibstatus`, `ibv_devinfo`) says how
//! that NIC's port is, and `nvidia-smi nvlink -s` how the GPU's links are.
//! Joined, they answer the operator's question "which GPUs of this node are
//! fully usable?".

use super::context::{Context, HostKey, IbPortRef, NvGpuRef};
use super::nvlink::expected_active;
use super::topology::gpu_index;
use super::{gbps, Coverage, Evidence, Finding, Severity};
use super::{Subject, Threshold};
use crate::declare_rule;
use crate::model::ib::{PhysState, PortState};
use crate::model::topo::Link;
use crate::span::LineSpan;
use std::collections::BTreeMap;

declare_rule! {
    /// ### What it detects
    /// A GPU whose rail is impaired: the InfiniBand port of its nearest NIC
    /// is not Active, or runs below the host's other rails, or the GPU has
    /// fewer active NVLinks than expected. One finding per GPU, naming every
    /// impaired part.
    ///
    /// ### Why it matters
    /// Collective jobs place one rank per GPU and send its inter-node traffic
    /// through its nearest NIC (GPUDirect RDMA). A GPU whose rail is down
    /// must borrow a far NIC through the CPU, and the whole job slows to its
    /// pace; the per-tool findings say what broke, this one says which GPU
    /// pays for it.
    ///
    /// ### Evidence
    /// The GPU↔NIC cell of `nvidia-smi topo -m` (with the NIC legend naming
    /// the RDMA device), the port's state and rate, and the GPU's NVLink
    /// count.
    ///
    /// ### What to do
    /// Fix the parts named (see the IB and NVLink findings for the same
    /// device); until then drain the node or exclude the GPU.
    ///
    /// ### Thresholds and sources
    /// Port Active/LinkUp at the host's best rail rate; NVLink count as in
    /// NV001 (knowledge base or peers). Rail = nearest NIC in `topo -m`
    /// (`PIX`/`PXB` on DGX/HGX designs). A port of the NIC that never
    /// linked (Down/Polling, no LID ever assigned) beside an Active one
    /// does not impair the rail: the second port of a dual-port card left
    /// uncabled (IB001 reports it). One that had a LID and lost it does.
    pub static XS001 = {
        id: "XS001",
        name: "gpu-rail-impaired",
        family: Cross,
        severity: Error,
        summary: "GPU's rail (nearest NIC port, NVLinks) impaired: one verdict per GPU",
        needs: "nvidia-smi topo -m with a NIC legend, and ibstat/ibstatus/ibv_devinfo/rdma link from the same host",
        check: check_rails,
    }
}

/// XS001.
fn check_rails(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let ports = ctx.latest_ib_ports();
    let mut ports_of: BTreeMap<(HostKey<'_>, &str), Vec<&IbPortRef<'_>>> = BTreeMap::new();
    // A header-less port's adapter is unknown: no NIC of the matrix is it.
    for p in ports.iter().filter(|p| p.headerless.is_none()) {
        ports_of.entry((p.host(), p.device)).or_default().push(p);
    }
    let nv_gpus = ctx.nvlink_gpus();
    let mut nv_of: BTreeMap<(HostKey<'_>, u32), &NvGpuRef<'_>> = BTreeMap::new();
    let mut nv_peers: BTreeMap<(HostKey<'_>, &str), usize> = BTreeMap::new();
    for g in nv_gpus.iter().filter(|g| !g.headerless) {
        nv_of.insert((g.host, g.index), g);
        let e = nv_peers.entry((g.host, g.name)).or_default();
        *e = (*e).max(g.active_count());
    }
    let mut checked = 0;
    for &(at, m) in ctx.topo_matrices() {
        let host = at.host();
        // Best rail rate on the host, among Active IB ports of the matrix's NICs.
        let rail_ports = |nic: &str| -> Vec<&IbPortRef<'_>> {
            let dev = m
                .device(nic)
                .and_then(|d| d.rdma_device.as_deref())
                .unwrap_or(nic);
            ports_of.get(&(host, dev)).cloned().unwrap_or_default()
        };
        let best_rate = m
            .nics()
            .flat_map(|n| rail_ports(&n.name))
            .filter(|p| p.is_infiniband() && p.is_active())
            .filter_map(|p| p.rate_gbps)
            .fold(None, |best: Option<f64>, r| {
                Some(best.map_or(r, |b| b.max(r)))
            });
        for gpu in m.gpus() {
            let nearest = m.nearest_nics(&gpu.name);
            let Some(cell) = nearest.first() else {
                continue;
            };
            // Only NICs on the GPU's own PCIe switch are its rail.
            if !matches!(cell.value, Link::Pix | Link::Pxb) {
                continue;
            }
            let rail = rail_ports(&cell.to);
            if rail.is_empty() {
                continue;
            }
            checked += 1;
            let mut problems: Vec<(Severity, String)> = Vec::new();
            // Evidence of the problems found; the matrix cell that makes
            // the NIC this GPU's rail leads it, written only when there is
            // a problem (most rails are healthy).
            let mut evidence: Vec<Evidence> = Vec::new();
            // A port that never linked beside an Active port of its NIC
            // (the second port of a dual-port card left uncabled) takes
            // nothing from the GPU: its rail runs over the Active one.
            // IB001 reports the port.
            let lit = rail.iter().any(|p| p.is_infiniband() && p.is_active());
            for p in &rail {
                if !p.is_infiniband() || (lit && super::ib_port::never_linked(p)) {
                    continue;
                }
                if !p.is_active() {
                    problems.push((
                        Severity::Error,
                        format!(
                            "{} is {}/{}",
                            p.name(),
                            p.state.map_or("?", PortState::ibstat_name),
                            p.physical_state.map_or("?", PhysState::ibstat_name)
                        ),
                    ));
                    evidence.push(p.evidence(format!(
                        "State: {}, Physical state: {}",
                        p.state.map_or("(not printed)", PortState::ibstat_name),
                        p.physical_state.map_or("(not printed)", PhysState::ibstat_name)
                    )));
                } else if let (Some(rate), Some(best)) = (p.rate_gbps, best_rate) {
                    if rate < best {
                        problems.push((
                            Severity::Warning,
                            format!(
                                "{} runs at {} Gb/s, other rails at {}",
                                p.name(),
                                gbps(rate),
                                gbps(best)
                            ),
                        ));
                        evidence.push(p.evidence(format!("Rate: {}", gbps(rate))));
                    }
                }
            }
            let index = gpu_index(&gpu.name);
            let nv = index.and_then(|i| nv_of.get(&(host, i)).copied());
            if let Some(g) = nv {
                let peers = nv_peers.get(&(host, g.name)).copied().unwrap_or(0);
                if let Some(expected) = expected_active(g, peers) {
                    let active = g.active_count();
                    let listed_all = g.all_inactive.is_some()
                        || (g.status.len() >= expected.active && g.listing_cut.is_none());
                    if listed_all && active < expected.active {
                        problems.push((
                            Severity::Error,
                            format!("{active} of {} NVLinks active", expected.active),
                        ));
                        if let Some((_, (sat, link))) =
                            g.status.iter().find(|(_, (_, l))| l.inactive)
                        {
                            evidence.push(Evidence::new(
                                format!("nvidia-smi nvlink -s: Link {}: <inactive>", link.link),
                                link.span,
                                sat.source(),
                            ));
                        } else if let Some((sat, span)) = g.all_inactive {
                            evidence.push(Evidence::new(
                                "nvidia-smi nvlink: all links are inactive",
                                span,
                                sat.source(),
                            ));
                        }
                    }
                }
            }
            let Some(worst) = problems.iter().map(|(s, _)| *s).max() else {
                continue;
            };
            let text: Vec<&str> = problems.iter().map(|(_, t)| t.as_str()).collect();
            let mut f = XS001
                .finding(
                    Subject {
                        host: host.name().map(str::to_owned),
                        gpu: index,
                        gpu_uuid: nv.and_then(|g| g.uuid.map(str::to_owned)),
                        nic: Some(cell.to.to_string()),
                        ..Subject::default()
                    },
                    format!(
                        "{} rail impaired: {} (nearest NIC {} at {})",
                        gpu.name,
                        text.join("; "),
                        cell.to,
                        cell.value.label()
                    ),
                )
                .severity(worst)
                .threshold(Threshold::new(
                    "rail port Active/LinkUp at the host's best rate; all expected NVLinks active",
                    "fabricscope rail model (topo -m nearest NIC), NHC/gcm port checks, NV001 expectations",
                ))
                .remediation("Fix the parts named (see the IB and NVLink findings for the same devices); until then drain the node or keep jobs off this GPU.");
            f = f.evidence(Evidence::new(
                format!(
                    "nvidia-smi topo -m: {} ↔ {}: {}",
                    gpu.name,
                    cell.to,
                    cell.value.label()
                ),
                LineSpan::line(cell.line),
                at.source(),
            ));
            for e in evidence {
                f = f.evidence(e);
            }
            out.push(f);
        }
    }
    if checked == 0 {
        return Coverage::Skipped(
            "no GPU with a NIC on its PCIe switch whose port state is in the input (needs topo -m and ibstat from one host)"
                .to_owned(),
        );
    }
    Coverage::Checked(checked)
}
