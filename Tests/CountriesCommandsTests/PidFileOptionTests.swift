import ArgumentParsing
import Testing

@testable import CountriesCommands

/// `serve --pidfile`: a path that is one of the store's files is a usage error before anything
/// is written (``PidFile`` itself refuses an existing store by its contents, at any path).
@Suite struct PidFileOptionTests {
    static func pidFile(_ arguments: [String]) throws -> String? {
        let command = try RegistryTests.registry.make(RegistryTests.parsed(["serve"] + arguments))
        return try #require(command as? ServeCommand).command.pidFilePath()
    }

    @Test func aPathOfItsOwnIsTaken() throws {
        #expect(try Self.pidFile([]) == nil)
        #expect(try Self.pidFile(["--db", "a.db", "--pidfile", "a.pid"]) == "a.pid")
        #expect(try Self.pidFile(["--pidfile", "/run/countries.pid"]) == "/run/countries.pid")
        // No store file to collide with.
        #expect(try Self.pidFile(["--in-memory", "--pidfile", "countries.db"]) == "countries.db")
    }

    @Test(arguments: [
        ["--db", "a.db", "--pidfile", "a.db"], ["--db", "a.db", "--pidfile", "./a.db"],
        ["--db", "/tmp/x/a.db", "--pidfile", "/tmp/x/../x/a.db-wal"],
        ["--db", "a.db", "--pidfile", "a.db-shm"],
        ["--db", "a.db", "--pidfile", "a.db.lock"], ["--pidfile", "countries.db"],
    ])
    func theStoresFilesAreAUsageError(_ arguments: [String]) throws {
        #expect {
            try Self.pidFile(arguments)
        } throws: { error in
            guard let error = error as? UsageError else { return false }
            return error.message.hasPrefix("--pidfile ")
                && error.message.contains("is one of the store's files (--db ")
                && error.message.hasSuffix("give the pid file a path of its own, like countries.pid")
        }
    }
}
