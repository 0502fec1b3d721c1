import CountriesCore
import JSON

/// The rules of `countries web`'s pages, as a pure value (like the terminal's
/// TableScreenModel): what the subscription reports goes in, the Server-Sent Events every page
/// must get come out, and a page that (re)connects gets what it lacks.
///
/// Events (docs/PROTOCOL.md's seqs are the SSE ids):
/// - `snapshot` (id: seq): the whole list,
///   `{"seq":S,"store":ID,"countries":[{"index","name","visited"}]}`;
/// - `change` (id: seq): one row toggled, `{"seq":S,"index":I,"name":N,"visited":V}`, so a page
///   re-renders only that row; added, removed and reset rows come as a snapshot;
/// - `state` (no id): `{"live":true,"line":"live","store":ID}`, or `"live":false` and
///   `"stale: why"`; a page shows skeleton rows (no names) whenever it is not live, and takes a
///   fresh stream when the store differs from its rows' (a resume onto another store: seqs
///   mean something only within one store).
public struct WebPageModel: Sendable {
    /// The replica shown.
    public private(set) var replica: CountriesState?
    /// The identity of the store the replica belongs to, sent in every snapshot and state event
    /// so that a page can tell a resumed stream onto another store (docs/PROTOCOL.md, "SQLiteStore
    /// identity").
    public private(set) var store: String?
    /// The subscription's phase, as last reported.
    public private(set) var phase: SubscriptionPhase = .connecting
    /// How many `change` events are kept for pages that resume with `Last-Event-ID`.
    public let kept: Int
    /// The most bytes of kept changes a resuming page is sent; past it the page gets the
    /// snapshot, one array shared by every page.
    public let resumeBytes: Int
    /// The kept `change` events, oldest first, with consecutive seqs ending at the replica's.
    private var recent: [(seq: UInt64, message: [UInt8])] = []
    /// The snapshot event of the replica now, made once and shared by every page that opens
    /// (one array, not one copy per page).
    private var snapshotMessage: [UInt8]?

    /// Creates a model that keeps the last `kept` changes for resuming pages, and sends a page at
    /// most `resumeBytes` of them (64 KiB: a quarter of what a page may have queued, so a resume
    /// never makes its stream drop it).
    public init(kept: Int = 1024, resumeBytes: Int = 64 << 10) {
        self.kept = max(0, kept)
        self.resumeBytes = max(0, resumeBytes)
    }

    /// The state line a page shows: `live`, or `stale: why`.
    public var stateLine: String {
        switch phase {
        case .live: return "live"
        case .connecting: return "stale: connecting to the service"
        case .stale(let reason): return "stale: \(reason)"
        }
    }

    /// Takes what the subscription reported (the replica and phase after `applied`) and returns
    /// the bytes to send to every open page.
    public mutating func update(
        replica new: CountriesState?, store newStore: String? = nil, phase newPhase: SubscriptionPhase,
        applied: [Event]
    ) -> [UInt8] {
        var out: [UInt8] = []
        let previous = replica
        let storeChanged = newStore != store
        replica = new
        store = newStore
        if new != previous || storeChanged { snapshotMessage = nil }
        if let new, new != previous || storeChanged {
            if let previous, !storeChanged, fitsOneByOne(applied, from: previous.seq, to: new.seq) {
                for event in applied {
                    guard case .changed(let row) = event.kind else { continue }
                    let message = Self.change(row, seq: event.seq)
                    recent.append((event.seq, message))
                    out += message
                }
                if recent.count > kept { recent.removeFirst(recent.count - kept) }
            } else {
                recent = []
                let message = snapshot(new)
                snapshotMessage = message
                out += message
            }
        }
        if newPhase != phase || storeChanged {
            phase = newPhase
            out += stateMessage
        }
        return out
    }

    /// What a page that just opened its stream gets, as messages to queue in order: everything
    /// after `lastEventID` when it is kept (no gap), else the snapshot; then the state line.
    public mutating func opened(lastEventID: String?) -> [[UInt8]] {
        var out = [Array("retry: 1000\n\n".utf8)]
        if let replica {
            let last = lastEventID.flatMap { UInt64($0.filter { $0 != " " }) }
            if let last, last == replica.seq {
                // Nothing missed.
            } else if let last, last < replica.seq, let missed = missedChanges(after: last) {
                out += missed
            } else {
                let message = snapshotMessage ?? snapshot(replica)
                snapshotMessage = message
                out.append(message)
            }
        }
        return out + [stateMessage]
    }

    /// The kept `change` messages after `last`, each the array every page shares (a joined copy
    /// per page was 1.7 MB with the longest names: 1,000 resuming pages held 1 GB, and other
    /// pages waited while they were joined); nil when they do not reach back to `last` or weigh
    /// more than ``resumeBytes``.
    private func missedChanges(after last: UInt64) -> [[UInt8]]? {
        guard let first = recent.first, first.seq <= last + 1 else { return nil }
        let missed = recent[Int(last + 1 - first.seq)...]
        var bytes = 0
        for change in missed {
            bytes += change.message.count
            if bytes > resumeBytes { return nil }
        }
        return missed.map(\.message)
    }

    /// The `state` event for the phase now.
    public var stateMessage: [UInt8] {
        var json = JSONWriter()
        json.raw("{\"live\":")
        json.bool(phase == .live)
        json.raw(",\"line\":")
        json.string(stateLine)
        if let store {
            json.raw(",\"store\":")
            json.string(store)
        }
        json.raw("}")
        return Self.event("state", id: nil, data: json.bytes)
    }

    /// Whether `applied` are exactly the toggles from `start` to `end`, one seq at a time.
    private func fitsOneByOne(_ applied: [Event], from start: UInt64, to end: UInt64) -> Bool {
        guard !applied.isEmpty, applied.count == Int(clamping: end &- start), end > start else {
            return false
        }
        for (offset, event) in applied.enumerated() {
            guard event.seq == start + UInt64(offset) + 1, case .changed = event.kind else { return false }
        }
        return true
    }

    /// The `change` event of one row.
    static func change(_ row: IndexedCountry, seq: UInt64) -> [UInt8] {
        var json = JSONWriter()
        json.raw("{\"seq\":")
        json.unsigned(seq)
        json.raw(",")
        row.write(into: &json)
        json.raw("}")
        return event("change", id: seq, data: json.bytes)
    }

    /// The `snapshot` event of a whole list, with its store.
    func snapshot(_ state: CountriesState) -> [UInt8] {
        var json = JSONWriter(capacity: 64 * state.count + 96)
        json.raw("{\"seq\":")
        json.unsigned(state.seq)
        if let store {
            json.raw(",\"store\":")
            json.string(store)
        }
        json.raw(",\"countries\":[")
        for (offset, row) in state.rows.enumerated() {
            if offset > 0 { json.raw(",") }
            json.raw("{")
            row.write(into: &json)
            json.raw("}")
        }
        json.raw("]}")
        return Self.event("snapshot", id: state.seq, data: json.bytes)
    }

    /// One SSE event; the JSON has no newline, so it is one `data:` line.
    static func event(_ name: String, id: UInt64?, data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        if let id { out += Array("id: \(id)\n".utf8) }
        out += Array("event: \(name)\ndata: ".utf8)
        out += data
        out += Array("\n\n".utf8)
        return out
    }
}

extension IndexedCountry {
    /// `"index":I,"name":N,"visited":V`, for the page's events.
    fileprivate func write(into json: inout JSONWriter) {
        json.raw("\"index\":")
        json.integer(index)
        json.raw(",\"name\":")
        json.string(name)
        json.raw(",\"visited\":")
        json.bool(visited)
    }
}
