#!/usr/bin/env bash
# Builds the WebAssembly package for the web page into pkg/ (fabricscope.js,
# fabricscope_bg.wasm). Safe to run again: it installs only what is missing.
#
#   scripts/build-wasm.sh
#
# Then serve the repository root and open /www/:
#   python3 -m http.server 8000 --bind 127.0.0.1
#
# Tools: the wasm32 target (rustup), wasm-bindgen-cli at exactly the version of
# the wasm-bindgen crate in Cargo.lock, and wasm-opt from the npm `binaryen`
# package pinned in www/package.json. Debian's /usr/bin/wasm-opt is too old and
# silently corrupts wasm-bindgen output, so it is never used.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

TARGET=wasm32-unknown-unknown
CRATE=fabricscope
OUT=pkg
WASM_OPT="www/node_modules/.bin/wasm-opt"
TARGET_DIR="${CARGO_TARGET_DIR:-target}"

step() { printf '==> %s\n' "$*" >&2; }

lock_version() {
  awk -v name="$1" '$0 == "name = \"" name "\"" { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock
}

ensure_target() {
  if ! rustup target list --installed | grep -qx "$TARGET"; then
    step "rustup target add $TARGET"
    rustup target add "$TARGET"
  fi
}

ensure_wasm_bindgen() {
  [[ -f Cargo.lock ]] || cargo generate-lockfile
  local want
  want="$(lock_version wasm-bindgen)"
  [[ -n "$want" ]] || { echo "wasm-bindgen is not in Cargo.lock; is the wasm feature wired up?" >&2; exit 1; }
  if [[ "$(wasm-bindgen --version 2>/dev/null)" != "wasm-bindgen $want" ]]; then
    step "cargo install wasm-bindgen-cli $want"
    # --locked can fail when the registry lacks a locked dependency version.
    cargo install wasm-bindgen-cli --version "=$want" --locked ||
      cargo install wasm-bindgen-cli --version "=$want"
  fi
}

ensure_npm() {
  if [[ ! -x "$WASM_OPT" ]]; then
    step "npm ci (www)"
    (cd www && npm ci --no-audit --no-fund)
  fi
}

build() {
  step "cargo build ($TARGET, profile wasm-release, features wasm)"
  cargo build --profile wasm-release --target "$TARGET" --no-default-features --features wasm --lib

  step "wasm-bindgen --target web --out-dir $OUT"
  wasm-bindgen --target web --out-dir "$OUT" "$TARGET_DIR/$TARGET/wasm-release/$CRATE.wasm"

  step "wasm-opt -Oz"
  "$WASM_OPT" -Oz "$OUT/${CRATE}_bg.wasm" -o "$OUT/${CRATE}_bg.wasm.tmp"
  mv "$OUT/${CRATE}_bg.wasm.tmp" "$OUT/${CRATE}_bg.wasm"
}

# pkg/package.json: the npm package around the wasm-bindgen output and the
# committed wrappers (index.js, node.js, index.d.ts); its version is the crate's.
package_json() {
  local version
  version="$(awk -F'"' '/^\[package\]/ { p = 1 } p && /^version = / { print $2; exit }' Cargo.toml)"
  cat > "$OUT/package.json" <<JSON
{
  "name": "fabricscope",
  "version": "$version",
  "description": "Reads InfiniBand and NVLink tool output (ibstat, perfquery, nvidia-smi …) and explains what is wrong with the fabric — WebAssembly, for Node, browsers and bundlers",
  "license": "MIT OR Apache-2.0",
  "keywords": ["infiniband", "nvlink", "hpc", "diagnostics", "wasm"],
  "type": "module",
  "main": "./node.js",
  "module": "./index.js",
  "types": "./index.d.ts",
  "exports": {
    ".": {
      "types": "./index.d.ts",
      "node": "./node.js",
      "default": "./index.js"
    },
    "./fabricscope_bg.wasm": "./fabricscope_bg.wasm",
    "./package.json": "./package.json"
  },
  "files": [
    "fabricscope.js",
    "fabricscope.d.ts",
    "fabricscope_bg.wasm",
    "fabricscope_bg.wasm.d.ts",
    "index.js",
    "index.d.ts",
    "node.js",
    "README.md"
  ],
  "sideEffects": ["./node.js"],
  "engines": { "node": ">=18" }
}
JSON
}

report_size() {
  local wasm="$OUT/${CRATE}_bg.wasm" bytes gz
  bytes="$(wc -c < "$wasm")"
  gz="$(gzip -9c "$wasm" | wc -c)"
  printf '%s: %d bytes (%d gzipped)\n' "$wasm" "$bytes" "$gz"
}

ensure_target
ensure_wasm_bindgen
ensure_npm
build
package_json
report_size
