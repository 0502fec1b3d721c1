import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

// Fault injection for the end-to-end suites (network namespaces, mounts), on the shared harness
// (TestSupport: processes run by pid, scratch directories). Everything here is prefixed `Fault`.
// Every resource made here has a `remove()`/`stop()` that a test calls in `defer`.

/// A failure of the fault harness itself (a command it needs did not work).
struct FaultError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// What the machine allows: namespaces and mounts need root (CAP_NET_ADMIN, CAP_SYS_ADMIN).
enum FaultEnvironment {
    /// Whether `ip netns add` works here (probed once, with a namespace removed at once).
    static let canCreateNamespaces: Bool = {
        guard geteuid() == 0, let ip = FaultTool.path("ip") else { return false }
        let probe = "cfprobe\(getpid())"
        guard (try? FaultCommand.run(ip, ["netns", "add", probe], timeout: .seconds(5)))?.status == 0 else {
            return false
        }
        _ = try? FaultCommand.run(ip, ["netns", "del", probe], timeout: .seconds(5))
        return true
    }()

    /// Whether this process may mount a tmpfs (probed once, unmounted at once).
    static let canMount: Bool = {
        guard geteuid() == 0, let directory = try? FaultTemporaryDirectory() else { return false }
        defer { directory.remove() }
        let mount = directory.path + "/probe"
        mkdir(mount, 0o700)
        guard
            (try? FaultCommand.run("/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", mount]))?.status
                == 0
        else { return false }
        _ = try? FaultCommand.run("/bin/umount", [mount])
        return true
    }()

    /// Whether `chattr +i` works on files in the temporary directory (root, a file system that
    /// has the attribute).
    static let canMakeImmutable: Bool = {
        guard geteuid() == 0, access("/usr/bin/chattr", X_OK) == 0,
            let directory = try? FaultTemporaryDirectory()
        else { return false }
        defer { directory.remove() }
        let file = directory.path + "/probe"
        guard FileManager.default.createFile(atPath: file, contents: Data()),
            (try? FaultCommand.run("/usr/bin/chattr", ["+i", file]))?.status == 0
        else { return false }
        _ = try? FaultCommand.run("/usr/bin/chattr", ["-i", file])
        return true
    }()
}

/// System tools (`ip`, `mount`), found by the shared harness.
typealias FaultTool = SystemTool

/// Lines a process wrote to one stream, each stamped with when it arrived (the shared log).
typealias FaultLineLog = OutputLog

/// A child process with its stdout and stderr read on threads of their own (the shared child
/// process). Stop it with ``ChildProcess/stop(signal:grace:)`` in `defer`: SIGTERM, then
/// SIGKILL, by pid.
typealias FaultProcess = ChildProcess

extension ChildProcess {
    /// `countries arguments...` inside network namespace `namespace` (through `ip netns exec`).
    static func countries(_ arguments: [String], namespace: String?) throws -> ChildProcess {
        guard let namespace else { return try countries(arguments) }
        guard let ip = SystemTool.path("ip") else { throw FaultError("no ip(8) here") }
        return try ChildProcess(ip, ["netns", "exec", namespace, CountriesBinary.path] + arguments)
    }
}

extension Execution {
    /// The exit code, as the fault tests call it.
    var status: Int32 { exitCode }
}

/// A command run to its end (killed after `timeout`).
enum FaultCommand {
    typealias Result = Execution

    /// Runs `executable arguments...` to its end (with the test's whole environment by default).
    static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        timeout: Duration = .seconds(15)
    ) throws -> Result {
        try ChildProcess.run(
            executable, arguments, environment: environment ?? ProcessInfo.processInfo.environment,
            timeout: timeout)
    }

    /// Runs a command that must succeed.
    @discardableResult
    static func check(_ executable: String, _ arguments: [String]) throws -> Result {
        let result = try run(executable, arguments)
        guard result.status == 0 else {
            throw FaultError("\(([executable] + arguments).joined(separator: " ")) failed: \(result)")
        }
        return result
    }

    /// `countries arguments...` to its end, optionally inside `namespace`.
    static func countries(
        _ arguments: [String], namespace: String? = nil, timeout: Duration = .seconds(20)
    ) throws -> Result {
        try ChildProcess.countries(arguments, namespace: namespace).finish(timeout: timeout)
    }
}

/// A fresh directory under /tmp (the shared scratch directory); ``ScratchDirectory/remove()``
/// deletes it.
typealias FaultTemporaryDirectory = ScratchDirectory

/// Two hosts of our own, "service" and "client" (network namespaces), joined by a veth pair
/// with a /30 between them (a ``VirtualNetwork``). Nothing is put in the root namespace;
/// ``remove()`` deletes both namespaces (and with them the veth pair).
final class FaultNetworkPair: Sendable {
    let network: VirtualNetwork

    init() throws {
        network = try VirtualNetwork(
            hosts: ["svc", "cli"], links: [("svc", "cli")], prefix: "cf", subnet: "10.203")
    }

    var serviceNamespace: String { network.namespace("svc") }
    var clientNamespace: String { network.namespace("cli") }
    var serviceAddress: String { network.address(of: "svc", toward: "cli") }
    var clientAddress: String { network.address(of: "cli", toward: "svc") }

    /// Takes both ends of the link down, or brings them back up.
    func setLink(up: Bool) throws { try network.setLink("svc", "cli", up: up) }

    /// Drops everything the service's host sends to the client's host (a blackhole route), or
    /// stops dropping it: a one-way partition where requests arrive and replies are lost.
    func setServiceToClientDropped(_ dropped: Bool) throws {
        try network.run(on: "svc", ["route", dropped ? "add" : "del", "blackhole", "\(clientAddress)/32"])
    }

    /// Deletes both namespaces; the veth pair goes with them. Safe to call twice.
    func remove() { network.remove() }
}

/// A tmpfs of a fixed size mounted on a directory of our own; ``remove()`` unmounts it.
final class FaultTmpfs: Sendable {
    let path: String
    private let parent: FaultTemporaryDirectory

    init(kilobytes: Int) throws {
        parent = try FaultTemporaryDirectory()
        path = parent.path + "/disk"
        mkdir(path, 0o700)
        do {
            try FaultCommand.check(
                "/bin/mount", ["-t", "tmpfs", "-o", "size=\(kilobytes)k,mode=0700", "tmpfs", path])
        } catch {
            parent.remove()
            throw error
        }
    }

    /// Writes a file until the disk says ENOSPC; returns the bytes written.
    @discardableResult
    func fill(_ name: String = "filler") -> Int {
        let fd = open(path + "/" + name, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        var total = 0
        let chunk = [UInt8](repeating: 0xAB, count: 4096)
        // Whole pages first, then single bytes, so not even a partial page is left.
        for size in [4096, 512, 1] {
            while true {
                let written = chunk.withUnsafeBytes { write(fd, $0.baseAddress, size) }
                if written <= 0 { break }
                total += written
            }
        }
        return total
    }

    /// Deletes what ``fill(_:)`` wrote.
    func free(_ name: String = "filler") {
        unlink(path + "/" + name)
    }

    func remove() {
        _ = try? FaultCommand.run("/bin/umount", [path])
        _ = try? FaultCommand.run("/bin/umount", ["-l", path])
        parent.remove()
    }
}

/// A read-only view (bind mount) of a directory; ``remove()`` unmounts it.
final class FaultReadOnlyView: Sendable {
    let path: String
    private let parent: FaultTemporaryDirectory

    init(of source: String) throws {
        parent = try FaultTemporaryDirectory()
        path = parent.path + "/ro"
        mkdir(path, 0o700)
        do {
            try FaultCommand.check("/bin/mount", ["--bind", source, path])
            try FaultCommand.check("/bin/mount", ["-o", "remount,bind,ro", path])
        } catch {
            remove()
            throw error
        }
    }

    func remove() {
        _ = try? FaultCommand.run("/bin/umount", [path])
        _ = try? FaultCommand.run("/bin/umount", ["-l", path])
        parent.remove()
    }
}

/// A `countries serve` on ipc endpoints in a directory of its own, for storage-fault tests.
final class FaultService: Sendable {
    let command: String
    let events: String
    let process: FaultProcess

    /// Starts the service on `db` and waits until it serves (or has exited: check ``process``).
    init(db: String, socketDirectory: String, extra: [String] = []) throws {
        command = "ipc://\(socketDirectory)/command"
        events = "ipc://\(socketDirectory)/events"
        process = try FaultProcess.countries(
            ["serve", "--db", db, "--command", command, "--events", events, "--heartbeat-ms", "200"] + extra)
        _ = process.stderr.waitFor(timeout: .seconds(20)) { $0.contains("serving commands on") }
    }

    /// `countries <arguments> --command <ours> --json`, run to its end.
    func client(_ arguments: [String], timeout: Duration = .seconds(20)) throws -> FaultCommand.Result {
        try FaultCommand.countries(arguments + ["--command", command, "--json"], timeout: timeout)
    }

    /// The JSON of the service's `list` reply.
    func list() throws -> FaultList {
        let result = try client(["list"])
        guard result.status == 0, let list = FaultList(json: result.stdout) else {
            throw FaultError("list failed: \(result)")
        }
        return list
    }
}

/// A list as `list --json` or `watch --json` prints it: seq and the rows.
struct FaultList: Equatable, CustomStringConvertible {
    var seq: UInt64
    var rows: [FaultRow]

    struct FaultRow: Equatable {
        var index: Int
        var name: String
        var visited: Bool
    }

    init?(json: String) {
        let line = json.split(separator: "\n").last.map(String.init) ?? json
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let seq = (object["seq"] as? NSNumber)?.uint64Value,
            let countries = object["countries"] as? [[String: Any]]
        else { return nil }
        self.seq = seq
        var rows: [FaultRow] = []
        for country in countries {
            guard let index = (country["index"] as? NSNumber)?.intValue,
                let name = country["name"] as? String,
                let visited = country["visited"] as? Bool
            else { return nil }
            rows.append(FaultRow(index: index, name: name, visited: visited))
        }
        self.rows = rows
    }

    var description: String {
        "seq \(seq): " + rows.filter(\.visited).map(\.name).joined(separator: ", ")
    }
}

/// A reply printed by a client command with `--json`, as a dictionary.
func faultReply(_ output: String) -> [String: Any]? {
    guard let line = output.split(separator: "\n").last else { return nil }
    return try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
}

/// The error code of a refusal reply, if it is one.
func faultErrorCode(_ output: String) -> String? {
    (faultReply(output)?["error"] as? [String: Any])?["code"] as? String
}

/// The seq of a reply, if it has one.
func faultSeq(_ output: String) -> UInt64? {
    (faultReply(output)?["seq"] as? NSNumber)?.uint64Value
}

/// Milliseconds in a duration, for figures in test output.
func faultMilliseconds(_ duration: Duration) -> Int { duration.milliseconds }

/// SQLite's WAL write lock on a store, held from this process: byte 120 of the `-shm` file
/// (the WAL_WRITE_LOCK of https://www.sqlite.org/walformat.html), an fcntl lock. A writer
/// waits for it (busy timeout) as it would for another connection's write transaction.
final class FaultSQLiteWriteLock: @unchecked Sendable {
    // @unchecked: `fd` is only touched under `lock`.
    private let lock = NSLock()
    private var fd: Int32

    init(db: String) throws {
        fd = open(db + "-shm", O_RDWR)
        guard fd >= 0 else { throw FaultError("cannot open \(db)-shm: errno \(errno)") }
        var region = flock()
        region.l_type = Int16(F_WRLCK)
        region.l_whence = Int16(SEEK_SET)
        region.l_start = 120
        region.l_len = 1
        guard fcntl(fd, F_SETLK, &region) == 0 else {
            close(fd)
            throw FaultError("cannot lock \(db)-shm: errno \(errno)")
        }
    }

    /// Lets go of the lock (closing the file drops it). Safe to call twice.
    func release() {
        lock.withLock {
            if fd >= 0 { close(fd) }
            fd = -1
        }
    }
}
