import Foundation

/// A container of the bytes ``JSONWriter/encode(_:capacity:as:_:)`` wrote: `Data` for callers
/// that hand it to Foundation, `[UInt8]` for the service's request path, where each `Data` of
/// a frame's size cost a second allocation and twice the instructions of an array to make, keep
/// and free (docs/BENCHMARKS.md, "Stop 58").
public protocol JSONOutput {
    /// A container holding a copy of `bytes`.
    init(copyingJSON bytes: UnsafeBufferPointer<UInt8>)
}

extension Data: JSONOutput {
    /// A copy of `bytes`.
    public init(copyingJSON bytes: UnsafeBufferPointer<UInt8>) {
        self.init(buffer: bytes)
    }
}

extension Array: JSONOutput where Element == UInt8 {
    /// A copy of `bytes`.
    public init(copyingJSON bytes: UnsafeBufferPointer<UInt8>) {
        self.init(bytes)
    }
}
