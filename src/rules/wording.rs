//! Wording shared by several rules: rates, and the evidence and threshold of
//! a peer-group outlier.

use super::{Evidence, Threshold};

/// `100`, `2.5`: a rate without trailing zeros.
pub(crate) fn gbps(rate: f64) -> String {
    if rate.fract() == 0.0 && rate.abs() < 1e15 {
        format!("{rate:.0}")
    } else {
        format!("{rate}")
    }
}

/// The evidence of a peer-group outlier (FL004, NV005): the statistic, its
/// robust z-score and how far above the median it stands, at its input lines.
pub(crate) fn outlier_evidence(
    group: &crate::stats::PeerGroup,
    member: &crate::stats::OutlierMember,
) -> Evidence {
    Evidence::new(
        format!(
            "{} {} = {} (robust z {:.1}{})",
            group.counter,
            group.statistic,
            member.value,
            member.robust_z,
            member
                .times_median
                .map(|t| format!(", {t:.1}× the median"))
                .unwrap_or_default()
        ),
        member.lines,
        None,
    )
}

/// The threshold behind every peer-group outlier finding.
pub(crate) fn outlier_threshold() -> Threshold {
    Threshold::new(
        "robust z ≥ 3.5, Poisson tail < 0.001; absolute counts ≥ 10× the median",
        "Iglewicz & Hoaglin; statistics defaults",
    )
}
