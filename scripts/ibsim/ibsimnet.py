"""Shared helpers for the ibsim scripts (python3 standard library only).

- parse_netfile / peer_of / expected_hca_ports: read the small subset of the
  ibsim netfile format that our scripts write, and derive ground truth from it.
- Sim: run ibsim (+ optionally opensm) in a scratch dir under /tmp and run real
  infiniband-diags tools against it (python twin of lib.sh).
"""
import fcntl
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

# ibsim netfile "width=" / "w=" are LinkWidthEnabled bit masks, "speed=" is a
# LinkSpeedEnabled bit mask (see ibsim's sim_net.c).
WIDTH_BITS = [(8, "12X", 12), (4, "8X", 8), (2, "4X", 4), (1, "1X", 1)]
SPEED_BITS = [(4, "QDR", 10.0), (2, "DDR", 5.0), (1, "SDR", 2.5)]

_HDR = re.compile(r'^(Switch|Hca|Ca)\s+(\d+)\s+"([^"]+)"(?:\s*#\s*"([^"]*)")?')
_PORT = re.compile(r'^\[(\d+)\]\s+"([^"]+)"\[(\d+)\](.*)$')


def parse_netfile(path):
    """Return {"nodes": [...], "links": [...]} for a netfile we generated."""
    width, speed = 3, 1  # ibsim defaults are irrelevant: our files always set both
    nodes, ports = [], {}
    cur = None
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("width="):
                width = int(line.split("=", 1)[1], 0)
                continue
            if line.startswith("speed="):
                speed = int(line.split("=", 1)[1], 0)
                continue
            m = _HDR.match(line)
            if m:
                kind = "Switch" if m.group(1) == "Switch" else "Hca"
                cur = {"id": m.group(3), "type": kind, "ports": int(m.group(2)), "desc": m.group(4) or m.group(3)}
                nodes.append(cur)
                continue
            m = _PORT.match(line)
            if m and cur is not None:
                opts = dict(re.findall(r"(\w)=(\d+)", m.group(4)))
                ports[(cur["id"], int(m.group(1)))] = {
                    "peer": (m.group(2), int(m.group(3))),
                    "width_ena": int(opts.get("w", width)),
                    "speed_ena": int(opts.get("s", speed)),
                }
    links, seen = [], set()
    for (node, port), p in ports.items():
        key = tuple(sorted([(node, port), p["peer"]]))
        if key in seen:
            continue
        seen.add(key)
        other = ports[p["peer"]]
        w = p["width_ena"] & other["width_ena"]
        s = p["speed_ena"] & other["speed_ena"]
        wname, lanes = next((n, l) for b, n, l in WIDTH_BITS if w & b)
        sname, lane_gbps = next((n, g) for b, n, g in SPEED_BITS if s & b)
        links.append(
            {
                "a": [node, port],
                "b": list(p["peer"]),
                "width": wname,
                "speed": sname,
                "rate_gbps": lanes * lane_gbps,
            }
        )
    return {"nodes": nodes, "links": links}


def peer_of(net, node, port):
    for l in net["links"]:
        if l["a"] == [node, port]:
            return l["b"]
        if l["b"] == [node, port]:
            return l["a"]
    return None


def expected_hca_ports(net, cut_ports, sm_running):
    """Port state every HCA port should show, derived from the definition."""
    cut = {(c["node"], c["port"]) for c in cut_ports}
    cut |= {tuple(c["peer"]) for c in cut_ports if c.get("peer")}
    out = []
    for n in net["nodes"]:
        if n["type"] != "Hca":
            continue
        for port in range(1, n["ports"] + 1):
            link = next((l for l in net["links"] if [n["id"], port] in (l["a"], l["b"])), None)
            e = {"node": n["id"], "desc": n["desc"], "port": port}
            if link is None or (n["id"], port) in cut:
                e.update(state="Down", phys_state="Polling", width=None, rate_gbps=None, problem="port_down")
            else:
                e.update(
                    state="Active" if sm_running else "Initializing",
                    phys_state="LinkUp",
                    width=link["width"],
                    rate_gbps=link["rate_gbps"],
                    problem=None if sm_running else "no_sm",
                )
                if link["width"] == "1X":
                    e["problem"] = "narrow_link"
            out.append(e)
    return out


class SimError(RuntimeError):
    pass


# ibsim listens on fixed abstract unix socket names ("sim:ctl", ...), so only
# one simulator can run per machine: runs are serialised with this lock file
# (same file and rule as lib.sh).
LOCK_FILE = os.environ.get("SIM_LOCK", "/tmp/fabricscope-ibsim.lock")
LOCK_WAIT = float(os.environ.get("SIM_LOCK_WAIT", "600"))


class Sim:
    """ibsim + opensm in a scratch dir; always use as a context manager."""

    def __init__(self, poll_timeout=30.0, tool_timeout=30):
        self.poll_timeout = poll_timeout
        self.tool_timeout = tool_timeout
        self.dir = None
        self.sim = None
        self.sm = None
        self.log = None
        self.lock = None

    def _lock(self):
        self.lock = open(LOCK_FILE, "a")
        deadline = time.monotonic() + LOCK_WAIT
        while True:
            try:
                fcntl.flock(self.lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise SimError("another simulator run holds " + LOCK_FILE)
                time.sleep(0.2)

    # -- lifecycle -------------------------------------------------------
    def __enter__(self):
        self.dir = tempfile.mkdtemp(prefix="fabricscope-ibsim.", dir="/tmp")
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self):
        if self.sm is not None:
            _kill(self.sm)  # SIGKILL by PID
            self.sm = None
        if self.sim is not None:
            try:
                self.sim.stdin.write(b"Quit\n")
                self.sim.stdin.flush()
                self.sim.wait(timeout=3)
            except Exception:
                pass
            _kill(self.sim)
            self.sim = None
        if self.log is not None:
            self.log.close()
            self.log = None
        if self.lock is not None:
            self.lock.close()  # releases the flock
            self.lock = None
        if self.dir and os.environ.get("KEEP_SCRATCH") != "1":
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def _poll(self, pred, what):
        deadline = time.monotonic() + self.poll_timeout
        while time.monotonic() < deadline:
            if pred():
                return
            time.sleep(0.1)
        raise SimError("timed out waiting for " + what)

    def _logtext(self, off=0):
        with open(os.path.join(self.dir, "ibsim.log"), "rb") as f:
            f.seek(off)
            return f.read().decode("utf-8", "replace")

    def start(self, net_text):
        self._lock()
        with open(os.path.join(self.dir, "net"), "w", encoding="utf-8") as f:
            f.write(net_text)
        self.log = open(os.path.join(self.dir, "ibsim.log"), "wb")
        self.sim = subprocess.Popen(
            ["ibsim", "-s", "net"], cwd=self.dir, stdin=subprocess.PIPE, stdout=self.log, stderr=subprocess.STDOUT
        )
        self._poll(lambda: "Network simulator ready" in self._logtext() or self.sim.poll() is not None, "ibsim")
        if self.sim.poll() is not None:
            raise SimError("ibsim exited:\n" + self._logtext())
        # A comment line is echoed back: proves the console is being served
        # (ibsim exits with "ibpanic: ... can't bind socket" if another runs).
        self.cmd("# fabricscope: console check", r"console check")

    def cmd(self, line, expect, check=True):
        """Send one console line; wait for regex `expect` in the reply.
        A reply line starting with '# ' is an ibsim error (unless check=False)."""
        off = os.path.getsize(os.path.join(self.dir, "ibsim.log"))
        self.sim.stdin.write(line.encode() + b"\n")
        self.sim.stdin.flush()
        rx = re.compile(expect, re.M)
        self._poll(lambda: self.sim.poll() is not None or rx.search(self._logtext(off)), "reply to " + line)
        reply = self._logtext(off)
        if self.sim.poll() is not None:
            raise SimError("ibsim exited:\n" + self._logtext())
        if check and not line.startswith("#") and re.search(r"^(sim> )*# ", reply, re.M):
            raise SimError("ibsim rejected %r: %s" % (line, reply))
        return reply

    def dump(self):
        return self.cmd("Dump", r"dumped \d+ nodes", check=False)

    def lids(self):
        """{nodeid: lid} from the simulator's Dump (no MADs are sent)."""
        lids, cur = {}, None
        for line in self.dump().splitlines():
            m = re.match(r'^(?:sim> )?(Switch|Ca|Router) \d+ "([^"]+)"', line)
            if m:
                cur = m.group(2)
                continue
            m = re.search(r"\blid (\d+) lmc", line)
            if m and cur and cur not in lids:
                lids[cur] = int(m.group(1))
        return lids

    def settled(self):
        d = self.dump()
        return "Active/LinkUp" in d and not re.search(r" (Init|Armed)/", d)

    def start_sm(self, host):
        env = dict(os.environ, SIM_HOST=host, OSM_TMP_DIR=".", OSM_CACHE_DIR=".")
        with open(os.path.join(self.dir, "opensm.out"), "wb") as out:
            self.sm = subprocess.Popen(
                ["ibsim-run", "opensm", "-f", "./osm.log", "-s", "0"],
                cwd=self.dir, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            )
        self.wait_settled()

    def wait_settled(self, settle=1.0):
        self._poll(self.settled, "opensm to bring every linked port Active")
        time.sleep(settle)
        if self.sm is not None and self.sm.poll() is not None:
            raise SimError("opensm exited")

    def run(self, host, argv):
        """Run a real diag tool as simulated `host`; return (rc, merged output)."""
        env = dict(os.environ, SIM_HOST=host)
        try:
            p = subprocess.run(
                ["ibsim-run"] + argv, cwd=self.dir, env=env, stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=self.tool_timeout,
            )
        except subprocess.TimeoutExpired as e:
            return 124, normalize_output((e.stdout or b"").decode("utf-8", "replace"))
        return p.returncode, normalize_output(p.stdout.decode("utf-8", "replace"))


PID_MASK = "4242"
DATE_MASK = "Mon Jan  5 12:00:00 2026"


def normalize_output(text):
    """Same rules as lib.sh normalize_output: fixed pid in 'ibwarn: [pid]'
    prefixes and a fixed date in ibnetdiscover's 'generated on' line."""
    text = re.sub(r"(?m)^(ib(?:warn|panic|error)?: )\[\d+\]", r"\g<1>[" + PID_MASK + "]", text)
    return re.sub(r"(?m)^(# Topology file: generated on ).*$", r"\g<1>" + DATE_MASK, text)


def _kill(p):
    if p.poll() is None:
        try:
            p.send_signal(signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        p.wait(timeout=5)
    except Exception:
        pass
