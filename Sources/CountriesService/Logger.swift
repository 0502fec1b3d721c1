import Foundation
@preconcurrency import Glibc
import SystemSupport

/// How much the service says on stderr.
public enum LogLevel: Int, Comparable, Sendable, CaseIterable {
    case debug, info, warning, error

    /// Parses `debug`, `info`, `warning` (or `warn`), `error`.
    public init?(name: String) {
        switch name.lowercased() {
        case "debug": self = .debug
        case "info": self = .info
        case "warning", "warn": self = .warning
        case "error": self = .error
        default: return nil
        }
    }

    /// The level's name as printed.
    public var name: String {
        switch self {
        case .debug: return "debug"
        case .info: return "info"
        case .warning: return "warning"
        case .error: return "error"
        }
    }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// One line per event on stderr: `2026-11-30T12:00:00.123Z warning: message`.
public struct Logger: Sendable {
    /// The least severe level that is written.
    public var level: LogLevel
    private let sink: @Sendable (String) -> Void

    /// A logger writing to stderr.
    public init(level: LogLevel = .info) {
        self.init(level: level) { line in FileDescriptorOutput.standardError(line) }
    }

    /// A logger writing each line to `sink` (tests collect them).
    public init(level: LogLevel, sink: @escaping @Sendable (String) -> Void) {
        self.level = level
        self.sink = sink
    }

    /// Writes `message` at `level` if the logger's level lets it through.
    public func log(_ level: LogLevel, _ message: @autoclosure () -> String) {
        guard level >= self.level else { return }
        sink("\(Logger.timestamp()) \(level.name): \(message())")
    }

    private static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", parts.tm_year + 1900, parts.tm_mon + 1,
            parts.tm_mday,
            parts.tm_hour, parts.tm_min, parts.tm_sec, now.tv_nsec / 1_000_000)
    }
}
