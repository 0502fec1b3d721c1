import Foundation
import Testing

@testable import SystemSupport

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The one way tests and the bench find a tcp port for a server they start: below the kernel's
/// ephemeral range (which outgoing connections draw from), free when handed out, never twice.
@Suite struct LoopbackPortTests {
    /// Whether this process can bind 127.0.0.1:`port` now.
    private func canBind(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return IPv4SocketAddress(host: "127.0.0.1", port: port).bind(fd)
    }

    @Test func portsComeFromBelowTheEphemeralRangeFreeAndNeverTwice() throws {
        let ephemeralStart = LoopbackPort.ephemeralRangeStart()
        var seen = Set<Int>()
        for _ in 0..<100 {
            let port = try LoopbackPort.free()
            #expect(
                port >= 1024 && port < ephemeralStart, "port \(port), ephemeral range from \(ephemeralStart)")
            #expect(seen.insert(port).inserted, "port \(port) handed out twice")
            #expect(canBind(port), "port \(port) could not be bound")
        }
    }

    @Test func theRangeIsReadFromTheKernelsFile() {
        #expect(LoopbackPort.ephemeralRangeStart(reading: "32768\t60999\n") == 32_768)
        #expect(LoopbackPort.ephemeralRangeStart(reading: "40000 65000") == 40_000)
        // Missing, unreadable or implausible: the kernel's default.
        #expect(LoopbackPort.ephemeralRangeStart(reading: nil) == 32_768)
        #expect(LoopbackPort.ephemeralRangeStart(reading: "") == 32_768)
        #expect(LoopbackPort.ephemeralRangeStart(reading: "1000 2000") == 32_768)
        #expect(LoopbackPort.ephemeralRangeStart(reading: "ports") == 32_768)
    }

    @Test func candidatesAreBelowTheRangeAndNeverPrivileged() {
        #expect(LoopbackPort.candidateRange(ephemeralStart: 32_768) == 20_768..<32_768)
        #expect(LoopbackPort.candidateRange(ephemeralStart: 5_000) == 1_024..<5_000)
        #expect(LoopbackPort.candidateRange(ephemeralStart: 2_049) == 1_024..<2_049)
    }
}
