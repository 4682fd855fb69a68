// The built site (scripts/build-site.sh, `make site`): self-contained,
// versioned asset paths, and working offline once loaded (service worker).
//
//   cd www && node --test --test-reporter=tap tests/

import { after, before, describe, test } from "node:test";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assert, BUILT, NOT_BUILT, ROOT, launch, settled, startServer } from "./harness.mjs";

if (!BUILT) test("built site", { skip: NOT_BUILT }, () => {});
else describe("built site", () => {
  let out;
  let version;
  let server;
  let browser;

  before(async () => {
    out = join(mkdtempSync(join(tmpdir(), "fabricscope-site-")), "site");
    execFileSync("bash", [join(ROOT, "scripts/build-site.sh"), out], { stdio: "ignore" });
    version = readdirSync(out).find((f) => /^[0-9a-f]{12}$/.test(f));
    server = await startServer(out, "/index.html");
    browser = await launch();
  });

  after(async () => {
    await browser?.close();
    server?.child.kill();
  });

  test("holds the page, the engine and the examples under a content-hashed directory", () => {
    assert.ok(version, "a versioned directory");
    const html = readFileSync(join(out, "index.html"), "utf8");
    assert.match(html, new RegExp(`src="${version}/www/main.js"`));
    assert.match(html, new RegExp(`href="${version}/www/style.css"`));
    assert.doesNotMatch(html, /(src|href)="\/|https?:\/\//, "relative paths only");
    for (const f of ["www/worker.js", "www/pictures.js", "pkg/fabricscope_bg.wasm", "www/examples/ib-two-hosts.txt"]) {
      assert.ok(readFileSync(join(out, version, f)).length > 0, f);
    }
    const sw = readFileSync(join(out, "sw.js"), "utf8");
    assert.match(sw, new RegExp(`"${version}/pkg/fabricscope_bg.wasm"`));
  });

  test("analyses from any static server, then works offline", async () => {
    const context = await browser.newContext();
    const problems = [];
    const page = await context.newPage();
    page.on("pageerror", (err) => problems.push(err.message));
    page.on("response", (res) => res.status() >= 400 && problems.push(`HTTP ${res.status()}: ${res.url()}`));
    await page.goto(`${server.base}/index.html`);
    await settled(page, ["idle"]);
    await page.getByRole("button", { name: "InfiniBand, 2 hosts" }).click();
    await settled(page);
    assert.ok(await page.locator("#panel-findings details.finding").count() > 0);
    await page.evaluate(() => navigator.serviceWorker.ready);
    // clients.claim() makes the service worker control this page too.
    await page.waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: 10_000 });

    await context.setOffline(true);
    await page.reload();
    await settled(page, ["idle"]);
    await page.getByRole("button", { name: "IB sim: ports down" }).click();
    await settled(page);
    assert.ok(await page.locator("#panel-findings details.finding").count() > 0, "analysed offline");
    assert.deepEqual(problems, []);
    await context.close();
  });
});
