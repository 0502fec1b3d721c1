#if canImport(Glibc)
    @preconcurrency import Glibc
#else
    import Darwin
#endif

/// A pipe one thread writes a byte to so that another, waiting in `poll` or `zmq_poll` on
/// ``fileDescriptor``, wakes up: how a helper thread hands work to a socket loop without a
/// socket of its own. Both ends are non-blocking: a full pipe already means "wake up".
public final class WakeupPipe: Sendable {
    /// The end to poll for reading.
    public let fileDescriptor: Int32
    private let writeEnd: Int32

    /// Creates the pipe.
    public init() throws(SignalPipeError) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw SignalPipeError(errno: errno) }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        fileDescriptor = fds[0]
        writeEnd = fds[1]
    }

    deinit {
        close(fileDescriptor)
        close(writeEnd)
    }

    /// Wakes the reader (from any thread).
    public func wake() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Empties the pipe (on the reader's thread), so the next poll waits again.
    public func drain() {
        var buffer = [UInt8](repeating: 0, count: 64)
        // A read that did not fill the buffer took everything: no second call to learn that
        // the pipe is empty (one system call per wake-up, not two).
        while read(fileDescriptor, &buffer, buffer.count) == buffer.count {}
    }
}
