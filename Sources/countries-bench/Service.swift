import Foundation
import LoadGeneration
import SystemSupport
import ZeroMQ

/// A `countries serve` child on two free loopback ports.
final class ServiceUnderTest {
    let command: String
    let events: String
    let child: Child

    /// Starts the service binary found next to the bench (`--in-memory` unless `database`, or a
    /// replica of the etcd cluster at `etcd`).
    init(
        binary: String, database: String? = nil, etcd: [String]? = nil, seedFile: String? = nil,
        heartbeatMilliseconds: Int = 1000, context: Context
    ) throws {
        command = "tcp://127.0.0.1:\(try LoopbackPort.free())"
        events = "tcp://127.0.0.1:\(try LoopbackPort.free())"
        var arguments = [
            "serve", "--command", command, "--events", events, "--log-level", "warning",
            "--heartbeat-ms", String(heartbeatMilliseconds),
        ]
        if let etcd {
            arguments += ["--etcd", etcd.joined(separator: ",")]
        } else if let database {
            arguments += ["--db", database]
        } else {
            arguments.append("--in-memory")
        }
        if let seedFile { arguments += ["--seed", seedFile] }
        child = try Child(name: "countries serve", executable: binary, arguments: arguments)
        try waitUntilReady(context: context)
    }

    /// Asks `count` until it answers (at most 10 s).
    private func waitUntilReady(context: Context) throws {
        let deadline = nowNanos() + 10_000_000_000
        while nowNanos() < deadline {
            if child.hasExited { throw BenchError("countries serve exited at start (\(command))") }
            let socket = try context.makeSocket(.req)
            try socket.setOption(.linger, 0)
            try socket.setOption(.receiveTimeout, 200)
            try socket.connect(command)
            try socket.send([Data(#"{"op":"count"}"#.utf8)])
            if let reply = try socket.receive(), reply.last.map({ !$0.isEmpty }) == true {
                return
            }
        }
        throw BenchError("countries serve did not answer on \(command) within 10 s")
    }

    func stop() { child.stop() }
}
