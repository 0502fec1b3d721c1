import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing
import ZeroMQ

/// A server started from a shell with the usual soft limit of open files (1,024) and a higher
/// hard one: each subscriber holds a descriptor, and past the soft limit libzmq 4.3 aborted
/// the service on an ipc accept (`Too many open files (src/ipc_listener.cpp:325)`), its list
/// in memory lost. `serve` and `relay` raise the soft limit to the hard one at start.
@Suite struct DescriptorLimitEndToEndTests {
    static let softLimit = 64
    static let subscribers = 200

    @Test(.hangGuard()) func subscribersPastTheShellsSoftLimitDoNotAbortTheService() throws {
        var limit = rlimit()
        try #require(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0)
        try #require(
            Int(clamping: limit.rlim_max) > 2 * Self.subscribers, "the hard limit here is too low to show it")
        let sandbox = try Sandbox()
        let service = try ChildProcess(
            "/bin/sh",
            [
                "-c",
                "ulimit -Sn \(Self.softLimit) && exec \"$0\" serve --in-memory --command \"$1\" --events \"$2\"",
                CountriesBinary.path, sandbox.commandEndpoint, sandbox.eventsEndpoint,
            ])
        defer { service.stop() }
        try #require(
            eventually(within: .seconds(10) * testSlowdown) {
                (try? Countries.run(["count"] + sandbox.quickClient))?.exitCode == 0
            })
        let limits = try String(contentsOfFile: "/proc/\(service.pid)/limits", encoding: .utf8)
        let openFiles = try #require(limits.split(separator: "\n").first { $0.hasPrefix("Max open files") })
        let fields = openFiles.split(separator: " ", omittingEmptySubsequences: true)
        #expect(fields[3] == fields[4], "the soft limit is raised to the hard one: \(openFiles)")

        let context = try Context()
        var sockets: [Socket] = []
        defer {
            for socket in sockets { socket.close() }
            context.terminate()
        }
        for _ in 0..<Self.subscribers {
            let socket = try context.makeSocket(.sub)
            try socket.setOption(.linger, 0)
            try socket.setOption(.receiveTimeout, Int32(5_000 * testSlowdown))
            try socket.subscribe("country.")
            try socket.connect(sandbox.eventsEndpoint)
            sockets.append(socket)
        }
        // Every subscriber is served: a change reaches the last one to connect.
        let last = try #require(sockets.last)
        try #require(
            eventually(within: .seconds(10) * testSlowdown) {
                _ = try? Countries.run(["toggle", "France"] + sandbox.quickClient)
                return (try? last.receive(dontWait: true)) != nil
            })
        #expect(service.isRunning, "the service ended: \(service)")
        #expect(try Countries.run(["count"] + sandbox.quickClient).exitCode == 0)
    }
}
