// The npm package (pkg/): `npm pack` makes a tarball that installs into a
// scratch project (offline: a local tarball needs no registry) and works
// there from Node, with typed functions whose interfaces tsify generated
// from the Rust types.
//
//   cd www && node --test --test-reporter=tap tests/

import { after, before, describe, test } from "node:test";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assert, ROOT } from "./harness.mjs";

const PKG = join(ROOT, "pkg");
const BUILT = ["fabricscope.js", "fabricscope_bg.wasm", "package.json"].every((f) => existsSync(join(PKG, f)));

function npm(args, cwd) {
  return execFileSync("npm", [...args, "--no-audit", "--no-fund", "--loglevel=error"], { cwd, encoding: "utf8" });
}

describe("npm package", { skip: BUILT ? false : "pkg/ is not built: run scripts/build-wasm.sh" }, () => {
  let scratch;
  let tarball;

  before(() => {
    scratch = mkdtempSync(join(tmpdir(), "fabricscope-npm-"));
    const packed = JSON.parse(npm(["pack", "--json", "--pack-destination", scratch], PKG));
    tarball = join(scratch, packed[0].filename);
    writeFileSync(join(scratch, "package.json"), JSON.stringify({ name: "scratch", private: true, type: "module" }));
    npm(["install", "--offline", tarball], scratch);
  });

  after(() => rmSync(scratch, { recursive: true, force: true }));

  test("the tarball holds the package files, versioned like the crate", () => {
    const pkg = JSON.parse(readFileSync(join(scratch, "node_modules/fabricscope/package.json"), "utf8"));
    const cargo = readFileSync(join(ROOT, "Cargo.toml"), "utf8").match(/^version = "([^"]+)"/m)[1];
    assert.equal(pkg.version, cargo);
    assert.equal(pkg.license, "MIT OR Apache-2.0");
    assert.equal(pkg.exports["."].node, "./node.js");
    assert.equal(pkg.exports["."].types, "./index.d.ts");
    for (const f of ["index.js", "node.js", "index.d.ts", "fabricscope.js", "fabricscope.d.ts", "fabricscope_bg.wasm", "README.md"]) {
      assert.ok(existsSync(join(scratch, "node_modules/fabricscope", f)), f);
    }
  });

  test("installed, it analyses from Node with plain objects in and out", () => {
    writeFileSync(join(scratch, "use.mjs"), `
      import { analyze, redact, parseInterval, version, rules } from "fabricscope";
      const paste = "[root@node01 ~]# ibstat\\nCA 'mlx5_0'\\n\\tCA type: MT4129\\n\\tPort 1:\\n\\t\\tState: Down\\n\\t\\tPhysical state: Polling\\n\\t\\tLink layer: InfiniBand\\n";
      const report = analyze(paste, { interval: "30s" });
      let thrown = null;
      try { parseInterval("soon"); } catch (e) { thrown = e.message; }
      console.log(JSON.stringify({
        version: version(),
        status: report.status,
        first: report.findings[0],
        host: report.document.sections[0].host,
        redacted: redact(paste).text.split("\\n")[0],
        interval: parseInterval("2m"),
        thrown,
        rules: rules().length,
      }));
    `);
    const out = JSON.parse(execFileSync("node", ["use.mjs"], { cwd: scratch, encoding: "utf8" }));
    assert.match(out.version, /^\d+\.\d+\.\d+/);
    assert.equal(out.status, "critical");
    assert.equal(out.first.rule, "IB001");
    assert.equal(out.first.subject.host, "node01");
    assert.equal(out.first.evidence[0].first_line, 4, "the Port 1 block (line 1 is the prompt)");
    assert.equal(out.host, "node01");
    assert.equal(out.redacted, "[root@host-1 ~]# ibstat");
    assert.equal(out.interval, 120);
    assert.match(out.thrown, /interval "soon"/);
    assert.ok(out.rules > 10);
  });

  test("its TypeScript types are generated from the Rust types", () => {
    const dts = readFileSync(join(scratch, "node_modules/fabricscope/fabricscope.d.ts"), "utf8");
    for (const name of ["Report", "Finding", "Evidence", "Measurements", "Throughput", "Document", "Options", "AnalysisReport", "Redacted"]) {
      assert.match(dts, new RegExp(`export (interface|type) ${name}\\b`), name);
    }
    assert.match(dts, /export type Severity = "info" \| "warning" \| "error" \| "critical";/);
    assert.match(dts, /interface Finding \{[^}]*severity: Severity;/);
    assert.match(dts, /interface Options \{[^}]*interval\?: string;/);
    const api = readFileSync(join(scratch, "node_modules/fabricscope/index.d.ts"), "utf8");
    assert.match(api, /export function analyze\(text: string, options\?: Options\): AnalysisReport;/);
  });
});
