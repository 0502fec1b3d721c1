import CountriesCore
import CountriesTerminal
import Foundation
@preconcurrency import Glibc
import SystemSupport

/// Everything the command line prints, in one place, so the formats stay consistent.
///
/// Nothing reaches stdout or stderr raw: text goes through
/// ``VisibleText/escaped(_:keepingNewlines:)`` and JSON through ``VisibleText/escapedJSON(_:)``
/// (names and messages come from the wire, and a terminal must never take them for commands). The
/// formatters escape what they lay out already, so that widths are right; this is the last stop for
/// everything else.
public enum Output {
    /// Writes `countries: message` (or the message alone) to stderr.
    public static func error(_ message: String, prefixed: Bool = true) {
        FileDescriptorOutput.standardError(
            VisibleText.escaped((prefixed ? "countries: " : "") + message, keepingNewlines: true))
    }

    /// Writes a whole document (a completion script, the man page) to stdout as it is, lines and
    /// all; it ends with its own newline.
    static func document(_ text: String) {
        if !FileDescriptorOutput.write(VisibleText.escaped(text, keepingNewlines: true), to: 1) {
            exit(ExitCode.success)
        }
    }

    /// Writes a line to stdout and flushes, so pipes see each line at once.
    static func line(_ text: String) {
        if !FileDescriptorOutput.standardOutput(VisibleText.escaped(text)) {
            // The reader has gone (`countries events | head`): nothing more to say to anyone.
            exit(ExitCode.success)
        }
    }

    /// One line of JSON (the project's writer makes it), with what a terminal must not get raw
    /// as JSON escapes: the values read back are the same.
    static func json(_ data: Data) {
        line(String(decoding: VisibleText.escapedJSON(data), as: UTF8.self))
    }

    /// The reply's JSON on one line, as the service sent it (escaped as ``json(_:)-(Data)`` says).
    static func json(_ reply: Reply) {
        json(reply.encoded())
    }

    /// The glyphs plain output uses (`✓` or `[x]`), from the locale.
    static let glyphs = TerminalCapabilities(
        environment: ProcessInfo.processInfo.environment, outputIsTerminal: false
    ).glyphs
}
