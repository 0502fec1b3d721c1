#!/usr/bin/env bash
# Marks every country as visited (a `set` per country, so re-running it changes nothing).
#   scripts/examples/visit-all.sh
set -euo pipefail
countries="${COUNTRIES_BIN:-countries}"

total="$("$countries" count)"
for ((index = 0; index < total; index++)); do
    # `set` is idempotent: a country already visited gets no event.
    "$countries" set "$index" --visited true >/dev/null
done
echo "visit-all: $total countries visited"
