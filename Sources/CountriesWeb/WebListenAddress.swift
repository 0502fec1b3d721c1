/// Where `countries web` listens: `HOST:PORT` or `[IPV6]:PORT`, an IP literal (or `localhost`).
public struct WebListenAddress: Equatable, Sendable {
    /// The IP literal to bind.
    public var host: String
    /// The TCP port (0: any free one).
    public var port: Int

    /// Parses `HOST:PORT`; nil when it is not one.
    public init?(_ text: String) {
        var hostPart: Substring
        let portPart: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":")
            else {
                return nil
            }
            hostPart = text[text.index(after: text.startIndex)..<close]
            portPart = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            hostPart = text[..<colon]
            portPart = text[text.index(after: colon)...]
            if hostPart.contains(":") { return nil }
        }
        if hostPart == "localhost" { hostPart = "127.0.0.1" }
        guard !hostPart.isEmpty, let port = Int(portPart), (0...65_535).contains(port) else { return nil }
        host = String(hostPart)
        self.port = port
    }

    /// Whether only this machine can reach the address (127.0.0.0/8 or ::1).
    public var isLoopback: Bool {
        host == "::1" || host.hasPrefix("127.")
    }

    /// The address as a URL's authority: `127.0.0.1:8080` or `[::1]:8080`.
    public func authority(port actual: Int) -> String {
        host.contains(":") ? "[\(host)]:\(actual)" : "\(host):\(actual)"
    }
}
