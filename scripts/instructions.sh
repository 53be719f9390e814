#!/usr/bin/env bash
# CPU cost per admission request in instructions (issue 4), for `winlint serve` and the two
# baselines of scripts/load.sh (no-op; parse the JSON only), each run under
# `valgrind --tool=callgrind`. Instruction counts do not depend on what else the machine is
# doing, so unlike req/s on a shared 2-core machine they compare well across runs and builds.
# Each server is warmed up (connections opened, first requests), its counters are zeroed, then
# it answers N requests (the 41 captured reviews in rotation, over 4 keep-alive TLS
# connections) and the counters are dumped: instructions / N = cost per request, TLS and HTTP
# included, connection setup excluded.
#
# Usage: scripts/instructions.sh [N requests, default 2000] [validate|mutate, default validate]
# Needs valgrind (callgrind_control), oha (`cargo install oha --locked`; OHA=/path), python3.
# WINLINT=... LOADSERVER=... use prebuilt binaries; LD_PRELOAD_SERVER=lib.so tries an allocator.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-2000}
EP=${2:-validate}
ADMISSION=${ADMISSION:-testdata/admission}
OHA=${OHA:-oha}
for c in valgrind callgrind_control "$OHA" python3; do
  command -v "$c" >/dev/null || { echo "needs $c" >&2; exit 2; }
done
. scripts/harness.sh
build_servers
TMP=$(mktemp -d)
trap 'pkill -KILL -f "callgrind-out-file=$TMP" 2>/dev/null || true; rm -rf "$TMP"' EXIT
"$LOADSERVER" certs "$TMP"
write_bodies "$ADMISSION" "$TMP/bodies.jsonl"

PORT=${PORT:-21443}
load() { # N: requests over 4 keep-alive connections
  "$OHA" -n "$1" -c 4 --no-tui --insecure -m POST -T application/json -Z "$TMP/bodies.jsonl" \
    --output-format json "https://127.0.0.1:$PORT/$EP?timeout=10s" > "$TMP/oha.json"
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); c=d.get("statusCodeDistribution",{}); sys.exit(0 if c.get("200",0)==int(sys.argv[2]) else "non-200 answers: %s" % c)' "$TMP/oha.json" "$1"
}

# measure NAME CMD...: prints instructions per request
measure() {
  local name=$1; shift
  valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$TMP/$name.%p" \
    env ${LD_PRELOAD_SERVER:+LD_PRELOAD=$LD_PRELOAD_SERVER} "$@" \
    --listen 127.0.0.1:$PORT --tls-cert "$TMP/cert.pem" --tls-key "$TMP/key.pem" \
    > /dev/null 2> "$TMP/$name.log" &
  local vg=$!
  for _ in $(seq 300); do curl -sk "https://127.0.0.1:$PORT/healthz" > /dev/null 2>&1 && break; sleep 0.2; done
  load 200                                  # warm-up: connections, lazy statics, caches
  callgrind_control -z "$vg" > /dev/null 2>&1    # zero the counters
  load "$N"
  callgrind_control -d "$vg" > /dev/null 2>&1    # dump what the N requests cost
  sleep 1
  kill -KILL "$vg" 2>/dev/null || true
  wait "$vg" 2>/dev/null || true
  local total
  total=$(cat "$TMP/$name".* | awk '/^summary:/{s+=$2} END{print s+0}')
  rm -f "$TMP/$name".*
  echo "$total"
}

echo "N=$N requests to /$EP (41 captured reviews), callgrind, allocator: ${LD_PRELOAD_SERVER:-that of each binary}"
W=$(measure winlint "$WINLINT" serve)
B=$(measure noop "$LOADSERVER" baseline)
J=$(measure json "$LOADSERVER" baseline --parse)
awk -v w="$W" -v b="$B" -v j="$J" -v n="$N" 'BEGIN {
  printf "%-22s %12.0f instructions/request\n", "no-op baseline", b / n
  printf "%-22s %12.0f instructions/request\n", "json-parse baseline", j / n
  printf "%-22s %12.0f instructions/request\n", "winlint serve", w / n
  printf "JSON work (json - no-op)       %10.0f\n", (j - b) / n
  printf "winlint beyond JSON (winlint - json) %4.0f\n", (w - j) / n
  printf "server CPU per request, no-op / winlint = %.3f, json / winlint = %.2f\n", b / w, j / w
}'
