// Types of the package's functions. The interfaces (Report, Finding,
// Measurements, Document, Options, Redacted, …) are generated from the Rust
// types by tsify into fabricscope.d.ts; only these signatures live here.

import type { AnalysisReport, Document, Options, Redacted, InitInput } from "./fabricscope.js";

export type * from "./fabricscope.js";

/** Loads the engine (browsers and bundlers). Resolves when the functions are usable; a no-op once loaded. */
export default function init(input?: { module_or_path: InitInput | Promise<InitInput> }): Promise<unknown>;
export { init };

/** Parses and diagnoses tool output: verdict, findings with evidence, measurements, and the document read. */
export function analyze(text: string, options?: Options): AnalysisReport;
/** The report as one self-contained HTML file (the CLI's `--format html`). */
export function analyzeHtml(text: string, options?: Options): string;
/** Parses tool output without diagnosing it. */
export function parse(text: string, options?: Options): Document;
/** Replaces host names, GUIDs, UUIDs, serials and IPs consistently (the CLI's `--redact`). */
export function redact(text: string): Redacted;
/** Reads `30s`, `2m`, `1h`, `500ms` or a bare number of seconds; throws otherwise. */
export function parseInterval(text: string): number;
/** The rule catalogue: id, name, family, severity, summary, needs, explanation (markdown). */
export function rules(): Array<Record<string, unknown>>;
/** The engine's version. */
export function version(): string;
