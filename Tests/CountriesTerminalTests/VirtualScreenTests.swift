import CountriesCore
import TestSupport
import Testing

@testable import CountriesTerminal

/// A tiny terminal: interprets the renderer's output (cursor moves, erase to end of line,
/// clear screen; styles ignored) into a grid, so tests check what a person would see rather
/// than which bytes were sent.
struct VirtualScreen {
    var rows: [[Character]]
    var row = 0
    var column = 0
    let width: Int

    init(size: ViewportSize) {
        width = size.columns
        rows = Array(repeating: Array(repeating: " ", count: size.columns), count: size.rows)
    }

    mutating func feed(_ bytes: [UInt8]) {
        let text = Array(String(decoding: bytes, as: UTF8.self))
        var index = 0
        while index < text.count {
            let character = text[index]
            if character == "\u{1B}", index + 1 < text.count, text[index + 1] == "[" {
                var end = index + 2
                while end < text.count, !(text[end].isLetter) { end += 1 }
                let parameters = String(text[(index + 2)..<end])
                apply(final: text[end], parameters: parameters)
                index = end + 1
                continue
            }
            if row < rows.count, column < width {
                rows[row][column] = character
                // A wide character takes two cells.
                column += DisplayWidth.of(character)
                if DisplayWidth.of(character) == 2, column - 1 < width { rows[row][column - 1] = "\u{0}" }
            }
            index += 1
        }
    }

    private mutating func apply(final: Character, parameters: String) {
        switch final {
        case "H":
            let parts = parameters.split(separator: ";").compactMap { Int($0) }
            row = (parts.first ?? 1) - 1
            column = (parts.count > 1 ? parts[1] : 1) - 1
        case "J":
            rows = rows.map { _ in Array(repeating: " ", count: width) }
        case "K":
            if row < rows.count {
                for cell in column..<width { rows[row][cell] = " " }
            }
        default:
            break  // SGR and cursor visibility do not change the text
        }
    }

    /// The screen's text, trailing blanks trimmed, wide characters' second cells dropped.
    var lines: [String] {
        rows.map { cells in
            var line = String(cells.filter { $0 != "\u{0}" })
            while line.last == " " { line.removeLast() }
            return line
        }
    }
}

@Suite struct VirtualScreenTests {
    func frame(
        _ state: CountriesState, phase: SubscriptionPhase, cursor: Int?, highlighted: Int?,
        size: ViewportSize,
        lastChange: String?
    ) -> Frame {
        let view = TableView(
            header: HeaderModel(
                title: "countries watch", endpoints: "commands ipc://x · events ipc://y", phase: phase,
                seq: state.seq),
            footer: FooterModel(summary: FooterModel.summary(of: state), lastChange: lastChange),
            cursor: cursor, highlighted: highlighted)
        return view.layout(phase.dataSource(state: state), in: size).frame
    }

    /// Whatever sequence of frames is drawn, the screen shows exactly the last one.
    @Test(arguments: [true, false])
    func screenAlwaysShowsTheLastFrame(color: Bool) throws {
        var generator = SplitMix64(seed: color ? 7 : 11)
        let size = ViewportSize(rows: 20, columns: 60)
        var state = CountriesState(countries: SeedList.world.prefix(30).map { $0 })
        var renderer = FrameRenderer(color: color)
        var screen = VirtualScreen(size: size)
        for step in 0..<300 {
            let index = Int(generator.next() % UInt64(state.count))
            let result = try state.apply(.toggle(.index(index)), seed: [])
            let phase: SubscriptionPhase = step % 37 == 0 ? .stale("no heartbeat for 3 s") : .live
            let expected = frame(
                state, phase: phase, cursor: step % 3 == 0 ? index : nil, highlighted: index, size: size,
                lastChange: result.event.map { LastChange.describe($0, age: .seconds(step % 5)) })
            screen.feed(renderer.render(expected))
            let shown = screen.lines
            let wanted = expected.lines.map { line -> String in
                var text = line.text
                while text.last == " " { text.removeLast() }
                return text
            }
            #expect(shown == wanted, "step \(step)")
            if shown != wanted { return }
        }
    }

    /// A line that keeps its beginning but gets shorter must not leave the old end behind.
    @Test(arguments: [true, false])
    func aShorterLineLeavesNothingBehind(color: Bool) {
        let size = ViewportSize(rows: 12, columns: 70)
        let state = CountriesState(countries: SeedList.standard)
        var renderer = FrameRenderer(color: color)
        var screen = VirtualScreen(size: size)
        for status in [
            "Selected country: France (now not visited)", "Selected country: France (now visited)",
        ] {
            let view = TableView(
                header: HeaderModel(title: "countries select", phase: .live, seq: 1),
                footer: FooterModel(summary: "1 of 8 visited", status: status), cursor: 2)
            let expected = view.layout(LiveDataSource(state: state), in: size).frame
            screen.feed(renderer.render(expected))
            #expect(screen.lines.contains(status))
            #expect(!screen.lines.contains { $0.hasPrefix(status) && $0 != status }, "\(screen.lines)")
        }
    }

    @Test func aSeqChangeInTheHeaderRewritesOnlyItsEnd() throws {
        let size = ViewportSize(rows: 20, columns: 80)
        var state = CountriesState(countries: SeedList.standard)
        var renderer = FrameRenderer(color: true)
        _ = renderer.render(
            frame(state, phase: .live, cursor: nil, highlighted: nil, size: size, lastChange: nil))
        _ = try state.apply(.toggle(.index(2)), seed: [])
        let bytes = renderer.render(
            frame(
                state, phase: .live, cursor: nil, highlighted: 2, size: size,
                lastChange: "France ✓ · seq 1"))
        // The header, the row, its highlight, the footer: well under the 300-byte target.
        #expect(bytes.count < 220, "\(bytes.count) bytes")
    }
}
