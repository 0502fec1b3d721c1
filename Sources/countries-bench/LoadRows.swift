import CountriesCore
import Foundation
import LoadGeneration

/// The load sweeps' rows: the service beside the floors and Redis at each client count, the
/// paired rounds and replicated mode.
extension Bench {
    /// The rows of the load sweeps and paired rounds, each figure beside its baseline.
    func addLoadRows() {
        if let replicatedRun { replicatedRun.addRows(to: &report) }

        for round in pairedRounds {
            report.add(
                "target \(round.target.figure), paired round \(round.round)",
                round.target.throughput ? "toggles/s" : "p50", round.service,
                round.target.throughput ? "/s" : "µs",
                baseline: (round.target.baselineName, round.baseline),
                lowerIsBetter: !round.target.throughput)
        }

        for clients in configuration.clientCounts {
            let floorResult = floorResults[clients]
            let floorName = "floor"
            // Both Redis modes are reported the same way, against the floor.
            func addRedisRows(_ mode: String) {
                guard let result = redis[mode]?[clients] else { return }
                let name = "Redis appendfsync \(mode), \(clientsText(clients))"
                report.add(
                    name, "p50", result.latency.p50, "µs",
                    baseline: floorResult.map { (floorName, $0.latency.p50) })
                report.add(
                    name, "p99", result.latency.p99, "µs",
                    baseline: floorResult.map { (floorName, $0.latency.p99) })
                report.add(
                    name, "toggles/s", result.perSecond, "/s",
                    baseline: floorResult.map { (floorName, $0.perSecond) }
                )
                bars.append(
                    ChartBar(label: name, p50: result.latency.p50, p99: result.latency.p99, kind: "redis"))
            }
            if let result = toggles["in-memory"]?[clients] {
                let name = "toggle in-memory, \(clientsText(clients))"
                let isTarget = clients == 1
                report.add(
                    name, "p50", result.latency.p50, "µs",
                    baseline: floorResult.map { (floorName, $0.latency.p50) },
                    ratioLimit: isTarget ? 1.1 : nil, target: isTarget ? "≤ 1.1× floor" : nil)
                report.add(
                    name, "p99", result.latency.p99, "µs",
                    baseline: floorResult.map { (floorName, $0.latency.p99) })
                report.add(
                    name, "max", result.latency.max, "µs",
                    baseline: floorResult.map { (floorName, $0.latency.max) })
                report.add(
                    name, "toggles/s", result.perSecond, "/s",
                    baseline: floorResult.map { (floorName, $0.perSecond) }
                )
                if let cpu = serverCPU["in-memory"]?[clients] {
                    report.add(
                        name, "service CPU per toggle", cpu, "µs",
                        baseline: serverCPU["floor"]?[clients].map { ("floor server", $0) })
                }
                if clients == 16, let publishingFloor {
                    report.add(
                        name, "toggles/s", result.perSecond, "/s",
                        baseline: ("floor REQ/REP+PUB", publishingFloor.perSecond), ratioLimit: 0.9,
                        lowerIsBetter: false,
                        target: "≥ 0.9× floor REQ/REP+PUB")
                }
                bars.append(
                    ChartBar(label: name, p50: result.latency.p50, p99: result.latency.p99, kind: "countries")
                )
            }
            addRedisRows("no")
            if let result = toggles[Self.largestListLabel]?[clients] {
                let rows = Limits.maximumCountries
                let name = "toggle in-memory, largest list (\(rows) rows), \(clientsText(clients))"
                let eightRows = toggles["in-memory"]?[clients]
                report.add(
                    name, "p50", result.latency.p50, "µs",
                    baseline: eightRows.map { ("8 rows", $0.latency.p50) })
                report.add(
                    name, "toggles/s", result.perSecond, "/s",
                    baseline: eightRows.map { ("8 rows", $0.perSecond) }, lowerIsBetter: false)
            }
            if let result = toggles["durable"]?[clients] {
                let name = "toggle durable, \(clientsText(clients))"
                let always = redis["always"]?[clients]
                let baselineName = "Redis always"
                report.add(
                    name, "p50", result.latency.p50, "µs",
                    baseline: always.map { (baselineName, $0.latency.p50) })
                report.add(
                    name, "p99", result.latency.p99, "µs",
                    baseline: always.map { (baselineName, $0.latency.p99) })
                report.add(
                    name, "max", result.latency.max, "µs",
                    baseline: always.map { (baselineName, $0.latency.max) })
                report.add(
                    name, "toggles/s", result.perSecond, "/s",
                    baseline: always.map { (baselineName, $0.perSecond) },
                    lowerIsBetter: false)
                if clients == 1, let syncingFloor {
                    report.add(
                        name, "p50", result.latency.p50, "µs",
                        baseline: ("floor REQ/REP+fdatasync", syncingFloor.latency.p50), ratioLimit: 1.1,
                        target: "≤ 1.1× floor REQ/REP+fdatasync")
                }
                if clients == 16, let groupSyncingFloor {
                    report.add(
                        name, "toggles/s", result.perSecond, "/s",
                        baseline: (groupSyncName, groupSyncingFloor.perSecond), ratioLimit: 0.9,
                        lowerIsBetter: false,
                        target: "≥ 0.9× \(groupSyncName)")
                }
                // CPU per toggle moves far less with the machine's load than throughput does.
                if let cpu = serverCPU["durable"]?[clients] {
                    report.add(
                        name, "service CPU per toggle", cpu, "µs",
                        baseline: serverCPU["Redis always"]?[clients].map { ("Redis always", $0) })
                }
                // The clients share the two cores: what each costs its machine is part of the
                // ratio.
                if clients == 16, let cpu = result.clientCPUPerRequest {
                    report.add(
                        name, "client CPU per toggle", cpu, "µs",
                        baseline: always?.clientCPUPerRequest.map { ("Redis always", $0) })
                }
                bars.append(
                    ChartBar(label: name, p50: result.latency.p50, p99: result.latency.p99, kind: "countries")
                )
            }
            addRedisRows("always")
            if clients == 1, let syncingFloor, let always = redis["always"]?[clients] {
                report.add(
                    "floor REQ/REP+fdatasync, 1 client", "p50", syncingFloor.latency.p50, "µs",
                    baseline: ("Redis always", always.latency.p50))
            }
            if clients == 16, let groupSyncingFloor {
                let always = redis["always"]?[clients]
                let name = "\(groupSyncName), 16 clients"
                report.add(
                    name, "p50", groupSyncingFloor.latency.p50, "µs",
                    baseline: always.map { ("Redis always", $0.latency.p50) })
                report.add(
                    name, "toggles/s", groupSyncingFloor.perSecond, "/s",
                    baseline: always.map { ("Redis always", $0.perSecond) }, lowerIsBetter: false)
                if let cpu = serverCPU[groupSyncName]?[16] {
                    report.add(
                        name, "server CPU per toggle", cpu, "µs",
                        baseline: serverCPU["Redis always"]?[16].map { ("Redis always", $0) })
                }
                if let cpu = groupSyncingFloor.clientCPUPerRequest {
                    report.add(
                        name, "client CPU per toggle", cpu, "µs",
                        baseline: always?.clientCPUPerRequest.map { ("Redis always", $0) })
                }
            }
        }

        for clients in configuration.replicatedClientCounts {
            guard let result = replicated[clients] else { continue }
            let name = "toggle replicated (2 replicas, 3 etcd), \(clientsText(clients))"
            let durable = toggles["durable"]?[clients]
            let always = redis["always"]?[clients]
            if clients == 1 {
                report.add(
                    name, "p50", result.latency.p50, "µs",
                    baseline: durable.map { ("SQLite durable", $0.latency.p50) })
                report.add(
                    name, "p99", result.latency.p99, "µs",
                    baseline: durable.map { ("SQLite durable", $0.latency.p99) })
                bars.append(
                    ChartBar(label: name, p50: result.latency.p50, p99: result.latency.p99, kind: "countries")
                )
            }
            report.add(
                name, "toggles/s", result.perSecond, "/s",
                baseline: durable.map { ("SQLite durable", $0.perSecond) },
                note: always.map { String(format: "Redis always: %.0f/s", $0.perSecond) })
        }
    }
}

/// `1 client`, `16 clients`.
func clientsText(_ clients: Int) -> String { "\(clients) client\(clients == 1 ? "" : "s")" }
