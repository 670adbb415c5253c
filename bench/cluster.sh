#!/usr/bin/env bash
# Multi-instance workloads (issue 37): W3 (sessionful legacy tools/call)
# and WT (task lifecycle: task-augmented tools/call, tasks/get until
# completed, tasks/result) through rrproxy, a round-robin reverse proxy
# with no stickiness, over 1, 2 and 3 mcpkit instances (benchserver
# -cluster) sharing one redis-server; plus W3 and WT on one instance in
# memory (no Redis), the baseline of "Redis costs an instance at most 1.3x
# the CPU of memory". Reports ops/s, p99 and the CPU per operation of each
# instance, of redis-server and of the proxy (/proc/<pid>/stat).
# Loopback only; redis-server is started here on a free port, with no
# persistence, and killed at the end. Without redis-server only the
# in-memory runs are made.
#
# SERVERS="mcpkit raw" also runs the raw ceiling (benchserver -cluster
# -sdk raw, servers.RawCluster: net/http, encoding/json and go-redis doing
# the same Redis commands per operation) in each configuration, right
# after mcpkit's, labelled "raw <config>"; mcpkit's labels are unchanged.
#
# Two modes (MODES): "proxy", the load generator sends to rrproxy, which
# sends each request to the next instance; "direct", the load generator
# keeps a connection to each instance and sends each request to the next
# itself (load -addr a,b,c), so no proxy process shares the load's core
# and the instances, not the proxy, bound the run. Both spread a
# session's requests over every instance alike. Direct configurations
# are labelled "<config> direct".
#
# Environment (defaults in brackets):
#   R          repetitions [1]
#   DUR        measured duration per run [5s]
#   WARMUP     warm-up per run [1s]
#   CONNS      closed-loop connections [32]
#   INSTANCES  instance counts on Redis ["1 2 3"]
#   WORKLOADS  [W3 WT]
#   SERVERS    mcpkit and/or raw [mcpkit]
#   MEMORY     1: also one instance in memory [1]
#   MODES      proxy, direct or both ["proxy direct"]
#   SERVER_CPU instances and redis-server [0]
#   LOAD_CPU   load generator and proxy [1]
#   PLACE      pinned: the processes on SERVER_CPU and LOAD_CPU as above;
#              shared: every process (instances, redis-server, proxy, load
#              generator) may run on any of SHARED_CPUS, so that together
#              they use every core (the instances keep GOMAXPROCS=1) [pinned]
#   SHARED_CPUS the CPU list of PLACE=shared [0-<nproc-1>]
#   REDIS_SERVER the redis-server binary [redis-server]
#   OUT        results directory [bench/results/cluster-<UTC time>]
set -euo pipefail

cd "$(dirname "$0")"
R=${R:-1}
DUR=${DUR:-5s}
WARMUP=${WARMUP:-1s}
CONNS=${CONNS:-32}
INSTANCES=(${INSTANCES:-1 2 3})
WORKLOADS=(${WORKLOADS:-W3 WT})
MEMORY=${MEMORY:-1}
MODES=(${MODES:-proxy direct})
SERVERS=(${SERVERS:-mcpkit})
SERVER_CPU=${SERVER_CPU:-0}
LOAD_CPU=${LOAD_CPU:-1}
REDIS_SERVER=${REDIS_SERVER:-redis-server}
PLACE=${PLACE:-pinned}
SHARED_CPUS=${SHARED_CPUS:-0-$(($(nproc) - 1))}
OUT=${OUT:-results/cluster-$(date -u +%Y%m%dT%H%M%SZ)}
(( R >= 1 && R <= 20 )) || { echo "R must be 1..20" >&2; exit 2; }
for n in "${INSTANCES[@]}"; do (( n >= 1 && n <= 8 )) || { echo "INSTANCES must be 1..8 each" >&2; exit 2; }; done
for m in "${MODES[@]}"; do [[ $m == proxy || $m == direct ]] || { echo "MODES: proxy and/or direct" >&2; exit 2; }; done
for s in "${SERVERS[@]}"; do [[ $s == mcpkit || $s == raw ]] || { echo "SERVERS: mcpkit and/or raw" >&2; exit 2; }; done
case $PLACE in
pinned) SRV_CPUS=$SERVER_CPU LD_CPUS=$LOAD_CPU ;;
shared) SRV_CPUS=$SHARED_CPUS LD_CPUS=$SHARED_CPUS ;;
*) echo "PLACE: pinned or shared" >&2; exit 2 ;;
esac

mkdir -p "$OUT"
BIN=$OUT/bin
RES=$OUT/results.jsonl
: >"$RES"
echo "building into $BIN"
go build -trimpath -o "$BIN/" ./cmd/benchserver ./cmd/load ./cmd/report ./cmd/rrproxy

PIDS=()
REDIS_PID=""
stop_all() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	PIDS=()
}
cleanup() {
	stop_all
	if [[ -n $REDIS_PID ]]; then kill "$REDIS_PID" 2>/dev/null || true; wait "$REDIS_PID" 2>/dev/null || true; fi
	REDIS_PID=""
}
trap cleanup EXIT

# wait_file F: until the process that writes F has.
wait_file() { for _ in $(seq 200); do [[ -s $1 ]] && return 0; sleep 0.05; done; echo "no $1" >&2; return 1; }

REDIS_ADDR=""
if command -v "$REDIS_SERVER" >/dev/null; then
	for _ in $(seq 10); do
		port=$((20000 + RANDOM % 40000))
		taskset -c "$SRV_CPUS" "$REDIS_SERVER" --bind 127.0.0.1 --port "$port" --save "" --appendonly no \
			--protected-mode yes --daemonize no --loglevel warning >"$OUT/redis.log" 2>&1 &
		REDIS_PID=$!
		up=""
		for _ in $(seq 100); do
			kill -0 "$REDIS_PID" 2>/dev/null || break # the port was taken: try another
			if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then up=1; break; fi
			sleep 0.05
		done
		if [[ -n $up ]]; then REDIS_ADDR=127.0.0.1:$port; break; fi
		wait "$REDIS_PID" 2>/dev/null || true
		REDIS_PID=""
	done
	[[ -n $REDIS_ADDR ]] || { echo "redis-server did not start" >&2; exit 1; }
else
	echo "redis-server not found: skipping the runs on Redis (in memory only)"
	INSTANCES=()
fi

{
	echo "date: $(date -u +%FT%TZ)"
	echo "go: $(go version)"
	echo "redis: $([[ -n $REDIS_ADDR ]] && "$REDIS_SERVER" --version || echo none)"
	echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') ($(nproc) CPUs)"
	echo "uptime before: $(uptime)"
	echo "settings: R=$R DUR=$DUR WARMUP=$WARMUP CONNS=$CONNS INSTANCES=${INSTANCES[*]:-none} MEMORY=$MEMORY MODES=${MODES[*]} SERVERS=${SERVERS[*]} SERVER_CPU=$SERVER_CPU LOAD_CPU=$LOAD_CPU PLACE=$PLACE$([[ $PLACE == shared ]] && echo " SHARED_CPUS=$SHARED_CPUS")"
	echo "mcpkit tree: $(git -C .. rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C .. status --porcelain 2>/dev/null | grep -q . && echo ' (uncommitted changes)')"
} | tee "$OUT/env.txt"

# config_run LABEL N REDIS_ADDR WORKLOAD REP MODE SERVER: N instances of
# SERVER (mcpkit or raw; on Redis if the address is set), the proxy in
# front (MODE proxy) or none (direct: the load generator round-robins
# itself), one load run.
config_run() {
	local label=$1 n=$2 raddr=$3 w=$4 rep=$5 mode=$6 sdk=$7 addrs=() procs="" target prefix=benchcluster:
	[[ $sdk == raw ]] && label="raw $label" prefix=benchraw:
	stop_all
	for i in $(seq "$n"); do
		rm -f "$OUT/addr.$i"
		GOMAXPROCS=1 taskset -c "$SRV_CPUS" "$BIN/benchserver" -cluster -sdk "$sdk" ${raddr:+-redis "$raddr" -redis-prefix "$prefix"} \
			-addr 127.0.0.1:0 -addr-file "$OUT/addr.$i" -max-run 10m 2>>"$OUT/instance.$i.log" &
		PIDS+=($!)
		procs+="i$i=$!,"
	done
	for i in $(seq "$n"); do wait_file "$OUT/addr.$i"; addrs+=("$(cat "$OUT/addr.$i")"); done
	if [[ $mode == proxy ]]; then
		rm -f "$OUT/addr.proxy"
		GOMAXPROCS=1 taskset -c "$LD_CPUS" "$BIN/rrproxy" -backends "$(IFS=,; echo "${addrs[*]}")" \
			-addr-file "$OUT/addr.proxy" -max-run 10m 2>>"$OUT/proxy.log" &
		PIDS+=($!)
		procs+="proxy=$!"
		wait_file "$OUT/addr.proxy"
		target=$(cat "$OUT/addr.proxy")
	else
		label+=" direct"
		procs=${procs%,}
		target=$(IFS=,; echo "${addrs[*]}")
	fi
	[[ -n $raddr ]] && procs+=",redis=$REDIS_PID"
	timeout 300 taskset -c "$LD_CPUS" "$BIN/load" -addr "$target" -w "$w" -d "$DUR" -warmup "$WARMUP" \
		-c "$CONNS" -pids "$procs" -server "$label" -rep "$rep" -json | tee -a "$RES"
	stop_all
}

for rep in $(seq "$R"); do
	for w in "${WORKLOADS[@]}"; do
		for mode in "${MODES[@]}"; do
			if [[ $MEMORY == 1 ]]; then
				for sdk in "${SERVERS[@]}"; do config_run "memory-1" 1 "" "$w" "$rep" "$mode" "$sdk"; done
			fi
			for n in "${INSTANCES[@]}"; do
				for sdk in "${SERVERS[@]}"; do
					config_run "redis-$n" "$n" "$REDIS_ADDR" "$w" "$rep" "$mode" "$sdk"
				done
			done
		done
	done
done

echo "uptime after: $(uptime)" | tee -a "$OUT/env.txt"
echo
"$BIN/report" -procs "$RES" | tee "$OUT/report.md"
echo
echo "results: $OUT"
