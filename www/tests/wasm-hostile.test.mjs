// The wasm build under hostile input, in Node (no browser): the same
// guarantees as the native library. A panic in Rust surfaces in JS as a
// WebAssembly.RuntimeError ("unreachable"); every other failure must be a
// plain Error whose message a person can act on (size limit, bad options).
//
//   cd www && node --test --test-reporter=tap tests/

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const JS = join(ROOT, "pkg/fabricscope.js");
const WASM = join(ROOT, "pkg/fabricscope_bg.wasm");
const BUILT = existsSync(JS) && existsSync(WASM);

/** A small deterministic generator, so a failure reproduces. */
function rng(seed) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13; x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5; x >>>= 0;
    return x;
  };
}

function examples() {
  const dir = join(ROOT, "www/examples");
  return readdirSync(dir)
    .filter((f) => f.endsWith(".txt"))
    .map((f) => readFileSync(join(dir, f), "utf8"));
}

/** Runs analyze and parse; returns the thrown error if any. */
function both(engine, text, options = "{}") {
  for (const f of [engine.analyze, engine.parse]) {
    try {
      JSON.parse(f(text, options));
    } catch (e) {
      return e;
    }
  }
  return null;
}

function assertNoPanic(err, what) {
  if (err === null) return;
  assert.ok(!(err instanceof WebAssembly.RuntimeError), `${what}: wasm trapped (a Rust panic): ${err}`);
  assert.ok(err instanceof Error && err.message.length > 0, `${what}: unclear error ${err}`);
}

describe("wasm engine under hostile input", { skip: BUILT ? false : "pkg/ is not built: run scripts/build-wasm.sh" }, async () => {
  const engine = BUILT ? await import(JS) : null;
  if (BUILT) engine.initSync({ module: readFileSync(WASM) });

  test("bit flips and truncations of every example never trap", () => {
    const next = rng(0xf00d);
    let runs = 0;
    for (const text of examples()) {
      for (let i = 0; i < 20; i++) {
        const chars = [...text];
        for (let k = 0; k <= next() % 8; k++) {
          const at = next() % chars.length;
          chars[at] = String.fromCharCode(chars[at].charCodeAt(0) ^ (1 << (next() % 7)));
        }
        assertNoPanic(both(engine, chars.join("")), "bit flip");
        runs++;
      }
      for (const cut of [1, text.length >> 2, text.length >> 1, text.length - 1]) {
        assertNoPanic(both(engine, text.slice(0, cut)), "truncation");
        runs++;
      }
    }
    assert.ok(runs > 50);
  });

  test("random code points never trap", () => {
    const next = rng(42);
    for (const len of [0, 1, 100, 5000]) {
      let s = "";
      for (let i = 0; i < len; i++) s += String.fromCodePoint(next() % 0xd000);
      assertNoPanic(both(engine, s), `random ${len}`);
    }
  });

  test("pathological shapes stay bounded and say what happened", () => {
    const blank = "\n".repeat(500_000);
    assert.equal(both(engine, blank), null);
    const longLine = "CA 'mlx5_0'\n\tCA type: MT4123\n" + "A".repeat(1 << 20) + "\n";
    const doc = JSON.parse(engine.parse(longLine, "{}"));
    assert.ok(doc.unrecognised.some((u) => u.first_line === 3 && /longer than the limit/.test(u.reason)));
    const headers = "GPU 0: NVIDIA H200 (UUID: GPU-1)\n\t Link 999999: 26.562 GB/s\n".repeat(20_000);
    assertNoPanic(both(engine, headers), "repeated headers");
  });

  test("limits and bad options are clear errors, not traps", () => {
    const err = both(engine, "x".repeat(2000), JSON.stringify({ max_input_bytes: 1000 }));
    assertNoPanic(err, "limit");
    assert.match(String(err?.message), /more than the limit of 1000 bytes/);
    const bad = both(engine, "$ ibstat\n", "{not json");
    assertNoPanic(bad, "bad options");
    assert.match(String(bad?.message), /options/);
  });
});
