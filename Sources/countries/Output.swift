import CountriesCore
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

    /// Whether the locale can show ✓.
    static let unicode: Bool = {
        let environment = ProcessInfo.processInfo.environment
        let locale =
            environment["LC_ALL"].flatMap { $0.isEmpty ? nil : $0 }
            ?? environment["LC_CTYPE"].flatMap { $0.isEmpty ? nil : $0 }
            ?? environment["LANG"] ?? ""
        return locale.lowercased().contains("utf-8") || locale.lowercased().contains("utf8")
    }()

    static var visitedMark: String { unicode ? "✓" : "[x]" }

    /// A table of rows: index, name, mark.
    static func table(_ rows: [IndexedCountry]) -> [String] {
        let indexWidth = max(1, String(max(0, rows.count - 1)).count)
        let nameWidth = rows.map(\.name.count).max() ?? 0
        return rows.map { row in
            let index = String(row.index).leftPadded(to: indexWidth)
            let name = row.name.rightPadded(to: nameWidth)
            return "\(index)  \(name)  \(row.visited ? visitedMark : "")".trimmingTrailingSpaces()
        }
    }

    /// One event as a line: `12  country.changed  2 France ✓`.
    static func describe(_ event: Event) -> String {
        switch event.kind {
        case .changed(let row), .added(let row), .removed(let row):
            return
                "\(event.seq)  \(event.topic.rawValue)  \(row.index) \(row.name)\(row.visited ? " " + visitedMark : "")"
        case .reset(let rows):
            return "\(event.seq)  \(event.topic.rawValue)  \(rows.count) countries"
        }
    }

    static func visitedWord(_ visited: Bool) -> String { visited ? "visited" : "not visited" }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }

    func rightPadded(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }

    func trimmingTrailingSpaces() -> String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
