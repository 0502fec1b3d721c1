import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Hangs process `pid` as a test's fault: SIGSTOP, then waits (``eventually(within:every:_:)``)
/// until every one of its threads is stopped; whether they all were within `limit`.
///
/// `kill` only queues the signal, and each thread stops on its own way back to user space. CI
/// once saw an etcd member answer two reads right after its SIGSTOP, on a machine loaded by
/// two sanitized runs (why is not proven); a test that waits here acts on a process known hung.
@discardableResult
public func pauseProcess(_ pid: pid_t, within limit: Duration = .seconds(5)) -> Bool {
    // Never 0 or below: `kill` would stop a whole process group, or every process there is.
    guard pid > 0 else { return false }
    kill(pid, SIGSTOP)
    return eventually(within: limit, every: .milliseconds(5)) {
        let states = threadStates(of: pid)
        return !states.isEmpty && states.allSatisfy { $0 == "T" || $0 == "t" }
    }
}

/// The scheduler state of each thread of `pid` (`R`, `S`, `D`, `T`...), from /proc; empty when
/// the process is gone.
public func threadStates(of pid: pid_t) -> [Character] {
    let tasks = "/proc/\(pid)/task"
    let threads = (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? []
    return threads.compactMap { thread in
        ProcessMemory.fieldsAfterName(inStatFile: "\(tasks)/\(thread)/stat")?.first?.first
    }
}
