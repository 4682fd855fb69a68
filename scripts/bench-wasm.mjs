// Parse + analyze throughput of the WebAssembly build in Node, on one paste.
//
//   node scripts/bench-wasm.mjs PASTE [RUNS]
//
// Loads pkg/ (built by scripts/build-wasm.sh, `--target web`), calls the
// page's `analyze` entry point (the same call the web worker makes) RUNS
// times (default 3) and prints the fastest run's MB/s as JSON on stdout.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { initSync, analyze } = await import(join(root, "pkg", "fabricscope.js"));
initSync({ module: readFileSync(join(root, "pkg", "fabricscope_bg.wasm")) });

const [paste, runsArg] = process.argv.slice(2);
const text = readFileSync(paste, "utf8");
const bytes = Buffer.byteLength(text);
const runs = Number(runsArg ?? 3);
let best = Infinity;
let reportBytes = 0;
for (let i = 0; i < runs; i++) {
  const start = process.hrtime.bigint();
  const report = analyze(text, JSON.stringify({ max_input_bytes: 64 << 20 }));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  reportBytes = report.length;
  best = Math.min(best, seconds);
}
console.log(JSON.stringify({ bytes, seconds: best, mb_per_s: bytes / best / 1e6, report_bytes: reportBytes }));
