import CountriesCore
import Testing

@testable import CountriesService

/// The command socket's queue per peer is set in bytes and given to libzmq in frames.
@Suite struct ServiceConfigurationTests {
    @Test func theQueuedRequestsBytesBecomeFramesOfTheLargestSize() {
        var configuration = ServiceConfiguration()
        #expect(configuration.maximumMessageBytes >= Int64(Limits.maximumRequestBytes) * 2)
        #expect(configuration.commandReceiveHighWaterMark == 128, "16 MiB of 128 KiB frames")
        configuration.maximumMessageBytes = 1 << 20
        #expect(configuration.commandReceiveHighWaterMark == 16)
        configuration.maximumQueuedRequestBytes = 1_000
        #expect(configuration.commandReceiveHighWaterMark == 1, "one frame at least, or nothing is read")
        configuration.maximumMessageBytes = 1
        configuration.maximumQueuedRequestBytes = .max
        #expect(configuration.commandReceiveHighWaterMark == .max)
    }
}
