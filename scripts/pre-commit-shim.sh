#!/usr/bin/env bash
# Writes the pre-commit shim repository (github.com/winlint/winlint-pre-commit, the default hook:
# language: python on the winlint wheel, as astral-sh/ruff-pre-commit is for ruff) from
# integrations/pre-commit, stamped with one version, and commits it as a release of its own.
#
#   scripts/pre-commit-shim.sh DIR [VERSION]
#
# VERSION defaults to the crate's (Cargo.toml): the shim of a release pins that release's wheel.
# DIR is a clone of the shim repository (the release workflow pushes it afterwards) or a new
# directory (git init; .ci/pre-commit-check runs pre-commit against it). The three files are
# replaced, committed as "winlint <version>" and tagged v<version>; run again with the same
# version it commits nothing and keeps the tag. A tag v<version> that points at other files fails.
# Prints the commit last.
#
# Why a repository of its own: pre-commit installs a python hook's repository with pip, and this
# repository's pyproject.toml builds winlint from source with cargo.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:?usage: pre-commit-shim.sh DIR [VERSION]}
version=${2:-$(sed -n 's/^version = "\(.*\)"$/\1/p' "$repo/Cargo.toml" | head -n 1)}
# A release version: what both a PyPI pin and a git tag can carry.
if ! [[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+([.-]?(a|b|rc)[0-9]+)?$ ]]; then
  echo "pre-commit-shim: '$version' is not a release version (1.2.3, 1.2.3rc1)" >&2
  exit 2
fi
src="$repo/integrations/pre-commit"
files=(.pre-commit-hooks.yaml pyproject.toml README.md)

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
[ -e "$dir/.git" ] || git -C "$dir" init -q -b main
for f in "${files[@]}"; do
  sed -e "s/\"winlint==[^\"]*\"/\"winlint==$version\"/" \
    -e "s/^version = \"[^\"]*\"$/version = \"$version\"/" \
    -e "s/^\(  rev: \)v[0-9][^ ]*$/\1v$version/" \
    "$src/$f" > "$dir/$f"
done
# Every place that names the version was stamped (a source edit cannot silently drop one).
grep -qx "dependencies = \[\"winlint==$version\"\]" "$dir/pyproject.toml"
grep -qx "version = \"$version\"" "$dir/pyproject.toml"
grep -qx "  rev: v$version" "$dir/README.md"

git=(git -C "$dir")
# An identity only where none is configured (GIT_AUTHOR_*/GIT_COMMITTER_* still win).
"${git[@]}" config user.email > /dev/null || git=("${git[@]}" -c user.name=winlint-release -c user.email=release@winlint.invalid)
"${git[@]}" add -- "${files[@]}"
if ! "${git[@]}" diff --cached --quiet 2> /dev/null || ! "${git[@]}" rev-parse -q --verify HEAD > /dev/null; then
  "${git[@]}" commit -q -m "winlint $version"
fi
if tagged=$("${git[@]}" rev-parse -q --verify "refs/tags/v$version^{commit}"); then
  if [ -n "$("${git[@]}" diff "$tagged" HEAD -- "${files[@]}")" ]; then
    echo "pre-commit-shim: v$version is already tagged at $tagged with other files" >&2
    exit 1
  fi
else
  "${git[@]}" tag -a "v$version" -m "winlint $version"
fi
"${git[@]}" rev-parse HEAD
