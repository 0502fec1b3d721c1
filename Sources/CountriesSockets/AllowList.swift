import Foundation
import SystemSupport
import ZeroMQ

/// What an admitted client may do.
public enum Access: String, Sendable, Equatable {
    /// Read, subscribe and change.
    case readWrite = "rw"
    /// Read and subscribe; any change is `forbidden`.
    case readOnly = "ro"
}

/// The admitted client keys, read from `.pub` files (CZMQ certificates or bare Z85 keys).
struct AllowList: Equatable {
    /// Access by Z85 public key.
    var keys: [String: Access] = [:]
    /// Files that could not be read as keys, with why (for the log).
    var skipped: [String] = []

    /// Reads every `.pub` file in the directories. A missing directory is an error; a file that
    /// is not a key is skipped and reported. A key listed as both gets read-write.
    static func load(readWrite: [String], readOnly: [String]) throws(ServiceError) -> AllowList {
        var list = AllowList()
        for (directories, access) in [(readOnly, Access.readOnly), (readWrite, Access.readWrite)] {
            for directory in directories {
                let names: [String]
                do {
                    names = try FileManager.default.contentsOfDirectory(atPath: directory)
                } catch {
                    throw ServiceError(
                        .security,
                        "cannot read the key directory \(directory): give a directory of .pub files")
                }
                for name in names.sorted() where name.hasSuffix(".pub") {
                    let path = (directory as NSString).appendingPathComponent(name)
                    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                        list.skipped.append("\(path): unreadable")
                        continue
                    }
                    do {
                        list.keys[try CurveCertificate.parse(text).publicKey] = access
                    } catch {
                        list.skipped.append("\(path): \(error.description)")
                    }
                }
            }
        }
        return list
    }

    var readWriteCount: Int { keys.values.filter { $0 == .readWrite }.count }
    var readOnlyCount: Int { keys.values.filter { $0 == .readOnly }.count }
}

/// The ZAP handler (RFC 27): libzmq asks it, over `inproc://zeromq.zap.01`, whether each CURVE
/// client may connect. It answers from the allow-list and names the client's access in the
/// User-Id, which the command loop reads on every request.
final class ZAPHandler {
    static let endpoint = "inproc://zeromq.zap.01"
    static let domain = "countries"

    let socket: Socket
    var allowList: AllowList
    private let logger: Logger
    private var refusals = RefusalLog()

    /// Binds the handler; it must exist before any CURVE server socket binds.
    init(context: Context, allowList: AllowList, logger: Logger) throws(ZMQError) {
        socket = try context.makeSocket(.rep)
        try socket.setOption(.linger, 0)
        try socket.bind(Self.endpoint)
        self.allowList = allowList
        self.logger = logger
    }

    /// Answers every queued ZAP request.
    func handlePending() {
        while let frames = try? socket.receive(dontWait: true) {
            let reply = answer(frames)
            // A blocking send says no only when a signal cut its first frame short, and then
            // nothing went: a REP socket that has not answered takes no request again, and every
            // later CURVE handshake would wait. A throw (the context ending) stops it.
            var sent = false
            while !sent { sent = (try? socket.send(reply)) ?? true }
        }
    }

    private func answer(_ frames: [Data]) -> [Data] {
        func reply(_ requestID: Data, _ code: String, _ text: String, user: String = "") -> [Data] {
            [Data("1.0".utf8), requestID, Data(code.utf8), Data(text.utf8), Data(user.utf8), Data()]
        }
        guard frames.count >= 6, String(decoding: frames[0], as: UTF8.self) == "1.0" else {
            return reply(frames.count > 1 ? frames[1] : Data(), "500", "malformed ZAP request")
        }
        let requestID = frames[1]
        let address = String(decoding: frames[3], as: UTF8.self)
        let mechanism = String(decoding: frames[5], as: UTF8.self)
        guard mechanism == "CURVE", frames.count >= 7, frames[6].count == 32,
            let key = Z85.encode(frames[6])
        else {
            note(refusal: "a \(mechanism) client from \(address)")
            return reply(requestID, "400", "CURVE with a listed key is required")
        }
        guard let access = allowList.keys[key] else {
            note(refusal: "key \(key) from \(address) (not in the allow-lists)")
            return reply(requestID, "400", "key not allowed")
        }
        return reply(requestID, "200", "OK", user: "\(access.rawValue):\(key)")
    }

    func note(refusal: String) {
        if let line = refusals.record("refused connection: \(refusal)", now: .now) {
            logger.log(.warning, line)
        }
    }
}

@available(*, unavailable) extension ZAPHandler: Sendable {}
