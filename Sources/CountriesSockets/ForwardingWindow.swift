import CountriesCore
import ZeroMQ

/// The sizes of the last messages an event socket sent (the service's publisher, the relay's
/// forwarding), so that no run of `messages` of them in a row is over `bytes`: the most one
/// subscriber that stops reading can be left holding.
///
/// Why a run: an XPUB queues at most its high-water mark of messages per subscriber (libzmq
/// counts messages, not bytes), and the connection holds one more that it is writing. A
/// subscriber that stops reading keeps the run of messages it was sent after it stopped, in
/// order, and gets nothing more; every subscriber gets every message (``SubscriberLedger``'s
/// `wholeStream`), so that run is a run of what was sent. Each subscriber's queue is then at
/// most `bytes`, whatever is published. The price: a message that would make some run too
/// large is not sent, to anyone (logged), and subscribers see a gap in seq and catch up from
/// the service's `history`, as after any gap. Only large resets can meet it (see
/// docs/RELIABILITY.md, "Each subscriber's queue, in bytes").
public struct ForwardingWindow: Sendable {
    /// The length of a run.
    public let messages: Int
    /// The most bytes a run may hold.
    public let bytes: Int

    private var sizes: [Int]
    private var next = 0
    private var filled = 0
    /// The bytes of the last `messages` sent.
    public private(set) var total = 0

    /// A window of `messages` in a row holding at most `bytes`.
    public init(messages: Int, bytes: Int) {
        precondition(messages > 0, "a window of no messages")
        self.messages = messages
        self.bytes = bytes
        sizes = Array(repeating: 0, count: messages)
    }

    /// The window over what a subscriber of an XPUB with `highWaterMark` can hold (its queue
    /// and the message its connection is writing), of `bytes` but never less than the largest
    /// event the protocol has (``EventShape/maximumBodyBytes``), so that one always goes out.
    public static func forSubscribers(highWaterMark: Int32, bytes: Int) -> ForwardingWindow {
        ForwardingWindow(
            messages: Int(highWaterMark) + 1,
            bytes: max(bytes, weight(bytes: EventShape.maximumBodyBytes + 64, frames: 2)))
    }

    /// What a message of `frames` frames and `bytes` bytes in all weighs: its bytes and what
    /// libzmq spends on each frame besides (``HeldMessage/overheadPerFrame``).
    public static func weight(bytes: Int, frames: Int) -> Int {
        bytes + frames * HeldMessage.overheadPerFrame
    }

    /// Whether a message of `size` bytes may be sent now; if so, it is counted as sent.
    public mutating func admit(_ size: Int) -> Bool {
        // The run that would end with this message: it, and the messages - 1 before it.
        let leaving = filled == messages ? sizes[next] : 0
        guard total - leaving + size <= bytes else { return false }
        total += size - leaving
        sizes[next] = size
        next = next + 1 == messages ? 0 : next + 1
        filled = min(filled + 1, messages)
        return true
    }
}
