#!/usr/bin/env bash
# CPU seconds and peak RSS of `winlint` on the two big inputs of issue 15: one pod with 10 000
# containers that each carry Linux-only securityContext fields (scripts/growth.sh gen), and
# 27 MB of YAML (copies of testdata/examples/iis-deployment.yaml, each its own document), plus
# `/dev/zero` (stops at the input cap, or grows until killed: run under `ulimit -v`).
# Usage: scripts/big-inputs.sh [BIN] (default target/release/winlint). Needs /usr/bin/time.
# Each run is stopped after LIMIT seconds (default 600; exit 124 then).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-target/release/winlint}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
command -v /usr/bin/time >/dev/null || { echo "install Debian 'time'" >&2; exit 2; }

scripts/growth.sh gen 10000 > "$DIR/pod10000.yaml"
# 27 MB: the example deployment again and again, as one multi-document file.
one=$(cat testdata/examples/iis-deployment.yaml)
n=$(( 27000000 / ${#one} + 1 ))
for i in $(seq "$n"); do printf -- '---\n%s\n' "${one//name: iis/name: iis-$i}"; done > "$DIR/big.yaml"

# run LABEL ARGS...: exit code, user+sys CPU seconds, peak RSS
run() {
  local label=$1; shift
  local rc=0
  /usr/bin/time -f '%U %S %M' -o "$DIR/t" timeout "${LIMIT:-600}" "$BIN" "$@" > /dev/null 2> "$DIR/err" || rc=$?
  tail -1 "$DIR/t" | awk -v l="$label" -v rc="$rc" '{ printf "%-28s exit %s  cpu %7.2f s  peak RSS %7.1f MiB\n", l, rc, $1 + $2, $3 / 1024 }'
}

echo "inputs: pod10000.yaml $(wc -c < "$DIR/pod10000.yaml") bytes, big.yaml $(wc -c < "$DIR/big.yaml") bytes ($n documents)"
run "pod 10000 containers" "$DIR/pod10000.yaml"
run "pod 10000, --fix (opt-in)" --fix --fix-opt-in WIN103 "$DIR/pod10000.yaml"
run "27 MB YAML" "$DIR/big.yaml"
# Under a 2 GiB address-space cap, so that an unbounded read fails instead of swapping.
( ulimit -v $((2 << 20)); run "/dev/zero (ulimit -v 2 GiB)" /dev/zero )
