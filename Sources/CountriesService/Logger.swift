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

/// How log lines are written.
public enum LogFormat: String, Sendable, CaseIterable {
    /// `2026-11-30T12:00:00.123Z warning: message`, for people.
    case text
    /// `{"time":"2026-11-30T12:00:00.123Z","level":"warning","message":"..."}`, for collectors.
    case json
}

/// One line per event on stderr.
public struct Logger: Sendable {
    /// The least severe level that is written.
    public var level: LogLevel
    /// Text for people, or one JSON object per line for log collectors.
    public var format: LogFormat
    private let sink: @Sendable (String) -> Void

    /// A logger writing to stderr.
    public init(level: LogLevel = .info, format: LogFormat = .text) {
        self.init(level: level, format: format) { line in FileDescriptorOutput.standardError(line) }
    }

    /// A logger writing each line to `sink` (tests collect them).
    public init(level: LogLevel, format: LogFormat = .text, sink: @escaping @Sendable (String) -> Void) {
        self.level = level
        self.format = format
        self.sink = sink
    }

    /// Writes `message` at `level` if the logger's level lets it through.
    public func log(_ level: LogLevel, _ message: @autoclosure () -> String) {
        guard level >= self.level else { return }
        switch format {
        case .text:
            sink("\(Logger.timestamp()) \(level.name): \(message())")
        case .json:
            let fields = ["time": Logger.timestamp(), "level": level.name, "message": message()]
            let data =
                (try? JSONSerialization.data(
                    withJSONObject: fields, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
            sink(String(decoding: data, as: UTF8.self))
        }
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
