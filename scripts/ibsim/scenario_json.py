#!/usr/bin/env python3
"""Write scenario.json (ground truth) from a scenario definition.

generate-fixtures.sh describes every scenario in a small tab-separated
definition file and passes it here together with the netfile it generated.
Nothing in the ground truth is read back from tool output: node/link facts
come from the netfile, the rest from the definition lines:

    name         <scenario name>
    description  <free text>
    sm           <host running opensm> | none
    cut          <node> <port> <before_sm|after_sm>     (console "Unlink")
    counter      <node> <port> <Attribute> <Field> <value>  (console "PerformanceSet")
    capture      <file> <host> <command as typed...>
    lid          <node> <lid>        (LIDs opensm gave out, read from the simulator
                                      console "Dump" so commands can name them)

Usage: scenario_json.py DEFFILE NETFILE THRESHOLDS > scenario.json
Only the python3 standard library is used.
"""
import json
import sys

sys.dont_write_bytecode = True  # keep __pycache__ out of the source tree
import ibsimnet  # noqa: E402

# Bit width of each counter in the attribute PerformanceSet wrote it to.
# PortCounters widths are those of the IBA PortCounters attribute (and the
# limits ibsim clamps to); PortCountersExtended fields are 64-bit.
FIELD_BITS = {
    ("PortCounters", "SymbolErrorCounter"): 16,
    ("PortCounters", "LinkErrorRecoveryCounter"): 8,
    ("PortCounters", "LinkDownedCounter"): 8,
    ("PortCounters", "PortRcvErrors"): 16,
    ("PortCounters", "PortRcvRemotePhysicalErrors"): 16,
    ("PortCounters", "PortRcvSwitchRelayErrors"): 16,
    ("PortCounters", "PortXmitDiscards"): 16,
    ("PortCounters", "PortXmitConstraintErrors"): 8,
    ("PortCounters", "PortRcvConstraintErrors"): 8,
    ("PortCounters", "LocalLinkIntegrityErrors"): 4,
    ("PortCounters", "ExcessiveBufferOverrunErrors"): 4,
    ("PortCounters", "VL15Dropped"): 16,
    ("PortCounters", "PortXmitData"): 32,
    ("PortCounters", "PortRcvData"): 32,
    ("PortCounters", "PortXmitPkts"): 32,
    ("PortCounters", "PortRcvPkts"): 32,
    ("PortCounters", "PortXmitWait"): 32,
    ("PortRcvErrorDetails", "PortLocalPhysicalErrors"): 16,
    ("PortRcvErrorDetails", "PortMalformedPacketErrors"): 16,
    ("PortRcvErrorDetails", "PortBufferOverrunErrors"): 16,
    ("PortRcvErrorDetails", "PortDLIDMappingErrors"): 16,
    ("PortRcvErrorDetails", "PortVLMappingErrors"): 16,
    ("PortRcvErrorDetails", "PortLoopingErrors"): 16,
    ("PortXmitDiscardDetails", "PortInactiveDiscards"): 16,
    ("PortXmitDiscardDetails", "PortNeighborMTUDiscards"): 16,
    ("PortXmitDiscardDetails", "PortSwLifetimeLimitDiscards"): 16,
    ("PortXmitDiscardDetails", "PortSwHOQLifetimeLimitDiscards"): 16,
}


def field_bits(attr, field):
    if attr == "PortCountersExtended":
        return 64
    return FIELD_BITS[(attr, field)]


def read_thresholds(path):
    """Parse an ibqueryerrors threshold file (Name=value, '#' comments)."""
    th = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#") or "=" not in line:
                continue
            k, v = line.split("=", 1)
            th[k.strip()] = int(v.strip(), 0)
    return th


def counter_entry(node, port, attr, field, value, thresholds):
    bits = field_bits(attr, field)
    fmax = (1 << bits) - 1
    expected = min(value, fmax)
    e = {
        "node": node,
        "port": port,
        "attribute": attr,
        "field": field,
        "value_set": value,
        "field_bits": bits,
        "field_max": fmax,
        "expected_value": expected,
        "saturated": expected == fmax,
    }
    # ibqueryerrors compares PortCounters error fields (and PortXmitWait)
    # against the threshold file; a counter is flagged when value > threshold.
    if attr == "PortCounters" and field in thresholds:
        e["threshold"] = thresholds[field]
        e["over_threshold"] = expected > thresholds[field]
    return e


def main():
    deffile, netfile, thfile = sys.argv[1:4]
    thresholds = read_thresholds(thfile)
    net = ibsimnet.parse_netfile(netfile)
    out = {
        "scenario": None,
        "description": "",
        "generator": "scripts/ibsim/generate-fixtures.sh",
        "netfile": "fabric.net",
        "thresholds_file": "scripts/ibsim/error_thresholds",
        "subnet_manager": None,
        "nodes": net["nodes"],
        "links": net["links"],
        "cut_ports": [],
        "narrow_links": [l for l in net["links"] if l["width"] == "1X"],
        "counters_set": [],
        "lids": {},
        "expected_hca_ports": [],
        "captures": [],
    }
    with open(deffile, encoding="utf-8") as f:
        for raw in f:
            parts = raw.rstrip("\n").split("\t")
            kind, args = parts[0], parts[1:]
            if kind == "name":
                out["scenario"] = args[0]
            elif kind == "description":
                out["description"] = args[0]
            elif kind == "sm":
                out["subnet_manager"] = (
                    {"running": False, "host": None}
                    if args[0] == "none"
                    else {"running": True, "host": args[0], "program": "opensm", "sweep_interval": 0}
                )
            elif kind == "cut":
                node, port, when = args[0], int(args[1]), args[2]
                peer = ibsimnet.peer_of(net, node, port)
                out["cut_ports"].append(
                    {"node": node, "port": port, "peer": peer, "when": when, "console": 'Unlink "%s"[%d]' % (node, port)}
                )
            elif kind == "counter":
                node, port, attr, field, value = args[0], int(args[1]), args[2], args[3], int(args[4])
                out["counters_set"].append(counter_entry(node, port, attr, field, value, thresholds))
            elif kind == "capture":
                out["captures"].append({"file": args[0], "host": args[1], "command": args[2]})
            elif kind == "lid":
                out["lids"][args[0]] = int(args[1])
            else:
                raise SystemExit("unknown definition line: %r" % raw)

    sm_running = bool(out["subnet_manager"] and out["subnet_manager"]["running"])
    out["expected_hca_ports"] = ibsimnet.expected_hca_ports(net, out["cut_ports"], sm_running)
    json.dump(out, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
