import Foundation

/// The access token pages must present (`countries web --token FILE`): how it is read from its
/// file, found in a request, and kept by a browser (an `HttpOnly` cookie, so the address bar
/// and the page's script never hold it).
public enum WebToken {
    /// How a request presented the token.
    public enum Presented: Equatable, Sendable {
        /// Not at all.
        case none
        /// This token.
        case token(String)
        /// An `Authorization` header without the `Bearer` scheme.
        case notBearer
    }

    /// The fewest characters a token may have: a page answers a wrong token in well under a
    /// millisecond (3,000 guesses in half a second on one connection), so a short one is
    /// found by trying. Sixteen random hex digits are 64 bits.
    public static let minimumLength = 16

    /// A fresh random token: 32 hex digits (128 bits).
    public static func fresh() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let hex = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }

    /// The token in the file at `path`: its first line without surrounding spaces (a CRLF
    /// file's `\r` too), or nil when it cannot be read or that line is empty.
    public static func read(from path: String) -> String? {
        guard let contents = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        let line = contents.split(whereSeparator: \.isNewline).first.map {
            $0.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        guard let line, !line.isEmpty else { return nil }
        return line
    }

    /// The token a request presents: `Authorization: Bearer T` first, then `?token=T`, then
    /// the cookie named `cookieName`. `headers` are keyed in lowercase.
    public static func presented(headers: [String: String], query: [String: String], cookieName: String)
        -> Presented
    {
        if let authorization = headers["authorization"] {
            let parts = authorization.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "bearer" else { return .notBearer }
            return .token(parts[1].trimmingCharacters(in: .whitespaces))
        }
        if let token = query["token"] { return .token(token) }
        for pair in (headers["cookie"] ?? "").split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == cookieName else {
                continue
            }
            let value = parts[1].trimmingCharacters(in: .whitespaces)
            return .token(value.removingPercentEncoding ?? value)
        }
        return .none
    }

    /// The cookie's name for a page reached at `host` (the `Host` header): cookies are kept by
    /// host name, not port, so two web processes on one host each name their own.
    public static func cookieName(host: String?) -> String {
        let port = host.flatMap { $0.split(separator: ":").last.flatMap { Int($0) } }
        return "countries-token-\(port ?? 80)"
    }

    /// The `Set-Cookie` value that keeps `token` in the browser: for this server's paths only,
    /// out of reach of the page's script, and never sent by another site's request.
    public static func setCookie(_ token: String, name: String) -> String {
        let value = token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? token
        return "\(name)=\(value); Path=/; HttpOnly; SameSite=Strict"
    }
}
