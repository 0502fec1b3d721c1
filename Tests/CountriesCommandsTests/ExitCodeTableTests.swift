import ArgumentParsing
import CountriesClient
import CountriesCore
import CountriesService
import CountriesSockets
import CountriesTerminal
import Foundation
import SystemSupport
import Testing
import ZeroMQ

@testable import CountriesCommands
@testable import CountriesViews

/// The one exit-code table (issue 25): every typed error a subcommand can throw, case by case,
/// with the code scripts rely on and the message stderr gets; and no public error type of the
/// project that the table does not name, unless it is said here why it never reaches it.
@Suite struct ExitCodeTableTests {
    /// An error, the code it must end the process with, and the message.
    struct Row: CustomStringConvertible {
        var error: any Error
        var code: Int32
        var message: String
        var description: String { "\(type(of: error)) \(error) -> \(code)" }
    }

    /// A scratch directory of this test's own.
    static func scratch() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "exit-code-table-\(getpid())-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// One of each error the modules throw, made the way the modules make them where their
    /// initializers are not public (a pid file in no directory, a cursor file of garbage).
    static func rows() throws -> [Row] {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var pidFileError: (any Error)?
        do {
            _ = try PidFile.claim(directory + "/no-such-directory/countries.pid")
        } catch {
            pidFileError = error
        }
        let cursorPath = directory + "/cursor"
        try Data("not a cursor".utf8).write(to: URL(fileURLWithPath: cursorPath))
        var cursorFailure: CursorFile.Failure?
        do {
            _ = try CursorFile(path: cursorPath).read()
        } catch {
            cursorFailure = error
        }
        let tokenPath = directory + "/token"
        try Data("secret\n".utf8).write(to: URL(fileURLWithPath: tokenPath))
        chmod(tokenPath, 0o644)
        var privateFileError: PrivateFileError?
        do {
            try PrivateFiles.checkSecretKey(tokenPath)
        } catch {
            privateFileError = error
        }
        let claim = try #require(pidFileError)
        let cursor = try #require(cursorFailure)
        let token = try #require(privateFileError)
        let client = { (code: ClientError.Code) in ClientError(code, endpoint: "tcp://h:1", "client \(code)")
        }
        let usage = UsageError(message: "bad", commandPath: ["countries", "list"], usage: "countries list")

        return [
            Row(error: usage, code: 64, message: usage.description),
            Row(error: KeyFileError(.unusable, "k1"), code: 78, message: "k1"),
            Row(error: KeyFileError(.exists, "k2"), code: 1, message: "k2"),
            Row(error: KeyFileError(.cannotWrite, "k3"), code: 73, message: "k3"),
            Row(error: KeyFileError(.keyGeneration, "k4"), code: 70, message: "k4"),
            Row(error: token, code: 78, message: token.description),
            Row(error: SeedFileError("seed"), code: 65, message: "seed"),
            Row(error: claim, code: 73, message: "\(claim)"),
            Row(error: ServiceError(.store, "s1"), code: 74, message: "s1"),
            Row(error: ServiceError(.bind, "s2"), code: 69, message: "s2"),
            Row(error: ServiceError(.sockets, "s3"), code: 69, message: "s3"),
            Row(error: ServiceError(.security, "s4"), code: 78, message: "s4"),
            Row(error: ServiceError(.unsafeEndpoint, "s5"), code: 64, message: "s5"),
            Row(error: ServiceError(.storeInUse, "s6"), code: 73, message: "s6"),
            Row(error: StoreBackupError(.noStore, "b1"), code: 66, message: "b1"),
            Row(error: StoreBackupError(.cannotRead, "b2"), code: 74, message: "b2"),
            Row(error: StoreBackupError(.exists, "b3"), code: 1, message: "b3"),
            Row(error: StoreBackupError(.refused, "b4"), code: 1, message: "b4"),
            Row(error: StoreBackupError(.cannotWrite, "b5"), code: 73, message: "b5"),
            Row(error: client(.noReply), code: 69, message: "client noReply"),
            Row(error: client(.badReply), code: 69, message: "client badReply"),
            Row(error: client(.sockets), code: 69, message: "client sockets"),
            Row(error: client(.refused), code: 69, message: "client refused"),
            Row(error: client(.outcomeUnknown), code: 75, message: "client outcomeUnknown"),
            Row(
                error: HistoryFetcher.Failure.unreachable(client(.noReply)), code: 69,
                message: "client noReply"),
            Row(
                error: HistoryFetcher.Failure.refused(CountriesError(.badRequest, "no")), code: 1,
                message: "no"),
            Row(
                error: EventCommandRunner.Unrunnable.notFound("x"), code: 127,
                message: EventCommandRunner.Unrunnable.notFound("x").description),
            Row(
                error: EventCommandRunner.Unrunnable.notExecutable("/x"), code: 126,
                message: EventCommandRunner.Unrunnable.notExecutable("/x").description),
            Row(error: WebViewError(message: "w"), code: 69, message: "w"),
            Row(
                error: CommandError.historyKeptGrowing, code: 69,
                message: "the history kept growing while it was read; try again"),
            Row(
                error: CommandError.selectNeedsTerminal, code: 64,
                message: "select needs a terminal for its keys and screen; use `countries toggle` in scripts"),
            Row(
                error: CommandError.metricsUnavailable(authority: "127.0.0.1:9"), code: 69,
                message:
                    "cannot serve metrics on 127.0.0.1:9 (in use, or not an address of this machine); pick another --metrics"
            ),
            Row(
                error: CommandError.unusableSubscription(client(.sockets)), code: 69,
                message: "client sockets"),
            Row(error: CommandError.unreadableCursor(cursor), code: 65, message: cursor.description),
            Row(error: CommandError.unwritableCursor(cursor), code: 73, message: cursor.description),
            Row(
                error: CommandError.serviceStopped(ServiceError(.sockets, "gone")), code: 70, message: "gone"),
            Row(
                error: ZMQError(code: EINVAL, operation: "zmq_ctx_new"), code: 70,
                message: "\(ZMQError(code: EINVAL, operation: "zmq_ctx_new"))"),
            Row(
                error: TerminalError(call: "tcgetattr", code: ENOTTY), code: 70,
                message: "\(TerminalError(call: "tcgetattr", code: ENOTTY))"),
        ]
    }

    @Test func everyTypedErrorEndsWithItsCode() throws {
        for row in try Self.rows() {
            let failure = ExitCode.failure(for: row.error)
            #expect(failure.code == row.code, "\(row)")
            #expect(failure.message == row.message, "\(row)")
            // Only a usage error brings its own format (swift-argument-parser's).
            #expect(failure.prefixed == !(row.error is UsageError), "\(row)")
        }
    }

    /// An error the table does not know is a bug: 70, with what the error says.
    @Test func anUnknownErrorIsSoftware() {
        struct Unlisted: Error, CustomStringConvertible { var description: String { "unlisted" } }
        #expect(ExitCode.failure(for: Unlisted()) == ExitCode.Failure(70, "unlisted"))
    }

    /// A reply's refusal: `unavailable` is temporary (69) like no reply; the rest are refusals (1).
    @Test func aRefusalEndsWithItsCode() {
        let unavailable = Reply(error: CountriesError(.unavailable, "try later"))
        let conflict = Reply(error: CountriesError(.conflict, "moved on"))
        #expect(ExitCode.refusal(of: unavailable) == 69)
        #expect(ExitCode.refusal(of: conflict) == 1)
    }

    /// Public error types that never reach the command line as themselves, and why: each is
    /// thrown inside a module whose API throws (or answers with) another type the table names.
    static let handledBelow: [String: String] = [
        "CurveCertificate.ParseError": "KeyFiles throws KeyFileError",
        "StoreOpenError": "StateService throws ServiceError(.store)",
        "StateStoreError": "a running store's failure: the command handler answers storage_error",
        "LockFileError": "PidFile and the stores throw their own errors",
        "SQLiteError": "the stores and StoreBackup throw their own errors",
        "EtcdError": "the etcd store and the service throw their own errors",
        "HTTPServer.StartError":
            "MetricsListener throws CommandError.metricsUnavailable, WebView WebViewError",
        "ServiceNotifierError": "serve logs it as a warning and goes on",
        "ExpositionParser.Failure":
            "the strict reader of scrapes (tests, bench); the command line only writes them",
        "CursorFile.Failure": "on-change throws CommandError.unreadableCursor or .unwritableCursor",
        "JSONParser.Failure": "the decoders throw their own errors",
        "JSONParser.LocatedFailure": "the decoders throw their own errors",
        "WireDecodingError": "the clients throw ClientError(.badReply) or drop the message",
        "EventShape.Flaw": "the service and the relay drop what has the wrong shape",
        "CountriesError": "a refusal travels in a reply: ExitCode.refusal(of:)",
        "ReplayError": "opening a store throws its own error",
        "WebRequestGuard.Refusal": "the web view answers it with an HTTP status",
        "LoadGenerationError": "the load generator of the bench and the tests; the command line has none",
        "LoopbackPortError":
            "the port finder of the bench and the tests; the command line never picks a port",
    ]

    /// A new public error type fails here until the table names it (or `handledBelow` says why
    /// it never reaches the command line): the table cannot fall behind the modules silently.
    @Test func everyPublicErrorTypeIsInTheTable() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
        let table = try String(
            contentsOfFile: root + "/Sources/CountriesCommands/ExitCode.swift", encoding: .utf8)
        let declared = try Self.errorTypes(under: root + "/Sources")
        #expect(declared.contains("ServiceError") && declared.contains("PidFile.ClaimError"), "\(declared)")
        for name in declared where Self.handledBelow[name] == nil {
            let named = ["as \(name):", "is \(name),", "is \(name):"].contains { table.contains($0) }
            #expect(
                named, "\(name) is an error type ExitCode.failure(for:) does not name: give it a code there")
        }
        for name in Self.handledBelow.keys {
            #expect(declared.contains(name), "\(name) is no longer declared: take it out of handledBelow")
        }
    }

    /// The error types of the library modules, qualified by the type they are nested in: the
    /// public ones, and every one of CountriesCommands (the command line's own).
    static func errorTypes(under sources: String) throws -> Set<String> {
        let executables: Set<String> = [
            "countries", "countries-bench", "countries-embedding-example", "countries-fuzz",
        ]
        var names: Set<String> = []
        let files = FileManager.default.enumerator(atPath: sources)
        while let file = files?.nextObject() as? String {
            guard file.hasSuffix(".swift"), let module = file.split(separator: "/").first,
                !executables.contains(String(module))
            else { continue }
            let ownModule = module == "CountriesCommands"
            let lines = try String(contentsOfFile: sources + "/" + file, encoding: .utf8)
                .split(separator: "\n", omittingEmptySubsequences: false)
            for (index, line) in lines.enumerated() {
                guard
                    let match = line.firstMatch(
                        of: /^(\s*)(public )?(?:final )?(?:struct|enum|class) (\w+)[^{]*:[^{]*\bError\b/)
                else { continue }
                guard match.2 != nil || ownModule else { continue }
                let indent = match.1.count
                var name = String(match.3)
                if indent > 0 {
                    // The nearest declaration above that is indented less holds this one.
                    for outer in lines[..<index].reversed() {
                        let outerIndent = outer.prefix { $0 == " " }.count
                        guard outerIndent < indent,
                            let holder = outer.firstMatch(of: /(?:struct|enum|class|extension) (\w+)/)
                        else { continue }
                        name = "\(holder.1).\(name)"
                        break
                    }
                }
                names.insert(name)
            }
        }
        return names
    }
}
