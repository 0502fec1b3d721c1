import CZeroMQ
import Foundation

/// Connection events of a socket (`zmq_socket_monitor`), for logs: handshakes that failed
/// (a plaintext client at a CURVE server, a refused key), peers that came and went.
public struct MonitorEvent: Sendable, Equatable {
    /// Which events to watch, as libzmq's `ZMQ_EVENT_*` bits.
    public struct Kinds: OptionSet, Sendable {
        public let rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }

        /// A peer connected (accepted on a bound socket).
        public static let accepted = Kinds(rawValue: ZMQ_EVENT_ACCEPTED)
        /// A connection to a peer was made (on a connecting socket).
        public static let connected = Kinds(rawValue: ZMQ_EVENT_CONNECTED)
        /// A connect failed (refused, no socket file) and will be tried again.
        public static let connectRetried = Kinds(rawValue: ZMQ_EVENT_CONNECT_RETRIED)
        /// A peer disconnected.
        public static let disconnected = Kinds(rawValue: ZMQ_EVENT_DISCONNECTED)
        /// The handshake failed before authentication (e.g. mechanism mismatch).
        public static let handshakeFailedProtocol = Kinds(rawValue: ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL)
        /// The handshake failed for another reason (e.g. undecryptable CURVE hello).
        public static let handshakeFailedNoDetail = Kinds(rawValue: ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL)
        /// Authentication failed (the ZAP handler refused, or the peer refused us).
        public static let handshakeFailedAuth = Kinds(rawValue: ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)
        /// The handshake succeeded.
        public static let handshakeSucceeded = Kinds(rawValue: ZMQ_EVENT_HANDSHAKE_SUCCEEDED)
        /// Every handshake failure.
        public static let handshakeFailures: Kinds = [
            .handshakeFailedProtocol, .handshakeFailedNoDetail, .handshakeFailedAuth,
        ]
    }

    /// The event (one of the ``Kinds`` bits).
    public var kind: Kinds
    /// The event's value (an errno for failures, a ZMTP error code for protocol failures).
    public var value: UInt32
    /// The endpoint the event is about.
    public var endpoint: String

    /// Decodes a monitor message: `[event (u16) + value (u32), endpoint]`.
    public init?(frames: [Data]) {
        guard frames.count >= 2, frames[0].count >= 6 else { return nil }
        let bytes = [UInt8](frames[0])
        kind = Kinds(rawValue: Int32(UInt16(bytes[0]) | UInt16(bytes[1]) << 8))
        value = UInt32(bytes[2]) | UInt32(bytes[3]) << 8 | UInt32(bytes[4]) << 16 | UInt32(bytes[5]) << 24
        endpoint = String(decoding: frames[1], as: UTF8.self)
    }
}

extension Socket {
    /// Publishes this socket's events of the given kinds on a PAIR socket bound at `endpoint`
    /// (an `inproc://` name); connect a `.pair` socket there and read ``MonitorEvent``s.
    ///
    /// libzmq's I/O thread sends each event with a blocking send. Until ``stopMonitor()`` (or
    /// ``close()``, which calls it), the reading socket must stay open and be read: an event
    /// with no reader left, or past the high-water mark, stops that thread for good, and every
    /// socket of the context with it.
    public func startMonitor(_ endpoint: String, kinds: MonitorEvent.Kinds) throws(ZMQError) {
        let handle = try openHandle("monitor(\(endpoint))")
        if zmq_socket_monitor(handle, endpoint, kinds.rawValue) != 0 {
            throw ZMQError.last("monitor(\(endpoint))")
        }
        isMonitored = true
    }

    /// Stops the monitor (idempotent; nothing on a closed socket). Call it before the reading
    /// socket closes.
    public func stopMonitor() {
        guard isMonitored, let handle else { return }
        // Takes the lock the I/O thread holds while it sends an event, so no event is under way
        // once this returns.
        zmq_socket_monitor(handle, nil, 0)
        isMonitored = false
    }
}
