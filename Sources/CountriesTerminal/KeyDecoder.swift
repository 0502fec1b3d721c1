/// A key press, decoded from the bytes a terminal sends in raw mode.
public enum Key: Equatable, Hashable, Sendable {
    /// Arrow up (`ESC [ A`, `ESC O A`).
    case up
    /// Arrow down (`ESC [ B`, `ESC O B`).
    case down
    /// Page Up (`ESC [ 5 ~`).
    case pageUp
    /// Page Down (`ESC [ 6 ~`).
    case pageDown
    /// Home (`ESC [ H`, `ESC O H`, `ESC [ 1 ~`, `ESC [ 7 ~`).
    case home
    /// End (`ESC [ F`, `ESC O F`, `ESC [ 4 ~`, `ESC [ 8 ~`).
    case end
    /// Return or Enter (`\r`, `\n`, keypad `ESC O M`).
    case enter
    /// The space bar.
    case space
    /// A printable character (UTF-8 decoded).
    case char(Character)
    /// Ctrl-C (0x03): raw mode delivers it as a byte, not as SIGINT.
    case ctrlC
    /// Escape on its own (known only after a pause: see ``KeyDecoder/flush()``).
    case escape
    /// Anything else: other control bytes, function keys, invalid UTF-8.
    case unknown
}

/// Decodes raw-mode input into keys, keeping incomplete sequences until more bytes arrive.
///
/// A lone `ESC` may be the Escape key or the start of a sequence split across reads, so it stays
/// buffered; the loop calls ``flush()`` when no byte has followed for a short time (say 50 ms),
/// and only then does it become ``Key/escape``. ``hasPending`` tells the loop to arm that timer.
public struct KeyDecoder: Sendable {
    private var buffer: [UInt8] = []

    /// The longest escape sequence accepted; a longer one is dropped as ``Key/unknown``.
    static let maximumSequenceLength = 32

    /// Creates a decoder with an empty buffer.
    public init() {}

    /// Whether bytes are held back, waiting for the rest of a sequence or for ``flush()``.
    public var hasPending: Bool { !buffer.isEmpty }

    /// Decodes the keys completed by `bytes`; an incomplete tail is kept for the next call.
    public mutating func decode(_ bytes: some Sequence<UInt8>) -> [Key] {
        buffer.append(contentsOf: bytes)
        return drain(final: false)
    }

    /// Decodes whatever is held back as if no more bytes will follow: a lone `ESC` becomes
    /// ``Key/escape``, an incomplete sequence becomes Escape followed by its characters.
    public mutating func flush() -> [Key] {
        drain(final: true)
    }

    private mutating func drain(final: Bool) -> [Key] {
        var keys: [Key] = []
        var position = 0
        while position < buffer.count {
            switch decodeOne(at: position, final: final) {
            case .key(let key, let length):
                keys.append(key)
                position += length
            case .incomplete:
                buffer.removeFirst(position)
                return keys
            }
        }
        buffer.removeAll()
        return keys
    }

    private enum Step {
        case key(Key, length: Int)
        case incomplete
    }

    private func decodeOne(at start: Int, final: Bool) -> Step {
        let byte = buffer[start]
        switch byte {
        case 0x1B: return decodeEscape(at: start, final: final)
        case 0x03: return .key(.ctrlC, length: 1)
        case 0x0D, 0x0A: return .key(.enter, length: 1)
        case 0x20: return .key(.space, length: 1)
        case 0x21...0x7E: return .key(.char(Character(Unicode.Scalar(byte))), length: 1)
        case 0x00...0x1F, 0x7F: return .key(.unknown, length: 1)
        default: return decodeUTF8(at: start, final: final)
        }
    }

    private func decodeEscape(at start: Int, final: Bool) -> Step {
        let available = buffer.count - start
        guard available >= 2 else { return final ? .key(.escape, length: 1) : .incomplete }
        switch buffer[start + 1] {
        case UInt8(ascii: "["):
            return decodeCSI(at: start, final: final)
        case UInt8(ascii: "O"):
            guard available >= 3 else { return final ? .key(.escape, length: 1) : .incomplete }
            return .key(Self.ss3Key(buffer[start + 2]), length: 3)
        default:
            // ESC ESC, or Alt+key: Escape, then the next byte on its own.
            return .key(.escape, length: 1)
        }
    }

    /// `ESC [` parameters (0x30–0x3F), intermediates (0x20–0x2F), then a final byte (0x40–0x7E).
    private func decodeCSI(at start: Int, final: Bool) -> Step {
        var index = start + 2
        while index < buffer.count {
            let byte = buffer[index]
            if index - start >= Self.maximumSequenceLength { return .key(.unknown, length: index - start) }
            if (0x40...0x7E).contains(byte) {
                let parameters = String(decoding: buffer[(start + 2)..<index], as: UTF8.self)
                return .key(Self.csiKey(parameters: parameters, final: byte), length: index - start + 1)
            }
            guard (0x20...0x3F).contains(byte) else {
                // Not a valid sequence: drop what was read as one unknown key.
                return .key(.unknown, length: index - start)
            }
            index += 1
        }
        return final ? .key(.escape, length: 1) : .incomplete
    }

    private static func csiKey(parameters: String, final: UInt8) -> Key {
        switch final {
        case UInt8(ascii: "A"): return .up
        case UInt8(ascii: "B"): return .down
        case UInt8(ascii: "H"): return .home
        case UInt8(ascii: "F"): return .end
        case UInt8(ascii: "~"):
            // `ESC [ 5 ; 2 ~` (with a modifier) is still Page Up.
            let first = parameters.split(separator: ";", omittingEmptySubsequences: false).first ?? ""
            switch first {
            case "1", "7": return .home
            case "4", "8": return .end
            case "5": return .pageUp
            case "6": return .pageDown
            default: return .unknown
            }
        default: return .unknown
        }
    }

    private static func ss3Key(_ byte: UInt8) -> Key {
        switch byte {
        case UInt8(ascii: "A"): return .up
        case UInt8(ascii: "B"): return .down
        case UInt8(ascii: "H"): return .home
        case UInt8(ascii: "F"): return .end
        case UInt8(ascii: "M"): return .enter
        default: return .unknown
        }
    }

    private func decodeUTF8(at start: Int, final: Bool) -> Step {
        let lead = buffer[start]
        let length: Int
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0...0xEF: length = 3
        case 0xF0...0xF4: length = 4
        default: return .key(.unknown, length: 1)
        }
        let available = buffer.count - start
        for offset in 1..<min(length, available) where buffer[start + offset] & 0xC0 != 0x80 {
            return .key(.unknown, length: offset)
        }
        guard available >= length else { return final ? .key(.unknown, length: available) : .incomplete }
        let bytes = buffer[start..<(start + length)]
        var decoder = UTF8()
        var iterator = bytes.makeIterator()
        guard case .scalarValue(let scalar) = decoder.decode(&iterator) else {
            return .key(.unknown, length: length)
        }
        return .key(.char(Character(scalar)), length: length)
    }
}
