#!/usr/bin/env bash
# A profile-guided release build of the command-line client:
# target/pgo/release/fabricscope.
#
# Profile-guided optimisation (PGO) lets the compiler lay out and inline the
# code by how often each branch ran on real work: the parsers' common lines,
# the measuring and the rules of a healthy host. It changes no result (the
# reports are byte for byte those of `cargo build --release`); it cut the
# CPU time of a 1,000-host fleet run by about a tenth (scripts/bench-fleet.py,
# same run).
#
# Three steps, about 10 minutes on two cores:
#   1. an instrumented build (target/pgo-gen), which counts what it runs;
#   2. training runs of it on inputs *other than the benchmark's*: a 300-host
#      fleet generated with another seed than `make bench-fleet` uses, the
#      bundled examples and every rule fixture under tests/fixtures, in the
#      text, JSON and NDJSON formats, merged with llvm-profdata;
#   3. the optimised build (target/pgo), read from that profile.
#
# It needs llvm-profdata of the compiler's own LLVM: the `llvm-tools`
# rustup component (added here when rustup is there).
#
#   scripts/build-pgo.sh
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

host="$(rustc -vV | sed -n 's/^host: //p')"
profdata="$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata"
if [[ ! -x "$profdata" ]] && command -v rustup > /dev/null; then
    rustup component add llvm-tools > /dev/null
fi
if [[ ! -x "$profdata" ]]; then
    echo "build-pgo: llvm-profdata not found (rustup component add llvm-tools)" >&2
    exit 1
fi

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
# Cargo keeps one build per RUSTFLAGS only: each step has its own target
# directory, so neither rebuilds the other's (nor the plain one's).
RUSTFLAGS="-Cprofile-generate=$WORK/raw" cargo build --release --quiet --target-dir target/pgo-gen
trained=target/pgo-gen/release/fabricscope

python3 scripts/gen-fleet.py "$WORK/fleet" --nodes 300 --seed 20261205 > /dev/null
train() { "$trained" analyze --fail-on never "$@" > /dev/null 2>&1; }
for format in text json ndjson; do
    train "$WORK/fleet" --format "$format"
    train examples --format "$format"
    train tests/fixtures --format "$format"
done

"$profdata" merge -o "$WORK/merged.profdata" "$WORK/raw"
mkdir -p target/pgo
cp "$WORK/merged.profdata" target/pgo/fabricscope.profdata
RUSTFLAGS="-Cprofile-use=$ROOT/target/pgo/fabricscope.profdata" \
    cargo build --release --quiet --target-dir target/pgo
echo "build-pgo: target/pgo/release/fabricscope"
