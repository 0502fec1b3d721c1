import Foundation
import ZeroMQ

/// A plain REQ client sending toggles (to the service) or same-sized bodies (to a floor server):
/// one request, one reply, at most 5 s apart.
public struct RequestClient: RoundTripper {
    private let socket: Socket
    private let body: (Int) -> Data
    private let index: Int
    /// The body of the last reply, for a client that checks what it was told.
    public private(set) var lastReply: Data?

    /// Connects a REQ socket; `body` makes each request from the client's index.
    public init(context: Context, endpoint: String, index: Int, body: @escaping (Int) -> Data) throws {
        socket = try context.makeSocket(.req)
        try socket.setOption(.linger, 0)
        try socket.setOption(.receiveTimeout, 5_000)
        try socket.connect(endpoint)
        self.body = body
        self.index = index
    }

    public mutating func roundTrip() throws {
        try socket.send([body(index)])
        guard let reply = try socket.receive(), !(reply.last?.isEmpty ?? true) else {
            throw LoadGenerationError("no reply within 5 s")
        }
        lastReply = reply.last
    }
}
