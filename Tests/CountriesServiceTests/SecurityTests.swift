import CountriesClient
import CountriesCore
import Foundation
import Testing
import ZeroMQ

@testable import CountriesService
@testable import CountriesSockets

/// Client keys and the allow-list directories of a CURVE service, in a private directory.
private final class SecurityKeyring {
    let directory: String
    let server: CurveKeyPair
    let readWrite: CurveKeyPair
    let readOnly: CurveKeyPair
    let unknown: CurveKeyPair

    var readWriteDirectory: String { directory + "/rw" }
    var readOnlyDirectory: String { directory + "/ro" }

    init() throws {
        directory = "/tmp/csk-\(UUID().uuidString.prefix(8))"
        for sub in ["rw", "ro"] {
            try FileManager.default.createDirectory(
                atPath: "\(directory)/\(sub)", withIntermediateDirectories: true)
        }
        server = try Curve.generateKeyPair()
        readWrite = try Curve.generateKeyPair()
        readOnly = try Curve.generateKeyPair()
        unknown = try Curve.generateKeyPair()
        try CurveCertificate(publicKey: readWrite.publicKey).publicText(name: "writer")
            .write(toFile: "\(readWriteDirectory)/writer.pub", atomically: true, encoding: .utf8)
        try CurveCertificate(publicKey: readOnly.publicKey).publicText(name: "reader")
            .write(toFile: "\(readOnlyDirectory)/reader.pub", atomically: true, encoding: .utf8)
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    var serverSecurity: ServerSecurity {
        ServerSecurity(
            certificate: CurveCertificate(publicKey: server.publicKey, secretKey: server.secretKey),
            readWriteDirectories: [readWriteDirectory], readOnlyDirectories: [readOnlyDirectory])
    }

    /// The keys a stranger connects with (nil: plaintext).
    func security(for stranger: SecurityServiceTests.Stranger) -> ClientSecurity? {
        switch stranger {
        case .unknownKey: client(unknown)
        case .plaintext: nil
        case .wrongServerKey: client(readWrite, serverKey: unknown.publicKey)
        }
    }

    /// What the service logs about the stranger.
    func logLine(for stranger: SecurityServiceTests.Stranger, endpoint: String) -> String {
        switch stranger {
        case .unknownKey: "refused connection: key \(unknown.publicKey)"
        case .plaintext, .wrongServerKey:
            "refused connection: a client on \(endpoint) failed the CURVE handshake"
        }
    }

    func client(_ pair: CurveKeyPair, serverKey: String? = nil) -> ClientSecurity {
        ClientSecurity(
            publicKey: pair.publicKey, secretKey: pair.secretKey, serverKey: serverKey ?? server.publicKey)
    }
}

extension ServiceHarness {
    /// A command client with CURVE keys (or plaintext with nil).
    fileprivate func securityClient(_ security: ClientSecurity?, timeout: Duration = patience)
        -> CommandClient
    {
        CommandClient(
            context: context, endpoint: commandEndpoint, timeout: timeout, tries: 1, security: security)
    }

    /// A SUB socket with CURVE keys (or plaintext), subscribed to everything, not yet waited on.
    fileprivate func securitySubscriber(_ security: ClientSecurity?) throws -> Socket {
        let socket = try context.makeSocket(.sub)
        try socket.setOption(.linger, 0)
        try socket.setOption(.receiveTimeout, 100)
        if let security { try security.apply(to: socket) }
        try socket.subscribe("")
        try socket.connect(eventsEndpoint)
        return socket
    }

    /// Every line the service logged so far (warnings and above), for a failure's message.
    fileprivate var loggedLines: [String] { log.value }

    /// Whether a logged line contains `text`, waiting (bounded) for it to appear.
    fileprivate func securityLogContains(_ text: String, within limit: Duration = patience) -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if log.value.contains(where: { $0.contains(text) }) { return true }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return false
    }
}

@Suite("Security: allow-lists, protected mode")
struct SecurityUnitTests {
    @Test("AllowList reads .pub files by access, skips what is not a key, and read-write wins")
    func allowListLoads() throws {
        let keys = try SecurityKeyring()
        let both = try Curve.generateKeyPair()
        for sub in ["rw", "ro"] {
            try both.publicKey.write(
                toFile: "\(keys.directory)/\(sub)/both.pub", atomically: true, encoding: .utf8)
        }
        try "not a key".write(toFile: "\(keys.readOnlyDirectory)/junk.pub", atomically: true, encoding: .utf8)
        // Only .pub files count: a secret file or a note beside them is not read.
        try keys.unknown.publicKey.write(
            toFile: "\(keys.readWriteDirectory)/notes.txt", atomically: true, encoding: .utf8)

        let list = try AllowList.load(
            readWrite: [keys.readWriteDirectory], readOnly: [keys.readOnlyDirectory])
        #expect(list.keys[keys.readWrite.publicKey] == .readWrite)
        #expect(list.keys[keys.readOnly.publicKey] == .readOnly)
        #expect(list.keys[both.publicKey] == .readWrite)
        #expect(list.keys[keys.unknown.publicKey] == nil)
        #expect(list.keys.count == 3)
        #expect(list.readWriteCount == 2 && list.readOnlyCount == 1)
        #expect(list.skipped.count == 1)
        #expect(list.skipped.first?.hasPrefix("\(keys.readOnlyDirectory)/junk.pub") == true)
    }

    @Test("A missing allow-list directory is a security error that names it")
    func allowListMissingDirectory() throws {
        let missing = "/tmp/csk-missing-\(UUID().uuidString.prefix(8))"
        let error = #expect(throws: ServiceError.self) {
            try AllowList.load(readWrite: [missing], readOnly: [])
        }
        #expect(error?.code == .security)
        #expect(error?.message.contains(missing) == true)
    }

    @Test("Protected mode refuses a plaintext non-loopback endpoint unless --insecure or CURVE")
    func protectedMode() throws {
        for (command, events) in [
            ("tcp://0.0.0.0:5555", "tcp://127.0.0.1:5556"), ("tcp://127.0.0.1:5555", "tcp://*:5556"),
        ] {
            var configuration = ServiceConfiguration()
            configuration.commandEndpoint = command
            configuration.eventsEndpoint = events
            let error = #expect(throws: ServiceError.self) { try configuration.checkExposure() }
            #expect(error?.code == .unsafeEndpoint)
            let exposed = Endpoint.isLoopbackOrLocal(command) ? events : command
            #expect(error?.message.contains(exposed) == true)
            #expect(error?.message.contains("--insecure") == true)
            #expect(error?.message.contains("--curve-key") == true)

            configuration.allowsInsecureEndpoints = true
            try configuration.checkExposure()
            configuration.allowsInsecureEndpoints = false
            configuration.security = try SecurityKeyring().serverSecurity
            try configuration.checkExposure()
        }
        try ServiceConfiguration().checkExposure()  // The loopback defaults.
    }
}

@Suite("Security: an in-process CURVE service", .enabled(if: Curve.isAvailable))
struct SecurityServiceTests {
    @Test("A read-write key changes; a read-only key reads and subscribes but gets forbidden")
    func accessByKey() throws {
        let keys = try SecurityKeyring()
        let service = try ServiceHarness(inMemory: true) { $0.security = keys.serverSecurity }
        defer { service.shutdown() }

        let subscriber = try service.securitySubscriber(keys.client(keys.readOnly))
        #expect(try nextHeartbeat(subscriber) != nil)

        let writer = service.securityClient(keys.client(keys.readWrite))
        let toggled = try writer.send(.change(.toggle(.name("France"))))
        #expect(toggled.ok && toggled.country?.visited == true && toggled.seq == 1)
        let event = try #require(try nextEvent(subscriber))
        #expect(try event.event().seq == 1)

        let readOnly = service.securityClient(keys.client(keys.readOnly))
        #expect(try readOnly.send(.query(.list)).countries?.count == 8)
        for change: Change in [
            .toggle(.name("France")), .set(.index(0), visited: false), .add(name: "Atlantis"),
            .remove(.index(0)),
            .reset,
        ] {
            let refused = try readOnly.send(.change(change))
            #expect(!refused.ok)
            #expect(refused.error?.code == "forbidden")
            #expect(refused.error?.message.contains("read") == true)
        }
        #expect(try readOnly.send(.query(.count)).seq == 1)  // Nothing changed.
        #expect(try nextEvent(subscriber, within: .milliseconds(300)) == nil)
    }

    /// Someone the service must not let in.
    enum Stranger: String, CaseIterable, Sendable {
        case unknownKey = "an unknown key"
        case plaintext = "a plaintext client"
        case wrongServerKey = "a client with the wrong server key"
    }

    @Test(
        "A stranger's request gets no reply, is logged, and does not stop an allowed key",
        arguments: Stranger.allCases)
    func strangerRequest(_ stranger: Stranger) throws {
        let keys = try SecurityKeyring()
        let service = try ServiceHarness(inMemory: true) { $0.security = keys.serverSecurity }
        defer { service.shutdown() }

        let client = service.securityClient(keys.security(for: stranger), timeout: .milliseconds(500))
        #expect(throws: ClientError.self) { try client.send(.query(.list)) }
        #expect(service.securityLogContains(keys.logLine(for: stranger, endpoint: service.commandEndpoint)))
        // Twice under ThreadSanitizer in CI the allowed key got no reply: the stranger's client,
        // discarded, had stopped the I/O thread of the context both clients share (a monitor
        // event with its reader gone; docs/RELIABILITY.md). The service's log goes with such a
        // failure, so another one says what the service was doing.
        do {
            #expect(try service.securityClient(keys.client(keys.readWrite)).send(.query(.count)).ok)
        } catch {
            Issue.record(
                "the allowed key got no reply (\(error)); the service logged: \(service.loggedLines)")
        }
    }

    @Test(
        "A stranger's subscriber gets no events (not even heartbeats) and is logged",
        arguments: Stranger.allCases)
    func strangerSubscriber(_ stranger: Stranger) throws {
        let keys = try SecurityKeyring()
        let service = try ServiceHarness(inMemory: true) { $0.security = keys.serverSecurity }
        defer { service.shutdown() }

        let subscriber = try service.securitySubscriber(keys.security(for: stranger))
        _ = try service.securityClient(keys.client(keys.readWrite)).send(.change(.toggle(.index(1))))
        #expect(try nextHeartbeat(subscriber, within: .milliseconds(500)) == nil)
        #expect(try nextEvent(subscriber, within: .milliseconds(100)) == nil)
        #expect(service.securityLogContains(keys.logLine(for: stranger, endpoint: service.eventsEndpoint)))
    }

    @Test("ipc endpoints are created owner-only (0600)")
    func ipcPermissions() throws {
        let keys = try SecurityKeyring()
        for security in [keys.serverSecurity, nil] {
            let service = try ServiceHarness(inMemory: true) { $0.security = security }
            defer { service.shutdown() }
            for endpoint in [service.commandEndpoint, service.eventsEndpoint] {
                let path = String(endpoint.dropFirst("ipc://".count))
                let attributes = try FileManager.default.attributesOfItem(atPath: path)
                let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
                #expect(mode & 0o777 == 0o600, "\(path) has mode \(String(mode, radix: 8))")
            }
        }
    }
}
