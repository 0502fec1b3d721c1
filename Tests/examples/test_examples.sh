#!/usr/bin/env bash
# Runs every script in scripts/examples/ (and scripts/demo --detach, and scripts/demo --ha on a
# cluster of its own when etcd is installed) against a live service,
# as a user would, and checks what each one did.
#   Tests/examples/test_examples.sh PATH/TO/countries
# Starts its own service on ipc endpoints in a temp dir and stops it (by pid) however it ends.
set -uo pipefail
binary="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
root="$(cd "$(dirname "$0")/../.." && pwd)"
examples="$root/scripts/examples"
work="$(mktemp -d /tmp/countries-examples.XXXXXX)"
passed=0
failed=0
pids=()

cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
    sleep 0.2
    for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null; done
    tmux kill-session -t "countries-demo-test-$$" 2>/dev/null
    tmux kill-session -t "countries-demo-ha-test-$$" 2>/dev/null
    # The --ha demo's cluster, by the pids scripts/cluster recorded.
    for pidfile in "$work"/cluster/*.pid; do
        [[ -f "$pidfile" ]] && kill -9 "$(cat "$pidfile")" 2>/dev/null
    done
    rm -rf "$work"
}
trap cleanup EXIT

check() {
    local name="$1"
    shift
    if "$@"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAIL $name" >&2
    fi
}

export COUNTRIES_COMMAND="ipc://$work/command" COUNTRIES_EVENTS="ipc://$work/events" COUNTRIES_BIN="$binary"
"$binary" serve --in-memory --heartbeat-ms 100 --log-level error &
pids+=($!)
for _ in $(seq 1 100); do "$binary" count --timeout 200 --retries 1 >/dev/null 2>&1 && break; sleep 0.1; done

# on-change with the log handler runs throughout.
export COUNTRIES_LOG="$work/changes.log"
"$binary" on-change --heartbeat-ms 100 -- "$examples/log-change.sh" 2>"$work/on-change.err" &
pids+=($!)
sleep 0.5

# toggle-random: three toggles, three events.
seq_before="$("$binary" status --json | jq .seq)"
"$examples/toggle-random.sh" 0.05 3 >"$work/toggle.out"
check "toggle-random toggled three times" test "$("$binary" status --json | jq .seq)" -eq $((seq_before + 3))

# visit-all: every country visited, and running it again changes nothing.
"$examples/visit-all.sh" >"$work/visit.out"
check "visit-all visits every country" test "$("$binary" list --json | jq '[.countries[] | select(.visited | not)] | length')" -eq 0
seq_after_visit="$("$binary" status --json | jq .seq)"
"$examples/visit-all.sh" >/dev/null
check "visit-all is idempotent" test "$("$binary" status --json | jq .seq)" -eq "$seq_after_visit"

# import-list: adds new names, skips ones already there, ignores comments and blanks.
printf '# my list\nNarnia\n\nFrance\nAtlantis\n' >"$work/import.txt"
check "import-list reports" grep -q "2 added, 1 already there" <("$examples/import-list.sh" "$work/import.txt")
check "import-list added at the end" test "$("$binary" list --json | jq -r '.countries[-2:] | map(.name) | join(",")')" = "Narnia,Atlantis"

# export-csv: a header and one quoted row per country.
"$examples/export-csv.sh" >"$work/export.csv"
check "export-csv header" test "$(head -n 1 "$work/export.csv")" = "index,name,visited"
check "export-csv rows" test "$(($(wc -l <"$work/export.csv") - 1))" -eq "$("$binary" count)"
check "export-csv quotes names" grep -q '^2,"France",true$' "$work/export.csv"

# log-change, through on-change: one line per event, in seq order.
final_seq="$("$binary" status --json | jq .seq)"
for _ in $(seq 1 50); do
    [[ -f "$COUNTRIES_LOG" ]] && [[ "$(wc -l <"$COUNTRIES_LOG")" -ge $((final_seq - seq_before)) ]] && break
    sleep 0.1
done
check "log-change logged every event" test "$(wc -l <"$COUNTRIES_LOG")" -eq $((final_seq - seq_before))
check "log-change in seq order" bash -c "grep -o 'seq=[0-9]*' '$COUNTRIES_LOG' | cut -d= -f2 | sort -n -c"
check "log-change words" grep -q "Narnia was added" "$COUNTRIES_LOG"

# scripts/demo --detach with the built binary: the panes show a live table, then --stop.
export COUNTRIES_DEMO_SESSION="countries-demo-test-$$" COUNTRIES_DEMO_BINARY="$binary" COUNTRIES_DEMO_DIR="$work/demo"
export COUNTRIES_COMMAND="ipc://$work/demo-command" COUNTRIES_EVENTS="ipc://$work/demo-events"
if "$root/scripts/demo" --detach >"$work/demo.out" 2>&1; then
    live=0
    for _ in $(seq 1 100); do
        panes="$(tmux list-panes -t "$COUNTRIES_DEMO_SESSION" -F '#{pane_id}')"
        live=0
        for pane in $panes; do
            tmux capture-pane -p -t "$pane" | grep -q "live · seq" && live=$((live + 1))
        done
        [[ $live -ge 3 ]] && break
        sleep 0.2
    done
    check "demo: two watch panes and select are live" test "$live" -ge 3
    check "demo: five panes" test "$(tmux list-panes -t "$COUNTRIES_DEMO_SESSION" | wc -l)" -eq 5
    "$root/scripts/demo" --stop >/dev/null
    check "demo --stop closes the session" bash -c "! tmux has-session -t '$COUNTRIES_DEMO_SESSION' 2>/dev/null"
else
    cat "$work/demo.out" >&2
    check "demo --detach starts" false
fi

# scripts/demo --ha --detach: the cluster's views stay live while the chaos pane SIGKILLs and
# restarts a replica, then an etcd member (every second here); --stop takes the cluster too.
if [[ -x /usr/bin/etcd ]]; then
    export COUNTRIES_DEMO_SESSION="countries-demo-ha-test-$$" COUNTRIES_DEMO_DIR="$work/demo-ha"
    export COUNTRIES_CLUSTER_DIR="$work/cluster" COUNTRIES_CLUSTER_NET="127.$((100 + $$ % 100)).$((RANDOM % 250 + 1))"
    export COUNTRIES_DEMO_CHAOS_SECONDS=1
    unset COUNTRIES_COMMAND COUNTRIES_EVENTS
    if "$root/scripts/demo" --ha --detach >"$work/demo-ha.out" 2>&1; then
        chaos="$(tmux list-panes -t "$COUNTRIES_DEMO_SESSION" -F '#{pane_id}' | head -n 1)"
        # Wait until the chaos pane has killed a replica and an etcd member and started both again.
        for _ in $(seq 1 150); do
            tmux capture-pane -p -t "$chaos" | grep -q "start m1 again" && break
            sleep 0.2
        done
        check "demo --ha: a replica and an etcd member were killed" \
            bash -c "tmux capture-pane -p -t '$chaos' | grep -q 'kill -9 r1' && tmux capture-pane -p -t '$chaos' | grep -q 'kill -9 m1'"
        # After the kills the views are live, at a seq past the one they showed before.
        seq_now="$(COUNTRIES_COMMAND="$(grep COMMAND= "$COUNTRIES_CLUSTER_DIR/endpoints" | cut -d= -f2)" "$binary" status --json | jq .seq)"
        live=0
        for _ in $(seq 1 100); do
            live=0
            for pane in $(tmux list-panes -t "$COUNTRIES_DEMO_SESSION" -F '#{pane_id}'); do
                shown="$(tmux capture-pane -p -t "$pane" | grep -o 'live · seq [0-9]*' | grep -o '[0-9]*$' | head -n 1)"
                [[ -n "$shown" && "$shown" -gt "$seq_now" ]] && live=$((live + 1))
            done
            [[ $live -ge 3 ]] && break
            sleep 0.2
        done
        check "demo --ha: two watch panes and select are live after the kills (past seq $seq_now)" test "$live" -ge 3
        cluster_pids="$(cat "$COUNTRIES_CLUSTER_DIR"/*.pid)"
        "$root/scripts/demo" --stop >/dev/null
        check "demo --stop closes the --ha session" bash -c "! tmux has-session -t '$COUNTRIES_DEMO_SESSION' 2>/dev/null"
        # Bounded wait: on a busy machine the last member may take a moment to exit after down.
        for _ in $(seq 1 50); do
            kill -0 ${cluster_pids//$'\n'/ } 2>/dev/null || [[ -d "$COUNTRIES_CLUSTER_DIR" ]] || break
            sleep 0.2
        done
        for pid in $cluster_pids; do
            if kill -0 "$pid" 2>/dev/null; then
                echo "demo --stop: pid $pid ($(tr '\0' ' ' </proc/"$pid"/cmdline 2>/dev/null | cut -c1-100)) still runs" >&2
            fi
        done
        if [[ -d "$COUNTRIES_CLUSTER_DIR" ]]; then
            echo "demo --stop: $COUNTRIES_CLUSTER_DIR is still there: $(ls "$COUNTRIES_CLUSTER_DIR" | tr '\n' ' ')" >&2
        fi
        check "demo --stop stops the cluster" bash -c "! kill -0 ${cluster_pids//$'\n'/ } 2>/dev/null && [[ ! -d '$COUNTRIES_CLUSTER_DIR' ]]"
    else
        cat "$work/demo-ha.out" >&2
        check "demo --ha --detach starts" false
    fi
fi

echo "examples: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
