#!/usr/bin/env python3
"""Work per request (scripts/profile-load --work; docs/BENCHMARKS.md), in figures that do not
depend on the machine's load: CPU instructions per request (valgrind's callgrind, every thread of
the server) and system calls per request (strace -c -f), of builds of `countries serve` and of
the bench's bare floors (`countries-bench --floor-server`), under the same C load (load.c) with a
fixed count of requests per client.

Instructions: two runs of the server, one with WARMUP + COUNT requests per client and one with
WARMUP + 3 * COUNT; the difference, over the difference in requests, leaves out the start and the
stop. System calls: strace is attached to the running server after the warm-up, for COUNT
requests per client. Every server is stopped by its pid."""
import argparse, os, re, shutil, signal, socket, subprocess, sys, tempfile, time

parser = argparse.ArgumentParser()
parser.add_argument("load", help="the compiled Tests/profile/load.c")
parser.add_argument("bench", help="countries-bench, for the floors")
parser.add_argument("binaries", nargs="+", help="countries builds to measure")
parser.add_argument("--db", action="store_true")
parser.add_argument("--clients", type=int, default=1)
parser.add_argument("--count", type=int, default=1000, help="requests per client")
parser.add_argument("--warmup", type=int, default=200, help="requests per client before counting")
parser.add_argument("--no-floor", action="store_true")
parser.add_argument("--calls-only", action="store_true", help="system calls only, no callgrind runs")
parser.add_argument("--seed", help="the services' seed list (`serve --seed`): a list's size changes the work")
options = parser.parse_args()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def floor_mode(work):
    if options.db:
        return f"group-sync:{work}/pages" if options.clients > 1 else f"sync:{work}/pages"
    return "publish" if options.clients > 1 else "reply"


def command_line(binary, work, command, events):
    if binary == "floor":
        return [options.bench, "--floor-server", command, events, floor_mode(work)]
    arguments = [binary, "serve", "--command", command, "--events", events, "--log-level", "warning",
                 "--heartbeat-ms", "3600000"]
    arguments += ["--seed", options.seed] if options.seed else []
    return arguments + (["--db", f"{work}/countries.db"] if options.db else ["--in-memory"])


def load(command, clients, count, check=True):
    result = subprocess.run([options.load, command, str(clients), "1", str(count)], capture_output=True, text=True)
    if check and result.returncode != 0:
        sys.exit(f"profile-load: the load failed against {command}: {result.stdout}{result.stderr}")
    return result.returncode == 0


def serve(binary, prefix, run):
    """Starts `binary` (after `prefix`, a tool), waits until it answers, calls `run(pid, command)`,
    stops it by its pid."""
    work = tempfile.mkdtemp(prefix="profile-work-")
    command, events = f"tcp://127.0.0.1:{free_port()}", f"tcp://127.0.0.1:{free_port()}"
    process = subprocess.Popen(prefix(work) + command_line(binary, work, command, events), stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 120
        while not load(command, 1, 1, check=False):
            if process.poll() is not None or time.time() > deadline:
                sys.exit(f"profile-load: {binary} did not start")
            time.sleep(0.2)
        return run(process.pid, command), work
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=120)


def instructions(binary, requests):
    out = {}

    def prefix(work):
        out["file"] = f"{work}/callgrind.out"
        return ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out['file']}"]

    _, work = serve(binary, prefix, lambda pid, command: load(command, options.clients, requests))
    for line in open(out["file"]):
        if line.startswith("totals:") or line.startswith("summary:"):
            total = int(line.split()[1])
    shutil.rmtree(work)
    return total


def system_calls(binary):
    def run(pid, command):
        load(command, options.clients, options.warmup)
        out = f"{tempfile.gettempdir()}/profile-work-strace-{pid}.txt"
        tracer = subprocess.Popen(["strace", "-c", "-f", "-o", out, "-p", str(pid)], stderr=subprocess.DEVNULL)
        time.sleep(1.0)
        load(command, options.clients, options.count)
        tracer.send_signal(signal.SIGINT)
        tracer.wait()
        text = open(out).read()
        os.unlink(out)
        return text

    summary, work = serve(binary, lambda work: [], run)
    shutil.rmtree(work)
    requests = options.count * options.clients
    calls = {}
    for line in summary.splitlines():
        match = re.match(r"\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)$", line)
        if match and match.group(2) != "total":
            calls[match.group(2)] = int(match.group(1)) / requests
    return calls


print(f"{'--db' if options.db else '--in-memory'}, {options.clients} client(s), {options.count} requests each "
      f"after {options.warmup}; load average {' '.join(open('/proc/loadavg').read().split()[:3])}")
for binary in (["floor"] if not options.no_floor else []) + options.binaries:
    name = f"floor ({floor_mode('DIR')})" if binary == "floor" else binary
    if options.calls_only:
        per_request = float("nan")
    else:
        small = instructions(binary, options.warmup + options.count)
        large = instructions(binary, options.warmup + 3 * options.count)
        per_request = (large - small) / (2 * options.count * options.clients)
    calls = system_calls(binary)
    shown = ", ".join(f"{name} {count:.2f}" for name, count in sorted(calls.items(), key=lambda c: -c[1])
                      if count >= 0.05)
    print(f"{name}: {per_request:,.0f} instructions per request; {sum(calls.values()):.2f} system calls per request "
          f"({shown})")
