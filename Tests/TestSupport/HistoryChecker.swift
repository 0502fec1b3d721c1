/// Checks a recorded run of a replicated service against its promises, in the spirit of etcd's
/// robustness tests and Jepsen: the run is recorded as plain values (what each client asked and
/// heard, what the final history holds, what each subscriber printed), and each check is a
/// function over them that names the operation and the seq of every violation it finds.
///
/// Each change in such a run adds a name no other request adds, so the history tells which
/// request each event came from.
public enum HistoryChecker {
    /// What a client finally heard for one request (after its retries, with one id).
    public enum Outcome: Equatable, Sendable {
        /// A success naming this seq.
        case acknowledged(seq: UInt64)
        /// A refusal that means nothing changed (`storage_error`, or any other but `unavailable`).
        case refused(code: String)
        /// No answer, or `unavailable` on the last try: it may or may not have been applied.
        case indeterminate
    }

    /// One request as a client recorded it.
    public struct Operation: Equatable, Sendable, CustomStringConvertible {
        /// The request id.
        public var id: String
        /// The name the request added: its mark in the history.
        public var name: String
        /// When it was first sent and when the client stopped waiting (any clock, same for all).
        public var invoked: Duration
        public var completed: Duration
        public var outcome: Outcome

        public init(id: String, name: String, invoked: Duration, completed: Duration, outcome: Outcome) {
            self.id = id
            self.name = name
            self.invoked = invoked
            self.completed = completed
            self.outcome = outcome
        }

        public var description: String { "request \(id) (adds \(name)): \(outcome)" }
    }

    /// One event of the final history: its seq and the name it added (nil for other events).
    public struct Committed: Equatable, Sendable {
        public var seq: UInt64
        public var added: String?

        public init(seq: UInt64, added: String?) {
            self.seq = seq
            self.added = added
        }
    }

    /// One broken promise, saying which.
    public struct Violation: Equatable, Sendable, CustomStringConvertible {
        public var description: String

        init(_ description: String) {
            self.description = description
        }
    }

    /// Ordered and unique: the history's seqs run from `first` up by one, with no gap or repeat.
    public static func contiguous(_ history: [Committed], from first: UInt64 = 1) -> [Violation] {
        var expected = first
        var violations: [Violation] = []
        for event in history {
            if event.seq != expected {
                violations.append(Violation("the history has seq \(event.seq) where seq \(expected) belongs"))
            }
            expected = event.seq + 1
        }
        return violations
    }

    /// Nothing acknowledged lost, and exactly once: every acknowledged request is in the
    /// history once, at the seq its reply named; an indeterminate one at most once; a refused
    /// one not at all; and the history holds nothing no client asked for.
    public static func exactlyOnce(_ operations: [Operation], history: [Committed]) -> [Violation] {
        var seqsOfName: [String: [UInt64]] = [:]
        for event in history {
            if let name = event.added { seqsOfName[name, default: []].append(event.seq) }
        }
        var violations: [Violation] = []
        var asked = Set<String>()
        for operation in operations {
            asked.insert(operation.name)
            let seqs = seqsOfName[operation.name] ?? []
            if seqs.count > 1 {
                violations.append(Violation("\(operation) was applied \(seqs.count) times, at seqs \(seqs)"))
            }
            switch operation.outcome {
            case .acknowledged(let seq):
                if seqs.isEmpty {
                    violations.append(
                        Violation("\(operation) is not in the history: an acknowledged change was lost"))
                } else if !seqs.contains(seq) {
                    violations.append(
                        Violation(
                            "\(operation) is in the history at seq \(seqs), not at the seq its reply named"))
                }
            case .refused:
                if !seqs.isEmpty {
                    violations.append(
                        Violation("\(operation) is in the history at seq \(seqs) although it was refused"))
                }
            case .indeterminate:
                break
            }
        }
        for (name, seqs) in seqsOfName where !asked.contains(name) {
            violations.append(Violation("the history adds \(name) at seq \(seqs), which no client asked for"))
        }
        return violations
    }

    /// What one subscriber printed never goes back and has each seq at most once.
    public static func monotonic(_ seqs: [UInt64], subscriber: String) -> [Violation] {
        var violations: [Violation] = []
        var last: UInt64?
        for seq in seqs {
            if let last, seq <= last {
                violations.append(
                    Violation(
                        seq == last
                            ? "subscriber \(subscriber) printed seq \(seq) twice"
                            : "subscriber \(subscriber) printed seq \(seq) after seq \(last)"))
            }
            last = max(last ?? seq, seq)
        }
        return violations
    }

    /// Nothing acknowledged while the quorum was gone: no request sent after `start + grace`
    /// was acknowledged before `end`.
    public static func noAcknowledgements(
        _ operations: [Operation], between start: Duration, and end: Duration,
        grace: Duration = .milliseconds(500)
    ) -> [Violation] {
        operations.compactMap { operation in
            guard case .acknowledged(let seq) = operation.outcome, operation.invoked > start + grace,
                operation.completed < end
            else { return nil }
            return Violation(
                "\(operation) was acknowledged (seq \(seq)) while the quorum was gone (sent at \(operation.invoked), answered at \(operation.completed))"
            )
        }
    }

    /// Writes resume: some request sent after `fault` is acknowledged within `bound` of it.
    public static func resumes(
        _ operations: [Operation], after fault: Duration, within bound: Duration, what: String
    ) -> [Violation] {
        let first = operations.filter {
            if case .acknowledged = $0.outcome { return $0.invoked >= fault } else { return false }
        }.map(\.completed).min()
        guard let first else {
            return [Violation("no write was acknowledged after \(what)")]
        }
        guard first - fault <= bound else {
            return [Violation("writes resumed \(first - fault) after \(what), more than \(bound)")]
        }
        return []
    }
}
