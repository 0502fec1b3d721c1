import Dispatch
import Foundation
import Synchronization
import SystemSupport
import TestSupport
import Testing

/// The background loops' thread: it runs its loop once, a stop ends a pause at once and waits
/// for the loop to return, and neither a stop before the start nor a second stop hangs.
@Suite(.hangGuard()) struct WorkerThreadTests {
    @Test func aStopEndsAPauseAtOnceAndWaitsForTheLoop() {
        let worker = WorkerThread(name: "test worker")
        let rounds = Atomic<Int>(0)
        let returned = Atomic<Bool>(false)
        let paused = DispatchSemaphore(value: 0)
        worker.start {
            paused.signal()
            // Ten minutes a pause: only a stop ends it within the test's time.
            while worker.pause(for: .seconds(600)) { rounds.add(1, ordering: .relaxed) }
            returned.store(true, ordering: .relaxed)
        }
        #expect(paused.wait(timeout: .now() + .seconds(10 * testSlowdown)) == .success)
        let started = ContinuousClock.now
        worker.stop()
        let took = ContinuousClock.now - started
        let loopReturned = returned.load(ordering: .relaxed)
        let roundsRun = rounds.load(ordering: .relaxed)
        #expect(loopReturned, "stop() returned before the loop did")
        #expect(roundsRun == 0)
        #expect(took < .seconds(5 * testSlowdown), "stop() took \(took)")
        #expect(worker.isStopping)
        #expect(!worker.pause(for: .seconds(600)), "a pause after the stop must not wait")
    }

    @Test func theLoopRunsOnceOnAThreadOfItsName() {
        let worker = WorkerThread(name: "named worker")
        let runs = Atomic<Int>(0)
        let names = Locked<[String]>([])
        for _ in 0..<3 {
            worker.start {
                runs.add(1, ordering: .relaxed)
                // What the system shows (`ps -T`), not what Foundation remembers.
                let shown = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
                names.withLock { $0.append(shown.trimmingCharacters(in: .newlines)) }
            }
        }
        worker.stop()
        let runCount = runs.load(ordering: .relaxed)
        #expect(runCount == 1)
        #expect(names.withLock { $0 } == ["named worker"])
    }

    @Test func aLongNameIsCutAtACharacterToWhatLinuxKeeps() {
        #expect(WorkerThread(name: "etcd quorum probe").name == "etcd quorum pro")
        // "é" is two bytes: a cut through it would leave half a character.
        #expect(WorkerThread(name: "éééééééé").name == "ééééééé")
        let worker = WorkerThread(name: "a worker with a long name")
        let shown = Locked("")
        worker.start {
            let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
            shown.withLock { $0 = name.trimmingCharacters(in: .newlines) }
        }
        worker.stop()
        #expect(shown.withLock { $0 } == "a worker with a")
    }

    @Test func aLoopBlockedOnItsOwnSignalIsWokenByStop() {
        let worker = WorkerThread(name: "blocked worker")
        let work = DispatchSemaphore(value: 0)
        let woken = Atomic<Int>(0)
        worker.start {
            while true {
                work.wait()
                if worker.isStopping { return }
                woken.add(1, ordering: .relaxed)
            }
        }
        work.signal()
        let wokenOnce = eventually { woken.load(ordering: .relaxed) == 1 }
        #expect(wokenOnce)
        worker.stop(wake: { work.signal() })
        let wakes = woken.load(ordering: .relaxed)
        #expect(wakes == 1)
    }

    @Test func aStopBeforeTheStartAndASecondStopReturn() {
        let never = WorkerThread(name: "never started")
        never.stop()
        never.stop()
        #expect(never.isStopping)

        let twice = WorkerThread(name: "stopped twice")
        twice.start { while twice.pause(for: .milliseconds(5)) {} }
        twice.stop()
        twice.stop()
        #expect(twice.isStopping)
    }

    /// What the snapshot writer's spacing and the lease renewals count on: a pause that is not
    /// stopped is never shorter than asked, by the clock the callers measure with.
    @Test func aPauseNotStoppedLastsItsWholeDuration() {
        let worker = WorkerThread(name: "pausing worker")
        for milliseconds in [1, 30, 120] {
            let duration = Duration.milliseconds(milliseconds)
            let started = ContinuousClock.now
            #expect(worker.pause(for: duration))
            let took = ContinuousClock.now - started
            #expect(took >= duration, "a pause of \(duration) returned after \(took)")
        }
    }

    @Test func aPauseOfNothingOrLessReturnsAtOnce() {
        let worker = WorkerThread(name: "not started")
        #expect(worker.pause(for: .zero))
        #expect(worker.pause(for: .seconds(-1)))
    }
}
