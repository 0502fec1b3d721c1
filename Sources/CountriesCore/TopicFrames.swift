import Foundation

/// Each topic's first frame, made once: `country.changed` is too long for `Data`'s inline bytes.
///
/// Found by a switch, not a dictionary: `Topic` hashes as its raw string, so a look-up per
/// published event cost about 390 instructions (docs/BENCHMARKS.md, "Stop 52"). The service's
/// publisher and the bench's floor that publishes events both use it.
public struct TopicFrames: Sendable {
    private let changed = Data(Topic.countryChanged.rawValue.utf8)
    private let added = Data(Topic.countryAdded.rawValue.utf8)
    private let removed = Data(Topic.countryRemoved.rawValue.utf8)
    private let reset = Data(Topic.countriesReset.rawValue.utf8)
    private let heartbeat = Data(Topic.heartbeat.rawValue.utf8)

    /// The frames, made now.
    public init() {}

    /// The frame of `topic`.
    public subscript(topic: Topic) -> Data {
        switch topic {
        case .countryChanged: changed
        case .countryAdded: added
        case .countryRemoved: removed
        case .countriesReset: reset
        case .heartbeat: heartbeat
        }
    }
}
