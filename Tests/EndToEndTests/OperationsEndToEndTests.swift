import Foundation
@preconcurrency import Glibc
import Metrics
import TestSupport
import Testing

/// What an operator scrapes and reads (docs/OPERATIONS.md): `serve --metrics` (strict
/// Prometheus text, health and readiness), a real Prometheus scraping it, and the request
/// fields of `--log-format json`.
@Suite(.serialized) struct OperationsEndToEndTests {
    /// One whole GET with curl: the HTTP status and the body.
    static func fetch(_ url: String) throws -> (status: Int, body: String) {
        let run = try ChildProcess.run(
            "/usr/bin/curl", ["-s", "--max-time", "10", "-w", "\n%{http_code}", url])
        var lines = run.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        let status = Int(lines.popLast() ?? "") ?? 0
        return (status, lines.joined(separator: "\n"))
    }

    /// A service with `--metrics` on a free loopback port, and that port's base URL.
    static func serviceWithMetrics(_ sandbox: Sandbox, options: [String] = []) throws -> (Service, String) {
        let port = try freeTCPPort()
        let service = try Service(
            in: sandbox, options: ["--in-memory", "--metrics", "127.0.0.1:\(port)"] + options)
        return (service, "http://127.0.0.1:\(port)")
    }

    @Test func metricsParseStrictlyAndCountRequestsByOp() throws {
        let sandbox = try Sandbox()
        let (service, base) = try Self.serviceWithMetrics(sandbox)
        defer { service.stop(signal: SIGKILL) }
        for name in ["France", "Spain", "France"] {
            #expect(try service.run(["toggle", name]).exitCode == 0)
        }
        #expect(try service.run(["toggle", "Atlantis"]).exitCode != 0)

        var parsed: ExpositionParser?
        let counted = try eventually(within: .seconds(10)) {
            let page = try Self.fetch(base + "/metrics")
            guard page.status == 200 else { return false }
            // Every scrape parses strictly, not only the last.
            let metrics = try ExpositionParser(page.body)
            parsed = metrics
            // The snapshot is up to 500 ms old: wait for the last answer, the refusal.
            return metrics.value("countries_requests_total", ["op": "toggle", "code": "ok"]) == 3
                && metrics.value("countries_requests_total", ["op": "toggle", "code": "not_found"]) == 1
        }
        let metrics = try #require(parsed)
        #expect(counted, "\(metrics.samples)")
        #expect(metrics.value("countries_requests_total", ["op": "toggle", "code": "not_found"]) == 1)
        #expect(metrics.value("countries_seq") == 3)
        #expect(metrics.value("countries_ready") == 1)
        #expect(metrics.value("countries_commit_duration_seconds_count") == 3)
        #expect(metrics.value("countries_commit_changes_bucket", ["le": "+Inf"]) == 3)
        #expect(metrics.kinds["countries_commit_duration_seconds"] == .histogram)
        #expect(metrics.kinds["countries_requests_total"] == .counter)
        #expect(metrics.value("countries_request_ids_forgotten_young_total") == 0)
        #expect(metrics.kinds["countries_request_ids_forgotten_young_total"] == .counter)

        #expect(try Self.fetch(base + "/healthz") == (200, "alive\n"))
        #expect(try Self.fetch(base + "/readyz") == (200, "ready\n"))
        #expect(try Self.fetch(base + "/").status == 404)
    }

    @Test func metricsOnANonLoopbackAddressNeedInsecure() throws {
        let sandbox = try Sandbox()
        let refused = try Countries.run(
            [
                "serve", "--in-memory", "--command", sandbox.commandEndpoint, "--events",
                sandbox.eventsEndpoint,
            ]
                + ["--metrics", "0.0.0.0:0"])
        #expect(refused.exitCode == 64, "\(refused)")
        #expect(
            refused.stderr.contains("is not loopback") && refused.stderr.contains("--insecure"), "\(refused)")
        let malformed = try Countries.run(["serve", "--in-memory", "--metrics", "9464"])
        #expect(malformed.exitCode == 64 && malformed.stderr.contains("127.0.0.1:9464"), "\(malformed)")
    }

    @Test func webAnswersMetricsAndIsReadyWhileLive() throws {
        let sandbox = try Sandbox()
        let service = try Service(in: sandbox)
        defer { service.stop(signal: SIGKILL) }
        #expect(try service.run(["toggle", "France"]).exitCode == 0)
        let web = try WebEndToEndTests.Web(following: service)
        defer { web.stop() }
        #expect(
            try eventually(within: .seconds(10)) { try Self.fetch(web.base + "/readyz") == (200, "ready\n") })
        let metrics = try ExpositionParser(try Self.fetch(web.base + "/metrics").body)
        #expect(metrics.value("countries_ready") == 1)
        #expect(metrics.value("countries_seq") == 1)
        #expect(try Self.fetch(web.base + "/healthz") == (200, "alive\n"))

        service.stop(signal: SIGKILL)
        var answer = (status: 0, body: "")
        #expect(
            try eventually(within: .seconds(10)) {
                answer = try Self.fetch(web.base + "/readyz")
                return answer.status == 503
            }, "\(answer)")
        #expect(answer.body.hasPrefix("not ready: the table is stale"), "\(answer)")
        #expect(try Self.fetch(web.base + "/healthz").status == 200, "alive, if not ready")
    }

    @Test func relayCountsWhatItForwardsAndIsReadyWhileUpstreamSpeaks() throws {
        let sandbox = try Sandbox()
        let service = try Service(in: sandbox)
        defer { service.stop(signal: SIGKILL) }
        let port = try freeTCPPort()
        let relayEndpoint = sandbox.scratch.ipc("relay")
        let relay = try Countries.start([
            "relay", "--from", sandbox.eventsEndpoint, "--bind", relayEndpoint, "--metrics",
            "127.0.0.1:\(port)",
        ])
        defer { relay.stop(signal: SIGKILL) }
        let base = "http://127.0.0.1:\(port)"
        #expect(
            relay.stderr.waitFor(
                timeout: .seconds(10) * testSlowdown, { $0.contains("serving metrics at \(base)") }) != nil)
        let subscriber = try Countries.start(["events", "--events", relayEndpoint])
        defer { subscriber.stop(signal: SIGKILL) }
        #expect(try eventually(within: .seconds(10)) { try Self.fetch(base + "/readyz") == (200, "ready\n") })
        var metrics: ExpositionParser?
        let counted = try eventually(within: .seconds(10)) {
            _ = try service.run(["toggle", "France"])
            let parsed = try ExpositionParser(try Self.fetch(base + "/metrics").body)
            metrics = parsed
            return parsed.value("countries_relay_forwarded_total", ["topic": "country.changed"]) ?? 0 >= 1
                && parsed.value("countries_subscribers") == 1
        }
        #expect(counted, "\(String(describing: metrics?.samples))")
        #expect(metrics?.value("countries_relay_forwarded_total", ["topic": "heartbeat"]) ?? 0 >= 1)

        service.stop(signal: SIGKILL)
        var answer = (status: 0, body: "")
        #expect(
            try eventually(within: .seconds(10)) {
                answer = try Self.fetch(base + "/readyz")
                return answer.status == 503
            }, "\(answer)")
        #expect(answer.body.contains("nothing received from upstream"), "\(answer)")
    }

    /// Replicated mode: the etcd gauges come from the same status a `status` request gets, and a
    /// replica that loses its quorum is not ready, and says why.
    @Test(
        .enabled(if: EtcdCluster.isAvailable, "etcd is not installed"),
        .hangGuard())
    func aReplicaWithoutQuorumIsNotReady() throws {
        let port = try freeTCPPort()
        let base = "http://127.0.0.1:\(port)"
        let replicas = try ReplicationEndToEndTests.Replicas(
            count: 1, options: ["--metrics", "127.0.0.1:\(port)"])
        defer { replicas.stop() }
        let service = try #require(replicas.services.first)
        #expect(try service.run(["toggle", "France"]).exitCode == 0)
        var metrics: ExpositionParser?
        let live = try eventually(within: .seconds(10)) {
            let parsed = try ExpositionParser(try Self.fetch(base + "/metrics").body)
            metrics = parsed
            return parsed.value("countries_seq") == 1 && parsed.value("countries_etcd_quorum") == 1
        }
        #expect(live, "\(String(describing: metrics?.samples))")
        #expect(metrics?.value("countries_etcd_members") == 1)
        #expect(metrics?.samples.contains { $0.name == "countries_etcd_leader" && $0.value == 1 } == true)
        #expect(metrics?.value("countries_publication_lag_seconds") != nil)
        #expect(try Self.fetch(base + "/readyz") == (200, "ready\n"))

        replicas.etcd.kill(member: 0)
        var answer = (status: 0, body: "")
        #expect(
            try eventually(within: .seconds(20)) {
                answer = try Self.fetch(base + "/readyz")
                return answer.status == 503
            }, "\(answer)")
        #expect(answer.body.contains("quorum") || answer.body.contains("etcd"), "\(answer)")
        let after = try ExpositionParser(try Self.fetch(base + "/metrics").body)
        #expect(after.value("countries_ready") == 0)
        #expect(after.value("countries_etcd_quorum") == 0)
    }

    @Test func debugJSONLogsCarryEachRequestsFields() throws {
        let sandbox = try Sandbox()
        let service = try Service(
            in: sandbox, options: ["--in-memory", "--log-level", "debug", "--log-format", "json"])
        defer { service.stop(signal: SIGKILL) }
        #expect(try service.run(["toggle", "France"]).exitCode == 0)
        #expect(try service.run(["toggle", "Atlantis"]).exitCode != 0)
        // A retry under an id already applied: its line says it was replayed, and where.
        #expect(try service.run(["toggle", "Italy", "--id", "retried-1"]).exitCode == 0)
        #expect(try service.run(["toggle", "Italy", "--id", "retried-1"]).exitCode == 0)
        // The same id for another change: a conflict, counted as the refusal it is.
        #expect(try service.run(["toggle", "Spain", "--id", "retried-1"]).exitCode != 0)
        let stopped = try #require(service.stop(signal: SIGTERM))
        var toggles: [[String: Any]] = []
        for line in stopped.stderr.split(separator: "\n") {
            let object = try jsonObject(String(line))
            #expect(object["time"] is String && object["level"] is String && object["message"] is String)
            if object["op"] as? String == "toggle" { toggles.append(object) }
            // A client's mistake is its own request line, not the operator's warning.
            #expect(object["level"] as? String != "warning", "\(line)")
        }
        #expect(toggles.count == 5, "\(stopped.stderr)")
        let first = try #require(toggles.first)
        #expect(first["level"] as? String == "debug")
        #expect(first["message"] as? String == "request")
        #expect(first["code"] as? String == "ok")
        #expect(first["seq"] as? Int == 1)
        #expect((first["id"] as? String)?.isEmpty == false)
        #expect(first["duration_ms"] is Double || first["duration_ms"] is Int)
        #expect(toggles[1]["code"] as? String == "not_found")
        #expect(toggles[2]["seq"] as? Int == 2 && toggles[2]["replayed"] == nil)
        #expect(toggles[3]["code"] as? String == "ok")
        #expect(toggles[3]["seq"] as? Int == 2, "the replay names the seq it was applied at")
        #expect(toggles[3]["replayed"] as? String == "yes")
        #expect(toggles[4]["code"] as? String == "conflict")
        #expect(toggles[4]["replayed"] == nil)
    }

    /// A real Prometheus (Debian's, run here with a config of its own, never the system
    /// service) scrapes the service every second; its query API gives back what the service
    /// counted.
    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: "/usr/bin/prometheus"),
            "/usr/bin/prometheus is not installed (scripts/bootstrap installs it); the strict parse of /metrics still runs"
        ))
    func prometheusScrapesTheService() throws {
        let sandbox = try Sandbox()
        let (service, base) = try Self.serviceWithMetrics(sandbox)
        defer { service.stop(signal: SIGKILL) }
        let target = base.dropFirst("http://".count)
        let config = sandbox.file("prometheus.yml")
        try """
        global:
          scrape_interval: 1s
          evaluation_interval: 1s
        scrape_configs:
          - job_name: countries
            static_configs:
              - targets: ['\(target)']

        """.write(toFile: config, atomically: true, encoding: .utf8)
        let port = try freeTCPPort()
        let prometheus = try ChildProcess(
            "/usr/bin/prometheus",
            [
                "--config.file", config, "--storage.tsdb.path", sandbox.file("tsdb"),
                "--web.listen-address", "127.0.0.1:\(port)",
            ])
        defer { prometheus.stop(signal: SIGTERM, grace: .seconds(10) * testSlowdown) }
        let toggles = 5
        for index in 0..<toggles {
            #expect(try service.run(["toggle", "\(index % 3)"]).exitCode == 0)
        }

        /// The single value of `query`, as Prometheus answers it now.
        func query(_ query: String) throws -> String? {
            let encoded = query.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? query
            let answer = try Self.fetch("http://127.0.0.1:\(port)/api/v1/query?query=\(encoded)")
            guard answer.status == 200,
                let object = try? JSONSerialization.jsonObject(with: Data(answer.body.utf8))
                    as? [String: Any],
                let data = object["data"] as? [String: Any], let result = data["result"] as? [[String: Any]],
                let value = result.first?["value"] as? [Any]
            else { return nil }
            return value.last as? String
        }
        let scraped = try eventually(within: .seconds(30), every: .milliseconds(250)) {
            try query("countries_seq") == "\(toggles)"
        }
        #expect(scraped, "prometheus: \(prometheus.stderr.text.suffix(2000))")
        #expect(try query(#"countries_requests_total{op="toggle",code="ok"}"#) == "\(toggles)")
        #expect(try query(#"up{job="countries"}"#) == "1")
        #expect(try query("countries_commit_duration_seconds_count") == "\(toggles)")
    }
}
