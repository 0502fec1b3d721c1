import CountriesClient
import CountriesCore
import Foundation

/// The bytes of one toggle request as `CommandClient` sends it: op, index and a fresh request id.
public func toggleRequest(index: Int) -> Data {
    Request(id: RequestID.make(), command: .change(.toggle(.index(index)))).encoded()
}

/// A toggle of the client's own row (index modulo the 8 rows of the default seed).
public func serviceToggleBody(_ index: Int) -> Data { toggleRequest(index: index % 8) }
