#!/usr/bin/env bash
# CLI throughput (issue 4): winlint (release) over a generated corpus of 10 000 mixed manifests,
# against loading the same YAML with the same loader (winlint::source, `corpus parse`), with
# peak RSS from /usr/bin/time -v. Usage: scripts/cli-throughput.sh [N] (default 10000).
# INSTRUCTIONS=1 also counts instructions under callgrind (noise-free; try N=1000, each run is
# ~50x slower). Needs: /usr/bin/time (Debian package `time`), valgrind for INSTRUCTIONS=1.
# Everything stays in a temp dir.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-10000}
RUNS=${RUNS:-3}
command -v /usr/bin/time >/dev/null || { echo "install Debian 'time'" >&2; exit 2; }

cargo build --release --quiet
cargo bench --bench corpus --no-run --quiet 2>/dev/null || cargo bench --bench corpus --no-run
CORPUS=$(ls -t target/release/deps/corpus-* | grep -v '\.d$' | head -1)
WINLINT=target/release/winlint
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT

"$CORPUS" gen "$DIR/m" "$N" 4
echo "files: $(find "$DIR/m" -name '*.yaml' | wc -l), bytes: $(du -sb "$DIR/m" | cut -f1)"
echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p')"
cat "$DIR"/m/*/*.yaml > /dev/null # warm the page cache

# run LABEL CMD...: best of $RUNS wall times, max RSS of those runs
run() {
  local label=$1; shift
  local best="" rss=0
  for _ in $(seq "$RUNS"); do
    /usr/bin/time -v -o "$DIR/time.txt" "$@" > "$DIR/out.txt" 2>"$DIR/err.txt" || true
    local wall kb
    wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$DIR/time.txt" | awk -F: '{ if (NF==3) print $1*3600+$2*60+$3; else print $1*60+$2 }')
    kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$DIR/time.txt")
    if [ -z "$best" ] || awk "BEGIN{exit !($wall < $best)}"; then best=$wall; fi
    [ "$kb" -gt "$rss" ] && rss=$kb
  done
  printf '%-32s %8.3f s %10.0f resources/s  peak RSS %7.1f MiB\n' "$label" "$best" "$(awk "BEGIN{print $N/$best}")" "$(awk "BEGIN{print $rss/1024}")"
  echo "$best" > "$DIR/$label.t"
}

run parse-only "$CORPUS" parse "$DIR/m"
run engine-lint "$CORPUS" lint "$DIR/m"
run winlint-text-jobs1 "$WINLINT" "$DIR/m" --jobs 1
run winlint-text "$WINLINT" "$DIR/m"
run winlint-json "$WINLINT" "$DIR/m" -o json
P=$(cat "$DIR/parse-only.t")
for l in engine-lint winlint-text winlint-json; do
  printf 'ratio %-14s / parse-only: %.2fx\n' "$l" "$(awk "BEGIN{print $(cat "$DIR/$l.t")/$P}")"
done
# Issue 16: all cores against one (--jobs 1 is the sequential path, in the same run).
printf 'ratio winlint-text (all %s cores) / --jobs 1: %.2fx\n' "$(nproc)" \
  "$(awk "BEGIN{print $(cat "$DIR/winlint-text.t")/$(cat "$DIR/winlint-text-jobs1.t")}")"
echo "findings (json): $(grep -o '"rule"' "$DIR/out.txt" | wc -l) (last run's output)"

if [ "${INSTRUCTIONS:-0}" = 1 ]; then
  # count LABEL CMD...: instructions of one run under callgrind
  count() {
    local label=$1; shift
    valgrind --tool=callgrind --callgrind-out-file="$DIR/cg.out" "$@" > /dev/null 2> "$DIR/cg.err" || true
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$DIR/cg.err" > "$DIR/$label.ir"
    printf '%-32s %14s instructions\n' "$label" "$(cat "$DIR/$label.ir")"
  }
  count parse-only "$CORPUS" parse "$DIR/m"
  count engine-lint "$CORPUS" lint "$DIR/m"
  count winlint-text "$WINLINT" "$DIR/m"
  count winlint-json "$WINLINT" "$DIR/m" -o json
  P=$(cat "$DIR/parse-only.ir")
  for l in engine-lint winlint-text winlint-json; do
    printf 'instructions %-14s / parse-only: %.2fx\n' "$l" "$(awk "BEGIN{print $(cat "$DIR/$l.ir")/$P}")"
  done
fi
