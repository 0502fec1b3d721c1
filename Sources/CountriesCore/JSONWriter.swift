import Foundation

/// Writes the wire JSON of replies, events and heartbeats by hand: the exact bytes `JSONEncoder`
/// wrote with `[.sortedKeys, .withoutEscapingSlashes]` (keys in sorted order, `/` unescaped,
/// control characters as `\b \t \n \f \r` or `\u00xx`), at a fraction of its cost. The
/// `status` reply, rare and with a `Double`, still goes through `JSONEncoder`.
struct JSONWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 128) {
        bytes.reserveCapacity(capacity)
    }

    var data: Data { Data(bytes) }

    mutating func raw(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    mutating func bool(_ value: Bool) {
        value ? raw("true") : raw("false")
    }

    mutating func unsigned(_ value: UInt64) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var count = 0
            var rest = value
            repeat {
                digits[19 - count] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
                count += 1
            } while rest > 0
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[(20 - count)...]))
        }
    }

    mutating func integer(_ value: Int) {
        if value < 0 {
            bytes.append(UInt8(ascii: "-"))
            unsigned(UInt64(value.magnitude))
        } else {
            unsigned(UInt64(value))
        }
    }

    mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            var start = 0
            for (position, byte) in utf8.enumerated() where byte < 0x20 || byte == 0x22 || byte == 0x5C {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<position]))
                start = position + 1
                bytes.append(UInt8(ascii: "\\"))
                switch byte {
                case 0x22: bytes.append(0x22)
                case 0x5C: bytes.append(0x5C)
                case 0x08: bytes.append(UInt8(ascii: "b"))
                case 0x09: bytes.append(UInt8(ascii: "t"))
                case 0x0A: bytes.append(UInt8(ascii: "n"))
                case 0x0C: bytes.append(UInt8(ascii: "f"))
                case 0x0D: bytes.append(UInt8(ascii: "r"))
                default:
                    let hex: [UInt8] = Array("0123456789abcdef".utf8)
                    bytes.append(contentsOf: [
                        UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)],
                    ])
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// `{"index":I,"name":N,"visited":V}`
    mutating func country(_ row: IndexedCountry) {
        raw(#"{"index":"#)
        integer(row.index)
        raw(#","name":"#)
        string(row.name)
        raw(#","visited":"#)
        bool(row.visited)
        bytes.append(UInt8(ascii: "}"))
    }

    mutating func countries(_ rows: [IndexedCountry]) {
        bytes.append(UInt8(ascii: "["))
        for (offset, row) in rows.enumerated() {
            if offset > 0 { bytes.append(UInt8(ascii: ",")) }
            country(row)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// `{"country":...,"seq":S,"topic":T}` or `{"countries":[...],"seq":S,"topic":T}`
    mutating func event(_ event: Event) {
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
        raw(#","topic":"#)
        string(event.topic.rawValue)
        bytes.append(UInt8(ascii: "}"))
    }

    /// A reply without `status` fields, keys sorted: count, countries, country, error, events,
    /// more, ok, seq.
    mutating func reply(_ reply: Reply) {
        bytes.append(UInt8(ascii: "{"))
        if let count = reply.count {
            raw(#""count":"#)
            integer(count)
            bytes.append(UInt8(ascii: ","))
        }
        if let rows = reply.countries {
            raw(#""countries":"#)
            countries(rows)
            bytes.append(UInt8(ascii: ","))
        }
        if let row = reply.country {
            raw(#""country":"#)
            country(row)
            bytes.append(UInt8(ascii: ","))
        }
        if let error = reply.error {
            raw(#""error":{"code":"#)
            string(error.code)
            raw(#","message":"#)
            string(error.message)
            raw("},")
        }
        if let events = reply.events {
            raw(#""events":["#)
            for (offset, item) in events.enumerated() {
                if offset > 0 { bytes.append(UInt8(ascii: ",")) }
                event(item)
            }
            raw("],")
        }
        if let more = reply.more {
            raw(#""more":"#)
            bool(more)
            bytes.append(UInt8(ascii: ","))
        }
        raw(#""ok":"#)
        bool(reply.ok)
        if let seq = reply.seq {
            raw(#","seq":"#)
            unsigned(seq)
        }
        bytes.append(UInt8(ascii: "}"))
    }
}
