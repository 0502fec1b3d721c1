import Foundation
@preconcurrency import Glibc
import HTTPServer

/// What the HTTP server's threads hand the subscriber's loop thread: new event streams and
/// toggles, queued under a lock, with a pipe the loop polls so it wakes at once.
final class WebInbox: @unchecked Sendable {
    // @unchecked: `items` is only touched under `lock`; the pipe's ends are set in init.

    /// One thing for the loop.
    enum Item {
        /// A page opened its event stream.
        case opened(EventStream)
        /// A page asked to toggle the row at this index.
        case toggle(index: Int, answer: WebToggleAnswer)
    }

    private let lock = NSLock()
    private var items: [Item] = []
    /// The read end, for the loop's poll.
    let fileDescriptor: Int32
    private let writeEnd: Int32

    init() throws {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            throw WebViewError(message: "cannot make a pipe: \(String(cString: strerror(errno)))")
        }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        fileDescriptor = ends[0]
        writeEnd = ends[1]
    }

    deinit {
        close(fileDescriptor)
        close(writeEnd)
    }

    /// Queues an item and wakes the loop.
    func post(_ item: Item) {
        lock.lock()
        items.append(item)
        lock.unlock()
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)  // a full pipe already wakes the loop
    }

    /// Everything queued, oldest first.
    func drain() -> [Item] {
        var scratch = [UInt8](repeating: 0, count: 256)
        while read(fileDescriptor, &scratch, scratch.count) > 0 {}
        lock.lock()
        defer { lock.unlock() }
        let taken = items
        items = []
        return taken
    }
}

/// The answer to one page's toggle, which its HTTP thread waits for (made by the web view; public
/// only because it tags the view's requests).
public final class WebToggleAnswer: @unchecked Sendable {
    // @unchecked: `result` is only touched under `condition`'s lock.
    private let condition = NSCondition()
    private var result: (status: Int, text: String)?
    /// The row asked for, once known (for the failure text).
    var name = ""

    /// Gives the answer (an HTTP status and the status line); the first one counts.
    public func finish(status: Int, text: String) {
        condition.lock()
        if result == nil { result = (status, text) }
        condition.broadcast()
        condition.unlock()
    }

    /// Waits at most `seconds` for the answer.
    func wait(seconds: Double) -> (status: Int, text: String)? {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: seconds)
        while result == nil, condition.wait(until: deadline) {}
        return result
    }
}

/// Why `countries web` could not run.
public struct WebViewError: Error, Sendable {
    /// What went wrong and what to do.
    public var message: String
}
