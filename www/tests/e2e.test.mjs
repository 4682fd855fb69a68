// Browser end-to-end tests for the fabricscope page.
//
// Serves the repository root with python3's http.server on 127.0.0.1, drives
// Debian's /usr/bin/chromium through playwright-core and fails on any console
// error, page error or failed request. Skipped when pkg/ has not been built.
//
//   cd www && node --test --test-reporter=tap tests/
//
// FABRICSCOPE_SERVE_ROOT serves another tree laid out like the repository
// (www/ and pkg/ side by side), e.g. to try the page with a pkg/ built
// elsewhere.

import { after, afterEach, before, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SERVE_ROOT = process.env.FABRICSCOPE_SERVE_ROOT ?? ROOT;
const PKG_FILES = ["pkg/fabricscope.js", "pkg/fabricscope_bg.wasm"];
const BUILT = PKG_FILES.every((f) => existsSync(join(SERVE_ROOT, f)));
const CHROMIUM = "/usr/bin/chromium";
const CHROMIUM_ARGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];

function example(name) {
  return readFileSync(join(ROOT, "www/examples", name), "utf8");
}

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

async function startServer() {
  const port = await freePort();
  const child = spawn("python3", ["-m", "http.server", String(port), "--bind", "127.0.0.1", "--directory", SERVE_ROOT],
    { stdio: "ignore" });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(`${base}/www/index.html`)).ok) return { child, base };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill();
  throw new Error("http.server did not start");
}

// Types text into the page the way a paste does: sets the value and fires "input".
async function paste(page, text) {
  await page.evaluate((t) => {
    const input = document.getElementById("input");
    input.value = t;
    input.dispatchEvent(new Event("input", { bubbles: true }));
  }, text);
}

async function settled(page, states = ["done"]) {
  await page.waitForFunction((s) => s.includes(document.body.dataset.state), states, { timeout: 20_000 });
  return page.evaluate(() => document.body.dataset.state);
}

async function openTab(page, name) {
  await page.click(`#tab-${name}`);
  return page.locator(`#panel-${name}`);
}

const NOT_BUILT = `pkg/ is not built (${PKG_FILES.join(", ")} missing): run scripts/build-wasm.sh`;

// One skipped test, so TAP counts it (a skipped suite counts as nothing).
if (!BUILT) test("fabricscope page", { skip: NOT_BUILT }, () => {});
else describe("fabricscope page", () => {
  let server;
  let browser;
  let page;
  let problems;
  let workers;
  let shots;

  before(async () => {
    shots = mkdtempSync(join(tmpdir(), "fabricscope-shots-"));
    server = await startServer();
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  });

  after(async () => {
    await browser?.close();
    server?.child.kill();
  });

  beforeEach(async () => {
    problems = [];
    workers = [];
    page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    const onConsole = (where) => (msg) => msg.type() === "error" && problems.push(`${where} console: ${msg.text()}`);
    page.on("console", onConsole("page"));
    page.on("pageerror", (err) => problems.push(`page error: ${err.message}`));
    page.on("requestfailed", (req) => problems.push(`request failed: ${req.url()}`));
    page.on("response", (res) => res.status() >= 400 && problems.push(`HTTP ${res.status()}: ${res.url()}`));
    page.on("worker", (w) => {
      workers.push(w.url());
      w.on("console", onConsole("worker"));
    });
    await page.goto(`${server.base}/www/index.html`);
    assert.equal(await settled(page, ["idle", "fatal"]), "idle", await page.locator("#error").textContent());
  });

  afterEach(async () => {
    await page.close();
    assert.deepEqual(problems, [], "no console errors, page errors or failed requests");
  });

  test("loads the engine in a worker and shows the rule catalogue", async () => {
    assert.ok(workers.some((url) => url.endsWith("/www/worker.js")), `worker started: ${workers}`);
    assert.match(await page.locator("#engine-version").textContent(), /^fabricscope \S+/);
    const rules = await openTab(page, "rules");
    assert.ok(await rules.locator("details.rule").count() > 0, "rules listed");
    await rules.locator("details.rule summary").first().click();
    assert.ok(await rules.locator("details.rule[open] .markdown").first().textContent() !== "", "explanation shown");
    assert.match(await page.locator("#privacy").textContent(), /nothing .*uploaded/i);
  });

  test("NVLink example: sections read, verdict and counts rendered", async () => {
    await page.getByRole("button", { name: "H200 NVLink health" }).click();
    await settled(page);
    assert.notEqual((await page.locator("#verdict-text").textContent()).trim(), "");
    assert.equal(await page.locator("#counts li").count(), 4);
    const sections = await openTab(page, "sections");
    const kinds = await sections.locator("td code.kind").allTextContents();
    assert.deepEqual(kinds, ["nvlink", "topo_matrix", "nvlink"]);
    const hosts = await sections.locator("tbody tr td:nth-child(2)").allTextContents();
    assert.deepEqual(hosts, ["gpu-h200-01", "gpu-h200-01", "gpu-h200-01"]);
    await page.screenshot({ path: join(shots, "nvlink-sections.png") });
  });

  test("IB example: findings grouped by host, worst first, matching the counts", async () => {
    await page.getByRole("button", { name: "IB sim: ports down" }).click();
    await settled(page);
    const kinds = await (await openTab(page, "sections")).locator("td code.kind").allTextContents();
    assert.deepEqual(kinds, ["ibstat", "ibstat", "perfquery", "ibstat", "iblinkinfo"]);
    await openTab(page, "findings");
    const hosts = await page.locator("#panel-findings h3.host").allTextContents();
    assert.deepEqual(hosts.map((t) => t.split(" ·")[0]), ["node02", "node03"], "one group per host with a problem");
    const severities = await page.locator("#panel-findings details.finding .badge").allTextContents();
    const rank = (sev) => ["critical", "error", "warning", "info"].indexOf(sev);
    for (const group of await page.locator("#panel-findings .host-group").all()) {
      // Incidents (or findings, before the engine grouped them) are worst first.
      const sevs = (await group.locator(":scope > details > summary .badge").allTextContents()).map(rank);
      assert.deepEqual(sevs, sevs.toSorted((x, y) => x - y), "worst first within a host");
    }
    for (const sev of ["critical", "error", "warning", "info"]) {
      const count = Number(await page.locator(`#counts li[data-severity=${sev}]`).getAttribute("data-count"));
      assert.equal(count, severities.filter((s) => s === sev).length, `${sev} count matches the list`);
    }
    assert.ok(severities.includes("critical"), "ports down are reported");
  });

  test("clicking an evidence line number highlights that input line", async () => {
    await page.getByRole("button", { name: "InfiniBand, 2 hosts" }).click();
    await settled(page);
    const finding = page.locator("#panel-findings details.finding[data-rule=IB001]").first();
    await finding.locator("summary").click();
    const link = finding.locator(".line-link").first();
    const first = Number(await link.getAttribute("data-first"));
    const last = Number(await link.getAttribute("data-last"));
    await link.click();
    assert.ok(await page.locator("#lines").isVisible(), "numbered view shown");
    const highlighted = page.locator("#lines li.hl");
    assert.equal(await highlighted.count(), last - first + 1);
    assert.equal(await page.locator(`#lines li:nth-child(${first})`).getAttribute("class"), "hl");
    assert.match((await highlighted.allTextContents()).join("\n"), /State: Down/, "the Down port's lines are highlighted");
    assert.ok(await page.locator(`#lines li:nth-child(${first})`).evaluate((li) => {
      const box = li.getBoundingClientRect();
      const view = li.parentElement.getBoundingClientRect();
      return box.top >= view.top && box.bottom <= view.bottom;
    }), "the highlighted line is scrolled into view");
    await page.screenshot({ path: join(shots, "ib-finding-evidence.png") });
  });

  test("two snapshots with an interval give measurements", async () => {
    await page.getByRole("button", { name: "H200 NVLink traffic" }).click();
    await settled(page);
    assert.equal(await page.inputValue("#interval"), "2");
    const panel = await openTab(page, "measurements");
    assert.ok(await panel.locator("details.measurement").count() > 0, "measurement tables rendered");
    assert.ok(await panel.locator("tbody tr").count() > 0, "with rows");
    assert.ok(await panel.locator(".line-link").count() > 0, "rows point at input lines");
    await page.screenshot({ path: join(shots, "nvlink-measurements.png") });
  });

  test("an opened file is analysed and the report downloads as JSON", async () => {
    const text = example("ibsim-ports-down.txt");
    await page.setInputFiles("#file", { name: "paste.txt", mimeType: "text/plain", buffer: Buffer.from(text) });
    await settled(page);
    assert.equal(await page.inputValue("#input"), text);
    const [download] = await Promise.all([page.waitForEvent("download"), page.click("#download-json")]);
    assert.equal(download.suggestedFilename(), "fabricscope-report.json");
    const report = JSON.parse(readFileSync(await download.path(), "utf8"));
    assert.equal(report.verdict, (await page.locator("#verdict-text").textContent()));
    assert.equal(report.findings.length, await page.locator("#panel-findings details.finding").count());
  });

  test("tabs work from the keyboard", async () => {
    await page.focus("#tab-findings");
    await page.keyboard.press("ArrowRight");
    assert.equal(await page.getAttribute("#tab-sections", "aria-selected"), "true");
    assert.ok(await page.locator("#panel-sections").isVisible());
    await page.keyboard.press("End");
    assert.equal(await page.evaluate(() => document.activeElement.id), "tab-rules");
    assert.ok(await page.locator("#panel-rules").isVisible());
    assert.ok(await page.locator("#panel-findings").isHidden());
  });

  test("garbage input is reported as unrecognised, without a crash", async () => {
    await paste(page, "lorem ipsum dolor\n\u0000\u0001 ### ]]]\n".repeat(50) + "\u{1F680} not a tool output\n");
    await settled(page);
    assert.ok(await page.locator("#error").isHidden(), "no error shown");
    const unrecognised = await openTab(page, "unrecognised");
    assert.ok(await unrecognised.locator("li").count() >= 1, "unrecognised lines listed");
    assert.match(await page.locator("#tab-unrecognised .tab-count").textContent(), /^[1-9]\d*$/);
  });

  test("oversized input shows a clear error", async () => {
    await paste(page, "x".repeat(16 * 1024 * 1024 + 1)); // the engine's default limit is 16 MiB
    assert.equal(await settled(page, ["error", "done"]), "error");
    const message = await page.locator("#error").textContent();
    assert.match(message, /^Error: .*(large|limit|exceed|max)/i);
    assert.equal(await page.locator("#panel-findings details").count(), 0, "no stale findings");
  });

  test("the main thread stays responsive while the worker analyses", async () => {
    const big = example("ib-two-hosts.txt").repeat(1000);
    await page.evaluate((text) => {
      document.getElementById("input").value = text;
      // Let the browser lay out the big textarea before measuring.
      return new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 50)));
    }, big);
    const result = await page.evaluate(async () => {
      document.getElementById("input").dispatchEvent(new Event("input", { bubbles: true }));
      const state = () => document.body.dataset.state;
      const gaps = [];
      let last = performance.now();
      while (state() !== "done" && state() !== "error") {
        const during = state();
        await new Promise((r) => setTimeout(r, 1));
        const now = performance.now();
        if (during === "busy") gaps.push(now - last);
        last = now;
      }
      return { state: state(), gaps, timing: document.getElementById("timing").textContent };
    });
    assert.equal(result.state, "done");
    assert.ok(page.workers().some((w) => w.url().endsWith("/worker.js")), "the engine runs in worker.js");
    const [, engine, rendering] = result.timing.match(/engine ([\d.]+) ms, page (\d+) ms/).map(Number);
    // The last gap ends with the page rendering the report, main-thread work
    // by design, which the page times itself.
    const stalls = result.gaps.slice();
    stalls.push(Math.max(0, stalls.pop() - rendering));
    // Were the engine on the main thread, one stall would last at least the
    // whole engine run. That is the bound, not a tick rate or a fraction of
    // the run: the page's own work on a multi-megabyte textarea stalls the
    // thread for 100-300 ms at a time, and a loaded 2-core machine once gave
    // two ticks in 483 ms, so how often a busy thread ticks proves nothing.
    const longest = Math.max(...stalls);
    assert.ok(longest < engine,
      `longest main-thread stall ${longest.toFixed(0)} ms, shorter than the engine's ${engine} ms run (stalls ${stalls.map(Math.round).join(", ")})`);
  });

  test("narrow and dark layouts render (screenshots)", async (t) => {
    await page.setViewportSize({ width: 400, height: 900 });
    await page.emulateMedia({ colorScheme: "dark" });
    await page.getByRole("button", { name: "InfiniBand, 2 hosts" }).click();
    await settled(page);
    await page.locator("#panel-findings details.finding summary").first().click();
    await page.screenshot({ path: join(shots, "narrow-dark.png"), fullPage: true });
    await openTab(page, "rules");
    await page.locator("#panel-rules details.rule summary").first().click();
    await page.screenshot({ path: join(shots, "narrow-dark-rules.png"), fullPage: true });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `no horizontal page scroll at 400 px (overflow ${overflow} px)`);
    t.diagnostic(`screenshots in ${shots}`);
  });
});
