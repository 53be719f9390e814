#!/usr/bin/env bash
# The `winlint` hook of this repository (.pre-commit-hooks.yaml, language: script; the default
# hook is winlint-pre-commit's, on the wheel): runs the release binary of this checkout's
# version, so a repository using the hook needs no Rust. pre-commit
# clones this repository at the hook's `rev` into its cache; on the first run the binary is
# downloaded from WINLINT_RELEASE_BASE_URL/v<version>/ (GitHub releases by default), checked
# against the release's SHA256SUMS and kept in that clone, so later runs are offline.
#
# Where there is no release binary (another platform, a version not released yet) it builds the
# checkout with cargo when cargo is installed, into the same place; otherwise it says what to use
# instead. A binary that fails its checksum stops the hook. The `rev` should be a release tag:
# the binary is the release of the version the checkout declares (`winlint-cargo` builds the
# exact commit).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/release-binary.sh
. "$here/scripts/release-binary.sh"
version=$(crate_version "$here")
bin="$here/.winlint-hook/winlint-$version$(exe_suffix)"

if ! [ -x "$bin" ]; then
  status=0
  release_binary "$bin" "${WINLINT_RELEASE_BASE_URL:-https://github.com/winlint/winlint/releases/download}" \
    "v$version" >&2 || status=$?
  if [ "$status" = 2 ]; then
    exit 2
  elif [ "$status" = 1 ]; then
    if ! command -v cargo >/dev/null 2>&1; then
      echo "winlint: no release binary of v$version for this machine and no cargo to build it:" \
        "use the hook of https://github.com/winlint/winlint-pre-commit (the wheel, where PyPI" \
        "has one for this machine), or install winlint and use the hook winlint-system, or" \
        "install Rust" >&2
      exit 2
    fi
    echo "winlint: building v$version with cargo (once)" >&2
    cargo install --locked --quiet --path "$here" --root "$here/.winlint-hook/cargo" >&2
    mkdir -p "$(dirname "$bin")"
    mv "$here/.winlint-hook/cargo/bin/winlint$(exe_suffix)" "$bin"
  fi
fi
exec "$bin" "$@"
