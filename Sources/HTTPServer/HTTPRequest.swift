/// One request as the server's handler sees it: no body (the server refuses any), the path,
/// the query arguments and the headers it was asked for.
public struct HTTPRequest: Sendable {
    /// The method, as sent (`GET`, `POST`, ...).
    public var method: String
    /// The path, without the query.
    public var path: String
    /// The query arguments, decoded.
    public var query: [String: String]
    /// The request's `Last-Event-ID` header, if any.
    public var lastEventID: String?
    /// The request's `Authorization` header, if any.
    public var authorization: String?
    /// Every header, keyed by its name in lowercase (a name sent twice keeps its last value).
    public var headers: [String: String]

    /// Creates a request.
    public init(
        method: String, path: String, query: [String: String] = [:], lastEventID: String? = nil,
        authorization: String? = nil, headers: [String: String] = [:]
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.lastEventID = lastEventID
        self.authorization = authorization
        self.headers = headers
    }
}

/// What the handler answers.
public enum HTTPResponse: Sendable {
    /// A whole body, with headers of its own beside the server's (`Allow`,
    /// `Content-Security-Policy`, ...).
    case content(status: Int, contentType: String, body: [UInt8], headers: [String: String] = [:])
    /// A Server-Sent Events stream; the server calls `opened` with the new stream, on the
    /// connection's thread, before any byte is sent.
    case eventStream(opened: @Sendable (EventStream) -> Void)

    /// A plain-text answer.
    public static func text(_ status: Int, _ text: String, headers: [String: String] = [:]) -> HTTPResponse {
        .content(
            status: status, contentType: "text/plain; charset=utf-8", body: Array((text + "\n").utf8),
            headers: headers)
    }
}
