# shellcheck shell=bash
# lib.sh - helpers to drive the ibsim InfiniBand fabric simulator.
#
# Source this file from a bash script that runs with `set -euo pipefail`.
# It provides:
#   ibsim_require_tools          exit 2 with a clear message if packages are missing
#   sim_scratch_init             make a scratch dir under /tmp and install the cleanup trap
#   sim_start NETFILE            start `ibsim -s` on a copy of NETFILE, console on a fifo
#   sim_cmd LINE REGEX           send one console line, wait for REGEX in the reply
#   sim_dump                     print the simulator's own "Dump" of the fabric
#   sim_lid NODEID               LID of a node, from the Dump
#   sm_start HOST                start opensm (attached to simulated HOST), wait until
#                                every linked port is Active (via the console Dump)
#   sm_wait_settled              same wait, e.g. after an Unlink made the SM re-sweep
#   sm_stop                      SIGKILL opensm by its PID
#   capture OUT HOST CMD...      run a real diag tool on simulated HOST, write a fixture file
#   sim_stop                     quit ibsim (SIGKILL by PID as a fallback)
#
# Everything runs inside $SIM_SCRATCH (a fresh `mktemp -d` under /tmp): the
# umad2sim preload library writes a fake sysfs tree `sys-<pid>/` into the
# current directory of every process it is loaded into, so the simulator and
# the tools must never run inside a git checkout.
#
# Every wait is a bounded poll (no infinite loops); every process we start is
# remembered by PID and killed by PID in the EXIT trap.

UMAD2SIM_SO=${UMAD2SIM_SO:-}
SIM_SCRATCH=""
SIM_PID=""
SIM_FD=""
SM_PID=""
SIM_LOCK_FD=""
# ibsim listens on fixed abstract unix socket names ("sim:ctl", ...), so only
# one simulator can run per machine (network namespace): runs are serialised
# with this lock file (wait at most SIM_LOCK_WAIT seconds for it).
SIM_LOCK=${SIM_LOCK:-/tmp/fabricscope-ibsim.lock}
SIM_LOCK_WAIT=${SIM_LOCK_WAIT:-600}
# Polling: SIM_POLL_TRIES x SIM_POLL_SLEEP seconds (default 30 s) per wait.
SIM_POLL_TRIES=${SIM_POLL_TRIES:-300}
SIM_POLL_SLEEP=${SIM_POLL_SLEEP:-0.1}
# Upper bound for a single diag tool run (seconds).
SIM_TOOL_TIMEOUT=${SIM_TOOL_TIMEOUT:-30}

sim_log() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }
sim_die() { sim_log "error: $*"; exit 1; }

# Check that the Debian packages ibsim-utils, opensm and infiniband-diags are
# installed (and the preload library can be found).
ibsim_require_tools() {
	local missing=() c
	for c in ibsim ibsim-run opensm ibstat perfquery iblinkinfo ibqueryerrors timeout flock; do
		command -v "$c" >/dev/null 2>&1 || missing+=("$c")
	done
	if [ -z "$UMAD2SIM_SO" ]; then
		# ibsim-run hardcodes the library path; find it the same way.
		UMAD2SIM_SO=$(sed -n 's/^sim_so=//p' "$(command -v ibsim-run 2>/dev/null || echo /nonexistent)" 2>/dev/null || true)
	fi
	if [ -z "$UMAD2SIM_SO" ] || [ ! -e "$UMAD2SIM_SO" ]; then
		missing+=("libumad2sim.so")
	fi
	if [ "${#missing[@]}" -gt 0 ]; then
		cat >&2 <<EOF
${0##*/}: error: missing simulator/diag tools: ${missing[*]}
Install them with (as root, Debian/Ubuntu):
    apt-get install -y --no-install-recommends ibsim-utils opensm infiniband-diags
EOF
		exit 2
	fi
}

# Create the scratch directory and install the cleanup trap.
sim_scratch_init() {
	SIM_SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/fabricscope-ibsim.XXXXXX")
	case "$SIM_SCRATCH" in /tmp/* | "${TMPDIR:-/tmp}"/*) ;; *) sim_die "scratch dir not under /tmp: $SIM_SCRATCH" ;; esac
	trap sim_cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

# Kill what we started (by PID only) and remove the scratch dir.
sim_cleanup() {
	local rc=$?
	set +e
	sm_stop
	sim_stop
	if [ -n "$SIM_SCRATCH" ] && [ -d "$SIM_SCRATCH" ]; then
		if [ "${KEEP_SCRATCH:-0}" = 1 ]; then
			sim_log "keeping scratch dir $SIM_SCRATCH"
		else
			rm -rf -- "$SIM_SCRATCH"
		fi
	fi
	SIM_SCRATCH=""
	return $rc
}

# Poll until the command "$@" succeeds; bounded by SIM_POLL_TRIES.
sim_poll() {
	local i
	for ((i = 0; i < SIM_POLL_TRIES; i++)); do
		if "$@"; then return 0; fi
		sleep "$SIM_POLL_SLEEP"
	done
	return 1
}

# Start the simulator on NETFILE. The console reads from a fifo that we keep
# open read-write on fd $SIM_FD, so ibsim never sees EOF while we run.
sim_start() {
	local netfile=$1
	[ -n "$SIM_SCRATCH" ] || sim_die "sim_start before sim_scratch_init"
	exec {SIM_LOCK_FD}>>"$SIM_LOCK"
	flock -w "$SIM_LOCK_WAIT" "$SIM_LOCK_FD" || sim_die "another simulator run holds $SIM_LOCK"
	cp -- "$netfile" "$SIM_SCRATCH/net"
	mkfifo "$SIM_SCRATCH/console"
	exec {SIM_FD}<>"$SIM_SCRATCH/console"
	: >"$SIM_SCRATCH/ibsim.log"
	(cd "$SIM_SCRATCH" && exec ibsim -s net <console >ibsim.log 2>&1) &
	SIM_PID=$!
	if ! sim_poll _sim_alive_and_has 0 'Network simulator ready'; then
		cat "$SIM_SCRATCH/ibsim.log" >&2
		sim_die "ibsim did not become ready"
	fi
	# A comment line is echoed back by the console: proves ibsim is serving
	# (it exits with "ibpanic: ... can't bind socket" if another ibsim runs).
	sim_cmd '# fabricscope: console check' 'console check'
}

# Send one console line and wait until REGEX (grep -E) shows up in the
# simulator's output written after the line was sent.
sim_cmd() {
	local line=$1 regex=$2 off
	off=$(stat -c %s "$SIM_SCRATCH/ibsim.log")
	printf '%s\n' "$line" >&"$SIM_FD"
	if ! sim_poll _sim_alive_and_has "$off" "$regex" || ! kill -0 "$SIM_PID" 2>/dev/null; then
		tail -c +"$((off + 1))" "$SIM_SCRATCH/ibsim.log" >&2
		sim_die "no reply matching /$regex/ to console command: $line"
	fi
	# A reply line starting with '# ' is an error message from ibsim.
	if [ "${line:0:1}" != '#' ] && tail -c +"$((off + 1))" "$SIM_SCRATCH/ibsim.log" | grep -q '^\(sim> \)*# '; then
		tail -c +"$((off + 1))" "$SIM_SCRATCH/ibsim.log" >&2
		sim_die "ibsim rejected console command: $line"
	fi
}
_sim_log_has() { tail -c +"$(($1 + 1))" "$SIM_SCRATCH/ibsim.log" | grep -Eq "$2"; }
# true if ibsim died (so the wait ends early) or the log has the pattern
_sim_alive_and_has() { kill -0 "$SIM_PID" 2>/dev/null || return 0; _sim_log_has "$@"; }

# Print the simulator's own view of the fabric (sends no MADs).
sim_dump() {
	local off
	off=$(stat -c %s "$SIM_SCRATCH/ibsim.log")
	printf 'Dump\n' >&"$SIM_FD"
	sim_poll _sim_log_has "$off" 'dumped [0-9]+ nodes' || sim_die "Dump did not answer"
	tail -c +"$((off + 1))" "$SIM_SCRATCH/ibsim.log"
}

# sim_lid NODEID : print the LID opensm gave NODEID (switch port 0 or the
# first HCA port), read from the console Dump so no MAD is sent.
sim_lid() {
	sim_dump | awk -v id="$1" '
		/^(sim> )?(Switch|Ca|Router) [0-9]+ "/ { split($0, a, "\""); cur = a[2]; next }
		cur == id && !done && match($0, /lid [0-9]+ lmc/) { print substr($0, RSTART + 4, RLENGTH - 8); done = 1 }'
}

# The fabric is "settled" when the simulator's Dump shows no port in the
# Init or Armed state (every linked port Active, every unlinked port Down)
# and at least one port is Active.
_sim_settled() {
	local d
	d=$(sim_dump)
	grep -q 'Active/LinkUp' <<<"$d" && ! grep -Eq ' (Init|Armed)/' <<<"$d"
}

# Start opensm attached to simulated HOST and wait until it has configured
# every linked port. -s 0 turns periodic sweeps off so that, once the subnet
# is up, the SM sends no more MADs and the simulator's traffic counters only
# move when a diag tool runs (this keeps the fixtures deterministic).
# opensm 3.3.23 does not log "SUBNET UP" at its default log level, so we
# watch the port states through the simulator console instead.
sm_start() {
	local host=$1
	(cd "$SIM_SCRATCH" && SIM_HOST=$host OSM_TMP_DIR=. OSM_CACHE_DIR=. \
		exec ibsim-run opensm -f ./osm.log -s 0 >opensm.out 2>&1) &
	SM_PID=$!
	sm_wait_settled
}

# Wait until the fabric is settled, then give the SM a moment to finish the
# last MADs of its sweep.
sm_wait_settled() {
	if ! sim_poll _sim_settled; then
		cat "$SIM_SCRATCH/opensm.out" >&2 || true
		sim_dump >&2
		sim_die "opensm did not bring all linked ports to Active"
	fi
	sleep "${SM_SETTLE_SECONDS:-1}"
	kill -0 "$SM_PID" 2>/dev/null || sim_die "opensm exited: $(cat "$SIM_SCRATCH/opensm.out")"
}

# Stop opensm with SIGKILL by its PID (it does not exit cleanly under ibsim).
sm_stop() {
	if [ -n "$SM_PID" ]; then
		kill -KILL "$SM_PID" 2>/dev/null || true
		wait "$SM_PID" 2>/dev/null || true
		SM_PID=""
	fi
}

# Quit the simulator: console "Quit", then SIGKILL by PID if it lingers.
sim_stop() {
	local i
	if [ -n "$SIM_PID" ]; then
		if [ -n "$SIM_FD" ]; then printf 'Quit\n' >&"$SIM_FD" 2>/dev/null || true; fi
		for ((i = 0; i < 30; i++)); do
			kill -0 "$SIM_PID" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$SIM_PID" 2>/dev/null || true
		wait "$SIM_PID" 2>/dev/null || true
		SIM_PID=""
	fi
	if [ -n "$SIM_FD" ]; then
		exec {SIM_FD}>&-
		SIM_FD=""
	fi
	if [ -n "$SIM_LOCK_FD" ]; then
		exec {SIM_LOCK_FD}>&-
		SIM_LOCK_FD=""
	fi
}

# Make regenerated fixtures byte-identical without changing their format:
# - the process id in libibumad/libibmad warning prefixes ("ibwarn: [12345] ...",
#   "ibpanic: [12345] ...") becomes a fixed 4242;
# - the date in ibnetdiscover's "# Topology file: generated on <date>" becomes
#   a fixed date in the same ctime() format.
SIM_PID_MASK=${SIM_PID_MASK:-4242}
SIM_DATE_MASK=${SIM_DATE_MASK:-Mon Jan  5 12:00:00 2026}
normalize_output() {
	sed -E -e "s/^(ib(warn|panic|error)?: )\[[0-9]+\]/\1[$SIM_PID_MASK]/" \
		-e "s/^(# Topology file: generated on ).*/\1$SIM_DATE_MASK/"
}

# capture OUT HOST CMD... : run CMD (a real infiniband-diags binary) under
# ibsim-run as simulated host HOST and write OUT as
#     $ CMD
#     <stdout+stderr, merged like `CMD >file 2>&1`>
#     [exit N]
capture() {
	local out=$1 host=$2 rc=0 tmp
	shift 2
	mkdir -p "$(dirname "$out")"
	tmp="$SIM_SCRATCH/capture.tmp"
	(cd "$SIM_SCRATCH" && SIM_HOST=$host timeout "$SIM_TOOL_TIMEOUT" ibsim-run "$@" >"$tmp" 2>&1) || rc=$?
	[ "$rc" != 124 ] || sim_log "warning: timed out: $* (on $host)"
	{
		printf '$ %s\n' "$*"
		normalize_output <"$tmp"
		# keep "[exit N]" on its own line even if the tool printed no final newline
		if [ -s "$tmp" ] && [ "$(tail -c 1 "$tmp" | od -An -c | tr -d ' ')" != '\n' ]; then echo; fi
		printf '[exit %d]\n' "$rc"
	} >"$out"
}

# run_tool HOST CMD... : run a tool, print its merged output (no framing).
run_tool() {
	local host=$1
	shift
	(cd "$SIM_SCRATCH" && SIM_HOST=$host timeout "$SIM_TOOL_TIMEOUT" ibsim-run "$@" 2>&1)
}
