import Foundation
import TestSupport
import Testing

@testable import CountriesService

/// ``StoreFilePlace`` finds a store's database, log or index moved, replaced or deleted, and
/// asks for a checkpoint only when the database itself is still in place.
@Suite struct StoreFilePlaceTests {
    private func store(_ name: String) throws -> (ScratchDirectory, String) {
        let directory = try ScratchDirectory(prefix: name)
        let path = directory.file("countries.db")
        for file in [path, path + "-wal", path + "-shm"] {
            #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
        }
        return (directory, path)
    }

    /// `place`'s answer, with each checkpoint it asked for (all succeeding) counted.
    private func check(_ place: inout StoreFilePlace, counting checkpoints: inout Int) -> String? {
        place.check {
            checkpoints += 1
            return nil
        }
    }

    @Test func filesInPlaceAreNotLost() throws {
        let (directory, path) = try store("place-kept")
        defer { directory.remove() }
        var place = StoreFilePlace(path: path)
        var checkpoints = 0
        // Written to, the files are the same files.
        try Data("more".utf8).write(to: URL(fileURLWithPath: path + "-wal"))
        #expect(check(&place, counting: &checkpoints) == nil)
        #expect(checkpoints == 0)
        #expect(place.lost == nil)
    }

    @Test func aDatabaseRenamedIsLostWithoutACheckpoint() throws {
        let (directory, path) = try store("place-renamed")
        defer { directory.remove() }
        var place = StoreFilePlace(path: path)
        #expect(rename(path, directory.file("elsewhere.db")) == 0)
        var checkpoints = 0
        let lost = check(&place, counting: &checkpoints)
        #expect(lost?.contains("the store file \(path) was moved, replaced or deleted") == true)
        #expect(checkpoints == 0, "SQLite checkpoints no database that moved")
        // Put back, it stays lost: the service wrote nothing it can vouch for meanwhile.
        #expect(rename(directory.file("elsewhere.db"), path) == 0)
        #expect(place.check { nil } == lost)
    }

    @Test func aDatabaseReplacedByALinkIsLost() throws {
        let (directory, path) = try store("place-link")
        defer { directory.remove() }
        var place = StoreFilePlace(path: path)
        #expect(FileManager.default.createFile(atPath: directory.file("other.db"), contents: Data()))
        #expect(unlink(path) == 0)
        #expect(symlink(directory.file("other.db"), path) == 0)
        #expect(place.check { nil }?.contains("was moved, replaced or deleted") == true)
    }

    @Test(arguments: ["-wal", "-shm"])
    func aLogOrIndexDeletedIsCheckpointedIntoTheDatabaseAndLost(suffix: String) throws {
        let (directory, path) = try store("place\(suffix)")
        defer { directory.remove() }
        var place = StoreFilePlace(path: path)
        #expect(unlink(path + suffix) == 0)
        var checkpoints = 0
        let lost = check(&place, counting: &checkpoints)
        #expect(checkpoints == 1)
        #expect(lost?.hasPrefix("\(path)\(suffix) was deleted or replaced") == true)
        #expect(lost?.contains("were copied into \(path)") == true)
        // Asked again, it says the same and checkpoints no more.
        #expect(check(&place, counting: &checkpoints) == lost)
        #expect(checkpoints == 1)
        #expect(place.lost == lost, "kept, for the loop to read without looking")
    }

    @Test func aCheckpointThatFailsIsSaid() throws {
        let (directory, path) = try store("place-failed")
        defer { directory.remove() }
        var place = StoreFilePlace(path: path)
        #expect(unlink(path + "-wal") == 0)
        let lost = place.check { "database or disk is full" }
        #expect(lost?.contains("could not be copied into \(path) (database or disk is full)") == true)
    }

    /// A store reached through a link keeps its log beside the file the link resolves to.
    @Test func theLogOfAStoreReachedThroughALinkIsTheResolvedFiles() throws {
        let (directory, path) = try store("place-through-link")
        defer { directory.remove() }
        let link = directory.file("link.db")
        #expect(symlink(path, link) == 0)
        var place = StoreFilePlace(path: link)
        #expect(place.check { nil } == nil)
        #expect(unlink(path + "-wal") == 0)
        #expect(place.check { nil }?.hasPrefix("\(path)-wal was deleted or replaced") == true)
    }

    @Test func aLogMadeAfterTheStoreOpenedIsTakenAsItsOwn() throws {
        let (directory, path) = try store("place-later")
        defer { directory.remove() }
        #expect(unlink(path + "-wal") == 0)
        var place = StoreFilePlace(path: path)
        #expect(FileManager.default.createFile(atPath: path + "-wal", contents: Data()))
        #expect(place.check { nil } == nil)
        #expect(unlink(path + "-wal") == 0)
        #expect(place.check { nil } != nil)
    }
}
