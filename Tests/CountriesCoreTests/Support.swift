import CountriesCore
import Foundation
import TestSupport
import Testing

/// The standard seed as a state at `seq`.
func standardState(seq: UInt64 = 0) -> CountriesState {
    CountriesState(countries: SeedList.standard, seq: seq)
}

/// The standard seed's names, in order.
let standardNames = [
    "United States", "United Kingdom", "France", "Italy", "Spain", "Russia", "Moldova", "Romania",
]

/// The standard seed with the rows at `visited` visited (and only those).
func standardCountries(visited: Set<Int> = [0]) -> [Country] {
    standardNames.enumerated().map { Country(name: $0.element, visited: visited.contains($0.offset)) }
}

/// Applies a change that must be refused; checks that the state is exactly as it was and
/// returns the error.
@discardableResult
func refusal(
    _ change: Change, on state: CountriesState, seed: [Country] = SeedList.standard,
    sourceLocation: SourceLocation = #_sourceLocation
) -> CountriesError? {
    var copy = state
    do {
        let result = try copy.apply(change, seed: seed)
        Issue.record("expected a refusal, got \(result)", sourceLocation: sourceLocation)
        return nil
    } catch {
        #expect(
            copy == state, "a refused change must leave the state as it was", sourceLocation: sourceLocation)
        return error
    }
}

/// Decodes a request from JSON text.
func decodeRequest(_ json: String) throws(CountriesError) -> Request {
    try Request.decode(Data(json.utf8))
}

/// The error a request body is refused with, or nil (and an issue) when it is accepted.
func requestError(_ body: Data, sourceLocation: SourceLocation = #_sourceLocation) -> CountriesError? {
    do {
        let request = try Request.decode(body)
        Issue.record("expected a refusal, got \(request)", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}

/// A frame as UTF-8 text.
func text(_ data: Data) -> String {
    String(decoding: data, as: UTF8.self)
}

/// A frame parsed with JSONSerialization, as a script in another language would see it.
func jsonObject(_ data: Data, sourceLocation: SourceLocation = #_sourceLocation) -> [String: Any] {
    guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
        Issue.record("not a JSON object: \(text(data))", sourceLocation: sourceLocation)
        return [:]
    }
    return object
}
