import Foundation

/// The shape of a message on the event channel (docs/PROTOCOL.md, "Events"), and the largest
/// body the service can publish under each topic, worked out from ``Limits``: what a relay
/// checks before it forwards a message, so that it never holds more than the protocol needs.
///
/// The check is on frames and sizes, and on the body being delimited as a JSON object; it does
/// not parse the body. Parsing a reset of the largest list (16 MB) would cost the relay more
/// time and memory than forwarding it, and subscribers parse and check every event anyway; what
/// a malformed publisher could make the relay hold is bounded by the sizes checked here.
public enum EventShape {
    /// Why a message is not one of the protocol's.
    public enum Flaw: Error, Equatable, Sendable, CustomStringConvertible {
        /// Not two frames (a topic and a body).
        case frameCount(Int)
        /// The first frame is no topic of the protocol; `bytes` is its size.
        case unknownTopic(bytes: Int)
        /// The body is larger than any the service can publish under `topic`.
        case tooLarge(Topic, bytes: Int, maximum: Int)
        /// The body does not start with `{` and end with `}`.
        case notAnObject(Topic)

        public var description: String {
            switch self {
            case .frameCount(let count): "\(count) frames instead of 2 (topic, body)"
            case .unknownTopic(let bytes): "a first frame of \(bytes) bytes that is no topic of the protocol"
            case .tooLarge(let topic, let bytes, let maximum):
                "a \(topic.rawValue) body of \(bytes) bytes, over the largest the service can publish (\(maximum))"
            case .notAnObject(let topic): "a \(topic.rawValue) body that is not a JSON object"
            }
        }
    }

    /// The largest body an event of `topic` can have, in bytes: an upper bound, a few bytes over
    /// the exact largest at most.
    public static func maximumBodyBytes(_ topic: Topic) -> Int {
        switch topic {
        case .countryChanged: maximumRowEventBytes.changed
        case .countryAdded: maximumRowEventBytes.added
        case .countryRemoved: maximumRowEventBytes.removed
        case .countriesReset: maximumResetBytes
        case .heartbeat: maximumHeartbeatBytes
        }
    }

    /// The largest body of any message on the event channel: a reset of the largest list, each
    /// name as long as a name can be (about 16 MB).
    public static let maximumBodyBytes = Topic.allCases.map(maximumBodyBytes).max() ?? 0

    /// The topic of a message of these frames, or why it is not one of the protocol's.
    public static func check(_ frames: [UnsafeRawBufferPointer]) -> Result<Topic, Flaw> {
        guard frames.count == 2 else { return .failure(.frameCount(frames.count)) }
        let (topicFrame, body) = (frames[0], frames[1])
        guard topicFrame.count <= SubscriptionFilter.maximumPrefixBytes,
            let topic = Topic(rawValue: String(decoding: topicFrame, as: UTF8.self))
        else { return .failure(.unknownTopic(bytes: topicFrame.count)) }
        let maximum = maximumBodyBytes(topic)
        guard body.count <= maximum else {
            return .failure(.tooLarge(topic, bytes: body.count, maximum: maximum))
        }
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
        guard body.first(where: { !isSpace($0) }) == UInt8(ascii: "{"),
            body.last(where: { !isSpace($0) }) == UInt8(ascii: "}")
        else { return .failure(.notAnObject(topic)) }
        return .success(topic)
    }

    // MARK: - The largest events, from the limits and the writer itself

    /// The most bytes a name takes in a body: each of its scalars is at most 4 bytes of UTF-8,
    /// and the writer escapes only `"` and `\` (2 bytes) and control characters, which no name
    /// may hold (``CountryName``).
    static let maximumNameBytes = Limits.maximumNameScalars * 4

    /// A row with the largest index and the longer `visited`, and an empty name: its encoding
    /// plus ``maximumNameBytes`` is the largest row.
    private static let templateRow = IndexedCountry(
        index: Limits.maximumCountries - 1, name: "", visited: false)

    /// The longest seq and store an event or heartbeat can carry.
    private static let templateSeq = UInt64.max
    private static let templateStore = String(repeating: "f", count: Limits.storeIdentityBytes)

    private static let maximumRowEventBytes: (changed: Int, added: Int, removed: Int) = {
        func size(_ kind: Event.Kind) -> Int {
            Event(seq: templateSeq, kind: kind, store: templateStore).encoded().count + maximumNameBytes
        }
        return (size(.changed(templateRow)), size(.added(templateRow)), size(.removed(templateRow)))
    }()

    /// An empty reset, plus the largest list: every row as large as a row can be, with commas.
    private static let maximumResetBytes: Int = {
        let empty = Event(seq: templateSeq, kind: .reset([]), store: templateStore).encoded().count
        let one = Event(seq: templateSeq, kind: .reset([templateRow]), store: templateStore).encoded().count
        let row = one - empty + maximumNameBytes
        return empty + Limits.maximumCountries * row + (Limits.maximumCountries - 1)
    }()

    private static let maximumHeartbeatBytes = Heartbeat(seq: templateSeq, store: templateStore).encoded()
        .count
}
