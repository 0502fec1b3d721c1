/// What the command line asked for.
public enum ParseOutcome: Sendable {
    /// Run the leaf command described by the parsed values.
    case run(ParsedCommand)
    /// Print this help text (it has no trailing newline) to standard output and exit successfully.
    case help(String)
    /// Print the version given to `CommandLineParser.init` and exit successfully.
    case version
}
