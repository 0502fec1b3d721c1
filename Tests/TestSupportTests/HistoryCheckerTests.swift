import TestSupport
import Testing

/// The checker finds each kind of broken promise, and names the request and the seq.
@Suite struct HistoryCheckerTests {
    typealias Op = HistoryChecker.Operation

    private func op(_ id: String, _ outcome: HistoryChecker.Outcome, at time: Int = 0) -> Op {
        Op(
            id: id, name: "n-\(id)", invoked: .milliseconds(time), completed: .milliseconds(time + 10),
            outcome: outcome)
    }

    private func added(_ seq: UInt64, _ id: String) -> HistoryChecker.Committed {
        HistoryChecker.Committed(seq: seq, added: "n-\(id)")
    }

    @Test func aCleanRunHasNoViolations() {
        let history = [added(1, "a"), added(2, "b"), added(3, "c")]
        let operations = [
            op("a", .acknowledged(seq: 1)), op("b", .indeterminate), op("c", .acknowledged(seq: 3)),
            op("d", .indeterminate), op("e", .refused(code: "storage_error")),
        ]
        #expect(HistoryChecker.contiguous(history).isEmpty)
        #expect(HistoryChecker.exactlyOnce(operations, history: history).isEmpty)
        #expect(HistoryChecker.monotonic([1, 2, 3], subscriber: "w").isEmpty)
    }

    @Test func gapsAndRepeatsInTheHistoryAreNamed() {
        let violations = HistoryChecker.contiguous([added(1, "a"), added(3, "b"), added(3, "c")])
        #expect(
            violations.map(\.description) == [
                "the history has seq 3 where seq 2 belongs", "the history has seq 3 where seq 4 belongs",
            ])
    }

    @Test func lostDoubledRefusedAndForeignChangesAreNamed() {
        let history = [added(1, "b"), added(2, "b"), added(3, "c"), added(4, "x"), added(5, "d")]
        let operations = [
            op("a", .acknowledged(seq: 1)), op("b", .indeterminate), op("c", .refused(code: "storage_error")),
            op("d", .acknowledged(seq: 4)),
        ]
        let found = HistoryChecker.exactlyOnce(operations, history: history).map(\.description)
        #expect(found.count == 5, "\(found)")
        #expect(found.contains { $0.contains("request a") && $0.contains("lost") })
        #expect(found.contains { $0.contains("request b") && $0.contains("2 times, at seqs [1, 2]") })
        #expect(found.contains { $0.contains("request c") && $0.contains("refused") })
        #expect(found.contains { $0.contains("request d") && $0.contains("not at the seq its reply named") })
        #expect(found.contains { $0.contains("n-x") && $0.contains("no client asked for") })
    }

    @Test func aSubscriberGoingBackOrRepeatingIsNamed() {
        let found = HistoryChecker.monotonic([1, 2, 2, 5, 4], subscriber: "w1").map(\.description)
        #expect(found == ["subscriber w1 printed seq 2 twice", "subscriber w1 printed seq 4 after seq 5"])
    }

    @Test func acknowledgementsWithoutQuorumAndSlowRecoveryAreNamed() {
        let operations = [
            op("a", .acknowledged(seq: 1), at: 1_000), op("b", .acknowledged(seq: 2), at: 9_000),
        ]
        let during = HistoryChecker.noAcknowledgements(operations, between: .seconds(0), and: .seconds(5))
        #expect(during.count == 1 && during[0].description.contains("request a"))
        #expect(HistoryChecker.noAcknowledgements(operations, between: .seconds(2), and: .seconds(5)).isEmpty)
        #expect(
            HistoryChecker.resumes(operations, after: .seconds(0), within: .seconds(5), what: "x").isEmpty)
        let slow = HistoryChecker.resumes(
            operations, after: .seconds(2), within: .seconds(5), what: "losing the leader")
        #expect(slow.count == 1 && slow[0].description.contains("losing the leader"))
    }
}
