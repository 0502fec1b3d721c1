import CountriesCore
import Foundation
@preconcurrency import Glibc
import SystemSupport
import ZeroMQ

/// The state service: owns the list, answers commands on a ROUTER socket (plain REQ clients
/// work), and publishes every committed change and a heartbeat on a PUB socket.
///
/// One thread runs ``run(stopOn:)`` and owns both sockets; one `zmq_poll` waits on the command
/// socket and the signal pipe together, with the next heartbeat as its timeout.
public final class StateService {
    /// The configuration the service runs with.
    public let configuration: ServiceConfiguration
    /// The endpoints actually bound (ephemeral tcp ports resolved), command first.
    public private(set) var boundEndpoints: [String] = []

    private let context: Context
    private let commands: Socket
    private let events: Socket
    private let handler: CommandHandler
    private let logger: Logger
    private let startedAt = ContinuousClock.now

    /// Opens the store and binds both sockets; throws a ``ServiceError`` that says what to fix.
    public init(configuration: ServiceConfiguration, logger: Logger) throws(ServiceError) {
        self.configuration = configuration
        self.logger = logger
        let store: Store
        do {
            store = try Store(path: configuration.storePath, seed: configuration.seed)
        } catch {
            throw ServiceError(.store, error.description)
        }
        do {
            context = try Context()
            commands = try context.makeSocket(.router)
            events = try context.makeSocket(.pub)
            for socket in [commands, events] {
                try socket.setOption(.linger, Int32(configuration.lingerOnShutdown / .milliseconds(1)))
                try socket.setOption(.maxMessageSize, configuration.maximumMessageBytes)
            }
            try commands.setOption(.receiveHighWaterMark, 10_000)
            try commands.setOption(.sendHighWaterMark, 10_000)
            // Dead peers are noticed without traffic of our own.
            try commands.setOption(.heartbeatInterval, 5_000)
            try commands.setOption(.heartbeatTimeout, 15_000)
            try events.setOption(.sendHighWaterMark, configuration.subscriberHighWaterMark)
            try events.setOption(.heartbeatInterval, 5_000)
            try events.setOption(.heartbeatTimeout, 15_000)
        } catch {
            throw ServiceError(.sockets, "could not set up ZeroMQ: \(error)")
        }
        do {
            try StateService.bind(commands, configuration.commandEndpoint, role: "command")
            try StateService.bind(events, configuration.eventsEndpoint, role: "events")
            boundEndpoints = [try commands.lastEndpoint, try events.lastEndpoint]
        } catch let error as ServiceError {
            commands.close()
            events.close()
            throw error
        } catch {
            throw ServiceError(.sockets, "\(error)")
        }
        let start = startedAt
        let endpoints = boundEndpoints
        let version = configuration.version
        do {
            handler = try CommandHandler(store: store, seed: configuration.seed, logger: logger) {
                CommandHandler.StatusInfo(
                    version: version,
                    uptimeSeconds: Double((ContinuousClock.now - start) / .milliseconds(1)) / 1000,
                    endpoints: endpoints)
            }
        } catch {
            commands.close()
            events.close()
            throw ServiceError(.store, error.description)
        }
    }

    private static func bind(_ socket: Socket, _ endpoint: String, role: String) throws(ServiceError) {
        do {
            try socket.bind(endpoint)
        } catch {
            let advice: String
            switch error.code {
            case EADDRINUSE:
                advice =
                    "another process (perhaps another countries serve) is using it; stop it or pick another port"
            case EPROTONOSUPPORT, EINVAL:
                advice = "use tcp://HOST:PORT or ipc:///path"
            default:
                advice = "check the address"
            }
            throw ServiceError(
                .bind, "cannot bind the \(role) endpoint \(endpoint): \(error.message); \(advice)")
        }
    }

    /// The current state (for tests and the start-up log line).
    public var state: CountriesState { handler.state }

    /// Serves until `stop` becomes readable (a signal arrived; forever when nil), then closes the
    /// sockets with a bounded linger. The batch in hand is always finished first.
    public func run(stopOn stop: (any StopSource)?) throws(ServiceError) {
        logger.log(
            .info,
            "serving commands on \(boundEndpoints[0]), events on \(boundEndpoints[1]); store \(handler.storeDescription); seq \(handler.state.seq), \(handler.state.count) countries"
        )
        var poller = Poller()
        let commandItem = poller.add(commands)
        let stopItem = stop.map { poller.add(fileDescriptor: $0.fileDescriptor) }
        let interval = configuration.heartbeatInterval
        var nextHeartbeat = ContinuousClock.now
        var batch: [IncomingRequest] = []
        batch.reserveCapacity(configuration.maximumBatch)

        serving: while true {
            let now = ContinuousClock.now
            if now >= nextHeartbeat {
                publishHeartbeat()
                nextHeartbeat = now + interval
            }
            let timeout = max(0, Int((nextHeartbeat - now) / .milliseconds(1)) + 1)
            let ready: PollResult
            do {
                ready = try poller.poll(timeoutMilliseconds: timeout)
            } catch {
                throw ServiceError(.sockets, "polling failed: \(error)")
            }
            if ready.isInterrupted { continue }
            if ready.isReadable(commandItem) {
                readBatch(into: &batch)
                if !batch.isEmpty {
                    send(handler.handle(batch))
                    batch.removeAll(keepingCapacity: true)
                }
            }
            if let stopItem, ready.isReadable(stopItem), let stop {
                let received = stop.drain()
                if !received.isEmpty {
                    logger.log(.info, "\(stop.describe(received[0])): stopping at seq \(handler.state.seq)")
                    break serving
                }
            }
        }
        shutdown()
    }

    /// Reads every request already queued, up to the batch limit, without waiting.
    private func readBatch(into batch: inout [IncomingRequest]) {
        while batch.count < configuration.maximumBatch {
            let frames: [Data]?
            do {
                frames = try commands.receive(dontWait: true)
            } catch {
                logger.log(.error, "receiving a request failed: \(error)")
                return
            }
            guard let frames else { return }
            batch.append(StateService.split(frames))
        }
    }

    /// Splits a ROUTER message into its envelope (routing id(s) and the empty delimiter a REQ
    /// peer adds) and its body. A DEALER peer sends no delimiter: then the first frame alone is
    /// the envelope.
    static func split(_ frames: [Data]) -> IncomingRequest {
        if let delimiter = frames.firstIndex(where: \.isEmpty), delimiter > 0 {
            return IncomingRequest(
                envelope: Array(frames[...delimiter]), body: Array(frames[(delimiter + 1)...]))
        }
        return IncomingRequest(envelope: Array(frames.prefix(1)), body: Array(frames.dropFirst()))
    }

    private func send(_ outgoing: [Outgoing]) {
        for item in outgoing {
            switch item {
            case .reply(let envelope, let body):
                do {
                    // ROUTER drops a reply to a peer that has gone; it never blocks.
                    try commands.send(envelope + [body], dontWait: true)
                } catch {
                    logger.log(.warning, "sending a reply failed: \(error)")
                }
            case .publish(let event):
                publish(topic: event.topic.rawValue, body: event.encoded())
            }
        }
    }

    private func publishHeartbeat() {
        publish(topic: Topic.heartbeat.rawValue, body: Heartbeat(seq: handler.state.seq).encoded())
    }

    private func publish(topic: String, body: Data) {
        do {
            // PUB never blocks: a subscriber over its high-water mark misses the message and
            // notices the gap in seq.
            try events.send([Data(topic.utf8), body], dontWait: true)
        } catch {
            logger.log(.warning, "publishing \(topic) failed: \(error)")
        }
    }

    private func shutdown() {
        commands.close()
        events.close()
        context.terminate()
        logger.log(.info, "stopped at seq \(handler.state.seq)")
    }
}

@available(*, unavailable) extension StateService: Sendable {}

/// Something that tells the service loop to stop by becoming readable: the signal pipe in the
/// executable, a plain pipe in tests.
public protocol StopSource: AnyObject {
    /// Readable when the service should stop.
    var fileDescriptor: Int32 { get }
    /// Consumes what made it readable; the values name the reasons (signal numbers).
    func drain() -> [Int32]
}

extension StopSource {
    /// A reason for the log line.
    func describe(_ reason: Int32) -> String {
        switch reason {
        case SIGINT: return "SIGINT received"
        case SIGTERM: return "SIGTERM received"
        default: return "stop requested (\(reason))"
        }
    }
}

extension SignalPipe: StopSource {}

/// Why the service cannot start or go on.
public struct ServiceError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The part that failed.
    public enum Code: String, Sendable {
        /// The store cannot be opened or read.
        case store
        /// An endpoint cannot be bound.
        case bind
        /// ZeroMQ failed otherwise.
        case sockets
    }

    /// The part that failed.
    public var code: Code
    /// What went wrong and what to do.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
