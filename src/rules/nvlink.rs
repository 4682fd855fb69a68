//! NVLink rules (`NV0xx`), from `nvidia-smi nvlink`, `nvidia-smi -q` and the
//! statistics over them.
//!
//! Expectations come from the knowledge base ([`crate::kb`]) and from
//! the GPU's peers on the same host: a PCIe card without a bridge has every
//! link inactive by design, an H100 PCIe with a bridge has 12 of 18 active,
//! and an SXM board has all of them active. Absolute error counts since the
//! last reset are history (`info`); growth between two snapshots is judged
//! with DCGM's rules.

use super::context::{subject_of, Context, NvGpuRef, Reading};
use super::ib_counters::ber_findings;
use super::{Coverage, Evidence, Finding, Severity, Subject, Threshold};
use crate::declare_rule;
use crate::kb::{gpu_nvlink_expectation, FormFactor};
use crate::model::smi_query::ClockReason;
use crate::model::{KnownCounter, NvCounter};
use crate::stats::{PeerGroupKind, PeerStatistic, RateStatus};
use std::collections::{BTreeMap, BTreeSet};

declare_rule! {
    /// ### What it detects
    /// A GPU with fewer active NVLinks than its product should have (from
    /// the knowledge base) or than its peers on the same host have, including
    /// a GPU whose links are all inactive.
    ///
    /// ### Why it matters
    /// Each missing link removes its share of GPU-to-GPU bandwidth (NCCL
    /// all-reduce drops to about 17/18 with one H100 link gone), and a GPU
    /// with no NVLink falls back to PCIe. On SXM boards every link is wired:
    /// an inactive one is a fault (training failure, Xid 74/149, baseboard).
    /// PCIe cards without a bridge have every link inactive by design and are
    /// not reported when none of their peers is bridged. Beside bridged
    /// peers, a card with every link inactive is `info` when the cards with
    /// links pair off (a bridge joins two cards: three cards and one bridge
    /// leave one out, as can cards the paste lacks), and an `error` when
    /// they do not (an odd number with links: a bridge whose other card
    /// shows none). SXM2 modules (P100,
    /// V100) are the exception to "every link is wired": boards of 2 or 4
    /// GPUs leave links unwired, so a GPU of such a host (at most 4 read)
    /// with as many active links as its peers is `info` (the board's
    /// design; a lost link takes one GPU below its peers, an `error`).
    /// Eight SXM2 GPUs sit on a board that wires every link.
    ///
    /// ### Evidence
    /// `nvidia-smi nvlink -s` lines (`<inactive>`, or the all-inactive
    /// message), the product's expectation or the peers' active count.
    /// `critical` when an SXM GPU has no active link.
    ///
    /// ### What to do
    /// Check `nvidia-smi -q` and `dmesg` for NVLink Xids; reset the GPU or
    /// reboot; if links stay down, reseat the GPU or the NVSwitch tray /
    /// bridge and open a hardware case.
    ///
    /// ### Thresholds and sources
    /// Active links per product: fabricscope knowledge base (H100/H200/B200
    /// SXM 18, A100 SXM 12, V100 SXM 6, H100 PCIe + bridge 12), from
    /// captures and NVIDIA documentation; azurehpc-health-checks NHC2016 and
    /// gcm treat inactive links as failures.
    pub static NV001 = {
        id: "NV001",
        name: "nvlink-inactive",
        family: Nvlink,
        severity: Error,
        summary: "GPU has fewer active NVLinks than its product or its peers",
        needs: "nvidia-smi nvlink -s",
        check: check_inactive,
    }
}

declare_rule! {
    /// ### What it detects
    /// An active NVLink running slower than the other links of its GPU, or
    /// than its product's speed.
    ///
    /// ### Why it matters
    /// A link that trained down carries less, and NCCL spreads traffic evenly
    /// over the links, so the slowest link paces the GPU.
    ///
    /// ### Evidence
    /// The link's `-s` speed, its siblings' speed and the product's speed.
    ///
    /// ### What to do
    /// Reset the GPU or reboot; if the link stays slow, open a hardware case
    /// (baseboard, NVSwitch or bridge).
    ///
    /// ### Thresholds and sources
    /// Product speed as printed by `nvidia-smi nvlink -s` (knowledge base:
    /// 26.562 GB/s NVLink4, 25 A100, 25.781 V100, 53.125 NVLink5), and the
    /// fastest sibling link.
    pub static NV002 = {
        id: "NV002",
        name: "nvlink-slow",
        family: Nvlink,
        severity: Error,
        summary: "NVLink slower than its siblings or its product's speed",
        needs: "nvidia-smi nvlink -s",
        check: check_slow,
    }
}

declare_rule! {
    /// ### What it detects
    /// NVLink replay or recovery errors: any increase between two snapshots
    /// (`error`), or non-zero counts since the last reset (`info`, one
    /// finding per host listing its GPUs' links, the largest counts named
    /// first: on a healthy, year-old fleet most GPUs have a few replays
    /// somewhere, and a finding per GPU was seven per host of the same
    /// history).
    ///
    /// ### Why it matters
    /// A replay is a retransmission after a bad flit; a recovery is a link
    /// retraining. DCGM fails a GPU on any increase of either during its
    /// watch: the link is unstable now.
    ///
    /// ### Evidence
    /// `nvidia-smi nvlink -e` readings (both snapshots for increases).
    ///
    /// ### What to do
    /// Watch the counters under load (`nvidia-smi nvlink -e` twice); if they
    /// keep rising, drain the node and check the GPU/baseboard (Xid 74 in
    /// `dmesg`); reset counters with `nvidia-smi nvlink -r` only after
    /// recording them.
    ///
    /// ### Thresholds and sources
    /// Increase > 0 (`NvlinkReplayErrors`, `NvlinkRecoveryErrors`): DCGM
    /// health watch DCGM_FR_NVLINK_ERROR_CRITICAL.
    pub static NV003 = {
        id: "NV003",
        name: "nvlink-replay-recovery",
        family: Nvlink,
        severity: Error,
        summary: "NVLink replay/recovery errors (any increase fails, as in DCGM)",
        needs: "nvidia-smi nvlink -e (two snapshots for increases)",
        counters: [NvCounter::ReplayErrors, NvCounter::RecoveryErrors],
        check: check_replay_recovery,
    }
}

declare_rule! {
    /// ### What it detects
    /// NVLink CRC errors: growing at 100/s or more (`error`), growing more
    /// slowly or at a rate the input cannot tell, for want of the readings'
    /// times (`warning`, saying so), stuck at the counter's maximum (`warning`), or
    /// non-zero since the last reset (`info`, one finding per host listing
    /// its GPUs' links).
    ///
    /// ### Why it matters
    /// CRC errors are corrupted flits that get replayed. NVIDIA's guidance
    /// (through DCGM) is that they only matter at 100 or more per second;
    /// below that the link still works but should be watched.
    ///
    /// ### Evidence
    /// `nvidia-smi nvlink -e` readings and the rate between snapshots.
    ///
    /// ### What to do
    /// At ≥ 100/s drain the node and check the link (reseat, baseboard);
    /// below, monitor. A saturated counter (65535 on V100) hides the rate:
    /// record and reset it.
    ///
    /// ### Thresholds and sources
    /// {limit:NvlinkCrcErrorsPerSecond} per second (`NvlinkCrcErrorsPerSecond`): DCGM
    /// DCGM_LIMIT_MAX_NVLINK_CRC_ERROR and the diag `pcie` plugin's
    /// `nvlink_crc_error_threshold`.
    pub static NV004 = {
        id: "NV004",
        name: "nvlink-crc-errors",
        family: Nvlink,
        severity: Warning,
        summary: "NVLink CRC errors (≥ 100/s fails, as in DCGM)",
        needs: "nvidia-smi nvlink -e (two snapshots for rates)",
        counters: [NvCounter::CrcErrors, NvCounter::CrcFlitErrors, NvCounter::CrcDataErrors],
        check: check_crc,
    }
}

declare_rule! {
    /// ### What it detects
    /// A lane whose ECC correction counter overflowed, or an NVLink lane,
    /// link or GPU whose error counters stand far above its peers'.
    ///
    /// ### Why it matters
    /// Corrected errors are normal on NVLink4 (hundreds per lane on healthy
    /// H200s), so absolute values mean little; one lane or link an order of
    /// magnitude above its siblings is a marginal lane that may fail.
    ///
    /// ### Evidence
    /// `nvidia-smi nvlink -ec` lanes (`Overflow=1`), and the robust z-score,
    /// the ratio to the median and the Poisson tail probability from the
    /// statistics. Only outliers in growth rates, or in absolute counts ten
    /// times the median, are reported: healthy H200 lanes differ by up to
    /// 5.4× in absolute corrected counts. A counter whose growth was
    /// measured (two snapshots and their interval) is compared by that
    /// growth alone: its count since the last reset is history, and the
    /// same link is not reported once for each.
    ///
    /// ### What to do
    /// Watch the lane's growth; if it keeps standing out, plan a hardware
    /// check of the link at the next maintenance.
    ///
    /// ### Thresholds and sources
    /// Robust z ≥ 3.5 (Iglewicz & Hoaglin) and Poisson tail < 0.001 (the
    /// statistics' defaults), and for absolute counts ≥ 10× the median;
    /// research notes: alarm on imbalance and growth, not on absolute ECC
    /// counts.
    ///
    /// Replay, recovery and CRC counts since the last reset that stand out
    /// only as history are `info`: on a healthy, year-old cluster one GPU
    /// with a dozen or two lifetime replays against a median of one or two
    /// is common (3 of 980 healthy hosts of the generated 1,000-node
    /// fleet). They stay a `warning` when they grew between snapshots, or
    /// reach {limit:NvlinkLifetimeErrors} (`NvlinkLifetimeErrors`): DCGM
    /// judges replay/recovery/CRC by their increase, AWS
    /// eks-node-monitoring-agent#261 downgraded DCGM 4.6.1's lifetime check
    /// after it failed healthy H100s on historical events, and
    /// marin-community/marin#9086 saw a link with 505 lifetime recoveries
    /// (every other of 5,760 links at 0) fail five days later.
    pub static NV005 = {
        id: "NV005",
        name: "nvlink-error-outlier",
        family: Nvlink,
        severity: Warning,
        summary: "NVLink lane/link error counts far above their peers, or ECC overflow",
        needs: "nvidia-smi nvlink -ec or -e for several links",
        check: check_outliers,
    }
}

declare_rule! {
    /// ### What it detects
    /// A GPU whose links carried traffic unevenly between two snapshots: an
    /// active link idle while its siblings were busy, or a spread of more
    /// than 50 % around the median.
    ///
    /// ### Why it matters
    /// Under NCCL or peer-to-peer copies, healthy links carry near-equal
    /// bytes (0.3 % spread on the project's H200 capture). An idle or
    /// starved link is degraded or excluded.
    ///
    /// ### Evidence
    /// Per-link throughput from `nvidia-smi nvlink -gt d` or `-gt r`
    /// snapshots (statistics).
    ///
    /// ### What to do
    /// Check the idle link's speed and errors (`-s`, `-e`); reset the GPU if
    /// it stays idle under load.
    ///
    /// ### Thresholds and sources
    /// Spread > 50 % of the median, or a link with 0 bytes while the median
    /// link carried at least 0.1 GiB/s (fabricscope; baseline from the
    /// project's H200 capture).
    pub static NV006 = {
        id: "NV006",
        name: "nvlink-traffic-imbalance",
        family: Nvlink,
        severity: Warning,
        summary: "NVLink traffic spread unevenly over a GPU's links",
        needs: "two nvidia-smi nvlink -gt d (or -gt r) snapshots under load, with their interval",
        check: check_imbalance,
    }
}

declare_rule! {
    /// ### What it detects
    /// A GPU whose clocks are being slowed right now by heat or power
    /// trouble (`nvidia-smi -q` clock event reasons), when the clocks show
    /// it.
    ///
    /// ### Why it matters
    /// A throttled GPU computes and communicates slower, and in a collective
    /// job every other GPU waits for it. Hardware slowdowns point at cooling
    /// (HW thermal) or at the chassis' power (HW power brake: a signal from
    /// the baseboard or power supplies, not the GPU).
    ///
    /// ### Evidence
    /// The `Active` clock event reasons, the parent `HW Slowdown` line, the
    /// current and maximum SM clock (`Clocks`, `Max Clocks`) and the GPU
    /// temperature. `HW Slowdown` is the parent of `HW Thermal Slowdown` and
    /// `HW Power Brake Slowdown`: the sub-reason is reported, once. A reason
    /// whose effect is not visible (SM clock within 3 % of its maximum) is a
    /// momentary or stale flag: one `info` finding per GPU, to sample
    /// again. A clock below its maximum shows the slowdown, and the flag is
    /// trusted. Without the `Clocks` section a HW sub-reason under a `Not
    /// Active` `HW Slowdown` is taken as stale (the two flags disagree and
    /// no clock says which is right); other flags are taken as printed, and
    /// the message says the clock was not in the paste. When the same hardware slowdown holds
    /// every GPU of a host, the message says so (a chassis-level cause).
    ///
    /// ### What to do
    /// HW power brake: check the power supplies (redundancy, input feed),
    /// the BMC's SEL/event log and the chassis power policy. HW thermal:
    /// check fans, airflow, inlet temperature. SW thermal slowdown: check
    /// cooling. Power capping under full load is normal (`info`).
    ///
    /// ### Thresholds and sources
    /// NVML `nvmlClocksEventReasons`: HW slowdown (engaged by HW thermal
    /// slowdown or the external power brake, e.g. from the system power
    /// supply; core clocks cut by a factor of 2 or more), HW thermal
    /// slowdown and HW power brake are `error`, SW thermal slowdown
    /// `warning`, SW power cap `info`. At maximum clock: SM clock ≥ 97 % of
    /// `Max Clocks` (fabricscope's margin).
    pub static NV007 = {
        id: "NV007",
        name: "gpu-slowdown",
        family: Nvlink,
        severity: Error,
        summary: "GPU clocks slowed by heat or power right now",
        needs: "nvidia-smi -q (or -q -d PERFORMANCE)",
        check: check_slowdown,
    }
}

declare_rule! {
    /// ### What it detects
    /// An NVLink whose CRC (or corrected-error) rate, measured between two
    /// snapshots, is above the bit error rate limit with 95 % confidence.
    ///
    /// ### Why it matters
    /// Normalising errors by the bits the link carried tells a busy healthy
    /// link from a failing one.
    ///
    /// ### Evidence
    /// Errors, bits, the BER interval (statistics).
    ///
    /// ### What to do
    /// Drain the node and have the link checked (reseat, baseboard).
    ///
    /// ### Thresholds and sources
    /// Effective BER 1e-12 (DCGM DCGM_FR_NVLINK_EFFECTIVE_BER_THRESHOLD);
    /// corrected counts use the statistics' pre-FEC limit (1e-6).
    pub static NV008 = {
        id: "NV008",
        name: "nvlink-bit-error-rate",
        family: Nvlink,
        severity: Error,
        summary: "Measured NVLink bit error rate above its limit",
        needs: "two nvidia-smi nvlink -e/-ec snapshots with traffic or speed, and their interval",
        check: check_ber,
    }
}

declare_rule! {
    /// ### What it detects
    /// NVLinks that `dcgmi nvlink -s` shows Down (`D`) or Disabled (`X`) on a
    /// GPU or NVSwitch whose other links are Up, or on every GPU of a host
    /// where the GPUs' own NVLink output says they have links.
    ///
    /// ### Why it matters
    /// DCGM's view is the fabric manager's: a down GPU or NVSwitch link
    /// removes bandwidth between GPUs (and, on an NVSwitch, for every GPU
    /// routed through that port). DCGM reports "NvLink link N is currently
    /// down" for PCIe GPUs without NVLink (DCGM#49, NVSentinel#1481), so a
    /// host whose links are all down is only a `warning` unless other
    /// evidence says it has NVLink. `_` is *Not Supported*: a link slot the
    /// product does not have (an H800 has 8 of the 18 slots), never a down
    /// link.
    ///
    /// ### Evidence
    /// The device's line of state letters in `dcgmi nvlink -s`.
    ///
    /// ### What to do
    /// Check `nvidia-smi nvlink -s` and the fabric manager log; reset the GPU
    /// or restart the fabric manager; open a hardware case for links that
    /// stay down.
    ///
    /// ### Thresholds and sources
    /// Any `D` or `X` among `U` (Meta gcm `check-dcgmi nvlink_status`: any
    /// `D` or `X` is critical; DCGM_FR_NVLINK_DOWN).
    pub static NV009 = {
        id: "NV009",
        name: "dcgm-nvlink-down",
        family: Nvlink,
        severity: Error,
        summary: "dcgmi nvlink -s shows Down/Disabled links among Up ones",
        needs: "dcgmi nvlink -s",
        check: check_dcgm_link_status,
    }
}

declare_rule! {
    /// ### What it detects
    /// A GPU whose `Fabric` block in `nvidia-smi -q` says its NVLink fabric
    /// is not usable: registration with the fabric not finished (`State : In
    /// Progress`, `warning`) or not begun (`Not Started`, `error`),
    /// registration finished with an error (`Status` other than `Success`,
    /// `error`), or a `Health` sub-block reporting trouble: `Summary :
    /// Unhealthy`, `Bandwidth : Degraded`, `Route Unhealthy : True` or an
    /// `Incorrect Configuration` (`error`); `Summary : Limited Capacity`,
    /// `Route Recovery in progress : True` or `Access Timeout Recovery :
    /// True` (`warning`, the fabric is recovering).
    ///
    /// ### Why it matters
    /// On NVSwitch systems (HGX/DGX, GB200/GB300 NVL racks) a GPU joins the
    /// NVLink fabric through the fabric manager. Until its registration
    /// completes with `Success`, CUDA work on it fails to start or runs
    /// without its NVLink peers; an unhealthy fabric loses bandwidth or
    /// routes between GPUs (and, on multi-node NVLink, between trays). DCGM
    /// and per-GPU telemetry can look normal meanwhile: a stopped fabric
    /// manager has gone unnoticed for weeks this way (NVSentinel#883, #889).
    /// GPUs without NVSwitch print `N/A` or `Not Supported` in every field,
    /// and those are never reported; neither is a field the paste does not
    /// show (a cut block says nothing about the lines after the cut).
    ///
    /// ### Evidence
    /// The `Fabric` block's lines that are not healthy (`State`, `Status`,
    /// `Summary`, `Bandwidth`, the route and configuration lines). `Status`
    /// counts only when `State` is `Completed`, as NVML documents.
    ///
    /// ### What to do
    /// Check the fabric manager (`systemctl status nvidia-fabricmanager`,
    /// `/var/log/fabricmanager.log`; on NVL racks the NVLink switch trays'
    /// NMX/IMEX services), the NVSwitches (`nvidia-smi nvlink -s`, `dcgmi
    /// nvlink -s`) and `dmesg` for NVLink/NVSwitch Xids; read the fields
    /// again with `nvidia-smi --query-gpu=fabric.state,fabric.status,fabric.health.summary --format=csv`.
    /// Restart the fabric manager or reset the GPU; drain the node if the
    /// fabric stays unhealthy.
    ///
    /// ### Thresholds and sources
    /// `State : Completed`, `Status : Success`, `Summary : Healthy`,
    /// `Bandwidth : Full`, the route and recovery lines `False`: NVML
    /// `nvmlGpuFabricInfo_v3_t` (`state`, `status` "must be checked only if
    /// state returns complete", `healthSummary`, `healthMask`,
    /// `NVML_GPU_FABRIC_HEALTH_*`) and `nvidia-smi --help-query-gpu`
    /// (`fabric.state`, `fabric.status`, `fabric.health.*`).
    pub static NV010 = {
        id: "NV010",
        name: "nvlink-fabric-unhealthy",
        family: Nvlink,
        severity: Error,
        summary: "GPU's NVLink fabric registration unfinished or failed, or its fabric health not healthy",
        needs: "nvidia-smi -q (its Fabric block)",
        check: check_fabric,
    }
}

/// What a GPU should have, and where that comes from.
pub(crate) struct Expected<'g> {
    /// Active links expected.
    pub active: usize,
    /// Where the number comes from: its words are written only for a
    /// finding (two rules ask for every GPU of a fleet, and most GPUs
    /// have every link they should).
    basis: ExpectedBasis<'g>,
}

/// Where an [`Expected`] count comes from.
enum ExpectedBasis<'g> {
    /// The knowledge base's entry for the product.
    Kb(&'static crate::kb::GpuNvlinkSpec),
    /// The best peer of the same product (named) on the host.
    Peer(&'g str),
}

impl Expected<'_> {
    /// Why, for messages.
    pub fn why(&self) -> String {
        match self.basis {
            ExpectedBasis::Kb(spec) => {
                format!("{} active links expected for {}", self.active, spec.family)
            }
            ExpectedBasis::Peer(name) => {
                format!("{} active links on a peer {name} of this host", self.active)
            }
        }
    }

    /// Where the number comes from.
    pub fn source(&self) -> String {
        match self.basis {
            ExpectedBasis::Kb(spec) => format!("fabricscope knowledge base: {}", spec.source),
            ExpectedBasis::Peer(_) => "peer comparison on the host".to_owned(),
        }
    }
}

/// The active link count a GPU should show: the knowledge base's for its
/// product (when SXM, or a bridged PCIe card), or its best peer's.
pub(crate) fn expected_active<'g>(gpu: &NvGpuRef<'g>, peers_max: usize) -> Option<Expected<'g>> {
    let kb = gpu_nvlink_expectation(gpu.name);
    let kb_active = kb.and_then(|k| {
        let bridged_or_sxm = k.form_factor == FormFactor::Sxm || gpu.active_count() > 0;
        bridged_or_sxm.then_some(usize::try_from(k.active_links).unwrap_or(usize::MAX))
    });
    match (kb_active, peers_max) {
        (Some(k), p) if k >= p => kb.map(|spec| Expected {
            active: k,
            basis: ExpectedBasis::Kb(spec),
        }),
        (_, p) if p > 0 => Some(Expected {
            active: p,
            basis: ExpectedBasis::Peer(gpu.name),
        }),
        _ => None,
    }
}

/// NV001.
fn check_inactive(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let (unknown, gpus): (Vec<&NvGpuRef<'_>>, Vec<&NvGpuRef<'_>>) = ctx
        .nvlink_gpus()
        .iter()
        .filter(|g| g.all_inactive.is_some() || !g.status.is_empty())
        // Link lines without their GPU header: the product, and so the
        // links it should have, are unknown, and it has no peers to
        // compare with.
        .partition(|g| g.headerless);
    if gpus.is_empty() {
        return Coverage::Skipped(if unknown.is_empty() {
            "no nvidia-smi nvlink -s output in the input".to_owned()
        } else {
            format!(
                "{} block(s) of nvlink -s link lines without their `GPU N:` header: the GPU, and how many links it should have, are unknown",
                unknown.len()
            )
        });
    }
    // Per host and product: the most and fewest active links, and how many
    // GPUs there are at least (those read, and those the highest index
    // read implies: a paste that elides GPUs 0 to 4 still shows GPU 5).
    let mut peers: BTreeMap<(super::HostKey<'_>, &str), Peers> = BTreeMap::new();
    for g in &gpus {
        let active = g.active_count();
        let numbered = usize::try_from(g.index).map_or(usize::MAX, |i| i.saturating_add(1));
        peers
            .entry((g.host, g.name))
            .and_modify(|p| {
                p.most = p.most.max(active);
                p.fewest = p.fewest.min(active);
                p.gpus += 1;
                p.linked += usize::from(active > 0);
                p.at_least = p.at_least.max(numbered);
            })
            .or_insert(Peers {
                most: active,
                fewest: active,
                gpus: 1,
                linked: usize::from(active > 0),
                at_least: numbered,
            });
    }
    for g in &gpus {
        let active = g.active_count();
        let peers = peers.get(&(g.host, g.name)).copied().unwrap_or_default();
        let Some(expected) = expected_active(g, peers.most) else {
            continue;
        };
        // A listing of fewer links than expected (`-l N`), or cut short,
        // cannot show them all: only the links it does show inactive are
        // judged (on an SXM board that wires every link).
        if g.all_inactive.is_none() && (g.status.len() < expected.active || g.listing_cut.is_some())
        {
            if let Some(f) = shown_inactive(g, &expected) {
                out.push(f);
            }
            continue;
        }
        if active >= expected.active {
            continue;
        }
        let spec = gpu_nvlink_expectation(g.name);
        let sxm = spec.is_some_and(|k| k.form_factor == FormFactor::Sxm);
        let pcie_card = spec.is_some_and(|k| k.form_factor == FormFactor::PcieBridge);
        // A bridge joins two PCIe cards: cards with links that pair off
        // among themselves leave the rest unbridged, which is how hosts
        // with an odd number of cards (or fewer bridges) are built. A
        // failed or unseated bridge reads the same, so the data says no
        // more than "check the bridge if there should be one". So too when
        // the paste lacks some of the host's cards (GPU numbers skipped):
        // a partner may be among them.
        let pairs_off = peers.linked % 2 == 0 || peers.at_least > peers.gpus;
        if active == 0 && pcie_card && pairs_off {
            if let Some(f) = unbridged_card(g, peers) {
                out.push(f);
            }
            continue;
        }
        let inactive: Vec<u32> = g
            .status
            .iter()
            .filter(|(_, (_, l))| l.inactive)
            .map(|(n, _)| *n)
            .collect();
        // As many links as any GPU of its product read on the host, on a
        // board that may wire fewer links than the GPU has: possibly the
        // board's design (a link that fails takes one GPU's count below its
        // peers'). Said as info, with what would confirm it. A GPU read
        // alone is judged so too: its peers may be cut from the paste, and
        // a shortfall that peers would show as the board's is no evidence.
        let block = g
            .status
            .values()
            .map(|(at, l)| (at.source(), l.span))
            .reduce(|(source, a), (_, b)| (source, a.join(b)));
        if let (true, Some((source, span))) = (
            active > 0
                && peers.gpus.max(peers.at_least) <= MOST_GPUS_ON_A_PARTLY_WIRED_BOARD
                && active == peers.most
                && spec.is_some_and(|k| k.wiring_varies_by_board(g.name)),
            block,
        ) {
            let peer_words = if peers.gpus == 1 {
                format!("the only {} read on this host", g.name)
            } else if peers.fewest == peers.most {
                format!("as every {} read on this host", g.name)
            } else {
                format!(
                    "the most of the {} {}s read on this host",
                    peers.gpus, g.name
                )
            };
            out.push(
                NV001
                    .finding(
                        g.subject(),
                        format!(
                            "{} ({}) has {active} of {} NVLinks active, {peer_words}: SXM2 boards of 2 or 4 GPUs leave links unwired, so this may be how the board is wired rather than a lost link",
                            g.label(),
                            g.name,
                            expected.active,
                        ),
                    )
                    .severity(Severity::Info)
                    .threshold(Threshold::new(
                        format!(
                            "{} active links ({}); SXM2 boards of at most {MOST_GPUS_ON_A_PARTLY_WIRED_BOARD} GPUs may wire fewer",
                            expected.active,
                            expected.why()
                        ),
                        expected.source(),
                    ))
                    .remediation("Nothing to do if the platform's documentation wires this many links per GPU (`nvidia-smi topo -m` shows NV# between the GPUs); if the board should be fully connected, check as for a lost link (dmesg NVLink Xids, reseat, hardware case).")
                    .evidence(Evidence::new(
                        format!(
                            "nvidia-smi nvlink -s: {active} of {} links active; {} GPU(s) of this product read on the host, at most {} active",
                            g.status.len(),
                            peers.gpus,
                            peers.most
                        ),
                        span,
                        source,
                    )),
            );
            continue;
        }
        let (severity, message) = if active == 0 {
            (
                if sxm {
                    Severity::Critical
                } else {
                    Severity::Error
                },
                format!(
                    "{} ({}{}) has no active NVLink ({}): GPU-to-GPU traffic falls back to PCIe",
                    g.label(),
                    g.name,
                    if pcie_card { PCIE_CARD } else { "" },
                    expected.why()
                ),
            )
        } else {
            (
                Severity::Error,
                format!(
                    "{} ({}) has {active} active NVLinks, {} expected; inactive: {}",
                    g.label(),
                    g.name,
                    expected.active,
                    list(&inactive)
                ),
            )
        };
        let mut f = NV001
            .finding(g.subject(), message)
            .severity(severity)
            .threshold(Threshold::new(
                format!("{} active links ({})", expected.active, expected.why()),
                expected.source(),
            ))
            .remediation("Check dmesg and nvidia-smi -q for NVLink Xids; reset the GPU or reboot; if links stay down, reseat the GPU/bridge or NVSwitch tray and open a hardware case.");
        for e in inactive_evidence(g) {
            f = f.evidence(e);
        }
        out.push(f);
    }
    Coverage::Checked(gpus.len())
}

/// Written after the product in NV001's message for a PCIe card with no
/// active link (an `error`): the incident's probable cause then names the
/// bridge, not a baseboard.
pub(crate) const PCIE_CARD: &str = ", a PCIe card";

/// NV001 (`info`) for a PCIe card with every link inactive beside cards
/// of its product whose links pair off (an even number with links
/// active): most likely a card without a bridge. `None` when the listing
/// shows no line of it (nothing to cite).
fn unbridged_card(g: &NvGpuRef<'_>, peers: Peers) -> Option<Finding> {
    let evidence = inactive_evidence(g);
    if evidence.is_empty() {
        return None;
    }
    let mut f = NV001
        .finding(
            g.subject(),
            format!(
                "{} ({}) shows every NVLink inactive while {} of the {} {}s read on this host have theirs active: bridges join PCIe cards in pairs, so this is most likely a card without a bridge (by design), not a lost link",
                g.label(),
                g.name,
                peers.linked,
                peers.gpus,
                g.name,
            ),
        )
        .severity(Severity::Info)
        .threshold(Threshold::new(
            "the cards with active links pair off (an even number of them), or the paste lacks some of the host's cards",
            "NVLink bridges join two PCIe cards (fabricscope knowledge base)",
        ))
        .remediation("Nothing to repair if the card was installed without a bridge. If it should have one, check that the bridge is seated on both cards and that `nvidia-smi nvlink -s` shows its links active.");
    for e in evidence {
        f = f.evidence(e);
    }
    Some(f)
}

/// NV001 for the links a short or cut `-s` listing shows `<inactive>`, on
/// an SXM GPU whose boards wire every link: what the listing lacks is not
/// judged (the paste may be cut, or filtered with `-l`), but a link it
/// prints inactive is one (a cut paste showing link 1 inactive was called
/// healthy). `None` where no link shown is inactive, or the product is
/// a PCIe card (a bridge wires some links) or a board that may leave
/// links unwired.
fn shown_inactive(g: &NvGpuRef<'_>, expected: &Expected<'_>) -> Option<Finding> {
    let spec = gpu_nvlink_expectation(g.name)?;
    if spec.form_factor != FormFactor::Sxm || spec.wiring_varies_by_board(g.name) {
        return None;
    }
    let inactive: Vec<_> = g.status.iter().filter(|(_, (_, l))| l.inactive).collect();
    if inactive.is_empty() {
        return None;
    }
    let numbers: Vec<u32> = inactive.iter().map(|(n, _)| **n).collect();
    let mut f = NV001
        .finding(
            g.subject(),
            format!(
                "{} ({}) shows link(s) {} inactive; its listing shows {} of {} links (cut or filtered), so the links it lacks were not judged",
                g.label(),
                g.name,
                list(&numbers),
                g.status.len(),
                expected.active,
            ),
        )
        .severity(Severity::Error)
        .threshold(Threshold::new(
            format!("{} active links ({})", expected.active, expected.why()),
            expected.source(),
        ))
        .remediation("Check dmesg and nvidia-smi -q for NVLink Xids; reset the GPU or reboot; if links stay down, reseat the GPU/bridge or NVSwitch tray and open a hardware case. Paste the whole `nvidia-smi nvlink -s` to judge the other links.");
    for e in inactive_evidence(g) {
        f = f.evidence(e);
    }
    Some(f)
}

/// What a GPU's `-s` listing shows inactive: the all-inactive message, and
/// each `<inactive>` link line.
fn inactive_evidence(g: &NvGpuRef<'_>) -> Vec<Evidence> {
    let all = g.all_inactive.map(|(at, span)| {
        Evidence::new(
            "nvidia-smi nvlink: all links are inactive",
            span,
            at.source(),
        )
    });
    let links = g
        .status
        .iter()
        .filter(|(_, (_, l))| l.inactive)
        .map(|(n, (at, link))| {
            Evidence::new(
                format!("nvidia-smi nvlink -s: Link {n}: <inactive>"),
                link.span,
                at.source(),
            )
        });
    all.into_iter().chain(links).collect()
}

/// The most GPUs of an SXM2 product on a board that leaves links unwired:
/// boards of 2 and 4 GPUs do; the 8-GPU boards (DGX-1, HGX-1, a hybrid
/// cube-mesh) wire all six links of every GPU, so the same shortfall on
/// eight GPUs is a fault shared by all of them, not the board's design.
const MOST_GPUS_ON_A_PARTLY_WIRED_BOARD: usize = 4;

/// The GPUs of one product on one host, as NV001 compares them.
#[derive(Clone, Copy, Default)]
struct Peers {
    most: usize,
    fewest: usize,
    /// GPUs read.
    gpus: usize,
    /// GPUs read with at least one active link.
    linked: usize,
    /// GPUs the host has at least: those read, or the highest index + 1.
    at_least: usize,
}

fn list(numbers: &[u32]) -> String {
    if numbers.is_empty() {
        return "(not listed)".to_owned();
    }
    numbers
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// NV002.
fn check_slow(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let gpus: Vec<&NvGpuRef<'_>> = ctx
        .nvlink_gpus()
        .iter()
        .filter(|g| g.active_count() > 0)
        .collect();
    if gpus.is_empty() {
        return Coverage::Skipped("no active NVLink with a speed in the input".to_owned());
    }
    let mut checked = 0;
    for g in &gpus {
        let kb = gpu_nvlink_expectation(g.name);
        let best_sibling = g
            .status
            .values()
            .filter_map(|(_, l)| l.speed_gb_per_s)
            .fold(f64::MIN, f64::max);
        let expected = kb
            .and_then(|k| k.speed_gb_per_s)
            .map_or(best_sibling, |k| k.max(best_sibling));
        for (n, (at, link)) in &g.status {
            let Some(speed) = link.speed_gb_per_s else {
                continue;
            };
            checked += 1;
            // nvidia-smi truncates to three decimals.
            if speed + 0.0015 >= expected {
                continue;
            }
            let (why, source) = match kb.and_then(|k| k.speed_gb_per_s.map(|s| (k, s))) {
                Some((k, s)) if s >= best_sibling => (
                    format!("{s} GB/s for {}", k.family),
                    format!("fabricscope knowledge base: {}", k.source),
                ),
                _ => (
                    format!("{best_sibling} GB/s on sibling links"),
                    "peer comparison on the GPU".to_owned(),
                ),
            };
            out.push(
                NV002
                    .finding(
                        Subject {
                            link: Some(*n),
                            ..g.subject()
                        },
                        format!("{} link {n} runs at {speed} GB/s, {why}", g.label()),
                    )
                    .evidence(Evidence::new(
                        format!("nvidia-smi nvlink -s: Link {n}: {speed} GB/s"),
                        link.span,
                        at.source(),
                    ))
                    .threshold(Threshold::new(format!("{expected} GB/s"), source))
                    .remediation("Reset the GPU or reboot; if the link stays slow, open a hardware case (baseboard, NVSwitch or bridge)."),
            );
        }
    }
    Coverage::Checked(checked)
}

/// Findings on NVLink error counters by name: growth from the statistics,
/// history from the latest readings.
fn counter_findings(
    ctx: &Context<'_>,
    out: &mut Vec<Finding>,
    counters: &[KnownCounter],
    judge_growth: impl Fn(u64, Option<f64>) -> Option<(Severity, String, Threshold)>,
    rule: &'static super::Rule,
    remediation: &str,
) -> Coverage {
    let names: Vec<&str> = counters.iter().map(|c| c.name()).collect();
    let gpus = ctx.nvlink_gpus();
    // Every latest reading is counted, and only the non-zero ones kept
    // (history findings come from them): most are zero.
    let mut checked = 0;
    let mut readings = Vec::new();
    for g in gpus {
        g.each_latest(counters, |link, name, r| {
            checked += 1;
            if r.counter.value != 0 {
                readings.push((g, (link, name), r));
            }
        });
    }
    if checked == 0 {
        return Coverage::Skipped(format!(
            "no nvidia-smi nvlink -e counters ({}) in the input",
            names.join(", ")
        ));
    }
    // Growth between snapshots.
    // Borrowed keys: most readings are looked up here and found unjudged.
    type Judged<'k> = (Option<&'k str>, Option<u32>, Option<u32>, &'k str);
    let mut judged: BTreeSet<Judged<'_>> = BTreeSet::new();
    for r in &ctx.measurements.counter_rates {
        if r.source != crate::stats::CounterSource::NvidiaSmiNvlink || !names.contains(&&*r.counter)
        {
            continue;
        }
        if r.status == RateStatus::CounterReset {
            continue;
        }
        let key = (
            r.subject.host.as_deref(),
            r.subject.gpu,
            r.subject.link,
            &*r.counter,
        );
        let Some(increase) = r.increase else {
            continue;
        };
        judged.insert(key);
        let Some((severity, what, threshold)) = judge_growth(increase, r.counts_per_second) else {
            continue;
        };
        let subject = subject_of(&r.subject);
        let message = format!("{}: {} {what}", subject.describe(), r.counter);
        let mut f = rule
            .finding(subject, message)
            .severity(severity)
            .threshold(threshold)
            .remediation(remediation);
        for e in ctx.rate_evidence(r) {
            f = f.evidence(e);
        }
        out.push(f);
    }
    // History: non-zero since the last reset, where no growth was measured.
    // (A zero reading has nothing to say, whether growth was judged or not.)
    // A counter stuck at its maximum is a warning of its own link; the
    // other counts are one `info` finding per host, its GPUs' links listed:
    // on a healthy year-old fleet most GPUs have a few replays somewhere,
    // and a finding per GPU was seven per host of the same history.
    let mut history: Vec<HistoryReading<'_, '_>> = Vec::new();
    for (g, (link, name), reading) in &readings {
        // As `g.subject()` names the GPU.
        let gpu = (!g.headerless).then_some(g.index);
        if judged.contains(&(g.host.name(), gpu, Some(*link), *name)) {
            continue;
        }
        if !reading.counter.saturated {
            if history.first().is_some_and(|h| h.gpu.host != g.host) {
                push_history(out, rule, &history, remediation);
                history.clear();
            }
            history.push(HistoryReading {
                gpu: g,
                reading,
                link: *link,
                name,
            });
            continue;
        }
        let subject = Subject {
            link: Some(*link),
            ..g.subject()
        };
        // The message pushed piece by piece into one string, the subject
        // written in place.
        let mut message = String::with_capacity(96 + name.len());
        subject.write_description(&mut message);
        message.push_str(": ");
        message.push_str(name);
        message.push_str(" is stuck at ");
        super::wording::push_u64(&mut message, reading.counter.value);
        message.push_str(", its maximum: the real count and rate are unknown");
        out.push(
            rule.finding(subject, message)
                .severity(Severity::Warning)
                .evidence(reading.evidence(name))
                .threshold(history_threshold())
                .remediation(remediation),
        );
    }
    push_history(out, rule, &history, remediation);
    Coverage::Checked(checked)
}

/// A non-zero count since the last reset, with the GPU and link it was
/// read on: one line of a host's history finding.
struct HistoryReading<'r, 'a> {
    gpu: &'r NvGpuRef<'a>,
    reading: &'r Reading<'a>,
    link: u32,
    name: &'r str,
}

/// How many of a host's non-zero counters its history finding names in
/// its message (the largest); the evidence lists them all.
const HISTORY_NAMED: usize = 4;

/// The threshold of a count since the last reset: none, growth decides.
fn history_threshold() -> Threshold {
    Threshold::new(
        "growth between snapshots decides",
        "DCGM judges NVLink error counters by their increase",
    )
}

/// One `info` finding for the non-zero counts since the last reset on one
/// host's GPUs (`history`, in GPU and link order). Its subject is the
/// narrowest that holds them all: the link when one link has counts, the
/// GPU when one GPU has, else the host. The message names the largest
/// counts, so that one link far above the rest is not among "and N more";
/// the evidence lists every reading in input order.
fn push_history(
    out: &mut Vec<Finding>,
    rule: &'static super::Rule,
    history: &[HistoryReading<'_, '_>],
    remediation: &str,
) {
    let Some(first) = history.first() else {
        return;
    };
    let one_gpu = history.iter().all(|h| std::ptr::eq(h.gpu, first.gpu));
    let one_link = one_gpu && history.iter().all(|h| h.link == first.link);
    let subject = if one_gpu {
        Subject {
            link: one_link.then_some(first.link),
            ..first.gpu.subject()
        }
    } else {
        Subject {
            host: first.gpu.host.name().map(str::to_owned),
            ..Subject::default()
        }
    };
    // Two GPUs of one number (two machines' output under one host name)
    // are told apart by their UUIDs.
    // (Only readings of several GPUs name their GPU.)
    let mut numbers: BTreeMap<(bool, u32), &NvGpuRef<'_>> = BTreeMap::new();
    let shared_number = !one_gpu
        && history.iter().any(|h| {
            let first = numbers
                .entry((h.gpu.headerless, h.gpu.index))
                .or_insert(h.gpu);
            !std::ptr::eq(*first, h.gpu)
        });
    // What each reading is called beyond the subject: nothing, its link,
    // or its GPU and link.
    let place = |h: &HistoryReading<'_, '_>, text: &mut String| {
        if !one_gpu {
            text.push_str(&h.gpu.label());
            if let Some(uuid) = h.gpu.uuid.filter(|_| shared_number) {
                text.push_str(" (");
                text.push_str(uuid);
                text.push(')');
            }
            text.push(' ');
        }
        if !one_link {
            text.push_str("link ");
            super::wording::push_u64(text, u64::from(h.link));
            text.push(' ');
        }
    };
    let mut message = String::with_capacity(160);
    if one_gpu {
        subject.write_description(&mut message);
        message.push_str(": ");
    } else {
        let gpus = 1 + history
            .iter()
            .zip(history.iter().skip(1))
            .filter(|(a, b)| !std::ptr::eq(a.gpu, b.gpu))
            .count();
        super::wording::push_u64(&mut message, gpus as u64);
        message.push_str(" GPUs: ");
    }
    // The largest first; equal counts in input order (the sort is stable).
    let mut named: Vec<&HistoryReading<'_, '_>> = history.iter().collect();
    named.sort_by_key(|h| std::cmp::Reverse(h.reading.counter.value));
    for (at, h) in named.iter().take(HISTORY_NAMED).enumerate() {
        if at > 0 {
            message.push_str(", ");
        }
        place(h, &mut message);
        message.push_str(h.name);
        message.push_str(" = ");
        super::wording::push_u64(&mut message, h.reading.counter.value);
    }
    if let Some(more) = history.len().checked_sub(HISTORY_NAMED).filter(|&m| m > 0) {
        message.push_str(" and ");
        super::wording::push_u64(&mut message, more as u64);
        message.push_str(" more");
    }
    message.push_str(if history.len() == 1 {
        " since the last reset (history; a second snapshot tells whether it grows)"
    } else {
        " since the last reset (history; a second snapshot tells whether they grow)"
    });
    let mut finding = rule
        .finding(subject, message)
        .severity(Severity::Info)
        .threshold(history_threshold())
        .remediation(remediation);
    for h in history {
        let mut what = String::with_capacity(16);
        place(h, &mut what);
        finding = finding.evidence(h.reading.evidence_named(&what, h.name));
    }
    out.push(finding);
}

/// NV003.
fn check_replay_recovery(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let (value, source) = ctx
        .thresholds
        .value_and_source(super::thresholds::NVLINK_REPLAY, (0.0, ""));
    counter_findings(
        ctx,
        out,
        NV003.counters,
        |increase, _| {
            // The threshold's words are made for a finding only: most
            // links' counters do not grow.
            #[allow(clippy::cast_precision_loss)]
            (increase as f64 > value).then(|| {
                (
                    Severity::Error,
                    format!("grew by {increase} between the snapshots: the link is unstable now"),
                    Threshold::new(format!("increase > {value}"), source),
                )
            })
        },
        &NV003,
        "Watch the counters under load; if they keep rising, drain the node and check the GPU/baseboard (Xid 74 in dmesg).",
    )
}

/// NV004.
fn check_crc(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let (value, source) = ctx
        .thresholds
        .value_and_source(super::thresholds::NVLINK_CRC_PER_SECOND, (100.0, ""));
    counter_findings(
        ctx,
        out,
        NV004.counters,
        |increase, per_second| {
            // The threshold's words are made for a finding only: most
            // links' counters do not grow.
            let threshold = || Threshold::new(format!("≥ {value}/s"), source);
            match per_second {
                Some(rate) if rate >= value => Some((
                    Severity::Error,
                    format!("grows at {rate:.1}/s (+{increase})"),
                    threshold(),
                )),
                Some(rate) if increase > 0 => Some((
                    Severity::Warning,
                    format!("grew by {increase} ({rate:.2}/s): below the failure rate, monitor"),
                    threshold(),
                )),
                // Without the readings' times the rate is unknown: it may
                // be far above the limit (a stress test between two
                // readings) or far below it (a week apart). Absence of the
                // interval is not evidence of a low rate.
                None if increase > 0 => Some((
                    Severity::Warning,
                    format!(
                        "grew by {increase} between two readings whose times are not in the input: the rate, and so whether it reaches the failure rate, is unknown"
                    ),
                    threshold(),
                )),
                _ => None,
            }
        },
        &NV004,
        "At 100/s or more drain the node and have the link checked; below, monitor. Where the rate is unknown, take two readings a minute apart under load with their times (`date; nvidia-smi nvlink -e`). Record and reset a saturated counter.",
    )
}

/// NV005.
fn check_outliers(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let gpus = ctx.nvlink_gpus();
    let groups: Vec<_> = ctx
        .measurements
        .peer_groups
        .iter()
        .filter(|g| {
            matches!(
                g.kind,
                PeerGroupKind::LinksOfGpu | PeerGroupKind::LanesOfGpu | PeerGroupKind::GpusOfHost
            )
        })
        .collect();
    let lanes: usize = gpus.iter().map(|g| g.lanes.len()).sum();
    // Links compared by growth whose groups all read 0 are checked too:
    // the statistics leave such groups out.
    let rates = super::rates_compared(ctx, true);
    if groups.is_empty() && lanes == 0 && rates == 0 {
        return Coverage::Skipped(
            "no NVLink lane (-ec) or per-link error counters to compare".to_owned(),
        );
    }
    for g in gpus {
        for (n, (at, link)) in &g.lanes {
            for lane in link.lanes().iter().filter(|l| l.overflow) {
                out.push(
                    NV005
                        .finding(
                            Subject {
                                link: Some(*n),
                                lane: Some(lane.lane),
                                ..g.subject()
                            },
                            format!(
                                "{} link {n} lane {}: ECC correction counter overflowed (count {} is a lower bound)",
                                g.label(), lane.lane, lane.ecc_correction_count.value
                            ),
                        )
                        .evidence(Evidence::new(
                            format!(
                                "nvidia-smi nvlink -ec: Lane {} ECC Correction Count: {} (Overflow=1)",
                                lane.lane, lane.ecc_correction_count.value
                            ),
                            link.span,
                            at.source(),
                        ))
                        .threshold(Threshold::new("Overflow=0", "nvidia-smi nvlink -ec"))
                        .remediation("Record the counts and watch the lane's growth; plan a hardware check if it keeps standing out."),
                );
            }
        }
    }
    let (lifetime_limit, lifetime_source) = ctx
        .thresholds
        .value_and_source(LIFETIME_LIMIT, (LIFETIME_DEFAULT, ""));
    for group in &groups {
        for o in &group.outliers {
            // Healthy NVLink4 lanes differ by several times in absolute
            // corrected counts (up to 5.4× the median on the project's H200
            // capture): only growth rates, or an order of magnitude, count.
            let rate = group.statistic == PeerStatistic::CountsPerSecond;
            let big = o.times_median.is_none_or(|t| t >= 10.0);
            if !rate && !big {
                continue;
            }
            let mut threshold = super::outlier_threshold();
            let mut severity = Severity::Warning;
            // A lifetime replay/recovery/CRC count above the peers' is
            // history on a year-old cluster: a warning only when it is
            // large, or when the same counter grew between the snapshots.
            let error_counter = NV_ERROR_COUNTERS.iter().any(|c| c.name() == group.counter);
            if !rate
                && error_counter
                && o.value < lifetime_limit
                && !grew(ctx, &group.counter, &o.subject)
            {
                severity = Severity::Info;
                threshold = Threshold::new(
                    format!(
                        "count since the last reset < {lifetime_limit} and no growth between snapshots: history (info); outlier at robust z ≥ 3.5, Poisson tail < 0.001, ≥ 10× the median"
                    ),
                    lifetime_source,
                );
            }
            let subject = subject_of(&o.subject);
            out.push(
                NV005
                    .finding(
                        subject.clone(),
                        o.explanation.clone(),
                    )
                    .severity(severity)
                    .evidence(super::outlier_evidence(group, o))
                    .threshold(threshold)
                    .remediation("Watch the lane's or link's growth; if it keeps standing out, plan a hardware check of the link."),
            );
        }
    }
    Coverage::Checked(groups.len() + lanes + rates)
}

/// The NVLink error counters (`-e`) whose lifetime outliers NV005 judges
/// by size and growth.
const NV_ERROR_COUNTERS: &[NvCounter] = &[
    NvCounter::ReplayErrors,
    NvCounter::RecoveryErrors,
    NvCounter::CrcErrors,
    NvCounter::CrcFlitErrors,
    NvCounter::CrcDataErrors,
];

/// The threshold that makes a lifetime NVLink error outlier a warning.
const LIFETIME_LIMIT: &str = super::thresholds::NVLINK_LIFETIME;
/// Its built-in value, should the thresholds lack it.
const LIFETIME_DEFAULT: f64 = 500.0;

/// Whether `counter` of this GPU (or link) grew between two snapshots.
fn grew(ctx: &Context<'_>, counter: &str, who: &crate::stats::Subject) -> bool {
    ctx.measurements.counter_rates.iter().any(|r| {
        r.source == crate::stats::CounterSource::NvidiaSmiNvlink
            && *r.counter == *counter
            && r.status != RateStatus::CounterReset
            && r.increase.is_some_and(|i| i > 0)
            && r.subject.host == who.host
            && r.subject.gpu == who.gpu
            && who.link.is_none_or(|l| r.subject.link == Some(l))
    })
}

/// NV006.
fn check_imbalance(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let balances: Vec<_> = ctx
        .measurements
        .traffic_balance
        .iter()
        .filter(|b| b.group.starts_with("links of GPU"))
        .collect();
    if balances.is_empty() {
        return Coverage::Skipped(
            "no NVLink throughput measured (needs two nvidia-smi nvlink -gt d snapshots and their interval)"
                .to_owned(),
        );
    }
    const BUSY_GIB_PER_S: f64 = 0.1;
    const SPREAD_PERCENT: f64 = 50.0;
    for b in &balances {
        let median = b.per_link_gib_per_second.median;
        if median < BUSY_GIB_PER_S {
            continue;
        }
        let spread = b.spread_percent.unwrap_or(0.0);
        if b.idle_links.is_empty() && spread <= SPREAD_PERCENT {
            continue;
        }
        if b.idle_links.is_empty() {
            let gpu = ctx.measurements.throughput.iter().find(|t| {
                t.from_snapshot == b.from_snapshot
                    && t.to_snapshot == b.to_snapshot
                    && t.subject
                        .gpu
                        .is_some_and(|g| b.group.starts_with(&format!("links of GPU {g}")))
            });
            let subject = gpu.map_or_else(Subject::default, |t| Subject {
                link: None,
                lane: None,
                ..subject_of(&t.subject)
            });
            out.push(
                NV006
                    .finding(
                        subject,
                        format!(
                            "{} ({:?}): per-link throughput spreads {spread:.0} % around the median {median:.2} GiB/s (min {:.2}, max {:.2})",
                            b.group, b.direction, b.per_link_gib_per_second.min, b.per_link_gib_per_second.max
                        ),
                    )
                    .threshold(Threshold::new(
                        format!("spread ≤ {SPREAD_PERCENT} %"),
                        "fabricscope; 0.3 % on the project's H200 capture under load",
                    ))
                    .remediation("Check the slowest links' speed and errors (nvidia-smi nvlink -s, -e); reset the GPU if they stay starved."),
            );
            continue;
        }
        for idle in &b.idle_links {
            let subject = subject_of(idle);
            out.push(
                NV006
                    .finding(
                        subject.clone(),
                        format!(
                            "{}: carried no data ({:?}) while its sibling links carried a median {median:.2} GiB/s",
                            subject.describe(),
                            b.direction
                        ),
                    )
                    .threshold(Threshold::new(
                        format!("> 0 bytes while the median link carries ≥ {BUSY_GIB_PER_S} GiB/s"),
                        "fabricscope; baseline from the project's H200 capture",
                    ))
                    .remediation("Check the idle link's speed and errors (nvidia-smi nvlink -s, -e); reset the GPU if it stays idle under load."),
            );
        }
    }
    Coverage::Checked(balances.len())
}

/// The subject and label of a GPU `nvidia-smi -q` printed: by its bus id,
/// or, for a fragment without its `GPU …` heading, an unknown GPU (NV007,
/// TP005).
pub(super) fn smi_gpu_named(
    at: &super::context::SectionRef<'_>,
    gpu: &crate::model::smi_query::QueryGpu,
) -> (Subject, String) {
    let subject = Subject {
        host: at.host().name().map(str::to_owned),
        gpu_uuid: gpu.uuid.clone(),
        bus_id: (!gpu.headerless).then(|| gpu.bus_id.clone()),
        gpu_unknown: gpu.headerless,
        ..Subject::default()
    };
    let label = if gpu.headerless {
        "unknown GPU".to_owned()
    } else {
        format!("GPU {}", gpu.bus_id)
    };
    (subject, label)
}

/// What an NV007 message says when the GPU's `Clocks` section is not in the
/// paste: the flags are taken as printed, since nothing shows them stale
/// (a conclusion drawn from the flag lines that are there).
pub const CLOCK_NOT_IN_PASTE_NOTE: &str = " (the SM clock or its maximum was not in the paste)";

/// Share of the maximum clock at or above which a clock event reason's
/// flag has no visible effect: the GPU runs at (or within 3 % of) its
/// `Max Clocks`, so the flag is momentary or stale (NV007).
const CLOCK_AT_MAX_SHARE: f64 = 0.97;

/// The current and maximum SM clock of a GPU (Graphics when `SM` is not
/// printed), with the lines they were read on.
struct ClockReading {
    domain: &'static str,
    current_mhz: f64,
    max_mhz: f64,
    current_line: Option<usize>,
    max_line: Option<usize>,
}

impl ClockReading {
    fn of(gpu: &crate::model::smi_query::QueryGpu) -> Option<Self> {
        /// Domain, its `-q`/`-q -x` names, current and maximum MHz.
        type Pair<'n> = (&'static str, &'n [&'n str], Option<f64>, Option<f64>);
        let pairs: [Pair<'_>; 2] = [
            (
                "SM",
                &["SM", "sm_clock"],
                gpu.clocks.sm_mhz,
                gpu.max_clocks.sm_mhz,
            ),
            (
                "Graphics",
                &["Graphics", "graphics_clock"],
                gpu.clocks.graphics_mhz,
                gpu.max_clocks.graphics_mhz,
            ),
        ];
        pairs.into_iter().find_map(|(domain, names, current, max)| {
            let (current_mhz, max_mhz) = (current?, max?);
            (max_mhz > 0.0).then(|| Self {
                domain,
                current_mhz,
                max_mhz,
                current_line: gpu.field(&[&["Clocks", "clocks"], names]).map(|f| f.line),
                max_line: gpu
                    .field(&[&["Max Clocks", "max_clocks"], names])
                    .map(|f| f.line),
            })
        })
    }

    fn at_max(&self) -> bool {
        self.current_mhz >= CLOCK_AT_MAX_SHARE * self.max_mhz
    }

    /// `SM 86 of 1980 MHz`.
    fn describe(&self) -> String {
        format!(
            "{} {} of {} MHz",
            self.domain, self.current_mhz, self.max_mhz
        )
    }

    fn evidence(&self, source: Option<&str>) -> Vec<Evidence> {
        let mut out = Vec::new();
        if let Some(line) = self.current_line {
            out.push(Evidence::new(
                format!(
                    "nvidia-smi -q: Clocks: {} {} MHz",
                    self.domain, self.current_mhz
                ),
                crate::span::LineSpan::line(line),
                source,
            ));
        }
        if let Some(line) = self.max_line {
            out.push(Evidence::new(
                format!(
                    "nvidia-smi -q: Max Clocks: {} {} MHz",
                    self.domain, self.max_mhz
                ),
                crate::span::LineSpan::line(line),
                source,
            ));
        }
        out
    }
}

/// Whether a reason is one of the hardware slowdowns (NVML: `HW Slowdown`
/// is engaged by `HW Thermal Slowdown` or `HW Power Brake Slowdown`).
fn is_hw(reason: ClockReason) -> bool {
    matches!(
        reason,
        ClockReason::HwSlowdown
            | ClockReason::HwThermalSlowdown
            | ClockReason::HwPowerBrakeSlowdown
    )
}

/// The slowdowns NV007 reports for one GPU: each active reason once, the
/// parent `HW Slowdown` left out when a sub-reason under it says why; each
/// with whether its flag is stale (no visible effect on the clocks).
fn slowdowns_of<'g>(
    gpu: &'g crate::model::smi_query::QueryGpu,
    clock: Option<&ClockReading>,
) -> Vec<(&'g crate::model::smi_query::ClockEventReason, bool)> {
    let parent = gpu
        .clock_event_reasons
        .iter()
        .find(|r| r.reason == ClockReason::HwSlowdown);
    let active: Vec<_> = gpu.active_slowdowns().collect();
    let sub_active = active.iter().any(|r| {
        matches!(
            r.reason,
            ClockReason::HwThermalSlowdown | ClockReason::HwPowerBrakeSlowdown
        )
    });
    let at_max = clock.is_some_and(ClockReading::at_max);
    active
        .into_iter()
        .filter(|r| !(r.reason == ClockReason::HwSlowdown && sub_active))
        .map(|r| {
            let orphan = matches!(
                r.reason,
                ClockReason::HwThermalSlowdown | ClockReason::HwPowerBrakeSlowdown
            ) && parent.is_some_and(|p| p.active == Some(false));
            // A clock below its maximum shows a slowdown: the flag is
            // trusted whatever its parent says. Without the clock, a
            // sub-reason under a `Not Active` parent is the stale one.
            (r, at_max || (clock.is_none() && orphan))
        })
        .collect()
}

/// NV007.
fn check_slowdown(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    use std::collections::HashMap;
    use std::fmt::Write as _;
    let gpus = ctx.smi_gpus();
    let with_reasons: Vec<_> = gpus
        .iter()
        .filter(|(_, g)| !g.clock_event_reasons.is_empty())
        .collect();
    if with_reasons.is_empty() {
        return Coverage::Skipped(
            "no clock event reasons in the input (run nvidia-smi -q -d PERFORMANCE)".to_owned(),
        );
    }
    // How many GPUs of each host show each hardware slowdown for real: the
    // same one on every GPU points at the chassis (power, cooling).
    let mut on_host: HashMap<(super::context::HostKey<'_>, ClockReason), usize> = HashMap::new();
    let mut gpus_on_host: BTreeMap<super::context::HostKey<'_>, usize> = BTreeMap::new();
    for (at, gpu) in &gpus {
        *gpus_on_host.entry(at.host()).or_default() += 1;
        let clock = ClockReading::of(gpu);
        for (r, stale) in slowdowns_of(gpu, clock.as_ref()) {
            if !stale && is_hw(r.reason) {
                *on_host.entry((at.host(), r.reason)).or_default() += 1;
            }
        }
    }
    for (at, gpu) in &with_reasons {
        let clock = ClockReading::of(gpu);
        let temp = gpu
            .temperature
            .gpu_c
            .map(|t| format!(" at {t} °C"))
            .unwrap_or_default();
        let (subject, label) = smi_gpu_named(at, gpu);
        let head = format!(
            "{label}{}{temp}",
            gpu.product_name
                .as_deref()
                .map(|n| format!(" ({n})"))
                .unwrap_or_default()
        );
        let clock_evidence = clock
            .as_ref()
            .map(|c| c.evidence(at.source()))
            .unwrap_or_default();
        let flag_evidence = |r: &crate::model::smi_query::ClockEventReason| {
            Evidence::new(
                format!("nvidia-smi -q: {}: Active", r.name),
                crate::span::LineSpan::line(r.line),
                at.source(),
            )
        };
        let parent = gpu
            .clock_event_reasons
            .iter()
            .find(|r| r.reason == ClockReason::HwSlowdown);
        let slowdowns = slowdowns_of(gpu, clock.as_ref());

        // Flags without a visible effect: one info finding per GPU.
        let stale: Vec<_> = slowdowns
            .iter()
            .filter(|(_, s)| *s)
            .map(|(r, _)| *r)
            .collect();
        if !stale.is_empty() {
            let names: Vec<&str> = stale.iter().map(|r| r.name.as_str()).collect();
            let mut why = Vec::new();
            if let Some(c) = clock.as_ref().filter(|c| c.at_max()) {
                why.push(format!("clocks at maximum ({})", c.describe()));
            }
            if let Some(p) = parent.filter(|p| {
                p.active == Some(false)
                    && stale
                        .iter()
                        .any(|r| r.reason != ClockReason::HwSlowdown && is_hw(r.reason))
            }) {
                why.push(format!("{} Not Active", p.name));
            }
            let mut finding = NV007
                .finding(
                    subject.clone(),
                    format!(
                        "{head}: reason flag set ({}) but {}; a momentary or stale flag, sample again",
                        names.join(", "),
                        why.join(" and ")
                    ),
                )
                .severity(Severity::Info);
            for r in &stale {
                finding = finding.evidence(flag_evidence(r));
            }
            if let Some(p) = parent.filter(|p| p.active == Some(false)) {
                finding = finding.evidence(Evidence::new(
                    format!("nvidia-smi -q: {}: Not Active", p.name),
                    crate::span::LineSpan::line(p.line),
                    at.source(),
                ));
            }
            for e in &clock_evidence {
                finding = finding.evidence(e.clone());
            }
            out.push(
                finding
                    .threshold(Threshold::new(
                        format!(
                            "flag Active with the {} clock below {:.0} % of Max Clocks and, for a HW sub-reason, HW Slowdown Active",
                            clock.as_ref().map_or("SM", |c| c.domain),
                            CLOCK_AT_MAX_SHARE * 100.0
                        ),
                        "NVML nvmlClocksEventReasons: HW Slowdown (HW Thermal or HW Power Brake) cuts core clocks by a factor of 2 or more, and may be reported during a P-state or clock change; 3 % margin: fabricscope",
                    ))
                    .remediation("Sample again (nvidia-smi -q -d PERFORMANCE,CLOCK a few times, or dmon/counters over a minute); act only if the flag stays set while the clock is below its maximum."),
            );
        }

        for (r, _) in slowdowns.iter().filter(|(_, s)| !*s) {
            let severity = match r.reason {
                ClockReason::HwSlowdown
                | ClockReason::HwThermalSlowdown
                | ClockReason::HwPowerBrakeSlowdown => Severity::Error,
                ClockReason::SwThermalSlowdown => Severity::Warning,
                _ => Severity::Info,
            };
            let mut message = format!("{head}: clocks slowed by {} right now", r.name);
            match clock.as_ref() {
                Some(c) => {
                    let _ = write!(message, " ({})", c.describe());
                }
                None => message.push_str(CLOCK_NOT_IN_PASTE_NOTE),
            }
            if r.reason == ClockReason::HwPowerBrakeSlowdown {
                message.push_str(
                    ", a power-brake signal from outside the GPU (baseboard, BMC or power supplies)",
                );
            }
            let total = gpus_on_host.get(&at.host()).copied().unwrap_or(0);
            let same = on_host.get(&(at.host(), r.reason)).copied().unwrap_or(0);
            if is_hw(r.reason) && total >= 2 && same == total {
                let _ = write!(
                    message,
                    "; on {same} of {total} GPUs of the host: a chassis-level cause"
                );
            }
            let mut finding = NV007
                .finding(subject.clone(), message)
                .severity(severity)
                .evidence(flag_evidence(r));
            if is_hw(r.reason) && r.reason != ClockReason::HwSlowdown {
                if let Some(p) = parent.filter(|p| p.active == Some(true)) {
                    finding = finding.evidence(flag_evidence(p));
                }
            }
            for e in &clock_evidence {
                finding = finding.evidence(e.clone());
            }
            let (threshold_source, remediation) = match r.reason {
                ClockReason::HwPowerBrakeSlowdown => (
                    "NVML nvmlClocksEventReasons: HW Power Brake Slowdown, an external power brake assertion (e.g. by the system power supply)",
                    "Power brake is asserted from outside the GPU: check the power supplies (failed PSU, lost redundancy, input feed), the BMC's SEL/event log and the chassis power-capping policy; cooling is not the cause.",
                ),
                ClockReason::HwThermalSlowdown => (
                    "NVML nvmlClocksEventReasons: HW Thermal Slowdown (temperature too high)",
                    "Check fans, airflow, inlet temperature and the heatsink; the GPU is protecting itself from heat.",
                ),
                ClockReason::HwSlowdown => (
                    "NVML nvmlClocksEventReasons: HW Slowdown (temperature too high, external power brake, or power draw too high)",
                    "Check cooling (fans, airflow, inlet temperature) and power delivery (PSUs, BMC SEL log); the hardware is protecting itself.",
                ),
                ClockReason::SwThermalSlowdown => (
                    "NVML nvmlClocksEventReasons (nvidia-smi -q)",
                    "Check cooling and the GPU's temperature under load.",
                ),
                _ => (
                    "NVML nvmlClocksEventReasons (nvidia-smi -q)",
                    "Normal under full load; check power limits if the GPU should not be capped.",
                ),
            };
            out.push(
                finding
                    .threshold(Threshold::new(
                        "clock event reason Not Active",
                        threshold_source,
                    ))
                    .remediation(remediation),
            );
        }
    }
    Coverage::Checked(with_reasons.len())
}

/// NV008.
fn check_ber(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    ber_findings(ctx, out, &NV008, true)
}

/// NV009.
fn check_dcgm_link_status(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    use crate::model::dcgmi_nvlink::DcgmLinkState;
    let mut checked = 0;
    let nv_gpus = ctx.nvlink_gpus();
    for at in ctx.sections() {
        let crate::parse::SectionData::DcgmiNvlinkStatus(status) = &at.section.data else {
            continue;
        };
        let any_up = status
            .gpus
            .iter()
            .any(|g| g.links.contains(&DcgmLinkState::Up));
        // Other evidence that this host's GPUs have NVLink.
        let has_nvlink = any_up
            || nv_gpus
                .iter()
                .any(|g| g.host == at.host() && g.active_count() > 0);
        let entities = status
            .gpus
            .iter()
            .map(|e| (true, e))
            .chain(status.nvswitches.iter().map(|e| (false, e)));
        for (is_gpu, e) in entities {
            checked += 1;
            let down: Vec<usize> = e
                .links
                .iter()
                .enumerate()
                .filter(|(_, l)| matches!(l, DcgmLinkState::Down | DcgmLinkState::Disabled))
                .map(|(i, _)| i)
                .collect();
            if down.is_empty() {
                continue;
            }
            let up = e.links.iter().filter(|l| **l == DcgmLinkState::Up).count();
            let severity = if up > 0 {
                Severity::Error
            } else if is_gpu && has_nvlink {
                Severity::Critical
            } else {
                Severity::Warning
            };
            let what = if is_gpu {
                format!("GPU {}", e.id)
            } else {
                format!("NVSwitch {}", e.id)
            };
            let letters = e
                .links
                .iter()
                .map(|l| l.letter().to_string())
                .collect::<Vec<_>>()
                .join(" ");
            let list: Vec<String> = down.iter().map(usize::to_string).collect();
            let mut message = format!(
                "{what}: {} of {} links Down/Disabled in DCGM ({})",
                down.len(),
                e.links.len(),
                list.join(", ")
            );
            if severity == Severity::Warning {
                message.push_str(
                    "; no link is Up, which DCGM also reports for PCIe GPUs without NVLink (check nvidia-smi nvlink -s)",
                );
            }
            out.push(
                NV009
                    .finding(
                        Subject {
                            host: at.host().name().map(str::to_owned),
                            gpu: is_gpu.then_some(e.id),
                            device: (!is_gpu).then(|| format!("NVSwitch {}", e.id)),
                            ..Subject::default()
                        },
                        message,
                    )
                    .severity(severity)
                    .evidence(Evidence::new(
                        format!("dcgmi nvlink -s: {}", letters.trim_end()),
                        crate::span::LineSpan::line(e.line),
                        at.source(),
                    ))
                    .threshold(Threshold::new(
                        "every link U",
                        "Meta gcm check-dcgmi nvlink_status; DCGM_FR_NVLINK_DOWN",
                    ))
                    .remediation("Check nvidia-smi nvlink -s and the fabric manager log; reset the GPU or restart the fabric manager; open a hardware case if links stay down."),
            );
        }
    }
    if checked == 0 {
        return Coverage::Skipped("no dcgmi nvlink -s output in the input".to_owned());
    }
    Coverage::Checked(checked)
}

/// What one line of a `Fabric` block says, when it says something is wrong.
struct FabricProblem {
    severity: Severity,
    /// `health Summary Unhealthy`.
    what: String,
    line: usize,
    /// The line as evidence: `Summary : Unhealthy`.
    text: String,
}

/// The problems one `Fabric` block shows. Values are matched whole (any
/// case): a value the paste cut short, `N/A` and `Not Supported` say
/// nothing.
fn fabric_problems(fabric: &crate::model::smi_query::Field) -> Vec<FabricProblem> {
    use crate::model::smi_query::Field;
    fn value(f: &Field) -> &str {
        f.value.as_deref().map(str::trim).unwrap_or_default()
    }
    let child = |names: &[&str]| {
        fabric
            .children
            .iter()
            .find(|c| names.iter().any(|n| c.name.eq_ignore_ascii_case(n)))
    };
    let mut out = Vec::new();
    let mut push = |f: &Field, severity: Severity, what: String| {
        out.push(FabricProblem {
            severity,
            what,
            line: f.line,
            text: format!("{} : {}", f.name, value(f)),
        });
    };
    let is = |f: &Field, v: &str| value(f).eq_ignore_ascii_case(v);
    if let Some(state) = child(&["State"]) {
        if is(state, "In Progress") {
            push(
                state,
                Severity::Warning,
                "registration with the fabric still in progress".to_owned(),
            );
        } else if is(state, "Not Started") {
            push(
                state,
                Severity::Error,
                "registration with the fabric not started".to_owned(),
            );
        } else if is(state, "Completed") {
            // NVML: the status counts only once the state is complete.
            if let Some(status) = child(&["Status"]) {
                let v = value(status);
                let said = !v.is_empty()
                    && !["N/A", "Not Supported"]
                        .iter()
                        .any(|n| v.eq_ignore_ascii_case(n))
                    // A prefix of `Success` may be `Success` cut short.
                    && !"success".starts_with(&v.to_ascii_lowercase());
                if said {
                    push(
                        status,
                        Severity::Error,
                        format!("registration finished with status {v}"),
                    );
                }
            }
        }
    }
    let Some(health) = child(&["Health"]) else {
        return out;
    };
    let truthy = |f: &Field| is(f, "True") || is(f, "Yes");
    for f in &health.children {
        let name = f.name.to_ascii_lowercase().replace('_', " ");
        let v = value(f);
        match name.as_str() {
            "summary" if is(f, "Unhealthy") => {
                push(f, Severity::Error, "health summary Unhealthy".to_owned());
            }
            "summary" if is(f, "Limited Capacity") => {
                push(
                    f,
                    Severity::Warning,
                    "health summary Limited Capacity".to_owned(),
                );
            }
            "bandwidth" if is(f, "Degraded") => {
                push(f, Severity::Error, "bandwidth degraded".to_owned());
            }
            "route unhealthy" if truthy(f) => {
                push(f, Severity::Error, "a route unhealthy".to_owned());
            }
            "route recovery in progress" if truthy(f) => {
                push(
                    f,
                    Severity::Warning,
                    "route recovery in progress".to_owned(),
                );
            }
            "access timeout recovery" if truthy(f) => {
                push(
                    f,
                    Severity::Warning,
                    "access timeout recovery in progress".to_owned(),
                );
            }
            "incorrect configuration"
                if !v.is_empty()
                    && !["N/A", "Not Supported", "None", "False", "No"]
                        .iter()
                        .any(|n| v.eq_ignore_ascii_case(n)) =>
            {
                push(f, Severity::Error, format!("incorrect configuration ({v})"));
            }
            _ => {}
        }
    }
    out
}

/// NV010.
fn check_fabric(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let mut checked = 0;
    for (at, gpu) in ctx.smi_gpus() {
        let blocks = gpu
            .fields
            .iter()
            .filter(|f| f.name.eq_ignore_ascii_case("Fabric") && !f.children.is_empty());
        for fabric in blocks {
            checked += 1;
            let problems = fabric_problems(fabric);
            let Some(severity) = problems.iter().map(|p| p.severity).max() else {
                continue;
            };
            let (subject, label) = smi_gpu_named(&at, gpu);
            let what: Vec<&str> = problems.iter().map(|p| p.what.as_str()).collect();
            let mut f = NV010
                .finding(
                    subject,
                    format!("{label}: NVLink fabric {}", what.join("; ")),
                )
                .severity(severity)
                .threshold(Threshold::new(
                    "State Completed, Status Success, health Summary Healthy, Bandwidth Full, route and recovery lines False",
                    "NVML nvmlGpuFabricInfo_v3_t and NVML_GPU_FABRIC_HEALTH_*; nvidia-smi --help-query-gpu fabric.*",
                ))
                .remediation(
                    "Check the fabric manager (systemctl status nvidia-fabricmanager, its log; on NVL racks the switch trays' NMX/IMEX services), the NVSwitch links (nvidia-smi nvlink -s, dcgmi nvlink -s) and dmesg for NVLink Xids; restart the fabric manager or reset the GPU, and drain the node if the fabric stays unhealthy.",
                );
            for p in &problems {
                f = f.evidence(Evidence::new(
                    format!("nvidia-smi -q: Fabric: {}", p.text),
                    crate::span::LineSpan::line(p.line),
                    at.source(),
                ));
            }
            out.push(f);
        }
    }
    if checked == 0 {
        return Coverage::Skipped("no Fabric block of nvidia-smi -q in the input".to_owned());
    }
    Coverage::Checked(checked)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testing::{findings_of, skipped_reason};

    /// A `grep -C3` paste of one GPU's Fabric block, as issue threads show it.
    const GREPPED: &str = "# nvidia-smi -q | grep -E -C3 \"ClusterUUID|CliqueId\"
    Fabric
        State                             : Completed
        Status                            : Success
        CliqueId                          : 5
        ClusterUUID                       : 0a9b8c7d-1111-4e2e-9f3f-44aa55bb66cc
        Health
            Summary                       : Unhealthy
            Bandwidth                     : Full
--
";

    /// One GPU's `-q -d PERFORMANCE,CLOCK` block: `reasons` are the
    /// `(name, indent, Active?)` lines, `clocks` the current and maximum SM
    /// clock (no `Clocks` sections when `None`).
    fn smi_gpu(bus: &str, reasons: &[(&str, usize, bool)], clocks: Option<(u32, u32)>) -> String {
        let mut s = format!(
            "GPU {bus}\n    Performance State                     : P0\n    Clocks Event Reasons\n"
        );
        for (name, indent, active) in reasons {
            let key = format!("{}{name}", " ".repeat(*indent));
            let value = if *active { "Active" } else { "Not Active" };
            s.push_str(&format!("{key:<42}: {value}\n"));
        }
        if let Some((sm, max)) = clocks {
            s.push_str(&format!(
                "    Clocks\n        Graphics                          : {sm} MHz\n        SM                                : {sm} MHz\n    Max Clocks\n        Graphics                          : {max} MHz\n        SM                                : {max} MHz\n"
            ));
        }
        s
    }

    fn smi_doc(gpus: &[String]) -> String {
        format!(
            "==============NVSMI LOG==============\n\nTimestamp                                 : Tue Oct 13 04:51:09 2026\nDriver Version                            : 535.154.05\n\nAttached GPUs                             : {}\n{}",
            gpus.len(),
            gpus.concat()
        )
    }

    /// `HW Slowdown` with the two sub-reasons under it.
    fn hw(parent: bool, thermal: bool, brake: bool) -> Vec<(&'static str, usize, bool)> {
        vec![
            ("Idle", 8, false),
            ("SW Power Cap", 8, false),
            ("HW Slowdown", 8, parent),
            ("HW Thermal Slowdown", 12, thermal),
            ("HW Power Brake Slowdown", 12, brake),
            ("SW Thermal Slowdown", 8, false),
        ]
    }

    #[test]
    fn a_power_brake_is_reported_once_per_gpu_with_a_power_remedy() {
        let text = smi_doc(&[
            smi_gpu(
                "00000000:1B:00.0",
                &hw(true, false, true),
                Some((112, 1980)),
            ),
            smi_gpu(
                "00000000:43:00.0",
                &hw(true, false, true),
                Some((112, 1980)),
            ),
        ]);
        let f = findings_of(&NV007, &text);
        assert_eq!(f.len(), 2, "{f:?}");
        for f in &f {
            assert_eq!(f.severity, Severity::Error);
            assert!(
                f.message.contains("HW Power Brake Slowdown"),
                "{}",
                f.message
            );
            assert!(f.message.contains("SM 112 of 1980 MHz"), "{}", f.message);
            assert!(f.message.contains("on 2 of 2 GPUs"), "{}", f.message);
            assert!(
                f.remediation.contains("power supplies"),
                "{}",
                f.remediation
            );
            assert!(!f.remediation.contains("fans"), "{}", f.remediation);
        }
    }

    #[test]
    fn the_chassis_note_needs_every_gpu_of_the_host() {
        let text = smi_doc(&[
            smi_gpu(
                "00000000:1B:00.0",
                &hw(true, true, false),
                Some((700, 1980)),
            ),
            smi_gpu(
                "00000000:43:00.0",
                &hw(false, false, false),
                Some((1980, 1980)),
            ),
        ]);
        let f = findings_of(&NV007, &text);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            f[0].message.contains("HW Thermal Slowdown"),
            "{}",
            f[0].message
        );
        assert!(
            !f[0].message.contains("GPUs of the host"),
            "{}",
            f[0].message
        );
        assert!(f[0].remediation.contains("fans"), "{}", f[0].remediation);
    }

    #[test]
    fn a_flag_without_effect_on_the_clocks_is_info() {
        // At the maximum clock (within 3 %).
        let text = smi_doc(&[smi_gpu(
            "00000000:75:00.0",
            &hw(true, false, true),
            Some((1935, 1980)),
        )]);
        let f = findings_of(&NV007, &text);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].severity, Severity::Info);
        assert!(
            f[0].message.contains("clocks at maximum"),
            "{}",
            f[0].message
        );
        assert!(f[0].message.contains("sample again"), "{}", f[0].message);
        // A sub-reason under a Not Active HW Slowdown with no clock in the
        // paste: info, while a real SW thermal slowdown beside it stays a
        // warning.
        let mut reasons = hw(false, false, true);
        reasons.push(("SW Thermal Slowdown", 8, true));
        reasons.retain(|r| r.0 != "SW Thermal Slowdown" || r.2);
        // With the clock below its maximum the flag is trusted: an error.
        let low = findings_of(
            &NV007,
            &smi_doc(&[smi_gpu("00000000:75:00.0", &reasons, Some((800, 1980)))]),
        );
        let mut got: Vec<_> = low.iter().map(|f| f.severity).collect();
        got.sort();
        assert_eq!(got, [Severity::Warning, Severity::Error], "{low:?}");
        let f = findings_of(
            &NV007,
            &smi_doc(&[smi_gpu("00000000:75:00.0", &reasons, None)]),
        );
        let mut got: Vec<_> = f.iter().map(|f| f.severity).collect();
        got.sort();
        assert_eq!(got, [Severity::Info, Severity::Warning], "{f:?}");
        let info = f.iter().find(|f| f.severity == Severity::Info).unwrap();
        assert!(
            info.message.contains("HW Slowdown Not Active"),
            "{}",
            info.message
        );
        assert!(
            !info.message.contains("clocks at maximum"),
            "{}",
            info.message
        );
    }

    #[test]
    fn without_the_clocks_the_flags_stand_and_the_message_says_so() {
        let text = smi_doc(&[smi_gpu("00000000:1B:00.0", &hw(true, false, true), None)]);
        let f = findings_of(&NV007, &text);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].severity, Severity::Error);
        assert!(
            f[0].message.contains(CLOCK_NOT_IN_PASTE_NOTE),
            "{}",
            f[0].message
        );
    }

    #[test]
    fn a_hw_slowdown_without_a_sub_reason_is_reported_itself() {
        let text = smi_doc(&[smi_gpu(
            "00000000:1B:00.0",
            &hw(true, false, false),
            Some((900, 1980)),
        )]);
        let f = findings_of(&NV007, &text);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].severity, Severity::Error);
        assert!(
            f[0].message.contains("by HW Slowdown right now"),
            "{}",
            f[0].message
        );
    }

    #[test]
    fn an_unhealthy_fabric_is_an_error_with_its_line() {
        let f = findings_of(&NV010, GREPPED);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].severity, Severity::Error);
        assert!(f[0].message.contains("Unhealthy"), "{}", f[0].message);
        assert!(f[0].subject.gpu_unknown, "a fragment's GPU is unknown");
        assert_eq!(f[0].evidence.len(), 1, "{:?}", f[0].evidence);
        assert_eq!(f[0].evidence[0].span.first_line, 8);
    }

    #[test]
    fn each_grep_group_is_judged_as_its_own_gpu() {
        let healthy = GREPPED.replace("Unhealthy", "Healthy");
        // grep's `--` between the groups, as `grep -C` prints it.
        let text = format!("{healthy}{}", GREPPED.split_once('\n').unwrap().1);
        assert_eq!(text.matches("\n--\n").count(), 2, "{text}");
        let f = findings_of(&NV010, &text);
        assert_eq!(f.len(), 1, "one of the two blocks is unhealthy: {f:?}");
        assert!(f[0].evidence[0].span.first_line > 10, "{:?}", f[0].evidence);
    }

    #[test]
    fn registration_state_and_status() {
        let block = |state: &str, status: &str| {
            format!(
                "Fabric\n    State                             : {state}\n    Status                            : {status}\n    CliqueId                          : 0\n"
            )
        };
        let sev = |state: &str, status: &str| {
            findings_of(&NV010, &block(state, status))
                .iter()
                .map(|f| f.severity)
                .max()
        };
        assert_eq!(sev("In Progress", "N/A"), Some(Severity::Warning));
        assert_eq!(sev("Not Started", "N/A"), Some(Severity::Error));
        assert_eq!(
            sev("Completed", "Insufficient Resources"),
            Some(Severity::Error)
        );
        // NVML: the status is read only once the state is Completed.
        assert_eq!(sev("In Progress", "Unknown Error"), Some(Severity::Warning));
        assert_eq!(sev("Completed", "Success"), None);
        assert_eq!(sev("Not Supported", "N/A"), None);
        assert_eq!(sev("N/A", "N/A"), None);
    }

    #[test]
    fn health_lines_each_count() {
        let with = |line: &str| {
            let text = format!(
                "Fabric\n    State                             : Completed\n    Status                            : Success\n    Health\n        {line}\n        Partition Assigned            : N/A\n"
            );
            findings_of(&NV010, &text).iter().map(|f| f.severity).max()
        };
        for (line, severity) in [
            ("Summary                       : Unhealthy", Severity::Error),
            (
                "Summary                       : Limited Capacity",
                Severity::Warning,
            ),
            ("Bandwidth                     : Degraded", Severity::Error),
            ("Route Unhealthy               : True", Severity::Error),
            ("Route Recovery in progress    : True", Severity::Warning),
            ("Access Timeout Recovery       : True", Severity::Warning),
            (
                "Incorrect Configuration       : Incorrect SysGUID",
                Severity::Error,
            ),
        ] {
            assert_eq!(with(line), Some(severity), "{line}");
        }
        for quiet in [
            "Summary                       : Healthy",
            "Summary                       : N/A",
            "Summary                       : Not Supported",
            "Bandwidth                     : Full",
            "Route Unhealthy               : False",
            "Incorrect Configuration       : None",
            "Incorrect Configuration       : N/A",
        ] {
            assert_eq!(with(quiet), None, "{quiet}");
        }
    }

    #[test]
    fn a_cut_block_never_warns() {
        // Cut inside the last word (no line end): the value is not read.
        let cut = "Fabric\n    State                             : Completed\n    Status                            : Success\n    Health\n        Summary                       : Unhea";
        assert!(findings_of(&NV010, cut).is_empty());
        // Cut before the Health lines: nothing said about them.
        let short = "Fabric\n    State                             : Completed\n    Status                            : Success\n    CliqueId                          : 0\n";
        assert!(findings_of(&NV010, short).is_empty());
        // A status cut short of `Success`.
        let status = "Fabric\n    State                             : Completed\n    Status                            : Succ\n    CliqueId                          : 0\n";
        assert!(findings_of(&NV010, status).is_empty());
    }

    #[test]
    fn skipped_without_a_fabric_block() {
        let text = "GPU 00000000:1B:00.0\n    Product Name                      : NVIDIA H100 80GB HBM3\n    Performance State                 : P0\n    Persistence Mode                  : Enabled\n";
        assert!(skipped_reason(&NV010, text).is_some());
    }

    /// A GPU's history is one finding: its subject the GPU, the four
    /// largest counts named and the rest counted in its message, every
    /// reading in its evidence in input order; a GPU with counts on one
    /// link names that link.
    #[test]
    fn history_of_one_gpu_is_one_finding_about_it() {
        let text = gpu_history(3, &[1, 2, 3, 4, 5, 6, 0, 0], Some(7));
        let f = findings_of(&NV003, &text);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].severity, Severity::Info);
        assert_eq!(f[0].subject.gpu, Some(3));
        assert_eq!(f[0].subject.link, None);
        assert_eq!(f[0].evidence.len(), 6);
        assert!(f[0].message.starts_with("GPU 3: link 5 replay_errors = 6, link 4 replay_errors = 5, link 3 replay_errors = 4, link 2 replay_errors = 3 and 2 more since the last reset"), "{}", f[0].message);
        assert_eq!(f[0].evidence[0].text, "nvlink: link 0 replay_errors = 1");
        assert_eq!(f[0].evidence[5].text, "nvlink: link 5 replay_errors = 6");
        let crc = findings_of(&NV004, &text);
        assert_eq!(crc.len(), 1, "{crc:#?}");
        assert_eq!(crc[0].severity, Severity::Info);
        assert_eq!(crc[0].subject.link, Some(7));
        assert!(
            crc[0]
                .message
                .starts_with("GPU 3 link 7: crc_errors = 65535 since"),
            "{}",
            crc[0].message
        );
    }

    /// The history of several GPUs of one host is one finding about the
    /// host: each reading names its GPU and link, and a large count on the
    /// last GPU is named before the small ones of the first.
    #[test]
    fn history_of_a_host_is_one_finding_about_it() {
        let text = gpu_history(0, &[1, 0, 2, 0], None)
            + &gpu_history(1, &[0, 0, 0, 0], None)
            + &gpu_history(2, &[0, 900, 0, 0], None);
        let f = findings_of(&NV003, &text);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].severity, Severity::Info);
        assert_eq!((f[0].subject.gpu, f[0].subject.link), (None, None));
        assert!(
            f[0].message.starts_with(
                "2 GPUs: GPU 2 link 1 replay_errors = 900, GPU 0 link 2 replay_errors = 2, GPU 0 link 0 replay_errors = 1 since the last reset"
            ),
            "{}",
            f[0].message
        );
        let evidence: Vec<&str> = f[0].evidence.iter().map(|e| e.text.as_str()).collect();
        assert_eq!(
            evidence,
            [
                "nvlink: GPU 0 link 0 replay_errors = 1",
                "nvlink: GPU 0 link 2 replay_errors = 2",
                "nvlink: GPU 2 link 1 replay_errors = 900"
            ]
        );
    }

    /// `nvidia-smi nvlink -e` of one GPU with these replay counts on its
    /// links, and a CRC count stuck at 65535 on one link.
    fn gpu_history(gpu: u32, replays: &[u32], crc_stuck: Option<u32>) -> String {
        let mut text = format!(
            "GPU {gpu}: NVIDIA H100 80GB HBM3 (UUID: GPU-00000000-0000-0000-0000-00000000000{gpu})\n"
        );
        for (link, replay) in replays.iter().enumerate() {
            let crc = if crc_stuck == Some(link as u32) {
                65535
            } else {
                0
            };
            text.push_str(&format!(
                "\t Link {link}: Replay Errors: {replay}\n\t Link {link}: Recovery Errors: 0\n\t Link {link}: CRC Errors: {crc}\n"
            ));
        }
        text
    }

    /// Two untimed readings (a README's "before" and "after" a stress test)
    /// show that a counter grew, not how fast: the finding says the rate is
    /// unknown instead of calling it below the failure rate.
    #[test]
    fn growth_without_the_readings_times_leaves_the_rate_unknown() {
        let reading = |crc: u32| {
            format!(
                "GPU 2: Tesla V100-SXM2-32GB (UUID: GPU-00000000-0000-0000-0000-000000000002)\n\t Link 0: Replay Errors: 0\n\t Link 0: Recovery Errors: 0\n\t Link 0: CRC Errors: {crc}\n"
            )
        };
        let text = format!("{}\n{}", reading(1_907), reading(38_114));
        // `findings_of` assumes an interval; analyze as the CLI does.
        let doc = crate::input::read(&text, &crate::ReadOptions::default()).unwrap();
        let f: Vec<Finding> = crate::analyze(&[doc], &crate::AnalyzeOptions::default())
            .findings
            .into_iter()
            .filter(|f| f.rule == NV004.id)
            .collect();
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].severity, Severity::Warning, "{f:#?}");
        assert!(f[0].message.contains("grew by 36207"), "{}", f[0].message);
        assert!(f[0].message.contains("is unknown"), "{}", f[0].message);
        assert!(
            !f[0].message.contains("below the failure rate"),
            "{}",
            f[0].message
        );
    }
}
