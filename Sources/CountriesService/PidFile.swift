import Foundation
@preconcurrency import Glibc

/// `serve --pidfile PATH`: the process id, for init systems and scripts; removed at a clean exit.
///
/// Held with flock for the life of the process (a ``LockFile``): claiming it is one atomic
/// step, a second service is refused while the first lives, and the stale file a SIGKILL
/// leaves is taken over.
public struct PidFile {
    private let file: LockFile

    /// Why the pid file could not be claimed; the description says what to do.
    public struct ClaimError: Error, CustomStringConvertible {
        /// What went wrong and what to do.
        public var description: String
    }

    /// Takes the file and writes this process's id into it, refusing (naming the holder's pid)
    /// when another live process holds it.
    public static func claim(_ path: String) throws(ClaimError) -> PidFile {
        do {
            // Readable by all, as pid files are: it holds only a number.
            let file = try LockFile.acquire(path, mode: 0o644)
            file.write("\(getpid())\n")
            return PidFile(file: file)
        } catch {
            switch error {
            case .held(_, let holder):
                let pid = holder.trimmingCharacters(in: .whitespacesAndNewlines)
                throw ClaimError(
                    description:
                        "the pid file \(path) is held by process \(pid.isEmpty ? "(unknown)" : pid), a running countries serve; stop it first, or pass another --pidfile"
                )
            case .cannotCreate(_, let number):
                throw ClaimError(
                    description: "cannot write the pid file \(path): \(String(cString: strerror(number)))")
            }
        }
    }

    /// Removes the file and drops the lock.
    public func release() {
        file.release()
    }
}
