import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A detached tmux session on a private tmux server (its own socket), both named uniquely: read
/// the screen, type keys. ``kill()`` it in a `defer` (the last reference going does it too): the
/// session's processes are stopped by pid, then the server.
public final class TmuxSession: @unchecked Sendable {
    // @unchecked: `panePID` is only touched under `lock`.
    public let socketName = "ct-\(UUID().uuidString.prefix(8).lowercased())"
    public let name = "s-\(UUID().uuidString.prefix(8).lowercased())"
    private let lock = NSLock()
    private var panePID: pid_t?

    /// Whether tmux is installed.
    public static let isAvailable: Bool =
        (try? ChildProcess.run("tmux", ["-V"], environment: tmuxEnvironment))?
        .exitCode == 0

    /// tmux runs with the test's own environment: the pane inherits it from the server.
    private static let tmuxEnvironment = ProcessInfo.processInfo.environment

    /// Starts `shellCommand` (run by `sh -c`) in a detached `width`x`height` session, in
    /// `directory` if given.
    public init(_ shellCommand: String, directory: String? = nil, width: Int = 100, height: Int = 30) throws {
        var arguments = ["new-session", "-d", "-s", name, "-x", "\(width)", "-y", "\(height)"]
        if let directory { arguments += ["-c", directory] }
        let status = tmux(arguments + [shellCommand])
        guard status == 0 else { throw HarnessFailure("tmux new-session failed with \(status)") }
        let pane = query(["list-panes", "-t", name, "-F", "#{pane_pid}"])
        lock.withLock { panePID = pid_t(pane.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    deinit { kill() }

    /// The pid of the pane's process (the shell running the command), while the session lives.
    public var panePid: pid_t? { lock.withLock { panePID } }

    /// The visible pane, lines separated by newlines.
    public func capture() -> String { query(["capture-pane", "-p", "-t", name]) }

    /// Types keys (tmux key names: `j`, `Space`, `q`, `PageDown`).
    public func send(_ keys: String...) {
        tmux(["send-keys", "-t", name] + keys)
    }

    /// Polls the pane until `condition` holds (up to `limit`); whether it held, and the last
    /// capture.
    public func waitForScreen(upTo limit: Duration = .seconds(5), _ condition: (String) -> Bool) -> (
        Bool, String
    ) {
        var screen = ""
        let held = eventually(within: limit) {
            screen = capture()
            return condition(screen)
        }
        return (held, screen)
    }

    /// Kills the session; its processes (the pane's shell and its children) are stopped by pid:
    /// one stuck on its way out survives `kill-session`'s SIGHUP, and gets SIGTERM, then SIGKILL.
    /// Then the private server goes, with its socket file. Safe to call twice.
    public func kill() {
        let shell = lock.withLock {
            defer { panePID = nil }
            return panePID
        }
        let pids = shell.map { [$0] + ProcessMemory.children(of: $0) } ?? []
        tmux(["kill-session", "-t", name])
        let alive = { pids.filter { Glibc.kill($0, 0) == 0 && !ProcessMemory.isGone($0) } }
        if !eventually(within: .seconds(2), { alive().isEmpty }) {
            for pid in alive() { Glibc.kill(pid, SIGTERM) }
            if !eventually(within: .seconds(2), { alive().isEmpty }) {
                for pid in alive() { Glibc.kill(pid, SIGKILL) }
            }
        }
        tmux(["kill-server"])
        // The server leaves its socket file behind; it is ours, so it goes too.
        let directory = ProcessInfo.processInfo.environment["TMUX_TMPDIR"] ?? "/tmp"
        unlink("\(directory)/tmux-\(getuid())/\(socketName)")
    }

    /// Runs `tmux -L SOCKET ARGS` with its output discarded (a server that `new-session` starts
    /// must not inherit a pipe of ours); its exit code, or -1. Bounded: killed after 10 s.
    @discardableResult
    private func tmux(_ arguments: [String]) -> Int32 {
        guard
            let child = try? ChildProcess(
                "tmux", ["-L", socketName] + arguments, environment: Self.tmuxEnvironment, stdout: .discard,
                stderr: .discard)
        else { return -1 }
        return child.wait(timeout: .seconds(10)) ?? child.crash() ?? -1
    }

    /// Runs `tmux -L SOCKET ARGS` and returns its stdout ("" on failure).
    private func query(_ arguments: [String]) -> String {
        (try? ChildProcess.run(
            "tmux", ["-L", socketName] + arguments, environment: Self.tmuxEnvironment, timeout: .seconds(10)))?
            .stdout ?? ""
    }
}
