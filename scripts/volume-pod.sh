#!/usr/bin/env bash
# The adversarial pods of issue 30 (item 2): one Windows container (servercore:ltsc2022, pinned
# by nodeSelector and spec.os) with V emptyDir volumes, the last M of them mounted in that one
# container (last volume first) at distinct Windows paths. A valid pod the API server stores; rules that look each mount's
# volume up by a scan, or compare each mount path with every earlier one, are M x V there.
#
#   scripts/volume-pod.sh gen V M > pod.yaml   one pod (12000 9000: 0.80 MB; 19200 14400: 1.30 MB)
#   scripts/volume-pod.sh [BIN]                CPU seconds and peak RSS of `BIN pod.yaml` (default
#                                              target/release/winlint) on both pods, via /usr/bin/time
set -euo pipefail
cd "$(dirname "$0")/.."

gen() {
  local v=$1 m=$2
  printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: volumes\n  namespace: default\nspec:\n  os:\n    name: windows\n  nodeSelector:\n    kubernetes.io/os: windows\n  containers:\n  - name: c\n    image: mcr.microsoft.com/windows/servercore:ltsc2022\n    volumeMounts:\n'
  awk -v m="$m" -v v="$v" 'BEGIN { for (i = 0; i < m; i++) printf "    - name: v%d\n      mountPath: C:\\d\\%d\n", v - 1 - i, i }'
  printf '  volumes:\n'
  awk -v v="$v" 'BEGIN { for (i = 0; i < v; i++) printf "  - name: v%d\n    emptyDir: {}\n", i }'
}

if [ "${1:-}" = gen ]; then gen "$2" "$3"; exit 0; fi

BIN=${1:-target/release/winlint}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
command -v /usr/bin/time >/dev/null || { echo "install Debian 'time'" >&2; exit 2; }
for vm in "12000 9000" "19200 14400"; do
  set -- $vm
  gen "$1" "$2" > "$DIR/pod.yaml"
  rc=0
  /usr/bin/time -f '%U %S %M' -o "$DIR/t" "$BIN" "$DIR/pod.yaml" > /dev/null 2>&1 || rc=$?
  tail -1 "$DIR/t" | awk -v v="$1" -v m="$2" -v b="$(wc -c < "$DIR/pod.yaml")" -v rc="$rc" \
    '{ printf "%5d volumes %5d mounts (%.2f MB): exit %s  cpu %6.2f s  peak RSS %6.1f MiB\n", v, m, b / 1e6, rc, $1 + $2, $3 / 1024 }'
done
