//! InfiniBand error counter rules (`IB1xx`), from `perfquery` and the rates,
//! bit error rates and saturation the statistics derive from it.
//!
//! Counters printed once count since the last reset, which may be a minute
//! or a year ago; the limits below are the ones `ibqueryerrors` applies to
//! such values (infiniband-diags `error_thresholds`). Two snapshots give
//! rates, which say what is happening now ([`IB112`], [`IB113`]); a count
//! over its limit that two snapshots show unchanged is history, and its
//! IB101–IB110 finding `info` ([`UNCHANGED_NOTE`]).

use super::context::{subject_of, Context, PerfPortRef, Reading};
use super::{Coverage, Evidence, Finding, Rule, Severity, Threshold};
use crate::declare_rule;
use crate::model::IbCounter;
use crate::stats::RateStatus;

/// Counters the error rules read, as perfquery names them.
pub const ERROR_COUNTERS: &[IbCounter] = &[
    IbCounter::SymbolErrorCounter,
    IbCounter::LinkErrorRecoveryCounter,
    IbCounter::LinkDownedCounter,
    IbCounter::PortRcvErrors,
    IbCounter::PortRcvRemotePhysicalErrors,
    IbCounter::PortRcvSwitchRelayErrors,
    IbCounter::PortXmitDiscards,
    IbCounter::PortXmitConstraintErrors,
    IbCounter::PortRcvConstraintErrors,
    IbCounter::LocalLinkIntegrityErrors,
    IbCounter::ExcessiveBufferOverrunErrors,
    IbCounter::VL15Dropped,
    IbCounter::PortXmitWait,
];

declare_rule! {
    /// ### What it detects
    /// A port whose `SymbolErrorCounter` is above its limit.
    ///
    /// ### Why it matters
    /// Symbol errors are bit errors on the wire, corrected or not by the
    /// link. A few are normal over months; many point at a dirty or damaged
    /// cable, a failing transceiver or a bad port. They matter most when the
    /// link also had to retrain (`LinkErrorRecoveryCounter`), which is when
    /// the finding becomes an `error`.
    ///
    /// ### Evidence
    /// `SymbolErrorCounter` (and `LinkErrorRecoveryCounter`) from perfquery.
    ///
    /// ### What to do
    /// Clear the counters (`perfquery -R`), watch whether they grow, and if
    /// they do, clean or replace the cable and transceiver (`mlxlink -m` shows
    /// the optics and BER).
    ///
    /// ### Thresholds and sources
    /// `SymbolErrorCounter` > {limit:SymbolErrorCounter} (infiniband-diags `error_thresholds`;
    /// `--thresholds` overrides). IBswcountlimits: "no action unless
    /// LinkErrorRecovery rises with it".
    ///
    /// Counts since reset, reviewed for a healthy, busy, year-old cluster
    /// (issue 9): a handful of symbol errors over months is normal and stays
    /// under the limit (FL004 may note it as `info` when the peers have
    /// none); more than 10 on a FEC-protected HDR/NDR port is not, and
    /// `ibqueryerrors` with the recommended thresholds flags it too, so the
    /// limit is kept. Growth between snapshots is [`IB112`].
    pub static IB101 = {
        id: "IB101",
        name: "symbol-errors",
        family: IbCounters,
        severity: Warning,
        summary: "Symbol (bit) errors above the limit; error when the link also retrained",
        needs: "perfquery",
        counters: [IbCounter::SymbolErrorCounter],
        check: |ctx, out| {
            over_limits(
                ctx,
                out,
                &IB101,
                &Meaning {
                    what: "bit errors on the wire (cable, transceiver or port)",
                    todo: "Reset the counters, watch their growth, and clean or replace the cable/transceiver if they keep rising (mlxlink -m for optics and BER).",
                },
                |port| {
                    let retrained = port
                        .counters
                        .get(IbCounter::LinkErrorRecoveryCounter)
                        .is_some_and(|r| r.counter.value > 0);
                    if retrained {
                        Severity::Error
                    } else {
                        Severity::Warning
                    }
                },
            )
        },
    }
}

declare_rule! {
    /// ### What it detects
    /// A port whose `LinkErrorRecoveryCounter` is above its limit.
    ///
    /// ### Why it matters
    /// Each count is a link retraining after errors: traffic stalls while it
    /// happens, and a link that retrains often is marginal.
    ///
    /// ### Evidence
    /// `LinkErrorRecoveryCounter` from perfquery.
    ///
    /// ### What to do
    /// Check the cable and transceiver (`mlxlink -m`, BER); replace them if
    /// the counter keeps growing after a reset.
    ///
    /// ### Thresholds and sources
    /// > {limit:LinkErrorRecoveryCounter} (infiniband-diags `error_thresholds`).
    ///
    /// Reviewed for a healthy, year-old cluster: the count is a lifetime
    /// since the last reset, and each reboot, cable move or switch
    /// firmware upgrade can retrain a link, so more than 10 over a year is
    /// history of unknown age: a `warning`, as `LinkDownedCounter`
    /// ([`IB103`]) and mlxlink's count of the same event (`ML005`) are.
    /// A link that retrained *between two snapshots* is news: [`IB112`],
    /// an `error`.
    pub static IB102 = {
        id: "IB102",
        name: "link-error-recovery",
        family: IbCounters,
        severity: Warning,
        summary: "Link retrained after errors more often than the limit",
        needs: "perfquery",
        counters: [IbCounter::LinkErrorRecoveryCounter],
        check: |ctx, out| {
            over_limits(
                ctx,
                out,
                &IB102,
                &Meaning {
                    what: "the link retrained after errors (marginal cable or transceiver)",
                    todo: "Check the cable and transceiver (mlxlink -m); replace them if the counter keeps growing after a reset.",
                },
                |_| IB102.severity,
            )
        },
    }
}

declare_rule! {
    /// ### What it detects
    /// A port whose `LinkDownedCounter` is above its limit.
    ///
    /// ### Why it matters
    /// Each count is the link going down. Reboots and maintenance explain a
    /// few; more means a flapping link, which breaks jobs and makes the
    /// subnet manager reroute the fabric.
    ///
    /// ### Evidence
    /// `LinkDownedCounter` from perfquery.
    ///
    /// ### What to do
    /// Correlate with reboots and maintenance; otherwise reseat or replace the
    /// cable and check the switch port. Azure's health checks fail a node at 5
    /// flaps in 24 h.
    ///
    /// ### Thresholds and sources
    /// > {limit:LinkDownedCounter} (infiniband-diags `error_thresholds`); IBswcountlimits: "usually
    /// valid reasons" for small counts.
    ///
    /// Reviewed for a healthy, year-old cluster (issue 9): every reboot of
    /// either end downs the link once, so `LinkDownedCounter` = 1…10 is
    /// history and not reported; the limit is kept. A link that went
    /// down *between two snapshots* is flapping now: [`IB112`], an `error`.
    pub static IB103 = {
        id: "IB103",
        name: "link-downed",
        family: IbCounters,
        severity: Warning,
        summary: "Link went down more often than the limit (flapping)",
        needs: "perfquery",
        counters: [IbCounter::LinkDownedCounter],
        check: |ctx, out| {
            over_limits(
                ctx,
                out,
                &IB103,
                &Meaning {
                    what: "the link went down repeatedly (flapping, unless reboots explain it)",
                    todo: "Correlate with reboots; otherwise reseat or replace the cable and check the switch port.",
                },
                |_| IB103.severity,
            )
        },
    }
}

declare_rule! {
    /// ### What it detects
    /// A port whose `PortRcvErrors` is above its limit.
    ///
    /// ### Why it matters
    /// Packets received with errors (bad CRC, malformed) are dropped and
    /// retransmitted: a bad link on this side, or a bad cable.
    ///
    /// ### Evidence
    /// `PortRcvErrors` from perfquery (`perfquery -E` gives the details).
    ///
    /// ### What to do
    /// Check the cable and both ports (`mlxlink -m`); replace the cable if the
    /// counter grows after a reset.
    ///
    /// ### Thresholds and sources
    /// > {limit:PortRcvErrors} (infiniband-diags `error_thresholds`).
    pub static IB104 = {
        id: "IB104",
        name: "receive-errors",
        family: IbCounters,
        severity: Error,
        summary: "Receive errors above the limit",
        needs: "perfquery",
        counters: [IbCounter::PortRcvErrors],
        check: |ctx, out| {
            over_limits(
                ctx,
                out,
                &IB104,
                &Meaning {
                    what: "packets received damaged on this link",
                    todo: "Check the cable and both ports (mlxlink -m); replace the cable if the counter grows after a reset.",
                },
                |_| IB104.severity,
            )
        },
    }
}

declare_rule! {
    /// ### What it detects
    /// A port whose `PortRcvRemotePhysicalErrors` is above its limit.
    ///
    /// ### Why it matters
    /// These packets arrived already marked bad: the damage happened on a
    /// link elsewhere in the fabric, not on this one.
    ///
    /// ### Evidence
    /// `PortRcvRemotePhysicalErrors` from perfquery.
    ///
    /// ### What to do
    /// Look upstream: run `ibqueryerrors` over the fabric and find the link
    /// with symbol or receive errors on the path.
    ///
    /// ### Thresholds and sources
    /// > {limit:PortRcvRemotePhysicalErrors} (infiniband-diags `error_thresholds`); IBswcountlimits "problem
    /// elsewhere in the fabric".
    pub static IB105 = {
        id: "IB105",
        name: "remote-physical-errors",
        family: IbCounters,
        severity: Warning,
        summary: "Packets arrived damaged from elsewhere in the fabric",
        needs: "perfquery",
        counters: [IbCounter::PortRcvRemotePhysicalErrors],
        check: |ctx, out| {
            over_limits(
                ctx,
                out,
                &IB105,
                &Meaning {
                    what: "packets arrived already damaged: a bad link elsewhere in the fabric",
                    todo: "Run ibqueryerrors over the fabric and look for the link with symbol or receive errors on the path.",
                },
                |_| IB105.severity,
            )
        },
    }
}

declare_rule! {
    /// ### What it detects
    /// A port whose `LocalLinkIntegrityErrors` is above its limit.
    ///
    /// ### Why it matters
    /// The link's physical layer crossed its local error threshold: a bad
    /// link that may soon go down.
    ///
    /// ### Evidence
    /// `LocalLinkIntegrityErrors` from perfquery (a 4-bit counter: it stops
    /// at 15).
    ///
    /// ### What to do
    /// Replace the cable or transceiver; check the port with `mlxlink`.
    ///
    /// ### Thresholds and sources
    /// > {limit:LocalLinkIntegrityErrors} (infiniband-diags `error_thresholds`).
    pub static IB106 = {
        id: "IB106",
        name: "local-link-integrity",
        family: IbCounters,
        severity: Error,
        summary: "Local link integrity errors above the limit",
        needs: "perfquery",
        counters: [IbCounter::LocalLinkIntegrityErrors],
        check: |ctx, out| {
            over_limits(
                ctx,
                out,
                &IB106,
                &Meaning {
                    what: "the physical layer crossed its error threshold (bad link)",
                    todo: "Replace the cable or transceiver; check the port with mlxlink.",
                },
                |_| IB106.severity,
            )
        },
    }
}

declare_rule! {
    /// ### What it detects
    /// A port whose `ExcessiveBufferOverrunErrors` is above its limit.
    ///
    /// ### Why it matters
    /// The receive buffer overflowed: flow control failed, often because of
    /// physical errors corrupting credit updates, or a misconfigured peer.
    ///
    /// ### Evidence
    /// `ExcessiveBufferOverrunErrors` from perfquery (4-bit counter).
    ///
    /// ### What to do
    /// Check the link's physical errors first (symbol, receive errors); then
    /// the VL and buffer configuration of both ends.
    ///
    /// ### Thresholds and sources
    /// > {limit:ExcessiveBufferOverrunErrors} (infiniband-diags `error_thresholds`).
    pub static IB107 = {
        id: "IB107",
        name: "buffer-overrun",
        family: IbCounters,
        severity: Warning,
        summary: "Receive buffer overruns above the limit",
        needs: "perfquery",
        counters: [IbCounter::ExcessiveBufferOverrunErrors],
        check: |ctx, out| {
            over_limits(
                ctx,
                out,
                &IB107,
                &Meaning {
                    what: "receive buffer overruns (flow control failed)",
                    todo: "Check the link's physical errors first, then the VL/buffer configuration of both ends.",
                },
                |_| IB107.severity,
            )
        },
    }
}

declare_rule! {
    /// ### What it detects
    /// A port whose `PortXmitDiscards` is above its limit.
    ///
    /// ### Why it matters
    /// Packets the port had to throw away instead of sending: congestion
    /// (head-of-queue lifetime expired), or a destination that went away.
    /// Lossless fabrics should not drop packets.
    ///
    /// ### Evidence
    /// `PortXmitDiscards` from perfquery (`perfquery -D` gives the reasons).
    ///
    /// ### What to do
    /// Look for congestion (`PortXmitWait` on the same path), a down port on
    /// the route, or an SM routing problem.
    ///
    /// ### Thresholds and sources
    /// > {limit:PortXmitDiscards} (infiniband-diags `error_thresholds`); IBswcountlimits and the
    /// infiniband-exporter maintainers read it as congestion.
    ///
    /// Reviewed for a healthy, busy, year-old cluster (issue 9): unlike
    /// `PortXmitWait`, a discard is a packet lost on a fabric meant to be
    /// lossless; a few accumulate when a peer reboots (packets for a port
    /// that is not Active are discarded) and stay under 100, more are worth
    /// a look, and `ibqueryerrors` flags them too, so the limit is kept.
    pub static IB108 = {
        id: "IB108",
        name: "xmit-discards",
        family: IbCounters,
        severity: Warning,
        summary: "Transmit discards above the limit (congestion or dead route)",
        needs: "perfquery",
        counters: [IbCounter::PortXmitDiscards],
        check: |ctx, out| {
            over_limits(
                ctx,
                out,
                &IB108,
                &Meaning {
                    what: "packets discarded instead of sent (congestion or a dead route)",
                    todo: "Look for congestion (PortXmitWait) on the path, a down port on the route, or an SM routing problem.",
                },
                |_| IB108.severity,
            )
        },
    }
}

declare_rule! {
    /// ### What it detects
    /// Congestion: a port that spent a large share of the time between two
    /// snapshots waiting for credit (`PortXmitWait` growth), and, as `info`,
    /// a `PortXmitWait` count since the last reset above the
    /// infiniband-diags limit.
    ///
    /// ### Why it matters
    /// `PortXmitWait` counts ticks during which the port had data to send
    /// but no credit (IBA PortCounters): congestion downstream, not a broken
    /// link. A busy fabric accumulates thousands to billions of ticks over
    /// months on perfectly healthy ports (the guilbaults infiniband-exporter
    /// maintainers: it "only indicates congestion"; many switch ports sit at
    /// the 32-bit maximum). So a count since reset is `info`: history of an
    /// unknown uptime, quoted with the infiniband-diags limit as context,
    /// and with the waiting time it stands for when the link rate is known
    /// (1,000 ticks are 0.16 µs at NDR). What matters is the rate: a port
    /// that waited more than a tenth of the measured interval lost that much
    /// of its bandwidth *now*, which slows every job crossing it: `warning`.
    /// Ports far above their peers are reported by FL004 as `info` only, so
    /// the same congestion is never a warning twice.
    ///
    /// ### Evidence
    /// `PortXmitWait` from perfquery; for the rate, both readings, the
    /// interval and the port's rate (ibstat or iblinkinfo).
    ///
    /// ### What to do
    /// A count since the last reset says nothing about *now*: take two
    /// snapshots with an interval. If the port keeps waiting, look at the
    /// traffic pattern (many-to-one, hot spots), the routing the SM computed
    /// (unbalanced up-links, routing engine) and the ports downstream that
    /// withhold credit; `ibdiagnet --pm_pause_time` gives the fabric-wide view.
    ///
    /// ### Thresholds and sources
    /// Rate: waiting > {percent:PortXmitWaitShare} of the interval (`PortXmitWaitShare`, a
    /// fabricscope choice: a tenth of a link's bandwidth lost to congestion
    /// is worth a plan; `--thresholds` overrides). Ticks are converted to time
    /// as NVIDIA's ibdiagnet manual ("Congestion Assessment on InfiniBand
    /// Links") documents for current hardware: tick 7, one tick per 8 bytes
    /// at the port's rate (Quantum switches; NVIDIA/ib-traffic-monitor#3 for
    /// ConnectX hosts). Older ASICs (Switch-IB, tick 31) count 32 bytes per
    /// lane per tick: there the share is under-estimated, never over-stated.
    /// Count since reset: > {limit:PortXmitWait} (infiniband-diags `error_thresholds`),
    /// reported as `info`; guilbaults infiniband-exporter#12: "only indicates
    /// congestion".
    pub static IB109 = {
        id: "IB109",
        name: "xmit-wait",
        family: IbCounters,
        severity: Warning,
        summary: "Congestion: port waited for credit a large share of the measured interval (counts since reset are info)",
        needs: "perfquery (two snapshots with their times, and ibstat for the link rate, for the rate)",
        counters: [IbCounter::PortXmitWait],
        check: check_xmit_wait,
    }
}

declare_rule! {
    /// ### What it detects
    /// A port whose `PortXmitConstraintErrors` or `PortRcvConstraintErrors`
    /// is above its limit.
    ///
    /// ### Why it matters
    /// Packets dropped because of partition (P_Key) enforcement: a
    /// partitioning misconfiguration between the SM, the switches and the
    /// hosts, which makes some peers unreachable.
    ///
    /// ### Evidence
    /// The constraint error counters from perfquery.
    ///
    /// ### What to do
    /// Check the SM's partition configuration and the P_Keys the host uses
    /// (`/sys/class/infiniband/*/ports/*/pkeys`).
    ///
    /// ### Thresholds and sources
    /// > {limit:PortXmitConstraintErrors} each (infiniband-diags `error_thresholds`); IBswcountlimits
    /// "partitioning misconfiguration".
    pub static IB110 = {
        id: "IB110",
        name: "constraint-errors",
        family: IbCounters,
        severity: Warning,
        summary: "Partition (P_Key) constraint errors above the limit",
        needs: "perfquery",
        counters: [IbCounter::PortXmitConstraintErrors, IbCounter::PortRcvConstraintErrors],
        check: |ctx, out| {
            over_limits(
                ctx,
                out,
                &IB110,
                &Meaning {
                    what: "packets dropped by partition (P_Key) enforcement",
                    todo: "Check the SM's partition configuration and the P_Keys the host uses.",
                },
                |_| IB110.severity,
            )
        },
    }
}

declare_rule! {
    /// ### What it detects
    /// An error counter stuck at the largest value its field can hold.
    ///
    /// ### Why it matters
    /// InfiniBand counters do not wrap: they stop at all-ones. The real
    /// count is at least that, and no rate can be computed until the counter
    /// is reset, so new errors go unseen.
    ///
    /// A saturated `PortXmitWait` is `info`: congestion history that a busy
    /// port's 32-bit field fills in weeks, not a fault (see [`IB109`]).
    ///
    /// `perfquery -a` prints the counters summed over all the device's
    /// ports (`port 255` in the header) and stops the sum at the field's
    /// largest value: a sum at the cap is `info`, said as the ports'
    /// total. It says neither which port holds the count nor that any one
    /// port's counter is stuck (each may be far below the cap and still
    /// counting): read the ports one by one.
    ///
    /// ### Evidence
    /// The counter and its width (perfquery prints 4-, 8-, 16- and 32-bit
    /// fields in the basic PortCounters).
    ///
    /// ### What to do
    /// Reset the counters (`perfquery -R`) once their history is recorded,
    /// and prefer the 64-bit extended counters (`perfquery -x`).
    ///
    /// ### Thresholds and sources
    /// Value = 2^width − 1 (IBA PortCounters; perfquery's aggregate code).
    pub static IB111 = {
        id: "IB111",
        name: "saturated-counter",
        family: IbCounters,
        severity: Warning,
        summary: "Error counter saturated: history lost, reset needed",
        needs: "perfquery",
        check: check_saturated,
    }
}

declare_rule! {
    /// ### What it detects
    /// Error counters that grew between two snapshots of the same port:
    /// `LinkDownedCounter` growing at all, or any error counter growing
    /// faster than the rate limit.
    ///
    /// ### Why it matters
    /// Counts since the last reset may be old history; growth between two
    /// snapshots is happening now. A link that went down during the window
    /// is flapping now.
    ///
    /// ### Evidence
    /// Both readings, the interval and the rate (from the statistics).
    /// Smaller growth of physical error counters is a `warning`.
    ///
    /// ### What to do
    /// Treat as a live fault: check the cable and transceiver of the port,
    /// and the switch port at the other end.
    ///
    /// ### Thresholds and sources
    /// Rate > {limit:ErrorsPerSecond}/s (`ErrorsPerSecond`; infiniband-diags IBswcountlimits.pm,
    /// ibswportwatch); any `LinkDownedCounter` increase (Azure flap check).
    pub static IB112 = {
        id: "IB112",
        name: "errors-rising",
        family: IbCounters,
        severity: Error,
        summary: "Error counters growing between snapshots",
        needs: "two perfquery snapshots of the same port (and their times or --interval)",
        check: check_errors_rising,
    }
}

declare_rule! {
    /// ### What it detects
    /// A port whose symbol error rate, measured between two snapshots, is
    /// above the bit error rate limit with 95 % confidence.
    ///
    /// ### Why it matters
    /// The bit error rate normalises errors by the traffic the link could
    /// carry, so a fast link and a slow one are judged alike; above 1e-12 a
    /// link is out of spec.
    ///
    /// ### Evidence
    /// Errors, bits, the BER interval and how the bits were counted (from the
    /// statistics).
    ///
    /// ### What to do
    /// Replace the cable or transceiver; confirm with `mlxlink -c` (effective
    /// and raw physical BER).
    ///
    /// ### Thresholds and sources
    /// BER 1e-12 (IBTA / ibdiagnet; DCGM uses the same for NVLink), exact
    /// Poisson interval at 95 %.
    pub static IB113 = {
        id: "IB113",
        name: "bit-error-rate",
        family: IbCounters,
        severity: Error,
        summary: "Measured bit error rate above 1e-12",
        needs: "two perfquery snapshots with rates (times or --interval) and the link rate",
        check: check_ber,
    }
}

declare_rule! {
    /// ### What it detects
    /// A port whose `VL15Dropped` is above its limit.
    ///
    /// ### Why it matters
    /// VL15 carries subnet management packets (SMPs). Drops mean the port
    /// threw away management traffic: an SM sweeping too hard, a busy or
    /// overloaded management path, or a port that cannot keep up. The
    /// subnet manager then sees timeouts, and sweeps or traps are lost.
    ///
    /// ### Evidence
    /// `VL15Dropped` from perfquery (16-bit: saturation is [`IB111`]).
    ///
    /// ### What to do
    /// Check the SM's log and sweep settings (`opensm.log`, sweep interval,
    /// several SMs fighting), and whether the port's firmware is busy; reset
    /// the counters and watch whether they grow.
    ///
    /// ### Thresholds and sources
    /// > {limit:VL15Dropped} (infiniband-diags `error_thresholds`).
    ///
    /// Reviewed for a healthy, year-old cluster (issue 9): IBswcountlimits
    /// calls slow growth "OK" (SM sweeps at boot drop a few SMPs), and a few
    /// dozen over months stay under the limit; above 100 `ibqueryerrors`
    /// flags the port as well, and UFM raises its VL15 Dropped alarm (event
    /// 121, threshold 50), so the limit is kept.
    pub static IB114 = {
        id: "IB114",
        name: "vl15-dropped",
        family: IbCounters,
        severity: Warning,
        summary: "Subnet management packets (VL15) dropped above the limit",
        needs: "perfquery",
        counters: [IbCounter::VL15Dropped],
        check: |ctx, out| {
            over_limits(
                ctx,
                out,
                &IB114,
                &Meaning {
                    what: "subnet management packets (VL15) dropped",
                    todo: "Check the SM's log and sweep settings (several SMs, sweep interval) and the port's firmware; reset the counters and watch their growth.",
                },
                |_| IB114.severity,
            )
        },
    }
}

declare_rule! {
    /// ### What it detects
    /// A port whose `PortRcvSwitchRelayErrors` is above its limit.
    ///
    /// ### Why it matters
    /// Packets the switch could not relay: no route to the DLID, a
    /// multicast group without a forwarding entry, or a loop. `ibqueryerrors
    /// -c` counts it among the "common" errors because a switch often
    /// accumulates some harmlessly (unroutable multicast, DLID mapping);
    /// above the limit it still means traffic that was sent and never
    /// arrived, so it is a `warning`.
    ///
    /// ### Evidence
    /// `PortRcvSwitchRelayErrors` from perfquery.
    ///
    /// ### What to do
    /// Check the SM's routing: unicast (`ibroute`, `ibtracert` to the
    /// affected DLIDs) and multicast groups (`saquery -g`, `ibroute -M`);
    /// a stale LID after a node left the fabric explains a steady trickle.
    ///
    /// ### Thresholds and sources
    /// > {limit:PortRcvSwitchRelayErrors} (infiniband-diags `error_thresholds`); `ibqueryerrors -c`
    /// (suppress common errors) lists it as common.
    pub static IB115 = {
        id: "IB115",
        name: "switch-relay-errors",
        family: IbCounters,
        severity: Warning,
        summary: "Packets the switch could not relay (routing) above the limit",
        needs: "perfquery",
        counters: [IbCounter::PortRcvSwitchRelayErrors],
        check: |ctx, out| {
            over_limits(
                ctx,
                out,
                &IB115,
                &Meaning {
                    what: "packets the switch could not relay (no route, unmapped DLID or multicast group; ibqueryerrors -c calls it common, but not this many)",
                    todo: "Check the SM's unicast routes (ibroute, ibtracert to the affected DLIDs) and multicast groups (saquery -g, ibroute -M); stale LIDs explain a steady trickle.",
                },
                |_| IB115.severity,
            )
        },
    }
}

declare_rule! {
    /// ### What it detects
    /// A port counter ibdiagnet flagged in its console output or
    /// `ibdiagnet2.log`: one that grew between its two readings during the
    /// run (`"symbol_error_counter" increased during the run (difference
    /// value=27,difference allowed threshold=1)`), or a counter value over
    /// its threshold (a `lid=0x… dev=…` port's counter lines).
    ///
    /// ### Why it matters
    /// ibdiagnet reads every port of the fabric twice, a run apart: an
    /// error counter that grew in between is a fault happening now, on a
    /// port the hosts' own perfquery never sees (switch ports, other
    /// hosts). A value over a threshold is history since the counters were
    /// last cleared, judged as perfquery's is.
    ///
    /// ### Evidence
    /// The ibdiagnet line, with the growth and ibdiagnet's allowed
    /// difference, or the value and ibdiagnet's threshold.
    ///
    /// ### What to do
    /// Treat growth as a live fault: check the cable and transceiver of
    /// the port and of its peer (`mlxlink -m`), and the switch port; for a
    /// link that went down during the run, correlate with reboots first.
    ///
    /// ### Thresholds and sources
    /// Growth during the run, as [`IB112`] judges growth between two
    /// snapshots: any `link_down_counter` growth is an `error` (the link
    /// went down during the run: Azure's flap check); growth of another
    /// error counter is a `warning` (ibdiagnet prints no interval, so no
    /// rate can be held to {limit:ErrorsPerSecond}/s). A value is held to
    /// the same limit as perfquery's counter of that name (infiniband-diags
    /// `error_thresholds`; `--thresholds` overrides), at the severity of
    /// that counter's rule ([`IB101`]…[`IB115`]); below it, ibdiagnet's own
    /// lower threshold is not reported. Traffic and congestion counters
    /// (data, packets, `port_xmit_wait`) are not judged here.
    pub static IB116 = {
        id: "IB116",
        name: "ibdiagnet-counters",
        family: IbCounters,
        severity: Warning,
        summary: "Port counter ibdiagnet flagged: grew during its run, or over the limit",
        needs: "ibdiagnet console output or ibdiagnet2.log",
        check: check_ibdiagnet_counters,
    }
}

/// The counter rule that judges `counter`'s value, when one does: its
/// severity and meaning are the ones an ibdiagnet value is given.
fn counter_rule(counter: IbCounter) -> Option<&'static Rule> {
    super::registry::RULES
        .iter()
        .copied()
        .find(|r| r.id.starts_with("IB1") && r.id != IB116.id && r.counters == [counter.id()])
}

/// IB116.
fn check_ibdiagnet_counters(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let mut checked = 0;
    let mut seen_log = false;
    for at in ctx.sections() {
        let crate::parse::SectionData::IbdiagnetLog(log) = &at.section.data else {
            continue;
        };
        seen_log = true;
        for c in &log.counters {
            let Some(counter) = crate::parse::ibdiagnet_pm::known_counter(&c.counter) else {
                continue;
            };
            // Only the error counters a rule judges: data, packets and
            // waiting are traffic, not faults.
            let Some(rule) = counter_rule(counter).filter(|_| counter != IbCounter::PortXmitWait)
            else {
                continue;
            };
            checked += 1;
            let (lid, end) = crate::parse::ibdiagnet_log::counter_port(&c.port);
            let subject = super::Subject {
                device: end.node_guid.is_none().then(|| end.node.clone()),
                port: end.port,
                lid,
                guid: end.node_guid,
                ..super::Subject::default()
            };
            let evidence = Evidence::new(
                format!("ibdiagnet: {} {}", c.port, c.counter),
                c.span,
                at.source(),
            );
            let finding = if c.during_run {
                let downed = counter == IbCounter::LinkDownedCounter;
                let allowed = c
                    .threshold
                    .map(|t| format!(" (ibdiagnet allows a difference of {t})"))
                    .unwrap_or_default();
                IB116
                    .finding(
                        subject,
                        format!(
                            "ibdiagnet: {} {} grew by {} during the run{allowed}: {}",
                            c.port,
                            counter.name(),
                            c.value,
                            if downed {
                                "the link went down while ibdiagnet ran"
                            } else {
                                "errors are happening now"
                            }
                        ),
                    )
                    .severity(if downed { Severity::Error } else { Severity::Warning })
                    .threshold(Threshold::new(
                        if downed {
                            format!("{} growth > 0", counter.name())
                        } else {
                            format!("{} growth during the run", counter.name())
                        },
                        "growth is news, as IB112 judges two snapshots (any LinkDownedCounter increase: Azure flap check)",
                    ))
                    .remediation("Treat as a live fault: check the cable and transceiver of this port and its peer (mlxlink -m) and the switch port; for a link that went down, correlate with reboots first.")
            } else {
                let (limit, threshold) = limit(ctx, counter.name());
                #[allow(clippy::cast_precision_loss)]
                if c.value as f64 <= limit {
                    continue;
                }
                IB116
                    .finding(
                        subject,
                        format!(
                            "ibdiagnet: {} {} = {} (limit {limit}), counted since the last reset",
                            c.port,
                            counter.name(),
                            c.value
                        ),
                    )
                    .severity(rule.severity)
                    .threshold(threshold)
                    .remediation("Clear the counters (perfquery -R, or ibdiagnet --pc), read them again, and check the cable and transceiver if they grow.")
            };
            out.push(finding.evidence(evidence));
        }
    }
    if !seen_log {
        return Coverage::Skipped("no ibdiagnet output in the input".to_owned());
    }
    Coverage::Checked(checked)
}

/// What a counter means and what to do, for messages.
struct Meaning {
    what: &'static str,
    todo: &'static str,
}

fn perf_ports_or_skip<'c, 'a>(ctx: &'c Context<'a>) -> Result<&'c [PerfPortRef<'a>], Coverage> {
    let ports = ctx.perf_ports();
    if ports.iter().any(|p| !p.counters.is_empty()) {
        Ok(ports)
    } else {
        Err(Coverage::Skipped(
            "no perfquery port counters in the input (run perfquery or perfquery -x)".to_owned(),
        ))
    }
}

fn limit(ctx: &Context<'_>, name: &str) -> (f64, Threshold) {
    let (value, source) = ctx.thresholds.value_and_source(name, (0.0, "default"));
    (value, Threshold::new(format!("{name} > {value}"), source))
}

#[allow(clippy::cast_precision_loss)]
fn over(reading: &Reading<'_>, limit: f64) -> bool {
    reading.counter.value as f64 > limit
}

/// What IB101–IB110 add to a count over its limit that two snapshots
/// showed unchanged, the finding then `info`: cut the later snapshot away
/// and the same count, judged as one snapshot's, is a warning again.
pub const UNCHANGED_NOTE: &str = ": history, not news";

/// Seconds over which the latest measured pair of snapshots of `port`
/// saw `counter` not grow, if it was measured so. Asked only of a
/// counter over its limit (few), so the rates are scanned, not indexed.
fn unchanged_for(ctx: &Context<'_>, port: &PerfPortRef<'_>, counter: &str) -> Option<f64> {
    ctx.measurements
        .counter_rates
        .iter()
        .filter(|r| {
            &*r.counter == counter
                && matches!(
                    r.source,
                    crate::stats::CounterSource::Perfquery(_)
                        | crate::stats::CounterSource::Ibqueryerrors
                )
                && r.subject.host.as_deref() == port.host.name()
                && r.subject.lid == port.lid
                && r.subject.port == port.port
                // Ports without a LID (sysfs counters) are told apart by
                // their device: two adapters' port 1 are not one port.
                && (port.lid.is_some()
                    || port.device.is_none()
                    || r.subject.device.as_deref() == port.device)
                // Nor are two GUIDs (ibqueryerrors port lines pasted
                // without the header naming their node: no LID, no
                // device, only the GUID tells them apart).
                && (port.guid.is_none() || r.subject.guid.is_none() || r.subject.guid == port.guid)
        })
        .max_by_key(|r| r.to_snapshot)
        .filter(|r| r.status == RateStatus::Measured && r.increase == Some(0))
        .and_then(|r| r.interval_seconds)
}

/// The shared shape of IB101–IB110: each named counter over its limit.
fn over_limits(
    ctx: &Context<'_>,
    out: &mut Vec<Finding>,
    rule: &'static Rule,
    meaning: &Meaning,
    severity_of: impl Fn(&PerfPortRef<'_>) -> Severity,
) -> Coverage {
    let ports = match perf_ports_or_skip(ctx) {
        Ok(p) => p,
        Err(skip) => return skip,
    };
    let mut checked = 0;
    for port in ports {
        let mut seen = false;
        for &counter in rule.counters {
            // Looked up by id: no name is compared.
            let Some(reading) = port.counters.get(counter) else {
                continue;
            };
            let name = counter.name();
            seen = true;
            // The limit's words are written only for a port over it: most
            // ports of a fleet are not, and each rule reads every port.
            if !over(&reading, ctx.thresholds.value(name)) {
                continue;
            }
            let (_, threshold) = limit(ctx, name);
            // Measured still between two snapshots, the count is history
            // (the limits are for counts since a reset, not for news).
            let still = unchanged_for(ctx, port, name);
            out.push(
                rule.finding(
                    port.subject(),
                    format!(
                        "{}: {name} = {}{}: {}{}",
                        port.describe(),
                        reading.counter.value,
                        if reading.counter.saturated {
                            " (saturated)"
                        } else {
                            ""
                        },
                        meaning.what,
                        still.map_or_else(String::new, |seconds| format!(
                            "; unchanged over the {seconds:.0} s between the snapshots{UNCHANGED_NOTE}"
                        )) + if port.all_ports { SUM_NOTE } else { "" }
                    ),
                )
                .severity(if still.is_some() {
                    Severity::Info
                } else {
                    severity_of(port)
                })
                .evidence(reading.evidence(name))
                .threshold(threshold)
                .remediation(meaning.todo),
            );
        }
        if seen {
            checked += 1;
        }
    }
    if checked == 0 {
        return Coverage::Skipped(format!(
            "perfquery output has no {} counter",
            rule.counters
                .iter()
                .map(|c| c.name())
                .collect::<Vec<_>>()
                .join("/")
        ));
    }
    Coverage::Checked(checked)
}

/// Bits of transmit time one `PortXmitWait` tick stands for on current
/// NVIDIA hardware: PortSamplesControl `Tick` 7, i.e. 8 bytes at the port's
/// rate (ibdiagnet manual, "Congestion Assessment on InfiniBand Links").
pub const XMIT_WAIT_TICK_BITS: f64 = 64.0;

/// The counter `IB109` reads.
const XMIT_WAIT: &str = IbCounter::PortXmitWait.name();

/// Whether a counter counts congestion (waiting for credit) rather than
/// errors: `PortXmitWait` and its per-VL forms. Such counters are never a
/// fault on their own; only their rate is judged (`IB109`).
#[must_use]
pub fn is_congestion_counter(name: &str) -> bool {
    name.contains("XmitWait")
}

/// The port's data rate (Gb/s per direction) and where it was read.
fn link_capacity<'m>(
    ctx: &Context<'m>,
    s: &crate::stats::Subject,
) -> Option<&'m crate::stats::LinkCapacity> {
    ctx.link_capacity(s)
}

/// Share of the interval a port spent waiting: ticks × bits per tick over
/// the bits the link could have sent in that time.
#[allow(clippy::cast_precision_loss)]
fn wait_share(ticks: u64, seconds: f64, gbit_per_second: f64) -> Option<f64> {
    let capacity_bits = gbit_per_second * 1e9 * seconds;
    (capacity_bits > 0.0 && capacity_bits.is_finite())
        .then(|| ticks as f64 * XMIT_WAIT_TICK_BITS / capacity_bits)
}

/// IB109: congestion rate as a warning, counts since reset as info.
fn check_xmit_wait(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let ports = match perf_ports_or_skip(ctx) {
        Ok(p) => p,
        Err(skip) => return skip,
    };
    let share_limit = ctx
        .thresholds
        .get(super::thresholds::XMIT_WAIT_SHARE)
        .map_or_else(
            || {
                (
                    0.10,
                    crate::rules::thresholds::XMIT_WAIT_SHARE_SOURCE.to_owned(),
                )
            },
            |e| (e.value, e.source.clone()),
        );
    // The latest measured pair per port.
    let mut latest: std::collections::BTreeMap<_, &crate::stats::CounterRate> =
        std::collections::BTreeMap::new();
    for r in &ctx.measurements.counter_rates {
        if *r.counter != *XMIT_WAIT || !r.source.is_perfquery() {
            continue;
        }
        let key = (r.subject.host.as_deref(), r.subject.lid, r.subject.port);
        if latest
            .get(&key)
            .is_none_or(|old| old.to_snapshot <= r.to_snapshot)
        {
            latest.insert(key, r);
        }
    }
    let mut judged = std::collections::BTreeSet::new();
    let mut checked = 0;
    for (key, r) in &latest {
        if r.status != RateStatus::Measured {
            continue;
        }
        let (Some(increase), Some(seconds)) = (r.increase, r.interval_seconds) else {
            continue;
        };
        judged.insert(*key);
        checked += 1;
        if increase == 0 {
            // No wait between the snapshots: nothing to measure the rate
            // against, and no congestion to report.
            continue;
        }
        let Some(capacity) = link_capacity(ctx, &r.subject) else {
            let subject = subject_of(&r.subject);
            let who = subject.describe();
            let mut f = IB109
                .finding(
                    subject,
                    format!(
                        "{who}: PortXmitWait grew by {increase} ticks in {seconds:.0} s ({:.0}/s): congestion; the share of time spent waiting needs the port's rate (add ibstat)",
                        r.counts_per_second.unwrap_or_default()
                    ),
                )
                .severity(Severity::Info)
                .threshold(Threshold::new(
                    format!("waiting > {:.0} % of the interval", share_limit.0 * 100.0),
                    share_limit.1.clone(),
                ))
                .remediation("Add ibstat (or iblinkinfo) to the paste so the wait can be measured against the link rate.");
            for e in ctx.rate_evidence(r) {
                f = f.evidence(e);
            }
            out.push(f);
            continue;
        };
        let Some(share) = wait_share(increase, seconds, capacity.gbit_per_second) else {
            continue;
        };
        if share <= share_limit.0 {
            continue;
        }
        let subject = subject_of(&r.subject);
        let who = subject.describe();
        let mut f = IB109
            .finding(
                subject,
                format!(
                    "{who}: waited for credit {:.0} % of the {seconds:.0} s between the snapshots ({increase} ticks at {} Gb/s): congestion is costing this port that share of its bandwidth now",
                    share * 100.0,
                    crate::rules::gbps(capacity.gbit_per_second)
                ),
            )
            .threshold(Threshold::new(
                format!("waiting > {:.0} % of the interval", share_limit.0 * 100.0),
                share_limit.1.clone(),
            ))
            .remediation("Congestion, not a broken link: look at the traffic pattern (many-to-one, hot spots), the SM's routing (unbalanced up-links) and the downstream ports withholding credit.");
        for e in ctx.rate_evidence(r) {
            f = f.evidence(e);
        }
        f = f.evidence(Evidence::new(
            format!(
                "link rate {} Gb/s ({})",
                crate::rules::gbps(capacity.gbit_per_second),
                capacity.source
            ),
            capacity.lines,
            None,
        ));
        out.push(f);
    }
    let (limit_value, threshold) = limit(ctx, XMIT_WAIT);
    for port in ports {
        let Some(reading) = port.counters.get(IbCounter::PortXmitWait) else {
            continue;
        };
        // The port's subject as [`PerfPortRef::subject`] names it, borrowed:
        // it is built only for a port that gets a finding.
        let port_number = port.port.filter(|_| !port.all_ports);
        if judged.contains(&(port.host.name(), port.lid, port_number)) {
            continue;
        }
        checked += 1;
        if !over(&reading, limit_value) {
            continue;
        }
        let s = port.subject();
        let stats_subject = crate::stats::Subject {
            host: s.host.clone(),
            device: s.device.clone(),
            lid: s.lid,
            port: s.port,
            ..crate::stats::Subject::default()
        };
        #[allow(clippy::cast_precision_loss)]
        let waited = link_capacity(ctx, &stats_subject)
            .map(|c| reading.counter.value as f64 * XMIT_WAIT_TICK_BITS / (c.gbit_per_second * 1e9))
            .map(|s| format!(" (about {} of waiting in all)", human_seconds(s)))
            .unwrap_or_default();
        out.push(
            IB109
                .finding(
                    s,
                    format!(
                        "{}: PortXmitWait = {}{}{waited} since the last reset: the port has waited for credit (congestion history, normal on a busy fabric); this count says nothing about the link's health or about now",
                        port.describe(),
                        reading.counter.value,
                        if reading.counter.saturated { " (saturated)" } else { "" },
                    ),
                )
                .severity(Severity::Info)
                .evidence(reading.evidence(XMIT_WAIT))
                .threshold(Threshold::new(
                    format!("{} (context only; infiniband-diags recommends this limit for ibqueryerrors)", threshold.value),
                    threshold.source.clone(),
                ))
                .remediation("Take two snapshots with their times (date; perfquery -x) to measure the share of time the port waits now."),
        );
    }
    if checked == 0 {
        return Coverage::Skipped("perfquery output has no PortXmitWait counter".to_owned());
    }
    Coverage::Checked(checked)
}

/// `0.16 µs`, `12 ms`, `3.4 s`, `2.1 h`: a duration for sentences.
fn human_seconds(s: f64) -> String {
    if s < 1e-3 {
        format!("{:.2} µs", s * 1e6)
    } else if s < 1.0 {
        format!("{:.0} ms", s * 1e3)
    } else if s < 3600.0 {
        format!("{s:.1} s")
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// IB111.
fn check_saturated(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let ports = match perf_ports_or_skip(ctx) {
        Ok(p) => p,
        Err(skip) => return skip,
    };
    // Most ports have no saturated reading at all: one pass over their
    // readings tells, where looking each counter up did not.
    for port in ports.iter().filter(|p| p.counters.any_saturated()) {
        for &counter in ERROR_COUNTERS {
            // Looked up by id: no name is compared.
            let Some(reading) = port.counters.get(counter) else {
                continue;
            };
            let name = counter.name();
            if !reading.counter.saturated {
                continue;
            }
            if port.all_ports {
                out.push(saturated_sum(port, name, &reading));
                continue;
            }
            // A pinned congestion counter is lost history, not a fault: the
            // 32-bit PortXmitWait of a busy port fills in weeks.
            let severity = if is_congestion_counter(name) {
                Severity::Info
            } else {
                IB111.severity
            };
            out.push(
                IB111
                    .finding(
                        port.subject(),
                        format!(
                            "{}: {name} is stuck at {}, the largest value of its {}-bit field: new errors are not counted",
                            port.describe(),
                            reading.counter.value,
                            reading.counter.bits
                        ),
                    )
                    .severity(severity)
                    .evidence(reading.evidence(name))
                    .threshold(Threshold::new(
                        format!("2^{} − 1", reading.counter.bits),
                        "IBA PortCounters: counters stop at all-ones",
                    ))
                    .remediation(
                        "Record the values, reset the counters (perfquery -R), and prefer the 64-bit extended counters (perfquery -x).",
                    ),
            );
        }
    }
    Coverage::Checked(ports.len())
}

/// What a limit rule adds about `perfquery -a`'s port 255: the count is
/// the sum of the device's ports, the limit a port's.
const SUM_NOTE: &str = "; this is perfquery -a's sum over all the device's ports, held against a port's limit: read each port (perfquery <lid> <port>) to find which ones hold the count";

/// IB111's finding for `perfquery -a`'s sum over all ports at its field's
/// cap: perfquery adds the ports' counters and stops the sum at the
/// field's largest value, so the sum says that the ports together counted
/// at least that many, not that one port's counter is stuck (each may be
/// far below it and still counting) nor which port holds them: `info`,
/// read the ports one by one.
fn saturated_sum(
    port: &crate::rules::context::PerfPortRef<'_>,
    name: &str,
    reading: &crate::rules::context::Reading<'_>,
) -> Finding {
    IB111
        .finding(
            port.subject(),
            format!(
                "{}: {name} summed over all the device's ports (perfquery -a, port 255) is {}, the cap of its {}-bit field: the ports together counted at least that many; the sum stops at the cap, so it says neither which port holds them nor that any one port's counter is stuck",
                port.describe(),
                reading.counter.value,
                reading.counter.bits
            ),
        )
        .severity(Severity::Info)
        .evidence(reading.evidence(name))
        .threshold(Threshold::new(
            format!("2^{} − 1 (a sum over all ports, capped)", reading.counter.bits),
            "perfquery -a (AllPortSelect): counters summed over the ports, saturating at the field's width",
        ))
        .remediation(
            "Read each port's counters (`perfquery <lid> <port>`, `perfquery -l <lid>`, or `ibqueryerrors` for the fabric) to find the ports that hold the errors; prefer the 64-bit extended counters (perfquery -x).",
        )
}

/// Counters whose growth means a physical fault now.
const PHYSICAL: &[IbCounter] = &[
    IbCounter::SymbolErrorCounter,
    IbCounter::LinkErrorRecoveryCounter,
    IbCounter::PortRcvErrors,
    IbCounter::LocalLinkIntegrityErrors,
    IbCounter::PortXmitDiscards,
];

/// IB112.
fn check_errors_rising(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let rates: Vec<_> = ctx
        .measurements
        .counter_rates
        .iter()
        .filter(|r| r.source.is_perfquery())
        .filter(|r| {
            PHYSICAL.iter().any(|c| c.name() == &*r.counter)
                || *r.counter == *IbCounter::LinkDownedCounter.name()
        })
        .collect();
    if rates.is_empty() {
        return Coverage::Skipped(
            "no error counter read in two perfquery snapshots of the same port".to_owned(),
        );
    }
    let (limit_per_s, rate_threshold) = {
        let e = ctx.thresholds.get(super::thresholds::ERRORS_PER_SECOND);
        (
            e.map_or(10.0, |e| e.value),
            Threshold::new(
                format!("> {}/s", e.map_or(10.0, |e| e.value)),
                e.map_or_else(String::new, |e| e.source.clone()),
            ),
        )
    };
    for r in &rates {
        let Some(increase) = r.increase.filter(|i| *i > 0) else {
            continue;
        };
        if r.status == RateStatus::CounterReset {
            continue;
        }
        let subject = subject_of(&r.subject);
        let who = subject.describe();
        let (severity, message, threshold) = if *r.counter == *IbCounter::LinkDownedCounter.name() {
            (
                Severity::Error,
                format!(
                    "{who}: the link went down {increase} time(s) between the snapshots: it is flapping now"
                ),
                Threshold::new(
                    "any LinkDownedCounter increase",
                    "Azure azurehpc-health-checks check_ib_link_flapping; DCGM-style delta rule",
                ),
            )
        } else {
            match r.counts_per_second {
                Some(rate) if rate > limit_per_s => (
                    Severity::Error,
                    format!("{who}: {} grows at {rate:.1}/s (+{increase})", r.counter),
                    rate_threshold.clone(),
                ),
                _ => (
                    Severity::Warning,
                    format!(
                        "{who}: {} grew by {increase} between the snapshots{}",
                        r.counter,
                        r.counts_per_second
                            .map(|p| format!(" ({p:.3}/s)"))
                            .unwrap_or_default()
                    ),
                    Threshold::new(
                        "any increase (warning); rate limit for error",
                        rate_threshold.source.clone(),
                    ),
                ),
            }
        };
        let mut f = IB112
            .finding(subject, message)
            .severity(severity)
            .threshold(threshold)
            .remediation(
                "A live fault: check the port's cable and transceiver and the switch port at the other end.",
            );
        for e in ctx.rate_evidence(r) {
            f = f.evidence(e);
        }
        out.push(f);
    }
    Coverage::Checked(rates.len())
}

/// IB113, and NV008 for NVLink: BER intervals above the threshold.
pub(crate) fn ber_findings(
    ctx: &Context<'_>,
    out: &mut Vec<Finding>,
    rule: &'static Rule,
    nvlink: bool,
) -> Coverage {
    let bers: Vec<_> = ctx
        .measurements
        .bit_error_rates
        .iter()
        .filter(|b| b.subject.gpu.is_some() == nvlink)
        .collect();
    if bers.is_empty() {
        return Coverage::Skipped(
            "no bit error rate measured (needs two snapshots with error counters, their interval and the link speed or traffic)"
                .to_owned(),
        );
    }
    for b in &bers {
        if b.verdict != crate::stats::ber::Verdict::Exceeds {
            continue;
        }
        let subject = subject_of(&b.subject);
        let mut f = rule
            .finding(
                subject.clone(),
                format!(
                    "{}: {} bit error rate {:.2e} (95 % interval {:.2e}–{:.2e}) is above {:.0e}",
                    subject.describe(),
                    b.counter,
                    b.ber_point,
                    b.ber_lower,
                    b.ber_upper,
                    b.threshold
                ),
            )
            .threshold(Threshold::new(
                format!("BER {:.0e}", b.threshold),
                "IBTA/ibdiagnet and DCGM effective BER limit; corrected-error counters use the statistics' pre-FEC limit",
            ))
            .remediation("Replace the cable or transceiver (or reseat the GPU baseboard link); confirm with mlxlink -c or DCGM.");
        if let Some(rate) = ctx.rate_between(&b.subject, &b.counter, b.from_snapshot, b.to_snapshot)
        {
            for e in ctx.rate_evidence(rate) {
                f = f.evidence(e);
            }
        }
        out.push(f);
    }
    Coverage::Checked(bers.len())
}

/// IB113.
fn check_ber(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    ber_findings(ctx, out, &IB113, false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testing::{findings_of, skipped_reason};

    fn perf(lid: u32, symbol: u64, recovery: u64, downed: u64) -> String {
        format!(
            "# Port counters: Lid {lid} port 1 (CapMask: 0x5A00)\nPortSelect:......................1\nCounterSelect:...................0x0000\nSymbolErrorCounter:..............{symbol}\nLinkErrorRecoveryCounter:........{recovery}\nLinkDownedCounter:...............{downed}\nPortRcvErrors:...................0\nPortRcvRemotePhysicalErrors:.....0\nPortRcvSwitchRelayErrors:........0\nPortXmitDiscards:................0\nPortXmitConstraintErrors:........0\nPortRcvConstraintErrors:.........0\nCounterSelect2:..................0x00\nLocalLinkIntegrityErrors:........0\nExcessiveBufferOverrunErrors:....0\nQP1Dropped:......................0\nVL15Dropped:.....................0\nPortXmitData:....................1000\nPortRcvData:.....................1000\nPortXmitPkts:....................10\nPortRcvPkts:.....................10\nPortXmitWait:....................0\n"
        )
    }

    /// An ibdiagnet2.pm port is the fabric's, named by its Port Name, LID,
    /// port and GUID, its PortCounters and extended blocks one port: the
    /// 64-bit reading (later) judged, with the 8-bit retraining count of
    /// the same port.
    #[test]
    fn ibdiagnet_pm_ports_are_the_fabrics() {
        let rule = "-------------------------------------------------------";
        let text = format!(
            "[root@mgmt01 ~]# cat /var/tmp/ibdiagnet2/ibdiagnet2.pm\n{rule}\nPort=4 Lid=0x0031 GUID=0x98039b0300aa0204 Device=54002 Port Name=Sleaf03/P4\n{rule}\nsymbol_error_counter=0x000c\nlink_error_recovery_counter=0x01\nsymbol_error_counter_extended=0x0000000000000040\n{rule}\n"
        );
        let f = findings_of(&IB101, &text);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].severity, Severity::Error);
        assert_eq!(f[0].subject.host, None);
        assert_eq!(f[0].subject.device.as_deref(), Some("Sleaf03/P4"));
        assert_eq!((f[0].subject.lid, f[0].subject.port), (Some(0x31), Some(4)));
        assert_eq!(
            f[0].subject.guid,
            crate::model::ib::Guid::parse("0x98039b0300aa0204")
        );
        assert!(
            f[0].message.contains("SymbolErrorCounter = 64"),
            "{}",
            f[0].message
        );
    }

    #[test]
    fn symbol_errors_are_a_warning_alone_and_an_error_with_retraining() {
        let f = findings_of(&IB101, &perf(3, 11, 0, 0));
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Warning);
        let f = findings_of(&IB101, &perf(3, 11, 1, 0));
        assert_eq!(f[0].severity, Severity::Error);
        assert!(
            findings_of(&IB101, &perf(3, 10, 0, 0)).is_empty(),
            "10 is not above 10"
        );
        assert!(skipped_reason(&IB101, "CA 'x'\n\tCA type: MT4129\n").is_some());
    }

    #[test]
    fn saturated_8_bit_counter_is_reported() {
        let f = findings_of(&IB111, &perf(3, 0, 255, 0));
        assert_eq!(f.len(), 1);
        assert!(f[0].message.contains("8-bit"), "{}", f[0].message);
        assert!(findings_of(&IB111, &perf(3, 0, 254, 0)).is_empty());
    }

    /// `perfquery -a`: the sum over all ports at a field's cap is no port's
    /// stuck counter. Before, IB111 said the counter was stuck and new
    /// errors not counted (`warning`), as of one port.
    #[test]
    fn a_sum_over_all_ports_at_the_cap_names_no_port() {
        let one_port = perf(12, 65_535, 0, 0);
        let all = one_port.replace("port 1 (", "port 255 (").replace(
            "PortSelect:......................1",
            "PortSelect:......................255",
        );
        let f = findings_of(&IB111, &all);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].severity, Severity::Info);
        assert_eq!((f[0].subject.lid, f[0].subject.port), (Some(12), None));
        for part in [
            "summed over all",
            "sum over all ports",
            "which port",
            "16-bit",
        ] {
            assert!(f[0].message.contains(part), "{part}: {}", f[0].message);
        }
        assert!(!f[0].message.contains("new errors are not counted"));
        // A port's own counter at the cap is stuck: a warning, as before.
        let f = findings_of(&IB111, &one_port);
        assert_eq!(f[0].severity, Severity::Warning);
        assert!(f[0].message.contains("stuck"), "{}", f[0].message);
        // A limit rule says the count is a sum held against a port's limit.
        let f = findings_of(&IB101, &all);
        assert!(
            f[0].message.contains("sum over all the device's ports"),
            "{}",
            f[0].message
        );
        assert!(!findings_of(&IB101, &one_port)[0]
            .message
            .contains("sum over all"));
    }

    #[test]
    fn link_downed_between_snapshots_is_flapping_now() {
        let text = format!("{}{}", perf(3, 0, 0, 1), perf(3, 0, 0, 2));
        let f = findings_of(&IB112, &text);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].severity, Severity::Error);
        assert!(f[0].message.contains("flapping"));
        assert_eq!(f[0].evidence.len(), 2);
        // No growth, no finding.
        let same = format!("{}{}", perf(3, 5, 0, 1), perf(3, 5, 0, 1));
        assert!(findings_of(&IB112, &same).is_empty());
    }

    fn wait(lid: u32, ticks: u64) -> String {
        format!(
            "# Port extended counters: Lid {lid} port 1 (CapMask: 0x5A00)\nPortSelect:......................1\nCounterSelect:...................0x0000\nPortXmitData:....................1000\nPortRcvData:.....................1000\nPortXmitWait:....................{ticks}\n"
        )
    }

    const IBSTAT_400: &str = "CA 'mlx5_0'\n\tCA type: MT4129\n\tNumber of ports: 1\n\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 400\n\t\tBase lid: 3\n\t\tSM lid: 1\n\t\tLink layer: InfiniBand\n";

    #[test]
    fn xmit_wait_since_reset_is_info_with_the_waiting_time() {
        let f = findings_of(&IB109, &format!("{IBSTAT_400}{}", wait(3, 6_250_000_000)));
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].severity, Severity::Info);
        // 6.25e9 ticks × 64 bits at 400 Gb/s = 1 s of waiting.
        assert!(
            f[0].message.contains("about 1.0 s of waiting"),
            "{}",
            f[0].message
        );
        assert!(f[0].threshold.as_ref().unwrap().value.contains("1000"));
        assert!(
            findings_of(&IB109, &wait(3, 1000)).is_empty(),
            "not above 1000"
        );
    }

    #[test]
    fn xmit_wait_rate_is_a_warning_above_a_tenth_of_the_interval() {
        // The helper's interval is 10 s; at 400 Gb/s a port waiting all of
        // it counts 400e9 × 10 / 64 = 6.25e10 ticks.
        let busy = format!(
            "{IBSTAT_400}{}{}",
            wait(3, 1_000_000),
            wait(3, 1_000_000 + 25_000_000_000)
        );
        let f = findings_of(&IB109, &busy);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].severity, Severity::Warning);
        assert!(f[0].message.contains("40 %"), "{}", f[0].message);
        assert_eq!(f[0].evidence.len(), 3, "two readings and the link rate");
        // 1 % of the interval: a busy, healthy port; the rate supersedes the
        // count since reset, so nothing at all.
        let fine = format!(
            "{IBSTAT_400}{}{}",
            wait(3, 9_000_000_000),
            wait(3, 9_000_000_000 + 625_000_000)
        );
        assert!(findings_of(&IB109, &fine).is_empty());
        // Without the link rate the share is unknown: info, never a warning.
        let blind = format!(
            "{}{}",
            wait(3, 1_000_000),
            wait(3, 1_000_000 + 25_000_000_000)
        );
        let f = findings_of(&IB109, &blind);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Info);
    }

    #[test]
    fn a_saturated_xmit_wait_is_info_and_a_saturated_error_counter_a_warning() {
        let text = "# Port counters: Lid 3 port 1 (CapMask: 0x5A00)\nPortSelect:......................1\nCounterSelect:...................0x0000\nSymbolErrorCounter:..............65535\nPortXmitWait:....................4294967295\n";
        let f = findings_of(&IB111, text);
        assert_eq!(f.len(), 2, "{f:#?}");
        let sev = |c: &str| f.iter().find(|x| x.message.contains(c)).unwrap().severity;
        assert_eq!(sev("PortXmitWait"), Severity::Info);
        assert_eq!(sev("SymbolErrorCounter"), Severity::Warning);
    }

    #[test]
    fn symbol_errors_growing_fast_are_an_error_and_slowly_a_warning() {
        // The test helper measures with a 10 s interval.
        let fast = format!("{}{}", perf(3, 0, 0, 0), perf(3, 500, 0, 0));
        let f = findings_of(&IB112, &fast);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Error, "{}", f[0].message);
        let slow = format!("{}{}", perf(3, 0, 0, 0), perf(3, 5, 0, 0));
        assert_eq!(findings_of(&IB112, &slow)[0].severity, Severity::Warning);
    }
}
