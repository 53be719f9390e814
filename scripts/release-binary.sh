# Sourced by scripts/action.sh and scripts/pre-commit-hook.sh: the one way winlint's release
# binaries are downloaded and verified, so the Action and the pre-commit hook cannot differ.
#
#   release_binary DEST BASE_URL TAG
#
# Downloads BASE_URL/TAG/SHA256SUMS, picks the first release asset it lists of those that run on
# this machine (release_candidates: RUNNER_OS/RUNNER_ARCH when set, else uname), downloads
# BASE_URL/TAG/<asset>, checks the one against the other and installs the binary as DEST (DEST
# gets `.exe` on Windows; the name installed is printed as `installed <path>`, last). Returns 0
# when installed; 1 when there is nothing to install (no release binary for this platform, or
# the download failed): the caller builds instead; 2 when the binary does not match its
# checksum: the caller must stop, never fall back. Needs curl.

# The release assets that run on the machine, best first, one a line. The OS and architecture
# are GitHub's RUNNER_OS (Linux, Windows, macOS) and RUNNER_ARCH (X64, ARM64, X86, ARM), or
# uname's (Linux, Darwin, MINGW64_NT-…/MSYS_NT-…/CYGWIN_NT-… in Git Bash; x86_64, aarch64,
# arm64). A Windows on Arm machine runs x86_64 programs (Windows 11's emulation), an Apple
# silicon Mac runs them under Rosetta 2: the x86_64 build comes second there, for a release
# without the native one.
release_candidates() {
  local os=${1:-${RUNNER_OS:-$(uname -s)}} arch=${2:-${RUNNER_ARCH:-$(uname -m)}}
  case "$os" in
    Linux) os=linux ;;
    Windows | MINGW* | MSYS* | CYGWIN*) os=windows ;;
    macOS | Darwin) os=macos ;;
    *) os=other ;;
  esac
  case "$arch" in
    X64 | x86_64 | amd64 | AMD64) arch=x86_64 ;;
    ARM64 | aarch64 | arm64) arch=aarch64 ;;
    *) arch=other ;;
  esac
  case "$os/$arch" in
    linux/x86_64 | linux/aarch64) echo "winlint-$arch-unknown-linux-musl" ;;
    windows/x86_64) echo winlint-x86_64-pc-windows-gnu.exe ;;
    windows/aarch64) printf '%s\n' winlint-aarch64-pc-windows-gnullvm.exe winlint-x86_64-pc-windows-gnu.exe ;;
    macos/x86_64) echo winlint-x86_64-apple-darwin ;;
    macos/aarch64) printf '%s\n' winlint-aarch64-apple-darwin winlint-x86_64-apple-darwin ;;
  esac
}

release_binary() {
  local dest=$1 base=$2 tag=$3 asset="" candidates
  local url="${base%/}/$tag" tmp
  candidates=$(release_candidates)
  if [ -z "$candidates" ]; then
    echo "winlint: no release binary for ${RUNNER_OS:-$(uname -s)}/${RUNNER_ARCH:-$(uname -m)}"
    return 1
  fi
  tmp=$(mktemp -d)
  if ! curl -fsSL --retry 3 -o "$tmp/SHA256SUMS" "$url/SHA256SUMS"; then
    rm -rf "$tmp"
    echo "winlint: could not download $url/SHA256SUMS"
    return 1
  fi
  local c want=""
  for c in $candidates; do
    want=$(awk -v f="$c" '$2 == f || $2 == "*" f { print $1 }' "$tmp/SHA256SUMS")
    if [ -n "$want" ]; then asset=$c; break; fi
  done
  if [ -z "$asset" ]; then
    rm -rf "$tmp"
    echo "winlint: the release $tag has none of $(echo $candidates) for this machine"
    return 1
  fi
  if ! curl -fsSL --retry 3 -o "$tmp/$asset" "$url/$asset"; then
    rm -rf "$tmp"
    echo "winlint: could not download $url/$asset"
    return 1
  fi
  local got
  got=$(sha256sum "$tmp/$asset" | cut -d' ' -f1)
  if [ "$want" != "$got" ]; then
    rm -rf "$tmp"
    echo "::error title=winlint::$asset from $url does not match its SHA256SUMS (want '$want', got $got)"
    return 2
  fi
  case "$asset" in *.exe) dest="${dest%.exe}.exe" ;; esac
  mkdir -p "$(dirname "$dest")"
  install -m 0755 "$tmp/$asset" "$dest"
  rm -rf "$tmp"
  echo "winlint: release binary $url/$asset (sha256 $got)"
  echo "installed $dest"
}

# `.exe` on Windows (Git Bash, MSYS2, Cygwin), where programs are found by that suffix.
exe_suffix() {
  case "${RUNNER_OS:-$(uname -s)}" in
    Windows | MINGW* | MSYS* | CYGWIN*) echo .exe ;;
  esac
}

# The crate's version in the Cargo.toml of directory $1.
crate_version() {
  sed -n 's/^version = "\(.*\)"$/\1/p' "$1/Cargo.toml" | head -n 1
}
