import CountriesCore
import Testing

@testable import CountriesTerminal

/// Drives a ``TableScreenModel`` with made-up instants: `advance` moves the clock, every input
/// returns the model's output, and `frame` is the last frame it drew.
private struct ScreenHarness {
    var model: TableScreenModel
    var now: ContinuousClock.Instant
    var frame: Frame?
    var effects: [TableScreenModel.Effect] = []

    init(_ mode: TableScreenModel.Mode, rows: Int = 20, columns: Int = 60, glyphs: Glyphs = .unicode) {
        model = TableScreenModel(
            mode: mode, glyphs: glyphs, endpoints: "commands tcp://c · events tcp://e",
            size: ViewportSize(rows: rows, columns: columns))
        // One reading of the clock as an origin; every later instant is made up from it.
        now = .now
    }

    @discardableResult
    mutating func send(_ input: TableScreenModel.Input) -> TableScreenModel.Output {
        let output = model.handle(input, now: now)
        if let frame = output.frame { self.frame = frame }
        effects += output.effects
        return output
    }

    /// Lets time pass, then ticks until no frame is due (as the loop does).
    mutating func advance(_ duration: Duration) {
        now += duration
        send(.tick)
    }

    mutating func live(_ state: CountriesState, applied: [Event] = []) {
        send(.update(replica: state, phase: .live, applied: applied))
        advance(.milliseconds(20))
    }

    mutating func keys(_ keys: Key...) {
        send(.keys(keys))
        advance(.milliseconds(20))
    }

    var texts: [String] { frame?.texts ?? [] }
    var screen: String { texts.joined(separator: "\n") }
    /// The indexes of the body rows shown (the lines that start with a gutter and a number).
    var shownIndexes: [Int] {
        texts.compactMap { line in
            guard ["  ", "> ", "* "].contains(String(line.prefix(2))) else { return nil }
            let body = line.dropFirst(2).drop { $0 == " " }
            return Int(body.prefix { $0.isNumber })
        }
    }
}

private let world = CountriesState(countries: SeedList.world, seq: 0)

/// The event that toggled row `index` of `state`, and the state after it.
private func toggled(_ state: CountriesState, _ index: Int) -> (Event, CountriesState) {
    let row = state.rows[index]
    let event = Event(
        seq: state.seq + 1,
        kind: .changed(IndexedCountry(index: index, name: row.name, visited: !row.visited)))
    var next = state
    try? next.replay(event)
    return (event, next)
}

@Suite struct TableScreenModelTests {
    @Test func connectingShowsSkeletonRowsThenTheLiveList() {
        var screen = ScreenHarness(.watch)
        screen.send(.resize(ViewportSize(rows: 20, columns: 60)))
        #expect(screen.screen.contains("connecting…"))
        #expect(screen.screen.contains("░"))
        screen.live(CountriesState(countries: SeedList.standard, seq: 4))
        #expect(screen.texts.first?.hasSuffix("live · seq 4") == true)
        #expect(screen.screen.contains("France"))
        #expect(!screen.screen.contains("░"))
        #expect(screen.screen.contains("1 of 8 visited"))
    }

    @Test func aChangeIsHighlightedForAMomentAndNamedInTheFooter() {
        var screen = ScreenHarness(.watch)
        let start = CountriesState(countries: SeedList.standard, seq: 0)
        screen.live(start)
        let (event, after) = toggled(start, 2)
        screen.live(after, applied: [event])
        #expect(screen.model.highlighted == 2)
        #expect(screen.texts.contains { $0.hasPrefix("* 2") && $0.contains("✓ France") })
        #expect(screen.screen.contains("last: France ✓ · seq 1 · just now"))

        screen.advance(.seconds(1))
        #expect(screen.screen.contains("seq 1 · 1 s ago"), "the footer's clock ages by itself")
        screen.advance(.milliseconds(600))
        #expect(screen.model.highlighted == nil)
        #expect(!screen.texts.contains { $0.hasPrefix("* ") })
    }

    @Test func staleSaysSinceWhenWithoutReadingAClock() {
        var screen = ScreenHarness(.watch)
        screen.live(CountriesState(countries: SeedList.standard, seq: 3))
        screen.send(
            .update(replica: screen.model.replica, phase: .stale("no heartbeat for 3 s"), applied: []))
        screen.advance(.milliseconds(20))
        #expect(screen.texts.first?.hasSuffix("stale: no heartbeat for 3 s") == true)
        #expect(!screen.screen.contains("France"), "never old data posing as live")
        screen.advance(.seconds(3))
        #expect(screen.texts.first?.hasSuffix("stale: no heartbeat for 3 s (3 s ago)") == true)
        screen.live(CountriesState(countries: SeedList.standard, seq: 3))
        #expect(screen.texts.first?.hasSuffix("live · seq 3") == true)
    }

    @Test func framesAreCoalescedAndTheDeadlineSaysWhenTheNextIsDue() {
        var screen = ScreenHarness(.watch)
        let start = CountriesState(countries: SeedList.standard, seq: 0)
        #expect(screen.send(.update(replica: start, phase: .live, applied: [])).frame != nil)
        let (event, after) = toggled(start, 1)
        // A change within the frame interval is folded into the next frame.
        screen.now += .milliseconds(5)
        #expect(screen.send(.update(replica: after, phase: .live, applied: [event])).frame == nil)
        let due = screen.model.nextDeadline(now: screen.now)
        #expect(due.map { $0 > screen.now && $0 <= screen.now + .milliseconds(17) } == true)
        screen.now = due ?? screen.now
        #expect(screen.send(.tick).frame?.texts.contains { $0.contains("✓ United Kingdom") } == true)
        #expect(screen.send(.tick).frame == nil, "nothing new: no frame")
    }

    @Test func quitKeysQuitWithoutDrawing() {
        for key in [Key.char("q"), .char("Q"), .ctrlC, .escape] {
            for mode in [TableScreenModel.Mode.watch, .select] {
                var screen = ScreenHarness(mode)
                screen.live(world)
                let output = screen.send(.keys([.down, key, .down]))
                #expect(output.effects == [.quit])
                #expect(output.frame == nil)
            }
        }
    }

    @Test func resizeLaysOutForTheNewSize() {
        var screen = ScreenHarness(.watch)
        screen.live(world)
        screen.send(.resize(ViewportSize(rows: 8, columns: 30)))
        screen.advance(.milliseconds(20))
        #expect(screen.frame?.size == ViewportSize(rows: 8, columns: 30))
        #expect(screen.texts.count == 8)
        #expect(screen.texts.allSatisfy { DisplayWidth.of($0) <= 30 })
    }
}

@Suite struct WatchScrollingTests {
    /// A 20-row terminal shows 16 of the world's 249 rows (title, endpoints, summary, last).
    @Test func pagesThroughALongListAndStopsFollowing() throws {
        var screen = ScreenHarness(.watch)
        screen.live(world)
        #expect(screen.model.isFollowing)
        #expect(screen.shownIndexes.first == 0)
        let page = screen.shownIndexes.count
        #expect(page >= 10)

        screen.keys(.pageDown)
        #expect(screen.shownIndexes.first == page)
        #expect(!screen.model.isFollowing)
        #expect(screen.texts.first?.contains("f follows changes") == true, "the header says it")

        screen.keys(.down, .char("j"))
        #expect(screen.shownIndexes.first == page + 2)
        screen.keys(.up)
        #expect(screen.shownIndexes.first == page + 1)
        screen.keys(.pageUp, .pageUp)
        #expect(screen.shownIndexes.first == 0)
        #expect(!screen.model.isFollowing, "the top is not the end")

        screen.keys(.end)
        #expect(screen.shownIndexes.last == 248)
        #expect(screen.model.isFollowing, "back at the end: following again")
        #expect(screen.texts.first?.contains("f follows") == false)

        screen.keys(.home)
        #expect(screen.shownIndexes.first == 0)
        #expect(!screen.model.isFollowing)
        screen.keys(.char("G"))
        #expect(screen.shownIndexes.last == 248)
        screen.keys(.char("g"), .char("k"))
        #expect(screen.shownIndexes.first == 0)
    }

    @Test func scrollingDownToTheEndFollowsAgain() {
        var screen = ScreenHarness(.watch)
        screen.live(world)
        screen.keys(.pageDown)
        #expect(!screen.model.isFollowing)
        for _ in 0..<40 { screen.keys(.pageDown) }
        #expect(screen.shownIndexes.last == 248)
        #expect(screen.model.isFollowing)
    }

    @Test func aScrolledViewStaysPutOnChangesUntilFPressed() {
        var screen = ScreenHarness(.watch)
        var state = world
        screen.live(state)
        screen.keys(.pageDown)
        let shown = screen.shownIndexes

        var event: Event
        (event, state) = toggled(state, 200)
        screen.live(state, applied: [event])
        #expect(screen.shownIndexes == shown, "not following: the view does not jump to row 200")
        #expect(screen.screen.contains("last: \(state.rows[200].name) ✓"), "the footer still names it")

        screen.keys(.char("f"))
        #expect(screen.model.isFollowing)
        #expect(screen.shownIndexes.contains(200), "following again shows the highlighted row")
        (event, state) = toggled(state, 5)
        screen.live(state, applied: [event])
        #expect(screen.shownIndexes.contains(5), "and the next change")
    }

    @Test func aFollowingViewJumpsToEachChange() {
        var screen = ScreenHarness(.watch)
        var state = world
        screen.live(state)
        for index in [120, 3, 248, 77] {
            let event: Event
            (event, state) = toggled(state, index)
            screen.live(state, applied: [event])
            #expect(screen.shownIndexes.contains(index))
            #expect(
                screen.texts.contains {
                    $0.hasPrefix("* ") && $0.dropFirst(2).drop { $0 == " " }.hasPrefix("\(index) ")
                })
        }
    }

    @Test func aListThatFitsNeverStopsFollowing() {
        var screen = ScreenHarness(.watch, rows: 30)
        screen.live(CountriesState(countries: SeedList.standard, seq: 0))
        screen.keys(.pageDown, .down, .home, .up)
        #expect(screen.model.isFollowing)
        #expect(screen.shownIndexes == Array(0..<8))
        #expect(screen.texts.first?.hasPrefix("countries watch ") == true)
    }
}

@Suite struct SelectModelTests {
    @Test func spaceAsksForAToggleAndTheStatusLineFollowsTheReply() {
        var screen = ScreenHarness(.select)
        let start = CountriesState(countries: SeedList.standard, seq: 0)
        screen.live(start)
        #expect(screen.texts.contains { $0.hasPrefix("> 0") })
        screen.keys(.char("j"), .down)
        #expect(screen.model.cursor == 2)
        screen.keys(.space)
        let france = IndexedCountry(index: 2, name: "France", visited: false)
        #expect(screen.effects == [.toggle(france)])
        #expect(screen.screen.contains("Toggling France…"))

        screen.send(
            .toggleReplied(Reply(seq: 1, country: IndexedCountry(index: 2, name: "France", visited: true))))
        screen.advance(.milliseconds(20))
        #expect(screen.screen.contains("Selected country: France (now visited)"))

        screen.send(.toggleFailed(france, message: "no reply within 2 s"))
        screen.advance(.milliseconds(20))
        #expect(screen.screen.contains("France was not toggled: no reply within 2 s"))
        #expect(screen.model.status?.isError == true)

        // A toggle that may have been applied is never "not toggled".
        screen.send(
            .toggleFailed(
                france,
                message: "outcome unknown: the change may or may not have been applied (x); request id r1",
                outcomeUnknown: true))
        screen.advance(.milliseconds(20))
        #expect(screen.screen.contains("France: outcome unknown; if the toggle was made, its row wi…"))
        #expect(!screen.screen.contains("was not toggled"))
        #expect(!screen.screen.contains("request id"))
    }

    @Test func anUnknownOutcomeGivesWayToTheRowsNextChange() throws {
        var screen = ScreenHarness(.select, columns: 80)
        var state = CountriesState(countries: SeedList.standard, seq: 0)
        screen.live(state)
        let france = IndexedCountry(index: 2, name: "France", visited: false)
        screen.send(
            .toggleFailed(france, message: "outcome unknown: ...; request id r1", outcomeUnknown: true))
        screen.advance(.milliseconds(20))
        #expect(
            screen.model.status?.text
                == "France: outcome unknown; if the toggle was made, its row will change")

        // Another row's change leaves the status alone.
        let italy = Event(seq: 1, kind: .changed(IndexedCountry(index: 3, name: "Italy", visited: true)))
        try state.replay(italy)
        screen.live(state, applied: [italy])
        #expect(screen.model.status?.isError == true)

        // France's own change settles it: the status says what the row now is.
        let toggled = Event(seq: 2, kind: .changed(IndexedCountry(index: 2, name: "France", visited: true)))
        try state.replay(toggled)
        screen.live(state, applied: [toggled])
        screen.advance(.milliseconds(20))
        #expect(screen.model.status == .init(text: "France is now visited (seq 2)", isError: false))
        #expect(screen.screen.contains("France is now visited (seq 2)"))

        // Settled once: a later change of the row is the table's to show, not the status's.
        let again = Event(seq: 3, kind: .changed(IndexedCountry(index: 2, name: "France", visited: false)))
        try state.replay(again)
        screen.live(state, applied: [again])
        #expect(screen.model.status?.text == "France is now visited (seq 2)")

        // A plain failure is not unsettled: a change of the row does not rewrite it.
        screen.send(.toggleFailed(france, message: "nothing is listening"))
        let fourth = Event(seq: 4, kind: .changed(IndexedCountry(index: 2, name: "France", visited: true)))
        try state.replay(fourth)
        screen.live(state, applied: [fourth])
        #expect(screen.model.status?.text == "France was not toggled: nothing is listening")
    }

    @Test func skeletonRowsCannotBeToggled() {
        var screen = ScreenHarness(.select)
        screen.send(.update(replica: nil, phase: .connecting, applied: []))
        screen.keys(.space, .enter)
        #expect(screen.effects.isEmpty)
    }

    @Test func theCursorStaysOnItsCountryWhenRowsMove() throws {
        var screen = ScreenHarness(.select)
        var state = CountriesState(countries: SeedList.standard, seq: 0)
        screen.live(state)
        screen.keys(.char("j"), .char("j"), .char("j"))
        #expect(screen.model.cursor == 3)  // Italy
        let removed = Event(
            seq: 1, kind: .removed(IndexedCountry(index: 0, name: "United States", visited: true)))
        try state.replay(removed)
        screen.live(state, applied: [removed])
        #expect(screen.model.cursor == 2)
        #expect(screen.texts.contains { $0.hasPrefix("> 2") && $0.hasSuffix("Italy") })
    }

    @Test func theCursorScrollsTheView() {
        var screen = ScreenHarness(.select)
        screen.live(world)
        screen.keys(.end)
        #expect(screen.model.cursor == 248)
        #expect(screen.shownIndexes.last == 248)
        screen.keys(.pageUp)
        #expect(screen.shownIndexes.contains(screen.model.cursor))
    }
}

/// Seeded runs of random inputs: whatever happens, the screen keeps its invariants.
@Suite struct TableScreenModelSimulationTests {
    private struct Generator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
    }

    private static let keys: [Key] = [
        .up, .down, .pageUp, .pageDown, .home, .end, .char("j"), .char("k"), .char("g"), .char("G"),
        .char("f"), .space, .enter, .char("x"),
    ]

    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func invariantsHold(seed: UInt64) throws {
        var random = Generator(state: seed)
        for mode in [TableScreenModel.Mode.watch, .select] {
            var screen = ScreenHarness(mode, rows: 6 + random.below(30), columns: 20 + random.below(80))
            var state = world
            for _ in 0..<400 {
                switch random.below(10) {
                case 0..<4:
                    screen.send(.keys([Self.keys[random.below(Self.keys.count)]]))
                case 4..<6:
                    let event: Event
                    if random.below(5) == 0, state.count > 1 {
                        let row = state.rows[random.below(state.count)]
                        event = Event(seq: state.seq + 1, kind: .removed(row))
                    } else {
                        let index = random.below(state.count)
                        let row = state.rows[index]
                        event = Event(
                            seq: state.seq + 1,
                            kind: .changed(
                                IndexedCountry(index: index, name: row.name, visited: !row.visited)))
                    }
                    try state.replay(event)
                    screen.send(.update(replica: state, phase: .live, applied: [event]))
                case 6:
                    screen.send(.update(replica: state, phase: .stale("missed events"), applied: []))
                case 7:
                    screen.send(
                        .resize(ViewportSize(rows: 6 + random.below(30), columns: 20 + random.below(80))))
                default:
                    screen.now += .milliseconds(random.below(2_000))
                    screen.send(.tick)
                }
                #expect(!screen.effects.contains(.quit))
                let next = screen.model.nextDeadline(now: screen.now)
                #expect(next.map { $0 >= screen.now } ?? true, "seed \(seed)")
                screen.now += .milliseconds(20)
                screen.send(.tick)
                guard let frame = screen.frame else { continue }
                #expect(frame.lines.count == screen.model.size.rows, "seed \(seed)")
                #expect(frame.texts.allSatisfy { DisplayWidth.of($0) <= screen.model.size.columns })
                #expect(screen.model.scrollOffset >= 0)
                #expect(screen.model.scrollOffset <= max(0, state.count - 1))
                if mode == .select, case .live = screen.model.phase {
                    #expect(screen.model.cursor < state.count, "seed \(seed)")
                    #expect(
                        screen.shownIndexes.isEmpty || screen.shownIndexes.contains(screen.model.cursor),
                        "seed \(seed): the cursor is on screen")
                }
                if mode == .watch, screen.model.isFollowing, case .live = screen.model.phase,
                    let highlighted = screen.model.highlighted, !screen.shownIndexes.isEmpty
                {
                    #expect(
                        screen.shownIndexes.contains(highlighted), "seed \(seed): following shows the change")
                }
            }
        }
    }
}

// A failed expectation names the model in one line, not with all 249 countries.
extension TableScreenModel: CustomTestStringConvertible {
    public var testDescription: String {
        "TableScreenModel(\(mode), offset \(scrollOffset), following \(isFollowing), cursor \(cursor))"
    }
}

extension ScreenHarness: CustomTestStringConvertible {
    var testDescription: String { "\(model.testDescription) at\n\(screen)" }
}

/// Issue 22: a name from the wire holding a title change (OSC ... BEL), a screen clear (CSI 2J),
/// the 8-bit CSI, a bidi override and DEL is drawn escaped on the live table: the bytes sent
/// to the terminal hold no control but the renderer's own cursor moves and styles.
@Suite struct HostileNameScreenTests {
    static let hostile = "Evil\u{1B}]0;pwned\u{7}\u{1B}[2J\u{9B}31m\u{202E}dlroW\u{7F}"
    static let shown = #"Evil\u{1B}]0;pwned\u{7}\u{1B}[2J\u{9B}31m\u{202E}dlroW\u{7F}"#

    /// The renderer's output without its own CSI sequences (cursor moves, erase, SGR): what is
    /// left must show, not act.
    static func rawControls(in bytes: [UInt8]) -> [Unicode.Scalar] {
        var scalars = Array(String(decoding: bytes, as: UTF8.self).unicodeScalars)
        var index = 0
        while index < scalars.count {
            if scalars[index] == "\u{1B}", index + 1 < scalars.count, scalars[index + 1] == "[" {
                var end = index + 2
                while end < scalars.count, "0123456789;".unicodeScalars.contains(scalars[end]) { end += 1 }
                if end < scalars.count, "HJKm".unicodeScalars.contains(scalars[end]) {
                    scalars.removeSubrange(index...end)
                    continue
                }
            }
            index += 1
        }
        return scalars.filter(VisibleText.isEscaped)
    }

    @Test(arguments: [true, false])
    func aHostileNameIsDrawnEscapedOnTheLiveTable(color: Bool) throws {
        let size = ViewportSize(rows: 20, columns: 120)
        var screen = ScreenHarness(.select, rows: size.rows, columns: size.columns)
        let start = CountriesState(countries: SeedList.standard, seq: 4)
        screen.live(start)
        // A row added with the name (from a snapshot or an event), named in the footer too.
        var rows = start.rows
        rows.append(IndexedCountry(index: rows.count, name: Self.hostile, visited: false))
        let after = CountriesState(rows: rows, seq: 5)
        let added = Event(seq: 5, kind: .added(rows[rows.count - 1]))
        screen.live(after, applied: [added])
        // The status line of `select` quotes a reply about it.
        screen.send(.toggleFailed(rows[rows.count - 1], message: "refused: \(Self.hostile)"))
        screen.advance(.milliseconds(20))

        let renderer = RendererHarness(color: color)
        var terminal = VirtualScreen(size: size)
        var stages: [[UInt8]] = []
        let live = try #require(screen.frame)
        stages.append(renderer.render(live))
        terminal.feed(stages[0])
        #expect(terminal.lines.contains { $0.hasSuffix(" " + Self.shown) }, "the row: \(terminal.lines)")
        #expect(terminal.lines.contains { $0.contains("last: added " + Self.shown) }, "\(terminal.lines)")
        #expect(
            terminal.lines.contains { $0.contains(#"was not toggled: refused: Evil\u{1B}]0;pwned\u{7}"#) })
        // Every line fits the width: the escapes were laid out, not added after.
        #expect(live.texts.allSatisfy { DisplayWidth.of($0) <= size.columns })

        // The header's stale reason quotes it.
        screen.send(.update(replica: after, phase: .stale("odd \(Self.hostile)"), applied: []))
        screen.advance(.milliseconds(20))
        let stale = try #require(screen.frame)
        stages.append(renderer.render(stale))
        terminal.feed(stages[1])
        #expect(
            terminal.lines.first?.contains(#"stale: odd Evil\u{1B}]0;pwned\u{7}\u{1B}[2J"#) == true,
            "\(terminal.lines)")

        for bytes in stages {
            #expect(Self.rawControls(in: bytes).isEmpty, "\(Self.rawControls(in: bytes))")
            #expect(!String(decoding: bytes, as: UTF8.self).contains("\u{1B}]"), "no OSC: the title stays")
        }
    }

    /// The renderer is the last stop: a line that reaches it raw (a view of tomorrow that forgot
    /// to escape) is still written escaped.
    @Test func theRendererEscapesWhatReachesItRaw() {
        let size = ViewportSize(rows: 2, columns: 200)
        for color in [true, false] {
            let renderer = RendererHarness(color: color)
            let first = renderer.render(
                Frame(size: size, lines: [ScreenLine(Self.hostile, style: .header), ScreenLine("calm")]))
            #expect(Self.rawControls(in: first).isEmpty)
            let tail = renderer.render(
                Frame(
                    size: size,
                    lines: [ScreenLine(Self.hostile, style: .header), ScreenLine("calm " + Self.hostile)]))
            #expect(Self.rawControls(in: tail).isEmpty)
            #expect(String(decoding: tail, as: UTF8.self).contains(Self.shown))
        }
    }
}
