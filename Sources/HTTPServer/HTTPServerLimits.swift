extension HTTPServer {
    /// The bounds of one server.
    public struct Limits: Sendable {
        /// Connections open at once (idle, streaming or waiting); more are refused by the
        /// library. The server raises its descriptor limit to hold them, or holds fewer (see
        /// ``HTTPServer/connectionLimit``).
        public var connections: Int
        /// Connections open at once from one client, so that one client cannot hold every
        /// slot (0: no limit). A client is an IPv4 address, or an IPv6 address's /64
        /// (``ClientAddressGroup``): a host picks any address in its /64.
        public var connectionsPerAddress: Int
        /// Bytes for one connection's request line and headers (and its send buffer).
        public var memoryPerConnection: Int
        /// Bytes queued for one event stream, behind the message being sent, before it is
        /// dropped.
        public var streamBuffer: Int
        /// Seconds a connection may make no progress while the server serves it.
        public var idleTimeoutSeconds: Int
        /// How long a connection has to send a whole request (line, headers and any body), and
        /// how long an idle keep-alive connection stays: against headers sent a byte at a time.
        public var requestTimeout: Duration
        /// How often an idle event stream sends a comment.
        public var keepAlive: Duration
        /// How often the server looks for closed pages and late requests.
        public var watchInterval: Duration
        /// Event-loop threads (each serves any number of connections).
        public var threads: Int

        /// Creates limits.
        public init(
            connections: Int = 16_384, connectionsPerAddress: Int = 256, memoryPerConnection: Int = 16_384,
            streamBuffer: Int = 262_144, idleTimeoutSeconds: Int = 60,
            requestTimeout: Duration = .seconds(10),
            keepAlive: Duration = .seconds(15), watchInterval: Duration = .milliseconds(500), threads: Int = 2
        ) {
            self.connections = connections
            self.connectionsPerAddress = connectionsPerAddress
            self.memoryPerConnection = memoryPerConnection
            self.streamBuffer = streamBuffer
            self.idleTimeoutSeconds = idleTimeoutSeconds
            self.requestTimeout = requestTimeout
            self.keepAlive = keepAlive
            self.watchInterval = watchInterval
            self.threads = threads
        }
    }
}
