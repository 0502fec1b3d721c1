import Foundation
@preconcurrency import Glibc

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

/// A named value a log line carries beside its message (docs/OPERATIONS.md, "Logs").
public struct LogField: Sendable, Equatable {
    /// A field's value: JSON writes a number as a number.
    public enum Value: Sendable, Equatable {
        case text(String)
        case integer(Int64)
        case number(Double)

        /// As `key=value` text shows it.
        var text: String {
            switch self {
            case .integer(let number): return "\(number)"
            case .number(let number): return String(format: "%.3f", number)
            case .text(let text):
                let plain =
                    !text.isEmpty
                    && !text.unicodeScalars.contains {
                        $0 == " " || $0 == "\"" || $0 == "=" || $0.value < 0x20
                    }
                if plain { return text }
                var quoted = "\""
                for scalar in text.unicodeScalars {
                    switch scalar {
                    case "\"": quoted += "\\\""
                    case "\\": quoted += "\\\\"
                    case "\n": quoted += "\\n"
                    case _ where scalar.value < 0x20: quoted += String(format: "\\u%04x", scalar.value)
                    default: quoted.unicodeScalars.append(scalar)
                    }
                }
                return quoted + "\""
            }
        }

        var json: Any {
            switch self {
            case .integer(let number): return NSNumber(value: number)
            case .number(let number): return NSNumber(value: (number * 1000).rounded() / 1000)
            case .text(let text): return text
            }
        }
    }

    /// The key: lowercase letters and `_`.
    public var name: String
    public var value: Value

    /// A field.
    public init(_ name: String, _ value: Value) {
        self.name = name
        self.value = value
    }
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

    /// Whether a line at `level` would be written: a caller skips the work of its fields when
    /// it would not.
    public func logs(_ level: LogLevel) -> Bool { level >= self.level }

    /// Writes `message` at `level` if the logger's level lets it through, with `fields`: in
    /// JSON, keys of the object beside `time`, `level` and `message` (which they never
    /// replace); in text, `key=value` after the message, a value quoted when it holds a space,
    /// a quote, an `=` or nothing.
    public func log(_ level: LogLevel, _ message: @autoclosure () -> String, fields: [LogField] = []) {
        guard level >= self.level else { return }
        switch format {
        case .text:
            var line = "\(Logger.timestamp()) \(level.name): \(message())"
            for field in fields { line += " \(field.name)=\(field.value.text)" }
            sink(line)
        case .json:
            var object: [String: Any] = [:]
            for field in fields { object[field.name] = field.value.json }
            object["time"] = Logger.timestamp()
            object["level"] = level.name
            object["message"] = message()
            let data =
                (try? JSONSerialization.data(
                    withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
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
