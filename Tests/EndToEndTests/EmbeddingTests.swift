import Foundation
import TestSupport
import Testing

/// docs/EMBEDDING.md's example is the package's `countries-embedding-example` target, word for
/// word, and it follows a live service as the page says.
@Suite("Embedding a live subscriber", .serialized)
struct EmbeddingTests {
    static let packageRoot = CountriesBinary.packageRoot

    @Test("the page shows the example target's source exactly")
    func thePageShowsTheExample() throws {
        let page = try String(contentsOfFile: Self.packageRoot + "/docs/EMBEDDING.md", encoding: .utf8)
        let source = try String(
            contentsOfFile: Self.packageRoot + "/Sources/countries-embedding-example/main.swift",
            encoding: .utf8)
        let blocks = page.components(separatedBy: "```swift\n").dropFirst().map {
            $0.components(separatedBy: "```").first ?? ""
        }
        #expect(
            blocks.contains(source),
            "docs/EMBEDDING.md no longer shows Sources/countries-embedding-example/main.swift")
    }

    @Test("the example prints the list live: the snapshot, then each change")
    func theExampleFollowsAService() throws {
        let example = URL(fileURLWithPath: CountriesBinary.path).deletingLastPathComponent()
            .appendingPathComponent("countries-embedding-example").path
        #expect(FileManager.default.isExecutableFile(atPath: example), "\(example) is not built")
        let sandbox = try SubscriberSandbox()
        defer { sandbox.stopAll() }
        try sandbox.startService()
        let child = try ChildProcess(example, [sandbox.commandEndpoint, sandbox.eventsEndpoint, "2"])
        defer { _ = child.stop() }
        #expect(
            eventually(within: .seconds(5)) { sandbox.run(["status"]).output.contains("subscribers:      1") }
        )
        #expect(sandbox.run(["toggle", "France"]).status == 0)
        let execution = try child.finish(timeout: .seconds(10))
        #expect(execution.exitCode == 0, "\(execution)")
        #expect(
            execution.stdout
                == "seq 0: 1 of 8 visited: United States\nseq 1: 2 of 8 visited: United States, France\n",
            "\(execution)")
    }
}
