#!/usr/bin/env bash
# The wasm figure: parse + analyze MB/s of the WebAssembly build in Node on a
# ~10 MB paste (hosts of a generated fleet, each command behind its prompt),
# as a ratio to the native build on the same paste in the same run.
#
#   scripts/bench-wasm.sh            (builds pkg/ and target/release if missing)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
[[ -f pkg/fabricscope_bg.wasm ]] || bash scripts/build-wasm.sh
[[ -x target/release/fabricscope ]] || cargo build --release --quiet
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
python3 scripts/gen-fleet.py "$WORK/fleet" --nodes 220 --seed 7
python3 - "$WORK/fleet" "$WORK/paste.txt" <<'PY'
import os, re, sys
root, out = sys.argv[1], sys.argv[2]
def command(name):
    m = re.match(r"perfquery_mlx5_(\d)_\d\.txt", name)
    if m:
        return f"perfquery -x -C mlx5_{m.group(1)} -P 1"
    return {"ibstat.txt": "ibstat", "nvlink_s.txt": "nvidia-smi nvlink -s",
            "nvlink_e.txt": "nvidia-smi nvlink -e", "nvlink_gt.txt": "nvidia-smi nvlink -gt d",
            "topo_m.txt": "nvidia-smi topo -m"}[name]
with open(out, "w") as f:
    for host in sorted(os.listdir(root)):
        for name in sorted(os.listdir(os.path.join(root, host))):
            f.write(f"[root@{host} ~]# {command(name)}\n")
            f.write(open(os.path.join(root, host, name)).read())
        if f.tell() > 10_000_000:
            break
PY
SIZE=$(wc -c < "$WORK/paste.txt")
WASM=$(node scripts/bench-wasm.mjs "$WORK/paste.txt" 3)
NATIVE_BEST=""
for _ in 1 2 3; do
  start=$(date +%s.%N)
  target/release/fabricscope analyze "$WORK/paste.txt" --format json --include-sections --fail-on never > /dev/null
  end=$(date +%s.%N)
  t=$(echo "$end - $start" | bc -l)
  if [[ -z "$NATIVE_BEST" ]] || (( $(echo "$t < $NATIVE_BEST" | bc -l) )); then NATIVE_BEST=$t; fi
done
python3 - "$SIZE" "$NATIVE_BEST" "$WASM" <<'PY'
import json, sys
size, native, wasm = int(sys.argv[1]), float(sys.argv[2]), json.loads(sys.argv[3])
n = size / native / 1e6
print(f"paste {size/1e6:.1f} MB: native {n:.1f} MB/s ({native:.2f} s), "
      f"wasm in Node {wasm['mb_per_s']:.1f} MB/s ({wasm['seconds']:.2f} s): wasm/native = {wasm['mb_per_s']/n:.2f}")
PY
