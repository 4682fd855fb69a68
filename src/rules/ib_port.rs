//! InfiniBand port rules (`IB0xx`): state, addressing and rate, from `ibstat`.
//!
//! A healthy port is `State: Active` and `Physical state: LinkUp`. The two
//! states together tell what broke: `Down/Polling` is a cable or the far end,
//! `Down/Disabled` is a port switched off, `Initializing/LinkUp` is a good
//! cable waiting for a subnet manager. RoCE (Ethernet link layer) ports are
//! not judged here: LIDs and the SM do not apply to them, and adapters often
//! carry unused Ethernet ports.

use super::context::{Context, HostKey, IbPortRef, PortKey};
use super::rule::Scope;
use super::{gbps, Coverage, Evidence, Finding, SectionRef, Severity, Subject, Threshold};
use crate::declare_rule;
use crate::model::ib::{LinkLayer, PhysState, PortState};
use crate::parse::SectionData;
use std::collections::{BTreeMap, BTreeSet};

declare_rule! {
    /// ### What it detects
    /// An InfiniBand port that is `Down`, or whose physical state is not
    /// `LinkUp` (`Polling`, `Disabled`, `Sleep`, `LinkErrorRecovery`…).
    ///
    /// ### Why it matters
    /// A down port carries no traffic: jobs using it fail or fall back to a
    /// slower path, and collective operations across the fleet slow down to
    /// the pace of the missing rail. `Polling` means the port is looking for a
    /// peer and finds none (unplugged or broken cable, failed transceiver, or
    /// the switch port is down); `Disabled` means it was switched off, locally
    /// or by the subnet manager. `Down` with `Physical state: LinkUp` is not a
    /// cable fault: the link trained, but the logical port is down. That is
    /// what an SR-IOV virtual function shows when its virtual port is held
    /// down on the host, has no GUID, or the subnet manager does not serve
    /// virtual ports; on a physical port, the port was taken down or no SM
    /// has brought it up.
    ///
    /// ### Evidence
    /// `State` and `Physical state` of the port in `ibstat`; for
    /// `Down/LinkUp` also `Base lid` (65535 or 0: none assigned) and `SM lid`.
    /// The `Rate` of a down port is not shown: ibstat keeps printing a stale
    /// or default rate. The finding is `critical` when no InfiniBand port of
    /// the host is Active, whatever the cause: the host (or pod) has no
    /// InfiniBand path at all; only `error` where the paste lists the
    /// host's adapters from the middle (`mlx5_3`, `mlx5_4` … without
    /// `mlx5_0`), as the ports before them are not shown.
    ///
    /// A port Active in its last reading but down in an earlier one of the
    /// same paste is reported too: `info` where it came up, a `warning`
    /// where it was Active before it went down (it flapped while watched).
    ///
    /// RDMA ports over Ethernet (RoCE: `Link layer: Ethernet`) are judged
    /// when none of the host's RDMA ports is Active: a `warning` on each,
    /// as the host can do no RDMA; and when the port is one of a set of
    /// identical NICs whose others are Active (at least 4 of its adapter
    /// type Active on the host, at most half as many down): a `warning`,
    /// as a GPU server's rails are such a set and one of them has no
    /// link. Any other Down RoCE port beside an Active one is most often a
    /// NIC not in use (the second port of each card, a management port),
    /// and is not reported.
    ///
    /// An InfiniBand port `Down` (`Polling`, or no physical state printed)
    /// that no subnet manager has given a LID since its adapter started
    /// (`Base lid` 0 or 65535, `SM lid` 0) while another port of the same
    /// adapter is Active is a `warning`: it never linked, which is what the
    /// second port of a dual-port card left uncabled shows, on a fleet often
    /// every host's. A port that had a LID lost its link and stays an
    /// `error`, as does a down port of an adapter with no Active port.
    ///
    /// Over a fleet (a batch run, shards merged, or one paste of many
    /// hosts), a port (adapter name and number) that never linked so on
    /// most hosts is the fleet's design, not a fault of each host: one
    /// `info` finding about the port (`mlx5_0 port 2 never linked on 986
    /// of 1000 hosts: not cabled by design?`, no host) with a few hosts'
    /// lines as evidence replaces those hosts' `warning`s. It needs the
    /// port never linked on at least 8 hosts and on at least three in four
    /// of the hosts listing it (an adapter of that name with that many
    /// ports). Fewer hosts keep a warning each, as a single host always
    /// does: a handful of lines is still read one by one, and two or three
    /// hosts alike say nothing of a design. Where more than a quarter of
    /// the hosts have the port cabled, the fleet is mixed and an uncabled
    /// one may be a host someone forgot: each keeps its warning. A host
    /// whose same port had a LID and lost it is another shape, and stays
    /// its own `error`.
    ///
    /// Port fields pasted without their headers (`ibstat | grep State`,
    /// an `ibstatus` block without its `Infiniband device` line) are
    /// judged too, each port named by its place among them (`header-less
    /// port #2`): its adapter and number are not in the paste and are not
    /// guessed. Such a paste may leave ports out, so it is never
    /// `critical`; one whose `Link layer` the paste does not show may be
    /// RoCE, a `warning`.
    ///
    /// ### What to do
    /// For `Polling`: reseat or replace the cable/transceiver and check the
    /// switch port (`iblinkinfo`, switch logs). For `Disabled`: find who
    /// disabled it (`ibportstate <lid> <port> enable` re-enables it; the SM may
    /// disable ports it considers flapping). For `Down/LinkUp`: the cable is
    /// not the suspect; check the subnet manager (`sminfo`, its log) and, for a
    /// virtual function, the VF's state and GUIDs on the host
    /// (`ip link show <pf>`) and that the SM runs with virtualisation enabled
    /// (opensm `virt_enabled 2`). For a port that never linked beside an
    /// Active one: ignore it if it is meant to be unused, else cable it.
    /// Ports unused by design can be ignored with care.
    ///
    /// ### Thresholds and sources
    /// Healthy = `Active` + `LinkUp` (IBA PortInfo states; LBNL NHC
    /// `check_hw_ib`, Meta gcm `check_ibstat`, leptonai gpud). A port
    /// never linked on at least 8 hosts and three in four of the hosts
    /// listing it is the fleet's design (fleet peer comparison).
    pub static IB001 = {
        id: "IB001",
        name: "port-down",
        family: IbPort,
        severity: Error,
        summary: "InfiniBand port Down or physical state not LinkUp",
        needs: "ibstat",
        check: check_port_down,
        scope: Scope::UnitAndFleet(super::ib_fleet::check_never_linked_fleet),
    }
}

declare_rule! {
    /// ### What it detects
    /// An InfiniBand port whose cable is up (`LinkUp`) but whose logical state
    /// is `Initializing` or `Armed`.
    ///
    /// ### Why it matters
    /// The link trained, but no subnet manager has finished configuring it:
    /// `Initializing` with no SM LID (0, or not printed) means no SM has
    /// configured it (no SM running, or the SM cannot reach it);
    /// `Initializing` with an SM LID means an SM is known but has not
    /// activated this port (a sweep that fails on it, a partition, or on an
    /// SR-IOV virtual function a virtual port the SM does not serve or a VF
    /// with no GUID: an all-zero node GUID says so); `Armed` means the SM
    /// configured it but has not activated it. Either way it carries no
    /// traffic.
    ///
    /// ### Evidence
    /// `State`, `Physical state` and `SM lid` of the port in `ibstat`.
    /// `ibv_devinfo` without `-v` prints no physical state: the message says
    /// so (a port leaves `Down` only once its link is up). From `iblinkinfo`
    /// (the whole fabric): when none of its trained links is Active, one
    /// finding for the fabric with a few of the waiting links' lines, and
    /// the `Initializing` ports with no SM LID of the same host's `ibstat`
    /// added to it as evidence (one cause, one finding); when others are
    /// Active, the waiting ports one by one.
    ///
    /// ### What to do
    /// Check that a subnet manager (opensm, UFM) runs on this fabric
    /// (`sminfo`) and sees this port. If an SM is known or other ports of the
    /// fabric are Active, read the SM log for this port's GUID and look for a
    /// partition or SM sweep problem; for a virtual function, check its GUIDs
    /// on the host and that the SM runs with virtualisation enabled. A port
    /// freshly cabled may become Active at the next SM sweep: check again
    /// after a minute.
    ///
    /// ### Thresholds and sources
    /// Healthy = `Active`. Meta gcm `check_iblink` reports LinkUp-but-not-Active
    /// as LINK_BAD_STATE and treats `Init` as a soft failure.
    pub static IB002 = {
        id: "IB002",
        name: "port-waiting-for-sm",
        family: IbPort,
        severity: Error,
        summary: "InfiniBand port LinkUp but Initializing/Armed (not activated by a subnet manager)",
        needs: "ibstat (or iblinkinfo for the whole fabric)",
        check: check_waiting_for_sm,
    }
}

declare_rule! {
    /// ### What it detects
    /// An Active InfiniBand port with no LID (`Base lid` 0 or 65535) or no
    /// subnet manager (`SM lid` 0).
    ///
    /// ### Why it matters
    /// Traffic is routed by LID and the SM LID is where the port sends its
    /// management queries. An Active port without them points at a subnet
    /// manager problem or a stale sysfs view, and applications that resolve
    /// the port's LID (MPI, NCCL) fail with it. RoCE ports are not judged:
    /// they have no LIDs by design. Nor is a port whose link layer the
    /// input does not say (soft-RoCE `rxe`, old `ibv_devinfo`, a paste cut
    /// before `Link layer`) when LID 0 and SM LID 0 are all it shows, which
    /// is exactly what a RoCE port shows: an info finding says it was not
    /// judged. An SM LID or a LID other than 0 only InfiniBand assigns, so
    /// such a port is judged.
    ///
    /// ### Evidence
    /// `State`, `Base lid` and `SM lid` of the port in `ibstat`.
    ///
    /// ### What to do
    /// Check the subnet manager (`sminfo`, SM logs) and re-read the port after
    /// the next sweep; restart the SM if it lost track of the fabric.
    ///
    /// ### Thresholds and sources
    /// LID 0 and 0xFFFF are not assignable unicast LIDs (IBA; ibstat prints
    /// 65535 before the SM assigns one). SM LID 0 = no SM.
    pub static IB003 = {
        id: "IB003",
        name: "lid-unassigned",
        family: IbPort,
        severity: Error,
        summary: "Active InfiniBand port without a LID or subnet manager LID",
        needs: "ibstat",
        check: check_lid_unassigned,
    }
}

declare_rule! {
    /// ### What it detects
    /// An Active InfiniBand port whose rate is below the rate of the other
    /// Active ports of the same adapter type on the same host.
    ///
    /// ### Why it matters
    /// The ports of a GPU node's rails are cabled alike; one running slower
    /// (fewer lanes or a lower speed after link training) slows every
    /// collective operation that uses it to its pace.
    ///
    /// ### Evidence
    /// The port's `Rate` and the rates of its Active siblings in `ibstat`.
    /// A rate alone cannot tell a degraded 4X HDR link (100) from an HDR100
    /// split cable by design, which is why the rule only compares a port with
    /// its peers.
    ///
    /// ### What to do
    /// Check the link with `iblinkinfo` (its `Could be` hint names the width
    /// or speed both ends support) or `mlxlink -d <dev> -m`; reseat or replace
    /// the cable or transceiver.
    ///
    /// ### Thresholds and sources
    /// The highest rate among Active ports of the same adapter type on the
    /// host. NHC and gpud compare with a configured rate; iblinkinfo flags
    /// links below the width/speed both ends support.
    pub static IB004 = {
        id: "IB004",
        name: "rate-below-host-peers",
        family: IbPort,
        severity: Warning,
        summary: "InfiniBand port rate below its sibling ports on the same host",
        needs: "ibstat with two or more Active ports of one adapter type on a host",
        check: check_rate_below_host_peers,
    }
}

declare_rule! {
    /// ### What it detects
    /// An Active link that trained narrower or slower than both of its ends
    /// support: iblinkinfo's `Could be 4X` / `Could be 53.125 Gbps` hint (also
    /// printed by `ibqueryerrors -r` in its link info), or `ibportstate`'s
    /// port and peer blocks whose `LinkWidthActive` is below what both ends
    /// support, or whose `LinkSpeed…Active` is below what both support and
    /// enable. From a port's block alone
    /// (`smpquery portinfo`, or `ibportstate` without its peer) only a 1X
    /// link on a port that supports 4X is judged: the far end's abilities
    /// are not in the input, and a narrower width can be by design (an
    /// NDR200 split cable runs 2X); a port whose `LinkWidthEnabled` leaves
    /// out its wider widths is said to be limited by configuration.
    ///
    /// From a port's rate (`ibstat`, `ibstatus`, `ibv_devinfo -v`): an
    /// Active InfiniBand port whose printed width is 1X (ibstatus's `(1X
    /// EDR)`), or whose `Rate` only a 1X link gives: 14 (1X FDR), 25 (1X
    /// EDR), 2.5 (1X SDR), 10 tagged `(FDR10)` (1X FDR10; 4X FDR10 is 40).
    /// A rate some wider link gives is not judged: 100 is 4X EDR as well
    /// as an HDR100 port's 2X HDR by design, 200 is 4X HDR and NDR200's 2X
    /// NDR, 50 is 2X EDR, 10 is 4X SDR; nor is a RoCE port (25 and 50 Gb/s
    /// are Ethernet lane rates) or one whose link layer is not printed. A
    /// port that ibportstate or iblinkinfo describes (same LID and port) is
    /// left to their finding.
    ///
    /// ### Why it matters
    /// The link works at a fraction of its bandwidth (a 4X link at 1X carries
    /// a quarter), usually because of a damaged cable, a bad lane or a
    /// transceiver that does not support the full speed; every job routed
    /// over it slows down.
    ///
    /// ### Evidence
    /// The link's active width and speed and the hint, from the iblinkinfo
    /// line; from ibportstate, the supported and enabled widths of the port
    /// and of its peer.
    ///
    /// ### What to do
    /// Replace the cable or transceiver (check lane errors with `mlxlink -m`
    /// on both ends); check that both ends' enabled speeds are not limited
    /// by configuration.
    ///
    /// ### Thresholds and sources
    /// iblinkinfo's own rule (`get_max_msg`): the widest width and fastest
    /// speed both ends' Supported masks allow; ibportstate's own
    /// (`validate_width`, `validate_speed`): both ends' Supported and
    /// Enabled masks. From a rate: the IBTA widths (1X, 2X, 4X, 8X, 12X)
    /// times the lane speeds (SDR 2.5, DDR 5, QDR and FDR10 10, FDR 14,
    /// EDR 25, HDR 50, NDR 100, XDR 200 Gb/s): judged only when every pair
    /// that gives the rate is 1X.
    pub static IB006 = {
        id: "IB006",
        name: "link-below-capability",
        family: IbPort,
        severity: Warning,
        summary: "Link trained narrower or slower than both ends support (iblinkinfo \"Could be\")",
        needs: "iblinkinfo (or ibqueryerrors -r, ibportstate, smpquery portinfo; an Active port's rate from ibstat, ibstatus or ibv_devinfo -v)",
        check: check_could_be,
    }
}

/// Whether a port with this state pair is down in the sense of [`IB001`].
fn is_down(state: Option<PortState>, phys: Option<PhysState>) -> bool {
    state == Some(PortState::Down)
        || matches!(
            phys,
            Some(
                PhysState::Polling
                    | PhysState::Disabled
                    | PhysState::Sleep
                    | PhysState::LinkErrorRecovery
                    | PhysState::PortConfigurationTraining
                    | PhysState::PhyTest
            )
        )
}

/// What to check on an SR-IOV virtual function that no subnet manager has
/// brought up: the host holds the VF's virtual port and its GUIDs, the SM
/// must serve virtual ports.
const VF_CHECK: &str = "for an SR-IOV virtual function, check the VF's link state and GUIDs on the host (`ip link show <pf>`; `ip link set <pf> vf <n> state auto`, `node_guid`, `port_guid`, or the SR-IOV network operator's settings) and that the SM runs with virtualisation enabled (opensm `virt_enabled 2`)";

/// IB002's threshold: a trained link's port is Active.
fn state_active() -> Threshold {
    Threshold::new(
        "State Active",
        "IBA PortInfo; Meta gcm check_iblink (LINK_BAD_STATE)",
    )
}

/// IB002's remedy when a subnet manager runs but has not activated the port.
fn sm_log_check() -> String {
    format!("Read the SM's log for this port's GUID (opensm.log, UFM events): a failing sweep or a partition that leaves it out; {VF_CHECK}.")
}

/// IB002's remedy when no subnet manager is known to have reached the port.
const NO_SM_CHECK: &str =
    "Check that a subnet manager runs (`sminfo`) and sees this port; check again after the next SM sweep.";

/// Whether the adapter type is an SR-IOV virtual function (`MT4124`,
/// `MT4126`…), as the HCA table names it.
fn is_virtual_function(ca_type: Option<&str>) -> bool {
    ca_type
        .and_then(crate::kb::hca_expected_rate)
        .is_some_and(|h| h.product.ends_with("Virtual Function"))
}

/// 0 and 65535: ibstat's "no LID assigned".
fn unassigned(lid: u32) -> bool {
    matches!(lid, 0 | 0xffff)
}

/// A LID as evidence, saying when none is assigned.
fn lid_text(lid: u32) -> String {
    if unassigned(lid) {
        format!("{lid} (none assigned)")
    } else {
        lid.to_string()
    }
}

/// `, Base lid: …, SM lid: …` for what the input printed.
fn lids_evidence(p: &IbPortRef<'_>) -> String {
    let mut s = String::new();
    if let Some(l) = p.base_lid {
        s.push_str(&format!(", Base lid: {}", lid_text(l)));
    }
    if let Some(l) = p.sm_lid {
        s.push_str(&format!(", SM lid: {l}"));
    }
    s
}

/// A port's states as IB001's evidence gives them, with its LIDs when
/// `lids`.
pub(crate) fn reading(p: &IbPortRef<'_>, lids: bool) -> String {
    format!(
        "State: {}, Physical state: {}{}",
        p.state.map_or("(not printed)", PortState::ibstat_name),
        p.physical_state
            .map_or("(not printed)", PhysState::ibstat_name),
        if lids {
            lids_evidence(p)
        } else {
            String::new()
        }
    )
}

/// IB001's cause and remedy for `Down/LinkUp`: the physical link is up, so
/// the cable is not the suspect; what the SM LID says narrows it down.
fn down_linkup_cause(p: &IbPortRef<'_>) -> (String, String) {
    let mut cause = "the link is up, so not a cable fault, but the logical port is down".to_owned();
    let no_lid = p.base_lid.is_none_or(unassigned);
    match p.sm_lid {
        Some(0) => cause.push_str("; SM lid 0: no subnet manager has reached it"),
        Some(sm) if no_lid => {
            cause.push_str(&format!("; the SM (lid {sm}) has assigned it no LID"));
        }
        _ => {}
    }
    match p.ca_type.as_deref().filter(|t| is_virtual_function(Some(t))) {
        Some(vf) => cause.push_str(&format!(
            "; {vf} is an SR-IOV virtual function, whose port stays down while the host holds it down, it has no GUID, or the SM does not serve virtual ports"
        )),
        None => cause.push_str(" (taken down, or not brought up by a subnet manager)"),
    }
    let todo = format!(
        "The cable is not the suspect: check that a subnet manager runs and sees this port (`sminfo`, the SM log for its GUID) and the port's own state (`ibportstate`); {VF_CHECK}."
    );
    (cause, todo)
}

/// What a down port's physical state says, and what to do.
fn down_cause(phys: Option<PhysState>) -> (&'static str, &'static str) {
    match phys {
        Some(PhysState::Polling) => (
            "no peer found: cable unplugged or broken, transceiver failed, or the switch port is down",
            "Reseat or replace the cable/transceiver; check the switch port with iblinkinfo and the switch logs.",
        ),
        Some(PhysState::Disabled) => (
            "the port is disabled, locally or by the subnet manager",
            "Find out who disabled it (the SM disables flapping ports); re-enable with `ibportstate <lid> <port> enable` once the cause is fixed.",
        ),
        Some(PhysState::Sleep) => (
            "the port is asleep",
            "Re-enable the port (`ibportstate <lid> <port> enable`) and check the adapter's firmware and driver logs.",
        ),
        Some(PhysState::LinkErrorRecovery) => (
            "the link is retraining after errors",
            "Read the port's error counters (perfquery) and check the cable; a link stuck in recovery needs a new cable or transceiver.",
        ),
        Some(PhysState::PortConfigurationTraining) => (
            "the link is still training",
            "Check again in a few seconds; a link that never finishes training needs a cable or transceiver check.",
        ),
        _ => (
            "the port carries no traffic",
            "Check the cable, the transceiver and the switch port (iblinkinfo, mlxlink).",
        ),
    }
}

/// What IB001 adds for a header-less port whose fields do not include
/// its `Link layer` (a grep that did not keep it).
pub const LINK_LAYER_NOT_SHOWN_NOTE: &str =
    " (the paste does not show its Link layer: if this is a RoCE port, it is not an InfiniBand fault)";

/// What IB001 adds when the port block was cut before its `Link layer`.
pub const LINK_LAYER_CUT_NOTE: &str =
    " (the paste stops before its Link layer: if this is a RoCE port, it is not an InfiniBand fault)";

/// IB001's cause for a port that never linked beside an Active sibling
/// (`never_linked_beside_active`): the batch stream holds the findings
/// that say it until IB001's fleet step has judged them.
pub const NEVER_LINKED_CAUSE: &str = "never linked since the adapter started (no LID, no SM LID) while another port of the adapter is Active: port unused or never cabled?";

/// What IB001 reads of a port's siblings: the adapters (host, device)
/// with an Active port, and the hosts listing a physical function.
struct Siblings<'a> {
    lit_adapters: BTreeSet<(HostKey<'a>, &'a str)>,
    hosts_with_pf: BTreeSet<HostKey<'a>>,
}

impl<'a> Siblings<'a> {
    fn of(ports: &[&IbPortRef<'a>]) -> Self {
        let lit_adapters = ports
            .iter()
            // A header-less port's adapter is unknown: it lights none.
            .filter(|p| p.is_active() && p.headerless.is_none())
            .map(|p| (p.host(), p.device))
            .collect();
        // A host listing physical functions beside virtual ones is their
        // hypervisor, where a VF's port is Down until a guest uses it.
        // Inside a guest (only the VF listed), a Down VF is the guest's
        // link.
        let hosts_with_pf = ports
            .iter()
            .filter(|p| p.ca_type.is_some() && !is_virtual_function(p.ca_type.as_deref()))
            .map(|p| p.host())
            .collect();
        Self {
            lit_adapters,
            hosts_with_pf,
        }
    }

    /// A down virtual function listed beside its host's physical ones.
    fn idle_vf(&self, p: &IbPortRef<'a>) -> bool {
        p.physical_state != Some(PhysState::LinkUp)
            && is_virtual_function(p.ca_type.as_deref())
            && self.hosts_with_pf.contains(&p.host())
    }

    /// A down port that never linked beside an Active sibling
    /// ([`never_linked_beside_active`]), not an idle virtual function.
    fn never_linked(&self, p: &IbPortRef<'a>) -> bool {
        p.physical_state != Some(PhysState::LinkUp)
            && !self.idle_vf(p)
            && never_linked_beside_active(p, &self.lit_adapters)
    }
}

/// The ports IB001 judges: the latest reading of each InfiniBand port (or
/// one whose block was cut before its link layer) with a state.
fn judged_ports<'c, 'a>(ctx: &'c Context<'a>) -> Vec<&'c IbPortRef<'a>> {
    ctx.latest_ib_ports()
        .iter()
        .filter(|p| p.is_infiniband() || p.link_layer_cut())
        .filter(|p| p.state.is_some() || p.physical_state.is_some())
        .collect()
}

/// The ports IB001 says never linked beside an Active sibling, of named
/// hosts, whose block shows their link layer (a `warning` that may be
/// RoCE says so, and is left to its host): what IB001's fleet step
/// compares across hosts. Most hosts have no port down: they cost one pass
/// over their ports.
pub(crate) fn never_linked_ports<'c, 'a>(ctx: &'c Context<'a>) -> Vec<&'c IbPortRef<'a>> {
    let any_down = ctx
        .latest_ib_ports()
        .iter()
        .any(|p| is_down(p.state, p.physical_state));
    if !any_down {
        return Vec::new();
    }
    let ports = judged_ports(ctx);
    let siblings = Siblings::of(&ports);
    ports
        .into_iter()
        .filter(|p| {
            p.is_infiniband()
                && !p.link_layer_cut()
                && p.headerless.is_none()
                && p.host().name().is_some()
                && is_down(p.state, p.physical_state)
                && siblings.never_linked(p)
        })
        .collect()
}

fn check_port_down(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    // Read only for a Down port (whether its host is dark): it looks
    // through every section's partial parts, and most hosts of a fleet
    // have no port Down.
    let any_down = ctx
        .latest_ib_ports()
        .iter()
        .any(|p| is_down(p.state, p.physical_state));
    let incomplete = if any_down {
        port_listing_incomplete(ctx)
    } else {
        BTreeSet::new()
    };
    let roce = roce_ports_down(ctx, &incomplete, out);
    came_back_up(ctx, out);
    let ports = judged_ports(ctx);
    if ports.is_empty() {
        if roce > 0 {
            return Coverage::Checked(roce);
        }
        return Coverage::Skipped("no InfiniBand port state in the input (run ibstat)".to_owned());
    }
    // A port is Active only over a trained link: where the tool prints
    // no physical state (`ibv_devinfo` without `-v`, `ibdev2netdev -v`)
    // the state alone says so.
    let lit = hosts_with_an_active_port(ports.iter().copied());
    let siblings = Siblings::of(&ports);
    for p in &ports {
        let (state, phys) = (p.state, p.physical_state);
        if !is_down(state, phys) {
            continue;
        }
        let linkup = phys == Some(PhysState::LinkUp);
        let idle_vf = siblings.idle_vf(p);
        let never_linked = siblings.never_linked(p);
        let (cause, todo) = if idle_vf {
            (
                "a virtual function (SR-IOV) listed beside this host's physical functions: its port stays Down until a guest binds it and brings it up".to_owned(),
                "Nothing to do unless a guest uses this VF; then check the VF's policy (/sys/class/infiniband/<PF>/device/sriov/<N>/policy) and the guest's driver.".to_owned(),
            )
        } else if linkup {
            down_linkup_cause(p)
        } else if never_linked {
            (
                NEVER_LINKED_CAUSE.to_owned(),
                "If the port is meant to be unused, ignore this; otherwise cable it (check the cable/transceiver and the switch port with iblinkinfo).".to_owned(),
            )
        } else {
            let (c, t) = down_cause(phys);
            (c.to_owned(), t.to_owned())
        };
        let host_dark = !lit.contains(&p.host()) && !incomplete.contains(&p.host());
        // `Down/Polling`, or `Down` where the tool prints no physical state.
        let mut message = format!(
            "{} is {}{}: {cause}",
            p.name(),
            state.map_or("?", PortState::ibstat_name),
            phys.map_or(String::new(), |ps| format!("/{}", ps.ibstat_name())),
        );
        if host_dark && !idle_vf {
            message.push_str("; no InfiniBand port of this host is Active");
        }
        // A present `State: Down` is still reported: the state is in the
        // paste. But a block cut before its `Link layer` may be a RoCE port,
        // which this rule does not judge: a warning, never more, that says so.
        let roce_possible = p.link_layer_cut();
        if roce_possible && p.headerless.is_some() {
            message.push_str(LINK_LAYER_NOT_SHOWN_NOTE);
        } else if roce_possible {
            message.push_str(LINK_LAYER_CUT_NOTE);
        }
        let mut f = IB001
            .finding(p.subject(), message)
            // The LIDs say what the SM did; on a port without a link they
            // are stale or default, not evidence, unless none was ever
            // assigned (what `never_linked` rests on).
            .evidence(p.evidence(reading(p, linkup || never_linked)))
            .evidence_opt(p.link_layer_evidence())
            .threshold(Threshold::new(
                "State Active and Physical state LinkUp",
                "IBA PortInfo; LBNL NHC check_hw_ib; Meta gcm check_ibstat",
            ))
            .remediation(todo);
        if idle_vf {
            f = f.severity(Severity::Info);
        } else if roce_possible || never_linked {
            f = f.severity(Severity::Warning);
        } else if host_dark {
            f = f.severity(Severity::Critical);
        }
        out.push(f);
    }
    Coverage::Checked(ports.len() + roce)
}

/// Whether a down port (`Polling`, or `Down` where no physical state is
/// printed) has never been given a LID by a subnet manager since its
/// adapter started (`Base lid` 0 or 65535, `SM lid` 0 or not printed)
/// while another port of the same adapter is Active: the second port of a
/// dual-port card that is not cabled, on a fleet most often every host's.
/// A port that had a LID lost its link (the LID stays after the link
/// goes), and a down port on an adapter with no Active port leaves that
/// adapter without a path: both stay errors.
///
/// `lit_adapters` holds the adapters (host, device) with an Active port:
/// this port is not Active, so such a port is another one of its adapter
/// (one reading per port: the latest).
fn never_linked_beside_active<'a>(
    p: &IbPortRef<'a>,
    lit_adapters: &BTreeSet<(HostKey<'a>, &'a str)>,
) -> bool {
    never_linked(p) && lit_adapters.contains(&(p.host(), p.device))
}

/// Whether a port is down without a link (`Polling`, or `Down` where no
/// physical state is printed) and no subnet manager has given it a LID
/// since its adapter started: the shape of [`never_linked_beside_active`],
/// whatever its siblings.
pub(crate) fn never_linked(p: &IbPortRef<'_>) -> bool {
    let no_link = p.state == Some(PortState::Down)
        && matches!(p.physical_state, None | Some(PhysState::Polling));
    let never_assigned = p.base_lid.is_some_and(unassigned) && p.sm_lid.is_none_or(|sm| sm == 0);
    no_link && never_assigned
}

/// IB001 for a port that is up in its last reading but was down in an
/// earlier one of the same paste (`rdma link` run three times: DOWN
/// POLLING, DOWN LINK_UP, ACTIVE LINK_UP): the last reading wins, and it
/// hid that the link had been down. Down then up is `info` (the link came
/// up: a reboot, a reseat, or a flap); up, down and up again is a
/// `warning`: the link flapped while it was watched. Readings are one
/// port's where their Port GUIDs agree (as for the latest reading).
fn came_back_up(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    /// One port's readings so far: its GUID, whether it was up before its
    /// first down reading, that reading, and its last reading.
    struct History<'a> {
        guid: Option<crate::model::ib::Guid>,
        up_before_down: bool,
        down: Option<IbPortRef<'a>>,
        last: IbPortRef<'a>,
    }
    // By [`IbPortRef::key`]: two header-less readings are never one port's.
    let mut ports: BTreeMap<PortKey<'_>, Vec<History<'_>>> = BTreeMap::new();
    for p in ctx.ib_ports() {
        // `ibdev2netdev` says little of a port's state, in no order.
        if p.at.section.kind == crate::parse::Kind::Ibdev2netdev
            || (p.state.is_none() && p.physical_state.is_none())
        {
            continue;
        }
        let views = ports.entry(p.key()).or_default();
        let same = views.iter().rposition(|h| match (h.guid, p.port_guid) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        });
        let down = is_down(p.state, p.physical_state);
        match same.and_then(|i| views.get_mut(i)) {
            Some(h) => {
                if down && h.down.is_none() {
                    h.up_before_down = h.last.is_active();
                    h.down = Some(p.clone());
                }
                h.guid = h.guid.or(p.port_guid);
                h.last = p;
            }
            None => views.push(History {
                guid: p.port_guid,
                up_before_down: false,
                down: down.then(|| p.clone()),
                last: p,
            }),
        }
    }
    for h in ports.into_values().flatten() {
        let Some(down) = h.down else { continue };
        if !h.last.is_active() {
            continue;
        }
        let was = format!(
            "{}{}",
            down.state.map_or("?", PortState::ibstat_name),
            down.physical_state
                .map_or(String::new(), |ps| format!("/{}", ps.ibstat_name()))
        );
        let (severity, message) = if h.up_before_down {
            (
                Severity::Warning,
                format!(
                    "{} flapped while it was watched: Active, then {was}, then Active again",
                    h.last.name()
                ),
            )
        } else {
            (
                Severity::Info,
                format!(
                    "{} was {was} in an earlier reading and is Active now: the link came up (after a reboot or a reseat, or between two flaps)",
                    h.last.name()
                ),
            )
        };
        out.push(
            IB001
                .finding(h.last.subject(), message)
                .severity(severity)
                .evidence(down.evidence(format!("earlier: State: {was}")))
                .evidence(h.last.evidence("later: State: Active, Physical state: LinkUp".to_owned()))
                .threshold(Threshold::new(
                    "State Active and Physical state LinkUp in every reading",
                    "IBA PortInfo; LBNL NHC check_hw_ib; Meta gcm check_ibstat",
                ))
                .remediation("Read the port's LinkDownedCounter and LinkErrorRecoveryCounter (perfquery) and watch it: a link that goes down again needs its cable or transceiver checked (mlxlink -d <dev> -c for its BER).".to_owned()),
        );
    }
}

/// The hosts with at least one of `ports` Active over a trained link.
fn hosts_with_an_active_port<'p, 'a: 'p>(
    ports: impl Iterator<Item = &'p IbPortRef<'a>>,
) -> BTreeSet<HostKey<'a>> {
    ports.filter(|p| p.is_active()).map(|p| p.host()).collect()
}

/// Hosts whose adapters are numbered from above 0 (`mlx5_11`, `mlx5_3`
/// … and no `mlx5_0`): the tools list a host's adapters from `_0`, so
/// the paste starts in the middle of the list, and "no port of this host
/// is Active" would be said of ports it does not show. A single adapter
/// is not enough to say so: a pod or VM sees its one function under
/// whatever number the host gave it. Hosts whose port listing holds an
/// elision (`...`) or a cut (a port or adapter block stopping short: the
/// ports after it are not in the paste) are among them too, and hosts
/// with a port whose state is not in the paste (its `State:` blanked):
/// that port may be the Active one.
fn port_listing_incomplete<'a>(ctx: &Context<'a>) -> BTreeSet<HostKey<'a>> {
    // The lowest number of each family, and how many adapters it has.
    let mut lowest: BTreeMap<(HostKey<'a>, &'a str), (u32, usize)> = BTreeMap::new();
    let mut seen: BTreeSet<(HostKey<'a>, &'a str)> = BTreeSet::new();
    for p in ctx.latest_ib_ports() {
        let Some((family, number)) = p.device.rsplit_once('_') else {
            continue;
        };
        let Ok(number) = number.parse::<u32>() else {
            continue;
        };
        let (low, count) = lowest.entry((p.host(), family)).or_insert((number, 0));
        *low = (*low).min(number);
        if seen.insert((p.host(), p.device)) {
            *count += 1;
        }
    }
    let mut hosts: BTreeSet<HostKey<'a>> = lowest
        .into_iter()
        .filter(|(_, (low, count))| *low > 0 && *count >= 2)
        .map(|((host, _), _)| host)
        .collect();
    // And hosts whose port listing the author elided (`...`) or the paste
    // cut: the ports left out may be the Active ones.
    hosts.extend(
        super::input::partial_parts(ctx)
            .into_iter()
            .filter(|p| {
                matches!(
                    p.at.section.data,
                    SectionData::Ibstat(_)
                        | SectionData::Ibstatus(_)
                        | SectionData::IbvDevinfo(_)
                        | SectionData::RdmaLink(_)
                        | SectionData::Ibdev2netdev(_)
                        | SectionData::NodeExporter(_)
                )
            })
            .map(|p| p.at.host()),
    );
    hosts.extend(
        ctx.latest_ib_ports()
            .iter()
            .filter(|p| p.state.is_none())
            .map(|p| p.host()),
    );
    // And hosts whose every listing shows only some ports on purpose: a
    // command naming one adapter or port (`ibv_devinfo -d mlx4_1 -i 2`),
    // or an `ibv_devinfo` device with fewer port blocks than its
    // `phys_port_cnt`. A full `ibstat` of the same host beside an `ibstat
    // mlx5_0 1` still shows all its ports.
    let mut some: BTreeSet<HostKey<'a>> = BTreeSet::new();
    let mut every: BTreeSet<HostKey<'a>> = BTreeSet::new();
    for p in ctx.ib_ports() {
        if lists_some_ports(p.at.section) {
            some.insert(p.host());
        } else {
            every.insert(p.host());
        }
    }
    hosts.extend(some.difference(&every).copied());
    hosts
}

/// Whether a port listing shows only some of its host's ports on purpose
/// ([`port_listing_incomplete`]).
fn lists_some_ports(section: &crate::input::Section) -> bool {
    !super::ib_fleet::lists_every_port(section.command.as_deref())
        || matches!(&section.data, SectionData::IbvDevinfo(d)
            if d.devices.iter().any(|dev| dev.phys_port_cnt
                .is_some_and(|n| dev.ports.len() < n as usize)))
}

/// IB001 for RDMA ports over Ethernet (RoCE), returning how many port
/// states were read. A Down RoCE port of a set of Active rails is judged
/// ([`rail_down`]). Any other Down RoCE port beside an Active one is most often
/// a NIC not cabled or not in use (a management port, the second port of
/// a card): not judged, as on a fleet every host would say it. But a host
/// none of whose RDMA ports (InfiniBand or RoCE) is Active can do no RDMA
/// at all: a warning on each. Before, a RoCE host with every port
/// Down/Disabled was called healthy, and its ports "no InfiniBand port
/// state in the input".
fn roce_ports_down<'a>(
    ctx: &Context<'a>,
    incomplete: &BTreeSet<HostKey<'a>>,
    out: &mut Vec<Finding>,
) -> usize {
    let ports: Vec<&IbPortRef<'_>> = ctx
        .latest_ib_ports()
        .iter()
        .filter(|p| p.link_layer == Some(LinkLayer::Ethernet))
        .filter(|p| p.state.is_some() || p.physical_state.is_some())
        .collect();
    if ports.is_empty() {
        return 0;
    }
    // Every RDMA port read, whatever its link layer.
    let lit = hosts_with_an_active_port(ctx.latest_ib_ports().iter());
    // Active and down Ethernet ports per host and adapter type: a set of
    // identical NICs (a GPU server's rails) with a few of them down.
    let mut by_type: BTreeMap<(HostKey<'_>, &str), (usize, usize)> = BTreeMap::new();
    for p in &ports {
        if let Some(ty) = p.ca_type.as_deref() {
            let counts = by_type.entry((p.host(), ty)).or_default();
            if p.state == Some(PortState::Active) {
                counts.0 += 1;
            } else if is_down(p.state, p.physical_state) {
                counts.1 += 1;
            }
        }
    }
    for p in &ports {
        let (state, phys) = (p.state, p.physical_state);
        if !is_down(state, phys) || is_virtual_function(p.ca_type.as_deref()) {
            continue;
        }
        let cause = match phys {
            Some(PhysState::Disabled) => {
                "its network interface is down (`ip link` shows it DOWN) or the port is turned off"
            }
            Some(PhysState::Polling) => "no Ethernet link partner: not cabled, or the cable, transceiver or switch port is down",
            Some(PhysState::LinkUp) => "the Ethernet link is up but the RDMA port is not active (the interface, or its RoCE configuration)",
            _ => "no Ethernet link",
        };
        let host_dark = !lit.contains(&p.host()) && !incomplete.contains(&p.host());
        if !host_dark {
            if let Some(f) = rail_down(p, &by_type, cause) {
                out.push(f);
            }
            continue;
        }
        let message = format!(
            "{} (RoCE: Ethernet link layer) is {}{}: {cause}; no RDMA port of this host is Active",
            p.name(),
            state.map_or("?", PortState::ibstat_name),
            phys.map_or(String::new(), |ps| format!("/{}", ps.ibstat_name())),
        );
        out.push(
            IB001
                .finding(p.subject(), message)
                .severity(Severity::Warning)
                .evidence(p.evidence(format!(
                    "State: {}, Physical state: {}{}",
                    state.map_or("(not printed)", PortState::ibstat_name),
                    phys.map_or("(not printed)", PhysState::ibstat_name),
                    // Told by ibdev2netdev (its own evidence below), or
                    // printed with the port.
                    if p.link_layer_from.is_some() {
                        ""
                    } else {
                        ", Link layer: Ethernet"
                    },
                )))
                .evidence_opt(p.link_layer_evidence())
                .threshold(Threshold::new(
                    "at least one RDMA port of the host Active and LinkUp",
                    "IBA PortInfo (RoCE ports report the same states); NCCL and UCX use only Active RDMA ports",
                ))
                .remediation(
                    "If jobs on this host use RDMA, bring the NIC's interface up (`ibdev2netdev` names it; `ip link set <if> up`) and check the cable and the switch port; if the host uses no RDMA, nothing to do.",
                ),
        );
    }
    ports.len()
}

/// Identical Active ports a down RoCE port needs beside it on its host
/// to be judged: a set of rails, not a spare port.
const RAIL_SET: usize = 4;

/// IB001 for a RoCE port down beside a set of identical ones that are
/// Active: at least [`RAIL_SET`] ports of its adapter type Active on the
/// host, and at most half as many down. A GPU server's RDMA rails are a
/// set of identical NICs all in use, so one of them without a link is a
/// rail missing; a second port of each card, unused by design, is down
/// as often as the first is up, and is not judged. A lone Down RoCE port
/// beside an Active one stays unjudged, as before.
fn rail_down(
    p: &IbPortRef<'_>,
    by_type: &BTreeMap<(HostKey<'_>, &str), (usize, usize)>,
    cause: &str,
) -> Option<Finding> {
    let ty = p.ca_type.as_deref()?;
    let &(active, down) = by_type.get(&(p.host(), ty))?;
    if active < RAIL_SET || down * 2 > active {
        return None;
    }
    let (state, phys) = (p.state, p.physical_state);
    Some(
        IB001
            .finding(
                p.subject(),
                format!(
                    "{} (RoCE: Ethernet link layer) is {}{} while {active} other {ty} port(s) of this host are Active: one of a set of identical NICs (a GPU server's rails) has no link: {cause}",
                    p.name(),
                    state.map_or("?", PortState::ibstat_name),
                    phys.map_or(String::new(), |ps| format!("/{}", ps.ibstat_name())),
                ),
            )
            .severity(Severity::Warning)
            .evidence(p.evidence(format!(
                "State: {}, Physical state: {}, Link layer: Ethernet; {active} Active and {down} down {ty} port(s) on the host",
                state.map_or("(not printed)", PortState::ibstat_name),
                phys.map_or("(not printed)", PhysState::ibstat_name),
            )))
            .threshold(Threshold::new(
                format!("every port of a set of at least {RAIL_SET} identical RDMA NICs Active, at most half as many down"),
                "NCCL and UCX use only Active RDMA ports; GPU servers pair each GPU with a NIC of one type (rail-optimised designs)",
            ))
            .remediation(
                "If this NIC is one of the host's GPU rails, bring its interface up (`ibdev2netdev` names it; `ip link set <if> up`) and check the cable, transceiver and switch port; a NIC left unused by design can be ignored.",
            ),
    )
}

/// IB002.
fn check_waiting_for_sm(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let ports: Vec<&IbPortRef<'_>> = ctx
        .latest_ib_ports()
        .iter()
        .filter(|p| p.is_infiniband() && p.state.is_some())
        .collect();
    let (fabric_links, no_sm) = waiting_links_in_iblinkinfo(ctx, out);
    if ports.is_empty() {
        if fabric_links > 0 {
            return Coverage::Checked(fabric_links);
        }
        return Coverage::Skipped("no InfiniBand port state in the input (run ibstat)".to_owned());
    }
    for p in &ports {
        let Some(state @ (PortState::Initializing | PortState::Armed)) = p.state else {
            continue;
        };
        if matches!(p.physical_state, Some(ps) if ps != PhysState::LinkUp) {
            continue; // IB001 reports it
        }
        // An SM LID other than 0 is only set by a subnet manager that
        // reached the port: "no SM" would then be wrong.
        let sm_known = p.sm_lid.filter(|l| *l != 0);
        // Zeros on a physical function may be a redaction: only a virtual
        // function's are read as "no GUID assigned".
        let unnamed_vf = zero_guid(ctx, p).filter(|_| is_virtual_function(p.ca_type.as_deref()));
        let (why, todo) = match (state, sm_known) {
            (PortState::Armed, _) => (
                "the subnet manager configured it but has not activated it".to_owned(),
                NO_SM_CHECK.to_owned(),
            ),
            (_, Some(sm)) => (
                format!("a subnet manager is known (SM lid {sm}) and has not activated this port"),
                sm_log_check(),
            ),
            _ => (
                "no subnet manager has configured it (no SM running, or it cannot reach this port)"
                    .to_owned(),
                NO_SM_CHECK.to_owned(),
            ),
        };
        // ibv_devinfo without -v prints no physical state; a port leaves
        // Down only once its link is up, so LinkUp is inferred, not read.
        let link = match p.physical_state {
            Some(ps) => format!(
                "{}/{}: the cable is up",
                state.ibstat_name(),
                ps.ibstat_name()
            ),
            None => format!(
                "{} (physical state not printed; {} implies the link trained)",
                state.ibstat_name(),
                state.ibstat_name()
            ),
        };
        let mut message = format!("{} is {link}, but {why}", p.name());
        if let Some(which) = unnamed_vf {
            message.push_str(&format!(
                "; its {which} is all zeros: a virtual function with no GUID assigned"
            ));
        }
        let mut evidence = format!(
            "State: {}, Physical state: {}{}",
            state.ibstat_name(),
            p.physical_state
                .map_or("(not printed)", PhysState::ibstat_name),
            lids_evidence(p)
        );
        if let Some(which) = unnamed_vf {
            evidence.push_str(&format!(", {which}: 0x0000000000000000"));
        }
        // The host's own iblinkinfo already says no SM configured the
        // fabric: this port is more of the same evidence, not a second
        // finding about the same cause.
        if state == PortState::Initializing && sm_known.is_none() && unnamed_vf.is_none() {
            let fabric = no_sm
                .iter()
                .find(|(host, _)| *host == p.host())
                .and_then(|&(_, at)| out.get_mut(at));
            if let Some(fabric) = fabric {
                let text = format!("{}: {evidence}", p.name());
                fabric.evidence.push(p.evidence(text));
                continue;
            }
        }
        out.push(
            IB002
                .finding(p.subject(), message)
                .evidence(p.evidence(evidence))
                .threshold(state_active())
                .remediation(todo),
        );
    }
    Coverage::Checked(ports.len() + fabric_links)
}

/// Port lines of a waiting fabric shown as evidence; the rest are counted.
const WAITING_LINKS_SHOWN: usize = 4;

/// IB002 over `iblinkinfo`, the fabric as one node sees it: every trained
/// link (`LinkUp`) that is `Initialize` or `Armed`. When no trained link
/// of the listing is Active, the cause is one, the subnet manager, and it
/// is one finding for the fabric with a few of its lines as evidence (a
/// 2,000-port fabric without an SM is not 2,000 findings). When other
/// links are Active an SM runs, and each waiting port is its own finding.
/// Returns the trained links judged, and the host and place in `out` of
/// each fabric finding (no subnet manager), for the host's own ports to
/// join.
fn waiting_links_in_iblinkinfo<'c>(
    ctx: &Context<'c>,
    out: &mut Vec<Finding>,
) -> (usize, Vec<(HostKey<'c>, usize)>) {
    use crate::model::iblinkinfo::{LinkNode, LinkPort};
    // Each host's latest listing: `iblinkinfo` and `iblinkinfo -l` taken
    // one after the other are one fabric seen twice.
    let mut latest: BTreeMap<HostKey<'_>, _> = BTreeMap::new();
    for at in ctx.sections() {
        if let SectionData::Iblinkinfo(info) = &at.section.data {
            latest.insert(at.host(), (at, info));
        }
    }
    let mut listings: Vec<_> = latest.into_values().collect();
    listings.sort_by_key(|(at, _)| (at.doc, at.section.span));
    let mut judged = 0;
    let mut no_sm = Vec::new();
    for (at, info) in listings {
        let trained: Vec<(&LinkNode, &LinkPort)> = info
            .ports()
            .filter(|(_, p)| p.physical_state == PhysState::LinkUp && !p.port_not_available)
            .collect();
        judged += trained.len();
        let waiting: Vec<&(&LinkNode, &LinkPort)> = trained
            .iter()
            .filter(|(_, p)| matches!(p.state, PortState::Initializing | PortState::Armed))
            .collect();
        let Some(&&(_, first)) = waiting.first() else {
            continue;
        };
        let name = |node: &LinkNode| node.desc.as_deref().map_or("node", str::trim).to_owned();
        let line = |node: &LinkNode, p: &LinkPort| {
            Evidence::new(
                format!(
                    "iblinkinfo: {} port {}: {}/LinkUp, LID {}",
                    name(node),
                    p.port,
                    p.state.ibstat_name(),
                    p.lid
                ),
                p.span,
                at.source(),
            )
        };
        if trained.iter().any(|(_, p)| p.state == PortState::Active) {
            for &&(node, p) in &waiting {
                out.push(
                    IB002
                        .finding(
                            Subject {
                                device: Some(name(node)),
                                port: Some(p.port),
                                lid: Some(p.lid).filter(|l| !unassigned(*l)),
                                guid: p.guid.or(node.guid),
                                ..Subject::default()
                            },
                            format!(
                                "{} port {} is {}/LinkUp while other links of the fabric are Active: a subnet manager runs but has not activated this port",
                                name(node),
                                p.port,
                                p.state.ibstat_name()
                            ),
                        )
                        .evidence(line(node, p))
                        .threshold(state_active())
                        .remediation(sm_log_check()),
                );
            }
            continue;
        }
        // The fabric has no port of its own to name: the subject is the
        // host the listing was taken on, where one is named.
        let from = Subject {
            host: at.host().name().map(str::to_owned),
            ..Subject::default()
        };
        let mut f = IB002
            .finding(
                from,
                format!(
                    "none of the {} trained links in this iblinkinfo is Active ({} {}/LinkUp): no subnet manager has configured the fabric (no SM running, or it reaches none of these ports)",
                    trained.len(),
                    waiting.len(),
                    first.state.ibstat_name()
                ),
            )
            .threshold(state_active())
            .remediation(NO_SM_CHECK);
        for &&(node, p) in waiting.iter().take(WAITING_LINKS_SHOWN) {
            f = f.evidence(line(node, p));
        }
        if waiting.len() > WAITING_LINKS_SHOWN {
            f = f.evidence(Evidence::new(
                format!(
                    "iblinkinfo: and {} more links waiting",
                    waiting.len() - WAITING_LINKS_SHOWN
                ),
                at.section.span,
                at.source(),
            ));
        }
        no_sm.push((at.host(), out.len()));
        out.push(f);
    }
    (judged, no_sm)
}

/// Which GUID of the port was printed as all zeros (`port GUID`, or its
/// adapter's `node GUID`), as an SR-IOV virtual function shows before one
/// is assigned. A redacted or missing GUID is not zero.
fn zero_guid(ctx: &Context<'_>, p: &IbPortRef<'_>) -> Option<&'static str> {
    if p.port_guid.is_some_and(|g| g.0 == 0) {
        return Some("port GUID");
    }
    ctx.latest_adapters()
        .iter()
        .any(|a| {
            a.at.host() == p.host() && a.name == p.device && a.node_guid.is_some_and(|g| g.0 == 0)
        })
        .then_some("node GUID")
}

/// IB003.
fn check_lid_unassigned(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let ports: Vec<&IbPortRef<'_>> = ctx
        .latest_ib_ports()
        .iter()
        // A block cut before its link layer is judged below only when its
        // LIDs prove InfiniBand; otherwise it is listed as not judged.
        .filter(|p| (p.is_infiniband() || p.link_layer_cut()) && p.state == Some(PortState::Active))
        .filter(|p| p.base_lid.is_some() || p.sm_lid.is_some())
        .collect();
    if ports.is_empty() {
        return Coverage::Skipped(
            "no Active InfiniBand port with LIDs in the input (run ibstat)".to_owned(),
        );
    }
    for p in &ports {
        let base_bad = p.base_lid.is_some_and(unassigned);
        let sm_bad = p.sm_lid == Some(0);
        if !base_bad && !sm_bad {
            continue;
        }
        if !link_layer_known(p) && !lids_prove_infiniband(p) {
            out.push(not_judged_without_link_layer(p));
            continue;
        }
        let what = match (base_bad, sm_bad) {
            (true, true) => "has no LID and no subnet manager LID",
            (true, false) => "has no LID",
            _ => "has no subnet manager LID",
        };
        let lid = |v: Option<u32>| v.map_or("(not printed)".to_owned(), |l| l.to_string());
        out.push(
            IB003
                .finding(
                    p.subject(),
                    format!("{} is Active but {what}", p.name()),
                )
                .evidence(p.evidence(format!(
                    "State: Active, Base lid: {}, SM lid: {}",
                    lid(p.base_lid),
                    lid(p.sm_lid)
                )))
                .threshold(Threshold::new(
                    "Base lid not 0 or 65535; SM lid not 0",
                    "IBA LID ranges; ibstat prints 65535 before the SM assigns a LID",
                ))
                .remediation(
                    "Check the subnet manager (`sminfo`, SM logs) and re-read the port after the next sweep.",
                ),
        );
    }
    Coverage::Checked(ports.len())
}

/// Whether the port's link layer was printed and read (`InfiniBand`,
/// `Ethernet`): a missing line or an unreadable value is not InfiniBand.
fn link_layer_known(p: &IbPortRef<'_>) -> bool {
    matches!(
        p.link_layer,
        Some(LinkLayer::Infiniband | LinkLayer::Ethernet)
    )
}

/// Only an InfiniBand subnet manager assigns an SM LID or a LID other than
/// 0 (65535 is ibstat's "not yet assigned"); a RoCE port shows 0 for both.
fn lids_prove_infiniband(p: &IbPortRef<'_>) -> bool {
    p.sm_lid.is_some_and(|l| l != 0) || p.base_lid.is_some_and(|l| l != 0)
}

/// The info finding for an Active port whose LIDs look like RoCE's and
/// whose link layer the input does not say: listed, not judged.
fn not_judged_without_link_layer(p: &IbPortRef<'_>) -> Finding {
    let lid = |v: Option<u32>| v.map_or("(not printed)".to_owned(), |l| l.to_string());
    let layer = match p.link_layer {
        None => "its link layer is not printed".to_owned(),
        Some(_) => "its link layer is not one this version reads".to_owned(),
    };
    IB003
        .finding(
            p.subject(),
            format!(
                "{} is Active with LID {} and SM LID {}, but {layer}: on RoCE (Ethernet) that is normal, so it is not judged; on InfiniBand it would mean no subnet manager has assigned it",
                p.name(),
                lid(p.base_lid),
                lid(p.sm_lid)
            ),
        )
        .severity(Severity::Info)
        .evidence(p.evidence(format!(
            "State: Active, Base lid: {}, SM lid: {}, no link layer",
            lid(p.base_lid),
            lid(p.sm_lid)
        )))
        .threshold(Threshold::new(
            "judged only when the link layer is InfiniBand, or the LIDs show an SM",
            "IBA LID ranges; RoCE ports report LID 0 and SM LID 0",
        ))
        .remediation(
            "Run `ibv_devinfo` or `ibstat` with a current rdma-core to print `link_layer`; if it is InfiniBand, check the subnet manager (`sminfo`).",
        )
}

/// IB004.
fn check_rate_below_host_peers(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    // Active IB ports with a rate, grouped by host and adapter type.
    type Rated<'a> = Vec<(IbPortRef<'a>, f64)>;
    let mut groups: BTreeMap<(HostKey<'_>, Option<String>), Rated<'_>> = BTreeMap::new();
    for p in ctx.latest_ib_ports().iter().cloned() {
        if !p.is_infiniband() || !p.is_active() {
            continue;
        }
        let Some(rate) = p.rate_gbps else {
            continue;
        };
        groups
            .entry((p.host(), p.ca_type.clone()))
            .or_default()
            .push((p, rate));
    }
    groups.retain(|_, ports| ports.len() >= 2);
    if groups.is_empty() {
        return Coverage::Skipped(
            "no host with two or more Active InfiniBand ports of one adapter type".to_owned(),
        );
    }
    let mut checked = 0;
    for ports in groups.values() {
        checked += ports.len();
        let best = ports.iter().map(|(_, r)| *r).fold(f64::MIN, f64::max);
        let at_best = ports.iter().filter(|(_, r)| *r >= best).count();
        for (p, rate) in ports {
            if *rate >= best {
                continue;
            }
            out.push(
                IB004
                    .finding(
                        p.subject(),
                        format!(
                            "{} runs at {} Gb/s while {at_best} sibling port(s) run at {} Gb/s",
                            p.name(),
                            gbps(*rate),
                            gbps(best)
                        ),
                    )
                    .evidence(p.evidence(format!("Rate: {}", gbps(*rate))))
                    .evidence(match ports.iter().find(|(_, r)| *r >= best) {
                        Some((peer, _)) => peer.evidence(format!(
                            "{} Rate: {}",
                            peer.name(),
                            gbps(best)
                        )),
                        None => p.evidence(format!("Rate: {}", gbps(*rate))),
                    })
                    .threshold(Threshold::new(
                        format!("{} Gb/s (best Active sibling)", gbps(best)),
                        "peer comparison on the host (NHC/gpud compare with a configured rate)",
                    ))
                    .remediation(
                        "Check the link with iblinkinfo (\"Could be\" hint) or mlxlink; reseat or replace the cable/transceiver.",
                    ),
            );
        }
    }
    Coverage::Checked(checked)
}

/// IB006.
fn check_could_be(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let mut checked = 0;
    for at in ctx.sections() {
        match &at.section.data {
            SectionData::Iblinkinfo(info) => {
                for (node, port) in info.ports() {
                    if port.state != PortState::Active {
                        continue;
                    }
                    checked += 1;
                    if !port.degraded() {
                        continue;
                    }
                    let desc = node.desc.as_deref().map_or("node", str::trim);
                    let now = format!(
                        "{} {}",
                        port.width.as_ref().map_or("?", |w| w.text.as_str()),
                        port.speed_text.as_deref().unwrap_or("?")
                    );
                    let mut could = Vec::new();
                    if let Some(w) = &port.could_be_width {
                        could.push(w.text.clone());
                    }
                    if let Some(sp) = &port.could_be_speed {
                        could.push(sp.clone());
                    }
                    let peer = port
                        .remote
                        .as_ref()
                        .map(|r| format!(" to \"{}\" port {}", r.desc, r.port))
                        .unwrap_or_default();
                    out.push(
                        IB006
                            .finding(
                                Subject {
                                    device: Some(desc.to_owned()),
                                    port: Some(port.port),
                                    lid: Some(port.lid),
                                    guid: port.guid.or(node.guid),
                                    ..Subject::default()
                                },
                                format!(
                                    "{desc} port {}{peer} runs at {now}; both ends support {}",
                                    port.port,
                                    could.join(" ")
                                ),
                            )
                            .evidence(Evidence::new(
                                format!("iblinkinfo: {now} ( Could be {} )", could.join(" ")),
                                port.span,
                                at.source(),
                            ))
                            .threshold(Threshold::new(
                                "no \"Could be\" hint",
                                "infiniband-diags iblinkinfo (get_max_msg: both ends' supported width/speed)",
                            ))
                            .remediation("Replace the cable or transceiver (mlxlink -m shows lane errors); check that neither end limits its enabled speeds."),
                    );
                }
            }
            SectionData::Ibqueryerrors(iq) => {
                for node in &iq.nodes {
                    for p in &node.ports {
                        let Some(link) = &p.link else { continue };
                        checked += 1;
                        let Some(could) = link.remote.as_ref().and_then(|r| r.could_be.as_deref())
                        else {
                            continue;
                        };
                        let subject = Subject {
                            // A port line pasted without its `Errors for`
                            // header names no node: none is invented.
                            device: (!node.headerless).then(|| node.desc.clone()),
                            port: Some(p.port),
                            lid: Some(link.lid),
                            guid: Some(p.guid),
                            ..Subject::default()
                        };
                        let who = subject.describe();
                        out.push(
                            IB006
                                .finding(
                                    subject,
                                    format!(
                                        "{who} runs at {} {}; {could}",
                                        link.width.as_deref().unwrap_or("?"),
                                        link.speed.as_deref().unwrap_or("?")
                                    ),
                                )
                                .evidence(Evidence::new(
                                    format!("ibqueryerrors link info: ( {could} )"),
                                    p.span,
                                    at.source(),
                                ))
                                .threshold(Threshold::new(
                                    "no \"Could be\" hint",
                                    "infiniband-diags iblinkinfo/ibqueryerrors (both ends' supported width/speed)",
                                ))
                                .remediation("Replace the cable or transceiver (mlxlink -m shows lane errors); check that neither end limits its enabled speeds."),
                        );
                    }
                }
            }
            SectionData::Portinfo(info) => {
                checked += super::port_info::check_below_capability(at, info, out);
            }
            SectionData::IbdiagnetLog(log) => {
                checked += ibdiagnet_links(at, log, out);
            }
            _ => {}
        }
    }
    checked += super::port_info::check_narrow_rate(ctx, out);
    if checked == 0 {
        return Coverage::Skipped(
            "no Active link from iblinkinfo, ibqueryerrors -r or ibportstate, nor an Active InfiniBand port's rate, in the input"
                .to_owned(),
        );
    }
    Coverage::Checked(checked)
}

/// IB006 over ibdiagnet's `Link: … - Unexpected actual link speed|width`
/// lines: ibdiagnet's own check that a link trained at the speed and width
/// both ends enable (`therefore final speed should be 10`), the condition
/// ibportstate's `validate_speed`/`validate_width` judge. A `warning`
/// whether ibdiagnet marked the line `-E-` or `-W-`: a link below its
/// capability is the same fault whichever tool reports it. Returns the
/// links judged: each flagged one, and one for a run whose summary shows
/// its speed/width stage.
fn ibdiagnet_links(
    at: SectionRef<'_>,
    log: &crate::model::ibdiagnet_log::IbdiagnetLog,
    out: &mut Vec<Finding>,
) -> usize {
    use crate::model::ibdiagnet_log::LinkProperty;
    for link in &log.links {
        let (what, unit) = match link.property {
            LinkProperty::Speed => ("speed", " Gb/s per lane"),
            LinkProperty::Width => ("width", ""),
        };
        let peer = link
            .peer
            .as_ref()
            .map(|p| format!(" to {}", p.name))
            .unwrap_or_default();
        let expected = link.expected.as_deref().map_or_else(
            || "the value both ends enable (the line was cut before it)".to_owned(),
            |e| format!("{e}{unit}, what both ends enable"),
        );
        out.push(
            IB006
                .finding(
                    Subject {
                        device: link.end.node_guid.is_none().then(|| link.end.node.clone()),
                        port: link.end.port,
                        guid: link.end.node_guid,
                        ..Subject::default()
                    },
                    format!(
                        "ibdiagnet: link {}{peer} trained at {what} {}{unit}; it should run at {expected}",
                        link.end.name, link.actual
                    ),
                )
                .evidence(Evidence::new(
                    format!(
                        "ibdiagnet: Unexpected actual link {what} {}{}",
                        link.actual,
                        link.detail
                            .as_deref()
                            .map(|d| format!(" ({d})"))
                            .unwrap_or_default()
                    ),
                    link.span,
                    at.source(),
                ))
                .threshold(Threshold::new(
                    format!("link {what} = the best both ends enable"),
                    "ibdiagnet's speed/width check (both ends' enabled values), as ibportstate's validate_speed/validate_width",
                ))
                .remediation("Replace the cable or transceiver (mlxlink -m shows lane errors); check that neither end limits its enabled speeds or widths."),
        );
    }
    let stage_ran = log.stages.iter().any(|s| {
        let name = s.stage.to_ascii_lowercase();
        name.contains("speed") || name.contains("width")
    });
    log.links.len() + usize::from(stage_ran && log.links.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testing::{findings_of, skipped_reason};

    const ACTIVE: &str = "CA 'mlx5_0'\n\tCA type: MT4129\n\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 400\n\t\tBase lid: 12\n\t\tSM lid: 1\n\t\tLink layer: InfiniBand\n";

    /// An iblinkinfo listing: a switch with the given port states, each
    /// port linked to a CA.
    fn iblinkinfo(states: &[&str]) -> String {
        let mut text = String::from("Switch: 0x0000000000200000 MF0;sw1:MQM8700/U1:\n");
        for (i, state) in states.iter().enumerate() {
            let n = i + 1;
            let lid = if *state == "Active" { n + 10 } else { 0 };
            text.push_str(&format!(
                "           {lid}    {n}[  ] ==( 4X          25.78125 Gbps {state}/  LinkUp)==>       {lid}    1[  ] \"node{n:02} mlx5_0\" ( )\n"
            ));
        }
        text.push_str("           0    9[  ] ==(                Down/ Polling)==>             [  ] \"\" ( )\n");
        text
    }

    /// A dual-port ibstat CA: port 1 Active, port 2 as given.
    fn dual_port(state: &str, phys: &str, lid: u32, sm: u32) -> String {
        format!("CA 'mlx4_0'\n\tCA type: MT4099\n\tNumber of ports: 2\n\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 56\n\t\tBase lid: 4\n\t\tSM lid: 1\n\t\tLink layer: InfiniBand\n\tPort 2:\n\t\tState: {state}\n\t\tPhysical state: {phys}\n\t\tRate: 10\n\t\tBase lid: {lid}\n\t\tSM lid: {sm}\n\t\tLink layer: InfiniBand\n")
    }

    #[test]
    fn a_second_port_never_linked_beside_an_active_one_is_a_warning() {
        for lid in [0, 65535] {
            let f = findings_of(&IB001, &dual_port("Down", "Polling", lid, 0));
            assert_eq!(f.len(), 1, "{f:?}");
            assert_eq!(f[0].severity, Severity::Warning);
            assert!(f[0].message.contains("never linked"), "{}", f[0].message);
            assert!(f[0].remediation.contains("unused"), "{}", f[0].remediation);
            assert!(
                f[0].evidence[0].text.contains(&format!("Base lid: {lid}")),
                "{:?}",
                f[0].evidence
            );
        }
        // It had a LID: it lost its link.
        let f = findings_of(&IB001, &dual_port("Down", "Polling", 9, 1));
        assert_eq!(f[0].severity, Severity::Error);
        assert!(!f[0].message.contains("never linked"), "{}", f[0].message);
        // Disabled is someone's doing, not an unused port.
        let f = findings_of(&IB001, &dual_port("Down", "Disabled", 0, 0));
        assert_eq!(f[0].severity, Severity::Error);
        // No Active port on the adapter: its only path is down.
        let both = dual_port("Down", "Polling", 0, 0)
            .replacen("State: Active", "State: Down", 1)
            .replacen("LinkUp", "Polling", 1);
        let f = findings_of(&IB001, &both);
        assert_eq!(f.len(), 2, "{f:?}");
        assert!(f.iter().all(|f| f.severity == Severity::Critical), "{f:?}");
        // The Active port is another adapter's: not this card's unused port.
        let other = dual_port("Down", "Polling", 0, 0);
        let text = format!(
            "{ACTIVE}{}",
            other
                .replacen("State: Active", "State: Down", 1)
                .replacen("LinkUp", "Polling", 1)
        );
        let f = findings_of(&IB001, &text);
        assert_eq!(f.len(), 2, "{f:?}");
        assert!(f.iter().all(|f| f.severity == Severity::Error), "{f:?}");
    }

    #[test]
    fn a_rate_only_one_lane_gives_is_a_narrow_link() {
        let port = |rate: &str, layer: &str| {
            format!("CA 'mlx4_0'\n\tCA type: MT4099\n\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: {rate}\n\t\tBase lid: 6\n\t\tSM lid: 3\n\t\tLink layer: {layer}\n")
        };
        for rate in ["14", "25", "2.5", "10 (FDR10)"] {
            let f = findings_of(&IB006, &port(rate, "InfiniBand"));
            assert_eq!(f.len(), 1, "{rate}: {f:?}");
            assert_eq!(f[0].severity, Severity::Warning);
            assert!(f[0].message.contains("1X"), "{}", f[0].message);
            assert!(f[0].evidence[0].text.contains(&format!("Rate: {rate}")));
            assert!(f[0].threshold.as_ref().unwrap().source.contains("IBTA"));
        }
        // 4X, 2X by design (HDR100, NDR200), 4X FDR10, 4X SDR, 2X EDR; and
        // 2X FDR, which no rate tells from a 2X port by design.
        for rate in [
            "100",
            "200",
            "400",
            "56",
            "40 (FDR10)",
            "10",
            "50",
            "28",
            "20",
        ] {
            let text = port(rate, "InfiniBand");
            assert!(findings_of(&IB006, &text).is_empty(), "{rate}");
            assert!(skipped_reason(&IB006, &text).is_none(), "{rate}");
        }
        // RoCE lane rates; a link layer not printed; a Down port's stale rate.
        assert!(findings_of(&IB006, &port("25", "Ethernet")).is_empty());
        let no_layer = port("14", "InfiniBand").replace("\t\tLink layer: InfiniBand\n", "");
        assert!(findings_of(&IB006, &no_layer).is_empty());
        let down = port("14", "InfiniBand")
            .replace("State: Active", "State: Down")
            .replace("LinkUp", "Polling");
        assert!(findings_of(&IB006, &down).is_empty());
        // ibstatus prints the width: 1X is judged, 2X HDR (HDR100) is not.
        let ibstatus = |rate: &str| {
            format!("Infiniband device 'mlx5_2' port 1 status:\n\tdefault gid:\t fe80::1\n\tbase lid:\t 0x1c\n\tsm lid:\t\t 0x1\n\tstate:\t\t 4: ACTIVE\n\tphys state:\t 5: LinkUp\n\trate:\t\t {rate}\n\tlink_layer:\t InfiniBand\n\n")
        };
        assert_eq!(
            findings_of(&IB006, &ibstatus("25 Gb/sec (1X EDR)")).len(),
            1
        );
        assert_eq!(
            findings_of(&IB006, &ibstatus("50 Gb/sec (1X HDR)")).len(),
            1
        );
        assert!(findings_of(&IB006, &ibstatus("100 Gb/sec (2X HDR)")).is_empty());
    }

    #[test]
    fn a_narrow_rate_ibportstate_already_describes_is_one_finding() {
        let ibstat = "CA 'mlx4_0'\n\tCA type: MT4099\n\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 14\n\t\tBase lid: 9\n\t\tSM lid: 2\n\t\tLink layer: InfiniBand\n";
        let portinfo = "# Port info: Lid 9 port 1\nLinkState:.......................Active\nPhysLinkState:...................LinkUp\nLid:.............................9\nSMLid:...........................2\nLinkWidthSupported:..............1X or 4X\nLinkWidthEnabled:................1X or 4X\nLinkWidthActive:.................1X\n";
        let f = findings_of(&IB006, &format!("{ibstat}\n{portinfo}"));
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            f[0].evidence[0].text.starts_with("portinfo"),
            "{:?}",
            f[0].evidence
        );
        // On another LID, the ibstat port is a port of its own.
        let f = findings_of(
            &IB006,
            &format!("{}\n{portinfo}", ibstat.replace("lid: 9", "lid: 19")),
        );
        assert_eq!(f.len(), 2, "{f:?}");
    }

    #[test]
    fn a_fabric_with_no_active_link_in_iblinkinfo_is_one_finding() {
        let f = findings_of(&IB002, &iblinkinfo(&["Initialize"; 7]));
        assert_eq!(f.len(), 1, "one cause, one finding: {f:?}");
        assert!(
            f[0].message.contains("none of the 7 trained links"),
            "{}",
            f[0].message
        );
        assert!(
            f[0].message.contains("no subnet manager"),
            "{}",
            f[0].message
        );
        assert_eq!(
            f[0].evidence.len(),
            WAITING_LINKS_SHOWN + 1,
            "{:?}",
            f[0].evidence
        );
        // An unused (Down/Polling) switch port is not a waiting link.
        assert!(!f[0].evidence.iter().any(|e| e.text.contains("port 9")));
    }

    #[test]
    fn a_waiting_port_beside_active_links_is_its_own_finding() {
        let f = findings_of(
            &IB002,
            &iblinkinfo(&["Active", "Initialize", "Active", "Armed"]),
        );
        assert_eq!(f.len(), 2, "{f:?}");
        assert_eq!(f[0].subject.port, Some(2));
        assert!(
            f[0].message.contains("a subnet manager runs"),
            "{}",
            f[0].message
        );
        assert_eq!(f[1].subject.port, Some(4));
        // A fabric whose trained links are all Active: judged, nothing found.
        let text = iblinkinfo(&["Active"; 3]);
        assert!(findings_of(&IB002, &text).is_empty());
        assert!(
            skipped_reason(&IB002, &text).is_none(),
            "the links were judged"
        );
    }

    #[test]
    fn an_active_port_without_a_printed_physical_state_keeps_its_host_lit() {
        // ibv_devinfo without -v prints no physical state: an Active sibling
        // still carries traffic, so the Down port is an error, not critical.
        let port = |dev: &str, state: &str| {
            format!("hca_id:\t{dev}\n\tvendor_part_id:\t\t4129\n\tphys_port_cnt:\t\t1\n\t\tport:\t1\n\t\t\tstate:\t\t\t{state}\n\t\t\tsm_lid:\t\t\t1\n\t\t\tport_lid:\t\t7\n\t\t\tlink_layer:\t\tInfiniBand\n\n")
        };
        let text = port("mlx5_0", "PORT_DOWN (1)") + &port("mlx5_1", "PORT_ACTIVE (4)");
        let f = findings_of(&IB001, &text);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].severity, Severity::Error);
        assert!(
            !f[0].message.contains("no InfiniBand port"),
            "{}",
            f[0].message
        );
        assert!(
            f[0].message.contains("is Down:"),
            "no `/?` for an unprinted state: {}",
            f[0].message
        );
        // Alone, the Down port leaves the host dark.
        let alone = findings_of(&IB001, &port("mlx5_0", "PORT_DOWN (1)"));
        assert_eq!(alone[0].severity, Severity::Critical);
    }

    #[test]
    fn a_down_virtual_function_is_idle_beside_its_physical_function_only() {
        let line = |pci: &str, dev: &str, ca: &str, state: &str| {
            format!("{pci} {dev} ({ca} - NA)  fw 16.35.2000 port 1 ({state}) ==> {dev}ib (Down)\n")
        };
        let vf = line("0000:05:00.2", "mlx5_2", "MT4120", "DOWN  ").replace("mlx5_2ib", "ib2");
        let pf = line("0000:05:00.0", "mlx5_0", "MT4119", "ACTIVE").replace("mlx5_0ib", "ib0");
        // On the hypervisor (a physical function listed too): information.
        let f = findings_of(&IB001, &(pf + &vf));
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].severity, Severity::Info);
        assert!(
            f[0].message.contains("virtual function"),
            "{}",
            f[0].message
        );
        // Inside a guest (the VF alone): its link is down.
        let f = findings_of(&IB001, &vf);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(f[0].severity >= Severity::Error, "{f:?}");
    }

    #[test]
    fn ibdev2netdev_carrier_is_not_the_port_state() {
        // `(Down)` is the interface's carrier: a port with only that is not judged.
        let text = "mlx5_0 port 1 ==> ib0 (Down)\nmlx5_1 port 1 ==> ib1 (Down)\n";
        assert!(findings_of(&IB001, text).is_empty());
        assert!(skipped_reason(&IB001, text).is_some());
        // `-v` prints the port's own state; an Ethernet interface is not judged.
        let v = "0000:3b:00.0 mlx5_0 (MT4123 - MCX653105A-HDAT) ConnectX-6 VPI adapter card fw 20.31.1014 port 1 (DOWN  ) ==> ib0 (Down)\n\
                 0000:3c:00.0 mlx5_1 (MT4125 - MCX623106AN-CDAT) ConnectX-6 Dx EN adapter card fw 22.31.1014 port 1 (DOWN  ) ==> ens3f0np0 (Down)\n";
        let f = findings_of(&IB001, v);
        assert_eq!(f.len(), 2, "{f:?}");
        let of = |device: &str| {
            f.iter()
                .find(|f| f.subject.device.as_deref() == Some(device))
                .unwrap()
        };
        assert!(!of("mlx5_0").message.contains("RoCE"));
        // The Ethernet port is judged as RoCE: the host has no RDMA port up.
        assert_eq!(of("mlx5_1").severity, Severity::Warning);
        assert!(of("mlx5_1").message.contains("RoCE"));
    }

    #[test]
    fn polling_port_is_down_and_critical_when_nothing_else_is_active() {
        let text = "CA 'mlx5_0'\n\tCA type: MT4129\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Polling\n\t\tRate: 10\n\t\tLink layer: InfiniBand\n";
        let f = findings_of(&IB001, text);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Critical);
        assert!(f[0].message.contains("Down/Polling"), "{}", f[0].message);
        assert!(f[0].message.contains("cable"));
        assert_eq!(f[0].evidence[0].span.first_line, 3);
    }

    #[test]
    fn disabled_port_next_to_an_active_one_is_an_error() {
        let text = format!(
            "{ACTIVE}CA 'mlx5_1'\n\tCA type: MT4129\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Disabled\n\t\tLink layer: InfiniBand\n"
        );
        let f = findings_of(&IB001, &text);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Error);
        assert_eq!(f[0].subject.device.as_deref(), Some("mlx5_1"));
        assert!(f[0].message.contains("disabled"));
    }

    #[test]
    fn down_with_the_link_up_points_at_the_sm_and_the_vf_not_the_cable() {
        // An SR-IOV virtual function (MT4124) in a pod: the link trained,
        // the logical port is down, an SM is known, no LID assigned.
        let vf = "CA 'mlx5_3'\n\tCA type: MT4124\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: LinkUp\n\t\tRate: 100\n\t\tBase lid: 65535\n\t\tSM lid: 7\n\t\tLink layer: InfiniBand\n";
        let f = findings_of(&IB001, vf);
        assert_eq!(f.len(), 1);
        // The host has no Active InfiniBand port: critical, as for any cause.
        assert_eq!(f[0].severity, Severity::Critical);
        let m = &f[0].message;
        assert!(
            m.contains("Down/LinkUp") && m.contains("not a cable fault"),
            "{m}"
        );
        assert!(
            m.contains("SM (lid 7)") && m.contains("virtual function"),
            "{m}"
        );
        let fix = &f[0].remediation;
        assert!(!fix.starts_with("Check the cable"), "{fix}");
        assert!(fix.contains("virt_enabled"), "{fix}");
        assert!(
            f[0].evidence[0]
                .text
                .contains("Base lid: 65535 (none assigned), SM lid: 7"),
            "{}",
            f[0].evidence[0].text
        );
        // A physical function's port: no VF clause; a Polling port keeps
        // the cable advice and shows no stale LIDs.
        let pf = vf.replace("MT4124", "MT4123");
        let m = &findings_of(&IB001, &pf)[0].message;
        assert!(
            m.contains("not brought up by a subnet manager") && !m.contains("virtual"),
            "{m}"
        );
        let polling = vf.replace("LinkUp", "Polling");
        let f = findings_of(&IB001, &polling);
        assert!(f[0].message.contains("cable"));
        assert!(!f[0].evidence[0].text.contains("Base lid"));
    }

    #[test]
    fn active_and_ethernet_ports_are_not_down() {
        assert!(findings_of(&IB001, ACTIVE).is_empty());
        let roce = "CA 'mlx5_2'\n\tCA type: MT4129\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Disabled\n\t\tLink layer: Ethernet\n";
        // Beside an Active port, a Down RoCE port is most often one not in use.
        assert!(findings_of(&IB001, &format!("{ACTIVE}{roce}")).is_empty());
        // Alone, the host can do no RDMA: a warning, naming the link layer.
        let f = findings_of(&IB001, roce);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].severity, Severity::Warning);
        assert!(
            f[0].message.contains("RoCE")
                && f[0].message.contains("no RDMA port of this host is Active"),
            "{}",
            f[0].message
        );
        // Active RoCE ports are judged (not "no port state in the input").
        let up = roce
            .replace("State: Down", "State: Active")
            .replace("Disabled", "LinkUp");
        assert!(findings_of(&IB001, &up).is_empty());
        assert!(skipped_reason(&IB001, &up).is_none());
    }

    #[test]
    fn a_port_down_in_an_earlier_reading_is_not_hidden_by_the_last() {
        let link = |state: &str, phys: &str| {
            format!("link mlx5_7/1 subnet_prefix fe80:0000:0000:0000 lid 3403 sm_lid 1 lmc 0 state {state} physical_state {phys}\n")
        };
        // Down, then up: the link came up (info).
        let text = format!(
            "{}{}{}",
            link("DOWN", "POLLING"),
            link("DOWN", "LINK_UP"),
            link("ACTIVE", "LINK_UP")
        );
        let f = findings_of(&IB001, &text);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].severity, Severity::Info);
        assert_eq!(f[0].evidence.len(), 2);
        assert_eq!(f[0].evidence[0].span.first_line, 1);
        // Up, down, up: it flapped while watched (warning).
        let text = format!(
            "{}{}{}",
            link("ACTIVE", "LINK_UP"),
            link("DOWN", "POLLING"),
            link("ACTIVE", "LINK_UP")
        );
        let f = findings_of(&IB001, &text);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].severity, Severity::Warning);
        assert!(f[0].message.contains("flapped"), "{}", f[0].message);
        // Up throughout, or down at the end (the usual finding): no history.
        let up = link("ACTIVE", "LINK_UP");
        assert!(findings_of(&IB001, &format!("{up}{up}")).is_empty());
        let f = findings_of(&IB001, &format!("{up}{}", link("DOWN", "POLLING")));
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(!f[0].message.contains("earlier"), "{}", f[0].message);
    }

    #[test]
    fn a_list_of_adapters_from_the_middle_says_nothing_of_those_above_it() {
        // ibstatus pasted from mlx5_3 on: the host's first adapters are not
        // shown, so "no port of this host is Active" is not said.
        let port = |n: u32| {
            format!("CA 'mlx5_{n}'\n\tCA type: MT4129\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Disabled\n\t\tLink layer: InfiniBand\n")
        };
        let f = findings_of(&IB001, &format!("{}{}", port(3), port(4)));
        assert_eq!(f.len(), 2);
        assert!(f.iter().all(|f| f.severity == Severity::Error), "{f:?}");
        let f = findings_of(&IB001, &format!("{}{}", port(0), port(1)));
        assert!(f.iter().all(|f| f.severity == Severity::Critical), "{f:?}");
    }

    #[test]
    fn a_port_whose_state_is_not_in_the_paste_may_be_the_active_one() {
        // mlx5_0 is Down; mlx5_1's block is cut after its header, or its
        // state blanked: "no port of this host is Active" is not said.
        let down = "CA 'mlx5_0'\n\tCA type: MT4129\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Polling\n\t\tLink layer: InfiniBand\n";
        let cut = format!("{down}CA 'mlx5_1'\n\tCA type: MT4129\n\tPort 1:\n");
        let blanked =
            format!("{cut}\t\tState: \n\t\tPhysical state: LinkUp\n\t\tLink layer: InfiniBand\n");
        for text in [&cut, &blanked] {
            let f = findings_of(&IB001, text);
            assert_eq!(f.len(), 1, "{f:?}");
            assert_eq!(f[0].severity, Severity::Error, "{text}");
            assert!(
                !f[0].message.contains("no InfiniBand port"),
                "{}",
                f[0].message
            );
        }
        // Both states read and neither Active: the host is dark.
        let dark = blanked.replace("State: \n", "State: Down\n");
        let f = findings_of(&IB001, &dark);
        assert!(f.iter().all(|f| f.severity == Severity::Critical), "{f:?}");
    }

    #[test]
    fn linkup_but_initializing_waits_for_a_subnet_manager() {
        let text = "CA 'mlx5_0'\n\tCA type: MT4129\n\tPort 1:\n\t\tState: Initializing\n\t\tPhysical state: LinkUp\n\t\tBase lid: 65535\n\t\tSM lid: 0\n\t\tLink layer: InfiniBand\n";
        let f = findings_of(&IB002, text);
        assert_eq!(f.len(), 1);
        assert!(f[0].message.contains("no subnet manager"));
        // The missing LID is the consequence, not a second problem.
        assert!(findings_of(&IB003, text).is_empty());
        assert!(findings_of(&IB002, ACTIVE).is_empty());
    }

    #[test]
    fn initializing_with_a_known_sm_says_the_sm_has_not_activated_it() {
        // ibv_devinfo without -v: no physical state printed, SM lid 5, a
        // virtual function (vendor_part_id 4126) whose node GUID is zeros.
        let text = "hca_id:\tmlx5_4\n\ttransport:\t\t\tInfiniBand (0)\n\tnode_guid:\t\t\t0000:0000:0000:0000\n\tvendor_part_id:\t\t\t4126\n\tphys_port_cnt:\t\t\t1\n\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_INIT (2)\n\t\t\tsm_lid:\t\t\t5\n\t\t\tport_lid:\t\t65535\n\t\t\tlink_layer:\t\tInfiniBand\n";
        let f = findings_of(&IB002, text);
        assert_eq!(f.len(), 1, "{f:?}");
        let m = &f[0].message;
        assert!(m.contains("subnet manager is known (SM lid 5)"), "{m}");
        assert!(
            !m.contains("no subnet manager") && !m.contains("LinkUp"),
            "{m}"
        );
        assert!(m.contains("physical state not printed"), "{m}");
        assert!(m.contains("node GUID is all zeros"), "{m}");
        let fix = &f[0].remediation;
        assert!(fix.contains("SM's log"), "{fix}");
        // SM lid 0 keeps "no subnet manager"; zeros on a physical function
        // (perhaps a redaction) are not read as a missing GUID.
        let no_sm = text
            .replace("sm_lid:\t\t\t5", "sm_lid:\t\t\t0")
            .replace("4126", "4123");
        let m = &findings_of(&IB002, &no_sm)[0].message;
        assert!(m.contains("no subnet manager has configured it"), "{m}");
        assert!(!m.contains("GUID"), "{m}");
    }

    #[test]
    fn active_port_without_lids_is_reported_but_roce_is_not() {
        let text = ACTIVE.replace("Base lid: 12", "Base lid: 0");
        let f = findings_of(&IB003, &text);
        assert_eq!(f.len(), 1);
        assert!(f[0].message.contains("has no LID"));
        let roce = ACTIVE
            .replace("Base lid: 12", "Base lid: 0")
            .replace("SM lid: 1", "SM lid: 0")
            .replace("InfiniBand", "Ethernet");
        assert!(findings_of(&IB003, &roce).is_empty());
        assert!(findings_of(&IB003, ACTIVE).is_empty());
    }

    #[test]
    fn a_port_without_a_link_layer_is_judged_only_when_its_lids_show_an_sm() {
        // Soft-RoCE (rxe) in ibv_devinfo without a link_layer line: LID 0
        // and SM LID 0 are what any RoCE port shows.
        let rxe = "hca_id: rxe0\n\ttransport:\t\t\tInfiniBand (0)\n\tphys_port_cnt:\t\t\t1\n\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tsm_lid:\t\t\t0\n\t\t\tport_lid:\t\t0\n";
        let f = findings_of(&IB003, rxe);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].severity, Severity::Info);
        assert!(f[0].message.contains("not judged"), "{}", f[0].message);
        // A markdown backtick glued to the value is still Ethernet.
        let tick = ACTIVE
            .replace("Base lid: 12", "Base lid: 0")
            .replace("SM lid: 1", "SM lid: 0")
            .replace("InfiniBand", "Ethernet`");
        assert!(findings_of(&IB003, &tick).is_empty());
        // An unreadable link layer with RoCE-like LIDs: listed, not judged.
        let odd = tick.replace("Ethernet`", "Ethernet?");
        let f = findings_of(&IB003, &odd);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Info);
        // No link layer, but an SM LID: only InfiniBand has one.
        let old_ibstat = ACTIVE
            .replace("Base lid: 12", "Base lid: 0")
            .replace("\t\tLink layer: InfiniBand\n", "");
        let f = findings_of(&IB003, &old_ibstat);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Error);
        assert!(f[0].message.contains("has no LID"));
    }

    #[test]
    fn a_slower_sibling_is_reported_and_equal_rates_are_not() {
        let slow = ACTIVE
            .replace("mlx5_0", "mlx5_1")
            .replace("Rate: 400", "Rate: 200");
        let f = findings_of(&IB004, &format!("{ACTIVE}{slow}"));
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].subject.device.as_deref(), Some("mlx5_1"));
        assert!(f[0].message.contains("200 Gb/s"));
        // HDR100 by design on every port: nothing to compare against.
        let same = ACTIVE.replace("Rate: 400", "Rate: 100");
        let same2 = same.replace("mlx5_0", "mlx5_1");
        assert!(findings_of(&IB004, &format!("{same}{same2}")).is_empty());
        assert!(skipped_reason(&IB004, ACTIVE).is_some());
    }
}
