#!/usr/bin/env bash
# A Windows binary made ready for Debian 12's Wine 8 (issue 28):
#   scripts/wine/prepare.sh EXE DIR     copies EXE into DIR beside bcryptprimitives.dll, the
#                                       ProcessPrng stand-in of scripts/wine/bcryptprimitives.c
#                                       (built with x86_64-w64-mingw32-gcc), and prints the copy's path
# Wine loads a DLL from the program's directory first, so the stand-in is found there; on Windows
# and on a Wine that has the DLL it is never needed, and it is never shipped. Used by
# scripts/dist.sh, scripts/wine-check.sh and tests/dist.rs.
set -euo pipefail
exe=${1:?usage: prepare.sh EXE DIR}
dir=${2:?usage: prepare.sh EXE DIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$dir"
if [ "$(cd "$(dirname "$exe")" && pwd)" != "$(cd "$dir" && pwd)" ]; then
  cp "$exe" "$dir/"
fi
x86_64-w64-mingw32-gcc -shared -O2 -o "$dir/bcryptprimitives.dll" "$here/bcryptprimitives.c" \
  -ladvapi32
echo "$dir/$(basename "$exe")"
