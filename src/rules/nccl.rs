//! NC001–NC004: what NCCL's debug log (`NCCL_DEBUG=INFO`/`WARN`) says
//! about the interconnect: completion errors of its IB transport, a job
//! that fell back to TCP sockets, NVLinked GPUs copying through host
//! memory, and the IB devices' async events and failed verbs calls.
//!
//! The log is the one trace of the fabric most issue reports hold: a
//! training job's output with `NCCL_DEBUG=INFO` set. It names the host of
//! every line, the network NCCL chose and the transport of every channel;
//! absence of a line is never read as evidence (`NCCL_DEBUG=WARN` prints
//! none of the INFO lines, and a paste is often a cut).

use super::context::{Context, HostKey, SectionRef};
use super::{Coverage, Evidence, Finding, Severity, Subject, Threshold};
use crate::declare_rule;
use crate::model::nccl_log::{CompletionError, IbAsyncEvent, NcclLog, VerbsFailure};
use crate::parse::SectionData;
use std::collections::BTreeMap;

declare_rule! {
    /// ### What it detects
    /// `NCCL WARN NET/IB : Got completion from peer … with status=N …`: a
    /// work request of NCCL's InfiniBand/RoCE transport that completed in
    /// error (the `ibv_wc_status` it prints), one finding per host and
    /// local device, with the number of such lines, their statuses and the
    /// remote peers (their address without each connection's port, and
    /// their GID when printed). The subject names the local device: the
    /// `hca` when printed (2.23 on), else the device a failed
    /// `ibv_modify_qp` of the same host names for the same local GID (2.24
    /// on prints both), else the local GID (`local GID ::ffff:10.0.0.1`,
    /// RoCE); a line with none of these is grouped by its peer.
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
/// else the device another line of the host names for its local GID
/// (`ibv_modify_qp … on dev mlx5_1:1 … local GID …`, NCCL 2.24 on), else
/// the local GID, else the peer.
fn device_key(c: &CompletionError, gid_devices: &[(&str, &str)]) -> String {
    c.ib_device
        .clone()
        .or_else(|| {
            let g = c.local_gid.as_deref()?;
            gid_devices
                .iter()
                .find(|(gid, _)| *gid == g)
                .map(|(_, d)| (*d).to_owned())
        })
        .or_else(|| c.local_gid.as_ref().map(|g| format!("local GID {g}")))
        .or_else(|| c.peer.as_ref().map(|p| format!("peer {}", peer_address(p))))
        .unwrap_or_else(|| "IB transport".to_owned())
}

/// `10.0.0.2` of `10.0.0.2<43172>`: the peer without the port of one
/// connection (each channel has its own).
fn peer_address(p: &str) -> &str {
    p.split('<').next().unwrap_or(p)
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
        let gid_devices: Vec<(&str, &str)> = logs
            .iter()
            .filter(|(o, _)| o.host() == at.host())
            .flat_map(|(_, l)| &l.verbs_failures)
            .filter_map(|v| Some((v.local_gid.as_deref()?, v.device.as_deref()?)))
            .collect();
        for c in &log.completion_errors {
            groups
                .entry((at.host(), device_key(c, &gid_devices)))
                .or_default()
                .push((*at, c));
        }
    }
    for ((host, device), errors) in &groups {
        out.push(completion_finding(host.name(), device, errors));
    }
    Coverage::Checked(logs.len())
}

/// The finding for one host's device: its subject names the device (the
/// HCA, or the local GID when NCCL printed no HCA), the message the
/// remote peers and their GIDs.
fn completion_finding(
    host: Option<&str>,
    device: &str,
    errors: &[(SectionRef<'_>, &CompletionError)],
) -> Finding {
    let mut statuses: Vec<u32> = errors.iter().map(|(_, c)| c.status).collect();
    statuses.sort_unstable();
    statuses.dedup();
    let mut peers: Vec<String> = errors
        .iter()
        .filter_map(|(_, c)| {
            let p = peer_address(c.peer.as_deref()?);
            Some(match &c.remote_gid {
                Some(g) => format!("{p} (GID {g})"),
                None => p.to_owned(),
            })
        })
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
    // A device named by its peer says the peer already.
    if !peers.is_empty() && !device.starts_with("peer ") {
        message.push_str(&format!("; remote peer(s) {}", peers.join(", ")));
    }
    if only_flushed {
        message.push_str(": flushed requests follow another error (look for it before these lines), they are not the cause");
    }
    let first_gpu = errors.first().and_then(|(_, c)| c.at.cuda_dev);
    let subject = Subject {
        host: host.map(str::to_owned),
        device: (device != "IB transport" && !device.starts_with("peer "))
            .then(|| device.to_owned()),
        gpu: first_gpu.filter(|g| errors.iter().all(|(_, c)| c.at.cuda_dev == Some(*g))),
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
                "NCCL WARN on CUDA device {}: status {}{}{}{}{}",
                c.at.cuda_dev
                    .map_or_else(|| "?".to_owned(), |d| d.to_string()),
                c.status,
                c.peer
                    .as_ref()
                    .map_or(String::new(), |p| format!(" from peer {p}")),
                c.ib_device
                    .as_ref()
                    .map_or(String::new(), |d| format!(", hca {d}")),
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

declare_rule! {
    /// ### What it detects
    /// What NCCL's IB transport says of the devices under it apart from
    /// completion errors (NC001): the asynchronous events of an HCA
    /// (`NET/IB : Got async event : port error`, `NET/IB : mlx5_0:1 async
    /// fatal event: local catastrophic error`, … in each release's
    /// wording) and the verbs calls that failed (`Call to ibv_create_qp
    /// failed with error Cannot allocate memory`, `Call to ibv_modify_qp
    /// failed with 110 Connection timed out, on dev mlx5_0:1 …`, `NET/IB :
    /// Unable to open device mlx5_1`). One finding per host and device for
    /// events, per host and call for failed calls.
    ///
    /// ### Why it matters
    /// An async event is the adapter telling every process that opened it
    /// what happened to it. `local catastrophic error`
    /// (`IBV_EVENT_DEVICE_FATAL`) is a dead HCA: every queue pair on it is
    /// gone until the driver resets it (`error`). A queue pair or
    /// completion queue fatal event (`local work queue catastrophic
    /// error`, `local access violation work queue error`, `CQ error`)
    /// breaks the connections on it; NCCL 2.23 on fails the communicator
    /// (`error`). `port error` (`IBV_EVENT_PORT_ERR`) is the port's link
    /// going down during the run: the connections through it time out.
    /// When the host's log shows that harm, a completion error of the host
    /// after the `port error` (NC001's status 12), it is an `error`.
    /// Otherwise it is a `warning`: when the same device and port prints
    /// `port active` after it, the link came back (a flap, which a bad
    /// cable or transceiver repeats); when it does not, the paste may end
    /// before either the recovery or the failure, and the absence of
    /// `port active` is no evidence. A `port active` alone is the end of a
    /// flap whose start the paste does not hold (`warning`). A failed verbs call stops NCCL's setup of a
    /// connection or a buffer (`ncclSystemError`, `unhandled system error`)
    /// and says why in its errno: `Cannot allocate memory` is nearly always
    /// the locked-memory limit (RDMA pins what it registers),
    /// `ibv_modify_qp` timing out (110) is a connection whose path to the
    /// remote GID cannot be resolved (RoCE GID index, routing between
    /// rails), `Invalid argument` there a forced wrong GID index (`error`).
    ///
    /// Not judged: the events a healthy fabric sends every process on a
    /// subnet manager handover or re-sweep (`SM change`, `LID change`,
    /// `client reregistration`, `P_Key change`), a RoCE address added or
    /// removed (`GID table change`), the events NCCL does not use (`path
    /// migrated`, `SRQ …`, `last WQE reached`, `send queue drained`), and
    /// NCCL's INFO `retrying` lines of `ibv_modify_qp` (2.24 on: the call
    /// is retried; only its final WARN is a failure). A device NCCL could
    /// not open, query or query a port of (`NET/IB : Unable to open device
    /// mlx5_5`) is skipped by NCCL, and a container or SR-IOV pod sees
    /// every HCA of the host and may open only its own: it is judged (a
    /// `warning`) only where the same host's log shows NCCL then found no
    /// IB device at all (`NET/IB : No device found.`); a log that lists the
    /// devices NCCL uses, or none (cut, `NCCL_DEBUG=WARN`), is not judged. A line the paste's end cut inside its event or error is
    /// partial (IN001), not judged.
    ///
    /// ### Evidence
    /// The first lines of the device or call (host, CUDA device of the
    /// rank, the event or the call, errno and its text, the queue pair's
    /// state change and GIDs when printed), and how many there were.
    ///
    /// ### What to do
    /// Events: check the named port on both ends (`ibstat`, `perfquery -x`
    /// `LinkDownedCounter`, `mlxlink -d <dev> -m -c -e`, the switch port's
    /// counters), reseat or replace the cable/transceiver, and for a
    /// catastrophic error read `dmesg` (`mlx5_core … health`, `fw_syndrome`),
    /// update the firmware or replace the HCA, and drain the node. Failed
    /// calls: per errno (the finding says which): `ulimit -l unlimited` for
    /// the job (containers `--ulimit memlock=-1`, Slurm
    /// `PropagateResourceLimits`, systemd `LimitMEMLOCK=infinity`);
    /// `NCCL_IB_GID_INDEX`/`show_gids` and routing for RoCE, `NCCL_CROSS_NIC=0`
    /// on rail-optimised fabrics (NCCL's own hint); `nvidia-peermem` (or
    /// DMA-BUF) for GPU memory registration; `/dev/infiniband` and
    /// `IPC_LOCK` in containers.
    ///
    /// ### Thresholds and sources
    /// Any fatal or port event, any failed verbs call. Line shapes:
    /// `ncclIbAsyncThreadMain` (`src/transport/net_ib.cc`, from 2.29
    /// `src/transport/net_ib/common.cc`), `src/misc/ibvwrap.cc`,
    /// `src/include/ibvwrap.h` (github.com/NVIDIA/nccl, 2.4 to 2.30); the
    /// events' words: rdma-core `ibv_event_type_str`, `ibv_get_async_event(3)`;
    /// NCCL's `ibv_modify_qp` hints (`printIbModifyQpHint`: 110 →
    /// `NCCL_CROSS_NIC`, 22 → `NCCL_IB_GID_INDEX`); NCCL troubleshooting
    /// guide (locked memory, GPU Direct RDMA). Public cases: NVIDIA/nccl
    /// issues 230 (local catastrophic error), 905 and Lightning-AI/lit-llama
    /// 380 (port error, then status 12), 1129 and 562 (`ibv_create_qp`),
    /// 2013 and nccl-tests 227 (`ibv_modify_qp` 110), nccl-tests 185
    /// (`Network is unreachable`), 1710 (QP access violation).
    pub static NC004 = {
        id: "NC004",
        name: "nccl-ib-device-event",
        family: Collectives,
        severity: Error,
        summary: "NCCL's IB transport reports a device event (port error, catastrophic error) or a failed verbs call",
        needs: "an NCCL debug log (NCCL_DEBUG=INFO or WARN)",
        check: check_device_events,
    }
}

/// What NC004 makes of an async event's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EventKind {
    /// `local catastrophic error`: the HCA.
    DeviceFatal,
    /// A queue pair's or completion queue's fatal error.
    QueueFatal,
    /// `port error`.
    PortDown,
    /// `port active`.
    PortUp,
    /// Subnet manager and address events, events NCCL does not use.
    NotJudged,
}

fn event_kind(event: &str) -> EventKind {
    match event {
        "local catastrophic error" => EventKind::DeviceFatal,
        "local work queue catastrophic error"
        | "invalid request local work queue error"
        | "local access violation work queue error"
        | "CQ error"
        | "WQ fatal" => EventKind::QueueFatal,
        "port error" => EventKind::PortDown,
        "port active" => EventKind::PortUp,
        _ => EventKind::NotJudged,
    }
}

/// A host's device and port as an event names them (`None` before NCCL
/// 2.20, which did not print it).
type DeviceKey<'a> = (HostKey<'a>, Option<&'a str>, Option<u32>);

/// NC004.
fn check_device_events(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let logs = logs(ctx);
    if logs.is_empty() {
        return Coverage::Skipped("no NCCL debug log in the input".to_owned());
    }
    // A log holding nothing but a cut event or call says nothing.
    let judged = logs.iter().filter(|(_, l)| !only_cut_lines(l)).count();
    if judged == 0 {
        return Coverage::Skipped(
            "the NCCL log's only line is cut by the end of the paste".to_owned(),
        );
    }
    let mut events: BTreeMap<DeviceKey<'_>, Vec<(SectionRef<'_>, &IbAsyncEvent)>> = BTreeMap::new();
    let mut calls: BTreeMap<(HostKey<'_>, &str), Vec<(SectionRef<'_>, &VerbsFailure)>> =
        BTreeMap::new();
    for (at, log) in &logs {
        for e in log.ib_async_events.iter().filter(|e| e.partial.is_none()) {
            events
                .entry((at.host(), e.device.as_deref(), e.port))
                .or_default()
                .push((*at, e));
        }
        for v in log.verbs_failures.iter().filter(|v| v.partial.is_none()) {
            calls
                .entry((at.host(), v.call.as_str()))
                .or_default()
                .push((*at, v));
        }
    }
    let mut dead_hcas: Vec<HostKey<'_>> = Vec::new();
    for ((host, device, port), list) in &mut events {
        list.sort_by_key(|(at, e)| (at.doc, e.at.span.first_line));
        // The host's completion errors: connections that failed, the harm
        // a port event did (a completion error naming another HCA is not).
        let failed: Vec<(SectionRef<'_>, &CompletionError)> = logs
            .iter()
            .filter(|(o, _)| o.host() == *host)
            .flat_map(|(o, l)| l.completion_errors.iter().map(move |c| (*o, c)))
            .filter(|(_, c)| {
                device.is_none() || c.ib_device.is_none() || c.ib_device.as_deref() == *device
            })
            .collect();
        if let Some(f) = event_finding(host.name(), *device, *port, list, &failed) {
            if list
                .iter()
                .any(|(_, e)| event_kind(&e.event) == EventKind::DeviceFatal)
            {
                dead_hcas.push(*host);
            }
            out.push(f);
        }
    }
    for ((host, call), list) in &calls {
        // `ibv_get_async_event` fails once the HCA is dead: part of that.
        if *call == "ibv_get_async_event" && dead_hcas.contains(host) {
            continue;
        }
        let probing = matches!(
            *call,
            "ibv_open_device" | "ibv_query_device" | "ibv_query_port"
        );
        // A device NCCL could not open is one it skips: judged only where
        // the host's log shows NCCL then found no IB device at all. A log
        // without the device list (cut, or NCCL_DEBUG=WARN) says nothing
        // of the others.
        let found_none = logs.iter().any(|(o, l)| {
            o.host() == *host
                && l.net_devices
                    .iter()
                    .any(|d| d.transport == "IB" && d.devices.is_empty())
        });
        if probing && !found_none {
            continue;
        }
        out.push(call_finding(host.name(), call, list, probing));
    }
    Coverage::Checked(judged)
}

/// Whether every NCCL line of `log` is a cut event or call.
fn only_cut_lines(log: &NcclLog) -> bool {
    let cut = log
        .ib_async_events
        .iter()
        .filter(|e| e.partial.is_some())
        .count()
        + log
            .verbs_failures
            .iter()
            .filter(|v| v.partial.is_some())
            .count();
    cut > 0
        && cut == log.warnings.len()
        && log.versions.is_empty()
        && log.networks.is_empty()
        && log.net_devices.is_empty()
        && log.channels.is_empty()
        && log.other_nccl_lines == 0
}

/// `mlx5_0:1`, or the words for a device the line does not name.
fn device_words(device: Option<&str>, port: Option<u32>) -> String {
    match (device, port) {
        (Some(d), Some(p)) => format!("{d}:{p}"),
        (Some(d), None) => d.to_owned(),
        _ => UNNAMED_DEVICE.to_owned(),
    }
}

/// What an event of NCCL before 2.20 is on: it printed no device.
const UNNAMED_DEVICE: &str = "an IB port the log does not name (NCCL before 2.20 prints none)";

/// The finding for one host's device and port, if its events are judged.
fn event_finding(
    host: Option<&str>,
    device: Option<&str>,
    port: Option<u32>,
    list: &[(SectionRef<'_>, &IbAsyncEvent)],
    failed: &[(SectionRef<'_>, &CompletionError)],
) -> Option<Finding> {
    let kind_at = |k: EventKind| list.iter().rposition(|(_, e)| event_kind(&e.event) == k);
    let count = |k: EventKind| {
        list.iter()
            .filter(|(_, e)| event_kind(&e.event) == k)
            .count()
    };
    let processes = {
        let mut p: Vec<Option<u32>> = list.iter().map(|(_, e)| e.at.pid).collect();
        p.sort_unstable();
        p.dedup();
        p.len()
    };
    let on = device_words(device, port);
    // `the port mlx5_0:1`, or the unnamed port's words.
    let port_words = if device.is_some() {
        format!("the port {on}")
    } else {
        on.clone()
    };
    let fatal = list.iter().find(|(_, e)| {
        matches!(
            event_kind(&e.event),
            EventKind::DeviceFatal | EventKind::QueueFatal
        )
    });
    // The first completion error of the host after the first `port error`.
    let harm = list
        .iter()
        .find(|(_, e)| event_kind(&e.event) == EventKind::PortDown)
        .and_then(|(at, e)| {
            failed
                .iter()
                .find(|(o, c)| (o.doc, c.at.span.first_line) > (at.doc, e.at.span.first_line))
        });
    let (severity, message, first_kinds): (Severity, String, &[EventKind]) = if let Some((_, e)) =
        list.iter()
            .find(|(_, e)| event_kind(&e.event) == EventKind::DeviceFatal)
    {
        (
                Severity::Error,
                format!(
                    "NCCL's IB transport got `{}` on {on} ({} line(s), {processes} process(es)): the HCA failed (IBV_EVENT_DEVICE_FATAL); every connection on it is gone until the driver resets it",
                    e.event,
                    count(EventKind::DeviceFatal)
                ),
                &[EventKind::DeviceFatal, EventKind::PortDown],
            )
    } else if let Some((_, e)) = fatal {
        (
                Severity::Error,
                format!(
                    "NCCL's IB transport got the fatal queue event `{}` on {on} ({} line(s)): the connections on that queue are broken and the communicator fails",
                    e.event,
                    count(EventKind::QueueFatal)
                ),
                &[EventKind::QueueFatal, EventKind::PortDown],
            )
    } else {
        // Whether the port came back is read from a `port active` after
        // the last `port error`; its absence is no evidence (the paste may
        // end before it). What makes a port event an error is harm the log
        // shows: a completion error of the host after the first `port error`.
        match (kind_at(EventKind::PortDown), kind_at(EventKind::PortUp)) {
                (Some(down), up) => {
                    let recovered = up.is_some_and(|up| up > down);
                    let downs = count(EventKind::PortDown);
                    let words = match (recovered, harm.is_some()) {
                        (true, true) => format!(
                            "{port_words} went down during the run ({downs} `port error` event(s)) and came back (`port active`), and connections of the host failed after it went down (completion errors): the job lost them"
                        ),
                        (true, false) => format!(
                            "{port_words} went down during the run and came back: {downs} `port error` and {} `port active` event(s), the last `port active` after the last `port error` (a link flap; a job whose retries ran out while it was down fails)",
                            count(EventKind::PortUp)
                        ),
                        (false, true) => format!(
                            "{port_words} went down during the run ({downs} `port error` event(s) from {processes} process(es)), and connections of the host failed after it (completion errors); the log shows no `port active` after it"
                        ),
                        (false, false) => format!(
                            "{port_words} went down during the run ({downs} `port error` event(s) from {processes} process(es)); the log shows neither the port coming back nor a connection failing (it may end before either)"
                        ),
                    };
                    (
                        if harm.is_some() {
                            Severity::Error
                        } else {
                            Severity::Warning
                        },
                        words,
                        &[EventKind::PortDown, EventKind::PortUp],
                    )
                }
                (None, Some(_)) => (
                    Severity::Warning,
                    format!(
                        "{port_words} came up during the run ({} `port active` event(s)): it was down before, perhaps before the paste begins (a link flap)",
                        count(EventKind::PortUp)
                    ),
                    &[EventKind::PortUp],
                ),
                (None, None) => return None,
            }
    };
    // The HCA's event: every rank that opened it prints it, whatever its
    // GPU; the GPU is no part of the subject.
    let subject = Subject {
        host: host.map(str::to_owned),
        device: device.map(str::to_owned),
        port,
        ..Subject::default()
    };
    let mut finding = NC004
        .finding(subject, message)
        .severity(severity)
        .threshold(Threshold::new(
            "no fatal or port event of an IB device during the run",
            "ncclIbAsyncThreadMain (src/transport/net_ib.cc, net_ib/common.cc); event words: rdma-core ibv_event_type_str, ibv_get_async_event(3)",
        ))
        .remediation(if fatal.is_some() {
            "Drain the node. Read dmesg for the HCA (mlx5_core health / fw_syndrome / catastrophic error), check the firmware (mlxfwmanager, flint), reset the device or reboot; replace the HCA if it recurs. Then check the port (ibstat) before returning the node."
        } else {
            "Check the port on both ends: ibstat (state, rate), perfquery -x (LinkDownedCounter, SymbolErrorCounter), mlxlink -d <dev> -m -c -e (BER, module temperature, FEC), the switch port's counters (ibdiagnet / ibqueryerrors); reseat or replace the cable/transceiver. A flapping port fails jobs again: drain the node until it is clean."
        });
    // The lines that say it: the first of each kind the message names.
    for kind in first_kinds {
        if let Some((at, e)) = list.iter().find(|(_, e)| event_kind(&e.event) == *kind) {
            finding = finding.evidence(Evidence::new(
                format!(
                    "NCCL WARN on CUDA device {}: async event `{}` on {}",
                    e.at.cuda_dev
                        .map_or_else(|| "?".to_owned(), |d| d.to_string()),
                    e.event,
                    device_words(e.device.as_deref(), e.port)
                ),
                e.at.span,
                at.source(),
            ));
        }
    }
    if let (None, Some((at, c))) = (fatal, harm) {
        finding = finding.evidence(Evidence::new(
            format!(
                "NCCL WARN on CUDA device {}: completion error status {} after the port went down{}",
                c.at.cuda_dev
                    .map_or_else(|| "?".to_owned(), |d| d.to_string()),
                c.status,
                c.peer
                    .as_deref()
                    .map_or(String::new(), |p| format!(" (peer {})", peer_address(p))),
            ),
            c.at.span,
            at.source(),
        ));
    }
    if fatal.is_some() {
        if let Some((at, e)) = list.iter().find(|(_, e)| {
            fatal.is_some_and(|(_, f)| f.event != e.event)
                && event_kind(&e.event) == EventKind::QueueFatal
        }) {
            finding = finding.evidence(Evidence::new(
                format!("NCCL WARN: async event `{}`", e.event),
                e.at.span,
                at.source(),
            ));
        }
    }
    Some(finding)
}

/// An errno's name, what it most often means for `call`, and what to do.
fn errno_meaning(
    call: &str,
    errno: Option<u32>,
) -> (Option<&'static str>, &'static str, &'static str) {
    let name = errno.and_then(|n| {
        crate::parse::nccl_log::ERRNOS
            .iter()
            .find(|(e, _, _)| *e == n)
            .map(|(_, name, _)| *name)
    });
    let (why, fix) = match (call, errno) {
        (_, Some(12)) => (
            "the locked-memory limit (RDMA pins the memory it registers)",
            "set `ulimit -l unlimited` for the job (containers: --ulimit memlock=-1; Slurm: PropagateResourceLimits and slurmd's LimitMEMLOCK=infinity) and check it inside the job",
        ),
        ("ibv_modify_qp", Some(110)) => (
            "a connection whose path to the remote GID could not be resolved (RoCE GID index or routing, rails that do not reach each other)",
            "on RoCE check NCCL_IB_GID_INDEX against show_gids and the VLAN/IP routing between the two ports; on a rail-optimised fabric set NCCL_CROSS_NIC=0 (NCCL's own hint)",
        ),
        ("ibv_modify_qp", Some(22)) => (
            "a wrong GID index forced by NCCL_IB_GID_INDEX, or a path MTU the port does not support",
            "unset NCCL_IB_GID_INDEX or set it to -1 (NCCL's own hint); check the ports' MTU",
        ),
        ("ibv_modify_qp", Some(101 | 113)) => (
            "no route to the remote GID",
            "check that the RoCE subnets/VLANs of the two ports reach each other, and that NCCL_IB_GID_INDEX picks a GID with a route (show_gids)",
        ),
        (_, Some(14)) => (
            "a buffer the adapter cannot map (GPU memory without GPUDirect RDMA support)",
            "load nvidia-peermem (lsmod | grep peermem) or use DMA-BUF (NCCL_DMABUF_ENABLE, recent kernel and driver)",
        ),
        (_, Some(1 | 13)) => (
            "no permission on the verbs device",
            "give the job /dev/infiniband/uverbs* and the IPC_LOCK capability (containers: --device /dev/infiniband --cap-add IPC_LOCK)",
        ),
        (_, Some(5 | 6 | 19)) => (
            "a device that is gone or was reset under the job",
            "read dmesg for the HCA (mlx5_core health, fatal errors), check its firmware and PCIe link; drain the node",
        ),
        (_, Some(11)) => (
            "an adapter or process resource that ran out (queue pairs, memory regions, locked memory)",
            "raise ulimit -l; use fewer queue pairs (NCCL_IB_QPS_PER_CONNECTION); check other jobs on the HCA",
        ),
        ("ibv_create_qp" | "ibv_create_cq" | "ibv_reg_mr" | "ibv_alloc_pd", None) => (
            "the locked-memory limit, most often (NCCL printed no errno)",
            "set `ulimit -l unlimited` for the job (containers: --ulimit memlock=-1) and check it inside the job; then the HCA's resources",
        ),
        ("ibv_open_device" | "ibv_query_device" | "ibv_query_port", _) => (
            "a device the job cannot open (its uverbs node missing or not permitted) or in error",
            "check /dev/infiniband/uverbs* inside the job or container, and the device's state (ibv_devinfo, dmesg)",
        ),
        _ => (
            "see the errno's meaning for this call",
            "read the call's man page for the errno; rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET",
        ),
    };
    (name, why, fix)
}

/// The finding for one host's failed call.
fn call_finding(
    host: Option<&str>,
    call: &str,
    list: &[(SectionRef<'_>, &VerbsFailure)],
    probing: bool,
) -> Finding {
    let mut errnos: Vec<Option<u32>> = list.iter().map(|(_, v)| v.errno).collect();
    errnos.sort_unstable();
    errnos.dedup();
    let mut devices: Vec<String> = list
        .iter()
        .filter_map(|(_, v)| v.device.as_deref().map(|d| device_words(Some(d), v.port)))
        .collect();
    devices.sort_unstable();
    devices.dedup();
    let errors: Vec<String> = errnos
        .iter()
        .map(|e| {
            let text = list
                .iter()
                .find(|(_, v)| v.errno == *e)
                .and_then(|(_, v)| v.error.as_deref());
            match (e, errno_meaning(call, *e).0, text) {
                (Some(n), Some(name), Some(t)) => format!("{n} {name} ({t})"),
                (Some(n), _, Some(t)) => format!("{n} ({t})"),
                (Some(n), _, None) => n.to_string(),
                (None, _, Some(t)) => t.to_owned(),
                (None, _, None) => "no errno printed".to_owned(),
            }
        })
        .collect();
    let (_, why, fix) = errno_meaning(call, errnos.iter().flatten().next().copied());
    let mut message = format!("NCCL's call to {call} failed {} time(s)", list.len());
    if !devices.is_empty() {
        message.push_str(&format!(" on {}", devices.join(", ")));
    }
    message.push_str(&format!(": {}", errors.join(", ")));
    if probing {
        message.push_str("; NCCL skipped it and found no IB device (`NET/IB : No device found.`): the job may have fallen back to sockets (NC002)");
    }
    message.push_str(&format!(": most likely {why}"));
    let first = list.first().map(|(_, v)| v.at.cuda_dev);
    let same_gpu = list.iter().all(|(_, v)| Some(v.at.cuda_dev) == first);
    let one_device = list
        .first()
        .and_then(|(_, v)| v.device.clone())
        .filter(|d| {
            list.iter()
                .all(|(_, v)| v.device.as_deref() == Some(d.as_str()))
        });
    let port = one_device
        .as_ref()
        .and(list.first().and_then(|(_, v)| v.port))
        .filter(|p| list.iter().all(|(_, v)| v.port == Some(*p)));
    let subject = Subject {
        host: host.map(str::to_owned),
        device: one_device,
        port,
        gpu: first.flatten().filter(|_| same_gpu),
        ..Subject::default()
    };
    let mut finding = NC004
        .finding(subject, message)
        .severity(if probing {
            Severity::Warning
        } else {
            Severity::Error
        })
        .threshold(Threshold::new(
            "no failed verbs call",
            "NCCL's verbs wrapper (src/misc/ibvwrap.cc, src/include/ibvwrap.h) returns ncclSystemError on a failed call; ibv_modify_qp hints: printIbModifyQpHint",
        ))
        .remediation(format!("{}{}.", fix.get(..1).unwrap_or_default().to_uppercase(), fix.get(1..).unwrap_or_default()));
    for (at, v) in list.iter().take(3) {
        let mut text = format!(
            "NCCL WARN on CUDA device {}: {call} failed",
            v.at.cuda_dev
                .map_or_else(|| "?".to_owned(), |d| d.to_string()),
        );
        match (v.errno, v.error.as_deref()) {
            (Some(n), Some(t)) => text.push_str(&format!(" with {n} ({t})")),
            (None, Some(t)) => text.push_str(&format!(": {t}")),
            (Some(n), None) => text.push_str(&format!(" with {n}")),
            (None, None) => {}
        }
        if let Some(d) = &v.device {
            text.push_str(&format!(" on {}", device_words(Some(d), v.port)));
        }
        if let Some(t) = &v.transition {
            text.push_str(&format!(", QP {t}"));
        }
        if let Some(g) = &v.local_gid {
            text.push_str(&format!(", local GID {g}"));
        }
        if let Some(g) = &v.remote_gid {
            text.push_str(&format!(", remote GID {g}"));
        }
        finding = finding.evidence(Evidence::new(text, v.at.span, at.source()));
    }
    finding
}
