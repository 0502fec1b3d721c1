import Foundation
import Testing

@testable import countries_fuzz

/// Every input the fuzz target ever failed on is kept in `Tests/CountriesCoreTests/FuzzRegressions`
/// and replayed here through the same checks (``FuzzHarness``), so a fixed bug stays fixed.
@Suite struct FuzzRegressionTests {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("CountriesCoreTests/FuzzRegressions").path

    @Test func everyKeptInputPassesEveryCheck() throws {
        let files = FuzzReplay.files(at: Self.directory).filter { !$0.hasSuffix(".md") }
        for file in files {
            let input = try #require(FileManager.default.contents(atPath: file), "cannot read \(file)")
            // A failing check stops the process with the check's message; a slow one fails here
            // (the service is single-threaded: a slow request stalls every client).
            let start = ContinuousClock.now
            FuzzHarness.check(input)
            let elapsed = ContinuousClock.now - start
            #expect(elapsed < .seconds(1), "\(file) took \(elapsed)")
        }
    }

    @Test func aSequenceOfChangesKeepsStateAndReplicaTogether() {
        let frames = [
            #"{"op":"toggle","index":0}"#, #"{"op":"add","name":"Atlantis","visited":true}"#,
            #"{"op":"remove","name":"france"}"#, #"{"op":"set","index":0,"visited":false}"#,
            #"{"op":"reset"}"#, #"{"op":"add","name":" Narnia "}"#, #"{"op":"toggle","name":"NARNIA"}"#,
        ]
        FuzzHarness.check(Data(frames.joined(separator: "\u{0}").utf8))
    }
}
