#!/usr/bin/env bash
# Growth of evaluation time in the number of containers (issue 15, item 2): a Windows pod with N
# containers, each carrying a Linux-only securityContext field (runAsUser, seLinuxOptions), linted
# by the CLI (`winlint pod.yaml`, and `--fix --fix-opt-in WIN103` on the file: every field removed), for
# N = 500..8000. Prints user+sys CPU
# seconds per N and the exponent k of t ~ N^k (least-squares fit of log t against log N).
# Usage: scripts/growth.sh [BIN] (default target/release/winlint; build it first).
# Also: scripts/growth.sh gen N > pod.yaml writes one pod.
set -euo pipefail
cd "$(dirname "$0")/.."

gen() {
  local n=$1
  printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: big\nspec:\n  os:\n    name: windows\n  nodeSelector:\n    kubernetes.io/os: windows\n  tolerations:\n  - key: os\n    value: windows\n    effect: NoSchedule\n  containers:\n'
  awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++) {
    printf "  - name: c%d\n    image: mcr.microsoft.com/windows/servercore:ltsc2022\n", i
    printf "    env:\n    - name: A%d\n      value: \"x\"\n", i
    printf "    securityContext:\n      runAsUser: 1000\n      seLinuxOptions:\n        level: s0\n" } }'
}

if [ "${1:-}" = gen ]; then gen "$2"; exit 0; fi

BIN=${1:-target/release/winlint}
NS=${NS:-"500 1000 2000 4000 8000"}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
command -v /usr/bin/time >/dev/null || { echo "install Debian 'time'" >&2; exit 2; }

# cpu LABEL ARGS...: user+sys seconds of one run
cpu() {
  /usr/bin/time -f '%U %S %M' -o "$DIR/t" "$BIN" "$@" > /dev/null 2>&1 || true
  tail -1 "$DIR/t" | awk '{ printf "%.3f %d", $1 + $2, $3 }'
}

for mode in lint fix; do
  : > "$DIR/$mode.pts"
  for n in $NS; do
    gen "$n" > "$DIR/pod-$n.yaml"
    if [ "$mode" = lint ]; then r=$(cpu "$DIR/pod-$n.yaml"); else r=$(cpu --fix --fix-opt-in WIN103 "$DIR/pod-$n.yaml"); fi
    set -- $r
    printf '%-5s N=%-6s cpu %8.3f s  peak RSS %7.1f MiB\n' "$mode" "$n" "$1" "$(awk "BEGIN{print $2/1024}")"
    echo "$n $1" >> "$DIR/$mode.pts"
  done
  awk -v m="$mode" '$2 > 0 { x = log($1); y = log($2); n++; sx += x; sy += y; sxx += x*x; sxy += x*y }
    END { k = (n*sxy - sx*sy) / (n*sxx - sx*sx); printf "%-5s growth exponent k = %.2f (t ~ N^k)\n", m, k }' "$DIR/$mode.pts"
done
