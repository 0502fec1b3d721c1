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
    tmux kill-session -t "countries-demo-outer-$$" 2>/dev/null
    tmux kill-session -t "countries-demo-nested-$$" 2>/dev/null
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

# scripts/demo with 127.0.0.1:8080 taken by another program (a python listener; or by whatever
# holds it already): the demo serves its web view on a port it picked, and prints that one.
python3 -c 'import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 8080)); s.listen(); time.sleep(600)' 2>/dev/null &
listener=$!
pids+=("$listener")
for _ in $(seq 1 50); do (exec 3<>/dev/tcp/127.0.0.1/8080) 2>/dev/null && break; sleep 0.1; done
export COUNTRIES_DEMO_SESSION="countries-demo-test-$$"
if "$root/scripts/demo" --detach >"$work/demo-port.out" 2>&1; then
    url="$(grep -o 'in a browser: http://[^ ]*' "$work/demo-port.out" | cut -d' ' -f4)"
    check "demo: with 8080 taken it prints another port ($url)" bash -c "[[ '$url' =~ ^http://127.0.0.1:[0-9]+/\$ && '$url' != http://127.0.0.1:8080/ ]]"
    check "demo: the printed URL serves the demo's table" bash -c "curl -sf --max-time 5 '$url' | grep -qi countries"
    "$root/scripts/demo" --stop >/dev/null
else
    cat "$work/demo-port.out" >&2
    check "demo --detach starts with 8080 taken" false
fi
# COUNTRIES_DEMO_WEB_PORT names a taken port: the demo fails saying so, and starts nothing.
COUNTRIES_DEMO_WEB_PORT=8080 "$root/scripts/demo" --detach >"$work/demo-port.out" 2>&1
check "demo: a taken COUNTRIES_DEMO_WEB_PORT is refused (exit 69)" test $? -eq 69
check "demo: the refusal names the port" grep -q "COUNTRIES_DEMO_WEB_PORT=8080 is taken" "$work/demo-port.out"
check "demo: nothing left after the refusal" bash -c "! tmux has-session -t '$COUNTRIES_DEMO_SESSION' 2>/dev/null"
kill "$listener" 2>/dev/null

# scripts/tmux-new-session (the demo's and these tests'): a server on its way out, which makes
# `tmux new-session` fail with "server exited unexpectedly", is tried again; any other failure
# is not. A stand-in tmux fails as told, then succeeds, counting its calls.
mkdir -p "$work/fake-tmux"
cat >"$work/fake-tmux/tmux" <<'FAKE'
#!/usr/bin/env bash
calls=$(($(cat "$FAKE_TMUX_DIR/calls" 2>/dev/null || echo 0) + 1))
echo "$calls" >"$FAKE_TMUX_DIR/calls"
if ((calls <= FAKE_TMUX_FAILURES)); then echo "$FAKE_TMUX_MESSAGE" >&2; exit 1; fi
echo "%7"
FAKE
chmod +x "$work/fake-tmux/tmux"
fake_new_session() {  # $1: failures before success, $2: their message; prints the exit code and the calls
    rm -f "$work/fake-tmux/calls"
    PATH="$work/fake-tmux:$PATH" FAKE_TMUX_DIR="$work/fake-tmux" FAKE_TMUX_FAILURES="$1" FAKE_TMUX_MESSAGE="$2" \
        "$root/scripts/tmux-new-session" -d -P -F '#{pane_id}' >"$work/fake-tmux/out" 2>"$work/fake-tmux/err"
    echo "$? $(cat "$work/fake-tmux/calls")"
}
check "tmux-new-session: tried again while the server exits, then prints the pane" \
    test "$(fake_new_session 2 'server exited unexpectedly') $(cat "$work/fake-tmux/out")" = "0 3 %7"
check "tmux-new-session: another failure is not tried again" \
    test "$(fake_new_session 1 'duplicate session: demo')" = "1 1"
check "tmux-new-session: and its message is shown" grep -qx "duplicate session: demo" "$work/fake-tmux/err"
check "tmux-new-session: a server that keeps exiting fails after five tries" \
    test "$(fake_new_session 9 'server exited unexpectedly')" = "1 5"

# scripts/demo from inside tmux: it moves the client to the demo's session (no nested client),
# and, with no client to move (a detached session), fails and stops everything it started.
demo_inside() {  # $1: the outer session; runs scripts/demo in it, its exit code in $work/$1.status
    "$root/scripts/tmux-new-session" -d -s "$1" -x 160 -y 50 \
        "env COUNTRIES_DEMO_SESSION=$COUNTRIES_DEMO_SESSION COUNTRIES_DEMO_BINARY=$binary COUNTRIES_DEMO_DIR=$COUNTRIES_DEMO_DIR COUNTRIES_COMMAND=$COUNTRIES_COMMAND COUNTRIES_EVENTS=$COUNTRIES_EVENTS bash -c 'while [ ! -e $work/$1.go ]; do sleep 0.1; done; $root/scripts/demo >$work/$1.out 2>&1; echo \$? >$work/$1.status; sleep 600'"
}
demo_status() {  # $1: the outer session; waits (bounded) for its demo to end
    for _ in $(seq 1 150); do [[ -s "$work/$1.status" ]] && break; sleep 0.2; done
    cat "$work/$1.status" 2>/dev/null
}
outer="countries-demo-outer-$$"
demo_inside "$outer"
# A client attached to the outer session, in a terminal of its own (script(1) gives it a pty).
script -qfc "tmux attach -t $outer" /dev/null >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 1 50); do [[ -n "$(tmux list-clients -t "$outer" 2>/dev/null)" ]] && break; sleep 0.1; done
touch "$work/$outer.go"
check "demo inside tmux exits 0" test "$(demo_status "$outer")" = 0
[[ "$(cat "$work/$outer.status" 2>/dev/null)" == 0 ]] || cat "$work/$outer.out" >&2
check "demo inside tmux moved the client to its session" bash -c "tmux list-clients -F '#{client_session}' | grep -qx '$COUNTRIES_DEMO_SESSION'"
live=0
for _ in $(seq 1 100); do
    for pane in $(tmux list-panes -t "$COUNTRIES_DEMO_SESSION:demo" -F '#{pane_id}'); do
        tmux capture-pane -p -t "$pane" | grep -q "live · seq" && live=1
    done
    ((live)) && break
    sleep 0.2
done
check "demo inside tmux: the views are live" test "$live" -eq 1
"$root/scripts/demo" --stop >/dev/null
tmux kill-session -t "$outer" 2>/dev/null
nested="countries-demo-nested-$$"
demo_inside "$nested"
touch "$work/$nested.go"
check "demo inside tmux with no client to move fails (exit 69)" test "$(demo_status "$nested")" = 69
check "demo: the failure says what it stopped" grep -q "stopping what it started" "$work/$nested.out"
check "demo: nothing left after the failure" bash -c "! tmux has-session -t '$COUNTRIES_DEMO_SESSION' 2>/dev/null && ! '$binary' count --timeout 300 --retries 1 >/dev/null 2>&1"
tmux kill-session -t "$nested" 2>/dev/null

# --ha --stop stops the --ha demo (here, with nothing running, says so and exits 0).
"$root/scripts/demo" --ha --stop >"$work/demo-ha-stop.out" 2>&1
check "demo --ha --stop is accepted" test $? -eq 0
check "demo --ha --stop says nothing runs" grep -q "demo: not running" "$work/demo-ha-stop.out"

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
        "$root/scripts/demo" --ha --stop >/dev/null
        check "demo --ha --stop closes the --ha session" bash -c "! tmux has-session -t '$COUNTRIES_DEMO_SESSION' 2>/dev/null"
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
        check "demo --ha --stop stops the cluster" bash -c "! kill -0 ${cluster_pids//$'\n'/ } 2>/dev/null && [[ ! -d '$COUNTRIES_CLUSTER_DIR' ]]"
    else
        cat "$work/demo-ha.out" >&2
        check "demo --ha --detach starts" false
    fi
fi

echo "examples: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
