//! NC001–NC003: what NCCL's debug log (`NCCL_DEBUG=INFO`/`WARN`) says
//! about the interconnect: completion errors of its IB transport, a job
//! that fell back to TCP sockets, and NVLinked GPUs copying through host
//! memory.
//!
//! The log is the one trace of the fabric most issue reports hold: a
//! training job's output with `NCCL_DEBUG=INFO` set. It names the host of
//! every line, the network NCCL chose and the transport of every channel;
//! absence of a line is never read as evidence (`NCCL_DEBUG=WARN` prints
//! none of the INFO lines, and a paste is often a cut).

use super::context::{Context, HostKey, SectionRef};
use super::{Coverage, Evidence, Finding, Severity, Subject, Threshold};
use crate::declare_rule;
use crate::model::nccl_log::{CompletionError, NcclLog};
use crate::parse::SectionData;
use std::collections::BTreeMap;

declare_rule! {
    /// ### What it detects
    /// `NCCL WARN NET/IB : Got completion from peer … with status=N …`: a
    /// work request of NCCL's InfiniBand/RoCE transport that completed in
    /// error (the `ibv_wc_status` it prints), one finding per host and
    /// local device (the `hca` when printed, otherwise the local GID, or
    /// the peer), with the number of such lines, their statuses and peers.
    ///
    /// ### Why it matters
    /// The job dies with it (`NCCL error … remote process exited or there
    /// was a network error`). Status 12 (`IBV_WC_RETRY_EXC_ERR`, transport
    /// retry counter exceeded) means the adapter sent and never got an
    /// acknowledgement from the peer within its retries: a link that went
    /// down or flaps, a bad cable or transceiver, a switch port dropping
    /// packets, or (RoCE) a lossy Ethernet fabric without working PFC/ECN.
    /// Status 13 (`IBV_WC_RNR_RETRY_EXC_ERR`) is the peer not posting
    /// receives in time; 10 and 4 are memory access/protection errors. Status
    /// 5 (`IBV_WC_WR_FLUSH_ERR`) is what every outstanding request gets once
    /// its queue pair went to the error state: it follows another error and
    /// is never the cause, so a device with only status 5 is a `warning`.
    ///
    /// ### Evidence
    /// The first `WARN` lines of the device (host, CUDA device of the rank,
    /// status, peer, local and remote GID), and how many there were.
    ///
    /// ### What to do
    /// Check the link of the named device on both ends: `ibstat`/`ibstatus`
    /// (state, rate), `perfquery -x` or `ibqueryerrors` (symbol errors,
    /// link downed, port receive errors), `mlxlink -d <dev> -m -c -e`
    /// (BER, FEC, module temperature), then the cable and the switch port
    /// (`ibdiagnet`). Run `nccl-tests` (`all_reduce_perf`) between the two
    /// hosts to reproduce. On RoCE check PFC/ECN on the switch ports. Raise
    /// `NCCL_IB_TIMEOUT` only once the fabric is known clean.
    ///
    /// ### Thresholds and sources
    /// Any completion error other than status 5: NCCL returns
    /// `ncclRemoteError` on the first (`src/transport/net_ib.cc`,
    /// github.com/NVIDIA/nccl). Status numbers: `enum ibv_wc_status` in
    /// rdma-core's `verbs.h`, `ibv_poll_cq(3)`. NCCL troubleshooting guide,
    /// "Networking issues" (docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html).
    /// Public cases: NVIDIA/nccl issues 1405, 1664 and 1814 (status 12,
    /// vendor err 129).
    pub static NC001 = {
        id: "NC001",
        name: "nccl-ib-completion-error",
        family: Collectives,
        severity: Error,
        summary: "NCCL's IB transport got a completion error (status 12: transport retry counter exceeded)",
        needs: "an NCCL debug log (NCCL_DEBUG=INFO or WARN)",
        check: check_completion_errors,
    }
}

declare_rule! {
    /// ### What it detects
    /// An NCCL job that moves data between hosts over TCP sockets: a host
    /// printing `NCCL INFO Using network Socket` whose log shows the
    /// network in use (a channel `via NET/Socket`, or ranks on more than
    /// one host in the same log). When the paste shows why, the finding
    /// says it: `NET/IB : No device found.` on that host, or IB devices
    /// that NCCL found (`NET/IB : Using [0]mlx5_0:1/IB`) or that other tools
    /// of the paste show on that host.
    ///
    /// ### Why it matters
    /// NCCL picks its IB transport (InfiniBand or RoCE, GPUDirect RDMA)
    /// when it can, and falls back to TCP sockets when it finds no usable
    /// device or is told to (`NCCL_IB_DISABLE=1`, `NCCL_NET=Socket`). The
    /// job runs, but inter-node bandwidth is a fraction of the fabric's
    /// (a few GB/s over the management Ethernet instead of 25–50 GB/s per
    /// HDR/NDR port), and the training step time says so without an error.
    /// A job on one host uses no network at all: NCCL prints its choice
    /// there too, so a lone `Using network Socket` without a network
    /// channel or a second host is not judged.
    ///
    /// ### Evidence
    /// The `Using network Socket` line, the channel or hosts that show the
    /// network in use, and the IB lines of the host.
    ///
    /// ### What to do
    /// Check that the environment does not disable IB (`NCCL_IB_DISABLE`,
    /// `NCCL_NET`, `NCCL_IB_HCA` naming a device that does not exist); in a
    /// container, that the InfiniBand devices (`/dev/infiniband`) and
    /// `libibverbs` with the provider (`libmlx5`) are there; on the host,
    /// that `ibv_devinfo` lists the HCAs with ports `PORT_ACTIVE`. Rerun
    /// with `NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET` to see NCCL pick
    /// `NET/IB`.
    ///
    /// ### Thresholds and sources
    /// NCCL's network selection and its `Using network` line (`src/init.cc`,
    /// `src/transport/net_ib.cc`, github.com/NVIDIA/nccl); environment
    /// variables `NCCL_IB_DISABLE`, `NCCL_NET`, `NCCL_IB_HCA`
    /// (docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html).
    /// Public cases: NVIDIA/nccl issues 226 and 952 (`NET/IB : No device
    /// found`, channels `via NET/Socket`), 676.
    pub static NC002 = {
        id: "NC002",
        name: "nccl-socket-fallback",
        family: Collectives,
        severity: Warning,
        summary: "NCCL fell back to TCP sockets between hosts: inter-node bandwidth far below the fabric's",
        needs: "an NCCL debug log (NCCL_DEBUG=INFO)",
        check: check_socket_fallback,
    }
}

/// Every NCCL log of the input, with its section.
fn logs<'a>(ctx: &Context<'a>) -> Vec<(SectionRef<'a>, &'a NcclLog)> {
    ctx.sections()
        .filter_map(|at| match &at.section.data {
            SectionData::NcclLog(log) => Some((at, log)),
            _ => None,
        })
        .collect()
}

/// `ibv_wc_status` names (rdma-core `verbs.h`).
fn status_name(status: u32) -> &'static str {
    match status {
        1 => "IBV_WC_LOC_LEN_ERR",
        2 => "IBV_WC_LOC_QP_OP_ERR",
        4 => "IBV_WC_LOC_PROT_ERR",
        5 => "IBV_WC_WR_FLUSH_ERR, work request flushed",
        8 => "IBV_WC_LOC_ACCESS_ERR",
        9 => "IBV_WC_REM_INV_REQ_ERR",
        10 => "IBV_WC_REM_ACCESS_ERR",
        11 => "IBV_WC_REM_OP_ERR",
        12 => "IBV_WC_RETRY_EXC_ERR, transport retry counter exceeded",
        13 => "IBV_WC_RNR_RETRY_EXC_ERR, receiver not ready retry exceeded",
        19 => "IBV_WC_FATAL_ERR",
        20 => "IBV_WC_RESP_TIMEOUT_ERR",
        21 => "IBV_WC_GENERAL_ERR",
        _ => "see enum ibv_wc_status",
    }
}

/// The local device a completion error is about: the HCA when printed,
/// else the local GID, else the peer.
fn device_key(c: &CompletionError) -> String {
    c.ib_device
        .clone()
        .or_else(|| c.local_gid.as_ref().map(|g| format!("local GID {g}")))
        .or_else(|| c.peer.as_ref().map(|p| format!("peer {p}")))
        .unwrap_or_else(|| "IB transport".to_owned())
}

/// NC001.
fn check_completion_errors(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let logs = logs(ctx);
    if logs.is_empty() {
        return Coverage::Skipped("no NCCL debug log in the input".to_owned());
    }
    let mut groups: BTreeMap<(HostKey<'_>, String), Vec<(SectionRef<'_>, &CompletionError)>> =
        BTreeMap::new();
    for (at, log) in &logs {
        for c in &log.completion_errors {
            groups
                .entry((at.host(), device_key(c)))
                .or_default()
                .push((*at, c));
        }
    }
    for ((host, device), errors) in &groups {
        out.push(completion_finding(host.name(), device, errors));
    }
    Coverage::Checked(logs.len())
}

/// The finding for one host's device.
fn completion_finding(
    host: Option<&str>,
    device: &str,
    errors: &[(SectionRef<'_>, &CompletionError)],
) -> Finding {
    let mut statuses: Vec<u32> = errors.iter().map(|(_, c)| c.status).collect();
    statuses.sort_unstable();
    statuses.dedup();
    let mut peers: Vec<&str> = errors
        .iter()
        .filter_map(|(_, c)| c.peer.as_deref())
        .collect();
    peers.sort_unstable();
    peers.dedup();
    let only_flushed = statuses.iter().all(|s| *s == 5);
    let named: Vec<String> = statuses
        .iter()
        .map(|s| format!("status {s} ({})", status_name(*s)))
        .collect();
    let mut message = format!(
        "NCCL's IB transport got {} completion error(s) on {device}: {}",
        errors.len(),
        named.join(", ")
    );
    if !peers.is_empty() {
        message.push_str(&format!("; peer(s) {}", peers.join(", ")));
    }
    if only_flushed {
        message.push_str(": flushed requests follow another error (look for it before these lines), they are not the cause");
    }
    let subject = Subject {
        host: host.map(str::to_owned),
        device: errors.first().and_then(|(_, c)| c.ib_device.clone()),
        gpu: errors.first().and_then(|(_, c)| c.at.cuda_dev),
        ..Subject::default()
    };
    let mut finding = NC001
        .finding(subject, message)
        .threshold(Threshold::new(
            "no completion error other than status 5",
            "NCCL returns ncclRemoteError on the first completion error (src/transport/net_ib.cc); statuses: enum ibv_wc_status (rdma-core verbs.h)",
        ))
        .remediation(
            "Check the device's link on both ends (ibstat, perfquery -x / ibqueryerrors, mlxlink -d <dev> -m -c -e), then the cable/transceiver and the switch port (ibdiagnet); reproduce with nccl-tests between the two hosts; on RoCE check PFC/ECN. Status 5 (flushed) follows another error: find that one.",
        );
    if only_flushed {
        finding = finding.severity(Severity::Warning);
    }
    for (at, c) in errors.iter().take(3) {
        finding = finding.evidence(Evidence::new(
            format!(
                "NCCL WARN on CUDA device {}: status {}{}{}{}",
                c.at.cuda_dev
                    .map_or_else(|| "?".to_owned(), |d| d.to_string()),
                c.status,
                c.peer
                    .as_ref()
                    .map_or(String::new(), |p| format!(" from peer {p}")),
                c.local_gid
                    .as_ref()
                    .map_or(String::new(), |g| format!(", local GID {g}")),
                c.remote_gid
                    .as_ref()
                    .map_or(String::new(), |g| format!(", remote GID {g}")),
            ),
            c.at.span,
            at.source(),
        ));
    }
    finding
}

/// NC002.
fn check_socket_fallback(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let logs = logs(ctx);
    if logs.is_empty() {
        return Coverage::Skipped("no NCCL debug log in the input".to_owned());
    }
    // Ranks on several hosts in one launcher's output (one NCCL section
    // the input layer gave each of its hosts): the job crossed the network.
    let hosts_of = |at: &SectionRef<'_>| {
        logs.iter()
            .filter(|(o, _)| o.doc == at.doc && o.section.span == at.section.span)
            .count()
    };
    let mut judged = 0usize;
    let mut seen: Vec<HostKey<'_>> = Vec::new();
    for (at, log) in &logs {
        let Some(socket) = log.networks.iter().find(|n| n.network == "Socket") else {
            judged += usize::from(!log.networks.is_empty());
            continue;
        };
        let net_channel = log
            .channels
            .iter()
            .find(|c| c.transport.starts_with("NET/Socket"));
        let host_count = hosts_of(at);
        if net_channel.is_none() && host_count < 2 {
            // One host, no network channel shown: perhaps a job on one
            // host, which uses no network.
            continue;
        }
        judged += 1;
        if seen.contains(&at.host()) {
            continue;
        }
        seen.push(at.host());
        out.push(socket_finding(
            ctx,
            *at,
            log,
            socket,
            net_channel,
            host_count,
        ));
    }
    if judged == 0 {
        return Coverage::Skipped("no NCCL log shows the network of a job across hosts".to_owned());
    }
    Coverage::Checked(judged)
}

/// The finding for a host whose NCCL chose sockets.
fn socket_finding(
    ctx: &Context<'_>,
    at: SectionRef<'_>,
    log: &NcclLog,
    socket: &crate::model::nccl_log::NetworkChoice,
    net_channel: Option<&crate::model::nccl_log::ChannelLink>,
    host_count: usize,
) -> Finding {
    let ib = log.net_devices.iter().find(|d| d.transport == "IB");
    let hcas_elsewhere = ctx
        .latest_ib_ports()
        .iter()
        .filter(|p| p.host() == at.host() && p.is_infiniband())
        .count();
    let why = match ib {
        Some(d) if d.devices.is_empty() && hcas_elsewhere > 0 => format!(
            "NCCL found no IB device (NET/IB : No device found) although the paste shows {hcas_elsewhere} InfiniBand port(s) on this host: the devices are not visible to the job (container, libibverbs, NCCL_IB_HCA)"
        ),
        Some(d) if d.devices.is_empty() => {
            "NCCL found no IB device (NET/IB : No device found)".to_owned()
        }
        Some(d) => format!(
            "although NCCL found IB device(s) {}: IB disabled (NCCL_IB_DISABLE, NCCL_NET=Socket) or unusable",
            d.devices.join(" ")
        ),
        None if hcas_elsewhere > 0 => format!(
            "although the paste shows {hcas_elsewhere} InfiniBand port(s) on this host"
        ),
        None => "the log does not say why".to_owned(),
    };
    let shown = match net_channel {
        Some(c) => format!("channel {} via {}", c.channel, c.transport),
        None => format!("ranks on {host_count} hosts in the log"),
    };
    let mut finding = NC002
        .finding(
            Subject::host(at.host().name()),
            format!(
                "NCCL fell back to TCP sockets ({shown}): inter-node bandwidth far below the fabric's; {why}"
            ),
        )
        .evidence(Evidence::new(
            format!("NCCL INFO Using network {}", socket.network),
            socket.at.span,
            at.source(),
        ))
        .threshold(Threshold::new(
            "NCCL uses its IB transport between hosts (Using network IB)",
            "NCCL network selection (src/init.cc, src/transport/net_ib.cc); NCCL_IB_DISABLE / NCCL_NET (NCCL env docs)",
        ))
        .remediation(
            "Check NCCL_IB_DISABLE, NCCL_NET and NCCL_IB_HCA in the job's environment; in a container, /dev/infiniband and libibverbs with its provider (libmlx5); on the host, ibv_devinfo (ports PORT_ACTIVE). Rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET to see NET/IB chosen.",
        );
    if let Some(c) = net_channel {
        finding = finding.evidence(Evidence::new(
            format!("NCCL INFO Channel {:02} via {}", c.channel, c.transport),
            c.at.span,
            at.source(),
        ));
    }
    if let Some(d) = ib {
        finding = finding.evidence(Evidence::new(
            if d.devices.is_empty() {
                "NCCL INFO NET/IB : No device found.".to_owned()
            } else {
                format!("NCCL INFO NET/IB : Using {}", d.devices.join(" "))
            },
            d.at.span,
            at.source(),
        ));
    }
    finding
}

declare_rule! {
    /// ### What it detects
    /// GPUs of one host whose NCCL channels go `via SHM` (through host
    /// memory) while `nvidia-smi topo -m` of the same host, in the same
    /// input, shows NVLink (`NV#`) between every pair of its GPUs.
    ///
    /// ### Why it matters
    /// Between GPUs joined by NVLink NCCL uses its P2P transport
    /// (`P2P/IPC`, `P2P/CUMEM`, `P2P/direct pointer`): hundreds of GB/s.
    /// `SHM` copies through host memory over PCIe, an order of magnitude
    /// slower, and NCCL only falls back to it when peer-to-peer access is
    /// refused: `NCCL_P2P_DISABLE=1` or `NCCL_P2P_LEVEL` left in the
    /// environment, PCIe ACS or an IOMMU blocking peer traffic, a VM or
    /// container without P2P, a driver without the fabric manager on an
    /// NVSwitch system. Only a matrix with NVLink between every pair is
    /// judged: there any SHM channel of the host is a refused P2P path,
    /// whatever the order in which CUDA numbers the GPUs. A matrix with
    /// some pairs on PCIe only (SHM is NCCL's normal path across sockets
    /// there), a cut matrix, or a log without a matrix of the same host
    /// is not judged.
    ///
    /// ### Evidence
    /// The first `via SHM` channel line of the host, how many there are,
    /// and the matrix.
    ///
    /// ### What to do
    /// Look for `NCCL_P2P_DISABLE` and `NCCL_P2P_LEVEL` in the job's
    /// environment; run `nvidia-smi topo -p2p r` (every pair `OK`) and the
    /// CUDA sample `p2pBandwidthLatencyTest`; on bare metal disable PCIe
    /// ACS on the switches between the GPUs (or set the IOMMU to
    /// passthrough); on an NVSwitch system check that
    /// `nvidia-fabricmanager` runs; in a VM, that the hypervisor exposes
    /// P2P.
    ///
    /// ### Thresholds and sources
    /// Any `via SHM` channel on a host whose GPUs are all NVLinked. NCCL's
    /// transports and their selection (`src/transport/p2p.cc`,
    /// `src/transport/shm.cc`, github.com/NVIDIA/nccl); NCCL environment
    /// variables `NCCL_P2P_DISABLE`, `NCCL_P2P_LEVEL`
    /// (docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html);
    /// NCCL troubleshooting guide, "PCI Access Control Services (ACS)".
    pub static NC003 = {
        id: "NC003",
        name: "nccl-shm-over-nvlink",
        family: Collectives,
        severity: Warning,
        summary: "NCCL copies between NVLinked GPUs through host memory (SHM): peer-to-peer is disabled or refused",
        needs: "an NCCL debug log (NCCL_DEBUG=INFO) and nvidia-smi topo -m of the same host",
        check: check_shm_over_nvlink,
    }
}

/// NC003.
fn check_shm_over_nvlink(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let logs = logs(ctx);
    if logs.is_empty() {
        return Coverage::Skipped("no NCCL debug log in the input".to_owned());
    }
    let mut judged = 0usize;
    let mut seen: Vec<HostKey<'_>> = Vec::new();
    for (at, _) in &logs {
        let host = at.host();
        if host.name().is_none() || seen.contains(&host) {
            continue;
        }
        let Some((matrix_at, matrix)) = ctx.topo_matrices().iter().find(|(m, _)| m.host() == host)
        else {
            continue;
        };
        let all_nvlinked = matrix.is_complete()
            && matrix.gpus().count() >= 2
            && matrix.gpu_pairs_without_nvlink().is_empty();
        if !all_nvlinked {
            continue;
        }
        seen.push(host);
        judged += 1;
        // The host's SHM channels, from every NCCL section of it.
        let shm: Vec<(SectionRef<'_>, &crate::model::nccl_log::ChannelLink)> = logs
            .iter()
            .filter(|(o, _)| o.host() == host)
            .flat_map(|(o, l)| {
                l.channels
                    .iter()
                    .filter(|c| c.transport_family() == "SHM")
                    .map(move |c| (*o, c))
            })
            .collect();
        let Some((first_at, first)) = shm.first() else {
            continue;
        };
        out.push(
            NC003
                .finding(
                    Subject::host(host.name()),
                    format!(
                        "{} NCCL channel(s) between GPUs of this host go via SHM (host memory) although nvidia-smi topo -m shows NVLink between every GPU pair: peer-to-peer is disabled or refused (NCCL_P2P_DISABLE, NCCL_P2P_LEVEL, PCIe ACS/IOMMU, a VM)",
                        shm.len()
                    ),
                )
                .evidence(Evidence::new(
                    format!(
                        "NCCL INFO Channel {:02} : {} -> {} via {}",
                        first.channel, first.from_rank, first.to_rank, first.transport
                    ),
                    first.at.span,
                    first_at.source(),
                ))
                .evidence(Evidence::new(
                    format!(
                        "nvidia-smi topo -m: NVLink between all {} GPUs",
                        matrix.gpus().count()
                    ),
                    matrix_at.section.span,
                    matrix_at.source(),
                ))
                .threshold(Threshold::new(
                    "no SHM channel between NVLinked GPUs",
                    "NCCL's P2P and SHM transports (src/transport/p2p.cc, shm.cc); NCCL_P2P_DISABLE / NCCL_P2P_LEVEL (NCCL env docs); NCCL troubleshooting, PCI ACS",
                ))
                .remediation(
                    "Check NCCL_P2P_DISABLE and NCCL_P2P_LEVEL in the job's environment; run nvidia-smi topo -p2p r and p2pBandwidthLatencyTest; disable PCIe ACS (or IOMMU passthrough) on bare metal; on NVSwitch systems check nvidia-fabricmanager; in a VM, that P2P is exposed.",
                ),
        );
    }
    if judged == 0 {
        return Coverage::Skipped(
            "no NCCL log beside an nvidia-smi topo -m of the same host with NVLink between every GPU pair".to_owned(),
        );
    }
    Coverage::Checked(judged)
}
