import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Hangs process `pid` as a test's fault: SIGSTOP, then waits (``eventually(within:every:_:)``)
/// until every one of its threads is stopped; whether they all were within `limit`.
///
/// `kill` only queues the signal. A thread stops on its way back to user space, so one blocked
/// in the kernel (an `fdatasync` of etcd's log on a disk loaded by a sanitized run) goes on
/// until its call returns, and a test that acts at once can still be answered by the process
/// it thinks hung (CI saw an etcd member answer two reads after its SIGSTOP).
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
        // `pid (name) S ...`: the name may hold spaces and parentheses, so read after the last ')'.
        guard let stat = try? String(contentsOfFile: "\(tasks)/\(thread)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        return stat[stat.index(after: close)...].first { $0 != " " }
    }
}
