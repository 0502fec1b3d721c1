import Foundation

/// What a `status` reply says about the service, beside the reply's `seq`, `store` and `count`.
///
/// Each field is named once, in ``fields``: its wire key, its label for people and its type. The
/// writer, the reply decoder and ``lines`` all read that table, so a new field is a property
/// here and a row there. Every field is optional: a reply from an older service may lack some.
public struct ServiceStatus: Equatable, Sendable {
    /// The ``writer`` of a replica that is the elected writer itself.
    public static let thisReplica = "this replica"

    /// The service's version.
    public var version: String?
    /// Milliseconds since the service started; on the wire `uptime_seconds`, a number of
    /// seconds with at most three decimals.
    public var uptimeMilliseconds: UInt64?
    /// How many countries are visited.
    public var visited: Int?
    /// Commands answered successfully since start.
    public var commandsServed: Int?
    /// Commands refused (error replies) since start.
    public var commandsRefused: Int?
    /// Where the state is stored (a path, or `:memory:`).
    public var storePath: String?
    /// Size of the store on disk, in bytes.
    public var storeBytes: Int?
    /// The oldest seq `history` can still return events after.
    public var historyFrom: UInt64?
    /// Connections on the event endpoint (subscribers, or relays).
    public var subscribers: Int?
    /// The command and event endpoints the service is bound to.
    public var endpoints: [String]?
    /// A replicated service (docs/HA.md): this replica's name.
    public var replica: String?
    /// A replicated service: the elected writer, which commits every change (docs/HA.md, "One
    /// writer at a time"): `this replica`, the writer's command endpoint (this replica forwards
    /// changes there), or `none` (no writer known: each replica commits its own changes).
    public var writer: String?
    /// A replicated service: the etcd cluster's members, as `name=URL`.
    public var etcdMembers: [String]?
    /// A replicated service: the etcd member that leads the cluster (its name), or `none`.
    public var etcdLeader: String?
    /// A replicated service: whether this replica reaches a quorum of etcd (`yes`, or why not).
    public var etcdQuorum: String?
    /// A replicated service: a value in the store's log in etcd that does not decode, by key;
    /// absent when there is none.
    public var storeDamage: String?
    /// A replicated service: etcd refuses writes because its database is full (alarm NOSPACE),
    /// and what to do; absent when the last write went through.
    public var etcdSpace: String?
    /// A replicated service: how long the first change known committed and not yet published
    /// has waited, in milliseconds (0 when none waits); on the wire `publication_lag_seconds`.
    public var publicationLagMilliseconds: UInt64?

    /// Creates a status with no fields set.
    public init() {}

    /// Every field, in the order people read them (``lines``); the wire has them sorted by key.
    static let fields: [Field] = [
        Field("version", "version", \.version),
        Field("uptime_seconds", "uptime", \.uptimeMilliseconds, as: .milliseconds),
        Field("visited", "visited", \.visited),
        Field("commands_served", "commands served", \.commandsServed),
        Field("commands_refused", "commands refused", \.commandsRefused),
        Field("store_path", "store", \.storePath),
        Field("store_bytes", "store bytes", \.storeBytes),
        Field("history_from", "history from seq", \.historyFrom, as: .seq),
        Field("subscribers", "subscribers", \.subscribers),
        Field("endpoints", "endpoints", \.endpoints),
        Field("replica", "replica", \.replica),
        Field("writer", "writer", \.writer),
        Field("etcd_members", "etcd members", \.etcdMembers),
        Field("etcd_leader", "etcd leader", \.etcdLeader),
        Field("etcd_quorum", "etcd quorum", \.etcdQuorum),
        Field("store_damage", "store damage", \.storeDamage),
        Field("etcd_space", "etcd space", \.etcdSpace),
        Field("publication_lag_seconds", "publication lag", \.publicationLagMilliseconds, as: .milliseconds),
    ]

    /// ``fields`` sorted by key, as `JSONEncoder` with `.sortedKeys` wrote them.
    static let fieldsByKey = fields.sorted { $0.key < $1.key }

    /// ``fields`` by key, for the reply decoder.
    static let fieldsByName = Dictionary(uniqueKeysWithValues: fields.map { ($0.key, $0) })

    /// The fields that are set, as a label and a value for people, e.g. `("uptime", "3.2 s")`.
    public var lines: [(label: String, value: String)] {
        Self.fields.compactMap { field in field.get(self).map { (field.label, $0.description) } }
    }

    /// A field's value, in one of the few types status fields have.
    enum Value: Equatable, CustomStringConvertible {
        case text(String)
        case count(Int)
        case seq(UInt64)
        /// Written as seconds: `1500` is `1.5`, `2000` is `2`.
        case milliseconds(UInt64)
        case list([String])

        /// The types, to read a value of the right one from the wire.
        enum Kind { case text, count, seq, milliseconds, list }

        var description: String {
            switch self {
            case .text(let text): return text
            case .count(let number): return "\(number)"
            case .seq(let number): return "\(number)"
            case .milliseconds(let milliseconds): return String(format: "%.1f s", Double(milliseconds) / 1000)
            case .list(let items): return items.joined(separator: ", ")
            }
        }
    }

    /// One status field: its key on the wire, its label for people, and how to get and set it.
    struct Field: Sendable {
        /// A key path of a property, sendable as key path literals are.
        typealias Path<T> = any WritableKeyPath<ServiceStatus, T> & Sendable

        let key: String
        let label: String
        let kind: Value.Kind
        let get: @Sendable (ServiceStatus) -> Value?
        /// Sets the field from a value of its ``kind``.
        let set: @Sendable (inout ServiceStatus, Value) -> Void

        init(_ key: String, _ label: String, _ path: Path<String?>) {
            self.init(
                key, label, .text, get: { $0[keyPath: path].map(Value.text) },
                set: { if case .text(let text) = $1 { $0[keyPath: path] = text } })
        }

        init(_ key: String, _ label: String, _ path: Path<Int?>) {
            self.init(
                key, label, .count, get: { $0[keyPath: path].map(Value.count) },
                set: { if case .count(let number) = $1 { $0[keyPath: path] = number } })
        }

        init(_ key: String, _ label: String, _ path: Path<[String]?>) {
            self.init(
                key, label, .list, get: { $0[keyPath: path].map(Value.list) },
                set: { if case .list(let items) = $1 { $0[keyPath: path] = items } })
        }

        /// A `UInt64` field: a seq, or milliseconds written as seconds.
        init(_ key: String, _ label: String, _ path: Path<UInt64?>, as kind: Value.Kind) {
            self.init(
                key, label, kind,
                get: { status in
                    status[keyPath: path].map { kind == .milliseconds ? .milliseconds($0) : .seq($0) }
                },
                set: {
                    switch $1 {
                    case .seq(let number), .milliseconds(let number): $0[keyPath: path] = number
                    default: break
                    }
                })
        }

        private init(
            _ key: String, _ label: String, _ kind: Value.Kind,
            get: @escaping @Sendable (ServiceStatus) -> Value?,
            set: @escaping @Sendable (inout ServiceStatus, Value) -> Void
        ) {
            self.key = key
            self.label = label
            self.kind = kind
            self.get = get
            self.set = set
        }
    }
}
