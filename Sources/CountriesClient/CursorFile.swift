import CountriesCore
import Foundation
@preconcurrency import Glibc
import JSON
import SystemSupport

/// A position (store and seq) kept in a file, so a side-effect runner that is restarted goes
/// on where it stopped (`countries on-change --cursor FILE`).
///
/// The file is one JSON object, `{"seq": N, "store": "ID"}`, replaced atomically (a temporary
/// file written, synced and renamed over it, then the directory synced): after a crash it holds
/// the old position or the new one, never a torn one.
public struct CursorFile {
    /// Why the file cannot be used.
    public struct Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// What went wrong with `path` and what to do.
        public var description: String
    }

    /// Where the cursor lives.
    public let path: String

    /// A cursor at `path` (nothing is read or written yet).
    public init(path: String) {
        self.path = path
    }

    /// The saved position, or nil when there is no file yet.
    ///
    /// Read with the project's strict JSON parser: a file that is not exactly a cursor (not
    /// JSON, a key given twice, `seq` not a whole number from 0 to 2^64-1, `store` not a
    /// string) is refused rather than guessed at; other keys are ignored.
    public func read() throws(Failure) -> EventFeed.Position? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Failure(description: "cannot read the cursor file \(path); check its permissions")
        }
        do {
            return try Self.position(from: data)
        } catch {
            throw Failure(
                description:
                    "the cursor file \(path) is not {\"seq\": N, \"store\": \"ID\"} (\(error.description)); move it aside to start from now"
            )
        }
    }

    /// What is wrong with a cursor's contents.
    struct ContentError: Error, CustomStringConvertible {
        let description: String
    }

    /// The position a cursor file's contents hold.
    static func position(from data: Data) throws(ContentError) -> EventFeed.Position {
        let value: JSONValue
        do {
            value = try JSONParser.parseLocating(data, maximumNesting: 2)
        } catch {
            switch error.failure {
            case .duplicateKey(let key):
                // Quoted as names are: a key is echoed to a terminal.
                throw ContentError(description: "\(CountryName.quoted(key)) is given twice")
            case .notJSON where error.atEnd: throw ContentError(description: "it ends early")
            case .notJSON:
                throw ContentError(description: "not JSON at line \(error.line), column \(error.column)")
            case .tooDeep:
                throw ContentError(description: "arrays or objects nest too deep at line \(error.line)")
            }
        }
        guard case .object(let fields) = value else {
            throw ContentError(description: "it holds \(value.typeName), not an object")
        }
        let seq: UInt64
        switch fields["seq"] {
        case .integer(let number)? where number >= 0: seq = UInt64(number)
        case .unsigned(let number)?: seq = number
        case nil: throw ContentError(description: "\"seq\" is missing")
        case let other?:
            let shown: String
            switch other {
            case .integer(let number): shown = "\(number)"
            case .number(let number): shown = "\(number)"
            default: shown = other.typeName
            }
            throw ContentError(description: "\"seq\" is \(shown), not a whole number from 0 to \(UInt64.max)")
        }
        switch fields["store"] {
        case nil, .null?: return EventFeed.Position(store: nil, seq: seq)
        case .string(let store)?: return EventFeed.Position(store: store, seq: seq)
        case let other?: throw ContentError(description: "\"store\" is \(other.typeName), not a string")
        }
    }

    /// Replaces the file with `position`, atomically and durably.
    public func write(_ position: EventFeed.Position) throws(Failure) {
        var text = "{\"seq\":\(position.seq)"
        if let store = position.store,
            store.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C })
        {
            text += ",\"store\":\"\(store)\""
        }
        text += "}\n"
        // A name of its own, created here and nowhere else: a fixed `path.tmp` was opened
        // through whatever was at that name, so a symbolic or hard link placed there by another
        // user of the directory made this write into their file, and left the cursor 0644.
        let temporary = PrivateFiles.temporaryPath(beside: path)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failure("cannot create \(temporary)") }
        fchmod(descriptor, 0o600)  // whatever the umask said
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        let synced = fsync(descriptor) == 0
        close(descriptor)
        guard written == bytes.count, synced else {
            unlink(temporary)
            throw failure("cannot write \(temporary)")
        }
        guard rename(temporary, path) == 0 else {
            unlink(temporary)
            throw failure("cannot rename \(temporary) to \(path)")
        }
        PrivateFiles.syncDirectory(of: path)
    }

    private func failure(_ what: String) -> Failure {
        Failure(description: "\(what): \(String(cString: strerror(errno))); check the directory of --cursor")
    }
}
