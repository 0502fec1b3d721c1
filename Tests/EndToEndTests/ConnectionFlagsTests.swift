import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Issue 10: every subcommand that talks to a service takes the same connection options, so one
/// alias (`alias c='countries --command ... --events ... --curve-key ... --server-key ...'`-style)
/// works for all of them. Each one runs here with the whole set against a CURVE service.
@Suite(.serialized) struct ConnectionFlagsTests {
    /// The whole set, for a service with CURVE and no relay (so the events key is the service's).
    static func wholeSet(_ service: SecurityService, _ keys: SecurityKeys) -> [String] {
        service.endpoints + ["--timeout", "3000", "--retries", "2"] + keys.client("rw/alice")
            + ["--events-server-key", "\(keys.workspace.path)/server.pub"]
    }

    @Test(
        arguments: [
            ["list"], ["get", "0"], ["count"], ["toggle", "1"], ["set", "1", "--visited", "true"],
            ["add", "Narnia"], ["remove", "Narnia"], ["reset"], ["history", "--since", "0"], ["status"],
        ])
    func oneShotCommandsTakeTheWholeSet(_ arguments: [String]) throws {
        let workspace = try SecurityWorkspace()
        defer { workspace.remove() }
        let keys = try SecurityKeys(workspace)
        let service = try SecurityService(workspace)
        defer { service.stop() }
        if arguments[0] == "remove" {
            let added = try securityRun(["add", "Narnia"] + Self.wholeSet(service, keys), in: workspace)
            #expect(added.code == 0, "\(added.stderr)")
        }
        let run = try securityRun(arguments + Self.wholeSet(service, keys), in: workspace)
        #expect(run.code == 0, "countries \(arguments.joined(separator: " ")): \(run.stdout)\(run.stderr)")
        #expect(!run.stdout.isEmpty || arguments[0] == "history", "an empty history prints nothing")
    }

    @Test func eventsTakesTheWholeSet() throws {
        let workspace = try SecurityWorkspace()
        defer { workspace.remove() }
        let keys = try SecurityKeys(workspace)
        let service = try SecurityService(workspace)
        defer { service.stop() }
        let toggled = try securityRun(["toggle", "France"] + Self.wholeSet(service, keys), in: workspace)
        #expect(toggled.code == 0, "\(toggled.stderr)")
        let run = try securityRun(
            ["events", "--since", "0", "--count", "1"] + Self.wholeSet(service, keys), in: workspace)
        #expect(run.code == 0, "\(run.stderr)")
        #expect(run.stdout.contains("country.changed  2 France"), "\(run.stdout)")
    }

    @Test func watchTakesTheWholeSet() throws {
        let workspace = try SecurityWorkspace()
        defer { workspace.remove() }
        let keys = try SecurityKeys(workspace)
        let service = try SecurityService(workspace)
        defer { service.stop() }
        let watch = try SecurityProcess(
            ["watch", "--json", "--heartbeat-ms", "100"] + Self.wholeSet(service, keys), in: workspace)
        defer { watch.stop() }
        #expect(
            eventually { watch.stdout.text.contains("\"countries\"") || !watch.isRunning },
            "\(watch.stderr.text)")
        #expect(watch.isRunning, "watch exited: \(watch.stderr.text)")
        watch.signal(SIGTERM)
        #expect(watch.wait(timeout: .seconds(5)) == 0, "\(watch.stderr.text)")
    }

    @Test func onChangeTakesTheWholeSet() throws {
        let workspace = try SecurityWorkspace()
        defer { workspace.remove() }
        let keys = try SecurityKeys(workspace)
        let service = try SecurityService(workspace)
        defer { service.stop() }
        let marker = "\(workspace.path)/ran"
        let onChange = try SecurityProcess(
            ["on-change", "--initial", "--heartbeat-ms", "100"] + Self.wholeSet(service, keys)
                + ["--", "/bin/sh", "-c", "echo \"$COUNTRIES_EVENT\" >> \(marker)"],
            in: workspace)
        defer { onChange.stop() }
        #expect(
            eventually {
                FileManager.default.fileExists(atPath: marker) || !onChange.isRunning
            }, "\(onChange.stderr.text)")
        #expect(onChange.isRunning, "on-change exited: \(onChange.stderr.text)")
        onChange.signal(SIGTERM)
        #expect(onChange.wait(timeout: .seconds(5)) == 0, "\(onChange.stderr.text)")
    }

    @Test(.enabled(if: SecurityTmux.isAvailable)) func selectTakesTheWholeSet() throws {
        let workspace = try SecurityWorkspace()
        defer { workspace.remove() }
        let keys = try SecurityKeys(workspace)
        let service = try SecurityService(workspace)
        defer { service.stop() }
        let select = [CountriesBinary.path, "select", "--heartbeat-ms", "100"] + Self.wholeSet(service, keys)
        let pane = try SecurityTmux(securityShellQuote(select), in: workspace)
        defer { pane.kill() }
        #expect(
            eventually {
                pane.capture().contains("live · seq 0") && pane.capture().contains("Italy")
            },
            "\(pane.capture())")
    }
}
