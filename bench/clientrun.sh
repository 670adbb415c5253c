#!/usr/bin/env bash
# Client benchmarks over loopback (W1c, W3c, W7c, W8c; see README.md):
# benchserver -sdk clientraw pinned to CPU 0 with GOMAXPROCS=1, each
# client in its own clientload process pinned to CPU 1 with GOMAXPROCS=1,
# a fresh server per run, the client order rotated each repetition.
#
# Environment (defaults in brackets):
#   R [3]  DUR [10s]  WARMUP [2s]  CONNS [32]
#   CLIENTS [mcpkit gosdk mcpgo raw]   WORKLOADS [W1c W3c W7c W8c]
#   SERVER_CPU, LOAD_CPU [0, 1]   OUT [results/clients-<UTC time>]
#   RATE       calls a second over the callers (clientload -rate): every client at
#              the same pace, so that CPU per call compares like with like [closed loop]
set -euo pipefail

cd "$(dirname "$0")"
R=${R:-3}
DUR=${DUR:-10s}
WARMUP=${WARMUP:-2s}
CONNS=${CONNS:-32}
RATE=${RATE:-}
CLIENTS=(${CLIENTS:-mcpkit gosdk mcpgo raw})
WORKLOADS=(${WORKLOADS:-W1c W3c W7c W8c})
SERVER_CPU=${SERVER_CPU:-0}
LOAD_CPU=${LOAD_CPU:-1}
OUT=${OUT:-results/clients-$(date -u +%Y%m%dT%H%M%SZ)}
(( R >= 1 && R <= 20 )) || { echo "R must be 1..20" >&2; exit 2; }

mkdir -p "$OUT"
BIN=$OUT/bin
RES=$OUT/results.jsonl
: >"$RES"
go build -trimpath -o "$BIN/" ./cmd/benchserver ./cmd/clientload
{
	echo "date: $(date -u +%FT%TZ)"
	echo "go: $(go version)"
	echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') ($(nproc) CPUs)"
	echo "uptime before: $(uptime)"
	echo "settings: R=$R DUR=$DUR WARMUP=$WARMUP CONNS=$CONNS RATE=${RATE:-closed loop}"
	echo "mcpkit tree: $(git -C .. rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C .. status --porcelain 2>/dev/null | grep -q . && echo ' (uncommitted changes)')"
} | tee "$OUT/env.txt"

SPID=""
cleanup() { [[ -n $SPID ]] && kill "$SPID" 2>/dev/null && wait "$SPID" 2>/dev/null; SPID=""; }
trap cleanup EXIT

n=${#CLIENTS[@]}
for rep in $(seq "$R"); do
	for w in "${WORKLOADS[@]}"; do
		for i in $(seq 0 $((n - 1))); do
			s=${CLIENTS[$(((i + rep - 1) % n))]}
			[[ $w != W8c || $s == mcpkit ]] || continue
			ADDR_FILE=$OUT/addr
			rm -f "$ADDR_FILE"
			GOMAXPROCS=1 taskset -c "$SERVER_CPU" "$BIN/benchserver" -sdk clientraw -addr 127.0.0.1:0 -addr-file "$ADDR_FILE" -max-run 10m \
				2>>"$OUT/server.log" &
			SPID=$!
			for _ in $(seq 100); do [[ -s $ADDR_FILE ]] && break; sleep 0.05; done
			GOMAXPROCS=1 timeout 300 taskset -c "$LOAD_CPU" "$BIN/clientload" -addr-file "$ADDR_FILE" -sdk "$s" -w "$w" \
				-c "$CONNS" ${RATE:+-rate "$RATE"} -d "$DUR" -warmup "$WARMUP" -rep "$rep" -json | tee -a "$RES"
			cleanup
		done
	done
done
echo "uptime after: $(uptime)" | tee -a "$OUT/env.txt"
# Medians per client and workload.
python3 - "$RES" <<'PY' | tee "$OUT/report.md"
import json, sys, statistics as st
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
keys = sorted({(r["workload"], r["sdk"]) for r in rows}, key=lambda k: (k[0], ["mcpkit","gosdk","mcpgo","raw"].index(k[1])))
raw = {}
for w, s in keys:
    if s == "raw":
        raw[w] = st.median(r["perSecond"] for r in rows if r["workload"] == w and r["sdk"] == s)
print("| workload | client | calls/s | % of raw | p50 ms | p99 ms | CPU µs/call | allocs/call | B/call |")
print("|---|---|---|---|---|---|---|---|---|")
for w, s in keys:
    rs = [r for r in rows if r["workload"] == w and r["sdk"] == s]
    m = lambda f: st.median(r[f] for r in rs)
    pct = f'{100*m("perSecond")/raw[w]:.0f}%' if w in raw else "n/a"
    print(f'| {w} | {s} | {m("perSecond"):,.0f} | {pct} | {m("p50Ms"):.2f} | {m("p99Ms"):.2f} | {m("cpuMicrosPerCall"):.1f} | {m("allocsPerCall"):.0f} | {m("bytesPerCall"):,.0f} |')
PY
echo "results: $OUT"
