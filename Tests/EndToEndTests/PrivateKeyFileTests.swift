import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A secret key file open to group or others is refused by `serve`, `relay` and the clients
/// (exit 78, saying `chmod 600 FILE`), as ssh refuses such a private key. See docs/SECURITY.md.
@Suite(.hangGuard())
struct PrivateKeyFileTests {
    @Test(arguments: [0o640, 0o644, 0o604, 0o620])
    func serveRefusesASharedSecretKey(mode: Int) throws {
        let workspace = try SecurityWorkspace()
        defer { workspace.remove() }
        _ = try SecurityKeys(workspace)
        chmod("\(workspace.path)/server.key", mode_t(mode))
        let serve = try securityRun(
            ["serve", "--in-memory", "--curve-key", "server.key", "--allow", "rw"], in: workspace)
        #expect(serve.code == 78, "\(serve.stderr)")
        #expect(serve.stderr.contains("server.key"), "\(serve.stderr)")
        #expect(serve.stderr.contains("mode 0\(String(mode, radix: 8))"), "\(serve.stderr)")
        #expect(serve.stderr.contains("chmod 600 server.key"), "\(serve.stderr)")
    }

    @Test func relayRefusesASharedSecretKey() throws {
        let workspace = try SecurityWorkspace()
        defer { workspace.remove() }
        _ = try SecurityKeys(workspace)
        chmod("\(workspace.path)/server.key", 0o644)
        let relay = try securityRun(
            [
                "relay", "--from", "tcp://127.0.0.1:\(try freeTCPPort())", "--bind",
                "tcp://127.0.0.1:\(try freeTCPPort())", "--curve-key", "server.key", "--allow", "rw",
            ], in: workspace)
        #expect(relay.code == 78, "\(relay.stderr)")
        #expect(relay.stderr.contains("chmod 600 server.key"), "\(relay.stderr)")
    }

    @Test func clientsRefuseASharedSecretKeyAndAcceptItOnceFixed() throws {
        let workspace = try SecurityWorkspace()
        defer { workspace.remove() }
        let keys = try SecurityKeys(workspace)
        let service = try SecurityService(workspace)
        defer { service.stop() }
        let alice = "\(workspace.path)/rw/alice.key"
        chmod(alice, 0o644)
        let commands = ["--command", service.command]
        for subcommand in [
            ["list"] + commands, ["toggle", "France"] + commands, ["status"] + commands,
            ["events", "--events", service.events, "--count", "1"],
        ] {
            let client = try securityRun(subcommand + keys.client("rw/alice"), in: workspace)
            #expect(client.code == 78, "\(subcommand): \(client.stderr)")
            #expect(client.stderr.contains("chmod 600 \(alice)"), "\(subcommand): \(client.stderr)")
        }
        chmod(alice, 0o600)
        let fixed = try securityRun(
            ["list", "--command", service.command] + keys.client("rw/alice"), in: workspace)
        #expect(fixed.code == 0, "\(fixed.stderr)")
    }

    @Test func aSharedPublicKeyIsFine() throws {
        let workspace = try SecurityWorkspace()
        defer { workspace.remove() }
        let keys = try SecurityKeys(workspace)
        let service = try SecurityService(workspace)
        defer { service.stop() }
        #expect(PrivateKeyFileTests.mode(of: "\(workspace.path)/server.pub") == 0o644)
        let client = try securityRun(
            ["count", "--command", service.command] + keys.client("rw/alice"), in: workspace)
        #expect(client.code == 0, "\(client.stderr)")
    }

    static func mode(of path: String) -> mode_t? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return status.st_mode & 0o777
    }
}
