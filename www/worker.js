// Runs the fabricscope engine off the main thread.
//
// The page terminates this worker and starts a new one when the text changes
// during an analysis, so a stale analysis never delays the current one.
//
// Messages in (sent only after "ready"):
//   { type: "analyze", id, text, options }      options as in the wasm API ({interval, …})
//   { type: "html", id, text, options }         the report as one HTML file
//   { type: "redact", id, text }                hosts, GUIDs, UUIDs, serials, IPs replaced
// Messages out:
//   { type: "ready", version, rules }
//   { type: "fatal", error }                    the engine could not be loaded
//   { type: "result", id, json, engineMs }
//   { type: "interval", id, error }             the interval box cannot be read
//   { type: "html", id, html }  { type: "redacted", id, json }
//   { type: "error", id, error }                the engine threw on this input

const ENGINE_URL = "../pkg/fabricscope.js";
const NEEDED = ["analyze", "analyzeHtml", "redact", "parseInterval", "rules", "version"];

let engine = null;

function message(err) {
  return String(err?.message ?? err);
}

/** Checks the interval box the way the CLI reads `--interval`. */
function intervalError(options) {
  const raw = (options?.interval ?? "").trim();
  if (raw === "") return null;
  try {
    engine.parseInterval(raw);
    return null;
  } catch (err) {
    return message(err);
  }
}

function handle({ type, id, text, options }) {
  try {
    if (type === "redact") return postMessage({ type: "redacted", id, json: engine.redact(text) });
    const bad = intervalError(options);
    if (bad) return postMessage({ type: "interval", id, error: bad });
    if (type === "html") return postMessage({ type: "html", id, html: engine.analyzeHtml(text, JSON.stringify(options)) });
    const start = performance.now();
    const json = engine.analyze(text, JSON.stringify(options));
    postMessage({ type: "result", id, json, engineMs: performance.now() - start });
  } catch (err) {
    postMessage({ type: "error", id, error: message(err) });
  }
}

async function load() {
  try {
    const module = await import(ENGINE_URL);
    const missing = NEEDED.filter((name) => typeof module[name] !== "function");
    if (missing.length) throw new Error(`pkg/ is stale: it lacks ${missing.join(", ")}`);
    await module.default();
    engine = module;
    postMessage({ type: "ready", version: module.version(), rules: module.rules() });
  } catch (err) {
    postMessage({
      type: "fatal",
      error: `Could not load the analysis engine (${message(err)}). ` +
        "Build it with scripts/build-wasm.sh and serve the repository root.",
    });
  }
}

// The page sends nothing before "ready", so the engine is always loaded here.
onmessage = ({ data }) => handle(data);

load();
