/// What a request asks of the service: the `op` of protocol v1 and its fields, validated.
public enum Command: Equatable, Sendable {
    /// A read of the list that the state controller answers alone.
    case query(Query)
    /// A change to the list.
    case change(Change)
    /// Every event after `since`, from the service's event log.
    case history(since: UInt64)
    /// The service's status, for operators.
    case status

    /// The protocol's name for this command (`"toggle"`, `"list"`, ...).
    public var op: String {
        switch self {
        case .query(let query): return query.op
        case .change(let change): return change.op
        case .history: return "history"
        case .status: return "status"
        }
    }

    /// Whether it may change the list: a try of it that got no answer may have been applied.
    public var changes: Bool {
        if case .change = self { return true }
        return false
    }

    /// The existing row it names (`get`, `toggle`, `set`, `remove`), or nil.
    public var target: CountryReference? {
        switch self {
        case .query(.get(let target)), .change(.toggle(let target, _)), .change(.set(let target, _, _)),
            .change(.remove(let target)):
            return target
        default:
            return nil
        }
    }

    /// The seq it is conditional on (`if_seq` of `toggle` and `set`), or nil.
    public var ifSeq: UInt64? {
        switch self {
        case .change(.toggle(_, let ifSeq)), .change(.set(_, _, let ifSeq)): return ifSeq
        default: return nil
        }
    }

    /// Every `op` the protocol knows, for error messages and help.
    public static let knownOps = [
        "list", "get", "count", "toggle", "set", "add", "remove", "reset", "history", "status",
    ]
}

/// The reads the state controller answers from its own state.
public enum Query: Equatable, Sendable {
    /// Every country, in order.
    case list
    /// One country.
    case get(CountryReference)
    /// How many countries there are.
    case count

    /// The protocol's name for this query.
    public var op: String {
        switch self {
        case .list: return "list"
        case .get: return "get"
        case .count: return "count"
        }
    }
}

/// The changes the state controller can make; each one that changes something is one event.
public enum Change: Equatable, Sendable {
    /// Flip `visited`; with `ifSeq`, only if the state is still at that seq.
    case toggle(CountryReference, ifSeq: UInt64? = nil)
    /// Set `visited`; a set that changes nothing still succeeds, without an event.
    case set(CountryReference, visited: Bool, ifSeq: UInt64? = nil)
    /// Append a country at the end.
    case add(name: String, visited: Bool = false)
    /// Remove a country; the rows after it move up one.
    case remove(CountryReference)
    /// Put back the seed list the service was started with.
    case reset

    /// The protocol's name for this change.
    public var op: String {
        switch self {
        case .toggle: return "toggle"
        case .set: return "set"
        case .add: return "add"
        case .remove: return "remove"
        case .reset: return "reset"
        }
    }
}
