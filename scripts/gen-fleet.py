#!/usr/bin/env python3
"""Generate a synthetic fleet of GPU nodes as per-host dump directories.

Each node has 8 InfiniBand HCAs (ConnectX-7, NDR 400) and 8 H100-class GPUs
with 18 NVLinks each, and one directory of 21 files, in the exact text the
tools print (shapes taken from our own H200 captures and from genuine
infiniband-diags output run against ibsim):

    ibstat.txt                      `ibstat`
    perfquery_mlx5_N_0.txt / _1.txt `perfquery -x <lid> 1`, two snapshots
                                    60 s apart (file modification times)
    nvlink_s.txt                    `nvidia-smi nvlink -s`
    nvlink_e.txt                    `nvidia-smi nvlink -e`
    nvlink_gt.txt                   `nvidia-smi nvlink -gt d`
    topo_m.txt                      `nvidia-smi topo -m`

Healthy hosts carry what a busy, year-old cluster shows: lifetime data
counters in the 10^12–10^14 range, PortXmitWait from thousands to billions,
the odd symbol error or link recovery from history, small NVLink replay
counts. Faults are injected on a fixed, seeded set of hosts (about one in
fifty) and listed in `OUTDIR.truth.json` — host, what, where, and the rule
family expected to notice — outside the dump tree, so `analyze` does not
read it.

Deterministic: the same `--nodes` and `--seed` give byte-identical files and
modification times.

    python3 scripts/gen-fleet.py OUTDIR --nodes 1000 [--seed 7]

`--uncabled-second-port` makes `mlx5_0` a dual-port card on every host whose
port 2 is left uncabled (Down/Polling, no LID and no SM LID ever assigned):
a fleet's design, which IB001 reports once for the fleet. It draws nothing
from the random stream, so the faults and every other file stay the same.
"""

import argparse
import json
import os
import random

HCAS = 8
GPUS = 8
LINKS = 18
INTERVAL = 60  # seconds between the two perfquery snapshots
EPOCH = 1_780_000_000  # file time of the first snapshot (2026)

LEGEND = """
Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)
  PIX  = Connection traversing at most a single PCIe bridge
  NV#  = Connection traversing a bonded set of # NVLinks
"""

PERF_DOWN = """ibwarn: [{pid}] mad_rpc_open_port: can't open UMAD port ((null):0)
perfquery: iberror: failed: Failed to open 'mlx5_{hca}' port '1'
"""

# (counter, width of the dots column) in the order perfquery -x prints them
# when the port supports extended error counters (CapMask 0x5A00).
PERF_FIELDS = [
    "PortSelect",
    "CounterSelect",
    "PortXmitData",
    "PortRcvData",
    "PortXmitPkts",
    "PortRcvPkts",
    "PortUnicastXmitPkts",
    "PortUnicastRcvPkts",
    "PortMulticastXmitPkts",
    "PortMulticastRcvPkts",
    "CounterSelect2",
    "SymbolErrorCounter",
    "LinkErrorRecoveryCounter",
    "LinkDownedCounter",
    "PortRcvErrors",
    "PortRcvRemotePhysicalErrors",
    "PortRcvSwitchRelayErrors",
    "PortXmitDiscards",
    "PortXmitConstraintErrors",
    "PortRcvConstraintErrors",
    "LocalLinkIntegrityErrors",
    "ExcessiveBufferOverrunErrors",
    "VL15Dropped",
    "PortXmitWait",
    "QP1Dropped",
]

FAULTS = [
    # (kind, rule family that should notice, description)
    ("hca_port_down", "IB0xx", "an HCA port Down/Polling"),
    ("hca_rate_degraded", "IB0xx/FL002", "an HCA at 200 Gb/s instead of 400"),
    ("firmware_mismatch", "FL001", "one HCA on older firmware"),
    ("symbol_errors_rising", "IB1xx", "symbol errors rising fast between snapshots"),
    ("link_downed_rising", "IB1xx", "link downed counter rising between snapshots"),
    ("nvlink_inactive", "NV0xx", "one NVLink <inactive>"),
    ("nvlink_crc_errors", "NV0xx", "a link with many CRC errors"),
    ("topo_degraded_bond", "TP0xx", "a GPU pair at NV16 instead of NV18"),
]


def host_name(i):
    return f"gpu{i:05d}"


# Port 2 of a dual-port card left uncabled (`--uncabled-second-port`).
UNCABLED_PORT2 = """\tPort 2:
\t\tState: Down
\t\tPhysical state: Polling
\t\tRate: 10
\t\tBase lid: 0
\t\tLMC: 0
\t\tSM lid: 0
\t\tCapability mask: 0xa751e848
\t\tPort GUID: 0x{guid:016x}
\t\tLink layer: InfiniBand"""


def ibstat(rng, node, fault, uncabled_port2=False):
    out = []
    for h in range(HCAS):
        guid = 0x946DAE0300000000 | (node << 8) | (h << 4)
        state, phys, rate, fw = "Active", "LinkUp", 400, "28.39.1002"
        if fault and fault["kind"] == "hca_port_down" and fault["hca"] == h:
            state, phys = "Down", "Polling"
        if fault and fault["kind"] == "hca_rate_degraded" and fault["hca"] == h:
            rate = 200
        if fault and fault["kind"] == "firmware_mismatch" and fault["hca"] == h:
            fw = "28.36.1010"
        lid = lid_of(node, h) if state == "Active" else 0
        dual = uncabled_port2 and h == 0
        out.append(f"CA 'mlx5_{h}'")
        out.append("\tCA type: MT4129")
        out.append(f"\tNumber of ports: {2 if dual else 1}")
        out.append(f"\tFirmware version: {fw}")
        out.append("\tHardware version: 0")
        out.append(f"\tNode GUID: 0x{guid:016x}")
        out.append(f"\tSystem image GUID: 0x{guid:016x}")
        out.append("\tPort 1:")
        out.append(f"\t\tState: {state}")
        out.append(f"\t\tPhysical state: {phys}")
        out.append(f"\t\tRate: {rate}")
        out.append(f"\t\tBase lid: {lid}")
        out.append("\t\tLMC: 0")
        out.append("\t\tSM lid: 1")
        out.append("\t\tCapability mask: 0xa751e848")
        out.append(f"\t\tPort GUID: 0x{guid:016x}")
        out.append("\t\tLink layer: InfiniBand")
        if dual:
            out.append(UNCABLED_PORT2.format(guid=guid | 1))
    return "\n".join(out) + "\n"


# Unicast LIDs are 1..0xBFFF (49151): a subnet has at most 49,151 ports.
# Past 6,143 hosts of 8 HCAs the fleet is several subnets (pods), each with
# its LIDs from 2 again (LID 1 is each subnet's SM); LIDs repeat across
# hosts, never within one. (Numbering on to 65535 made a healthy host's
# port show ibstat's "no LID yet" value at 8,191 hosts.)
MAX_UNICAST_LID = 0xBFFF


def lid_of(node, hca):
    return 2 + (node * HCAS + hca) % (MAX_UNICAST_LID - 1)


def perf_counters(rng):
    """Lifetime counters of a healthy, busy, year-old port."""
    xmit_words = rng.randint(10**12, 4 * 10**13)
    rcv_words = rng.randint(10**12, 4 * 10**13)
    pkts_x = xmit_words // rng.randint(200, 900)
    pkts_r = rcv_words // rng.randint(200, 900)
    mc_x = rng.randint(10**4, 10**6)
    mc_r = rng.randint(10**6, 10**10)
    c = {
        "PortSelect": "1",
        "CounterSelect": "0x0000",
        "PortXmitData": xmit_words,
        "PortRcvData": rcv_words,
        "PortXmitPkts": pkts_x,
        "PortRcvPkts": pkts_r,
        "PortUnicastXmitPkts": pkts_x - mc_x,
        "PortUnicastRcvPkts": max(pkts_r - mc_r, 0),
        "PortMulticastXmitPkts": mc_x,
        "PortMulticastRcvPkts": mc_r,
        "CounterSelect2": "0x00000000",
        "SymbolErrorCounter": rng.choice([0] * 12 + [1, 2, 3, 7]),
        "LinkErrorRecoveryCounter": rng.choice([0] * 10 + [1, 2]),
        "LinkDownedCounter": rng.choice([0] * 6 + [1, 2, 3]),
        "PortRcvErrors": rng.choice([0] * 10 + [1, 4]),
        "PortRcvRemotePhysicalErrors": 0,
        "PortRcvSwitchRelayErrors": 0,
        "PortXmitDiscards": rng.choice([0] * 8 + [3, 12, 40]),
        "PortXmitConstraintErrors": 0,
        "PortRcvConstraintErrors": 0,
        "LocalLinkIntegrityErrors": 0,
        "ExcessiveBufferOverrunErrors": 0,
        "VL15Dropped": 0,
        "PortXmitWait": int(10 ** rng.uniform(3.3, 9.5)),
        "QP1Dropped": 0,
    }
    return c


def advance(rng, c, fault, hca):
    """The same counters INTERVAL seconds later on a busy port."""
    n = dict(c)
    words = rng.randint(10**9, 2 * 10**11)  # up to ~53 GB/s, under NDR 400
    n["PortXmitData"] += words
    n["PortRcvData"] += words + rng.randint(0, 10**8)
    pk = words // 512
    n["PortXmitPkts"] += pk
    n["PortRcvPkts"] += pk
    n["PortUnicastXmitPkts"] += pk
    n["PortUnicastRcvPkts"] += pk
    n["PortXmitWait"] += rng.randint(0, 10**6)
    if fault and fault.get("hca") == hca:
        if fault["kind"] == "symbol_errors_rising":
            n["SymbolErrorCounter"] += 5000
            n["PortRcvErrors"] += 900
        if fault["kind"] == "link_downed_rising":
            n["LinkDownedCounter"] += 3
            n["LinkErrorRecoveryCounter"] += 9
    return n


def perfquery(lid, c):
    out = [f"# Port extended counters: Lid {lid} port 1 (CapMask: 0x5A00 CapMask2: 0x0000000)"]
    for name in PERF_FIELDS:
        label = name + ":"
        out.append(label + "." * (33 - len(label)) + str(c[name]))
    return "\n".join(out) + "\n"


def gpu_header(node, g):
    u = random.Random(node * 100 + g).getrandbits(128)
    h = f"{u:032x}"
    uuid = f"GPU-{h[0:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"
    return f"GPU {g}: NVIDIA H100 80GB HBM3 (UUID: {uuid})"


def nvlink_s(node, fault):
    out = []
    for g in range(GPUS):
        out.append(gpu_header(node, g))
        for link in range(LINKS):
            if fault and fault["kind"] == "nvlink_inactive" and (g, link) == (fault["gpu"], fault["link"]):
                out.append(f"\t Link {link}: <inactive>")
            else:
                out.append(f"\t Link {link}: 26.562 GB/s")
    return "\n".join(out) + "\n"


def nvlink_e(rng, node, fault):
    out = []
    for g in range(GPUS):
        out.append(gpu_header(node, g))
        for link in range(LINKS):
            replay = rng.choice([0] * 20 + [1, 2, 5])
            crc = 0
            if fault and fault["kind"] == "nvlink_crc_errors" and (g, link) == (fault["gpu"], fault["link"]):
                crc, replay = 48213, 20117
            out.append(f"\t Link {link}: Replay Errors: {replay}")
            out.append(f"\t Link {link}: Recovery Errors: 0")
            out.append(f"\t Link {link}: CRC Errors: {crc}")
            out.append("")
    return "\n".join(out) + "\n"


def nvlink_gt(rng, node):
    out = []
    for g in range(GPUS):
        out.append(gpu_header(node, g))
        base = rng.randint(10**10, 10**12)
        for link in range(LINKS):
            tx = base + rng.randint(0, 10**8)
            rx = base + rng.randint(0, 10**8)
            out.append(f"\t Link {link}: Data Tx: {tx} KiB")
            out.append(f"\t Link {link}: Data Rx: {rx} KiB")
    return "\n".join(out) + "\n"


def topo_m(fault):
    head = [f"GPU{g}" for g in range(GPUS)] + [f"NIC{n}" for n in range(HCAS)]
    out = ["\t" + "\t".join(head) + "\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID"]

    def pci(a_socket, b_socket, same):
        if same:
            return "PIX"
        return "NODE" if a_socket == b_socket else "SYS"

    for g in range(GPUS):
        cells = []
        for o in range(GPUS):
            if o == g:
                cells.append(" X ")
            elif fault and fault["kind"] == "topo_degraded_bond" and {g, o} == {0, 1}:
                cells.append("NV16")
            else:
                cells.append("NV18")
        for n in range(HCAS):
            cells.append(pci(g // 4, n // 4, g == n))
        aff = "0-55,112-167\t0" if g < 4 else "56-111,168-223\t1"
        out.append(f"GPU{g}\t" + "\t".join(cells) + f"\t{aff}\t\tN/A")
    for n in range(HCAS):
        cells = [pci(n // 4, g // 4, g == n) for g in range(GPUS)]
        cells += [" X " if m == n else ("NODE" if m // 4 == n // 4 else "SYS") for m in range(HCAS)]
        out.append(f"NIC{n}\t" + "\t".join(cells))
    text = "\n".join(out) + "\n" + LEGEND + "\nNIC Legend:\n\n"
    text += "".join(f"  NIC{n}: mlx5_{n}\n" for n in range(HCAS))
    return text


def plan_faults(rng, nodes):
    """One fault on about one host in fifty, cycling through the kinds."""
    faults = {}
    count = max(len(FAULTS), nodes // 50)
    hosts = rng.sample(range(nodes), min(count, nodes))
    for i, node in enumerate(sorted(hosts)):
        kind, family, what = FAULTS[i % len(FAULTS)]
        faults[node] = {
            "host": host_name(node),
            "kind": kind,
            "family": family,
            "what": what,
            "hca": rng.randrange(HCAS),
            "gpu": rng.randrange(GPUS),
            "link": rng.randrange(LINKS),
        }
    return faults


def write(path, text, mtime):
    with open(path, "w", encoding="ascii", newline="\n") as f:
        f.write(text)
    os.utime(path, (mtime, mtime))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("outdir")
    p.add_argument("--nodes", type=int, default=1000)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--truth", help="where to write the fault list (default OUTDIR.truth.json)")
    p.add_argument(
        "--uncabled-second-port",
        action="store_true",
        help="give every host a dual-port mlx5_0 whose port 2 is not cabled",
    )
    a = p.parse_args()
    rng = random.Random(a.seed)
    faults = plan_faults(rng, a.nodes)
    os.makedirs(a.outdir, exist_ok=True)
    for node in range(a.nodes):
        fault = faults.get(node)
        d = os.path.join(a.outdir, host_name(node))
        os.makedirs(d, exist_ok=True)
        t0 = EPOCH + node % 600
        write(os.path.join(d, "ibstat.txt"), ibstat(rng, node, fault, a.uncabled_second_port), t0)
        for h in range(HCAS):
            c0 = perf_counters(rng)
            c1 = advance(rng, c0, fault, h)
            for snap, (c, t) in enumerate([(c0, t0), (c1, t0 + INTERVAL)]):
                if fault and fault["kind"] == "hca_port_down" and fault["hca"] == h:
                    # A port without a LID cannot be queried.
                    text = PERF_DOWN.format(pid=4000 + node % 30000, hca=h)
                else:
                    text = perfquery(lid_of(node, h), c)
                write(os.path.join(d, f"perfquery_mlx5_{h}_{snap}.txt"), text, t)
        write(os.path.join(d, "nvlink_s.txt"), nvlink_s(node, fault), t0)
        write(os.path.join(d, "nvlink_e.txt"), nvlink_e(rng, node, fault), t0)
        write(os.path.join(d, "nvlink_gt.txt"), nvlink_gt(rng, node), t0)
        write(os.path.join(d, "topo_m.txt"), topo_m(fault), t0)
    truth = {
        "nodes": a.nodes,
        "seed": a.seed,
        "files_per_node": 1 + 2 * HCAS + 4,
        "faults": [faults[k] for k in sorted(faults)],
    }
    with open(a.truth or a.outdir.rstrip("/") + ".truth.json", "w", encoding="ascii") as f:
        json.dump(truth, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
