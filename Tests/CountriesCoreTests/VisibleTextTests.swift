import Foundation
import JSON
import Testing

@testable import CountriesCore

/// The one escaping of what reaches a terminal (``VisibleText``), and the name rules a
/// subscriber holds events to (``Event/validateNames()``).
@Suite struct VisibleTextTests {
    /// The name of issue 22's hostile publisher: a title change (OSC ... BEL), a screen clear
    /// (CSI 2J), the 8-bit CSI, a right-to-left override and DEL.
    static let hostile = "Evil\u{1B}]0;pwned\u{7}\u{1B}[2J\u{9B}31m\u{202E}dlroW\u{7F}"

    @Test func everyControlBidiAndInvisibleScalarIsEscapedAndNothingElse() {
        let escaped: [UInt32] =
            Array(0x00...0x1F) + Array(0x7F...0x9F) + [0x061C, 0x200E, 0x200F]
            + Array(0x2028...0x202E) + Array(0x2066...0x2069)
            + [0x00AD, 0x034F, 0x115F, 0x1160, 0x180E, 0x200B] + Array(0x2060...0x2064)
            + [0x3164, 0xFEFF, 0xFFA0]
        for value in 0..<0x10000 as Range<UInt32> {
            guard let scalar = Unicode.Scalar(value) else { continue }
            #expect(VisibleText.isEscaped(scalar) == escaped.contains(value), "U+\(String(value, radix: 16))")
        }
        #expect(
            VisibleText.escaped(Self.hostile)
                == #"Evil\u{1B}]0;pwned\u{7}\u{1B}[2J\u{9B}31m\u{202E}dlroW\u{7F}"#)
        for value in escaped {
            let text = VisibleText.escaped("a" + String(Unicode.Scalar(value)!) + "b")
            #expect(text == "a\\u{\(String(value, radix: 16, uppercase: true))}b")
        }
    }

    /// A name made to look like another by characters a terminal shows as nothing: seen.
    @Test func aLookAlikeNameShowsWhatMakesItDiffer() {
        #expect(VisibleText.escaped("Fr\u{200B}ance") == #"Fr\u{200B}ance"#)
        #expect(VisibleText.escaped("\u{FEFF}Spain\u{2060}") == #"\u{FEFF}Spain\u{2060}"#)
        #expect(
            String(decoding: VisibleText.escapedJSON(Data(#"{"name":"Ita\#u{AD}ly"}"#.utf8)), as: UTF8.self)
                == #"{"name":"Ita\u00adly"}"#)
        // Joiners that scripts and emoji need stay.
        for text in ["👩\u{200D}💻", "می\u{200C}خواهم", "ヨーロッパ", "한국", "Ｆｒａｎｃｅ"] {
            #expect(VisibleText.escaped(text) == text)
        }
    }

    @Test func printableTextIsUnchangedAndEscapingTwiceChangesNothing() {
        for text in ["France", "Côte d’Ivoire", "日本", "✓ · …", "e\u{301}", "👩‍👩‍👧", "a\\u{1B}b", ""] {
            #expect(VisibleText.escaped(text) == text)
        }
        let once = VisibleText.escaped(Self.hostile)
        #expect(VisibleText.escaped(once) == once)
        #expect(!once.unicodeScalars.contains(where: VisibleText.isEscaped))
    }

    @Test func messagesOfSeveralLinesKeepTheirLineFeedsOnly() {
        #expect(
            VisibleText.escaped("Error: x\u{1B}[2J\nUsage: y\r\n", keepingNewlines: true)
                == "Error: x\\u{1B}[2J\nUsage: y\\u{D}\n")
        #expect(VisibleText.escaped("a\nb") == "a\\u{A}b")
    }

    /// JSON keeps its value: the escapes are JSON's, inside the strings, and read back as the
    /// very name; no raw byte a terminal acts on is left.
    @Test func jsonEscapesReadBackAsTheSameValue() throws {
        let event = Event(seq: 7, kind: .added(IndexedCountry(index: 8, name: Self.hostile, visited: false)))
        let raw = event.encoded()
        let json = VisibleText.escapedJSON(raw)
        let text = String(decoding: json, as: UTF8.self)
        #expect(!text.unicodeScalars.contains(where: VisibleText.isEscaped), "\(text)")
        #expect(text.contains(#"\u001b]0;pwned\u0007\u001b[2J\u009b31m\u202edlroW\u007f"#), "\(text)")
        #expect(try Event.decode(json) == event)
        #expect(try JSONParser.parse(json, maximumNesting: 16) == JSONParser.parse(raw, maximumNesting: 16))
        // Nothing to escape: the very bytes.
        let plain = Event(
            seq: 1, kind: .added(IndexedCountry(index: 0, name: "Côte d’Ivoire", visited: true)))
        #expect(VisibleText.escapedJSON(plain.encoded()) == plain.encoded())
    }

    @Test func quotedNamesInMessagesUseTheSameEscapes() {
        #expect(CountryName.quoted("A\u{202E}B\u{200F}") == #""A\u{202E}B\u{200F}""#)
    }

    @Test func eventsWhoseNamesTheServiceCouldNotHaveStoredAreRefused() {
        func row(_ name: String) -> IndexedCountry { IndexedCountry(index: 3, name: name, visited: true) }
        for name in [Self.hostile, "Fr\u{9B}ance", "\u{202E}ecnarF", "Fr\u{7F}", "", " France", "France\n"] {
            for kind: Event.Kind in [.changed(row(name)), .added(row(name)), .removed(row(name))] {
                #expect(throws: CountriesError.self) { try Event(seq: 5, kind: kind).validateNames() }
            }
            #expect(throws: CountriesError.self) {
                try Event(seq: 5, kind: .reset([row("France"), row(name)])).validateNames()
            }
        }
        for name in ["France", "Côte d’Ivoire", "e\u{301}", "Fr\u{200E}ance"] {
            #expect(throws: Never.self) { try Event(seq: 5, kind: .added(row(name))).validateNames() }
        }
        #expect(throws: Never.self) { try Event(seq: 5, kind: .reset([])).validateNames() }
    }

    @Test func theRefusalNamesTheEventAndShowsTheNameEscaped() {
        let event = Event(seq: 12, kind: .added(IndexedCountry(index: 8, name: Self.hostile, visited: false)))
        #expect(throws: CountriesError.self) { try event.validateNames() }
        do {
            try event.validateNames()
        } catch {
            #expect(error.code == .invalidName)
            #expect(error.message.hasPrefix(#"event 12 (country.added) names "Evil\u{1B}]0;pwned\u{7}"#))
            #expect(error.message.hasSuffix("a country name must not contain control characters"))
            #expect(!error.message.unicodeScalars.contains(where: VisibleText.isEscaped))
        }
    }
}
