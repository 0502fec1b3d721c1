/// One client's connection: a round trip per call. Made and used on one thread.
public protocol RoundTripper {
    /// One request and its reply; throws when the reply does not come.
    mutating func roundTrip() throws
}
