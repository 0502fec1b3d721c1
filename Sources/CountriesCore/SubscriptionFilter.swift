import Foundation

/// Which subscriptions the event sockets honour, for the service and the relay alike: a prefix
/// of one of the protocol's topics (``Topic``), the empty prefix included.
///
/// Anything else can only cost memory: libzmq keeps a trie node per byte of every prefix a
/// subscriber sends, and nothing is ever published under a prefix that no topic starts with.
/// docs/PROTOCOL.md ("Events") and docs/RELIABILITY.md ("Bounds per peer") say so to users.
public enum SubscriptionFilter {
    /// One message an XPUB socket in manual mode hands up.
    public enum Message: Equatable, Sendable {
        /// `0x01` + prefix: subscribe to the prefix.
        case subscribe(Data)
        /// `0x00` + prefix: cancel a subscription to the prefix.
        case cancel(Data)
        /// Anything else (empty, or another first byte): a SUB socket never sends one, so its
        /// sender is no subscriber of the protocol.
        case notASubscription
    }

    /// The longest prefix that can be honoured: the longest topic, in bytes.
    public static let maximumPrefixBytes = Topic.allCases.map(\.rawValue.utf8.count).max() ?? 0

    /// Whether `prefix` starts some topic of the protocol (the empty prefix starts them all).
    public static func allows(_ prefix: some Collection<UInt8>) -> Bool {
        guard prefix.count <= maximumPrefixBytes else { return false }
        return Topic.allCases.contains { $0.rawValue.utf8.starts(with: prefix) }
    }

    /// What a message read from an XPUB socket is.
    public static func parse(_ message: Data) -> Message {
        guard let kind = message.first, kind <= 1 else { return .notASubscription }
        let prefix = Data(message.dropFirst())
        return kind == 1 ? .subscribe(prefix) : .cancel(prefix)
    }
}
