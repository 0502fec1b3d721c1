import Glibc

/// Whole writes to a file descriptor, without stdio's shared `FILE*` globals (which Swift 6
/// rightly calls unsafe to share) and without losing bytes to partial writes or EINTR.
public enum FileDescriptorOutput {
    /// Writes every byte of `text` to `fd`; returns false when the other end is gone (EPIPE) or
    /// another error stops it.
    @discardableResult
    public static func write(_ text: String, to fd: Int32) -> Bool {
        var text = text
        return text.withUTF8 { buffer in write(UnsafeRawBufferPointer(buffer), to: fd) }
    }

    /// Writes every byte of `bytes` to `fd`.
    @discardableResult
    public static func write(_ bytes: UnsafeRawBufferPointer, to fd: Int32) -> Bool {
        guard var pointer = bytes.baseAddress else { return true }
        var remaining = bytes.count
        while remaining > 0 {
            let written = Glibc.write(fd, pointer, remaining)
            if written < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return false
            }
            remaining -= written
            pointer += written
        }
        return true
    }

    /// Writes a line to standard error.
    public static func standardError(_ line: String) {
        write(line + "\n", to: 2)
    }

    /// Writes a line to standard output; false when stdout is closed (e.g. `| head` ended).
    @discardableResult
    public static func standardOutput(_ line: String) -> Bool {
        write(line + "\n", to: 1)
    }
}
