import CountriesCore
import Foundation
import TestSupport
import ZeroMQ

/// A successful `status` reply naming `writer` and `store`, as a replica's.
func statusReply(writer: String, store: String) -> Reply {
    var status = ServiceStatus()
    status.writer = writer
    var reply = Reply()
    reply.status = status
    reply.store = store
    return reply
}

/// A raw ROUTER standing in for a replica: answers one request with a given reply and records
/// the ids it was sent.
final class FakeReplica: @unchecked Sendable {
    let endpoint: String
    private let socket: Socket
    private let lock = NSLock()
    private var received: [String] = []
    private var receivedStores: [String] = []

    init(context: Context, endpoint: String) throws {
        self.endpoint = endpoint
        socket = try context.makeSocket(.router)
        try socket.setOption(.linger, 0)
        try socket.setOption(.receiveTimeout, Int32(5_000 * testSlowdown))
        try socket.bind(endpoint)
    }

    deinit { socket.close() }

    var ids: [String] { lock.withLock { received } }

    /// The `if_store` of each change received, in order.
    var stores: [String] { lock.withLock { receivedStores } }

    /// Waits (at most 5 s) for one request and keeps it without an answer, as a replica that
    /// applied it and then hung would; false when none came.
    func takeOne() -> Bool {
        guard let frames = try? socket.receive(), let body = frames.last,
            let request = try? Request.decode(body)
        else { return false }
        lock.withLock {
            received.append(request.id ?? "")
            if let store = request.ifStore { receivedStores.append(store) }
        }
        return true
    }

    /// Waits (at most 5 s) for one request and answers it; false when none came.
    func answerOne(with reply: Reply) -> Bool {
        guard let frames = try? socket.receive(), let body = frames.last,
            let request = try? Request.decode(body)
        else { return false }
        lock.withLock {
            received.append(request.id ?? "")
            if let store = request.ifStore { receivedStores.append(store) }
        }
        var out = Array(frames.dropLast())
        out.append(reply.encoded())
        return (try? socket.send(out)) == true
    }
}
