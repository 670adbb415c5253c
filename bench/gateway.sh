#!/usr/bin/env bash
# The gateway's cost (issue 37): the same call made directly to an mcpkit
# upstream (benchserver -sdk mcpkit) and through an mcpkit gateway in front
# of it (benchserver -gateway-upstream, package gateway over Streamable
# HTTP), and through a plain net/http reverse proxy in front of it
# (benchserver -relay-upstream, "relay"): the floor, what a relay costs with
# net/http on both sides and no MCP. Closed loop: ops/s and the CPU per call
# of the gateway (or relay) process and of the upstream (/proc/<pid>/stat).
# Open loop at OPEN percent of the gateway path's peak, the same rate for
# every path: the p99 the gateway adds. The upstream is pinned to
# SERVER_CPU, the gateway and the relay to GW_CPU (SERVER_CPU unless set),
# with GOMAXPROCS=1 each, the load generator to LOAD_CPU. Loopback only.
#
# Environment (defaults in brackets):
#   R          repetitions [1]
#   DUR        measured duration per run [5s]
#   WARMUP     warm-up per run [1s]
#   CONNS      closed-loop connections [32]
#   OPEN_CONNS open-loop connections [64]
#   WORKLOADS  [W1 W3] (W1 session-less 2026-07-28, W3 sessionful legacy)
#   PATHS      [direct relay gateway] (their order rotates each repetition)
#   UPSTREAM_VERSION the gateway's era upstream [2026-07-28]
#   OPEN       open-loop load, percent of the gateway path's peak [50]; "" skips
#   OPEN_RATE  a fixed open-loop rate (whole calls/s) for every repetition instead of
#              OPEN percent of each repetition's own peak: on a VM whose
#              cost per call swings between runs, a peak measured in a fast
#              spell puts the open loop near saturation in a slow one [unset]
#   SERVER_CPU, LOAD_CPU [0, 1]
#   GW_CPU     the gateway's and the relay's CPU [SERVER_CPU]; GW_CPU=1 puts
#              them beside the load generator, off the upstream's core
#   GW_PROFILE a directory: the gateway writes a CPU profile of each
#              workload's runs there (gateway-<W>-<rep>.prof)
#   GW_TIMING  1: the gateway and the relay time each request, its upstream
#              round trips and the difference (benchserver -timing); each
#              run's percentiles go to $OUT/timing.jsonl (warm-up included)
#   OUT        results directory [bench/results/gateway-<UTC time>]
set -euo pipefail

cd "$(dirname "$0")"
R=${R:-1}
DUR=${DUR:-5s}
WARMUP=${WARMUP:-1s}
CONNS=${CONNS:-32}
OPEN_CONNS=${OPEN_CONNS:-64}
WORKLOADS=(${WORKLOADS:-W1 W3})
PATHS=(${PATHS:-direct relay gateway})
UPSTREAM_VERSION=${UPSTREAM_VERSION:-2026-07-28}
OPEN=${OPEN-50}
OPEN_RATE=${OPEN_RATE:-}
[[ -z $OPEN_RATE || $OPEN_RATE =~ ^[0-9]+$ ]] || { echo "OPEN_RATE must be a whole number of calls a second" >&2; exit 2; }
SERVER_CPU=${SERVER_CPU:-0}
LOAD_CPU=${LOAD_CPU:-1}
GW_CPU=${GW_CPU:-$SERVER_CPU}
GW_PROFILE=${GW_PROFILE:-}
GW_TIMING=${GW_TIMING:-}
OUT=${OUT:-results/gateway-$(date -u +%Y%m%dT%H%M%SZ)}
(( R >= 1 && R <= 20 )) || { echo "R must be 1..20" >&2; exit 2; }

mkdir -p "$OUT"
BIN=$OUT/bin
RES=$OUT/results.jsonl
: >"$RES"
echo "building into $BIN"
go build -trimpath -o "$BIN/" ./cmd/benchserver ./cmd/load ./cmd/report

PIDS=()
stop_all() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	PIDS=()
}
trap stop_all EXIT
wait_file() { for _ in $(seq 200); do [[ -s $1 ]] && return 0; sleep 0.05; done; echo "no $1" >&2; return 1; }

{
	echo "date: $(date -u +%FT%TZ)"
	echo "go: $(go version)"
	echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') ($(nproc) CPUs)"
	echo "uptime before: $(uptime)"
	echo "settings: R=$R DUR=$DUR WARMUP=$WARMUP CONNS=$CONNS OPEN_CONNS=$OPEN_CONNS OPEN=${OPEN:-none} OPEN_RATE=${OPEN_RATE:-none} UPSTREAM_VERSION=$UPSTREAM_VERSION SERVER_CPU=$SERVER_CPU GW_CPU=$GW_CPU LOAD_CPU=$LOAD_CPU PATHS=${PATHS[*]}"
	echo "mcpkit tree: $(git -C .. rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C .. status --porcelain 2>/dev/null | grep -q . && echo ' (uncommitted changes)')"
} | tee "$OUT/env.txt"

# start W REP: a fresh upstream, a gateway and a relay in front of it; sets
# UP_PID, GW_PID, RELAY_PID.
start() {
	local prof=() timed=()
	[[ -n $GW_TIMING ]] && timed=(-timing)
	[[ -n $GW_PROFILE ]] && mkdir -p "$GW_PROFILE" && prof=(-cpuprofile "$GW_PROFILE/gateway-$1-$2.prof")
	stop_all
	rm -f "$OUT/addr.up" "$OUT/addr.gw" "$OUT/addr.relay"
	GOMAXPROCS=1 taskset -c "$SERVER_CPU" "$BIN/benchserver" -sdk mcpkit -addr 127.0.0.1:0 -addr-file "$OUT/addr.up" -max-run 10m 2>>"$OUT/upstream.log" &
	UP_PID=$!
	PIDS+=($UP_PID)
	wait_file "$OUT/addr.up"
	GOMAXPROCS=1 taskset -c "$GW_CPU" "$BIN/benchserver" -gateway-upstream "http://$(cat "$OUT/addr.up")/mcp" -gateway-version "$UPSTREAM_VERSION" \
		-addr 127.0.0.1:0 -addr-file "$OUT/addr.gw" -max-run 10m "${timed[@]}" "${prof[@]}" 2>>"$OUT/gateway.log" &
	GW_PID=$!
	PIDS+=($GW_PID)
	GOMAXPROCS=1 taskset -c "$GW_CPU" "$BIN/benchserver" -relay-upstream "http://$(cat "$OUT/addr.up")" \
		-addr 127.0.0.1:0 -addr-file "$OUT/addr.relay" -max-run 10m "${timed[@]}" 2>>"$OUT/relay.log" &
	RELAY_PID=$!
	PIDS+=($RELAY_PID)
	wait_file "$OUT/addr.gw"
	wait_file "$OUT/addr.relay"
}

# one LABEL W REP [load flags...]: direct to the upstream, through the relay
# or through the gateway.
one() {
	local label=$1 w=$2 rep=$3 addr pids
	shift 3
	case $label in
	direct) addr=$OUT/addr.up; pids="upstream=$UP_PID" ;;
	relay) addr=$OUT/addr.relay; pids="relay=$RELAY_PID,upstream=$UP_PID" ;;
	gateway) addr=$OUT/addr.gw; pids="gateway=$GW_PID,upstream=$UP_PID" ;;
	*) echo "unknown path $label" >&2; return 2 ;;
	esac
	local timed=
	[[ -n $GW_TIMING && $label != direct ]] && timed=http://$(cat "$addr")/debug/bench-timing
	[[ -n $timed ]] && curl -fsS "$timed" >/dev/null # start the figures afresh
	timeout 300 taskset -c "$LOAD_CPU" "$BIN/load" -addr-file "$addr" -w "$w" -d "$DUR" -warmup "$WARMUP" \
		-pids "$pids" -server "$label" -rep "$rep" -json "$@" | tee -a "$RES"
	if [[ -n $timed ]]; then
		curl -fsS "$timed" | jq -c --arg s "$label" --arg w "$w" --argjson r "$rep" --arg m "$*" '{server: $s, workload: $w, rep: $r, load: $m} + .' | tee -a "$OUT/timing.jsonl"
	fi
}

for rep in $(seq "$R"); do
	for w in "${WORKLOADS[@]}"; do
		start "$w" "$rep"
		# rotate the paths' order by one each repetition
		n=${#PATHS[@]}
		order=()
		for i in $(seq 0 $((n - 1))); do order+=("${PATHS[$(((i + rep - 1) % n))]}"); done
		for p in "${order[@]}"; do one "$p" "$w" "$rep" -c "$CONNS"; done
		rate=0
		if [[ -n $OPEN_RATE ]]; then
			rate=$OPEN_RATE tag="$OPEN_RATE/s"
		elif [[ -n $OPEN ]]; then
			ref=gateway
			[[ " ${PATHS[*]} " == *" gateway "* ]] || ref=${PATHS[0]}
			peak=$(jq -r --arg w "$w" --arg s "$ref" --argjson r "$rep" 'select(.server==$s and .workload==$w and .rep==$r and .mode=="closed") | .rps' "$RES" | tail -1)
			rate=$(awk -v p="$peak" -v f="$OPEN" 'BEGIN {printf "%d", p*f/100}') tag="$OPEN%"
		fi
		if (( rate > 0 )); then
			for p in "${order[@]}"; do one "$p" "$w" "$rep" -c "$OPEN_CONNS" -rate "$rate" -load-tag "$tag"; done
		fi
	done
done
stop_all

echo "uptime after: $(uptime)" | tee -a "$OUT/env.txt"
echo
"$BIN/report" -procs "$RES" | tee "$OUT/report.md"
echo
echo "results: $OUT"
