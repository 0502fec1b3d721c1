import Foundation
@preconcurrency import Glibc
import SystemSupport
import TestSupport
import Testing

/// The queue one thread hands another: its pipe is readable exactly while items wait, a budget
/// bounds it in bytes (never below one item), and a partial drain leaves the rest readable.
@Suite(.hangGuard()) struct WakeupQueueTests {
    /// Whether the queue's pipe would wake a poll now.
    private func isReadable(_ queue: WakeupQueue<some Any>) -> Bool {
        var descriptor = pollfd(fd: queue.fileDescriptor, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) == 1
    }

    @Test func withoutABudgetItHoldsEverythingAndWakesWhileItemsWait() throws {
        let queue = try WakeupQueue<Int>()
        #expect(!isReadable(queue))
        #expect(queue.post([1, 2]) == 0)
        #expect(queue.post([3]) == 0)
        #expect(isReadable(queue))
        #expect(queue.drain() == [1, 2, 3])
        #expect(!isReadable(queue))
        #expect(queue.drain().isEmpty)
        #expect(queue.queuedBytes == 0)
    }

    @Test func aBudgetDropsWhatWouldGoPastItButNeverTheOnlyItem() throws {
        let queue = try WakeupQueue<[UInt8]>(budget: .init(maximumBytes: 100) { $0.count })
        // Larger than the budget, alone: kept.
        #expect(queue.post([Array(repeating: 1, count: 150)]) == 0)
        #expect(queue.queuedBytes == 150)
        // Anything more is past it.
        #expect(queue.post([[2]]) == 1)
        #expect(queue.drain().map(\.count) == [150])
        #expect(queue.queuedBytes == 0)
        // Filled to the byte, then one over: only that one is dropped, and later ones that fit
        // pass.
        #expect(queue.post([Array(repeating: 3, count: 60), Array(repeating: 4, count: 40)]) == 0)
        #expect(queue.queuedBytes == 100)
        #expect(queue.post([[5], [6]]) == 2)
        #expect(queue.count == 2)
        #expect(queue.drain().map(\.first) == [3, 4])
        #expect(queue.post([[7]]) == 0)
        #expect(queue.drain() == [[7]])
    }

    @Test func roomIsWhatAPostWouldKeep() throws {
        let queue = try WakeupQueue<[UInt8]>(budget: .init(maximumBytes: 100) { $0.count })
        #expect(queue.hasRoom(forBytes: 1_000), "an empty queue keeps anything")
        queue.post([Array(repeating: 1, count: 70)])
        #expect(queue.hasRoom(forBytes: 30))
        #expect(!queue.hasRoom(forBytes: 31))
        #expect(queue.post([Array(repeating: 2, count: 31)]) == 1)
        _ = queue.drain()
        #expect(queue.hasRoom(forBytes: 31))
        #expect(try WakeupQueue<Int>().hasRoom(forBytes: .max), "without a budget, always")
    }

    @Test func aPartialDrainLeavesTheRestReadableAndCounted() throws {
        let queue = try WakeupQueue<[UInt8]>(budget: .init(maximumBytes: 1_000) { $0.count })
        queue.post((0..<10).map { Array(repeating: UInt8($0), count: 10) })
        #expect(queue.queuedBytes == 100)
        let first = queue.drain(maximumCount: 4)
        #expect(first.map(\.first) == [0, 1, 2, 3])
        #expect(queue.queuedBytes == 60)
        #expect(isReadable(queue), "items are left: the loop must come back for them")
        #expect(queue.drain(maximumCount: 4).map(\.first) == [4, 5, 6, 7])
        #expect(queue.drain(maximumCount: 4).map(\.first) == [8, 9])
        #expect(queue.queuedBytes == 0)
        #expect(!isReadable(queue))
    }

    /// Items posted from another thread while the loop drains are all taken, in order, and the
    /// pipe is never left quiet while one waits.
    @Test func itemsPostedWhileTheLoopDrainsAreNeverStranded() throws {
        let queue = try WakeupQueue<Int>()
        let total = 20_000
        let poster = Thread {
            for start in stride(from: 0, to: total, by: 10) { queue.post(Array(start..<start + 10)) }
        }
        poster.start()
        var taken: [Int] = []
        let deadline = ContinuousClock.now + .seconds(30 * testSlowdown)
        while taken.count < total && ContinuousClock.now < deadline {
            var descriptor = pollfd(fd: queue.fileDescriptor, events: Int16(POLLIN), revents: 0)
            // A wait that only a wake-up ends early: a stranded item would stall it to the end.
            guard poll(&descriptor, 1, Int32(1_000 * testSlowdown)) == 1 else { break }
            taken += queue.drain(maximumCount: 7)
        }
        #expect(taken == Array(0..<total))
    }
}
