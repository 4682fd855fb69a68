#!/usr/bin/env bash
# Runs every check fabricscope has, installing what is missing on a fresh
# Debian machine first. Ends with one line: `ci: N passed, M failed`.
#
#   ./scripts/test.sh            everything
#   FUZZ_SECONDS=60 ./scripts/test.sh   longer fuzz smoke per target (default 20)
#   SKIP_INSTALL=1 ./scripts/test.sh    do not install anything
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

# Counts of passed and failed tests in a runner's log, printed as "P F".
cargo_counts() {
  grep -E '^test result:' "$1" |
    sed -E 's/.* ([0-9]+) passed; ([0-9]+) failed.*/\1 \2/' |
    awk '{p+=$1; f+=$2} END {print p+0, f+0}'
}
tap_counts() {
  awk '/^# pass /{p+=$3} /^# fail /{f+=$3} END {print p+0, f+0}' "$1"
}

# Runs a test runner, adds the counts its log reports (read by COUNTER), and
# counts one failure more when it exits non-zero without reporting any.
counted() {
  local name=$1 counter=$2
  shift 2
  say "$name"
  local out
  out="$log_dir/$(echo "$name" | tr -c 'a-zA-Z0-9' _).log"
  "$@" 2>&1 | tee "$out"
  local rc=${PIPESTATUS[0]} p f
  read -r p f < <("$counter" "$out")
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
counted "cargo test" cargo_counts cargo test --locked
# `cargo test` builds with proptest's num-traits/std; the shipped build must
# too, or the float functions the tests check are not the ones it prints.
check "shipped build has the tested float functions (num-traits std)" \
  bash -c "cargo tree --locked -e normal,build,features -i num-traits | grep -q 'num-traits feature \"std\"'"
# The README's first command, exactly as written there, must keep working.
readme_demo=$(awk '/^```sh/ {inside=1; next} inside {print; exit}' README.md)
check "README demo: $readme_demo" bash -c "$readme_demo"
check "wasm32 build" bash scripts/build-wasm.sh
if [ -f www/package.json ] && [ -d www/node_modules ] && [ -f pkg/fabricscope.js ]; then
  counted "browser and wasm tests" tap_counts bash -c 'cd www && node --test --test-reporter=tap tests/'
else
  failed=$((failed + 1))
  failures+=("browser and wasm tests (pkg or node_modules missing)")
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
