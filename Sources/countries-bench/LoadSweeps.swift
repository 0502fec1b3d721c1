import CountriesCore
import Foundation
import LoadGeneration
import SystemSupport
import ZeroMQ

/// The load sweeps: the floors, Redis, the service in memory and durable, the paired target
/// rounds and replicated mode, each at its client counts.
extension Bench {
    /// The floors: REQ/REP echo at each client count, and with PUB at 16 clients.
    func measureFloors() {
        guard wanted("floor") || wanted("toggle") || wanted("redis") else { return }
        do {
            let server = try floorServer(.reply)
            defer { server.stop() }
            let requestSize = toggleRequest(index: 0).count
            for clients in configuration.clientCounts {
                progress("floor: REQ/REP echo, \(clients) client(s)")
                let (result, cpu) = cpuPerRequest(server.child, clients) {
                    floorLoad(server.command, clients: clients)
                }
                serverCPU["floor", default: [:]][clients] = cpu
                check(result, "floor")
                floorResults[clients] = result
                let name = "floor REQ/REP, \(clients) client\(clients == 1 ? "" : "s")"
                report.add(name, "p50", result.latency.p50, "µs")
                report.add(name, "p99", result.latency.p99, "µs")
                report.add(name, "max", result.latency.max, "µs")
                report.add(name, "round trips/s", result.perSecond, "/s")
                bars.append(
                    ChartBar(label: name, p50: result.latency.p50, p99: result.latency.p99, kind: "floor"))
            }
            report.notes.append(
                "floor: requests of \(requestSize) B (a toggle with a request id), replies of \(WireSizes.reply.count) B (a toggle reply)"
            )
        } catch {
            failed("floor", error)
        }
        // The in-memory 16-client target's baseline: a bare server that replies and publishes.
        do {
            progress("floor: REQ/REP echo and PUB, 16 clients")
            let result = try runFloor(.publish, clients: 16, what: "floor with publish")
            publishingFloor = result
            let name = "floor REQ/REP+PUB, 16 clients"
            report.add(name, "p50", result.latency.p50, "µs")
            report.add(name, "round trips/s", result.perSecond, "/s")
        } catch {
            failed("floor with publish", error)
        }
    }

    /// The fdatasync floors of the durable targets.
    func measureSyncingFloors() {
        guard wanted("toggle") else { return }
        do {
            let directory = try makeTemporaryDirectory("floor-sync")
            progress("floor: REQ/REP with one fdatasync per request, 1 client")
            let result = try runFloor(
                .sync(path: "\(directory)/pages"), clients: 1, what: "floor with fdatasync")
            syncingFloor = result
            let name = "floor REQ/REP+fdatasync, 1 client"
            report.add(name, "p50", result.latency.p50, "µs")
            report.add(name, "p99", result.latency.p99, "µs")
            report.add(name, "round trips/s", result.perSecond, "/s")
        } catch {
            failed("floor with fdatasync", error)
        }
        // What the durable 16-client target asks of libzmq: the same clients against a bare server
        // that shares one fdatasync among every request queued, as the service's group commit does.
        do {
            let directory = try makeTemporaryDirectory("floor-group-sync")
            progress("floor: ROUTER with one fdatasync per batch and PUB, 16 clients")
            let server = try floorServer(.groupSync(path: "\(directory)/pages"))
            defer { server.stop() }
            let (result, cpu) = cpuPerRequest(server.child, 16) { floorLoad(server.command, clients: 16) }
            check(result, "floor with group fdatasync")
            groupSyncingFloor = result
            serverCPU[groupSyncName, default: [:]][16] = cpu
        } catch {
            failed("floor with group fdatasync", error)
        }
    }

    /// Redis with appendfsync no and always, at each client count.
    func measureRedis() {
        guard wanted("redis") || wanted("toggle") else { return }
        if let executable = RedisUnderTest.find() {
            for mode in ["no", "always"] {
                do {
                    let server = try RedisUnderTest(executable: executable, appendfsync: mode)
                    defer { server.stop() }
                    for clients in configuration.clientCounts {
                        progress("redis: EVALSHA toggle+PUBLISH, appendfsync \(mode), \(clients) client(s)")
                        let (result, cpu) = cpuPerRequest(server.child, clients) {
                            redisLoad(server, clients: clients)
                        }
                        serverCPU["Redis \(mode)", default: [:]][clients] = cpu
                        check(result, "redis")
                        redis[mode, default: [:]][clients] = result
                    }
                } catch {
                    failed("redis appendfsync \(mode)", error)
                }
            }
        } else {
            report.notes.append(
                "redis: skipped, redis-server is not installed (scripts/bench installs it with apt-get)")
        }
    }

    /// The service in memory and durable, at each client count.
    func measureToggles() {
        guard wanted("toggle") else { return }
        for durable in [false, true] {
            let label = durable ? "durable" : "in-memory"
            do {
                let database = durable ? "\(try makeTemporaryDirectory("db"))/countries.db" : nil
                let service = try ServiceUnderTest(binary: binary, database: database, context: context)
                defer { service.stop() }
                for clients in configuration.clientCounts {
                    progress("toggle: \(label), \(clients) client(s)")
                    let (result, cpu) = cpuPerRequest(service.child, clients) {
                        serviceLoad(service.command, clients: clients)
                    }
                    serverCPU[label, default: [:]][clients] = cpu
                    check(result, "toggle \(label)")
                    toggles[label, default: [:]][clients] = result
                }
            } catch {
                failed("toggle \(label)", error)
            }
        }
        // The same toggles on the largest list the service accepts: a change must cost what it
        // costs on eight rows (every batch copied the whole list until stop 31, a quarter of
        // the toggles per second at 16 clients; docs/BENCHMARKS.md).
        do {
            let seed = try writeSeedFile(
                count: Limits.maximumCountries, in: try makeTemporaryDirectory("largest-list"))
            let service = try ServiceUnderTest(binary: binary, seedFile: seed, context: context)
            defer { service.stop() }
            for clients in [1, 16] {
                progress("toggle: in-memory on \(Limits.maximumCountries) rows, \(clients) client(s)")
                let result = serviceLoad(service.command, clients: clients)
                check(result, "toggle on the largest list")
                toggles[Self.largestListLabel, default: [:]][clients] = result
            }
        } catch {
            failed("toggle on the largest list", error)
        }
    }

    /// The key of ``toggles`` on the largest list.
    static let largestListLabel = "in-memory, largest list"

    /// The four load targets again, in paired rounds: each baseline and the service back to back.
    func measurePairedTargets() {
        guard wanted("toggle") else { return }
        do {
            let floor = try floorServer(.reply)
            defer { floor.stop() }
            let publishing = try floorServer(.publish)
            defer { publishing.stop() }
            let pages = try makeTemporaryDirectory("paired-floor-sync")
            let syncing = try floorServer(.sync(path: "\(pages)/pages"))
            defer { syncing.stop() }
            let groupSyncing = try floorServer(.groupSync(path: "\(pages)/group-pages"))
            defer { groupSyncing.stop() }
            let memory = try ServiceUnderTest(binary: binary, database: nil, context: context)
            defer { memory.stop() }
            let database = "\(try makeTemporaryDirectory("paired-db"))/countries.db"
            let durable = try ServiceUnderTest(binary: binary, database: database, context: context)
            defer { durable.stop() }
            pairedRounds = runPairedRounds(
                LoadTarget.all, rounds: configuration.pairedRoundCount, progress: progress,
                service: { target in
                    serviceLoad(
                        target.service == .durable ? durable.command : memory.command, clients: target.clients
                    )
                },
                baseline: { target in
                    switch target.baseline {
                    case .syncingFloor: floorLoad(syncing.command, clients: target.clients)
                    case .groupSyncingFloor: floorLoad(groupSyncing.command, clients: target.clients)
                    case .publishingFloor: floorLoad(publishing.command, clients: target.clients)
                    case .floor: floorLoad(floor.command, clients: target.clients)
                    }
                })
            pairedRatios = ratiosByFigure(pairedRounds)
        } catch {
            failed("paired target rounds", error)
        }
    }

    /// Replicated mode: 2 replicas on a 3-member loopback etcd, clients spread over both (client i
    /// on replica i mod 2), beside the single service on SQLite and Redis.
    func measureReplicated() {
        guard wanted("replicated") else { return }
        if let etcdExecutable = EtcdUnderTest.find() {
            do {
                let cluster = try EtcdUnderTest(executable: etcdExecutable)
                defer { cluster.stop() }
                let replicas = try (0..<2).map { _ in
                    try ServiceUnderTest(binary: binary, etcd: cluster.clientURLs, context: context)
                }
                defer { for replica in replicas { replica.stop() } }
                // The elected writer first (docs/HA.md, "Commits"): the 1-client and one-replica
                // figures are the writer's, the spread ones go through the follower too.
                let writer = waitForWriter(etcd: cluster.clientURLs, among: replicas.map(\.command))
                report.notes.append(
                    "replicated: the elected writer was \(writer.map { "replica \($0 + 1) of 2" } ?? "unknown after 5 s")"
                )
                let endpoints = writer == 1 ? replicas.map(\.command).reversed() : replicas.map(\.command)
                let loadContext = context
                if !configuration.quick {
                    // A store that has run a while: past the events it keeps, every commit also
                    // trims the oldest (docs/BENCHMARKS.md, "Stop 27"). Untimed.
                    progress(
                        "replicated: \(Limits.retainedEvents + 1_000) toggles first, past the events a store keeps"
                    )
                    let clients = 16
                    _ = runLoad(
                        LoadPlan(
                            clients: clients, requests: (Limits.retainedEvents + 1_000) / clients + 1,
                            seconds: 120,
                            warmup: 0)
                    ) { index in
                        try RequestClient(
                            context: loadContext, endpoint: endpoints[0], index: index,
                            body: serviceToggleBody)
                    }
                }
                for clients in configuration.replicatedClientCounts {
                    progress("replicated: 2 replicas on 3 etcd members, \(clients) client(s)")
                    let result = runLoad(plan(clients)) { index in
                        try RequestClient(
                            context: loadContext, endpoint: endpoints[index % endpoints.count], index: index,
                            body: serviceToggleBody)
                    }
                    check(result, "replicated")
                    replicated[clients] = result
                }
                replicatedRun = runReplicatedTargets(
                    plan: configuration.plan, rounds: configuration.pairedRoundCount,
                    etcd: cluster.clientURLs,
                    endpoints: endpoints,
                    context: context,
                    check: { self.check($0, $1) })
            } catch {
                failed("replicated", error)
            }
        } else {
            report.notes.append("replicated: skipped, etcd is not installed (scripts/bootstrap installs it)")
        }
    }
}
