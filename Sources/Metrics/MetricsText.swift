import Foundation

/// A set of metrics written in the Prometheus text exposition format, version 0.0.4: each
/// family's `# HELP` and `# TYPE` lines, then its samples. A plain value, filled anew for each
/// scrape from a snapshot; it knows nothing of what is measured.
///
/// The output is deterministic: families sorted by name, a family's samples by their labels
/// (names sorted within a sample), a histogram's buckets by bound with `+Inf` last, then its
/// `_sum` and `_count`.
public struct MetricsText: Sendable {
    /// The `Content-Type` of the exposition.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// A metric's kind, as `# TYPE` names it.
    public enum Kind: String, Sendable {
        case counter, gauge, histogram
    }

    /// Labels: names to values. Names must match `[a-zA-Z_][a-zA-Z0-9_]*`; values are any text.
    public typealias Labels = [String: String]

    private enum Value: Sendable {
        case number(Double)
        case histogram(Histogram)
    }

    private struct Family: Sendable {
        var help: String
        var kind: Kind
        var samples: [(labels: Labels, value: Value)]
    }

    private var families: [String: Family] = [:]

    /// An empty set.
    public init() {}

    /// Adds a counter sample (a counter's name should end in `_total`).
    public mutating func counter(_ name: String, help: String, labels: Labels = [:], _ value: Double) {
        add(name, help: help, kind: .counter, labels: labels, .number(value))
    }

    /// Adds a gauge sample.
    public mutating func gauge(_ name: String, help: String, labels: Labels = [:], _ value: Double) {
        add(name, help: help, kind: .gauge, labels: labels, .number(value))
    }

    /// Adds a histogram (written as `name_bucket{le=...}`, `name_sum` and `name_count`).
    public mutating func histogram(
        _ name: String, help: String, labels: Labels = [:], _ histogram: Histogram
    ) {
        add(name, help: help, kind: .histogram, labels: labels, .histogram(histogram))
    }

    /// Declares a family with no samples yet, so it is listed (`# HELP`, `# TYPE`) even empty.
    public mutating func declare(_ name: String, help: String, kind: Kind) {
        precondition(Self.isMetricName(name), "\(name) is not a Prometheus metric name")
        if families[name] == nil { families[name] = Family(help: help, kind: kind, samples: []) }
    }

    private mutating func add(_ name: String, help: String, kind: Kind, labels: Labels, _ value: Value) {
        // Names are the program's own constants: a bad one is a programming error.
        precondition(Self.isMetricName(name), "\(name) is not a Prometheus metric name")
        precondition(
            labels.keys.allSatisfy { Self.isLabelName($0) && !(kind == .histogram && $0 == "le") },
            "\(name) has a label name Prometheus does not take")
        declare(name, help: help, kind: kind)
        families[name]?.samples.append((labels, value))
    }

    /// The exposition, every line ending in a newline.
    public var encoded: String {
        var text = ""
        for name in families.keys.sorted() {
            guard let family = families[name] else { continue }
            text += "# HELP \(name) \(Self.escapeHelp(family.help))\n"
            text += "# TYPE \(name) \(family.kind.rawValue)\n"
            let samples = family.samples.map {
                (key: Self.labelText($0.labels), value: $0.value, labels: $0.labels)
            }
            for sample in samples.sorted(by: { $0.key < $1.key }) {
                switch sample.value {
                case .number(let number):
                    text += "\(name)\(Self.braced(sample.key)) \(Self.format(number))\n"
                case .histogram(let histogram):
                    for bucket in histogram.cumulativeBuckets {
                        var labels = sample.labels
                        labels["le"] = Self.format(bucket.upperBound)
                        text += "\(name)_bucket\(Self.braced(Self.labelText(labels))) \(bucket.count)\n"
                    }
                    text += "\(name)_sum\(Self.braced(sample.key)) \(Self.format(histogram.sum))\n"
                    text += "\(name)_count\(Self.braced(sample.key)) \(histogram.count)\n"
                }
            }
        }
        return text
    }

    /// `a="1",b="2"`: names sorted, values escaped.
    static func labelText(_ labels: Labels) -> String {
        labels.keys.sorted().map { "\($0)=\"\(escapeLabelValue(labels[$0] ?? ""))\"" }.joined(separator: ",")
    }

    private static func braced(_ text: String) -> String { text.isEmpty ? "" : "{\(text)}" }

    /// A label value as the format quotes it: `\`, `"` and line feed escaped.
    public static func escapeLabelValue(_ value: String) -> String {
        var escaped = ""
        for character in value.unicodeScalars {
            switch character {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }

    /// A `# HELP` text: `\` and line feed escaped (quotes stay).
    static func escapeHelp(_ help: String) -> String {
        help.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
    }

    /// A sample value: whole numbers without a fraction, `+Inf`, `-Inf`, `NaN`.
    public static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value == .infinity { return "+Inf" }
        if value == -.infinity { return "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    /// Whether `name` matches `[a-zA-Z_:][a-zA-Z0-9_:]*`.
    public static func isMetricName(_ name: String) -> Bool {
        guard let first = name.utf8.first, !isDigit(first) else { return false }
        return name.utf8.allSatisfy {
            isLetter($0) || isDigit($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ":")
        }
    }

    /// Whether `name` matches `[a-zA-Z_][a-zA-Z0-9_]*`.
    public static func isLabelName(_ name: String) -> Bool {
        guard let first = name.utf8.first, !isDigit(first) else { return false }
        return name.utf8.allSatisfy { isLetter($0) || isDigit($0) || $0 == UInt8(ascii: "_") }
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}
