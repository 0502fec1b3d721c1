/// The sizes of the last messages a relay forwarded, so that no run of `messages` of them in a
/// row is over `bytes`: the most one subscriber that stops reading can be left holding.
///
/// Why a run: the relay's XPUB queues at most its high-water mark of messages per subscriber
/// (libzmq counts messages, not bytes), and the connection holds one more that it is writing.
/// A subscriber that stops reading keeps the run of messages it was sent after it stopped, in
/// order, and gets nothing more; every subscriber gets every message (``SubscriberLedger``'s
/// `wholeStream`), so that run is a run of what was forwarded. Each subscriber's queue is then
/// at most `bytes`, whatever the publisher sends. The price: a message that would make some run
/// too large is not forwarded, to anyone (logged), and subscribers see a gap in seq and catch up
/// from the service, as after any gap. Only large resets can meet it (see docs/RELIABILITY.md).
struct ForwardingWindow {
    /// The length of a run.
    let messages: Int
    /// The most bytes a run may hold.
    let bytes: Int

    private var sizes: [Int]
    private var next = 0
    private var filled = 0
    private(set) var total = 0

    init(messages: Int, bytes: Int) {
        precondition(messages > 0, "a window of no messages")
        self.messages = messages
        self.bytes = bytes
        sizes = Array(repeating: 0, count: messages)
    }

    /// Whether a message of `size` bytes may be forwarded now; if so, it is counted as sent.
    mutating func admit(_ size: Int) -> Bool {
        // The run that would end with this message: it, and the messages - 1 before it.
        let leaving = filled == messages ? sizes[next] : 0
        guard total - leaving + size <= bytes else { return false }
        total += size - leaving
        sizes[next] = size
        next = (next + 1) % messages
        filled = min(filled + 1, messages)
        return true
    }
}
