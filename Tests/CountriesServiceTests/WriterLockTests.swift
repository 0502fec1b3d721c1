import Foundation
import Testing

@testable import CountriesService
@testable import CountriesSockets

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// One writer per store: a `StateService` on the store a running one holds (through
/// `WriterLock`, over SystemSupport's `LockFile`) is refused, naming the holder.
@Suite struct WriterLockTests {
    @Test func aSecondServiceOnTheSameStoreIsRefusedNamingTheFirst() throws {
        let first = try ServiceHarness()
        defer { first.shutdown() }
        let storePath = first.storePath
        #expect(throws: ServiceError.self) {
            _ = try ServiceHarness { configuration in
                configuration.storePath = storePath
            }
        }
        do {
            _ = try ServiceHarness { $0.storePath = storePath }
        } catch let error as ServiceError {
            #expect(error.code == .storeInUse)
            #expect(error.message.contains("pid \(getpid())"), "\(error.message)")
            #expect(error.message.contains(first.commandEndpoint), "\(error.message)")
            #expect(error.message.contains(first.eventsEndpoint), "\(error.message)")
        }
        // After a stop the store is free again, and a restart takes it.
        try first.restart()
    }
}
