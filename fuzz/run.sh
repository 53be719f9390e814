#!/usr/bin/env bash
# Run every fuzz target for a bounded time (default 300 s each) on stable, no sanitizer:
#   fuzz/run.sh [SECONDS]   (needs `cargo install cargo-fuzz`)
# Findings land in fuzz/artifacts/<target>/ (gitignored); reproduce one with
#   cargo fuzz run -s none -O <target> fuzz/artifacts/<target>/<file>
set -euo pipefail
cd "$(dirname "$0")"
SECS=${1:-300}
./seed.sh
for t in yaml_load image_ref admission_review; do
  echo "== $t ($SECS s)"
  cargo fuzz run -s none -O "$t" -- -max_total_time="$SECS" -rss_limit_mb=4096 -max_len=65536 -timeout=10 2>&1 |
    grep -E '^(#[0-9]+ +DONE|Done|==|SUMMARY|artifact_prefix|Test unit written|thread .* panicked|stat::)' || true
done
