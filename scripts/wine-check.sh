#!/usr/bin/env bash
# The Windows build under Wine against the Linux build, byte for byte (issue 28):
#   scripts/wine-check.sh [DIR...]        (default: testdata/realworld testdata/rules)
# Builds winlint for x86_64-pc-windows-gnu (debug: quicker; `--release` after `--` is passed on)
# with Debian's gcc-mingw-w64-x86-64, and the Linux binary, then runs both with `-o json` on each
# DIR and compares stdout and exit code. Needs: rustup target x86_64-pc-windows-gnu,
# x86_64-w64-mingw32-gcc, wine (Debian 12's Wine 8 needs the ProcessPrng stand-in of
# scripts/wine/bcryptprimitives.c, put beside the .exe by scripts/wine/prepare.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
dirs=("$@"); [ ${#dirs[@]} -gt 0 ] || dirs=(testdata/realworld testdata/rules)
cargo build --quiet --bin winlint
cargo build --quiet --bin winlint --target x86_64-pc-windows-gnu
exe_dir=target/x86_64-pc-windows-gnu/debug
bash scripts/wine/prepare.sh "$exe_dir/winlint.exe" "$exe_dir" > /dev/null
export WINEDEBUG=-all WINEPREFIX="${WINEPREFIX:-$PWD/target/wineprefix}" WINEDLLOVERRIDES="mscoree,mshtml="
wine "$exe_dir/winlint.exe" --version
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
status=0
for d in "${dirs[@]}"; do
  set +e
  target/debug/winlint --no-config -o json "$d" > "$tmp/linux.json" 2> /dev/null; lc=$?
  wine "$exe_dir/winlint.exe" --no-config -o json "$d" > "$tmp/windows.json" 2> /dev/null; wc=$?
  set -e
  if [ "$lc" = "$wc" ] && cmp -s "$tmp/linux.json" "$tmp/windows.json"; then
    echo "identical: $d (exit $lc, $(wc -c < "$tmp/linux.json") bytes of JSON)"
  else
    echo "DIFFERENT: $d (exit codes $lc / $wc)"; diff <(head -c 2000 "$tmp/linux.json") \
      <(head -c 2000 "$tmp/windows.json") || true; status=1
  fi
done
exit $status
