import CZeroMQ
import Foundation

/// A message received without copying its frames: they stay in libzmq's buffers until the
/// message is sent on (``Socket/send(_:dontWait:)``) or dropped (`deinit` closes them). For a
/// forwarder that looks at a message before it passes it on, as `zmq_proxy` would, but lets
/// no 16 MB frame be copied twice on the way.
///
/// Confined to the thread of the sockets it goes between.
public final class HeldMessage {
    /// libzmq's frames; those sent on are left empty (libzmq resets a message it sent).
    private var frames: [UnsafeMutablePointer<zmq_msg_t>] = []

    /// Frames up to this size are copied when sent on; larger ones are handed over as they are.
    ///
    /// libzmq (4.3) receives a frame that fits its input batch (8 KiB by default) into a buffer
    /// shared with the frames read with it, and frees that buffer only when all of them are
    /// closed. Queued for a subscriber that never reads, a 100-byte event handed over as it is
    /// would keep 8 KiB of other bytes alive; copied, it keeps 100. A copy of 64 KiB costs
    /// next to nothing; larger frames always have an allocation of their own.
    public static let copiedFrameBytes = 64 * 1024

    /// Bytes of memory libzmq spends on a queued frame beyond its data: the message itself in
    /// the pipe's queue (64), and a larger frame's header and allocation. An upper bound.
    public static let overheadPerFrame = 128

    init() {}

    deinit {
        for frame in frames {
            zmq_msg_close(frame)
            frame.deallocate()
        }
    }

    /// How many frames.
    public var count: Int { frames.count }

    /// The data of all frames together, in bytes.
    public var byteCount: Int { frames.reduce(0) { $0 + zmq_msg_size($1) } }

    /// Calls `body` with each frame's bytes, in order; valid only inside `body`.
    public func withBuffers<Result>(_ body: ([UnsafeRawBufferPointer]) throws -> Result) rethrows -> Result {
        try body(
            frames.map { frame in
                let size = zmq_msg_size(frame)
                return UnsafeRawBufferPointer(start: size == 0 ? nil : zmq_msg_data(frame), count: size)
            })
    }

    fileprivate func append(_ frame: UnsafeMutablePointer<zmq_msg_t>) { frames.append(frame) }
    fileprivate var all: [UnsafeMutablePointer<zmq_msg_t>] { frames }
}

@available(*, unavailable) extension HeldMessage: Sendable {}

extension Socket {
    /// Receives one whole multipart message without copying it; nil on `EAGAIN` and `EINTR`,
    /// like ``receive(dontWait:)``.
    public func receiveHeld(dontWait: Bool = false) throws(ZMQError) -> HeldMessage? {
        let handle = try openHandle("receive")
        let message = HeldMessage()
        while true {
            let frame = UnsafeMutablePointer<zmq_msg_t>.allocate(capacity: 1)
            zmq_msg_init(frame)
            let flags: Int32 = message.count == 0 && dontWait ? ZMQ_DONTWAIT : 0
            if zmq_msg_recv(frame, handle, flags) < 0 {
                let code = zmq_errno()
                zmq_msg_close(frame)
                frame.deallocate()
                if message.count == 0 && code == EAGAIN { drainedAtActivity = activity }
                if message.count == 0 && (code == EAGAIN || code == EINTR) { return nil }
                if code == EINTR { continue }  // Mid-message: the rest is already here.
                throw ZMQError(code: code, operation: "receive(frame \(message.count + 1))")
            }
            message.append(frame)
            if zmq_msg_more(frame) == 0 { return message }
        }
    }

    /// Sends `message` on as one multipart message: frames up to
    /// ``HeldMessage/copiedFrameBytes`` copied, larger ones handed to libzmq as they are (the
    /// message keeps empty frames then). Returns false, having sent nothing, when the message
    /// could not be queued now, like ``send(_:dontWait:)``.
    @discardableResult
    public func send(_ message: HeldMessage, dontWait: Bool = false) throws(ZMQError) -> Bool {
        let handle = try openHandle("send")
        let frames = message.all
        for (index, frame) in frames.enumerated() {
            var flags: Int32 = dontWait ? ZMQ_DONTWAIT : 0
            if index < frames.count - 1 { flags |= ZMQ_SNDMORE }
            while true {
                let size = zmq_msg_size(frame)
                let rc =
                    size <= HeldMessage.copiedFrameBytes
                    ? zmq_send(handle, zmq_msg_data(frame), size, flags)
                    : zmq_msg_send(frame, handle, flags)
                if rc >= 0 { break }
                let code = zmq_errno()
                // As in send(_:dontWait:): only the first frame can meet a full queue, and a
                // signal mid-message only makes us retry.
                if index == 0 && (code == EAGAIN || code == EINTR) { return false }
                if code == EINTR { continue }
                throw ZMQError(code: code, operation: "send(frame \(index + 1) of \(frames.count))")
            }
        }
        return true
    }
}
