#!/usr/bin/env python3
"""Interop: pyzmq CURVE clients against the built `countries serve --curve-key`.

Proves the key files and the handshake are standard ZeroMQ CURVE: the keys come from the files
`countries keygen` wrote (CZMQ's ZPL certificate text, parsed here with nothing but the format),
and pyzmq's own CURVE client (libzmq underneath, but none of the project's Swift code) talks to
the service. Usage: test_curve_interop.py PATH/TO/countries
Starts its own service on ipc endpoints in a temp dir and stops it (by pid) however it ends.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import zmq

TIMEOUT_MS = 5000
results = {"passed": 0, "failed": 0}


def check(name, condition, detail=""):
    if condition:
        results["passed"] += 1
    else:
        results["failed"] += 1
        print(f"FAIL {name} {detail}", file=sys.stderr)


def read_zpl_keys(path):
    """The public-key and secret-key values of a ZPL certificate (secret-key may be None)."""
    keys = {}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.lstrip().startswith("#"):
                continue
            match = re.match(r'^\s*(public-key|secret-key)\s*=\s*"?([^"\s]+)"?\s*$', line)
            if match:
                keys[match.group(1)] = match.group(2)
    return keys.get("public-key"), keys.get("secret-key")


def curve_socket(ctx, kind, workdir, name, server_public, endpoint):
    """A socket with the CURVE keys of NAME.key (as keygen wrote it), connected to endpoint."""
    sock = ctx.socket(kind)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.SNDTIMEO, TIMEOUT_MS)
    public, secret = read_zpl_keys(os.path.join(workdir, name + ".key"))
    sock.curve_serverkey = server_public.encode()
    sock.curve_publickey = public.encode()
    sock.curve_secretkey = secret.encode()
    sock.connect(endpoint)
    return sock


def request(sock, payload, timeout_ms=TIMEOUT_MS):
    """Sends on a fresh REQ socket; the reply, or None when none came in time."""
    try:
        sock.send(json.dumps(payload).encode())
        if not sock.poll(timeout_ms):
            return None
        return json.loads(sock.recv())
    finally:
        sock.close()


def main():
    binary = os.path.abspath(sys.argv[1])
    workdir = tempfile.mkdtemp(prefix="countries-curve-")
    command = f"ipc://{workdir}/command"
    events = f"ipc://{workdir}/events"
    for directory in ("rw", "ro", "others"):
        os.mkdir(os.path.join(workdir, directory))
    for name in ("server", "rw/alice", "ro/bob", "others/eve"):
        subprocess.run([binary, "keygen", name], cwd=workdir, check=True, stdout=subprocess.DEVNULL)

    server_public, server_secret = read_zpl_keys(os.path.join(workdir, "server.pub"))
    check("server .pub holds only the public key", server_public and server_secret is None)
    check("the secret file matches the public one",
          read_zpl_keys(os.path.join(workdir, "server.key"))[0] == server_public)
    check("keygen keys are 40 characters of Z85", len(server_public) == 40, server_public)
    check("pyzmq derives the same public key from the secret key",
          zmq.curve_public(read_zpl_keys(os.path.join(workdir, "rw/alice.key"))[1].encode()).decode()
          == read_zpl_keys(os.path.join(workdir, "rw/alice.pub"))[0])
    check(".key is 0600", os.stat(os.path.join(workdir, "rw/alice.key")).st_mode & 0o777 == 0o600)

    # A key pyzmq made, dropped into the allow-list as a bare Z85 line, is admitted too.
    carol_public, carol_secret = zmq.curve_keypair()
    with open(os.path.join(workdir, "rw/carol.pub"), "w", encoding="utf-8") as handle:
        handle.write(carol_public.decode() + "\n")

    stderr_path = os.path.join(workdir, "serve.err")
    with open(stderr_path, "w", encoding="utf-8") as stderr:
        service = subprocess.Popen(
            [binary, "serve", "--command", command, "--events", events, "--in-memory",
             "--heartbeat-ms", "100", "--curve-key", "server.key", "--allow", "rw", "--allow-read", "ro"],
            cwd=workdir, stderr=stderr)
    ctx = zmq.Context()
    try:
        deadline = time.time() + 20
        while True:
            listing = request(curve_socket(ctx, zmq.REQ, workdir, "rw/alice", server_public, command), {"op": "list"}, 500)
            if listing is not None or time.time() > deadline:
                break
        check("allowed key lists", listing is not None and listing["ok"] is True, listing)

        sub = curve_socket(ctx, zmq.SUB, workdir, "ro/bob", server_public, events)
        sub.setsockopt(zmq.SUBSCRIBE, b"")
        heartbeat = sub.poll(TIMEOUT_MS)
        check("read-only key's SUB gets heartbeats", heartbeat)

        alice = curve_socket(ctx, zmq.REQ, workdir, "rw/alice", server_public, command)
        toggled = request(alice, {"op": "toggle", "name": "France"})
        check("allowed key toggles", toggled and toggled["ok"] and toggled["country"]["visited"] is True, toggled)
        event = None
        end = time.time() + TIMEOUT_MS / 1000
        while time.time() < end and sub.poll(int((end - time.time()) * 1000) + 1):
            topic, body = sub.recv_multipart()
            if topic == b"country.changed":
                event = json.loads(body)
                break
        check("read-only key's SUB gets the event", event and event["seq"] == toggled["seq"], event)
        sub.close()

        bob = curve_socket(ctx, zmq.REQ, workdir, "ro/bob", server_public, command)
        refused = request(bob, {"op": "toggle", "name": "France"})
        check("read-only key gets forbidden", refused and refused["ok"] is False
              and refused["error"]["code"] == "forbidden", refused)
        bob = curve_socket(ctx, zmq.REQ, workdir, "ro/bob", server_public, command)
        listed = request(bob, {"op": "list"})
        check("read-only key lists, nothing changed", listed and listed["seq"] == toggled["seq"], listed)

        carol = ctx.socket(zmq.REQ)
        carol.setsockopt(zmq.LINGER, 0)
        carol.setsockopt(zmq.SNDTIMEO, TIMEOUT_MS)
        carol.curve_serverkey = server_public.encode()
        carol.curve_publickey = carol_public
        carol.curve_secretkey = carol_secret
        carol.connect(command)
        carol_reply = request(carol, {"op": "count"})
        check("a pyzmq-made key in a bare .pub is admitted", carol_reply and carol_reply["ok"], carol_reply)

        eve = curve_socket(ctx, zmq.REQ, workdir, "others/eve", server_public, command)
        check("unknown key gets no reply", request(eve, {"op": "list"}, 1000) is None)

        plain = ctx.socket(zmq.REQ)
        plain.setsockopt(zmq.LINGER, 0)
        plain.setsockopt(zmq.SNDTIMEO, TIMEOUT_MS)
        plain.connect(command)
        check("plaintext client gets no reply", request(plain, {"op": "list"}, 1000) is None)

        impostor_public, _ = zmq.curve_keypair()
        wrong = curve_socket(ctx, zmq.REQ, workdir, "rw/alice", impostor_public.decode(), command)
        check("wrong server key gets no reply", request(wrong, {"op": "list"}, 1000) is None)

        time.sleep(0.2)
        with open(stderr_path, encoding="utf-8") as handle:
            log = handle.read()
        eve_public = read_zpl_keys(os.path.join(workdir, "others/eve.pub"))[0]
        check("unknown key is logged", f"refused connection: key {eve_public}" in log, log)
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
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"interop-curve: {results['passed']} passed, {results['failed']} failed")
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
