import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// One command README.md prints: a line of a `sh` block, a `$ ` line of a `console` block (with
/// the output shown under it), or an inline code span that starts with `countries ` or `scripts/`.
struct ReadmeCommand: CustomStringConvertible {
    /// The command as printed (an inline span's line breaks become spaces).
    var text: String
    /// Its 1-based line in README.md.
    var line: Int
    /// For a `console` command: the lines shown under it, up to the next `$ ` or the block's end.
    var shownOutput: [String]?
    /// For a line of a fenced block: which block (1-based), so `export` lines carry to the
    /// lines after them in the same block.
    var block: Int?

    var description: String { "README.md:\(line): \(text)" }

    /// The README the tests read: the package's own.
    static let readmePath = CountriesBinary.packageRoot + "/README.md"

    /// Every command in `markdown`, in the order they appear.
    static func extract(from markdown: String) -> [ReadmeCommand] {
        var commands: [ReadmeCommand] = []
        var fence: (info: String, block: Int)?
        var blocks = 0
        var consoleCommand: Int?
        // The text outside fences, with fenced lines blanked so line numbers still count.
        var prose: [String] = []
        for (offset, raw) in markdown.components(separatedBy: "\n").enumerated() {
            let line = offset + 1
            let trimmed = raw.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("```") {
                if fence == nil {
                    blocks += 1
                    fence = (String(trimmed.dropFirst(3)), blocks)
                } else {
                    fence = nil
                    consoleCommand = nil
                }
                prose.append("")
                continue
            }
            guard let current = fence else {
                prose.append(raw)
                continue
            }
            prose.append("")
            switch current.info {
            case "sh":
                if !trimmed.isEmpty && !trimmed.hasPrefix("#") {
                    commands.append(ReadmeCommand(text: trimmed, line: line, block: current.block))
                }
            case "console":
                if trimmed.hasPrefix("$ ") {
                    commands.append(
                        ReadmeCommand(
                            text: String(trimmed.dropFirst(2)), line: line, shownOutput: [],
                            block: current.block))
                    consoleCommand = commands.count - 1
                } else if let index = consoleCommand {
                    commands[index].shownOutput?.append(raw)
                }
            default:
                break  // `text` blocks are screen captures, not commands
            }
        }
        commands += inlineCommands(in: prose)
        return commands.sorted { $0.line < $1.line }
    }

    /// Inline code spans (which may wrap across lines) that start with `countries ` or `scripts/`.
    private static func inlineCommands(in prose: [String]) -> [ReadmeCommand] {
        var found: [ReadmeCommand] = []
        var inside = false
        var span = ""
        var start = 0
        for (offset, line) in prose.enumerated() {
            if line.isEmpty && inside {  // a span never crosses a paragraph
                inside = false
                span = ""
            }
            for character in line {
                if character == "`" {
                    if inside {
                        let text = span.split(whereSeparator: \.isWhitespace).joined(separator: " ")
                        if text.hasPrefix("countries ") || text.hasPrefix("scripts/") {
                            found.append(ReadmeCommand(text: text, line: start))
                        }
                        span = ""
                    } else {
                        start = offset + 1
                    }
                    inside.toggle()
                } else if inside {
                    span.append(character)
                }
            }
            if inside { span.append(" ") }
        }
        return found
    }
}

/// A network namespace of the README test's own, so the README's default ports (5555, 5556,
/// 5557) never meet anything else on the machine. Its loopback is up; 192.0.2.10 (the README's
/// "address of the host") is a non-loopback address on a veth pair inside it, and `SERVICE`
/// names the service's host (here the same namespace) through `/etc/netns/NAME/hosts`, which
/// `ip netns exec` mounts over `/etc/hosts`. ``remove()`` deletes the namespace and that file.
final class ReadmeHost: Sendable {
    /// README.md's stand-in for "an address of the host" (TEST-NET-1, RFC 5737).
    let hostAddress = "192.0.2.10"
    private let network: VirtualNetwork
    private let ip: String

    var namespace: String { network.namespace("h") }

    init() throws {
        guard let ip = SystemTool.path("ip") else { throw FaultError("no ip(8) here") }
        self.ip = ip
        network = try VirtualNetwork(hosts: ["h"], links: [], prefix: "readme")
        do {
            try network.run(on: "h", ["link", "add", "rdm0", "type", "veth", "peer", "name", "rdm1"])
            try network.run(on: "h", ["addr", "add", "\(hostAddress)/24", "dev", "rdm0"])
            for interface in ["rdm0", "rdm1"] {
                try network.run(on: "h", ["link", "set", interface, "up"])
            }
            try FileManager.default.createDirectory(
                atPath: "/etc/netns/\(namespace)", withIntermediateDirectories: true)
            try "127.0.0.1 localhost\n127.0.0.1 SERVICE\n".write(
                toFile: "/etc/netns/\(namespace)/hosts", atomically: true, encoding: .utf8)
        } catch {
            remove()
            throw error
        }
    }

    /// Starts `sh -c script` in the namespace, in `directory`. The shell leads a process group of
    /// its own, so ``ReadmeShell/stop()`` reaches every process of a pipeline, as Ctrl-C would.
    func shell(_ script: String, in directory: String, environment: [String: String]) throws -> ReadmeShell {
        ReadmeShell(
            script: script,
            process: try FaultProcess(
                ip, ["netns", "exec", namespace, "env", "-C", directory, "/bin/sh", "-c", script],
                environment: environment, newProcessGroup: true))
    }

    func remove() {
        network.remove()
        try? FileManager.default.removeItem(atPath: "/etc/netns/\(namespace)")
    }
}

/// A README command running in a shell of its own.
struct ReadmeShell {
    let script: String
    let process: FaultProcess

    var output: String { process.stdout.text + process.stderr.text }

    /// Waits for the end; nil (and the group stopped) when it ran over `timeout`.
    func finish(timeout: Duration = .seconds(30)) -> Int32? {
        if let status = process.wait(timeout: timeout) { return status }
        _ = stop()
        return nil
    }

    /// Waits until the output holds `text` (bounded), or the shell has exited.
    func waitFor(_ text: String, timeout: Duration = .seconds(15)) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if output.contains(text) { return true }
            if !process.isRunning { return output.contains(text) }
            sleep(for: .milliseconds(50))
        }
        return false
    }

    /// SIGINT to the whole process group (what Ctrl-C does), then SIGKILL after 5 s; the shell's
    /// exit status (128 + n for signal n).
    @discardableResult
    func stop() -> Int32? {
        process.signalGroup(SIGINT)
        if let status = process.wait(timeout: .seconds(5)) { return status }
        return process.crash()
    }
}
