//! Wording shared by several rules: rates, and the evidence and threshold of
//! a peer-group outlier.

use super::{Evidence, Threshold};

/// Appends `n` in decimal, as `{n}` formats it, without the formatting
/// machinery: finding texts are written by the thousand on a fleet, and
/// `format!` cost a few times what the pieces' copies do.
pub(crate) fn push_u64(out: &mut String, n: u64) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    let mut rest = n;
    for slot in digits.iter_mut().rev() {
        // `rest % 10` is a digit: the cast keeps it.
        #[allow(clippy::cast_possible_truncation)]
        let digit = (rest % 10) as u8;
        *slot = b'0' + digit;
        start -= 1;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    out.push_str(
        digits
            .get(start..)
            .and_then(|d| std::str::from_utf8(d).ok())
            .unwrap_or_default(),
    );
}

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
        member.file.as_deref(),
    )
}

/// The threshold behind every peer-group outlier finding.
pub(crate) fn outlier_threshold() -> Threshold {
    Threshold::new(
        "robust z ≥ 3.5, Poisson tail < 0.001; absolute counts ≥ 10× the median",
        "Iglewicz & Hoaglin; statistics defaults",
    )
}

#[cfg(test)]
mod tests {
    use super::push_u64;

    proptest::proptest! {
        /// Digits pushed are those `to_string` writes, whatever the value.
        #[test]
        fn push_u64_writes_as_display(n in proptest::num::u64::ANY, pre in "[a-z ]{0,3}") {
            let mut s = pre.clone();
            push_u64(&mut s, n);
            proptest::prop_assert_eq!(s, format!("{pre}{n}"));
        }
    }

    #[test]
    fn push_u64_writes_the_edges() {
        for n in [
            0,
            1,
            9,
            10,
            99,
            100,
            u64::from(u32::MAX),
            u64::MAX - 1,
            u64::MAX,
        ] {
            let mut s = String::new();
            push_u64(&mut s, n);
            assert_eq!(s, n.to_string());
        }
    }
}
