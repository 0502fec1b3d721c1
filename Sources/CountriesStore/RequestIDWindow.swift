import CountriesCore
import Foundation

/// How long a replicated store remembers request ids, kept by the commits themselves
/// (docs/HA.md, "Request ids"): ids go into *generations*; a commit checks an id against the
/// current generation and the one before, and the commit that opens a new generation deletes
/// the one before that, in the same transaction. No separate trim job races the commits.
///
/// A generation is closed once it is at least ``minimumAge`` old and holds at least
/// ``minimumCount`` ids, or once it is full (``maximumCount`` ids or ``maximumBytes``); an id
/// lives through the whole of the generation after its own. So every id is remembered at least
/// ``minimumAge`` and at least the next ``minimumCount`` ids, unless a generation fills first,
/// and at most two generations are kept: bounded at any rate.
public struct RequestIDWindow: Sendable, Equatable {
    /// The age floor: longer than any client's retries (`countries` gives up after about 6 s).
    public var minimumAge: Duration
    /// The count floor: the protocol's ``Limits/retainedRequestIDs``.
    public var minimumCount: Int
    /// The most ids one generation holds.
    public var maximumCount: Int
    /// The most bytes (ids and replies) one generation holds.
    public var maximumBytes: Int

    /// A window with these bounds (the defaults unless told).
    public init(
        minimumAge: Duration = Limits.requestIDMinimumAge, minimumCount: Int = Limits.retainedRequestIDs,
        maximumCount: Int = Limits.maximumRequestIDs, maximumBytes: Int = 32 << 20
    ) {
        self.minimumAge = minimumAge
        self.minimumCount = minimumCount
        self.maximumCount = maximumCount
        self.maximumBytes = maximumBytes
    }

    /// One generation as its etcd key holds it: `number start-ms count bytes first-seq
    /// previous-first-seq`, in decimal. A store from before the id log holds the first four
    /// only (its ids are a key each); read as starting at seq 0.
    public struct Generation: Sendable, Equatable {
        /// 0 is the ids a store kept before generations (`requests/<id>`); new stores start at 1.
        public var number: UInt64
        /// When it was opened, in milliseconds since 1970 (by the clock of the replica that
        /// opened it).
        public var startedMilliseconds: Int64
        /// Ids in it. Its key in etcd counts the ids a store from before the id log kept in a
        /// key each; the replicated store adds the ids of its entries in the log, which it
        /// knows, so the key is written only when a generation opens.
        public var count: Int
        /// Bytes of ids and replies in it (counted as `count` is: the log's entries by the size
        /// of their values).
        public var bytes: Int
        /// The seq of the first change it may remember: the id log's entries from here on
        /// belong to it.
        public var firstSeq: UInt64
        /// The first seq of the generation before it: the id log's entries before that belong
        /// to no live generation, and the commit that opens the next one deletes them.
        public var previousFirstSeq: UInt64
        /// Whether the value had the four fields of a store from before the id log.
        public var isLegacy: Bool

        /// Its value in etcd.
        public var encoded: Data {
            Data(
                "\(number) \(startedMilliseconds) \(count) \(bytes) \(firstSeq) \(previousFirstSeq)".utf8)
        }

        /// Its value in the form of a store from before the id log (four fields), which a
        /// replica compares once, when it moves the store to the log.
        public var legacyEncoded: String { "\(number) \(startedMilliseconds) \(count) \(bytes)" }

        /// A generation read back from etcd; nil when the bytes are not one.
        public init?(_ value: Data) {
            let fields = String(decoding: value, as: UTF8.self).split(
                separator: " ", omittingEmptySubsequences: false)
            // Each field within what a store can reach, so that no sum or step a commit makes
            // with it overflows: the key is read from etcd, where anyone who can write under the
            // prefix could put `Int64.max` in any of them and stop every replica's commits.
            guard fields.count == 4 || fields.count == 6, let number = UInt64(fields[0]),
                let started = Int64(fields[1]), let count = Int(fields[2]), let bytes = Int(fields[3]),
                number < UInt64(Int64.max), (0...Self.latestMilliseconds).contains(started),
                (0...Self.mostCounted).contains(count), (0...Self.mostCounted).contains(bytes)
            else { return nil }
            self.init(number: number, startedMilliseconds: started, count: count, bytes: bytes)
            if fields.count == 4 {
                isLegacy = true
                return
            }
            guard let first = UInt64(fields[4]), let previous = UInt64(fields[5]), previous <= first,
                first <= UInt64(Int64.max)
            else {
                return nil
            }
            firstSeq = first
            previousFirstSeq = previous
        }

        /// The latest start a generation may name: the year 2500, in milliseconds since 1970.
        static let latestMilliseconds: Int64 = 16_725_225_600_000
        /// The most ids or bytes a generation may count: far past any maximum, far below overflow.
        static let mostCounted = 1 << 48

        /// Generation `number`, started at `startedMilliseconds` at seq `firstSeq`, holding
        /// `count` ids of `bytes`.
        public init(
            number: UInt64, startedMilliseconds: Int64, count: Int = 0, bytes: Int = 0, firstSeq: UInt64 = 0,
            previousFirstSeq: UInt64 = 0
        ) {
            self.number = number
            self.startedMilliseconds = startedMilliseconds
            self.count = count
            self.bytes = bytes
            self.firstSeq = firstSeq
            self.previousFirstSeq = previousFirstSeq
            isLegacy = false
        }
    }

    /// The generation after a commit of `count` ids of `bytes` at `now` (milliseconds since
    /// 1970) whose first change is `seq`: `current` grown, or a new one (`opened`) starting at
    /// `seq`, whose commit then deletes the generation before `current`.
    public func after(
        _ current: Generation, adding count: Int, bytes: Int, nowMilliseconds now: Int64,
        atSeq seq: UInt64 = 0
    ) -> (generation: Generation, opened: Bool) {
        let old = Duration.milliseconds(now - current.startedMilliseconds) >= minimumAge
        let closes =
            current.count > 0
            && ((old && current.count >= minimumCount)
                || current.count + count > maximumCount || current.bytes + bytes > maximumBytes)
        guard closes else {
            var grown = current
            grown.count += count
            grown.bytes += bytes
            return (grown, false)
        }
        return (
            Generation(
                number: current.number + 1, startedMilliseconds: now, count: count, bytes: bytes,
                firstSeq: seq,
                previousFirstSeq: current.firstSeq),
            true
        )
    }

    /// The moment a replica judges a generation's age at: its wall clock `wallMilliseconds`, but
    /// never further past the generation's start (`startedMilliseconds`, the opener's clock) than
    /// the `knownForMilliseconds` this replica has itself known the generation, on a clock no one
    /// sets. So the age is the least of the two: a wall clock set ahead, here or at the replica
    /// that opened it, closes no generation early and forgets no id a retry may still send; a
    /// replica that started since counts the age anew, and keeps the generation up to
    /// ``minimumAge`` longer, within the maximums (docs/HA.md, "Request ids").
    public static func judgedNow(
        wallMilliseconds: Int64, startedMilliseconds: Int64, knownForMilliseconds: Int64
    ) -> Int64 {
        let (known, overflow) = startedMilliseconds.addingReportingOverflow(max(0, knownForMilliseconds))
        return overflow ? wallMilliseconds : min(wallMilliseconds, known)
    }

    /// Now, in milliseconds since 1970.
    public static var nowMilliseconds: Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }
}
