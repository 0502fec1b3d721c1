import Foundation
import JSON

/// Writes the wire JSON of every message (requests, replies, events, heartbeats) with the JSON
/// module's writer: the exact bytes `JSONEncoder` wrote with `[.sortedKeys,
/// .withoutEscapingSlashes]`, at a fraction of its cost. The tests keep `JSONEncoder` as the
/// reference.
extension JSONWriter {
    /// `{"index":I,"name":N,"visited":V}`
    mutating func country(_ row: IndexedCountry) {
        raw(#"{"index":"#)
        integer(row.index)
        raw(#","name":"#)
        string(row.name)
        raw(#","visited":"#)
        bool(row.visited)
        byte(UInt8(ascii: "}"))
    }

    mutating func countries(_ rows: [IndexedCountry]) {
        byte(UInt8(ascii: "["))
        for (offset, row) in rows.enumerated() {
            if offset > 0 { byte(UInt8(ascii: ",")) }
            country(row)
        }
        byte(UInt8(ascii: "]"))
    }

    /// `{"country":...,"seq":S,"store":ID,"topic":T}` or `{"countries":[...],"seq":S,...}`
    /// (`store` only when the event has one).
    @usableFromInline mutating func event(_ event: Event) {
        switch event.kind {
        case .changed(let row), .added(let row), .removed(let row):
            raw(#"{"country":"#)
            country(row)
        case .reset(let rows):
            raw(#"{"countries":"#)
            countries(rows)
        }
        raw(#","seq":"#)
        unsigned(event.seq)
        if let store = event.store {
            raw(#","store":"#)
            string(store)
        }
        raw(#","topic":"#)
        string(event.topic.rawValue)
        byte(UInt8(ascii: "}"))
    }

    /// The state of one object being written: whether a member was written yet, and the
    /// `status` fields still to be merged in among the others, sorted by key.
    struct Object {
        fileprivate var empty = true
        fileprivate var pending: [(key: String, value: ServiceStatus.Value)]
        fileprivate var next = 0

        /// An object with no fields but those written with ``JSONWriter/member(_:of:)``, and the
        /// fields `status` has set.
        init(status: ServiceStatus? = nil) {
            guard let status else {
                pending = []
                return
            }
            pending = ServiceStatus.fieldsByKey.compactMap { field in
                field.get(status).map { (field.key, $0) }
            }
        }
    }

    /// Opens an object.
    mutating func open(_ object: Object = Object()) -> Object {
        byte(UInt8(ascii: "{"))
        return object
    }

    /// Writes a member's key, given quoted with its colon (`#""count":"#`), after a comma unless
    /// it is the first; keys must come sorted. The object's `status` fields that sort before it
    /// are written first.
    @inline(__always)
    mutating func member(_ key: StaticString, of object: inout Object) {
        if object.next < object.pending.count {
            pendingMembers(before: String(key.description.dropFirst().dropLast(2)), of: &object)
        }
        if !object.empty { byte(UInt8(ascii: ",")) }
        object.empty = false
        raw(key)
    }

    /// Closes an object, after the `status` fields it has left.
    mutating func close(_ object: inout Object) {
        if object.next < object.pending.count { pendingMembers(before: nil, of: &object) }
        byte(UInt8(ascii: "}"))
    }

    private mutating func pendingMembers(before key: String?, of object: inout Object) {
        while object.next < object.pending.count {
            let (name, value) = object.pending[object.next]
            if let key, name >= key { return }
            object.next += 1
            if !object.empty { byte(UInt8(ascii: ",")) }
            object.empty = false
            string(name)
            byte(UInt8(ascii: ":"))
            statusValue(value)
        }
    }

    private mutating func statusValue(_ value: ServiceStatus.Value) {
        switch value {
        case .text(let text): string(text)
        case .count(let number): integer(number)
        case .seq(let number): unsigned(number)
        case .milliseconds(let milliseconds): seconds(milliseconds: milliseconds)
        case .list(let items):
            byte(UInt8(ascii: "["))
            for (offset, item) in items.enumerated() {
                if offset > 0 { byte(UInt8(ascii: ",")) }
                string(item)
            }
            byte(UInt8(ascii: "]"))
        }
    }

    /// Milliseconds as a number of seconds, exactly: `1500` is `1.5`, `2000` is `2`, `1` is
    /// `0.001`. Below 10^15 ms (31,000 years) that is at most 15 significant digits, which a
    /// `Double` keeps, so these are the bytes `JSONEncoder` wrote for the `Double` of the seconds
    /// (the shortest decimal that reads back as it).
    mutating func seconds(milliseconds: UInt64) {
        unsigned(milliseconds / 1000)
        var fraction = milliseconds % 1000
        guard fraction > 0 else { return }
        byte(UInt8(ascii: "."))
        var divisor: UInt64 = 100
        while fraction > 0 {
            byte(UInt8(ascii: "0") + UInt8(fraction / divisor))
            fraction %= divisor
            divisor /= 10
        }
    }

    /// A reply, keys sorted: count, countries, country, error, events, more, ok, seq, store, with
    /// the `status` fields among them.
    @usableFromInline mutating func reply(_ reply: Reply) {
        var object = open(reply.hasStatus ? Object(status: reply.status) : Object())
        if let count = reply.count {
            member(#""count":"#, of: &object)
            integer(count)
        }
        if let rows = reply.countries {
            member(#""countries":"#, of: &object)
            countries(rows)
        }
        if let row = reply.country {
            member(#""country":"#, of: &object)
            country(row)
        }
        if let error = reply.error {
            member(#""error":"#, of: &object)
            raw(#"{"code":"#)
            string(error.code)
            raw(#","message":"#)
            string(error.message)
            byte(UInt8(ascii: "}"))
        }
        if let events = reply.events {
            member(#""events":"#, of: &object)
            byte(UInt8(ascii: "["))
            for (offset, item) in events.enumerated() {
                if offset > 0 { byte(UInt8(ascii: ",")) }
                event(item)
            }
            byte(UInt8(ascii: "]"))
        }
        if let more = reply.more {
            member(#""more":"#, of: &object)
            bool(more)
        }
        member(#""ok":"#, of: &object)
        bool(reply.ok)
        if let seq = reply.seq {
            member(#""seq":"#, of: &object)
            unsigned(seq)
        }
        if let store = reply.store {
            member(#""store":"#, of: &object)
            string(store)
        }
        close(&object)
    }

    /// A whole list as `watch --json` prints it: `{"countries":[...],"seq":S,"store":ID}`
    /// (`store` only when known).
    mutating func snapshot(_ state: CountriesState, store: String?) {
        raw(#"{"countries":"#)
        countries(state.rows)
        raw(#","seq":"#)
        unsigned(state.seq)
        if let store {
            raw(#","store":"#)
            string(store)
        }
        byte(UInt8(ascii: "}"))
    }

    /// `{"seq":S,"store":ID,"topic":"heartbeat"}` (`store` only when it has one).
    @usableFromInline mutating func heartbeat(_ heartbeat: Heartbeat) {
        var object = open()
        member(#""seq":"#, of: &object)
        unsigned(heartbeat.seq)
        if let store = heartbeat.store {
            member(#""store":"#, of: &object)
            string(store)
        }
        member(#""topic":"#, of: &object)
        string(heartbeat.topic.rawValue)
        close(&object)
    }

    /// A request, keys sorted: id, if_seq, if_store, index, name, op, since, visited.
    @usableFromInline mutating func request(_ request: Request) {
        var index: Int?
        var name: String?
        var visited: Bool?
        var ifSeq: UInt64?
        var since: UInt64?
        func refer(_ reference: CountryReference) {
            switch reference {
            case .index(let value): index = value
            case .name(let value): name = value
            }
        }
        switch request.command {
        case .query(.list), .query(.count), .change(.reset), .status:
            break
        case .query(.get(let reference)), .change(.remove(let reference)):
            refer(reference)
        case .change(.toggle(let reference, let seq)):
            refer(reference)
            ifSeq = seq
        case .change(.set(let reference, let flag, let seq)):
            refer(reference)
            visited = flag
            ifSeq = seq
        case .change(.add(let added, let flag)):
            name = added
            visited = flag
        case .history(let seq):
            since = seq
        }
        var object = open()
        if let id = request.id {
            member(#""id":"#, of: &object)
            string(id)
        }
        if let ifSeq {
            member(#""if_seq":"#, of: &object)
            unsigned(ifSeq)
        }
        if let ifStore = request.ifStore {
            member(#""if_store":"#, of: &object)
            string(ifStore)
        }
        if let index {
            member(#""index":"#, of: &object)
            integer(index)
        }
        if let name {
            member(#""name":"#, of: &object)
            string(name)
        }
        member(#""op":"#, of: &object)
        string(request.command.op)
        if let since {
            member(#""since":"#, of: &object)
            unsigned(since)
        }
        if let visited {
            member(#""visited":"#, of: &object)
            bool(visited)
        }
        close(&object)
    }
}
