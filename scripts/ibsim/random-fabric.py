#!/usr/bin/env python3
"""random-fabric.py - random simulated InfiniBand fabric + ground truth.

Builds a random but valid ibsim netfile from a seed (2-4 switches, 4-12 hosts
node01..nodeNN, plus a management host sm01 that runs opensm), brings it up
with a real opensm, injects random counters (including values beyond the
field width, which the simulator saturates) with the console PerformanceSet,
cuts random host links with Unlink, then writes into OUTDIR:

  fabric.net          the netfile
  <host>.txt          what a user on that host would paste: `$ ibstat`,
                      `$ perfquery -x <lid> <port>` and `$ perfquery <lid> <port>`
  fabric.txt          `$ iblinkinfo` run on sm01
  ibqueryerrors.txt   raw output of the GENUINE
                      `ibqueryerrors --threshold-file error_thresholds`
  error_thresholds    the threshold file it used (recommended values)
  truth.json          ground truth, schema in scripts/ibsim/README.md

Every output file is produced by real infiniband-diags binaries; the only
edit is the pid/date normalisation of ibsimnet.normalize_output.

Usage: random-fabric.py --seed N --out DIR [--hosts MIN-MAX]
Exit status: 0 ok, 1 simulator/tool failure, 2 missing packages or bad usage,
3 ground-truth self-check failed (ibqueryerrors disagrees with the injected
values; the outputs are still written for inspection).
"""
import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys

sys.dont_write_bytecode = True  # keep __pycache__ out of the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ibsimnet  # noqa: E402
from scenario_json import FIELD_BITS, read_thresholds  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
THRESHOLDS_FILE = os.path.join(HERE, "error_thresholds")
REQUIRED = ["ibsim", "ibsim-run", "opensm", "ibstat", "perfquery", "iblinkinfo", "ibqueryerrors"]
SWITCH_PORTS = 12

# The 13 counters ibqueryerrors checks, in the order it prints them.
ERROR_FIELDS = [
    "SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter", "PortRcvErrors",
    "PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors", "PortXmitDiscards",
    "PortXmitConstraintErrors", "PortRcvConstraintErrors", "LocalLinkIntegrityErrors",
    "ExcessiveBufferOverrunErrors", "VL15Dropped", "PortXmitWait",
]
EXT_FIELDS = ["PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts",
              "PortUnicastXmitPkts", "PortUnicastRcvPkts", "PortMultiCastXmitPkts", "PortMultiCastRcvPkts"]


def check_packages():
    missing = [c for c in REQUIRED if shutil.which(c) is None]
    if missing:
        sys.stderr.write(
            "random-fabric.py: error: missing simulator/diag tools: %s\n"
            "Install them with (as root, Debian/Ubuntu):\n"
            "    apt-get install -y --no-install-recommends ibsim-utils opensm infiniband-diags\n" % " ".join(missing)
        )
        sys.exit(2)


def pkg_version(name):
    try:
        return subprocess.run(["dpkg-query", "-W", "-f=${Version}", name], capture_output=True, text=True).stdout or None
    except OSError:
        return None


# --- random fabric definition ----------------------------------------------

def build_fabric(rng, min_hosts, max_hosts):
    """Return the definition: switches, hosts, links (with narrow flags)."""
    nsw = rng.randint(2, 4)
    nhosts = rng.randint(min_hosts, max_hosts)
    switches = ["sw%02d" % (i + 1) for i in range(nsw)]
    hosts = ["node%02d" % (i + 1) for i in range(nhosts)]
    free = {s: list(range(1, SWITCH_PORTS + 1)) for s in switches}
    links = []  # dicts: a=(node,port) b=(node,port) kind narrow

    def take(sw):
        return free[sw].pop(0)

    # switch chain, 1-2 ISLs between neighbours
    for i in range(nsw - 1):
        for _ in range(rng.randint(1, 2)):
            links.append({"a": (switches[i], take(switches[i])), "b": (switches[i + 1], take(switches[i + 1])),
                          "kind": "isl", "narrow": False})
    # management host on the first switch (never cut, never narrowed)
    links.append({"a": (switches[0], take(switches[0])), "b": ("sm01", 1), "kind": "sm", "narrow": False})
    for h in hosts:
        candidates = [s for s in switches if free[s]]
        sw = rng.choice(candidates)
        links.append({"a": (sw, take(sw)), "b": (h, 1), "kind": "host", "narrow": rng.random() < 0.15})
    return {"switches": switches, "hosts": hosts, "links": links}


def netfile_text(fab, seed):
    by_node = {}
    for l in fab["links"]:
        for end, other in ((l["a"], l["b"]), (l["b"], l["a"])):
            by_node.setdefault(end[0], []).append((end[1], other, l["narrow"]))
    lines = ["# fabricscope random fabric, seed %d (scripts/ibsim/random-fabric.py)" % seed,
             "width=11", "speed=7", ""]
    for s in fab["switches"]:
        lines.append('Switch\t%d "%s"\t# "MF0;%s:MQM8700/U1"' % (SWITCH_PORTS, s, s))
        for port, other, narrow in sorted(by_node.get(s, [])):
            lines.append('[%d]\t"%s"[%d]%s' % (port, other[0], other[1], "\tw=1" if narrow else ""))
        lines.append("")
    for h in ["sm01"] + fab["hosts"]:
        lines.append('Hca\t1 "%s"\t# "%s mlx5_0"' % (h, h))
        for port, other, narrow in sorted(by_node.get(h, [])):
            lines.append('[%d]\t"%s"[%d]%s' % (port, other[0], other[1], "\tw=1" if narrow else ""))
        lines.append("")
    return "\n".join(lines)


def pick_value(rng, field, attr, thresholds):
    """Value in one of three bands: under threshold, over it, or beyond the
    field width (the simulator clamps it to the maximum: saturation)."""
    bits = 64 if attr == "PortCountersExtended" else FIELD_BITS[(attr, field)]
    fmax = (1 << bits) - 1
    th = thresholds.get(field, 0)
    band = rng.choice(["under", "over", "saturate"])
    if attr == "PortCountersExtended":
        return rng.choice([rng.randint(1, 10**6), rng.randint(2**32, 2**48), fmax]), band
    if band == "under" and th >= 1:
        return rng.randint(1, th), band
    if band == "over" and th + 1 < fmax:
        return rng.randint(th + 1, fmax - 1), band
    return rng.choice([fmax, fmax + 1, fmax * 3, rng.randint(fmax + 1, 2 * fmax + 1000)]), "saturate"


def plan_faults(rng, fab, thresholds):
    host_links = [l for l in fab["links"] if l["kind"] == "host"]
    ncut = rng.randint(0, max(1, len(host_links) // 4))
    cut = rng.sample(host_links, ncut)
    cuts = [{"node": l["b"][0], "port": 1, "peer": list(l["a"]), "when": rng.choice(["before_sm", "after_sm"])}
            for l in cut]
    cut_nodes = {c["node"] for c in cuts}
    # counter targets: host ports (not cut) and switch ports with a live link
    targets = [(l["b"][0], 1) for l in host_links if l["b"][0] not in cut_nodes]
    targets += [l["a"] for l in fab["links"] if l["kind"] in ("isl", "host") and l["b"][0] not in cut_nodes]
    counters = []
    for node, port in rng.sample(targets, min(len(targets), rng.randint(2, 6))):
        for field in rng.sample(ERROR_FIELDS, rng.randint(1, 4)):
            value, band = pick_value(rng, field, "PortCounters", thresholds)
            counters.append({"node": node, "port": port, "attribute": "PortCounters", "field": field,
                             "value_set": value, "band": band})
        if rng.random() < 0.5:
            field = rng.choice(EXT_FIELDS)
            value, band = pick_value(rng, field, "PortCountersExtended", thresholds)
            counters.append({"node": node, "port": port, "attribute": "PortCountersExtended", "field": field,
                             "value_set": value, "band": "data"})
    return cuts, counters


# --- parsing the genuine ibqueryerrors output ---------------------------------

_ERR_HDR = re.compile(r'^Errors for (?:(0x[0-9a-fA-F]+) )?"(.*)"$')
_ERR_PORT = re.compile(r"^\s+GUID (0x[0-9a-fA-F]+) port (\d+|ALL):(.*)$")
_ERR_ITEM = re.compile(r"\[(\w+) == (\d+)(?: \([^)]*\))?\]")
_SUMMARY = {
    "nodes": re.compile(r"^## Summary: (\d+) nodes checked, (\d+) bad nodes found"),
    "ports": re.compile(r"^##\s+(\d+) ports checked, (\d+) ports have errors beyond threshold"),
    "pma": re.compile(r"^##\s+(\d+) PMA query failures"),
}


def parse_ibqueryerrors(text):
    flagged, summary, cur = [], {}, None
    for line in text.splitlines():
        m = _ERR_HDR.match(line)
        if m:
            cur = {"node_guid": m.group(1), "node_desc": m.group(2)}
            continue
        m = _ERR_PORT.match(line)
        if m and cur is not None:
            port = m.group(2)
            flagged.append({
                "node_desc": cur["node_desc"],
                "node_guid": cur["node_guid"],
                "guid": m.group(1),
                "port": "ALL" if port == "ALL" else int(port),
                "counters": {k: int(v) for k, v in _ERR_ITEM.findall(m.group(3))},
            })
            continue
        m = _SUMMARY["nodes"].match(line)
        if m:
            summary["nodes_checked"], summary["bad_nodes"] = int(m.group(1)), int(m.group(2))
        m = _SUMMARY["ports"].match(line)
        if m:
            summary["ports_checked"], summary["bad_ports"] = int(m.group(1)), int(m.group(2))
        m = _SUMMARY["pma"].match(line)
        if m:
            summary["pma_query_failures"] = int(m.group(1))
    summary.setdefault("pma_query_failures", 0)
    return flagged, summary


# --- simulator state (console Dump; sends no MADs) ---------------------------

def dump_state(sim):
    """{nodeid: {"node_guid": "0x..", "ports": {n: {"guid", "lid", "state", "phys"}}}}"""
    state, cur = {}, None
    for line in sim.dump().splitlines():
        m = re.match(r'^(?:sim> )?(Switch|Ca|Router) \d+ "([^"]+)"\tnodeguid ([0-9a-f]+)', line)
        if m:
            cur = m.group(2)
            state[cur] = {"type": m.group(1), "node_guid": "0x%016x" % int(m.group(3), 16), "ports": {}}
            continue
        m = re.match(r"^([0-9a-f]+)\t\[(\d+)\].*?(?:lid (\d+) lmc.*?)?(\w+)/(\w+)\s*(?:#.*)?$", line)
        if m and cur:
            state[cur]["ports"][int(m.group(2))] = {
                "guid": "0x%016x" % int(m.group(1), 16),
                "lid": int(m.group(3)) if m.group(3) else None,
                "state": m.group(4), "phys": m.group(5),
            }
    return state


def paste(block_cmds):
    """Join (command, output) pairs like a terminal paste."""
    out = []
    for cmd, text in block_cmds:
        out.append("$ " + cmd + "\n" + text + ("" if text.endswith("\n") or not text else "\n"))
    return "".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--out", required=True, help="output directory (created; existing files replaced)")
    ap.add_argument("--hosts", default="4-12", help="host count range MIN-MAX (default 4-12)")
    args = ap.parse_args()
    check_packages()
    try:
        lo, hi = (int(x) for x in args.hosts.split("-"))
        assert 1 <= lo <= hi <= 24
    except Exception:
        ap.error("--hosts must be MIN-MAX with 1 <= MIN <= MAX <= 24")

    # SIGTERM/SIGINT -> SystemExit so the Sim context manager kills ibsim/opensm.
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda s, f: sys.exit(128 + s))

    rng = random.Random(args.seed)
    thresholds = read_thresholds(THRESHOLDS_FILE)
    fab = build_fabric(rng, lo, hi)
    cuts, counters = plan_faults(rng, fab, thresholds)
    net = netfile_text(fab, args.seed)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "fabric.net"), "w", encoding="utf-8") as f:
        f.write(net)
    shutil.copy(THRESHOLDS_FILE, os.path.join(args.out, "error_thresholds"))

    try:
        with ibsimnet.Sim() as sim:
            sim.start(net)
            shutil.copy(THRESHOLDS_FILE, os.path.join(sim.dir, "error_thresholds"))
            for c in cuts:
                if c["when"] == "before_sm":
                    sim.cmd('Unlink "%s"[%d]' % (c["node"], c["port"]), r"sim> ")
            sim.start_sm("sm01")
            for c in counters:
                sim.cmd('PerformanceSet "%s"[%d] %s.%s=%d' % (c["node"], c["port"], c["attribute"], c["field"],
                                                              c["value_set"]), r"has been set to")
            after = [c for c in cuts if c["when"] == "after_sm"]
            for c in after:
                sim.cmd('Unlink "%s"[%d]' % (c["node"], c["port"]), r"sim> ")
            if after:
                sim.wait_settled()
            state = dump_state(sim)

            # per-host dumps
            for h in fab["hosts"]:
                blocks = [("ibstat", sim.run(h, ["ibstat"])[1])]
                for port, p in sorted(state[h]["ports"].items()):
                    lid = p["lid"] or 0
                    for x in (["-x"], []):
                        argv = ["perfquery"] + x + ([str(lid), str(port)] if lid else [])
                        blocks.append((" ".join(argv), sim.run(h, argv)[1]))
                with open(os.path.join(args.out, h + ".txt"), "w", encoding="utf-8") as f:
                    f.write(paste(blocks))
            with open(os.path.join(args.out, "fabric.txt"), "w", encoding="utf-8") as f:
                f.write(paste([("iblinkinfo", sim.run("sm01", ["iblinkinfo"])[1])]))
            qe_cmd = ["ibqueryerrors", "--threshold-file", "error_thresholds"]
            qe_rc, qe_out = sim.run("sm01", qe_cmd)
            with open(os.path.join(args.out, "ibqueryerrors.txt"), "w", encoding="utf-8") as f:
                f.write(paste([(" ".join(qe_cmd), qe_out)]))
    except ibsimnet.SimError as e:
        sys.stderr.write("random-fabric.py: error: %s\n" % e)
        return 1

    truth, consistent = make_truth(args.seed, fab, cuts, counters, thresholds, state, qe_out, qe_rc, qe_cmd)
    with open(os.path.join(args.out, "truth.json"), "w", encoding="utf-8") as f:
        json.dump(truth, f, indent=1, sort_keys=False)
        f.write("\n")
    if not consistent:
        sys.stderr.write("random-fabric.py: self-check failed, see truth.json consistency.mismatches\n")
        return 3
    return 0


def make_truth(seed, fab, cuts, counters, thresholds, state, qe_out, qe_rc, qe_cmd):
    flagged, summary = parse_ibqueryerrors(qe_out)
    desc_to_node = {"%s mlx5_0" % h: h for h in ["sm01"] + fab["hosts"]}
    desc_to_node.update({"MF0;%s:MQM8700/U1" % s: s for s in fab["switches"]})
    for fl in flagged:
        fl["node"] = desc_to_node.get(fl["node_desc"])
    peer = {}
    for l in fab["links"]:
        peer[tuple(l["a"])] = tuple(l["b"])
        peer[tuple(l["b"])] = tuple(l["a"])

    # injected values as the simulator stores them (clamped to the field width)
    injected = []
    for c in counters:
        bits = 64 if c["attribute"] == "PortCountersExtended" else FIELD_BITS[(c["attribute"], c["field"])]
        fmax = (1 << bits) - 1
        e = dict(c, field_bits=bits, field_max=fmax, expected_value=min(c["value_set"], fmax))
        e["saturated"] = e["expected_value"] == fmax
        if c["attribute"] == "PortCounters":
            e["threshold"] = thresholds[c["field"]]
            e["over_threshold"] = e["expected_value"] > thresholds[c["field"]]
        injected.append(e)

    # self-check: per-port flags predicted from the injected values must equal
    # what the genuine ibqueryerrors printed (the 'port ALL' aggregates of
    # switches are not predicted: ibsim computes them itself).
    predicted = {}
    for e in injected:
        if e.get("over_threshold"):
            predicted.setdefault((e["node"], e["port"]), {})[e["field"]] = e["expected_value"]
    observed = {(f["node"], f["port"]): f["counters"] for f in flagged if f["port"] != "ALL"}
    mismatches = []
    for key in sorted(set(predicted) | set(observed), key=str):
        if predicted.get(key) != observed.get(key):
            mismatches.append({"node": key[0], "port": key[1], "predicted": predicted.get(key),
                               "ibqueryerrors": observed.get(key)})

    cut_set = {(c["node"], c["port"]) for c in cuts}
    hosts = {}
    for h in fab["hosts"]:
        ports = []
        for port, p in sorted(state[h]["ports"].items()):
            link = next(l for l in fab["links"] if tuple(l["b"]) == (h, port))
            sw = tuple(link["a"])
            own = next((f for f in flagged if f["node"] == h and f["port"] == port), None)
            sw_fl = next((f for f in flagged if f["node"] == sw[0] and f["port"] == sw[1]), None)
            down = (h, port) in cut_set
            if down != (p["state"] == "Down"):
                mismatches.append({"node": h, "port": port, "predicted": "down" if down else "up",
                                   "simulator": p["state"]})
            ports.append({
                "port": port,
                "port_guid": p["guid"],
                "lid": p["lid"],
                "switch": sw[0],
                "switch_port": sw[1],
                "down": down,
                "cut_when": next((c["when"] for c in cuts if (c["node"], c["port"]) == (h, port)), None),
                "width": "1X" if link["narrow"] else "12X",
                "narrow": link["narrow"],
                "flagged_counters": own["counters"] if own else {},
                "peer_flagged_counters": sw_fl["counters"] if sw_fl else {},
            })
        down = any(p["down"] for p in ports)
        fl = any(p["flagged_counters"] for p in ports)
        hosts[h] = {
            "desc": "%s mlx5_0" % h,
            "node_guid": state[h]["node_guid"],
            "ports": ports,
            "down": down,
            "flagged": fl,
            "narrow": any(p["narrow"] for p in ports),
            "peer_flagged": any(p["peer_flagged_counters"] for p in ports),
            "ok": not down and not fl,
        }

    truth = {
        "schema": "fabricscope-ibsim-truth/1",
        "seed": seed,
        "generator": "scripts/ibsim/random-fabric.py",
        "tool_versions": {p: pkg_version(p) for p in ("ibsim-utils", "opensm", "infiniband-diags")},
        "netfile": "fabric.net",
        "sm_host": "sm01",
        "thresholds": thresholds,
        "switches": {s: {"desc": "MF0;%s:MQM8700/U1" % s, "node_guid": state[s]["node_guid"],
                         "lid": state[s]["ports"][0]["lid"]} for s in fab["switches"]},
        "links": [{"a": list(l["a"]), "b": list(l["b"]), "kind": l["kind"], "narrow": l["narrow"]}
                  for l in fab["links"]],
        "cut_links": cuts,
        "injected_counters": injected,
        "ibqueryerrors": {
            "command": " ".join(qe_cmd),
            "file": "ibqueryerrors.txt",
            "exit": qe_rc,
            "flagged": flagged,
            "summary": summary,
        },
        "down_hca_ports": [{"host": c["node"], "port": c["port"], "when": c["when"]} for c in cuts],
        "hosts": hosts,
        "hosts_ok": [h for h in fab["hosts"] if hosts[h]["ok"]],
        "consistency": {"ok": not mismatches, "mismatches": mismatches},
    }
    return truth, not mismatches


if __name__ == "__main__":
    sys.exit(main())
