import Testing

@testable import CountriesTerminal

@Suite struct KeyDecoderTests {
    func decode(_ text: String) -> [Key] {
        var decoder = KeyDecoder()
        return decoder.decode(Array(text.utf8)) + decoder.flush()
    }

    @Test(arguments: [
        ("\u{1B}[A", Key.up), ("\u{1B}[B", .down), ("\u{1B}OA", .up), ("\u{1B}OB", .down),
        ("\u{1B}[5~", .pageUp), ("\u{1B}[6~", .pageDown),
        ("\u{1B}[H", .home), ("\u{1B}OH", .home), ("\u{1B}[1~", .home), ("\u{1B}[7~", .home),
        ("\u{1B}[F", .end), ("\u{1B}OF", .end), ("\u{1B}[4~", .end), ("\u{1B}[8~", .end),
        ("\u{1B}[1;5A", .up), ("\u{1B}[5;2~", .pageUp), ("\u{1B}OM", .enter),
        ("\u{1B}[C", .unknown), ("\u{1B}[3~", .unknown), ("\u{1B}[15~", .unknown), ("\u{1B}OP", .unknown),
        ("\r", .enter), ("\n", .enter), (" ", .space), ("\u{03}", .ctrlC), ("q", .char("q")),
        ("j", .char("j")), ("G", .char("G")), ("\u{7F}", .unknown), ("\u{01}", .unknown),
        ("é", .char("é")), ("✓", .char("✓")), ("😀", .char("😀")),
    ])
    func sequence(_ input: String, key: Key) {
        #expect(decode(input) == [key])
    }

    @Test func severalKeysInOneRead() {
        #expect(decode("jk\u{1B}[A\u{1B}OBq\r") == [.char("j"), .char("k"), .up, .down, .char("q"), .enter])
        #expect(decode("\r\n") == [.enter, .enter])
    }

    @Test func sequencesSplitAcrossReadsAtEveryByte() {
        let input = Array("a\u{1B}[5~\u{1B}OAé✓😀\u{1B}[1;5B".utf8)
        let expected: [Key] = [.char("a"), .pageUp, .up, .char("é"), .char("✓"), .char("😀"), .down]
        for split in 0...input.count {
            var decoder = KeyDecoder()
            let keys = decoder.decode(input[..<split]) + decoder.decode(input[split...])
            #expect(keys == expected, "split at \(split)")
            #expect(!decoder.hasPending)
        }
        var decoder = KeyDecoder()
        let keys = input.flatMap { decoder.decode([$0]) }
        #expect(keys == expected)
    }

    @Test func loneEscapeWaitsForFlush() {
        let decoder = DecoderHarness()
        #expect(decoder.decode([0x1B]).isEmpty)
        #expect(decoder.hasPending)
        #expect(decoder.flush() == [.escape])
        #expect(!decoder.hasPending)
        #expect(decoder.flush().isEmpty)
    }

    @Test func escapeThenMoreBytesLater() {
        let decoder = DecoderHarness()
        #expect(decoder.decode([0x1B]).isEmpty)
        #expect(decoder.decode(Array("[B".utf8)) == [.down])
        #expect(decoder.decode([0x1B, UInt8(ascii: "O")]).isEmpty)
        #expect(decoder.decode([UInt8(ascii: "A")]) == [.up])
    }

    @Test func escapeEscapeAndAltKeys() {
        let decoder = DecoderHarness()
        #expect(decoder.decode([0x1B, 0x1B]) == [.escape])
        #expect(decoder.flush() == [.escape])
        #expect(decode("\u{1B}q") == [.escape, .char("q")])
    }

    @Test func incompleteSequenceOnFlush() {
        let decoder = DecoderHarness()
        #expect(decoder.decode(Array("\u{1B}[5".utf8)).isEmpty)
        #expect(decoder.flush() == [.escape, .char("["), .char("5")])
    }

    @Test func invalidUTF8() {
        #expect(DecoderHarness().decode([0xFF]) == [.unknown])
        let decoder = DecoderHarness()
        #expect(decoder.decode([0xFF, 0xC3]) == [.unknown])
        #expect(decoder.hasPending)
        #expect(decoder.decode([0x41]) == [.unknown, .char("A")])
        #expect(decoder.decode([0xE2, 0x9C]).isEmpty)
        #expect(decoder.flush() == [.unknown])
        #expect(decoder.decode([0xE0, 0x80, 0x80]) == [.unknown])
    }

    @Test func overlongEscapeSequenceIsDropped() {
        let decoder = DecoderHarness()
        let junk = [0x1B, UInt8(ascii: "[")] + [UInt8](repeating: UInt8(ascii: "1"), count: 40)
        let keys = decoder.decode(junk + Array("q".utf8))
        #expect(keys.first == .unknown)
        #expect(keys.last == .char("q"))
    }
}

// A reference wrapper, so that `#expect` (which evaluates its operands as immutable values) can
// call the mutating methods.
final class DecoderHarness {
    var decoder = KeyDecoder()
    var hasPending: Bool { decoder.hasPending }
    func decode(_ bytes: some Sequence<UInt8>) -> [Key] { decoder.decode(bytes) }
    func flush() -> [Key] { decoder.flush() }
}
