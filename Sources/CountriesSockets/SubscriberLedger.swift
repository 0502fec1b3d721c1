import CountriesCore
import Foundation

/// What each subscriber connection of an event socket holds, so that none holds more than its
/// ``SubscriberBounds``: which subscriptions to honour (``SubscriptionFilter``) and which
/// connection to drop.
///
/// libzmq keeps every subscription a connection sends (honoured or not, a set per connection)
/// until the connection cancels it or goes, so this keeps the same set, by the connection's
/// descriptor and peer address as each message names them. A connection that holds more than
/// its bounds, or sends anything that is not a subscription (a SUB socket never does), is to
/// be dropped; what it sends after that is not applied.
struct SubscriberLedger {
    /// A subscriber connection as libzmq names it on each message it sends.
    struct Peer: Hashable {
        /// The connection's descriptor (`ZMQ_SRCFD`).
        var descriptor: Int32
        /// Its `Peer-Address`: the IP address, or `localhost:UID:GID:PID` over ipc.
        var address: String
    }

    /// What to do with one message.
    enum Action: Equatable {
        /// Honour this subscription for the connection that sent it (`ZMQ_SUBSCRIBE`).
        case subscribe(Data)
        /// Cancel this one (`ZMQ_UNSUBSCRIBE`).
        case unsubscribe(Data)
        /// Nothing to apply: a prefix that matches no topic, one already held, a message of a
        /// connection already dropped, or libzmq's own cancellations for one that left.
        case none
        /// Disconnect the connection, for this reason.
        case drop(String)
    }

    /// The bounds per connection.
    let bounds: SubscriberBounds
    /// Whether an honoured subscription stands for every topic: the relay delivers the whole
    /// stream to each subscriber (its SUB filters), so that what one subscriber that stops
    /// reading can hold is a run of the last messages forwarded (``ForwardingWindow``).
    let wholeStream: Bool

    private struct Entry {
        var address: String
        var held: Set<Data> = []
        var bytes = 0
        var honoured = 0
        var dropped = false

        mutating func drop() {
            dropped = true
            held = []
        }
    }

    private var entries: [Int32: Entry] = [:]

    init(bounds: SubscriberBounds, wholeStream: Bool = false) {
        self.bounds = bounds
        self.wholeStream = wholeStream
    }

    /// Connections with an entry (for tests: entries go when their connection does).
    var count: Int { entries.count }

    /// Records `message`, sent by `peer` (nil for one libzmq made itself), and says what to do.
    ///
    /// A descriptor once dropped stays so, for what the dropped connection had sent before it
    /// ended, until `isAnotherConnection` says the number now belongs to a connection that is
    /// not shut down (the same process may reconnect at once and get the same number).
    mutating func record(
        _ message: Data, from peer: Peer?, isAnotherConnection: (Int32) -> Bool = { _ in false }
    ) -> Action {
        // libzmq's own cancellations, for a connection that went, apply to nothing (it has
        // already forgotten the connection).
        guard let peer else { return .none }
        var entry = entries[peer.descriptor] ?? Entry(address: peer.address)
        // The same descriptor from another peer, or a new connection: the old one went, and its
        // number was reused before its disconnection was read.
        if entry.address != peer.address || (entry.dropped && isAnotherConnection(peer.descriptor)) {
            entry = Entry(address: peer.address)
        }
        defer { entries[peer.descriptor] = entry }
        guard !entry.dropped else { return .none }
        switch SubscriptionFilter.parse(message) {
        case .notASubscription:
            entry.drop()
            return .drop("sent a message that is not a subscription")
        case .subscribe(let prefix):
            guard entry.held.insert(prefix).inserted else { return .none }
            entry.bytes += prefix.count
            guard entry.held.count <= bounds.subscriptions, entry.bytes <= bounds.subscriptionBytes else {
                entry.drop()
                return .drop(
                    "holds more than \(bounds.subscriptions) subscriptions or \(bounds.subscriptionBytes) bytes of them"
                )
            }
            guard SubscriptionFilter.allows(prefix) else { return .none }
            entry.honoured += 1
            guard wholeStream else { return .subscribe(prefix) }
            return entry.honoured == 1 ? .subscribe(Data()) : .none
        case .cancel(let prefix):
            guard entry.held.remove(prefix) != nil else { return .none }
            entry.bytes -= prefix.count
            guard SubscriptionFilter.allows(prefix) else { return .none }
            entry.honoured -= 1
            guard wholeStream else { return .unsubscribe(prefix) }
            return entry.honoured == 0 ? .unsubscribe(Data()) : .none
        }
    }

    /// Forgets the connection with this descriptor: it went (a monitor's disconnection). One
    /// that was dropped is kept (without its subscriptions), so that what it sent before it
    /// went, still queued, is not taken for a new connection's.
    mutating func forget(descriptor: Int32) {
        if entries[descriptor]?.dropped != true { entries[descriptor] = nil }
    }
}
