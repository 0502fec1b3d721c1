#!/usr/bin/env bash
# Measures docs/HA.md's failure table on a cluster from scripts/cluster: for each failure, the
# time from the fault to the next acknowledged toggle (a toggle sent after the fault), 3 times,
# and the median. Needs etcd, python3 (a TCP forwarder that cuts a replica off from etcd) and
# the built binary:
#   Tests/ha/failures.sh PATH/TO/countries [ROUNDS]
# Runs on a cluster of its own (a temp dir, loopback 127.0.99.x); stops it by pid however it ends.
set -euo pipefail
binary="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
rounds="${2:-3}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d /tmp/countries-ha-failures.XXXXXX)"
export COUNTRIES_CLUSTER_DIR="$work/cluster" COUNTRIES_CLUSTER_NET="${COUNTRIES_CLUSTER_NET:-127.0.99}"
export COUNTRIES_CLUSTER_BINARY="$binary"
net="$COUNTRIES_CLUSTER_NET"
cluster="$root/scripts/cluster"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill -CONT "$pid" 2>/dev/null; kill -9 "$pid" 2>/dev/null; done
    "$cluster" down >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

now() { date +%s%N; }
ms() { echo $((($1) / 1000000)); }
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# toggle_until_ack ENDPOINTS: toggles until one is acknowledged (exit 0), each try bounded;
# prints the last refusal it saw, if any, on stderr.
toggle_until_ack() {
    local deadline=$(($(now) + 30000000000))
    while (($(now) < deadline)); do
        "$binary" toggle France --command "$1" --timeout 300 --retries 2 >/dev/null 2>"$work/last.err" && return 0
        sleep 0.01
    done
    return 1
}
leader() {
    ETCDCTL_API=3 /usr/bin/etcdctl --endpoints "http://$net.11:2379,http://$net.12:2379,http://$net.13:2379" \
        --command-timeout 1s endpoint status -w fields 2>/dev/null | awk -F' : ' '
        /"MemberID"/ {m=$2} /"Leader"/ {l=$2} /"Endpoint"/ {if (l==m) print $2}' | tr -d '"' | head -n 1 |
        sed "s|http://$net.1\([1-3]\):2379|m\1|"
}
healthy() {
    ETCDCTL_API=3 /usr/bin/etcdctl --endpoints "http://$net.11:2379,http://$net.12:2379,http://$net.13:2379" \
        --command-timeout 1s endpoint health >/dev/null 2>&1
}
settle() { # every member healthy and both replicas answering
    for _ in $(seq 1 100); do healthy && break; sleep 0.2; done
    toggle_until_ack "tcp://$net.21:5555" && toggle_until_ack "tcp://$net.22:5555"
    sleep 1
}
report() { # NAME SAMPLES...
    local name="$1"
    shift
    echo "$name: median $(median "$@") ms (samples: $* ms)"
}

"$cluster" up >"$work/up.out"
both="tcp://$net.21:5555,tcp://$net.22:5555"
lists=0
"$binary" count --command "$both" --timeout 300 >/dev/null 2>&1 && lists=1
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

# 1. The etcd leader killed (SIGKILL), toggles through r1.
samples=()
for _ in $(seq 1 "$rounds"); do
    settle
    victim="$(leader)"
    t0=$(now)
    "$cluster" kill "$victim" >/dev/null
    toggle_until_ack "tcp://$net.21:5555"
    samples+=($(ms $(($(now) - t0))))
    "$cluster" start "$victim" >/dev/null
done
report "etcd leader killed, next acknowledged toggle" "${samples[@]}"

# 2. An etcd follower killed.
samples=()
for _ in $(seq 1 "$rounds"); do
    settle
    l="$(leader)"
    for victim in m1 m2 m3; do [[ "$victim" != "$l" ]] && break; done
    t0=$(now)
    "$cluster" kill "$victim" >/dev/null
    toggle_until_ack "tcp://$net.21:5555"
    samples+=($(ms $(($(now) - t0))))
    "$cluster" start "$victim" >/dev/null
done
report "etcd follower killed, next acknowledged toggle" "${samples[@]}"

# 3. The etcd majority lost: how long until a toggle is refused, with what; then one member
# back, and the time from its start to the next acknowledged toggle.
refusals=()
recoveries=()
for _ in $(seq 1 "$rounds"); do
    settle
    t0=$(now)
    "$cluster" kill m2 >/dev/null
    "$cluster" kill m3 >/dev/null
    sleep 0.2
    refused=""
    for _ in $(seq 1 100); do
        if ! "$binary" toggle France --command "tcp://$net.21:5555" --timeout 3000 --retries 1 >/dev/null 2>"$work/refusal.err"; then
            grep -q "no quorum" "$work/refusal.err" && { refused=$(ms $(($(now) - t0))); break; }
        fi
    done
    refusals+=("${refused:-none}")
    refusal_text="$(head -n 1 "$work/refusal.err")"
    t1=$(now)
    "$cluster" start m2 >/dev/null
    toggle_until_ack "tcp://$net.21:5555"
    recoveries+=($(ms $(($(now) - t1))))
    "$cluster" start m3 >/dev/null
done
report "etcd majority lost, until toggles are refused" "${refusals[@]}"
echo "  refusal: $refusal_text"
report "etcd majority back (one member started), next acknowledged toggle" "${recoveries[@]}"

# 4. A replica cut off from etcd: a third replica r3 reaches etcd only through a TCP forwarder,
# which is stopped (SIGSTOP: connections hang, as behind a partition), then continued.
cat >"$work/forward.py" <<'PY'
import socket, sys, threading
listen_host, target_host = sys.argv[1], sys.argv[2]
def pipe(a, b):
    try:
        while (data := a.recv(65536)):
            b.sendall(data)
    except OSError:
        pass
    finally:
        for s in (a, b):
            try: s.shutdown(socket.SHUT_RDWR)
            except OSError: pass
server = socket.socket(); server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind((listen_host, 2379)); server.listen(64)
while True:
    client, _ = server.accept()
    upstream = socket.create_connection((target_host, 2379))
    for a, b in ((client, upstream), (upstream, client)):
        threading.Thread(target=pipe, args=(a, b), daemon=True).start()
PY
forwarders=()
for i in 1 2 3; do
    python3 "$work/forward.py" "$net.3$i" "$net.1$i" &
    forwarders+=($!)
    pids+=($!)
done
"$binary" serve --etcd "http://$net.31:2379,http://$net.32:2379,http://$net.33:2379" \
    --command "tcp://$net.23:5555" --events "tcp://$net.23:5556" --replica-name r3 --log-level warning \
    2>"$work/r3.log" &
pids+=($!)
cutoffs=()
rejoins=()
for _ in $(seq 1 "$rounds"); do
    settle
    toggle_until_ack "tcp://$net.23:5555"
    t0=$(now)
    kill -STOP "${forwarders[@]}"
    cut=""
    for _ in $(seq 1 100); do
        if ! "$binary" toggle France --command "tcp://$net.23:5555" --timeout 5000 --retries 1 >/dev/null 2>"$work/cut.err"; then
            grep -q "no quorum" "$work/cut.err" && { cut=$(ms $(($(now) - t0))); break; }
        fi
    done
    cutoffs+=("${cut:-none}")
    # Meanwhile the other replicas go on.
    toggle_until_ack "tcp://$net.22:5555"
    t1=$(now)
    kill -CONT "${forwarders[@]}"
    toggle_until_ack "tcp://$net.23:5555"
    rejoins+=($(ms $(($(now) - t1))))
done
report "replica cut off from etcd, until it refuses changes (no quorum)" "${cutoffs[@]}"
report "replica reconnected, its next acknowledged toggle" "${rejoins[@]}"

if ((lists)); then
    # 5. A replica killed, the client on both (--command r1,r2); 6. a client cut off from one
    # replica (SIGSTOP: it neither answers nor closes, as behind a partition).
    for fault in kill stop; do
        samples=()
        for _ in $(seq 1 "$rounds"); do
            settle
            "$binary" count --command "$both" >/dev/null
            pid="$(cat "$COUNTRIES_CLUSTER_DIR/r1.pid")"
            t0=$(now)
            if [[ $fault == kill ]]; then kill -KILL "$pid"; else kill -STOP "$pid"; fi
            toggle_until_ack "$both"
            samples+=($(ms $(($(now) - t0))))
            if [[ $fault == kill ]]; then "$cluster" start r1 >/dev/null; else kill -CONT "$pid"; fi
        done
        label="killed (SIGKILL)"
        [[ $fault == stop ]] && label="cut off from the client (SIGSTOP)"
        report "replica r1 $label, client on r1,r2: next acknowledged toggle" "${samples[@]}"
    done
else
    echo "this binary takes one --command endpoint: the failover rows need client lists"
fi
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
