//! NV011: a GPU's NVLink error totals, as dcgm-exporter exports them,
//! rising between two scrapes of the same host.
//!
//! dcgm-exporter's `DCGM_FI_DEV_NVLINK_*_ERROR_COUNT_TOTAL` are lifetime
//! totals of a GPU over all its links: one scrape of them is history (a
//! year-old busy GPU carries thousands of replays from links that were
//! reseated long ago), and no link is named, so no per-link NVLink rule can
//! hold them. What a rise between two scrapes says is news, and that is
//! what DCGM itself judges.

use super::context::{Context, HostKey, SectionRef};
use super::{Coverage, Evidence, Finding, Subject, Threshold};
use crate::declare_rule;
use crate::model::dcgm_exporter::{DcgmGpu, Reading};
use crate::parse::SectionData;
use std::collections::BTreeMap;

declare_rule! {
    /// ### What it detects
    /// A GPU whose dcgm-exporter NVLink error totals rise between two
    /// scrapes of its host in the paste: `DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL`
    /// or `…_RECOVERY_ERROR_COUNT_TOTAL` by any amount, or the CRC totals
    /// (`…_CRC_FLIT_…`, `…_CRC_DATA_…`) at 100 per second or more when
    /// the samples' time stamps give the interval.
    ///
    /// ### Why it matters
    /// The totals count every error since the driver loaded on all of the
    /// GPU's links together: a single scrape says nothing of now, and a
    /// large total on a healthy, year-old GPU is common, so one scrape is
    /// never judged. A replay (a packet resent after a CRC error) or a
    /// recovery (the link retrained) between two scrapes means a link is
    /// erring now; DCGM's NVLink health watch reports such increases, and
    /// its PCIe/NVLink diagnostic fails a GPU at 100 CRC errors per second.
    /// A finding is a `warning`: the link to blame is not named here, and
    /// NV00x rules judge it per link from `nvidia-smi nvlink -e`. The
    /// legacy fields read 0 on Hopper and later whatever the links do, so
    /// totals that do not rise there are no evidence of health. A total
    /// that falls (DCGM or the driver restarted) is not compared.
    ///
    /// ### Evidence
    /// The metric's line in each of the two scrapes.
    ///
    /// ### What to do
    /// Find the link: `nvidia-smi nvlink -e -i <gpu>` twice a minute apart
    /// (or `dcgmi nvlink -e -g <gpu>`), and check the GPU's kernel log for
    /// NVLink Xids (74, 144–150). A link whose recoveries keep rising needs
    /// the GPU drained and reset, then its NVSwitch tray or bridge seated
    /// or replaced if it recurs.
    ///
    /// ### Thresholds and sources
    /// Replay or recovery: any increase; CRC: 100 per second. DCGM's own:
    /// `dcgmi diag` PCIe plugin `nvlink_crc_error_threshold` 100.0 per
    /// second (nvvs/plugin_src/pcie/Pcie.cpp), DCGM's NVLink health watch
    /// on replay and recovery increases; the alerting rules users write
    /// for dcgm-exporter mirror them (`increase(…REPLAY…) > 0`,
    /// `rate(…CRC…) >= 100`).
    pub static NV011 = {
        id: "NV011",
        name: "nvlink-totals-rising",
        family: Nvlink,
        severity: Warning,
        summary: "a GPU's NVLink replay/recovery totals rise between two dcgm-exporter scrapes, or its CRC totals at ≥100/s",
        needs: "two dcgm-exporter scrapes of a host with DCGM_FI_DEV_NVLINK_*_ERROR_COUNT_TOTAL (time stamps for the CRC rate)",
        check: check_totals,
    }
}

/// CRC errors per second at which DCGM's diagnostic fails a GPU.
const CRC_PER_SECOND: f64 = 100.0;

/// A GPU's totals in one scrape.
struct Scrape<'a> {
    at: SectionRef<'a>,
    gpu: &'a DcgmGpu,
    timestamp_ms: Option<i64>,
}

/// How a GPU is known across scrapes of its host: UUID, else index.
fn identity(gpu: &DcgmGpu) -> Option<String> {
    gpu.uuid
        .clone()
        .or_else(|| gpu.index.map(|i| format!("#{i}")))
}

/// NV011.
fn check_totals(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let mut series: BTreeMap<(HostKey<'_>, String), Vec<Scrape<'_>>> = BTreeMap::new();
    for at in ctx.sections() {
        let SectionData::DcgmExporter(m) = &at.section.data else {
            continue;
        };
        for host in &m.hosts {
            for gpu in host.gpus.iter().filter(|g| !g.nvlink_totals.is_empty()) {
                let Some(id) = identity(gpu) else { continue };
                series.entry((at.host(), id)).or_default().push(Scrape {
                    at,
                    gpu,
                    timestamp_ms: host.timestamp_ms,
                });
            }
        }
    }
    let mut pairs = 0usize;
    for scrapes in series.values() {
        for pair in scrapes.windows(2) {
            let [a, b] = pair else { continue };
            pairs += 1;
            if let Some(f) = judge(a, b) {
                out.push(f);
            }
        }
    }
    if pairs == 0 {
        return Coverage::Skipped(
            "no two dcgm-exporter scrapes of a GPU with NVLink error totals in the input"
                .to_owned(),
        );
    }
    Coverage::Checked(pairs)
}

/// What rose between two scrapes of one total.
struct Rise {
    metric: &'static str,
    from: Reading,
    to: Reading,
    per_second: Option<f64>,
}

/// The finding of a GPU whose totals rose between `a` and `b`, if any did.
fn judge(a: &Scrape<'_>, b: &Scrape<'_>) -> Option<Finding> {
    #[allow(clippy::cast_precision_loss)] // milliseconds since 1970
    let seconds = match (a.timestamp_ms, b.timestamp_ms) {
        (Some(x), Some(y)) if y > x => Some((y - x) as f64 / 1000.0),
        _ => None,
    };
    let mut rises = Vec::new();
    for (key, metric, crc) in [
        (
            "replay",
            "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL",
            false,
        ),
        (
            "recovery",
            "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL",
            false,
        ),
        (
            "crc_flit",
            "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL",
            true,
        ),
        (
            "crc_data",
            "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL",
            true,
        ),
    ] {
        let (Some(from), Some(to)) = (a.gpu.nvlink_totals.get(key), b.gpu.nvlink_totals.get(key))
        else {
            continue;
        };
        // A fall is a restart: not compared.
        let Some(increase) = to.value.checked_sub(from.value).filter(|d| *d > 0) else {
            continue;
        };
        #[allow(clippy::cast_precision_loss)] // an increase of a count
        let per_second = seconds.map(|s| increase as f64 / s);
        if crc && !per_second.is_some_and(|r| r >= CRC_PER_SECOND) {
            continue;
        }
        rises.push(Rise {
            metric,
            from: *from,
            to: *to,
            per_second,
        });
    }
    if rises.is_empty() {
        return None;
    }
    let (subject, label): (Subject, String) = super::gpu_memory::dcgm_gpu_named(&b.at, b.gpu);
    let apart = seconds.map_or_else(
        || " (the scrapes' times are not shown)".to_owned(),
        |s| format!(" ({s:.0} s apart)"),
    );
    let listed: Vec<String> = rises
        .iter()
        .map(|r| {
            let rate = r
                .per_second
                .map(|p| format!(", {p:.1}/s"))
                .unwrap_or_default();
            format!(
                "{} from {} to {} (+{}{rate})",
                r.metric,
                r.from.value,
                r.to.value,
                r.to.value - r.from.value
            )
        })
        .collect();
    let mut f = NV011
        .finding(
            subject,
            format!(
                "{label}: NVLink error totals rose between two dcgm-exporter scrapes{apart}: {}. The totals are over all the GPU's links: a link is erring now, which one is not named",
                listed.join("; ")
            ),
        )
        .threshold(Threshold::new(
            "replay or recovery: any increase; CRC: 100/s",
            "DCGM: dcgmi diag PCIe plugin nvlink_crc_error_threshold 100/s (nvvs/plugin_src/pcie/Pcie.cpp); DCGM NVLink health watch (replay and recovery increases)",
        ))
        .remediation(
            "Find the link: nvidia-smi nvlink -e -i <gpu> twice a minute apart (or dcgmi nvlink -e -g <gpu>), and check the kernel log for NVLink Xids (74, 144-150). If recoveries keep rising, drain the GPU and reset it; if it recurs, reseat or replace its NVSwitch tray or bridge.",
        );
    for r in &rises {
        for (at, reading) in [(a.at, r.from), (b.at, r.to)] {
            f = f.evidence(Evidence::new(
                format!("dcgm-exporter: {} {}", r.metric, reading.value),
                reading.span,
                at.source(),
            ));
        }
    }
    Some(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testing::{findings_of, skipped_reason};
    use crate::rules::Severity;

    /// A scrape of GPU 2 of `gpu05` at `ms` with the given totals.
    fn scrape(replay: u64, recovery: u64, crc: u64, ms: u64) -> String {
        let l = "gpu=\"2\",UUID=\"GPU-7a7a\",pci_bus_id=\"00000000:5D:00.0\",Hostname=\"gpu05\"";
        format!(
            "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL{{{l}}} {crc} {ms}\n\
             DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL{{{l}}} {replay} {ms}\n\
             DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL{{{l}}} {recovery} {ms}\n"
        )
    }

    #[test]
    fn one_scrape_is_history_and_not_judged() {
        let text = scrape(90_000, 505, 2_000_000, 1_765_101_600_000);
        assert!(findings_of(&NV011, &text).is_empty());
        assert!(skipped_reason(&NV011, &text).is_some());
    }

    #[test]
    fn a_recovery_between_two_scrapes_is_a_warning() {
        let text = format!(
            "{}{}",
            scrape(90_000, 505, 2_000_000, 1_765_101_600_000),
            scrape(90_000, 508, 2_000_000, 1_765_101_660_000)
        );
        let f = findings_of(&NV011, &text);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].severity, Severity::Warning);
        assert_eq!(f[0].subject.host.as_deref(), Some("gpu05"));
        assert!(
            f[0].message.contains("from 505 to 508 (+3"),
            "{}",
            f[0].message
        );
        assert!(f[0].message.contains("60 s apart"), "{}", f[0].message);
        let lines: Vec<usize> = f[0].evidence.iter().map(|e| e.span.first_line).collect();
        assert_eq!(lines, [3, 6]);
    }

    #[test]
    fn crc_counts_only_at_a_hundred_per_second() {
        // 5999 in 60 s is under 100/s; 6000 is at it.
        let under = format!(
            "{}{}",
            scrape(0, 0, 1000, 1_765_101_600_000),
            scrape(0, 0, 6999, 1_765_101_660_000)
        );
        assert!(findings_of(&NV011, &under).is_empty());
        assert_eq!(skipped_reason(&NV011, &under), None);
        let at = format!(
            "{}{}",
            scrape(0, 0, 1000, 1_765_101_600_000),
            scrape(0, 0, 7000, 1_765_101_660_000)
        );
        assert_eq!(findings_of(&NV011, &at).len(), 1);
        // Without time stamps the rate is unknown: CRC is not judged,
        // a replay rise still is.
        let untimed = |replay: u64| {
            format!("{}{}", scrape(0, 0, 1000, 0), scrape(replay, 0, 900_000, 0))
                .replace(" 0\n", "\n")
        };
        assert!(findings_of(&NV011, &untimed(0)).is_empty());
        let f = findings_of(&NV011, &untimed(4));
        assert_eq!(f.len(), 1, "{f:#?}");
        assert!(
            f[0].message.contains("times are not shown"),
            "{}",
            f[0].message
        );
    }

    #[test]
    fn a_fall_is_a_restart_not_compared() {
        let text = format!(
            "{}{}",
            scrape(500, 9, 0, 1_765_101_600_000),
            scrape(0, 0, 0, 1_765_101_660_000)
        );
        assert!(findings_of(&NV011, &text).is_empty());
    }
}
