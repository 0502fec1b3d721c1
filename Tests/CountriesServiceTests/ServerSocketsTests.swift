import CountriesCore
import Foundation
import SystemSupport
import TestSupport
import Testing
import ZeroMQ

@testable import CountriesRelay
@testable import CountriesService
@testable import CountriesSockets

/// What the service and the relay share (``ServerSockets``): a start that fails gives back all it
/// took, and SIGHUP reports a reload that failed, in the relay as in the service.
@Suite("Server sockets: cleanup on a failed start, SIGHUP in the relay")
struct ServerSocketsTests {
    /// Threads and open file descriptors of this process: a live libzmq context holds two
    /// threads (its reaper and I/O thread) and a few eventfds and an epoll descriptor.
    private func threadsAndDescriptors() -> (threads: Int, descriptors: Int) {
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task"))?.count ?? 0
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd"))?.count ?? 0
        return (threads, descriptors)
    }

    @Test(
        "A service whose store cannot be opened, after its sockets are bound, leaves no context behind",
        .serialized, arguments: [false, true])
    func failedStartReleasesEverything(curve: Bool) throws {
        let directory = "/tmp/css-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Not a database: the store fails to open, which happens after the binds.
        try "not a countries store, not even SQLite".write(
            toFile: "\(directory)/countries.db", atomically: true, encoding: .utf8)
        let keys = try Curve.generateKeyPair()
        try FileManager.default.createDirectory(atPath: "\(directory)/rw", withIntermediateDirectories: true)
        var configuration = ServiceConfiguration()
        configuration.commandEndpoint = "ipc://\(directory)/commands"
        configuration.eventsEndpoint = "ipc://\(directory)/events"
        configuration.storePath = "\(directory)/countries.db"
        if curve {
            configuration.security = ServerSecurity(
                certificate: CurveCertificate(publicKey: keys.publicKey, secretKey: keys.secretKey),
                readWriteDirectories: ["\(directory)/rw"])
        }
        let logger = Logger(level: .error) { _ in }
        let attempts = 20
        // Other suites run beside this one, open and close sockets, files and threads of their
        // own (etcd clients, child processes), so one round's growth can be theirs. A leak adds
        // two threads and several descriptors per attempt in every round; noise does not keep
        // that up for three rounds.
        var growth: [(threads: Int, descriptors: Int)] = []
        for _ in 0..<3 {
            let before = threadsAndDescriptors()
            for _ in 0..<attempts {
                let error = #expect(throws: ServiceError.self) {
                    _ = try StateService(configuration: configuration, logger: logger)
                }
                #expect(error?.code == .store)
                // The endpoints are free again: nothing listens on them (libzmq's reaper unlinks
                // an ipc file a moment after the close, later under load).
                #expect(
                    eventually(within: .seconds(2)) {
                        !ServerSockets.isLiveUnixSocket(configuration.commandEndpoint)
                    })
            }
            let after = threadsAndDescriptors()
            growth.append((after.threads - before.threads, after.descriptors - before.descriptors))
        }
        #expect(
            growth.map(\.threads).min()! < attempts,
            "more threads after each round of \(attempts) failed starts: \(growth.map(\.threads))")
        #expect(
            growth.map(\.descriptors).min()! < attempts,
            "more descriptors after each round of \(attempts) failed starts: \(growth.map(\.descriptors))")
    }

    @Test("A close removes the ipc socket files it bound, and not one another process bound since")
    func closeRemovesItsOwnSocketFilesOnly() throws {
        let directory = try ScratchDirectory(prefix: "css-files")
        defer { directory.remove() }
        let sockets = try ServerSockets(security: nil, logger: Logger(level: .error) { _ in })
        defer { sockets.close() }
        let ours = directory.ipc("ours")
        let taken = directory.ipc("taken")
        for endpoint in [ours, taken] {
            _ = try sockets.bind(try sockets.makeSocket(.router), to: endpoint, role: "test")
        }
        // Another process's socket at the second path since (libzmq unlinks the file before it
        // binds, as after a crash).
        let other = try Context()
        defer { other.terminate() }
        let later = try other.makeSocket(.router)
        defer { later.close() }
        try later.setOption(.linger, 0)
        try later.bind(taken)
        sockets.close()
        #expect(!FileManager.default.fileExists(atPath: directory.file("ours")), "left behind")
        #expect(FileManager.default.fileExists(atPath: directory.file("taken")), "another's file removed")
        #expect(ServerSockets.isLiveUnixSocket(taken))
    }

    @Test(
        "The relay says when a SIGHUP reload fails, and keeps the old allow-lists",
        .enabled(if: Curve.isAvailable))
    func relayReportsAFailedReload() throws {
        let directory = "/tmp/csr-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: "\(directory)/rw", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try Curve.generateKeyPair()
        var configuration = RelayConfiguration(
            upstream: "ipc://\(directory)/upstream", downstream: "ipc://\(directory)/downstream")
        configuration.security = ServerSecurity(
            certificate: CurveCertificate(publicKey: server.publicKey, secretKey: server.secretKey),
            readWriteDirectories: ["\(directory)/rw"])
        let log = Box<[String]>([])
        let logger = Logger(level: .info) { line in log.value.append(line) }
        let stop = try PipeStopSource()
        let done = DispatchSemaphore(value: 0)
        let failure = Box<ServiceError?>(nil)
        let relay = configuration
        let thread = Thread {
            defer { done.signal() }
            do throws(ServiceError) {
                try Relay(relay, logger: logger).run(stopOn: stop)
            } catch {
                failure.value = error
            }
        }
        thread.start()
        defer {
            stop.stop()
            #expect(done.wait(timeout: .now() + patience.timeInterval) == .success, "the relay did not stop")
        }
        func logged(_ text: String) -> Bool {
            let deadline = ContinuousClock.now + patience
            while ContinuousClock.now < deadline {
                if log.value.contains(where: { $0.contains(text) }) { return true }
                Thread.sleep(forTimeInterval: 0.02)
            }
            return false
        }
        #expect(logged("relaying "), "\(log.value) \(String(describing: failure.value))")
        // The directory goes: the reload cannot read it.
        try FileManager.default.removeItem(atPath: "\(directory)/rw")
        stop.signal(SIGHUP)
        #expect(logged("keeping the previous allow-lists"), "\(log.value)")
    }

    @Test("A second relay on a live ipc endpoint is refused with advice, as a second service is")
    func relayRefusesALiveIPCEndpoint() throws {
        let directory = "/tmp/csr-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let configuration = RelayConfiguration(
            upstream: "ipc://\(directory)/upstream", downstream: "ipc://\(directory)/downstream")
        let logger = Logger(level: .error) { _ in }
        let first = try Relay(configuration, logger: logger)
        #expect(first.boundEndpoint == configuration.downstream)
        let error = #expect(throws: ServiceError.self) { _ = try Relay(configuration, logger: logger) }
        #expect(error?.code == .bind)
        #expect(error?.message.contains("Address already in use") == true)
        // The first still holds it.
        #expect(ServerSockets.isLiveUnixSocket(configuration.downstream))
    }
}
