#!/usr/bin/env bash
# `winlint plan` over many workloads (issue 27): N Deployments in one file, a mix of every
# verdict class (runs-as-is, retag, rebuild, pin-breaks, unknown, needs-hyperv under AKS) and
# Linux ones, each with its own image name (the per-image work is not shared), planned from a
# 2019/2022 AKS cluster to Windows Server 2025. Prints wall seconds, user+sys CPU seconds and
# the peak RSS per N, and the exponent k of cpu ~ N^k (least squares of log cpu on log N).
# Usage: scripts/plan-bench.sh [BIN] (default target/debug/winlint; say which build you ran).
# Also: scripts/plan-bench.sh gen N > plan.yaml writes the input (nothing is committed).
set -euo pipefail
cd "$(dirname "$0")/.."

gen() {
  local n=$1
  printf 'apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata:\n  name: hyperv\nhandler: runhcs-wcow-hypervisor\nscheduling:\n  nodeSelector:\n    kubernetes.io/os: windows\n'
  awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++) {
    k = i % 7; sel = "kubernetes.io/os: windows"; rc = ""
    if (k == 0) img = "mcr.microsoft.com/windows/nanoserver:ltsc2022"
    if (k == 1) img = "mcr.microsoft.com/windows/nanoserver:ltsc2019"
    if (k == 2) img = sprintf("example.com/app-%d:1.0-windowsservercore-ltsc2019", i)
    if (k == 3) { img = "mcr.microsoft.com/windows/servercore:ltsc2019"; sel = sel ", node.kubernetes.io/windows-build: \"10.0.17763\"" }
    if (k == 4) img = sprintf("example.com/thing-%d:1.0", i)
    if (k == 5) { img = "mcr.microsoft.com/windows/servercore:ltsc2019"; rc = "      runtimeClassName: hyperv\n" }
    if (k == 6) { img = sprintf("nginx:1.27.%d", i); sel = "kubernetes.io/os: linux" }
    printf "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: w%d\n  namespace: ns%d\n", i, i % 50
    printf "spec:\n  selector:\n    matchLabels: {app: w%d}\n  template:\n    metadata:\n      labels: {app: w%d}\n", i, i
    printf "    spec:\n%s      nodeSelector: {%s}\n      containers:\n      - name: c\n        image: %s\n", rc, sel, img } }'
}

if [ "${1:-}" = gen ]; then gen "$2"; exit 0; fi

BIN=${1:-target/debug/winlint}
NS=${NS:-"2500 5000 10000"}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
command -v /usr/bin/time >/dev/null || { echo "install Debian 'time'" >&2; exit 2; }

: > "$DIR/pts"
printf '%8s %8s %8s %10s\n' N wall_s cpu_s maxrss_MB
for n in $NS; do
  gen "$n" > "$DIR/plan-$n.yaml"
  /usr/bin/time -v -o "$DIR/t" "$BIN" plan "$DIR/plan-$n.yaml" --no-config --platform aks \
    --windows-build ltsc2019 --windows-build ltsc2022 --to ltsc2025 --as-of 2026-11-29 \
    --format json > "$DIR/out.json"
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }' "$DIR/t")
  cpu=$(awk -F': ' '/User time/ { u = $2 } /System time/ { s = $2 } END { printf "%.2f", u + s }' "$DIR/t")
  rss=$(awk -F': ' '/Maximum resident/ { printf "%.1f", $2 / 1024 }' "$DIR/t")
  printf '%8d %8.2f %8.2f %10s\n' "$n" "$wall" "$cpu" "$rss"
  echo "$n $cpu" >> "$DIR/pts"
done
python3 - "$DIR/out.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
print("last run's verdicts:", {k: v for k, v in p["counts"].items()}, "not Windows:", p["not_windows"])
PY
awk '{ x = log($1); y = log($2); sx += x; sy += y; sxx += x * x; sxy += x * y; m++ }
  END { printf "exponent k of cpu ~ N^k: %.2f\n", (m * sxy - sx * sy) / (m * sxx - sx * sx) }' "$DIR/pts"
