@preconcurrency import Glibc

/// Unix signals turned into bytes on a pipe, so a `zmq_poll` loop can wait for them beside its
/// sockets and stdin (the self-pipe trick).
///
/// The handler only calls `write(2)`, which is async-signal-safe; everything else happens in the
/// loop that reads ``fileDescriptor``. One pipe serves the whole process.
public final class SignalPipe {
    /// The read end: readable when a watched signal has arrived.
    public let fileDescriptor: Int32
    private let writeEnd: Int32

    /// Creates the pipe and routes `signals` to it (e.g. `[SIGINT, SIGTERM]`).
    ///
    /// Only one `SignalPipe` should exist at a time: signal handlers are process-wide.
    public init(signals: [Int32]) throws(SignalPipeError) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw SignalPipeError(errno: errno) }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        fileDescriptor = fds[0]
        writeEnd = fds[1]
        signalPipeWriteEnd = writeEnd
        for signal in signals {
            watch(signal)
        }
    }

    deinit {
        signalPipeWriteEnd = -1
        close(fileDescriptor)
        close(writeEnd)
    }

    /// Routes one more signal to the pipe.
    public func watch(_ signal: Int32) {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { number in
            var byte = UInt8(truncatingIfNeeded: number)
            let saved = errno
            _ = write(signalPipeWriteEnd, &byte, 1)
            errno = saved
        }
        sigemptyset(&action.sa_mask)
        // Restart slow system calls so a signal does not turn into spurious EINTR failures
        // elsewhere; zmq_poll still returns EINTR, which the poller reports as a value.
        action.sa_flags = SA_RESTART
        sigaction(signal, &action, nil)
        // A blocked signal would never arrive: a parent may hand down a mask that blocks it
        // (Foundation's Process and some supervisors do), and this thread's mask is what threads
        // started later inherit.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, signal)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    /// Puts back the default action for a signal.
    public static func restoreDefault(_ signal: Int32) {
        Glibc.signal(signal, SIG_DFL)
    }

    /// Ignores a signal (e.g. `SIGPIPE`, so a closed pipe is an error from `write`, not death).
    public static func ignore(_ signal: Int32) {
        Glibc.signal(signal, SIG_IGN)
    }

    /// Waits up to `timeout` for a signal, without reading it (``drain()`` still returns it);
    /// returns whether one is pending.
    public func arrives(within timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            var item = pollfd(fd: fileDescriptor, events: Int16(POLLIN), revents: 0)
            let left = max(.zero, deadline - ContinuousClock.now)
            let milliseconds = Int32(clamping: left.millisecondsRoundedUp)
            let ready = poll(&item, 1, milliseconds)
            if ready > 0 { return true }
            // A signal interrupts the wait after its handler has written: look again at once.
            if ready < 0 && errno == EINTR { continue }
            if ContinuousClock.now >= deadline || ready < 0 { return false }
        }
    }

    /// Reads every pending signal number without blocking, oldest first.
    public func drain() -> [Int32] {
        var signals: [Int32] = []
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            let count = read(fileDescriptor, &buffer, buffer.count)
            guard count > 0 else { break }
            signals.append(contentsOf: buffer[..<count].map { Int32($0) })
        }
        return signals
    }
}

@available(*, unavailable) extension SignalPipe: Sendable {}

/// The pipe could not be made.
public struct SignalPipeError: Error, CustomStringConvertible {
    /// The `errno` of the failed call.
    public var errno: Int32
    /// What failed, for a person.
    public var description: String { "could not create the signal pipe: \(String(cString: strerror(errno)))" }
}

// Signal handlers cannot capture context; the one write end lives here. Written only while no
// handler runs concurrently in practice (set up before signals are routed, cleared on deinit).
nonisolated(unsafe) private var signalPipeWriteEnd: Int32 = -1
