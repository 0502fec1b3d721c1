#!/usr/bin/env python3
"""Interop: drive the built `countries serve` from plain pyzmq REQ and SUB sockets.

Proves protocol v1 is language-neutral: nothing here uses the project's Swift code, only
the contract in docs/PROTOCOL.md. Usage: test_interop.py PATH/TO/countries
Starts its own service on ipc endpoints in a temp dir and stops it (by pid) however it ends.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid

import zmq

TIMEOUT_MS = 5000
results = {"passed": 0, "failed": 0}


def check(name, condition, detail=""):
    if condition:
        results["passed"] += 1
    else:
        results["failed"] += 1
        print(f"FAIL {name} {detail}", file=sys.stderr)


def request(ctx, endpoint, payload, raw=None):
    sock = ctx.socket(zmq.REQ)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(endpoint)
    try:
        sock.send(raw if raw is not None else json.dumps(payload).encode())
        if not sock.poll(TIMEOUT_MS):
            raise RuntimeError(f"no reply to {payload!r}")
        return json.loads(sock.recv())
    finally:
        sock.close()


def main():
    binary = sys.argv[1]
    workdir = tempfile.mkdtemp(prefix="countries-interop-")
    command = f"ipc://{workdir}/command"
    events = f"ipc://{workdir}/events"
    service = subprocess.Popen(
        [binary, "serve", "--command", command, "--events", events,
         "--db", os.path.join(workdir, "countries.db"), "--heartbeat-ms", "200", "--log-level", "error"])
    ctx = zmq.Context()
    try:
        deadline = time.time() + 20
        while True:
            try:
                listing = request(ctx, command, {"op": "list"})
                break
            except RuntimeError:
                if time.time() > deadline:
                    raise
        check("list ok", listing["ok"] is True, listing)
        names = [c["name"] for c in listing["countries"]]
        check("seed order", names[:3] == ["United States", "United Kingdom", "France"], names)
        check("indexes", [c["index"] for c in listing["countries"]] == list(range(len(names))))
        seq0 = listing["seq"]

        sub = ctx.socket(zmq.SUB)
        sub.setsockopt(zmq.LINGER, 0)
        sub.setsockopt(zmq.SUBSCRIBE, b"country.")
        sub.connect(events)
        # Wait for the subscription to reach the service: heartbeats are not subscribed, so
        # probe with a harmless no-op set until a changed event would be seen.
        time.sleep(0.5)

        req_id = str(uuid.uuid4())
        toggled = request(ctx, command, {"op": "toggle", "name": "fRaNcE", "id": req_id})
        check("toggle ok", toggled["ok"] and toggled["country"] == {"index": 2, "name": "France", "visited": True}, toggled)
        check("toggle seq", toggled["seq"] == seq0 + 1, toggled)
        if sub.poll(TIMEOUT_MS):
            topic, body = sub.recv_multipart()
            event = json.loads(body)
            check("event topic", topic == b"country.changed", topic)
            check("event seq equals reply seq", event["seq"] == toggled["seq"], event)
            check("event row", event["country"] == toggled["country"], event)
        else:
            check("event received", False, "no event within timeout")

        again = request(ctx, command, {"op": "toggle", "name": "France", "id": req_id})
        check("retry gets first reply", again == toggled, again)
        check("retry changed nothing", request(ctx, command, {"op": "get", "index": 2})["country"]["visited"] is True)

        for payload, raw, code in [
            ({}, b"not json", "bad_request"),
            ({}, b"[1,2]", "bad_request"),
            ({"index": 1}, None, "bad_request"),
            ({"op": "fly"}, None, "unknown_op"),
            ({"op": "get", "index": 99}, None, "index_out_of_range"),
            ({"op": "get", "name": "Atlantis"}, None, "not_found"),
            ({"op": "add", "name": "France"}, None, "duplicate"),
            ({"op": "add", "name": "x" * 101}, None, "invalid_name"),
            ({"op": "toggle", "index": 0, "if_seq": 0}, None, "conflict"),
            ({"op": "set", "index": "0", "visited": True}, None, "bad_request"),
        ]:
            reply = request(ctx, command, payload, raw)
            check(f"error {code} for {payload or raw!r}", reply.get("ok") is False and reply["error"]["code"] == code, reply)
            check(f"error message for {code}", isinstance(reply["error"].get("message"), str) and reply["error"]["message"])

        status = request(ctx, command, {"op": "status"})
        check("status", status["ok"] and status["seq"] == seq0 + 1 and "version" in status, status)
        history = request(ctx, command, {"op": "history", "since": seq0})
        check("history", [e["seq"] for e in history["events"]] == [seq0 + 1] and history["events"][0]["topic"] == "country.changed", history)
        sub.close()
    finally:
        ctx.destroy(linger=0)
        service.send_signal(signal.SIGTERM)
        try:
            code = service.wait(timeout=10)
            check("service exits 0 on SIGTERM", code == 0, code)
        except subprocess.TimeoutExpired:
            service.kill()
            service.wait()
            check("service exits on SIGTERM", False, "killed after 10 s")
    print(f"interop: {results['passed']} passed, {results['failed']} failed")
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
