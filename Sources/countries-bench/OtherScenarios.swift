import Foundation
import LoadGeneration

/// The scenarios beside the load sweeps: fan-out and memory, late joiners, render, web, CLI.
extension Bench {
    /// Fan-out to 1-100 subscribers against the floor, and the service's memory with 100.
    func measureFanOut() {
        guard wanted("fanout") || wanted("memory") else { return }
        let counts = wanted("fanout") ? configuration.fanOutCounts : [100]
        let rates = wanted("fanout") ? configuration.fanOutRates : [500]
        for subscribers in counts {
            do {
                let floor = try floorServer(.publish)
                defer { floor.stop() }
                let service = try ServiceUnderTest(binary: binary, context: context)
                defer { service.stop() }
                if subscribers == 100 { idleKiB = service.child.residentKiB() }
                for rate in rates {
                    progress(
                        "fan-out: \(subscribers) subscriber(s) at \(rate) events/s (floor, then service)")
                    let floorResult = try runFanOut(
                        command: floor.command, events: floor.events, subscribers: subscribers,
                        rate: rate,
                        seconds: configuration.fanOutSeconds, body: { WireSizes.event(seq: $0) },
                        seqOfReply: { number, _ in number })
                    let serviceResult = try runFanOut(
                        command: service.command, events: service.events, subscribers: subscribers,
                        rate: rate,
                        seconds: configuration.fanOutSeconds, body: { _ in toggleRequest(index: 0) },
                        seqOfReply: { _, reply in seqField(reply) },
                        whileAttached: {
                            if subscribers == 100 { attachedKiB = service.child.residentKiB() }
                        })
                    let name = "fan-out, \(subscribers) sub\(subscribers == 1 ? "" : "s") at \(rate)/s"
                    let isTarget = subscribers == 100 && rate == 500
                    let clean = serviceResult.everyoneGotEverything
                    if isTarget { fanOutTarget = (serviceResult, floorResult) }
                    report.add(
                        name, "delivery p50", serviceResult.latency.p50, "µs",
                        baseline: ("fan-out floor", floorResult.latency.p50),
                        ratioLimit: isTarget ? 1.3 : nil,
                        target: isTarget ? "≤ 1.3× floor, none dropped" : nil, extraCondition: clean)
                    report.add(
                        name, "delivery p99", serviceResult.latency.p99, "µs",
                        baseline: ("fan-out floor", floorResult.latency.p99),
                        ratioLimit: isTarget ? 1.5 : nil,
                        target: isTarget ? "≤ 1.5× floor, none dropped" : nil, extraCondition: clean)
                    report.add(
                        name, "delivered",
                        100 * Double(serviceResult.delivered) / Double(max(1, serviceResult.expected)), "%",
                        baseline: (
                            "fan-out floor",
                            100 * Double(floorResult.delivered) / Double(max(1, floorResult.expected))
                        ),
                        note:
                            "\(serviceResult.delivered) of \(serviceResult.expected); floor \(floorResult.delivered) of \(floorResult.expected)"
                    )
                    bars.append(
                        ChartBar(
                            label: "fan-out floor, \(subscribers) subs at \(rate)/s",
                            p50: floorResult.latency.p50,
                            p99: floorResult.latency.p99, kind: "floor"))
                    bars.append(
                        ChartBar(
                            label: name, p50: serviceResult.latency.p50, p99: serviceResult.latency.p99,
                            kind: "countries"))
                }
            } catch {
                failed("fan-out with \(subscribers) subscribers", error)
            }
        }
        if let attachedKiB {
            report.add(
                "memory: service RSS, 100 subscribers", "VmRSS", Double(attachedKiB) / 1024, "MiB",
                baseline: idleKiB.map { ("idle, no subscribers", Double($0) / 1024) }, valueLimit: 30,
                target: "< 30 MiB")
        }
    }

    /// Late joiners on 10,000 rows under 1,000 events/s.
    func measureLateJoiner() {
        guard wanted("late") else { return }
        do {
            progress("late joiner: 10,000 rows, 1,000 events/s, \(configuration.lateJoins) join(s)")
            let result = try runLateJoiner(
                binary: binary, joins: configuration.lateJoins, rate: 1000, rows: 10_000)
            let name = "late joiner, 10,000 rows, \(Int(result.eventsPerSecond.rounded())) events/s"
            if result.eventsPerSecond < 900 {
                report.notes.append(
                    "late joiner: the background flow reached only \(Int(result.eventsPerSecond)) of 1,000 events/s (the machine was busy)"
                )
            }
            let joins = Percentiles(nanos: result.joinMilliseconds.map { UInt64($0 * 1e6) })
            let lists = Percentiles(nanos: result.listMilliseconds.map { UInt64($0 * 1e6) })
            report.add(
                name, "time to live, median", joins.p50 / 1000, "ms",
                baseline: ("bare list RTT", lists.p50 / 1000))
            report.add(
                name, "time to live, worst of \(joins.count)", joins.max / 1000, "ms",
                baseline: ("bare list RTT", lists.max / 1000), valueLimit: 100, target: "< 100 ms")
        } catch {
            failed("late joiner", error)
        }
    }

    /// The bytes `watch` writes per change, and its frame rate under a burst.
    func measureRender() {
        guard wanted("render") else { return }
        progress("render: watch frames on the world list")
        let result = runRender(burstSeconds: configuration.quick ? 0.2 : 1.0, longListRows: 10_000)
        let name = "render (watch, \(result.rows) rows, 40×100)"
        report.add(
            name, "bytes per toggled visible row", result.bytesPerVisibleToggle, "B",
            baseline: ("full redraw", Double(result.fullRedrawBytes)), valueLimit: 300, target: "< 300 B")
        report.add(
            "render (watch, \(result.longListRows) rows, 40×100)", "bytes per toggled visible row",
            result.bytesPerVisibleToggleLongList, "B",
            baseline: ("full redraw", Double(result.fullRedrawBytes)),
            valueLimit: 300, target: "< 300 B")
        report.add(
            name, "bytes per toggle of any row (scrolls)", result.bytesPerAnyRowToggle, "B",
            baseline: ("full redraw", Double(result.fullRedrawBytes)))
        report.add(
            name, "frames/s under a burst", result.burstFramesPerSecond, "fps",
            baseline: ("coalescer cap", 60),
            note:
                "\(Int(result.burstEventsPerSecond)) events/s absorbed, \(String(format: "%.0f", result.microsecondsPerFrame)) µs per frame"
        )
    }

    /// Web pages on one `countries web`.
    func measureWeb() {
        guard wanted("web") else { return }
        do {
            let pages = configuration.quick ? 200 : 10_000
            let toggles = configuration.quick ? 3 : 20
            let service = try ServiceUnderTest(binary: binary, context: context)
            defer { service.stop() }
            let result = try runWebPages(binary: binary, service: service, pages: pages, toggles: toggles)
            let name = "web: \(result.pages) pages on one web process"
            report.add(
                name, "pages live", Double(result.opened), "pages", valueLimit: Double(result.pages),
                lowerIsBetter: false, target: "all")
            report.add(
                name, "CLI toggle to every page, p99", result.fanOut.p99 / 1000, "ms", valueLimit: 1000,
                target: "< 1 s", extraCondition: result.missed == 0,
                note:
                    "p50 \(String(format: "%.0f", result.fanOut.p50 / 1000)) ms over \(toggles) toggles; \(result.missed) missed"
            )
            if let open = result.openKiB {
                report.add(
                    name, "web process RSS", Double(open) / 1024, "MiB", valueLimit: 256, target: "< 256 MiB",
                    note: result.idleKiB.map { "idle \($0 / 1024) MiB" })
            }
            report.add(
                name, "fresh GET / (whole page), max of 20", result.freshGet.max / 1000, "ms",
                valueLimit: 100,
                target: "< 100 ms", note: "p50 \(String(format: "%.1f", result.freshGet.p50 / 1000)) ms")
            report.add(
                "web: one address at its limit (256)", "another address's GET /",
                result.otherAddressGet ?? .nan,
                "ms",
                valueLimit: 100, target: "answered, < 100 ms; the held address refused",
                extraCondition: result.limitHeld)
        } catch {
            failed("web", error)
        }
    }

    /// One `countries toggle` process against /bin/true.
    func measureCLI() {
        guard wanted("cli") else { return }
        do {
            progress("cli: \(configuration.cliRuns) × countries toggle")
            let result = try runCLI(binary: binary, runs: configuration.cliRuns)
            let toggleTimes = Percentiles(nanos: result.toggleMilliseconds.map { UInt64($0 * 1e6) })
            let trueTimes = Percentiles(nanos: result.trueMilliseconds.map { UInt64($0 * 1e6) })
            report.add(
                "CLI: one `countries toggle` process", "wall time, median of \(configuration.cliRuns)",
                toggleTimes.p50 / 1000,
                "ms",
                baseline: ("/bin/true", trueTimes.p50 / 1000), valueLimit: 30, target: "< 30 ms")
        } catch {
            failed("cli", error)
        }
    }
}
