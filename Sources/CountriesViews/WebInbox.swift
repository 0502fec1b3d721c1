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
        /// A page asked to toggle the country of this name (the row the user saw).
        case toggle(name: String, answer: WebToggleAnswer)
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

/// The answer to one page's toggle: its request waits, holding no thread, until the loop
/// finishes it (made by the web view; public only because it tags the view's requests).
public final class WebToggleAnswer: Sendable {
    private let responder: HTTPResponder
    /// The country asked for (for the failure text).
    let name: String

    init(name: String, responder: HTTPResponder) {
        self.name = name
        self.responder = responder
    }

    /// Gives the answer (an HTTP status and the status line); the first one counts.
    public func finish(status: Int, text: String) {
        responder.respond(WebView.json(status, text))
    }
}

/// Why `countries web` could not run.
public struct WebViewError: Error, Sendable {
    /// What went wrong and what to do.
    public var message: String
}
