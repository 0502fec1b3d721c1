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
    reply.seq = 0
    return reply
}

/// A successful reply to a toggle of France at `seq`, with every field a toggle's reply has.
func toggled(_ seq: UInt64) -> Reply {
    Reply(seq: seq, country: IndexedCountry(index: 2, name: "France", visited: true))
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

    /// Closes its socket, so that its context can be terminated.
    func close() { socket.close() }

    var ids: [String] { lock.withLock { received } }

    /// The `if_store` of each change received, in order.
    var stores: [String] { lock.withLock { receivedStores } }

    /// Waits (at most 5 s) for one request and keeps it without an answer, as a replica that
    /// applied it and then hung would; false when none came.
    func takeOne() -> Bool { receiveOne() != nil }

    /// Waits (at most 5 s) for one request and answers it; false when none came.
    func answerOne(with reply: Reply) -> Bool {
        guard let frames = receiveOne() else { return false }
        return (try? socket.send(Array(frames.dropLast()) + [reply.encoded()])) == true
    }

    /// Waits (at most 5 s) for one request and answers it with `body`, which need not be a reply
    /// (a proxy's error page); false when none came.
    func answerOne(withBody body: Data) -> Bool {
        guard let frames = receiveOne() else { return false }
        return (try? socket.send(Array(frames.dropLast()) + [body])) == true
    }

    /// Waits (at most 5 s) for one request and records it; its frames, or nil when none came.
    private func receiveOne() -> [Data]? {
        guard let frames = try? socket.receive(), let body = frames.last,
            let request = try? Request.decode(body)
        else { return nil }
        lock.withLock {
            received.append(request.id ?? "")
            if let store = request.ifStore { receivedStores.append(store) }
        }
        return frames
    }
}

/// Two ``FakeReplica``s on ipc endpoints in a scratch directory of their own.
struct FakeReplicas {
    let directory: ScratchDirectory
    let context: Context
    let first: FakeReplica
    let second: FakeReplica

    init(_ firstName: String, _ secondName: String) throws {
        directory = try ScratchDirectory(prefix: "fake")
        context = try Context()
        first = try FakeReplica(context: context, endpoint: directory.ipc(firstName))
        second = try FakeReplica(context: context, endpoint: directory.ipc(secondName))
    }

    var endpoints: [String] { [first.endpoint, second.endpoint] }

    func remove() { directory.remove() }
}

/// Runs the fakes' side of a test on a thread of its own; the semaphore is signalled once it
/// has played it all.
func playing(_ script: @escaping @Sendable () -> Void) -> DispatchSemaphore {
    let done = DispatchSemaphore(value: 0)
    Thread {
        script()
        done.signal()
    }.start()
    return done
}
