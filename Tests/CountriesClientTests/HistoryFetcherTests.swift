import CountriesClient
import CountriesCore
import Foundation
import TestSupport
import Testing
import ZeroMQ

/// ``HistoryFetcher`` asks again while the service cannot answer, pausing longer each time up to
/// ``HistoryFetcher/maximumPause``, and
/// gives up at once on a refusal of the request itself or when told to stop.
@Suite struct HistoryFetcherTests {
    private static let event = Event(
        seq: 1, kind: .changed(IndexedCountry(index: 2, name: "France", visited: true)), store: "s")

    private func fetcher(_ name: String) throws -> (HistoryFetcher, FakeReplica, ScratchDirectory) {
        let directory = try ScratchDirectory(prefix: name)
        let context = try Context()
        let service = try FakeReplica(context: context, endpoint: directory.ipc("service"))
        let client = CommandClient(
            context: context, endpoint: service.endpoint, timeout: .seconds(10) * testSlowdown, tries: 1)
        return (HistoryFetcher(client: client), service, directory)
    }

    @Test func failuresThatPassAreAskedAgainWithLongerPauses() throws {
        let (fetcher, service, directory) = try fetcher("history-pass")
        defer { directory.remove() }
        let played = playing {
            _ = service.answerOne(with: Reply(error: CountriesError(.unavailable, "etcd is not reachable")))
            _ = service.answerOne(with: Reply(error: CountriesError(.tooLarge, "over the reply budget")))
            for _ in 0..<5 {
                _ = service.answerOne(with: Reply(error: CountriesError(.storageError, "disk full")))
            }
            var page = Reply(seq: 1, events: [Self.event])
            page.store = "s"
            _ = service.answerOne(with: page)
        }
        var pauses: [Duration] = []
        var reasons: [String] = []
        let page = try fetcher.page(after: 0) { delay, failure in
            pauses.append(delay)
            reasons.append(failure.message)
            return true
        }
        #expect(played.wait(timeout: .now() + 20.0 * Double(testSlowdown)) == .success)
        #expect(page?.events == [Self.event])
        #expect(page?.store == "s")
        // Doubling from 100 ms, and never longer than the maximum.
        #expect(pauses == [100, 200, 400, 800, 1_600, 3_200, 5_000].map { .milliseconds($0) })
        #expect(
            reasons == ["etcd is not reachable", "over the reply budget"]
                + Array(repeating: "disk full", count: 5))
    }

    @Test func aPauseThatSaysStopEndsWithTheFailure() throws {
        let (fetcher, service, directory) = try fetcher("history-stop")
        defer { directory.remove() }
        let played = playing {
            _ = service.answerOne(with: Reply(error: CountriesError(.unavailable, "etcd is not reachable")))
        }
        var pauses = 0
        #expect {
            _ = try fetcher.page(after: 0) { _, _ in
                pauses += 1
                return false
            }
        } throws: { error in
            guard case HistoryFetcher.Failure.refused(let refusal) = error else { return false }
            return refusal.code == .unavailable
        }
        #expect(played.wait(timeout: .now() + 20.0 * Double(testSlowdown)) == .success)
        #expect(pauses == 1)
        #expect(service.ids.count == 1, "asked once")
    }

    /// A refusal of the request itself (or one that does not say why), or a frame that is not a
    /// reply (another program, or another version, at the endpoint): none passes by waiting, so
    /// none is asked again.
    @Test(arguments: [
        (Reply(error: CountriesError(.badRequest, "since is not a seq")).encoded(), "bad_request"),
        (Data("<html>502</html>".utf8), "bad_reply"),
        // A refusal without its error object is no word that the service will recover.
        (Data(#"{"ok":false,"seq":3}"#.utf8), "bad_reply"),
        (Data(#"{"ok":false,"error":{"code":"weird_new_code","message":"?"}}"#.utf8), "bad_reply"),
        (Data(#"{"ok":true,"seq":3}"#.utf8), "bad_reply"),
    ])
    func whatWaitingCannotMendIsNotAskedAgain(answer: Data, kind: String) throws {
        let (fetcher, service, directory) = try fetcher("history-\(kind)")
        defer { directory.remove() }
        let played = playing { _ = service.answerOne(withBody: answer) }
        var paused = false
        #expect {
            _ = try fetcher.page(after: 0) { _, _ in
                paused = true
                return true
            }
        } throws: { error in
            (error as? HistoryFetcher.Failure)?.kind == kind
        }
        #expect(played.wait(timeout: .now() + 20.0 * Double(testSlowdown)) == .success)
        #expect(!paused)
    }
}
