#!/usr/bin/env bash
# Soak test of mcpkit (see README.md here, "Soak"): benchserver pinned to
# CPU 0 with GOMAXPROCS=1 and -mem-endpoint, cmd/soak pinned to CPU 1;
# loopback only. Extra arguments go to cmd/soak (-duration, -rate,
# -fraction, -mix, ...). Exit status: cmd/soak's (0 pass, 1 a check
# failed, 2 the run could not be made).
#
# Environment: SERVER_CPU [0], LOAD_CPU [1], OUT [results/soak-<UTC time>],
# GOMEMLIMIT passed to the server when set.
set -euo pipefail

cd "$(dirname "$0")"
SERVER_CPU=${SERVER_CPU:-0}
LOAD_CPU=${LOAD_CPU:-1}
OUT=${OUT:-results/soak-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT"
go build -trimpath -o "$OUT/bin/" ./cmd/benchserver ./cmd/soak
{
	echo "date: $(date -u +%FT%TZ)"
	echo "go: $(go version)"
	echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') ($(nproc) CPUs)"
	echo "uptime before: $(uptime)"
	echo "mcpkit tree: $(git -C .. rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C .. status --porcelain 2>/dev/null | grep -q . && echo ' (uncommitted changes)')"
	echo "arguments: $*"
} | tee "$OUT/env.txt"

ADDR_FILE=$OUT/addr
rm -f "$ADDR_FILE"
# The server exits by itself after 3 hours at most (cmd/soak allows 2 h).
GOMAXPROCS=1 taskset -c "$SERVER_CPU" "$OUT/bin/benchserver" -sdk mcpkit -addr 127.0.0.1:0 \
	-addr-file "$ADDR_FILE" -mem-endpoint -max-run 3h &
SPID=$!
trap 'kill "$SPID" 2>/dev/null; wait "$SPID" 2>/dev/null || true' EXIT
for _ in $(seq 100); do [[ -s $ADDR_FILE ]] && break; sleep 0.1; done
[[ -s $ADDR_FILE ]] || { echo "benchserver did not start" >&2; exit 2; }

set +e
taskset -c "$LOAD_CPU" "$OUT/bin/soak" -addr-file "$ADDR_FILE" -pid "$SPID" "$@" | tee "$OUT/summary.txt"
rc=${PIPESTATUS[0]}
set -e
echo "uptime after: $(uptime)" | tee -a "$OUT/env.txt"
exit "$rc"
