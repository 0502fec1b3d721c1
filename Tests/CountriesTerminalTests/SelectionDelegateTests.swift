import CountriesCore
import Testing

@testable import CountriesTerminal

@Suite struct SelectionDelegateTests {
    let source = LiveDataSource(state: manyCountries(50))

    @Test func movementKeys() {
        let delegate = DelegateHarness()
        #expect(delegate.handle(.down, in: source, pageSize: 10) == .moveCursor(to: 1))
        #expect(delegate.handle(.char("j"), in: source, pageSize: 10) == .moveCursor(to: 2))
        #expect(delegate.handle(.up, in: source, pageSize: 10) == .moveCursor(to: 1))
        #expect(delegate.handle(.char("k"), in: source, pageSize: 10) == .moveCursor(to: 0))
        #expect(delegate.handle(.up, in: source, pageSize: 10) == .moveCursor(to: 0))
        #expect(delegate.handle(.end, in: source, pageSize: 10) == .moveCursor(to: 49))
        #expect(delegate.handle(.down, in: source, pageSize: 10) == .moveCursor(to: 49))
        #expect(delegate.handle(.home, in: source, pageSize: 10) == .moveCursor(to: 0))
        #expect(delegate.handle(.char("G"), in: source, pageSize: 10) == .moveCursor(to: 49))
        #expect(delegate.handle(.char("g"), in: source, pageSize: 10) == .moveCursor(to: 0))
        #expect(delegate.cursor == 0)
    }

    @Test func pagesMoveByTheViewportHeightAndClamp() {
        let delegate = DelegateHarness()
        #expect(delegate.handle(.pageDown, in: source, pageSize: 20) == .moveCursor(to: 20))
        #expect(delegate.handle(.pageDown, in: source, pageSize: 20) == .moveCursor(to: 40))
        #expect(delegate.handle(.pageDown, in: source, pageSize: 20) == .moveCursor(to: 49))
        #expect(delegate.handle(.pageUp, in: source, pageSize: 20) == .moveCursor(to: 29))
        #expect(delegate.handle(.pageUp, in: source, pageSize: 20) == .moveCursor(to: 9))
        #expect(delegate.handle(.pageUp, in: source, pageSize: 20) == .moveCursor(to: 0))
        #expect(delegate.handle(.pageDown, in: source, pageSize: 0) == .moveCursor(to: 1))
    }

    @Test func toggleTheRowUnderTheCursor() {
        let delegate = DelegateHarness(cursor: 7)
        let row = IndexedCountry(index: 7, name: "Country 7", visited: false)
        #expect(delegate.handle(.space, in: source, pageSize: 10) == .toggle(row))
        #expect(delegate.handle(.enter, in: source, pageSize: 10) == .toggle(row))
        #expect(delegate.cursor == 7)
    }

    @Test func toggleOnSkeletonDoesNothing() {
        let delegate = DelegateHarness(cursor: 2)
        let skeleton = SkeletonDataSource(rows: 10)
        #expect(delegate.handle(.space, in: skeleton, pageSize: 5) == nil)
        #expect(delegate.handle(.enter, in: skeleton, pageSize: 5) == nil)
        #expect(delegate.handle(.down, in: skeleton, pageSize: 5) == .moveCursor(to: 3))
        #expect(delegate.handle(.enter, in: SkeletonDataSource(rows: 0), pageSize: 5) == nil)
    }

    @Test func emptyList() {
        let delegate = DelegateHarness(cursor: 5)
        let empty = LiveDataSource(state: CountriesState(countries: []))
        #expect(delegate.handle(.down, in: empty, pageSize: 5) == .moveCursor(to: 0))
        #expect(delegate.handle(.end, in: empty, pageSize: 5) == .moveCursor(to: 0))
        #expect(delegate.handle(.space, in: empty, pageSize: 5) == nil)
    }

    @Test(arguments: [Key.char("q"), .char("Q"), .ctrlC, .escape])
    func quitKeys(_ key: Key) {
        let delegate = DelegateHarness()
        #expect(delegate.handle(key, in: source, pageSize: 10) == .quit)
    }

    @Test(arguments: [Key.unknown, .char("x"), .char("é")])
    func otherKeysDoNothing(_ key: Key) {
        let delegate = DelegateHarness(cursor: 3)
        #expect(delegate.handle(key, in: source, pageSize: 10) == nil)
        #expect(delegate.cursor == 3)
    }

    @Test func cursorFollowsItsCountryAcrossARemoveBeforeIt() throws {
        var state = CountriesState(countries: SeedList.standard, seq: 1)
        let delegate = DelegateHarness(cursor: 2)  // France
        let old = state
        _ = try state.apply(.remove(.name("United States")), seed: [])
        delegate.rowsMoved(from: old, to: state)
        #expect(delegate.cursor == 1)
        #expect(state.countries[delegate.cursor].name == "France")
    }

    @Test func cursorFollowsItsCountryAcrossAnAddBeforeIt() {
        // Adds append, but a reset or a catch-up can put a new row before the cursor.
        let old = CountriesState(countries: SeedList.standard, seq: 1)
        let new = CountriesState(countries: [Country(name: "Peru")] + SeedList.standard, seq: 2)
        let delegate = DelegateHarness(cursor: 2)
        delegate.rowsMoved(from: old, to: new)
        #expect(delegate.cursor == 3)
        #expect(new.countries[delegate.cursor].name == "France")
    }

    @Test func removingTheSelectedCountryKeepsThePositionClamped() throws {
        var state = CountriesState(countries: SeedList.standard, seq: 1)
        var delegate = DelegateHarness(cursor: 2)
        var old = state
        _ = try state.apply(.remove(.name("France")), seed: [])
        delegate.rowsMoved(from: old, to: state)
        #expect(delegate.cursor == 2)
        #expect(state.countries[delegate.cursor].name == "Italy")

        delegate = DelegateHarness(cursor: 6)  // Romania, the last
        old = state
        _ = try state.apply(.remove(.name("Romania")), seed: [])
        delegate.rowsMoved(from: old, to: state)
        #expect(delegate.cursor == 5)

        old = state
        state = CountriesState(countries: [], seq: 9)
        delegate.rowsMoved(from: old, to: state)
        #expect(delegate.cursor == 0)
    }

    @Test func clamp() {
        let delegate = DelegateHarness(cursor: 30)
        delegate.clamp(rowCount: 10)
        #expect(delegate.cursor == 9)
        delegate.clamp(rowCount: 0)
        #expect(delegate.cursor == 0)
    }

    @Test func statusTexts() {
        let france = IndexedCountry(index: 2, name: "France", visited: true)
        #expect(SelectionStatus.describe(country: france) == "Selected country: France (now visited)")
        var cleared = france
        cleared.visited = false
        #expect(SelectionStatus.describe(country: cleared) == "Selected country: France (now not visited)")
        let ok = SelectionStatus.describe(reply: Reply(seq: 12, country: france))
        #expect(ok.text == "Selected country: France (now visited)")
        #expect(!ok.isError)
        let error = CountriesError(.indexOutOfRange, "index 9 is out of range: there are 8 countries")
        let failed = SelectionStatus.describe(reply: Reply(error: error))
        #expect(failed.text == error.message)
        #expect(failed.isError)
        #expect(SelectionStatus.describe(.failure(error)).text == error.message)
        #expect(SelectionStatus.describe(.success(france)).isError == false)
        // No reply: "not toggled" only when nothing can have changed.
        #expect(
            SelectionStatus.describe(failedToggleOf: "France", message: "no reply", outcomeUnknown: false)
                == "France was not toggled: no reply")
        #expect(
            SelectionStatus.describe(
                failedToggleOf: "France", message: "outcome unknown: request id x", outcomeUnknown: true)
                == "France: outcome unknown; if the toggle was made, its row will change")
        // What the last try got follows the screen's own advice, never the shell's (`--id`).
        #expect(
            SelectionStatus.describe(
                failedToggleOf: "France", message: "outcome unknown: ...; send it again with --id x",
                outcomeUnknown: true, cause: "no reply from tcp://h:5555 after 3 tries")
                == "France: outcome unknown; if the toggle was made, its row will change (no reply from tcp://h:5555 after 3 tries)"
        )
    }

    @Test func anEventAboutTheRowSettlesAnUnknownOutcome() {
        let france = IndexedCountry(index: 2, name: "France", visited: true)
        let italy = IndexedCountry(index: 3, name: "Italy", visited: true)
        func settle(_ kind: Event.Kind) -> String? {
            SelectionStatus.describe(settling: "France", by: Event(seq: 7, kind: kind))
        }
        #expect(settle(.changed(france)) == "France is now visited (seq 7)")
        #expect(
            settle(.changed(IndexedCountry(index: 2, name: "France", visited: false)))
                == "France is now not visited (seq 7)")
        #expect(settle(.removed(france)) == "France was removed (seq 7)")
        #expect(settle(.reset([france])) == "France is now visited (seq 7, a reset)")
        #expect(settle(.reset([italy])) == "France is gone: the list was reset (seq 7)")
        // Another row's change settles nothing.
        #expect(settle(.changed(italy)) == nil)
        #expect(settle(.added(italy)) == nil)
        #expect(settle(.removed(italy)) == nil)
    }
}

// A reference wrapper, so that `#expect` (which evaluates its operands as immutable values) can
// call the mutating methods.
final class DelegateHarness {
    var delegate: SelectionDelegate
    init(cursor: Int = 0) { delegate = SelectionDelegate(cursor: cursor) }
    var cursor: Int { delegate.cursor }
    func handle(_ key: Key, in source: some TableDataSource, pageSize: Int) -> Intent? {
        delegate.handle(key, in: source, pageSize: pageSize)
    }
    func rowsMoved(from old: CountriesState, to new: CountriesState) {
        delegate.rowsMoved(from: old, to: new)
    }
    func clamp(rowCount: Int) { delegate.clamp(rowCount: rowCount) }
}
