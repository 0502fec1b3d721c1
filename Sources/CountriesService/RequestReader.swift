import Foundation
@preconcurrency import Glibc
import SystemSupport
import ZeroMQ

/// Takes requests off the command socket without waiting, within a batch's limits: its count
/// (``ServiceConfiguration/maximumBatch``), its `history` requests
/// (``ServiceConfiguration/maximumHistoryPerBatch``), its replies' estimated bytes
/// (``ServiceConfiguration/maximumBatchReplyBytes``) and its requests' bytes
/// (``ServiceConfiguration/maximumBatchRequestBytes``), so that one pass of the service's loop
/// is bounded however much is queued (docs/RELIABILITY.md). The loop decides what to do with
/// what it reads: answer each in turn, forward it, or commit it in a group.
struct RequestReader {
    /// What a batch has taken of its limits besides its count. One per batch, carried across
    /// the reads that make it up.
    struct Load {
        /// Requests that may read `history` pages.
        var costly = 0
        /// The replies' estimated bytes.
        var replyBytes = 0
        /// The requests' bytes, as received (``IncomingRequest/bytes``).
        var requestBytes = 0
    }

    private let commands: Socket
    private let limits: (count: Int, costly: Int, replyBytes: Int, requestBytes: Int)
    /// Whether clients are authenticated, so each request's access is read off its User-Id.
    private let authenticates: Bool
    /// The properties read off each request's frames: the User-Id when clients are
    /// authenticated, the peer's address when the log shows it. Fixed for the service's life,
    /// so made once, not for each read (the in-memory path reads one request at a time).
    private let properties: [String]
    private let logger: Logger

    /// A reader of `commands` with the limits of `configuration`.
    init(commands: Socket, configuration: ServiceConfiguration, authenticates: Bool, logger: Logger) {
        self.commands = commands
        limits = (
            configuration.maximumBatch, configuration.maximumHistoryPerBatch,
            configuration.maximumBatchReplyBytes, configuration.maximumBatchRequestBytes
        )
        self.authenticates = authenticates
        properties =
            (authenticates ? [IncomingRequest.userIDProperty] : [])
            + (logger.logs(.debug) ? [IncomingRequest.peerAddressProperty] : [])
        self.logger = logger
    }

    /// Appends to `batch` every request already queued, up to the batch's limits (and `limit`
    /// requests in all), without waiting. Returns whether a limit stopped it, rather than an
    /// empty queue; a failed receive is logged and also ends the batch.
    ///
    /// - Parameters:
    ///   - traces: whether the requests get traces (when they were read, and from whom); one
    ///     clock read per call then, not per request.
    ///   - listBytes: what a `list` reply takes now (``CommandHandler/estimatedListBytes``),
    ///     asked only of a request that may get the whole list.
    func read(
        into batch: inout [IncomingRequest], load: inout Load, limit: Int = .max, traces: Bool,
        listBytes: () -> Int
    ) -> Bool {
        let received = traces ? ContinuousClock.now : nil
        while batch.count < min(limit, limits.count) && allowsMore(load) {
            switch next(received: received) {
            case .request(let request):
                count(request, in: &load, listBytes: listBytes)
                batch.append(request)
            case .empty: return false
            case .failed: return true
            }
        }
        return true
    }

    /// What ``next(received:)`` found.
    enum Taken {
        case request(IncomingRequest)
        /// Nothing is queued.
        case empty
        /// The receive failed (logged).
        case failed
    }

    /// Takes the next request off the socket without waiting; `received` is its trace's time.
    /// Not counted in a load: the caller counts it (``count(_:in:listBytes:)``) before it
    /// asks ``allowsMore(_:)`` again.
    func next(received: ContinuousClock.Instant?) -> Taken {
        do {
            var frames = IncomingRequest.Assembler()
            guard
                let metadata = try commands.receiveFrames(
                    dontWait: true, properties: properties, sourceDescriptor: false,
                    { frames.take($0, more: $1) })
            else { return .empty }
            return .request(
                IncomingRequest(
                    frames, properties: metadata.properties, authenticated: authenticates, received: received)
            )
        } catch {
            logger.log(.error, "receiving a request failed: \(error)")
            return .failed
        }
    }

    /// Whether a batch (or a pass of the loop) that has taken `load` may take another request,
    /// by the limits besides the count.
    func allowsMore(_ load: Load) -> Bool {
        load.costly < limits.costly && load.replyBytes < limits.replyBytes
            && load.requestBytes < limits.requestBytes
    }

    /// Adds what `request` takes of the limits to `load`: a guess from its bytes, not decoding it.
    func count(_ request: IncomingRequest, in load: inout Load, listBytes: () -> Int) {
        let likely = request.likelyReply
        if likely == .historyPage || likely == .anyOp { load.costly += 1 }
        load.replyBytes += likely.estimatedBytes(listBytes: listBytes())
        load.requestBytes += request.bytes
    }

    /// Reads, for at most `awaited.wait`, the requests of the clients the last grouped commit
    /// answered that had not sent again (``CommitCohort``), looking every 20 µs; stops early
    /// when all of them came or a limit is reached.
    func gather(
        _ cohort: CommitCohort.Awaited, into batch: inout [IncomingRequest], load: inout Load,
        traces: Bool, listBytes: () -> Int
    ) {
        var awaited = cohort
        let deadline = ContinuousClock.now + awaited.wait
        var pause = timespec(tv_sec: 0, tv_nsec: 20_000)
        while ContinuousClock.now < deadline {
            let before = batch.count
            let full = read(into: &batch, load: &load, traces: traces, listBytes: listBytes)
            for request in batch[before...] {
                awaited.received(from: UnreadReplies.peer(of: request.envelope))
            }
            if full || awaited.isComplete { return }
            if batch.count == before { nanosleep(&pause, nil) }
        }
    }
}
