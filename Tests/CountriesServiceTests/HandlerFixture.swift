import CountriesCore
import CountriesStore
import Foundation
import SystemSupport
import TestSupport

@testable import CountriesReplication
@testable import CountriesService

/// A handler on `store` as the service makes one, for tests that hand it batches without
/// sockets; its `status` names no endpoint.
func makeHandler(on store: any StateStore, seed: [Country] = SeedList.standard) throws -> CommandHandler {
    try CommandHandler(store: store, seed: seed, logger: Logger(level: .error) { _ in }) {
        CommandHandler.StatusInfo(version: "t", uptimeSeconds: 0, endpoints: [])
    }
}

extension CommandHandler {
    /// Handles `requests` (a peer's routing id, a body) as one batch: the replies in the order
    /// they went out, each with its peer. Events are left out.
    func replies(to requests: [(peer: String, body: String)]) throws -> [(peer: String, reply: Reply)] {
        let output = handle(
            requests.map {
                IncomingRequest(envelope: [Data($0.peer.utf8), Data()], body: [Array($0.body.utf8)])
            })
        var replies: [(peer: String, reply: Reply)] = []
        for case .reply(let envelope, let body) in output {
            replies.append((String(decoding: envelope[0], as: UTF8.self), try Reply.decode(Data(body))))
        }
        return replies
    }

    /// Handles `bodies` as one batch, each from a peer of its own: the replies in the order
    /// they went out.
    func replies(to bodies: [String]) throws -> [Reply] {
        try replies(to: bodies.enumerated().map { ("p\($0.offset)", $0.element) }).map(\.reply)
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
