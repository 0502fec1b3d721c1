import CountriesCore
import CountriesSockets
import Foundation
import SystemSupport
import ZeroMQ

/// What the service sends on its PUB socket (docs/PROTOCOL.md, "Events"): each committed event
/// under its topic, and heartbeats that claim the seq of the last event published, never one
/// not published yet.
///
/// A replica that cannot vouch for what it publishes (no quorum, a damaged log, a publication
/// that trails the commits) holds its heartbeats, so views move to another replica or go stale
/// instead of trusting it (docs/HA.md); the log says when heartbeats stop and when they resume.
///
/// What it sends passes a ``ForwardingWindow``: a message that would make the last run a
/// subscriber can hold larger than its bytes is not sent, to anyone (logged). Its seq still
/// counts as published: heartbeats claim it, so subscribers see the gap and catch up from
/// `history`, where the event is (docs/RELIABILITY.md, "Each subscriber's queue, in bytes").
/// Used from the service's thread only.
final class EventPublisher {
    /// The seq of the last event published: what a heartbeat claims.
    private(set) var publishedSeq: UInt64
    /// Whether heartbeats are held back (logged when it changes).
    private(set) var heartbeatsHeld = false
    private let socket: Socket
    /// The publisher's own, not a static: LeakSanitizer cannot follow Swift's tagged pointers to
    /// `Data` storage in a global that lives until exit, and reported it as leaked.
    private let frames = TopicFrames()
    private var window: ForwardingWindow
    private var skipped = RefusalLog(noun: "events not published")
    private let logger: Logger

    /// A publisher on `socket` (a PUB or XPUB) whose first heartbeat claims `publishedSeq`: the
    /// seq of the state the service loaded, whose events were published before it started;
    /// what it sends passes `window`.
    init(socket: Socket, publishedSeq: UInt64, window: ForwardingWindow, logger: Logger) {
        self.socket = socket
        self.publishedSeq = publishedSeq
        self.window = window
        self.logger = logger
    }

    /// Publishes the encoding of the event at `seq` under `topic`; heartbeats claim `seq` from now
    /// on.
    func publish(topic: Topic, seq: UInt64, body: [UInt8]) {
        send(topic: topic, body: body)
        publishedSeq = seq
    }

    /// Publishes a heartbeat of store `store` claiming ``publishedSeq``, unless `heldBecause`
    /// says why this replica must not (then nothing is sent).
    func heartbeat(store: String, heldBecause why: String?) {
        if (why != nil) != heartbeatsHeld {
            heartbeatsHeld = why != nil
            if let why {
                logger.log(.warning, "heartbeats stopped: \(why)")
            } else {
                logger.log(.info, "heartbeats resumed at seq \(publishedSeq)")
            }
        }
        if heartbeatsHeld { return }
        send(topic: .heartbeat, body: Heartbeat(seq: publishedSeq, store: store).encoded(as: [UInt8].self))
    }

    private func send(topic: Topic, body: [UInt8]) {
        let topicFrame = frames[topic]
        let weight = ForwardingWindow.weight(bytes: topicFrame.count + body.count, frames: 2)
        guard window.admit(weight) else {
            let line =
                "did not publish this \(topic.rawValue) of \(weight) bytes: with the \(window.messages - 1) messages before it, it would leave a subscriber that stops reading holding more than \(window.bytes) bytes; subscribers see the gap and catch up from history"
            if let line = skipped.record(line, now: .now) { logger.log(.warning, line) }
            return
        }
        do {
            // PUB never blocks: a subscriber over its high-water mark misses the message and
            // notices the gap in seq.
            try socket.send(topicFrame, then: body, dontWait: true)
        } catch {
            logger.log(.warning, "publishing \(topic.rawValue) failed: \(error)")
        }
    }
}

@available(*, unavailable) extension EventPublisher: Sendable {}
