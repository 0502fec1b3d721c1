import CountriesCore
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
    private let logger: Logger

    /// A publisher on `socket` (a PUB or XPUB) whose first heartbeat claims `publishedSeq`: the
    /// seq of the state the service loaded, whose events were published before it started.
    init(socket: Socket, publishedSeq: UInt64, logger: Logger) {
        self.socket = socket
        self.publishedSeq = publishedSeq
        self.logger = logger
    }

    /// Publishes the encoding of the event at `seq` under `topic`; heartbeats claim `seq` from now on.
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
        do {
            // PUB never blocks: a subscriber over its high-water mark misses the message and
            // notices the gap in seq.
            try socket.send(frames[topic], then: body, dontWait: true)
        } catch {
            logger.log(.warning, "publishing \(topic.rawValue) failed: \(error)")
        }
    }
}

@available(*, unavailable) extension EventPublisher: Sendable {}
