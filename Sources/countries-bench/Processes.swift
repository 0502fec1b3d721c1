import Foundation
@preconcurrency import Glibc
import LoadGeneration
import SystemSupport

/// Every process and temp directory the bench started, so that it can stop and remove all of
/// them by pid and path on every way out: a normal end, a failure, SIGINT or SIGTERM.
final class Cleanup: Sendable {
    static let shared = Cleanup()

    private struct Tracked {
        var pids: Set<Int32> = []
        var directories: [String] = []
        var signalSources: [any DispatchSourceSignal] = []
    }

    private let tracked = Locked(Tracked())

    func add(pid: Int32) { tracked.withLock { _ = $0.pids.insert(pid) } }
    func remove(pid: Int32) { tracked.withLock { _ = $0.pids.remove(pid) } }
    func add(directory: String) { tracked.withLock { $0.directories.append(directory) } }

    /// Kills what is left (SIGKILL, by pid) and removes the temp directories.
    func runAll() {
        let (pids, directories) = tracked.withLock { ($0.pids, $0.directories) }
        for pid in pids {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        for directory in directories {
            try? FileManager.default.removeItem(atPath: directory)
        }
        tracked.withLock {
            $0.pids.removeAll()
            $0.directories.removeAll()
        }
    }

    /// On SIGINT or SIGTERM: clean up and exit 130 or 143.
    func installSignalHandlers() {
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler {
                FileHandle.standardError.write(
                    Data("\ncountries-bench: interrupted, stopping children\n".utf8))
                Cleanup.shared.runAll()
                exit(128 + signalNumber)
            }
            source.resume()
            tracked.withLock { $0.signalSources.append(source) }
        }
        // Children must not outlive a crash either: SIGPIPE is handled as a write error.
        signal(SIGPIPE, SIG_IGN)
    }
}

/// A temporary directory that is removed at the end (or on interruption).
func makeTemporaryDirectory(_ label: String) throws -> String {
    var template = Array("\(NSTemporaryDirectory())/countries-bench-\(label)-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else {
        throw BenchError("mkdtemp: \(String(cString: strerror(errno)))")
    }
    let path = String(cString: made)
    Cleanup.shared.add(directory: path)
    return path
}

/// A child process the bench started; stopped by pid (SIGTERM, then SIGKILL after a grace).
final class Child {
    let name: String
    let pid: Int32
    /// Set once the child has been reaped.
    var exited = false

    /// Starts `executable` with `arguments`; its output goes to `logPath` (or nowhere).
    init(
        name: String, executable: String, arguments: [String], logPath: String? = nil, pdeathsig: Bool = true
    ) throws {
        self.name = name
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        let output = logPath ?? "/dev/null"
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Where setpriv is at hand, the child is killed if the bench dies without cleaning up
        // (children are only ever started from the main thread, which lives as long as the bench).
        var program = executable
        var words = [executable] + arguments
        if pdeathsig, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") {
            program = "/usr/bin/setpriv"
            words = ["/usr/bin/setpriv", "--pdeathsig", "KILL", "--"] + words
        }
        let argv = words.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, program, &actions, nil, argv, environ)
        guard rc == 0 else {
            throw BenchError("cannot start \(executable): \(String(cString: strerror(rc)))")
        }
        self.pid = pid
        Cleanup.shared.add(pid: pid)
    }

    /// Whether it has exited already (reaps it if so).
    var hasExited: Bool {
        if exited { return true }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid {
            exited = true
            Cleanup.shared.remove(pid: pid)
        }
        return exited
    }

    /// SIGTERM, wait up to `grace`, then SIGKILL; always reaps.
    func stop(grace: TimeInterval = 3) {
        guard !hasExited else { return }
        kill(pid, SIGTERM)
        let deadline = Date(timeIntervalSinceNow: grace)
        while Date() < deadline {
            if hasExited { return }
            usleep(5_000)
        }
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        exited = true
        Cleanup.shared.remove(pid: pid)
    }

    deinit { stop(grace: 1) }

    /// CPU time used so far, user and system, every thread, in µs (/proc/PID/stat; the clock
    /// tick is 10 ms, so take it over a run of many requests).
    func cpuMicroseconds() -> Double? { Self.cpuMicroseconds(ofProcess: pid) }

    /// The CPU time, user and system, every thread, in µs, of any process (an etcd member the
    /// bench did not start); nil when it is gone.
    static func cpuMicroseconds(ofProcess pid: pid_t) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        // After "pid (comm)": utime is field 14, stime field 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else {
            return nil
        }
        return (user + system) * 1e6 / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The resident set size in KiB (VmRSS in /proc/PID/status).
    func residentKiB() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else {
            return nil
        }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ").dropFirst().first ?? "")
        }
        return nil
    }
}

/// Runs a program to its end and returns its exit status and wall time in nanoseconds.
func runToEnd(_ executable: String, _ arguments: [String]) throws -> (status: Int32, nanos: UInt64) {
    let start = nowNanos()
    let child = try Child(name: executable, executable: executable, arguments: arguments, pdeathsig: false)
    var status: Int32 = 0
    while waitpid(child.pid, &status, 0) < 0 && errno == EINTR {}
    let elapsed = nowNanos() - start
    Cleanup.shared.remove(pid: child.pid)
    child.exited = true
    return ((status >> 8) & 0xff, elapsed)
}
