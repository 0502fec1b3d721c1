/// What a finished process left behind.
public struct Execution: CustomStringConvertible, Sendable {
    /// The exit code; 128 + n for a process killed by signal n (as a shell reports it).
    public var exitCode: Int32
    public var stdout: String
    public var stderr: String
    /// Wall-clock time from launch to exit.
    public var duration: Duration

    public init(exitCode: Int32, stdout: String, stderr: String, duration: Duration) {
        self.exitCode = exitCode
        self.stdout = stdout
        self.stderr = stderr
        self.duration = duration
    }

    /// Non-empty stdout lines.
    public var lines: [String] { stdout.split(separator: "\n").map(String.init) }

    public var description: String {
        "exit \(exitCode) after \(duration)\n--- stdout\n\(stdout)--- stderr\n\(stderr)---"
    }
}

/// A failure of the test harness itself: a process that would not start or ran over its time.
public struct HarnessFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
