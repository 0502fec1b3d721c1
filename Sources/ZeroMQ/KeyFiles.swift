import Foundation
@preconcurrency import Glibc
import SystemSupport

/// Reading and writing CURVE key files (CZMQ certificate format, see `CurveCertificate`), for the
/// service, the relay, the clients and `countries keygen` (docs/SECURITY.md).
public enum KeyFiles {
    /// Reads a certificate file, with a message that names the file when it is not one.
    /// A secret key file open to group or others is refused, as ssh refuses such a key.
    public static func read(_ path: String, wantSecret: Bool) throws(KeyFileError) -> CurveCertificate {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw KeyFileError(.unusable, "cannot read the key file \(path)")
        }
        let certificate: CurveCertificate
        do {
            certificate = try CurveCertificate.parse(text)
        } catch {
            throw KeyFileError(.unusable, "\(path) is not a CURVE key file: \(error.description)")
        }
        if wantSecret && certificate.secretKey == nil {
            throw KeyFileError(
                .unusable,
                "\(path) holds only a public key; give the secret .key file made by `countries keygen`")
        }
        if wantSecret {
            // After the parse, so a .pub given by mistake is told so, not told to chmod.
            do {
                try PrivateFiles.checkSecretKey(path)
            } catch {
                throw KeyFileError(.unusable, error.description)
            }
        }
        return certificate
    }

    /// Makes a new key pair and writes it as NAME.key (mode 0600) and NAME.pub (mode 0644);
    /// returns the public key. Existing files are kept unless `force`.
    public static func generate(name: String, force: Bool) throws(KeyFileError) -> String {
        let secretPath = name + ".key"
        let publicPath = name + ".pub"
        for path in [secretPath, publicPath] where !force && FileManager.default.fileExists(atPath: path) {
            throw KeyFileError(
                .exists,
                "\(path) already exists; pass --force to overwrite it (clients holding the old key will be refused)"
            )
        }
        let pair: CurveKeyPair
        do {
            pair = try Curve.generateKeyPair()
        } catch {
            throw KeyFileError(.keyGeneration, error.description)
        }
        let certificate = CurveCertificate(publicKey: pair.publicKey, secretKey: pair.secretKey)
        let label = (name as NSString).lastPathComponent
        try write(certificate.secretText(name: label), to: secretPath, mode: 0o600)
        try write(certificate.publicText(name: label), to: publicPath, mode: 0o644)
        return pair.publicKey
    }

    /// Creates the file with its final mode from the start, so the secret is never readable by
    /// others.
    private static func write(_ text: String, to path: String, mode: mode_t) throws(KeyFileError) {
        unlink(path)
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else {
            throw KeyFileError(.cannotWrite, "cannot write \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        fchmod(fd, mode)  // whatever the umask said
        guard FileDescriptorOutput.write(text, to: fd) else {
            throw KeyFileError(.cannotWrite, "cannot write \(path): \(String(cString: strerror(errno)))")
        }
    }
}
