//! Property tests of dcgm-exporter's GPU metrics: scrapes with labels in
//! any order, time stamps or a query result's `=> value @[t]`, an
//! `instance` or only a `Hostname` read back every GPU's gauges on its
//! host; a line cut by the paste's end before its value is partial; no text
//! makes the reader panic or drop a line silently.

// Test helpers may index and panic: a failed lookup is a failed test.
#![allow(clippy::panic, clippy::indexing_slicing, clippy::unwrap_used)]

use fabricscope::model::dcgm_exporter::{DcgmExporter, DcgmGpu};
use fabricscope::parse::dcgm_exporter::parse;
use fabricscope::parse::lines_of;
use fabricscope::parse::Parsed;
use proptest::prelude::*;

/// The metrics the model keeps, and where.
const METRICS: &[&str] = &[
    "DCGM_FI_DEV_XID_ERRORS",
    "DCGM_FI_DEV_ROW_REMAP_FAILURE",
    "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
    "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
    "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
    "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL",
    "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL",
    "DCGM_FI_DEV_GPU_TEMP",
];

fn kept(g: &DcgmGpu, metric: &str) -> Option<u64> {
    match metric {
        "DCGM_FI_DEV_XID_ERRORS" => g.last_xid.map(|r| r.value),
        "DCGM_FI_DEV_ROW_REMAP_FAILURE" => g.row_remap_failure.map(|r| r.value),
        "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS" => g.uncorrectable_remapped_rows.map(|r| r.value),
        "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS" => g.correctable_remapped_rows.map(|r| r.value),
        "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL" => g.ecc_dbe_volatile.map(|r| r.value),
        "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL" => {
            g.nvlink_totals.get("replay").map(|r| r.value)
        }
        "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL" => {
            g.nvlink_totals.get("crc_flit").map(|r| r.value)
        }
        // Kept as printed (`1.5e1`): its value as a float.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        _ => g
            .fields
            .get(metric)
            .and_then(|v| v.parse::<f64>().ok())
            .map(|v| v as u64),
    }
}

/// How a line is written.
#[derive(Debug, Clone, Copy)]
struct Style {
    /// `UUID` before `gpu`.
    uuid_first: bool,
    /// With `instance` and `job` labels, as a query's result.
    instance: bool,
    /// `=> v @[t]` instead of `v t`.
    query: bool,
    /// Values as `1.2e+03`.
    exponent: bool,
    /// `# HELP`/`# TYPE` lines and another metric between.
    comments: bool,
}

/// One GPU: index, (metric index, value) pairs.
type Gpu = (u32, Vec<(usize, u64)>);

fn scrape() -> impl Strategy<Value = (Style, Vec<Gpu>)> {
    let gpu = (
        0u32..8,
        proptest::sample::subsequence((0..METRICS.len()).collect::<Vec<_>>(), 1..METRICS.len())
            .prop_flat_map(|idx| {
                let n = idx.len();
                (
                    Just(idx),
                    proptest::collection::vec(prop_oneof![0u64..200, 0u64..(1 << 50)], n),
                )
                    .prop_map(|(idx, v)| idx.into_iter().zip(v).collect::<Vec<_>>())
            }),
    );
    (
        any::<(bool, bool, bool, bool, bool)>(),
        proptest::collection::vec(gpu, 1..5),
    )
        .prop_map(
            |((uuid_first, instance, query, exponent, comments), gpus)| {
                let mut seen = Vec::new();
                let gpus = gpus
                    .into_iter()
                    .filter(|(g, _)| {
                        let fresh = !seen.contains(g);
                        seen.push(*g);
                        fresh
                    })
                    .collect();
                (
                    Style {
                        uuid_first,
                        instance,
                        query,
                        exponent,
                        comments,
                    },
                    gpus,
                )
            },
        )
}

#[allow(clippy::cast_precision_loss)] // values below 2^53
fn render(style: Style, gpus: &[Gpu]) -> String {
    let mut out = String::new();
    for (gpu, metrics) in gpus {
        for (i, v) in metrics {
            let name = METRICS[*i];
            if style.comments {
                out.push_str(&format!(
                    "# HELP {name} Something.\n# TYPE {name} counter\ngo_goroutines 12\n"
                ));
            }
            let uuid = format!("UUID=\"GPU-0000-{gpu}\"");
            let mut labels = if style.uuid_first {
                format!("{uuid},gpu=\"{gpu}\",Hostname=\"pod-x\"")
            } else {
                format!("gpu=\"{gpu}\",Hostname=\"pod-x\",{uuid}")
            };
            if style.instance {
                labels = format!("instance=\"gpu07:9400\",{labels},job=\"dcgm\"");
            }
            let value = if style.exponent {
                format!("{:e}", *v as f64)
            } else {
                v.to_string()
            };
            if style.query {
                out.push_str(&format!("{name}{{{labels}}} => {value} @[1765101600.25]\n"));
            } else {
                out.push_str(&format!("{name}{{{labels}}} {value} 1765101600250\n"));
            }
        }
    }
    out
}

/// Whether every non-blank line is read, set aside, cut or warned about.
fn no_line_dropped(text: &str, parsed: &Parsed<DcgmExporter>) -> Result<(), String> {
    let m = &parsed.value;
    for line in lines_of(text).iter().filter(|l| !l.is_blank()) {
        let n = line.number;
        let t = line.text().trim_start();
        let read = m
            .hosts
            .iter()
            .flat_map(|h| &h.gpus)
            .any(|g| g.span.contains(n));
        let aside = m.other_metrics.iter().any(|s| s.contains(n));
        let cut = m.cut.as_ref().is_some_and(|c| c.line == n);
        let warned = parsed.warnings.iter().any(|w| w.span.contains(n));
        let own_comment = t.starts_with("# HELP DCGM_") || t.starts_with("# TYPE DCGM_");
        if !(read || aside || cut || warned || own_comment) {
            return Err(format!(
                "line {n} `{}` neither read nor warned about",
                line.text()
            ));
        }
    }
    Ok(())
}

proptest! {
    #[test]
    fn every_gauge_reads_back_on_its_gpu_and_host((style, gpus) in scrape()) {
        let text = render(style, &gpus);
        let parsed = parse(&lines_of(&text));
        prop_assert!(parsed.warnings.is_empty(), "{:?}\n{text}", parsed.warnings);
        let [host] = parsed.value.hosts.as_slice() else {
            panic!("{:?}", parsed.value.hosts)
        };
        // `instance` names the host before the exporter's `Hostname`.
        prop_assert_eq!(host.host.as_deref(), Some(if style.instance { "gpu07" } else { "pod-x" }));
        prop_assert_eq!(host.timestamp_ms, Some(1_765_101_600_250));
        prop_assert_eq!(host.gpus.len(), gpus.len());
        for (gpu, metrics) in &gpus {
            let g = host.gpus.iter().find(|g| g.index == Some(*gpu)).unwrap();
            prop_assert_eq!(g.uuid.clone(), Some(format!("GPU-0000-{gpu}")));
            prop_assert!(g.partial.is_none());
            for (i, v) in metrics {
                prop_assert_eq!(kept(g, METRICS[*i]), Some(*v), "{}\n{}", METRICS[*i], text);
            }
        }
        no_line_dropped(&text, &parsed).map_err(TestCaseError::fail)?;
        if style.comments {
            prop_assert!(parsed.value.other_metric_lines() > 0);
        }
    }

    /// The paste's end may cut the last line anywhere: before its value it
    /// is partial, never an unreadable line; inside its value it is read or
    /// warned about; never a panic.
    #[test]
    fn a_cut_last_line_is_read_or_partial((style, gpus) in scrape(), at in any::<prop::sample::Index>()) {
        let text = render(style, &gpus);
        let last_start = text.trim_end().rfind('\n').map_or(0, |i| i + 1);
        let last = text.get(last_start..).unwrap().trim_end();
        let cut = last_start + 6 + at.index(last.len() - 6);
        let cut_text = text.get(..cut).unwrap();
        let parsed = parse(&lines_of(cut_text));
        no_line_dropped(cut_text, &parsed).map_err(TestCaseError::fail)?;
        let n = lines_of(cut_text).len();
        let value_begun = cut_text.get(last_start..).unwrap().contains("} ");
        prop_assert!(value_begun || parsed.warnings.is_empty(), "{:?}\n{cut_text}", parsed.warnings);
        let partial = parsed.value.cut.is_some()
            || parsed
                .value
                .hosts
                .iter()
                .flat_map(|h| &h.gpus)
                .any(|g| g.partial.as_ref().is_some_and(|p| p.line == n));
        prop_assert!(partial || value_begun, "{cut_text}");
    }

    /// Lines of any shape near the format's are read, set aside or warned
    /// about, and never make the reader panic.
    #[test]
    fn no_line_is_dropped_silently(
        lines in proptest::collection::vec(
            prop_oneof![
                "[A-Za-z_{}=\", 0-9.:e+#-]{0,50}",
                (proptest::sample::select(METRICS), "[a-zA-Z_=\",0-9]{0,20}", "[0-9a-zNI.e+-]{0,8}")
                    .prop_map(|(m, labels, v)| format!("{m}{{{labels}}} {v}")),
                (proptest::sample::select(METRICS), "[0-9a-zNI.e+-]{0,8}")
                    .prop_map(|(m, v)| format!("{m}{{gpu=\"0\",UUID=\"GPU-a\"}} {v}")),
                proptest::sample::select(METRICS).prop_map(|m| format!("# TYPE {m} gauge")),
            ],
            0..30,
        )
    ) {
        let text = lines.join("\n");
        let parsed = parse(&lines_of(&text));
        no_line_dropped(&text, &parsed).map_err(TestCaseError::fail)?;
    }
}
