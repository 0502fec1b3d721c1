import ArgumentParsing
import CountriesCore
import CountriesService

/// `countries backup [--db PATH] FILE`: a consistent, private copy of the store (``StoreBackup``).
struct BackupCommand: Subcommand {
    static let name = "backup"
    static let abstract =
        "Copy the SQLite store to FILE while the service serves it (SQLite's online backup)."
    static let discussion: String? = """
        The copy is one consistent state (the seq it prints), private (mode 0600) and marked: a \
        service started on it gives it a new store identity, so subscribers start over rather than \
        take it for the store it was copied from. To restore, stop the service, move the copy to \
        the --db path and start it. Replicated mode (--etcd) keeps no SQLite store: use \
        `etcdctl snapshot save` (docs/HA.md, "Backup and restore").
        """
    static var options: Options { Options() }

    /// The options of `countries backup`.
    struct Options: OptionGroup {
        // The same flag and default as `serve --db`: run from the service's directory, a backup
        // finds the store the service serves.
        let db = Option(
            "db", value: "path", help: "The SQLite store to copy: the --db the service was started with.",
            default: Defaults.storePath, environment: "COUNTRIES_DB")
        let file = Argument(
            "file", help: "The copy to write (mode 0600); never an existing file unless --force.")
        let force = Option(flag: "force", help: "Replace an existing regular file (never a link).")
    }

    let command: ParsedValues<Options>

    func run() throws -> Int32 {
        let file = command[\.file]
        guard !file.isEmpty else {
            throw command.usageError("Missing expected argument '<file>'")
        }
        let store = command[\.db]
        let copy = try StoreBackup.take(store: store, to: file, force: command[\.force])
        Output.line(
            "wrote \(file): \(store) at seq \(copy.seq), \(copy.bytes) bytes; a service started on it gives it a new store identity (this one is \(copy.identity))"
        )
        return ExitCode.success
    }
}
