import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A child process of a test: started with posix_spawn, its stdout and stderr captured, signalled,
/// waited for with a bound, and stopped and reaped by its pid only, in ``stop(signal:grace:)``
/// or at the latest when the last reference goes.
///
/// Not Foundation's `Process`: a plain posix_spawn and waitpid cannot miss an exit (Process's
/// `waitUntilExit` was seen to hang on `tmux new-session`, whose server daemonizes), and the
/// child gets exactly the signal state and file descriptors given here.
public final class ChildProcess: @unchecked Sendable, CustomStringConvertible {
    // @unchecked: `status` is only touched under `lock`; the rest is set in `init`.

    /// Where a stream of the child goes.
    public enum Output: Sendable {
        /// A pipe, read on a thread of its own into an ``OutputLog`` (never blocks the child).
        case capture
        /// Appended to a file (created 0600): a long run's output need not stay in memory.
        case file(String)
        /// /dev/null.
        case discard
    }

    public let pid: pid_t
    /// The executable and its arguments, for messages.
    public let arguments: [String]
    /// What the child wrote to stdout (empty for ``Output/discard``).
    public let stdout: OutputLog
    /// What the child wrote to stderr (empty for ``Output/discard``).
    public let stderr: OutputLog
    /// Whether the child leads a process group of its own (see ``signalGroup(_:)``).
    public let isGroupLeader: Bool
    /// When it was started.
    public let started = ContinuousClock.now

    private let lock = NSLock()
    private var status: Int32?
    private var sent: [Int32] = []

    /// Starts `executable` (a path, or a name looked up on PATH) with `arguments`.
    ///
    /// - Parameters:
    ///   - environment: the child's whole environment (default: ``CountriesBinary/environment``).
    ///   - directory: the working directory (default: the test's own).
    ///   - newProcessGroup: make the child lead a process group, so ``signalGroup(_:)`` reaches
    ///     every process of a shell pipeline, as Ctrl-C would.
    public init(
        _ executable: String, _ arguments: [String],
        environment: [String: String] = CountriesBinary.environment,
        directory: String? = nil, stdout: Output = .capture, stderr: Output = .capture,
        newProcessGroup: Bool = false
    ) throws {
        self.arguments = [executable] + arguments
        isGroupLeader = newProcessGroup
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        var readEnds: [Int32] = []
        var writeEnds: [Int32] = []
        defer { for fd in writeEnds { close(fd) } }
        var logs: [OutputLog] = []
        for (fd, output) in [(Int32(1), stdout), (Int32(2), stderr)] {
            switch output {
            case .capture:
                var fds: [Int32] = [-1, -1]
                // Close-on-exec, so no other child started meanwhile holds our pipe open.
                guard GNUExtensions.pipe2?(&fds, O_CLOEXEC) ?? pipe(&fds) == 0 else {
                    for fd in readEnds { close(fd) }
                    throw HarnessFailure("pipe2 failed: \(String(cString: strerror(errno)))")
                }
                readEnds.append(fds[0])
                writeEnds.append(fds[1])
                posix_spawn_file_actions_adddup2(&actions, fds[1], fd)
                logs.append(OutputLog())
            case .file(let path):
                posix_spawn_file_actions_addopen(&actions, fd, path, O_WRONLY | O_CREAT | O_APPEND, 0o600)
                logs.append(OutputLog(file: path))
            case .discard:
                posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_WRONLY, 0)
                let log = OutputLog()
                log.close()
                logs.append(log)
            }
        }
        // Nothing else of the test process leaks in (sockets, other tests' pipes, store files).
        _ = GNUExtensions.addCloseFrom?(&actions, 3)
        if let directory {
            guard let addChdir = GNUExtensions.addChdir else {
                throw HarnessFailure("this C library cannot start a process in another directory")
            }
            _ = addChdir(&actions, directory)
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // No blocked signals (the test runner blocks some on its threads), default dispositions
        // for the ones a test sends or the child must feel.
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
        if newProcessGroup {
            flags |= POSIX_SPAWN_SETPGROUP
            posix_spawnattr_setpgroup(&attributes, 0)
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawnp(&pid, executable, &actions, &attributes, argv, envp)
        guard result == 0 else {
            for fd in readEnds { close(fd) }
            throw HarnessFailure("cannot start \(executable): \(String(cString: strerror(result)))")
        }
        self.pid = pid
        self.stdout = logs[0]
        self.stderr = logs[1]
        var readers = readEnds.makeIterator()
        for log in logs where log.path == nil && !log.isClosed {
            guard let fd = readers.next() else { break }
            Self.read(fd, into: log)
        }
    }

    /// Stops the child if a test forgot to (SIGKILL: a deinit must not wait long).
    deinit {
        if lock.withLock({ status }) == nil {
            kill(pid, SIGKILL)
            _ = waitForExit(timeout: .seconds(5))
        }
    }

    /// Reads `fd` to its end on a thread of its own.
    private static func read(_ fd: Int32, into log: OutputLog) {
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = Glibc.read(fd, &buffer, buffer.count)
                if count > 0 {
                    log.append(Data(buffer[..<count]))
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            close(fd)
            log.close()
        }
        thread.stackSize = 1 << 18
        thread.start()
    }

    public var description: String { arguments.joined(separator: " ") }

    /// Reaps the child if it has exited (never blocks); its status, or nil while it runs.
    public var exitStatus: Int32? {
        lock.withLock {
            if status == nil {
                var raw: Int32 = 0
                var result: pid_t
                repeat { result = waitpid(pid, &raw, WNOHANG) } while result < 0 && errno == EINTR
                if result == pid {
                    // WIFEXITED / WEXITSTATUS / WTERMSIG spelled out (the C macros are not
                    // imported).
                    status = raw & 0x7f == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
                } else if result < 0 {
                    status = -1  // not ours to reap (ECHILD): gone
                }
            }
            return status
        }
    }

    public var isRunning: Bool { exitStatus == nil }

    /// Waits up to `timeout` times ``testSlowdown`` for the exit; the exit code (128 + n for
    /// signal n), or nil if it still runs. Once exited, also waits (briefly) for its captured
    /// output to end.
    public func wait(timeout: Duration) -> Int32? {
        guard eventually(within: timeout, every: .milliseconds(5), { exitStatus != nil }),
            let status = exitStatus
        else { return nil }
        stdout.waitForEnd(within: .seconds(2))
        stderr.waitForEnd(within: .seconds(2))
        return status
    }

    /// True when the process has exited within `timeout`.
    @discardableResult
    public func waitForExit(timeout: Duration) -> Bool { wait(timeout: timeout) != nil }

    /// Waits for the exit and the end of its output; when it runs over `timeout` (times
    /// ``testSlowdown``) it is killed and this throws.
    public func finish(timeout: Duration) throws -> Execution {
        guard let status = wait(timeout: timeout) else {
            crash()
            throw HarnessFailure(
                "\(self) ran over \(timeout) and was killed; stdout: \(stdout.text) stderr: \(stderr.text)")
        }
        return Execution(
            exitCode: status, stdout: stdout.waitForEnd(), stderr: stderr.waitForEnd(),
            duration: ContinuousClock.now - started)
    }

    /// Sends `signal` by pid while the child has not been reaped.
    public func signal(_ signal: Int32) {
        guard isRunning else { return }
        lock.withLock { sent.append(signal) }
        kill(pid, signal)
    }

    /// Hangs the child as a test's fault (``pauseProcess(_:within:)``): SIGSTOP, then waits
    /// until every thread of it is stopped; whether they all were within `limit`. Resume it
    /// with `signal(SIGCONT)`; ``stop(signal:grace:)`` continues it first.
    @discardableResult
    public func pause(within limit: Duration = .seconds(5)) -> Bool {
        guard isRunning else { return false }
        lock.withLock { sent.append(SIGSTOP) }
        return pauseProcess(pid, within: limit)
    }

    /// The signals ``signal(_:)`` has sent, in order (the harness's own tests read it).
    public var signalsSent: [Int32] { lock.withLock { sent } }

    /// Sends `signal` to the child's whole process group (it must lead one: `newProcessGroup`).
    public func signalGroup(_ signal: Int32) {
        precondition(isGroupLeader, "\(self) does not lead a process group")
        if isRunning { kill(-pid, signal) }
    }

    /// SIGCONT (in case it is stopped), then `signal`, up to `grace` to exit, then SIGKILL; the
    /// exit code. Safe to call twice. The default grace grows with ``testSlowdown``: a sanitized
    /// process among a loaded run's many is slow to exit. A child still there after `grace` is
    /// described on stderr (``HungProcessReport``) before the SIGKILL, unless `reportingHang`
    /// is false (a stop whose short grace is meant to run out).
    ///
    /// SIGCONT goes first, never after: it discards a pending SIGSTOP, and LeakSanitizer's exit
    /// scan stops each thread with `PTRACE_ATTACH`, whose SIGSTOP a late SIGCONT threw away.
    /// The scan then waited forever for a stop that never came; under ASan in CI, `serve`,
    /// `watch` and `on-change` hung that way after a clean shutdown whenever this process was
    /// preempted between the two signals.
    @discardableResult
    public func stop(
        signal: Int32 = SIGTERM, grace: Duration = .seconds(3) * testSlowdown, reportingHang: Bool = true
    ) -> Int32? {
        guard isRunning else { return exitStatus }
        if signal != SIGKILL { self.signal(SIGCONT) }
        self.signal(signal)
        if let status = wait(timeout: grace) { return status }
        if reportingHang { reportHang(after: signal, grace: grace) }
        return crash()
    }

    /// Writes what the child is doing to the test's stderr: it got `signal` and did not end
    /// within `grace`.
    private func reportHang(after signal: Int32, grace: Duration) {
        let report = HungProcessReport.describe(pid)
        FileHandle.standardError.write(
            Data("\(self) did not exit \(grace) after signal \(signal); killing it.\n\(report)\n".utf8))
    }

    /// SIGKILL (the whole group for a group leader) and reap: the crash.
    @discardableResult
    public func crash() -> Int32? {
        if isRunning { kill(isGroupLeader ? -pid : pid, SIGKILL) }
        return wait(timeout: .seconds(10))
    }

    /// Resident memory in KiB (`VmRSS` of /proc/PID/status); nil once it is gone.
    public var residentKilobytes: Int? { ProcessMemory.residentKilobytes(of: pid) }

    /// Runs `executable arguments...` to its end; killed and thrown over after `timeout` (times
    /// ``testSlowdown``).
    public static func run(
        _ executable: String, _ arguments: [String],
        environment: [String: String] = CountriesBinary.environment,
        directory: String? = nil, timeout: Duration = .seconds(15)
    ) throws -> Execution {
        try ChildProcess(executable, arguments, environment: environment, directory: directory)
            .finish(timeout: timeout)
    }

    /// Starts `countries arguments...` (``CountriesBinary/path``).
    public static func countries(
        _ arguments: [String], environment: [String: String] = CountriesBinary.environment,
        directory: String? = nil, stdout: Output = .capture, stderr: Output = .capture
    ) throws -> ChildProcess {
        try ChildProcess(
            CountriesBinary.path, arguments, environment: environment, directory: directory, stdout: stdout,
            stderr: stderr)
    }
}
