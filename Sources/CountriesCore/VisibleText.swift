import Foundation

/// The one escaping of text that reaches a terminal or a log line: every client output path
/// (`list`, `get`, `history`, `events`, `watch` on a terminal or piped, `select`, `on-change`,
/// `status`, the error messages) goes through it, so a name or message from the wire can never
/// move the cursor, clear the screen, set the window title or show itself in another order.
///
/// What is escaped (``isEscaped(_:)``): the C0 controls (U+0000–001F), DEL (U+007F), the C1
/// controls (U+0080–009F, among them the 8-bit CSI U+009B), the line and paragraph separators
/// (U+2028, U+2029), the bidirectional controls (U+061C, U+200E, U+200F, U+202A–202E,
/// U+2066–2069), and the characters a terminal shows as nothing at all, which make a name look
/// like another (`Fr\u{200B}ance`): the soft hyphen U+00AD, the combining grapheme joiner
/// U+034F, the Hangul fillers U+115F, U+1160, U+3164 and U+FFA0, the Mongolian vowel separator
/// U+180E, the zero-width space U+200B, the word joiner and invisible operators U+2060–2064 and
/// the byte order mark U+FEFF. The zero-width joiner and non-joiner (U+200C, U+200D) stay: scripts
/// and emoji need them. Everything else is shown as it is.
///
/// How: in text, as Swift writes the scalar in a string literal, `\u{1B}` (hex digits in upper
/// case, no leading zeros); in JSON, as a JSON escape, `\u001b`, so the value read back is the
/// same string. Both add only printable ASCII, so escaping twice changes nothing.
public enum VisibleText {
    /// Whether a terminal could take `scalar` for something other than a character to show.
    public static func isEscaped(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x2028...0x202E, 0x2066...0x2069:
            return true
        case 0x00AD, 0x034F, 0x115F, 0x1160, 0x180E, 0x200B, 0x2060...0x2064, 0x3164, 0xFEFF, 0xFFA0:
            return true
        default:
            return false
        }
    }

    /// `text` with every scalar of ``isEscaped(_:)`` written as `\u{1B}`; with `keepingNewlines`,
    /// a line feed stays one (a message of several lines).
    public static func escaped(_ text: String, keepingNewlines: Bool = false) -> String {
        guard mayNeedEscaping(text) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            if isEscaped(scalar), !(keepingNewlines && scalar == "\n") {
                out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// JSON text with every scalar of ``isEscaped(_:)`` written as a JSON escape (`\u001b`, four
    /// hex digits in lower case, as `JSONWriter` writes control characters).
    ///
    /// The JSON must have no white space between its tokens (as the project's writer makes it):
    /// then such a scalar can only stand inside a string, where the escape means the same
    /// character, and the value read back is unchanged. Not UTF-8: returned as it is.
    public static func escapedJSON(_ json: Data) -> Data {
        guard let text = String(validating: json, as: UTF8.self), mayNeedEscaping(text) else { return json }
        let digits = Array("0123456789abcdef".unicodeScalars)
        var out = ""
        out.reserveCapacity(json.count + 16)
        for scalar in text.unicodeScalars {
            guard isEscaped(scalar) else {
                out.unicodeScalars.append(scalar)
                continue
            }
            out += "\\u"
            for shift in [12, 8, 4, 0] {
                out.unicodeScalars.append(digits[Int((scalar.value >> shift) & 0xF)])
            }
        }
        return Data(out.utf8)
    }

    /// False when no scalar of `text` can be one to escape, from its UTF-8 bytes alone: the fast
    /// path of a table's every line. (U+0080–00AD start with 0xC2, U+034F with 0xCD, U+061C with
    /// 0xD8, U+115F–180E with 0xE1, U+200B–2069 with 0xE2, U+3164 with 0xE3, U+FEFF and U+FFA0
    /// with 0xEF.)
    private static func mayNeedEscaping(_ text: String) -> Bool {
        func check(_ byte: UInt8) -> Bool {
            switch byte {
            case 0x00..<0x20, 0x7F, 0xC2, 0xCD, 0xD8, 0xE1, 0xE2, 0xE3, 0xEF: true
            default: false
            }
        }
        if let quick = text.utf8.withContiguousStorageIfAvailable({ $0.contains(where: check) }) {
            return quick && text.unicodeScalars.contains(where: isEscaped)
        }
        return text.unicodeScalars.contains(where: isEscaped)
    }
}
