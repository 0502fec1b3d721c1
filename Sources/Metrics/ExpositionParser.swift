/// A strict reader of the Prometheus text exposition format (0.0.4), for tests and checks: it
/// takes what ``MetricsText`` writes and refuses anything a scraper could misread.
///
/// Refused: a line that is not `# HELP`, `# TYPE` or a sample; a family typed twice or after
/// its samples; a sample outside the family declared last; a bad name or label escape; a value
/// that is not a number; a sample given twice; a counter not named `_total` or below zero; a
/// histogram whose buckets are not cumulative, or lack `+Inf`, or whose `+Inf` differs from
/// its `_count`.
public struct ExpositionParser {
    /// One sample line.
    public struct Sample: Equatable, Sendable {
        public var name: String
        public var labels: [String: String]
        public var value: Double
    }

    /// Why the text was refused: the line (from 1) and what is wrong with it.
    public struct Failure: Error, Equatable, Sendable, CustomStringConvertible {
        public var line: Int
        public var reason: String
        public var description: String { "line \(line): \(reason)" }
    }

    /// Every sample, in order.
    public private(set) var samples: [Sample] = []
    /// Each family's kind, by name.
    public private(set) var kinds: [String: MetricsText.Kind] = [:]

    /// Parses `text` strictly.
    public init(_ text: String) throws(Failure) {
        var current: String?
        var seen = Set<String>()
        var helped = Set<String>()
        var sampled = Set<String>()
        var buckets: [String: [(le: Double, count: Double)]] = [:]
        var counts: [String: Double] = [:]
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard text.hasSuffix("\n") else {
            throw Failure(line: lines.count, reason: "the text does not end in a newline")
        }
        for (offset, line) in lines.dropLast().enumerated() {
            let number = offset + 1
            func fail(_ reason: String) -> Failure { Failure(line: number, reason: reason) }
            if line.hasPrefix("#") {
                let parts = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
                guard parts.count >= 3, parts[0] == "#", parts[1] == "HELP" || parts[1] == "TYPE" else {
                    throw fail("a comment that is neither # HELP nor # TYPE")
                }
                let name = String(parts[2])
                guard MetricsText.isMetricName(name) else { throw fail("\(name) is not a metric name") }
                if parts[1] == "HELP" {
                    guard helped.insert(name).inserted else { throw fail("a second # HELP for \(name)") }
                } else {
                    guard parts.count == 4, let kind = MetricsText.Kind(rawValue: String(parts[3])) else {
                        throw fail("# TYPE \(name) names no type this parser takes")
                    }
                    guard kinds[name] == nil else { throw fail("a second # TYPE for \(name)") }
                    guard !sampled.contains(name) else { throw fail("# TYPE \(name) after its samples") }
                    kinds[name] = kind
                    if kind == .counter, !name.hasSuffix("_total") {
                        throw fail("counter \(name) does not end in _total")
                    }
                }
                current = name
                continue
            }
            let sample: Sample
            do {
                sample = try Self.sample(line)
            } catch {
                throw fail(error.reason)
            }
            guard let family = current, let kind = kinds[family] else {
                throw fail("\(sample.name) comes before any # TYPE")
            }
            let key = sample.name + "{" + MetricsText.labelText(sample.labels) + "}"
            guard seen.insert(key).inserted else { throw fail("\(key) is given twice") }
            sampled.insert(family)
            switch kind {
            case .counter, .gauge:
                guard sample.name == family, sample.labels["le"] == nil || kind == .gauge else {
                    throw fail("\(sample.name) is not in family \(family)")
                }
                if kind == .counter, !(sample.value >= 0) { throw fail("counter \(key) is \(sample.value)") }
            case .histogram:
                var series = sample.labels
                series["le"] = nil
                let seriesKey = family + "{" + MetricsText.labelText(series) + "}"
                if sample.name == family + "_bucket" {
                    guard let le = sample.labels["le"].flatMap(Self.number) else {
                        throw fail("\(key) has no le label that is a number")
                    }
                    let previous = buckets[seriesKey]?.last
                    if let previous, !(le > previous.le && sample.value >= previous.count) {
                        throw fail("\(key) is not cumulative after le=\(previous.le)")
                    }
                    buckets[seriesKey, default: []].append((le, sample.value))
                } else if sample.name == family + "_count" {
                    counts[seriesKey] = sample.value
                } else if sample.name != family + "_sum" {
                    throw fail("\(sample.name) is not in histogram \(family)")
                }
            }
            samples.append(sample)
        }
        for (series, list) in buckets {
            guard let last = list.last, last.le == .infinity else {
                throw Failure(line: lines.count, reason: "histogram \(series) has no le=\"+Inf\" bucket")
            }
            guard counts[series] == last.count else {
                throw Failure(
                    line: lines.count, reason: "histogram \(series): _count differs from its +Inf bucket")
            }
        }
    }

    /// The value of the sample named `name` with exactly `labels`, if there is one.
    public func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        samples.first { $0.name == name && $0.labels == labels }?.value
    }

    private struct Refusal: Error {
        var reason: String
    }

    /// `name{a="x",b="y"} value`.
    private static func sample(_ line: Substring) throws(Refusal) -> Sample {
        let bytes = Array(line.utf8)
        var index = 0
        while index < bytes.count, bytes[index] != UInt8(ascii: "{"), bytes[index] != UInt8(ascii: " ") {
            index += 1
        }
        let name = String(decoding: bytes[..<index], as: UTF8.self)
        guard MetricsText.isMetricName(name) else { throw Refusal(reason: "\(name) is not a metric name") }
        var labels: [String: String] = [:]
        if index < bytes.count, bytes[index] == UInt8(ascii: "{") {
            index += 1
            while index < bytes.count, bytes[index] != UInt8(ascii: "}") {
                let start = index
                while index < bytes.count, bytes[index] != UInt8(ascii: "=") { index += 1 }
                let label = String(decoding: bytes[start..<index], as: UTF8.self)
                guard MetricsText.isLabelName(label), index + 1 < bytes.count,
                    bytes[index + 1] == UInt8(ascii: "\"")
                else {
                    throw Refusal(reason: "a label of \(name) is not name=\"value\"")
                }
                index += 2
                var value: [UInt8] = []
                while true {
                    guard index < bytes.count else {
                        throw Refusal(reason: "a label value of \(name) is not closed")
                    }
                    let byte = bytes[index]
                    index += 1
                    if byte == UInt8(ascii: "\"") { break }
                    if byte == UInt8(ascii: "\\") {
                        guard index < bytes.count else {
                            throw Refusal(reason: "a label value of \(name) ends in \\")
                        }
                        switch bytes[index] {
                        case UInt8(ascii: "\\"): value.append(UInt8(ascii: "\\"))
                        case UInt8(ascii: "\""): value.append(UInt8(ascii: "\""))
                        case UInt8(ascii: "n"): value.append(UInt8(ascii: "\n"))
                        default: throw Refusal(reason: "a label value of \(name) has an unknown escape")
                        }
                        index += 1
                    } else {
                        value.append(byte)
                    }
                }
                guard labels.updateValue(String(decoding: value, as: UTF8.self), forKey: label) == nil else {
                    throw Refusal(reason: "\(name) has label \(label) twice")
                }
                if index < bytes.count, bytes[index] == UInt8(ascii: ",") { index += 1 }
            }
            guard index < bytes.count else { throw Refusal(reason: "the labels of \(name) are not closed") }
            index += 1
        }
        guard index < bytes.count, bytes[index] == UInt8(ascii: " ") else {
            throw Refusal(reason: "\(name) has no value after one space")
        }
        let text = String(decoding: bytes[(index + 1)...], as: UTF8.self)
        guard let value = number(text) else {
            throw Refusal(reason: "\(name)'s value \(text) is not a number")
        }
        return Sample(name: name, labels: labels, value: value)
    }

    /// A sample value: a decimal number, `+Inf`, `-Inf` or `NaN`.
    static func number(_ text: String) -> Double? {
        switch text {
        case "+Inf": return .infinity
        case "-Inf": return -.infinity
        case "NaN": return .nan
        default:
            guard !text.isEmpty, text.allSatisfy({ $0.isASCII && ($0.isNumber || "+-.eE".contains($0)) })
            else {
                return nil
            }
            return Double(text)
        }
    }
}
