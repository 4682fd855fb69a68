//! Property tests of the GPU-side parsers: no input makes them panic,
//! every warning points inside the input, and any topology matrix the
//! model can hold survives a render/parse round trip, whichever way the
//! paste spaced its cells.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use fabricscope::model::topo::Link;
use fabricscope::parse::{dcgmi_nvlink, dmon, lines_of, smi_csv, smi_list, smi_query, topo};
use proptest::prelude::*;

/// Pieces of real GPU tool output, mixed with noise.
fn gpu_line() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID".to_owned()),
        Just("GPU0\t X \tNV18\tPIX\t0-31\t0\t\tN/A".to_owned()),
        Just("GPU1 NV18NV18 X SYSSYS 0-31".to_owned()),
        Just("NIC0: mlx5_0".to_owned()),
        Just("Legend:".to_owned()),
        Just("  NV#  = Connection traversing a bonded set of # NVLinks".to_owned()),
        Just(" GPU0\tX\tOK\t".to_owned()),
        Just("==============NVSMI LOG==============".to_owned()),
        Just("Timestamp : Mon Nov 30 00:10:31 2026".to_owned()),
        Just("GPU 00000000:00:06.0".to_owned()),
        Just("    Temperature".to_owned()),
        Just("        GPU Current Temp : 31 C".to_owned()),
        Just("<gpu id=\"00000000:00:06.0\">".to_owned()),
        Just("</gpu>".to_owned()),
        Just("<gpu_temp>31 C</gpu_temp>".to_owned()),
        Just("index, name, power.draw [W]".to_owned()),
        Just("0, NVIDIA H200, 77.55 W".to_owned()),
        Just("GPU 0: NVIDIA H200 (UUID: GPU-1)".to_owned()),
        Just("# gpu    pwr  gtemp".to_owned()),
        Just("# Idx      W      C".to_owned()),
        Just("    0     77     31".to_owned()),
        Just("#Entity   NVLTX".to_owned()),
        Just("    GPU 0   N/A".to_owned()),
        Just("|  NvLink Link Status  |".to_owned()),
        Just("        U U D X _".to_owned()),
        Just("| -> CRC FLIT Error           | 0 |".to_owned()),
        Just(String::new()),
        "[ -~\t]{0,40}",
        any::<String>(),
    ]
}

fn paste() -> impl Strategy<Value = String> {
    prop::collection::vec(gpu_line(), 0..30).prop_map(|l| l.join("\n"))
}

fn link() -> impl Strategy<Value = Link> {
    prop_oneof![
        (1u32..=18).prop_map(|count| Link::Nvlink { count }),
        Just(Link::Pix),
        Just(Link::Pxb),
        Just(Link::Phb),
        Just(Link::Node),
        Just(Link::Sys),
    ]
}

/// A symmetric matrix of `gpus` GPUs and `nics` NICs, as `topo -m` prints
/// it, with cells separated by tabs, aligned spaces, or fused together.
fn matrix_text() -> impl Strategy<Value = (usize, usize, Vec<Link>, u8)> {
    (1usize..=8, 0usize..=4).prop_flat_map(|(g, n)| {
        let size = (g + n) * (g + n);
        (
            Just(g),
            Just(n),
            prop::collection::vec(link(), size),
            0u8..3,
        )
    })
}

fn render(g: usize, n: usize, links: &[Link], style: u8) -> String {
    let names: Vec<String> = (0..g)
        .map(|i| format!("GPU{i}"))
        .chain((0..n).map(|i| format!("NIC{i}")))
        .collect();
    let sep = |s: &str| match style {
        0 => format!("\t{s}"),
        1 => format!("{s:<8}"),
        _ => s.to_owned(),
    };
    let size = g + n;
    let cell = |r: usize, c: usize| {
        if r == c {
            Link::SelfCell
        } else {
            let (a, b) = (r.min(c), r.max(c));
            links[a * size + b].clone()
        }
    };
    let mut s = String::from("        ");
    for name in &names {
        s.push_str(&format!("{name:<8}"));
    }
    s.push_str("CPU Affinity    NUMA Affinity\n");
    for (r, name) in names.iter().enumerate() {
        s.push_str(&format!("{name:<8}"));
        for c in 0..size {
            s.push_str(&sep(&cell(r, c).label()));
        }
        if r < g {
            // Affinity values keep a separator: `NV180-3` is ambiguous to
            // anyone, and no paste fuses a number onto a number.
            s.push_str(&format!("\t{}-{}\t0", r * 4, r * 4 + 3));
        }
        s.push('\n');
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn gpu_parsers_never_panic_and_warn_inside_the_input(text in paste()) {
        let lines = lines_of(&text);
        let n = text.lines().count();
        let spans = [
            topo::parse(&lines).warnings,
            topo::parse_p2p(&lines).warnings,
            smi_query::parse(&lines).warnings,
            smi_csv::parse(&lines).warnings,
            smi_list::parse(&lines).warnings,
            dmon::parse(&lines).warnings,
            dcgmi_nvlink::parse_status(&lines).warnings,
            dcgmi_nvlink::parse_errors(&lines).warnings,
        ];
        for w in spans.iter().flatten() {
            prop_assert!(w.span.first_line >= 1 && w.span.last_line <= n, "{w:?} outside 1..={n}");
        }
        let _ = fabricscope::read_all(&text, &fabricscope::ReadOptions::default()).unwrap();
    }

    #[test]
    fn any_matrix_reads_back_whatever_the_spacing((g, n, links, style) in matrix_text()) {
        let text = render(g, n, &links, style);
        let parsed = topo::parse(&lines_of(&text));
        prop_assert!(parsed.warnings.is_empty(), "{:?}\n{}", parsed.warnings, text);
        let m = parsed.value;
        prop_assert_eq!(m.devices.len(), g + n);
        prop_assert_eq!(m.cells.len(), (g + n) * (g + n));
        let size = g + n;
        for r in 0..size {
            for c in 0..size {
                let want = if r == c {
                    Link::SelfCell
                } else {
                    links[r.min(c) * size + r.max(c)].clone()
                };
                let a = &m.devices[r].name;
                let b = &m.devices[c].name;
                prop_assert_eq!(&m.cell(a, b).unwrap().value, &want, "{} {}\n{}", a, b, text);
            }
        }
        for (i, d) in m.gpus().enumerate() {
            let affinity = format!("{}-{}", i * 4, i * 4 + 3);
            prop_assert_eq!(d.cpu_affinity.as_deref(), Some(affinity.as_str()));
        }
        let direct = m.gpu_pairs_without_nvlink().len();
        let counted = (0..g)
            .flat_map(|a| (a + 1..g).map(move |b| (a, b)))
            .filter(|(a, b)| !matches!(links[a * size + b], Link::Nvlink { .. }))
            .count();
        prop_assert_eq!(direct, counted);
    }
}
