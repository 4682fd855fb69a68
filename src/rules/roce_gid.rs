//! NC005: whether a RoCE port has a GID that NCCL (or UCX) can route, read
//! from `show_gids`, and whether the GID index an NCCL log of the same host
//! was told to use is that one.
//!
//! RoCE addresses a peer by a GID of the port's table: the kernel adds one
//! pair (RoCE v1, RoCE v2) for each IP address of the interface, plus the
//! pair derived from its MAC (`fe80::…`, link-local). Only a v2 GID rides
//! UDP/IP and crosses routers, and only one that is not link-local is
//! routed: an interface without an IP address has none. An InfiniBand port
//! lists its `fe80:…` GIDs as `v1` without an interface: it needs no RoCE
//! GID, so a port is judged only when its rows show it is RoCE.

use super::context::{Context, HostKey, SectionRef};
use super::{Coverage, Evidence, Finding, Severity, Subject, Threshold};
use crate::declare_rule;
use crate::model::ib::LinkLayer;
use crate::model::nccl_log::{EnvSetting, NcclLog};
use crate::model::show_gids::{GidEntry, ShowGids};
use crate::parse::SectionData;

declare_rule! {
    /// ### What it detects
    /// A RoCE port in `show_gids` (its GIDs have a network interface, or
    /// one is RoCE v2) that has GIDs but **no routable RoCE v2 GID**: only
    /// `v1` entries, or `v2` only for the link-local `fe80:…` address. And,
    /// when an NCCL log of the same host says `NCCL_IB_GID_INDEX set by
    /// environment to N`, a RoCE port whose GID `N` is `v1`, link-local or
    /// not in its table while another index holds a routable v2 GID: the
    /// finding names that index. InfiniBand ports (`fe80` GIDs, `v1`, no
    /// interface), ports another tool of the host calls InfiniBand, rows
    /// without a version, a listing filtered by the command line
    /// (`show_gids | grep v1`) and the last port of a listing the paste
    /// ends in without its `n_gids_found` are not judged.
    ///
    /// ### Why it matters
    /// NCCL's and UCX's RoCE transports address the peer by a GID; a v1 GID
    /// is not carried over IP routing and a link-local one not beyond the
    /// subnet, so connections time out (`NCCL WARN NET/IB : Got completion
    /// … status=12`, `ibv_modify_qp failed with error Connection timed
    /// out`) or, for an empty index, fail at once. An interface without an
    /// IP address has no routable GID at all: the kernel adds the
    /// IPv4-mapped pair (`::ffff:a.b.c.d`, v1 and v2) only for addresses
    /// configured on it.
    ///
    /// ### Evidence
    /// The port's `show_gids` rows; the `NCCL_IB_GID_INDEX` line of the
    /// NCCL log when one is judged.
    ///
    /// ### What to do
    /// Give the interface its IP address (the rail's subnet), then check
    /// `show_gids` shows a `v2` row with it; point `NCCL_IB_GID_INDEX`
    /// (`UCX_IB_GID_INDEX`, perftest's `-x`) at that row's index, the same
    /// on every host, or leave it unset on NCCL 2.21 and later, which picks
    /// a routable v2 GID itself. A port left without an address by design
    /// (not used for RDMA) can be ignored.
    ///
    /// ### Thresholds and sources
    /// At least one RoCE v2 GID that is not link-local: NCCL's own GID
    /// choice skips link-local GIDs and prefers RoCE v2
    /// (`NCCL_IB_GID_INDEX`, `NCCL_IB_ROCE_VERSION_NUM`, NCCL environment
    /// variables, docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html);
    /// GID types and `show_gids` (NVIDIA, "Understanding show_gids script").
    /// Public cases: NVIDIA/nccl issues 426 and 769 (a v1 or link-local
    /// index times out, index 3 works), NVIDIA/nccl issue 1573 (an index
    /// without a GID).
    pub static NC005 = {
        id: "NC005",
        name: "roce-no-routable-v2-gid",
        family: Collectives,
        severity: Warning,
        summary: "A RoCE port has no routable RoCE v2 GID, or NCCL_IB_GID_INDEX names one that is not",
        needs: "show_gids (and an NCCL debug log for NCCL_IB_GID_INDEX)",
        check: check,
    }
}

/// One port's rows of a listing.
struct PortGids<'a> {
    at: SectionRef<'a>,
    device: &'a str,
    port: u32,
    rows: Vec<&'a GidEntry>,
}

impl PortGids<'_> {
    fn subject(&self) -> Subject {
        Subject {
            host: self.at.host().name().map(str::to_owned),
            device: Some(self.device.to_owned()),
            port: Some(self.port),
            ..Subject::default()
        }
    }

    fn evidence(&self, row: &GidEntry) -> Evidence {
        Evidence::new(
            format!(
                "show_gids: {} port {} index {} {} {}{}{}",
                row.device,
                row.port,
                row.index,
                row.gid,
                row.ipv4
                    .as_deref()
                    .map_or(String::new(), |ip| format!("{ip} ")),
                row.version.as_deref().unwrap_or("(no version)"),
                row.netdev
                    .as_deref()
                    .map_or(String::new(), |n| format!(" {n}")),
            ),
            row.span,
            self.at.source(),
        )
    }

    fn routable_v2(&self) -> Option<&GidEntry> {
        self.rows.iter().copied().find(|g| g.is_routable_v2())
    }

    fn netdev(&self) -> Option<&str> {
        self.rows.iter().find_map(|g| g.netdev.as_deref())
    }
}

/// Every port of a listing, in order, the last one left out when rows may
/// follow it (no `n_gids_found` line): its table may go on past the paste.
fn ports<'a>(at: SectionRef<'a>, gids: &'a ShowGids) -> Vec<PortGids<'a>> {
    let mut out: Vec<PortGids<'a>> = Vec::new();
    for g in &gids.gids {
        match out
            .iter_mut()
            .find(|p| p.device == g.device && p.port == g.port)
        {
            Some(p) => p.rows.push(g),
            None => out.push(PortGids {
                at,
                device: &g.device,
                port: g.port,
                rows: vec![g],
            }),
        }
    }
    if gids.gids_found.is_none() {
        if let Some(last) = gids.gids.last() {
            out.retain(|p| !(p.device == last.device && p.port == last.port));
        }
    }
    out
}

/// Whether the rows show a RoCE port: a GID bound to a network interface,
/// or a RoCE v2 GID. An InfiniBand port's GIDs have neither.
fn is_roce(rows: &[&GidEntry]) -> bool {
    rows.iter().any(|g| g.netdev.is_some() || g.is_v2())
}

/// Whether another tool of the host says the port is InfiniBand.
fn said_infiniband(ctx: &Context<'_>, p: &PortGids<'_>) -> bool {
    ctx.latest_ib_ports().iter().any(|q| {
        q.host() == p.at.host()
            && q.device == p.device
            && q.number == p.port
            && q.link_layer == Some(LinkLayer::Infiniband)
    })
}

/// The `NCCL_IB_GID_INDEX` an NCCL log of the listing's host was given,
/// with the log; `None` when no log says, or logs of the host disagree. A
/// listing without a host name takes the logs of its own document.
fn gid_index<'a>(ctx: &Context<'a>, at: SectionRef<'a>) -> Option<(&'a EnvSetting, &'a NcclLog)> {
    let mut found: Option<(&EnvSetting, &NcclLog)> = None;
    for log_at in ctx.sections() {
        let SectionData::NcclLog(log) = &log_at.section.data else {
            continue;
        };
        let same_host = match at.host() {
            HostKey::Named(_) => log_at.host() == at.host(),
            _ => log_at.doc == at.doc,
        };
        if !same_host {
            continue;
        }
        for e in log.env.iter().filter(|e| e.name == "NCCL_IB_GID_INDEX") {
            match found {
                Some((f, _)) if f.value != e.value => return None,
                Some(_) => {}
                None => found = Some((e, log)),
            }
        }
    }
    found
}

fn check(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let mut listings = 0usize;
    let mut judged = 0usize;
    // The latest listing of a port speaks for it: one finding, not one a
    // snapshot.
    let mut seen: Vec<(HostKey<'_>, &str, u32)> = Vec::new();
    let sections: Vec<SectionRef<'_>> = ctx.sections().collect();
    for at in sections.into_iter().rev() {
        let SectionData::ShowGids(gids) = &at.section.data else {
            continue;
        };
        listings += 1;
        // `show_gids | grep v1` shows only some rows of each port: a v2
        // GID may be among those left out.
        let filtered = at
            .section
            .command
            .as_deref()
            .and_then(super::input::output_filter)
            .is_some();
        let told = gid_index(ctx, at);
        for p in ports(at, gids) {
            let key = (at.host(), p.device, p.port);
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            if filtered || !is_roce(&p.rows) || said_infiniband(ctx, &p) {
                continue;
            }
            // A row without its version (no `gid_attrs/types`) may be the
            // v2 GID.
            let routable = p.routable_v2();
            if routable.is_none() && p.rows.iter().any(|g| g.version.is_none()) {
                continue;
            }
            judged += 1;
            match routable {
                None => out.push(no_routable_finding(&p)),
                Some(good) => {
                    if let Some((setting, log)) = told {
                        if let Some(f) = index_finding(&p, good, setting, log, at) {
                            out.push(f);
                        }
                    }
                }
            }
        }
    }
    if listings == 0 {
        return Coverage::Skipped("no show_gids listing in the input".to_owned());
    }
    if judged == 0 {
        return Coverage::Skipped(
            "no RoCE port with every GID's version in a whole show_gids listing (InfiniBand ports, and listings filtered by grep or cut, are not judged)"
                .to_owned(),
        );
    }
    Coverage::Checked(judged)
}

/// A RoCE port whose GIDs are all v1 or link-local.
fn no_routable_finding(p: &PortGids<'_>) -> Finding {
    let v2 = p.rows.iter().filter(|g| g.is_v2()).count();
    let what = if v2 == 0 {
        "only RoCE v1 GIDs (not carried over IP routing)".to_owned()
    } else {
        "RoCE v2 only for its link-local fe80 address (not routed beyond the subnet)".to_owned()
    };
    let netdev = p.netdev().map_or(String::new(), |n| format!(" ({n})"));
    let mut f = NC005
        .finding(
            p.subject(),
            format!(
                "{} port {}{netdev} has {} GID(s) but {what}: NCCL and UCX over RoCE need a routable v2 GID",
                p.device,
                p.port,
                p.rows.len()
            ),
        )
        .threshold(Threshold::new(
            "at least one RoCE v2 GID that is not link-local",
            "NCCL_IB_GID_INDEX / NCCL_IB_ROCE_VERSION_NUM (NCCL environment variables, docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html); NVIDIA, Understanding show_gids script",
        ))
        .remediation(format!(
            "If this port carries RDMA traffic, give {} its IP address on the rail's subnet (the kernel then adds an IPv4-mapped v1/v2 GID pair), check show_gids lists a v2 row with it, and set NCCL_IB_GID_INDEX (UCX_IB_GID_INDEX) to that row's index on every host or leave it unset on NCCL 2.21+. A port unused by design can be ignored.",
            p.netdev().unwrap_or("the port's interface")
        ));
    for g in p.rows.iter().take(4) {
        f = f.evidence(p.evidence(g));
    }
    f
}

/// NCCL told to use a GID index that is not the port's routable v2 GID.
fn index_finding(
    p: &PortGids<'_>,
    good: &GidEntry,
    setting: &EnvSetting,
    log: &NcclLog,
    log_at: SectionRef<'_>,
) -> Option<Finding> {
    let index: u32 = setting.value.parse().ok()?;
    let row = p.rows.iter().copied().find(|g| g.index == index);
    let what = match row {
        Some(g) if g.is_routable_v2() => return None,
        // Another routable GID of a v2 index is as good for NCCL.
        Some(g) if g.version.is_none() => return None,
        Some(g) if !g.is_v2() => format!(
            "GID {index} is RoCE {}",
            g.version.as_deref().unwrap_or("v1")
        ),
        Some(_) => format!("GID {index} is the link-local fe80 address"),
        None => format!("index {index} has no GID in the table"),
    };
    // The device NCCL says it uses: then the job runs over it.
    let used = log.net_devices.iter().any(|d| {
        d.devices
            .iter()
            .any(|n| n.starts_with(&format!("{}:{}/", p.device, p.port)))
    });
    let severity = if used {
        Severity::Error
    } else {
        Severity::Warning
    };
    let mut f = NC005
        .finding(
            p.subject(),
            format!(
                "NCCL_IB_GID_INDEX={index} but on {} port {} {what}; its routable RoCE v2 GID is index {}",
                p.device, p.port, good.index
            ),
        )
        .severity(severity)
        .evidence(Evidence::new(
            format!("NCCL INFO NCCL_IB_GID_INDEX set by environment to {}.", setting.value),
            setting.at.span,
            log_at.source(),
        ))
        .threshold(Threshold::new(
            "NCCL_IB_GID_INDEX names a RoCE v2 GID that is not link-local",
            "NCCL_IB_GID_INDEX (NCCL environment variables, docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html)",
        ))
        .remediation(format!(
            "Set NCCL_IB_GID_INDEX={} (the index of {}'s routable v2 GID{}), the same on every host, or leave it unset on NCCL 2.21+, which picks a routable v2 GID itself.",
            good.index,
            p.device,
            good.ipv4.as_deref().map_or(String::new(), |ip| format!(", {ip}"))
        ));
    if let Some(g) = row {
        f = f.evidence(p.evidence(g));
    }
    Some(f.evidence(p.evidence(good)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::show_gids::GidEntry;
    use crate::span::LineSpan;

    fn row(device: &str, index: u32, gid: &str, version: &str, netdev: &str) -> GidEntry {
        GidEntry {
            device: device.to_owned(),
            port: 1,
            index,
            gid: gid.to_owned(),
            ipv4: None,
            version: (!version.is_empty()).then(|| version.to_owned()),
            netdev: (!netdev.is_empty()).then(|| netdev.to_owned()),
            span: LineSpan::line(index as usize + 1),
        }
    }

    const LL: &str = "fe80:0000:0000:0000:0e42:a1ff:fe00:0001";
    const MAPPED: &str = "0000:0000:0000:0000:0000:ffff:0a00:0001";

    #[test]
    fn a_link_local_v2_is_not_routable_an_ipv4_mapped_one_is() {
        assert!(!row("mlx5_0", 1, LL, "v2", "ens1").is_routable_v2());
        assert!(row("mlx5_0", 3, MAPPED, "v2", "ens1").is_routable_v2());
        assert!(!row("mlx5_0", 2, MAPPED, "v1", "ens1").is_routable_v2());
    }

    #[test]
    fn infiniband_rows_do_not_show_roce() {
        let ib = row("mlx5_0", 0, LL, "v1", "");
        assert!(!is_roce(&[&ib]));
        let roce_v1 = row("mlx5_0", 0, LL, "v1", "ens1");
        assert!(is_roce(&[&ib, &roce_v1]));
        let v2 = row("mlx5_0", 1, LL, "v2", "");
        assert!(is_roce(&[&v2]));
    }
}
