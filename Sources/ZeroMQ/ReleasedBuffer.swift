import CZeroMQ
import Foundation
import SystemSupport

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
        Self.handOff.withLock { $0 &+= 1 }
    }

    /// What makes the hand-off to libzmq's thread visible to ThreadSanitizer: libzmq passes the
    /// message through its own lock-free queue, which the sanitizer cannot see, so the sender
    /// takes this lock once the buffer is made and the free function takes it before reading.
    /// (It counts hand-offs: a lock around an empty value was itself reported.)
    private static let handOff = Locked<UInt64>(0)

    /// Gives the bytes back and tells the sender.
    func run() {
        pointer.deallocate()
        released()
    }

    /// libzmq's free function: `hint` is the retained buffer.
    static let free: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = {
        _, hint in
        guard let hint else { return }
        handOff.withLock { $0 &+= 1 }
        Unmanaged<ReleasedBuffer>.fromOpaque(hint).takeRetainedValue().run()
    }
}
