// Time from paste to findings in real Chromium, worker included, for a
// ~10 MB pdsh paste of 100 hosts (a benchmark that prints figures, not a test).
//
//   cd www && node bench/time-to-findings.mjs [--hosts 100] [--mb 10] [--runs 3]
//
// The paste: each host prints ibstat/perfquery-style InfiniBand output and
// nvidia-smi nvlink/topo output (the bundled examples, prompts removed),
// repeated to the wanted size, with `gpuNNN: ` pdsh prefixes, interleaved in
// blocks of lines as pdsh prints them. Printed: the browser's time to
// findings (input event to rendered report), the engine's share in the
// worker, the page's rendering share, and the same engine call in Node for
// comparison.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { BUILT, NOT_BUILT, ROOT, launch, openPage, settled, startServer } from "../tests/harness.mjs";

const args = Object.fromEntries(process.argv.slice(2).join(" ").split("--").filter(Boolean)
  .map((a) => a.trim().split(/\s+/)).map(([k, v]) => [k, Number(v)]));
const HOSTS = args.hosts ?? 100;
const MB = args.mb ?? 10;
const RUNS = args.runs ?? 3;

export function pdshPaste(hosts = HOSTS, megabytes = MB) {
  const prompt = /^\S+@\S+:.*\$ |^\[\S+@\S+ .*\]# |^\$ /;
  const body = ["ib-two-hosts.txt", "h200-nvlink-health.txt", "h200-nvlink-traffic.txt"]
    .flatMap((f) => readFileSync(join(ROOT, "www/examples", f), "utf8").split("\n"))
    .filter((l) => !prompt.test(l) && l !== "");
  const perHost = (megabytes * 1024 * 1024) / hosts;
  const names = Array.from({ length: hosts }, (_, i) => `gpu${String(i + 1).padStart(3, "0")}`);
  const streams = names.map((name) => {
    const lines = [];
    let size = 0;
    for (let i = 0; size < perHost; i++) {
      const line = `${name}: ${body[i % body.length]}`;
      lines.push(line);
      size += line.length + 1;
    }
    return lines;
  });
  const out = [];
  const BLOCK = 40;
  for (let at = 0; streams.some((s) => at < s.length); at += BLOCK) {
    for (const s of streams) out.push(...s.slice(at, at + BLOCK));
  }
  return `${out.join("\n")}\n`;
}

async function inNode(text) {
  const engine = await import(join(ROOT, "pkg/fabricscope.js"));
  engine.initSync({ module: readFileSync(join(ROOT, "pkg/fabricscope_bg.wasm")) });
  const start = performance.now();
  const report = JSON.parse(engine.analyze(text, "{}"));
  return { ms: performance.now() - start, findings: report.findings.length, sections: report.sections };
}

async function main() {
  if (!BUILT) {
    console.error(NOT_BUILT);
    process.exit(2);
  }
  const text = pdshPaste();
  const mb = text.length / (1024 * 1024);
  console.log(`paste: ${HOSTS} hosts, ${mb.toFixed(1)} MB, ${text.split("\n").length} lines`);
  const server = await startServer();
  const browser = await launch();
  const totals = [];
  try {
    for (let run = 1; run <= RUNS; run++) {
      const { page } = await openPage(browser, `${server.base}/www/index.html`);
      await settled(page, ["idle"]);
      await page.evaluate((t) => {
        document.getElementById("input").value = t;
      }, text);
      const started = await page.evaluate(() => {
        const t0 = performance.now();
        document.getElementById("input").dispatchEvent(new InputEvent("input", { bubbles: true, inputType: "insertFromPaste" }));
        return t0;
      });
      await settled(page, ["done", "error"], 300_000);
      const { ended, timing, findings } = await page.evaluate(() => ({
        ended: performance.now(),
        timing: document.getElementById("timing").textContent,
        findings: document.getElementById("tab-findings").textContent,
      }));
      const total = ended - started;
      totals.push(total);
      console.log(`run ${run}: time to findings ${(total / 1000).toFixed(2)} s — ${timing} — tab "${findings}"`);
      await page.close();
    }
    const node = await inNode(text);
    const best = Math.min(...totals);
    console.log(`engine in Node (same wasm, no page): ${(node.ms / 1000).toFixed(2)} s, ${node.sections} sections, ${node.findings} findings`);
    console.log(`best browser time to findings: ${(best / 1000).toFixed(2)} s (${(mb / (best / 1000)).toFixed(1)} MB/s); ` +
      `browser / Node engine = ${(best / node.ms).toFixed(2)}×`);
  } finally {
    await browser.close();
    server.child.kill();
  }
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) main();
