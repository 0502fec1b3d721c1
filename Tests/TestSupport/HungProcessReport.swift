import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// What a process that does not exit is doing, for the log of the test that gave up on it:
/// each thread's name, state, kernel wait channel and system call from /proc, then gdb's
/// backtraces when gdb is installed. Taken before the SIGKILL that ends the process, so an
/// intermittent hang seen only in CI leaves its stacks behind.
public enum HungProcessReport {
    /// The report for `pid`; a line saying why when /proc has nothing.
    public static func describe(_ pid: pid_t) -> String {
        let tracer = statusLine("/proc/\(pid)/status", "TracerPid:").replacingOccurrences(of: "\t", with: " ")
        var lines = ["threads of \(pid) that did not exit (\(tracer)):"]
        let taskDirectory = "/proc/\(pid)/task"
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: taskDirectory)) ?? []
        for task in tasks.sorted(by: { (Int($0) ?? 0) < (Int($1) ?? 0) }) {
            let path = "\(taskDirectory)/\(task)"
            let name = read("\(path)/comm")
            lines.append(
                "  \(task) \(name): \(statusLine("\(path)/status", "State:")), wchan \(read("\(path)/wchan")), "
                    + "syscall \(read("\(path)/syscall"))")
        }
        if tasks.isEmpty {
            lines.append("  (no /proc entry: it is gone)")
        } else if let gdb = backtraces(pid) {
            lines.append(gdb)
        }
        return lines.joined(separator: "\n")
    }

    /// `gdb -batch -ex 'thread apply all bt'` on `pid`, bounded to 30 s; nil without gdb.
    private static func backtraces(_ pid: pid_t) -> String? {
        let gdb = "/usr/bin/gdb"
        guard access(gdb, X_OK) == 0 else { return nil }
        let run = try? ChildProcess.run(
            gdb, ["-p", "\(pid)", "-batch", "-nx", "-ex", "thread apply all bt 30"],
            environment: ["PATH": "/usr/bin:/bin"], timeout: .seconds(30))
        guard let run else { return "  (gdb did not answer in 30 s)" }
        return run.stdout + run.stderr
    }

    /// The line of a /proc status file that starts with `field`; `field ?` when there is none.
    private static func statusLine(_ path: String, _ field: String) -> String {
        read(path).split(separator: "\n").first { $0.hasPrefix(field) }.map(String.init) ?? "\(field) ?"
    }

    private static func read(_ path: String) -> String {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "?")
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
