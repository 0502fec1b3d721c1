#!/usr/bin/env python3
"""The durable commit's profile (scripts/profile-durable; docs/BENCHMARKS.md).

One REQ client toggles against `countries serve` on ipc endpoints in a temp dir; strace is
attached to the running service (never to its start) and detached with SIGINT; the service is
stopped by its pid. Prints figures per toggle and per commit."""
import argparse, collections, json, os, re, signal, subprocess, sys, tempfile, time, uuid
import zmq

parser = argparse.ArgumentParser()
parser.add_argument("binary")
parser.add_argument("--toggles", type=int, default=2000)
parser.add_argument("--warmup", type=int, default=200)
parser.add_argument("--allocations", action="store_true",
                    help="also count heap allocations per toggle under valgrind (about 2 minutes)")
options = parser.parse_args()
n = options.toggles
hz = os.sysconf("SC_CLK_TCK")
ctx = zmq.Context()


def cpu(pid):
    return [int(x) for x in open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[11:13]]


def service(mode, valgrind=None):
    work = tempfile.mkdtemp(prefix="profile-durable-")
    args = ([] if valgrind is None else ["valgrind", "--leak-check=no", f"--log-file={valgrind}"]) + [options.binary, "serve", "--command", f"ipc://{work}/c", "--events", f"ipc://{work}/e",
            "--log-level", "warning"]
    args += ["--in-memory"] if mode == "memory" else ["--db", f"{work}/countries.db"]
    process = subprocess.Popen(args)
    socket = ctx.socket(zmq.REQ)
    socket.setsockopt(zmq.LINGER, 0)
    socket.setsockopt(zmq.RCVTIMEO, 120000)
    socket.connect(f"ipc://{work}/c")

    def toggles(count):
        for i in range(count):
            socket.send(json.dumps({"op": "toggle", "index": i % 8, "id": uuid.uuid4().hex}).encode())
            reply = json.loads(socket.recv())
            assert reply.get("ok"), reply
    return process, socket, toggles, work


def traced(pid, work, arguments, run):
    out = os.path.join(work, "strace.txt")
    tracer = subprocess.Popen(["strace", "-f", "-o", out] + arguments + ["-p", str(pid)],
                              stderr=subprocess.DEVNULL)
    try:
        time.sleep(1.0)
        run(n)
    finally:
        tracer.send_signal(signal.SIGINT)
        tracer.wait()
    return open(out).read()


print(f"load average {open('/proc/loadavg').read().split()[:3]} at start")
for mode in ["memory", "db"]:
    process, socket, toggles, work = service(mode)
    try:
        toggles(options.warmup if mode == "db" else 300)
        before, started = cpu(process.pid), time.perf_counter()
        toggles(n)
        after, ended = cpu(process.pid), time.perf_counter()
        user, system = [(b - a) / hz / n * 1e6 for a, b in zip(before, after)]
        print(f"{'--in-memory' if mode == 'memory' else '--db':11s}: service CPU per toggle {user:.0f} µs user + "
              f"{system:.0f} µs system; {(ended - started) / n * 1e6:.0f} µs per round trip (load-dependent)")
        if mode == "memory":
            continue
        summary = traced(process.pid, work, ["-c"], toggles)
        print(f"system calls per toggle over {n} toggles (strace -c -f):")
        for line in summary.splitlines():
            match = re.match(r"\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)$", line)
            if match and int(match.group(1)) >= n // 10:
                print(f"  {match.group(2):12s} {int(match.group(1)) / n:6.2f}")
        log = traced(process.pid, work, ["-T", "-y", "-e", "trace=pwrite64,fdatasync,fsync", "-e", "signal=none"],
                     toggles)
        commits, current, database_bytes, sync_times = [], collections.Counter(), 0, []
        syncs = collections.Counter()
        for line in log.splitlines():
            write = re.search(r"pwrite64\(\d+<([^>]*)>, .*\) = (\d+)", line)
            if write:
                name = os.path.basename(write.group(1))
                if name.endswith("-wal"):
                    current["calls"] += 1
                    current["bytes"] += int(write.group(2))
                elif name.endswith(".db"):
                    database_bytes += int(write.group(2))
                continue
            sync = re.search(r"(f(?:data)?sync)\(\d+<([^>]*)>.*<([\d.]+)>$", line)
            if sync:
                syncs[f"{sync.group(1)} {os.path.basename(sync.group(2))}"] += 1
                if sync.group(2).endswith("-wal"):
                    sync_times.append(float(sync.group(3)) * 1e6)
                    commits.append(current)
                    current = collections.Counter()
        frames = sorted(c["calls"] / 2 for c in commits)
        walbytes = sorted(c["bytes"] for c in commits)
        sync_times.sort()
        print(f"syncs over {n} toggles: {dict(syncs)}")
        print(f"WAL per commit: median {frames[len(frames) // 2]:.0f} frames, {walbytes[len(walbytes) // 2]} B "
              f"(mean {sum(walbytes) / len(walbytes):.0f} B); database file (checkpoints): "
              f"{database_bytes / n:.0f} B per toggle")
        print(f"fdatasync of the WAL (strace -T): p50 {sync_times[len(sync_times) // 2]:.0f} µs, "
              f"p90 {sync_times[int(len(sync_times) * 0.9)]:.0f} µs")
    finally:
        socket.close()
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=10)
if options.allocations:
    # valgrind's heap summary at exit, for 200 and for 1,200 toggles: the difference is 1,000
    # toggles' worth, without the start and the stop.
    for mode in ["memory", "db"]:
        totals = []
        for count in [200, 1200]:
            log = tempfile.mktemp(prefix="profile-durable-valgrind-")
            process, socket, toggles, work = service(mode, valgrind=log)
            try:
                toggles(count)
            finally:
                socket.close()
                process.send_signal(signal.SIGTERM)
                process.wait(timeout=120)
            found = re.search(r"total heap usage: ([\d,]+) allocs, [\d,]+ frees, ([\d,]+) bytes", open(log).read())
            totals.append([int(x.replace(",", "")) for x in found.groups()])
        print(f"{'--in-memory' if mode == 'memory' else '--db':11s}: {(totals[1][0] - totals[0][0]) / 1000:.0f} heap "
              f"allocations and {(totals[1][1] - totals[0][1]) / 1000:.0f} bytes per toggle (valgrind)")
print(f"load average {open('/proc/loadavg').read().split()[:3]} at end")
