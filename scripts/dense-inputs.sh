#!/usr/bin/env bash
# The CLI's memory on the dense inputs of issue 30 (item 7): under the 64 MiB input cap, a 60 MB
# JSON pod with one `[0,0,…]` field (2 bytes per value) and 60 MB of YAML `[],` (3 bytes per
# value), plus 27 MB of real manifests (copies of testdata/examples/iis-deployment.yaml) to see
# what the node budget costs an input that is within it.
#
# Usage:
#   scripts/dense-inputs.sh gen DIR [MB]      write dense.json, dense.yaml, real.yaml into DIR
#   scripts/dense-inputs.sh run BIN [MB]      exit code, CPU seconds and peak RSS of BIN on each
#                                             (peak RSS from /usr/bin/time -v; MB default 60)
# Each run is stopped after LIMIT seconds (default 600) and under an address-space cap of
# VMEM_MIB (default 16384), so that a regression fails instead of taking the machine.
set -euo pipefail
cd "$(dirname "$0")/.."

gen() {
  local dir=$1 mb=${2:-60}
  python3 - "$dir" "$mb" <<'PY'
import sys
d, mb = sys.argv[1], int(sys.argv[2])
n = mb * 1000 * 1000
head = ('{"apiVersion":"v1","kind":"Pod","metadata":{"name":"dense"},"spec":{"containers":'
        '[{"name":"c","image":"mcr.microsoft.com/windows/servercore:ltsc2022","args":[')
tail = "0]}]}}\n"
k = (n - len(head) - len(tail)) // 2
with open(f"{d}/dense.json", "w") as f:
    f.write(head); f.write("0," * k); f.write(tail)
head = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: dense\nspec:\n  containers:\n"
        "  - name: c\n    image: mcr.microsoft.com/windows/servercore:ltsc2022\n    args: [")
tail = "[]]\n"
k = (n - len(head) - len(tail)) // 3
with open(f"{d}/dense.yaml", "w") as f:
    f.write(head); f.write("[]," * k); f.write(tail)
one = open("testdata/examples/iis-deployment.yaml").read()
with open(f"{d}/real.yaml", "w") as f:
    size, i = 0, 0
    while size < n * 27 // 60:
        doc = "---\n" + one.replace("name: iis", f"name: iis-{i}") + "\n"
        f.write(doc); size += len(doc); i += 1
PY
}

case ${1:-} in
  gen) gen "$2" "${3:-60}" ;;
  run)
    BIN=$2
    command -v /usr/bin/time >/dev/null || { echo "install Debian 'time'" >&2; exit 2; }
    DIR=$(mktemp -d)
    trap 'rm -rf "$DIR"' EXIT
    gen "$DIR" "${3:-60}"
    for f in dense.json dense.yaml real.yaml; do
      rc=0
      ( ulimit -v $(( ${VMEM_MIB:-16384} << 10 ))
        /usr/bin/time -v -o "$DIR/t" timeout "${LIMIT:-600}" "$BIN" -o json "$DIR/$f" \
          > "$DIR/out" 2> "$DIR/err" ) || rc=$?
      bytes=$(wc -c < "$DIR/$f")
      awk -v f="$f" -v rc="$rc" -v b="$bytes" -F': ' '
        /User time/ { u = $2 } /System time/ { s = $2 } /Maximum resident/ { m = $2 }
        END { printf "%-11s %9d bytes  exit %s  cpu %7.2f s  peak RSS %8.1f MiB  (%.1f x input)\n",
              f, b, rc, u + s, m / 1024, m * 1024 / b }' "$DIR/t"
      grep -o '"message": *"[^"]*"' "$DIR/out" | head -1 | cut -c1-200 || true
    done
    ;;
  *) sed -n '2,12p' "$0" >&2; exit 2 ;;
esac
