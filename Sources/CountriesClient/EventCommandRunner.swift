import CountriesCore
import Foundation

/// Runs the user's command of `countries on-change` for one event (or a reset), waits for it,
/// and reports a failure without stopping.
///
/// The command gets `COUNTRIES_SEQ`, `COUNTRIES_EVENT` (`changed`, `added`, `removed`, `reset`),
/// `COUNTRY_INDEX`, `COUNTRY_NAME`, `COUNTRY_VISITED` in its environment and the event's JSON
/// on its stdin.
///
/// `COUNTRY_NAME` is the name as the service stored it (the subscription drops events whose
/// names break the service's rules, so it holds no control character). The JSON on stdin has
/// what a terminal must not get raw escaped as JSON escapes (``VisibleText/escapedJSON(_:)``):
/// it reads back as the same name, and a command that passes it on to a terminal is safe.
public struct EventCommandRunner {
    /// The command (a bare name is looked up on PATH).
    public let executable: String
    /// Its arguments.
    public let arguments: [String]
    /// Told what went wrong with a run (it could not start, it failed, it was killed).
    public let report: (String) -> Void

    /// Creates a runner.
    public init(executable: String, arguments: [String], report: @escaping (String) -> Void) {
        self.executable = executable
        self.arguments = arguments
        self.report = report
    }

    /// How a run ended, for the caller's cursor and loop.
    public struct Ending: Equatable, Sendable {
        /// Whether the run is over for its seq: the command ended by itself (whatever its
        /// status) or could not start (said on stderr, as any failure). False when a second
        /// signal ended it: its seq is not done, and a cursor runs it again.
        public var finished: Bool
        /// Whether SIGINT or SIGTERM came while it ran: the caller stops after it.
        public var stopRequested: Bool
    }

    /// Runs the command for one event. `takeStopSignals` returns how many stop signals came
    /// since it was last called (and takes them): the first while the command runs is said on
    /// stderr and the command is left to finish; the second sends it SIGTERM. A command ended
    /// by a signal while a stop was asked has not done its seq (``Ending/finished`` false).
    @discardableResult
    public func run(event: Event, takeStopSignals: () -> Int = { 0 }) -> Ending {
        var environment = [
            "COUNTRIES_SEQ": "\(event.seq)",
            "COUNTRIES_EVENT": Self.name(of: event),
        ]
        if let row = event.country {
            environment["COUNTRY_INDEX"] = "\(row.index)"
            environment["COUNTRY_NAME"] = row.name
            environment["COUNTRY_VISITED"] = row.visited ? "true" : "false"
        }
        return launch(
            environment: environment, input: VisibleText.escapedJSON(event.encoded()), seq: event.seq,
            takeStopSignals: takeStopSignals)
    }

    /// Runs the command once for the whole list, as a `reset` event (stop signals as in
    /// ``run(event:takeStopSignals:)``).
    @discardableResult
    public func run(reset state: CountriesState, takeStopSignals: () -> Int = { 0 }) -> Ending {
        let event = Event(seq: state.seq, kind: .reset(state.rows))
        return launch(
            environment: ["COUNTRIES_SEQ": "\(state.seq)", "COUNTRIES_EVENT": "reset"],
            input: VisibleText.escapedJSON(event.encoded()), seq: state.seq, takeStopSignals: takeStopSignals)
    }

    /// How often a running command's wait looks for a stop signal.
    static let stopPollInterval: DispatchTimeInterval = .milliseconds(50)

    private static func name(of event: Event) -> String {
        switch event.kind {
        case .changed: return "changed"
        case .added: return "added"
        case .removed: return "removed"
        case .reset: return "reset"
        }
    }

    private func launch(
        environment extra: [String: String], input: Data, seq: UInt64, takeStopSignals: () -> Int
    ) -> Ending {
        let process = Process()
        let path = resolve(executable)
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        // Variables of an earlier event must not leak into one that has no row.
        for key in ["COUNTRY_INDEX", "COUNTRY_NAME", "COUNTRY_VISITED"] { environment[key] = nil }
        environment.merge(extra) { _, new in new }
        process.environment = environment
        let stdin = Pipe()
        process.standardInput = stdin
        // Not `waitUntilExit()`: it turns the calling thread's run loop until Foundation posts the
        // exit there, which on Linux has been reported never to come on a thread other than the
        // main one. The handler comes from Foundation's own watch of its children; set before
        // `run()`, it cannot miss a command that exits at once.
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        do {
            try process.run()
        } catch {
            report("on-change: cannot run \(executable): \(error.localizedDescription)")
            return Ending(finished: true, stopRequested: takeStopSignals() > 0)
        }
        var body = input
        body.append(0x0A)
        // The command may not read its stdin; a closed pipe is not our failure.
        try? stdin.fileHandleForWriting.write(contentsOf: body)
        try? stdin.fileHandleForWriting.close()
        // A stop waits for the command (its seq is then done), and says so: a command that
        // takes long made `kill` look ignored. A second stop ends the command.
        var stops = 0
        var terminated = false
        while exited.wait(timeout: .now() + Self.stopPollInterval) == .timedOut {
            let arrived = takeStopSignals()
            guard arrived > 0, !terminated else { continue }
            stops += arrived
            if stops >= 2 {
                terminated = true
                report("on-change: stopping \(executable) (seq \(seq)) with SIGTERM; seq \(seq) is not done")
                process.terminate()
            } else {
                report(
                    "on-change: stopping once \(executable) (seq \(seq)) finishes; send the signal again to stop it now"
                )
            }
        }
        stops += takeStopSignals()
        if terminated { return Ending(finished: false, stopRequested: true) }
        // Ctrl-C or a service manager's stop reaches the command too: killed by it, the command
        // did not do its seq, which a cursor then runs again.
        let interrupted = stops > 0 && process.terminationReason == .uncaughtSignal
        if process.terminationReason == .uncaughtSignal {
            report(
                "on-change: \(executable) was killed by signal \(process.terminationStatus) (seq \(seq))"
                    + (interrupted ? "; seq \(seq) is not done" : ""))
        } else if process.terminationStatus != 0 {
            report(
                "on-change: \(executable) exited with status \(process.terminationStatus) (seq \(seq))")
        }
        return Ending(finished: !interrupted, stopRequested: stops > 0)
    }

    /// Why the command cannot be run at all, found before the first event.
    public enum Unrunnable: Error, Equatable, CustomStringConvertible {
        /// No such file (a path), or no such command on PATH (a bare name).
        case notFound(String)
        /// The file is there but is a directory or not executable.
        case notExecutable(String)

        public var description: String {
            switch self {
            case .notFound(let name):
                name.contains("/")
                    ? "on-change: \(name): no such file; give the path of a program or script to run for each change"
                    : "on-change: \(name): command not found on PATH; give its path, or install it"
            case .notExecutable(let path):
                "on-change: \(path) is not an executable file; make it executable (chmod +x) or give another"
            }
        }
    }

    /// Throws when the command cannot be run (no such file or command, not executable), so
    /// on-change fails at start instead of at every event.
    public func checkRunnable() throws(Unrunnable) {
        let path = resolve(executable)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw .notFound(executable)
        }
        guard !isDirectory.boolValue, FileManager.default.isExecutableFile(atPath: path) else {
            throw .notExecutable(path)
        }
    }

    /// A bare name is looked up on PATH, as a shell would.
    private func resolve(_ name: String) -> String {
        guard !name.contains("/") else { return name }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return name
    }
}
