import CountriesCore
import Foundation
import SystemSupport
import TestSupport
import Testing

@testable import CountriesService

/// A commit that fails (a full disk) makes the service not ready for a while, and its error
/// lines stay within the log's share (``CommitFailures``). Before, `/readyz` said ready while
/// every change failed with SQLITE_FULL, and each failed commit wrote an error line.
@Suite struct CommitFailuresTests {
    @Test func aFailureMakesItNotReadyUntilACommitSucceedsOrTheWindowEnds() {
        var failures = CommitFailures()
        let start = ContinuousClock.now
        #expect(failures.unreadiness(now: start) == nil)
        _ = failures.failed("commit failed", reason: "database or disk is full (SQLITE_FULL)", now: start)
        let why = failures.unreadiness(now: start + .seconds(3))
        #expect(why?.hasPrefix("a commit failed 3 s ago (database or disk is full (SQLITE_FULL))") == true)
        #expect(failures.unreadiness(now: start + CommitFailures.readinessWindow) == nil)
        failures.succeeded()
        #expect(failures.unreadiness(now: start + .seconds(1)) == nil)
    }

    @Test func theLogTakesAFewLinesAWindowAndCountsTheRest() {
        var failures = CommitFailures()
        let start = ContinuousClock.now
        let lines = (0..<100).compactMap { failures.failed("line \($0)", reason: "r", now: start) }
        #expect(lines == (0..<5).map { "line \($0)" })
        let next = failures.failed("line 100", reason: "r", now: start + .seconds(10))
        #expect(next == "(95 more commit failures not logged) line 100")
    }

    /// Through the handler: the metrics' readiness follows the commits, and a hundred failed
    /// batches write five error lines.
    @Test func theHandlersReadinessAndLogFollowItsCommits() throws {
        let store = FailingStore(seed: SeedList.standard)
        let logged = Locked<[String]>([])
        let handler = try makeHandler(
            on: store, logger: Logger(level: .error) { line in logged.withLock { $0.append(line) } })
        #expect(handler.metrics().unreadiness == nil)
        store.failing = true
        for index in 0..<100 {
            _ = try handler.outcome(of: [#"{"op":"toggle","name":"France","id":"f-\#(index)"}"#])
        }
        #expect(handler.metrics().unreadiness?.contains("a commit failed") == true)
        #expect(logged.withLock { $0 }.filter { $0.contains("commit of 1 request(s) failed") }.count == 5)
        store.failing = false
        #expect(try handler.outcome(of: [#"{"op":"toggle","name":"France"}"#]).replies.first?.ok == true)
        #expect(handler.metrics().unreadiness == nil)
    }
}
