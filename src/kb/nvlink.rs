//! NVLink per GPU product and per system type.
//!
//! Speeds are what `nvidia-smi nvlink -s` prints, which is the line rate
//! per direction truncated (not rounded) to three decimals: 25.78125 →
//! `25.781`, 26.5625 → `26.562`, 14.0625 → `14.062`; A100 prints `25`.

use serde::Serialize;

/// How a GPU's links are wired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FormFactor {
    /// SXM module or superchip on a baseboard: links are wired to peers or
    /// NVSwitches, and every link is expected active.
    Sxm,
    /// PCIe card: links exist only through an optional bridge. Without the
    /// bridge every link is inactive, and that is normal.
    PcieBridge,
}

/// What `nvidia-smi nvlink -s` should show for one GPU product.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GpuNvlinkSpec {
    /// Stable id, referenced by [`PairNvlinkSpec::gpus`].
    pub id: &'static str,
    /// Human name of the product family.
    pub family: &'static str,
    /// NVLink generation (1 = P100 … 5 = Blackwell).
    pub nvlink_generation: u8,
    /// How the links are wired.
    pub form_factor: FormFactor,
    /// How many `Link N:` lines `-s` lists, when known.
    pub link_slots: Option<u32>,
    /// How many links are active on a healthy, fully cabled/bridged board.
    pub active_links: u32,
    /// Per-link speed as `-s` prints it, GB/s per direction; `None` when no
    /// capture or document gives the printed value.
    pub speed_gb_per_s: Option<f64>,
    /// True when "all links are inactive" is a normal answer (PCIe board
    /// without bridge).
    pub all_inactive_can_be_normal: bool,
    /// True when a real capture confirmed the entry; false for values
    /// deduced from specifications.
    pub observed: bool,
    /// Upper-cased words that must all appear in the GPU name (see
    /// [`GpuNvlinkSpec::matches`] for what counts as a word).
    pub all_of: &'static [&'static str],
    /// Upper-cased words of which at least one must appear (empty: no constraint).
    pub any_of: &'static [&'static str],
    /// Upper-cased substrings that must not appear (keeps `H100 PCIe` out
    /// of the SXM entry).
    pub none_of: &'static [&'static str],
    /// GPU names as nvidia-smi prints them, used by the tests.
    pub examples: &'static [&'static str],
    /// Where the values come from.
    pub source: &'static str,
    /// Anything a rule author must know.
    pub note: &'static str,
}

impl GpuNvlinkSpec {
    /// Whether `name` (as `nvidia-smi` prints it) is this product. A pattern
    /// must start a word (`B200` does not match `GB200`), and one ending in a
    /// digit must also end one (`H20` does not match `H200`, `A40` not
    /// `A400`), while `SXM` still matches `SXM2`.
    #[must_use]
    pub fn matches(&self, name: &str) -> bool {
        self.matches_upper(&name.to_ascii_uppercase())
    }

    /// [`Self::matches`] for a name already in upper case.
    fn matches_upper(&self, upper: &str) -> bool {
        let has = |p: &&str| contains_word(upper, p);
        self.all_of.iter().all(has)
            && (self.any_of.is_empty() || self.any_of.iter().any(has))
            && !self.none_of.iter().any(has)
    }

    /// Whether boards carrying this GPU wire fewer links than it has, so
    /// that fewer active links than [`Self::active_links`] can be the
    /// board's design: SXM2 modules (P100, V100) sit on 2-, 4- and 8-GPU
    /// boards without NVSwitch, and the smaller ones leave links unwired
    /// (a 2-GPU V100-SXM2 node shows 2 of 6 active on each GPU, presented
    /// as normal by its operator's documentation, RWTH help pages). SXM3
    /// and later sit on NVSwitch baseboards that wire every link.
    #[must_use]
    pub fn wiring_varies_by_board(&self, gpu_name: &str) -> bool {
        self.form_factor == FormFactor::Sxm
            && self.nvlink_generation <= 2
            && contains_word(&gpu_name.to_ascii_uppercase(), "SXM2")
    }

    /// Whether a speed printed by `-s` is this product's full speed; `None`
    /// when the entry has no printed speed. Allows for the three-decimal
    /// truncation only.
    #[must_use]
    pub fn is_full_speed(&self, printed_gb_per_s: f64) -> Option<bool> {
        self.speed_gb_per_s
            .map(|expected| (printed_gb_per_s - expected).abs() < 0.0015)
    }
}

/// `pattern` in `text` at a word start (and word end when it ends in a digit).
fn contains_word(text: &str, pattern: &str) -> bool {
    let ends_in_digit = pattern.ends_with(|c: char| c.is_ascii_digit());
    text.match_indices(pattern).any(|(at, _)| {
        let before = text.get(..at).and_then(|t| t.chars().next_back());
        let after = text
            .get(at + pattern.len()..)
            .and_then(|t| t.chars().next());
        let starts_word = !before.is_some_and(|c| c.is_ascii_alphanumeric());
        let ends_word = !after.is_some_and(|c| c.is_ascii_alphanumeric());
        starts_word && (ends_word || !ends_in_digit)
    })
}

/// The first entry of [`GPUS`] whose pattern matches the GPU name printed by
/// `nvidia-smi` (`NVIDIA H200`, `Tesla V100-SXM2-16GB` …).
#[must_use]
pub fn gpu_nvlink_expectation(gpu_name: &str) -> Option<&'static GpuNvlinkSpec> {
    // Rules ask for every GPU of every host, and a host's GPUs share one
    // name: the last answer is remembered (per thread), and the name is
    // upper-cased once, not once per table entry.
    thread_local! {
        static LAST: std::cell::RefCell<(String, Option<usize>)> =
            const { std::cell::RefCell::new((String::new(), None)) };
    }
    let found = LAST.with(|last| {
        let mut last = last.borrow_mut();
        if last.0 != gpu_name || last.0.is_empty() {
            let upper = gpu_name.to_ascii_uppercase();
            let at = GPUS.iter().position(|spec| spec.matches_upper(&upper));
            gpu_name.clone_into(&mut last.0);
            last.1 = at;
        }
        last.1
    });
    found.and_then(|i| GPUS.get(i))
}

/// The research notes on NVLink output and health heuristics, which collect
/// the captures cited below.
const NOTES: &str = "fabricscope research notes, nvlink-formats-and-heuristics";

/// Known GPU products, most specific first (the first match wins).
pub static GPUS: &[GpuNvlinkSpec] = &[
    GpuNvlinkSpec {
        id: "p100-sxm2",
        family: "Tesla P100 SXM2",
        nvlink_generation: 1,
        form_factor: FormFactor::Sxm,
        link_slots: Some(4),
        active_links: 4,
        speed_gb_per_s: None,
        all_inactive_can_be_normal: false,
        observed: false,
        all_of: &["P100", "SXM2"],
        any_of: &[],
        none_of: &[],
        examples: &["Tesla P100-SXM2-16GB"],
        source: "open-mpi/hwloc#574 (4 links × 20 GB/s per direction)",
        note: "No P100 `nvlink -s` capture: the printed speed is unknown.",
    },
    GpuNvlinkSpec {
        id: "v100-sxm",
        family: "Tesla V100 SXM2/SXM3",
        nvlink_generation: 2,
        form_factor: FormFactor::Sxm,
        link_slots: Some(6),
        active_links: 6,
        speed_gb_per_s: Some(25.781),
        all_inactive_can_be_normal: false,
        observed: true,
        all_of: &["V100", "SXM"],
        any_of: &[],
        none_of: &[],
        examples: &[
            "Tesla V100-SXM2-16GB",
            "Tesla V100-SXM2-32GB",
            "Tesla V100-SXM3-32GB",
        ],
        source: "Azure/azhpc-diagnostics#73, RWTH help pages, a DGX-1 capture (research notes)",
        note: "Boards of 2 or 4 GPUs leave links unwired (2 of 6 active on each GPU of a 2-GPU \
               node, 4 of 6 on some 4-GPU systems): see `wiring_varies_by_board`. \
               CRC counters were seen stuck at 65535 (16 bits).",
    },
    GpuNvlinkSpec {
        id: "a100-pcie",
        family: "A100 PCIe",
        nvlink_generation: 3,
        form_factor: FormFactor::PcieBridge,
        link_slots: Some(12),
        active_links: 12,
        speed_gb_per_s: Some(25.0),
        all_inactive_can_be_normal: true,
        observed: false,
        all_of: &["A100", "PCIE"],
        any_of: &[],
        none_of: &[],
        examples: &["NVIDIA A100-PCIE-40GB", "NVIDIA A100 80GB PCIe"],
        source: "HPE-Japan-Presales/e-learning gpu/a100 (no bridge: all links inActive); \
                 NVIDIA A100 PCIe product brief (bridge: 600 GB/s = 12 links)",
        note:
            "Without a bridge all links are inactive, which is normal. The bridged link count is \
               deduced from the 600 GB/s bridge bandwidth; no bridged capture.",
    },
    GpuNvlinkSpec {
        id: "a800-sxm",
        family: "A800 SXM4",
        nvlink_generation: 3,
        form_factor: FormFactor::Sxm,
        link_slots: None,
        active_links: 8,
        speed_gb_per_s: Some(25.0),
        all_inactive_can_be_normal: false,
        observed: false,
        all_of: &["A800"],
        any_of: &[],
        none_of: &["PCIE"],
        examples: &["NVIDIA A800-SXM4-80GB"],
        source: "research notes: A800 400 GB/s NVLink, `NV8` in topo -m",
        note: "Export variant of A100 with 8 of 12 links; how many slots -s lists is unknown.",
    },
    GpuNvlinkSpec {
        id: "a100-sxm",
        family: "A100 SXM4",
        nvlink_generation: 3,
        form_factor: FormFactor::Sxm,
        link_slots: Some(12),
        active_links: 12,
        speed_gb_per_s: Some(25.0),
        all_inactive_can_be_normal: false,
        observed: true,
        all_of: &["A100"],
        any_of: &[],
        none_of: &["PCIE"],
        examples: &[
            "NVIDIA A100-SXM4-80GB",
            "NVIDIA A100-SXM4-40GB",
            "A100-SXM4-40GB",
        ],
        source: "Azure/azurehpc-health-checks test/data/good_nvlink_status.txt (12 × `25 GB/s`); \
                 NVIDIA/nccl-tests#228",
        note: "A100 prints the speed without decimals.",
    },
    GpuNvlinkSpec {
        id: "ga102-bridge",
        family: "GA102 with NVLink bridge (RTX 3090, RTX A6000, A40)",
        nvlink_generation: 3,
        form_factor: FormFactor::PcieBridge,
        link_slots: Some(4),
        active_links: 4,
        speed_gb_per_s: Some(14.062),
        all_inactive_can_be_normal: true,
        observed: true,
        all_of: &[],
        any_of: &["RTX 3090", "RTX A6000", "A40"],
        none_of: &[],
        examples: &["NVIDIA GeForce RTX 3090", "NVIDIA RTX A6000", "NVIDIA A40"],
        source: "RTX 3090 and RTX A6000 captures (research notes: 5900X notes, A6000 captures)",
        note: "A40 is deduced from the shared GA102 bridge. `RTX 6000 Ada` and RTX 40xx have no \
               NVLink and do not match.",
    },
    GpuNvlinkSpec {
        id: "h100-pcie",
        family: "H100 PCIe",
        nvlink_generation: 4,
        form_factor: FormFactor::PcieBridge,
        link_slots: Some(18),
        active_links: 12,
        speed_gb_per_s: Some(26.562),
        all_inactive_can_be_normal: true,
        observed: true,
        all_of: &["H100", "PCIE"],
        any_of: &[],
        none_of: &[],
        examples: &["NVIDIA H100 PCIe"],
        source: "HPE-Japan-Presales/e-learning gpu/h100 mgmt_gpu_on_dl380agen11.md (driver 555)",
        note: "18 slots, 12 active with the bridge: links 4, 5, 10, 11, 16, 17 are inactive by \
               design on both GPUs.",
    },
    GpuNvlinkSpec {
        id: "h100-nvl",
        family: "H100 NVL",
        nvlink_generation: 4,
        form_factor: FormFactor::PcieBridge,
        link_slots: Some(18),
        active_links: 12,
        speed_gb_per_s: Some(26.562),
        all_inactive_can_be_normal: true,
        observed: false,
        all_of: &["H100", "NVL"],
        any_of: &[],
        none_of: &[],
        examples: &["NVIDIA H100 NVL"],
        source: "NVIDIA H100 NVL product brief (bridge: 600 GB/s = 12 links); no capture",
        note: "Deduced from the bridge bandwidth, like H100 PCIe.",
    },
    GpuNvlinkSpec {
        id: "h800-sxm",
        family: "H800 SXM5",
        nvlink_generation: 4,
        form_factor: FormFactor::Sxm,
        link_slots: None,
        active_links: 8,
        speed_gb_per_s: Some(26.562),
        all_inactive_can_be_normal: false,
        observed: false,
        all_of: &["H800"],
        any_of: &[],
        none_of: &["PCIE", "NVL"],
        examples: &["NVIDIA H800"],
        source: "deepseek-ai/DeepEP#16, deepseek-ai/DeepSeek-V3#28 (8 links)",
        note: "Export variant of H100 with 8 links; slot count and printed speed not captured.",
    },
    GpuNvlinkSpec {
        id: "h100-sxm",
        family: "H100 SXM5",
        nvlink_generation: 4,
        form_factor: FormFactor::Sxm,
        link_slots: Some(18),
        active_links: 18,
        speed_gb_per_s: Some(26.562),
        all_inactive_can_be_normal: false,
        observed: true,
        all_of: &["H100"],
        any_of: &[],
        none_of: &["PCIE", "NVL"],
        examples: &["NVIDIA H100 80GB HBM3", "NVIDIA H100"],
        source: "NVIDIA/nccl#1182 (`nvlink -R`: 18 links over 4 NVSwitches); NVIDIA docs",
        note: "",
    },
    GpuNvlinkSpec {
        id: "h200-sxm",
        family: "H200 SXM",
        nvlink_generation: 4,
        form_factor: FormFactor::Sxm,
        link_slots: Some(18),
        active_links: 18,
        speed_gb_per_s: Some(26.562),
        all_inactive_can_be_normal: false,
        observed: true,
        all_of: &["H200"],
        any_of: &[],
        none_of: &["PCIE", "NVL"],
        examples: &["NVIDIA H200"],
        source: "our capture h200-x2-driver580 (driver 580.159.04): 18 × `26.562 GB/s` per GPU",
        note: "Our one-GPU H200 VM (h200-x1-driver580) prints nothing: NVLink not exposed to it.",
    },
    GpuNvlinkSpec {
        id: "h20",
        family: "H20",
        nvlink_generation: 4,
        form_factor: FormFactor::Sxm,
        link_slots: Some(18),
        active_links: 18,
        speed_gb_per_s: Some(26.562),
        all_inactive_can_be_normal: false,
        observed: false,
        all_of: &["H20"],
        any_of: &[],
        none_of: &["H200", "PCIE", "NVL"],
        examples: &["NVIDIA H20"],
        source: NOTES,
        note: "Seen in documentation, not in a capture.",
    },
    GpuNvlinkSpec {
        id: "gb200",
        family: "GB200 superchip",
        nvlink_generation: 5,
        form_factor: FormFactor::Sxm,
        link_slots: Some(18),
        active_links: 18,
        speed_gb_per_s: Some(53.125),
        all_inactive_can_be_normal: false,
        observed: true,
        all_of: &["GB200"],
        any_of: &[],
        none_of: &[],
        examples: &["NVIDIA GB200"],
        source: "NVIDIA/k8s-test-infra#371 (18 × `53.125 GB/s`)",
        note: "",
    },
    GpuNvlinkSpec {
        id: "b200",
        family: "B200",
        nvlink_generation: 5,
        form_factor: FormFactor::Sxm,
        link_slots: Some(18),
        active_links: 18,
        speed_gb_per_s: Some(53.125),
        all_inactive_can_be_normal: false,
        observed: false,
        all_of: &["B200"],
        any_of: &[],
        none_of: &["GB200"],
        examples: &["NVIDIA B200"],
        source: "NVLink 5 as on GB200 (k8s-test-infra#371); leptonai/gpud#1085 shows B200's \
                 all-inactive message",
        note: "No healthy B200 `-s` capture.",
    },
];

/// The `NV#` expected between two GPUs of a system type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PairNvlinkSpec {
    /// The system (`HGX/DGX H100 8-GPU`).
    pub system: &'static str,
    /// [`GpuNvlinkSpec::id`]s this applies to.
    pub gpus: &'static [&'static str],
    /// Number of GPUs in the system.
    pub gpu_count: u32,
    /// `NV#` between every pair; `None` when it varies by pair (DGX-1V).
    pub links_per_pair: Option<u32>,
    /// True when a real capture confirmed the entry.
    pub observed: bool,
    /// Where the value comes from.
    pub source: &'static str,
    /// Anything a rule author must know.
    pub note: &'static str,
}

/// The entry for `gpu_count` GPUs named `gpu_name`, if the table has one.
#[must_use]
pub fn pair_nvlink_expectation(gpu_name: &str, gpu_count: u32) -> Option<&'static PairNvlinkSpec> {
    let gpu = gpu_nvlink_expectation(gpu_name)?;
    PAIRS
        .iter()
        .find(|p| p.gpu_count == gpu_count && p.gpus.contains(&gpu.id))
}

/// Known system types.
pub static PAIRS: &[PairNvlinkSpec] = &[
    PairNvlinkSpec {
        system: "DGX-1V hybrid cube-mesh",
        gpus: &["v100-sxm"],
        gpu_count: 8,
        links_per_pair: None,
        observed: true,
        source: "a DGX-1 `topo -m` capture (research notes)",
        note: "`NV1` and `NV2` mixed, and some pairs `SYS`: judge against the reference mesh or peers.",
    },
    PairNvlinkSpec {
        system: "DGX-2 (NVSwitch)",
        gpus: &["v100-sxm"],
        gpu_count: 16,
        links_per_pair: Some(6),
        observed: true,
        source: "NVIDIA/nccl-tests#78 (DGX-2 `topo -m`)",
        note: "",
    },
    PairNvlinkSpec {
        system: "HGX A100 4-GPU",
        gpus: &["a100-sxm"],
        gpu_count: 4,
        links_per_pair: Some(4),
        observed: true,
        source: NOTES,
        note: "Direct links, no NVSwitch.",
    },
    PairNvlinkSpec {
        system: "DGX/HGX A100 8-GPU (NVSwitch)",
        gpus: &["a100-sxm"],
        gpu_count: 8,
        links_per_pair: Some(12),
        observed: true,
        source: NOTES,
        note: "",
    },
    PairNvlinkSpec {
        system: "HGX A800 8-GPU",
        gpus: &["a800-sxm"],
        gpu_count: 8,
        links_per_pair: Some(8),
        observed: true,
        source: NOTES,
        note: "",
    },
    PairNvlinkSpec {
        system: "HGX H100 4-GPU",
        gpus: &["h100-sxm"],
        gpu_count: 4,
        links_per_pair: Some(6),
        observed: true,
        source: NOTES,
        note: "Direct links, no NVSwitch.",
    },
    PairNvlinkSpec {
        system: "DGX/HGX 8-GPU Hopper or Blackwell (NVSwitch)",
        gpus: &["h100-sxm", "h200-sxm", "h20", "b200"],
        gpu_count: 8,
        links_per_pair: Some(18),
        observed: true,
        source: NOTES,
        note: "vllm-project/vllm#16336 shows a B200 host where one GPU lost all NV18 cells.",
    },
    PairNvlinkSpec {
        system: "2 × H200 SXM (VM share of an NVSwitch board)",
        gpus: &["h200-sxm"],
        gpu_count: 2,
        links_per_pair: Some(18),
        observed: true,
        source: "our capture h200-x2-driver580 (topo_m.txt: NV18)",
        note: "`nvlink -p` shows FFFFFFFF:FF:FF.0: the switches are hidden from the VM.",
    },
    PairNvlinkSpec {
        system: "2 × H100 PCIe with NVLink bridge",
        gpus: &["h100-pcie", "h100-nvl"],
        gpu_count: 2,
        links_per_pair: Some(12),
        observed: true,
        source: "HPE-Japan-Presales/e-learning gpu/h100 (`topo -m`: NV12)",
        note: "Without the bridge the pair shows a PCIe path (PIX/PXB/NODE/SYS), which is normal.",
    },
    PairNvlinkSpec {
        system: "2 × GA102 with NVLink bridge",
        gpus: &["ga102-bridge"],
        gpu_count: 2,
        links_per_pair: Some(4),
        observed: true,
        source: "RTX 3090 bridge capture (research notes)",
        note: "Without the bridge the pair shows a PCIe path, which is normal.",
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_example_name_finds_its_own_entry_first() {
        for spec in GPUS {
            for name in spec.examples {
                let found = gpu_nvlink_expectation(name).map(|s| s.id);
                assert_eq!(found, Some(spec.id), "{name}");
            }
        }
    }

    #[test]
    fn names_without_nvlink_entries_find_nothing() {
        for name in [
            "NVIDIA RTX 6000 Ada Generation",
            "NVIDIA A400",
            "Tesla V100-PCIE-16GB",
            "NVIDIA H200 NVL",
            "NVIDIA GeForce RTX 4090",
            "Tesla T4",
            "NVIDIA A400",
            "NVIDIA A4000",
        ] {
            assert_eq!(gpu_nvlink_expectation(name).map(|s| s.id), None, "{name}");
        }
    }

    #[test]
    fn entries_are_sourced_and_consistent() {
        let mut ids = std::collections::HashSet::new();
        for spec in GPUS {
            assert!(ids.insert(spec.id), "duplicate id {}", spec.id);
            assert!(!spec.source.trim().is_empty(), "{}", spec.id);
            assert!(!spec.examples.is_empty(), "{}", spec.id);
            if let Some(slots) = spec.link_slots {
                assert!(spec.active_links <= slots, "{}", spec.id);
            }
            assert_eq!(
                spec.all_inactive_can_be_normal,
                spec.form_factor == FormFactor::PcieBridge,
                "{}",
                spec.id
            );
            let upper_only = spec
                .all_of
                .iter()
                .chain(spec.any_of)
                .chain(spec.none_of)
                .all(|s| *s == s.to_ascii_uppercase());
            assert!(upper_only, "{}: patterns must be upper case", spec.id);
        }
        for pair in PAIRS {
            assert!(!pair.source.trim().is_empty(), "{}", pair.system);
            for id in pair.gpus {
                let gpu = GPUS.iter().find(|g| g.id == *id);
                let gpu = gpu.unwrap_or_else(|| panic!("{}: unknown gpu id {id}", pair.system));
                if let Some(n) = pair.links_per_pair {
                    assert!(
                        n <= gpu.active_links,
                        "{}: NV{n} > {} links",
                        pair.system,
                        gpu.active_links
                    );
                }
            }
        }
    }

    #[test]
    fn patterns_are_matched_as_words() {
        assert!(contains_word("NVIDIA A40", "A40"));
        assert!(contains_word("NVIDIA A40-48Q", "A40"));
        assert!(!contains_word("NVIDIA A400", "A40"));
        assert!(!contains_word("NVIDIA GB200", "B200"));
        assert!(contains_word("TESLA V100-SXM2-16GB", "SXM"));
        assert!(!contains_word("NVIDIA H200", "H20"));
    }

    #[test]
    fn speeds_as_printed_and_truncation_tolerance() {
        let h200 = gpu_nvlink_expectation("NVIDIA H200").unwrap();
        assert_eq!((h200.active_links, h200.speed_gb_per_s), (18, Some(26.562)));
        assert_eq!(h200.is_full_speed(26.562), Some(true));
        assert_eq!(h200.is_full_speed(26.5625), Some(true));
        assert_eq!(h200.is_full_speed(25.781), Some(false));
        let v100 = gpu_nvlink_expectation("Tesla V100-SXM2-16GB").unwrap();
        assert_eq!((v100.active_links, v100.speed_gb_per_s), (6, Some(25.781)));
        let gb200 = gpu_nvlink_expectation("NVIDIA GB200").unwrap();
        assert_eq!(gb200.speed_gb_per_s, Some(53.125));
        let pcie = gpu_nvlink_expectation("NVIDIA H100 PCIe").unwrap();
        assert_eq!((pcie.link_slots, pcie.active_links), (Some(18), 12));
        assert!(pcie.all_inactive_can_be_normal);
        let p100 = gpu_nvlink_expectation("Tesla P100-SXM2-16GB").unwrap();
        assert_eq!(p100.is_full_speed(20.0), None);
    }

    #[test]
    fn pair_expectations_by_system_size() {
        let nv =
            |name: &str, n: u32| pair_nvlink_expectation(name, n).and_then(|p| p.links_per_pair);
        assert_eq!(nv("NVIDIA H200", 2), Some(18));
        assert_eq!(nv("NVIDIA H100 80GB HBM3", 8), Some(18));
        assert_eq!(nv("NVIDIA H100 80GB HBM3", 4), Some(6));
        assert_eq!(nv("NVIDIA A100-SXM4-80GB", 8), Some(12));
        assert_eq!(nv("NVIDIA H100 PCIe", 2), Some(12));
        assert_eq!(nv("NVIDIA GeForce RTX 3090", 2), Some(4));
        assert!(pair_nvlink_expectation("Tesla V100-SXM2-16GB", 8).is_some());
        assert_eq!(nv("Tesla V100-SXM2-16GB", 8), None);
        assert!(pair_nvlink_expectation("NVIDIA H200", 3).is_none());
        assert!(pair_nvlink_expectation("Tesla T4", 2).is_none());
    }
}
