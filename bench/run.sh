#!/usr/bin/env bash
# Side-by-side benchmark of mcpkit, go-sdk v1.8.0, mcp-go v1.6.0 and a raw
# net/http ceiling (see README.md here). Each server runs pinned to CPU 0
# with GOMAXPROCS=1, the load generator pinned to CPU 1; loopback only.
#
# Environment (defaults in brackets):
#   R          repetitions, server order rotated each time [3]
#   DUR        measured duration per run [10s]
#   WARMUP     warm-up per run [2s]
#   CONNS      closed-loop connections [32]
#   SERVERS    [mcpkit gosdk mcpgo raw]
#   WORKLOADS  closed-loop workloads, and W9 [W1 W2 W3 W4 W5 W6 W6p W7 W8 W9]
#   SESSIONS   W9: idle sessions per server [10000]
#   SESSION_CONNS W9: connections that open them (closed afterwards) [16]
#   OPEN       open-loop loads, percent of each server's own peak [50]; "" skips
#   OPEN_RATES open-loop loads in absolute req/s, the same for every server [500]; "" skips
#   OPEN_WORKLOADS [W1]
#   OPEN_CONNS connections for the open loop [64]
#   SERVER_CPU, LOAD_CPU [0, 1]
#   OUT        results directory [bench/results/<UTC time>]
#   GOMEMLIMIT passed to the servers when set
set -euo pipefail

cd "$(dirname "$0")"
R=${R:-3}
DUR=${DUR:-10s}
WARMUP=${WARMUP:-2s}
CONNS=${CONNS:-32}
SERVERS=(${SERVERS:-mcpkit gosdk mcpgo raw})
WORKLOADS=(${WORKLOADS:-W1 W2 W3 W4 W5 W6 W6p W7 W8 W9})
SESSIONS=${SESSIONS:-10000}
SESSION_CONNS=${SESSION_CONNS:-16}
OPEN=(${OPEN-50})
OPEN_RATES=(${OPEN_RATES-500})
OPEN_WORKLOADS=(${OPEN_WORKLOADS:-W1})
OPEN_CONNS=${OPEN_CONNS:-64}
SERVER_CPU=${SERVER_CPU:-0}
LOAD_CPU=${LOAD_CPU:-1}
OUT=${OUT:-results/$(date -u +%Y%m%dT%H%M%SZ)}
(( R >= 1 && R <= 20 )) || { echo "R must be 1..20" >&2; exit 2; }
(( SESSIONS >= 1 && SESSIONS <= 100000 )) || { echo "SESSIONS must be 1..100000" >&2; exit 2; }

mkdir -p "$OUT"
BIN=$OUT/bin
RES=$OUT/results.jsonl
: >"$RES"
echo "building into $BIN"
go build -trimpath -o "$BIN/" ./cmd/benchserver ./cmd/load ./cmd/report

{
	echo "date: $(date -u +%FT%TZ)"
	echo "go: $(go version)"
	echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') ($(nproc) CPUs)"
	echo "uptime before: $(uptime)"
	echo "ulimit -n: $(ulimit -n)"
	echo "settings: R=$R DUR=$DUR WARMUP=$WARMUP CONNS=$CONNS SESSIONS=$SESSIONS SESSION_CONNS=$SESSION_CONNS OPEN=${OPEN[*]:-none} OPEN_RATES=${OPEN_RATES[*]:-none} OPEN_CONNS=$OPEN_CONNS GOMEMLIMIT=${GOMEMLIMIT:-unset}"
	echo "mcpkit tree: $(git -C .. rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C .. status --porcelain -- . ':!bench' 2>/dev/null | grep -q . && echo ' (uncommitted changes)')"
} | tee "$OUT/env.txt"

SPID=""
cleanup() { [[ -n $SPID ]] && kill "$SPID" 2>/dev/null && wait "$SPID" 2>/dev/null; SPID=""; }
trap cleanup EXIT

# start_server NAME: starts it pinned, sets SPID and ADDR_FILE. Extra
# benchserver flags come from SERVER_FLAGS.
start_server() {
	ADDR_FILE=$OUT/addr.$1
	rm -f "$ADDR_FILE"
	GOMAXPROCS=1 taskset -c "$SERVER_CPU" "$BIN/benchserver" -sdk "$1" -addr 127.0.0.1:0 -addr-file "$ADDR_FILE" -max-run 10m ${SERVER_FLAGS:-} \
		2>>"$OUT/server.$1.log" &
	SPID=$!
	for _ in $(seq 100); do [[ -s $ADDR_FILE ]] && return 0; sleep 0.05; done
	echo "server $1 did not start" >&2
	return 1
}

# load_run SERVER WORKLOAD REP [extra load flags...]
load_run() {
	local s=$1 w=$2 rep=$3
	shift 3
	start_server "$s"
	timeout 300 taskset -c "$LOAD_CPU" "$BIN/load" -addr-file "$ADDR_FILE" -w "$w" -d "$DUR" -warmup "$WARMUP" \
		-pid "$SPID" -server "$s" -rep "$rep" -json "$@" | tee -a "$RES"
	cleanup
}

supported() { [[ $2 != WT && ($2 != W8 || $1 == mcpkit) && ($1 != raw || ($2 != W3 && $2 != W4 && $2 != W6p && $2 != W7 && $2 != W9)) ]]; }

n=${#SERVERS[@]}
for rep in $(seq "$R"); do
	for w in "${WORKLOADS[@]}"; do
		for i in $(seq 0 $((n - 1))); do
			s=${SERVERS[$(((i + rep - 1) % n))]}
			supported "$s" "$w" || continue
			if [[ $w == W9 ]]; then
				# Idle sessions: opened, connections closed, server RSS
				# before and after its GC (benchserver -mem-endpoint).
				SERVER_FLAGS=-mem-endpoint load_run "$s" "$w" "$rep" -c "$SESSION_CONNS" -sessions "$SESSIONS"
				continue
			fi
			load_run "$s" "$w" "$rep" -c "$CONNS"
		done
	done
done

"$BIN/report" -peak "$RES" >"$OUT/peaks.txt"
for rep in $(seq "$R"); do
	for w in "${OPEN_WORKLOADS[@]}"; do
		# Relative loads: a fraction of each server's own median peak.
		for pct in "${OPEN[@]}"; do
			for i in $(seq 0 $((n - 1))); do
				s=${SERVERS[$(((i + rep - 1) % n))]}
				supported "$s" "$w" || continue
				peak=$(awk -v s="$s" -v w="$w" '$1==s && $2==w {print $3}' "$OUT/peaks.txt")
				[[ -n $peak ]] || continue
				rate=$(awk -v p="$peak" -v f="$pct" 'BEGIN {printf "%d", p*f/100}')
				((rate > 0)) || continue
				load_run "$s" "$w" "$rep" -c "$OPEN_CONNS" -rate "$rate" -load-tag "$pct%"
			done
		done
		# Absolute loads: the same rate for every server.
		for rate in "${OPEN_RATES[@]}"; do
			for i in $(seq 0 $((n - 1))); do
				s=${SERVERS[$(((i + rep - 1) % n))]}
				supported "$s" "$w" || continue
				load_run "$s" "$w" "$rep" -c "$OPEN_CONNS" -rate "$rate" -load-tag "$rate/s"
			done
		done
	done
done

echo "uptime after: $(uptime)" | tee -a "$OUT/env.txt"
echo
"$BIN/report" "$RES" | tee "$OUT/report.md"
echo
echo "results: $OUT"
