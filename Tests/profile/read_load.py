#!/usr/bin/env python3
"""One reader beside writers (docs/BENCHMARKS.md, "Stop 63"): a REQ socket that sends BODY
(default `{"op":"status"}`) to ENDPOINT RATE times a second for SECONDS, on a fixed schedule,
and prints how many it sent and the p50 and p99 of their round trips. Run it beside
`Tests/profile/load.c` to see what a dashboard's `count` or a script's `status` costs the
clients that write. Needs pyzmq (`python3 -m pip install pyzmq`).

    python3 Tests/profile/read_load.py tcp://127.0.0.21:5555 200 5 '{"op":"count"}'
"""
import sys
import time

import zmq


def main() -> int:
    if len(sys.argv) not in (4, 5):
        print(__doc__, file=sys.stderr)
        return 64
    endpoint, rate, seconds = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    body = (sys.argv[4] if len(sys.argv) == 5 else '{"op":"status"}').encode()
    if rate <= 0 or seconds <= 0:
        print("read_load: RATE and SECONDS must be above 0", file=sys.stderr)
        return 64
    context = zmq.Context()
    socket = context.socket(zmq.REQ)
    socket.setsockopt(zmq.LINGER, 0)
    socket.setsockopt(zmq.RCVTIMEO, 5000)
    socket.connect(endpoint)
    latencies = []
    start = time.monotonic()
    sent = 0
    try:
        while time.monotonic() - start < seconds:
            delay = start + sent / rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            began = time.monotonic()
            socket.send(body)
            socket.recv()
            latencies.append((time.monotonic() - began) * 1e6)
            sent += 1
    except zmq.Again:
        print(f"read_load: no reply in 5 s after {sent} requests", file=sys.stderr)
        return 1
    finally:
        socket.close()
        context.term()
    latencies.sort()
    print(
        f"{sent} requests in {seconds:g} s, p50 {latencies[len(latencies) // 2]:.0f} us, "
        f"p99 {latencies[int(len(latencies) * 0.99)]:.0f} us"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
