import Testing

@testable import SystemSupport

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// `LargeBlocks.mapEach(from:)`: once told, glibc maps every block of that size or more on its
/// own, even a block the size of one just freed. By default glibc raises its threshold to the
/// largest mapped block freed, and the next such block comes from its heap, which keeps the
/// memory resident after it is freed (the service's and the relay's RSS steps).
@Suite struct LargeBlocksTests {
    /// Whether malloc is glibc's: under AddressSanitizer or ThreadSanitizer it is theirs, with
    /// chunks of another layout and a `mallopt` that does nothing.
    static var mallocIsGlibcs: Bool {
        let process = UnsafeMutableRawPointer(bitPattern: 0)
        return dlsym(process, "__asan_init") == nil && dlsym(process, "__tsan_init") == nil
    }

    /// Whether glibc mapped the block at `pointer` on its own: its chunk header, the word before
    /// the block, has the IS_MMAPPED bit (2) set.
    private func isMapped(_ pointer: UnsafeMutableRawPointer) -> Bool {
        (pointer - MemoryLayout<UInt>.size).load(as: UInt.self) & 2 != 0
    }

    @Test(.enabled(if: mallocIsGlibcs, "a sanitizer's malloc is not glibc's"))
    func aBlockTheSizeOfOneFreedIsStillMapped() throws {
        #expect(LargeBlocks.mapEach(from: 1 << 20))
        let size = 3 << 20
        let first = try #require(malloc(size))
        #expect(isMapped(first))
        free(first)
        // Without a fixed threshold, this one would come from the heap (the threshold moved to
        // the size just freed).
        let second = try #require(malloc(size))
        defer { free(second) }
        #expect(isMapped(second))
        let small = try #require(malloc(1 << 10))
        defer { free(small) }
        #expect(!isMapped(small), "a small block comes from the heap")
    }
}
