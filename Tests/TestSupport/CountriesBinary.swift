import Foundation

/// The `countries` executable under test, and the environment its runs start from. The one
/// place every suite finds the binary.
public enum CountriesBinary {
    /// `COUNTRIES_BINARY` (which `scripts/test --sanitize` sets to the sanitized build), else the
    /// `countries` beside the test bundle, else the package's `.build/debug/countries`.
    public static let path: String = {
        if let override = ProcessInfo.processInfo.environment["COUNTRIES_BINARY"], !override.isEmpty {
            return override
        }
        let bundle = Bundle.main.bundleURL
        let argumentZero = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let directories = [
            bundle, bundle.deletingLastPathComponent(), argumentZero,
            argumentZero.deletingLastPathComponent(),
        ]
        for directory in directories {
            let candidate = directory.appendingPathComponent("countries").path
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate, isDirectory: &isDirectory),
                !isDirectory.boolValue, FileManager.default.isExecutableFile(atPath: candidate)
            {
                return candidate
            }
        }
        return packageRoot + "/.build/debug/countries"
    }()

    /// The package's root directory (where README.md and Package.swift are).
    public static let packageRoot: String = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// The environment every run starts from: the test's own, without anything that would change
    /// what `countries` does (every `COUNTRIES_*` variable, the locale), in the C locale, so the
    /// visited mark is `[x]`. A test adds what its scenario needs on top.
    public static let environment: [String: String] = {
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("COUNTRIES_") }
        for key in ["LC_ALL", "LC_CTYPE"] { environment[key] = nil }
        environment["LANG"] = "C"
        return environment
    }()

    /// ``environment`` with `overrides` on top.
    public static func environment(adding overrides: [String: String]) -> [String: String] {
        environment.merging(overrides) { $1 }
    }
}
