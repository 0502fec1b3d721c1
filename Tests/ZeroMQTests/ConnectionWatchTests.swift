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

    /// A REQ socket in `context`, watched, connecting to an ipc path in `directory` with no
    /// socket file: libzmq retries it every 100 ms. Returned once the watch has said refused.
    private func refusedIPCSocket(_ context: Context, in directory: ScratchDirectory, linger: Int32? = nil)
        throws -> (socket: Socket, watch: ConnectionWatch)
    {
        let socket = try context.makeSocket(.req)
        if let linger { try socket.setOption(.linger, linger) }
        let watch = try ConnectionWatch(socket, context: context)
        try socket.connect("ipc://\(directory.path)/nobody.sock")
        #expect(try settle(watch) == .refused)
        return (socket, watch)
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
        let (request, watch) = try refusedIPCSocket(context, in: directory)
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

    /// libzmq's I/O thread sends each monitor event with a blocking send: once the reading end
    /// is gone and the socket still has events to tell (a connect retried every 100 ms), that
    /// thread waits for good, and every other socket of the context goes silent with it.
    @Test("Closing a watch while its socket still retries leaves the context's other sockets working")
    func closingAWatchLeavesTheContextWorking() throws {
        let context = try Context()
        let directory = try ScratchDirectory()
        let (retrying, watch) = try refusedIPCSocket(context, in: directory, linger: 0)
        watch.close()
        // Several retries, each an event with nobody left to read it.
        Thread.sleep(forTimeInterval: 0.5)
        guard try expectCarriesMessages(context, abandoning: retrying, watch) else { return }
        retrying.close()
    }

    /// A closed socket that lingers to deliver a message goes on retrying in libzmq's reaper,
    /// after the one that closed it has closed the watch's reader too.
    @Test("A lingering socket closed before its watch leaves the context's other sockets working")
    func closingALingeringSocketFirstLeavesTheContextWorking() throws {
        let context = try Context()
        let directory = try ScratchDirectory()
        let (retrying, watch) = try refusedIPCSocket(context, in: directory, linger: 1_500)
        #expect(try retrying.send([Data("never delivered".utf8)], dontWait: true))
        retrying.close()
        watch.close()
        Thread.sleep(forTimeInterval: 0.5)
        _ = try expectCarriesMessages(context, abandoning: retrying, watch)
    }

    @Test("Once connected, the watch stops the socket's monitor: reconnects queue no events")
    func connectedStopsTheMonitor() throws {
        let context = try Context()
        let reply = try context.makeSocket(.rep)
        try reply.setOption(.linger, 0)
        try reply.bind("tcp://127.0.0.1:*")
        let endpoint = try reply.lastEndpoint
        let request = try context.makeSocket(.req)
        try request.setOption(.linger, 0)
        let watch = try ConnectionWatch(request, context: context)
        try request.connect(endpoint)
        #expect(try settle(watch) == .connected)
        // The peer goes and the socket retries every 100 ms: events a running monitor would queue.
        reply.close()
        Thread.sleep(forTimeInterval: 0.5)
        #expect(try watch.events.receive(dontWait: true) == nil, "no event after the watch was decided")
        #expect(watch.state == .connected)
        watch.close()
        request.close()
    }
}
