#if canImport(Glibc)
    @preconcurrency import Glibc
#else
    import Darwin
#endif

/// The process's limit on open file descriptors (`RLIMIT_NOFILE`), which bounds how many
/// connections a server can hold.
public enum DescriptorLimit {
    /// Raises the soft limit to the hard one and returns the soft limit now in force. A server
    /// whose peers each hold a connection should not stop at a shell's default soft limit
    /// (1,024) while the hard one allows more: libzmq 4.3 aborts the process when an ipc
    /// accept finds no descriptor left.
    public static func raiseToHardLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1_024 }
        return raise(toAtLeast: Int(clamping: limit.rlim_max))
    }

    /// Raises the soft limit to at least `wanted` where the hard limit allows, and returns the
    /// soft limit now in force (never lowers it).
    public static func raise(toAtLeast wanted: Int) -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1_024 }
        let current = Int(clamping: limit.rlim_cur)
        guard current < wanted else { return current }
        let target = min(rlim_t(wanted), limit.rlim_max)
        var raised = limit
        raised.rlim_cur = target
        guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 else { return current }
        return Int(clamping: target)
    }
}
