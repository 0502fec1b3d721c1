import Foundation
@preconcurrency import Glibc

/// `serve --pidfile PATH`: the process id, for init systems and scripts; removed at a clean exit.
struct PidFile {
    let path: String

    /// Writes this process's id, refusing if another live process already holds the file.
    static func claim(_ path: String) throws -> PidFile {
        if let text = try? String(contentsOfFile: path, encoding: .utf8),
            let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 0, pid != getpid(),
            kill(pid, 0) == 0 || errno == EPERM
        {
            throw CommandFailure(
                message: "\(path) says process \(pid) is running; stop it, or remove the file if it is stale",
                exitCode: ExitCode.unavailable)
        }
        let temporary = path + ".\(getpid()).tmp"
        do {
            try "\(getpid())\n".write(toFile: temporary, atomically: false, encoding: .utf8)
            // rename(2) is atomic: a reader never sees a half-written file.
            guard rename(temporary, path) == 0 else { throw CocoaError(.fileWriteUnknown) }
        } catch {
            unlink(temporary)
            throw CommandFailure(message: "cannot write the pid file \(path)", exitCode: ExitCode.cantCreate)
        }
        return PidFile(path: path)
    }

    /// Removes the file if it still names this process.
    func release() {
        if let text = try? String(contentsOfFile: path, encoding: .utf8),
            Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) == getpid()
        {
            unlink(path)
        }
    }
}
