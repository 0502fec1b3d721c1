import Foundation
@preconcurrency import Glibc
import SystemSupport
import TestSupport
import Testing
import ZeroMQ

@testable import CountriesClient

/// A subscription's receiving thread: what it holds for the loop is bounded in bytes, what is
/// past the bound is dropped (and counted), the rest comes in order, and a socket that cannot
/// be set up is an error of the constructor, not of the thread.
@Suite(.hangGuard()) struct EventReceiverTests {
    /// Waits (bounded) until the receiver's descriptor is readable.
    private func waitReadable(_ receiver: EventReceiver, within limit: Duration) -> Bool {
        var descriptor = pollfd(fd: receiver.fileDescriptor, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(clamping: limit.components.seconds * 1_000 * Int64(testSlowdown))
        return poll(&descriptor, 1, milliseconds) == 1
    }

    @Test func whatWaitsIsBoundedInBytesAndTheRestIsDroppedAndCounted() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let context = try Context()
        defer { context.terminate() }
        let publisher = try context.makeSocket(.xpub)
        defer { publisher.close() }
        try publisher.setOption(.linger, 0)
        try publisher.setOption(.sendHighWaterMark, 0)
        let endpoint = "ipc://\(scratch.file("events"))"
        try publisher.bind(endpoint)
        let budget = 4 << 20
        let receiver = try EventReceiver(context: context, endpoints: [endpoint], bufferBytes: budget) {
            subscriber throws(ZMQError) in
            try subscriber.setOption(.maxMessageSize, 2 << 20)
        }
        try publisher.setOption(.receiveTimeout, Int32(15_000 * testSlowdown))
        try #require(try publisher.receive() != nil, "the receiver never subscribed")

        // 40 messages of 1 MiB, nobody taking them: about four fit.
        let big = Data(repeating: 0x61, count: 1 << 20)
        for index in 0..<40 { _ = try publisher.send([Data("big".utf8), big + Data([UInt8(index)])]) }
        let settled = eventually(within: .seconds(15)) {
            receiver.dropped + receiver.waitingCount == 40
        }
        try #require(settled, "dropped \(receiver.dropped), waiting \(receiver.waitingCount)")
        #expect(receiver.waitingBytes <= budget)
        #expect(receiver.waitingCount == budget / (1 << 20 + 1 + 3 + 2 * EventReceiver.frameOverheadBytes))
        let kept = receiver.receive(maximumCount: 100)
        #expect(kept.map { $0[1].last } == (0..<UInt8(kept.count)).map { $0 }, "the first ones, in order")

        // Once taken, room again: what comes next arrives, in order.
        for index in 0..<3 { _ = try publisher.send([Data("small".utf8), Data([UInt8(index)])]) }
        var small: [[Data]] = []
        while small.count < 3, waitReadable(receiver, within: .seconds(10)) {
            small += receiver.receive(maximumCount: 2)
        }
        #expect(small.map { $0[1] } == [Data([0]), Data([1]), Data([2])])
    }

    /// libzmq 4.3 gives up an endpoint for good after a protocol error: one frame past
    /// `ZMQ_MAXMSGSIZE` cut a subscriber off from its publisher, a new one at the same address
    /// included. After a silence the receiver connects anew.
    @Test func anOversizedFrameDoesNotCutTheReceiverOffForGood() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let context = try Context()
        defer { context.terminate() }
        let endpoint = "ipc://\(scratch.file("events"))"
        let first = try context.makeSocket(.pub)
        try first.setOption(.linger, 0)
        try first.bind(endpoint)
        defer { first.close() }
        let receiver = try EventReceiver(
            context: context, endpoints: [endpoint], bufferBytes: 1 << 20,
            reconnectAfter: .milliseconds(300) * testSlowdown
        ) { subscriber throws(ZMQError) in
            try subscriber.setOption(.maxMessageSize, 1_000)
        }
        func heardWithin(_ limit: Duration, sending body: String) -> Bool {
            eventually(within: limit) {
                _ = try? first.send([Data("heartbeat".utf8), Data(body.utf8)])
                _ = waitReadable(receiver, within: .milliseconds(20))
                return receiver.receive(maximumCount: 1_000).contains { $0.last == Data(body.utf8) }
            }
        }
        try #require(heardWithin(.seconds(10), sending: "{}"), "the receiver never heard the publisher")

        _ = try first.send([Data("heartbeat".utf8), Data(repeating: 0x20, count: 2_000)])
        // The same publisher goes on after its oversized frame: heard again.
        #expect(heardWithin(.seconds(10), sending: #"{"after":1}"#), "cut off after the oversized frame")
    }

    @Test func aSocketThatCannotBeSetUpIsTheConstructorsError() throws {
        let context = try Context()
        defer { context.terminate() }
        #expect(throws: ClientError.self) {
            _ = try EventReceiver(context: context, endpoints: ["nonsense://x"], bufferBytes: 1 << 20) { _ in
            }
        }
    }
}
