import CountriesCore
import CountriesStore
import Foundation

/// How a `reset` is kept in etcd: not the whole list (up to about 4.2 MB, more than one etcd
/// request may carry) but a small marker, `{"reset":"to the seed","seq":S,"store":ID}`, since a
/// reset always goes back to the store's seed, which every replica reads at start
/// (``EtcdLayout/seed``). Every reader expands a marker to the bytes one encoder makes of the
/// event, `Event(seq:kind:.reset(seed rows),store:).encoded()`, so every replica publishes the
/// same bytes; a remembered reset's reply is kept as the same marker and made again with
/// `Reply(answering:)`, as the single-node store does (docs/HA.md, "What is in etcd").
struct EtcdResetMarker: Equatable, Sendable {
    /// The seq of the reset.
    var seq: UInt64
    /// The store the reset was made in, as its event says.
    var store: String?

    private static let head = #"{"reset":"to the seed","seq":"#

    /// The marker as stored.
    var encoded: Data {
        var text = Self.head + String(seq)
        if let store { text += #","store":"# + "\"" + store + "\"" }
        return Data((text + "}").utf8)
    }

    /// The marker a value holds; nil when it is not one (an event or a reply in full).
    init?(_ value: Data) {
        let text = String(decoding: value, as: UTF8.self)
        guard text.hasPrefix(Self.head), text.hasSuffix("}") else { return nil }
        let body = text.dropFirst(Self.head.count).dropLast()
        let parts = body.split(separator: ",", maxSplits: 1)
        guard let first = parts.first, let seq = UInt64(first) else { return nil }
        self.seq = seq
        if parts.count == 2 {
            let field = #""store":""#
            guard parts[1].hasPrefix(field), parts[1].hasSuffix("\""), parts[1].count > field.count else {
                return nil
            }
            let store = String(parts[1].dropFirst(field.count).dropLast())
            guard StoreIdentity.isWellFormed(store) else { return nil }
            self.store = store
        } else {
            store = nil
        }
    }

    init(seq: UInt64, store: String?) {
        self.seq = seq
        self.store = store
    }

    /// The marker for `event`, when it is a reset to `seedRows` (the only reset there is; a
    /// reset to anything else is kept in full).
    init?(for event: Event, seedRows: [IndexedCountry]) {
        guard case .reset(let rows) = event.kind, rows == seedRows else { return nil }
        self.init(seq: event.seq, store: event.store)
    }

    /// The event the marker stands for.
    func event(seedRows: [IndexedCountry]) -> Event {
        Event(seq: seq, kind: .reset(seedRows), store: store)
    }

    /// The reply the reset got, made again: byte for byte the one first sent.
    func reply(seedRows: [IndexedCountry]) -> Data {
        var reply = Reply(answering: event(seedRows: seedRows))
        reply.store = store
        return reply.encoded()
    }
}
