/// What one subscriber connection may send an event socket, the service's or a relay's, before
/// it is dropped (docs/RELIABILITY.md, "Bounds per peer").
///
/// A manual XPUB shows the loop each subscription, but libzmq has already stored it, a trie
/// node per byte, for as long as the connection lasts: 40,000 distinct 500-byte
/// subscriptions from one connection grew the service by 642 MiB. A subscriber of the protocol
/// needs at most one subscription per topic (five), or the empty one; these leave it plenty.
public struct SubscriberBounds: Sendable, Equatable {
    /// Largest message a subscriber may send (`ZMQ_MAXMSGSIZE`): subscriptions only, and no
    /// honoured one is over 16 bytes; the CURVE handshake needs about 300. A bigger one
    /// disconnects its sender before libzmq stores it.
    public var messageBytes: Int64 = 512
    /// Most distinct subscriptions (honoured or not) one connection may hold at once.
    public var subscriptions = 64
    /// Most bytes of prefixes one connection may hold at once (honoured or not).
    public var subscriptionBytes = 4_096
    /// Messages libzmq queues from one connection for the loop (`ZMQ_RCVHWM`): one, so that
    /// libzmq stores a connection's subscriptions about as fast as the loop reads them.
    ///
    /// libzmq stores subscriptions in the loop's thread, whenever the socket is used, in one
    /// pass that ends when the connection's queue is empty; and it lets its I/O thread refill
    /// that queue once half of it has been read. With a queue of 100, the I/O thread kept it
    /// full while the trie took a node per byte, so one pass went on as long as the peer kept
    /// sending: 13,000 subscriptions of 500 bytes (213 MiB) before the loop saw the first.
    /// With one, a pass ends after a message or two, and the connection is dropped after about
    /// a hundred (what its socket buffer held). A subscriber sends a handful, once. (With
    /// CURVE the socket gets one place more: libzmq puts the ZAP user id first in the queue and
    /// never frees its place.)
    public var queuedMessages: Int32 = 1

    /// The defaults.
    public init() {}
}
