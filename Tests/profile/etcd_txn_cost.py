#!/usr/bin/env python3
"""What a replicated commit costs etcd, by the parts of its transaction (docs/BENCHMARKS.md,
"Stop 27"). One client sends, one at a time for SECONDS each, transactions shaped as a
replica's commit of N changes through etcd's JSON gateway: the seq compare and put, and per
change its event; with ids `compared`, also the request id's two create-revision compares
(current and previous generation), their failure reads and the id's put; with ids `compared-unread`, the same without the failure
reads (a refused commit would read the ids it needs afterwards); with ids `put`, the
put alone (the ids checked from the writer's memory instead); with `watched`, while two watch
streams follow the events (as two replicas' event tails do); with ids `one-key`, the
commit's events and ids all in one value under one key (a log of batches instead of a key per
event and per id; the watchers then follow that key's prefix); with ids `idlog`, the commit as
stop 39 lands it: the events keyed, the batch's ids in one key of the id log, and the
generation compared and put; with `idlog-ungenerated`, the same without the generation; with
`idlog-batched`, that with the commit's events in one key, `events/<first seq>`, one event a
line; with `idlog-lean` (16 a commit), that with the id log's entry holding each id and its
request but not its reply (what a commit's bytes cost etcd: the replies repeat the events);
with `idlog-storeless` (16 a commit), `idlog-batched` with no store id in the events or the
replies; with `idlog-fenced`, `idlog-batched` without the seq key, fenced instead by the newest
entry's mod revision and no entry at the next seq (docs/BENCHMARKS.md, "Stop 43"); with `floor`, the bench's etcd floor: the seq compared and put, nothing else, and no
watcher. Events are compact JSON, as the service writes them (before stop 41, with the
spaces of Python's default). Without `watched` (the `-unwatched` rows), no watch stream
follows the events. The transactions and watches all go through the JSON gateway, as the
replicas' did until stops 44 and 45 moved them to gRPC: the shapes compare with each other, and
the absolute costs are the gateway's. Prints changes per second and the CPU all etcd processes on this machine
spent per change (from /proc), so run it on a cluster that nothing else uses (scripts/cluster
up, then stop the replicas: scripts/cluster kill r1 r2).

    python3 Tests/profile/etcd_txn_cost.py [--endpoint http://127.0.0.11:2379] [--seconds 3]
        [--rounds R] [--ids compared,compared-unread,put,no,one-key,idlog,idlog-ungenerated,idlog-batched,
        idlog-lean,idlog-storeless,idlog-fenced,floor]

Test tooling only: the standard library, no package.
"""
import argparse
import base64
import http.client
import json
import os
import subprocess
import time
import urllib.parse


def b64(text):
    return base64.b64encode(text.encode()).decode()


def etcd_cpu_seconds():
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/comm") as comm:
                if comm.read().strip() != "etcd":
                    continue
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
        except (FileNotFoundError, ProcessLookupError):
            continue
    return total / ticks


def commit_body(prefix, seq, changes, ids, run, previous=None):
    compare = [{"key": b64(prefix + "seq"), "target": "VALUE", "result": "EQUAL", "value": b64(str(seq))}]
    success = [{"request_put": {"key": b64(prefix + "seq"), "value": b64(str(seq + changes))}}]
    if ids == "idlog-fenced":
        # No seq key: the newest entry unchanged since it was written, and none after it yet.
        compare = [{"key": b64(prefix + "events/%020d" % (seq + 1)), "target": "CREATE", "result": "EQUAL",
                    "create_revision": "0"}]
        if previous:
            key, revision = previous
            compare.append({"key": b64(key), "target": "MOD", "result": "EQUAL", "mod_revision": str(revision)})
        success = []
    failure = [{"request_range": {"key": b64(prefix + "seq")}}]
    lines = []
    events = []
    for offset in range(1, changes + 1) if ids != "floor" else ():
        fields = {"country": {"index": 0, "name": "United States", "visited": True},
                  "seq": seq + offset, "store": "6f4fcf0374f31a4f9b9aa89de63a376b",
                  "topic": "country.toggled"}
        if ids == "idlog-storeless":
            del fields["store"]
        event = json.dumps(fields, separators=(",", ":"))
        request_id = f"id-{run}-{seq + offset}-0123456789abcdef0123"
        if ids == "one-key":
            lines += [event, request_id, '{"index":0,"op":"toggle"}']
            continue
        if ids.startswith("idlog"):
            lines += [request_id, '{"index":0,"op":"toggle"}'] + ([] if ids == "idlog-lean" else [event])
        if ids in ("idlog-batched", "idlog-lean", "idlog-storeless", "idlog-fenced"):
            events.append(event)
            continue
        success.append({"request_put": {"key": b64(prefix + "events/%020d" % (seq + offset)), "value": b64(event)}})
        if ids != "no" and not ids.startswith("idlog"):
            for generation in ("ids/1/", "ids/0/") if ids.startswith("compared") else ():
                key = b64(prefix + generation + request_id)
                compare.append({"key": key, "target": "CREATE", "result": "EQUAL", "create_revision": "0"})
                if ids == "compared":
                    failure.append({"request_range": {"key": key}})
            success.append({"request_put": {"key": b64(prefix + "ids/1/" + request_id),
                                            "value": b64('{"index":0,"op":"toggle"}\n' + event)}})
    if lines and ids == "one-key":
        success.append({"request_put": {"key": b64(prefix + "events/%020d" % (seq + 1)), "value": b64("\n".join(lines))}})
    elif lines:
        if events:
            success.append({"request_put": {"key": b64(prefix + "events/%020d" % (seq + 1)),
                                            "value": b64("\n".join(events) + "\n")}})
        success.append({"request_put": {"key": b64(prefix + "idlog/%020d" % (seq + 1)), "value": b64("1\n" + "\n".join(lines) + "\n")}})
        if ids == "idlog":
            # Its value as a replica sees it: the compare matches the last commit's put.
            generation = b64(f"1 1700000000000 {seq} {seq * 90} 1 0")
            compare.append({"key": b64(prefix + "ids-generation"), "target": "VALUE", "result": "EQUAL", "value": generation})
            success.append({"request_put": {"key": b64(prefix + "ids-generation"),
                                            "value": b64(f"1 1700000000000 {seq + changes} {(seq + changes) * 90} 1 0")}})
    return json.dumps({"compare": compare, "success": success, "failure": failure})


def measure(endpoint, seconds, changes, ids, watched):
    url = urllib.parse.urlparse(endpoint)
    prefix = "/etcd-txn-cost-%s/" % os.urandom(4).hex()
    watchers = []
    if watched:
        request = json.dumps({"create_request": {"key": b64(prefix + "events/"), "range_end": b64(prefix + "events0")}})
        for _ in range(2):
            watchers.append(subprocess.Popen(["curl", "-sN", "-X", "POST", endpoint + "/v3/watch", "-d", request],
                                             stdout=subprocess.DEVNULL))
        time.sleep(0.3)
    connection = http.client.HTTPConnection(url.hostname, url.port)

    def txn(body):
        connection.request("POST", "/v3/kv/txn", body, {"Content-Type": "application/json"})
        return json.loads(connection.getresponse().read())

    try:
        txn(json.dumps({"compare": [], "success": [{"request_put": {"key": b64(prefix + "seq"), "value": b64("0")}},
                                                   {"request_put": {"key": b64(prefix + "ids-generation"),
                                                                    "value": b64("1 1700000000000 0 0 1 0")}}],
                        "failure": []}))
        seq = 0
        previous = None
        cpu = etcd_cpu_seconds()
        started = time.monotonic()
        while time.monotonic() - started < seconds:
            reply = txn(commit_body(prefix, seq, changes, ids, prefix.strip("/"), previous))
            if not reply.get("succeeded"):
                raise SystemExit(f"a commit's compare failed: {reply}")
            previous = (prefix + "events/%020d" % (seq + 1), int(reply["header"]["revision"]))
            seq += changes
        elapsed = time.monotonic() - started
        cpu = etcd_cpu_seconds() - cpu
    finally:
        for watcher in watchers:
            watcher.terminate()
            watcher.wait()
        connection.close()
    return seq / elapsed, cpu / seq * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--endpoint", default="http://127.0.0.11:2379")
    parser.add_argument("--seconds", type=float, default=3)
    parser.add_argument("--rounds", type=int, default=1, help="the whole table this many times")
    parser.add_argument("--ids", help="only the shapes with these ids (comma-separated)")
    arguments = parser.parse_args()
    shapes = [(1, "compared", True), (1, "compared-unread", True), (1, "put", True), (1, "no", True),
              (8, "compared", True), (8, "compared-unread", True), (8, "put", True), (8, "no", True),
              (16, "compared", True), (16, "compared-unread", True), (16, "put", True), (16, "no", True),
              (1, "one-key", True), (8, "one-key", True), (16, "one-key", True),
              (1, "idlog", True), (8, "idlog", True), (16, "idlog", True),
              (1, "idlog-ungenerated", True), (8, "idlog-ungenerated", True), (16, "idlog-ungenerated", True),
              (1, "idlog-batched", True), (8, "idlog-batched", True), (16, "idlog-batched", True),
              (1, "idlog-batched", False), (1, "floor", False),
              (16, "idlog-lean", True), (16, "idlog-storeless", True),
              (1, "idlog-fenced", True), (16, "idlog-fenced", True)]
    wanted = arguments.ids.split(",") if arguments.ids else None
    unknown = sorted(set(wanted or []) - {ids for _, ids, _ in shapes})
    if unknown:
        parser.error(f"--ids does not know {', '.join(unknown)}")
    print("| changes per commit | ids | watched | changes/s | etcd CPU per change |")
    print("| ---: | --- | --- | ---: | ---: |")
    for _ in range(arguments.rounds):
        for changes, ids, watched in shapes:
            if wanted and ids not in wanted:
                continue
            rate, cpu = measure(arguments.endpoint, arguments.seconds, changes, ids, watched)
            print(f"| {changes} | {ids} | {'yes' if watched else 'no'} | {rate:,.0f} | {cpu:,.0f} µs |", flush=True)


if __name__ == "__main__":
    main()
