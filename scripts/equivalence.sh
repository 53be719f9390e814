#!/usr/bin/env bash
# Equivalence harness for refactors: capture what winlint answers and prints, then check that a
# later build answers and prints exactly the same bytes.
#
#   scripts/equivalence.sh capture DIR   # at the base commit: write the baseline into DIR
#   scripts/equivalence.sh compare DIR   # after a change: capture again into a temp dir, diff
#
# What is captured (debug build; a few minutes on 2 cores):
# * webhook/: the webhook's answers (response bodies byte for byte, plus the outcome the server
#   logs and counts) for every object of a 2 000-resource generated corpus, crafted objects and
#   testdata/ (one file per testdata file, keyed by content), CREATE and UPDATE, on /validate
#   and /mutate, plainly and in a namespace the cluster facts know labelled (Pod Security
#   restricted; winlint.io/default-os=windows), plus the captured reviews
#   of testdata/admission, under each configuration of examples/equivalence.rs;
# * cli/corpus.*: the CLI's text and JSON reports and `--fix --diff` over the 10 000-resource
#   corpus (`corpus gen`'s generator and seed), with and without every opt-in fix;
# * cli/dir.*: text and JSON reports of each directory of testdata/ that does not move;
# * files/<sha>.*: for every file under testdata/ (keyed by content, so the baseline survives
#   renames), the text, JSON and SARIF reports and `--fix --diff` of it as stdin; for golden
#   cases (a case.txt beside input.yaml), the same with the case's own flags, and `--fix`'s
#   fixed manifest. Each output holds stdout, stderr and the exit code.
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=${1:?usage: scripts/equivalence.sh capture|compare DIR}
BASE=${2:?usage: scripts/equivalence.sh capture|compare DIR}
ROOT=$PWD

cargo build --quiet --bin winlint --example equivalence
WINLINT=$ROOT/target/debug/winlint
EQUIV=$ROOT/target/debug/examples/equivalence
export NO_COLOR=1

if [ "$MODE" = capture ]; then
  OUT=$BASE
  rm -rf "$OUT"
else
  OUT=$(mktemp -d)
  trap 'rm -rf "$OUT" "$WORK"' EXIT
fi
mkdir -p "$OUT/webhook" "$OUT/cli" "$OUT/files"
WORK=$(mktemp -d)
[ "$MODE" = capture ] && trap 'rm -rf "$WORK"' EXIT

# run NAME CMD... [< stdin]: stdout, stderr and exit code of CMD into $OUT/NAME.
run() {
  local name=$1; shift
  local rc=0
  "$@" >"$WORK/o" 2>"$WORK/e" || rc=$?
  # SARIF names the checkout it ran in (originalUriBaseIds): two checkouts of the same commit
  # would differ there only, so the path is written as CHECKOUT.
  { sed "s|file://$ROOT/|file://CHECKOUT/|g" "$WORK/o"; echo "--- stderr"; cat "$WORK/e"; echo "--- exit $rc"; } >"$OUT/$name"
}

"$EQUIV" webhook "$OUT/webhook" 2000 4

"$EQUIV" corpus "$WORK/corpus" 10000 4 >/dev/null
OPT_IN=$("$WINLINT" rules -o json | python3 -c '
import json, sys
print(" ".join("--fix-opt-in " + r["id"] for r in json.load(sys.stdin) if r["fix"] == "opt-in"))')
(
  cd "$WORK"
  run cli/corpus.txt "$WINLINT" corpus
  run cli/corpus.json "$WINLINT" -o json corpus
  run cli/corpus.fix-diff "$WINLINT" --fix --diff corpus
  # shellcheck disable=SC2086
  run cli/corpus.fix-diff-optin "$WINLINT" --fix --diff --cluster-mixed-builds $OPT_IN corpus
)
for d in cli examples linux yaml; do
  run "cli/dir.$d.txt" "$WINLINT" "testdata/$d"
  run "cli/dir.$d.json" "$WINLINT" -o json "testdata/$d"
  run "cli/dir.$d.fix-diff" "$WINLINT" --fix --diff "testdata/$d"
done

files=0
while IFS= read -r -d '' f; do
  key=$(sha256sum "$f" | cut -c1-16)
  files=$((files + 1))
  run "files/$key.txt" "$WINLINT" - <"$f"
  run "files/$key.json" "$WINLINT" -o json - <"$f"
  run "files/$key.sarif" "$WINLINT" -o sarif - <"$f"
  run "files/$key.fix-diff" "$WINLINT" --fix --diff - <"$f"
  case_txt=$(dirname "$f")/case.txt
  if [ "$(basename "$f")" = input.yaml ] && [ -f "$case_txt" ]; then
    args=$(sed -n 's/^args://p' "$case_txt")
    akey=$(printf '%s\n%s' "$key" "$args" | sha256sum | cut -c1-16)
    # shellcheck disable=SC2086
    {
      run "files/$akey.case.txt" "$WINLINT" $args - <"$f"
      run "files/$akey.case.json" "$WINLINT" $args -o json - <"$f"
      run "files/$akey.case.fix-diff" "$WINLINT" $args --fix --diff - <"$f"
      run "files/$akey.case.fixed" "$WINLINT" $args --fix - <"$f"
    }
  fi
done < <(find testdata -type f \( -name '*.yaml' -o -name '*.yml' -o -name '*.json' \) \
  -not -path 'testdata/admission/*' -print0 | sort -z)

answers=$(cat "$OUT/webhook/answers.txt" "$OUT"/webhook/testdata/*.txt | grep -c '^== ')
outputs=$(find "$OUT/cli" "$OUT/files" -type f | wc -l)
echo "captured: $answers webhook answers, $outputs CLI outputs ($files testdata files)"

if [ "$MODE" = compare ]; then
  base_answers=$(cat "$BASE/webhook/answers.txt" "$BASE"/webhook/testdata/*.txt | grep -c '^== ')
  differ=0
  if ! cmp -s "$BASE/webhook/answers.txt" "$OUT/webhook/answers.txt"; then
    differ=1
    echo "webhook answers differ (baseline: $base_answers answers):"
    diff "$BASE/webhook/answers.txt" "$OUT/webhook/answers.txt" | head -40 || true
    # Every answer is a response line and an outcome line (`-- allowed=...`): count the former.
    echo "$(diff "$BASE/webhook/answers.txt" "$OUT/webhook/answers.txt" | grep -c '^> {' || true) corpus answers differ; their outcomes:"
    diff "$BASE/webhook/answers.txt" "$OUT/webhook/answers.txt" | grep '^[<>] -- ' | cut -c1-160 || true
  fi
  if ! diff -r -q "$BASE/cli" "$OUT/cli" >/dev/null; then
    differ=1
    diff -r "$BASE/cli" "$OUT/cli" | head -60 || true
  fi
  # Per-file outputs: every baseline output must be reproduced; new files (new cases) are only
  # counted.
  missing=0 changed=0 compared=0 new=0
  for sub in files webhook/testdata; do
  for b in "$BASE/$sub"/*; do
    n=$OUT/$sub/$(basename "$b")
    if [ ! -f "$n" ]; then
      missing=$((missing + 1)); echo "missing: $(basename "$b")"
    elif ! cmp -s "$b" "$n"; then
      changed=$((changed + 1)); echo "differs: $(basename "$b")"; diff "$b" "$n" | head -20 || true
    else
      compared=$((compared + 1))
    fi
  done
  new=$((new + $(comm -13 <(ls "$BASE/$sub") <(ls "$OUT/$sub") | wc -l)))
  done
  echo "compared: $base_answers baseline webhook answers ($answers now), $(find "$BASE/cli" -type f | wc -l) CLI corpus/dir outputs; $compared per-file outputs (CLI and webhook) identical, $changed differ, $missing missing, $new new (not in the baseline)"
  if [ "$differ" = 1 ] || [ "$changed" != 0 ] || [ "$missing" != 0 ]; then
    exit 1
  fi
  echo "no differences"
fi
