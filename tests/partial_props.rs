//! Properties of the partial-data model on generated matrices: a
//! `topo -m` matrix of any size and wiring, cut at any byte or pasted
//! without its header (and without any number of its first rows), is read
//! without losing a line, and never gives a topology warning that the whole
//! matrix does not give.

// Test helpers: a failing case should fail loudly.
#![allow(clippy::panic, clippy::unwrap_used, clippy::indexing_slicing)]

use fabricscope::{analyze, read_all, AnalyzeOptions, ReadOptions, Severity};
use proptest::prelude::*;
use std::collections::BTreeSet;

/// A matrix as nvidia-smi prints it: `gpus` GPUs and `nics` NICs, the GPU
/// pair cells from `links` (NV<n> or SYS), NIC cells from `near`.
fn matrix(gpus: usize, nics: usize, links: &[u8], near: &[u8], header: bool) -> String {
    let names: Vec<String> = (0..gpus)
        .map(|i| format!("GPU{i}"))
        .chain((0..nics).map(|i| format!("NIC{i}")))
        .collect();
    let pair = |a: usize, b: usize| -> String {
        let (lo, hi) = (a.min(b), a.max(b));
        let v = links[(lo * 7 + hi) % links.len()];
        if v == 0 {
            "SYS".to_owned()
        } else {
            format!("NV{v}")
        }
    };
    let nic = |g: usize, n: usize| -> &'static str {
        match near[(g * 3 + n) % near.len()] % 3 {
            0 => "PIX",
            1 => "NODE",
            _ => "SYS",
        }
    };
    let mut s = String::new();
    if header {
        for n in &names {
            s.push('\t');
            s.push_str(n);
        }
        s.push_str("\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n");
    }
    for (r, row) in names.iter().enumerate() {
        s.push_str(row);
        for c in 0..names.len() {
            let cell = match (r < gpus, c < gpus) {
                _ if r == c => " X ".to_owned(),
                (true, true) => pair(r, c),
                (true, false) => nic(r, c - gpus).to_owned(),
                (false, true) => nic(c, r - gpus).to_owned(),
                (false, false) => "SYS".to_owned(),
            };
            s.push('\t');
            s.push_str(&cell);
        }
        if r < gpus {
            let node = usize::from(r >= gpus / 2);
            s.push_str(&format!(
                "\t{}-{}\t{node}\t\tN/A",
                node * 48,
                node * 48 + 47
            ));
        }
        s.push('\n');
    }
    s.push_str(
        "\nLegend:\n\n  X    = Self\n  NV#  = Connection traversing a bonded set of # NVLinks\n",
    );
    s
}

/// `matrix` with the NIC columns cut out of the header and of every row
/// (the NIC rows keep their cell for each GPU column), as a screen cut
/// at its width or a hand edit leaves it.
fn without_nic_columns(text: &str, gpus: usize, nics: usize) -> String {
    let mut in_matrix = true;
    text.lines()
        .map(|line| {
            in_matrix &= !line.is_empty();
            if !in_matrix {
                return format!("{line}\n");
            }
            let fields: Vec<&str> = line.split('\t').collect();
            let kept: Vec<&str> = fields
                .iter()
                .enumerate()
                .filter(|(i, _)| !(1 + gpus..1 + gpus + nics).contains(i))
                .map(|(_, f)| *f)
                .collect();
            format!("{}\n", kept.join("\t"))
        })
        .collect()
}

/// Every GPU–NIC cell of the document's matrix, by names and label.
fn gpu_nic_cells(text: &str) -> BTreeSet<(String, String, String)> {
    let doc = fabricscope::read(text, &ReadOptions::default()).unwrap();
    let fabricscope::SectionData::TopoMatrix(m) = &doc.sections[0].data else {
        panic!("{:?}", doc.sections[0].kind);
    };
    let mut out = BTreeSet::new();
    for g in m.gpus() {
        for n in m.nics() {
            if let Some(c) = m.cell_between(g, n).or_else(|| m.cell_between(n, g)) {
                out.insert((g.name.clone(), n.name.clone(), c.value.label()));
            }
        }
    }
    out
}

/// Each warning as its rule and a GPU it warns of: the subject's GPU, or
/// for a finding of several GPUs (TP003 lists a host's far GPUs in one)
/// each GPU its evidence names (`… GPU2 ↔ NIC0: SYS`), so that a cut
/// paste whose one far GPU is the subject compares with the whole's list.
fn warnings(text: &str) -> BTreeSet<(String, Option<u32>)> {
    let doc = read_all(text, &ReadOptions::default()).unwrap();
    let report = analyze(&[doc], &AnalyzeOptions::default());
    let mut out = BTreeSet::new();
    for f in report
        .findings
        .iter()
        .filter(|f| f.severity >= Severity::Warning)
    {
        let named: BTreeSet<u32> = match f.subject.gpu {
            Some(gpu) => BTreeSet::from([gpu]),
            None => f
                .evidence
                .iter()
                .filter_map(|e| gpu_named(&e.text))
                .collect(),
        };
        if named.is_empty() {
            out.insert((f.rule.to_owned(), None));
        }
        out.extend(named.into_iter().map(|gpu| (f.rule.to_owned(), Some(gpu))));
    }
    out
}

/// The GPU an evidence line of the matrix opens with (`…: GPU2 ↔ NIC0: SYS`).
fn gpu_named(evidence: &str) -> Option<u32> {
    let after = evidence.split(": ").nth(1)?;
    let digits: String = after
        .strip_prefix("GPU")?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn a_cut_matrix_never_warns_more_than_the_whole(
        gpus in 2usize..9,
        nics in 0usize..5,
        links in proptest::collection::vec(prop_oneof![Just(0u8), Just(12u8), Just(18u8), 1u8..18], 1..12),
        near in proptest::collection::vec(any::<u8>(), 1..8),
        cut in any::<prop::sample::Index>(),
    ) {
        let text = matrix(gpus, nics, &links, &near, true);
        let whole = warnings(&text);
        let mut at = cut.index(text.len());
        while !text.is_char_boundary(at) {
            at += 1;
        }
        let part = &text[..at];
        let doc = read_all(part, &ReadOptions::default()).unwrap();
        prop_assert!(doc.unaccounted_lines(part).is_empty());
        let extra: Vec<_> = warnings(part).difference(&whole).cloned().collect();
        prop_assert!(extra.is_empty(), "cut at byte {}: {:?}\n{}", at, extra, part);
    }

    /// A header that lost its NIC columns, above NIC rows that kept a
    /// cell per GPU column: every GPU–NIC cell of the whole matrix is
    /// read, the matrix is marked as lacking the NIC columns, and nothing
    /// warns that the whole matrix does not warn of.
    #[test]
    fn a_header_without_its_nic_columns_keeps_every_gpu_nic_cell(
        gpus in 2usize..9,
        nics in 1usize..5,
        links in proptest::collection::vec(prop_oneof![Just(0u8), Just(12u8), Just(18u8), 1u8..18], 1..12),
        near in proptest::collection::vec(any::<u8>(), 1..8),
    ) {
        let whole = matrix(gpus, nics, &links, &near, true);
        let text = without_nic_columns(&whole, gpus, nics);
        let doc = fabricscope::read(&text, &ReadOptions::default()).unwrap();
        prop_assert!(doc.unaccounted_lines(&text).is_empty());
        let fabricscope::SectionData::TopoMatrix(m) = &doc.sections[0].data else {
            panic!("{:?}", doc.sections[0].kind);
        };
        prop_assert_eq!(
            m.partial.as_ref().map(|p| p.reason),
            Some(fabricscope::model::partial::PartialReason::MissingColumns),
            "{}", text
        );
        prop_assert_eq!(gpu_nic_cells(&text), gpu_nic_cells(&whole), "{}", text);
        let extra: Vec<_> = warnings(&text).difference(&warnings(&whole)).cloned().collect();
        prop_assert!(extra.is_empty(), "{:?}\n{}", extra, text);
    }

    #[test]
    fn rows_without_their_header_are_read_and_never_warn_more(
        gpus in 3usize..9,
        nics in 0usize..5,
        links in proptest::collection::vec(prop_oneof![Just(0u8), Just(12u8), Just(18u8)], 1..12),
        near in proptest::collection::vec(any::<u8>(), 1..8),
        skip in 0usize..3,
    ) {
        let whole = warnings(&matrix(gpus, nics, &links, &near, true));
        let headless = matrix(gpus, nics, &links, &near, false);
        let text: String = headless.lines().skip(skip).map(|l| format!("{l}\n")).collect();
        let doc = fabricscope::read(&text, &ReadOptions::default()).unwrap();
        prop_assert!(doc.unaccounted_lines(&text).is_empty());
        prop_assert_eq!(doc.sections[0].kind, fabricscope::Kind::TopoMatrix);
        let extra: Vec<_> = warnings(&text).difference(&whole).cloned().collect();
        prop_assert!(extra.is_empty(), "{:?}\n{}", extra, text);
    }
}
