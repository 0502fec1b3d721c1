#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// How glibc's malloc treats large blocks (`mallopt(M_MMAP_THRESHOLD)`), for a process that
/// takes in and lets go of blocks of megabytes, such as a relay of large events.
///
/// By default glibc raises its mmap threshold to the largest block freed (up to 32 MiB), so
/// that later blocks of that size come from its heap, which keeps up to twice the threshold
/// after they are freed: resident memory that no live block needs.
public enum LargeBlocks {
    /// Has every block of `bytes` or more mapped on its own and given back when freed (fixes
    /// the threshold, which also stops it moving). Whether glibc took it; elsewhere, false.
    @discardableResult
    public static func mapEach(from bytes: Int32) -> Bool {
        #if canImport(Glibc)
            // <malloc.h> is not in Swift's Glibc module: looked up by name.
            typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return false }
            let mmapThreshold: Int32 = -3  // M_MMAP_THRESHOLD
            return unsafeBitCast(symbol, to: Mallopt.self)(mmapThreshold, bytes) == 1
        #else
            return false
        #endif
    }
}
