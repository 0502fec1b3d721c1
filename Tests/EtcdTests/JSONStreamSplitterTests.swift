import Foundation
import Testing

@testable import Etcd

/// The splitter that cuts the watch stream into objects, without etcd.
@Suite struct JSONStreamSplitterTests {
    private func text(_ objects: [[UInt8]]) -> [String] {
        objects.map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func objectsArrivingWholeInOneChunkComeOutOneByOne() throws {
        var splitter = JSONStreamSplitter()
        let stream = #"{"result":{"created":true}}"# + "\n" + #"{"result":{"events":[{"kv":{}}]}}"# + "\n"
        #expect(
            text(try splitter.append(Array(stream.utf8)))
                == [#"{"result":{"created":true}}"#, #"{"result":{"events":[{"kv":{}}]}}"#])
        #expect(!splitter.hasPartialObject)
    }

    @Test func everyCutOfTheStreamGivesTheSameObjects() throws {
        // Braces, brackets, quotes and backslashes inside strings do not count.
        let objects = [#"{"a":"}{\"\\","b":[1,{"c":"]"}]}"#, #"{}"#, #"{"x":"\\\\"}"#]
        let stream = Array(objects.joined(separator: "\r\n ").utf8)
        for cut in 0...stream.count {
            var splitter = JSONStreamSplitter()
            var found = try splitter.append(Array(stream[..<cut]))
            found += try splitter.append(Array(stream[cut...]))
            #expect(text(found) == objects, "cut at \(cut)")
        }
        // And one byte at a time.
        var splitter = JSONStreamSplitter()
        var found: [[UInt8]] = []
        for byte in stream { found += try splitter.append([byte]) }
        #expect(text(found) == objects)
    }

    @Test func somethingElseThanAnObjectIsRefused() {
        var splitter = JSONStreamSplitter()
        #expect(throws: JSONStreamSplitter.Failure.notAnObject) { try splitter.append(Array("[1]".utf8)) }
        var other = JSONStreamSplitter()
        #expect(throws: JSONStreamSplitter.Failure.notAnObject) { try other.append(Array(#"{} x"#.utf8)) }
    }

    @Test func anObjectLongerThanTheLimitIsRefused() throws {
        var splitter = JSONStreamSplitter(maximumObjectBytes: 16)
        #expect(throws: JSONStreamSplitter.Failure.tooLarge) {
            try splitter.append(Array(#"{"a":"0123456789abcdef"}"#.utf8))
        }
        // Over the limit only with the bytes kept from an earlier chunk.
        var across = JSONStreamSplitter(maximumObjectBytes: 16)
        #expect(try across.append(Array(#"{"a":"01234"#.utf8)).isEmpty)
        #expect(throws: JSONStreamSplitter.Failure.tooLarge) {
            try across.append(Array(#"56789abcdef"}"#.utf8))
        }
        // Objects at the limit are taken, however many together pass it; one byte more is not.
        var atLimit = JSONStreamSplitter(maximumObjectBytes: 16)
        let objects = [#"{"a":"01234567"}"#, #"{"b":"01234567"}"#]
        #expect(objects[0].utf8.count == 16)
        #expect(text(try atLimit.append(Array(objects.joined(separator: "\n").utf8))) == objects)
        #expect(throws: JSONStreamSplitter.Failure.tooLarge) {
            try atLimit.append(Array(#"{"c":"012345678"}"#.utf8))
        }
    }
}
