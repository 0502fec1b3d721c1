import Foundation
@preconcurrency import Glibc
import ZeroMQ

/// The floor: a bare libzmq REP server that answers every request with a reply the size of a
/// toggle reply and, with `publish`, also publishes the request body on a PUB socket, as a
/// service publishing its event would. It runs as a child process (the bench binary again, with
/// `--floor-server`), like the service, so both pay for the same process boundary.
final class FloorServer {
    let command: String
    let events: String
    let child: Child

    init(publish: Bool, context: Context) throws {
        command = "tcp://127.0.0.1:\(try freePort())"
        events = "tcp://127.0.0.1:\(try freePort())"
        child = try Child(
            name: "floor server", executable: benchPath,
            arguments: ["--floor-server", command, events, publish ? "publish" : "reply"])
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

/// The floor server's whole life (`countries-bench --floor-server COMMAND EVENTS publish|reply`):
/// serves until SIGTERM (the bench starts it under `setpriv --pdeathsig KILL` where it can).
func serveFloor(command: String, events: String, publish: Bool) -> Never {
    do {
        let context = try Context()
        let server = try context.makeSocket(.rep)
        try server.setOption(.linger, 0)
        try server.bind(command)
        var publisher: Socket?
        if publish {
            let socket = try context.makeSocket(.pub)
            try socket.setOption(.linger, 0)
            try socket.setOption(.sendHighWaterMark, 10_000)
            try socket.bind(events)
            publisher = socket
        }
        let reply = WireSizes.reply
        let topic = Data("country.changed".utf8)
        while true {
            guard let request = try server.receive() else { continue }
            try server.send([reply])
            if let publisher, let body = request.last {
                try publisher.send([topic, body], dontWait: true)
            }
        }
    } catch {
        FileHandle.standardError.write(Data("floor server: \(error)\n".utf8))
        exit(70)
    }
}
