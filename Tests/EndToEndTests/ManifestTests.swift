import Foundation
import Testing

@testable import TestSupport

/// The manifest, the sources and docs/ARCHITECTURE.md tell one story: each target declares the
/// project modules it imports and imports those it declares, and the architecture's module table
/// names every target with its real dependencies. As ReadmeTests keeps the README true.
@Suite struct ManifestTests {
    /// A dependency declared but not imported, and why: only these may differ.
    static let buildOnly: [String: Set<String>] = [
        // The end-to-end suites run these binaries (they are built with the tests), never import
        // them.
        "EndToEndTests": ["countries", "countries-bench", "countries-embedding-example"]
    ]

    @Test func everyTargetImportsWhatItDeclaresAndDeclaresWhatItImports() throws {
        let manifest = try PackageManifest.read()
        let names = Set(manifest.targets.map(\.name))
        for target in manifest.targets where !target.isSystemLibrary {
            let imported = try PackageManifest.imports(under: target.directory)
                .compactMap { module in names.first { PackageManifest.moduleName($0) == module } }
            let used = Set(imported).subtracting([target.name])
            let declared = Set(target.dependencies).intersection(names)
            let allowed = Self.buildOnly[target.name] ?? []
            #expect(
                used.subtracting(declared).isEmpty,
                "\(target.name) imports \(used.subtracting(declared).sorted()) without declaring it in Package.swift"
            )
            #expect(
                declared.subtracting(used).subtracting(allowed).isEmpty,
                "\(target.name) declares \(declared.subtracting(used).subtracting(allowed).sorted()) in Package.swift and never imports it"
            )
        }
    }

    /// `Locked` (SystemSupport) is the one lock wrapper of the modules: a second wrapper would be
    /// a second algorithm. And no test takes Synchronization's `Mutex` either: ThreadSanitizer
    /// cannot see its futex, so two `withLock` blocks on two threads are reported as a race (a
    /// test's counter failed CI that way).
    @Test func locksAreTakenOnlyThroughLocked() throws {
        var found: [String] = []
        for directory in ["Sources", "Tests"] {
            let root = CountriesBinary.packageRoot + "/" + directory
            let files = FileManager.default.enumerator(atPath: root)
            while let file = files?.nextObject() as? String {
                guard file.hasSuffix(".swift"), file != "SystemSupport/Locked.swift",
                    file != "EndToEndTests/ManifestTests.swift"
                else { continue }
                let text = try String(contentsOfFile: root + "/" + file, encoding: .utf8)
                for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false)
                    .enumerated()
                where line.contains("Mutex(")
                    || directory == "Sources"
                        && (line.contains("NSLock()") || line.contains("pthread_mutex_init"))
                {
                    found.append(
                        "\(directory)/\(file):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
        #expect(
            found.isEmpty, "take the lock through SystemSupport's Locked:\n\(found.joined(separator: "\n"))")
    }

    @Test func theArchitecturesModuleTableNamesEveryTargetWithItsDependencies() throws {
        let manifest = try PackageManifest.read()
        let table = try ArchitectureTable.read()
        let names = Set(manifest.targets.map(\.name))
        for target in manifest.targets where !target.isTest {
            guard let row = table.rows.first(where: { $0.modules.contains(target.name) }) else {
                Issue.record("docs/ARCHITECTURE.md's module table has no row for \(target.name)")
                continue
            }
            // A row for several system libraries lists no dependencies.
            guard row.modules.count == 1 else { continue }
            #expect(
                Set(row.dependencies).intersection(names) == Set(target.dependencies).intersection(names),
                "docs/ARCHITECTURE.md says \(target.name) depends on \(row.dependencies.sorted()); Package.swift says \(target.dependencies.sorted())"
            )
        }
        for row in table.rows {
            for module in row.modules where !names.contains(module) {
                Issue.record(
                    "docs/ARCHITECTURE.md's module table names \(module), which Package.swift does not have")
            }
        }
    }
}

/// The targets of Package.swift, read as text (the manifest is plain enough for that).
struct PackageManifest {
    struct Target {
        var name: String
        var kind: String
        var dependencies: [String]
        var path: String?
        var isSystemLibrary: Bool { kind == "systemLibrary" }
        var isTest: Bool { kind == "testTarget" || name == "TestSupport" }
        var directory: String {
            CountriesBinary.packageRoot + "/"
                + (path ?? (kind == "testTarget" ? "Tests/\(name)" : "Sources/\(name)"))
        }
    }

    var targets: [Target]

    static func read() throws -> PackageManifest {
        let text = try String(contentsOfFile: CountriesBinary.packageRoot + "/Package.swift", encoding: .utf8)
        var targets: [Target] = []
        let opening = /\.(target|executableTarget|testTarget|systemLibrary)\(/
        for match in text.matches(of: opening) {
            let body = balanced(text[match.range.upperBound...])
            guard let name = body.firstMatch(of: /name: "([^"]+)"/)?.1 else { continue }
            var dependencies: [String] = []
            if let list = body.firstMatch(of: /dependencies: \[([^\]]*)\]/)?.1 {
                dependencies = list.matches(of: /"([^"]+)"/).map { String($0.1) }
            }
            let path = body.firstMatch(of: /path: "([^"]+)"/).map { String($0.1) }
            targets.append(
                Target(name: String(name), kind: String(match.1), dependencies: dependencies, path: path))
        }
        return PackageManifest(targets: targets)
    }

    /// The text up to the parenthesis that closes the one before `text`.
    private static func balanced(_ text: Substring) -> Substring {
        var depth = 1
        for index in text.indices {
            switch text[index] {
            case "(": depth += 1
            case ")":
                depth -= 1
                if depth == 0 { return text[..<index] }
            default: break
            }
        }
        return text
    }

    /// The module a target is imported as.
    static func moduleName(_ target: String) -> String { target.replacingOccurrences(of: "-", with: "_") }

    /// Every module the Swift files under `directory` import.
    static func imports(under directory: String) throws -> Set<String> {
        var modules: Set<String> = []
        let files = FileManager.default.enumerator(atPath: directory)
        while let file = files?.nextObject() as? String {
            guard file.hasSuffix(".swift") else { continue }
            let text = try String(contentsOfFile: directory + "/" + file, encoding: .utf8)
            // Swift's Regex is slow: only lines that can be imports meet it.
            for line in text.split(separator: "\n") where line.contains("import ") {
                if let match = line.firstMatch(
                    of:
                        /^\s*(?:@[A-Za-z_]+(?:\([^)]*\))?\s+)*import\s+(?:(?:struct|class|enum|func|protocol|typealias|var|let)\s+)?([A-Za-z_][A-Za-z0-9_]*)/
                ) {
                    modules.insert(String(match.1))
                }
            }
        }
        return modules
    }
}

/// The module table of docs/ARCHITECTURE.md: each row's modules and what they depend on.
struct ArchitectureTable {
    struct Row {
        var modules: [String]
        var dependencies: [String]
    }

    var rows: [Row]

    static func read() throws -> ArchitectureTable {
        let text = try String(
            contentsOfFile: CountriesBinary.packageRoot + "/docs/ARCHITECTURE.md", encoding: .utf8)
        var rows: [Row] = []
        var inTable = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("| module | owns | depends on |") {
                inTable = true
                continue
            }
            guard inTable else { continue }
            guard line.hasPrefix("|") else { break }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard cells.count >= 4, !cells[1].hasPrefix("---") else { continue }
            let modules = cells[1].matches(of: /`([^`]+)`/).map { String($0.1) }
            let dependencies = cells[cells.count - 2].matches(of: /`([^`]+)`/).map { String($0.1) }
            rows.append(Row(modules: modules, dependencies: dependencies))
        }
        return ArchitectureTable(rows: rows)
    }
}
