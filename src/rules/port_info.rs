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

use super::ib_port::IB006;
use super::{Evidence, Finding, SectionRef, Subject, Threshold};
use crate::model::ib::PortState;
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
