#!/usr/bin/env bash
# One leg of a fuzzing campaign: runs the prebuilt libFuzzer binary of TARGET
# for SECONDS, seeded from the committed corpus, the repo fixtures and, read
# only, the shared samples in ../shared/corpus. New inputs go to SCRATCH (never
# into the checkout); crashes, timeouts and OOMs go to fuzz/artifacts/TARGET/.
# Prints libFuzzer's final stats and the CPU time the run used.
#
#   cargo +nightly fuzz build -O        # once, from fuzz/
#   scripts/fuzz-campaign.sh TARGET SECONDS SCRATCH [extra libFuzzer flags...]
#   scripts/fuzz-campaign.sh input 600 "$tmp/input-dict" -only_ascii=1 -dict=fuzz/dict/tools.dict
set -euo pipefail
cd "$(dirname "$0")/.."
target=$1 seconds=$2 scratch=$3
shift 3
bin=fuzz/target/x86_64-unknown-linux-gnu/release/$target
[ -x "$bin" ] || { echo "build first: (cd fuzz && cargo +nightly fuzz build -O)"; exit 2; }
mkdir -p "$scratch" "fuzz/artifacts/$target" "fuzz/corpus/$target"
seeds=("fuzz/corpus/$target" tests/fixtures)
for d in ../shared/corpus/own ../shared/corpus/public; do
  [ -d "$d" ] && seeds+=("$d")
done
# The first directory receives new inputs; the rest are only read.
/usr/bin/time -f "cpu_seconds %U user %S sys, max_rss_kb %M, wall %e" \
  "$bin" "$scratch" "${seeds[@]}" \
  -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -max_len=262144 \
  -report_slow_units=1 -print_final_stats=1 \
  -artifact_prefix="fuzz/artifacts/$target/" "$@"
