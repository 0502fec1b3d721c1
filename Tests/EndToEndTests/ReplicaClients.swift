import CountriesClient
import CountriesCore
import Foundation
import TestSupport
import ZeroMQ

// Clients of the replicated mode on a host of their own, driven from Swift (CommandClient)
// rather than through the binary, because the history checker needs what the command line
// does not print: each request's id, when it was sent, when the client stopped waiting, and
// what it finally heard over its retries (docs/PROTOCOL.md, "Replicated mode").

/// Runs `body` on a thread of its own inside `host`'s network namespace (its ZeroMQ context,
/// made there, opens every connection from that host) and waits up to `timeout` for it.
func onHost<Result: Sendable>(
    _ network: BridgedNetwork, _ host: String, timeout: Duration = .seconds(60),
    _ body: @escaping @Sendable () throws -> Result
) throws -> Result {
    let outcome = Box<Swift.Result<Result, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        outcome.value = Swift.Result {
            try network.enter(host)
            return try body()
        }
        done.signal()
    }
    thread.start()
    guard done.wait(timeout: .now() + (timeout * testSlowdown).timeInterval) == .success,
        let result = outcome.value
    else {
        throw HarnessFailure("work on \(host) ran over \(timeout)")
    }
    return try result.get()
}

/// Command clients for every replica, in one ZeroMQ context; make and use it on one thread
/// (``onHost(_:_:timeout:_:)``). One try per endpoint per call: the failover is the caller's.
final class ReplicaCommandClients {
    let endpoints: [String]
    private let clients: [CommandClient]

    init(endpoints: [String], timeout: Duration) throws {
        self.endpoints = endpoints
        let context = try Context()
        clients = endpoints.map { CommandClient(context: context, endpoint: $0, timeout: timeout, tries: 1) }
    }

    /// `request` sent to endpoint `index` once: its reply, or nil when none came in time.
    func send(_ request: Request, to index: Int) -> Reply? {
        try? clients[index % clients.count].send(request)
    }

    /// `request` sent to endpoint `index` until its outcome is known, at most `tries` times:
    /// the same id each time, as the protocol tells a client to do when a reply does not come
    /// or says the outcome is unknown (`unavailable`). Its reply, or nil when none said.
    func sendUntilKnown(_ request: Request, to index: Int, tries: Int = 5) -> Reply? {
        for _ in 0..<tries {
            if let reply = send(request, to: index) { return reply }
        }
        return nil
    }

    /// `command` with a fresh id to endpoint `index`; throws unless it succeeds.
    func ask(_ command: Command, to index: Int) throws -> Reply {
        let endpoint = endpoints[index % endpoints.count]
        guard let reply = send(Request(id: RequestID.make(), command: command), to: index) else {
            throw HarnessFailure("no reply from \(endpoint) to \(command.op)")
        }
        guard reply.ok else {
            throw HarnessFailure("\(endpoint) refused \(command.op): \(reply.error?.message ?? "?")")
        }
        return reply
    }

    /// The whole history from `index`'s replica, page by page (the checker's final history).
    func history(from index: Int) throws -> [Event] {
        var events: [Event] = []
        var since: UInt64 = 0
        while true {
            let reply = try ask(.history(since: since), to: index)
            let page = reply.events ?? []
            events += page
            guard reply.more == true, let last = page.last else { return events }
            since = last.seq
        }
    }
}

/// A client that adds countries with unique names in a loop and records each request as a
/// ``HistoryChecker/Operation`` on the clock of `origin`, in one of three ways (``Kind``).
final class ReplicaWriter: Sendable {
    /// How the writer sends and retries.
    enum Kind: Sendable {
        /// By hand: each request keeps its id across every try, on either replica, until it is
        /// acknowledged, refused for a reason other than the service's, or 6 s have passed.
        case failover
        /// Through the library's ``CommandClient`` on every replica (what `countries add
        /// --command A,B` does), recording what it reports: a reply, or "outcome unknown". A
        /// refusal it reports for a change that was applied is a violation.
        case reporting
        /// Without ids, one try to one replica (the next one each time), as any ZeroMQ binding
        /// may send: no retry, so a lost answer is an unknown outcome.
        case idless
    }

    let label: String
    private let operations = Box<[HistoryChecker.Operation]>([])
    private let failures = Box<[String]>([])
    private let answers = Box<[String: Int]>([:])
    private let stopping = Box(false)
    private let finished = DispatchSemaphore(value: 0)

    /// Each try waits this long for its reply.
    static let tryTimeout = Duration.milliseconds(1500)
    /// A request is given up (indeterminate, unless refused by every try) after this long.
    static let requestLimit = Duration.seconds(6)

    /// Starts adding from `host` (from this host when `network` is nil), trying replica
    /// `preferred` first each time, with `pause` between requests (so a run stays well within
    /// the 10,000 events a replicated service keeps, and its whole history can be read back).
    init(
        _ label: String, network: BridgedNetwork?, host: String, endpoints: [String], preferred: Int,
        origin: ContinuousClock.Instant, pause: Duration = .milliseconds(20), kind: Kind = .failover
    ) {
        self.label = label
        let thread = Thread { [operations, failures, answers, stopping, finished] in
            defer { finished.signal() }
            do {
                try network?.enter(host)
                let clients = try ReplicaCommandClients(endpoints: endpoints, timeout: Self.tryTimeout)
                let reporting = CommandClient(
                    context: try Context(), endpoints: endpoints, timeout: Self.tryTimeout,
                    tries: Int(Self.requestLimit / Self.tryTimeout))
                var number = 0
                while !stopping.value {
                    number += 1
                    let name = "\(label) \(number)"
                    let operation: HistoryChecker.Operation
                    switch kind {
                    case .failover:
                        operation = Self.add(
                            name, clients: clients, preferred: preferred, origin: origin, answers: answers)
                    case .reporting:
                        operation = Self.add(name, through: reporting, origin: origin, answers: answers)
                    case .idless:
                        operation = Self.addOnce(
                            name, clients: clients, replica: preferred + number, origin: origin,
                            answers: answers)
                    }
                    operations.update { $0.append(operation) }
                    sleep(for: pause)
                }
            } catch {
                failures.update { $0.append("\(label): \(error)") }
            }
        }
        thread.start()
    }

    /// One request, with its retries: what the client finally heard.
    private static func add(
        _ name: String, clients: ReplicaCommandClients, preferred: Int, origin: ContinuousClock.Instant,
        answers: Box<[String: Int]>
    ) -> HistoryChecker.Operation {
        let request = Request(id: RequestID.make(), command: .change(.add(name: name)))
        let invoked = ContinuousClock.now
        var maybeApplied = false
        var refusal: String?
        var index = preferred
        var outcome: HistoryChecker.Outcome?
        while outcome == nil, ContinuousClock.now - invoked < requestLimit {
            defer { index += 1 }
            guard let reply = clients.send(request, to: index) else {
                answers.update { $0["no reply", default: 0] += 1 }
                maybeApplied = true
                continue
            }
            answers.update { $0[reply.ok ? "ok" : reply.error?.code ?? "?", default: 0] += 1 }
            if reply.ok, let seq = reply.seq {
                outcome = .acknowledged(seq: seq)
            } else if let code = reply.error?.code, code == "unavailable" || code == "storage_error" {
                // The service's trouble: another replica, or the same later, may do it.
                if code == "unavailable" { maybeApplied = true } else { refusal = code }
                Thread.sleep(forTimeInterval: 0.05)
            } else {
                outcome = .refused(code: reply.error?.code ?? "a success without a seq")
            }
        }
        // Refused only when no try may have applied it.
        let final =
            outcome ?? (maybeApplied || refusal == nil ? .indeterminate : .refused(code: refusal ?? ""))
        return HistoryChecker.Operation(
            id: request.id ?? "?", name: name, invoked: invoked - origin,
            completed: ContinuousClock.now - origin, outcome: final)
    }

    /// One request through ``CommandClient``: what it reported, taken at its word.
    private static func add(
        _ name: String, through client: CommandClient, origin: ContinuousClock.Instant,
        answers: Box<[String: Int]>
    ) -> HistoryChecker.Operation {
        let request = Request(id: RequestID.make(), command: .change(.add(name: name)))
        let invoked = ContinuousClock.now
        let outcome: HistoryChecker.Outcome
        do {
            let reply = try client.send(request)
            if reply.ok, let seq = reply.seq {
                outcome = .acknowledged(seq: seq)
            } else {
                outcome = .refused(code: reply.error?.code ?? "a success without a seq")
            }
        } catch {
            // "Outcome unknown" is the one answer a change may end with besides a reply.
            outcome = error.code == .outcomeUnknown ? .indeterminate : .refused(code: error.code.rawValue)
        }
        let reported: String
        switch outcome {
        case .acknowledged: reported = "reported ok"
        case .refused(let code): reported = "reported \(code)"
        case .indeterminate: reported = "reported outcome unknown"
        }
        answers.update { $0[reported, default: 0] += 1 }
        return HistoryChecker.Operation(
            id: request.id ?? "?", name: name, invoked: invoked - origin,
            completed: ContinuousClock.now - origin, outcome: outcome)
    }

    /// One request without an id, once, to one replica.
    private static func addOnce(
        _ name: String, clients: ReplicaCommandClients, replica: Int, origin: ContinuousClock.Instant,
        answers: Box<[String: Int]>
    ) -> HistoryChecker.Operation {
        let invoked = ContinuousClock.now
        let reply = clients.send(Request(command: .change(.add(name: name))), to: replica)
        let outcome: HistoryChecker.Outcome
        if let reply, reply.ok, let seq = reply.seq {
            outcome = .acknowledged(seq: seq)
        } else if let code = reply?.error?.code, code != "unavailable" {
            outcome = .refused(code: code)
        } else {
            outcome = .indeterminate
        }
        answers.update {
            $0[reply.map { $0.ok ? "ok" : $0.error?.code ?? "?" } ?? "no reply", default: 0] += 1
        }
        return HistoryChecker.Operation(
            id: "-", name: name, invoked: invoked - origin, completed: ContinuousClock.now - origin,
            outcome: outcome)
    }

    /// Stops after the request in flight (bounded by its limit); every request it made.
    func stop() -> [HistoryChecker.Operation] {
        stopping.value = true
        _ = finished.wait(timeout: .now() + ((Self.requestLimit + .seconds(5)) * testSlowdown).timeInterval)
        return operations.value
    }

    /// What kept it from running at all (empty when nothing did).
    var problems: [String] { failures.value }

    /// How many tries got each answer (`ok`, an error code, `no reply`).
    var tries: [String: Int] { answers.value }

    /// How many requests it has made so far.
    var count: Int { operations.value.count }
}
