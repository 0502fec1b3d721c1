extension Array {
    /// Removes every element, as `removeAll(keepingCapacity:)` does, with each element destroyed
    /// by code specialized for its type. The standard library's `removeAll` destroys them through
    /// the type's value witnesses (`swift_arrayDestroy`), which for a struct of a dozen
    /// references costs two to three times the specialized destroy: on the request path, about
    /// 800 of a toggle's 36,000 instructions (docs/BENCHMARKS.md, "Stop 60"). It pops the
    /// elements one at a time, each with a check that the storage is unshared: meant for the
    /// few elements of a batch.
    @inlinable
    public mutating func removeEach(keepingCapacity keepCapacity: Bool) {
        guard keepCapacity else {
            self = []
            return
        }
        while popLast() != nil {}
    }
}
