import Foundation

/// The token pages must present (`countries web --token FILE`): the file's first line, without
/// surrounding spaces.
public enum WebToken {
    /// The token in the file at `path`, or nil when it cannot be read or its first line is empty.
    public static func read(from path: String) -> String? {
        guard let contents = try? String(contentsOfFile: path, encoding: .utf8),
            let line = contents.split(separator: "\n").first.map({ $0.trimmingCharacters(in: .whitespaces) }),
            !line.isEmpty
        else { return nil }
        return line
    }
}
