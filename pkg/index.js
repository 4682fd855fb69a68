// fabricscope for JavaScript: typed functions over the WebAssembly engine.
//
// Browsers and bundlers: `await init()` once (it fetches fabricscope_bg.wasm
// next to this file; bundlers that understand `new URL(…, import.meta.url)`
// — Vite, webpack 5, Rollup, esbuild with a loader — copy it for you), then
// call the functions. In Node, import the package normally: its "node" entry
// (node.js) has already loaded the engine from disk.

import init, * as engine from "./fabricscope.js";

export { init };
export default init;

function options(value) {
  return JSON.stringify(value ?? {});
}

/** JSON's null is JavaScript's undefined here (as the types say): `f.threshold ?? …`. */
function fromJson(text) {
  return JSON.parse(text, function (key, value) {
    return value === null && !Array.isArray(this) ? undefined : value;
  });
}

/** Parses and diagnoses tool output; returns the report with the document it was read into. */
export function analyze(text, opts) {
  return fromJson(engine.analyze(text, options(opts)));
}

/** The report as one self-contained HTML file (the CLI's `--format html`). */
export function analyzeHtml(text, opts) {
  return engine.analyzeHtml(text, options(opts));
}

/** Parses tool output without diagnosing it. */
export function parse(text, opts) {
  return fromJson(engine.parse(text, options(opts)));
}

/** Replaces host names, GUIDs, UUIDs, serials and IPs consistently (the CLI's `--redact`). */
export function redact(text) {
  return fromJson(engine.redact(text));
}

/** Reads `30s`, `2m`, `1h`, `500ms` or a bare number of seconds; throws otherwise. */
export function parseInterval(text) {
  return engine.parseInterval(text);
}

/** The rule catalogue. */
export function rules() {
  return fromJson(engine.rules());
}

/** The engine's version (the Rust crate's). */
export function version() {
  return engine.version();
}
