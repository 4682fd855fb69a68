//! fabricscope reads the text that HPC/AI cluster tools print about their
//! interconnects — InfiniBand (`ibstat`, `perfquery`, …) and NVLink
//! (`nvidia-smi nvlink`, `nvidia-smi topo -m`, …) — and tells an operator what
//! is wrong, why it thinks so, and what to do.
//!
//! The core takes `&str` or `&[u8]` and does no I/O, so the same code runs in
//! the command-line client and, compiled to WebAssembly, in a browser tab.
//!
//! # Layers
//! - [`input`]: splits a paste into sections, recognises each tool, finds hosts.
//! - [`parse`]: one lenient parser per tool format, producing [`model`] types.
//! - [`stats`]: rates, saturation, BER with confidence, outliers and trends from snapshots.
//! - [`kb`]: what healthy hardware should show (NVLink links and speeds per
//!   GPU, `NV#` per system, IB rate per HCA), each entry with its source.
//! - [`rules`]: the diagnosis rules, their registry and thresholds.
//! - [`analyze()`]: runs the rules over documents and returns a [`Report`]; [`report`] renders it.
//!
//! # Features
//! - `cli` (default): the `fabricscope` binary.
//! - `wasm`: WebAssembly entry points for the web page (`src/wasm.rs`).
//!
//! # Example
//! ```
//! let paste = "$ ibstat\nCA 'mlx5_0'\n\tCA type: MT4123\n\tPort 1:\n\t\tState: Down\n";
//! let doc = fabricscope::input::read(paste, &Default::default()).unwrap();
//! assert_eq!(doc.sections[0].kind.name(), "ibstat");
//! ```

#![forbid(unsafe_code)]

pub mod analyze;
pub mod diag;
pub mod error;
pub mod input;
pub mod kb;
pub mod model;
pub mod parse;
pub mod report;
pub mod rules;
pub mod span;
pub mod stats;
#[cfg(feature = "wasm")]
mod wasm;

/// The README's Rust examples, compiled by `cargo test --doc` so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

pub use analyze::{analyze, AnalyzeOptions};
pub use diag::{Warning, WarningKind};
pub use error::Error;
pub use input::{read, read_all, read_bytes, Document, ReadOptions, Section};
pub use parse::{Kind, Parsed, SectionData};
pub use report::Report;
pub use rules::{Finding, Severity};
pub use span::LineSpan;
