//! NCCL's debug log (`NCCL_DEBUG=INFO` or `WARN`): the lines every rank
//! prints as `host:pid:tid [cudaDev] NCCL INFO …`, pasted into issues of
//! every training and inference framework.
//!
//! The model keeps the facts that say something about the interconnect —
//! the network NCCL chose and the devices it found, the transport of each
//! channel between ranks, the version, the warnings (completion errors of
//! the IB transport above all) — each with the host of the line that
//! printed it and its line. Every other NCCL line is counted; the lines of
//! the program between them (Python logging, a traceback) are listed by
//! number: they are the program's, not NCCL's, and say nothing here.

use super::partial::Partial;
use crate::span::LineSpan;
use serde::{Deserialize, Serialize};

/// Where a fact was printed: the prefix NCCL writes before every line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Origin {
    /// The host of the prefix (`gpu01` of `gpu01:12345:12345 [0]`);
    /// `None` for a line printed without one (`NCCL version …` of old
    /// releases).
    pub host: Option<String>,
    /// The process id.
    pub pid: Option<u32>,
    /// The CUDA device of the rank (`[0]`).
    pub cuda_dev: Option<u32>,
    /// The line.
    pub span: LineSpan,
}

/// `NCCL version 2.18.5+cuda12.2`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NcclVersion {
    /// Where it was printed.
    pub at: Origin,
    /// The version as printed (`2.18.5+cuda12.2`).
    pub version: String,
}

/// `NCCL INFO Using network IB` (or `Socket`, or a plugin's name).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetworkChoice {
    /// Where it was printed.
    pub at: Origin,
    /// The network's name as printed (`IB`, `Socket`, `AWS Libfabric`).
    pub network: String,
}

/// `NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE ; OOB ib0:10.0.0.1<0>`
/// or `NET/Socket : Using [0]eth0:10.0.0.1<0>`: the devices a transport
/// found; or `NET/IB : No device found.` (no devices).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetDevices {
    /// Where it was printed.
    pub at: Origin,
    /// The transport (`IB`, `Socket`).
    pub transport: String,
    /// The devices listed, without their `[i]` index (`mlx5_0:1/IB`,
    /// `eth0:10.0.0.1<0>`); empty for `No device found.`.
    pub devices: Vec<String>,
}

/// `Channel 00/0 : 0[0] -> 1[1] via P2P/IPC`: how two ranks are connected
/// on one channel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChannelLink {
    /// Where it was printed.
    pub at: Origin,
    /// The channel number.
    pub channel: u32,
    /// The sending rank.
    pub from_rank: u32,
    /// The receiving rank.
    pub to_rank: u32,
    /// `send` or `receive` when printed (network connections).
    pub direction: Option<String>,
    /// The transport as printed after `via` (`P2P/IPC/read`, `SHM/direct/direct`,
    /// `NET/IB/0/GDRDMA`, `NET/Socket/1`).
    pub transport: String,
}

impl ChannelLink {
    /// The transport's first word: `P2P`, `SHM`, `NET`, `CollNet`.
    #[must_use]
    pub fn transport_family(&self) -> &str {
        self.transport.split('/').next().unwrap_or_default()
    }
}

/// `NET/IB : Got completion from peer 10.0.0.2<12345> with status=12
/// opcode=0 len=0 vendor err 129 (Send) localGid … remoteGids…` (and the
/// older `Got completion with error 12, opcode 0, len 0, vendor err 129`):
/// a work request of the IB transport that completed in error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompletionError {
    /// Where it was printed.
    pub at: Origin,
    /// The `ibv_wc_status` (12: transport retry counter exceeded).
    pub status: u32,
    /// The peer's address, when printed (`10.0.0.2<12345>`).
    pub peer: Option<String>,
    /// `vendor err`, when printed.
    pub vendor_err: Option<u32>,
    /// `Send` or `Recv`, when printed.
    pub direction: Option<String>,
    /// The local GID, when printed.
    pub local_gid: Option<String>,
    /// The remote GID(s), when printed.
    pub remote_gid: Option<String>,
    /// The IB device (`mlx5_0:1`), when the line names it.
    pub ib_device: Option<String>,
}

/// An asynchronous event of an IB device that NCCL's IB transport printed
/// (its `IbAsync` thread reads `ibv_get_async_event` and warns of every
/// event but `communication established`), in each release's wording:
/// `NET/IB : Got async event : port error` (to 2.19),
/// `NET/IB : mlx5_0:1 Got async event : port error` (2.20–2.22),
/// `NET/IB : mlx5_0:1 async fatal event: local catastrophic error`,
/// `… async fatal event on QP (0x…): …`, `… Got async error event: port
/// error` (2.23–2.28.3), `… Got non-fatal async event: port error(10)`
/// and `… GID table changed` (2.28 on). Source: `ncclIbAsyncThreadMain`,
/// `src/transport/net_ib.cc` (`net_ib/common.cc` from 2.29),
/// github.com/NVIDIA/nccl.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IbAsyncEvent {
    /// Where it was printed.
    pub at: Origin,
    /// The IB device (`mlx5_0`), when the line names it (2.20 on).
    pub device: Option<String>,
    /// The device's port, when the line names it.
    pub port: Option<u32>,
    /// The event as `ibv_event_type_str` words it (`port error`, `port
    /// active`, `local catastrophic error`, `GID table change`; NCCL's own
    /// `GID table changed`), or `unknown event type (N)`.
    pub event: String,
    /// The cut the line ends in, when it is the paste's last line and
    /// its event is not one of the events' words: not judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial: Option<Partial>,
}

/// A verbs call that NCCL's wrapper (`src/misc/ibvwrap.cc`,
/// `src/include/ibvwrap.h`) or its IB transport reports failed:
/// `Call to ibv_create_qp failed with error Cannot allocate memory`,
/// `… failed with error Connection timed out errno 110` (2.19 on),
/// `Call to ibv_modify_qp failed with 110 Connection timed out, on dev
/// mlx5_0:1, curr state INIT, next state RTR, local GID index 3, local
/// GID …, remote GID …` (2.24 on), `Call to ibv_open_device failed`,
/// `ibv_post_send() failed with error …`, `NET/IB : Unable to open device
/// mlx5_1`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerbsFailure {
    /// Where it was printed.
    pub at: Origin,
    /// The call (`ibv_modify_qp`, `ibv_reg_mr`, `ibv_open_device`).
    pub call: String,
    /// The errno, when printed or implied by its text.
    pub errno: Option<u32>,
    /// The error's text as printed (`strerror`: `Connection timed out`).
    pub error: Option<String>,
    /// The IB device, when the line names it.
    pub device: Option<String>,
    /// The device's port, when the line names it.
    pub port: Option<u32>,
    /// The queue pair's state change that failed (`INIT -> RTR`), when
    /// printed.
    pub transition: Option<String>,
    /// The local GID, when printed.
    pub local_gid: Option<String>,
    /// The remote GID, when printed.
    pub remote_gid: Option<String>,
    /// The cut the line ends in, when it is the paste's last line and
    /// ends before its error is whole: not judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial: Option<Partial>,
}

/// A `NCCL WARN` line, whatever it says (completion errors included).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NcclWarning {
    /// Where it was printed.
    pub at: Origin,
    /// The text after `NCCL WARN`.
    pub text: String,
}

/// `NCCL_IB_GID_INDEX set by environment to 3.`: a setting NCCL read from
/// its environment (printed at `INFO` with the `ENV` subsystem).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnvSetting {
    /// Where it was printed.
    pub at: Origin,
    /// The variable (`NCCL_IB_GID_INDEX`).
    pub name: String,
    /// Its value as printed, without the closing period.
    pub value: String,
}

/// Everything read from a run of NCCL lines.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NcclLog {
    /// The hosts of the prefixes, in order of first appearance.
    pub hosts: Vec<String>,
    /// `NCCL version 2.18.5+cuda12.2` lines.
    pub versions: Vec<NcclVersion>,
    /// `Using network …` lines.
    pub networks: Vec<NetworkChoice>,
    /// `NET/<transport> : Using …` and `NET/IB : No device found.` lines.
    pub net_devices: Vec<NetDevices>,
    /// `Channel NN/M : a[d] -> b[e] via …` lines.
    pub channels: Vec<ChannelLink>,
    /// Completion errors of the IB transport.
    pub completion_errors: Vec<CompletionError>,
    /// Asynchronous events of IB devices.
    #[serde(default)]
    pub ib_async_events: Vec<IbAsyncEvent>,
    /// Verbs calls reported failed.
    #[serde(default)]
    pub verbs_failures: Vec<VerbsFailure>,
    /// Every `NCCL WARN` line.
    pub warnings: Vec<NcclWarning>,
    /// `… set by environment to …` lines.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<EnvSetting>,
    /// NCCL lines read whose content no rule needs (`Bootstrap : …`,
    /// `Ring 00 : …`, `Init COMPLETE`, `proxy.cc:878 -> 6`).
    pub other_nccl_lines: usize,
    /// Lines among NCCL's that are not NCCL's (the program's own logging,
    /// a traceback): their line numbers.
    pub program_lines: Vec<usize>,
}

impl NcclLog {
    /// The hosts a fact of this log is about: `host`, or every line's when
    /// `None` is asked for a log without prefixes.
    #[must_use]
    pub fn of_host(&self, host: &str) -> NcclLog {
        let keep = |o: &Origin| o.host.as_deref().is_none_or(|h| h == host);
        NcclLog {
            hosts: vec![host.to_owned()],
            versions: self
                .versions
                .iter()
                .filter(|v| keep(&v.at))
                .cloned()
                .collect(),
            networks: self
                .networks
                .iter()
                .filter(|n| keep(&n.at))
                .cloned()
                .collect(),
            net_devices: self
                .net_devices
                .iter()
                .filter(|n| keep(&n.at))
                .cloned()
                .collect(),
            channels: self
                .channels
                .iter()
                .filter(|c| keep(&c.at))
                .cloned()
                .collect(),
            completion_errors: self
                .completion_errors
                .iter()
                .filter(|c| keep(&c.at))
                .cloned()
                .collect(),
            env: self.env.iter().filter(|e| keep(&e.at)).cloned().collect(),
            ib_async_events: self
                .ib_async_events
                .iter()
                .filter(|e| keep(&e.at))
                .cloned()
                .collect(),
            verbs_failures: self
                .verbs_failures
                .iter()
                .filter(|v| keep(&v.at))
                .cloned()
                .collect(),
            warnings: self
                .warnings
                .iter()
                .filter(|w| keep(&w.at))
                .cloned()
                .collect(),
            other_nccl_lines: 0,
            program_lines: Vec::new(),
        }
    }
}
