import CountriesCore
import Foundation
import ZeroMQ

/// A command could not be carried out by the client (as opposed to refused by the service).
public struct ClientError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What failed.
    public enum Code: String, Sendable {
        /// No reply came after every try.
        case noReply = "no_reply"
        /// A reply came but is not protocol JSON.
        case badReply = "bad_reply"
        /// ZeroMQ itself failed (a malformed endpoint, for one).
        case sockets
        /// Nothing listens at the endpoints (the connection was refused, or there is no socket
        /// file), so nothing was sent.
        case refused = "connection_refused"
        /// A change got no reply, or `unavailable`, and no later try brought its own reply: it
        /// may or may not have been applied. Sending it again with the same id is safe.
        case outcomeUnknown = "outcome_unknown"
    }

    /// What failed.
    public var code: Code
    /// The endpoint the client talked to.
    public var endpoint: String
    /// What went wrong, for a person.
    public var message: String
    /// Whether no endpoint answered at all (no service there, or CURVE refused this client).
    public var heardNothing: Bool
    /// For an unknown outcome, what the last try got instead of its reply (`no reply from ...
    /// after 3 tries`, `the web process stopped ...`), without the advice: what a screen shows
    /// beside its own.
    public var cause: String?

    /// Creates an error.
    public init(_ code: Code, endpoint: String, _ message: String, heardNothing: Bool? = nil) {
        self.code = code
        self.endpoint = endpoint
        self.message = message
        self.heardNothing = heardNothing ?? (code == .noReply)
    }

    /// The message.
    public var description: String { message }

    /// The error a request ends with when the retry machine's verdict is not a reply;
    /// `unusable` is what ZeroMQ said of the endpoints, when none could be used. Callers take a
    /// reply out first; one passed here anyway becomes `bad_reply`.
    static func ending(
        _ verdict: RetryMachine.Verdict, of request: Request, endpoints: [String], tries: Int,
        unusable: ClientError?, undecodable: ClientError? = nil
    ) -> ClientError {
        switch verdict {
        case .replied:
            return ClientError(
                .badReply, endpoint: endpoints.joined(separator: ","), "a reply is not an error")
        case .outcomeUnknown(let last):
            return .outcomeUnknown(
                id: request.id, endpoints: endpoints, tries: tries, lastReply: last,
                unreadable: last == nil ? undecodable?.message : nil)
        case .noReply:
            // A read answered only with what is not a reply: say that, not "no reply".
            return undecodable ?? .noReply(endpoints: endpoints, tries: tries)
        case .refused(let indices):
            return .refused(endpoints: indices.map { endpoints[$0] })
        case .unusable:
            return unusable
                ?? ClientError(
                    .sockets, endpoint: endpoints.joined(separator: ","), "no endpoint could be used")
        }
    }

    /// The reply in a frame from `endpoint`, or why it is no answer to `request`: not the
    /// protocol's JSON, or a success that lacks a field it must have or contradicts what was
    /// asked (``CountriesCore/Reply/contradiction(answering:)``).
    static func reply(in frame: Data, answering request: Request, from endpoint: String) -> Result<
        Reply, ClientError
    > {
        guard let reply = try? Reply.decode(frame) else {
            return .failure(
                ClientError(.badReply, endpoint: endpoint, "the reply from \(endpoint) is not protocol JSON"))
        }
        guard let contradiction = reply.contradiction(answering: request) else { return .success(reply) }
        return .failure(
            ClientError(
                .badReply, endpoint: endpoint,
                "the reply from \(endpoint) \(contradiction): it is no answer to \(request.command.op)"))
    }

    /// No reply from any of `endpoints` after `tries` tries (a read: nothing was changed).
    static func noReply(endpoints: [String], tries: Int) -> ClientError {
        ClientError(
            .noReply, endpoint: endpoints.joined(separator: ","),
            "no reply from \(endpoints.joined(separator: ", ")) after \(tries) \(tries == 1 ? "try" : "tries")\(endpoints.count > 1 ? " in all" : "")"
        )
    }

    /// Nothing listens at any of `endpoints` (the connection was refused, or there is no socket
    /// file): no service is running there, and nothing was sent.
    static func refused(endpoints: [String]) -> ClientError {
        let list = endpoints.joined(separator: ", ")
        return ClientError(
            .refused, endpoint: endpoints.joined(separator: ","),
            "nothing is listening on \(list): is `countries serve` running? (see --command)",
            heardNothing: false)
    }

    /// A change whose outcome no try settled: what happened, and how to find out or retry
    /// safely (with the same id).
    /// `unreadable` says what the last try got instead of a reply, if it got something.
    static func outcomeUnknown(
        id: String?, endpoints: [String], tries: Int, lastReply: Reply?, unreadable: String? = nil
    ) -> ClientError {
        let what =
            lastReply?.failure.map { "the last try was answered \($0.code.rawValue): \($0.message)" }
            ?? unreadable ?? noReply(endpoints: endpoints, tries: tries).message
        let retry =
            id.map {
                "request id \($0); check with `countries get`, or send it again with --id \($0) (applied at most once)"
            }
            ?? "check with `countries get` before sending it again"
        var error = ClientError(
            .outcomeUnknown, endpoint: endpoints.joined(separator: ","),
            "outcome unknown: the change may or may not have been applied (\(what)); \(retry)",
            heardNothing: lastReply == nil && unreadable == nil)
        error.cause = what
        return error
    }
}
