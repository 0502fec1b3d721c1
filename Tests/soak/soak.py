#!/usr/bin/env python3
"""The long soak: a million toggles (by default) against a durable service with subscribers
attached, sampling resident memory, to show it stays flat. A benchmark, not a CI test.

Usage: soak.py PATH/TO/countries [--toggles N] [--subscribers K] [--clients C]
Starts its own service and subscribers on ipc endpoints in a temp dir and stops them (by pid)
however it ends. Prints one line per sample and a verdict.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid

import zmq


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return 0
    return 0


class LastLine:
    """Reads a subscriber's stdout to the end, keeping only the newest line (a million events
    need no disk and no memory)."""

    def __init__(self, stream):
        self.last = b"{}"
        self.thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self.thread.start()

    def _read(self, stream):
        for line in stream:
            self.last = line


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--toggles", type=int, default=1_000_000)
    parser.add_argument("--subscribers", type=int, default=3)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--window", type=int, default=32, help="requests in flight per client")
    parser.add_argument("--max-seconds", type=int, default=1800)
    args = parser.parse_args()

    work = tempfile.mkdtemp(prefix="countries-soak-")
    command, events = f"ipc://{work}/c", f"ipc://{work}/e"
    processes = []

    def start(arguments, **kwargs):
        process = subprocess.Popen([args.binary] + arguments, **kwargs)
        processes.append(process)
        return process

    try:
        service = start(["serve", "--db", f"{work}/soak.db", "--command", command, "--events", events,
                         "--heartbeat-ms", "200", "--log-level", "error"])
        context = zmq.Context()
        probe = context.socket(zmq.REQ)
        probe.setsockopt(zmq.LINGER, 0)
        probe.connect(command)
        probe.send_json({"op": "count"})
        if not probe.poll(10_000):
            raise SystemExit("soak: the service did not answer")
        first = probe.recv_json()
        seq0, rows = first["seq"], first["count"]

        readers = []
        for _ in range(args.subscribers):
            watcher = start(["watch", "--json", "--heartbeat-ms", "200", "--command", command, "--events", events],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            readers.append(LastLine(watcher.stdout))
        time.sleep(1.0)
        subscribers = processes[1:]

        sockets = []
        for _ in range(args.clients):
            dealer = context.socket(zmq.DEALER)
            dealer.setsockopt(zmq.LINGER, 0)
            dealer.connect(command)
            sockets.append(dealer)
        poller = zmq.Poller()
        for dealer in sockets:
            poller.register(dealer, zmq.POLLIN)

        sent = answered = 0
        in_flight = {id(d): 0 for d in sockets}
        started = time.time()
        next_sample = started
        samples = []
        print("elapsed_s  toggles    rate/s  service_rss_kib  subscriber_rss_kib(max)", flush=True)
        while answered < args.toggles and time.time() - started < args.max_seconds:
            for dealer in sockets:
                while in_flight[id(dealer)] < args.window and sent < args.toggles:
                    body = json.dumps({"op": "toggle", "index": sent % rows, "id": uuid.uuid4().hex})
                    dealer.send_multipart([b"", body.encode()])
                    in_flight[id(dealer)] += 1
                    sent += 1
            for dealer, _ in poller.poll(1000):
                while True:
                    try:
                        frames = dealer.recv_multipart(zmq.NOBLOCK)
                    except zmq.Again:
                        break
                    reply = json.loads(frames[-1])
                    if not reply.get("ok"):
                        raise SystemExit(f"soak: refused: {reply}")
                    in_flight[id(dealer)] -= 1
                    answered += 1
            now = time.time()
            if now >= next_sample:
                sample = (now - started, answered, rss_kib(service.pid),
                          max(rss_kib(p.pid) for p in subscribers))
                samples.append(sample)
                rate = answered / max(now - started, 1e-9)
                print(f"{sample[0]:9.1f}  {answered:8d}  {rate:8.0f}  {sample[2]:15d}  {sample[3]:22d}", flush=True)
                next_sample = now + 10

        probe.send_json({"op": "list"})
        probe.poll(10_000)
        final = probe.recv_json()
        time.sleep(2.0)
        converged = 0
        for process in subscribers:
            process.send_signal(signal.SIGTERM)
        for process in subscribers:
            process.wait(timeout=10)
        for reader in readers:
            reader.thread.join(timeout=10)
            state = json.loads(reader.last)
            converged += state["seq"] == final["seq"] and state["countries"] == final["countries"]

        # Flat: after the first tenth (warm-up), resident memory grows by less than 10 MiB.
        warm = [s for s in samples if s[1] >= args.toggles // 10] or samples
        growth_service = max(s[2] for s in warm) - warm[0][2]
        growth_subscribers = max(s[3] for s in warm) - warm[0][3]
        elapsed = time.time() - started
        print(f"soak: {answered} toggles in {elapsed:.0f} s ({answered / elapsed:.0f}/s), seq {seq0} -> {final['seq']}, "
              f"{converged}/{len(subscribers)} subscribers converged, RSS growth after warm-up: "
              f"service {growth_service} KiB, subscribers {growth_subscribers} KiB")
        ok = (answered == args.toggles and final["seq"] == seq0 + args.toggles and converged == len(subscribers)
              and growth_service < 10 * 1024 and growth_subscribers < 10 * 1024)
        print(f"soak: {1 if ok else 0} passed, {0 if ok else 1} failed")
        return 0 if ok else 1
    finally:
        for process in processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        deadline = time.time() + 10
        for process in processes:
            try:
                process.wait(timeout=max(0.1, deadline - time.time()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
