import CZeroMQ
import Foundation

/// Receiving messages: whole, as `Data` frames, or frame by frame into what the caller keeps.
extension Socket {
    /// Receives one whole multipart message.
    ///
    /// Returns nil, instead of throwing, on `EAGAIN` (`dontWait`, or the receive timeout
    /// passed) and on `EINTR`.
    public func receive(dontWait: Bool = false) throws(ZMQError) -> [Data]? {
        try receiveMessage(dontWait: dontWait, properties: [], sourceDescriptor: false)?.frames
    }

    /// Receives one whole multipart message with the named metadata properties of its frames
    /// (`zmq_msg_gets`), e.g. `"User-Id"` (set by a ZAP handler) or `"Peer-Address"`, and,
    /// unless `sourceDescriptor` is false, the descriptor of the connection it came over
    /// (``ReceivedMessage/sourceDescriptor``; asking it costs about 250 instructions a frame).
    /// Returns nil on EAGAIN and EINTR, like ``receive(dontWait:)``.
    public func receiveMessage(
        dontWait: Bool = false, properties names: [String], sourceDescriptor wantsDescriptor: Bool = true
    ) throws(ZMQError) -> ReceivedMessage? {
        var frames: [Data] = []
        guard
            let metadata = try receiveFrames(
                dontWait: dontWait, properties: names, sourceDescriptor: wantsDescriptor,
                { bytes, more in
                    if frames.isEmpty { frames.reserveCapacity(more ? 4 : 1) }
                    frames.append(bytes.isEmpty ? Data() : Data(bytes))
                })
        else { return nil }
        return ReceivedMessage(
            frames: frames, properties: metadata.properties, sourceDescriptor: metadata.sourceDescriptor)
    }

    /// Receives one whole multipart message as
    /// ``receiveMessage(dontWait:properties:sourceDescriptor:)`` does, handing each frame's bytes
    /// to `frame` in order, with whether more frames follow; the bytes are valid only during that
    /// call: the caller keeps each in what suits it (a service's request, its routing id as `Data`
    /// and its body as an array, docs/BENCHMARKS.md, "Stop 58"). Returns nil, having called `frame`
    /// for nothing, on EAGAIN and EINTR; when it throws, the frames handed over are not a whole
    /// message.
    public func receiveFrames(
        dontWait: Bool = false, properties names: [String], sourceDescriptor wantsDescriptor: Bool = true,
        _ frame: (_ bytes: UnsafeRawBufferPointer, _ more: Bool) -> Void
    ) throws(ZMQError) -> MessageMetadata? {
        let handle = try openHandle("receive")
        var metadata = MessageMetadata()
        var received = 0
        var message = zmq_msg_t()
        while true {
            zmq_msg_init(&message)
            // libzmq delivers multipart messages atomically, so only the first frame can make us
            // wait.
            let flags: Int32 = received == 0 && dontWait ? ZMQ_DONTWAIT : 0
            if zmq_msg_recv(&message, handle, flags) < 0 {
                let code = zmq_errno()
                zmq_msg_close(&message)
                // Nothing queued is the common case of a non-blocking read: no error value made.
                if received == 0 && code == EAGAIN {
                    drainedAtActivity = activity
                    return nil
                }
                if received == 0 && code == EINTR { return nil }
                if code == EINTR { continue }  // Mid-message: the rest is already here.
                throw ZMQError(code: code, operation: "receive(frame \(received + 1))")
            }
            // A ROUTER's routing-id frame is made locally and carries no metadata; the frames
            // that came over the wire do, so take each property from the first that has it.
            for name in names where metadata.properties[name] == nil {
                if let value = zmq_msg_gets(&message, name) {
                    metadata.properties[name] = String(cString: value)
                }
            }
            if wantsDescriptor && metadata.sourceDescriptor == nil {
                let descriptor = zmq_msg_get(&message, ZMQ_SRCFD)
                if descriptor >= 0 { metadata.sourceDescriptor = descriptor }
            }
            let size = zmq_msg_size(&message)
            let more = zmq_msg_more(&message) != 0
            frame(UnsafeRawBufferPointer(start: size == 0 ? nil : zmq_msg_data(&message), count: size), more)
            received += 1
            zmq_msg_close(&message)
            if !more { return metadata }
        }
    }
}
