/// Why ``LoopbackPort/free()`` found no port: what failed, in words.
public struct LoopbackPortError: Error, CustomStringConvertible, Sendable {
    public let description: String

    init(_ description: String) { self.description = description }
}
