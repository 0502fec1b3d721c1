import ArgumentParsing
import CountriesClient
import CountriesService
import Foundation
@preconcurrency import Glibc
import SystemSupport
import ZeroMQ

/// Reading and writing CURVE key files (CZMQ certificate format, see `CurveCertificate`).
enum KeyFiles {
    /// Reads a certificate file, with a message that names the file when it is not one.
    /// A secret key file open to group or others is refused, as ssh refuses such a key.
    static func read(_ path: String, wantSecret: Bool) throws -> CurveCertificate {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw CommandFailure(message: "cannot read the key file \(path)", exitCode: ExitCode.config)
        }
        let certificate: CurveCertificate
        do {
            certificate = try CurveCertificate.parse(text)
        } catch {
            throw CommandFailure(
                message: "\(path) is not a CURVE key file: \(error.description)", exitCode: ExitCode.config)
        }
        if wantSecret && certificate.secretKey == nil {
            throw CommandFailure(
                message:
                    "\(path) holds only a public key; give the secret .key file made by `countries keygen`",
                exitCode: ExitCode.config)
        }
        if wantSecret {
            // After the parse, so a .pub given by mistake is told so, not told to chmod.
            do {
                try PrivateFiles.checkSecretKey(path)
            } catch {
                throw CommandFailure(message: error.description, exitCode: ExitCode.config)
            }
        }
        return certificate
    }

    /// The client's CURVE settings from `--curve-key` and `--server-key` (both or neither).
    static func clientSecurity(curveKey: String?, serverKey: String?, command: ParsedCommand) throws
        -> ClientSecurity?
    {
        switch (curveKey, serverKey) {
        case (nil, nil):
            return nil
        case (.some, nil):
            throw command.usageError("--curve-key needs --server-key (the service's .pub file)")
        case (nil, .some):
            throw command.usageError("--server-key needs --curve-key (this client's .key file)")
        case (.some(let curveKey), .some(let serverKey)):
            let own = try read(curveKey, wantSecret: true)
            let server = try read(serverKey, wantSecret: false)
            return ClientSecurity(
                publicKey: own.publicKey, secretKey: own.secretKey ?? "", serverKey: server.publicKey)
        }
    }
}

/// `countries keygen NAME`: writes NAME.key (mode 0600) and NAME.pub.
struct KeygenCommand: Subcommand {
    static let name = "keygen"
    static let abstract = "Make a CURVE key pair: NAME.key (secret, mode 0600) and NAME.pub."
    static let discussion: String? = """
        Give NAME.pub to the other side: a client's goes in the service's --allow directory, the \
        service's is every client's --server-key. Keep NAME.key private.
        """

    struct Options: OptionGroup {
        let name = Argument(
            "name", help: "The file name to write, without extension (may include a directory).")
        let force = Option(flag: "force", help: "Overwrite existing key files.")
    }
    static var options: Options { Options() }

    let command: ParsedValues<Options>

    func run() throws -> Int32 {
        let name = command[\.name]
        guard !name.isEmpty else {
            throw command.usageError("Missing expected argument '<name>'")
        }
        let secretPath = name + ".key"
        let publicPath = name + ".pub"
        let force = command[\.force]
        for path in [secretPath, publicPath] where !force && FileManager.default.fileExists(atPath: path) {
            throw CommandFailure(
                message:
                    "\(path) already exists; pass --force to overwrite it (clients holding the old key will be refused)",
                exitCode: ExitCode.refused)
        }
        let pair = try Curve.generateKeyPair()
        let certificate = CurveCertificate(publicKey: pair.publicKey, secretKey: pair.secretKey)
        let label = (name as NSString).lastPathComponent
        try write(certificate.secretText(name: label), to: secretPath, mode: 0o600)
        try write(certificate.publicText(name: label), to: publicPath, mode: 0o644)
        Output.line(
            "wrote \(secretPath) (secret: keep it private) and \(publicPath) (public: \(pair.publicKey))")
        return ExitCode.success
    }

    /// Creates the file with its final mode from the start, so the secret is never readable by others.
    private func write(_ text: String, to path: String, mode: mode_t) throws {
        unlink(path)
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else {
            throw CommandFailure(
                message: "cannot write \(path): \(String(cString: strerror(errno)))",
                exitCode: ExitCode.cantCreate)
        }
        defer { close(fd) }
        fchmod(fd, mode)  // whatever the umask said
        guard FileDescriptorOutput.write(text, to: fd) else {
            throw CommandFailure(
                message: "cannot write \(path): \(String(cString: strerror(errno)))",
                exitCode: ExitCode.cantCreate)
        }
    }
}
