#!/usr/bin/env bash
# Runs every check fabricscope has, installing what is missing on a fresh
# Debian machine first. Ends with one line: `ci: N passed, M failed`.
#
#   bash scripts/test.sh            everything
#   FUZZ_SECONDS=60 bash scripts/test.sh   longer fuzz smoke per target (default 20)
#   SKIP_INSTALL=1 bash scripts/test.sh    do not install anything
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
log_dir=$(mktemp -d)
trap 'rm -rf "$log_dir"' EXIT

passed=0
failed=0
failures=()

say() { printf '\n==== %s\n' "$*"; }

# A check that counts as one test: passes when the command exits 0.
check() {
  local name=$1
  shift
  say "$name"
  if "$@"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    failures+=("$name")
  fi
}

# Runs cargo test-like output and adds its `test result:` counts.
count_cargo() {
  local name=$1
  shift
  say "$name"
  local out="$log_dir/$(echo "$name" | tr -c 'a-zA-Z0-9' _).log"
  "$@" 2>&1 | tee "$out"
  local rc=${PIPESTATUS[0]}
  local p f
  p=$(grep -E '^test result:' "$out" | sed -E 's/.* ([0-9]+) passed.*/\1/' | awk '{s+=$1} END {print s+0}')
  f=$(grep -E '^test result:' "$out" | sed -E 's/.* ([0-9]+) failed.*/\1/' | awk '{s+=$1} END {print s+0}')
  passed=$((passed + ${p:-0}))
  failed=$((failed + ${f:-0}))
  if [ "$rc" -ne 0 ] && [ "${f:-0}" -eq 0 ]; then
    failed=$((failed + 1))
    failures+=("$name (exit $rc)")
  elif [ "${f:-0}" -ne 0 ]; then
    failures+=("$name")
  fi
}

# Adds the counts of a TAP stream (node --test).
count_tap() {
  local name=$1
  shift
  say "$name"
  local out="$log_dir/$(echo "$name" | tr -c 'a-zA-Z0-9' _).log"
  "$@" 2>&1 | tee "$out"
  local rc=${PIPESTATUS[0]}
  local p f
  p=$(grep -E '^# pass ' "$out" | awk '{s+=$3} END {print s+0}')
  f=$(grep -E '^# fail ' "$out" | awk '{s+=$3} END {print s+0}')
  passed=$((passed + p))
  failed=$((failed + f))
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    failed=$((failed + 1))
    failures+=("$name (exit $rc)")
  elif [ "$f" -ne 0 ]; then
    failures+=("$name")
  fi
}

if [ -z "${SKIP_INSTALL:-}" ]; then
  say "install"
  bash scripts/install-deps.sh || echo "install-deps reported a problem; the affected checks will fail below"
fi
export PATH="$HOME/.cargo/bin:$PATH"

check "cargo fmt --check" cargo fmt --all -- --check
check "clippy (all targets, all features)" cargo clippy --locked --all-targets --all-features -- -D warnings
check "cargo deny (licenses, bans, sources)" cargo deny --log-level error check licenses bans sources
check "rustdoc (no broken links)" env RUSTDOCFLAGS="-D warnings" cargo doc --locked --no-deps --all-features
check "library builds without default features" cargo build --locked --lib --no-default-features
count_cargo "cargo test" cargo test --locked
# The README's first command, exactly as written there, must keep working.
readme_demo=$(awk '/^```sh/ {inside=1; next} inside {print; exit}' README.md)
check "README demo: $readme_demo" bash -c "$readme_demo"
check "wasm32 build" bash scripts/build-wasm.sh
if [ -f www/package.json ] && [ -d www/node_modules ] && [ -f pkg/fabricscope.js ]; then
  count_tap "browser end-to-end" bash -c 'cd www && node --test --test-reporter=tap tests/'
else
  failed=$((failed + 1))
  failures+=("browser end-to-end (pkg or node_modules missing)")
fi
if [ -x scripts/fuzz-smoke.sh ]; then
  check "fuzz smoke" bash scripts/fuzz-smoke.sh "${FUZZ_SECONDS:-20}"
fi

echo
if [ ${#failures[@]} -gt 0 ]; then
  printf 'failed: %s\n' "${failures[@]}"
fi
echo "ci: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
