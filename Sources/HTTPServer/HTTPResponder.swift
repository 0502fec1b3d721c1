import CMicroHTTPD
import SystemSupport

/// The answer to come for one request the handler answered with ``HTTPResponse/later(_:)``:
/// the request's connection is suspended (it holds no thread) until ``respond(_:)`` is called,
/// from any thread. The first response counts.
public final class HTTPResponder: Sendable {
    private let state: Locked<State>

    private struct State {
        var connection: OpaquePointer?
        var suspended = false
        var response: HTTPResponse?
    }

    init(connection: OpaquePointer?) {
        state = Locked(State(connection: connection))
    }

    /// Gives the response (a whole body; a stream or another `later` is answered 500).
    public func respond(_ response: HTTPResponse) {
        state.withLock { state in
            guard state.response == nil else { return }
            state.response = response
            if state.suspended, let connection = state.connection {
                state.suspended = false
                MHD_resume_connection(connection)
            }
        }
    }

    /// Whether the response has been given.
    public var hasResponded: Bool { state.withLock { $0.response != nil } }

    /// Suspends the connection until the response comes (on the server's thread, in the
    /// handler); does nothing when it came already.
    func suspendUnlessAnswered() {
        state.withLock { state in
            guard state.response == nil, let connection = state.connection else { return }
            state.suspended = true
            MHD_suspend_connection(connection)
        }
    }

    /// The response given, taken once (on the server's thread).
    func takeResponse() -> HTTPResponse? {
        state.withLock { state in
            defer { state.connection = nil }
            return state.response
        }
    }
}
