import Foundation
@preconcurrency import Glibc
import HTTPServer
import SystemSupport

/// What the HTTP server's threads hand the subscriber's loop thread: new event streams and
/// toggles, in a ``WakeupQueue`` the loop polls so it wakes at once.
final class WebInbox: Sendable {

    /// One thing for the loop.
    enum Item {
        /// A page opened its event stream.
        case opened(EventStream)
        /// A page asked to toggle the row at this index.
        case toggle(index: Int, answer: WebToggleAnswer)
    }

    private let queue: WakeupQueue<Item>
    /// The read end, for the loop's poll.
    var fileDescriptor: Int32 { queue.fileDescriptor }

    init() throws {
        do {
            queue = try WakeupQueue()
        } catch {
            throw WebViewError(message: "\(error)")
        }
    }

    /// Queues an item and wakes the loop.
    func post(_ item: Item) { queue.post([item]) }

    /// Everything queued, oldest first.
    func drain() -> [Item] { queue.drain() }
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
