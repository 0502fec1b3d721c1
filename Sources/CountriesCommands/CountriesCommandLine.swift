import ArgumentParsing

/// The whole command line of `countries`: the root's help and the registry of subcommands.
/// Each subcommand is one type, in one file, that holds its name, help, options and run; the
/// spec tree, the help and the dispatch all come from this one list, so a subcommand that is
/// listed runs.
public enum CountriesCommandLine {
    /// What `--version` prints and `status` reports.
    public static let version = "0.1.0"

    /// Every subcommand, in the order help lists them.
    public static var registry: SubcommandRegistry {
        SubcommandRegistry(
            name: "countries",
            abstract: "A list of countries with a visited flag, served over ZeroMQ.",
            discussion: """
                Run the service with `countries serve`, then change and watch the list from any terminal \
                or script. Exit codes: 0 success, 1 the service refused the command, 64 usage error, \
                69 nothing listens or no reply from the service, 75 a change's outcome is unknown (send it again with \
                the --id it printed: it is applied at most once). Less often: 65 a seed or cursor file that is not \
                valid, 66 no seed file or store to back up, 70 a bug in countries, 73 a file that cannot be written or a store \
                another serve holds, 74 a store that cannot be opened, read or written, 78 a key file that cannot \
                be used, 126 and 127 on-change's command not executable or not there.
                """,
            subcommands: [
                ServeCommand.self, ListCommand.self, GetCommand.self, CountCommand.self, ToggleCommand.self,
                SetCommand.self, AddCommand.self, RemoveCommand.self, ResetCommand.self, HistoryCommand.self,
                StatusCommand.self, EventsCommand.self, WatchCommand.self, SelectCommand.self,
                OnChangeCommand.self, WebCommand.self, KeygenCommand.self, RelayCommand.self,
                BackupCommand.self, CompletionCommand.self, ManCommand.self,
            ])
    }

    /// The parser of the whole command line; the help, the completion scripts and the man page
    /// all come from its specs.
    public static var parser: CommandLineParser { CommandLineParser(root: root, version: version) }

    /// The spec tree the parser reads.
    public static var root: CommandSpec { registry.root }
}

extension CountriesCommandLine {
    /// Runs the subcommand `command` (parsed with ``parser``) is for; returns its exit status.
    /// What it throws ends the process as ``ExitCode/failure(for:)`` says.
    public static func run(_ command: ParsedCommand) throws -> Int32 {
        try registry.make(command).run()
    }
}
