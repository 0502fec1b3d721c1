import SystemSupport
import Testing

/// The store's files, as the service makes them: owner-only (docs/SECURITY.md, "File modes").
@Suite struct StoreFileModesTests {
    @Test func aNewStoreOpenedByTheServiceIsOwnerOnly() throws {
        let service = try ServiceHarness()
        defer { service.shutdown() }
        for file in [service.storePath, service.storePath + "-wal", service.storePath + "-shm"] {
            #expect(PrivateFiles.mode(of: file) == 0o600, "\(file)")
        }
    }
}
