import CZeroMQ
import Foundation

/// A typed socket option: the libzmq `ZMQ_...` constant plus how its value travels through
/// `zmq_setsockopt`/`zmq_getsockopt`.
///
/// `Value` is one of `Int32`, `Int64`, `Bool`, `String` or `Data`; the static members below pin it,
/// so `try socket.setOption(.linger, 0)` type-checks and `setOption(.linger, "0")` does not.
public struct SocketOption<Value>: Sendable {
    /// The libzmq option constant, e.g. `ZMQ_LINGER`.
    public let name: Int32
    /// How the value is encoded; fixed by the constrained initialisers, so it always matches
    /// `Value`.
    let kind: Kind

    /// The C representation of an option's value.
    enum Kind: Sendable {
        /// C `int`.
        case int32
        /// C `int64_t`.
        case int64
        /// C `int` holding 0 or 1.
        case bool
        /// Bytes of UTF-8 text without a terminating NUL; read back as NUL-terminated text.
        case string
        /// A CURVE key: set as 40 characters of Z85, read back as Z85 (41-byte buffer).
        case curveKey
        /// Raw bytes.
        case data
    }
}

extension SocketOption where Value == Int32 {
    /// An `int` option not listed here, e.g. `SocketOption<Int32>(ZMQ_TCP_KEEPALIVE)`.
    public init(_ name: Int32) { self.init(name: name, kind: .int32) }

    /// `ZMQ_LINGER`: milliseconds to keep unsent messages after close (-1 forever, 0 drop).
    public static var linger: Self { Self(ZMQ_LINGER) }
    /// `ZMQ_SNDTIMEO`: milliseconds a blocking send waits before giving up (-1 forever).
    public static var sendTimeout: Self { Self(ZMQ_SNDTIMEO) }
    /// `ZMQ_RCVTIMEO`: milliseconds a blocking receive waits before giving up (-1 forever).
    public static var receiveTimeout: Self { Self(ZMQ_RCVTIMEO) }
    /// `ZMQ_SNDHWM`: outgoing message queue limit per peer (0 unlimited).
    public static var sendHighWaterMark: Self { Self(ZMQ_SNDHWM) }
    /// `ZMQ_RCVHWM`: incoming message queue limit per peer (0 unlimited).
    public static var receiveHighWaterMark: Self { Self(ZMQ_RCVHWM) }
    /// `ZMQ_HEARTBEAT_IVL`: milliseconds between ZMTP heartbeat PINGs (0 off).
    public static var heartbeatInterval: Self { Self(ZMQ_HEARTBEAT_IVL) }
    /// `ZMQ_HEARTBEAT_TIMEOUT`: milliseconds to wait for a PONG before dropping the peer.
    public static var heartbeatTimeout: Self { Self(ZMQ_HEARTBEAT_TIMEOUT) }
    /// `ZMQ_HEARTBEAT_TTL`: milliseconds the peer should wait for our next heartbeat.
    public static var heartbeatTTL: Self { Self(ZMQ_HEARTBEAT_TTL) }
    /// `ZMQ_RECONNECT_IVL`: milliseconds before reconnecting a dropped connection (-1 never).
    public static var reconnectInterval: Self { Self(ZMQ_RECONNECT_IVL) }
    /// `ZMQ_RECONNECT_IVL_MAX`: upper bound of the exponential reconnect back-off (0 none).
    public static var reconnectIntervalMax: Self { Self(ZMQ_RECONNECT_IVL_MAX) }
    /// `ZMQ_HANDSHAKE_IVL`: milliseconds allowed for the ZMTP handshake (0 unlimited).
    public static var handshakeInterval: Self { Self(ZMQ_HANDSHAKE_IVL) }
    /// `ZMQ_BACKLOG`: listen queue length for connection-oriented transports.
    public static var backlog: Self { Self(ZMQ_BACKLOG) }
    /// `ZMQ_EVENTS` (read only): the socket's current ``PollEvents`` as raw bits.
    public static var events: Self { Self(ZMQ_EVENTS) }
    /// `ZMQ_FD` (read only): a file descriptor that signals when ``events`` may have changed
    /// (edge-triggered; re-check ``events`` after it fires).
    public static var fileDescriptor: Self { Self(ZMQ_FD) }
}

extension SocketOption where Value == Int64 {
    /// An `int64_t` option not listed here.
    public init(_ name: Int32) { self.init(name: name, kind: .int64) }

    /// `ZMQ_MAXMSGSIZE`: bytes above which an inbound message makes libzmq drop the peer (-1 no
    /// limit).
    public static var maxMessageSize: Self { Self(ZMQ_MAXMSGSIZE) }
}

extension SocketOption where Value == Bool {
    /// A boolean (`int` 0/1) option not listed here.
    public init(_ name: Int32) { self.init(name: name, kind: .bool) }

    /// `ZMQ_IMMEDIATE`: queue messages only to completed connections.
    public static var immediate: Self { Self(ZMQ_IMMEDIATE) }
    /// `ZMQ_ROUTER_MANDATORY`: a ROUTER send to an unknown routing id fails with `EHOSTUNREACH`
    /// instead of being dropped silently.
    public static var routerMandatory: Self { Self(ZMQ_ROUTER_MANDATORY) }
    /// `ZMQ_XPUB_VERBOSE`: an XPUB passes on every subscription, not just new ones.
    public static var xpubVerbose: Self { Self(ZMQ_XPUB_VERBOSE) }
    /// `ZMQ_XPUB_MANUAL`: an XPUB hands every subscription up and applies none by itself; the
    /// application sets ``SocketOption/subscribe`` (or ``SocketOption/unsubscribe``) right
    /// after reading one, for the peer that sent it.
    public static var xpubManual: Self { Self(ZMQ_XPUB_MANUAL) }
    /// `ZMQ_CONFLATE`: keep only the last message (single-part messages only).
    public static var conflate: Self { Self(ZMQ_CONFLATE) }
    /// `ZMQ_IPV6`: enable IPv6 on the socket.
    public static var ipv6: Self { Self(ZMQ_IPV6) }
    /// `ZMQ_CURVE_SERVER`: act as CURVE server; set ``curveSecretKey`` too, before `bind`.
    public static var curveServer: Self { Self(ZMQ_CURVE_SERVER) }
    /// `ZMQ_ZAP_ENFORCE_DOMAIN` (a draft option, number 93): require a ZAP handler for
    /// the socket's ``zapDomain`` and fail handshakes if none answers.
    public static var zapEnforceDomain: Self { Self(93) }  // Not in zmq.h without ZMQ_BUILD_DRAFT_API.
    /// `ZMQ_RCVMORE` (read only): the last frame received had more frames after it.
    public static var receiveMore: Self { Self(ZMQ_RCVMORE) }
    /// `ZMQ_PROBE_ROUTER`: send an empty message on connect, so a ROUTER learns our routing id.
    public static var probeRouter: Self { Self(ZMQ_PROBE_ROUTER) }
}

extension SocketOption where Value == String {
    /// A text option not listed here; set as UTF-8 bytes without a terminating NUL.
    public init(_ name: Int32) { self.init(name: name, kind: .string) }

    /// `ZMQ_CURVE_PUBLICKEY`: our long-term public key, 40 characters of Z85 (set before connect).
    public static var curvePublicKey: Self { Self(name: ZMQ_CURVE_PUBLICKEY, kind: .curveKey) }
    /// `ZMQ_CURVE_SECRETKEY`: our long-term secret key, 40 characters of Z85.
    public static var curveSecretKey: Self { Self(name: ZMQ_CURVE_SECRETKEY, kind: .curveKey) }
    /// `ZMQ_CURVE_SERVERKEY`: the server's public key, 40 characters of Z85; makes us a CURVE
    /// client.
    public static var curveServerKey: Self { Self(name: ZMQ_CURVE_SERVERKEY, kind: .curveKey) }
    /// `ZMQ_ZAP_DOMAIN`: the authentication domain passed to the ZAP handler.
    public static var zapDomain: Self { Self(ZMQ_ZAP_DOMAIN) }
    /// `ZMQ_LAST_ENDPOINT` (read only): the endpoint last bound or connected, with the real port
    /// after binding `tcp://host:*`.
    public static var lastEndpoint: Self { Self(ZMQ_LAST_ENDPOINT) }
}

extension SocketOption where Value == Data {
    /// A binary option not listed here.
    public init(_ name: Int32) { self.init(name: name, kind: .data) }

    /// `ZMQ_SUBSCRIBE`: on a SUB, subscribe to a prefix; on an XPUB with ``xpubManual``, honour
    /// the subscription just read, for the peer that sent it.
    public static var subscribe: Self { Self(ZMQ_SUBSCRIBE) }
    /// `ZMQ_UNSUBSCRIBE`: the opposite of ``subscribe``.
    public static var unsubscribe: Self { Self(ZMQ_UNSUBSCRIBE) }
    /// `ZMQ_ROUTING_ID`: our identity as seen by a ROUTER peer (1…255 bytes, not starting with 0).
    public static var routingID: Self { Self(ZMQ_ROUTING_ID) }
}
