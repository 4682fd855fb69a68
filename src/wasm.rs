//! WebAssembly entry points for the page in `www/`. No logic lives here: each
//! function calls the library and returns JSON text, or throws a JS `Error`
//! with a message a person can act on.

use crate::input::{read_all, ReadOptions};
use serde::Deserialize;
use wasm_bindgen::prelude::*;

/// Options the page may pass as JSON; unknown fields are ignored.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct PageOptions {
    /// Largest input accepted, in bytes.
    max_input_bytes: Option<usize>,
}

/// The browser's default input limit: 16 MiB is far above a real paste and
/// keeps a tab's memory bounded.
const PAGE_MAX_INPUT_BYTES: usize = 16 << 20;

fn read_options(options_json: &str) -> Result<ReadOptions, JsError> {
    let page: PageOptions = if options_json.trim().is_empty() {
        PageOptions::default()
    } else {
        serde_json::from_str(options_json)
            .map_err(|e| JsError::new(&format!("bad options: {e}")))?
    };
    Ok(ReadOptions {
        max_input_bytes: page.max_input_bytes.unwrap_or(PAGE_MAX_INPUT_BYTES),
        ..ReadOptions::default()
    })
}

/// Parses a paste and returns the document as JSON.
///
/// # Errors
/// Throws when the options are malformed or the input exceeds the size limit.
#[wasm_bindgen]
pub fn parse(text: &str, options_json: &str) -> Result<String, JsError> {
    let options = read_options(options_json)?;
    let doc = read_all(text, &options).map_err(|e| JsError::new(&e.to_string()))?;
    serde_json::to_string(&doc).map_err(|e| JsError::new(&e.to_string()))
}

/// The library version.
#[wasm_bindgen]
#[must_use]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_owned()
}
