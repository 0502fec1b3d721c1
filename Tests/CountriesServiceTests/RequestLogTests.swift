import CountriesCore
import CountriesStore
import Foundation
import Metrics
import SystemSupport
import Testing

@testable import CountriesService

/// Each request's log line and count (docs/OPERATIONS.md): fields in text and JSON, the
/// client's mistakes kept out of the warnings, and the metrics a handler reports.
@Suite struct RequestLogTests {
    @Test func textLinesShowFieldsAsKeyValue() {
        let (logger, lines) = Logger.collecting(.debug, .text)
        logger.log(
            .debug, "request",
            fields: [
                LogField("op", .text("toggle")), LogField("seq", .integer(7)),
                LogField("error", .text("no \"such\" = row")), LogField("empty", .text("")),
                LogField("duration_ms", .number(0.5)),
            ])
        let line = lines.withLock { $0.first } ?? ""
        #expect(
            line.hasSuffix(
                #" debug: request op=toggle seq=7 error="no \"such\" = row" empty="" duration_ms=0.500"#),
            "\(line)")
    }

    @Test func jsonLinesCarryFieldsBesideTheMessage() throws {
        let (logger, lines) = Logger.collecting(.debug, .json)
        logger.log(
            .debug, "request",
            fields: [
                LogField("op", .text("list")), LogField("seq", .integer(3)), LogField("message", .text("x")),
            ])
        let line = lines.withLock { $0.first } ?? ""
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["op"] as? String == "list")
        #expect(object["seq"] as? Int == 3)
        #expect(object["message"] as? String == "request", "a field never replaces the message")
        #expect(object["level"] as? String == "debug")
    }

    @Test func aBatchIsCountedByOpAndCodeAndClientMistakesAreNotWarnings() throws {
        let (logger, lines) = Logger.collecting(.debug, .text)
        let store = try SQLiteStore(path: nil, seed: SeedList.standard)
        let handler = try makeHandler(on: store, logger: logger, uptimeSeconds: 1.5)
        handler.measures = true
        let bodies = [
            #"{"op":"toggle","index":2,"id":"first"}"#, "junk", #"{"op":"nope"}"#,
            #"{"op":"toggle","index":99}"#,
            #"{"op":"list"}"#, #"{"op":"toggle","name":"France"}"#,
        ]
        let requests = bodies.map { body in
            var request = IncomingRequest(envelope: [Data("peer".utf8), Data()], body: [Array(body.utf8)])
            request.trace = RequestTrace(peer: "127.0.0.1", received: .now)
            return request
        }
        _ = handler.handle(requests)
        let metrics = handler.metrics()
        #expect(
            metrics.requests == [
                .init(op: "toggle", code: "ok"): 2, .init(op: "invalid", code: "bad_request"): 1,
                .init(op: "invalid", code: "unknown_op"): 1,
                .init(op: "toggle", code: "index_out_of_range"): 1,
                .init(op: "list", code: "ok"): 1,
            ])
        #expect(metrics.seq == 2)
        #expect(
            metrics.commitChanges.count == 2 && metrics.commitChanges.sum == 2,
            "the list commits the toggle before it")
        #expect(metrics.commitSeconds.count == 2)
        let logged = lines.withLock { $0 }
        #expect(logged.filter { $0.contains(" debug: request ") }.count == bodies.count, "\(logged)")
        #expect(!logged.contains { $0.contains(" warning: ") }, "\(logged)")
        #expect(
            logged.contains {
                $0.contains("op=toggle id=first peer=127.0.0.1 seq=1 code=ok duration_ms=")
            }, "\(logged)")
        // The exposition of the snapshot parses strictly.
        let parsed = try ExpositionParser(metrics.metrics.encoded)
        #expect(parsed.value("countries_requests_total", ["op": "toggle", "code": "ok"]) == 2)
        #expect(parsed.value("countries_uptime_seconds") == 1.5)
    }

    /// A burst that makes the store forget ids younger than the age floor is a warning and a
    /// counter: exactly once is weakened for those ids (docs/PROTOCOL.md, "Retries are safe").
    @Test func idsForgottenYoungAreAWarningAndACounter() throws {
        var retention = RequestIDRetention()
        retention.minimumCount = 2
        retention.maximumCount = 4
        let store = MemoryStore(seed: SeedList.standard, retention: retention)
        let (logger, lines) = Logger.collecting(.warning, .text)
        let handler = try makeHandler(on: store, logger: logger)
        for number in 0..<4 {
            _ = handler.handled(bodies: [#"{"op":"toggle","index":1,"id":"t\#(number)"}"#])
        }
        #expect(lines.withLock { $0 }.isEmpty, "four ids fit")
        for number in 4..<7 {
            _ = handler.handled(bodies: [#"{"op":"toggle","index":1,"id":"t\#(number)"}"#])
        }
        #expect(handler.metrics().requestIDsForgottenYoung == 3)
        let warnings = lines.withLock { $0 }
        #expect(warnings.count == 3)
        #expect(
            warnings.last?.contains(
                "warning: forgot 1 request id(s) younger than 10 minutes (3 since start): a burst of changes filled the ids' memory"
            ) == true, "\(warnings)")
        #expect(
            try ExpositionParser(handler.metrics().metrics.encoded).value(
                "countries_request_ids_forgotten_young_total") == 3)
    }

    @Test func replicatedStatusBecomesGauges() throws {
        var metrics = ServiceMetrics()
        metrics.status.etcdQuorum = "no quorum read for 3 s"
        metrics.status.etcdMembers = ["a=http://1", "b=http://2", "c=http://3"]
        metrics.status.etcdLeader = "b"
        metrics.status.publicationLagMilliseconds = 1500
        metrics.status.writer = "this replica"
        metrics.unreadiness = "no quorum"
        #expect(
            try ExpositionParser(metrics.metrics.encoded).value("countries_forwarded_changes_total") == nil)
        metrics.forwardedChanges = 42
        let parsed = try ExpositionParser(metrics.metrics.encoded)
        #expect(parsed.value("countries_writer") == 1)
        #expect(parsed.value("countries_forwarded_changes_total") == 42)
        for other in ["tcp://10.0.0.2:5555", "none"] {
            metrics.status.writer = other
            #expect(try ExpositionParser(metrics.metrics.encoded).value("countries_writer") == 0)
        }
        #expect(parsed.value("countries_etcd_quorum") == 0)
        #expect(parsed.value("countries_etcd_members") == 3)
        #expect(parsed.value("countries_etcd_leader", ["leader": "b"]) == 1)
        #expect(parsed.value("countries_publication_lag_seconds") == 1.5)
        #expect(parsed.value("countries_ready") == 0)
        #expect(parsed.value("countries_store_damaged") == 0)
    }

    @Test func aBoardWithoutFreshSnapshotsIsNotReady() {
        let board = MetricsBoard<ServiceMetrics>(staleAfter: .seconds(10))
        #expect(board.unreadiness()?.contains("starting") == true)
        let start = ContinuousClock.now
        board.publish(ServiceMetrics(), at: start)
        #expect(board.unreadiness(now: start + .seconds(1)) == nil)
        #expect(board.unreadiness(now: start + .seconds(11))?.contains("published nothing") == true)
    }
}
