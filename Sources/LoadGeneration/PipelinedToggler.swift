import CountriesCore
import Foundation
import ZeroMQ

/// A pipelined toggler: a DEALER socket keeping `window` toggles in flight until a deadline,
/// counting what was answered, what was refused, and the longest wait between two replies (a
/// service that stalls shows there, whatever the machine's load).
public struct PipelinedToggler: Sendable {
    /// What one run measured.
    public struct Outcome: Sendable {
        /// Toggles answered `ok`.
        public var ok = 0
        /// Replies that were not `ok` (or not a reply at all).
        public var refused = 0
        /// The longest wait between two replies (or from the start to the first).
        public var longestGap = Duration.zero
        /// Why the run ended early: a socket error, or no reply for `silenceLimit`.
        public var error: String?
    }

    /// The service's command endpoint.
    public var endpoint: String
    /// Toggles in flight at once.
    public var window: Int
    /// How many rows the service has: toggle n is of row n modulo this.
    public var countries: Int
    /// This client's number, part of every request id.
    public var client: Int
    /// How long without a reply, toggles in flight, ends the run with an error.
    public var silenceLimit: Duration

    /// A toggler; `run` does the work.
    public init(
        endpoint: String, window: Int, countries: Int, client: Int, silenceLimit: Duration = .seconds(20)
    ) {
        self.endpoint = endpoint
        self.window = window
        self.countries = countries
        self.client = client
        self.silenceLimit = silenceLimit
    }

    /// Sends toggles until `stopAt`, then waits for those in flight; on a context of its own.
    public func run(until stopAt: ContinuousClock.Instant) -> Outcome {
        // Fresh ids every run: a reused id would be answered from memory, not applied.
        let run = UUID().uuidString.prefix(8)
        var outcome = Outcome()
        do {
            let context = try Context()
            defer { context.terminate() }
            let socket = try context.makeSocket(.dealer)
            defer { socket.close() }
            try socket.setOption(.linger, 0)
            try socket.connect(endpoint)
            var inFlight = 0
            var sent = 0
            var poller = Poller()
            let item = poller.add(socket)
            var lastReply = ContinuousClock.now
            while true {
                let stopping = ContinuousClock.now >= stopAt
                if stopping && inFlight == 0 { break }
                while !stopping && inFlight < window {
                    let request = Request(
                        id: "\(run)-\(client)-\(sent)", command: .change(.toggle(.index(sent % countries))))
                    guard try socket.send([request.encoded()], dontWait: true) else { break }
                    sent += 1
                    inFlight += 1
                }
                let ready = try poller.poll(timeoutMilliseconds: 100)
                if ready.isReadable(item) {
                    while let frames = try socket.receive(dontWait: true) {
                        inFlight -= 1
                        outcome.longestGap = max(outcome.longestGap, ContinuousClock.now - lastReply)
                        lastReply = ContinuousClock.now
                        if let body = frames.last, let reply = try? Reply.decode(body), reply.ok {
                            outcome.ok += 1
                        } else {
                            outcome.refused += 1
                        }
                    }
                }
                if ContinuousClock.now - lastReply > silenceLimit {
                    outcome.error = "no reply for \(silenceLimit) with \(inFlight) toggles in flight"
                    return outcome
                }
            }
        } catch {
            outcome.error = "\(error)"
        }
        return outcome
    }
}
