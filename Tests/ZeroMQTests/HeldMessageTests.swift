import Foundation
import TestSupport
import Testing
import ZeroMQ

/// A message passed on without copying it (``HeldMessage``), and the connection a message came
/// over (``ReceivedMessage/sourceDescriptor``).
@Suite("Held messages")
struct HeldMessageTests {
    @Test(
        "A held message is read in place and sent on whole, small frames and large",
        arguments: [
            Transport.inproc, .tcp,
        ])
    func passedOn(transport: Transport) throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let context = try Context()
        let (input, source) = try context.connectedPair(.pull, .push, over: transport, in: scratch)
        let (output, relay) = try context.connectedPair(.pull, .push, over: transport, in: scratch)
        let large = Data((0..<(HeldMessage.copiedFrameBytes * 3)).map { UInt8(truncatingIfNeeded: $0) })
        let frames = [frame("topic"), Data(), large, frame("last")]
        try source.send(frames)

        let held = try #require(try input.receiveHeld())
        #expect(held.count == 4)
        #expect(held.byteCount == frames.reduce(0) { $0 + $1.count })
        #expect(held.withBuffers { $0.map { Data($0) } } == frames)
        #expect(try relay.send(held))
        #expect(try output.receive() == frames)
        // Nothing queued: nil, not an error.
        #expect(try input.receiveHeld(dontWait: true) == nil)
    }

    @Test("A message from a peer names the connection it came over; a local one does not")
    func sourceDescriptor() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let context = try Context()
        let (server, client) = try context.connectedPair(.pull, .push, over: .ipc, in: scratch)
        try client.send([frame("hello")])
        let message = try #require(try server.receiveMessage(properties: ["Peer-Address"]))
        let descriptor = try #require(message.sourceDescriptor)
        #expect(descriptor > 2)
        try client.send([frame("again")])
        let unasked = try #require(
            try server.receiveMessage(properties: ["Peer-Address"], sourceDescriptor: false))
        #expect(unasked.sourceDescriptor == nil, "not asked for")
        #expect(unasked.properties["Peer-Address"] == message.properties["Peer-Address"])
        #expect(message.properties["Peer-Address"]?.hasSuffix(":\(getpid())") == true)

        let local = try context.testSocket(.pull)
        try local.bind("inproc://held-\(UUID().uuidString)")
        let peer = try context.testSocket(.push)
        try peer.connect(try local.lastEndpoint)
        try peer.send([frame("hello")])
        #expect(try local.receiveMessage(properties: [])?.sourceDescriptor == nil)
    }
}
