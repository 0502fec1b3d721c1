import CMicroHTTPD
import Foundation
@preconcurrency import Glibc

/// A small HTTP server on libmicrohttpd, with a thread per connection (so an event stream's
/// reader may wait): it answers every request with what `handler` returns. It knows nothing of
/// countries.
///
/// Bounds: at most `Limits.connections` connections at once (more are refused by the library),
/// `Limits.memoryPerConnection` bytes per connection for the request line and headers (a
/// larger request gets 431/413 from the library), no request bodies (413), and
/// `Limits.streamBuffer` bytes queued per event stream (see ``EventStream``).
public final class HTTPServer: @unchecked Sendable {
    // @unchecked: `daemon` is set in init and cleared in stop(); `streams` is under `lock`.

    /// The bounds of one server.
    public struct Limits: Sendable {
        /// Connections open at once.
        public var connections: Int
        /// Bytes for one connection's request line and headers.
        public var memoryPerConnection: Int
        /// Bytes queued for one event stream before it is dropped.
        public var streamBuffer: Int
        /// Seconds a connection may stay idle (event streams send a keep-alive well before).
        public var idleTimeoutSeconds: Int
        /// How often an idle event stream sends a comment.
        public var keepAlive: Duration

        /// Creates limits.
        public init(
            connections: Int = 256, memoryPerConnection: Int = 16_384, streamBuffer: Int = 262_144,
            idleTimeoutSeconds: Int = 60, keepAlive: Duration = .seconds(15)
        ) {
            self.connections = connections
            self.memoryPerConnection = memoryPerConnection
            self.streamBuffer = streamBuffer
            self.idleTimeoutSeconds = idleTimeoutSeconds
            self.keepAlive = keepAlive
        }
    }

    /// Why the server did not start.
    public struct StartError: Error, Sendable, CustomStringConvertible {
        /// What went wrong and what to do.
        public var description: String
    }

    /// The port listened on.
    public private(set) var port: Int = 0
    let limits: Limits
    let handler: @Sendable (HTTPRequest) -> HTTPResponse
    private var daemon: OpaquePointer?
    private let lock = NSLock()
    private var streams: [ObjectIdentifier: EventStream] = [:]

    /// Starts listening on `host` (an IPv4 or IPv6 literal) and `port` (0: any free one).
    public init(
        host: String, port: Int, limits: Limits = Limits(),
        handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse
    ) throws(StartError) {
        self.limits = limits
        self.handler = handler
        var storage = sockaddr_storage()
        let parsed = withUnsafeMutablePointer(to: &storage) { pointer -> Bool in
            pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                v4.pointee.sin_family = sa_family_t(AF_INET)
                v4.pointee.sin_port = in_port_t(UInt16(port).bigEndian)
                return inet_pton(AF_INET, host, &v4.pointee.sin_addr) == 1
            }
        }
        if !parsed {
            storage = sockaddr_storage()
            let parsed6 = withUnsafeMutablePointer(to: &storage) { pointer -> Bool in
                pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                    v6.pointee.sin6_family = sa_family_t(AF_INET6)
                    v6.pointee.sin6_port = in_port_t(UInt16(port).bigEndian)
                    return inet_pton(AF_INET6, host, &v6.pointee.sin6_addr) == 1
                }
            }
            guard parsed6 else {
                throw StartError(
                    description: "\(host) is not an IP address; give one such as 127.0.0.1 or ::1")
            }
        }
        let context = Unmanaged.passUnretained(self).toOpaque()
        let started = withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                countries_mhd_start(
                    address, accessHandler, context, requestCompleted, UInt32(limits.connections), 0,
                    limits.memoryPerConnection, UInt32(limits.idleTimeoutSeconds))
            }
        }
        guard let started else {
            throw StartError(
                description:
                    "cannot listen on \(host):\(port) (in use, or not an address of this machine); pick another --listen"
            )
        }
        daemon = started
        self.port = Int(countries_mhd_port(started))
    }

    /// Ends every event stream and stops the server (waits for its threads).
    public func stop() {
        lock.lock()
        let open = Array(streams.values)
        lock.unlock()
        for stream in open { stream.end() }
        if let daemon { MHD_stop_daemon(daemon) }
        daemon = nil
    }

    /// The number of event streams open now.
    public var openStreams: Int {
        lock.lock()
        defer { lock.unlock() }
        return streams.count
    }

    deinit { stop() }

    func track(_ stream: EventStream) {
        lock.lock()
        streams[ObjectIdentifier(stream)] = stream
        lock.unlock()
    }

    func forget(_ stream: EventStream) {
        lock.lock()
        streams[ObjectIdentifier(stream)] = nil
        lock.unlock()
    }
}

/// Marks a request whose headers have been seen once (MHD calls the handler again for a body).
private nonisolated(unsafe) let seenMarker = UnsafeMutableRawPointer(bitPattern: 1)!
/// Marks a request that came with a body.
private nonisolated(unsafe) let bodyMarker = UnsafeMutableRawPointer(bitPattern: 2)!

private func value(_ connection: OpaquePointer?, _ kind: MHD_ValueKind, _ key: String) -> String? {
    MHD_lookup_connection_value(connection, kind, key).map { String(cString: $0) }
}

private let accessHandler: MHD_AccessHandlerCallback = {
    context, connection, url, method, _, _, uploadSize, requestContext in
    guard let context, let requestContext, let uploadSize else { return .NO }
    let server = Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue()
    if requestContext.pointee == nil {
        requestContext.pointee = seenMarker
        return .YES
    }
    if uploadSize.pointee > 0 {
        // No request carries a body: it is discarded as it arrives (nothing is kept) and the
        // request refused once it has been read.
        requestContext.pointee = bodyMarker
        uploadSize.pointee = 0
        return .YES
    }
    if requestContext.pointee == bodyMarker {
        return queue(.text(413, "request bodies are not accepted"), on: connection, server: server)
    }
    var query: [String: String] = [:]
    let collect: MHD_KeyValueIterator = { box, _, key, value in
        guard let box, let key else { return .YES }
        let query = box.assumingMemoryBound(to: [String: String].self)
        query.pointee[String(cString: key)] = value.map { String(cString: $0) } ?? ""
        return .YES
    }
    _ = withUnsafeMutablePointer(to: &query) { pointer in
        MHD_get_connection_values(connection, .GET_ARGUMENT_KIND, collect, pointer)
    }
    var headers: [String: String] = [:]
    let collectHeader: MHD_KeyValueIterator = { box, _, key, value in
        guard let box, let key else { return .YES }
        let headers = box.assumingMemoryBound(to: [String: String].self)
        headers.pointee[String(cString: key).lowercased()] = value.map { String(cString: $0) } ?? ""
        return .YES
    }
    _ = withUnsafeMutablePointer(to: &headers) { pointer in
        MHD_get_connection_values(connection, .HEADER_KIND, collectHeader, pointer)
    }
    let request = HTTPRequest(
        method: method.map { String(cString: $0) } ?? "",
        path: url.map { String(cString: $0) } ?? "/",
        query: query,
        lastEventID: value(connection, .HEADER_KIND, "Last-Event-ID"),
        authorization: value(connection, .HEADER_KIND, "Authorization"),
        headers: headers)
    return queue(server.handler(request), on: connection, server: server)
}

private let requestCompleted: MHD_RequestCompletedCallback = { _, _, _, _ in }

private func queue(_ response: HTTPResponse, on connection: OpaquePointer?, server: HTTPServer) -> MHD_Result
{
    switch response {
    case .content(let status, let contentType, let body, let headers):
        let made = body.withUnsafeBytes { raw in
            MHD_create_response_from_buffer(
                body.count, UnsafeMutableRawPointer(mutating: raw.baseAddress), copyTheBuffer)
        }
        guard let made else { return .NO }
        MHD_add_response_header(made, "Content-Type", contentType)
        MHD_add_response_header(made, "Cache-Control", "no-store")
        MHD_add_response_header(made, "X-Content-Type-Options", "nosniff")
        // No page of this server is anyone's referrer or frame.
        MHD_add_response_header(made, "Referrer-Policy", "no-referrer")
        MHD_add_response_header(made, "X-Frame-Options", "DENY")
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            MHD_add_response_header(made, name, value)
        }
        let result = MHD_queue_response(connection, UInt32(status), made)
        MHD_destroy_response(made)
        return result
    case .eventStream(let opened):
        let stream = EventStream(
            capacity: server.limits.streamBuffer,
            lastEventID: value(connection, .HEADER_KIND, "Last-Event-ID"), keepAlive: server.limits.keepAlive)
        let box = Unmanaged.passRetained(StreamBox(stream: stream, server: server)).toOpaque()
        let made = MHD_create_response_from_callback(UInt64.max, 4096, readStream, box, freeStream)
        guard let made else {
            Unmanaged<StreamBox>.fromOpaque(box).release()
            return .NO
        }
        server.track(stream)
        MHD_add_response_header(made, "Content-Type", "text/event-stream")
        MHD_add_response_header(made, "Cache-Control", "no-store")
        let result = MHD_queue_response(connection, 200, made)
        MHD_destroy_response(made)
        opened(stream)
        return result
    }
}

/// What a stream's callbacks reach through MHD's context pointer.
private final class StreamBox {
    let stream: EventStream
    unowned let server: HTTPServer
    init(stream: EventStream, server: HTTPServer) {
        self.stream = stream
        self.server = server
    }
}

private let readStream: MHD_ContentReaderCallback = { context, _, buffer, maximum in
    guard let context, let buffer else { return -2 }
    let box = Unmanaged<StreamBox>.fromOpaque(context).takeUnretainedValue()
    // -1 ends the stream normally; -2 (MHD_CONTENT_READER_END_WITH_ERROR) is never needed.
    guard let count = box.stream.read(into: buffer, maximum: maximum) else { return -1 }
    return count
}

private let freeStream: MHD_ContentReaderFreeCallback = { context in
    guard let context else { return }
    let box = Unmanaged<StreamBox>.fromOpaque(context).takeRetainedValue()
    box.stream.end()
    box.server.forget(box.stream)
}

/// MHD_RESPMEM_MUST_COPY (2): the library copies the body, so the Swift array may go.
private let copyTheBuffer = MHD_ResponseMemoryMode(rawValue: 2)!
