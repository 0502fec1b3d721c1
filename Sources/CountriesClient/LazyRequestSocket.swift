import CountriesCore
import Foundation
import ZeroMQ

/// The REQ socket of a Lazy Pirate client: made and connected on first use, thrown away after a
/// timeout (REQ cannot send again before it receives), closed with its owner.
///
/// A watch on the connect lives only while its owner reads it: from the connect to the first
/// answer. libzmq tells a watch of every reconnect, and once about 2,000 are left unread, the
/// context's I/O thread waits for a reader, and every socket of the process (a view's
/// subscription too) goes silent for good (see ``Socket/startMonitor(_:kinds:)``).
final class LazyRequestSocket {
    private let context: Context
    private let endpoint: String
    private let security: ClientSecurity?
    /// Whether a new socket gets a ``ConnectionWatch``: only for an owner that reads it.
    private let watchesConnect: Bool
    /// Options each new socket gets before it connects (libzmq reads them at the connect).
    var connectOptions: [(option: SocketOption<Int32>, value: Int32)] = []
    /// The socket and the watch on its connect, if one is open.
    private(set) var current: (socket: Socket, watch: ConnectionWatch?)?

    init(context: Context, endpoint: String, security: ClientSecurity?, watchesConnect: Bool) {
        self.context = context
        self.endpoint = endpoint
        self.security = security
        self.watchesConnect = watchesConnect
    }

    deinit {
        discard()
    }

    /// The open socket, or a new one: linger 0 (a dropped socket must not hold up shutdown with an
    /// unanswered request), replies up to ``CountriesCore/Reply/maximumBytes`` (the largest list,
    /// about 16 MB: a hostile service's 60 MB reply of `[{},...]` took 895 MB parsed), CURVE if
    /// given; with a watch on its connect where a refusal proves nothing listens (ipc, loopback
    /// tcp), so that one is seen at once. Elsewhere a failed connect may be a network down for a
    /// moment, which the tries and their timeout are there to wait out.
    func connected() throws(ZMQError) -> (socket: Socket, watch: ConnectionWatch?) {
        if let current { return current }
        let socket = try context.makeSocket(.req)
        try socket.setOption(.linger, 0)
        try socket.setOption(.maxMessageSize, Int64(Reply.maximumBytes))
        if let security { try security.apply(to: socket) }
        for (option, value) in connectOptions { try socket.setOption(option, value) }
        let watch =
            watchesConnect && Endpoint.refusalIsConclusive(endpoint)
            ? try ConnectionWatch(socket, context: context) : nil
        try socket.connect(endpoint)
        current = (socket, watch)
        return (socket, watch)
    }

    /// The socket has answered, so it is connected: its watch has nothing more to tell, and goes.
    func answered() {
        guard let (socket, watch) = current, let watch else { return }
        watch.close()
        current = (socket, nil)
    }

    /// Closes the socket and its watch; the next ``connected()`` makes a fresh one.
    func discard() {
        current?.watch?.close()
        current?.socket.close()
        current = nil
    }
}

@available(*, unavailable) extension LazyRequestSocket: Sendable {}
