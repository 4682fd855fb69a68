//! Errors: the few situations where nothing useful can be returned.
//!
//! Everything else is a [`Warning`](crate::diag::Warning) next to the data
//! that could be read.

use thiserror::Error;

/// Why an input could not be used at all.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum Error {
    /// The input holds no output of any tool fabricscope knows.
    #[error("no output of a known tool was found in {lines} line(s) of input; supported tools: {supported}")]
    NothingRecognised {
        /// Number of lines looked at.
        lines: usize,
        /// Comma-separated names of the supported tools.
        supported: String,
    },
    /// The input is larger than the configured limit.
    #[error("input is {size} bytes, more than the limit of {limit} bytes")]
    InputTooLarge {
        /// Size of the input in bytes.
        size: usize,
        /// The configured limit.
        limit: usize,
    },
    /// The input looks like a binary file, not terminal text.
    #[error("input looks binary ({reason}), not text printed by a tool")]
    Binary {
        /// What gave it away.
        reason: String,
    },
}
