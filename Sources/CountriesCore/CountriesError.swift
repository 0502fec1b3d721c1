/// A refusal from the state controller or the protocol: a code a program can switch on and a
/// message a person can act on.
///
/// This is the `error` object of protocol v1: `{"code": C, "message": M}`.
public struct CountriesError: Error, Equatable, Hashable, Sendable {
    /// What kind of refusal this is. The raw values are the protocol's error codes.
    public enum Code: String, Equatable, Hashable, Sendable, CaseIterable {
        /// Not JSON, not an object, a field missing or of the wrong type.
        case badRequest = "bad_request"
        /// The `op` is not one the service knows.
        case unknownOp = "unknown_op"
        /// The index is negative or past the end of the list.
        case indexOutOfRange = "index_out_of_range"
        /// No country has that name.
        case notFound = "not_found"
        /// A country with that name (case-insensitively) already exists.
        case duplicate = "duplicate"
        /// The name is empty, too long, or holds control characters.
        case invalidName = "invalid_name"
        /// The request or its effect exceeds a limit (see ``Limits``).
        case tooLarge = "too_large"
        /// `if_seq` is not the current seq.
        case conflict = "conflict"
        /// `history` was asked for events that are no longer kept.
        case historyTruncated = "history_truncated"
        /// A read-only client asked for a change.
        case forbidden = "forbidden"
        /// The store could not commit; nothing changed.
        case storageError = "storage_error"
        /// The change may or may not have been applied (a replicated service lost its answer
        /// from etcd); retry with the same id: the retry gets the first reply, or applies it once.
        case unavailable = "unavailable"
    }

    /// The protocol error code.
    public var code: Code
    /// A sentence saying what went wrong and, where it helps, what to do.
    public var message: String

    /// Creates an error with a code and a message.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}

extension CountriesError: CustomStringConvertible {
    /// The message alone, as the command line prints it after `countries: `.
    public var description: String { message }
}

extension CountriesError {
    static func indexOutOfRange(_ index: Int, count: Int) -> CountriesError {
        let rows = count == 1 ? "there is 1 country" : "there are \(count) countries"
        let hint = count == 0 ? "" : count == 1 ? " (index 0)" : " (indexes 0 to \(count - 1))"
        return CountriesError(.indexOutOfRange, "index \(index) is out of range: \(rows)\(hint)")
    }

    static func notFound(_ name: String) -> CountriesError {
        CountriesError(
            .notFound, "no country named \(CountryName.quoted(name)); `countries list` shows the names")
    }

    static func conflict(expected: UInt64, current: UInt64) -> CountriesError {
        CountriesError(
            .conflict,
            "if_seq \(expected) is not the current seq \(current): the list changed; read it again and retry"
        )
    }
}
