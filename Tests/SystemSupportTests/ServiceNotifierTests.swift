import Foundation
import SystemSupport
import TestSupport
import Testing

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// systemd's notify protocol, spoken to a datagram socket the test binds as systemd would:
/// at a path, or at a name in the abstract namespace (`@name`).
@Suite struct ServiceNotifierTests {
    @Test func readyReachesASocketAtAPath() throws {
        let scratch = try ScratchDirectory(prefix: "notify")
        defer { scratch.remove() }
        let listener = try NotifySocketListener(address: scratch.file("notify"))
        try ServiceNotifier(socketAddress: listener.address).notify(ServiceNotifier.ready)
        #expect(listener.receive(within: .seconds(5)) == "READY=1")
    }

    @Test func stoppingReachesAnAbstractSocket() throws {
        let listener = try NotifySocketListener(
            address: "@countries-notify-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try ServiceNotifier(socketAddress: listener.address).notify(ServiceNotifier.stopping)
        #expect(listener.receive(within: .seconds(5)) == "STOPPING=1")
    }

    @Test func theEnvironmentSaysWhetherThereIsAnyoneToTell() {
        #expect(ServiceNotifier(environment: [:]) == nil)
        #expect(ServiceNotifier(environment: ["NOTIFY_SOCKET": ""]) == nil)
        #expect(ServiceNotifier(environment: ["NOTIFY_SOCKET": "@x"])?.socketAddress == "@x")
    }

    @Test func aBadOrGoneSocketIsAnErrorThatNamesIt() throws {
        #expect(throws: ServiceNotifierError.self) {
            try ServiceNotifier(socketAddress: "relative/notify").notify(ServiceNotifier.ready)
        }
        let scratch = try ScratchDirectory(prefix: "notify")
        defer { scratch.remove() }
        do {
            try ServiceNotifier(socketAddress: scratch.file("gone")).notify(ServiceNotifier.ready)
            Issue.record("sent to a socket that is not there")
        } catch {
            #expect(error.description.contains(scratch.file("gone")), "\(error)")
        }
        let long = "/" + String(repeating: "x", count: 200)
        #expect(throws: ServiceNotifierError.self) {
            try ServiceNotifier(socketAddress: long).notify("READY=1")
        }
    }
}
