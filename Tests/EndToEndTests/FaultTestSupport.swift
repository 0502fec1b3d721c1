import Foundation
@preconcurrency import Glibc
import Testing

// Fault injection for the end-to-end suites (network namespaces, mounts, processes run by pid).
// Everything here is prefixed `Fault` so it never collides with the suite's other helpers.
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

/// Finds system tools (`ip`, `mount`) on the usual paths.
enum FaultTool {
    static func path(_ name: String) -> String? {
        for directory in ["/usr/sbin", "/sbin", "/usr/bin", "/bin"] {
            let candidate = "\(directory)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }
}

/// The `countries` binary under test: `COUNTRIES_BINARY`, else next to the test bundle, else
/// the package's `.build/debug/countries`.
enum FaultBinary {
    static let countries: String = {
        if let override = ProcessInfo.processInfo.environment["COUNTRIES_BINARY"], !override.isEmpty {
            return override
        }
        let bundle = Bundle.main.bundleURL
        let argumentZero = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for directory in [bundle, bundle.deletingLastPathComponent(), argumentZero] {
            let candidate = directory.appendingPathComponent("countries").path
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate, isDirectory: &isDirectory),
                !isDirectory.boolValue, access(candidate, X_OK) == 0
            {
                return candidate
            }
        }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/debug/countries").path
    }()

    /// The environment `countries` runs with: the test's own, without endpoint overrides, in
    /// the C locale.
    static let environment: [String: String] = {
        var environment = ProcessInfo.processInfo.environment
        for key in ["COUNTRIES_COMMAND", "COUNTRIES_EVENTS", "LC_ALL", "LC_CTYPE"] { environment[key] = nil }
        environment["LANG"] = "C"
        return environment
    }()
}

/// Lines a process wrote to one stream, each stamped with when it arrived.
final class FaultLineLog: @unchecked Sendable {
    // @unchecked: every stored property is only touched under `lock`.
    struct Line {
        var at: ContinuousClock.Instant
        var text: String
    }

    private let lock = NSLock()
    private var stored: [Line] = []
    private var partial = Data()
    private var closed = false

    func append(_ data: Data) {
        let now = ContinuousClock.now
        lock.withLock {
            partial.append(data)
            while let newline = partial.firstIndex(of: 0x0A) {
                let text = String(decoding: partial[partial.startIndex..<newline], as: UTF8.self)
                stored.append(Line(at: now, text: text))
                partial.removeSubrange(partial.startIndex...newline)
            }
        }
    }

    func close() {
        lock.withLock {
            if !partial.isEmpty {
                stored.append(Line(at: .now, text: String(decoding: partial, as: UTF8.self)))
            }
            partial.removeAll()
            closed = true
        }
    }

    var lines: [Line] { lock.withLock { stored } }
    var text: String { lines.map { $0.text + "\n" }.joined() }
    var isClosed: Bool { lock.withLock { closed } }

    /// The first line from index `from` on that satisfies `predicate`, waiting up to `timeout`.
    func waitFor(
        from: Int = 0, timeout: Duration, _ predicate: (String) -> Bool
    ) -> (index: Int, line: Line)? {
        let deadline = ContinuousClock.now + timeout
        while true {
            let snapshot = lines
            if from < snapshot.count {
                for index in from..<snapshot.count where predicate(snapshot[index].text) {
                    return (index, snapshot[index])
                }
            }
            if ContinuousClock.now >= deadline || isClosed { return nil }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }
}

/// A child process with its stdout and stderr read on threads of their own, so it never blocks
/// on a full pipe. Stop it with ``stop()`` in `defer`: SIGTERM, then SIGKILL, by pid.
final class FaultProcess: @unchecked Sendable {
    // @unchecked: `process` is set up before it starts and then only read; the logs lock.
    let process = Process()
    let stdout = FaultLineLog()
    let stderr = FaultLineLog()
    let description: String
    private let exited = DispatchSemaphore(value: 0)
    private let readersDone = DispatchGroup()

    init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws {
        description = ([executable] + arguments).joined(separator: " ")
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardInput = FileHandle.nullDevice
        let outPipe = Pipe()
        let errPipe = Pipe()
        process.standardOutput = outPipe
        process.standardError = errPipe
        let exited = self.exited
        process.terminationHandler = { _ in exited.signal() }
        try process.run()
        try? outPipe.fileHandleForWriting.close()
        try? errPipe.fileHandleForWriting.close()
        for (handle, log) in [(outPipe.fileHandleForReading, stdout), (errPipe.fileHandleForReading, stderr)]
        {
            readersDone.enter()
            let done = readersDone
            Thread.detachNewThread {
                while true {
                    let data = handle.availableData
                    if data.isEmpty { break }
                    log.append(data)
                }
                log.close()
                try? handle.close()
                done.leave()
            }
        }
    }

    /// `countries arguments...`, optionally inside network namespace `namespace`.
    static func countries(_ arguments: [String], namespace: String? = nil) throws -> FaultProcess {
        if let namespace {
            guard let ip = FaultTool.path("ip") else { throw FaultError("no ip(8) here") }
            return try FaultProcess(
                ip, ["netns", "exec", namespace, FaultBinary.countries] + arguments,
                environment: FaultBinary.environment)
        }
        return try FaultProcess(FaultBinary.countries, arguments, environment: FaultBinary.environment)
    }

    var pid: pid_t { process.processIdentifier }
    var isRunning: Bool { process.isRunning }

    /// Waits up to `timeout` for the exit; the exit status (128 + n for signal n), or nil.
    func wait(timeout: Duration) -> Int32? {
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        guard exited.wait(timeout: .now() + seconds) == .success else { return nil }
        exited.signal()  // later waits return at once
        _ = readersDone.wait(timeout: .now() + 2)
        return process.terminationReason == .uncaughtSignal
            ? 128 + process.terminationStatus : process.terminationStatus
    }

    /// Sends `signal` by pid while the process runs.
    func signal(_ signal: Int32) {
        if process.isRunning { kill(pid, signal) }
    }

    /// SIGTERM, up to `grace` to exit, then SIGKILL; returns the exit status. Safe to call twice.
    @discardableResult
    func stop(grace: Duration = .seconds(3)) -> Int32? {
        signal(SIGTERM)
        if let status = wait(timeout: grace) { return status }
        signal(SIGKILL)
        return wait(timeout: .seconds(5))
    }
}

/// A command run to its end (killed after `timeout`).
enum FaultCommand {
    struct Result: CustomStringConvertible {
        var status: Int32
        var stdout: String
        var stderr: String
        var duration: Duration

        var description: String {
            "exit \(status) after \(duration)\n--- stdout\n\(stdout)--- stderr\n\(stderr)---"
        }
    }

    static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        timeout: Duration = .seconds(15)
    ) throws -> Result {
        let started = ContinuousClock.now
        let child = try FaultProcess(executable, arguments, environment: environment)
        guard let status = child.wait(timeout: timeout) else {
            child.stop(grace: .milliseconds(200))
            throw FaultError("timed out after \(timeout): \(child.description)")
        }
        return Result(
            status: status, stdout: child.stdout.text, stderr: child.stderr.text,
            duration: ContinuousClock.now - started)
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
        if let namespace {
            guard let ip = FaultTool.path("ip") else { throw FaultError("no ip(8) here") }
            return try run(
                ip, ["netns", "exec", namespace, FaultBinary.countries] + arguments,
                environment: FaultBinary.environment, timeout: timeout)
        }
        return try run(
            FaultBinary.countries, arguments, environment: FaultBinary.environment, timeout: timeout)
    }
}

/// A fresh directory under the system's temporary directory; ``remove()`` deletes it.
final class FaultTemporaryDirectory: Sendable {
    let path: String

    init() throws {
        var template = Array((NSTemporaryDirectory() + "/countries-fault-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw FaultError("mkdtemp failed: errno \(errno)")
        }
        path = String(cString: made)
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Two network namespaces of our own, "service" and "client", joined by a veth pair with a
/// /30 between them. Nothing is put in the root namespace; ``remove()`` deletes both
/// namespaces (and with them the veth pair).
final class FaultNetworkPair: Sendable {
    let serviceNamespace: String
    let clientNamespace: String
    let serviceAddress = "10.203.0.1"
    let clientAddress = "10.203.0.2"
    let serviceInterface = "cfsvc0"
    let clientInterface = "cfcli0"
    private let ip: String

    init() throws {
        guard let ip = FaultTool.path("ip") else { throw FaultError("no ip(8) here") }
        self.ip = ip
        let tag = "\(getpid())-\(UInt16.random(in: 0...UInt16.max))"
        serviceNamespace = "cf-svc-\(tag)"
        clientNamespace = "cf-cli-\(tag)"
        do {
            try FaultCommand.check(ip, ["netns", "add", serviceNamespace])
            try FaultCommand.check(ip, ["netns", "add", clientNamespace])
            try FaultCommand.check(
                ip,
                [
                    "-n", serviceNamespace, "link", "add", serviceInterface, "type", "veth", "peer", "name",
                    clientInterface, "netns", clientNamespace,
                ])
            for (namespace, interface, address) in [
                (serviceNamespace, serviceInterface, serviceAddress),
                (clientNamespace, clientInterface, clientAddress),
            ] {
                try FaultCommand.check(ip, ["-n", namespace, "link", "set", "lo", "up"])
                try FaultCommand.check(
                    ip, ["-n", namespace, "addr", "add", "\(address)/30", "dev", interface])
                try FaultCommand.check(ip, ["-n", namespace, "link", "set", interface, "up"])
            }
        } catch {
            remove()
            throw error
        }
    }

    /// Takes both ends of the link down, or brings them back up.
    func setLink(up: Bool) throws {
        for (namespace, interface) in [
            (serviceNamespace, serviceInterface), (clientNamespace, clientInterface),
        ] {
            try FaultCommand.check(ip, ["-n", namespace, "link", "set", interface, up ? "up" : "down"])
        }
    }

    /// Drops everything the service's host sends to the client's host (a blackhole route), or
    /// stops dropping it: a one-way partition where requests arrive and replies are lost.
    func setServiceToClientDropped(_ dropped: Bool) throws {
        try FaultCommand.check(
            ip,
            ["-n", serviceNamespace, "route", dropped ? "add" : "del", "blackhole", "\(clientAddress)/32"])
    }

    /// Deletes both namespaces; the veth pair goes with them. Safe to call twice.
    func remove() {
        for namespace in [serviceNamespace, clientNamespace] {
            _ = try? FaultCommand.run(ip, ["netns", "del", namespace], timeout: .seconds(10))
        }
    }
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
func faultMilliseconds(_ duration: Duration) -> Int {
    Int(duration / .milliseconds(1))
}

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
