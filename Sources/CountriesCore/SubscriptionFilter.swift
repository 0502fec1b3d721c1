import Foundation

/// Which subscriptions the event sockets honour, for the service and the relay alike: a prefix
/// of one of the protocol's topics (``Topic``), the empty prefix included.
///
/// Anything else can only cost memory: libzmq keeps a trie node per byte of every prefix a
/// subscriber sends, and nothing is ever published under a prefix that no topic starts with.
/// docs/PROTOCOL.md ("Events") and docs/RELIABILITY.md ("Bounds per peer") say so to users.
public enum SubscriptionFilter {
    /// What to do with one message an XPUB socket in manual mode hands up.
    public enum Decision: Equatable, Sendable {
        /// Honour the subscription: set `ZMQ_SUBSCRIBE` with this prefix.
        case subscribe(Data)
        /// Cancel the subscription: set `ZMQ_UNSUBSCRIBE` with this prefix.
        case unsubscribe(Data)
        /// Drop it: a prefix no topic starts with, or not a subscription at all.
        case ignore
    }

    /// The longest prefix that can be honoured: the longest topic, in bytes.
    public static let maximumPrefixBytes = Topic.allCases.map(\.rawValue.utf8.count).max() ?? 0

    /// Whether `prefix` starts some topic of the protocol (the empty prefix starts them all).
    public static func allows(_ prefix: some Collection<UInt8>) -> Bool {
        guard prefix.count <= maximumPrefixBytes else { return false }
        return Topic.allCases.contains { $0.rawValue.utf8.starts(with: prefix) }
    }

    /// The decision for a message read from an XPUB socket: `0x01` + prefix subscribes,
    /// `0x00` + prefix cancels; anything else is not a subscription.
    public static func decide(_ message: Data) -> Decision {
        guard let kind = message.first, kind <= 1 else { return .ignore }
        let prefix = message.dropFirst()
        guard allows(prefix) else { return .ignore }
        return kind == 1 ? .subscribe(Data(prefix)) : .unsubscribe(Data(prefix))
    }
}
