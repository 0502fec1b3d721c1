#!/usr/bin/env bash
# Toggles a random country every INTERVAL seconds (default 1), forever or COUNT times.
#   scripts/examples/toggle-random.sh [INTERVAL] [COUNT]
# Uses `countries` from PATH (or $COUNTRIES_BIN) and the endpoints in COUNTRIES_COMMAND.
set -euo pipefail
countries="${COUNTRIES_BIN:-countries}"
interval="${1:-1}"
remaining="${2:--1}"

while [[ "$remaining" -ne 0 ]]; do
    # Ask how many there are each time: other people may add or remove countries meanwhile.
    if total="$("$countries" count --retries 1 2>/dev/null)" && [[ "$total" -gt 0 ]]; then
        "$countries" toggle "$((RANDOM % total))" || true
    else
        echo "toggle-random: the service does not answer; trying again" >&2
    fi
    remaining=$((remaining - 1))
    sleep "$interval"
done
