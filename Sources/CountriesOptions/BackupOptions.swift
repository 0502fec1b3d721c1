import ArgumentParsing
import CountriesCore
import SystemSupport

/// The options of `countries backup`.
public struct BackupOptions: OptionGroup {
    // The same flag and default as `serve --db`: run from the service's directory, a backup
    // finds the store the service serves.
    public let db = Option(
        "db", value: "path", help: "The SQLite store to copy: the --db the service was started with.",
        default: Defaults.storePath, environment: "COUNTRIES_DB")
    public let file = Argument(
        "file", help: "The copy to write (mode 0600); never an existing file unless --force.")
    public let force = Option(flag: "force", help: "Replace an existing regular file (never a link).")

    public init() {}
}
