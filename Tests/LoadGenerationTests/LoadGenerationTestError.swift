/// The test server could not start.
struct LoadGenerationTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
