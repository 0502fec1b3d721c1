import Foundation
import TestSupport
import Testing
import ZeroMQ

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

@Suite(
    "Security end to end: keygen, protected mode, CURVE clients, SIGHUP, tmux",
    .enabled(if: Curve.isAvailable))
struct SecurityEndToEndTests {
    // MARK: Keys

    @Test(
        "keygen writes .key 0600 and .pub 0644, refuses to overwrite without --force, and the keys parse back"
    )
    func keygenFiles() throws {
        let workspace = try SecurityWorkspace()
        defer { workspace.remove() }
        let first = try securityRun(["keygen", "alice"], in: workspace)
        #expect(first.code == 0)
        #expect(try securityMode(of: "\(workspace.path)/alice.key") == 0o600)
        #expect(try securityMode(of: "\(workspace.path)/alice.pub") == 0o644)

        let secret = try CurveCertificate.parse(workspace.read("alice.key"))
        let shared = try CurveCertificate.parse(workspace.read("alice.pub"))
        #expect(secret.secretKey != nil)
        #expect(shared.secretKey == nil)
        #expect(!workspace.read("alice.pub").contains("secret-key"))
        #expect(shared.publicKey == secret.publicKey)
        #expect(try Curve.publicKey(forSecretKey: secret.secretKey ?? "") == shared.publicKey)
        #expect(first.stdout.contains(shared.publicKey))

        let again = try securityRun(["keygen", "alice"], in: workspace)
        #expect(again.code == 1)
        #expect(again.stderr.contains("alice.key already exists") && again.stderr.contains("--force"))
        #expect(try CurveCertificate.parse(workspace.read("alice.key")) == secret)

        // Only the .pub left behind still blocks a new pair.
        try FileManager.default.removeItem(atPath: "\(workspace.path)/alice.key")
        #expect(try securityRun(["keygen", "alice"], in: workspace).code == 1)

        let forced = try securityRun(["keygen", "alice", "--force"], in: workspace)
        #expect(forced.code == 0)
        let replaced = try CurveCertificate.parse(workspace.read("alice.key"))
        #expect(replaced.publicKey != secret.publicKey)
        #expect(try CurveCertificate.parse(workspace.read("alice.pub")).publicKey == replaced.publicKey)
        #expect(try securityMode(of: "\(workspace.path)/alice.key") == 0o600)
        #expect(try securityMode(of: "\(workspace.path)/alice.pub") == 0o644)
    }

    @Test("A .pub given as --curve-key is refused with a clear message, by a client and by serve")
    func publicKeyAsSecret() throws {
        let workspace = try SecurityWorkspace()
        defer { workspace.remove() }
        let keys = try SecurityKeys(workspace, readWrite: ["alice"], readOnly: [], others: [])
        let client = try securityRun(
            ["list", "--curve-key", "rw/alice.pub", "--server-key", "server.pub"], in: workspace)
        #expect(client.code == 78)
        #expect(client.stderr.contains("rw/alice.pub holds only a public key"))
        let serve = try securityRun(
            ["serve", "--in-memory", "--curve-key", "server.pub", "--allow", "rw"], in: workspace)
        #expect(serve.code == 78)
        #expect(serve.stderr.contains("server.pub holds only a public key"))
        _ = keys
    }

    @Test("serve --curve-key without --allow, and a client key without a server key, are usage errors")
    func usageErrors() throws {
        let workspace = try SecurityWorkspace()
        defer { workspace.remove() }
        _ = try SecurityKeys(workspace, readWrite: ["alice"], readOnly: [], others: [])
        let serve = try securityRun(["serve", "--in-memory", "--curve-key", "server.key"], in: workspace)
        #expect(serve.code == 64)
        #expect(serve.stderr.contains("--allow"))
        let allowOnly = try securityRun(["serve", "--in-memory", "--allow", "rw"], in: workspace)
        #expect(allowOnly.code == 64)
        let client = try securityRun(["list", "--curve-key", "rw/alice.key"], in: workspace)
        #expect(client.code == 64)
        #expect(client.stderr.contains("--server-key"))
    }

    // MARK: Protected mode

    @Test(
        "A plaintext wildcard endpoint is refused (64, naming it and --insecure); --insecure or CURVE starts")
    func protectedMode() throws {
        let workspace = try SecurityWorkspace()
        defer { workspace.remove() }
        let keys = try SecurityKeys(workspace, readWrite: ["alice"], readOnly: [], others: [])
        let port = try freeTCPPort()
        let events = "tcp://127.0.0.1:\(try freeTCPPort())"
        let refused = try securityRun(
            ["serve", "--in-memory", "--command", "tcp://0.0.0.0:\(port)", "--events", events], in: workspace)
        #expect(refused.code == 64)
        #expect(refused.stderr.contains("tcp://0.0.0.0:\(port)"))
        #expect(refused.stderr.contains("--insecure"))
        #expect(refused.stderr.contains("--curve-key"))

        do {
            let insecure = try SecurityService(
                workspace, curve: false, extra: ["--insecure"], command: "tcp://0.0.0.0:\(port)",
                events: events)
            defer { insecure.stop() }
            let list = try securityRun(["count", "--command", "tcp://127.0.0.1:\(port)"], in: workspace)
            #expect(list.code == 0 && list.stdout == "8\n")
        }
        let curve = try SecurityService(workspace, command: "tcp://0.0.0.0:\(port)", events: events)
        defer { curve.stop() }
        let list = try securityRun(
            ["count", "--command", "tcp://127.0.0.1:\(port)"] + keys.client("rw/alice"),
            in: workspace)
        #expect(list.code == 0 && list.stdout == "8\n")
    }

    @Test("serve creates its ipc endpoints owner-only (0600)")
    func ipcPermissions() throws {
        let workspace = try SecurityWorkspace()
        defer { workspace.remove() }
        let service = try SecurityService(
            workspace, curve: false, command: "ipc://\(workspace.path)/c.sock",
            events: "ipc://\(workspace.path)/e.sock")
        defer { service.stop() }
        #expect(try securityMode(of: "\(workspace.path)/c.sock") == 0o600)
        #expect(try securityMode(of: "\(workspace.path)/e.sock") == 0o600)
        let count = try securityRun(["count", "--command", service.command], in: workspace)
        #expect(count.code == 0)
    }

    // MARK: CURVE clients

    @Test("An allowed key changes; a read-only key lists and gets events but is forbidden to change")
    func allowedAndReadOnly() throws {
        let workspace = try SecurityWorkspace()
        defer { workspace.remove() }
        let keys = try SecurityKeys(workspace)
        let service = try SecurityService(workspace)
        defer { service.stop() }

        // The read-only subscriber: `events` prints the first change it sees, then exits.
        let watcher = try SecurityProcess(
            ["events", "--json", "--count", "1"] + service.endpoints + keys.client("ro/bob"), in: workspace)
        defer { watcher.stop() }

        var toggles = 0
        let seen = try eventually(within: .seconds(8)) {
            let toggle = try securityRun(
                ["toggle", "Italy"] + service.quickClient + keys.client("rw/alice"), in: workspace)
            #expect(toggle.code == 0, "\(toggle.stderr)")
            toggles += 1
            return watcher.wait(timeout: .milliseconds(400)) == 0
        }
        #expect(seen, "the read-only subscriber saw no event: \(watcher.stderr.text)")
        #expect(watcher.stdout.text.contains("\"name\":\"Italy\""))

        let list = try securityRun(
            ["list", "--json"] + service.quickClient + keys.client("ro/bob"), in: workspace)
        #expect(list.code == 0)
        #expect(list.stdout.contains("\"seq\":\(toggles)"))

        let refused = try securityRun(
            ["toggle", "France"] + service.quickClient + keys.client("ro/bob"), in: workspace)
        #expect(refused.code == 1)
        #expect(refused.stderr.contains("may read and subscribe but not change"))
        let json = try securityRun(
            ["toggle", "France", "--json"] + service.quickClient + keys.client("ro/bob"), in: workspace)
        #expect(json.code == 1)
        #expect(json.stdout.contains("\"code\":\"forbidden\""))
        let after = try securityRun(
            ["count", "--json"] + service.quickClient + keys.client("rw/alice"), in: workspace)
        #expect(after.stdout.contains("\"seq\":\(toggles)"))  // Nothing changed.
    }

    @Test(
        "An unknown key, a plaintext client and a wrong server key get no reply (69, no hang) and are logged")
    func strangers() throws {
        let workspace = try SecurityWorkspace()
        defer { workspace.remove() }
        let keys = try SecurityKeys(workspace)
        let service = try SecurityService(workspace)
        defer { service.stop() }

        let wrongServer = ["--curve-key", "rw/alice.key", "--server-key", "others/eve.pub"]
        for (who, options) in [
            ("unknown key", keys.client("others/eve")), ("plaintext", []), ("wrong server key", wrongServer),
        ] {
            let run = try securityRun(
                ["list"] + service.quickClient + options, in: workspace, limit: .seconds(5))
            #expect(run.code == 69, "\(who): \(run.stderr)")
            #expect(run.stderr.contains("no reply from \(service.command) after 2 tries"), "\(who)")
            #expect(run.elapsed < .seconds(3) * testSlowdown, "\(who) took \(run.elapsed)")
            #expect(run.stdout.isEmpty)
        }
        let eveKey = try keys.certificate("others/eve.pub").publicKey
        #expect(eventually { service.log.contains("refused connection: key \(eveKey)") })
        #expect(
            service.log.contains(
                "refused connection: a client on \(service.command) failed the CURVE handshake"))
    }

    @Test(
        "A plaintext subscriber and an unknown key's subscriber get nothing, not even a heartbeat, and are logged"
    )
    func strangerSubscribers() throws {
        let workspace = try SecurityWorkspace()
        defer { workspace.remove() }
        let keys = try SecurityKeys(workspace)
        // Its own service: the refusal log is rate-limited, so other strangers could crowd these
        // out.
        let service = try SecurityService(workspace)
        defer { service.stop() }
        let context = try Context()
        defer { context.terminate() }
        let eve = try keys.certificate("others/eve.key")
        let serverKey = try keys.certificate("server.pub").publicKey
        var subscribers: [Socket] = []
        defer { for socket in subscribers { socket.close() } }
        for secure in [false, true] {
            let socket = try context.makeSocket(.sub)
            try socket.setOption(.linger, 0)
            try socket.setOption(.receiveTimeout, 100)
            if secure {
                try socket.setOption(.curveServerKey, serverKey)
                try socket.setOption(.curvePublicKey, eve.publicKey)
                try socket.setOption(.curveSecretKey, eve.secretKey ?? "")
            }
            try socket.subscribe("")
            try socket.connect(service.events)
            subscribers.append(socket)
            if !secure {
                #expect(
                    eventually {
                        service.log.contains(
                            "refused connection: a client on \(service.events) failed the CURVE handshake")
                    }, "\(service.log)")
            }
        }
        let toggle = try securityRun(
            ["toggle", "Spain"] + service.quickClient + keys.client("rw/alice"), in: workspace)
        #expect(toggle.code == 0)
        let deadline = ContinuousClock.now + .seconds(1)  // unscaled: nothing may come in it
        while ContinuousClock.now < deadline {
            for socket in subscribers {
                #expect(try socket.receive() == nil, "a refused subscriber received a message")
            }
        }
    }

    @Test(
        "SIGHUP adds a key (new clients get in) and removes one (new clients are refused; open connections stay)"
    )
    func sighupReload() throws {
        let workspace = try SecurityWorkspace()
        defer { workspace.remove() }
        let keys = try SecurityKeys(workspace, readWrite: ["alice"], readOnly: [], others: ["carol"])
        let service = try SecurityService(workspace)
        defer { service.stop() }
        let reloads = { service.log.components(separatedBy: "allow-lists reloaded").count - 1 }

        #expect(
            try securityRun(["count"] + service.quickClient + keys.client("others/carol"), in: workspace).code
                == 69)
        try FileManager.default.copyItem(
            atPath: "\(workspace.path)/others/carol.pub", toPath: "\(workspace.path)/rw/carol.pub")
        service.process.signal(SIGHUP)
        #expect(eventually { reloads() == 1 })
        #expect(service.log.contains("(2 read-write, 0 read-only keys)"))
        let added = try securityRun(
            ["toggle", "France"] + service.quickClient + keys.client("others/carol"), in: workspace)
        #expect(added.code == 0, "\(added.stderr)")

        // Alice holds a connection open across her removal.
        let context = try Context()
        defer { context.terminate() }
        let alice = try keys.certificate("rw/alice.key")
        let socket = try context.makeSocket(.req)
        defer { socket.close() }
        try socket.setOption(.linger, 0)
        try socket.setOption(.receiveTimeout, Int32(3_000 * testSlowdown))
        try socket.setOption(.curveServerKey, try keys.certificate("server.pub").publicKey)
        try socket.setOption(.curvePublicKey, alice.publicKey)
        try socket.setOption(.curveSecretKey, alice.secretKey ?? "")
        try socket.connect(service.command)
        #expect(try socket.send([Data(#"{"op":"count"}"#.utf8)]))
        #expect(try socket.receive() != nil)

        try FileManager.default.removeItem(atPath: "\(workspace.path)/rw/alice.pub")
        service.process.signal(SIGHUP)
        #expect(eventually { reloads() == 2 }, "the service's log: \(service.log)")
        let removed = try securityRun(
            ["count"] + service.quickClient + keys.client("rw/alice"), in: workspace)
        #expect(removed.code == 69)
        #expect(eventually { service.log.contains("refused connection: key \(alice.publicKey)") })

        // What SIGHUP does not do: the connection made before the removal still works, with its
        // access.
        #expect(try socket.send([Data(#"{"op":"toggle","name":"Spain"}"#.utf8)]))
        let reply = try socket.receive().map { String(decoding: $0.last ?? Data(), as: UTF8.self) }
        #expect(reply?.contains("\"ok\":true") == true, "\(reply ?? "no reply")")
        #expect(service.process.isRunning, "the service's log: \(service.log)")
    }

    // MARK: Terminal views

    @Test(
        "watch with CURVE keys (options, then environment) shows live rows and an allowed client's toggle",
        .enabled(if: SecurityTmux.isAvailable))
    func watchInTmux() throws {
        let workspace = try SecurityWorkspace()
        defer { workspace.remove() }
        let keys = try SecurityKeys(workspace)
        let service = try SecurityService(workspace)
        defer { service.stop() }
        let watch = [CountriesBinary.path, "watch", "--heartbeat-ms", "100"] + service.endpoints
        let viaOptions = securityShellQuote(watch + keys.client("ro/bob"))
        let viaEnvironment = securityShellQuote(
            [
                "env", "COUNTRIES_CURVE_KEY=\(workspace.path)/ro/bob.key",
                "COUNTRIES_SERVER_KEY=\(workspace.path)/server.pub",
            ] + watch)
        for (index, (how, command)) in [("options", viaOptions), ("environment", viaEnvironment)].enumerated()
        {
            let pane = try SecurityTmux(command, in: workspace)
            defer { pane.kill() }
            #expect(
                eventually {
                    pane.capture().contains("live · seq \(index)") && pane.capture().contains("Italy")
                },
                "\(how): \(pane.capture())")
            let country = ["Italy", "Spain"][index]
            let toggle = try securityRun(
                ["toggle", country] + service.quickClient + keys.client("rw/alice"), in: workspace)
            #expect(toggle.code == 0)
            #expect(
                eventually {
                    let screen = pane.capture()
                    return screen.contains("live · seq \(index + 1)") && screen.contains("✓ \(country)")
                }, "\(how): \(pane.capture())")
        }
        // The unknown key's view never goes live.
        let stranger = try SecurityTmux(securityShellQuote(watch + keys.client("others/eve")), in: workspace)
        defer { stranger.kill() }
        Thread.sleep(forTimeInterval: 1)
        #expect(!stranger.capture().contains("live ·"), "\(stranger.capture())")
        #expect(!stranger.capture().contains("Italy"), "\(stranger.capture())")
    }
}

private func securityMode(of path: String) throws -> Int {
    var status = stat()
    guard stat(path, &status) == 0 else { throw SecurityHarnessError("stat \(path) failed") }
    return Int(status.st_mode & 0o777)
}
