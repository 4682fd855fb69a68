#!/usr/bin/env bash
# check-stable.sh - self-check that the simulator captures are reproducible.
#
#  1. runs generate-fixtures.sh twice into two scratch dirs under /tmp and
#     requires both runs to be byte-identical to each other and to the
#     committed tests/fixtures/ibsim/ tree;
#  2. runs random-fabric.py twice with the same seed and requires identical
#     output directories.
#
# Usage: scripts/ibsim/check-stable.sh [SEED]     (exit 0 = stable)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$HERE/../.." && pwd)
SEED=${1:-7}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fabricscope-stable.XXXXXX")
trap 'rm -rf -- "$WORK"' EXIT

status=0
for run in 1 2; do
	"$HERE/generate-fixtures.sh" "$WORK/fixtures$run" 2>"$WORK/gen$run.log" || {
		cat "$WORK/gen$run.log" >&2
		exit 1
	}
done
if diff -r "$WORK/fixtures1" "$WORK/fixtures2"; then
	echo "generate-fixtures.sh: run 1 == run 2 ($(find "$WORK/fixtures1" -type f | wc -l) files)"
else
	echo "generate-fixtures.sh: runs differ" >&2
	status=1
fi
if diff -r "$WORK/fixtures1" "$REPO_ROOT/tests/fixtures/ibsim"; then
	echo "generate-fixtures.sh: run 1 == committed tests/fixtures/ibsim"
else
	echo "generate-fixtures.sh: output differs from the committed fixtures" >&2
	status=1
fi

for run in 1 2; do
	python3 "$HERE/random-fabric.py" --seed "$SEED" --out "$WORK/random$run"
done
if diff -r "$WORK/random1" "$WORK/random2"; then
	echo "random-fabric.py --seed $SEED: run 1 == run 2 ($(find "$WORK/random1" -type f | wc -l) files)"
else
	echo "random-fabric.py --seed $SEED: runs differ" >&2
	status=1
fi
exit $status
