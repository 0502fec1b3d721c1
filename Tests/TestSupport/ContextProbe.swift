import Foundation
import SystemSupport
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

/// Keeps `objects` (a context, its sockets, their owners) alive until the process ends.
///
/// A context whose I/O thread has stopped cannot be closed: stopping a monitor or terminating
/// the context waits for that thread for good. A test that finds one records the failure and
/// abandons it, rather than hang in its cleanup.
public func abandon(_ objects: AnyObject...) {
    abandoned.withLock { $0.append(contentsOf: objects) }
}

private let abandoned = Locked<[AnyObject]>([])
