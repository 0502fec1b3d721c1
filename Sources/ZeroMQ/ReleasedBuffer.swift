import CZeroMQ
import Foundation
import Synchronization

/// What a sender learns when libzmq lets go of a frame sent with
/// ``Socket/send(_:then:dontWait:observer:)``: written to the connection, dropped, or not sent.
public protocol ReleaseObserver: AnyObject, Sendable {
    /// libzmq no longer holds a frame of `bytes` bytes. Called on one of libzmq's I/O threads
    /// (or on the sender's, for a frame not sent).
    func released(_ bytes: Int)
}

/// A frame's bytes handed to libzmq without a further copy, in one allocation with whom to
/// tell: libzmq calls ``free`` when it is done with them (from an I/O thread), which tells the
/// observer and deallocates the lot. Passed to libzmq retained, as the free function's hint.
///
/// One allocation per reply, not three (the bytes, their owner and a closure's context): each
/// is freed on libzmq's I/O thread, where glibc takes the allocating thread's arena lock for
/// it (docs/BENCHMARKS.md, "Stop 49").
final class ReleasedBuffer: ManagedBuffer<ReleasedBuffer.Header, UInt8> {
    struct Header {
        let observer: any ReleaseObserver
        let count: Int
    }

    /// A buffer holding a copy of `bytes`, that tells `observer` when released.
    static func copying(_ bytes: UnsafeRawBufferPointer, observer: any ReleaseObserver) -> ReleasedBuffer {
        let buffer = unsafeDowncast(
            create(minimumCapacity: max(1, bytes.count)) { _ in Header(observer: observer, count: bytes.count)
            },
            to: ReleasedBuffer.self)
        buffer.withUnsafeMutablePointerToElements { elements in
            if let base = bytes.baseAddress {
                elements.initialize(from: base.assumingMemoryBound(to: UInt8.self), count: bytes.count)
            }
        }
        handOff.add(1, ordering: .acquiringAndReleasing)
        return buffer
    }

    /// The bytes, valid while the buffer lives.
    var pointer: UnsafeMutableRawPointer {
        withUnsafeMutablePointerToElements { UnsafeMutableRawPointer($0) }
    }

    /// What makes the hand-off to libzmq's thread visible to ThreadSanitizer: libzmq passes the
    /// message through its own lock-free queue, which the sanitizer cannot see, so the sender
    /// adds to this count once the buffer is made and the free function adds to it before
    /// reading (each a release and an acquire). An atomic, not a lock: the lock and its
    /// exclusivity check cost about 270 instructions per reply and event.
    private static let handOff = Atomic<UInt64>(0)

    /// Tells the observer; the bytes go with the buffer.
    func run() {
        header.observer.released(header.count)
    }

    /// libzmq's free function: `hint` is the retained buffer.
    static let free: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = {
        _, hint in
        guard let hint else { return }
        handOff.add(1, ordering: .acquiringAndReleasing)
        Unmanaged<ReleasedBuffer>.fromOpaque(hint).takeRetainedValue().run()
    }
}
