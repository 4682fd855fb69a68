//! A GPU's PCIe link as `nvidia-smi` reports it, in one vocabulary for
//! `-q` text, `-q -x` XML and `--query-gpu … --format=csv`.
//!
//! NVML gives two readings per link: the generation and width it runs at
//! now (`Current`), and the most "possible with this GPU and system
//! configuration" (`Max`: a Gen5 x16 GPU in a Gen4 x8 slot reports Gen4
//! x8). A current below the max is the link trained down, or the driver
//! saving power: the current values "may be reduced when the GPU is not in
//! use" (`nvidia-smi --help-query-gpu`). So the GPU's utilization in the
//! same reading is kept with the link: only a busy GPU's link is evidence.

use super::smi_csv::{CsvRow, SmiCsv};
use super::smi_query::{Field, QueryGpu};
use crate::span::LineSpan;

/// One reading of a GPU's PCIe link.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PcieLink {
    /// PCIe generation the link runs at now.
    pub gen_current: Option<u32>,
    /// Highest generation the GPU and the system allow.
    pub gen_max: Option<u32>,
    /// Lanes the link runs with now.
    pub width_current: Option<u32>,
    /// Most lanes the GPU and the slot allow.
    pub width_max: Option<u32>,
    /// GPU utilization in percent, in the same reading, when printed.
    pub utilization_percent: Option<f64>,
    /// The lines of the link values.
    pub link_lines: LineSpan,
    /// The line of the utilization, when printed.
    pub utilization_line: Option<usize>,
}

/// `5`, `16x`, `x16` or `16` (any spacing) as a number; `N/A` and the like
/// are `None`.
fn small_number(text: &str) -> Option<u32> {
    let t = text.trim().trim_end_matches(['x', 'X']).trim();
    let t = t.trim_start_matches(['x', 'X']);
    t.parse().ok()
}

/// `97 %` or `97` as a number.
fn percent(text: &str) -> Option<f64> {
    text.trim()
        .trim_end_matches('%')
        .trim()
        .parse()
        .ok()
        .filter(|p: &f64| p.is_finite())
}

/// Text and XML spellings of the fields, as `Field::find_in` paths.
const PCI: &[&str] = &["PCI", "pci"];
const LINK_INFO: &[&str] = &["GPU Link Info", "pci_gpu_link_info"];
const GENERATION: &[&str] = &["PCIe Generation", "pcie_gen"];
const WIDTH: &[&str] = &["Link Width", "link_widths"];
const GEN_CURRENT: &[&str] = &["Current", "current_link_gen"];
const GEN_MAX: &[&str] = &["Max", "max_link_gen"];
const WIDTH_CURRENT: &[&str] = &["Current", "current_link_width"];
const WIDTH_MAX: &[&str] = &["Max", "max_link_width"];
const UTILIZATION: &[&str] = &["Utilization", "utilization"];
const GPU_UTIL: &[&str] = &["GPU", "Gpu", "gpu_util"];

impl PcieLink {
    /// The link of one `nvidia-smi -q` GPU block, when the block printed
    /// any of its four values.
    #[must_use]
    pub fn of_query(gpu: &QueryGpu) -> Option<Self> {
        let field = |group: &[&str], leaf: &[&str]| gpu.field(&[PCI, LINK_INFO, group, leaf]);
        let fields: [Option<&Field>; 4] = [
            field(GENERATION, GEN_CURRENT),
            field(GENERATION, GEN_MAX),
            field(WIDTH, WIDTH_CURRENT),
            field(WIDTH, WIDTH_MAX),
        ];
        let value = |f: Option<&Field>| f.and_then(|f| small_number(f.value.as_deref()?));
        let [gen_current, gen_max, width_current, width_max] = fields.map(value);
        if [gen_current, gen_max, width_current, width_max]
            .iter()
            .all(Option::is_none)
        {
            return None;
        }
        let link_lines = fields
            .iter()
            .flatten()
            .map(|f| LineSpan::line(f.line))
            .reduce(LineSpan::join)?;
        let util = gpu.field(&[UTILIZATION, GPU_UTIL]);
        Some(Self {
            gen_current,
            gen_max,
            width_current,
            width_max,
            utilization_percent: util.and_then(|f| percent(f.value.as_deref()?)),
            link_lines,
            utilization_line: util.map(|f| f.line),
        })
    }

    /// The link in one row of `--query-gpu` CSV, when the query asked for
    /// any of its four values.
    #[must_use]
    pub fn of_csv_row(csv: &SmiCsv, row: &CsvRow) -> Option<Self> {
        let number = |name: &str| {
            csv.value(row, name)
                .filter(|v| !v.is_missing())
                .and_then(|v| small_number(&v.text))
        };
        let asked = [
            "pcie.link.gen.current",
            "pcie.link.gen.gpucurrent",
            "pcie.link.gen.max",
            "pcie.link.width.current",
            "pcie.link.width.max",
        ]
        .iter()
        .any(|name| csv.column(name).is_some());
        if !asked {
            return None;
        }
        let utilization_percent = csv
            .value(row, "utilization.gpu")
            .filter(|v| !v.is_missing())
            .and_then(|v| v.number.or_else(|| percent(&v.text)));
        Some(Self {
            // `gpucurrent` is the newer name of `current`.
            gen_current: number("pcie.link.gen.gpucurrent")
                .or_else(|| number("pcie.link.gen.current")),
            // `max` is what the GPU and the root port both allow; `gpumax`
            // alone is the GPU's (a Gen5 GPU in a Gen4 host runs Gen4 by
            // design), so it counts only with `hostmax` beside it.
            gen_max: number("pcie.link.gen.max").or_else(|| {
                number("pcie.link.gen.gpumax")
                    .zip(number("pcie.link.gen.hostmax"))
                    .map(|(gpu, host)| gpu.min(host))
            }),
            width_current: number("pcie.link.width.current"),
            width_max: number("pcie.link.width.max"),
            utilization_percent,
            link_lines: LineSpan::line(row.line),
            utilization_line: utilization_percent.map(|_| row.line),
        })
    }

    /// Generation and width both read, each at its max: the link runs as
    /// fast as it can, whatever the GPU's load (an idle GPU's link is
    /// lowered, never raised).
    #[must_use]
    pub fn is_at_max(&self) -> bool {
        let at = |current: Option<u32>, max: Option<u32>| {
            current.zip(max).is_some_and(|(c, m)| c >= m && c > 0)
        };
        at(self.gen_current, self.gen_max) && at(self.width_current, self.width_max)
    }

    /// Whether the link runs below what the GPU and the system allow, in
    /// generation or in width (only where both values were read).
    #[must_use]
    pub fn is_below_max(&self) -> bool {
        let below = |current: Option<u32>, max: Option<u32>| {
            current.zip(max).is_some_and(|(c, m)| c < m && c > 0)
        };
        below(self.gen_current, self.gen_max) || below(self.width_current, self.width_max)
    }

    /// Usable bandwidth in GB/s per direction of `gen` × `width`: the
    /// signalling rate per lane less its line encoding (8b/10b up to Gen2,
    /// 128b/130b from Gen3; Gen6's FLIT mode counted like Gen5's encoding,
    /// an upper bound). `None` for a generation this version does not know.
    #[must_use]
    pub fn gbytes_per_second(gen: u32, width: u32) -> Option<f64> {
        let (gigatransfers, encoding) = match gen {
            1 => (2.5, 8.0 / 10.0),
            2 => (5.0, 8.0 / 10.0),
            3 => (8.0, 128.0 / 130.0),
            4 => (16.0, 128.0 / 130.0),
            5 => (32.0, 128.0 / 130.0),
            6 => (64.0, 128.0 / 130.0),
            _ => return None,
        };
        Some(gigatransfers * encoding * f64::from(width) / 8.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_in_every_spelling() {
        assert_eq!(small_number("16x"), Some(16));
        assert_eq!(small_number(" x8 "), Some(8));
        assert_eq!(small_number("5"), Some(5));
        assert_eq!(small_number("N/A"), None);
        assert_eq!(small_number(""), None);
        assert_eq!(percent("97 %"), Some(97.0));
        assert_eq!(percent("[N/A]"), None);
    }

    #[test]
    fn below_max_needs_both_values() {
        let link = |gc, gm, wc, wm| PcieLink {
            gen_current: gc,
            gen_max: gm,
            width_current: wc,
            width_max: wm,
            utilization_percent: None,
            link_lines: LineSpan::line(1),
            utilization_line: None,
        };
        assert!(link(Some(5), Some(5), Some(8), Some(16)).is_below_max());
        assert!(link(Some(3), Some(5), Some(16), Some(16)).is_below_max());
        assert!(!link(Some(5), Some(5), Some(16), Some(16)).is_below_max());
        assert!(!link(None, Some(5), Some(16), None).is_below_max());
        // A zero is no reading of a trained link.
        assert!(!link(Some(0), Some(5), None, None).is_below_max());
    }

    #[test]
    fn bandwidth_follows_generation_and_width() {
        let gen5x16 = PcieLink::gbytes_per_second(5, 16).unwrap_or_default();
        let gen5x8 = PcieLink::gbytes_per_second(5, 8).unwrap_or_default();
        let gen1x16 = PcieLink::gbytes_per_second(1, 16).unwrap_or_default();
        // PCI-SIG: Gen5 x16 ≈ 63 GB/s per direction, Gen1 x16 = 4 GB/s.
        assert!((gen5x16 - 63.0).abs() < 0.1, "{gen5x16}");
        assert!((gen1x16 - 4.0).abs() < 1e-9, "{gen1x16}");
        assert!((gen5x16 / gen5x8 - 2.0).abs() < 1e-9);
        assert_eq!(PcieLink::gbytes_per_second(9, 16), None);
    }
}
