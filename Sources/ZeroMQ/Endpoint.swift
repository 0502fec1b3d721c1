/// Facts about endpoint strings (`tcp://127.0.0.1:5555`, `ipc:///tmp/x`), without parsing more
/// than the question needs.
public enum Endpoint {
    /// Whether binding `endpoint` keeps it on this host: `ipc://` and `inproc://`, or `tcp://`
    /// on a loopback address (127.0.0.0/8, `localhost`, `::1`, the `lo` interface).
    ///
    /// A wildcard (`*`, `0.0.0.0`, `::`), any other address or interface, and every other
    /// transport count as exposed.
    public static func isLoopbackOrLocal(_ endpoint: String) -> Bool {
        if endpoint.hasPrefix("ipc://") || endpoint.hasPrefix("inproc://") { return true }
        guard endpoint.hasPrefix("tcp://") else { return false }
        guard let target = tcpHostAndPort(endpoint.dropFirst("tcp://".count)) else { return false }
        var host = String(target.host)
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        switch host.lowercased() {
        case "localhost", "::1", "lo", "ip6-localhost":
            return true
        default:
            let parts = host.split(separator: ".", omittingEmptySubsequences: false)
            return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
        }
    }

    /// Whether a failed connect to `endpoint` proves that nothing listens there: for `ipc://`
    /// (no socket file, or nobody bound to it) and `tcp://` on a loopback address, where no
    /// network lies between. For another host it may be a network that is down for a moment
    /// (libzmq's monitor does not say which errno), so a client waits out its timeout as before.
    public static func refusalIsConclusive(_ endpoint: String) -> Bool {
        if endpoint.hasPrefix("ipc://") { return true }
        guard endpoint.hasPrefix("tcp://"), !endpoint.contains(";") else { return false }
        return isLoopbackOrLocal(endpoint)
    }

    /// The longest path an `ipc://` endpoint may name: a Unix socket address holds 108 bytes,
    /// the last a NUL. A longer one failed at the bind or connect, with "File name too long"
    /// and a different exit code for a server, a client and a subscriber.
    public static let maximumIPCPathBytes = 107

    /// The transports an endpoint may name.
    public static let transports = [
        "tcp", "ipc", "inproc", "pgm", "epgm", "tipc", "vmci", "udp", "ws", "wss",
    ]

    /// What is wrong with `endpoint` before ZeroMQ is asked, or nil: an endpoint without a
    /// `transport://` prefix (`127.0.0.1:5555`, `/tmp/x.sock`) is the common slip, and the answer
    /// names the one it probably meant.
    /// `example` is the endpoint a `tcp://` mistake is shown beside (the option's own default
    /// is the one that helps: an events endpoint is not 5555).
    public static func problem(_ endpoint: String, example: String = "tcp://127.0.0.1:5555") -> String? {
        if let separator = endpoint.range(of: "://") {
            let scheme = endpoint[..<separator.lowerBound]
            guard transports.contains(String(scheme)) else {
                return "\(endpoint) has an unknown transport '\(scheme)'; use tcp://, ipc:// or inproc://"
            }
            let address = endpoint[separator.upperBound...]
            switch scheme {
            case "tcp": return tcpProblem(endpoint, address: address, example: example)
            case "ipc" where address.isEmpty: return "\(endpoint) names no socket file; give ipc://PATH"
            case "ipc" where address.utf8.count > maximumIPCPathBytes:
                return
                    "\(endpoint) names a socket file of \(address.utf8.count) bytes; a Unix socket's path may have at most \(maximumIPCPathBytes): use a shorter one"
            default: return nil
            }
        }
        let suggestion = endpoint.hasPrefix("/") || endpoint.hasPrefix(".") ? "ipc://" : "tcp://"
        return "\(endpoint) has no transport; did you mean \(suggestion)\(endpoint)?"
    }

    /// What is wrong with the address of a `tcp://` endpoint: it needs a host and a port (a
    /// number up to 65535, or `*` for any free one when binding), which ZeroMQ would only refuse
    /// with "Invalid argument" once asked.
    private static func tcpProblem(_ endpoint: String, address: Substring, example: String) -> String? {
        let usage = "give tcp://HOST:PORT, such as \(example)"
        guard let target = tcpHostAndPort(address), !target.host.isEmpty else {
            return "\(endpoint) has no host and port; \(usage)"
        }
        let port = target.port
        let isNumber =
            !port.isEmpty && port.utf8.allSatisfy { (0x30...0x39).contains($0) } && UInt16(port) != nil
        guard port == "*" || isNumber else {
            return "\(endpoint) has no valid port ('\(port)': a number from 1 to 65535); \(usage)"
        }
        return nil
    }

    /// The host and port of a `tcp://` endpoint's address (what follows `tcp://`), split at the
    /// last colon so that an IPv6 host keeps its own; nil without a colon. A connect-side source
    /// ("src;dst") does not apply to bind and is ZeroMQ's to judge, so only `dst` is taken.
    private static func tcpHostAndPort(_ address: Substring) -> (host: Substring, port: Substring)? {
        let target = address.split(separator: ";", omittingEmptySubsequences: false).last ?? address
        guard let colon = target.lastIndex(of: ":") else { return nil }
        return (target[..<colon], target[target.index(after: colon)...])
    }
}
