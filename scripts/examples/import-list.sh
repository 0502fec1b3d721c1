#!/usr/bin/env bash
# Adds every name in FILE (one per line; blank lines and lines starting with # are skipped).
# Names already in the list are reported and skipped; anything else stops the import.
#   scripts/examples/import-list.sh FILE
set -euo pipefail
countries="${COUNTRIES_BIN:-countries}"
file="${1:?usage: import-list.sh FILE}"

added=0
skipped=0
while IFS= read -r name || [[ -n "$name" ]]; do
    [[ -z "${name//[[:space:]]/}" || "$name" == \#* ]] && continue
    if output="$("$countries" add "$name" 2>&1)"; then
        added=$((added + 1))
    elif [[ "$output" == *"already in the list"* ]]; then
        skipped=$((skipped + 1))
    else
        echo "import-list: $output" >&2
        exit 1
    fi
done <"$file"
echo "import-list: $added added, $skipped already there"
