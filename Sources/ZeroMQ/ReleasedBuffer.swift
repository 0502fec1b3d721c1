import CZeroMQ
import Foundation

/// A frame's bytes handed to libzmq without a further copy: libzmq calls ``free`` when it is
/// done with them (from an I/O thread), which deallocates them and calls the sender's
/// `released`. Passed to libzmq retained, as the free function's hint.
final class ReleasedBuffer {
    let pointer: UnsafeMutableRawPointer
    private let released: @Sendable () -> Void

    init(copying data: Data, released: @escaping @Sendable () -> Void) {
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: max(1, data.count), alignment: 1)
        data.withUnsafeBytes { bytes in
            if let base = bytes.baseAddress { buffer.copyMemory(from: base, byteCount: bytes.count) }
        }
        pointer = buffer
        self.released = released
    }

    /// Gives the bytes back and tells the sender.
    func run() {
        pointer.deallocate()
        released()
    }

    /// libzmq's free function: `hint` is the retained buffer.
    static let free: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = {
        _, hint in
        guard let hint else { return }
        Unmanaged<ReleasedBuffer>.fromOpaque(hint).takeRetainedValue().run()
    }
}
