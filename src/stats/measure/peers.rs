//! Peer groups: the links of a GPU, the ports of a device or host, the same
//! port across hosts, compared with robust statistics.

use super::super::robust::{self, ScaleMethod};
use super::super::sample::Subject;
use super::super::CounterSource;
use super::super::StatsOptions;
use super::records::{CounterRate, OutlierMember, PeerGroup, PeerGroupKind, PeerStatistic, RateStatus};
use super::timeline::Series;
use super::fmt_num;
use crate::span::LineSpan;
use std::collections::{BTreeMap, BTreeSet};

/// A member value with where it came from.
pub(super) struct Member {
    subject: Subject,
    value: f64,
    count: Option<u64>,
    lines: LineSpan,
}

/// (host, GPU, counter source, counter name): a GPU's sum over its links.
pub(super) type GpuKey = (Option<String>, u32, CounterSource, String);

/// (kind, group in words, counter source, counter name, statistic).
pub(super) type GroupKey = (PeerGroupKind, String, CounterSource, String, PeerStatistic);

pub(super) fn host_words(host: Option<&String>) -> String {
    host.map_or_else(String::new, |h| format!(" on {h}"))
}

pub(super) fn group_keys(subject: &Subject) -> Vec<(PeerGroupKind, String)> {
    let mut keys = Vec::new();
    let on = host_words(subject.host.as_ref());
    match (subject.gpu, subject.link, subject.lane) {
        (Some(gpu), Some(_), None) => {
            keys.push((PeerGroupKind::LinksOfGpu, format!("links of GPU {gpu}{on}")))
        }
        (Some(gpu), Some(_), Some(_)) => keys.push((
            PeerGroupKind::LanesOfGpu,
            format!("lanes of the links of GPU {gpu}{on}"),
        )),
        _ => {}
    }
    if subject.port.is_some()
        && !subject.is_aggregate()
        && subject.gpu.is_none()
        && subject.lane.is_none()
    {
        {
            match (&subject.device, subject.lid) {
                (Some(device), _) => keys.push((
                    PeerGroupKind::PortsOfDevice,
                    format!("ports of {device}{on}"),
                )),
                (None, Some(lid)) => keys.push((
                    PeerGroupKind::PortsOfDevice,
                    format!("ports of lid {lid}{on}"),
                )),
                (None, None) => {}
            }
            keys.push((
                PeerGroupKind::PortsOnHost,
                format!(
                    "ports read{}",
                    if on.is_empty() {
                        " in the input".to_owned()
                    } else {
                        on.clone()
                    }
                ),
            ));
        }
    }
    keys
}

pub(super) fn peer_groups(
    series: &Series,
    rates: &[CounterRate],
    options: &StatsOptions,
    notes: &mut Vec<String>,
) -> Vec<PeerGroup> {
    let mut groups: BTreeMap<GroupKey, Vec<Member>> = BTreeMap::new();
    let mut gpu_sums: BTreeMap<GpuKey, (u64, LineSpan)> = BTreeMap::new();
    let mut across: BTreeMap<(String, CounterSource, String), Vec<Member>> = BTreeMap::new();
    for ((subject, source, name), points) in series {
        let Some(last) = points.last() else { continue };
        if !last.role.compared_across_peers() {
            continue;
        }
        let value = last.counter.value;
        #[allow(clippy::cast_precision_loss)]
        let member = || Member {
            subject: subject.clone(),
            value: value as f64,
            count: Some(value),
            lines: last.span,
        };
        for (kind, words) in group_keys(subject) {
            groups
                .entry((
                    kind,
                    words,
                    source.clone(),
                    name.clone(),
                    PeerStatistic::Value,
                ))
                .or_default()
                .push(member());
        }
        if let (Some(gpu), Some(_), None) = (subject.gpu, subject.link, subject.lane) {
            let e = gpu_sums
                .entry((subject.host.clone(), gpu, source.clone(), name.clone()))
                .or_insert((0, last.span));
            e.0 = e.0.saturating_add(value);
            e.1 = e.1.join(last.span);
        }
        if subject.host.is_some() && !subject.is_aggregate() {
            // LIDs differ from host to host (every port has its own); the CA
            // name and port number do not, so they alone say "the same port".
            let place = Subject {
                host: None,
                lid: None,
                ..subject.clone()
            };
            if place != Subject::default() {
                across
                    .entry((place.to_string(), source.clone(), name.clone()))
                    .or_default()
                    .push(member());
            }
        }
    }
    for ((host, gpu, source, name), (sum, lines)) in gpu_sums {
        #[allow(clippy::cast_precision_loss)]
        groups
            .entry((
                PeerGroupKind::GpusOfHost,
                format!("GPUs{}", host_words(host.as_ref())),
                source,
                name,
                PeerStatistic::Value,
            ))
            .or_default()
            .push(Member {
                subject: Subject {
                    host,
                    gpu: Some(gpu),
                    ..Subject::default()
                },
                value: sum as f64,
                count: Some(sum),
                lines,
            });
    }
    for ((place, source, name), members) in across {
        let hosts: BTreeSet<_> = members.iter().map(|m| m.subject.host.clone()).collect();
        if hosts.len() >= 2 {
            groups
                .entry((
                    PeerGroupKind::SamePortAcrossHosts,
                    format!("{place} across hosts"),
                    source,
                    name,
                    PeerStatistic::Value,
                ))
                .or_default()
                .extend(members);
        }
    }
    // Latest measured rate of each counter.
    let mut latest: BTreeMap<(Subject, CounterSource, String), &CounterRate> = BTreeMap::new();
    for r in rates
        .iter()
        .filter(|r| r.status == RateStatus::Measured && r.role.compared_across_peers())
    {
        latest.insert((r.subject.clone(), r.source.clone(), r.counter.clone()), r);
    }
    for ((subject, source, name), r) in latest {
        for (kind, words) in group_keys(&subject) {
            groups
                .entry((
                    kind,
                    words,
                    source.clone(),
                    name.clone(),
                    PeerStatistic::CountsPerSecond,
                ))
                .or_default()
                .push(Member {
                    subject: subject.clone(),
                    value: r.counts_per_second.unwrap_or(f64::NAN),
                    count: r.increase,
                    lines: r.lines[1],
                });
        }
    }
    let mut quiet = 0usize;
    let mut out = Vec::new();
    for ((kind, words, source, counter, statistic), members) in groups {
        if members.len() < 2 {
            continue;
        }
        let values: Vec<f64> = members.iter().map(|m| m.value).collect();
        let Ok(summary) = robust::summary(&values) else {
            continue;
        };
        if summary.max == 0.0 {
            quiet += 1;
            continue;
        }
        let (flagged, scale, computed) = match robust::outliers(&values, options.outlier_z) {
            Ok((f, s)) => (f, Some(s), true),
            Err(_) => (Vec::new(), None, false),
        };
        let counts: Vec<f64> = members
            .iter()
            .filter_map(|m| m.count)
            .map(|c| c as f64)
            .collect();
        let count_median = robust::median(&counts).unwrap_or(0.0);
        let size = members.len();
        let outliers = flagged
            .into_iter()
            .filter(|f| f.robust_z > 0.0)
            .filter_map(|f| {
                let member = members.get(f.index)?;
                let p = member.count.map(|c| poisson_tail(c, count_median.max(1.0)));
                if p.is_some_and(|p| p >= options.outlier_poisson_p) {
                    return None;
                }
                let unit = statistic.unit();
                let against = f.times_median.map_or_else(
                    || {
                        format!(
                            "while the median of the {size} {words} is {}{unit}",
                            fmt_num(summary.median)
                        )
                    },
                    |t| {
                        format!(
                            "is {t:.1}× the median ({}{unit}) of the {size} {words}",
                            fmt_num(summary.median)
                        )
                    },
                );
                Some(OutlierMember {
                    subject: member.subject.clone(),
                    value: f.value,
                    robust_z: f.robust_z,
                    times_median: f.times_median,
                    poisson_tail_p: p,
                    lines: member.lines,
                    explanation: format!(
                        "{}: {counter} {}{unit} {against} (robust z = {:.1}{}{})",
                        member.subject,
                        fmt_num(f.value),
                        f.robust_z,
                        match scale {
                            Some(ScaleMethod::MeanAbsoluteDeviation) =>
                                ", mean-deviation based since most peers are equal",
                            Some(ScaleMethod::None) => ", every other peer is equal",
                            _ => "",
                        },
                        p.map_or_else(String::new, |p| if p < 1e-300 {
                            "; Poisson tail p < 1e-300".to_owned()
                        } else {
                            format!("; Poisson tail p = {p:.1e}")
                        }),
                    ),
                })
            })
            .collect();
        out.push(PeerGroup {
            kind,
            group: words,
            source,
            counter,
            statistic,
            size,
            summary,
            z_scores_computed: computed,
            scale,
            outliers,
        });
    }
    if quiet > 0 {
        notes.push(format!(
            "{quiet} peer group(s) left out because every member reads 0"
        ));
    }
    out
}

/// `P(X ≥ k)` for `X ~ Poisson(λ)`: the regularised lower incomplete gamma `P(k, λ)`.
pub(super) fn poisson_tail(k: u64, lambda: f64) -> f64 {
    if k == 0 {
        return 1.0;
    }
    #[allow(clippy::cast_precision_loss)]
    statrs::function::gamma::gamma_lr(k as f64, lambda)
}
