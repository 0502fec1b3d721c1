import CountriesCore
import CountriesReplication
import CountriesStore
import Foundation
@preconcurrency import Glibc
import SystemSupport

/// Chooses and opens the service's ``StateStore`` from its configuration: ``EtcdStore`` for a
/// replicated service, SQLite on a file (or SQLite's own `:memory:`), or ``MemoryStore``
/// without SQLite. A new kind of store is one more
/// case here.
enum StoreOpener {
    /// Opens the store `configuration` names, logging what a person should know about it.
    static func open(_ configuration: ServiceConfiguration, health: ClusterHealth?, logger: Logger)
        throws(StoreOpenError) -> any StateStore
    {
        if let etcd = configuration.etcd {
            let store = try EtcdStore(
                configuration: etcd, seed: configuration.seed,
                health: health ?? ClusterHealth(quorumTimeout: etcd.quorumTimeout), logger: logger)
            logger.log(
                .info,
                "store \(store.path): \(store.seeded ? "seeded the empty prefix" : "found") (\(store.identity))"
            )
            if let mismatch = store.seedMismatch { logger.log(.warning, mismatch) }
            return store
        }
        guard let path = configuration.storePath else { return MemoryStore(seed: configuration.seed) }
        // ":memory:" is SQLite's own in-memory database: the same code as on disk.
        let store = try openPrivate(path, seed: configuration.seed, logger: logger)
        if let note = store.identityNote {
            logger.log(.info, "store \(path): \(note) (\(store.identity))")
        }
        return store
    }

    /// Opens the SQLite store with owner-only files: a new one is created 0600 (SQLite gives its
    /// `-wal` and `-shm` the database's mode), an existing looser one is tightened and logged.
    private static func openPrivate(_ path: String, seed: [Country], logger: Logger) throws(StoreOpenError)
        -> SQLiteStore
    {
        guard path != ":memory:" else { return try SQLiteStore(path: path, seed: seed) }
        let created = PrivateFiles.createIfMissing(path)
        let store: SQLiteStore
        do {
            store = try SQLiteStore(path: path, seed: seed)
        } catch {
            // Leave nothing behind for a store that never opened.
            if created, PrivateFiles.size(of: path) == 0 { unlink(path) }
            throw error
        }
        for file in [path, path + "-wal", path + "-shm"] {
            if let old = PrivateFiles.tighten(file) {
                logger.log(
                    .warning,
                    "\(file) was mode \(PrivateFiles.octal(old)), open to group or others; made it owner-only (\(PrivateFiles.octal(old & ~PrivateFiles.sharedBits)))"
                )
            }
        }
        return store
    }
}
