#!/usr/bin/env bash
# Installs what the checks need on a fresh Debian machine, skipping whatever is
# already there. Every step is idempotent; nothing is downloaded outside the
# package registries (apt, crates.io, npm).
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
status=0

# Debian packages: Chromium for the browser tests; ibsim, opensm and
# infiniband-diags to run the genuine InfiniBand tools on simulated fabrics.
need_apt=()
command -v chromium >/dev/null || need_apt+=(chromium)
command -v ibsim >/dev/null || need_apt+=(ibsim-utils)
command -v opensm >/dev/null || need_apt+=(opensm)
command -v ibqueryerrors >/dev/null || need_apt+=(infiniband-diags)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "apt: installing ${need_apt[*]}"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_apt[@]}"; } || status=1
fi

# The wasm target, from the Rust distribution server (never `rustup update`).
rustup target list --installed | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown || status=1

# wasm-bindgen-cli must equal the wasm-bindgen crate version in Cargo.lock.
want=$(awk '$0=="name = \"wasm-bindgen\"" {getline; gsub(/version = |"/,""); print; exit}' Cargo.lock)
have=$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')
if [ -n "$want" ] && [ "$have" != "$want" ]; then
  echo "cargo: installing wasm-bindgen-cli $want"
  cargo install wasm-bindgen-cli --version "=$want" --locked ||
    cargo install wasm-bindgen-cli --version "=$want" || status=1
fi

# cargo-fuzz for the fuzz smoke run (needs the nightly toolchain, which the
# machine image carries; without it the smoke run is skipped).
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked || status=1

# cargo-deny for the licence/bans/sources policy in deny.toml.
command -v cargo-deny >/dev/null || cargo install cargo-deny --locked || cargo install cargo-deny || status=1

# npm packages for the page: binaryen (wasm-opt) and playwright-core.
if [ -f www/package-lock.json ]; then
  (cd www && npm ci --no-audit --no-fund) || status=1
fi
exit $status
