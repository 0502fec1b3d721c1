import Foundation

extension JSONParser {
    /// A ``Failure`` and where in the input it was found (``parseLocating(_:maximumNesting:)``).
    public struct LocatedFailure: Error, Equatable, Sendable {
        /// What is wrong.
        public let failure: Failure
        /// The byte offset of what is wrong (the input's length when it ended too soon): the
        /// unexpected byte, the start of a bad string or of a key given twice, the array or object
        /// one level too deep.
        public let offset: Int
        /// The 1-based line of `offset`; a line ends at LF, CR LF or CR.
        public let line: Int
        /// The 1-based column of `offset` in its line, in Unicode scalars (a byte-order mark
        /// does not count), as editors show it.
        public let column: Int
        /// Whether the input ended before the value did (an unclosed array or string).
        public let atEnd: Bool

        /// The failure at `offset` in `bytes`, with its line and column.
        init(_ failure: Failure, at offset: Int, in bytes: UnsafeRawBufferPointer) {
            self.failure = failure
            self.offset = offset
            atEnd = offset >= bytes.count
            var line = 1
            var lineStart = 0
            var index = 0
            let end = min(offset, bytes.count)
            if end >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { lineStart = 3 }
            while index < end {
                let byte = bytes[index]
                index += 1
                if byte == 0x0A || (byte == 0x0D && (index == bytes.count || bytes[index] != 0x0A)) {
                    line += 1
                    lineStart = index
                }
            }
            self.line = line
            // One column per scalar: count the bytes that start one (not UTF-8 continuations).
            column = 1 + (lineStart..<end).count { bytes[$0] & 0xC0 != 0x80 }
        }
    }
}
