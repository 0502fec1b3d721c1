import CountriesCore
import CountriesStore
import Etcd
import Foundation
import SystemSupport

/// How a replica finds its store under the prefix before it serves, or seeds it when the
/// prefix is empty (docs/HA.md, "What is in etcd"): the first replica's seeding transaction
/// wins, and the others find its store. It refuses a prefix that holds something else or sits
/// inside another store's, and waits up to the configuration's start timeout for a quorum.
enum EtcdStoreOpening {
    /// What a replica found at its prefix.
    struct Found {
        /// The store's identity (the one that replaced it, after a restore of etcd).
        var identity: String
        /// Whether this replica seeded the prefix.
        var seeded: Bool
        /// The seed list the store keeps.
        var seed: [Country]
        /// The request-id generation, as read or seeded.
        var generation: RequestIDWindow.Generation
    }

    /// Finds the store at `layout`'s prefix, or seeds it with `seed`; `path` names it in errors.
    static func open(
        seed: [Country], client: EtcdClient, layout: EtcdLayout, configuration: EtcdConfiguration,
        path: String, logger: Logger
    ) throws(StoreOpenError) -> Found {
        let deadline = ContinuousClock.now + configuration.startTimeout
        var lastError: EtcdError?
        var found: (identity: String, seeded: Bool, generation: RequestIDWindow.Generation?)?
        while found == nil && ContinuousClock.now < deadline {
            var misplaced: String?
            do throws(EtcdError) {
                misplaced = try enclosingStore(client: client, layout: layout)
                if misplaced == nil {
                    switch try findOrSeed(client: client, layout: layout, seed: seed) {
                    case .found(let identity, let seeded, let generation):
                        found = (identity, seeded, generation)
                    case .occupied(let why): misplaced = why
                    }
                }
            } catch {
                if error.code == .rejected || error.code == .badResponse {
                    throw StoreOpenError(
                        .other, path: path, "etcd refused the store's first read or seed: \(error)")
                }
                if lastError == nil {
                    logger.log(
                        .warning,
                        "waiting for the etcd cluster at \(configuration.endpoints.joined(separator: ",")): \(error)"
                    )
                }
                lastError = error
                Thread.sleep(forTimeInterval: 0.2)
            }
            if let misplaced { throw StoreOpenError(.other, path: path, misplaced) }
        }
        guard let found else {
            throw StoreOpenError(
                .cannotOpen, path: path,
                "no quorum of the etcd cluster answered within \(configuration.startTimeout) (\(lastError.map { "\($0)" } ?? "no answer")); check that a majority of its members run and that --etcd names them"
            )
        }
        guard StoreIdentity.isWellFormed(found.identity) else {
            throw StoreOpenError(
                .corrupt, path: path,
                "the key \(layout.store) holds \(CountryName.quoted(found.identity)), not a store identity; the prefix belongs to something else: pass another --etcd-prefix"
            )
        }
        var opened = found.identity
        do {
            if case .replaced(let current, let why) = try StoreLineage.check(
                client: client, layout: layout, identity: opened), StoreIdentity.isWellFormed(current)
            {
                logger.log(
                    .warning,
                    "\(why): the store at \(configuration.prefix) is now \(current), a new store that goes on from the state etcd holds (subscribers start over); it was \(opened)"
                )
                opened = current
            }
        } catch {
            // The probe checks again once the replica runs.
            logger.log(.warning, "could not check etcd's history for a restore yet: \(error)")
        }
        let kept: [Country]
        do {
            kept = try keepSeed(seed, client: client, layout: layout, identity: opened)
        } catch {
            throw StoreOpenError(.cannotOpen, path: path, "reading the store's seed failed: \(error)")
        }
        let generation: RequestIDWindow.Generation
        if let seeded = found.generation {
            generation = seeded
        } else {
            // A store from before generations: its ids (in `requests/`) are generation 0.
            do {
                generation = try openGeneration(client: client, layout: layout)
            } catch {
                throw StoreOpenError(
                    .cannotOpen, path: path, "reading the request-id generation failed: \(error)")
            }
        }
        return Found(identity: opened, seeded: found.seeded, seed: kept, generation: generation)
    }

    /// Why the store cannot live at `layout`'s prefix: a store at a prefix that this one starts
    /// with, whose keys (its events, its ids) would hold this one's. Nil when there is none.
    private static func enclosingStore(client: EtcdClient, layout: EtcdLayout) throws(EtcdError) -> String? {
        let prefix = layout.prefix
        let ancestors = (1..<prefix.count).map { String(prefix.prefix($0)) + "store" }
        guard !ancestors.isEmpty else { return nil }
        let result: EtcdTxnResponse
        do {
            result = try client.txn(
                compare: [], success: ancestors.map { .range(EtcdRangeRequest(key: $0)) }, failure: [])
        } catch  where error.code == .rejected && error.message.contains("permission denied") {
            // An etcd user whose role grants exactly this prefix (docs/SECURITY.md) cannot look
            // outside it; then the roles keep services apart, as only a role that spans both
            // prefixes could reach the other's keys.
            return nil
        }
        for (key, outcome) in zip(ancestors, result.results) {
            guard case .range(let range) = outcome, let value = range.kvs.first?.value,
                StoreIdentity.isWellFormed(String(decoding: value, as: UTF8.self))
            else { continue }
            return
                "a countries store lives at the prefix \(key.dropLast("store".count)) (its key \(key)), and \(prefix) is inside it: prefixes may not nest, or each service reads and deletes the other's keys; pass another --etcd-prefix"
        }
        return nil
    }

    /// What a replica finds at its prefix.
    private enum Finding {
        /// The store (found, or seeded by this replica), with its first generation when seeded.
        case found(identity: String, seeded: Bool, generation: RequestIDWindow.Generation?)
        /// Keys that are not a store's: why it may not seed there.
        case occupied(String)
    }

    /// The store at the prefix, or a new one seeded there when the prefix is empty (with its
    /// first request-id generation); the keys that keep it from seeding, when there are some.
    private static func findOrSeed(client: EtcdClient, layout: EtcdLayout, seed: [Country]) throws(EtcdError)
        -> Finding
    {
        let existing = try client.range(EtcdRangeRequest(key: layout.store))
        if let value = existing.kvs.first?.value {
            return .found(identity: String(decoding: value, as: UTF8.self), seeded: false, generation: nil)
        }
        // Only an empty prefix is seeded: keys without a `store` are something else's, or a
        // store nested inside this prefix, whose keys this one's ranges would read and delete.
        // A seeder's chunks (another replica seeding now, or one that died half way) are not
        // another store's keys: the seeding transaction deletes all but its own.
        let seedChunks = layout.seedBlob.chunksPrefix
        let before = try client.range(
            EtcdRangeRequest(key: layout.prefix, rangeEnd: seedChunks, limit: 1, keysOnly: true))
        let after = try client.range(
            EtcdRangeRequest(
                key: EtcdRangeRequest.prefixEnd(seedChunks),
                rangeEnd: EtcdRangeRequest.prefixEnd(layout.prefix),
                limit: 1, keysOnly: true))
        if let key = (before.kvs.first ?? after.kvs.first)?.key {
            // Another replica may have seeded it since the first read (its keys come together).
            if let value = try client.range(EtcdRangeRequest(key: layout.store)).kvs.first?.value {
                return .found(
                    identity: String(decoding: value, as: UTF8.self), seeded: false, generation: nil)
            }
            return .occupied(
                "the prefix \(layout.prefix) holds keys but no store (\(key), for one): they belong to something else, or to a service on a prefix inside this one; prefixes may not nest: pass another --etcd-prefix"
            )
        }
        let identity = StoreIdentity.make()
        let seedEvent = Event(seq: 0, kind: .reset(CountriesState(countries: seed).rows), store: identity)
        let generation = RequestIDWindow.Generation(
            number: 1, startedMilliseconds: RequestIDWindow.nowMilliseconds)
        // The seed goes in chunks first, under a token of this replica's; the seeding
        // transaction points at them. Until the first snapshot, the seed is the snapshot.
        let token = StoreIdentity.make()
        let pointer = try layout.seedBlob.writeChunks(
            seedEvent.encoded(), token: token, seq: 0, client: client)
        let result = try client.txn(
            compare: [.createRevision(layout.store, equals: 0)],
            success: [
                .put(layout.store, Data(identity.utf8)),
                .put(layout.seq, Data("0".utf8)),
                .put(layout.idsGeneration, generation.encoded),
            ] + layout.seedBlob.switchOperations(to: pointer),
            failure: [.range(EtcdRangeRequest(key: layout.store))])
        if result.succeeded { return .found(identity: identity, seeded: true, generation: generation) }
        try layout.seedBlob.discard(token: token, client: client)
        guard case .range(let other)? = result.results.first, let value = other.kvs.first?.value else {
            throw EtcdError(
                .badResponse, "the seed transaction failed but the store key is not there",
                endpoint: client.currentEndpoint)
        }
        return .found(identity: String(decoding: value, as: UTF8.self), seeded: false, generation: nil)
    }

    /// The store's seed list; a store from before the seed was kept gets this replica's,
    /// written once by whichever replica comes first.
    private static func keepSeed(_ seed: [Country], client: EtcdClient, layout: EtcdLayout, identity: String)
        throws(StateStoreError) -> [Country]
    {
        let blob = layout.seedBlob
        var stored = try EtcdStore.readBlob(blob, client: client).stored
        if stored == .absent {
            let mine = Event(seq: 0, kind: .reset(CountriesState(countries: seed).rows), store: identity)
            do {
                if try blob.replace(expected: 0, with: mine.encoded(), seq: 0, client: client) { return seed }
            } catch {
                throw EtcdStore.storeError(error, during: "read")
            }
            stored = try EtcdStore.readBlob(blob, client: client).stored
        }
        if case .chunked(_, let pointer, let modRevision) = stored {
            // A seeder that died between its chunks and its transaction left them: nobody else
            // deletes them once the store exists. One seeding now loses (the store exists).
            // Only while the pointer is the one read: a replica paused here while the prefix
            // was wiped and seeded again deleted the new seed's chunks.
            do {
                _ = try client.txn(
                    compare: [.modRevision(blob.pointerKey, equals: modRevision)],
                    success: Array(blob.switchOperations(to: pointer).dropFirst()), failure: [])
            } catch {
                throw EtcdStore.storeError(error, during: "read")
            }
        }
        guard let value = stored.value, let event = try? Event.decode(value),
            case .reset(let rows) = event.kind
        else {
            throw StateStoreError("the key \(layout.seed) holds no seed list")
        }
        return rows.map { Country(name: $0.name, visited: $0.visited) }
    }

    /// The request-id generation of an existing store; a store from before generations gets
    /// generation 0 (its `requests/` keys), written once by whichever replica comes first.
    private static func openGeneration(client: EtcdClient, layout: EtcdLayout) throws(StateStoreError)
        -> RequestIDWindow.Generation
    {
        let legacy = RequestIDWindow.Generation(
            number: 0, startedMilliseconds: RequestIDWindow.nowMilliseconds)
        let result: EtcdTxnResponse
        do {
            result = try client.txn(
                compare: [.createRevision(layout.idsGeneration, equals: 0)],
                success: [.put(layout.idsGeneration, legacy.encoded)],
                failure: [.range(EtcdRangeRequest(key: layout.idsGeneration))])
        } catch {
            throw EtcdStore.storeError(error, during: "read")
        }
        if result.succeeded { return legacy }
        return try layout.generation(in: result.results.first)
    }

}
