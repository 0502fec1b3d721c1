import CountriesCore
import Foundation
@preconcurrency import Glibc
import LoadGeneration
import SystemSupport
import ZeroMQ

/// The floor: a bare libzmq REP server that answers every request with a reply the size of a
/// toggle reply and, with `.publish`, also publishes the request body on a PUB socket, as a
/// service publishing its event would; with `.sync`, it first overwrites one 4 KiB page of a
/// file it wrote in full at start and `fdatasync`s it, the least a server can do to make a change
/// durable before it replies (SQLite's WAL, once the file has its size, does the same plus its
/// own work). It runs as a child process (the bench binary again, with `--floor-server`), like
/// the service, so both pay for the same process boundary.
final class FloorServer {
    /// What the floor server does per request besides replying.
    enum Mode {
        case reply
        case publish
        /// Writes and syncs a page of a file at this path before replying.
        case sync(path: String)
        /// Group commit: takes every request already queued (a ROUTER, so replies can wait),
        /// writes and syncs one page of the file at this path for all of them, then replies to
        /// each and publishes each body, as a service that shares one sync among a batch does.
        case groupSync(path: String)

        var argument: String {
            switch self {
            case .reply: "reply"
            case .publish: "publish"
            case .sync(let path): "sync:\(path)"
            case .groupSync(let path): "group-sync:\(path)"
            }
        }
    }

    let command: String
    let events: String
    let child: Child

    /// Starts `bench --floor-server` in `mode` on two free loopback ports and waits until it
    /// answers (at most 10 s).
    init(_ mode: Mode, bench: String, context: Context) throws {
        command = "tcp://127.0.0.1:\(try LoopbackPort.free())"
        events = "tcp://127.0.0.1:\(try LoopbackPort.free())"
        child = try Child(
            name: "floor server", executable: bench,
            arguments: ["--floor-server", command, events, mode.argument])
        let deadline = nowNanos() + 10_000_000_000
        while nowNanos() < deadline {
            if child.hasExited { throw BenchError("the floor server exited at start") }
            let socket = try context.makeSocket(.req)
            try socket.setOption(.linger, 0)
            try socket.setOption(.receiveTimeout, 200)
            try socket.connect(command)
            try socket.send([Data("{}".utf8)])
            if try socket.receive() != nil { return }
        }
        throw BenchError("the floor server did not answer within 10 s")
    }

    func stop() { child.stop() }
}

/// The floor server's whole life (`countries-bench --floor-server COMMAND EVENTS
/// publish|reply|sync:FILE|group-sync:FILE|publish-work:MICROSECONDS`): serves until SIGTERM
/// (the bench starts it under `setpriv --pdeathsig KILL` where it can).
///
/// `publish-work:N` is the publishing floor busy for N µs before each reply, as a service is
/// while it handles the request: by hand only, to measure what each microsecond of a request's
/// work costs one client's round trip (docs/BENCHMARKS.md, "Stop 57"). `publish-after:N` is
/// busy for N µs after each reply instead, as a service is with its bookkeeping: by hand only,
/// to measure what that costs the client (docs/BENCHMARKS.md, "Stop 59").
///
/// `publish-core` is the publishing floor doing the protocol's own work with the project's
/// core: each request decoded (`Request.decode`), run on a list (`CountriesState.apply`), its
/// reply and event encoded, and both sent; no request id remembered, no event kept, no batch.
/// By hand only: what the service adds beyond the protocol (docs/BENCHMARKS.md, "Stop 59").
func serveFloor(command: String, events: String, mode: String) -> Never {
    do {
        if mode == "publish-core" {
            try serveWithCore(
                FloorSockets(command: command, events: events, serverType: .rep, publishing: true))
        }
        for (prefix, afterReply) in [("publish-work:", false), ("publish-after:", true)]
        where mode.hasPrefix(prefix) {
            guard let microseconds = UInt64(mode.dropFirst(prefix.count)) else {
                throw BenchError("\(prefix) takes a whole number of microseconds, not \(mode)")
            }
            try serveOneByOne(
                FloorSockets(command: command, events: events, serverType: .rep, publishing: true),
                journal: nil, busyNanoseconds: microseconds * 1_000, busyAfterReply: afterReply)
        }
        if mode.hasPrefix("group-sync:") {
            try serveInGroups(
                FloorSockets(command: command, events: events, serverType: .router, publishing: true),
                journal: SyncedPages(path: String(mode.dropFirst("group-sync:".count))))
        }
        try serveOneByOne(
            FloorSockets(command: command, events: events, serverType: .rep, publishing: mode == "publish"),
            journal: mode.hasPrefix("sync:") ? SyncedPages(path: String(mode.dropFirst("sync:".count))) : nil)
    } catch {
        FileHandle.standardError.write(Data("floor server: \(error)\n".utf8))
        exit(70)
    }
}

/// The floor server's sockets, as every mode sets them up: the command socket and, when it
/// publishes, a PUB with the service's high-water mark; both bound, neither lingering.
struct FloorSockets {
    let context: Context
    let server: Socket
    let publisher: Socket?

    init(command: String, events: String, serverType: SocketType, publishing: Bool) throws {
        context = try Context()
        server = try context.makeSocket(serverType)
        try server.setOption(.linger, 0)
        try server.bind(command)
        guard publishing else {
            publisher = nil
            return
        }
        let socket = try context.makeSocket(.pub)
        try socket.setOption(.linger, 0)
        try socket.setOption(.sendHighWaterMark, 10_000)
        try socket.bind(events)
        publisher = socket
    }

    /// The topic an event of the floor goes out under.
    static let topic = Data("country.changed".utf8)
}

/// REP: each request in turn, synced first when there is a journal (or busy for
/// `busyNanoseconds`, before the reply or after it), replied to, published.
private func serveOneByOne(
    _ sockets: FloorSockets, journal: SyncedPages?, busyNanoseconds: UInt64 = 0, busyAfterReply: Bool = false
) throws -> Never {
    func beBusy() {
        guard busyNanoseconds > 0 else { return }
        // Spinning, not sleeping: a handler's work keeps its thread on the core.
        let until = nowNanos() + busyNanoseconds
        while nowNanos() < until {}
    }
    while true {
        guard let request = try sockets.server.receive() else { continue }
        try journal?.writeNext()
        if !busyAfterReply { beBusy() }
        try sockets.server.send([WireSizes.reply])
        if busyAfterReply { beBusy() }
        if let publisher = sockets.publisher, let body = request.last {
            try publisher.send([FloorSockets.topic, body], dontWait: true)
        }
    }
}

/// REP with the project's core (`publish-core`): decode, apply, encode the reply and the event.
private func serveWithCore(_ sockets: FloorSockets) throws -> Never {
    var state = CountriesState(countries: SeedList.standard)
    let topics = TopicFrames()
    while true {
        guard let request = try sockets.server.receive(), let body = request.last else { continue }
        let reply: Reply
        var event: Event?
        do throws(CountriesError) {
            let decoded = try Request.decode(body)
            guard case .change(let change) = decoded.command else {
                throw CountriesError(.badRequest, "the core floor takes changes only")
            }
            let result = try state.apply(change, seed: SeedList.standard)
            reply = result.reply
            event = result.event
        } catch {
            reply = Reply(error: error)
        }
        try sockets.server.send([reply.encoded()])
        if let publisher = sockets.publisher, let event {
            _ = try publisher.send(
                topics[event.topic], then: event.encoded(as: [UInt8].self), dontWait: true)
        }
    }
}

/// The group-commit floor (``FloorServer/Mode/groupSync(path:)``): one sync per batch of
/// whatever requests are queued when the last batch ends, up to 1,024.
private func serveInGroups(_ sockets: FloorSockets, journal: SyncedPages) throws -> Never {
    var batch: [[Data]] = []
    batch.reserveCapacity(1024)
    while true {
        guard let first = try sockets.server.receive() else { continue }
        batch.append(first)
        while batch.count < 1024, let next = try sockets.server.receive(dontWait: true) { batch.append(next) }
        try journal.writeNext()
        for request in batch where request.count >= 2 {
            // A REQ peer's envelope: its identity, the empty delimiter, then the body.
            _ = try sockets.server.send(Array(request.dropLast()), then: WireSizes.reply)
            _ = try sockets.publisher?.send(
                FloorSockets.topic, then: request[request.count - 1], dontWait: true)
        }
        batch.removeAll(keepingCapacity: true)
    }
}

/// A file of 16 MiB written in full and synced once, then overwritten a 4 KiB page at a time,
/// each page synced before the reply: overwriting keeps `fdatasync` to the data (no size or
/// block allocation to record), its cheapest case.
final class SyncedPages {
    private let descriptor: Int32
    private let page = [UInt8](repeating: 0x5a, count: 4096)
    private let pages: Int64 = 4096
    private var next: Int64 = 0

    init(path: String) throws {
        descriptor = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw BenchError("cannot open \(path): errno \(errno)") }
        for index in 0..<pages { try write(at: index) }
        guard fsync(descriptor) == 0 else { throw BenchError("fsync \(path): errno \(errno)") }
    }

    deinit { close(descriptor) }

    /// Overwrites the next page and syncs it.
    func writeNext() throws {
        try write(at: next)
        next = (next + 1) % pages
        guard fdatasync(descriptor) == 0 else { throw BenchError("fdatasync: errno \(errno)") }
    }

    private func write(at index: Int64) throws {
        let written = page.withUnsafeBytes {
            pwrite(descriptor, $0.baseAddress, $0.count, off_t(index * 4096))
        }
        guard written == page.count else { throw BenchError("pwrite: errno \(errno)") }
    }
}
