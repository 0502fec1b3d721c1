#!/usr/bin/env python3
"""Where etcd's CPU goes (docs/BENCHMARKS.md, "Stop 43"): fetches a CPU profile of SECONDS
from each member's `/debug/pprof/profile` at once (members started with `--enable-pprof`),
and prints the share of its CPU time by function (flat: the function itself; cumulative: the
function and what it calls) and by area (the JSON gateway, gRPC, raft, the store...), each
sample charged to its innermost frame outside Go's runtime and system calls, so an allocation
counts for the code that made it. Go writes the function names into the profile itself, so this works on the
stripped binary Debian ships, without Go's tools. Run it while a load runs, e.g. on a
`scripts/cluster` whose members' `.args` got `--enable-pprof`:

    python3 Tests/profile/etcd_pprof.py [--seconds 5] [--top 25] URL...

Test tooling only: the standard library, no package. The decoder reads only the fields of
profile.proto it needs (samples, locations, lines, functions, strings).
"""
import argparse
import gzip
import threading
import urllib.request
from collections import Counter

# Areas by package, the first prefix that matches wins.
AREAS = [
    ("JSON gateway", ("github.com/grpc-ecosystem/grpc-gateway", "encoding/json", "encoding/base64",
                      "github.com/golang/protobuf/jsonpb", "go.etcd.io/etcd/etcdserver/api/v3rpc/gw",
                      "go.etcd.io/etcd/etcdserver/etcdserverpb/gw", "net/http", "net/textproto", "bufio")),
    ("gRPC and HTTP/2", ("google.golang.org/grpc", "golang.org/x/net/http2", "github.com/soheilhy/cmux")),
    ("protobuf", ("github.com/golang/protobuf", "github.com/gogo/protobuf", "google.golang.org/protobuf")),
    ("watch", ("go.etcd.io/etcd/etcdserver/api/v3rpc.(*serverWatchStream", "go.etcd.io/etcd/mvcc.(*watch",
               "go.etcd.io/etcd/mvcc.newWatch")),
    ("raft and its log", ("go.etcd.io/etcd/raft", "go.etcd.io/etcd/wal", "go.etcd.io/etcd/etcdserver/api/rafthttp",
                          "go.etcd.io/etcd/etcdserver/api/snap", "go.etcd.io/etcd/pkg/fileutil", "go.etcd.io/etcd/pkg/ioutil")),
    ("store (mvcc, bbolt)", ("go.etcd.io/etcd/mvcc", "go.etcd.io/bbolt", "go.etcd.io/etcd/lease")),
    ("server", ("go.etcd.io/etcd/",)),
    ("system calls", ("syscall", "internal/poll", "net.", "os.")),
    ("Go runtime (scheduler, GC, memory)", ("runtime", "sync", "time.")),
]
# What no caller can be charged with: a sample is charged to its innermost frame outside them.
UNCHARGED = {"system calls", "Go runtime (scheduler, GC, memory)"}


def varint(data, position):
    result = shift = 0
    while True:
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, position
        shift += 7


def fields(data):
    """The (number, value) pairs of one message: ints for varints, bytes for the rest."""
    position = 0
    while position < len(data):
        key, position = varint(data, position)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, position = varint(data, position)
        elif wire == 2:
            length, position = varint(data, position)
            value = data[position:position + length]
            position += length
        elif wire == 1:
            value, position = data[position:position + 8], position + 8
        elif wire == 5:
            value, position = data[position:position + 4], position + 4
        else:
            raise ValueError(f"wire type {wire} is not in profile.proto")
        yield number, value


def integers(value):
    """A repeated integer field's occurrence: one varint, or a packed run of them."""
    if isinstance(value, int):
        return [value]
    out, position = [], 0
    while position < len(value):
        number, position = varint(value, position)
        out.append(number)
    return out


def decode(profile):
    strings, functions, locations, samples = [], {}, {}, []
    for number, value in fields(profile):
        if number == 6:
            strings.append(value.decode("utf-8", "replace"))
        elif number == 5:
            function = dict(fields(value))
            functions[function.get(1, 0)] = function.get(2, 0)
        elif number == 4:
            location_id, lines = 0, []
            for field, inner in fields(value):
                if field == 1:
                    location_id = inner
                elif field == 4:
                    lines.append(dict(fields(inner)).get(1, 0))
            locations[location_id] = lines
        elif number == 2:
            ids, values = [], []
            for field, inner in fields(value):
                if field == 1:
                    ids += integers(inner)
                elif field == 2:
                    values += integers(inner)
            samples.append((ids, values))
    name = {identifier: strings[index] for identifier, index in functions.items()}
    # A location's lines are innermost first (inlined calls); a sample's locations leaf first.
    stacks = []
    for ids, values in samples:
        frames = [name.get(function, "?") for location in ids for function in locations.get(location, [])]
        # CPU profiles carry [samples, nanoseconds]: the last is the CPU time.
        stacks.append((frames, values[-1] if values else 0))
    return stacks


def area(function):
    # A vendored package is the package.
    function = function.split("/vendor/", 1)[-1]
    for label, prefixes in AREAS:
        if function.startswith(prefixes):
            return label
    return "other"


def fetch(url, seconds, into, index):
    try:
        with urllib.request.urlopen(f"{url}/debug/pprof/profile?seconds={seconds}", timeout=seconds + 30) as reply:
            into[index] = gzip.decompress(reply.read())
    except (OSError, EOFError) as error:
        into[index] = error


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("urls", nargs="+", help="the members' client URLs (http://127.0.0.11:2379 ...)")
    arguments = parser.parse_args()
    profiles = [None] * len(arguments.urls)
    threads = [threading.Thread(target=fetch, args=(url, arguments.seconds, profiles, index))
               for index, url in enumerate(arguments.urls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    flat, cumulative, areas, total = Counter(), Counter(), Counter(), 0
    for url, profile in zip(arguments.urls, profiles):
        if not isinstance(profile, bytes):
            raise SystemExit(f"no profile from {url}: {profile} (is the member started with --enable-pprof?)")
        for frames, count in decode(profile):
            total += count
            if frames:
                flat[frames[0]] += count
                charged = next((area(frame) for frame in frames if area(frame) not in UNCHARGED), area(frames[0]))
                areas[charged] += count
            for function in set(frames):
                cumulative[function] += count
    if not total:
        raise SystemExit("the profiles hold no samples: was etcd busy?")
    print(f"{total / 1e9:.2f} s of CPU over {len(arguments.urls)} member(s) in {arguments.seconds} s")
    print("\n| area (the innermost frame outside Go's runtime and system calls) | share |\n| --- | ---: |")
    for label, count in areas.most_common():
        print(f"| {label} | {count / total:.1%} |")
    for title, counter in (("flat", flat), ("cumulative", cumulative)):
        print(f"\n| function ({title}) | share |\n| --- | ---: |")
        for function, count in counter.most_common(arguments.top):
            print(f"| `{function}` | {count / total:.1%} |")


if __name__ == "__main__":
    main()
