# Sourced by scripts/action.sh and scripts/pre-commit-hook.sh: the one way winlint's release
# binaries are downloaded and verified, so the Action and the pre-commit hook cannot differ.
#
#   release_binary DEST BASE_URL TAG
#
# Downloads BASE_URL/TAG/winlint-<triple> for this machine (RUNNER_OS/RUNNER_ARCH when set,
# else uname) and BASE_URL/TAG/SHA256SUMS, checks the one against the other and installs the
# binary as DEST. Returns 0 when installed; 1 when there is nothing to install (no release
# binary for this platform, or the download failed): the caller builds instead; 2 when the
# binary does not match its checksum: the caller must stop, never fall back. Needs curl.

release_binary() {
  local dest=$1 base=$2 tag=$3 triple
  case "${RUNNER_OS:-$(uname -s)}/${RUNNER_ARCH:-$(uname -m)}" in
    Linux/X64 | Linux/x86_64) triple=x86_64-unknown-linux-musl ;;
    Linux/ARM64 | Linux/aarch64 | Linux/arm64) triple=aarch64-unknown-linux-musl ;;
    *)
      echo "winlint: no release binary for ${RUNNER_OS:-$(uname -s)}/${RUNNER_ARCH:-$(uname -m)}"
      return 1
      ;;
  esac
  local url="${base%/}/$tag" tmp
  tmp=$(mktemp -d)
  if ! curl -fsSL --retry 3 -o "$tmp/SHA256SUMS" "$url/SHA256SUMS" ||
    ! curl -fsSL --retry 3 -o "$tmp/winlint-$triple" "$url/winlint-$triple"; then
    rm -rf "$tmp"
    echo "winlint: could not download $url/winlint-$triple"
    return 1
  fi
  local want got
  want=$(awk -v f="winlint-$triple" '$2 == f || $2 == "*" f { print $1 }' "$tmp/SHA256SUMS")
  got=$(sha256sum "$tmp/winlint-$triple" | cut -d' ' -f1)
  if [ -z "$want" ] || [ "$want" != "$got" ]; then
    rm -rf "$tmp"
    echo "::error title=winlint::winlint-$triple from $url does not match its SHA256SUMS (want '$want', got $got)"
    return 2
  fi
  mkdir -p "$(dirname "$dest")"
  install -m 0755 "$tmp/winlint-$triple" "$dest"
  rm -rf "$tmp"
  echo "winlint: release binary $url/winlint-$triple (sha256 $got)"
}

# The crate's version in the Cargo.toml of directory $1.
crate_version() {
  sed -n 's/^version = "\(.*\)"$/\1/p' "$1/Cargo.toml" | head -n 1
}
