#!/usr/bin/env bash
# Runs every cargo-fuzz target for a short while (default 20 s each), seeded
# from the committed corpus plus, read-only, the real samples in ../shared.
# Skips with a message (exit 0) when no nightly toolchain or cargo-fuzz exists.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
export PATH="$HOME/.cargo/bin:$PATH"
if ! command -v cargo-fuzz >/dev/null; then
  echo "fuzz smoke skipped: cargo-fuzz is not installed"
  exit 0
fi
if ! rustup toolchain list | grep -q '^nightly'; then
  echo "fuzz smoke skipped: no nightly toolchain"
  exit 0
fi
extra=()
for d in ../shared/corpus/own ../shared/corpus/public; do
  [ -d "$d" ] && extra+=("$d")
done
targets=$(cd fuzz && cargo +nightly fuzz list)
# Build once with the same profile `fuzz run` uses, so no target rebuilds.
cargo +nightly fuzz build
for t in $targets; do
  mkdir -p "fuzz/corpus/$t"
  seeds=("fuzz/corpus/$t")
  for d in "${extra[@]}"; do
    while IFS= read -r -d '' sub; do seeds+=("$sub"); done < <(find "$d" -mindepth 1 -maxdepth 1 -type d -print0)
  done
  echo "fuzzing $t for ${seconds}s"
  # New inputs go to a scratch dir so a smoke run never dirties the checkout.
  scratch=$(mktemp -d)
  cargo +nightly fuzz run "$t" "$scratch" "${seeds[@]}" -- \
    -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=262144 -timeout=10 2>&1 |
    grep -E 'Done|ERROR|panicked|SUMMARY|crash-|timeout-|oom-' || true
  status=${PIPESTATUS[0]}
  rm -rf "$scratch"
  if [ "$status" -ne 0 ]; then
    echo "fuzz target $t failed (see fuzz/artifacts/$t)"
    exit 1
  fi
done
echo "fuzz smoke: all targets ran ${seconds}s without a crash"
