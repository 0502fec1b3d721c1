import ArgumentParsing
import CountriesOptions
import ZeroMQ

/// `countries keygen NAME`: writes NAME.key (mode 0600) and NAME.pub (``KeyFiles``).
struct KeygenCommand: KeygenDeclaration {

    typealias Options = KeygenOptions

    let command: ParsedValues<Options>

    func run() throws -> Int32 {
        let name = command[\.name]
        guard !name.isEmpty else {
            throw command.usageError("Missing expected argument '<name>'")
        }
        let publicKey = try KeyFiles.generate(name: name, force: command[\.force])
        Output.line(
            "wrote \(name).key (secret: keep it private) and \(name).pub (public: \(publicKey))")
        return ExitCode.success
    }
}

extension CommandFailure {
    /// A key file's failure with the exit code scripts rely on (main.swift maps every
    /// ``KeyFileError`` with this).
    init(_ error: KeyFileError) {
        let exitCode: Int32
        switch error.code {
        case .unusable: exitCode = ExitCode.config
        case .exists: exitCode = ExitCode.refused
        case .cannotWrite: exitCode = ExitCode.cantCreate
        case .keyGeneration: exitCode = ExitCode.software
        }
        self.init(message: error.message, exitCode: exitCode)
    }
}
