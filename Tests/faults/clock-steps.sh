#!/usr/bin/env bash
# What setting the wall clock does to a running service (docs/PROTOCOL.md, "Retries are safe";
# docs/HA.md, "Commits"). It SETS THIS MACHINE'S CLOCK, forward then back by the same step
# (root, CAP_SYS_TIME): run it where nothing else is timing anything.
#   Tests/faults/clock-steps.sh PATH/TO/countries
# 1. A single-node store's ids: a toggle with an id, 20,000 toggles with ids of their own after
#    it (Tests/profile/load.c, built here), the clock set 11 minutes forward, the toggle sent
#    again with its id. Remembered: the same reply. Forgotten: a second toggle, another seq.
# 2. The replicas' leases: a cluster from scripts/cluster (3 etcd members, 2 replicas), the clock
#    set 5 s back (more than a lease's 2 s), 8 s later the writer keys again. Renewed: the same
#    keys (each names its lease). Not renewed: the leases ended and the replicas took new ones.
# Stops what it started by pid, and steps the clock back, however it ends.
set -euo pipefail
binary="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
root="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d /tmp/countries-clock-steps.XXXXXX)"
export COUNTRIES_CLUSTER_DIR="$work/cluster" COUNTRIES_CLUSTER_NET="${COUNTRIES_CLUSTER_NET:-127.0.98}"
export COUNTRIES_CLUSTER_BINARY="$binary"
pids=()
stepped=0
step() {
    python3 -c "import time; time.clock_settime(time.CLOCK_REALTIME, time.clock_gettime(time.CLOCK_REALTIME) + ($1))"
    stepped=$((stepped + $1))
}
cleanup() {
    ((stepped == 0)) || step $((-stepped))
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    "$root/scripts/cluster" down >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
cc -O2 -o "$work/load" "$root/Tests/profile/load.c" -lzmq -lpthread

echo "== a single-node store's ids, the clock set 11 minutes forward"
"$binary" serve --in-memory --command "ipc://$work/c" --events "ipc://$work/e" --log-level warning &
pids+=($!)
for _ in $(seq 50); do "$binary" status --command "ipc://$work/c" --timeout 200 >/dev/null 2>&1 && break; done
first="$("$binary" toggle 0 --id clock-step-1 --json --command "ipc://$work/c")"
"$work/load" "ipc://$work/c" 1 120 20000 >/dev/null
step 660
again="$("$binary" toggle 0 --id clock-step-1 --json --command "ipc://$work/c")"
step -660
echo "first: $first"
echo "again: $again"
if [[ "$first" == "$again" ]]; then echo "ids: remembered"; else echo "ids: FORGOTTEN (applied twice)"; fi

echo "== the replicas' leases, the clock set 5 s back"
"$root/scripts/cluster" up >/dev/null
net="$COUNTRIES_CLUSTER_NET"
keys() {
    ETCDCTL_API=3 etcdctl --endpoints "http://$net.11:2379" get /countries/writer/ --prefix --keys-only |
        grep . | sort | tr '\n' ' '
}
sleep 2
before="$(keys)"
step -5
sleep 8
after="$(keys)"
step 5
echo "writer keys before: $before"
echo "writer keys after:  $after"
if [[ "$before" == "$after" ]]; then echo "leases: renewed"; else echo "leases: LOST (new leases)"; fi
