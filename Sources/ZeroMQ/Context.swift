import CZeroMQ
import Foundation
import SystemSupport

/// A libzmq context: the I/O threads and the registry behind every socket made from it.
///
/// Thread-safe: any thread may make sockets from it, shut it down or terminate it.
///
/// Ending a context: close every socket made from it first (each ``Socket`` keeps its
/// context alive, so ``deinit`` only runs once they are all gone). ``terminate()`` blocks
/// until every socket of the context is closed; sockets close with linger 0 unless you set
/// one, so once they are closed termination does not wait on undelivered messages.
/// To wake threads blocked in `receive`, `send`, `poll` or ``proxy(frontend:backend:capture:)``
/// call ``shutdown()``: their calls fail with ``ZMQError/isTerminated``, and they should then
/// close their sockets.
public final class Context: Sendable {
    /// The libzmq context, nil once terminated; libzmq contexts are thread-safe.
    private let handle: Locked<UnsafeMutableRawPointer?>

    /// Creates a context with `ioThreads` background I/O threads.
    public init(ioThreads: Int32 = 1) throws(ZMQError) {
        guard let handle = zmq_ctx_new() else {
            throw ZMQError.last("zmq_ctx_new")
        }
        if zmq_ctx_set(handle, ZMQ_IO_THREADS, ioThreads) != 0 {
            let error = ZMQError.last("zmq_ctx_set(ZMQ_IO_THREADS, \(ioThreads))")
            zmq_ctx_term(handle)
            throw error
        }
        self.handle = Locked(handle)
    }

    deinit {
        terminate()
    }

    /// Makes a new socket of `type` in this context.
    ///
    /// Throws ``ZMQError/isTerminated`` once the context has been shut down or terminated.
    public func makeSocket(_ type: SocketType) throws(ZMQError) -> Socket {
        // Hold the lock across zmq_socket so terminate() cannot free the context underneath it.
        let made: Result<UnsafeMutableRawPointer, ZMQError> = handle.withLock { handle in
            guard let handle else { return .failure(ZMQError(code: ETERM, operation: "socket(\(type))")) }
            guard let socket = zmq_socket(handle, type.rawValue) else {
                return .failure(ZMQError.last("socket(\(type))"))
            }
            return .success(socket)
        }
        return Socket(handle: try made.get(), type: type, context: self)
    }

    /// Shuts the context down (`zmq_ctx_shutdown`) without freeing it.
    ///
    /// Blocking calls on its sockets, in any thread, return `ETERM`, and new sockets
    /// cannot be made. Sockets must still be closed before ``terminate()`` returns.
    public func shutdown() {
        handle.withLock { handle in
            if let handle { zmq_ctx_shutdown(handle) }
        }
    }

    /// Terminates the context (`zmq_ctx_term`) and frees it. Idempotent; `deinit` calls it.
    ///
    /// Blocks until every socket made from this context has been closed, so close them
    /// first (or have their threads close them after ``shutdown()``).
    public func terminate() {
        // Take the handle under the lock but wait outside it, so shutdown() and
        // makeSocket() from other threads fail fast instead of queueing behind us.
        let taken = handle.withLock { handle in
            defer { handle = nil }
            return handle
        }
        guard let handle = taken else { return }
        // zmq_ctx_term can be interrupted by a signal before it has finished; it must be retried.
        while zmq_ctx_term(handle) != 0 && zmq_errno() == EINTR {}
    }
}
