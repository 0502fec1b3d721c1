import Foundation
import TestSupport
import Testing
import ZeroMQ

@Suite("Signals during endpoint calls")
struct SignalTests {
    /// libzmq starts bind, connect, unbind and disconnect by taking the socket's pending
    /// commands, where a signal fails the call with `EINTR` before it has done anything (the
    /// Poller's signal test met it in its connect, under ThreadSanitizer). Each is called again:
    /// none throws while thousands of signals land.
    @Test func endpointCallsAreRetriedAfterASignal() throws {
        let rounds = Box(0)
        let result = try underSignals { stop in
            let context = try Context()
            let server = try context.testSocket(.pull)
            let client = try context.testSocket(.push)
            while !stop.value {
                let endpoint = "inproc://signals-\(rounds.value)"
                try server.bind(endpoint)
                try client.connect(endpoint)
                try client.disconnect(endpoint)
                try server.unbind(endpoint)
                rounds.update { $0 += 1 }
            }
        }
        #expect(result.error == nil, "after \(rounds.value) rounds and \(result.sent) signals")
        #expect(rounds.value > 100)
    }
}
