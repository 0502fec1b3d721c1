import Foundation

/// Figures about a process from /proc.
public enum ProcessMemory {
    /// `VmRSS` of `pid` in KiB.
    public static func residentKilobytes(of pid: pid_t) -> Int? {
        kilobytes(of: pid, "VmRSS")
    }

    /// `VmHWM` of `pid` in KiB: the most it has been resident at once.
    public static func peakResidentKilobytes(of pid: pid_t) -> Int? {
        kilobytes(of: pid, "VmHWM")
    }

    /// A field of /proc/PID/status given in kB.
    private static func kilobytes(of pid: pid_t, _ field: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else {
            return nil
        }
        for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        }
        return nil
    }

    /// CPU time `pid` has used (user + system), from /proc/PID/stat, in clock ticks (1/100 s).
    public static func cpuTicks(of pid: pid_t) -> Int? {
        // After "pid (comm)": state is field 3, utime field 14, stime field 15.
        guard let fields = fieldsAfterName(inStatFile: "/proc/\(pid)/stat"), fields.count > 12,
            let user = Int(fields[11]), let system = Int(fields[12])
        else { return nil }
        return user + system
    }

    /// The fields of a /proc stat file after "pid (comm)", the state first; nil when it cannot
    /// be read. The name may hold spaces and parentheses, so they start after the last ')'.
    static func fieldsAfterName(inStatFile path: String) -> [Substring]? {
        guard let stat = try? String(contentsOfFile: path, encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        return stat[stat.index(after: close)...].split(separator: " ")
    }

    /// Whether `pid` runs exactly the command line saved one word a line in `argumentsFile`
    /// (as `scripts/cluster` saves NAME.args beside NAME.pid). A recorded pid may have been
    /// given to another process since (pid_max is 32,768 here, and a test run starts thousands):
    /// often another test's `countries serve`, the same executable, so only the whole command
    /// line tells them apart. Check this before signalling a pid read from a file.
    public static func runs(_ pid: pid_t, commandLineIn argumentsFile: String) -> Bool {
        guard pid > 0,
            let saved = try? String(contentsOfFile: argumentsFile, encoding: .utf8),
            let running = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline")
        else { return false }
        let expected = saved.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let actual = running.split(separator: 0, omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
        // cmdline ends with a NUL, the file with a newline: both leave one empty word last.
        return expected == actual
    }

    /// The children of `pid` (from /proc/PID/task/PID/children).
    public static func children(of pid: pid_t) -> [pid_t] {
        let list = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
        return list.split(separator: " ").compactMap { pid_t($0) }
    }

    /// Whether `pid` is gone or a zombie.
    public static func isGone(_ pid: pid_t) -> Bool {
        guard let state = fieldsAfterName(inStatFile: "/proc/\(pid)/stat")?.first else { return true }
        return state == "Z"
    }
}
