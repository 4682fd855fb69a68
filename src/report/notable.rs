//! Which measurements a JSON report carries by default: the *notable* ones.
//!
//! A healthy port or link yields the same records as every other: its
//! trained rate, a bit error rate with no errors, a peer group whose members
//! agree. On 1,000 generated hosts those were 46 MB of a 180 MB report
//! (144,000 NVLink capacities, all at the links' full rate), and at 10,000
//! hosts they would be most of a 2 GB file nobody reads. The report keeps
//! what deviates and *counts* what it leaves out, in a note, so an absent
//! record is never mistaken for an unmeasured one; `--measurements all`
//! keeps everything.
//!
//! Left out, by kind (everything else is kept whole):
//! - **link capacities** at the best rate of their kind (NVLink links, or
//!   InfiniBand ports) on their host: a link trained below its host's best
//!   is kept, with every other capacity of a host whose links disagree;
//! - **bit error rates** that counted no errors and are within the
//!   threshold (inconclusive ones are kept: they ask for a longer interval);
//! - **peer groups** without outliers;
//! - **counter rates** of counters that did not change between the two
//!   snapshots (an error counter that stayed at its lifetime total, a
//!   multicast counter on a port that sent none). A rate that moved, a
//!   counter that went down (reset) or saturated is kept: rates between
//!   snapshots are the news a second snapshot was taken for, and a
//!   reading that stood still is not news. On 1,000 generated hosts these
//!   were 15 of each port's 22 extended counters, 24 MB of the report;
//! - **counter rates of traffic counters** (data and packets) that were
//!   measured: a busy link's traffic moves every second, so "it moved" says
//!   nothing, and the bytes are in the throughput records already, with the
//!   link's capacity beside them. On the same fleet these were 6 of the 7
//!   rates that moved on every port, 14 MB of an 81 MB report. A traffic
//!   counter that reset or saturated, or whose interval is unknown (no
//!   throughput can be made of it), is kept like any other.
//!
//! Snapshots, throughput, saturated counters, traffic balance, trends and
//! notes are always kept.

use crate::stats::ber::Verdict;
use crate::stats::{
    BitErrorRate, CounterRate, CounterUnit, LinkCapacity, Measurements, PeerGroup, RateStatus,
};
use rustc_hash::FxHashMap;

/// How many records of each kind a report left out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Omitted {
    /// Link capacities at their host's best rate.
    pub link_capacities: usize,
    /// Bit error rates with no errors, within the threshold.
    pub bit_error_rates: usize,
    /// Peer groups without outliers.
    pub peer_groups: usize,
    /// Counter rates of counters that did not change between snapshots.
    pub unchanged_counters: usize,
    /// Measured counter rates of traffic counters (data and packets).
    pub traffic_counters: usize,
}

impl Omitted {
    /// Adds another unit's counts.
    pub fn add(&mut self, other: Self) {
        self.link_capacities += other.link_capacities;
        self.bit_error_rates += other.bit_error_rates;
        self.peer_groups += other.peer_groups;
        self.unchanged_counters += other.unchanged_counters;
        self.traffic_counters += other.traffic_counters;
    }

    /// The note that says what was left out, or nothing when nothing was.
    #[must_use]
    pub fn note(&self) -> Option<String> {
        let parts: Vec<String> = [
            (
                self.link_capacities,
                "link capacity(ies) at their host's best rate",
            ),
            (
                self.bit_error_rates,
                "bit error rate(s) with no errors, within the threshold",
            ),
            (self.peer_groups, "peer group(s) without outliers"),
            (
                self.unchanged_counters,
                "counter rate(s) of counters unchanged between snapshots",
            ),
            (
                self.traffic_counters,
                "measured counter rate(s) of traffic counters (data and packets; the data is in throughput)",
            ),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
        (!parts.is_empty()).then(|| {
            format!(
                "notable measurements only (`--measurements all` prints every one): left out {}",
                parts.join(", ")
            )
        })
    }
}

/// Keeps the notable records of `m` (see the module documentation) and
/// says how many it left out. Capacities are compared within `m`, so call
/// it on one unit's measurements (a host's, in a batch run) or on a whole
/// run's: a host's links are in the same unit either way.
pub fn keep_notable(m: &mut Measurements) -> Omitted {
    let before = (
        m.link_capacities.len(),
        m.bit_error_rates.len(),
        m.peer_groups.len(),
        m.counter_rates.len(),
    );
    keep_notable_capacities(&mut m.link_capacities);
    m.bit_error_rates.retain(notable_bit_error_rate);
    m.peer_groups.retain(notable_peer_group);
    let mut traffic_counters = 0;
    m.counter_rates.retain(|r| {
        if !notable_counter_rate(r) {
            return false;
        }
        let traffic = measured_traffic(r);
        traffic_counters += usize::from(traffic);
        !traffic
    });
    Omitted {
        link_capacities: before.0 - m.link_capacities.len(),
        bit_error_rates: before.1 - m.bit_error_rates.len(),
        peer_groups: before.2 - m.peer_groups.len(),
        unchanged_counters: before.3 - m.counter_rates.len() - traffic_counters,
        traffic_counters,
    }
}

/// A counter rate is news unless the counter stood still between the two
/// snapshots and nothing else is known about it: a reset or a saturated
/// reading is kept whatever the numbers, since either says the readings
/// cannot be taken at face value.
#[must_use]
pub fn notable_counter_rate(r: &CounterRate) -> bool {
    let still = r.before == r.after && r.increase == Some(0);
    !(still && matches!(r.status, RateStatus::Measured | RateStatus::NoInterval))
}

/// Whether a rate is the measured rate of a traffic counter (data or
/// packets), which a busy link moves all the time. Told by the counter's
/// unit, which a report carries, so it holds for rates read back from JSON.
#[must_use]
pub fn measured_traffic(r: &CounterRate) -> bool {
    r.status == RateStatus::Measured
        && matches!(
            r.unit,
            CounterUnit::Packets | CounterUnit::FourOctets | CounterUnit::Kib
        )
}

/// A bit error rate is news when it counted errors or is not clearly
/// within its threshold.
#[must_use]
pub fn notable_bit_error_rate(b: &BitErrorRate) -> bool {
    b.errors > 0 || b.verdict != Verdict::Within
}

/// A peer group is news when it has outliers.
#[must_use]
pub fn notable_peer_group(g: &PeerGroup) -> bool {
    !g.outliers.is_empty()
}

/// Which capacities are compared with each other: one host's NVLink links,
/// or one host's InfiniBand ports (ports named by LID alone have no host
/// and are compared with the other LID-named ports of the same input).
fn capacity_group(c: &LinkCapacity) -> (Option<&str>, bool) {
    (c.subject.host.as_deref(), c.subject.gpu.is_some())
}

/// Keeps the capacities below the best of their group; a group whose
/// members all agree is left out whole. Linear: one pass for the maxima,
/// one to keep. (A list of groups searched for each capacity was quadratic
/// in a paste of many hosts: 1,000 hosts, 8,000 ports.)
fn keep_notable_capacities(capacities: &mut Vec<LinkCapacity>) {
    let keep: Vec<bool> = {
        let mut best: FxHashMap<(Option<&str>, bool), f64> = FxHashMap::default();
        for c in capacities.iter() {
            let max = best.entry(capacity_group(c)).or_insert(c.gbit_per_second);
            *max = max.max(c.gbit_per_second);
        }
        capacities
            .iter()
            .map(|c| {
                best.get(&capacity_group(c))
                    .is_some_and(|max| c.gbit_per_second < *max)
            })
            .collect()
    };
    let mut keep = keep.into_iter();
    capacities.retain(|_| keep.next().unwrap_or(false));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::span::LineSpan;
    use crate::stats::Subject;

    fn capacity(host: Option<&str>, gpu: Option<u32>, gbit: f64) -> LinkCapacity {
        LinkCapacity {
            subject: Subject {
                host: host.map(str::to_owned),
                gpu,
                link: gpu.map(|_| 0),
                port: gpu.is_none().then_some(1),
                ..Subject::default()
            },
            gbit_per_second: gbit,
            source: "test".into(),
            lines: LineSpan::default(),
        }
    }

    #[test]
    fn capacities_below_their_hosts_best_are_kept_and_the_rest_counted() {
        let mut m = Measurements {
            link_capacities: vec![
                capacity(Some("a"), Some(0), 212.5),
                capacity(Some("a"), Some(1), 106.25),
                capacity(Some("a"), None, 400.0),
                capacity(Some("a"), None, 200.0),
                // Host b's NVLinks are all slow: nothing to compare them
                // with on b, and a's links are another host's.
                capacity(Some("b"), Some(0), 106.25),
                capacity(Some("b"), Some(1), 106.25),
                capacity(None, None, 400.0),
            ],
            ..Measurements::default()
        };
        let omitted = keep_notable(&mut m);
        let kept: Vec<(Option<&str>, f64)> = m
            .link_capacities
            .iter()
            .map(|c| (c.subject.host.as_deref(), c.gbit_per_second))
            .collect();
        assert_eq!(kept, [(Some("a"), 106.25), (Some("a"), 200.0)]);
        assert_eq!(omitted.link_capacities, 5);
        let note = omitted.note().unwrap();
        assert!(note.contains("left out 5 link capacity(ies)"), "{note}");
        assert!(note.contains("--measurements all"), "{note}");
    }

    /// A rate as a report carries it; the record's own deserializer builds
    /// it, so the test does not depend on private fields.
    fn rate(counter: &str, before: u64, after: u64, status: &str) -> CounterRate {
        let unit = match counter {
            "PortRcvData" | "PortXmitData" => "four_octets",
            "PortRcvPkts" | "PortXmitPkts" => "packets",
            "tx0" | "rx0" => "kib",
            _ => "events",
        };
        let increase = after.checked_sub(before);
        serde_json::from_value(serde_json::json!({
            "subject": {"host": "h", "device": "mlx5_0", "port": 1},
            "source": "perfquery Port extended",
            "counter": counter,
            "unit": unit,
            "from_snapshot": 0,
            "to_snapshot": 1,
            "lines": [{"first_line": 1, "last_line": 2}, {"first_line": 3, "last_line": 4}],
            "interval_seconds": 60.0,
            "interval_source": "given interval",
            "status": status,
            "before": before,
            "after": after,
            "increase": increase,
            "derivation": "test",
        }))
        .unwrap()
    }

    #[test]
    fn counter_rates_that_stood_still_are_left_out_unless_the_reading_is_in_doubt() {
        let mut m = Measurements {
            counter_rates: vec![
                rate("SymbolErrorCounter", 7, 7, "measured"),
                rate("PortRcvErrors", 0, 3, "measured"),
                rate("LinkDownedCounter", 2, 2, "no_interval"),
                rate("PortXmitWait", 4_294_967_295, 4_294_967_295, "saturated"),
                rate("PortRcvData", 9, 1, "counter_reset"),
            ],
            ..Measurements::default()
        };
        let omitted = keep_notable(&mut m);
        let kept: Vec<&str> = m.counter_rates.iter().map(|r| &*r.counter).collect();
        assert_eq!(kept, ["PortRcvErrors", "PortXmitWait", "PortRcvData"]);
        assert_eq!(omitted.unchanged_counters, 2);
        assert_eq!(omitted.traffic_counters, 0);
        let note = omitted.note().unwrap();
        assert!(
            note.contains("left out 2 counter rate(s) of counters unchanged"),
            "{note}"
        );
    }

    #[test]
    fn measured_traffic_rates_are_left_out_and_counted_apart_from_unchanged_ones() {
        let mut m = Measurements {
            counter_rates: vec![
                rate("PortXmitData", 100, 900, "measured"),
                rate("PortRcvPkts", 5, 8, "measured"),
                rate("tx0", 1, 2, "measured"),
                rate("PortXmitPkts", 5, 5, "measured"),
                rate("PortXmitWait", 10, 20, "measured"),
                // Doubtful traffic readings stay, as every doubtful one does,
                // and without an interval there is no throughput to carry it.
                rate("PortRcvData", 9, 1, "counter_reset"),
                rate("PortXmitData", 4_294_967_295, 4_294_967_295, "saturated"),
                rate("PortRcvPkts", 1, 4, "no_interval"),
            ],
            ..Measurements::default()
        };
        let omitted = keep_notable(&mut m);
        let kept: Vec<(&str, u64)> = m
            .counter_rates
            .iter()
            .map(|r| (&*r.counter, r.before))
            .collect();
        assert_eq!(
            kept,
            [
                ("PortXmitWait", 10),
                ("PortRcvData", 9),
                ("PortXmitData", 4_294_967_295),
                ("PortRcvPkts", 1)
            ]
        );
        assert_eq!(omitted.traffic_counters, 3);
        assert_eq!(omitted.unchanged_counters, 1);
        let note = omitted.note().unwrap();
        assert!(
            note.contains("1 counter rate(s) of counters unchanged between snapshots, 3 measured counter rate(s) of traffic counters"),
            "{note}"
        );
    }

    #[test]
    fn nothing_left_out_says_nothing() {
        let mut m = Measurements::default();
        assert_eq!(keep_notable(&mut m), Omitted::default());
        assert_eq!(Omitted::default().note(), None);
    }
}
