import ArgumentParsing
import ZeroMQ

/// `countries keygen NAME`: writes NAME.key (mode 0600) and NAME.pub (``KeyFiles``).
struct KeygenCommand: Subcommand {
    static let name = "keygen"
    static let abstract = "Make a CURVE key pair: NAME.key (secret, mode 0600) and NAME.pub."
    static let discussion: String? = """
        Give NAME.pub to the other side: a client's goes in the service's --allow directory, the \
        service's is every client's --server-key. Keep NAME.key private.
        """
    static var options: Options { Options() }

    /// The options of `countries keygen`.
    struct Options: OptionGroup {
        let name = Argument(
            "name", help: "The file name to write, without extension (may include a directory).")
        let force = Option(flag: "force", help: "Overwrite existing key files.")
    }

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
