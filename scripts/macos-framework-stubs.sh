#!/usr/bin/env bash
# Link stubs of the two macOS frameworks the macOS binaries link, for cross builds with
# cargo-zigbuild, which has no macOS SDK (zig ships libSystem's stubs, no framework's).
#
#   scripts/macos-framework-stubs.sh DIR   writes DIR/Security.framework/Security.tbd and
#                                          DIR/CoreFoundation.framework/CoreFoundation.tbd
#
# Why frameworks at all: kube's `rustls-tls` verifies the API server's certificate with
# rustls-platform-verifier and loads the roots with rustls-native-certs, which on macOS ask the
# system's trust store through security-framework(-sys) and core-foundation-sys; those crates
# `#[link(kind = "framework")]` Security and CoreFoundation. A text-based stub (.tbd, the format
# Apple's SDKs ship and zig's Mach-O linker reads) names the library's install path and the
# symbols it exports; the linker records the install path and binds the symbols to it, and at
# run time dyld loads the real framework. The stub lists every function and static that the
# two -sys crates (the versions in Cargo.lock) declare, a superset of what the binary uses.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: macos-framework-stubs.sh DIR}

# The -sys crates' source directories, from cargo's own resolution of Cargo.lock.
src_of() {
  cargo metadata --locked --format-version 1 --filter-platform aarch64-apple-darwin 2>/dev/null |
    python3 -c 'import json,sys,os
m=json.load(sys.stdin)
print(next(os.path.dirname(p["manifest_path"]) for p in m["packages"] if p["name"]==sys.argv[1]))' "$1"
}

stub() {
  local name=$1 install=$2 crate=$3 dir
  dir=$(src_of "$crate")
  mkdir -p "$out/$name.framework"
  # Every `fn NAME(` and `static NAME:` the crate declares (its extern blocks; a Rust helper
  # listed too is harmless: a stub may export more than the binary imports).
  local symbols
  symbols=$(grep -rhoE '^\s*(pub )?(fn|static) [A-Za-z_][A-Za-z0-9_]*' "$dir/src" |
    awk '{print "_"$NF}' | sort -u | paste -sd, - | sed 's/,/, /g')
  cat > "$out/$name.framework/$name.tbd" <<TBD
--- !tapi-tbd
tbd-version:     4
targets:         [ x86_64-macos, arm64-macos ]
install-name:    '$install'
current-version: 1
compatibility-version: 1
exports:
  - targets:     [ x86_64-macos, arm64-macos ]
    symbols:     [ $symbols ]
...
TBD
}

stub Security /System/Library/Frameworks/Security.framework/Versions/A/Security security-framework-sys
stub CoreFoundation /System/Library/Frameworks/CoreFoundation.framework/Versions/A/CoreFoundation core-foundation-sys
