import CountriesCore
import Foundation
import SQLite
import SystemSupport
import Testing

@testable import CountriesService
@testable import CountriesStore

/// Store identity in the SQLite file and in memory (docs/PROTOCOL.md, "Store identity").
@Suite struct StoreIdentityTests {
    private let seed = SeedList.standard

    private func scratch() throws -> String {
        let directory = "/tmp/cst-identity-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test func aStoreKeepsItsIdentityAcrossReopensAndResets() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = "\(directory)/countries.db"
        let first = try SQLiteStore(path: path, seed: seed)
        #expect(StoreIdentity.isWellFormed(first.identity))
        #expect(first.identityNote != nil, "a new store says it got an identity")
        var state = try first.loadState()
        var batch = StoreBatch()
        for change in [Change.toggle(.index(2), ifSeq: nil), .reset] {
            if let event = try state.apply(change, seed: seed).event { batch.events.append(event) }
        }
        try first.commit(batch)
        let again = try SQLiteStore(path: path, seed: seed)
        #expect(again.identity == first.identity)
        #expect(again.identityNote == nil)
        #expect(try again.loadState().seq == 2)
    }

    @Test func aCopyOfTheFileGetsANewIdentity() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = "\(directory)/countries.db"
        let original = try SQLiteStore(path: path, seed: seed).identity
        // A backup restored as a new file (what `cp` to a new name or a restore tool makes).
        try FileManager.default.copyItem(atPath: path, toPath: "\(directory)/restored.db")
        let restored = try SQLiteStore(path: "\(directory)/restored.db", seed: seed)
        #expect(restored.identity != original)
        #expect(restored.identityNote?.contains("copied") == true)
        #expect(try SQLiteStore(path: "\(directory)/restored.db", seed: seed).identity == restored.identity)
        #expect(try SQLiteStore(path: path, seed: seed).identity == original)
    }

    /// A copy made by `countries backup` is marked: it gets a new identity even at the inode the
    /// identity was given in (a backup copied over the store's file in place, or an inode number
    /// used again), once; the new identity then holds.
    @Test func aBackupGetsANewIdentityEvenAtTheSameInode() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = "\(directory)/countries.db"
        let original = try SQLiteStore(path: path, seed: seed).identity
        let database = try Database(path: path, mode: .readWrite)
        try database.prepare("INSERT INTO meta(key, value) VALUES (?1, 1)").run([.text(StoreBackup.metaKey)])
        database.close()
        let restored = try SQLiteStore(path: path, seed: seed)
        #expect(restored.identity != original)
        #expect(restored.identityNote?.contains("countries backup") == true, "\(restored.identityNote ?? "")")
        let again = try SQLiteStore(path: path, seed: seed)
        #expect(again.identity == restored.identity)
        #expect(again.identityNote == nil)
    }

    /// The copy `StoreBackup` writes: one file, mode 0600, the store's state, and a new identity
    /// when opened.
    @Test func aBackupCopyIsPrivateHoldsTheStateAndIsANewStore() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = "\(directory)/countries.db"
        let store = try SQLiteStore(path: path, seed: seed)
        var state = try store.loadState()
        var batch = StoreBatch()
        if let event = try state.apply(.toggle(.index(2), ifSeq: nil), seed: seed).event {
            batch.events.append(event)
        }
        try store.commit(batch)
        let copy = try StoreBackup.take(store: path, to: "\(directory)/copy.db", force: false)
        #expect(copy.seq == 1)
        #expect(copy.identity == store.identity)
        #expect(PrivateFiles.mode(of: "\(directory)/copy.db") == 0o600)
        #expect(!FileManager.default.fileExists(atPath: "\(directory)/copy.db-wal"))
        let restored = try SQLiteStore(path: "\(directory)/copy.db", seed: seed)
        #expect(restored.identity != store.identity)
        #expect(try restored.loadState() == state)
        let entries = try FileManager.default.contentsOfDirectory(atPath: directory).filter {
            $0.hasPrefix(".")
        }
        #expect(entries.isEmpty, "left behind: \(entries)")
    }

    /// A copy on another file system may get the same inode number: the device is kept beside
    /// it. A store from before devices were kept (none recorded) keeps its identity and records
    /// its device; one whose device differs is a copy.
    @Test func theDeviceIsPartOfTheFilesIdentity() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = "\(directory)/countries.db"
        let original = try SQLiteStore(path: path, seed: seed).identity
        let database = try Database(path: path, mode: .readWrite)
        try database.execute("UPDATE identity SET device = NULL")
        let upgraded = try SQLiteStore(path: path, seed: seed)
        #expect(upgraded.identity == original && upgraded.identityNote == nil, "no device yet: kept")
        let recorded = try database.prepare("SELECT device FROM identity").rows().first?.first
        #expect(recorded != nil && recorded != .null, "the device is recorded")
        try database.execute("UPDATE identity SET device = device + 1")
        let moved = try SQLiteStore(path: path, seed: seed)
        #expect(moved.identity != original, "same inode, another device: a copy")
        #expect(moved.identityNote?.contains("copied") == true)
    }

    @Test func everyInMemoryStoreIsANewStore() {
        #expect(MemoryStore(seed: seed).identity != MemoryStore(seed: seed).identity)
        #expect(StoreIdentity.isWellFormed(MemoryStore(seed: seed).identity))
    }

    @Test func identitiesAreThirtyTwoHexDigits() {
        var generator = SystemRandomNumberGenerator()
        let ids = (0..<1_000).map { _ in StoreIdentity.make(using: &generator) }
        #expect(Set(ids).count == 1_000)
        #expect(ids.allSatisfy(StoreIdentity.isWellFormed))
        #expect(!StoreIdentity.isWellFormed("0123456789ABCDEF0123456789abcdef"))
        #expect(!StoreIdentity.isWellFormed("short"))
    }
}
