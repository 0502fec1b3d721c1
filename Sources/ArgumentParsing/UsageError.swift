/// A command line that could not be parsed, with the usage of the command it was meant for.
public struct UsageError: Error, Sendable, CustomStringConvertible {
    /// The one-line problem, e.g. `Missing expected argument '<target>'`.
    public var message: String
    /// The command the error is about, e.g. `["countries", "toggle"]`.
    public var commandPath: [String]
    /// That command's usage line, e.g. `countries toggle <target> ... [--json]`.
    public var usage: String

    /// Creates an error; prefer `ParsedCommand.usageError(_:)`, which fills in the usage.
    public init(message: String, commandPath: [String], usage: String) {
        self.message = message
        self.commandPath = commandPath
        self.usage = usage
    }

    /// Full text for standard error, as swift-argument-parser prints it (no trailing newline):
    ///
    ///     Error: Missing expected argument '<target>'
    ///     Usage: countries toggle <target> ... [--json]
    ///       See 'countries toggle --help' for more information.
    public var description: String {
        """
        Error: \(message)
        Usage: \(usage)
          See '\(commandPath.joined(separator: " ")) --help' for more information.
        """
    }
}
