import CMicroHTTPD
@preconcurrency import Glibc

/// What the library's callbacks reach through their context pointer: the handler, the limits
/// and the connections' watch.
final class ServerContext: Sendable {
    let limits: HTTPServer.Limits
    let handler: @Sendable (HTTPRequest) -> HTTPResponse
    let watch: ConnectionWatch
    /// The connections each client holds, for ``HTTPServer/Limits/connectionsPerAddress``.
    let clients: ConnectionsPerClient

    init(limits: HTTPServer.Limits, handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse) {
        self.limits = limits
        self.handler = handler
        clients = ConnectionsPerClient(limit: max(0, limits.connectionsPerAddress))
        watch = ConnectionWatch(
            requestTimeout: limits.requestTimeout, keepAlive: limits.keepAlive, interval: limits.watchInterval
        )
    }
}

/// One request's progress, kept in the library's per-request pointer (retained there from its
/// request line until it completes). Touched only on the connection's server thread.
private final class RequestProgress {
    /// The request target as sent (path and query, not decoded).
    let target: String
    var headersSeen = false
    var hasBody = false
    var responder: HTTPResponder?

    init(target: String) {
        self.target = target
    }
}

/// The request line has come: its target is kept as sent, so the query is decoded by
/// ``HTTPRequest/queryArguments(of:)`` (the library's decoding reads `+` as a space).
let requestStarted:
    @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, OpaquePointer?) ->
        UnsafeMutableRawPointer? = { _, target, _ in
            Unmanaged.passRetained(RequestProgress(target: target.map { String(cString: $0) } ?? "/"))
                .toOpaque()
        }

private func value(_ connection: OpaquePointer?, _ kind: MHD_ValueKind, _ key: String) -> String? {
    MHD_lookup_connection_value(connection, kind, key).map { String(cString: $0) }
}

/// Whether to accept a connection from `address`: not while its client holds its share
/// (``ConnectionsPerClient``); the library refuses one past the connection limit itself.
let acceptPolicy: MHD_AcceptPolicyCallback = { context, address, _ in
    guard let context, let address, let group = ClientAddressGroup(address) else { return .YES }
    let server = Unmanaged<ServerContext>.fromOpaque(context).takeUnretainedValue()
    return server.clients.admits(group) ? .YES : .NO
}

let connectionNotified: MHD_NotifyConnectionCallback = { context, connection, _, code in
    guard let context else { return }
    let server = Unmanaged<ServerContext>.fromOpaque(context).takeUnretainedValue()
    if code.rawValue == 0 {  // MHD_CONNECTION_NOTIFY_STARTED
        server.watch.opened(connection, socket: countries_mhd_connection_fd(connection))
        if let address = countries_mhd_connection_address(connection), let group = ClientAddressGroup(address)
        {
            server.clients.opened(ConnectionWatch.key(connection), from: group)
        }
    } else {
        server.watch.closed(connection)
        server.clients.closed(ConnectionWatch.key(connection))
    }
}

let accessHandler: MHD_AccessHandlerCallback = {
    context, connection, url, method, _, _, uploadSize, requestContext in
    guard let context, let requestContext, let uploadSize else { return .NO }
    let server = Unmanaged<ServerContext>.fromOpaque(context).takeUnretainedValue()
    guard let pointer = requestContext.pointee else { return .NO }
    let progress = Unmanaged<RequestProgress>.fromOpaque(pointer).takeUnretainedValue()
    guard progress.headersSeen else {
        progress.headersSeen = true
        return .YES
    }
    if uploadSize.pointee > 0 {
        // No request carries a body: it is discarded as it arrives (nothing is kept) and the
        // request refused once it has been read (within the request timeout).
        progress.hasBody = true
        uploadSize.pointee = 0
        return .YES
    }
    if let responder = progress.responder {
        // Resumed: the answer has come. The responder stays watched until the request completes
        // (``requestCompleted``): forgotten here, a stop found the server drained while this
        // answer was queued and not yet written, and closed the connection without it.
        let response = responder.takeResponse() ?? .text(503, "no answer; try again")
        return queue(response, on: connection, server: server)
    }
    server.watch.requestRead(on: connection)
    if progress.hasBody {
        return queue(.text(413, "request bodies are not accepted"), on: connection, server: server)
    }
    let (headers, repeated) = headers(connection)
    if let problem = HTTPRequest.malformation(target: progress.target, repeatedHeaders: repeated) {
        return queue(.text(400, problem), on: connection, server: server)
    }
    let request = HTTPRequest(
        method: method.map { String(cString: $0) } ?? "",
        path: url.map { String(cString: $0) } ?? "/",
        query: HTTPRequest.queryArguments(of: progress.target),
        headers: headers)
    let response = server.handler(request)
    guard case .later(let start) = response else { return queue(response, on: connection, server: server) }
    let responder = HTTPResponder(connection: connection)
    guard server.watch.track(responder) else {
        return queue(.text(503, "the web process is stopping; try again"), on: connection, server: server)
    }
    progress.responder = responder
    responder.suspendUnlessAnswered()
    start(responder)
    return .YES
}

/// Every header, by its name in lowercase (a name given twice keeps its last value), and the
/// names given more than once.
private func headers(_ connection: OpaquePointer?) -> (headers: [String: String], repeated: Set<String>) {
    var found: [(String, String)] = []
    let collect: MHD_KeyValueIterator = { box, _, key, value in
        guard let box, let key else { return .YES }
        box.assumingMemoryBound(to: [(String, String)].self).pointee.append(
            (String(cString: key).lowercased(), value.map { String(cString: $0) } ?? ""))
        return .YES
    }
    _ = withUnsafeMutablePointer(to: &found) { pointer in
        MHD_get_connection_values(connection, .HEADER_KIND, collect, pointer)
    }
    var headers: [String: String] = [:]
    var repeated: Set<String> = []
    for (name, value) in found {
        if headers.updateValue(value, forKey: name) != nil { repeated.insert(name) }
    }
    return (headers, repeated)
}

let requestCompleted: MHD_RequestCompletedCallback = { context, connection, requestContext, _ in
    guard let context else { return }
    let server = Unmanaged<ServerContext>.fromOpaque(context).takeUnretainedValue()
    if let requestContext, let pointer = requestContext.pointee {
        let progress = Unmanaged<RequestProgress>.fromOpaque(pointer).takeRetainedValue()
        if let responder = progress.responder { server.watch.forget(responder) }
        requestContext.pointee = nil
    }
    server.watch.requestAnswered(on: connection)
}

private func queue(_ response: HTTPResponse, on connection: OpaquePointer?, server: ServerContext)
    -> MHD_Result
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
            lastEventID: value(connection, .HEADER_KIND, "Last-Event-ID"),
            connection: connection, socket: countries_mhd_connection_fd(connection))
        guard server.watch.track(stream) else {
            return queue(.text(503, "the web process is stopping; try again"), on: connection, server: server)
        }
        let box = Unmanaged.passRetained(StreamBox(stream: stream, server: server)).toOpaque()
        // MHD_SIZE_UNKNOWN: a chunked response as long as the stream lasts. The block size is
        // small: each response allocates (and zeroes) it, though a chunked body is read into the
        // connection's own buffer; 16 KiB cost 160 MiB at 10,000 pages.
        let made = MHD_create_response_from_callback(UInt64.max, 1_024, readStream, box, freeStream)
        guard let made else {
            Unmanaged<StreamBox>.fromOpaque(box).release()
            server.watch.forget(stream)
            return .NO
        }
        MHD_add_response_header(made, "Content-Type", "text/event-stream")
        MHD_add_response_header(made, "Cache-Control", "no-store")
        let result = MHD_queue_response(connection, 200, made)
        MHD_destroy_response(made)
        opened(stream)
        return result
    case .later:
        return queue(.text(500, "an answer cannot come later twice"), on: connection, server: server)
    }
}

/// What a stream's callbacks reach through the library's context pointer.
private final class StreamBox {
    let stream: EventStream
    let server: ServerContext
    init(stream: EventStream, server: ServerContext) {
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
    box.stream.released()
    box.server.watch.forget(box.stream)
}

/// MHD_RESPMEM_MUST_COPY (2): the library copies the body, so the Swift array may go.
private let copyTheBuffer = MHD_ResponseMemoryMode(rawValue: 2)!
