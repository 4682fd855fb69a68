//! Parsers: one module per tool output format, and the registry that lists them.
//!
//! # Adding a format
//! Two files plus fixtures:
//! 1. `src/model/<tool>.rs`: the typed model (serde `Serialize`), added to
//!    `src/model/mod.rs`.
//! 2. `src/parse/<tool>.rs`: `pub fn parse(lines: &[Line<'_>]) -> Parsed<Model>`,
//!    `pub fn summary(&Model) -> String`, a `detect` function and a
//!    `pub(crate) const FORMAT: Spec<Model>`; then one `mod` line above and
//!    one line in the `formats!` table below (name, model, spec).
//!
//! Everything else follows from the table: [`Kind`], [`SectionData`], the
//! input layer's detection and its host-prefix labels, the `format` fuzz
//! target and its corpus replay, the JSON kind list in `docs/json.md` and
//! the JSON shape check (both tests name what is missing). Fixtures go under
//! `tests/fixtures/`, with their provenance; rules that use the new model read
//! it through `rules::Context`.
//!
//! Every parser is lenient: it keeps what it could read and returns a
//! [`Warning`] for every non-blank line it could not use. nom stays an internal
//! detail of the modules; the public API speaks only of our types.

pub mod date;
pub mod dcgm_exporter;
pub mod dcgmi_diag;
pub mod dcgmi_nvlink;
pub mod dmon;
pub mod ibdev2netdev;
pub mod ibdiagnet_log;
pub mod ibdiagnet_pm;
pub mod iblinkinfo;
pub mod ibnetdiscover;
pub mod ibqueryerrors;
pub mod ibstat;
pub mod ibstatus;
pub mod ibswinfo;
pub mod ibv_devinfo;
pub mod kernel_log;
pub(crate) mod kernel_pcie;
pub mod mlxcables;
pub mod mlxlink;
pub mod mst_status;
pub mod nccl_log;
pub mod node_exporter;
pub mod nvlink;
pub mod perfquery;
pub mod portinfo;
pub(crate) mod prometheus;
pub mod rdma_link;
pub mod show_gids;
pub mod smi_csv;
pub mod smi_list;
pub mod smi_query;
pub mod smi_table;
pub mod sminfo;
pub mod sysfs_counters;
pub(crate) mod text;
pub mod timestamp;
pub mod topo;

use crate::diag::Warning;
use crate::span::LineSpan;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// One line of input, after cleaning, with its original line number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line<'a> {
    /// Line number in the original input (1-based).
    pub number: usize,
    /// The text with line ending, ANSI escapes and any host prefix removed.
    pub text: Cow<'a, str>,
}

impl<'a> Line<'a> {
    /// A line borrowed from the input.
    #[must_use]
    pub fn new(number: usize, text: &'a str) -> Self {
        Self {
            number,
            text: Cow::Borrowed(text),
        }
    }

    /// The line's text.
    #[must_use]
    pub fn text(&self) -> &str {
        &self.text
    }

    /// True for a line holding only white space.
    #[must_use]
    pub fn is_blank(&self) -> bool {
        is_blank(&self.text)
    }

    /// This line as a span.
    #[must_use]
    pub fn span(&self) -> LineSpan {
        LineSpan::line(self.number)
    }
}

/// True for text holding only white space (`str::trim` would leave
/// nothing). Decides on the first byte that is not ASCII white space
/// without decoding characters; Unicode white space takes the slow path.
pub(crate) fn is_blank(text: &str) -> bool {
    match text
        .bytes()
        .position(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c))
    {
        None => true,
        Some(i) if text.as_bytes().get(i).is_some_and(u8::is_ascii) => false,
        Some(i) => text.get(i..).is_some_and(|rest| rest.trim().is_empty()),
    }
}

/// Splits text into numbered lines, dropping `\r` and ANSI escapes, for callers
/// who hand a single tool's output straight to a parser.
#[must_use]
pub fn lines_of(text: &str) -> Vec<Line<'_>> {
    text.lines()
        .enumerate()
        .map(|(i, raw)| Line {
            number: i + 1,
            text: crate::input::clean::clean_line(raw),
        })
        .collect()
}

/// What a parser read, and what it could not.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Parsed<T> {
    /// Everything that could be read.
    pub value: T,
    /// Lines that could not be read and other problems, with line numbers.
    pub warnings: Vec<Warning>,
}

impl<T> Parsed<T> {
    /// Each warning's first line and kind, in order: what the parsers'
    /// tests compare.
    #[cfg(test)]
    pub(crate) fn warning_lines(&self) -> Vec<(usize, crate::diag::WarningKind)> {
        self.warnings
            .iter()
            .map(|w| (w.span.first_line, w.kind))
            .collect()
    }

    /// A value with no warnings.
    pub fn clean(value: T) -> Self {
        Self {
            value,
            warnings: Vec::new(),
        }
    }

    /// Strict mode: the value only if every line was read without trouble.
    ///
    /// # Errors
    /// Returns the warnings when there is at least one.
    pub fn into_result(self) -> Result<T, Vec<Warning>> {
        if self.warnings.is_empty() {
            Ok(self.value)
        } else {
            Err(self.warnings)
        }
    }

    /// Converts the value, keeping the warnings.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Parsed<U> {
        Parsed {
            value: f(self.value),
            warnings: self.warnings,
        }
    }
}

/// The one list of supported formats: each line names the [`Kind`] variant
/// (also the [`SectionData`] variant), its JSON name, its model type and the
/// [`Spec`] that recognises and reads it. Order matters only for detection:
/// formats are tried top to bottom on each line.
macro_rules! formats {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal, $model:ty, $spec:path; )*) => {
        /// Which tool printed a section.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[non_exhaustive]
        pub enum Kind {
            $( $(#[$doc])* #[serde(rename = $name)] $variant, )*
        }

        impl Kind {
            /// Every kind, in detection order.
            pub const ALL: &'static [Kind] = &[$(Kind::$variant),*];

            /// The name used in JSON and on the command line.
            #[must_use]
            pub fn name(self) -> &'static str {
                match self { $(Kind::$variant => $name,)* }
            }
        }

        /// The parsed content of a section; the variant matches the section's [`Kind`].
        #[derive(Debug, Clone, PartialEq, Serialize)]
        #[serde(untagged)]
        #[non_exhaustive]
        pub enum SectionData {
            $( $(#[$doc])* $variant($model), )*
        }

        impl SectionData {
            /// The kind of tool output this is.
            #[must_use]
            pub fn kind(&self) -> Kind {
                match self { $(Self::$variant(_) => Kind::$variant,)* }
            }

            /// A one-line description for people (`2 CAs, 2 ports: 1 Active, 1 Down`).
            #[must_use]
            pub fn summary(&self) -> String {
                match self { $(Self::$variant(v) => ($spec.summary)(v),)* }
            }

            /// Completes what only the command line tells: the field names of
            /// `--format=csv,noheader`, the capability of `topo -p2p`, the field
            /// ids of `dcgmi dmon -e`. `argv` is the command's words as the
            /// input layer found them after the prompt.
            pub(crate) fn attach_command(&mut self, argv: &[&str]) {
                match self {
                    $(Self::$variant(v) => {
                        if let Some(attach) = $spec.attach_command {
                            attach(v, argv);
                        }
                    })*
                }
            }
        }

        impl SectionData {
            /// Reads the JSON of a section's `data` as the model of `kind`
            /// (the inverse of serialising it; the JSON carries no tag).
            ///
            /// # Errors
            /// When the value is not that model.
            pub fn from_json(kind: Kind, value: serde_json::Value) -> Result<Self, serde_json::Error> {
                match kind { $(Kind::$variant => serde_json::from_value::<$model>(value).map(Self::$variant),)* }
            }
        }

        /// Reads `lines` as the output of the tool that prints `kind`,
        /// whatever detection would say: for callers who know what they
        /// hold, and for the fuzz target that runs every format.
        #[must_use]
        pub fn parse_as(kind: Kind, lines: &[Line<'_>]) -> Parsed<SectionData> {
            match kind { $(Kind::$variant => ($spec.parse)(lines).map(SectionData::$variant),)* }
        }

        /// Every supported format, in the order detection tries them.
        pub(crate) static FORMATS: &[Format] = &[
            $(Format {
                kind: Kind::$variant,
                name: $name,
                command: $spec.command,
                starts: $spec.starts,
                detect: $spec.detect,
                parse: |lines| ($spec.parse)(lines).map(SectionData::$variant),
                labels: $spec.labels,
            },)*
        ];
    };
}

formats! {
    /// `ibstat` in any form.
    Ibstat = "ibstat", crate::model::ibstat::Ibstat, ibstat::FORMAT;
    /// `ibstatus`.
    Ibstatus = "ibstatus", crate::model::ibstatus::Ibstatus, ibstatus::FORMAT;
    /// `rdma link show`.
    RdmaLink = "rdma_link", crate::model::rdma_link::RdmaLink, rdma_link::FORMAT;
    /// `ibdev2netdev`, plain or `-v`.
    Ibdev2netdev = "ibdev2netdev", crate::model::ibdev2netdev::Ibdev2netdev, ibdev2netdev::FORMAT;
    /// `show_gids` (OFED): each RDMA port's GID table entries, RoCE version and interface.
    ShowGids = "show_gids", crate::model::show_gids::ShowGids, show_gids::FORMAT;
    /// `mst status` (MFT), plain or `-v`: each adapter's MST device and PCI function (with `-v` its
    /// RDMA device, interfaces and NUMA node), and the cable devices.
    MstStatus = "mst_status", crate::model::mst_status::MstStatus, mst_status::FORMAT;
    /// `mlxcables` (MFT): each cable's EEPROM identity, length and temperature.
    Mlxcables = "mlxcables", crate::model::mlxcables::Mlxcables, mlxcables::FORMAT;
    /// `sminfo`: the subnet manager a port reaches.
    Sminfo = "sminfo", crate::model::sminfo::Sminfo, sminfo::FORMAT;
    /// `ibv_devinfo`, plain, `-v` or `-l`.
    IbvDevinfo = "ibv_devinfo", crate::model::ibv_devinfo::IbvDevinfo, ibv_devinfo::FORMAT;
    /// `iblinkinfo` in any form.
    Iblinkinfo = "iblinkinfo", crate::model::iblinkinfo::Iblinkinfo, iblinkinfo::FORMAT;
    /// `ibnetdiscover`: topology file or `-p`.
    Ibnetdiscover = "ibnetdiscover", crate::model::ibnetdiscover::Ibnetdiscover, ibnetdiscover::FORMAT;
    /// `ibswinfo`: an unmanaged switch's vitals.
    Ibswinfo = "ibswinfo", crate::model::ibswinfo::Ibswinfo, ibswinfo::FORMAT;
    /// `nvidia-smi nvlink` in any read-only mode.
    Nvlink = "nvlink", crate::model::nvlink::Nvlink, nvlink::FORMAT;
    /// `perfquery`, any attribute.
    Perfquery = "perfquery", crate::model::perfquery::Perfquery, perfquery::FORMAT;
    /// `ibportstate` and `smpquery portinfo`: one port's PortInfo.
    Portinfo = "portinfo", crate::model::portinfo::Portinfo, portinfo::FORMAT;
    /// Linux sysfs port counter files (`grep -H . /sys/class/infiniband/*/ports/*/counters/*`,
    /// `head`/`tail` banners, a shell loop's `=== file ===`), read as perfquery's PortCounters.
    SysfsCounters = "sysfs_counters", crate::model::perfquery::Perfquery, sysfs_counters::FORMAT;
    /// NVIDIA dcgm-exporter's `DCGM_FI_*` GPU metrics (a scrape or a query's
    /// result across hosts): last Xid, row remap, ECC and NVLink totals per GPU.
    DcgmExporter = "dcgm_exporter", crate::model::dcgm_exporter::DcgmExporter, dcgm_exporter::FORMAT;
    /// Prometheus node_exporter's `node_infiniband_*` metrics (a scrape or a
    /// query's result across hosts): counters read as perfquery's PortCounters.
    NodeExporter = "node_exporter", crate::model::node_exporter::NodeExporter, node_exporter::FORMAT;
    /// ibdiagnet's port counter dump `ibdiagnet2.pm` (`Port=N Lid=… GUID=…` blocks of
    /// `name=value` lines) for the whole fabric, read as perfquery's PortCounters.
    IbdiagnetPm = "ibdiagnet_pm", crate::model::perfquery::Perfquery, ibdiagnet_pm::FORMAT;
    /// ibdiagnet's console output or `ibdiagnet2.log`: links below their enabled
    /// speed/width, counters it flagged, its summary table.
    IbdiagnetLog = "ibdiagnet_log", crate::model::ibdiagnet_log::IbdiagnetLog, ibdiagnet_log::FORMAT;
    /// `ibqueryerrors` node reports and summary.
    Ibqueryerrors = "ibqueryerrors", crate::model::ibqueryerrors::Ibqueryerrors, ibqueryerrors::FORMAT;
    /// `nvidia-smi topo -m` / `-mp`.
    TopoMatrix = "topo_matrix", crate::model::topo::TopoMatrix, topo::FORMAT;
    /// `nvidia-smi topo -p2p r|w|n|a|p`.
    TopoP2p = "topo_p2p", crate::model::topo::TopoP2p, topo::P2P_FORMAT;
    /// `nvidia-smi -q` (text or `-x` XML).
    SmiQuery = "smi_query", crate::model::smi_query::SmiQuery, smi_query::FORMAT;
    /// `nvidia-smi --query-gpu=… --format=csv`.
    SmiCsv = "smi_csv", crate::model::smi_csv::SmiCsv, smi_csv::FORMAT;
    /// `nvidia-smi` without arguments: the boxed summary table.
    SmiTable = "smi_table", crate::model::smi_table::SmiTable, smi_table::FORMAT;
    /// `nvidia-smi -L`.
    SmiList = "smi_list", crate::model::smi_list::SmiList, smi_list::FORMAT;
    /// `nvidia-smi dmon` / `pmon`.
    SmiDmon = "smi_dmon", crate::model::dmon::Monitor, dmon::SMI_FORMAT;
    /// `dcgmi dmon`.
    DcgmiDmon = "dcgmi_dmon", crate::model::dmon::Monitor, dmon::DCGMI_FORMAT;
    /// `dcgmi nvlink -s`.
    DcgmiNvlinkStatus = "dcgmi_nvlink_status", crate::model::dcgmi_nvlink::DcgmiLinkStatus, dcgmi_nvlink::STATUS_FORMAT;
    /// `dcgmi nvlink -e`.
    DcgmiNvlinkErrors = "dcgmi_nvlink_errors", crate::model::dcgmi_nvlink::DcgmiNvlinkErrors, dcgmi_nvlink::ERRORS_FORMAT;
    /// `dcgmi diag -r N`.
    DcgmiDiag = "dcgmi_diag", crate::model::dcgmi_diag::DcgmiDiag, dcgmi_diag::DIAG_FORMAT;
    /// `dcgmi health -c`.
    DcgmiHealth = "dcgmi_health", crate::model::dcgmi_diag::DcgmiHealth, dcgmi_diag::HEALTH_FORMAT;
    /// `mlxlink -d <device>`.
    Mlxlink = "mlxlink", crate::model::mlxlink::Mlxlink, mlxlink::FORMAT;
    /// NVIDIA Xid and NVSwitch SXid lines of a kernel log (`dmesg`,
    /// `journalctl -k`, syslog), other kernel messages beside them counted.
    KernelLog = "kernel_log", crate::model::kernel_log::KernelLog, kernel_log::FORMAT;
    /// `date`: a wall-clock time between snapshots.
    Date = "date", crate::model::date::Date, date::FORMAT;
    /// NCCL's debug log (`NCCL_DEBUG=INFO`/`WARN`): `host:pid:tid [dev] NCCL INFO …`.
    NcclLog = "nccl_log", crate::model::nccl_log::NcclLog, nccl_log::FORMAT;
}

/// How the input layer recognises a block of output: the identity of the
/// block (a CA name, a GPU index, a port), so that a second block with the
/// same identity starts a new section (a second snapshot) instead of merging.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Block {
    pub key: String,
    /// For outputs of a known, fixed number of non-blank lines (`date`
    /// prints one): the section ends there, so text that follows is not
    /// swallowed by it (the table under `nvidia-smi`'s own time stamp).
    pub lines: Option<usize>,
}

impl Block {
    pub(crate) fn keyed(key: impl Into<String>) -> Self {
        Self {
            key: key.into(),
            lines: None,
        }
    }

    /// A block of exactly `lines` non-blank lines.
    pub(crate) fn of_lines(key: impl Into<String>, lines: usize) -> Self {
        Self {
            key: key.into(),
            lines: Some(lines),
        }
    }
}

/// How one tool output format is recognised and read: what a parser module
/// declares (as its `FORMAT` constant) and the `formats!` table lists.
pub(crate) struct Spec<M: 'static> {
    /// Whether a shell command (words after wrappers such as `sudo`, with the
    /// program's base name first) prints this format.
    pub command: fn(&[&str]) -> bool,
    /// Whether a block of this format can start on a line whose first byte
    /// after leading white space is this one: a necessary condition of
    /// `detect`, checked first so that a line meets only the detectors of
    /// the formats it could open (`L` of `Link 0: …` runs nvlink's, not
    /// ibstat's). Must hold wherever `detect` finds a block — the
    /// `starts_admits_every_detected_block` test checks it on every fixture;
    /// [`any_byte`] for formats without such a byte.
    pub starts: fn(u8) -> bool,
    /// Whether a block of this format starts at `lines[0]` (looking ahead as
    /// needed). Must be cheap and specific: it runs on every line whose
    /// first byte `starts` admits.
    pub detect: fn(&[Line<'_>]) -> Option<Block>,
    /// Reads a section of this format.
    pub parse: fn(&[Line<'_>]) -> Parsed<M>,
    /// A one-line description of what was read.
    pub summary: fn(&M) -> String,
    /// Completes the model from the command's words, when the output alone
    /// does not say everything (`--format=csv,noheader` field names).
    pub attach_command: Option<fn(&mut M, &[&str])>,
    /// Lower-case labels the tool prints at column 0 as `Label: value`, so
    /// that the input layer never takes them for a `pdsh` host prefix.
    pub labels: &'static [&'static str],
}

/// A format with its model erased: what the input layer works with.
pub(crate) struct Format {
    /// The kind of section this format produces.
    pub kind: Kind,
    /// Name used in JSON (`"ibstat"`), equal to the serde name of `kind`.
    pub name: &'static str,
    /// See [`Spec::command`].
    pub command: fn(&[&str]) -> bool,
    /// See [`Spec::starts`].
    pub starts: fn(u8) -> bool,
    /// See [`Spec::detect`].
    pub detect: fn(&[Line<'_>]) -> Option<Block>,
    /// Reads a section of this format.
    pub parse: fn(&[Line<'_>]) -> Parsed<SectionData>,
    /// See [`Spec::labels`].
    pub labels: &'static [&'static str],
}

/// [`Spec::starts`] of a format whose blocks may begin with any byte.
pub(crate) fn any_byte(_: u8) -> bool {
    true
}

/// The first byte of `text` after leading white space (`None` for a blank
/// line): what [`Spec::starts`] is asked about.
pub(crate) fn first_byte(text: &str) -> Option<u8> {
    text.trim_start().as_bytes().first().copied()
}

// One bit per format in `formats_starting_with`.
const _: () = assert!(Kind::ALL.len() <= 64);

/// For each byte, the formats of [`FORMATS`] whose blocks may start with it
/// (bit `i` for `FORMATS[i]`), built once from their [`Spec::starts`].
pub(crate) fn formats_starting_with(b: u8) -> u64 {
    static TABLE: std::sync::OnceLock<[u64; 256]> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut table = [0u64; 256];
        for (byte, slot) in (0..=255u8).zip(table.iter_mut()) {
            for (i, format) in FORMATS.iter().enumerate().take(64) {
                if (format.starts)(byte) {
                    *slot |= 1 << i;
                }
            }
        }
        table
    });
    table.get(usize::from(b)).copied().unwrap_or(u64::MAX)
}

impl Kind {
    /// The kind whose JSON name is `name` (`"topo_matrix"`).
    #[must_use]
    pub fn from_name(name: &str) -> Option<Kind> {
        Kind::ALL.iter().copied().find(|k| k.name() == name)
    }
}

/// The body of the `format` fuzz target and of its corpus replay: the first
/// line names a format of the registry (`ibstat`) and the rest is read as
/// its output, then rendered back where a renderer exists; input whose first
/// line names no format is read by every format. A new format in the
/// registry is fuzzed without any other change.
#[doc(hidden)]
pub fn fuzz_format(text: &str) {
    let (head, body) = text.split_once('\n').unwrap_or((text, ""));
    match Kind::from_name(head.trim()) {
        Some(kind) => fuzz_one(kind, &lines_of(body)),
        None => {
            let lines = lines_of(text);
            for kind in Kind::ALL {
                fuzz_one(*kind, &lines);
            }
        }
    }
}

fn fuzz_one(kind: Kind, lines: &[Line<'_>]) {
    match parse_as(kind, lines).value {
        SectionData::Nvlink(v) => drop(nvlink::render(&v)),
        SectionData::Perfquery(v) => drop(perfquery::render(&v)),
        SectionData::Ibqueryerrors(v) => drop(ibqueryerrors::render(&v)),
        _ => {}
    }
}

/// The format whose tool `argv` runs (a prompt's or a label's command,
/// wrappers removed), if any: the first of [`FORMATS`] that claims it.
pub(crate) fn format_of_command(argv: &[&str]) -> Option<&'static Format> {
    FORMATS.iter().find(|f| (f.command)(argv))
}

/// The format that reads sections of `kind`.
pub(crate) fn format_of_kind(kind: Kind) -> Option<&'static Format> {
    FORMATS.iter().find(|f| f.kind == kind)
}

/// Names of all supported formats, for messages.
#[must_use]
pub fn supported_formats() -> Vec<&'static str> {
    FORMATS.iter().map(|f| f.name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_blank_agrees_with_trim() {
        for s in [
            "",
            " ",
            "\t \r",
            "\u{b}\u{c}",
            "\u{a0}",
            " \u{3000}\t",
            "\u{85}",
            " x",
            "\u{a0}x",
            "é",
            "\t\u{1f}",
            "\u{200b}",
        ] {
            assert_eq!(is_blank(s), s.trim().is_empty(), "{s:?}");
        }
    }

    /// Every text file under `dir`, recursively.
    fn texts_under(dir: &std::path::Path, out: &mut Vec<(String, String)>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                texts_under(&path, out);
            } else if let Ok(bytes) = std::fs::read(&path) {
                let text = String::from_utf8_lossy(&bytes).into_owned();
                out.push((path.display().to_string(), text));
            }
        }
    }

    /// `Spec::starts` may only skip detectors that would have found
    /// nothing: on every line of every fixture, example and fuzz seed, a
    /// format that detects a block there admits the line's first byte.
    #[test]
    fn starts_admits_every_detected_block() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut texts = Vec::new();
        for dir in ["tests/fixtures", "examples", "fuzz/corpus"] {
            texts_under(&root.join(dir), &mut texts);
        }
        assert!(
            texts.len() > 100,
            "fixtures not found under {}",
            root.display()
        );
        let mut detected = 0usize;
        for (name, text) in &texts {
            let lines = lines_of(text);
            for i in 0..lines.len() {
                let rest = lines.get(i..).unwrap_or_default();
                let Some(first) = rest.first().and_then(|l| first_byte(l.text())) else {
                    continue;
                };
                for f in FORMATS {
                    if (f.detect)(rest).is_some() {
                        detected += 1;
                        assert!(
                            (f.starts)(first),
                            "{name}:{}: {} detects a block starting with {:?}, which its `starts` refuses",
                            i + 1,
                            f.name,
                            char::from(first)
                        );
                    }
                }
            }
        }
        assert!(detected > 1000, "only {detected} blocks detected");
    }

    #[test]
    fn format_names_match_serde_names_and_are_unique() {
        let mut names = std::collections::HashSet::new();
        for f in FORMATS {
            let serde_name = serde_json::to_value(f.kind).unwrap();
            assert_eq!(serde_name, f.name, "format {:?}", f.kind);
            assert!(names.insert(f.name), "duplicate {}", f.name);
        }
    }
}
