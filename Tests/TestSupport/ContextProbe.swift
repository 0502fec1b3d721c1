import Foundation
import SystemSupport
import Testing
import ZeroMQ

/// Whether `context`'s I/O thread still carries messages: a REQ and a REP over tcp in it
/// exchange one within five seconds (scaled by the slowdown).
///
/// libzmq's I/O thread stops for good when a socket monitor's event finds no room (see
/// `Socket.startMonitor`), and every tcp and ipc socket of the context with it.
public func carriesMessages(_ context: Context) throws -> Bool {
    let reply = try context.makeSocket(.rep)
    defer { reply.close() }
    try reply.setOption(.linger, 0)
    try reply.setOption(.receiveTimeout, Int32(5_000 * testSlowdown))
    try reply.bind("tcp://127.0.0.1:*")
    let request = try context.makeSocket(.req)
    defer { request.close() }
    try request.setOption(.linger, 0)
    try request.connect(try reply.lastEndpoint)
    _ = try request.send([Data("ping".utf8)], dontWait: true)
    return try reply.receive() == [Data("ping".utf8)]
}

/// Whether `context` still carries messages (``carriesMessages(_:)``). When it does not, the
/// failure is recorded, and the context and `objects` (its sockets, their owners) are kept alive
/// until the process ends: a context whose I/O thread has stopped cannot be closed, since
/// stopping a monitor or terminating the context waits for that thread for good, and the test
/// would hang in its cleanup instead of failing.
public func expectCarriesMessages(
    _ context: Context, abandoning objects: AnyObject..., sourceLocation: SourceLocation = #_sourceLocation
) throws -> Bool {
    if try carriesMessages(context) { return true }
    Issue.record("the context's I/O thread stopped", sourceLocation: sourceLocation)
    abandoned.withLock { $0.append(contentsOf: [context] + objects) }
    return false
}

private let abandoned = Locked<[AnyObject]>([])
