import ArgumentParsing
import CountriesCore
import Foundation
import Testing

@testable import CountriesCommands

/// `serve --seed`: a built-in list by name, or a file; a file that cannot be used is a
/// ``SeedFileError`` naming it (the command exits 65 with its message, see ServeTests).
@Suite struct SeedOptionTests {
    static func seed(_ argument: String?) throws(SeedFileError) -> [Country] {
        let arguments = ["serve"] + (argument.map { ["--seed", $0] } ?? [])
        guard let command = try? RegistryTests.registry.make(RegistryTests.parsed(arguments)) as? ServeCommand
        else {
            Issue.record("serve \(arguments) did not parse")
            return []
        }
        return try command.command.seedList()
    }

    @Test func builtInListsByName() throws {
        #expect(try Self.seed(nil) == SeedList.standard)
        #expect(try Self.seed("default") == SeedList.standard)
        #expect(try Self.seed("world") == SeedList.world)
    }

    @Test func aFileOfNames() throws {
        let path = NSTemporaryDirectory() + "seed-\(UUID().uuidString).txt"
        try Data("Narnia\nGondor\n".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try Self.seed(path).map(\.name) == ["Narnia", "Gondor"])
    }

    @Test func aMissingFileIsNamed() {
        let path = "/nonexistent/\(UUID().uuidString).txt"
        #expect(
            throws: SeedFileError(
                "cannot read the seed file \(path); give default, world, or a readable file", unreadable: true
            )
        ) { try Self.seed(path) }
    }

    @Test func aFileThatIsNotAListSaysWhereAndWhy() throws {
        let path = NSTemporaryDirectory() + "seed-\(UUID().uuidString).json"
        try Data("[\"Narnia\", 3]".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect {
            try Self.seed(path)
        } throws: { error in
            guard let error = error as? SeedFileError else { return false }
            return error.message.hasPrefix("seed file \(path): ")
        }
    }

    @Test func jsonThatDoesNotParseNamesTheFileAndLine() throws {
        let path = NSTemporaryDirectory() + "seed-\(UUID().uuidString).json"
        try Data("[\n \"France\",\n \"Italy\",\n]\n".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect {
            try Self.seed(path)
        } throws: { error in
            guard let error = error as? SeedFileError else { return false }
            return error.message.hasPrefix("seed file \(path): line 4, column 1: not valid JSON")
        }
    }
}
