import CountriesCore
import CountriesTerminal
import Foundation
@preconcurrency import Glibc
import SystemSupport

/// Everything the command line prints, in one place, so the formats stay consistent.
enum Output {
    /// Writes `countries: message` (or the message alone) to stderr.
    static func error(_ message: String, prefixed: Bool = true) {
        FileDescriptorOutput.standardError((prefixed ? "countries: " : "") + message)
    }

    /// Writes a line to stdout and flushes, so pipes see each line at once.
    static func line(_ text: String) {
        if !FileDescriptorOutput.standardOutput(text) {
            // The reader has gone (`countries events | head`): nothing more to say to anyone.
            exit(ExitCode.success)
        }
    }

    /// The reply's JSON on one line, as the service sent it.
    static func json(_ reply: Reply) {
        line(String(decoding: reply.encoded(), as: UTF8.self))
    }

    /// The glyphs plain output uses (`✓` or `[x]`), from the locale.
    static let glyphs = TerminalCapabilities(
        environment: ProcessInfo.processInfo.environment, outputIsTerminal: false
    ).glyphs
}
