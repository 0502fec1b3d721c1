/// Who may read and change the table through `countries web`: the rules against DNS
/// rebinding and cross-site requests, as a plain value (docs/SECURITY.md, "The web page").
///
/// - Every request must name, in `Host`, an address that cannot be rebound: an IP literal,
///   `localhost`, or a name the operator allowed (`--allow-host NAME`). A rebinding attack
///   reaches the server under the attacker's own name, and is refused before anything is read.
/// - A change must come from the page itself: its `Origin` is this server's (or, without
///   `Origin`, `Sec-Fetch-Site` says `same-origin`), and it carries the per-process change token
///   the page holds (``changeTokenHeader``), which another site can neither read nor guess.
public struct WebRequestGuard: Sendable, Equatable {
    /// The header a change carries the change token in.
    public static let changeTokenHeader = "X-Countries-Change"

    /// Host names allowed besides IP literals and `localhost`, lowercased.
    public let allowedNames: [String]
    /// The token every change must carry; the page gets it inside its HTML.
    public let changeToken: String

    /// Why a request is refused: an HTTP status and a message a person can act on.
    public struct Refusal: Error, Sendable, Equatable {
        public var status: Int
        public var message: String
    }

    /// A guard allowing `allowedNames` (`--allow-host`) with this process's `changeToken`.
    public init(allowedNames: [String] = [], changeToken: String) {
        self.allowedNames = allowedNames.map { $0.lowercased() }
        self.changeToken = changeToken
    }

    /// Checks a request's `Host`; for a change (`changes`), its origin and change token too.
    /// `headers` are keyed by lowercased name.
    public func check(headers: [String: String], changes: Bool) -> Refusal? {
        guard let host = headers["host"], let name = Self.hostName(ofAuthority: host) else {
            return Refusal(status: 400, message: "the request has no usable Host header")
        }
        guard allows(name) else {
            return Refusal(
                status: 403,
                message:
                    "this page is not served under the name \(Self.printable(host)); open it by its address, or start countries web with --allow-host \(Self.printable(name))"
            )
        }
        guard changes else { return nil }
        if let origin = headers["origin"] {
            let authority = origin.lowercased().split(separator: "://", maxSplits: 1)
            guard authority.count == 2, ["http", "https"].contains(authority[0]),
                authority[1] == Substring(host.lowercased())
            else {
                return Refusal(
                    status: 403,
                    message: "not toggled: the request comes from another site (\(Self.printable(origin)))")
            }
        } else if headers["sec-fetch-site"]?.lowercased() != "same-origin" {
            return Refusal(
                status: 403,
                message: "not toggled: the request does not say it comes from this page (no Origin)")
        }
        guard let presented = headers[Self.changeTokenHeader.lowercased()],
            Self.constantTimeEqual(presented, changeToken)
        else {
            return Refusal(
                status: 403,
                message: "not toggled: the page's change token is missing or old; reload the page")
        }
        return nil
    }

    /// Whether a host name (lowercased, without port) cannot be rebound or was allowed.
    private func allows(_ name: String) -> Bool {
        name == "localhost" || Self.isIPLiteral(name) || allowedNames.contains(name)
    }

    /// The host name of `host[:port]` or `[v6]:port`, lowercased; nil when it is malformed: a
    /// name is letters, digits, `-`, `.` and `_` (what DNS and an IPv4 address are made of; not
    /// `evil.com@127.0.0.1`), a port a number from 0 to 65535.
    public static func hostName(ofAuthority authority: String) -> String? {
        let lowered = authority.lowercased()
        guard !lowered.isEmpty, lowered.utf8.count <= 255,
            lowered.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F })
        else { return nil }
        func isPort(_ text: Substring) -> Bool {
            !text.isEmpty && text.count <= 5 && text.allSatisfy { $0.isASCII && $0.isNumber }
                && (Int(text) ?? 65_536) <= 65_535
        }
        if lowered.hasPrefix("[") {
            guard let close = lowered.firstIndex(of: "]") else { return nil }
            let rest = lowered[lowered.index(after: close)...]
            guard rest.isEmpty || (rest.hasPrefix(":") && isPort(rest.dropFirst())) else { return nil }
            return String(lowered[...close])
        }
        let parts = lowered.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2, !parts[0].isEmpty,
            parts[0].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-._".contains($0)) })
        else { return nil }
        if parts.count == 2 && !isPort(parts[1]) { return nil }
        return String(parts[0])
    }

    /// An IPv4 dotted quad or a bracketed IPv6 literal: names no DNS answer can move.
    static func isIPLiteral(_ name: String) -> Bool {
        if name.hasPrefix("[") && name.hasSuffix("]") {
            let inner = name.dropFirst().dropLast()
            return inner.contains(":") && inner.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
        }
        let octets = name.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4
            && octets.allSatisfy { octet in
                !octet.isEmpty && octet.count <= 3 && octet.allSatisfy(\.isNumber)
                    && (Int(octet) ?? 256) <= 255
            }
    }

    /// Compares without stopping at the first difference, so timing does not reveal the token.
    public static func constantTimeEqual(_ lhs: String, _ rhs: String) -> Bool {
        let a = Array(lhs.utf8)
        let b = Array(rhs.utf8)
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for index in 0..<max(a.count, b.count) {
            difference |= (index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0)
        }
        return difference == 0
    }

    /// A header value safe to quote in a message: printable ASCII, at most 100 characters.
    private static func printable(_ text: String) -> String {
        String(
            text.unicodeScalars.prefix(100).map { $0.value >= 0x20 && $0.value < 0x7F ? Character($0) : "?" })
    }
}
