import CountriesCore
import Foundation
import TestSupport
import Testing
import ZeroMQ

@testable import CountriesRelay
@testable import CountriesSockets

/// What an event socket does with each subscription message (``SubscriberLedger``), what a relay
/// forwards (``ForwardingWindow``), and dropping one connection under libzmq
/// (``PeerDisconnection``), on real sockets.
@Suite struct SubscriberBoundsTests {
    static let peer = SubscriberLedger.Peer(descriptor: 12, address: "localhost:0:0:100")

    static func subscribe(_ prefix: String) -> Data { Data([1]) + Data(prefix.utf8) }
    static func cancel(_ prefix: String) -> Data { Data([0]) + Data(prefix.utf8) }

    @Test func prefixesOfTopicsAreHonouredAndOthersHeldWithoutEffect() {
        var ledger = SubscriberLedger(bounds: SubscriberBounds())
        #expect(
            ledger.record(Self.subscribe("country."), from: Self.peer) == .subscribe(Data("country.".utf8)))
        #expect(ledger.record(Self.subscribe("country."), from: Self.peer) == .none)
        #expect(ledger.record(Self.subscribe("weather"), from: Self.peer) == .none)
        #expect(ledger.record(Self.cancel("weather"), from: Self.peer) == .none)
        #expect(
            ledger.record(Self.cancel("country."), from: Self.peer) == .unsubscribe(Data("country.".utf8)))
        // A cancel of what it does not hold changes nothing.
        #expect(ledger.record(Self.cancel("country."), from: Self.peer) == .none)
        // libzmq's own cancellations for a connection that went name no peer.
        #expect(ledger.record(Self.cancel("country."), from: nil) == .none)
    }

    @Test func aConnectionPastItsCountIsDroppedAndNothingMoreApplied() {
        var bounds = SubscriberBounds()
        bounds.subscriptions = 3
        var ledger = SubscriberLedger(bounds: bounds)
        for prefix in ["a", "b", "heart"] { _ = ledger.record(Self.subscribe(prefix), from: Self.peer) }
        guard case .drop = ledger.record(Self.subscribe("c"), from: Self.peer) else {
            Issue.record("a fourth subscription was taken")
            return
        }
        #expect(ledger.record(Self.subscribe("country."), from: Self.peer) == .none)
        #expect(ledger.record(Self.cancel("heart"), from: Self.peer) == .none)
        // Another connection is not affected, and its entry goes when it does.
        let other = SubscriberLedger.Peer(descriptor: 13, address: "127.0.0.1")
        #expect(ledger.record(Self.subscribe(""), from: other) == .subscribe(Data()))
        #expect(ledger.count == 2)
        ledger.forget(descriptor: other.descriptor)
        #expect(ledger.count == 1)
        // The dropped one's stays, for what it sent before it went, until its number is
        // another connection's: the same process, connected again.
        ledger.forget(descriptor: Self.peer.descriptor)
        #expect(ledger.record(Self.subscribe("heart"), from: Self.peer) == .none)
        #expect(
            ledger.record(Self.subscribe("heart"), from: Self.peer, isAnotherConnection: { _ in true })
                == .subscribe(Data("heart".utf8)))
    }

    @Test func aConnectionPastItsBytesIsDropped() {
        var ledger = SubscriberLedger(bounds: SubscriberBounds())
        let prefix = String(repeating: "x", count: 500)
        var drops = 0
        var taken = 0
        for index in 0..<40_000 {
            switch ledger.record(Self.subscribe("\(index)" + prefix), from: Self.peer) {
            case .drop: drops += 1
            case .none: taken += 1
            default: Issue.record("a subscription no topic starts with was honoured")
            }
        }
        // 4,096 bytes hold 8 of them; the 9th drops the connection, the rest are not counted.
        #expect(taken == 8 + 40_000 - 9)
        #expect(drops == 1)
    }

    @Test func aCancelledSubscriptionFreesItsPlace() {
        var bounds = SubscriberBounds()
        bounds.subscriptions = 2
        var ledger = SubscriberLedger(bounds: bounds)
        for round in 0..<100 {
            #expect(ledger.record(Self.subscribe("country.\(round % 7)"), from: Self.peer) == .none)
            #expect(ledger.record(Self.cancel("country.\(round % 7)"), from: Self.peer) == .none)
        }
        #expect(ledger.record(Self.subscribe("heart"), from: Self.peer) == .subscribe(Data("heart".utf8)))
    }

    @Test func anythingButASubscriptionDropsItsSender() {
        var ledger = SubscriberLedger(bounds: SubscriberBounds())
        guard case .drop = ledger.record(Data("hello".utf8), from: Self.peer) else {
            Issue.record("a message that is no subscription was taken")
            return
        }
        let other = SubscriberLedger.Peer(descriptor: 13, address: "127.0.0.1")
        guard case .drop = ledger.record(Data(), from: other) else {
            Issue.record("an empty message was taken")
            return
        }
    }

    @Test func aReusedDescriptorIsANewConnection() {
        var bounds = SubscriberBounds()
        bounds.subscriptions = 1
        var ledger = SubscriberLedger(bounds: bounds)
        _ = ledger.record(Self.subscribe("x"), from: Self.peer)
        guard case .drop = ledger.record(Self.subscribe("y"), from: Self.peer) else {
            Issue.record("not dropped")
            return
        }
        // Its disconnection not read yet, the number comes back for another process.
        let next = SubscriberLedger.Peer(descriptor: Self.peer.descriptor, address: "localhost:0:0:101")
        #expect(ledger.record(Self.subscribe("heart"), from: next) == .subscribe(Data("heart".utf8)))
    }

    @Test func theRelayHonoursAnyTopicAsTheWholeStream() {
        var ledger = SubscriberLedger(bounds: SubscriberBounds(), wholeStream: true)
        #expect(ledger.record(Self.subscribe("country.changed"), from: Self.peer) == .subscribe(Data()))
        #expect(ledger.record(Self.subscribe("heart"), from: Self.peer) == .none)
        #expect(ledger.record(Self.subscribe("nothing"), from: Self.peer) == .none)
        #expect(ledger.record(Self.cancel("country.changed"), from: Self.peer) == .none)
        #expect(ledger.record(Self.cancel("nothing"), from: Self.peer) == .none)
        #expect(ledger.record(Self.cancel("heart"), from: Self.peer) == .unsubscribe(Data()))
    }

    // MARK: - The relay's window

    @Test func noRunOfTheWindowIsOverItsBytes() {
        var window = ForwardingWindow(messages: 4, bytes: 100)
        // 30 would make 110 in a run of 3; the second 10 makes 100 in the run of 4; 51 would
        // make 40+10+10+51 once the first 40 leaves; 40 makes 100 again.
        let taken = [40, 40, 30, 10, 10, 51, 40].map { window.admit($0) }
        #expect(taken == [true, true, false, true, true, false, true])
        #expect(window.total == 100)
        // Whatever comes, no run of 4 admitted in a row is over 100.
        var generator = SplitMix64(seed: 7)
        var admitted: [Int] = []
        for _ in 0..<10_000 {
            let size = Int(generator.next() % 60)
            if window.admit(size) { admitted.append(size) }
        }
        for end in 4...admitted.count { #expect(admitted[(end - 4)..<end].reduce(0, +) <= 100) }
    }

    @Test func theDefaultWindowTakesOneOfTheLargestResetsAndAnyRunOfOtherEvents() {
        var window = RelayConfiguration(upstream: "ipc:///a", downstream: "ipc:///b").forwardingWindow
        #expect(window.messages == 10_001)
        let reset = EventShape.maximumBodyBytes + 15 + 2 * HeldMessage.overheadPerFrame
        #expect([reset, reset].map { window.admit($0) } == [true, false])
        // Once 10,000 other messages have gone by, the next one fits again.
        #expect((0..<10_000).allSatisfy { _ in window.admit(400) })
        let again = window.admit(reset)
        #expect(again)
        var fresh = RelayConfiguration(upstream: "ipc:///a", downstream: "ipc:///b").forwardingWindow
        let largestRow = EventShape.maximumBodyBytes(.countryChanged) + 15 + 2 * HeldMessage.overheadPerFrame
        #expect((0..<30_000).allSatisfy { _ in fresh.admit(largestRow) })
    }

    // MARK: - Dropping one connection under libzmq

    @Test(arguments: [false, true])
    func aSubscriberIsDroppedOnlyWhereItIsStillThePeerOnTheEndpoint(tcp: Bool) throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let context = try Context()
        defer { context.terminate() }
        let publisher = try context.makeSocket(.xpub)
        defer { publisher.close() }
        try publisher.setOption(.xpubManual, true)
        try publisher.setOption(.receiveTimeout, Int32(5_000 * testSlowdown))
        try publisher.bind(tcp ? "tcp://127.0.0.1:*" : scratch.ipc("events"))
        let endpoint = try publisher.lastEndpoint
        let subscriber = try context.makeSocket(.sub)
        defer { subscriber.close() }
        try subscriber.subscribe("heart")
        try subscriber.connect(endpoint)

        let message = try #require(try publisher.receiveMessage(properties: ["Peer-Address"]))
        #expect(message.frames == [Self.subscribe("heart")])
        let descriptor = try #require(message.sourceDescriptor)
        let address = try #require(message.properties["Peer-Address"])
        let peer = SubscriberLedger.Peer(descriptor: descriptor, address: address)
        #expect(PeerDisconnection.isConnection(peer, acceptedOn: endpoint))
        // Another peer, another endpoint, a descriptor that is no socket: left alone.
        let elsewhere = tcp ? "tcp://127.0.0.1:1" : scratch.ipc("other")
        #expect(!PeerDisconnection.disconnect(peer, acceptedOn: elsewhere))
        let stranger = SubscriberLedger.Peer(
            descriptor: descriptor, address: tcp ? "10.9.9.9" : "localhost:0:0:1")
        #expect(!PeerDisconnection.disconnect(stranger, acceptedOn: endpoint))
        let file = SubscriberLedger.Peer(descriptor: 0, address: address)
        #expect(!PeerDisconnection.disconnect(file, acceptedOn: endpoint))

        #expect(PeerDisconnection.isLive(descriptor))
        #expect(PeerDisconnection.disconnect(peer, acceptedOn: endpoint))
        #expect(!PeerDisconnection.isLive(descriptor))
        // libzmq sees the connection end and cancels its subscriptions itself: a message made
        // locally, with no descriptor.
        let cancel = try #require(try publisher.receiveMessage(properties: []))
        #expect(cancel.frames == [Self.cancel("heart")])
        #expect(cancel.sourceDescriptor == nil)
    }
}
