import CZeroMQ
import SystemSupport

#if canImport(Glibc)
    import Glibc
#endif

/// What a poll item waits for, or what became ready (`ZMQ_POLLIN`, `ZMQ_POLLOUT`, `ZMQ_POLLERR`).
public struct PollEvents: OptionSet, Sendable {
    /// The raw `zmq_pollitem_t.events` bits (a C `short`).
    public let rawValue: Int16

    /// Creates events from raw `ZMQ_POLL...` bits.
    public init(rawValue: Int16) { self.rawValue = rawValue }

    /// `ZMQ_POLLIN`: a message (or, for a file descriptor, data) can be read without blocking.
    public static let readable = PollEvents(rawValue: Int16(ZMQ_POLLIN))
    /// `ZMQ_POLLOUT`: a message can be sent without blocking.
    public static let writable = PollEvents(rawValue: Int16(ZMQ_POLLOUT))
    /// `ZMQ_POLLERR`: an error condition on a file descriptor (never set for sockets).
    public static let error = PollEvents(rawValue: Int16(ZMQ_POLLERR))
}

/// Waits on sockets and plain file descriptors (stdin, a signal pipe) together.
///
/// It does what `zmq_poll` does with fewer system calls. A socket's `ZMQ_FD` only says that
/// commands are pending, and asking `ZMQ_EVENTS` costs libzmq two system calls per socket
/// (`getpid` and `poll` on the socket's mailbox); `zmq_poll` asks it of every socket twice per
/// wait, and polls every descriptor twice. A socket's events can only change through a call on
/// this thread (a send or receive reads its mailbox) or through a command, which makes its
/// `ZMQ_FD` readable. So this poller remembers what `ZMQ_EVENTS` said and asks again only for a
/// socket that has been used since (``Socket`` counts its libzmq calls) or whose `ZMQ_FD`
/// fired; it never blocks while a socket is known to be ready, and it always looks at every
/// descriptor once, so a busy socket cannot starve a signal pipe.
///
/// Not `Sendable`: it holds sockets, which belong to one thread. The sockets must stay
/// open while they are in the poller; polling a closed one throws `ENOTSOCK`.
public struct Poller {
    /// One registered item; the socket is held strongly so its handle stays valid.
    private enum Source {
        case socket(Socket)
        case fileDescriptor(Int32)
    }

    /// What this poller last learned of a socket item.
    private struct Known {
        /// The socket's `ZMQ_FD` (constant for its life), or -1 before the first poll.
        var fileDescriptor: Int32 = -1
        /// `ZMQ_EVENTS` as last asked.
        var events: PollEvents = []
        /// ``Socket/activity`` right after that; nil: never asked.
        var activity: UInt64?
    }

    private var sources: [Source] = []
    private var interests: [PollEvents] = []
    private var known: [Known] = []
    /// The `pollfd` array, kept between polls so a wait allocates nothing for it.
    private var descriptors: [pollfd] = []
    /// How many times it asked a socket's `ZMQ_EVENTS` before waiting: for tests of what it saves.
    private(set) var queriesBeforeWait = 0

    /// Creates an empty poller.
    public init() {}

    /// The number of items added so far.
    public var count: Int { sources.count }

    /// Adds a socket; returns its index for ``PollResult/events(at:)``.
    @discardableResult
    public mutating func add(_ socket: Socket, events: PollEvents = .readable) -> Int {
        append(.socket(socket), events, descriptor: -1)
    }

    /// Adds a plain file descriptor (e.g. `STDIN_FILENO` or the read end of a pipe);
    /// returns its index for ``PollResult/events(at:)``.
    @discardableResult
    public mutating func add(fileDescriptor: Int32, events: PollEvents = .readable) -> Int {
        append(.fileDescriptor(fileDescriptor), events, descriptor: fileDescriptor)
    }

    private mutating func append(_ source: Source, _ events: PollEvents, descriptor: Int32) -> Int {
        sources.append(source)
        interests.append(events)
        known.append(Known())
        var wanted: Int16 = 0
        if case .fileDescriptor = source {
            if events.contains(.readable) { wanted |= Int16(POLLIN) }
            if events.contains(.writable) { wanted |= Int16(POLLOUT) }
        } else {
            wanted = Int16(POLLIN)  // a socket's ZMQ_FD only ever signals readable
        }
        descriptors.append(pollfd(fd: descriptor, events: wanted, revents: 0))
        return sources.count - 1
    }

    /// Waits until at least one item is ready or `timeoutMilliseconds` pass (-1 waits forever,
    /// 0 just checks).
    ///
    /// An `EINTR` (a signal arrived) is returned as a result with ``PollResult/isInterrupted``
    /// true, not thrown, so signal-driven loops can check their flags and poll again.
    /// Throws ``ZMQError/isTerminated`` once a polled socket's context is shut down.
    public mutating func poll(timeoutMilliseconds: Int) throws(ZMQError) -> PollResult {
        let deadline =
            timeoutMilliseconds > 0 ? ContinuousClock.now + .milliseconds(timeoutMilliseconds) : nil
        while true {
            // Sockets used since they were last asked may have taken their own wake-up.
            var socketReady = false
            for index in sources.indices {
                guard case .socket(let socket) = sources[index] else { continue }
                if known[index].activity != socket.activity || known[index].fileDescriptor < 0 {
                    if known[index].fileDescriptor >= 0, interests[index] == .readable,
                        socket.drainedAtActivity == socket.activity
                    {
                        // Its last call was a receive that found nothing: not readable, and the
                        // next message signals its ZMQ_FD (``Socket/drainedAtActivity``).
                        known[index].events = []
                        known[index].activity = socket.activity
                    } else {
                        queriesBeforeWait += 1
                        guard try refresh(index, socket) else {
                            return PollResult(interrupted: true, count: 0)
                        }
                    }
                }
                if !known[index].events.isDisjoint(with: interests[index]) { socketReady = true }
            }
            var wait: Int32
            if socketReady || timeoutMilliseconds == 0 {
                wait = 0
            } else if let deadline {
                let left = deadline - ContinuousClock.now
                wait = Int32(clamping: left.millisecondsRoundedUp)
            } else {
                wait = -1
            }
            let count = descriptors.count
            let rc = descriptors.withUnsafeMutableBufferPointer { buffer in
                Glibc.poll(buffer.baseAddress, nfds_t(count), wait)
            }
            if rc < 0 {
                if errno == EINTR { return PollResult(interrupted: true, count: 0) }
                throw ZMQError(code: errno, operation: "poll(\(count) items, \(timeoutMilliseconds) ms)")
            }
            var ready = PollResult(interrupted: false, count: count)
            for index in sources.indices {
                switch sources[index] {
                case .socket(let socket):
                    if descriptors[index].revents != 0 {
                        guard try refresh(index, socket) else {
                            return PollResult(interrupted: true, count: 0)
                        }
                    }
                    ready.set(known[index].events.intersection(interests[index]), at: index)
                case .fileDescriptor:
                    let revents = Int32(descriptors[index].revents)
                    var events: PollEvents = []
                    if revents & POLLIN != 0 { events.insert(.readable) }
                    if revents & POLLOUT != 0 { events.insert(.writable) }
                    if revents & (POLLERR | POLLHUP | POLLNVAL) != 0 { events.insert(.error) }
                    ready.set(events, at: index)
                }
            }
            // A ZMQ_FD also fires for commands that make nothing ready: wait on for the rest.
            let expired = timeoutMilliseconds == 0 || deadline.map { ContinuousClock.now >= $0 } ?? false
            if ready.readyCount > 0 || expired { return ready }
        }
    }

    /// Asks `ZMQ_EVENTS` of the socket at `index` (which processes its pending commands and
    /// reads its wake-up) and remembers the answer with the socket's activity after it. Returns
    /// false when a signal interrupted it (libzmq's `poll` of the socket's mailbox saw `EINTR`),
    /// which the poll reports as ``PollResult/isInterrupted``, as `zmq_poll` does.
    private mutating func refresh(_ index: Int, _ socket: Socket) throws(ZMQError) -> Bool {
        let handle = try socket.openHandle("poll(item \(index))")
        if known[index].fileDescriptor < 0 {
            var descriptor: Int32 = -1
            var size = MemoryLayout<Int32>.size
            if zmq_getsockopt(handle, ZMQ_FD, &descriptor, &size) != 0 {
                throw ZMQError.last("poll(item \(index)): ZMQ_FD")
            }
            known[index].fileDescriptor = descriptor
            descriptors[index].fd = descriptor
        }
        var events: UInt32 = 0
        var size = MemoryLayout<UInt32>.size
        if zmq_getsockopt(handle, ZMQ_EVENTS, &events, &size) != 0 {
            let error = ZMQError.last("poll(item \(index)): ZMQ_EVENTS")
            if error.isInterrupted { return false }
            throw error
        }
        known[index].events = PollEvents(rawValue: Int16(truncatingIfNeeded: events))
        known[index].activity = socket.activity
        return true
    }
}

/// The outcome of one ``Poller/poll(timeoutMilliseconds:)``.
///
/// The events of the first 64 items are kept as bit masks, so a poll allocates nothing.
public struct PollResult: Sendable {
    /// The wait was cut short by a signal (`EINTR`); no item is reported ready.
    public let isInterrupted: Bool
    /// How many items have at least one event ready (0 after a timeout).
    public private(set) var readyCount = 0
    private var readable: UInt64 = 0
    private var writable: UInt64 = 0
    private var errors: UInt64 = 0
    /// The events of items 64 and on.
    private var beyond: [PollEvents] = []

    /// A result with nothing ready yet, for `count` items (or an interrupted wait).
    init(interrupted: Bool, count: Int) {
        isInterrupted = interrupted
        if count > 64 { beyond = Array(repeating: [], count: count - 64) }
    }

    /// Records the events of item `index` (each item once).
    mutating func set(_ events: PollEvents, at index: Int) {
        if !events.isEmpty { readyCount += 1 }
        guard index < 64 else {
            beyond[index - 64] = events
            return
        }
        let bit: UInt64 = 1 << UInt64(index)
        if events.contains(.readable) { readable |= bit }
        if events.contains(.writable) { writable |= bit }
        if events.contains(.error) { errors |= bit }
    }

    /// The events ready on item `index` (empty if none, or if `index` is out of range).
    public func events(at index: Int) -> PollEvents {
        guard index >= 0 else { return [] }
        guard index < 64 else { return beyond.indices.contains(index - 64) ? beyond[index - 64] : [] }
        let bit: UInt64 = 1 << UInt64(index)
        var events: PollEvents = []
        if readable & bit != 0 { events.insert(.readable) }
        if writable & bit != 0 { events.insert(.writable) }
        if errors & bit != 0 { events.insert(.error) }
        return events
    }

    /// Whether item `index` can be read without blocking.
    public func isReadable(_ index: Int) -> Bool {
        events(at: index).contains(.readable)
    }

    /// Whether item `index` can be written without blocking.
    public func isWritable(_ index: Int) -> Bool {
        events(at: index).contains(.writable)
    }
}
