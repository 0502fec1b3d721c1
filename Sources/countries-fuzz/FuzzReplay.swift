import Foundation

/// Replays inputs from files without libFuzzer: the regression runner of a plain build.
enum FuzzReplay {
    /// Checks every file named, and every file in every directory named; returns the exit code.
    static func run(_ paths: [String]) -> Int32 {
        guard !paths.isEmpty else {
            FileHandle.standardError.write(
                Data(
                    "usage: countries-fuzz FILE_OR_DIR...\n(build with scripts/fuzz to fuzz; this build replays inputs)\n"
                        .utf8))
            return 64
        }
        var checked = 0
        for path in paths {
            for file in files(at: path) {
                guard let input = FileManager.default.contents(atPath: file) else {
                    FileHandle.standardError.write(Data("countries-fuzz: cannot read \(file)\n".utf8))
                    return 66
                }
                FuzzHarness.check(input)
                checked += 1
            }
        }
        print("countries-fuzz: \(checked) input(s) replayed, every check held")
        return 0
    }

    /// The file itself, or the regular files in the directory (sorted, not recursive).
    static func files(at path: String) -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return [path] }
        guard isDirectory.boolValue else { return [path] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.sorted().map { "\(path)/\($0)" }.filter {
            var nested: ObjCBool = false
            return FileManager.default.fileExists(atPath: $0, isDirectory: &nested) && !nested.boolValue
        }
    }
}
