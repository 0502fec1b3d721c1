import Testing

@testable import CountriesTerminal

#if canImport(Glibc)
    @preconcurrency import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The impure part, exercised on a pipe (not a terminal): writes go through whole, the size falls
/// back to 24 × 80, raw mode is refused, and restore is harmless.
@Suite struct TerminalTests {
    @Test func writesFullyAndFallsBackOnAPipe() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer {
            close(fds[0])
            close(fds[1])
        }
        let terminal = Terminal(input: fds[0], output: fds[1])
        #expect(!terminal.inputIsTerminal)
        #expect(!terminal.outputIsTerminal)
        #expect(terminal.size() == .fallback)
        #expect(throws: TerminalError.self) { try terminal.enterRawMode() }
        let bytes = Array("hello ✓\n".utf8)
        try terminal.write(bytes)
        #expect(try terminal.read(maximum: 64) == bytes)
        terminal.restore()
        terminal.restore()
    }

    @Test func fullScreenIsLeftOnRestoreOnce() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer {
            close(fds[0])
            close(fds[1])
        }
        let terminal = Terminal(input: fds[0], output: fds[1])
        try terminal.enterFullScreen()
        terminal.restore()
        terminal.restore()
        let expected = Terminal.enterFullScreenSequence + Terminal.leaveFullScreenSequence
        let output = try terminal.read(maximum: 256)
        #expect(String(decoding: output, as: UTF8.self) == expected)
    }
}
