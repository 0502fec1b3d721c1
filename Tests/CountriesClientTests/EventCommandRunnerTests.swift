import CountriesClient
import CountriesCore
import Foundation
import TestSupport
import Testing

/// `on-change`'s command runner (``EventCommandRunner``), on real processes.
@Suite struct EventCommandRunnerTests {
    /// Each run waits for its command to end. `waitUntilExit()` waited on the calling thread's
    /// run loop for Foundation to post the exit there, which on Linux has been reported never to
    /// come on a thread other than the main one (not seen on this machine: this test passed with
    /// it too). Runners on several threads at once, many commands each: every run ends, within a
    /// bound, with the command's status reported and the event on its stdin.
    @Test func runsFromManyThreadsAtOnceAllEnd() {
        let threads = 6
        let runs = 20
        let reports = Box<[String]>([])
        let done = DispatchSemaphore(value: 0)
        let row = IndexedCountry(index: 2, name: "France", visited: true)
        for _ in 0..<threads {
            Thread {
                // Exit 3 when the event's JSON came on stdin, 9 when nothing did.
                let runner = EventCommandRunner(
                    executable: "/bin/sh",
                    arguments: ["-c", #"read -r line; case "$line" in *France*) exit 3;; esac; exit 9"#]
                ) { report in reports.update { $0.append(report) } }
                for run in 0..<runs { runner.run(event: Event(seq: UInt64(run + 1), kind: .changed(row))) }
                done.signal()
            }.start()
        }
        for _ in 0..<threads {
            #expect(done.wait(timeout: .now() + 60.0 * Double(testSlowdown)) == .success, "a run never ended")
        }
        #expect(reports.value.count == threads * runs)
        #expect(
            reports.value.allSatisfy { $0.contains("exited with status 3") }, "\(reports.value.prefix(3))")
    }

    /// Ctrl-C or a service manager's stop reaches the command as well as the runner: a command
    /// killed by a signal while a stop was asked has not done its seq; one that ends by itself
    /// has, stop or not, and so has one killed while nobody asked to stop.
    @Test(arguments: [(true, true, false), (true, false, true), (false, true, true)])
    func aCommandKilledWhileAStopWasAskedHasNotDoneItsSeq(
        stopAsked: Bool, killedBySignal: Bool, finished: Bool
    ) {
        let reports = Box<[String]>([])
        let runner = EventCommandRunner(
            executable: "/bin/sh",
            arguments: [
                "-c", killedBySignal ? "read -r line; kill -KILL $$; sleep 5" : "read -r line; exit 0",
            ]
        ) { report in reports.update { $0.append(report) } }
        var stops = stopAsked ? 1 : 0
        let ending = runner.run(
            event: Event(seq: 7, kind: .changed(IndexedCountry(index: 0, name: "France", visited: true)))
        ) {
            defer { stops = 0 }
            return stops
        }
        #expect(ending.finished == finished && ending.stopRequested == stopAsked, "\(ending)")
        #expect(
            reports.value.contains { $0.hasSuffix("seq 7 is not done") } == !finished, "\(reports.value)")
    }
}
