import SystemSupport

#if canImport(Glibc)
    @preconcurrency import Glibc
    private let systemWrite = Glibc.write
    private let systemRead = Glibc.read
#elseif canImport(Darwin)
    import Darwin
    private let systemWrite = Darwin.write
    private let systemRead = Darwin.read
#endif

/// A failure of a terminal system call, with `errno`.
public struct TerminalError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The call that failed (`tcsetattr`, `write`).
    public var call: String
    /// The `errno` it set.
    public var code: Int32

    /// Creates an error.
    public init(call: String, code: Int32) {
        self.call = call
        self.code = code
    }

    /// `write: Broken pipe`.
    public var description: String { "\(call): \(String(cString: strerror(code)))" }
}

/// The controlling terminal: raw mode, the alternate screen, the size, and writes. The only part
/// of this module that makes system calls; it knows nothing of signals or sockets.
///
/// Raw mode turns off `ICANON`, `ECHO`, `ISIG` and `IEXTEN` (and `IXON`, `ICRNL`): Ctrl-C arrives
/// as the byte 0x03 and the loop quits through its normal path, restoring the terminal on the
/// way. (Ctrl-Z does not suspend, and SIGINT from `kill` is the executable's to handle.) Output
/// processing stays on. `VMIN = 1`, `VTIME = 0`: read after poll says stdin is readable; a read
/// of 0 bytes then means end of input.
///
/// ``restore()`` undoes everything this terminal did and is safe to call more than once and from
/// every exit path (`q`, Ctrl-C, SIGTERM, errors).
public final class Terminal: Sendable {
    /// The input file descriptor (standard input by default).
    public let input: Int32
    /// The output file descriptor (standard output by default).
    public let output: Int32

    private struct State {
        var savedAttributes: termios?
        var fullScreen = false
    }

    private let state = Locked(State())

    /// Creates a terminal over two file descriptors; nothing changes until asked.
    public init(input: Int32 = STDIN_FILENO, output: Int32 = STDOUT_FILENO) {
        self.input = input
        self.output = output
    }

    /// Whether `descriptor` is a terminal.
    public static func isTerminal(_ descriptor: Int32) -> Bool {
        isatty(descriptor) == 1
    }

    /// Whether the input is a terminal (keys can be read in raw mode).
    public var inputIsTerminal: Bool { Self.isTerminal(input) }

    /// Whether the output is a terminal (a live screen can be drawn).
    public var outputIsTerminal: Bool { Self.isTerminal(output) }

    /// Puts the input in raw mode, saving its settings for ``restore()``.
    public func enterRawMode() throws(TerminalError) {
        var original = termios()
        guard tcgetattr(input, &original) == 0 else { throw TerminalError(call: "tcgetattr", code: errno) }
        var raw = original
        raw.c_iflag &= ~tcflag_t(ICRNL | IXON | BRKINT | INPCK | ISTRIP)
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO | ISIG | IEXTEN)
        raw.c_cflag |= tcflag_t(CS8)
        withUnsafeMutableBytes(of: &raw.c_cc) { bytes in
            bytes[Int(VMIN)] = 1
            bytes[Int(VTIME)] = 0
        }
        guard tcsetattr(input, TCSAFLUSH, &raw) == 0 else {
            throw TerminalError(call: "tcsetattr", code: errno)
        }
        state.withLock { state in
            if state.savedAttributes == nil { state.savedAttributes = original }
        }
    }

    /// Switches to the alternate screen, hides the cursor and clears the screen.
    public func enterFullScreen() throws(TerminalError) {
        state.withLock { $0.fullScreen = true }
        try write(Array(Self.enterFullScreenSequence.utf8))
    }

    /// `CSI ?1049h`, hide cursor, clear.
    public static let enterFullScreenSequence = "\u{1B}[?1049h\u{1B}[?25l\u{1B}[H\u{1B}[2J"
    /// Reset SGR, show cursor, `CSI ?1049l`.
    public static let leaveFullScreenSequence = "\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l"

    /// The window size from `TIOCGWINSZ`, or 24 × 80 when the terminal does not say.
    public func size() -> ViewportSize {
        var size = winsize()
        for descriptor in [output, input] {
            if ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0, size.ws_col > 0 {
                return ViewportSize(rows: Int(size.ws_row), columns: Int(size.ws_col))
            }
        }
        return .fallback
    }

    /// Writes all of `bytes`, retrying partial writes and `EINTR`, and waiting on `EAGAIN`.
    public func write(_ bytes: [UInt8]) throws(TerminalError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                systemWrite(output, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if written > 0 {
                offset += written
                continue
            }
            let code = errno
            if written < 0 && code == EINTR { continue }
            if written < 0 && (code == EAGAIN || code == EWOULDBLOCK) {
                var descriptor = pollfd(fd: output, events: Int16(POLLOUT), revents: 0)
                _ = poll(&descriptor, 1, 1000)
                continue
            }
            throw TerminalError(call: "write", code: written == 0 ? EIO : code)
        }
    }

    /// Reads the bytes waiting on the input (at most `maximum`): empty at end of input.
    /// Call it after poll reports the input readable.
    public func read(maximum: Int = 4096) throws(TerminalError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: maximum)
        while true {
            let count = bytes.withUnsafeMutableBytes { systemRead(input, $0.baseAddress!, maximum) }
            if count >= 0 { return Array(bytes.prefix(count)) }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK { return [] }
            throw TerminalError(call: "read", code: code)
        }
    }

    /// Leaves the alternate screen, shows the cursor and restores the input's settings.
    /// Idempotent: only the first call after a change does anything. Errors are ignored, as
    /// there is nothing left to do about them on the way out.
    public func restore() {
        let (attributes, fullScreen) = state.withLock { state in
            defer {
                state.savedAttributes = nil
                state.fullScreen = false
            }
            return (state.savedAttributes, state.fullScreen)
        }
        if fullScreen {
            try? write(Array(Self.leaveFullScreenSequence.utf8))
        }
        if var attributes {
            _ = tcsetattr(input, TCSAFLUSH, &attributes)
        }
    }

    deinit {
        restore()
    }
}
