// Shared set-up of the browser tests: a static server over the repository
// (or FABRICSCOPE_SERVE_ROOT), Debian's Chromium through playwright-core, and
// a page per test that records console errors, page errors and failed requests.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const SERVE_ROOT = process.env.FABRICSCOPE_SERVE_ROOT ?? ROOT;
export const PKG_FILES = ["pkg/fabricscope.js", "pkg/fabricscope_bg.wasm"];
export const BUILT = PKG_FILES.every((f) => existsSync(join(SERVE_ROOT, f)));
export const NOT_BUILT = `pkg/ is not built (${PKG_FILES.join(", ")} missing): run scripts/build-wasm.sh`;
export const CHROMIUM = "/usr/bin/chromium";
export const CHROMIUM_ARGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];

export function read(path) {
  return readFileSync(join(ROOT, path), "utf8");
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

/** python3's http.server over `root`; resolves once `probe` answers. */
export async function startServer(root = SERVE_ROOT, probe = "/www/index.html") {
  const port = await freePort();
  const child = spawn("python3", ["-m", "http.server", String(port), "--bind", "127.0.0.1", "--directory", root],
    { stdio: "ignore" });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(`${base}${probe}`)).ok) return { child, base };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill();
  throw new Error("http.server did not start");
}

export function launch() {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}

/** A page that collects problems into `problems` (an array it returns). */
export async function openPage(browser, url, { viewport = { width: 1280, height: 860 } } = {}) {
  const problems = [];
  const workers = [];
  const page = await browser.newPage({ viewport });
  const onConsole = (where) => (msg) => msg.type() === "error" && problems.push(`${where} console: ${msg.text()}`);
  page.on("console", onConsole("page"));
  page.on("pageerror", (err) => problems.push(`page error: ${err.message}`));
  page.on("requestfailed", (req) => problems.push(`request failed: ${req.url()}`));
  page.on("response", (res) => res.status() >= 400 && problems.push(`HTTP ${res.status()}: ${res.url()}`));
  page.on("worker", (w) => {
    workers.push(w.url());
    w.on("console", onConsole("worker"));
  });
  await page.goto(url);
  return { page, problems, workers };
}

/** Types text into the page the way a paste does: sets the value and fires "input". */
export async function paste(page, text) {
  await page.evaluate((t) => {
    const input = document.getElementById("input");
    input.value = t;
    input.dispatchEvent(new Event("input", { bubbles: true }));
  }, text);
}

export async function settled(page, states = ["done"], timeout = 20_000) {
  await page.waitForFunction((s) => s.includes(document.body.dataset.state), states, { timeout });
  return page.evaluate(() => document.body.dataset.state);
}

export async function openTab(page, name) {
  await page.click(`#tab-${name}`);
  return page.locator(`#panel-${name}`);
}

/** Replaces navigator.clipboard.writeText so a test can read what was copied. */
export async function captureClipboard(page) {
  await page.evaluate(() => {
    window.__copied = [];
    navigator.clipboard.writeText = async (text) => {
      window.__copied.push(text);
    };
  });
  return async () => page.evaluate(() => window.__copied.at(-1));
}

export { assert };
