/// A load client that could not do its work: no reply in time, threads that did not finish.
public struct LoadGenerationError: Error, CustomStringConvertible, Sendable {
    /// What went wrong, for a failure line (`client 3: no reply within 5 s`).
    public let description: String

    /// An error saying `description`.
    public init(_ description: String) { self.description = description }
}
