import CountriesCore
import Foundation
import SystemSupport
import ZeroMQ

/// An in-process stand-in for the service's command socket: a ROUTER on a thread of its own
/// that applies each toggle to a state of the standard seed and replies as the service does,
/// refusing every toggle of one row with `conflict`. REQ and DEALER peers alike.
final class ToggleServer: Sendable {
    let endpoint: String
    private let stopping = Locked(false)
    private let done = DispatchSemaphore(value: 0)
    /// Requests answered so far.
    let answered = Locked(0)

    /// Binds `endpoint` and serves until ``stop()``; toggles of row `refusing` are refused.
    init(endpoint: String, refusing refused: Int? = nil) throws {
        self.endpoint = endpoint
        let bound = DispatchSemaphore(value: 0)
        let failure = Locked<String?>(nil)
        let (stopping, done, answered) = (stopping, done, answered)
        Thread {
            defer { done.signal() }
            do {
                let context = try Context()
                defer { context.terminate() }
                let socket = try context.makeSocket(.router)
                defer { socket.close() }
                try socket.setOption(.linger, 0)
                try socket.setOption(.receiveTimeout, 20)
                try socket.bind(endpoint)
                bound.signal()
                var state = CountriesState(countries: SeedList.standard, seq: 0)
                while !stopping.current {
                    guard let frames = try socket.receive(), frames.count >= 2, let body = frames.last else {
                        continue
                    }
                    var reply = Reply(
                        error: CountriesError(.badRequest, "the test server takes only toggles"))
                    if let request = try? Request.decode(body), case .change(let change) = request.command {
                        if case .toggle(.index(let index), _) = change, index == refused {
                            reply = Reply(
                                error: CountriesError(.conflict, "the test server refuses row \(index)"))
                        } else if let result = try? state.apply(change, seed: SeedList.standard) {
                            reply = result.reply
                        }
                    }
                    // Counted before it goes: a client that has its reply sees it counted.
                    answered.withLock { $0 += 1 }
                    try socket.send(Array(frames.dropLast()), then: reply.encoded())
                }
            } catch {
                failure.withLock { $0 = "\(error)" }
                bound.signal()
            }
        }.start()
        bound.wait()
        if let message = failure.current { throw LoadGenerationTestError(message) }
    }

    /// Stops serving and waits for the thread to close its socket.
    func stop() {
        stopping.withLock { $0 = true }
        done.wait()
    }
}
