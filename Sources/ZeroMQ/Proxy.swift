import CZeroMQ

/// Runs `zmq_proxy(frontend, backend, capture)`: forwards messages both ways between the
/// two sockets (e.g. XSUB and XPUB), copying each to `capture` if given.
///
/// Blocks until the sockets' context is shut down (``Context/shutdown()`` or
/// ``Context/terminate()`` from another thread) and then returns normally, since that is
/// how a proxy is meant to stop. Signals (`EINTR`) are ridden out. All three sockets must
/// belong to the calling thread; close them after this returns.
public func proxy(frontend: Socket, backend: Socket, capture: Socket? = nil) throws(ZMQError) {
    while true {
        let front = try frontend.openHandle("proxy(frontend)")
        let back = try backend.openHandle("proxy(backend)")
        let copy = try capture.map { socket throws(ZMQError) in try socket.openHandle("proxy(capture)") }
        // zmq_proxy only ever returns -1.
        zmq_proxy(front, back, copy)
        let error = ZMQError.last("proxy")
        if error.isTerminated { return }
        if error.isInterrupted { continue }
        throw error
    }
}
