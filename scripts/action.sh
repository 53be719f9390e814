#!/usr/bin/env bash
# The logic of the GitHub Action (action.yml at the repository root), kept here so that it can
# run, and be tested (tests/action.rs), outside GitHub.
#
#   action.sh key       cache key of the winlint build: OS, arch, the Action's ref and a hash
#                       of its sources (a branch ref moves; the hash says when to rebuild)
#   action.sh install   into $WINLINT_ROOT, unless a cached one is already there: the release
#                       binary of the Action's ref (a tag v<version of the checkout>) from
#                       $INPUT_RELEASE_BASE_URL/<tag>/ for the runner's OS and arch
#                       (Linux, Windows, macOS; scripts/release-binary.sh), verified against the release's
#                       SHA256SUMS; otherwise (a branch or commit ref, a platform with no
#                       release binary, no release at that URL) cargo install from the
#                       Action's own checkout. A checksum mismatch fails: never a fallback.
#   action.sh run       lint $INPUT_PATHS with $INPUT_ARGS: annotations (-o github) or the text
#                       report, optionally SARIF into $INPUT_SARIF_FILE; outputs exit-code,
#                       summary and sarif-file; a step summary; exits with winlint's status
#
# Environment (GitHub sets the first four): GITHUB_ACTION_PATH, GITHUB_OUTPUT,
# GITHUB_STEP_SUMMARY, RUNNER_OS/RUNNER_ARCH; ACTION_REF (github.action_ref); WINLINT_ROOT
# (install root); INPUT_RELEASE_BASE_URL (where releases are downloaded from: the GitHub
# releases of winlint/winlint by default; a mirror, or a loopback server in tests/dist.rs);
# WINLINT_BIN (a winlint to use instead of $WINLINT_ROOT/bin/winlint); INPUT_*
# (the Action's inputs: PATHS and ARGS are split on whitespace, without globbing).
set -euo pipefail

action_path="${GITHUB_ACTION_PATH:-$(cd "$(dirname "$0")/.." && pwd)}"
root="${WINLINT_ROOT:-$HOME/.winlint-action}"
# shellcheck source=scripts/release-binary.sh
. "$(dirname "$0")/release-binary.sh"

# `name=value` to $GITHUB_OUTPUT (a single line: values here have no newline).
output() {
  if [ -n "${GITHUB_OUTPUT:-}" ]; then
    printf '%s=%s\n' "$1" "$2" >> "$GITHUB_OUTPUT"
  fi
}

# An absolute path as the job's other steps read it. On a Windows runner the Action's shell is
# Git for Windows' bash, whose `pwd` says /d/a/repo: a step that is not bash (upload-sarif is a
# Node program) needs D:\a\repo, which cygpath (in Git for Windows' usr/bin) gives. The paths
# GitHub hands in (GITHUB_ACTION_PATH, runner.tool_cache, GITHUB_OUTPUT) are Windows paths, which
# Git Bash's programs take as they are.
native_path() {
  if [ -n "$(exe_suffix)" ] && command -v cygpath > /dev/null 2>&1; then
    cygpath -w "$1"
  else
    printf '%s\n' "$1"
  fi
}

cmd_key() {
  local hash
  hash=$(
    cd "$action_path"
    find Cargo.toml Cargo.lock src -type f -print0 2>/dev/null | LC_ALL=C sort -z |
      xargs -0 sha256sum | sha256sum | cut -c1-16
  )
  local ref="${ACTION_REF:-local}"
  output key "winlint-${RUNNER_OS:-$(uname -s)}-${RUNNER_ARCH:-$(uname -m)}-${ref//[^A-Za-z0-9._-]/_}-$hash"
}

cmd_install() {
  local bin
  bin="$root/bin/winlint$(exe_suffix)"
  if [ -x "$bin" ] && "$bin" --version >/dev/null 2>&1; then
    echo "winlint from the cache: $("$bin" --version)"
    return 0
  fi
  local fetched=0
  fetch_release "$bin" || fetched=$?
  case "$fetched" in
    0) "$bin" --version; return 0 ;;
    1) ;;
    *) return "$fetched" ;;
  esac
  if ! command -v cargo >/dev/null 2>&1; then
    echo "::error title=winlint action::cargo not found; add a Rust toolchain step (e.g. dtolnay/rust-toolchain@stable) before this Action"
    return 2
  fi
  cargo install --locked --path "$action_path" --root "$root"
  "$bin" --version
}

# The release binary of this Action's ref into $1 (0 installed, 1 build instead, 2 stop).
fetch_release() {
  local tag
  tag="v$(crate_version "$action_path")"
  # Only a ref naming this checkout's release has that release's binary; a branch or a commit
  # may hold other sources under the same version, so it is built.
  if [ "${ACTION_REF:-}" != "$tag" ]; then
    echo "winlint: ref '${ACTION_REF:-}' is not the release tag $tag: building from source"
    return 1
  fi
  release_binary "$1" "${INPUT_RELEASE_BASE_URL:-https://github.com/winlint/winlint/releases/download}" "$tag" ||
    { local s=$?; [ "$s" = 1 ] && echo "winlint: building from source"; return "$s"; }
}

cmd_run() {
  local bin="${WINLINT_BIN:-$root/bin/winlint$(exe_suffix)}"
  local paths=() args=()
  set -f
  # shellcheck disable=SC2206 # word splitting is the point; globbing is off
  paths=(${INPUT_PATHS:-.})
  # shellcheck disable=SC2206
  args=(${INPUT_ARGS:-})
  set +f
  if [ ${#paths[@]} -eq 0 ]; then
    paths=(.)
  fi

  local sarif="${INPUT_SARIF_FILE:-}"
  if [ -n "$sarif" ]; then
    mkdir -p "$(dirname "$sarif")"
    # The verdict comes from the run below; SARIF is written whatever the findings.
    "$bin" -o sarif "${args[@]}" "${paths[@]}" > "$sarif" || true
    output sarif-file "$(native_path "$(cd "$(dirname "$sarif")" && pwd)/$(basename "$sarif")")"
  fi

  local format=text
  if [ "${INPUT_ANNOTATIONS:-true}" = true ]; then
    format=github
  fi
  local log status=0
  log=$(mktemp)
  "$bin" -o "$format" --color never "${args[@]}" "${paths[@]}" > "$log" || status=$?
  cat "$log"
  local summary
  summary=$(grep -v '^::' "$log" | grep -E '[0-9]+ errors?, [0-9]+ warnings?, ' | tail -n 1 || true)
  rm -f "$log"

  output exit-code "$status"
  output summary "$summary"
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    local verdict
    case "$status" in
      0) verdict="passed" ;;
      1) verdict="failed: findings at or above the --fail-on severity" ;;
      *) verdict="failed: a usage error or an input winlint could not read (status $status)" ;;
    esac
    {
      echo "### winlint ${verdict}"
      echo
      echo "${summary:-no summary (see the log)}"
      if [ "$format" = github ]; then
        echo
        echo "Findings are annotated on the files (the pull request's *Files changed* tab)."
      fi
      if [ -n "$sarif" ]; then
        echo
        echo "SARIF report: \`$sarif\`."
      fi
    } >> "$GITHUB_STEP_SUMMARY"
  fi
  return "$status"
}

case "${1:-}" in
  key) cmd_key ;;
  install) cmd_install ;;
  run) cmd_run ;;
  *)
    echo "usage: action.sh key|install|run" >&2
    exit 2
    ;;
esac
