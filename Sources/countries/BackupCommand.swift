import ArgumentParsing
import CountriesOptions
import CountriesService

/// `countries backup [--db PATH] FILE`: a consistent, private copy of the store (``StoreBackup``).
struct BackupCommand: BackupDeclaration {

    typealias Options = BackupOptions

    let command: ParsedValues<Options>

    func run() throws -> Int32 {
        let file = command[\.file]
        guard !file.isEmpty else {
            throw command.usageError("Missing expected argument '<file>'")
        }
        let store = command[\.db]
        do {
            let copy = try StoreBackup.take(store: store, to: file, force: command[\.force])
            Output.line(
                "wrote \(file): \(store) at seq \(copy.seq), \(copy.bytes) bytes; a service started on it gives it a new store identity (this one is \(copy.identity))"
            )
            return ExitCode.success
        } catch {
            throw CommandFailure(error)
        }
    }
}

extension CommandFailure {
    /// A backup's failure with the exit code scripts rely on.
    init(_ error: StoreBackupError) {
        let exitCode: Int32
        switch error.code {
        case .noStore: exitCode = ExitCode.noInput
        case .cannotRead: exitCode = ExitCode.ioError
        case .exists, .refused: exitCode = ExitCode.refused
        case .cannotWrite: exitCode = ExitCode.cantCreate
        }
        self.init(message: error.message, exitCode: exitCode)
    }
}
