import Testing

@testable import SystemSupport

/// `removeEach(keepingCapacity:)` empties an array as `removeAll(keepingCapacity:)` does: every
/// element released, the storage kept only when asked.
@Suite struct ArrayEmptyingTests {
    /// Counts the instances alive that share it (one per test: the tests run in parallel).
    final class Census {
        var alive = 0
    }

    final class Tracked {
        let number: Int
        let census: Census
        init(_ number: Int, _ census: Census) {
            self.number = number
            self.census = census
            census.alive += 1
        }
        deinit { census.alive -= 1 }
    }

    /// A value with references in it, as the request path's staged changes are.
    struct Element {
        var tracked: Tracked
        var name: String
        var bytes: [UInt8]
    }

    @Test(arguments: [0, 1, 2, 17, 300])
    func releasesEveryElementAndKeepsTheStorageWhenAsked(count: Int) {
        let census = Census()
        var array = (0..<count).map {
            Element(
                tracked: Tracked($0, census), name: "element number \($0), past the inline room",
                bytes: [UInt8($0 % 256)])
        }
        array.reserveCapacity(count + 5)
        let capacity = array.capacity
        #expect(census.alive == count)
        array.removeEach(keepingCapacity: true)
        #expect(array.isEmpty)
        #expect(array.capacity == capacity)
        #expect(census.alive == 0)
        array.append(Element(tracked: Tracked(1, census), name: "again", bytes: []))
        #expect(array.count == 1 && array[0].name == "again" && census.alive == 1)
        array.removeEach(keepingCapacity: false)
        #expect(array.isEmpty && array.capacity == 0)
        #expect(census.alive == 0)
    }

    /// A copy shares the storage: emptying one leaves the other whole.
    @Test func aCopyKeepsItsElements() {
        let census = Census()
        var array = [Tracked(1, census), Tracked(2, census), Tracked(3, census)]
        let copy = array
        array.removeEach(keepingCapacity: true)
        #expect(array.isEmpty)
        #expect(copy.map(\.number) == [1, 2, 3])
        #expect(census.alive == 3)
    }
}
