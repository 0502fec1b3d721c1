import Foundation

extension JSONParser {
    /// Keys compared one by one for a duplicate; past this many a set of them is kept, so a large
    /// object costs its length, not its square.
    static let linearKeyLimit = 16

    /// Parses one JSON object that fills `data`, as
    /// ``visitMembers(_:maximumNesting:_:)-(UnsafeRawBufferPointer,_,_)`` does; the texts it hands
    /// over are valid only during `visit`.
    public static func visitMembers(
        _ data: Data, maximumNesting: Int = defaultMaximumNesting,
        _ visit: (JSONText, JSONMemberValue) -> Void
    ) throws(Failure) -> Bool {
        let parsed = data.withUnsafeBytes { bytes in
            Result { () throws(Failure) -> Bool in
                try visitMembers(bytes, maximumNesting: maximumNesting, visit)
            }
        }
        return try parsed.get()
    }

    /// Parses one JSON object that fills `bytes`, as ``parse(_:maximumNesting:)-swift.type.method``
    /// would, handing each member to `visit` in order; false when `bytes` is JSON but not an
    /// object.
    ///
    /// For a decoder of one small object of known keys (a request): no dictionary hashes the keys
    /// and no `String` is made of a plain key or string value; the decoder compares each
    /// ``JSONText`` with its own, and makes a `String` of those it keeps. A plain text's bytes are
    /// the input's, valid as long as `bytes` is. A key given twice is refused
    /// (``Failure/duplicateKey(_:)``) before its second value is visited. The members are visited
    /// as they are read, so on a failure later in the input the decoder has seen some of them: it
    /// must throw away what it gathered when this throws.
    public static func visitMembers(
        _ bytes: UnsafeRawBufferPointer, maximumNesting: Int = defaultMaximumNesting,
        _ visit: (JSONText, JSONMemberValue) -> Void
    ) throws(Failure) -> Bool {
        var parser = JSONParser(bytes: bytes, maximumNesting: maximumNesting)
        parser.startDocument()
        guard parser.peek() == UInt8(ascii: "{") else {
            _ = try parser.value(depth: 0)
            try parser.endDocument()
            return false
        }
        try parser.visitObject(visit)
        try parser.endDocument()
        return true
    }

    /// The members of the top-level object at `position`, each key checked against those before.
    private mutating func visitObject(_ visit: (JSONText, JSONMemberValue) -> Void) throws(Failure) {
        // The first keys on the stack: a request's few cost no allocation to remember.
        let outcome = withUnsafeTemporaryAllocation(of: JSONText.self, capacity: Self.linearKeyLimit) {
            seen in
            var count = 0
            var keys: Set<String>?
            // One by one: `deinitialize(count:)` destroys through the type's value witnesses.
            defer { for index in 0..<count { _ = seen.baseAddress!.advanced(by: index).move() } }
            return Result { () throws(Failure) in
                try members(depth: 1) { key, value in
                    if keys == nil, count == Self.linearKeyLimit {
                        keys = Set(seen.prefix(count).map(\.string))
                    }
                    if keys != nil {
                        guard keys!.insert(key.string).inserted else { return false }
                    } else {
                        if seen.prefix(count).contains(where: { $0 == key }) { return false }
                        seen.baseAddress!.advanced(by: count).initialize(to: key)
                        count += 1
                    }
                    visit(key, value)
                    return true
                }
            }
        }
        try outcome.get()
    }
}
