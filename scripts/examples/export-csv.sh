#!/usr/bin/env bash
# Prints the list as CSV (index,name,visited), e.g. scripts/examples/export-csv.sh > countries.csv
# Needs jq.
set -euo pipefail
countries="${COUNTRIES_BIN:-countries}"

echo "index,name,visited"
# @csv quotes names, so commas and quotes in them survive.
"$countries" list --json | jq -r '.countries[] | [.index, .name, .visited] | @csv'
