import CountriesCore
import CountriesStore
import Foundation
import SystemSupport
import TestSupport

@testable import CountriesReplication
@testable import CountriesService

/// A handler on `store` as the service makes one, for tests that hand it batches without
/// sockets; its `status` names no endpoint. Quiet unless given a `logger`.
func makeHandler(
    on store: any StateStore, seed: [Country] = SeedList.standard,
    logger: Logger = Logger(level: .error) { _ in }, uptimeSeconds: Double = 0
) throws -> CommandHandler {
    try CommandHandler(store: store, seed: seed, logger: logger) {
        CommandHandler.StatusInfo(version: "t", uptimeSeconds: uptimeSeconds, endpoints: [])
    }
}

/// What one batch sent: its replies in the order they went out, each with its peer, and the
/// seqs of the events it published.
struct HandledBatch {
    var replies: [(peer: String, body: [UInt8])] = []
    var published: [UInt64] = []

    /// The replies, decoded.
    func decodedReplies() throws -> [Reply] {
        try replies.map { try Reply.decode(Data($0.body)) }
    }
}

extension CommandHandler {
    /// Handles `requests` (a peer's routing id, a body) as one batch, each from a REQ peer
    /// (its routing id and the empty delimiter).
    func handled(_ requests: [(peer: String, body: String)]) -> HandledBatch {
        let output = handle(
            requests.map {
                IncomingRequest(envelope: [Data($0.peer.utf8), Data()], body: [Array($0.body.utf8)])
            })
        var batch = HandledBatch()
        for item in output {
            switch item {
            case .reply(let envelope, let body):
                batch.replies.append((String(decoding: envelope[0], as: UTF8.self), body))
            case .publish(_, let seq, _):
                batch.published.append(seq)
            }
        }
        return batch
    }

    /// Handles `bodies` as one batch, each from a peer of its own (`p0`, `p1`, ...).
    func handled(bodies: [String]) -> HandledBatch {
        handled(bodies.enumerated().map { ("p\($0.offset)", $0.element) })
    }

    /// Handles `bodies` as one batch, each from a peer of its own: the replies in the order
    /// they went out, decoded, and the seqs published.
    func outcome(of bodies: [String]) throws -> (replies: [Reply], published: [UInt64]) {
        let batch = handled(bodies: bodies)
        return (try batch.decodedReplies(), batch.published)
    }

    /// Handles `requests` (a peer's routing id, a body) as one batch: the replies in the order
    /// they went out, each with its peer. Events are left out.
    func replies(to requests: [(peer: String, body: String)]) throws -> [(peer: String, reply: Reply)] {
        try handled(requests).replies.map { ($0.peer, try Reply.decode(Data($0.body))) }
    }

    /// Handles `bodies` as one batch, each from a peer of its own: the replies in the order
    /// they went out.
    func replies(to bodies: [String]) throws -> [Reply] {
        try handled(bodies: bodies).decodedReplies()
    }
}

extension EtcdCluster {
    /// A replica's store on `prefix`, as `serve --etcd` opens it, its waits scaled for a loaded
    /// machine.
    func replicaStore(
        prefix: String, seed: [Country], budget: Int = EtcdConfiguration.defaultRequestBudget
    ) throws -> EtcdStore {
        var configuration = EtcdConfiguration(endpoints: clientURLs, prefix: prefix, replicaName: "t")
        configuration.requestBudget = budget
        // A 4 MB value takes a while through the gateway on a loaded machine.
        configuration.requestTimeout = .seconds(10) * testSlowdown
        return try EtcdStore(
            configuration: configuration, seed: seed,
            health: ClusterHealth(quorumTimeout: .seconds(60) * testSlowdown),
            logger: Logger(level: .error) { _ in })
    }
}
