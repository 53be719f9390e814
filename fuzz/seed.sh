#!/usr/bin/env bash
# Seed the fuzz corpora from the repository's test data (corpus/ is gitignored).
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p corpus/yaml_load corpus/image_ref corpus/admission_review
find ../testdata -type f \( -name '*.yaml' -o -name '*.yml' -o -name '*.json' \) -size -64k \
  -exec cp -t corpus/yaml_load {} + 2>/dev/null || true
for f in ../testdata/yaml/* ../testdata/examples/* ../testdata/cli/*.yaml; do
  [ -f "$f" ] && cp "$f" "corpus/yaml_load/$(echo "$f" | tr / _)"
done
# image references: every `image:` value found in the test data, one per file
grep -rhoE 'image: *"?[^" ]+' ../testdata 2>/dev/null | sed -E 's/image: *"?//' | sort -u |
  while read -r ref; do printf '%s' "$ref" > "corpus/image_ref/$(printf '%s' "$ref" | md5sum | cut -c1-16)"; done
ADM=../../shared/testdata/admission
if [ -d "$ADM" ]; then
  for f in "$ADM"/[0-9]*.json; do case "$f" in *.meta.json) ;; *) cp "$f" corpus/admission_review/ ;; esac; done
fi
echo "seeded: yaml_load $(ls corpus/yaml_load | wc -l), image_ref $(ls corpus/image_ref | wc -l), admission_review $(ls corpus/admission_review | wc -l)"
