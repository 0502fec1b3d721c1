import Foundation
import TestSupport
import Testing
import ZeroMQ

/// How long a test waits for something that should happen promptly, in milliseconds; bounds
/// every wait, and grows with ``testSlowdown`` (a sanitized run is several times slower).
let patience = Int32(2000 * testSlowdown)

/// UTF-8 bytes of `text`, for building frames.
func frame(_ text: String) -> Data {
    Data(text.utf8)
}

/// Frames as text, so expectations read naturally.
func texts(_ frames: [Data]?) -> [String]? {
    frames?.map { String(decoding: $0, as: UTF8.self) }
}

extension Context {
    /// A socket whose blocking calls give up after `patience`, so no test can hang on it.
    func testSocket(_ type: SocketType, timeout: Int32 = patience) throws -> Socket {
        let socket = try makeSocket(type)
        try socket.setOption(.receiveTimeout, timeout)
        try socket.setOption(.sendTimeout, timeout)
        return socket
    }

    /// A `server` test socket bound to a fresh endpoint over `transport` and a `client` test
    /// socket connected to it; `configure` runs on both before (options that must be set before
    /// a connection, such as high-water marks).
    func connectedPair(
        _ server: SocketType, _ client: SocketType, over transport: Transport, in directory: ScratchDirectory,
        configure: (_ server: Socket, _ client: Socket) throws -> Void = { _, _ in }
    ) throws -> (server: Socket, client: Socket) {
        let bound = try testSocket(server)
        let connected = try testSocket(client)
        try configure(bound, connected)
        try bound.bind(uniqueEndpoint(transport, in: directory))
        try connected.connect(try bound.lastEndpoint)
        return (bound, connected)
    }
}

/// The transports the round-trip tests run over.
enum Transport: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case inproc, ipc, tcp

    var testDescription: String { rawValue }
}

/// An endpoint to bind for `transport` that no other test uses.
func uniqueEndpoint(_ transport: Transport, in directory: ScratchDirectory) -> String {
    switch transport {
    case .inproc: "inproc://test-\(UUID().uuidString)"
    case .ipc: "ipc://\(directory.path)/\(UUID().uuidString.prefix(8)).sock"
    case .tcp: "tcp://127.0.0.1:*"
    }
}

/// Runs `body` on a new thread (sockets belong to the thread that uses them) and returns a
/// semaphore signalled when it finishes, so callers can wait with a deadline.
func startThread(_ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        body()
        done.signal()
    }
    thread.start()
    return done
}

/// Waits for `semaphore` at most `seconds` times ``testSlowdown``; true if it was signalled.
func wait(_ semaphore: DispatchSemaphore, seconds: Double = 5) -> Bool {
    semaphore.wait(timeout: .now() + seconds * Double(testSlowdown)) == .success
}

/// Runs `body` on a thread of its own while this thread sends it ``InterruptingSignal``
/// `signals` times, 200 µs apart, then sets `stop`; `body` runs until `stop` is
/// true or it throws. What it threw, and how many signals were sent, once it has ended.
func underSignals(
    _ signals: Int = 5_000, _ body: @escaping @Sendable (_ stop: Box<Bool>) throws -> Void
) throws -> (error: String?, sent: Int) {
    try #require(InterruptingSignal.isInstalled)
    let target = Box<pthread_t?>(nil)
    let error = Box<String?>(nil)
    let stop = Box(false)
    let done = startThread {
        // Threads inherit a signal mask: make sure this one takes SIGUSR1.
        var unblock = sigset_t()
        sigemptyset(&unblock)
        sigaddset(&unblock, InterruptingSignal.number)
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
        target.value = pthread_self()
        do { try body(stop) } catch let thrown { error.value = "\(thrown)" }
    }
    var thread: pthread_t?
    for _ in 0..<1000 where thread == nil {
        thread = target.value
        usleep(1000)
    }
    let signalled = try #require(thread)
    var sent = 0
    while sent < signals, error.value == nil {
        InterruptingSignal.send(to: signalled)
        sent += 1
        usleep(200)
    }
    stop.value = true
    #expect(wait(done, seconds: 10))
    return (error.value, sent)
}
