import CZeroMQ
import Foundation
import Synchronization

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
        Self.handOff.add(1, ordering: .acquiringAndReleasing)
    }

    /// What makes the hand-off to libzmq's thread visible to ThreadSanitizer: libzmq passes the
    /// message through its own lock-free queue, which the sanitizer cannot see, so the sender
    /// adds to this count once the buffer is made and the free function adds to it before
    /// reading (each a release and an acquire). An atomic, not a lock: the lock and its
    /// exclusivity check cost about 270 instructions per reply and event.
    private static let handOff = Atomic<UInt64>(0)

    /// Gives the bytes back and tells the sender.
    func run() {
        pointer.deallocate()
        released()
    }

    /// libzmq's free function: `hint` is the retained buffer.
    static let free: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = {
        _, hint in
        guard let hint else { return }
        handOff.add(1, ordering: .acquiringAndReleasing)
        Unmanaged<ReleasedBuffer>.fromOpaque(hint).takeRetainedValue().run()
    }
}
