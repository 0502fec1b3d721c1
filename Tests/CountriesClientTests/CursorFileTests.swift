import CountriesClient
import Foundation
import TestSupport
import Testing

/// `on-change --cursor FILE`: the position is read with the project's strict JSON parser, so a
/// file that is not exactly a cursor is refused (naming the file, saying what to do), never
/// taken for another position (JSONSerialization read `{"seq": true}` as seq 1).
@Suite struct CursorFileTests {
    /// The cursor read from a file holding `contents`.
    private func read(_ contents: String) throws -> EventFeed.Position? {
        let scratch = try ScratchDirectory(prefix: "cursor")
        let path = scratch.file("cursor.json")
        #expect(FileManager.default.createFile(atPath: path, contents: Data(contents.utf8)))
        return try CursorFile(path: path).read()
    }

    /// What is wrong with `contents`, as the refusal says it, or nil when it is read.
    private func refusal(_ contents: String) -> String? {
        do {
            _ = try read(contents)
            return nil
        } catch let error as CursorFile.Failure {
            let prefix = #"the cursor file /tmp/cursor-"#
            let suffix = "; move it aside to start from now"
            let text = error.description
            guard text.hasPrefix(prefix), text.hasSuffix(suffix),
                let open = text.range(of: #"is not {"seq": N, "store": "ID"} ("#)
            else { return "unexpected: \(text)" }
            return String(text[open.upperBound..<text.index(text.endIndex, offsetBy: -suffix.count - 1)])
        } catch {
            return "unexpected: \(error)"
        }
    }

    @Test func aCursorIsReadBack() throws {
        let scratch = try ScratchDirectory(prefix: "cursor")
        let cursor = CursorFile(path: scratch.file("cursor.json"))
        #expect(try cursor.read() == nil, "no file yet: start as told")
        try cursor.write(.init(store: "0123456789abcdef0123456789abcdef", seq: 42))
        #expect(try cursor.read() == .init(store: "0123456789abcdef0123456789abcdef", seq: 42))
        try cursor.write(.init(store: nil, seq: UInt64.max))
        #expect(try cursor.read() == .init(store: nil, seq: UInt64.max))
        // As a person may write it: spaces, null for no store, keys it does not know.
        #expect(try read(#" { "seq" : 7 , "store" : null, "note": [1] }"#) == .init(store: nil, seq: 7))
        #expect(try read(#"{"seq": 1.0e1, "store": "s"}"#) == .init(store: "s", seq: 10), "10, exactly")
    }

    /// Another user of the directory plants links where the old code wrote `FILE.tmp`: nothing
    /// is written through them, the cursor is a file of its own with mode 0600, and no
    /// temporary file is left behind.
    @Test func aCursorIsNeverWrittenThroughALinkAndIsPrivate() throws {
        let scratch = try ScratchDirectory(prefix: "cursor")
        let path = scratch.file("cursor.json")
        let victim = scratch.file("victim")
        let other = scratch.file("other")
        #expect(FileManager.default.createFile(atPath: victim, contents: Data("precious\n".utf8)))
        #expect(FileManager.default.createFile(atPath: other, contents: Data("mine\n".utf8)))
        #expect(chmod(victim, 0o644) == 0 && chmod(other, 0o644) == 0)
        #expect(symlink(victim, path + ".tmp") == 0)
        try CursorFile(path: path).write(.init(store: "s", seq: 5))
        #expect(unlink(path + ".tmp") == 0)
        #expect(link(other, path + ".tmp") == 0)
        try CursorFile(path: path).write(.init(store: "s", seq: 6))

        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious\n")
        #expect(try String(contentsOfFile: other, encoding: .utf8) == "mine\n")
        #expect(try CursorFile(path: path).read() == .init(store: "s", seq: 6))
        var status = stat()
        #expect(lstat(path, &status) == 0)
        #expect(status.st_mode & 0o7777 == 0o600)
        #expect(status.st_nlink == 1)
        let left = try FileManager.default.contentsOfDirectory(atPath: scratch.path).sorted()
        #expect(left == ["cursor.json", "cursor.json.tmp", "other", "victim"])
    }

    @Test func aSeqThatIsNotAWholeNumberInRangeIsRefused() {
        let range = "not a whole number from 0 to 18446744073709551615"
        #expect(refusal(#"{"seq": true}"#) == "\"seq\" is a boolean, \(range)")
        #expect(refusal(#"{"seq": 1.5}"#) == "\"seq\" is 1.5, \(range)")
        #expect(refusal(#"{"seq": -1}"#) == "\"seq\" is -1, \(range)")
        #expect(refusal(#"{"seq": 18446744073709551616}"#) == "\"seq\" is 1.8446744073709552e+19, \(range)")
        #expect(refusal(#"{"seq": "7"}"#) == "\"seq\" is a string, \(range)")
        #expect(refusal(#"{"seq": null}"#) == "\"seq\" is null, \(range)")
        #expect(refusal(#"{"store": "s"}"#) == "\"seq\" is missing")
    }

    @Test func contentsThatAreNotOneCursorObjectAreRefused() {
        #expect(refusal(#"{"seq": 1, "seq": 2}"#) == "\"seq\" is given twice")
        #expect(refusal(#"{"seq": 1} {"seq": 2}"#) == "not JSON at line 1, column 12")
        #expect(refusal("{\"seq\": 1}\nx") == "not JSON at line 2, column 1")
        #expect(refusal(#"{"seq": 1,}"#) == "not JSON at line 1, column 11")
        #expect(refusal(#"{"seq": 1"#) == "it ends early")
        #expect(refusal("") == "it ends early")
        #expect(refusal("[1]") == "it holds an array, not an object")
        #expect(refusal(#"{"seq": 1, "store": 5}"#) == "\"store\" is a number, not a string")
        #expect(refusal(#"{"seq": 1, "x": [[1]]}"#) == "arrays or objects nest too deep at line 1")
    }

    @Test func theWholeRefusalNamesTheFileAndWhatToDo() throws {
        let scratch = try ScratchDirectory(prefix: "cursor")
        let path = scratch.file("cursor.json")
        #expect(FileManager.default.createFile(atPath: path, contents: Data(#"{"seq": true}"#.utf8)))
        #expect {
            try CursorFile(path: path).read()
        } throws: { error in
            (error as? CursorFile.Failure)?.description
                == #"the cursor file \#(path) is not {"seq": N, "store": "ID"} ("seq" is a boolean, not a whole number from 0 to 18446744073709551615); move it aside to start from now"#
        }
    }
}
