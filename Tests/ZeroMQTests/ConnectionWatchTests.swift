import Foundation
import TestSupport
import Testing
import ZeroMQ

@Suite("ConnectionWatch")
struct ConnectionWatchTests {
    /// Polls the watch until its state is not `.connecting` (bounded, scaled by the slowdown).
    private func settle(_ watch: ConnectionWatch) throws -> ConnectionWatch.State {
        var poller = Poller()
        let item = poller.add(watch.events)
        let deadline = ContinuousClock.now + .seconds(5) * testSlowdown
        while ContinuousClock.now < deadline {
            let ready = try poller.poll(timeoutMilliseconds: 50)
            if ready.isReadable(item), try watch.update() != .connecting { break }
        }
        return watch.state
    }

    @Test("A tcp port nobody listens on is refused at once")
    func refusedTCP() throws {
        let context = try Context()
        let port = try freeTCPPort()
        let request = try context.makeSocket(.req)
        let watch = try ConnectionWatch(request, context: context)
        let start = ContinuousClock.now
        try request.connect("tcp://127.0.0.1:\(port)")
        #expect(try settle(watch) == .refused)
        print("refused connection to tcp://127.0.0.1:\(port) seen after \(ContinuousClock.now - start)")
        watch.close()
        request.close()
    }

    @Test("An ipc path without a socket file is refused at once")
    func refusedIPC() throws {
        let context = try Context()
        let directory = try ScratchDirectory()
        let request = try context.makeSocket(.req)
        let watch = try ConnectionWatch(request, context: context)
        try request.connect("ipc://\(directory.path)/nobody.sock")
        #expect(try settle(watch) == .refused)
        watch.close()
        request.close()
    }

    @Test("A listening peer is connected, and stays so")
    func connected() throws {
        let context = try Context()
        let reply = try context.makeSocket(.rep)
        try reply.bind("tcp://127.0.0.1:*")
        let request = try context.makeSocket(.req)
        let watch = try ConnectionWatch(request, context: context)
        try request.connect(try reply.lastEndpoint)
        #expect(try settle(watch) == .connected)
        watch.close()
        request.close()
        reply.close()
    }
}
