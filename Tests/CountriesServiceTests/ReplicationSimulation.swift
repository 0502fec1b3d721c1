import CountriesClient
import CountriesCore
import Foundation
import SystemSupport
import TestSupport

@testable import CountriesService

/// The whole replicated commit path in a deterministic simulation, as FoundationDB tests
/// itself: several replicas (``CommandHandler`` over ``SharedLogStore``) and clients (the one
/// ``RetryMachine``) exchange requests one step at a time, while the seeded scheduler loses
/// answers, pauses and restarts replicas, fails commits before and after they reach the log,
/// lets replicas' copies go stale, and restores the log to an earlier snapshot. One seed replays
/// one history exactly; ``violations`` checks it (docs/HA.md, "Commits"; docs/PROTOCOL.md,
/// "Outcomes").
final class ReplicationSimulation {
    /// What the clients ask.
    enum Kind: Equatable {
        /// Adds a name no other request adds: its mark in the history.
        case add(String)
        /// Toggles a name some client added before.
        case toggle(String)
        /// Sets a name's flag, without an id (what any ZeroMQ binding may send).
        case set(String, Bool)
        /// Reads a name.
        case get(String)
    }

    /// One request as its client ended it.
    struct Operation {
        var client: Int
        var id: String?
        var kind: Kind
        var invoked: Int
        var completed: Int
        var verdict: RetryMachine.Verdict
        /// For each store, the highest seq a client had been told of before this one was sent.
        var acknowledgedBefore: [String: UInt64]
        /// The store of the replica that answered, when one did.
        var answeredBy: String?
    }

    /// A fault the double's log can be told to have (a broken store, to show the checks bite).
    enum Breakage { case none, forgetsIDs }

    private final class Replica {
        var store: SharedLogStore
        var handler: CommandHandler
        var inbox: [(client: Int, attempt: Int, body: Data)] = []
        var pausedUntil = 0

        init(log: SharedLog, seed: [Country]) throws {
            store = SharedLogStore(log: log)
            handler = try makeHandler(on: store, seed: seed)
        }
    }

    private struct InFlight {
        var kind: Kind
        var request: Request
        var endpoints: [Int]
        var machine: RetryMachine
        var attempt: Int
        var deadline: Int
        var invoked: Int
        var acknowledgedBefore: [String: UInt64]
    }

    private struct Client {
        var usesIDs: Bool
        var knownStore: String?
        var inFlight: InFlight?
        var sent = 0
    }

    let seed: UInt64
    private var random: SplitMix64
    private let log: SharedLog
    private let seedList = SeedList.standard
    private var replicas: [Replica] = []
    private var clients: [Client] = []
    private var step = 0
    private var attempts = 0
    private var snapshot: SharedLog.Snapshot?
    private var restores = 0
    private var restartAt: [Int: Int] = [:]
    /// Names whose add some client was told was acknowledged.
    private var addedNames: [String] = []
    /// For each store, the highest seq a client was told of.
    private var acknowledged: [String: UInt64] = [:]
    private let breakage: Breakage

    /// Everything that happened, one line per step: two runs of one seed give the same lines.
    private(set) var trace: [String] = []
    /// Every request, as its client ended it.
    private(set) var operations: [Operation] = []

    init(seed: UInt64, breakage: Breakage = .none) throws {
        self.seed = seed
        self.breakage = breakage
        random = SplitMix64(seed: seed)
        log = SharedLog(seed: seedList)
        for _ in 0..<(2 + random.below(3)) { replicas.append(try Replica(log: log, seed: seedList)) }
        for index in 0..<(2 + random.below(4)) {
            // One client in three sends without ids, once, to one replica: as any binding may.
            clients.append(Client(usesIDs: index % 3 != 2, knownStore: log.identity))
        }
    }

    /// Runs `steps` steps of traffic and faults, then lets every request end without faults.
    func run(steps: Int) throws {
        while step < steps {
            step += 1
            try tick(faults: true)
        }
        for replica in replicas { replica.pausedUntil = 0 }
        var quiet = 0
        while clients.contains(where: { $0.inFlight != nil })
            || replicas.contains(where: { !$0.inbox.isEmpty })
        {
            step += 1
            quiet += 1
            precondition(quiet < 10_000, "seed \(seed): requests never ended")
            try tick(faults: false)
        }
    }

    private func tick(faults: Bool) throws {
        for (index, due) in restartAt.sorted(by: { $0.key < $1.key }) where due <= step {
            restartAt[index] = nil
            try restart(index)
        }
        for index in clients.indices { timeOut(index) }
        let roll = random.below(100)
        switch roll {
        case 0..<30 where faults:
            startRequest()
        case 30..<70:
            let index = random.below(replicas.count)
            if replicas[index].pausedUntil <= step { try process(index) }
        case 70..<85:
            deliverWatch(random.below(replicas.count))
        case 85..<100 where faults:
            try injectFault()
        default:
            // Without new traffic: let replicas work through what they hold.
            let index = random.below(replicas.count)
            if replicas[index].pausedUntil <= step { try process(index) }
        }
    }

    // MARK: Clients

    private func startRequest() {
        let index = random.below(clients.count)
        guard clients[index].inFlight == nil else { return }
        clients[index].sent += 1
        let client = clients[index]
        let kind: Kind
        let roll = random.below(10)
        if roll < 6 || addedNames.isEmpty {
            kind = .add("c\(index)-\(client.sent)")
        } else {
            let name = addedNames[random.below(addedNames.count)]
            switch roll {
            case 6, 7: kind = client.usesIDs ? .toggle(name) : .set(name, random.below(2) == 0)
            default: kind = .get(name)
            }
        }
        let command: Command
        switch kind {
        case .add(let name): command = .change(.add(name: name, visited: false))
        case .toggle(let name): command = .change(.toggle(.name(name), ifSeq: nil))
        case .set(let name, let visited): command = .change(.set(.name(name), visited: visited, ifSeq: nil))
        case .get(let name): command = .query(.get(.name(name)))
        }
        var request = Request(command: command)
        let endpoints: [Int]
        if client.usesIDs {
            if command.changes {
                request.id = "c\(index)-r\(client.sent)"
                request.ifStore = client.knownStore
            }
            endpoints = Array(0..<replicas.count)
        } else {
            endpoints = [random.below(replicas.count)]
        }
        var machine = RetryMachine(
            endpoints: endpoints.count, tries: client.usesIDs ? 4 : 1, first: random.below(endpoints.count),
            changes: command.changes, store: request.ifStore)
        guard case .send(let first) = machine.start() else { return }
        clients[index].inFlight = InFlight(
            kind: kind, request: request, endpoints: endpoints, machine: machine, attempt: 0, deadline: 0,
            invoked: step, acknowledgedBefore: acknowledged)
        send(client: index, to: first)
        trace.append("\(step) c\(index) sends \(kind)")
    }

    private func send(client index: Int, to endpoint: Int) {
        guard var flight = clients[index].inFlight else { return }
        attempts += 1
        flight.attempt = attempts
        flight.deadline = step + 6 + random.below(12)
        let replica = flight.endpoints[endpoint]
        replicas[replica].inbox.append((index, attempts, flight.request.encoded()))
        clients[index].inFlight = flight
    }

    private func timeOut(_ index: Int) {
        guard var flight = clients[index].inFlight, flight.deadline <= step else { return }
        let next = flight.machine.timedOut()
        clients[index].inFlight = flight
        trace.append("\(step) c\(index) timed out")
        follow(next, client: index, answeredBy: nil)
        _ = flight
    }

    private func deliver(_ reply: Reply, client index: Int, attempt: Int, answeredBy store: String) {
        guard var flight = clients[index].inFlight, flight.attempt == attempt else { return }
        let next = flight.machine.received(reply)
        clients[index].inFlight = flight
        follow(next, client: index, answeredBy: store)
    }

    private func follow(_ step: RetryMachine.Step, client index: Int, answeredBy: String?) {
        switch step {
        case .send(let endpoint):
            send(client: index, to: endpoint)
        case .finish(let verdict):
            guard let flight = clients[index].inFlight else { return }
            clients[index].inFlight = nil
            if case .replied(let reply, _) = verdict, reply.ok, let store = reply.store, let seq = reply.seq {
                acknowledged[store] = max(acknowledged[store] ?? 0, seq)
                clients[index].knownStore = store
                if case .add(let name) = flight.kind { addedNames.append(name) }
            }
            if case .replied(let reply, _) = verdict, !reply.ok, let store = reply.store {
                // Another store's refusal of the pinned store: the client learns the new store.
                clients[index].knownStore = store
            }
            operations.append(
                Operation(
                    client: index, id: flight.request.id, kind: flight.kind, invoked: flight.invoked,
                    completed: self.step, verdict: verdict, acknowledgedBefore: flight.acknowledgedBefore,
                    answeredBy: answeredBy))
            trace.append("\(self.step) c\(index) ends \(flight.kind): \(verdict)")
        }
    }

    // MARK: Replicas

    private func process(_ index: Int) throws {
        let replica = replicas[index]
        guard !replica.inbox.isEmpty else { return }
        let count = min(replica.inbox.count, 1 + random.below(6))
        let batch = Array(replica.inbox.prefix(count))
        replica.inbox.removeFirst(count)
        let store = replica.store.identity
        if breakage == .forgetsIDs { log.forgetRequests() }
        let output = replica.handler.handle(
            batch.map {
                IncomingRequest(envelope: [Data("\($0.client) \($0.attempt)".utf8)], body: [Array($0.body)])
            })
        replica.store.fault = .none
        trace.append("\(step) r\(index) handled \(count), at seq \(replica.handler.state.seq)")
        for item in output {
            guard case .reply(let envelope, let body) = item else { continue }
            let parts = String(decoding: envelope[0], as: UTF8.self).split(separator: " ")
            guard parts.count == 2, let client = Int(parts[0]), let attempt = Int(parts[1]) else { continue }
            // The network loses one answer in twenty.
            guard random.below(20) != 0 else {
                trace.append("\(step) r\(index) answer to c\(client) lost")
                continue
            }
            deliver(try Reply.decode(Data(body)), client: client, attempt: attempt, answeredBy: store)
        }
    }

    /// The replica's watch brings it some of the events it has not seen: until then its copy
    /// is stale, as a real replica's is between an event's commit and its watch.
    private func deliverWatch(_ index: Int) {
        let handler = replicas[index].handler
        guard replicas[index].store.unavailability == nil else { return }
        for event in log.events.drop(while: { $0.seq <= handler.state.seq }).prefix(1 + random.below(4)) {
            handler.observe(event)
        }
    }

    private func restart(_ index: Int) throws {
        replicas[index] = try Replica(log: log, seed: seedList)
        trace.append("\(step) r\(index) restarted at seq \(replicas[index].handler.state.seq)")
    }

    private func injectFault() throws {
        let index = random.below(replicas.count)
        switch random.below(12) {
        case 0..<3:
            replicas[index].store.fault = .answerLost
            trace.append("\(step) r\(index) will lose its next commit's answer")
        case 3..<5:
            replicas[index].store.fault = .beforeCommit
            trace.append("\(step) r\(index) loses its quorum for one commit")
        case 5..<8:
            replicas[index].pausedUntil = step + 5 + random.below(30)
            trace.append("\(step) r\(index) paused until \(replicas[index].pausedUntil)")
        case 8, 9:
            try restart(index)
        case 10:
            snapshot = log.save()
            trace.append("\(step) snapshot at seq \(log.seq)")
        default:
            guard let snapshot, restores == 0 else { return }
            restores += 1
            var identity = ""
            for _ in 0..<2 { identity += String(format: "%016llx", random.next()) }
            log.restore(snapshot, as: identity)
            // The operator starts every replica again, one after the other.
            for replica in replicas.indices { restartAt[replica] = step + 5 + random.below(20) }
            trace.append("\(step) log restored to seq \(log.seq) as store \(identity)")
        }
    }

    // MARK: Checks

    /// Every broken promise in the run, each naming the seed to replay it.
    func violations() throws -> [String] {
        var found: [String] = []
        // Exactly once, nothing acknowledged lost: per store, for the adds.
        for (identity, events) in log.histories {
            let history = events.map { event -> HistoryChecker.Committed in
                if case .added(let row) = event.kind { return .init(seq: event.seq, added: row.name) }
                return .init(seq: event.seq, added: nil)
            }
            var checked: [HistoryChecker.Operation] = []
            for operation in operations {
                guard case .add(let name) = operation.kind else { continue }
                let outcome: HistoryChecker.Outcome
                switch operation.verdict {
                case .replied(let reply, _) where reply.ok:
                    // A seq means something only in the store its reply named.
                    outcome = reply.store == identity ? .acknowledged(seq: reply.seq ?? 0) : .indeterminate
                case .replied(let reply, _):
                    outcome = .refused(code: reply.error?.code ?? "?")
                case .refused:
                    // Nothing listened, so nothing was sent.
                    outcome = .refused(code: "connection_refused")
                case .outcomeUnknown, .noReply, .unusable:
                    outcome = .indeterminate
                }
                checked.append(
                    .init(
                        id: operation.id ?? "-", name: name, invoked: .seconds(operation.invoked),
                        completed: .seconds(operation.completed), outcome: outcome))
            }
            found += HistoryChecker.contiguous(history).map { "store \(identity): \($0)" }
            found += HistoryChecker.exactlyOnce(checked, history: history).map { "store \(identity): \($0)" }
        }
        // Every outcome decided on a state at least as new as every acknowledged change.
        for operation in operations {
            guard case .replied(let reply, _) = operation.verdict else { continue }
            if reply.ok, let store = reply.store, let seq = reply.seq,
                let before = operation.acknowledgedBefore[store], seq < before
            {
                found.append(
                    "\(operation.kind) was answered at seq \(seq) of store \(store), after seq \(before) was acknowledged"
                )
            }
            if reply.error?.code == "not_found", let store = operation.answeredBy,
                case let name? = operation.name, addedBefore(name, in: store, operation: operation)
            {
                found.append(
                    "\(operation.kind) was not found in store \(store), where its add was acknowledged")
            }
        }
        // Every replica's copy is the log's state at its seq.
        for (index, replica) in replicas.enumerated() where replica.store.unavailability == nil {
            if try replica.handler.state != log.state(upTo: replica.handler.state.seq) {
                found.append("replica \(index)'s copy at seq \(replica.handler.state.seq) is not the log's")
            }
        }
        return found.map { "seed \(seed): \($0)" }
    }

    /// Whether `name`'s add was acknowledged in `store` before `operation` was sent.
    private func addedBefore(_ name: String, in store: String, operation: Operation) -> Bool {
        operations.contains { other in
            guard case .add(name) = other.kind, other.completed < operation.invoked,
                case .replied(let reply, _) = other.verdict, reply.ok
            else { return false }
            return reply.store == store
        }
    }
}

extension ReplicationSimulation.Operation {
    /// The name the request is about.
    fileprivate var name: String? {
        switch kind {
        case .add(let name), .toggle(let name), .set(let name, _), .get(let name): name
        }
    }
}

@available(*, unavailable) extension ReplicationSimulation: Sendable {}
