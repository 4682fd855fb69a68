//! The paste-anything input layer.
//!
//! An operator's paste may hold several commands' output one after another,
//! with or without prompts, ANSI colours, CRLF, markdown fences, `pdsh`/`clush`
//! host prefixes, `==> file <==` headers, stray `ibwarn:` lines and a last line
//! cut in half. [`read`] splits it into [`Section`]s, recognises each section's
//! tool by its content (the prompt's command is only a hint), attaches the host
//! when the input names one, and parses every section. Text that is not
//! recognised is listed in [`Document::unrecognised`], never dropped.

mod body;
pub mod clean;
pub(crate) mod framing;
mod hosts;
mod kept;
pub mod repair;
mod split;

pub(crate) use split::{CUT_LINE, CUT_WORD};

use crate::diag::{Warning, WarningKind};
use crate::error::Error;
use crate::parse::{supported_formats, Kind, SectionData};
use crate::span::LineSpan;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// Limits and context for reading one input.
///
/// Built from [`Default`] with the chainable `with_…` methods (the struct is
/// `#[non_exhaustive]`: options will be added without breaking callers):
///
/// ```
/// use fabricscope::ReadOptions;
/// let options = ReadOptions::default()
///     .with_default_host("gpu0042".to_owned())
///     .with_max_input_bytes(1 << 20);
/// let doc = fabricscope::read("$ ibstat -l\nmlx5_0\n", &options).unwrap();
/// assert_eq!(doc.sections[0].host.as_deref(), Some("gpu0042"));
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ReadOptions {
    /// Host to attach to sections when the input itself names none (batch
    /// mode passes the dump's directory name).
    pub default_host: Option<String>,
    /// Inputs larger than this are refused with [`Error::InputTooLarge`].
    pub max_input_bytes: usize,
    /// Longer lines are not parsed; they are listed as unrecognised.
    pub max_line_bytes: usize,
    /// Sections beyond this many are not parsed; their lines are listed as
    /// unrecognised and a warning says the limit was reached.
    pub max_sections: usize,
}

impl Default for ReadOptions {
    /// 64 MiB of input, 64 KiB lines, 100 000 sections: far above any real
    /// dump, low enough that a hostile input cannot exhaust a browser tab.
    fn default() -> Self {
        Self {
            default_host: None,
            max_input_bytes: 64 << 20,
            max_line_bytes: 64 << 10,
            max_sections: 100_000,
        }
    }
}

impl ReadOptions {
    /// Host to attach to sections when the input names none; takes a
    /// `String` or an `Option<String>` (`None`: no default host).
    #[must_use]
    pub fn with_default_host(mut self, host: impl Into<Option<String>>) -> Self {
        self.default_host = host.into();
        self
    }

    /// Refuses inputs larger than this many bytes.
    #[must_use]
    pub fn with_max_input_bytes(mut self, bytes: usize) -> Self {
        self.max_input_bytes = bytes;
        self
    }

    /// Lists lines longer than this many bytes as unrecognised instead of
    /// parsing them.
    #[must_use]
    pub fn with_max_line_bytes(mut self, bytes: usize) -> Self {
        self.max_line_bytes = bytes;
        self
    }

    /// Parses at most this many sections (the rest are listed as
    /// unrecognised, with a warning).
    #[must_use]
    pub fn with_max_sections(mut self, sections: usize) -> Self {
        self.max_sections = sections;
        self
    }
}

/// Everything read from one input.
///
/// It reads back from the JSON `fabricscope parse --format json` prints, so
/// a parsed dump can be analysed later without its text.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
pub struct Document {
    /// Tool outputs found, in input order.
    pub sections: Vec<Section>,
    /// Line ranges that belong to no recognised tool output.
    pub unrecognised: Vec<Unrecognised>,
    /// Problems with the input as a whole (bad bytes, limits).
    pub warnings: Vec<Warning>,
    /// Tool error/warning lines (`ibwarn:`, `ibpanic:`…) outside any section.
    pub messages: Vec<ToolMessage>,
    /// Lines that frame the output rather than belong to it: prompts, code
    /// fences, `==> file <==` headers, clush banners, `[exit N]` markers.
    pub framing: Vec<LineSpan>,
    /// Paste damage undone before reading (mail quoting, HTML, author
    /// annotations, elisions), one record per kind and run of lines.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repairs: Vec<repair::Repair>,
    /// Number of lines in the input.
    pub line_count: usize,
    /// The line of the input's last shell prompt, if any. Output above it
    /// ran to its end (the shell printed its next prompt): a listing that
    /// stops before it stopped there itself, the paste was not cut in it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_prompt: Option<usize>,
}

impl Document {
    /// Whether the input holds anything of a tool to judge: a recognised
    /// section, or a tool's error line outside any (`$ nvidia-smi`, then
    /// NVML's `Unable to determine the device handle …`). That failure is
    /// often the fault itself (IN003), not an input with nothing in it.
    #[must_use]
    pub fn holds_tool_output(&self) -> bool {
        !self.sections.is_empty() || self.failures().next().is_some()
    }

    /// The error-level tool messages outside any section: the failures
    /// IN003 judges, each of its host (or of none).
    pub fn failures(&self) -> impl Iterator<Item = &ToolMessage> {
        self.messages
            .iter()
            .filter(|m| m.level == MessageLevel::Error)
    }

    /// All warnings: the document's and every section's, in line order.
    #[must_use]
    pub fn all_warnings(&self) -> Vec<&Warning> {
        let mut all: Vec<&Warning> = self
            .warnings
            .iter()
            .chain(self.sections.iter().flat_map(|s| s.warnings.iter()))
            .collect();
        all.sort_by_key(|w| w.span);
        all
    }

    /// The hosts the sections name, sorted, each once.
    #[must_use]
    pub fn section_hosts(&self) -> Vec<&str> {
        let mut hosts: Vec<&str> = self
            .sections
            .iter()
            .filter_map(|s| s.host.as_deref())
            .collect();
        hosts.sort_unstable();
        hosts.dedup();
        hosts
    }

    /// Input lines (non-blank) that no section, unrecognised range, framing
    /// line or tool message accounts for. Always empty unless the input layer
    /// has a bug: this is the "nothing silently lost" check the tests run.
    #[must_use]
    pub fn unaccounted_lines(&self, text: &str) -> Vec<usize> {
        let mut covered = vec![false; self.line_count + 1];
        let spans = self
            .sections
            .iter()
            .map(|s| s.span)
            .chain(self.unrecognised.iter().map(|u| u.span))
            .chain(self.framing.iter().copied())
            .chain(self.repairs.iter().map(|r| r.span))
            .chain(self.messages.iter().map(|m| LineSpan::line(m.line)));
        for span in spans {
            let last = span.last_line.min(self.line_count);
            for slot in covered.iter_mut().take(last + 1).skip(span.first_line) {
                *slot = true;
            }
        }
        text.lines()
            .enumerate()
            .filter(|(i, line)| {
                !covered.get(i + 1).copied().unwrap_or(false)
                    && !clean::clean_line(line).trim().is_empty()
            })
            .map(|(i, _)| i + 1)
            .collect()
    }
}

/// One tool's output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "SectionWire")]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
pub struct Section {
    /// Which tool printed it.
    #[cfg_attr(feature = "wasm", tsify(type = "string"))]
    pub kind: Kind,
    /// The host it came from, when the input says (prefix, prompt, batch directory).
    pub host: Option<String>,
    /// The command typed at the prompt before it, if there was one.
    pub command: Option<String>,
    /// The file it came from (`==> name <==` headers, or the CLI's path).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Lines it spans, from its prompt (if any) to its last line.
    #[serde(flatten)]
    pub span: LineSpan,
    /// What was read: the tool's model, described in `docs/json.md`.
    #[cfg_attr(feature = "wasm", tsify(type = "Record<string, unknown>"))]
    pub data: SectionData,
    /// Lines of this section that could not be read, and other problems.
    pub warnings: Vec<Warning>,
    /// Tool error/warning lines printed inside this section.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<ToolMessage>,
}

/// A section as JSON holds it: its data is read as the model of its `kind`.
#[derive(Deserialize)]
struct SectionWire {
    kind: Kind,
    host: Option<String>,
    command: Option<String>,
    #[serde(default)]
    source: Option<String>,
    #[serde(flatten)]
    span: LineSpan,
    data: serde_json::Value,
    #[serde(default)]
    warnings: Vec<Warning>,
    #[serde(default)]
    messages: Vec<ToolMessage>,
}

impl TryFrom<SectionWire> for Section {
    type Error = String;

    fn try_from(w: SectionWire) -> Result<Self, String> {
        let data = SectionData::from_json(w.kind, w.data)
            .map_err(|e| format!("{} section: {e}", w.kind.name()))?;
        Ok(Section {
            kind: w.kind,
            host: w.host,
            command: w.command,
            source: w.source,
            span: w.span,
            data,
            warnings: w.warnings,
            messages: w.messages,
        })
    }
}

/// Lines that no supported tool printed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
pub struct Unrecognised {
    /// The lines.
    #[serde(flatten)]
    pub span: LineSpan,
    /// Host of those lines, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Why they were not read.
    pub reason: String,
}

/// An error or warning line printed by a tool (`ibwarn: [1234] …`,
/// `ibpanic: …`, `src/query_smp.c:199; …`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
pub struct ToolMessage {
    /// Line number.
    pub line: usize,
    /// `error` for panics and failures, `warning` otherwise.
    pub level: MessageLevel,
    /// The text as printed.
    pub text: String,
    /// For a message outside any section (of an unsupported command, or
    /// one that printed nothing else): the host the prompt, banner or file
    /// name gave its lines. A section's messages have their section's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// For such a message: the program the prompt ran (`nvidia-smi`), so
    /// that a failure names its tool, not "a tool".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
    /// For such a message: the file its lines were read from (batch runs,
    /// `==> file <==` headers), so that its evidence names the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// How serious a tool message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
pub enum MessageLevel {
    /// `ibwarn:` and similar.
    Warning,
    /// `ibpanic:`, `iberror:`, `Failed …`.
    Error,
}

/// Reads an input and requires at least one recognised section, or a
/// tool's error line ([`Document::holds_tool_output`]).
///
/// ```
/// let paste = "[root@node07 ~]# ibstat mlx5_0 1\nCA 'mlx5_0'\n\tPort 1:\n\t\tState: Active\n";
/// let doc = fabricscope::read(paste, &fabricscope::ReadOptions::default()).unwrap();
/// assert_eq!(doc.sections[0].kind, fabricscope::Kind::Ibstat);
/// assert_eq!(doc.sections[0].host.as_deref(), Some("node07"));
/// assert!(fabricscope::read("hello\n", &Default::default()).is_err());
/// ```
///
/// # Errors
/// [`Error::NothingRecognised`] when no supported tool output is found, and
/// the errors of [`read_all`].
pub fn read(text: &str, options: &ReadOptions) -> Result<Document, Error> {
    let doc = read_all(text, options)?;
    if !doc.holds_tool_output() {
        return Err(Error::NothingRecognised {
            lines: doc.line_count,
            supported: supported_formats().join(", "),
        });
    }
    Ok(doc)
}

/// Reads an input, returning a document even when nothing was recognised.
///
/// # Errors
/// [`Error::InputTooLarge`] when the input exceeds `max_input_bytes`.
///
/// ```
/// let doc = fabricscope::read_all("just some notes\n", &Default::default()).unwrap();
/// assert!(doc.sections.is_empty());
/// assert_eq!(doc.unrecognised.len(), 1);
/// ```
pub fn read_all(text: &str, options: &ReadOptions) -> Result<Document, Error> {
    refuse_oversized(text.len(), options)?;
    Ok(with_sections(|each| split::split(text, options, each)))
}

/// Reads raw bytes: invalid UTF-8 and NUL bytes are reported, not fatal.
///
/// # Errors
/// [`Error::Binary`] for binary data, and the errors of [`read_all`].
///
/// ```
/// // A Latin-1 byte in a node description: reported, the rest still read.
/// let bytes = b"CA 'mlx5_0'\n\tCA type: MT4123 caf\xe9\n\tPort 1:\n\t\tState: Active\n";
/// let doc = fabricscope::read_bytes(bytes, &Default::default()).unwrap();
/// assert_eq!(doc.sections[0].kind, fabricscope::Kind::Ibstat);
/// assert!(!doc.warnings.is_empty());
/// assert!(fabricscope::read_bytes(&[0u8; 64], &Default::default()).is_err());
/// ```
pub fn read_bytes(bytes: &[u8], options: &ReadOptions) -> Result<Document, Error> {
    let decoded = Decoded::new(bytes, options)?;
    Ok(with_sections(|each| decoded.read_each(options, each)))
}

/// An input's bytes made text, ready to be read: the step of
/// [`read_bytes`] that can fail, apart from the reading, which cannot.
///
/// [`Decoded::read_each`] hands each section over as soon as it is read
/// and keeps none, so that a caller that writes or folds sections one at a
/// time holds one section, not the whole document: `fabricscope parse`
/// prints a 12 MB paste this way. Deciding first whether an input can be
/// read lets such a caller refuse it before it has written anything.
///
/// ```
/// use fabricscope::input::Decoded;
/// let paste = b"CA 'mlx5_0'\n\tCA type: MT4123\n\tPort 1:\n\t\tState: Active\n\
///   [root@node07 ~]# nvidia-smi nvlink -s\nGPU 0: NVIDIA A100 (UUID: GPU-1)\n\t Link 0: 25 GB/s\n";
/// let options = fabricscope::ReadOptions::default();
/// let mut kinds = Vec::new();
/// let rest = Decoded::new(paste, &options)
///     .unwrap()
///     .read_each(&options, &mut |section| kinds.push(section.kind));
/// assert_eq!(kinds, [fabricscope::Kind::Ibstat, fabricscope::Kind::Nvlink]);
/// assert!(rest.sections.is_empty());
/// assert_eq!(rest.line_count, 7);
/// assert!(Decoded::new(&[0u8; 64], &options).is_err());
/// ```
#[derive(Debug)]
pub struct Decoded<'a> {
    text: Cow<'a, str>,
    /// Bytes that were not UTF-8, NUL bytes removed.
    warnings: Vec<Warning>,
}

impl<'a> Decoded<'a> {
    /// Decodes `bytes` (see [`read_bytes`]).
    ///
    /// # Errors
    /// [`Error::Binary`] for binary data; [`Error::InputTooLarge`] when the
    /// bytes, or the text they become, exceed `max_input_bytes`.
    pub fn new(bytes: &'a [u8], options: &ReadOptions) -> Result<Self, Error> {
        refuse_oversized(bytes.len(), options)?;
        let (text, warnings) = clean::decode(bytes)?;
        refuse_oversized(text.len(), options)?;
        Ok(Self { text, warnings })
    }

    /// The text that is read.
    #[must_use]
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Reads the text, handing each section to `each` in document order as
    /// soon as it is read; returns the document without its sections.
    pub fn read_each(&self, options: &ReadOptions, each: &mut dyn FnMut(Section)) -> Document {
        let mut doc = split::split(&self.text, options, each);
        doc.warnings.splice(0..0, self.warnings.iter().cloned());
        doc
    }
}

/// The document a reading returns, with the sections it handed over.
fn with_sections(read: impl FnOnce(&mut dyn FnMut(Section)) -> Document) -> Document {
    let mut sections = Vec::new();
    let mut doc = read(&mut |s| sections.push(s));
    doc.sections = sections;
    doc
}

/// [`Error::InputTooLarge`] when `size` exceeds `max_input_bytes`.
fn refuse_oversized(size: usize, options: &ReadOptions) -> Result<(), Error> {
    if size > options.max_input_bytes {
        return Err(Error::InputTooLarge {
            size,
            limit: options.max_input_bytes,
        });
    }
    Ok(())
}

/// A limit warning for the document.
fn limit_warning(span: LineSpan, message: String) -> Warning {
    Warning::new(WarningKind::Limit, span, message)
}
