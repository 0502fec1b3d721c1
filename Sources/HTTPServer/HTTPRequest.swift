import Foundation

/// One request as the server's handler sees it: no body (the server refuses any), the path,
/// the query arguments (by ``queryArguments(of:)``) and every header.
public struct HTTPRequest: Sendable {
    /// The method, as sent (`GET`, `POST`, ...).
    public var method: String
    /// The path, without the query.
    public var path: String
    /// The query arguments, decoded.
    public var query: [String: String]
    /// Every header, keyed by its name in lowercase (a name sent twice keeps its last value; the
    /// server refuses a second one of ``singleHeaders``).
    public var headers: [String: String]

    /// Creates a request.
    public init(
        method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:]
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
    }
}

extension HTTPRequest {
    /// Headers a request may carry once: a second `Host` or `Origin` is read by one hop as the
    /// first and by another as the last (RFC 9110 makes a repeated `Host` a 400).
    public static let singleHeaders: Set<String> = [
        "host", "origin", "authorization", "cookie", "sec-fetch-site", "content-length",
    ]

    /// Why a request is malformed before any handler sees it, or nil: a header of
    /// ``singleHeaders`` given twice (`repeatedHeaders`, lowercase), or a NUL (`%00`) in the
    /// target's path, which the decoded path (a C string) would end at: `/%00x` was served `/`.
    public static func malformation(target: String, repeatedHeaders: Set<String>) -> String? {
        if let name = repeatedHeaders.intersection(singleHeaders).sorted().first {
            return "the request gives the \(name) header more than once"
        }
        let path = target.prefix { $0 != "?" }
        if path.range(of: "%00", options: .caseInsensitive) != nil {
            return "the request's path holds a NUL (%00)"
        }
        return nil
    }

    /// The query arguments of a request target (`/path?a=1&b=%2B`), percent-decoded as RFC 3986
    /// says: `+` stays a plus (a token may hold one), and an argument that is not valid UTF-8
    /// once decoded is kept as sent. A name given twice keeps its last value.
    public static func queryArguments(of target: String) -> [String: String] {
        guard let mark = target.firstIndex(of: "?") else { return [:] }
        var arguments: [String: String] = [:]
        for pair in target[target.index(after: mark)...].split(
            separator: "&", omittingEmptySubsequences: true)
        {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0])
            let value = parts.count > 1 ? String(parts[1]) : ""
            arguments[name.removingPercentEncoding ?? name] = value.removingPercentEncoding ?? value
        }
        return arguments
    }
}
