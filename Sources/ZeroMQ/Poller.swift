import CZeroMQ

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

/// Waits on sockets and plain file descriptors (stdin, a signal pipe) together with `zmq_poll`.
///
/// Not `Sendable`: it holds sockets, which belong to one thread. The sockets must stay
/// open while they are in the poller; polling a closed one throws `ENOTSOCK`.
public struct Poller {
    /// One registered item; the socket is held strongly so its handle stays valid.
    private enum Source {
        case socket(Socket)
        case fileDescriptor(Int32)
    }

    private var sources: [Source] = []
    private var interests: [PollEvents] = []

    /// Creates an empty poller.
    public init() {}

    /// The number of items added so far.
    public var count: Int { sources.count }

    /// Adds a socket; returns its index for ``PollResult/events(at:)``.
    @discardableResult
    public mutating func add(_ socket: Socket, events: PollEvents = .readable) -> Int {
        sources.append(.socket(socket))
        interests.append(events)
        return sources.count - 1
    }

    /// Adds a plain file descriptor (e.g. `STDIN_FILENO` or the read end of a pipe);
    /// returns its index for ``PollResult/events(at:)``.
    @discardableResult
    public mutating func add(fileDescriptor: Int32, events: PollEvents = .readable) -> Int {
        sources.append(.fileDescriptor(fileDescriptor))
        interests.append(events)
        return sources.count - 1
    }

    /// Waits until at least one item is ready or `timeoutMilliseconds` pass (-1 waits forever,
    /// 0 just checks).
    ///
    /// An `EINTR` (a signal arrived) is returned as a result with ``PollResult/isInterrupted``
    /// true, not thrown, so signal-driven loops can check their flags and poll again.
    /// Throws ``ZMQError/isTerminated`` once a polled socket's context is shut down.
    public func poll(timeoutMilliseconds: Int) throws(ZMQError) -> PollResult {
        // Build the C array fresh each call (one allocation): it reads each socket's current
        // handle, so a socket closed since add() is reported instead of handing libzmq a freed pointer.
        var items: [zmq_pollitem_t] = []
        items.reserveCapacity(sources.count)
        for (index, source) in sources.enumerated() {
            let events = interests[index].rawValue
            switch source {
            case .socket(let socket):
                let handle = try socket.openHandle("poll(item \(index))")
                items.append(zmq_pollitem_t(socket: handle, fd: 0, events: events, revents: 0))
            case .fileDescriptor(let fd):
                items.append(zmq_pollitem_t(socket: nil, fd: fd, events: events, revents: 0))
            }
        }
        let rc = items.withUnsafeMutableBufferPointer { buffer in
            zmq_poll(buffer.baseAddress, Int32(buffer.count), timeoutMilliseconds)
        }
        if rc < 0 {
            let error = ZMQError.last("poll(\(items.count) items, \(timeoutMilliseconds) ms)")
            if error.isInterrupted {
                return PollResult(isInterrupted: true, readyCount: 0, ready: [])
            }
            throw error
        }
        return PollResult(
            isInterrupted: false,
            readyCount: Int(rc),
            ready: items.map { PollEvents(rawValue: $0.revents) }
        )
    }
}

/// The outcome of one ``Poller/poll(timeoutMilliseconds:)``.
public struct PollResult: Sendable {
    /// The wait was cut short by a signal (`EINTR`); no item is reported ready.
    public let isInterrupted: Bool
    /// How many items have at least one event ready (0 after a timeout).
    public let readyCount: Int
    /// The ready events per item index; empty after an interruption.
    private let ready: [PollEvents]

    init(isInterrupted: Bool, readyCount: Int, ready: [PollEvents]) {
        self.isInterrupted = isInterrupted
        self.readyCount = readyCount
        self.ready = ready
    }

    /// The events ready on item `index` (empty if none, or if `index` is out of range).
    public func events(at index: Int) -> PollEvents {
        ready.indices.contains(index) ? ready[index] : []
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
