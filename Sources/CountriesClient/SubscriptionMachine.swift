import CountriesCore

/// The pure state machine that keeps a local replica of the list in sync with the service
/// (docs/PROTOCOL.md, "How a subscriber stays in sync").
///
/// Plain values in, plain values out: the driver owns the SUB socket (subscribed to every topic
/// before the first request) and the command client, feeds the machine what arrives, performs
/// the ``Action``s it returns and calls ``tick(now:)`` at ``nextDeadline()``. The machine never
/// reads a clock, so every timing rule is testable with made-up instants.
///
/// Guarantees:
/// - at most one request is outstanding at a time;
/// - every ``Notification/applied(_:)`` is exactly one past the replica's previous seq, and a
///   ``Notification/replaced(seq:)`` precedes any other change of the replica's seq;
/// - the phase is ``SubscriptionPhase/live`` only when the replica has every event the service
///   is known to have published and the PUB channel is heard from;
/// - no event whose names break the service's name rules
///   (``CountriesCore/Event/validateNames()``) is applied, from PUB or from history: it is
///   reported once (``Notification/rejected(seq:reason:)``) and the replica catches up from the
///   service as after a gap.
public struct SubscriptionMachine: Sendable {
    /// How often the service sends a heartbeat.
    public let heartbeatInterval: Duration
    /// How many heartbeat intervals of silence make the replica stale.
    public let missedHeartbeatsBeforeStale: Int
    /// The longest wait between retries of a failed request, or between probes while silent.
    public var maximumRetryDelay: Duration { retry.maximum }
    /// How many out-of-order events are kept before giving up on them and resyncing by snapshot.
    public var bufferLimit: Int { buffer.limit }
    /// How many PUB sockets feed the machine: more than one are replicas of one service
    /// (`--events A,B`), each sending every event with the same seq, and heartbeats that may lag.
    public let sources: Int
    /// Whether ``Output/states`` carries the replica after each change (on by default). Off,
    /// it stays empty: a state held in the output makes the next replay of the same input (a
    /// page of history, buffered events) copy the whole list, about 100 instructions a row per
    /// event while a subscriber catches up (docs/BENCHMARKS.md, "Stop 31").
    public var keepsStates = true

    /// The current phase.
    public private(set) var phase: SubscriptionPhase = .connecting
    /// The local copy of the list; nil until the first snapshot.
    public private(set) var replica: CountriesState?
    /// The identity of the store the replica belongs to (nil from a service older than v1.1).
    public private(set) var store: String?

    private var started = false
    /// Events that could not be applied yet.
    private var buffer: PendingEvents
    /// The highest seq the service is known to have reached (from heartbeats and events).
    private var knownSeq: UInt64 = 0
    /// The highest seq seen on the PUB channel: PUB is FIFO, so a heartbeat below it means the
    /// service went back, whereas the replica (fed by REQ replies) may legitimately be ahead of
    /// PUB.
    private var pubSeq: UInt64?
    /// Since when heartbeats have been below the replica's seq without proof of a restart.
    private var pubBehindSince: ContinuousClock.Instant?
    /// When the PUB channel last delivered anything.
    private var lastHeard: ContinuousClock.Instant?
    /// No heartbeat or event for the silence window.
    private var silent = false
    /// The PUB channel came back after silence: confirm with the service before going live.
    private var catchUpNeeded = false
    /// The replica cannot be fixed by history (truncated, mismatch, overflow): take a snapshot.
    private var snapshotNeeded = false
    /// The service went back to a lower seq, or names another store: the replica and buffer
    /// belong to a store that is gone.
    private var restarted = false
    /// The store the PUB channel last named.
    private var pubStore: String?
    /// History requests that failed in a row (no reply: perhaps one too large for us to receive).
    private var historyFailures = 0
    /// The request in flight, if any.
    private var outstanding: Action?
    /// No request before this instant (retry after a failure, probe pacing while silent).
    private var notBefore: ContinuousClock.Instant?
    private var retry: Backoff
    /// Why the phase is stale, set when the cause is detected.
    private var staleReason = ""
    /// Whether the current gap has already been named in `staleReason`.
    private var gapReported = false
    /// The seq of the last event rejected, so that one forged event repeated (or heard from
    /// several replicas) is reported once.
    private var lastRejected: UInt64?
    /// Since when the service's lists have stopped short of events only PUB announced.
    private var unconfirmedSince: ContinuousClock.Instant?
    /// The last history reply lacked events PUB announced, and a list was asked for instead.
    private var historyLacked = false

    /// Creates a machine; call ``start(now:)`` to get the first request.
    ///
    /// - Parameters:
    ///   - heartbeatInterval: how often the service sends a heartbeat.
    ///   - missedHeartbeatsBeforeStale: intervals of silence before the replica is stale.
    ///   - maximumRetryDelay: cap of the retry and probe backoff (which starts at one interval).
    ///   - bufferLimit: events kept while waiting for a snapshot or history.
    ///   - bufferBytes: bytes of them kept (``CountriesCore/Event/estimatedBytes``); past either
    ///     bound the machine starts again from a snapshot.
    ///   - sources: the replicas whose PUB sockets feed the machine (docs/PROTOCOL.md,
    ///     "Replicas"). With more than one, a heartbeat behind the replica or behind what PUB
    ///     delivered is a lagging replica, not a service that went back: only another store id
    ///     means a new store.
    public init(
        heartbeatInterval: Duration = Defaults.heartbeatInterval, missedHeartbeatsBeforeStale: Int = 3,
        maximumRetryDelay: Duration = .seconds(5), bufferLimit: Int = 10_000,
        bufferBytes: Int = SubscriptionMachine.defaultBufferBytes, sources: Int = 1
    ) {
        self.sources = max(1, sources)
        self.heartbeatInterval = heartbeatInterval
        self.missedHeartbeatsBeforeStale = max(1, missedHeartbeatsBeforeStale)
        self.buffer = PendingEvents(limit: bufferLimit, byteLimit: bufferBytes)
        self.retry = Backoff(initial: heartbeatInterval, maximum: maximumRetryDelay)
    }

    /// Bytes of events kept while waiting, unless told: four resets of the longest list.
    public static let defaultBufferBytes = 64 << 20

    /// How long without a heartbeat or event before the replica is stale.
    public var silenceWindow: Duration { heartbeatInterval * missedHeartbeatsBeforeStale }
}

// MARK: - Inputs

extension SubscriptionMachine {
    /// Starts the machine: asks for the first snapshot and starts the heartbeat watchdog.
    public mutating func start(now: ContinuousClock.Instant) -> Output {
        var out = Output()
        guard !started else { return out }
        started = true
        lastHeard = now
        settle(now: now, into: &out)
        return out
    }

    /// An event arrived on the PUB channel.
    public mutating func receive(_ event: Event, now: ContinuousClock.Instant) -> Output {
        var out = Output()
        do {
            try event.validateNames()
        } catch {
            // A forgery or a corruption says nothing about the service, not even that it is
            // alive; only that something may have happened at that seq: ask the service (once
            // per seq, so that a repeated forgery is not a flood of requests).
            if reject(event, error, into: &out) {
                knownSeq = max(knownSeq, event.seq)
                if replica != nil { catchUpNeeded = true }
            }
            settle(now: now, into: &out)
            return out
        }
        heard(now: now)
        if let named = event.store, named != pubStore {
            pubStore = named
            if let store, named != store { storeChanged(seq: event.seq) }
        }
        pubSeq = max(pubSeq ?? 0, event.seq)
        knownSeq = max(knownSeq, event.seq)
        if let current = replica, !restarted {
            if event.seq >= current.seq { pubBehindSince = nil }
            // At or below the replica: a duplicate, or an event the snapshot already holds.
            if event.seq > current.seq {
                insert(event)
                drain(into: &out)
            }
        } else {
            // No usable replica: keep everything until the snapshot says what to drop.
            insert(event)
        }
        settle(now: now, into: &out)
        return out
    }

    /// A heartbeat arrived on the PUB channel.
    public mutating func receive(_ heartbeat: Heartbeat, now: ContinuousClock.Instant) -> Output {
        var out = Output()
        heard(now: now)
        let seq = heartbeat.seq
        if let named = heartbeat.store, named != pubStore {
            pubStore = named
            if let store, named != store { storeChanged(seq: seq) }
        }
        if restarted {
            // Already starting over: only what we must reach matters.
            knownSeq = max(knownSeq, seq)
        } else if sources > 1, seq < max(pubSeq ?? 0, replica?.seq ?? 0) {
            // A replica that has not sent what another one already did: nothing to learn, and
            // not a gap (the merged PUB stream is not in seq order across replicas).
        } else if let highest = pubSeq, seq < highest {
            // PUB delivers in order, so a lower seq than one it already delivered is a new store.
            serviceWentBack(to: seq)
        } else if let current = replica, !restarted, seq < current.seq {
            // The replica came from a reply that may have overtaken the PUB channel; only a
            // heartbeat that stays behind for a whole silence window proves the service went back.
            if let since = pubBehindSince, now - since >= silenceWindow {
                serviceWentBack(to: seq)
            } else if pubBehindSince == nil {
                pubBehindSince = now
            }
        } else {
            if let current = replica, seq >= current.seq { pubBehindSince = nil }
            knownSeq = max(knownSeq, seq)
        }
        pubSeq = max(pubSeq ?? 0, seq)
        settle(now: now, into: &out)
        return out
    }

    /// The reply to `list`: the whole list at `seq`, in `store` (nil from a service older than
    /// v1.1).
    public mutating func receiveSnapshot(
        rows: [IndexedCountry], seq: UInt64, store: String? = nil, now: ContinuousClock.Instant
    ) -> Output {
        var out = Output()
        if outstanding == .requestSnapshot { outstanding = nil }
        replySucceeded(now: now)
        replica = CountriesState(rows: rows, seq: seq)
        let previousStore = self.store
        self.store = store
        if let store {
            // Events of another store (buffered before the snapshot) say nothing about this one.
            buffer.removeAll { $0.store != nil && $0.store != store }
        }
        out.notifications.append(.replaced(seq: seq))
        if keepsStates, let replica { out.states.append(replica) }
        restarted = false
        snapshotNeeded = false
        pubBehindSince = nil
        buffer.drop(through: seq)
        // The snapshot is the service's word at reply time; only buffered events are newer.
        knownSeq = max(seq, buffer.last?.seq ?? 0)
        if let store, let pubStore, pubStore != store {
            // PUB last named another store: one of the two is out of date. Ask again (history
            // names the store that answers) before calling this live.
            catchUpNeeded = true
            // The list names the store the replica had: the change PUB claimed is not the
            // service's (a forgery, or a replica behind). Ask only after a backoff: heartbeats
            // naming a new store every 10 ms made a list and a history each.
            if store == previousStore { backOff(now: now) }
        }
        drain(into: &out)
        checkAnnouncedEvents(now: now, into: &out)
        settle(now: now, into: &out)
        return out
    }

    /// The reply to `history`: the events after the `since` that was asked for, in order, from
    /// `store`; `more` when the service has more after the last of them (paging).
    public mutating func receiveHistory(
        _ events: [Event], store: String? = nil, more: Bool = false, now: ContinuousClock.Instant
    ) -> Output {
        var out = Output()
        if case .requestHistory = outstanding { outstanding = nil }
        replySucceeded(now: now)
        historyFailures = 0
        if let store, let mine = self.store, store != mine, replica != nil, !restarted {
            // The service answers from another store: this history is not about our replica.
            storeChanged(seq: knownSeq)
        }
        // History is relative to the replica; without a usable one it is of no help.
        if var current = replica.take() {
            let before = current.seq
            if !restarted && !snapshotNeeded {
                for event in events where event.seq > current.seq {
                    guard event.seq == current.seq + 1 else {
                        // History must be complete; a hole means it cannot be trusted.
                        snapshotNeeded = true
                        staleReason = "history skipped event \(current.seq + 1)"
                        break
                    }
                    do {
                        try event.validateNames()
                    } catch {
                        // The service's own history breaks its rules: only a fresh list is left.
                        _ = reject(event, error, into: &out)
                        snapshotNeeded = true
                        break
                    }
                    guard replay(event, on: &current, into: &out) else { break }
                }
            }
            replica = current
            drain(into: &out)
            // A page always holds an event: one that says `more` and moved nothing is not a
            // page of several, and asking again at once made a loop of thousands a second.
            if more, let after = replica?.seq, after > before, !restarted, !snapshotNeeded {
                // One page of several: ask for the next one from where this one ended.
                catchUpNeeded = true
            } else if let after = replica?.seq, after == before, !restarted, gap() != nil {
                // PUB promised events that history does not have: the store changed under us.
                snapshotNeeded = true
                historyLacked = true
            }
        }
        settle(now: now, into: &out)
        return out
    }

    /// A request got no useful answer. `truncated` means the service no longer has the history
    /// asked for (take a snapshot now); otherwise (timeout, no reply, an error) it is retried by
    /// ``tick(now:)`` after a delay that doubles up to ``maximumRetryDelay``.
    public mutating func requestFailed(
        _ action: Action, truncated: Bool, now: ContinuousClock.Instant
    ) -> Output {
        var out = Output()
        if outstanding == action { outstanding = nil }
        if truncated, case .requestHistory = action {
            snapshotNeeded = true
            notBefore = nil
        } else if case .requestHistory = action, !silent, historyFailures >= 1 {
            // Twice no answer while the service is heard: the reply may be one we cannot take
            // in (over our message size limit). A fresh list does not depend on its size.
            historyFailures = 0
            snapshotNeeded = true
            staleReason = "history did not come through; taking a fresh list"
            backOff(now: now)
        } else {
            if case .requestHistory = action { historyFailures += 1 }
            backOff(now: now)
        }
        settle(now: now, into: &out)
        return out
    }

    /// Runs the heartbeat watchdog and due retries; call it at ``nextDeadline()``.
    public mutating func tick(now: ContinuousClock.Instant) -> Output {
        var out = Output()
        if started, !silent, let lastHeard, now - lastHeard >= silenceWindow {
            silent = true
            staleReason = "no heartbeat for \(Self.describe(silenceWindow))"
        }
        settle(now: now, into: &out)
        return out
    }

    /// When the driver must call ``tick(now:)`` next, or nil when only an input can change
    /// anything (before ``start(now:)``).
    public func nextDeadline() -> ContinuousClock.Instant? {
        guard started, let lastHeard else { return nil }
        var deadline: ContinuousClock.Instant? = silent ? nil : lastHeard + silenceWindow
        if outstanding == nil, wantedAction() != nil, let notBefore {
            deadline = min(deadline ?? notBefore, notBefore)
        }
        return deadline
    }
}

// MARK: - Rules

extension SubscriptionMachine {
    /// The PUB channel delivered something: the watchdog restarts; after silence, catch up.
    private mutating func heard(now: ContinuousClock.Instant) {
        lastHeard = now
        if silent {
            silent = false
            catchUpNeeded = true
            // The service is evidently back: do not wait out a backoff meant for a dead one.
            notBefore = nil
            retry.reset()
        }
    }

    /// The service names another store than the replica's: start over from a fresh list,
    /// whatever the seqs say.
    private mutating func storeChanged(seq: UInt64) {
        serviceWentBack(to: seq)
        staleReason = "the service runs on another store"
    }

    /// The service's seq went back: it runs on another store, so nothing local can be trusted.
    private mutating func serviceWentBack(to seq: UInt64) {
        restarted = replica != nil
        buffer.removeAll()
        knownSeq = seq
        pubSeq = seq
        pubBehindSince = nil
        staleReason = "service restarted"
    }

    private mutating func replySucceeded(now: ContinuousClock.Instant) {
        if silent {
            // The service answers but PUB is still quiet: keep probing, more and more slowly.
            backOff(now: now)
        } else {
            retry.reset()
            notBefore = nil
            catchUpNeeded = false
        }
    }

    private mutating func backOff(now: ContinuousClock.Instant) {
        notBefore = now + retry.next()
    }

    /// Reports a dropped event and names it as the reason the view is stale; false (and
    /// nothing done) when the last event dropped had the same seq.
    private mutating func reject(_ event: Event, _ error: CountriesError, into out: inout Output) -> Bool {
        guard lastRejected != event.seq else { return false }
        lastRejected = event.seq
        staleReason = "dropped event \(event.seq): its name breaks the rules"
        // The gap it opens is this one: keep its reason rather than "missed event N".
        gapReported = true
        out.notifications.append(.rejected(seq: event.seq, reason: error.message))
        return true
    }

    /// After a snapshot: whether the service's own list reaches what PUB announced ahead of it
    /// (a list asked for because history lacked it). When it does not, a replica answering from
    /// behind the others, or a forgery (one event far ahead from a hostile publisher, behind a
    /// relay, which several sources do not take for a restart) is asked again only after a
    /// backoff: each reply cleared the wait, and history then list then history went round
    /// 4,000 times a second. Once the service's lists
    /// have stayed short of them for a whole silence window (as a heartbeat that stays behind
    /// proves a restart), the events only PUB announced are dropped as a protocol violation, so
    /// the view is live again on what the service says it has.
    private mutating func checkAnnouncedEvents(now: ContinuousClock.Instant, into out: inout Output) {
        // A list after events buffered: history may still have what is missing, ask it at once.
        guard historyLacked else {
            if buffer.isEmpty { unconfirmedSince = nil }
            return
        }
        historyLacked = false
        guard let current = replica, !restarted, !snapshotNeeded, knownSeq > current.seq, !buffer.isEmpty
        else {
            // The list covers what history lacked (a heartbeat's seq, forged or of a replica
            // ahead, is forgotten by the list): still, the service was just asked twice for seqs
            // it does not have, so the next such ask waits (a forged heartbeat every
            // millisecond made a list and a history each).
            unconfirmedSince = nil
            backOff(now: now)
            return
        }
        guard let since = unconfirmedSince, now - since >= silenceWindow else {
            if unconfirmedSince == nil { unconfirmedSince = now }
            backOff(now: now)
            return
        }
        let announced = knownSeq
        buffer.removeAll { $0.seq > current.seq }
        knownSeq = current.seq
        unconfirmedSince = nil
        staleReason = "events up to \(announced) were announced but never confirmed by the service"
        gapReported = true
        out.notifications.append(
            .rejected(
                seq: announced,
                reason:
                    "the event channel announced seq \(announced), but the service's list stayed at \(current.seq) for \(Self.describe(silenceWindow))"
            ))
    }

    /// Adds an event to the buffer; on overflow the buffer is forgotten and a snapshot is
    /// needed.
    private mutating func insert(_ event: Event) {
        if !buffer.insert(event) {
            // Too far behind for history to be worth it; knownSeq keeps what we must reach.
            snapshotNeeded = true
            staleReason = "fell too far behind"
        }
    }

    /// Applies buffered events that follow the replica without a hole.
    private mutating func drain(into out: inout Output) {
        guard !restarted, !snapshotNeeded, var current = replica.take() else { return }
        buffer.drop(through: current.seq)
        var applied = 0
        while applied < buffer.events.count, buffer.events[applied].seq == current.seq + 1 {
            guard replay(buffer.events[applied], on: &current, into: &out) else { break }
            applied += 1
        }
        buffer.removeFirst(applied)
        replica = current
    }

    /// Replays one event (which must be `seq + 1`); a mismatch means the replica is wrong.
    private mutating func replay(
        _ event: Event, on state: inout CountriesState, into out: inout Output
    ) -> Bool {
        do {
            try state.replay(event)
            out.notifications.append(.applied(event))
            if keepsStates { out.states.append(state) }
            return true
        } catch {
            snapshotNeeded = true
            staleReason = "event \(event.seq) did not fit the local copy"
            return false
        }
    }

    /// The seqs the replica is known to miss, if any.
    private func gap() -> ClosedRange<UInt64>? {
        guard let current = replica, !restarted else { return nil }
        if let first = buffer.first, first.seq > current.seq + 1 {
            return (current.seq + 1)...(first.seq - 1)
        }
        if knownSeq > current.seq, buffer.isEmpty { return (current.seq + 1)...knownSeq }
        return nil
    }

    /// The request the replica needs next, if any.
    private func wantedAction() -> Action? {
        guard let current = replica, !restarted, !snapshotNeeded else { return .requestSnapshot }
        if silent || catchUpNeeded || gap() != nil || !buffer.isEmpty {
            return .requestHistory(since: current.seq)
        }
        return nil
    }

    /// Ends every input: names a new gap, sends the request needed (if allowed), updates the phase.
    private mutating func settle(now: ContinuousClock.Instant, into out: inout Output) {
        if let missing = gap() {
            if !gapReported {
                staleReason =
                    missing.lowerBound == missing.upperBound
                    ? "missed event \(missing.lowerBound)"
                    : "missed events \(missing.lowerBound)-\(missing.upperBound)"
                gapReported = true
            }
        } else {
            gapReported = false
        }

        if started, outstanding == nil, let action = wantedAction() {
            if notBefore.map({ now >= $0 }) ?? true {
                notBefore = nil
                outstanding = action
                out.actions.append(action)
            }
        }

        let inSync =
            !restarted && !snapshotNeeded && !silent && !catchUpNeeded && buffer.isEmpty && gap() == nil
        let newPhase: SubscriptionPhase = replica == nil ? .connecting : inSync ? .live : .stale(staleReason)
        if newPhase != phase {
            phase = newPhase
            out.notifications.append(.phaseChanged(newPhase))
        }
    }

    /// "3 s", "1.5 s": a duration as the stale reason shows it.
    static func describe(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        if milliseconds % 1000 == 0 { return "\(milliseconds / 1000) s" }
        return "\(Double(milliseconds) / 1000) s"
    }
}
