//! Comparisons across the adapters of a host and the hosts of a fleet
//! (`IB005`, `FL0xx`).
//!
//! A fleet is built alike, so the most common value among peers is the
//! expected one: a host whose firmware, rate or adapter count differs from
//! its peers is the odd one out. Ties between rates or counts go to the
//! higher one, since a fleet is upgraded, not downgraded; firmware needs a
//! version run by most hosts before a host is called drifted (FL001).

use super::context::{subject_of, AdapterRef, Context, HostKey};
use super::fleet::{over_context, AdapterFacts, Fleet, FleetFacts, NeverLinkedFacts, PortFacts};
use super::rule::Scope;
use super::{gbps, Coverage, Evidence, Finding, Severity, Subject, Threshold};
use crate::declare_rule;
use crate::stats::{PeerGroupKind, PeerStatistic};
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

declare_rule! {
    /// ### What it detects
    /// Adapters of the same type on one host running different firmware
    /// versions.
    ///
    /// ### Why it matters
    /// The rails of a GPU node should behave alike; mixed firmware is a sign
    /// of a partial upgrade or a replaced card, and firmware differences
    /// change link training, congestion control and error handling.
    ///
    /// ### Evidence
    /// `CA type` and `Firmware version` of each adapter in `ibstat`.
    ///
    /// ### What to do
    /// Update every adapter to the same (current) firmware with `mlxfwmanager`
    /// or the vendor's tool, then reboot or reset the adapters.
    ///
    /// ### Thresholds and sources
    /// Any difference within one adapter family: same `CA type` and same
    /// firmware major (the major names the chip, and virtual functions of
    /// different chips share a `CA type`). Fleet practice (NVIDIA's DGX/HGX
    /// firmware bundles ship one version per adapter type).
    pub static IB005 = {
        id: "IB005",
        name: "firmware-mismatch-on-host",
        family: IbPort,
        severity: Warning,
        summary: "Adapters of one type on a host run different firmware",
        needs: "ibstat with two or more adapters of one type on a host",
        check: check_firmware_on_host,
    }
}

declare_rule! {
    /// ### What it detects
    /// A host whose adapters run a firmware version different from the one
    /// most hosts of the fleet run for the same adapter family. One finding
    /// per host and family, naming its adapters off that version (a host's
    /// eight rails on old firmware are one partial upgrade, not eight).
    ///
    /// ### Why it matters
    /// Odd firmware out is a partial upgrade or a replaced card; it can
    /// change link behaviour and is a common cause of "only this node is
    /// slow" reports.
    ///
    /// ### Evidence
    /// `Firmware version` of the host's adapters and the version most hosts
    /// run, with how many of the family's adapters run it (a host whose one
    /// adapter of eight drifted still votes for the usual version).
    ///
    /// ### What to do
    /// Bring the host to the fleet's firmware version (`mlxfwmanager`).
    ///
    /// ### Thresholds and sources
    /// Each host votes with its most common version for the adapter family
    /// (`CA type` and firmware major). A `warning` needs a version run by
    /// more than half of the hosts with that family (9 of 10, 2 of 3): the
    /// hosts off it drifted. Without such a majority (2 hosts against 2, a
    /// fleet halfway through an upgrade) nobody is the odd one out: the
    /// hosts not on the newest version get an `info` finding listing the
    /// versions and how many hosts run each, and no verdict. Needs two or
    /// more hosts. Fleet practice (NVIDIA's DGX/HGX firmware bundles ship
    /// one version per adapter type).
    pub static FL001 = {
        id: "FL001",
        name: "firmware-differs-from-fleet",
        family: Fleet,
        severity: Warning,
        summary: "Host adapter firmware differs from the fleet's usual version",
        needs: "ibstat from two or more hosts",
        check: firmware_fleet_in_context,
        scope: Scope::Fleet(check_firmware_fleet),
    }
}

declare_rule! {
    /// ### What it detects
    /// A host whose Active InfiniBand ports all run below the rate most hosts
    /// of the fleet run for the same adapter type.
    ///
    /// ### Why it matters
    /// A whole host at a lower rate is a wrong cable type, a switch port
    /// configured for less, or a link that trained down on every port; the
    /// fleet's jobs run at the pace of their slowest member.
    ///
    /// ### Evidence
    /// The port's `Rate` and the fleet's usual rate for that adapter type.
    /// Ports slower than their siblings on the same host are left to IB004.
    ///
    /// ### What to do
    /// Compare the host's cabling and switch port configuration with a good
    /// host's; check the links with `iblinkinfo` and `mlxlink`.
    ///
    /// ### Thresholds and sources
    /// The most common Active rate for the adapter type across hosts (ties go
    /// to the higher rate). NHC `check_hw_ib <rate>` and Azure's per-SKU
    /// expected rates encode the same idea as configuration.
    pub static FL002 = {
        id: "FL002",
        name: "rate-below-fleet",
        family: Fleet,
        severity: Warning,
        summary: "Host InfiniBand rate below the fleet's usual rate",
        needs: "ibstat from two or more hosts",
        check: rate_fleet_in_context,
        scope: Scope::Fleet(check_rate_fleet),
    }
}

declare_rule! {
    /// ### What it detects
    /// A host that lists fewer InfiniBand adapters of a type than most hosts
    /// of the same build. Only InfiniBand adapters count: an adapter whose
    /// ports all run Ethernet (RoCE, a BlueField's or ConnectX-6 Dx's
    /// Ethernet port) or a bond device (`mlx5_bond_0`, two Ethernet ports
    /// folded into one) is not one, so a host whose compute rails are all
    /// there is never reported for its other NICs. Hosts are peers when
    /// they carry the same set of InfiniBand adapter types: a storage
    /// server's ConnectX-3 beside GPU nodes' ConnectX-7s, or a RoCE build
    /// with no InfiniBand port, is other hardware, not one that lost cards.
    ///
    /// ### Why it matters
    /// An adapter missing from `ibstat` is invisible to the driver: failed
    /// card, PCIe link down, driver or firmware crash. Its rail is gone, and
    /// port-state rules cannot see it because there is no port to judge.
    ///
    /// ### Evidence
    /// The host's InfiniBand adapters of that type and its peers' usual
    /// count.
    ///
    /// ### What to do
    /// Check `lspci`, `dmesg` (mlx5_core errors, PCIe AER) and the adapter's
    /// firmware; reboot or reseat the card.
    ///
    /// ### Thresholds and sources
    /// Per adapter type, the most common count of InfiniBand adapters among
    /// hosts with the same set of InfiniBand adapter types (ties go to the
    /// higher count; two or more such hosts). Azure and Imbue health checks
    /// require a fixed per-SKU count of Active InfiniBand ports (8 on
    /// H100/H200 nodes), not of every RDMA device.
    pub static FL003 = {
        id: "FL003",
        name: "adapter-missing-vs-fleet",
        family: Fleet,
        severity: Error,
        summary: "Host lists fewer InfiniBand adapters than its peers of the same build",
        needs: "ibstat from two or more hosts",
        check: adapter_count_fleet_in_context,
        scope: Scope::Fleet(check_adapter_count_fleet),
    }
}

declare_rule! {
    /// ### What it detects
    /// An InfiniBand port whose error counter, or its growth rate, stands far
    /// above its peers': the other ports of its device or host, or the same
    /// port on the other hosts of the fleet.
    ///
    /// ### Why it matters
    /// Fixed limits miss a port that is ten times worse than its identical
    /// siblings but still under the limit, and over-report counters that
    /// every port shares (a fabric-wide event). Comparing with peers finds
    /// the odd one out, which is where a bad cable or port is.
    ///
    /// ### Evidence
    /// The value, the group's median, the robust z-score and the Poisson tail
    /// probability (statistics). Only growth-rate outliers, or absolute
    /// counts at least ten times the median (or with a median of zero), are
    /// reported: counts since reset differ with uptime. A port whose growth
    /// was measured (two snapshots and their interval) is compared by that
    /// growth alone: its count since reset is history then, and on a busy
    /// fleet most ports' lifetime `PortXmitWait` stands far from some
    /// sibling's (comparing those counts too gave 6,292 `info` findings on
    /// the 1,000 generated hosts of `scripts/gen-fleet.py`).
    ///
    /// A growth-rate outlier (two snapshots with an interval) is a
    /// `warning`: it is happening now. So is a count since reset that is
    /// also over the counter's own limit. A count since reset that stands out
    /// but is under its limit (9 symbol errors where the peers have 0) is
    /// `info`: a few errors over an unknown uptime are normal, and
    /// `ibqueryerrors` with the recommended thresholds does not flag them.
    /// Congestion counters (`PortXmitWait`) are always `info` here: a port
    /// that waits more than its peers is a hot spot worth knowing, and
    /// whether the waiting costs bandwidth now is IB109's verdict, so the
    /// same congestion is never reported at warning twice.
    ///
    /// ### What to do
    /// Inspect the outlier port's cable and transceiver first (`mlxlink -m`),
    /// and compare with its peers after a counter reset; for an `info`
    /// finding, take two snapshots and see whether the count still grows.
    ///
    /// ### Thresholds and sources
    /// Robust z ≥ 3.5 (Iglewicz & Hoaglin), Poisson tail < 0.001
    /// (statistics defaults), ≥ 10× the median for absolute counts; the
    /// per-counter limits of infiniband-diags `error_thresholds` (as
    /// overridden by `--thresholds`) separate `warning` from `info` for
    /// counts since reset.
    pub static FL004 = {
        id: "FL004",
        name: "counter-outlier",
        family: Fleet,
        severity: Warning,
        summary: "InfiniBand error counter far above its peer ports or hosts",
        needs: "perfquery from several ports or hosts (five or more peers)",
        check: check_counter_outliers,
        scope: Scope::UnitAndFleet(check_counter_outliers_across_hosts),
    }
}

/// The adapter family firmware is compared within: the `CA type` and the
/// firmware's major number. NVIDIA/Mellanox firmware majors name the chip
/// (20 ConnectX-6, 22 ConnectX-6 Dx, 28 ConnectX-7), and virtual functions of
/// different chips share one `CA type` (`MT4126`), so a 22.x and a 28.x
/// adapter are different products, not a mismatch.
fn adapter_family(ca_type: &str, firmware: &str) -> String {
    let major = firmware.split('.').next().unwrap_or("");
    format!("{ca_type} fw {major}.x")
}

/// Orders version strings numerically where they are numbers (`20.9` < `20.10`).
pub(crate) fn compare_versions(a: &str, b: &str) -> Ordering {
    let parts = |s: &str| -> Vec<(u64, String)> {
        s.split(['.', '-', '_'])
            .map(|p| (p.parse::<u64>().unwrap_or(0), p.to_owned()))
            .collect()
    };
    parts(a).cmp(&parts(b))
}

/// The most common value; ties go to the greatest by `order`. Values are
/// counted by exact equality (`key`), so this is linear in the fleet size.
fn usual<T: Clone, K: Ord>(
    values: &[T],
    key: impl Fn(&T) -> K,
    order: impl Fn(&T, &T) -> Ordering,
) -> Option<(T, usize)> {
    let mut counts: BTreeMap<K, (usize, &T)> = BTreeMap::new();
    for v in values {
        counts.entry(key(v)).or_insert((0, v)).0 += 1;
    }
    let mut best: Option<(&T, usize)> = None;
    for (count, v) in counts.into_values() {
        let better = match best {
            None => true,
            Some((b, c)) => count > c || (count == c && order(v, b) == Ordering::Greater),
        };
        if better {
            best = Some((v, count));
        }
    }
    best.map(|(v, c)| (v.clone(), c))
}

fn adapter_evidence(a: &AdapterRef<'_>, text: String) -> Evidence {
    Evidence::new(
        format!("{}: {text}", a.at.section.kind.name()),
        a.span,
        a.at.source(),
    )
}

fn adapter_subject(a: &AdapterRef<'_>) -> Subject {
    Subject {
        device: Some(a.name.to_owned()),
        guid: a.node_guid,
        ..Subject::host(a.at.host().name())
    }
}

/// IB005.
fn check_firmware_on_host(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let mut groups: BTreeMap<(HostKey<'_>, String), Vec<&AdapterRef<'_>>> = BTreeMap::new();
    // Two machines under one host name: their adapters are no one
    // machine's, so a difference between them says nothing of a host.
    // Before, two nodes' `ibv_devinfo` listings pasted under headings
    // raised "mlx5_0 runs firmware A while 2 other adapters on the host
    // run B", the others being the second node's.
    let mixed = ctx.hosts_mixing_machines();
    for a in ctx.latest_adapters() {
        let (Some(ty), Some(fw)) = (a.ca_type.as_deref(), a.firmware_version) else {
            continue;
        };
        if mixed.contains(&a.at.host()) {
            continue;
        }
        groups
            .entry((a.at.host(), adapter_family(ty, fw)))
            .or_default()
            .push(a);
    }
    groups.retain(|_, cas| cas.len() >= 2);
    if groups.is_empty() {
        return Coverage::Skipped(
            "no host with two or more adapters of one type and their firmware versions".to_owned(),
        );
    }
    let mut checked = 0;
    for ((_, ty), cas) in &groups {
        checked += cas.len();
        let versions: Vec<&str> = cas.iter().filter_map(|a| a.firmware_version).collect();
        let Some((expected, count)) = usual(&versions, |v| *v, |a, b| compare_versions(a, b))
        else {
            continue;
        };
        for a in cas {
            let Some(fw) = a.firmware_version else {
                continue;
            };
            if fw == expected {
                continue;
            }
            let mut f = IB005
                .finding(
                    adapter_subject(a),
                    format!(
                        "{} ({ty}) runs firmware {fw} while {count} other {ty} adapter(s) on the host run {expected}",
                        a.name
                    ),
                )
                .evidence(adapter_evidence(a, format!("{}: Firmware version: {fw}", a.name)));
            if let Some(peer) = cas.iter().find(|p| p.firmware_version == Some(expected)) {
                f = f.evidence(adapter_evidence(
                    peer,
                    format!("{}: Firmware version: {expected}", peer.name),
                ));
            }
            out.push(
                f.threshold(Threshold::new(
                    format!("{expected} (most common on the host)"),
                    "peer comparison on the host",
                ))
                .remediation("Update every adapter to the same firmware (mlxfwmanager), then reset the adapters."),
            );
        }
    }
    Coverage::Checked(checked)
}

/// Hosts that are named: fleet rules compare machines, and anonymous
/// documents cannot be told apart from one machine pasted twice.
fn named_hosts(adapters: &[AdapterFacts]) -> BTreeSet<&str> {
    adapters.iter().map(|a| a.host.as_str()).collect()
}

/// FL001 over one context (a paste, a rule test): the context is one unit.
fn firmware_fleet_in_context(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    over_context(check_firmware_fleet, ctx, out)
}

/// FL002 over one context.
fn rate_fleet_in_context(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    over_context(check_rate_fleet, ctx, out)
}

/// FL003 over one context.
fn adapter_count_fleet_in_context(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    over_context(check_adapter_count_fleet, ctx, out)
}

/// FL001.
/// A host's adapters that do not run `version`.
fn off_version<'a>(cas: &[&'a AdapterFacts], version: &str) -> Vec<&'a AdapterFacts> {
    cas.iter()
        .copied()
        .filter(|a| a.firmware_version.as_deref() != Some(version))
        .collect()
}

fn check_firmware_fleet(fleet: &Fleet<'_>, out: &mut Vec<Finding>) -> Coverage {
    let adapters = &fleet.facts.adapters;
    if named_hosts(adapters).len() < 2 {
        return Coverage::Skipped("adapter lists from fewer than two named hosts".to_owned());
    }
    // Per adapter type: each host's adapters with a firmware version.
    type HostAdapters<'a> = BTreeMap<&'a str, Vec<&'a AdapterFacts>>;
    let mut by_type: BTreeMap<String, HostAdapters<'_>> = BTreeMap::new();
    for a in adapters {
        let (host, Some(ty), Some(fw)) = (
            a.host.as_str(),
            a.ca_type.clone(),
            a.firmware_version.as_deref(),
        ) else {
            continue;
        };
        by_type
            .entry(adapter_family(&ty, fw))
            .or_default()
            .entry(host)
            .or_default()
            .push(a);
    }
    let mut checked = 0;
    for (ty, hosts) in &by_type {
        if hosts.len() < 2 {
            continue;
        }
        checked += hosts.len();
        // One vote per host: its most common version.
        let votes: BTreeMap<&str, &str> = hosts
            .iter()
            .filter_map(|(host, cas)| {
                let vs: Vec<&str> = cas
                    .iter()
                    .filter_map(|a| a.firmware_version.as_deref())
                    .collect();
                usual(&vs, |v| *v, |a, b| compare_versions(a, b)).map(|(v, _)| (*host, v))
            })
            .collect();
        let all: Vec<&str> = votes.values().copied().collect();
        let Some((expected, count)) = usual(&all, |v| *v, |a, b| compare_versions(a, b)) else {
            continue;
        };
        if count * 2 > hosts.len() {
            // A true majority: the hosts off it drifted. The message counts
            // adapters, not hosts' votes: a host whose one adapter of eight
            // drifted still votes for the usual version, and "1000 of 1000
            // hosts run it" next to that host's finding read as a
            // contradiction.
            let adapters: usize = hosts.values().map(Vec::len).sum();
            let on_expected = adapters
                - hosts
                    .values()
                    .map(|cas| off_version(cas, expected).len())
                    .sum::<usize>();
            for cas in hosts.values() {
                let odd = off_version(cas, expected);
                if odd.is_empty() {
                    continue;
                }
                let message = format!(
                    "{}; {on_expected} of the {adapters} such adapters on {} hosts run {expected}",
                    runs_firmware(ty, &odd),
                    hosts.len()
                );
                let remediation = if odd.len() == 1 {
                    "Bring the adapter to the fleet's firmware version (mlxfwmanager)."
                } else {
                    "Bring the adapters to the fleet's firmware version (mlxfwmanager)."
                };
                out.push(
                    firmware_finding(&odd, message)
                        .threshold(Threshold::new(
                            format!("{expected} (most common across hosts)"),
                            "fleet peer comparison",
                        ))
                        .remediation(remediation),
                );
            }
            continue;
        }
        // No version runs on most hosts (a 2-vs-2 tie, a fleet halfway
        // through an upgrade): nobody is the odd one out, so the hosts not
        // on the newest version are told so as `info`, without a verdict.
        let mut spread: BTreeMap<&str, usize> = BTreeMap::new();
        for v in votes.values() {
            *spread.entry(v).or_default() += 1;
        }
        let Some(newest) = spread.keys().copied().max_by(|a, b| compare_versions(a, b)) else {
            continue;
        };
        let mut ranked: Vec<(&str, usize)> = spread.into_iter().collect();
        ranked.sort_by(|(va, ca), (vb, cb)| cb.cmp(ca).then_with(|| compare_versions(vb, va)));
        let listed: Vec<String> = ranked
            .iter()
            .map(|(v, c)| format!("{v} on {c} host(s)"))
            .collect();
        let listed = listed.join(", ");
        for (host, cas) in hosts {
            if votes.get(host) == Some(&newest) {
                continue;
            }
            let odd = off_version(cas, newest);
            if odd.is_empty() {
                continue;
            }
            let message = format!(
                "{}; the fleet runs {} firmware versions of {ty}, none on most of its {} hosts: {listed}",
                runs_firmware(ty, &odd),
                ranked.len(),
                hosts.len()
            );
            out.push(
                firmware_finding(&odd, message)
                    .severity(Severity::Info)
                    .threshold(Threshold::new(
                        format!("a version run by most hosts (none: {listed})"),
                        "fleet peer comparison",
                    ))
                    .remediation(
                        "Choose the fleet's firmware version for this adapter type and bring every host to it (mlxfwmanager).",
                    ),
            );
        }
    }
    if checked == 0 {
        return Coverage::Skipped(
            "no adapter type with firmware versions on two or more hosts".to_owned(),
        );
    }
    Coverage::Checked(checked)
}

/// `mlx5_6 (MT4129 fw 28.x) runs firmware 28.36.1010`, or for several
/// adapters of one host `8 MT4129 fw 28.x adapters run firmware …`.
fn runs_firmware(ty: &str, odd: &[&AdapterFacts]) -> String {
    let mut versions: Vec<&str> = odd
        .iter()
        .filter_map(|a| a.firmware_version.as_deref())
        .collect();
    versions.sort_by(|a, b| compare_versions(a, b));
    versions.dedup();
    match odd {
        [one] => format!("{} ({ty}) runs firmware {}", one.name, versions.join(", ")),
        _ => format!(
            "{} {ty} adapters run firmware {}",
            odd.len(),
            versions.join(", ")
        ),
    }
}

/// One FL001 finding about a host's `odd` adapters (one host, at least
/// one adapter): about the host, since it is the host that is off the
/// fleet's version (a paste cut after the first of them draws the same
/// conclusion), with the adapters named in the evidence (one line per
/// version and file).
fn firmware_finding(odd: &[&AdapterFacts], message: String) -> Finding {
    let subject = Subject::host(odd.first().map(|a| a.host.as_str()));
    let mut f = FL001.finding(subject, message);
    if let [one] = odd {
        let fw = one.firmware_version.as_deref().unwrap_or_default();
        return f.evidence(one.evidence(format!("{}: Firmware version: {fw}", one.name)));
    }
    type Group<'a> = (Vec<&'a str>, crate::span::LineSpan, &'a AdapterFacts);
    let mut groups: BTreeMap<(&str, Option<&str>), Group<'_>> = BTreeMap::new();
    for a in odd {
        let key = (
            a.firmware_version.as_deref().unwrap_or_default(),
            a.file.as_deref(),
        );
        let g = groups.entry(key).or_insert((Vec::new(), a.span, a));
        g.0.push(a.name.as_str());
        g.1 = g.1.join(a.span);
    }
    for ((fw, _), (mut names, span, first)) in groups {
        names.sort_by(|a, b| compare_versions(a, b));
        f = f.evidence(lines_of_adapters(
            first,
            span,
            format!("{}: Firmware version: {fw}", names.join(", ")),
        ));
    }
    f
}

/// Evidence over `span` of the file and tool that listed `a`.
fn lines_of_adapters(a: &AdapterFacts, span: crate::span::LineSpan, text: String) -> Evidence {
    Evidence::new(
        format!("{}: {text}", a.kind.name()),
        span,
        a.file.as_deref(),
    )
}

/// FL002.
fn check_rate_fleet(fleet: &Fleet<'_>, out: &mut Vec<Finding>) -> Coverage {
    // Per adapter type, per named host: Active ports with a rate.
    type Ports<'a> = Vec<(&'a PortFacts, f64)>;
    let mut by_type: BTreeMap<Option<String>, BTreeMap<&str, Ports<'_>>> = BTreeMap::new();
    for p in &fleet.facts.ports {
        let (host, rate) = (p.host.as_str(), p.rate_gbps);
        by_type
            .entry(p.ca_type.clone())
            .or_default()
            .entry(host)
            .or_default()
            .push((p, rate));
    }
    let mut checked = 0;
    for hosts in by_type.values() {
        if hosts.len() < 2 {
            continue;
        }
        // One vote per host: its best rate for this adapter type.
        let best_of = |ports: &Ports<'_>| ports.iter().map(|(_, r)| *r).fold(f64::MIN, f64::max);
        let votes: Vec<f64> = hosts.values().map(best_of).collect();
        let Some((expected, count)) = usual(&votes, |v| v.to_bits(), |a, b| a.total_cmp(b)) else {
            continue;
        };
        for ports in hosts.values() {
            checked += ports.len();
            let host_best = best_of(ports);
            if host_best >= expected {
                continue;
            }
            for (p, rate) in ports {
                if *rate < host_best {
                    continue; // IB004 reports ports slower than their siblings
                }
                out.push(
                    FL002
                        .finding(
                            p.subject.clone(),
                            format!(
                                "{} port {} runs at {} Gb/s; {count} of {} hosts run this adapter type at {} Gb/s",
                                p.device,
                                p.number,
                                gbps(*rate),
                                hosts.len(),
                                gbps(expected)
                            ),
                        )
                        .evidence(p.evidence(format!("Rate: {}", gbps(*rate))))
                        .threshold(Threshold::new(
                            format!("{} Gb/s (most common across hosts)", gbps(expected)),
                            "fleet peer comparison (NHC check_hw_ib expected rate)",
                        ))
                        .remediation("Compare cabling and switch port configuration with a good host; check the links with iblinkinfo and mlxlink."),
                );
            }
        }
    }
    if checked == 0 {
        return Coverage::Skipped(
            "no adapter type with Active InfiniBand ports on two or more named hosts".to_owned(),
        );
    }
    Coverage::Checked(checked)
}

/// Whether the command that printed an adapter list lists every adapter of
/// the host: `ibstat mlx5_0` or `ibv_devinfo -d mlx5_0` show one on purpose,
/// and counting those would report the others as missing. Output without a
/// prompt is taken as complete.
pub(crate) fn lists_every_adapter(command: Option<&str>) -> bool {
    let Some(command) = command else {
        return true;
    };
    let words: Vec<&str> = command.split_whitespace().collect();
    match program_run(&words, &["ibstat", "ibstatus", "ibv_devinfo"]) {
        Some(("ibv_devinfo", args)) => !args
            .iter()
            .any(|a| a.starts_with("-d") || a.starts_with("--ib-dev")),
        Some((_, args)) => args.iter().all(|a| a.starts_with('-')),
        None => true,
    }
}

/// The first of `words` that runs one of `programs` (by its base name,
/// `/usr/sbin/ibstat` too), as that name and the words after it.
fn program_run<'w>(
    words: &'w [&'w str],
    programs: &[&'static str],
) -> Option<(&'static str, &'w [&'w str])> {
    words.iter().enumerate().find_map(|(i, w)| {
        let base = w.rsplit('/').next().unwrap_or(w);
        let name = programs.iter().find(|p| **p == base)?;
        Some((*name, words.get(i + 1..).unwrap_or_default()))
    })
}

/// Whether the command that printed a port listing lists every port of
/// the host: not when it names one adapter ([`lists_every_adapter`]), nor
/// one port of each (`ibv_devinfo -i 2`, `--ib-port=2`), nor one link
/// (`rdma link show mlx5_0/1`). Output without a prompt is taken as
/// complete.
pub(crate) fn lists_every_port(command: Option<&str>) -> bool {
    if !lists_every_adapter(command) {
        return false;
    }
    let Some(command) = command else {
        return true;
    };
    let first_step = command.split(['|', ';', '&']).next().unwrap_or(command);
    let words: Vec<&str> = first_step.split_whitespace().collect();
    match program_run(&words, &["ibv_devinfo", "rdma"]) {
        Some(("rdma", args)) => {
            // `rdma link [show]` lists every link; a `dev/port` after it names one.
            let mut words = args.iter().filter(|a| !a.starts_with('-'));
            let names_one = words.next().is_some_and(|object| object.starts_with('l'))
                && words.any(|a| !matches!(*a, "show" | "list"));
            !names_one
        }
        Some((_, args)) => !args
            .iter()
            .any(|a| a.starts_with("-i") || a.starts_with("--ib-port")),
        None => true,
    }
}

/// FL003.
fn check_adapter_count_fleet(fleet: &Fleet<'_>, out: &mut Vec<Finding>) -> Coverage {
    // InfiniBand channel adapters listed with their ports, per named host.
    // Ethernet NICs and bonds are left out: RoCE cards, a bond folding two
    // of them into one device and a BlueField's management port vary with
    // the host's network build, not with a lost rail.
    let mut per_host: BTreeMap<&str, Vec<&AdapterFacts>> = BTreeMap::new();
    // Every adapter of those lists, Ethernet ones too.
    let mut listed: BTreeMap<&str, Vec<&AdapterFacts>> = BTreeMap::new();
    // Hosts whose listing shows an adapter cut before its ports: it counts
    // for nothing, and the host's list may go on past the cut.
    let mut cut_hosts: BTreeSet<&str> = BTreeSet::new();
    for a in &fleet.facts.adapters {
        let host = a.host.as_str();
        if a.partial && a.ports_listed == 0 {
            cut_hosts.insert(host);
        }
        if a.ports_listed == 0
            || a.node_type.as_deref().is_some_and(|t| t != "CA")
            || !a.lists_every_adapter
        {
            continue;
        }
        listed.entry(host).or_default().push(a);
        if !a.ethernet {
            per_host.entry(host).or_default().push(a);
        }
    }
    if per_host.len() < 2 {
        return Coverage::Skipped(
            "full InfiniBand adapter lists (ibstat, ibv_devinfo) from fewer than two named hosts"
                .to_owned(),
        );
    }
    // Per host, its InfiniBand adapters by type; hosts are peers when they
    // carry the same set of types (the same build): a storage server's one
    // ConnectX-3 beside GPU nodes' ConnectX-7s is other hardware, not a
    // host that lost adapters.
    type ByType<'a> = BTreeMap<&'a str, Vec<&'a AdapterFacts>>;
    let mut builds: BTreeMap<Vec<&str>, BTreeMap<&str, ByType<'_>>> = BTreeMap::new();
    for (host, cas) in &per_host {
        let mut by_type: ByType<'_> = BTreeMap::new();
        for a in cas {
            by_type
                .entry(a.ca_type.as_deref().unwrap_or(""))
                .or_default()
                .push(a);
        }
        let build: Vec<&str> = by_type.keys().copied().collect();
        builds.entry(build).or_default().insert(host, by_type);
    }
    for hosts in builds.values() {
        if hosts.len() < 2 {
            continue;
        }
        let types: BTreeSet<&str> = hosts.values().flat_map(|t| t.keys().copied()).collect();
        for ty in types {
            let counts: Vec<usize> = hosts
                .values()
                .map(|t| t.get(ty).map_or(0, Vec::len))
                .collect();
            let Some((expected, count)) = usual(&counts, |v| *v, Ord::cmp) else {
                continue;
            };
            // The adapter names the usual hosts list, to tell a gap from a tail.
            let usual_names: BTreeSet<&str> = hosts
                .values()
                .filter_map(|t| t.get(ty))
                .filter(|cas| cas.len() == expected)
                .flat_map(|cas| cas.iter().map(|a| a.name.as_str()))
                .collect();
            for (host, by_type) in hosts {
                let Some(cas) = by_type.get(ty) else {
                    continue;
                };
                if cas.len() >= expected {
                    continue;
                }
                out.push(missing_adapter_finding(
                    host,
                    ty,
                    cas,
                    (expected, count, hosts.len()),
                    may_be_cut_after(
                        listed.get(host).map_or(&[][..], Vec::as_slice),
                        cas,
                        &usual_names,
                    )
                    .or_else(|| {
                        cut_hosts
                            .contains(host)
                            .then(|| cas.iter().map(|a| a.name.as_str()).max())
                            .flatten()
                    }),
                ));
            }
        }
    }
    Coverage::Checked(per_host.len())
}

/// An FL003 finding: `host` lists `cas` of type `ty` where `count` of its
/// `peers` hosts of the same build list `expected`; `cut` names the last
/// adapter when the listing may simply be cut after it.
fn missing_adapter_finding(
    host: &str,
    ty: &str,
    cas: &[&AdapterFacts],
    (expected, count, peers): (usize, usize, usize),
    cut: Option<&str>,
) -> Finding {
    let names: Vec<&str> = cas.iter().map(|a| a.name.as_str()).collect();
    let kind = if ty.is_empty() {
        "InfiniBand".to_owned()
    } else {
        format!("{ty} InfiniBand")
    };
    let mut message = format!(
        "{host} lists {} {kind} adapter(s); {count} of {peers} hosts with the same InfiniBand adapter types list {expected}",
        cas.len(),
    );
    if let Some(last) = cut {
        message.push_str(&format!(
            "; its listing ends the input after {last}, so the rest may simply not be in the paste"
        ));
    }
    let mut f = FL003.finding(Subject::host(Some(host)), message);
    if cut.is_some() {
        f = f.severity(Severity::Info);
    }
    let span = cas
        .iter()
        .map(|a| a.span)
        .reduce(crate::span::LineSpan::join);
    if let (Some(span), Some(first)) = (span, cas.first()) {
        f = f.evidence(Evidence::new(
            format!("{kind} adapters listed: {}", names.join(", ")),
            span,
            first.file.as_deref(),
        ));
    }
    f.threshold(Threshold::new(
        format!("{expected} {kind} adapters (most common among hosts with the same InfiniBand adapter types)"),
        "fleet peer comparison (Azure/Imbue per-SKU port counts)",
    ))
    .remediation("Check lspci and dmesg (mlx5_core, PCIe AER) for the missing adapter; reseat or replace it.")
}

/// The last adapter a host lists, when its listing may have been cut
/// right after it: the section listing it ends the input (or the adapter
/// block is itself cut), and every adapter the usual hosts list that this
/// one lacks would come after it in ibstat's name order. A gap in the
/// middle (`mlx5_0`, `mlx5_2`) is never a cut.
/// `listed` is everything the host's listing shows (its Ethernet NICs too:
/// a listing that goes on past the adapter is not cut after it), `cas` the
/// adapters compared.
fn may_be_cut_after<'a>(
    listed: &[&'a AdapterFacts],
    cas: &[&'a AdapterFacts],
    usual_names: &BTreeSet<&str>,
) -> Option<&'a str> {
    let last = listed
        .iter()
        .chain(cas)
        .max_by(|a, b| a.name.cmp(&b.name))?;
    let ends = last.ends_input || last.partial;
    let tail_only = usual_names
        .iter()
        .filter(|n| !listed.iter().chain(cas).any(|a| a.name == **n))
        .all(|n| *n > last.name.as_str());
    (ends && tail_only).then_some(last.name.as_str())
}

/// How serious a peer outlier is. A rate is happening now: `warning`. A
/// count since reset depends on an uptime nobody knows, so it is a `warning`
/// only when it is also over the counter's own limit; under it (or when the
/// counter has no limit) it is `info`.
fn outlier_severity(statistic: PeerStatistic, value: f64, limit: Option<f64>) -> Severity {
    match statistic {
        PeerStatistic::CountsPerSecond => Severity::Warning,
        PeerStatistic::Value if limit.is_some_and(|l| value > l) => Severity::Warning,
        PeerStatistic::Value => Severity::Info,
    }
}

/// FL004.
fn check_counter_outliers(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    // Ports compared by growth whose groups all read 0 are checked too:
    // the statistics leave such groups out.
    let rates = super::rates_compared(ctx, false);
    counter_outliers(&ctx.measurements.peer_groups, ctx.thresholds, rates, out)
}

/// FL004 over the peer groups across hosts (the fleet step; the groups
/// within each host were judged with their unit).
fn check_counter_outliers_across_hosts(fleet: &Fleet<'_>, out: &mut Vec<Finding>) -> Coverage {
    counter_outliers(fleet.peer_groups, fleet.thresholds, 0, out)
}

fn counter_outliers(
    peer_groups: &[crate::stats::PeerGroup],
    thresholds: &super::Thresholds,
    rates: usize,
    out: &mut Vec<Finding>,
) -> Coverage {
    let groups: Vec<_> = peer_groups
        .iter()
        .filter(|g| {
            matches!(
                g.kind,
                PeerGroupKind::PortsOfDevice
                    | PeerGroupKind::PortsOnHost
                    | PeerGroupKind::SamePortAcrossHosts
            ) && g.outliers.iter().all(|o| o.subject.gpu.is_none())
        })
        .collect();
    if groups.is_empty() && rates == 0 {
        return Coverage::Skipped(
            "no group of InfiniBand ports to compare (needs perfquery from several ports or hosts)"
                .to_owned(),
        );
    }
    for group in &groups {
        let limit = thresholds.get(&group.counter).map(|e| e.value);
        for o in &group.outliers {
            let rate = group.statistic == PeerStatistic::CountsPerSecond;
            let big = o.times_median.is_none_or(|t| t >= 10.0);
            if !rate && !big {
                continue;
            }
            let congestion = super::ib_counters::is_congestion_counter(&group.counter);
            let severity = if congestion {
                Severity::Info
            } else {
                outlier_severity(group.statistic, o.value, limit)
            };
            let message = if congestion {
                format!(
                    "{}: congestion, not a link fault (IB109 judges the share of time spent waiting)",
                    o.explanation
                )
            } else if severity == Severity::Info {
                format!(
                    "{}; under the {} limit ({}), so only worth watching",
                    o.explanation,
                    group.counter,
                    limit.unwrap_or_default()
                )
            } else {
                o.explanation.clone()
            };
            let subject = subject_of(&o.subject);
            out.push(
                FL004
                    .finding(subject, message)
                    .severity(severity)
                    .evidence(super::outlier_evidence(group, o))
                    .threshold(super::outlier_threshold())
                    .remediation("Inspect the outlier port's cable and transceiver (mlxlink -m) and compare with its peers after a counter reset."),
            );
        }
    }
    Coverage::Checked(groups.len() + rates)
}

/// IB001's fleet step: the fewest hosts on which one port (adapter name
/// and number) must have never linked before it is called the fleet's
/// design. Below it a paste of a few hosts keeps one `warning` per host,
/// as a single host always does: seven lines are still read one by one,
/// and two or three hosts alike say nothing of a design.
pub const DESIGN_MIN_HOSTS: usize = 8;

/// IB001's fleet step: the share of the hosts listing the port (their
/// adapter of that name lists that many ports) on which it must have
/// never linked, as `numerator / denominator`: three in four. Where more
/// than a quarter of those hosts have the port cabled (Active, or down
/// after it had a LID), the fleet is mixed and an uncabled one may be a
/// host someone forgot: each keeps its `warning`.
pub const DESIGN_SHARE: (usize, usize) = (3, 4);

/// One port (adapter name and number) that never linked beside an Active
/// sibling on most hosts listing it: the fleet's design, not a fault of
/// each host.
#[derive(Debug)]
pub(crate) struct DesignPort<'a> {
    pub device: &'a str,
    pub number: u32,
    /// The hosts' never-linked readings of it, by host name.
    pub ports: Vec<&'a NeverLinkedFacts>,
    /// The hosts listing the port.
    pub hosts: usize,
}

/// The ports that never linked on enough hosts ([`DESIGN_MIN_HOSTS`],
/// [`DESIGN_SHARE`]) to be the fleet's design. Linear in the facts (one
/// pass over the never-linked ports, one over the adapters, sets of host
/// names only for the adapters named by a candidate).
pub(crate) fn never_linked_by_design(facts: &FleetFacts) -> Vec<DesignPort<'_>> {
    let mut by_port: BTreeMap<(&str, u32), Vec<&NeverLinkedFacts>> = BTreeMap::new();
    for p in &facts.never_linked {
        by_port
            .entry((p.device.as_str(), p.number))
            .or_default()
            .push(p);
    }
    for ports in by_port.values_mut() {
        ports.sort_by(|a, b| a.host.cmp(&b.host));
        ports.dedup_by(|a, b| a.host == b.host);
    }
    by_port.retain(|_, ports| ports.len() >= DESIGN_MIN_HOSTS);
    if by_port.is_empty() {
        return Vec::new();
    }
    // The hosts listing each candidate port: an InfiniBand adapter of that
    // name listing that many ports, or the port itself.
    let mut listing: BTreeMap<(&str, u32), BTreeSet<&str>> = BTreeMap::new();
    for a in facts.adapters.iter().filter(|a| !a.ethernet) {
        let name = a.name.as_str();
        for &(device, number) in by_port.range((name, 0)..=(name, u32::MAX)).map(|(k, _)| k) {
            if usize::try_from(number).is_ok_and(|n| a.ports_listed >= n) {
                listing
                    .entry((device, number))
                    .or_default()
                    .insert(a.host.as_str());
            }
        }
    }
    by_port
        .into_iter()
        .filter_map(|((device, number), ports)| {
            let mut hosts = listing.remove(&(device, number)).unwrap_or_default();
            hosts.extend(ports.iter().map(|p| p.host.as_str()));
            let (num, den) = DESIGN_SHARE;
            (ports.len() * den >= hosts.len() * num).then_some(DesignPort {
                device,
                number,
                ports,
                hosts: hosts.len(),
            })
        })
        .collect()
}

/// The hosts a fleet-level IB001 finding names as evidence.
const DESIGN_SAMPLE: usize = 5;

/// IB001 over the fleet: a port that never linked on most hosts listing
/// it ([`never_linked_by_design`]) is one `info` finding about the port,
/// not one `warning` per host (the fleet step drops those).
pub(crate) fn check_never_linked_fleet(fleet: &Fleet<'_>, out: &mut Vec<Finding>) -> Coverage {
    for d in never_linked_by_design(fleet.facts) {
        let (device, number, count, of) = (d.device, d.number, d.ports.len(), d.hosts);
        let subject = Subject {
            device: Some(device.to_owned()),
            port: Some(number),
            ..Subject::default()
        };
        let mut f = super::ib_port::IB001
            .finding(
                subject,
                format!("{device} port {number} never linked on {count} of {of} hosts: not cabled by design?"),
            )
            .severity(Severity::Info);
        for p in d.ports.iter().take(DESIGN_SAMPLE) {
            f = f
                .evidence(p.evidence(format!("{}: {device} port {number}: {}", p.host, p.reading)));
        }
        if count > DESIGN_SAMPLE {
            if let Some(last) = d.ports.last() {
                f = f.evidence(last.evidence(format!(
                    "{}: {device} port {number}: {} (and {} other hosts alike)",
                    last.host,
                    last.reading,
                    count - DESIGN_SAMPLE - 1
                )));
            }
        }
        out.push(
            f.threshold(Threshold::new(
                format!(
                    "never linked beside an Active sibling on at least {DESIGN_MIN_HOSTS} hosts and {} in {} of the hosts listing the port",
                    DESIGN_SHARE.0, DESIGN_SHARE.1
                ),
                "fleet peer comparison",
            ))
            .remediation(
                "Nothing to do if the port is unused by design (the second port of each card left uncabled); otherwise cable it on every host. A host where this port had a LID and lost it, or whose sibling is down too, is reported on its own.",
            ),
        );
    }
    // The ports are counted by IB001's check on each unit: checked adds
    // none, and where no unit saw a port that never linked, the units'
    // coverage (or their reason for skipping) stands alone.
    if fleet.facts.never_linked.is_empty() {
        Coverage::Skipped("no port that never linked beside an Active one".to_owned())
    } else {
        Coverage::Checked(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testing::{findings_of, skipped_reason};

    fn ca(name: &str, fw: &str, rate: u32) -> String {
        format!(
            "CA '{name}'\n\tCA type: MT4129\n\tNumber of ports: 1\n\tFirmware version: {fw}\n\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: {rate}\n\t\tBase lid: 3\n\t\tSM lid: 1\n\t\tLink layer: InfiniBand\n"
        )
    }

    fn pdsh(host: &str, text: &str) -> String {
        text.lines().map(|l| format!("{host}: {l}\n")).collect()
    }

    /// A host's dual-port `mlx5_0`: port 1 Active, port 2 Down/Polling with
    /// `base` and `sm` LIDs (0 and 0: never linked).
    fn dual_port(host: &str, base: u32, sm: u32) -> String {
        pdsh(
            host,
            &format!(
                "CA 'mlx5_0'\n\tCA type: MT4129\n\tNumber of ports: 2\n\tFirmware version: 28.39.1002\n\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 400\n\t\tBase lid: 3\n\t\tSM lid: 1\n\t\tLink layer: InfiniBand\n\tPort 2:\n\t\tState: Down\n\t\tPhysical state: Polling\n\t\tRate: 10\n\t\tBase lid: {base}\n\t\tSM lid: {sm}\n\t\tLink layer: InfiniBand\n"
            ),
        )
    }

    /// IB001's findings of one paste of `hosts` hosts whose port 2 never
    /// linked, as (host, severity, message).
    fn never_linked_paste(
        hosts: usize,
        options: &crate::AnalyzeOptions,
    ) -> Vec<(Option<String>, Severity, String)> {
        let text: String = (0..hosts)
            .map(|i| dual_port(&format!("gpu{i:02}"), 0, 0))
            .collect();
        let doc = crate::input::read_all(&text, &crate::ReadOptions::default()).unwrap();
        crate::analyze(&[doc], options)
            .findings
            .into_iter()
            .filter(|f| f.rule == "IB001")
            .map(|f| (f.subject.host, f.severity, f.message))
            .collect()
    }

    /// One pdsh paste of eight hosts is a fleet too: one finding about the
    /// port; seven keep a warning each.
    #[test]
    fn a_paste_of_eight_hosts_says_the_port_once() {
        let options = crate::AnalyzeOptions::default();
        let eight = never_linked_paste(8, &options);
        assert_eq!(
            eight,
            [(
                None,
                Severity::Info,
                "mlx5_0 port 2 never linked on 8 of 8 hosts: not cabled by design?".to_owned()
            )]
        );
        let seven = never_linked_paste(7, &options);
        assert_eq!(seven.len(), 7, "{seven:#?}");
        assert!(seven
            .iter()
            .all(|(h, s, _)| h.is_some() && *s == Severity::Warning));
    }

    /// Without IB001 nothing is said of the port, on the hosts or the fleet.
    #[test]
    fn ignoring_ib001_ignores_its_fleet_finding() {
        let options = crate::AnalyzeOptions::default().ignore("IB001");
        assert_eq!(never_linked_paste(10, &options), []);
    }

    /// Records written before the never-linked facts read as having none.
    #[test]
    fn facts_without_never_linked_ports_read_as_none() {
        let facts: FleetFacts = serde_json::from_str(r#"{"adapters":[],"ports":[]}"#).unwrap();
        assert!(facts.never_linked.is_empty());
        let mut out = Vec::new();
        let fleet = Fleet {
            facts: &facts,
            peer_groups: &[],
            thresholds: &crate::rules::Thresholds::default(),
        };
        assert!(matches!(
            check_never_linked_fleet(&fleet, &mut out),
            Coverage::Skipped(_)
        ));
        assert!(out.is_empty());
    }

    #[test]
    fn versions_compare_numerically() {
        assert_eq!(
            compare_versions("28.39.1002", "28.39.999"),
            Ordering::Greater
        );
        assert_eq!(compare_versions("20.9.1", "20.10.1"), Ordering::Less);
    }

    #[test]
    fn mixed_firmware_on_one_host_flags_the_odd_adapter() {
        let text = format!(
            "{}{}{}",
            ca("mlx5_0", "28.39.1002", 400),
            ca("mlx5_1", "28.39.1002", 400),
            ca("mlx5_2", "28.36.1010", 400)
        );
        let f = findings_of(&IB005, &text);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].subject.device.as_deref(), Some("mlx5_2"));
        assert_eq!(f[0].evidence.len(), 2);
        let same = format!(
            "{}{}",
            ca("mlx5_0", "28.39.1002", 400),
            ca("mlx5_1", "28.39.1002", 400)
        );
        assert!(findings_of(&IB005, &same).is_empty());
        assert!(skipped_reason(&IB005, &ca("mlx5_0", "1", 400)).is_some());
    }

    #[test]
    fn fleet_rules_find_the_odd_host() {
        let good = format!(
            "{}{}",
            ca("mlx5_0", "28.39.1002", 400),
            ca("mlx5_1", "28.39.1002", 400)
        );
        let old_fw = format!(
            "{}{}",
            ca("mlx5_0", "28.36.1010", 400),
            ca("mlx5_1", "28.36.1010", 400)
        );
        let slow = format!(
            "{}{}",
            ca("mlx5_0", "28.39.1002", 200),
            ca("mlx5_1", "28.39.1002", 200)
        );
        let missing = ca("mlx5_0", "28.39.1002", 400);
        let text = format!(
            "{}{}{}{}{}",
            pdsh("n1", &good),
            pdsh("n2", &good),
            pdsh("n3", &old_fw),
            pdsh("n4", &slow),
            pdsh("n5", &missing)
        );
        // One finding for the host's two adapters, naming both.
        let fw = findings_of(&FL001, &text);
        assert_eq!(fw.len(), 1, "{fw:#?}");
        assert_eq!(fw[0].subject.host.as_deref(), Some("n3"));
        assert_eq!(fw[0].severity, Severity::Warning);
        assert!(fw[0].evidence[0].text.contains("mlx5_0, mlx5_1"), "{fw:#?}");
        // n1, n2, n4 two adapters each, n5 one: 7 of the 9 run the usual.
        assert!(
            fw[0]
                .message
                .ends_with("7 of the 9 such adapters on 5 hosts run 28.39.1002"),
            "{}",
            fw[0].message
        );
        let rate = findings_of(&FL002, &text);
        assert_eq!(rate.len(), 2);
        assert!(rate.iter().all(|f| f.subject.host.as_deref() == Some("n4")));
        let count = findings_of(&FL003, &text);
        assert_eq!(count.len(), 1);
        assert_eq!(count[0].subject.host.as_deref(), Some("n5"));
        // One drifted adapter of two on n3: n3 still votes for the usual
        // version, and the count of adapters says the drift is n3's own.
        let one_drifted = format!(
            "{}{}",
            ca("mlx5_0", "28.39.1002", 400),
            ca("mlx5_1", "28.36.1010", 400)
        );
        let text = format!(
            "{}{}{}",
            pdsh("n1", &good),
            pdsh("n2", &good),
            pdsh("n3", &one_drifted)
        );
        let fw = findings_of(&FL001, &text);
        assert_eq!(fw.len(), 1, "{fw:#?}");
        assert!(
            fw[0].message.starts_with("mlx5_1 ")
                && fw[0]
                    .message
                    .ends_with("5 of the 6 such adapters on 3 hosts run 28.39.1002"),
            "{}",
            fw[0].message
        );
    }

    #[test]
    fn a_single_host_is_not_a_fleet() {
        let text = pdsh("n1", &ca("mlx5_0", "28.39.1002", 400));
        assert!(skipped_reason(&FL001, &text).is_some());
        assert!(skipped_reason(&FL002, &text).is_some());
        assert!(skipped_reason(&FL003, &text).is_some());
    }

    #[test]
    fn lifetime_outliers_under_their_limit_are_info_and_rates_or_overruns_warnings() {
        let v = PeerStatistic::Value;
        assert_eq!(outlier_severity(v, 9.0, Some(10.0)), Severity::Info);
        assert_eq!(
            outlier_severity(v, 10.0, Some(10.0)),
            Severity::Info,
            "not above"
        );
        assert_eq!(outlier_severity(v, 11.0, Some(10.0)), Severity::Warning);
        assert_eq!(
            outlier_severity(v, 5000.0, None),
            Severity::Info,
            "no limit"
        );
        let r = PeerStatistic::CountsPerSecond;
        assert_eq!(outlier_severity(r, 0.9, Some(10.0)), Severity::Warning);
    }

    /// `ibstat` once in full, then `ibstat mlx5_0 1` (port only, no CA type).
    fn full_then_port_only(host: &str, rate: u32) -> String {
        format!(
            "[root@{host} ~]# ibstat\n{}[root@{host} ~]# ibstat mlx5_0 1\nCA: 'mlx5_0'\nPort 1:\nState: Active\nPhysical state: LinkUp\nRate: {rate}\nBase lid: 3\nSM lid: 1\nLink layer: InfiniBand\n",
            ca("mlx5_0", "28.39.1002", rate)
        )
    }

    #[test]
    fn a_port_only_view_keeps_the_adapter_type_of_the_full_view() {
        // Only the slow host was looked at twice: without the merge its port
        // would form an adapter-type group of its own and be compared with
        // nobody.
        let text = format!(
            "{}{}{}",
            pdsh("n1", &ca("mlx5_0", "28.39.1002", 400)),
            pdsh("n2", &ca("mlx5_0", "28.39.1002", 400)),
            full_then_port_only("n3", 100)
        );
        let rate = findings_of(&FL002, &text);
        assert_eq!(rate.len(), 1, "{rate:#?}");
        assert_eq!(rate[0].subject.host.as_deref(), Some("n3"));
        // The adapters are still described by the full view: same family, no
        // firmware finding, and its lines as evidence.
        assert!(findings_of(&FL001, &text).is_empty());
        assert!(findings_of(&FL003, &text).is_empty());
    }

    #[test]
    fn a_list_asked_for_one_adapter_is_not_a_full_list() {
        assert!(lists_every_adapter(None));
        assert!(lists_every_adapter(Some("ibstat")));
        assert!(lists_every_adapter(Some("sudo ibstat -s")));
        assert!(!lists_every_adapter(Some("ibstat mlx5_0")));
        assert!(!lists_every_adapter(Some("ibstat mlx5_0 1")));
        assert!(!lists_every_adapter(Some("ibstatus mlx5_0:1")));
        assert!(lists_every_adapter(Some("ibv_devinfo -v")));
        assert!(!lists_every_adapter(Some("ibv_devinfo -d mlx5_1")));
    }

    #[test]
    fn a_list_asked_for_one_port_is_not_a_full_list() {
        for every in [
            None,
            Some("ibstat"),
            Some("ibv_devinfo -v"),
            Some("rdma link"),
            Some("rdma link show"),
            Some("rdma -j link show"),
        ] {
            assert!(lists_every_port(every), "{every:?}");
        }
        for one in [
            Some("ibstat mlx5_0 1"),
            Some("ibv_devinfo -d mlx4_1 -i 2 -v"),
            Some("ibv_devinfo -i 2"),
            Some("ibv_devinfo --ib-port=2"),
            Some("rdma link show mlx5_0/1"),
            Some("sudo rdma link show dev mlx5_0"),
            Some("rdma -j link show mlx5_0/1"),
        ] {
            assert!(!lists_every_port(one), "{one:?}");
        }
    }

    /// `ibstat` at `host`'s prompt: `adapters` one-port adapters of
    /// `ca_type`, each port Active at 400.
    fn ibstat_listing(host: &str, ca_type: &str, adapters: usize) -> String {
        let mut t = format!("[root@{host} ~]# ibstat\n");
        for i in 0..adapters {
            t.push_str(&format!(
                "CA 'mlx5_{i}'\n\tCA type: {ca_type}\n\tNumber of ports: 1\n\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 400\n"
            ));
        }
        t
    }

    #[test]
    fn fl003_ignores_a_host_that_asked_for_one_adapter() {
        let full = |host: &str| ibstat_listing(host, "MT4129", 4);
        let one = "[root@n3 ~]# ibstat mlx5_0\nCA 'mlx5_0'\n\tCA type: MT4129\n\tNumber of ports: 1\n\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 400\n";
        let text = format!("{}{}{one}", full("n1"), full("n2"));
        assert!(findings_of(&FL003, &text).is_empty());
        let cut = "[root@n3 ~]# ibstat\nCA 'mlx5_0'\n\tCA type: MT4129\n\tNumber of ports: 1\n\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 400\n";
        let text = format!("{}{}{cut}", full("n1"), full("n2"));
        assert_eq!(findings_of(&FL003, &text).len(), 1);
    }

    #[test]
    fn fl003_compares_a_host_only_with_hosts_of_its_adapter_type() {
        // Two storage servers with four ConnectX-5 beside two clients with
        // one ConnectX-3 each: other hardware, not lost adapters.
        let lab = format!(
            "{}{}{}{}",
            ibstat_listing("s1", "MT4119", 4),
            ibstat_listing("s2", "MT4119", 4),
            ibstat_listing("c1", "MT4099", 1),
            ibstat_listing("c2", "MT4099", 1)
        );
        assert!(findings_of(&FL003, &lab).is_empty());
        // A host of the same type with one adapter fewer is still named.
        let fleet = format!(
            "{}{}{}",
            ibstat_listing("s1", "MT4119", 4),
            ibstat_listing("s2", "MT4119", 4),
            ibstat_listing("s3", "MT4119", 3)
        );
        let f = findings_of(&FL003, &fleet);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].subject.host.as_deref(), Some("s3"));
    }

    /// `ibstat` at `host`'s prompt: `ib` MT4129 adapters on InfiniBand at
    /// `fw`, then `eth` (name, type) adapters whose port runs Ethernet.
    fn mixed_listing(host: &str, fw: &str, ib: usize, eth: &[(&str, &str)]) -> String {
        let mut t = format!("[root@{host} ~]# ibstat\n");
        for i in 0..ib {
            t.push_str(&format!(
                "CA 'mlx5_{i}'\n\tCA type: MT4129\n\tNumber of ports: 1\n\tFirmware version: {fw}\n\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 400\n\t\tLink layer: InfiniBand\n"
            ));
        }
        for (name, ty) in eth {
            t.push_str(&format!(
                "CA '{name}'\n\tCA type: {ty}\n\tNumber of ports: 1\n\tFirmware version: 22.39.1002\n\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 100\n\t\tLink layer: Ethernet\n"
            ));
        }
        t
    }

    #[test]
    fn fl003_counts_only_infiniband_adapters_of_the_same_build() {
        let dx = [
            ("mlx5_8", "MT4125"),
            ("mlx5_9", "MT4125"),
            ("mlx5_10", "MT4125"),
            ("mlx5_11", "MT4125"),
        ];
        // Eight rails everywhere; a bond, four Ethernet cards or none beside
        // them, and a RoCE-only build: nobody lost an adapter.
        let fleet = format!(
            "{}{}{}{}",
            mixed_listing("h1", "28.41.1000", 8, &[("mlx5_bond_0", "MT41692")]),
            mixed_listing("h2", "28.41.1000", 8, &dx),
            mixed_listing("h3", "28.39.1002", 8, &dx),
            mixed_listing("h4", "28.39.1002", 0, &dx),
        );
        assert!(findings_of(&FL003, &fleet).is_empty());
        // Seven rails where the peers have eight is still an error, whatever
        // Ethernet devices each host has.
        let fleet = format!(
            "{}{}{}",
            mixed_listing("h1", "28.41.1000", 8, &[("mlx5_bond_0", "MT41692")]),
            mixed_listing("h2", "28.41.1000", 8, &dx),
            mixed_listing("h3", "28.41.1000", 7, &dx),
        );
        let f = findings_of(&FL003, &fleet);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].subject.host.as_deref(), Some("h3"));
        assert_eq!(f[0].severity, Severity::Error);
        assert!(
            f[0].message.contains("7 MT4129 InfiniBand"),
            "{}",
            f[0].message
        );
    }

    #[test]
    fn fl001_calls_nobody_drifted_on_a_tie_and_names_a_true_minority_once() {
        let tie = format!(
            "{}{}{}{}",
            mixed_listing("h1", "28.41.1000", 4, &[]),
            mixed_listing("h2", "28.41.1000", 4, &[]),
            mixed_listing("h3", "28.39.1002", 4, &[]),
            mixed_listing("h4", "28.39.1002", 4, &[]),
        );
        let f = findings_of(&FL001, &tie);
        assert_eq!(f.len(), 2, "{f:#?}");
        assert!(f.iter().all(|f| f.severity == Severity::Info));
        let hosts: Vec<_> = f.iter().filter_map(|f| f.subject.host.as_deref()).collect();
        assert_eq!(hosts, ["h3", "h4"], "the hosts not on the newest version");
        assert!(
            f[0].message.contains("2 firmware versions"),
            "{}",
            f[0].message
        );
        // One host of four on old firmware: one warning, not one per adapter.
        let minority = format!(
            "{}{}{}{}",
            mixed_listing("h1", "28.41.1000", 4, &[]),
            mixed_listing("h2", "28.41.1000", 4, &[]),
            mixed_listing("h3", "28.41.1000", 4, &[]),
            mixed_listing("h4", "28.39.1002", 4, &[]),
        );
        let f = findings_of(&FL001, &minority);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].severity, Severity::Warning);
        assert_eq!(f[0].subject.host.as_deref(), Some("h4"));
        assert!(
            f[0].evidence[0]
                .text
                .contains("mlx5_0, mlx5_1, mlx5_2, mlx5_3"),
            "{:#?}",
            f[0].evidence
        );
    }
}
