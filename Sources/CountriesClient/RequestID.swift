import Foundation

/// Fresh request ids: random, so two clients never share one.
public enum RequestID {
    /// A new id (a UUID, 36 characters).
    public static func make() -> String { UUID().uuidString.lowercased() }
}
