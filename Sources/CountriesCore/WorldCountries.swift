extension SeedList {
    // Replaced by the full ISO 3166-1 list when it lands.
    static let worldNames: [String] = ["France"]
}
