/// What the handler answers.
public enum HTTPResponse: Sendable {
    /// A whole body, with headers of its own beside the server's (`Allow`,
    /// `Content-Security-Policy`, `Set-Cookie`, ...).
    case content(status: Int, contentType: String, body: [UInt8], headers: [String: String] = [:])
    /// A Server-Sent Events stream; the server calls `opened` with the new stream, on its
    /// thread, before any byte is sent. `opened` must not block.
    case eventStream(opened: @Sendable (EventStream) -> Void)
    /// An answer that comes later: the server calls `start` with a responder (on its thread;
    /// `start` must not block) and holds the request, without a thread, until it responds.
    case later(_ start: @Sendable (HTTPResponder) -> Void)

    /// A plain-text answer.
    public static func text(_ status: Int, _ text: String, headers: [String: String] = [:]) -> HTTPResponse {
        .content(
            status: status, contentType: "text/plain; charset=utf-8", body: Array((text + "\n").utf8),
            headers: headers)
    }
}
