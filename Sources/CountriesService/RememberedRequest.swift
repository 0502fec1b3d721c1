import Foundation

/// A change's request id as the store remembers it: what the change asked and the reply it got,
/// so that a retry gets the same reply and the id reused for another change gets `conflict`.
struct RememberedRequest: Equatable, Sendable {
    /// The client's request id.
    var id: String
    /// What the change asked (``CountriesCore/Change/canonicalForm``); nil for ids remembered
    /// by schema 1, before it was kept: any request under such an id gets its reply.
    var request: Data?
    /// The reply first sent, byte for byte.
    var reply: Data
}
