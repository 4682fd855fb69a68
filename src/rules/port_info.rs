//! IB006 over `ibportstate` / `smpquery portinfo`: an Active port whose
//! link runs narrower or slower than it could.
//!
//! With the peer's block (`ibportstate` prints it when the link is up) the
//! test is infiniband-diags' own (`validate_width`, `validate_speed`): the
//! widest width and fastest lane speed both ends support and enable; a
//! width this port supports but leaves out of its own enabled set is
//! reported too, as a port limited by configuration. Without
//! it the far end's abilities are unknown, and a port narrower than it
//! supports may be cabled so by design (an NDR200 split cable runs 2X): only
//! a 1X link on a port that supports 4X is judged, since no fabric is built
//! of 1X links, and a speed is never judged.

use super::context::Context;
use super::ib_port::IB006;
use super::wording::gbps;
use super::{Evidence, Finding, SectionRef, Subject, Threshold};
use crate::model::ib::{LinkLayer, PortState};
use crate::model::portinfo::{same_speed, PortInfoBlock, Portinfo};

/// Judges every Active port asked about in `info`; returns how many.
pub(super) fn check_below_capability(
    at: SectionRef<'_>,
    info: &Portinfo,
    out: &mut Vec<Finding>,
) -> usize {
    let mut checked = 0;
    for (i, port) in info.ports.iter().enumerate() {
        if port.peer || port.state != Some(PortState::Active) {
            continue;
        }
        let peer = info.ports.get(i + 1).filter(|p| p.peer);
        let Some(active) = port.width_active else {
            continue;
        };
        checked += 1;
        let width = could_be_width(port, peer).filter(|&w| w > active);
        let speed = peer.and_then(|peer| could_be_speed(port, peer));
        if width.is_none() && speed.is_none() {
            continue;
        }
        out.push(finding(at, port, peer, active, width, speed));
    }
    checked
}

/// The widest width the link could run at. With the peer: the widest this
/// port supports and the peer supports and enables (this port's own
/// enabled set is what the finding then points at, when it leaves that
/// width out). Without: 4X for a 1X link whose port supports 4X (or more),
/// else nothing.
fn could_be_width(port: &PortInfoBlock, peer: Option<&PortInfoBlock>) -> Option<u32> {
    match peer {
        Some(peer) => {
            let theirs = peer.usable_widths()?;
            port.widths_supported
                .as_ref()?
                .iter()
                .copied()
                .filter(|w| theirs.contains(w))
                .max()
        }
        None => {
            let supports_4x = port.widths_supported.as_ref()?.iter().any(|&w| w >= 4);
            (port.width_active == Some(1) && supports_4x).then_some(4)
        }
    }
}

/// The fastest lane speed both ends support and enable, when it is faster
/// than the one the link runs at.
fn could_be_speed(port: &PortInfoBlock, peer: &PortInfoBlock) -> Option<f64> {
    let active = port.speed_active?;
    let theirs = peer.usable_speeds();
    let best = port
        .usable_speeds()
        .into_iter()
        .filter(|s| theirs.iter().any(|t| same_speed(*s, *t)))
        .fold(None, |m: Option<f64>, s| Some(m.map_or(s, |m| m.max(s))))?;
    (best > active && !same_speed(best, active)).then_some(best)
}

fn finding(
    at: SectionRef<'_>,
    port: &PortInfoBlock,
    peer: Option<&PortInfoBlock>,
    active: u32,
    width: Option<u32>,
    speed: Option<f64>,
) -> Finding {
    let tool = at.section.kind.name();
    let name = format!("{} port {}", port.target, port.port);
    let runs = match &port.speed_active_text {
        Some(s) => format!("{active}X, {s}"),
        None => format!("{active}X"),
    };
    let mut could = Vec::new();
    if let Some(w) = width {
        could.push(format!("{w}X"));
    }
    if let Some(s) = speed {
        could.push(format!("{s} Gbps per lane"));
    }
    let could = could.join(" at ");
    let mut message = match peer {
        Some(_) => format!("{name} runs at {runs}; both ends support {could}"),
        None => format!(
            "{name} runs at {runs}; the port supports {could} (its peer is not in the input)"
        ),
    };
    // A wider width the port's own enabled set leaves out: set by hand.
    let limited_here = width.is_some_and(|w| {
        port.widths_enabled
            .as_ref()
            .is_some_and(|en| en.iter().all(|&e| e < w))
    });
    if limited_here {
        message.push_str(&format!(
            "; its LinkWidthEnabled allows only {} (set by hand?)",
            list_widths(port.widths_enabled.as_ref())
        ));
    }
    let mut f = IB006
        .finding(
            // The host whose paste it is: ibportstate runs there (most
            // often on its own port's LID), and the verdict counts hosts by
            // the findings' hosts.
            Subject {
                host: at.host().name().map(str::to_owned),
                port: Some(port.port),
                lid: port.lid.filter(|l| !matches!(l, 0 | 0xffff)),
                ..Subject::default()
            },
            message,
        )
        .evidence(Evidence::new(
            format!("{tool}: LinkWidthActive {active}X, {}", widths_text(port)),
            port.span,
            at.source(),
        ));
    if let Some(peer) = peer {
        f = f.evidence(Evidence::new(
            format!(
                "{tool}: peer {} port {}: {}",
                peer.target,
                peer.port,
                widths_text(peer)
            ),
            peer.span,
            at.source(),
        ));
    }
    let remedy = if limited_here {
        "Restore the port's enabled widths (`ibportstate <lid> <port> width 255` enables every supported width) and reset the link; if it still trains narrow, replace the cable or transceiver."
    } else {
        "Replace the cable or transceiver (mlxlink -m shows lane errors); check that neither end limits its enabled widths or speeds."
    };
    f.threshold(Threshold::new(
        "the widest width both ends support; the fastest lane speed both ends support and enable",
        "infiniband-diags ibportstate (validate_width, validate_speed)",
    ))
    .remediation(remedy)
}

/// `supported 1X or 4X, enabled 1X`.
fn widths_text(p: &PortInfoBlock) -> String {
    format!(
        "supported {}, enabled {}",
        list_widths(p.widths_supported.as_ref()),
        list_widths(p.widths_enabled.as_ref())
    )
}

/// `1X or 4X`; `?` when not printed.
fn list_widths(widths: Option<&Vec<u32>>) -> String {
    widths.map_or("?".to_owned(), |w| {
        w.iter()
            .map(|n| format!("{n}X"))
            .collect::<Vec<_>>()
            .join(" or ")
    })
}

/// Every (width, speed) pair of the IBTA table whose product is `rate`,
/// only FDR10's where the rate is tagged FDR10.
fn width_speed_pairs(rate: f64, fdr10: bool) -> Vec<(u32, &'static str)> {
    let mut pairs = Vec::new();
    for (w, name, r) in crate::model::ib::ibta_rates() {
        if (!fdr10 || name == "FDR10") && (r - rate).abs() < 0.01 {
            pairs.push((w, name));
        }
    }
    pairs
}

/// The speeds of a rate that only a 1X link gives (`14` → `FDR`; `25` →
/// `EDR`; `10` tagged FDR10 → `FDR10`), or `None` when some wider width
/// gives it too: `100` is 4X EDR as well as 1X NDR or an HDR100 port's 2X
/// HDR by design, `50` is 2X EDR, `10` is 4X SDR. A rate no pair gives is
/// not judged either.
pub(super) fn only_one_lane(rate: f64, fdr10: bool) -> Option<Vec<&'static str>> {
    let pairs = width_speed_pairs(rate, fdr10);
    (!pairs.is_empty() && pairs.iter().all(|&(w, _)| w == 1))
        .then(|| pairs.into_iter().map(|(_, s)| s).collect())
}

/// IB006 from a port's `Rate` (ibstat, ibstatus, ibv_devinfo -v): an
/// Active InfiniBand port whose printed width is 1X, or whose rate only a
/// 1X link gives. Only 1X is judged: 2X is what HDR100 and NDR200 ports
/// run by design, and no rate tells a 2X port from a degraded 4X one.
/// RoCE ports are never judged (25 and 50 Gb/s are Ethernet lane rates),
/// nor ports whose link layer is not printed. A port another IB006
/// finding already describes (ibportstate, iblinkinfo: same LID and port)
/// is left to it. Returns how many ports were judged.
pub(super) fn check_narrow_rate(ctx: &Context<'_>, out: &mut Vec<Finding>) -> usize {
    let mut checked = 0;
    let mut found = Vec::new();
    // The ports IB006 already describes, by host (none: any host), LID and
    // port: gathered once, not searched for each port.
    let told: std::collections::BTreeSet<(Option<&str>, u32, u32)> = out
        .iter()
        .filter(|f| f.rule == IB006.id)
        .filter_map(|f| Some((f.subject.host.as_deref(), f.subject.lid?, f.subject.port?)))
        .collect();
    for p in ctx.latest_ib_ports() {
        if !p.is_active() || p.link_layer != Some(LinkLayer::Infiniband) {
            continue;
        }
        let Some(rate) = p.rate_gbps else { continue };
        checked += 1;
        let tag = if p.fdr10 { " (FDR10)" } else { "" };
        let (why, evidence) = match p.width_lanes {
            Some(1) => (
                format!("its width is printed 1X (rate {}{tag})", gbps(rate)),
                format!(
                    "State: Active, Rate: {}{tag}, width 1X, Link layer: InfiniBand",
                    gbps(rate)
                ),
            ),
            Some(_) => continue,
            None => match only_one_lane(rate, p.fdr10) {
                Some(speeds) => (
                    format!(
                        "rate {}{tag} is what only a 1X link gives ({})",
                        gbps(rate),
                        speeds
                            .iter()
                            .map(|s| format!("1X {s}"))
                            .collect::<Vec<_>>()
                            .join(" or ")
                    ),
                    format!(
                        "State: Active, Rate: {}{tag}, Link layer: InfiniBand",
                        gbps(rate)
                    ),
                ),
                None => continue,
            },
        };
        // A header-less port's number is unknown: no finding tells it.
        let is_told = |host| {
            p.headerless.is_none()
                && p.base_lid
                    .is_some_and(|lid| told.contains(&(host, lid, p.number)))
        };
        if is_told(None) || p.host().name().is_some_and(|h| is_told(Some(h))) {
            continue;
        }
        found.push(
            IB006
                .finding(
                    p.subject(),
                    format!(
                        "{} is Active on one lane: {why}; a 4X link carries four times as much",
                        p.name()
                    ),
                )
                .evidence(p.evidence(evidence))
                .threshold(Threshold::new(
                    "a rate some link of 2X or wider gives (HDR100 and NDR200 ports are 2X by design)",
                    "IBTA width × lane speed: 1X/2X/4X/8X/12X × SDR 2.5, DDR 5, QDR and FDR10 10, FDR 14, EDR 25, HDR 50, NDR 100, XDR 200 Gb/s",
                ))
                .remediation("Check the link's width on both ends (`iblinkinfo` names what both support; `ibportstate <lid> <port>` shows LinkWidthEnabled): if it was limited by hand, restore it (`ibportstate <lid> <port> width 255`) and reset the link; otherwise replace the cable or transceiver (`mlxlink -d <dev> -m` shows lane errors)."),
        );
    }
    out.extend(found);
    checked
}

#[cfg(test)]
mod tests {
    use super::only_one_lane;

    #[test]
    fn rates_only_one_lane_gives() {
        // 1X FDR (14.0625 Gb/s, printed 14), 1X EDR, 1X SDR, 1X FDR10.
        assert_eq!(only_one_lane(14.0, false), Some(vec!["FDR"]));
        assert_eq!(only_one_lane(25.0, false), Some(vec!["EDR"]));
        assert_eq!(only_one_lane(2.5, false), Some(vec!["SDR"]));
        assert_eq!(only_one_lane(10.0, true), Some(vec!["FDR10"]));
        // 10 is 4X SDR (and 2X DDR), 5 is 2X SDR, 50 is 2X EDR, 100 4X EDR
        // or 2X HDR, 200 4X HDR or 2X NDR, 28 2X FDR, 40 (FDR10) 4X; 13 no
        // pair at all.
        for (rate, fdr10) in [
            (10.0, false),
            (5.0, false),
            (50.0, false),
            (100.0, false),
            (200.0, false),
            (28.0, false),
            (40.0, true),
            (20.0, true),
            (13.0, false),
        ] {
            assert_eq!(only_one_lane(rate, fdr10), None, "{rate} {fdr10}");
        }
    }
}
