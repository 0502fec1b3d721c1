import CountriesCore
import Testing

@testable import CountriesClient

/// The one retry policy, on every sequence of what can happen to a try: the promise is that a
/// change some try may have applied never ends as a definite failure (docs/PROTOCOL.md,
/// "Outcomes").
@Suite struct RetryMachineTests {
    /// What can happen to one try.
    enum Happening: CaseIterable, CustomStringConvertible {
        case timeout, unavailable, storageError, refused, ok, unusable, otherStore, notListening, garbage
        case brokenAfterSending, stopped

        var description: String {
            switch self {
            case .timeout: "timeout"
            case .unavailable: "unavailable"
            case .storageError: "storage_error"
            case .refused: "not_found"
            case .ok: "ok"
            case .unusable: "unusable"
            case .otherStore: "another store's conflict"
            case .notListening: "nothing listening"
            case .garbage: "a frame that is not a reply"
            case .brokenAfterSending: "a socket that failed after sending"
            case .stopped: "the caller stopped waiting"
            }
        }

        func apply(to machine: inout RetryMachine) -> RetryMachine.Step {
            switch self {
            case .timeout: machine.timedOut()
            case .unavailable: machine.received(Reply(error: CountriesError(.unavailable, "lost")))
            case .storageError:
                machine.received(Reply(error: CountriesError(.storageError, "nothing changed")))
            case .refused: machine.received(Reply(error: CountriesError(.notFound, "no such country")))
            case .ok: machine.received(Reply(seq: 7, count: 8))
            case .unusable: machine.couldNotSend()
            case .otherStore: machine.received(RetryMachineTests.otherStoresConflict)
            case .notListening: machine.refused()
            case .garbage: machine.receivedUndecodable()
            case .brokenAfterSending: machine.failedAfterSending()
            case .stopped: machine.stopped()
            }
        }
    }

    /// Every sequence of up to four happenings (a request has at most four tries here, so every
    /// whole run), on 1 to 3 endpoints with 1 to 4 tries, for a change and for a read: runs the
    /// machine as far as the sequence goes and checks its end.
    @Test func everySequenceKeepsThePromise() {
        var checked = 0
        for endpoints in 1...3 {
            for tries in 1...4 {
                for changes in [true, false] {
                    for length in 1...4 {
                        for sequence in Self.sequences(length: length) {
                            check(sequence, endpoints: endpoints, tries: tries, changes: changes)
                            checked += 1
                        }
                    }
                }
            }
        }
        #expect(checked == 24 * (11 + 121 + 1_331 + 14_641))
    }

    private func check(_ sequence: [Happening], endpoints: Int, tries: Int, changes: Bool) {
        var machine = RetryMachine(
            endpoints: endpoints, tries: tries, first: endpoints - 1, changes: changes,
            store: changes ? "mine" : nil)
        var step = machine.start()
        var sends: [Int] = []
        var lost = false
        var unusable = Set<Int>()
        var notListening: [Int] = []
        let context = "\(sequence) on \(endpoints) endpoint(s), \(tries) tries, changes: \(changes)"
        for happening in sequence {
            guard case .send(let endpoint) = step else { break }
            #expect(!unusable.contains(endpoint), "sent to an unusable endpoint: \(context)")
            sends.append(endpoint)
            // A try of a change that may have been applied.
            if changes
                && [.timeout, .unavailable, .garbage, .brokenAfterSending, .stopped].contains(happening)
            {
                lost = true
            }
            // An endpoint of another store is as good as unusable for this change.
            // Nothing listening there: skipped for the rest of the request.
            if [.unusable, .notListening, .brokenAfterSending].contains(happening)
                || (changes && happening == .otherStore)
            {
                unusable.insert(endpoint)
            }
            if happening == .notListening { notListening.append(endpoint) }
            step = happening.apply(to: &machine)
            if happening == .stopped, case .send = step {
                Issue.record("a stop did not end the request: \(context)")
            }
            if case .finish(let verdict) = step {
                switch verdict {
                case .replied(let reply, let from):
                    #expect(from == endpoint, "the verdict names the endpoint that answered: \(context)")
                    if lost {
                        #expect(
                            reply.failure?.code != .storageError && reply.failure?.code != .unavailable,
                            "a change that may have been applied ended as a definite failure: \(context)")
                        #expect(
                            reply.store != "theirs",
                            "another store's refusal settled a change that may have been applied: \(context)")
                    }
                case .outcomeUnknown:
                    #expect(lost, "only a change some try may have applied is unknown: \(context)")
                case .noReply:
                    #expect(!lost, "a change with no answer is unknown, not 'no reply': \(context)")
                case .unusable:
                    #expect(!lost && unusable.count == endpoints && notListening.isEmpty, "\(context)")
                case .refused(let indices):
                    #expect(!lost && unusable.count == endpoints, "\(context)")
                    #expect(indices == notListening, "the verdict names where nothing listens: \(context)")
                }
                if happening == .ok || happening == .refused {
                    #expect(verdict == .replied(machine.lastReply(happening), from: endpoint), "\(context)")
                }
            }
        }
        #expect(sends.count <= max(1, tries, endpoints), "more tries than allowed: \(context)")
        // With enough tries, every usable endpoint is tried before the end.
        if case .finish = step, sends.count == max(1, tries, endpoints), endpoints > 1 {
            #expect(Set(sends).union(unusable).count == endpoints, "an endpoint was never tried: \(context)")
        }
        if endpoints - unusable.count > 1 {
            for (previous, next) in zip(sends, sends.dropFirst()) {
                #expect(next != previous, "a retry stayed on the endpoint that failed it: \(context)")
            }
        }
    }

    private static func sequences(length: Int) -> [[Happening]] {
        guard length > 0 else { return [[]] }
        return sequences(length: length - 1).flatMap { prefix in Happening.allCases.map { prefix + [$0] } }
    }

    /// What an endpoint of another store answers a change pinned to "mine" (`if_store`).
    static let otherStoresConflict: Reply = {
        var reply = Reply(error: CountriesError(.conflict, "this change is for store mine"))
        reply.store = "theirs"
        return reply
    }()

    /// The audit's case: the first try got no reply and the retry got a proxy's error page (or
    /// the other way round). Neither says the change was not applied: unknown, unless a later
    /// try brings its own reply; a read answered only so ends without a reply.
    @Test func aFrameThatIsNotAReplyLeavesAChangeUnknown() {
        var machine = RetryMachine(endpoints: 1, tries: 2, changes: true)
        _ = machine.start()
        #expect(machine.timedOut() == .send(to: 0))
        #expect(machine.receivedUndecodable() == .finish(.outcomeUnknown(nil)))

        machine = RetryMachine(endpoints: 1, tries: 2, changes: true)
        _ = machine.start()
        #expect(machine.receivedUndecodable() == .send(to: 0))
        let own = Reply(seq: 7, count: 8)
        #expect(machine.received(own) == .finish(.replied(own, from: 0)))

        machine = RetryMachine(endpoints: 1, tries: 1, changes: true)
        _ = machine.start()
        #expect(machine.receivedUndecodable() == .finish(.outcomeUnknown(nil)))

        machine = RetryMachine(endpoints: 1, tries: 2, changes: false)
        _ = machine.start()
        #expect(machine.receivedUndecodable() == .send(to: 0))
        #expect(machine.receivedUndecodable() == .finish(.noReply))
    }

    /// The audit's case (`toggle --command A,B` with endpoints of two stores): the first try
    /// timed out (and was applied), the second endpoint serves another store and refuses: the
    /// client must say "unknown", and never send to that endpoint again.
    @Test func anotherStoresRefusalAfterATimeoutIsUnknown() {
        var machine = RetryMachine(endpoints: 2, tries: 4, changes: true, store: "mine")
        #expect(machine.start() == .send(to: 0))
        #expect(machine.timedOut() == .send(to: 1))
        #expect(machine.received(Self.otherStoresConflict) == .send(to: 0), "never again to the other store")
        #expect(machine.timedOut() == .send(to: 0))
        #expect(machine.timedOut() == .finish(.outcomeUnknown(nil)))

        // Without an unknown try, the other store's refusal is what the user is told.
        var clean = RetryMachine(endpoints: 1, tries: 2, changes: true, store: "mine")
        _ = clean.start()
        #expect(
            clean.received(Self.otherStoresConflict) == .finish(.replied(Self.otherStoresConflict, from: 0)))
    }

    /// The audit's case: the first replica's try timed out (and was committed), the second has
    /// no quorum and says "nothing changed": the client must not say so.
    @Test func aTimeoutThenNothingChangedIsUnknown() {
        var machine = RetryMachine(endpoints: 2, tries: 2, changes: true)
        #expect(machine.start() == .send(to: 0))
        #expect(machine.timedOut() == .send(to: 1))
        let nothing = Reply(error: CountriesError(.storageError, "no quorum; nothing changed"))
        #expect(machine.received(nothing) == .finish(.outcomeUnknown(nothing)))
    }

    /// On one endpoint, a retry after a timeout that is refused with `storage_error` is sent
    /// again (same id) while tries are left: only the change's own reply can settle it.
    @Test func oneEndpointRetriesAStorageErrorAfterATimeout() {
        var machine = RetryMachine(endpoints: 1, tries: 3, changes: true)
        _ = machine.start()
        #expect(machine.timedOut() == .send(to: 0))
        #expect(machine.received(Reply(error: CountriesError(.storageError, "busy"))) == .send(to: 0))
        let first = Reply(seq: 4, count: 8)
        #expect(machine.received(first) == .finish(.replied(first, from: 0)))
    }

    /// Without an unknown try, `storage_error` is a definite "nothing changed" on one endpoint,
    /// and every try timing out is "no reply" for a read, "outcome unknown" for a change.
    @Test func definiteEnds() {
        var change = RetryMachine(endpoints: 1, tries: 3, changes: true)
        _ = change.start()
        let busy = Reply(error: CountriesError(.storageError, "busy"))
        #expect(change.received(busy) == .finish(.replied(busy, from: 0)))

        var read = RetryMachine(endpoints: 2, tries: 2, changes: false)
        _ = read.start()
        #expect(read.timedOut() == .send(to: 1))
        #expect(read.timedOut() == .finish(.noReply))

        var lost = RetryMachine(endpoints: 2, tries: 2, changes: true)
        _ = lost.start()
        _ = lost.timedOut()
        #expect(lost.timedOut() == .finish(.outcomeUnknown(nil)))
    }

    /// The request goes first to the endpoint that answered last, and skips one ZeroMQ refused.
    @Test func startsWhereToldAndSkipsUnusableEndpoints() {
        var machine = RetryMachine(endpoints: 3, tries: 3, first: 2, changes: false)
        #expect(machine.start() == .send(to: 2))
        #expect(machine.couldNotSend() == .send(to: 0))
        #expect(machine.timedOut() == .send(to: 1))
        #expect(machine.timedOut() == .finish(.noReply))
    }
}

extension RetryMachineTests {
    /// Nothing listening ends the request at once on one endpoint, whatever the tries left, and
    /// moves on to the next endpoint at once with several; a change whose earlier try may have
    /// been applied stays unknown.
    @Test func nothingListeningEndsAtOnce() {
        var one = RetryMachine(endpoints: 1, tries: 3, changes: false)
        _ = one.start()
        #expect(one.refused() == .finish(.refused([0])))

        var two = RetryMachine(endpoints: 2, tries: 4, changes: true)
        #expect(two.start() == .send(to: 0))
        #expect(two.refused() == .send(to: 1))
        #expect(two.timedOut() == .send(to: 1), "never again to the one where nothing listens")
        #expect(two.refused() == .finish(.outcomeUnknown(nil)))

        var both = RetryMachine(endpoints: 2, tries: 2, first: 1, changes: true)
        _ = both.start()
        #expect(both.refused() == .send(to: 0))
        #expect(both.refused() == .finish(.refused([1, 0])))
    }
}

extension RetryMachine {
    /// The reply the tests' `ok` and `refused` happenings deliver.
    fileprivate func lastReply(_ happening: RetryMachineTests.Happening) -> Reply {
        happening == .ok
            ? Reply(seq: 7, count: 8) : Reply(error: CountriesError(.notFound, "no such country"))
    }
}
