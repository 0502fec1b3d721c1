import CountriesService
import Foundation
@preconcurrency import Glibc

/// `serve --pidfile PATH`: the process id, for init systems and scripts; removed at a clean exit.
///
/// Held with flock for the life of the process (a ``LockFile``): claiming it is one atomic
/// step, a second service is refused while the first lives, and the stale file a SIGKILL
/// leaves is taken over.
struct PidFile {
    let file: LockFile

    /// Takes the file and writes this process's id into it, refusing (exit 73, naming the
    /// holder's pid) when another live process holds it.
    static func claim(_ path: String) throws -> PidFile {
        do {
            // Readable by all, as pid files are: it holds only a number.
            let file = try LockFile.acquire(path, mode: 0o644)
            file.write("\(getpid())\n")
            return PidFile(file: file)
        } catch .held(_, let holder) {
            let pid = holder.trimmingCharacters(in: .whitespacesAndNewlines)
            throw CommandFailure(
                message:
                    "the pid file \(path) is held by process \(pid.isEmpty ? "(unknown)" : pid), a running countries serve; stop it first, or pass another --pidfile",
                exitCode: ExitCode.cantCreate)
        } catch .cannotCreate(_, let number) {
            throw CommandFailure(
                message: "cannot write the pid file \(path): \(String(cString: strerror(number)))",
                exitCode: ExitCode.cantCreate)
        }
    }

    /// Removes the file and drops the lock.
    func release() {
        file.release()
    }
}
