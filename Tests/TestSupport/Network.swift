import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A tcp port on 127.0.0.1 that was free a moment ago: bound with port 0, then released.
public func freeTCPPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw HarnessFailure("socket(2) failed") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    guard bound == 0 else { throw HarnessFailure("bind(2) to port 0 failed") }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let named = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    guard named == 0 else { throw HarnessFailure("getsockname(2) failed") }
    return Int(UInt16(bigEndian: address.sin_port))
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
