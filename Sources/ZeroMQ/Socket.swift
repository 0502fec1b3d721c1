import CZeroMQ
import Foundation

/// One libzmq socket. Not thread-safe: only one thread may use it (libzmq's rule too).
///
/// Made by ``Context/makeSocket(_:)``; keeps its context alive. Closes itself on `deinit`,
/// with linger 0 unless ``SocketOption/linger`` was set, so unsent messages never keep
/// ``Context/terminate()`` waiting.
public final class Socket {
    /// The socket's type.
    public let type: SocketType
    /// The libzmq socket; nil once closed.
    private(set) var handle: UnsafeMutableRawPointer?
    /// Held so the context outlives its sockets: zmq_ctx_term would block on them otherwise.
    private let context: Context
    /// Whether the user chose a linger; if not, close() sets 0 so nothing lingers by surprise.
    private var lingerWasSet = false
    /// How many libzmq calls have been made on the socket. Any of them may process the socket's
    /// pending commands and so consume the wake-up on its `ZMQ_FD`; a ``Poller`` asks
    /// `ZMQ_EVENTS` again only for the sockets whose count moved (see ``Poller``).
    private(set) var activity: UInt64 = 0
    /// ``activity`` when a receive last found nothing queued (`EAGAIN`). libzmq processed the
    /// socket's pending commands for that receive and found no message, just as `ZMQ_EVENTS`
    /// would: while the count has not moved since, a ``Poller`` knows the socket is not
    /// readable without asking (two system calls saved per wait of a loop that reads last). Set
    /// by each receive of the module (``receive(dontWait:)``, ``receiveHeld(dontWait:)``).
    var drainedAtActivity: UInt64?
    /// Whether ``startMonitor(_:kinds:)`` is in effect: ``close()`` stops it first.
    var isMonitored = false

    init(handle: UnsafeMutableRawPointer, type: SocketType, context: Context) {
        self.handle = handle
        self.type = type
        self.context = context
    }

    deinit {
        close()
    }

    /// The open libzmq handle, or `ENOTSOCK` if the socket has been closed.
    func openHandle(_ operation: @autoclosure () -> String) throws(ZMQError) -> UnsafeMutableRawPointer {
        guard let handle else {
            throw ZMQError(code: ENOTSOCK, operation: operation())
        }
        activity &+= 1
        return handle
    }

    // MARK: Endpoints

    /// Binds to `endpoint`, e.g. `tcp://127.0.0.1:*`, `ipc:///tmp/x.sock` or `inproc://name`.
    public func bind(_ endpoint: String) throws(ZMQError) {
        let handle = try openHandle("bind(\(endpoint))")
        try retryingSignals("bind(\(endpoint))") { zmq_bind(handle, endpoint) }
    }

    /// Connects to `endpoint`; the connection itself is made (and remade) in the background.
    public func connect(_ endpoint: String) throws(ZMQError) {
        let handle = try openHandle("connect(\(endpoint))")
        try retryingSignals("connect(\(endpoint))") { zmq_connect(handle, endpoint) }
    }

    /// Stops listening on `endpoint`; for wildcard binds pass the ``lastEndpoint`` form.
    public func unbind(_ endpoint: String) throws(ZMQError) {
        let handle = try openHandle("unbind(\(endpoint))")
        try retryingSignals("unbind(\(endpoint))") { zmq_unbind(handle, endpoint) }
    }

    /// Drops the connection to `endpoint`.
    public func disconnect(_ endpoint: String) throws(ZMQError) {
        let handle = try openHandle("disconnect(\(endpoint))")
        try retryingSignals("disconnect(\(endpoint))") { zmq_disconnect(handle, endpoint) }
    }

    /// Calls `call` (a libzmq call returning 0 or -1) again while a signal interrupts it.
    /// libzmq starts each endpoint call by taking the socket's pending commands, and a signal
    /// there (`EINTR`) fails the call before it has done anything: a handled signal (a resized
    /// terminal's SIGWINCH, a SIGHUP) failed a connect "Interrupted system call".
    private func retryingSignals(_ operation: @autoclosure () -> String, _ call: () -> Int32) throws(ZMQError)
    {
        while call() != 0 {
            guard zmq_errno() == EINTR else { throw ZMQError.last(operation()) }
        }
    }

    /// The endpoint last bound or connected (`ZMQ_LAST_ENDPOINT`), with the real port after
    /// binding `tcp://host:*`.
    public var lastEndpoint: String {
        get throws(ZMQError) { try getOption(.lastEndpoint) }
    }

    // MARK: Sending (receiving: Socket+Receiving.swift)

    /// Sends the frames as one multipart message (all but the last with `ZMQ_SNDMORE`).
    ///
    /// Returns false, instead of throwing, when the message could not be queued now
    /// (`EAGAIN`: `dontWait`, a send timeout, or a full high-water mark) or the call was
    /// interrupted (`EINTR`); nothing was sent then, and the caller may retry.
    /// An empty array sends nothing and returns true.
    @discardableResult
    public func send(_ frames: [Data], dontWait: Bool = false) throws(ZMQError) -> Bool {
        try send(count: frames.count, dontWait: dontWait) { frames[$0].withUnsafeBytes($1) }
    }

    /// Sends `head`'s frames then `last` as one multipart message, like ``send(_:dontWait:)``
    /// with `head + [last]` but without making that array (a reply after its envelope).
    @discardableResult
    public func send(_ head: [Data], then last: Data, dontWait: Bool = false) throws(ZMQError) -> Bool {
        try send(count: head.count + 1, dontWait: dontWait) {
            $0 < head.count ? head[$0].withUnsafeBytes($1) : last.withUnsafeBytes($1)
        }
    }

    /// Sends the two frames as one message, like ``send(_:dontWait:)`` with `[first, last]`
    /// but without making that array (an event after its topic).
    @discardableResult
    public func send(_ first: Data, then last: Data, dontWait: Bool = false) throws(ZMQError) -> Bool {
        try send(count: 2, dontWait: dontWait) {
            $0 == 0 ? first.withUnsafeBytes($1) : last.withUnsafeBytes($1)
        }
    }

    /// Sends the two frames as one message, like ``send(_:then:dontWait:)-(Data,Data,_)``, the
    /// last from an array (an event as the service encodes it).
    @discardableResult
    public func send(_ first: Data, then last: [UInt8], dontWait: Bool = false) throws(ZMQError) -> Bool {
        try send(count: 2, dontWait: dontWait) {
            $0 == 0 ? first.withUnsafeBytes($1) : last.withUnsafeBytes($1)
        }
    }

    /// Sends `head`'s frames then `last` as one message, like ``send(_:then:dontWait:)``, and
    /// tells `observer` once libzmq no longer holds `last`: written to the connection, dropped
    /// (a peer gone, a full queue), or not sent at all (then before this returns or throws).
    /// `last` is copied once, into a buffer libzmq sends from and frees; the observer is told on
    /// one of libzmq's I/O threads, so a caller can count what a peer has not taken yet.
    @discardableResult
    public func send(
        _ head: [Data], then last: [UInt8], dontWait: Bool = false, observer: any ReleaseObserver
    ) throws(ZMQError) -> Bool {
        let handle = try openHandle("send")
        let flags: Int32 = dontWait ? ZMQ_DONTWAIT : 0
        do {
            guard
                try send(
                    count: head.count, dontWait: dontWait, continued: true, opened: handle,
                    frame: { head[$0].withUnsafeBytes($1) })
            else {
                observer.released(last.count)
                return false
            }
        } catch {
            observer.released(last.count)
            throw error
        }
        var message = zmq_msg_t()
        let buffer = last.withUnsafeBytes { ReleasedBuffer.copying($0, observer: observer) }
        let hint = Unmanaged.passRetained(buffer).toOpaque()
        guard zmq_msg_init_data(&message, buffer.pointer, last.count, ReleasedBuffer.free, hint) == 0 else {
            Unmanaged<ReleasedBuffer>.fromOpaque(hint).release()
            buffer.run()
            throw ZMQError(code: zmq_errno(), operation: "zmq_msg_init_data")
        }
        while true {
            if zmq_msg_send(&message, handle, flags) >= 0 { return true }
            let code = zmq_errno()
            if code == EINTR && !head.isEmpty { continue }
            zmq_msg_close(&message)  // frees the buffer and tells the observer
            if head.isEmpty && (code == EAGAIN || code == EINTR) { return false }
            throw ZMQError(code: code, operation: "send(frame \(head.count + 1) of \(head.count + 1))")
        }
    }

    /// Sends frames 0 to `count - 1` as one multipart message, or as its start when `continued`
    /// (the caller sends the rest): `frame(index, send)` calls `send` with the bytes of frame
    /// `index` and returns what it returned. `opened` is the handle when the caller has opened
    /// it for this send already (one open, and one count of ``activity``, per send).
    private func send(
        count: Int, dontWait: Bool, continued: Bool = false, opened: UnsafeMutableRawPointer? = nil,
        frame: (Int, (UnsafeRawBufferPointer) -> Int32) -> Int32
    ) throws(ZMQError) -> Bool {
        let handle: UnsafeMutableRawPointer
        if let opened { handle = opened } else { handle = try openHandle("send") }
        for index in 0..<count {
            var flags: Int32 = dontWait ? ZMQ_DONTWAIT : 0
            if index < count - 1 || continued { flags |= ZMQ_SNDMORE }
            while true {
                let rc = frame(index) { bytes in zmq_send(handle, bytes.baseAddress, bytes.count, flags) }
                if rc >= 0 { break }
                let code = zmq_errno()
                // Only the first frame can meet a full queue: libzmq checks the high-water mark per
                // message, so once it is started the rest is queued. A refusal there means nothing
                // was sent, and the caller can just try again later.
                if index == 0 && (code == EAGAIN || code == EINTR) { return false }
                // Mid-message, giving up would leave half a message queued and glue the caller's
                // next message onto it, so a signal only makes us retry.
                if code == EINTR { continue }
                throw ZMQError(code: code, operation: "send(frame \(index + 1) of \(count))")
            }
        }
        return true
    }

    // MARK: Subscriptions

    /// Subscribes to messages whose first frame starts with `prefix` (`""`: everything).
    ///
    /// On a SUB socket this sets `ZMQ_SUBSCRIBE`; an XSUB socket has no such option in
    /// libzmq 4.3, so it sends the subscription message (`0x01` + prefix) upstream instead.
    public func subscribe(_ prefix: String = "") throws(ZMQError) {
        try changeSubscription(prefix, subscribe: true)
    }

    /// Cancels one earlier ``subscribe(_:)`` of the same prefix.
    public func unsubscribe(_ prefix: String = "") throws(ZMQError) {
        try changeSubscription(prefix, subscribe: false)
    }

    private func changeSubscription(_ prefix: String, subscribe: Bool) throws(ZMQError) {
        let operation = "\(subscribe ? "subscribe" : "unsubscribe")(\"\(prefix)\")"
        if type == .xsub {
            let message = Data([subscribe ? 1 : 0]) + Data(prefix.utf8)
            _ = try openHandle(operation)
            do {
                // Blocking: an XSUB never reaches a high-water mark for subscription messages.
                try send([message])
            } catch {
                throw ZMQError(code: error.code, operation: operation)
            }
            return
        }
        let option = subscribe ? ZMQ_SUBSCRIBE : ZMQ_UNSUBSCRIBE
        try setRaw(option, operation: operation, Data(prefix.utf8))
    }

    // MARK: Options

    /// Sets a socket option, e.g. `try socket.setOption(.linger, 0)`.
    public func setOption<Value>(_ option: SocketOption<Value>, _ value: Value) throws(ZMQError) {
        // Never echo a CURVE key: errors end up in logs.
        let shown = option.kind == .curveKey ? "<key>" : "\(value)"
        let operation = "setOption(\(option.name), \(shown))"
        // The casts cannot fail: SocketOption's only initialisers tie `kind` to `Value`.
        switch option.kind {
        case .int32:
            try setInteger(option.name, operation: operation, value as! Int32)
        case .int64:
            try setInteger(option.name, operation: operation, value as! Int64)
        case .bool:
            try setInteger(option.name, operation: operation, Int32((value as! Bool) ? 1 : 0))
        case .string, .curveKey:
            // Byte length without NUL: libzmq takes 40 bytes as a Z85 CURVE key, 32 as a binary
            // one.
            try setRaw(option.name, operation: operation, Data((value as! String).utf8))
        case .data:
            try setRaw(option.name, operation: operation, value as! Data)
        }
        if option.name == ZMQ_LINGER { lingerWasSet = true }
    }

    /// Reads a socket option, e.g. `try socket.getOption(.receiveHighWaterMark)`.
    public func getOption<Value>(_ option: SocketOption<Value>) throws(ZMQError) -> Value {
        let operation = "getOption(\(option.name))"
        switch option.kind {
        case .int32:
            return try getInteger(option.name, operation: operation, as: Int32.self) as! Value
        case .int64:
            return try getInteger(option.name, operation: operation, as: Int64.self) as! Value
        case .bool:
            return (try getInteger(option.name, operation: operation, as: Int32.self) != 0) as! Value
        case .string:
            return text(try getRaw(option.name, operation: operation, capacity: 1024)) as! Value
        case .curveKey:
            // A 41-byte buffer asks libzmq for the Z85 form (plus NUL) rather than 32 raw bytes.
            return text(try getRaw(option.name, operation: operation, capacity: 41)) as! Value
        case .data:
            return try getRaw(option.name, operation: operation, capacity: 256) as! Value
        }
    }

    /// Text from a NUL-terminated option buffer.
    private func text(_ bytes: Data) -> String {
        String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
    }

    private func setInteger<T: FixedWidthInteger>(_ name: Int32, operation: String, _ value: T)
        throws(ZMQError)
    {
        let handle = try openHandle(operation)
        var value = value
        if zmq_setsockopt(handle, name, &value, MemoryLayout<T>.size) != 0 {
            throw ZMQError.last(operation)
        }
    }

    private func setRaw(_ name: Int32, operation: String, _ value: Data) throws(ZMQError) {
        let handle = try openHandle(operation)
        let rc = value.withUnsafeBytes { bytes in
            zmq_setsockopt(handle, name, bytes.baseAddress, bytes.count)
        }
        if rc != 0 {
            throw ZMQError.last(operation)
        }
    }

    private func getInteger<T: FixedWidthInteger>(_ name: Int32, operation: String, as: T.Type)
        throws(ZMQError) -> T
    {
        let handle = try openHandle(operation)
        var value: T = 0
        var size = MemoryLayout<T>.size
        if zmq_getsockopt(handle, name, &value, &size) != 0 {
            throw ZMQError.last(operation)
        }
        return value
    }

    private func getRaw(_ name: Int32, operation: String, capacity: Int) throws(ZMQError) -> Data {
        let handle = try openHandle(operation)
        var buffer = Data(count: capacity)
        var size = capacity
        let rc = buffer.withUnsafeMutableBytes { bytes in
            zmq_getsockopt(handle, name, bytes.baseAddress, &size)
        }
        if rc != 0 {
            throw ZMQError.last(operation)
        }
        return buffer.prefix(size)
    }

    // MARK: Closing

    /// Closes the socket (idempotent); `deinit` closes too. Later calls throw `ENOTSOCK`.
    ///
    /// Sets linger 0 first unless ``SocketOption/linger`` was set explicitly, so queued
    /// messages are dropped rather than holding up ``Context/terminate()``. Stops a monitor
    /// first (``stopMonitor()``): the reaper tears the socket down later, and an event it tells
    /// then must not find the monitor's reader gone.
    public func close() {
        guard let handle else { return }
        stopMonitor()
        if !lingerWasSet {
            var zero: Int32 = 0
            zmq_setsockopt(handle, ZMQ_LINGER, &zero, MemoryLayout<Int32>.size)
        }
        zmq_close(handle)
        self.handle = nil
        // A poller that knew this socket asks again, and finds it closed, rather than waiting
        // on a descriptor number libzmq has given back.
        activity &+= 1
    }
}

/// Sockets must stay on one thread; this makes sending one across isolation a compile error.
@available(*, unavailable)
extension Socket: Sendable {}
