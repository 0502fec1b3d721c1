import CZeroMQ
import Foundation

/// A libzmq error: the failing call, `zmq_errno()` and `zmq_strerror` text.
///
/// Thrown by every call in this module, so a log line says both what was attempted
/// (`operation`) and why libzmq refused it (`message`).
public struct ZMQError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The error number, as returned by `zmq_errno()` (POSIX errno or a libzmq `ZMQ_HAUSNUMERO`
    /// code).
    public let code: Int32
    /// What failed, e.g. `bind(tcp://127.0.0.1:5555)`.
    public let operation: String

    /// Creates an error for `operation` with the given error number.
    public init(code: Int32, operation: String) {
        self.code = code
        self.operation = operation
    }

    /// Captures `zmq_errno()` right after a failing libzmq call.
    ///
    /// `zmq_errno()` rather than `errno`: on some platforms libzmq's errno lives in another C
    /// runtime.
    static func last(_ operation: @autoclosure () -> String) -> ZMQError {
        let code = zmq_errno()
        return ZMQError(code: code, operation: operation())
    }

    /// The text libzmq gives for `code` (`zmq_strerror`).
    public var message: String {
        String(cString: zmq_strerror(code))
    }

    /// `<operation> failed: <message>`, e.g. `bind(tcp://127.0.0.1:5555) failed: Address already in
    /// use`.
    public var description: String {
        "\(operation) failed: \(message)"
    }

    /// The call could not complete now (`EAGAIN`): non-blocking mode, a timeout, or a full
    /// high-water mark.
    public var isAgain: Bool { code == EAGAIN }

    /// A signal interrupted the call (`EINTR`); it is usually safe to retry.
    public var isInterrupted: Bool { code == EINTR }

    /// The socket's context was shut down or terminated (`ETERM`); the socket should be closed.
    public var isTerminated: Bool { code == ETERM }
}
