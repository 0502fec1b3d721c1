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

    /// Runs the command for one event.
    public func run(event: Event) {
        var environment = [
            "COUNTRIES_SEQ": "\(event.seq)",
            "COUNTRIES_EVENT": Self.name(of: event),
        ]
        if let row = event.country {
            environment["COUNTRY_INDEX"] = "\(row.index)"
            environment["COUNTRY_NAME"] = row.name
            environment["COUNTRY_VISITED"] = row.visited ? "true" : "false"
        }
        launch(environment: environment, input: VisibleText.escapedJSON(event.encoded()), seq: event.seq)
    }

    /// Runs the command once for the whole list, as a `reset` event.
    public func run(reset state: CountriesState) {
        let event = Event(seq: state.seq, kind: .reset(state.rows))
        launch(
            environment: ["COUNTRIES_SEQ": "\(state.seq)", "COUNTRIES_EVENT": "reset"],
            input: VisibleText.escapedJSON(event.encoded()), seq: state.seq)
    }

    private static func name(of event: Event) -> String {
        switch event.kind {
        case .changed: return "changed"
        case .added: return "added"
        case .removed: return "removed"
        case .reset: return "reset"
        }
    }

    private func launch(environment extra: [String: String], input: Data, seq: UInt64) {
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
            return
        }
        var body = input
        body.append(0x0A)
        // The command may not read its stdin; a closed pipe is not our failure.
        try? stdin.fileHandleForWriting.write(contentsOf: body)
        try? stdin.fileHandleForWriting.close()
        exited.wait()
        if process.terminationReason == .uncaughtSignal {
            report(
                "on-change: \(executable) was killed by signal \(process.terminationStatus) (seq \(seq))")
        } else if process.terminationStatus != 0 {
            report(
                "on-change: \(executable) exited with status \(process.terminationStatus) (seq \(seq))")
        }
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
