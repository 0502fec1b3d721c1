import Testing

@testable import CountriesService

/// A batch's ids: found with the value of the last entry that has them, whether the table
/// compares them one by one or has hashed them, as the batch grows, and none once it is emptied.
@Suite struct BatchIDTableTests {
    /// Entries as a caller keeps them: an id (or none) and a value each.
    private struct Batch {
        var entries: [(id: String?, value: Int)] = []
        var table = BatchIDTable<Int>()

        mutating func find(_ id: String) -> Int? {
            let entries = entries
            return table.find(id, among: entries.count) { entries[$0] }
        }
    }

    @Test(arguments: [0, 1, 15, 16, 17, 100])
    func everyIDIsFoundWithTheLastValueAsTheBatchGrows(count: Int) {
        var batch = Batch()
        for index in 0..<count {
            // Looked up before it is added, as the handler does: not there yet.
            #expect(batch.find("id-\(index)") == nil)
            batch.entries.append((index % 5 == 4 ? nil : "id-\(index)", index))
        }
        for index in 0..<count { #expect(batch.find("id-\(index)") == (index % 5 == 4 ? nil : index)) }
        #expect(batch.find("id-") == nil)
        // A later entry with an id already there is the one found.
        batch.entries.append(("id-0", -1))
        #expect(batch.find("id-0") == -1)
        #expect(batch.find("id-1") == (count > 1 ? 1 : nil))
    }

    @Test(arguments: [3, 50])
    func anEmptiedBatchFindsNothingAndFillsAgain(count: Int) {
        var batch = Batch()
        batch.entries = (0..<count).map { ("a-\($0)", $0) }
        #expect(batch.find("a-0") == 0)
        batch.entries = []
        batch.table.removeAll()
        #expect(batch.find("a-0") == nil)
        batch.entries = (0..<count).map { ("b-\($0)", $0) }
        #expect(batch.find("a-1") == nil)
        #expect(batch.find("b-\(count - 1)") == count - 1)
    }

    /// A caller that empties its batch and forgets to say so is not answered from the old ids
    /// once the batch is shorter than what was hashed.
    @Test func aShorterBatchIsNotAnsweredFromStaleEntries() {
        var batch = Batch()
        batch.entries = (0..<40).map { ("old-\($0)", $0) }
        #expect(batch.find("old-3") == 3)
        batch.entries = (0..<5).map { ("new-\($0)", $0) }
        #expect(batch.find("old-3") == nil)
        #expect(batch.find("new-3") == 3)
    }
}
