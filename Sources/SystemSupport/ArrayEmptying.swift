extension Array {
    /// Removes every element, as `removeAll(keepingCapacity:)` does, with each element destroyed
    /// by code specialized for its type. The standard library's `removeAll` destroys them through
    /// the type's value witnesses (`swift_arrayDestroy`), which for a struct of a dozen
    /// references costs about twice the specialized destroy; on the request path that was a
    /// twentieth of a toggle (docs/BENCHMARKS.md, "Stop 60"). For arrays of a few elements:
    /// it destroys one element at a time.
    @inlinable
    public mutating func removeEach(keepingCapacity keepCapacity: Bool) {
        guard keepCapacity else {
            self = []
            return
        }
        while popLast() != nil {}
    }
}
