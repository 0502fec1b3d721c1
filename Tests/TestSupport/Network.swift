import Foundation
import SystemSupport

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A tcp port on 127.0.0.1 that was free a moment ago and that nothing else will take by chance
/// (``LoopbackPort/free()``, which the bench uses too).
public func freeTCPPort() throws -> Int {
    do {
        return try LoopbackPort.free()
    } catch {
        throw HarnessFailure(error.description)
    }
}

/// System tools (`ip`, `mount`, `chattr`) on the usual paths.
public enum SystemTool {
    /// The path of `name` in /usr/sbin, /sbin, /usr/bin or /bin, if it is there.
    public static func path(_ name: String) -> String? {
        for directory in ["/usr/sbin", "/sbin", "/usr/bin", "/bin"] {
            let candidate = "\(directory)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }
}
