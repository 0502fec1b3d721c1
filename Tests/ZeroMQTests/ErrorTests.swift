import Foundation
import Testing
import ZeroMQ

@Suite("Errors")
struct ErrorTests {
    /// The ZMQError `body` throws, or nil.
    private func zmqError(_ body: () throws(ZMQError) -> Void) -> ZMQError? {
        do {
            try body()
            return nil
        } catch {
            return error
        }
    }

    @Test("Binding a malformed endpoint says which call failed and why")
    func badEndpoint() throws {
        let context = try Context()
        let socket = try context.makeSocket(.rep)

        let invalid = try #require(zmqError { () throws(ZMQError) in try socket.bind("tcp://nonsense") })
        #expect(invalid.code == EINVAL)
        #expect(invalid.operation == "bind(tcp://nonsense)")
        #expect(invalid.message == "Invalid argument")
        #expect(invalid.description == "bind(tcp://nonsense) failed: Invalid argument")

        let unknown = try #require(zmqError { () throws(ZMQError) in try socket.bind("bogus://x") })
        #expect(unknown.code != 0)
        #expect(unknown.message == "Protocol not supported")
        #expect(!unknown.isAgain && !unknown.isInterrupted && !unknown.isTerminated)
    }

    @Test("Binding the same TCP port twice fails with EADDRINUSE")
    func addressInUse() throws {
        let context = try Context()
        let first = try context.makeSocket(.rep)
        let second = try context.makeSocket(.rep)
        try first.bind("tcp://127.0.0.1:*")
        let endpoint = try first.lastEndpoint

        let error = try #require(zmqError { () throws(ZMQError) in try second.bind(endpoint) })
        #expect(error.code == EADDRINUSE)
        #expect(error.operation == "bind(\(endpoint))")
        #expect(error.description == "bind(\(endpoint)) failed: Address already in use")
    }

    @Test("A closed socket throws ENOTSOCK and closing again is harmless")
    func closedSocket() throws {
        let context = try Context()
        let socket = try context.makeSocket(.pair)
        socket.close()
        socket.close()

        let error = try #require(zmqError { () throws(ZMQError) in try socket.bind("inproc://closed") })
        #expect(error.code == ENOTSOCK)
        #expect(error.message == "Socket operation on non-socket")
    }

    @Test("Error predicates match their codes")
    func predicates() {
        #expect(ZMQError(code: EAGAIN, operation: "x").isAgain)
        #expect(ZMQError(code: EINTR, operation: "x").isInterrupted)
        #expect(ZMQError(code: EAGAIN, operation: "x") == ZMQError(code: EAGAIN, operation: "x"))
        #expect(ZMQError(code: EAGAIN, operation: "x") != ZMQError(code: EAGAIN, operation: "y"))
    }

    @Test("The library version is the one we build against")
    func version() {
        let version = ZMQVersion.current
        #expect(version.major == 4)
        #expect(ZMQVersion.string == "\(version.major).\(version.minor).\(version.patch)")
    }
}
