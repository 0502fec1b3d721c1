import CountriesCore
import Testing

@testable import CountriesTerminal

@Suite struct RendererTests {
    let size = ViewportSize(rows: 260, columns: 80)

    func frame(_ state: CountriesState, highlighted: Int? = nil, size: ViewportSize) -> Frame {
        let view = TableView(
            header: HeaderModel(
                title: "countries watch", endpoints: "tcp://127.0.0.1:5556", phase: .live, seq: state.seq),
            footer: FooterModel(summary: FooterModel.summary(of: state)), highlighted: highlighted)
        return view.layout(LiveDataSource(state: state), in: size).frame
    }

    func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func firstFrameClearsAndDrawsEverything() {
        let renderer = RendererHarness(color: true)
        let output = text(renderer.render(frame(manyCountries(250), size: size)))
        #expect(output.contains("\u{1B}[H\u{1B}[2J"))
        #expect(output.contains("\u{1B}[3;1H    0    Country 0"))
        #expect(output.contains("Country 249"))
        #expect(output.contains("\u{1B}[7mcountries watch"))
    }

    @Test func oneChangedRowIsSmall() throws {
        var state = manyCountries(250)
        let renderer = RendererHarness(color: true)
        _ = renderer.render(frame(state, size: size))
        _ = try state.apply(.toggle(.index(120)), seed: [])
        let bytes = renderer.render(frame(state, size: size))
        #expect(bytes.count < 300)
        let output = text(bytes)
        #expect(output.contains("\u{1B}[123;1H  120  ✓ Country 120\u{1B}[K"))
        #expect(!output.contains("\u{1B}[2J"))
        // With the changed row highlighted as well, still small.
        _ = try state.apply(.toggle(.index(121)), seed: [])
        #expect(renderer.render(frame(state, highlighted: 121, size: size)).count < 300)
    }

    @Test func unchangedFrameWritesNothing() {
        let renderer = RendererHarness(color: true)
        let first = frame(manyCountries(250), size: size)
        _ = renderer.render(first)
        #expect(renderer.render(first).isEmpty)
    }

    @Test func resizeAndInvalidateRedrawEverything() {
        let renderer = RendererHarness(color: false)
        let state = manyCountries(250)
        _ = renderer.render(frame(state, size: size))
        let resized = text(renderer.render(frame(state, size: ViewportSize(rows: 40, columns: 100))))
        #expect(resized.hasPrefix("\u{1B}[H\u{1B}[2J"))
        #expect(resized.contains("Country 0"))
        let same = frame(state, size: ViewportSize(rows: 40, columns: 100))
        #expect(renderer.render(same).isEmpty)
        renderer.invalidate()
        let redrawn = text(renderer.render(same))
        #expect(redrawn.hasPrefix("\u{1B}[H\u{1B}[2J"))
        #expect(redrawn.contains("Country 0"))
    }

    @Test func noSGRWithColourOff() throws {
        let renderer = RendererHarness(color: false)
        var state = manyCountries(30)
        let view = { (state: CountriesState) in
            TableView(
                header: HeaderModel(title: "t", phase: .stale("no heartbeat for 3 s"), seq: 0),
                footer: FooterModel(summary: "s", status: "error", statusIsError: true), cursor: 3,
                highlighted: 5
            ).layout(LiveDataSource(state: state), in: ViewportSize(rows: 20, columns: 40)).frame
        }
        var output = text(renderer.render(view(state)))
        _ = try state.apply(.toggle(.index(5)), seed: [])
        output += text(renderer.render(view(state)))
        #expect(output.range(of: #"\x1B\[[0-9;]*m"#, options: .regularExpression) == nil)
        #expect(output.contains(">  3    Country 3"))
        #expect(output.contains("*  5  ✓ Country 5"))
    }

    @Test func changedLineThatBecomesEmptyIsErased() {
        let renderer = RendererHarness(color: false)
        let small = ViewportSize(rows: 3, columns: 10)
        _ = renderer.render(Frame(size: small, lines: [ScreenLine("a"), ScreenLine("b"), ScreenLine("c")]))
        let output = text(
            renderer.render(Frame(size: small, lines: [ScreenLine("a"), .blank, ScreenLine("c")])))
        #expect(output == "\u{1B}[2;1H\u{1B}[K")
    }

    @Test func styleChangeAloneRedrawsTheLineAndBarsSpanTheWidth() {
        let renderer = RendererHarness(color: true)
        let small = ViewportSize(rows: 1, columns: 6)
        _ = renderer.render(Frame(size: small, lines: [ScreenLine("ab")]))
        let output = text(renderer.render(Frame(size: small, lines: [ScreenLine("ab", style: .cursor)])))
        #expect(output == "\u{1B}[1;1H\u{1B}[7mab    \u{1B}[0m\u{1B}[K")
    }
}

// A reference wrapper, so that `#expect` (which evaluates its operands as immutable values) can
// call the mutating methods.
final class RendererHarness {
    var renderer: FrameRenderer
    init(color: Bool) { renderer = FrameRenderer(color: color) }
    func render(_ frame: Frame) -> [UInt8] { renderer.render(frame) }
    func invalidate() { renderer.invalidate() }
}
