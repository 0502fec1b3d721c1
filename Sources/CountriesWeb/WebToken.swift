import Foundation

/// The token pages must present (`countries web --token FILE`): the file's first line, without
/// surrounding spaces.
public enum WebToken {
    /// A fresh random token: 32 hex digits (128 bits).
    public static func fresh() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let hex = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }

    /// The token in the file at `path`, or nil when it cannot be read or its first line is empty.
    public static func read(from path: String) -> String? {
        guard let contents = try? String(contentsOfFile: path, encoding: .utf8),
            let line = contents.split(separator: "\n").first.map({ $0.trimmingCharacters(in: .whitespaces) }),
            !line.isEmpty
        else { return nil }
        return line
    }
}
