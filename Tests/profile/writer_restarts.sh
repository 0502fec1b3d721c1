#!/usr/bin/env bash
# Restarts the writer of a scripts/cluster cluster under load, again and again, and says whether
# any of its processes took the store for gone back (docs/BENCHMARKS.md, "Stop 28"): SIGKILL,
# start, one toggle to see it answer, then Tests/profile/load.c with 16 or 1 clients (in turn)
# for a few seconds. With two binaries, it also measures them against each other on the same
# cluster, the writer's binary swapped in turn.
#
#   scripts/cluster up && scripts/cluster kill r2
#   Tests/profile/writer_restarts.sh [--rounds N] [--seconds S] BINARY [OTHER-BINARY]
#   scripts/cluster down
#
# Test tooling: needs cc and libzmq's headers (scripts/bootstrap installs both).
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=12
seconds=4
while [[ "${1:-}" == --* ]]; do
    case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    *) echo "writer_restarts.sh: unknown option $1" >&2; exit 64 ;;
    esac
done
(($# >= 1 && $# <= 2)) || { sed -n '2,11p' "$0" >&2; exit 64; }
state="${COUNTRIES_CLUSTER_DIR:-/tmp/countries-cluster-$(id -u)}"
[[ -f "$state/m1.pid" ]] || { echo "writer_restarts.sh: no cluster (scripts/cluster up first)" >&2; exit 69; }
load=$(mktemp -d)/load
trap 'rm -rf "$(dirname "$load")"; scripts/cluster kill r1 >/dev/null 2>&1 || true' EXIT
cc -O2 -o "$load" Tests/profile/load.c -lzmq -lpthread
log="$state/r1.log"
first=$(($(wc -l <"$log" 2>/dev/null || echo 0) + 1))
for ((round = 1; round <= rounds; round++)); do
    clients=$((round % 2 ? 16 : 1))
    for binary in "$@"; do
        scripts/cluster kill r1 >/dev/null 2>&1 || true
        COUNTRIES_CLUSTER_BINARY="$binary" scripts/cluster start r1 >/dev/null
        for _ in $(seq 50); do
            "$binary" toggle 1 --command tcp://127.0.0.21:5555 --timeout 500 --retries 1 >/dev/null 2>&1 && break
            sleep 0.2
        done
        echo "round $round, $binary: $("$load" tcp://127.0.0.21:5555 "$clients" "$seconds")"
    done
done
scripts/cluster kill r1 >/dev/null
replaced=$(tail -n +"$first" "$log" | grep -c "error: the store's seq went back" || true)
stale=$(tail -n +"$first" "$log" | grep -c "ignored as stale" || true)
echo "restarts: $((rounds * $#)); store replaced: $replaced; stale reads ignored: $stale"
