import Foundation
import TestSupport
import Testing
import ZeroMQ

@Suite("Context lifetime")
struct ContextTests {
    @Test("terminate() returns promptly once sockets are closed, even with unsent messages")
    func terminateAfterClose() throws {
        let context = try Context()
        let push = try context.makeSocket(.push)
        // Nothing listens there, so the message stays queued; with libzmq's default
        // linger (-1) zmq_ctx_term would wait for it forever.
        try push.connect("tcp://127.0.0.1:1")
        #expect(try push.send([frame("undeliverable")], dontWait: true))
        push.close()

        let done = startThread {
            context.terminate()
            context.terminate()  // Idempotent.
        }
        #expect(wait(done))
    }

    @Test("A terminated context makes no more sockets")
    func makeSocketAfterTerminate() throws {
        let context = try Context()
        context.terminate()
        #expect(throws: ZMQError(code: ZMQError.termCode, operation: "socket(pair)")) {
            try context.makeSocket(.pair)
        }
    }

    @Test("shutdown() wakes a receive blocked in another thread with ETERM")
    func shutdownWakesBlockedReceive() throws {
        let context = try Context()
        let started = DispatchSemaphore(value: 0)
        let outcome = Box<String>("not finished")
        let done = startThread {
            do {
                let pull = try context.makeSocket(.pull)  // No timeout: blocks until shutdown.
                defer { pull.close() }
                try pull.bind("inproc://blocked")
                started.signal()
                let message = try pull.receive()
                outcome.value = "received \(String(describing: message))"
            } catch let error as ZMQError {
                outcome.value = error.isTerminated ? "terminated" : "error \(error)"
            } catch {
                outcome.value = "error \(error)"
            }
        }
        #expect(wait(started))
        Thread.sleep(forTimeInterval: 0.05)  // Let it reach the blocking receive.
        context.shutdown()
        #expect(wait(done))
        #expect(outcome.value == "terminated")
        context.terminate()
    }
}

extension ZMQError {
    /// libzmq's ETERM (`ZMQ_HAUSNUMERO + 53`), which zmq.h defines and Glibc does not.
    static let termCode: Int32 = 156_384_712 + 53
}
