#!/usr/bin/env python3
"""Time `fabricscope parse` on one big `nvidia-smi nvlink -e` paste against awk, in the same run.

Builds the paste the issue measures: the `nvidia-smi nvlink -e` output of
generated hosts (scripts/gen-fleet.py's generator), each line behind a
pdsh-style `host: ` prefix, until it reaches --mb megabytes (12 by
default). Then, after warming the page cache, times

  * `awk '{ n += NF }'` reading the paste once and splitting its lines
    into fields, about the least any reader of it does, and
  * for each --bin given (compare builds in one run): `fabricscope parse`
    (text) and `fabricscope parse --format json`, output discarded,

and prints wall and CPU seconds (user + system), MB/s of CPU time, the
ratio to awk and peak RSS (from `/usr/bin/time -v`, as a multiple of the
input too). The fastest of --repeat runs counts. Timings on a shared
machine are noisy: read the ratios, not the seconds.

    python3 scripts/bench-paste.py [--mb 12] [--bin target/release/fabricscope ...]
"""

import argparse
import importlib.util
import os
import random
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def load_generator():
    spec = importlib.util.spec_from_file_location("gen_fleet", os.path.join(HERE, "gen-fleet.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_paste(path, megabytes, seed):
    gen = load_generator()
    rng = random.Random(seed)
    size, node = 0, 0
    with open(path, "w", encoding="ascii") as out:
        while size < megabytes * 1e6:
            host = gen.host_name(node)
            block = "".join(f"{host}: {line}\n" for line in gen.nvlink_e(rng, node, None).splitlines())
            out.write(block)
            size += len(block)
            node += 1
    return size, node


def timed(cmd):
    """Wall seconds, CPU seconds (user + system, from getrusage: finer than
    GNU time's hundredths) and peak RSS in KiB (from `/usr/bin/time`)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode not in (0, 1):
        sys.stderr.write(p.stderr.decode(errors="replace")[-2000:])
        raise SystemExit(f"{cmd} exited {p.returncode}")
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return wall, cpu, int(p.stderr.decode().strip().splitlines()[-1])


def best_of(cmd, repeat):
    runs = [timed(cmd) for _ in range(repeat)]
    return min(runs, key=lambda r: r[1])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--mb", type=float, default=12.0, help="paste size in MB (10^6 bytes)")
    p.add_argument("--bin", action="append",
                   help="fabricscope binary to time (repeatable); default target/release/fabricscope")
    p.add_argument("--repeat", type=int, default=3, help="runs per command; the least CPU counts")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--keep", help="write the paste here and keep it")
    a = p.parse_args()
    bins = a.bin or [os.path.join(HERE, "..", "target", "release", "fabricscope")]
    for b in bins:
        if not os.path.exists(b):
            raise SystemExit(f"{b} not found: run `cargo build --release` first")
    path = a.keep or tempfile.mkstemp(prefix="fabricscope-paste-", suffix=".txt")[1]
    try:
        size, hosts = make_paste(path, a.mb, a.seed)
        mb = size / 1e6
        print(f"paste: {hosts} hosts' `nvidia-smi nvlink -e` behind pdsh prefixes, {mb:.1f} MB")
        awk = ["awk", "{ n += NF } END { print n }", path]
        timed(awk)  # warm the page cache
        awk_wall, awk_cpu, awk_rss = best_of(awk, a.repeat)
        print(f"{'awk {n += NF}':<48} wall {awk_wall:5.2f} s  CPU {awk_cpu:5.2f} s  "
              f"{mb / max(awk_cpu, 1e-3):7.1f} MB/s  peak RSS {awk_rss / 1024:5.0f} MB")
        for b in bins:
            for extra in ([], ["--format", "json"]):
                wall, cpu, rss = best_of([b, "parse", path] + extra, a.repeat)
                name = f"{b} parse {' '.join(extra)}".strip()
                print(f"{name:<48} wall {wall:5.2f} s  CPU {cpu:5.2f} s  "
                      f"{mb / max(cpu, 1e-3):7.1f} MB/s  {cpu / max(awk_cpu, 1e-3):5.1f}x awk CPU  "
                      f"peak RSS {rss / 1024:5.0f} MB = {rss * 1024 / size:4.1f}x input")
    finally:
        if not a.keep:
            os.unlink(path)


if __name__ == "__main__":
    main()
