// Runs the fabricscope engine off the main thread.
//
// Messages in:  { id, text, options }            sent only after "ready"; options as in the wasm API
// Messages out: { type: "ready", version, rules }
//               { type: "fatal", error }          the engine could not be loaded
//               { type: "result", id, json, engineMs }
//               { type: "error", id, error }      the engine threw on this input

const ENGINE_URL = "../pkg/fabricscope.js";

let engine = null;

function analyze({ id, text, options }) {
  const start = performance.now();
  try {
    const json = engine.analyze(text, JSON.stringify(options));
    postMessage({ type: "result", id, json, engineMs: performance.now() - start });
  } catch (err) {
    postMessage({ type: "error", id, error: String(err?.message ?? err) });
  }
}

async function load() {
  try {
    const module = await import(ENGINE_URL);
    const missing = ["analyze", "rules", "version"].filter((name) => typeof module[name] !== "function");
    if (missing.length) throw new Error(`pkg/ is stale: it lacks ${missing.join(", ")}`);
    await module.default();
    engine = module;
    postMessage({ type: "ready", version: module.version(), rules: module.rules() });
  } catch (err) {
    postMessage({
      type: "fatal",
      error: `Could not load the analysis engine (${err?.message ?? err}). ` +
        "Build it with scripts/build-wasm.sh and serve the repository root.",
    });
  }
}

// The page sends nothing before "ready", so the engine is always loaded here.
onmessage = ({ data }) => analyze(data);

load();
