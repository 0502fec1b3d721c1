import CCurl
import Foundation

/// libcurl's global state, set up once for the process before the first handle (the first use
/// of this constant does it, thread-safely, as Swift initializes globals once).
private let curlGlobalInit: CURLcode = curl_global_init(Int(CURL_GLOBAL_DEFAULT))

/// One libcurl easy handle that POSTs to etcd, reused call after call so its connection is kept
/// alive: JSON to the gateway over HTTP/1.1, or a gRPC call over HTTP/2 (``Wire``). The body
/// goes through a read callback, so the transfer knows whether any of it left: a failure before
/// that is "nothing was sent" (docs/ARCHITECTURE.md, the etcd classification), and curl cannot
/// quietly send a txn again on a new connection, as it would with a body it could rewind.
final class CurlTransfer {
    /// What the handle speaks. etcd serves both on its client port; a connection carries one.
    enum Wire {
        /// JSON to the gateway's `/v3/...` paths.
        case gatewayJSON
        /// gRPC (HTTP/2 without TLS by prior knowledge, with TLS by ALPN), to etcd's own API.
        case grpc
    }

    /// What one POST came to.
    struct Outcome {
        /// libcurl's result; `CURLE_OK` when an HTTP answer came, whatever its status.
        var result: CURLcode
        /// libcurl's words for a failure.
        var errorText: String
        /// The HTTP status (0 when none came).
        var status: Int
        /// The body received.
        var body: [UInt8]
        /// Whether libcurl took any of the body to send: false means etcd cannot have acted.
        var bodySent: Bool
        /// A gRPC call's `grpc-status` (a trailer, or a header of an answer without a message);
        /// nil when none came.
        var grpcStatus: Int64? = nil
        /// A gRPC call's `grpc-message`, percent-decoded.
        var grpcMessage = ""
        /// The answer's HTTP major version (0 when none came).
        var httpMajorVersion = 0
        /// The connections the transfer opened: 0 when it reused one.
        var newConnections = 0
    }

    /// What the callbacks share with the call, behind the pointer libcurl hands back.
    final class Exchange {
        var upload: [UInt8] = []
        var uploadOffset = 0
        var bodySent = false
        var received: [UInt8] = []
        /// Most bytes of buffer kept between answers (``clearReceived()``).
        static let keptBufferBytes = 1 << 20
        /// Most bytes kept from an answer; more fails the transfer (no answer of etcd's is close).
        var receiveLimit = 256 << 20

        /// Empties ``received``, keeping its buffer for the next answer only when it is small:
        /// the buffer of one large answer (a snapshot's pages, megabytes of base64) stayed with
        /// the connection for the life of the process, on each of a replica's connections.
        func clearReceived() {
            if received.capacity > Self.keptBufferBytes {
                received = []
            } else {
                received.removeAll(keepingCapacity: true)
            }
        }
        /// Set for the watcher, which drains `received` as it goes.
        var stopRequested = false
        var grpcStatus: Int64?
        var grpcMessage = ""
    }

    private(set) var handle: UnsafeMutableRawPointer
    let exchange = Exchange()
    let wire: Wire
    /// The endpoints this handle holds an HTTP/2 connection to, as far as it knows (``grpcCall``).
    private var http2Endpoints: Set<String> = []
    private let baseHeaderLines: [String]
    private var headers: UnsafeMutablePointer<curl_slist>?
    private var leaderHeaders: UnsafeMutablePointer<curl_slist>?
    /// etcd's auth token, sent on every call until it changes (nil: none): as `Authorization` to
    /// the gateway, as the `token` metadata in gRPC.
    var authorization: String? {
        didSet { if authorization != oldValue { rebuildHeaders() } }
    }
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)

    /// A handle for `wire` with these headers, connect timeout and TLS files; nil when libcurl
    /// cannot make one.
    init?(
        connectTimeout: Duration, headers extra: [String], security: EtcdSecurity = EtcdSecurity(),
        wire: Wire = .gatewayJSON
    ) {
        guard curlGlobalInit == CURLE_OK, let handle = curl_easy_init() else { return nil }
        self.handle = handle
        self.wire = wire
        switch wire {
        case .gatewayJSON:
            // Expect: off, or curl waits a second for "100 Continue" before a body over 1 KB.
            baseHeaderLines = ["Content-Type: application/json", "Expect:"] + extra
        case .grpc:
            // The message is not compressed, and none is asked for back.
            baseHeaderLines = ["Content-Type: application/grpc", "TE: trailers"] + extra
            _ = ccurl_setopt_pointer(
                handle, CURLOPT_HEADERDATA, Unmanaged.passUnretained(exchange).toOpaque())
            _ = ccurl_setopt_data_callback(handle, CURLOPT_HEADERFUNCTION, Self.header)
        }
        rebuildHeaders()
        // libcurl copies the strings; an https:// endpoint is checked against the CA (and its
        // name or IP against the certificate), a plain http:// one ignores these.
        if let file = security.certificateAuthorityFile {
            _ = ccurl_setopt_string(handle, CURLOPT_CAINFO, file)
        }
        if let file = security.certificateFile { _ = ccurl_setopt_string(handle, CURLOPT_SSLCERT, file) }
        if let file = security.keyFile { _ = ccurl_setopt_string(handle, CURLOPT_SSLKEY, file) }
        let context = Unmanaged.passUnretained(exchange).toOpaque()
        _ = ccurl_setopt_long(handle, CURLOPT_POST, 1)
        _ = ccurl_setopt_long(handle, CURLOPT_NOSIGNAL, 1)  // no SIGALRM in a threaded process
        _ = ccurl_setopt_long(handle, CURLOPT_TCP_NODELAY, 1)
        // A peer that vanished without a FIN (a partition) is noticed on an idle stream too.
        _ = ccurl_setopt_long(handle, CURLOPT_TCP_KEEPALIVE, 1)
        _ = ccurl_setopt_long(handle, CURLOPT_TCP_KEEPIDLE, 2)
        _ = ccurl_setopt_long(handle, CURLOPT_TCP_KEEPINTVL, 1)
        _ = ccurl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(connectTimeout))
        _ = ccurl_setopt_pointer(handle, CURLOPT_READDATA, context)
        _ = ccurl_setopt_pointer(handle, CURLOPT_WRITEDATA, context)
        _ = ccurl_setopt_data_callback(handle, CURLOPT_READFUNCTION, Self.read)
        _ = ccurl_setopt_data_callback(handle, CURLOPT_WRITEFUNCTION, Self.write)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        _ = ccurl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer)
    }

    deinit {
        curl_easy_cleanup(handle)
        curl_slist_free_all(headers)
        curl_slist_free_all(leaderHeaders)
        errorBuffer.deallocate()
    }

    /// The header lists from the base lines and the token. etcd's require-leader (`hasleader:
    /// true` metadata, `Grpc-Metadata-hasleader` through the gateway) makes a member without a
    /// leader refuse at once (a txn is then never proposed) and end a watch instead of going
    /// silent. Not on every call: it refuses serializable reads and status too, which are the
    /// calls that work without a leader.
    private func rebuildHeaders() {
        curl_slist_free_all(headers)
        curl_slist_free_all(leaderHeaders)
        headers = nil
        leaderHeaders = nil
        var lines = baseHeaderLines
        // The gateway hands `Authorization` to etcd as the token (its swagger field name).
        if let authorization {
            lines.append(wire == .grpc ? "token: \(authorization)" : "Authorization: \(authorization)")
        }
        for line in lines {
            headers = curl_slist_append(headers, line)
            leaderHeaders = curl_slist_append(leaderHeaders, line)
        }
        leaderHeaders = curl_slist_append(
            leaderHeaders, wire == .grpc ? "hasleader: true" : "Grpc-Metadata-hasleader: true")
    }

    /// The major version of libcurl's `CURLINFO_HTTP_VERSION`.
    private static func majorVersion(_ version: Int) -> Int {
        switch version {
        case Int(CURL_HTTP_VERSION_1_0), Int(CURL_HTTP_VERSION_1_1): 1
        case Int(CURL_HTTP_VERSION_2_0): 2
        case Int(CURL_HTTP_VERSION_3): 3
        default: 0
        }
    }

    static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return max(1, Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000))
    }

    /// Sets the URL and the body of the next transfer, with the require-leader header or not,
    /// and clears the last one's answer.
    func prepare(url: String, body: [UInt8], requireLeader: Bool) {
        _ = ccurl_setopt_slist(handle, CURLOPT_HTTPHEADER, requireLeader ? leaderHeaders : headers)
        exchange.upload = body
        exchange.uploadOffset = 0
        exchange.bodySent = false
        exchange.clearReceived()
        exchange.stopRequested = false
        exchange.grpcStatus = nil
        exchange.grpcMessage = ""
        errorBuffer[0] = 0
        _ = ccurl_setopt_string(handle, CURLOPT_URL, url)
        _ = ccurl_setopt_offset(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count))
    }

    /// POSTs `body` to `url` and waits for the whole answer, at most `timeout`.
    func post(url: String, body: [UInt8], requireLeader: Bool, timeout: Duration) -> Outcome {
        prepare(url: url, body: body, requireLeader: requireLeader)
        _ = ccurl_setopt_long(handle, CURLOPT_TIMEOUT_MS, Self.milliseconds(timeout))
        let result = curl_easy_perform(handle)
        return outcome(result)
    }

    /// Sets up a gRPC stream of `method` at `endpoint` with the framed messages `body`, for a
    /// multi handle to drive: with the require-leader metadata, no time limit, and a connection
    /// of its own that is closed after.
    /// A fresh connection needs no guess about reuse (``grpcCall``), and a stream that ends or is
    /// stopped leaves nothing behind that libcurl 7.88 would fail the next one on. The request
    /// body ends after `body`: etcd's watch goes on after its client stops sending.
    func prepareStream(endpoint: String, method: String, body: [UInt8]) {
        let plain = !endpoint.hasPrefix("https://")
        _ = ccurl_setopt_long(
            handle, CURLOPT_HTTP_VERSION,
            Int(plain ? CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE : CURL_HTTP_VERSION_2_0))
        _ = ccurl_setopt_long(handle, CURLOPT_FRESH_CONNECT, 1)
        _ = ccurl_setopt_long(handle, CURLOPT_FORBID_REUSE, 1)
        _ = ccurl_setopt_long(handle, CURLOPT_TIMEOUT_MS, 0)
        prepare(url: endpoint + method, body: body, requireLeader: true)
    }

    /// Calls gRPC `method` (`/package.Service/Method`) at `endpoint` with the framed message
    /// `body`, keeping one HTTP/2 connection to each endpoint.
    ///
    /// Without TLS, HTTP/2 is spoken by prior knowledge (etcd answers no upgrade from HTTP/1.1).
    /// libcurl 7.88 (Debian 12's) fails a prior-knowledge transfer on a connection it reuses
    /// (curl/curl#10634), at once and before sending anything; asking for plain HTTP/2 reuses the
    /// connection well, but opens a new one with an HTTP/1.1 upgrade, which etcd's gRPC server
    /// never sees. So each call asks for what the handle's connection to the endpoint calls for,
    /// and a call that meets the other case is made again. A connection whose stream failed
    /// (a timeout) fails every later stream at once in that libcurl, so a failure drops the
    /// handle's connections. Each failure made again proves that etcd did nothing: nothing was
    /// sent, or only HTTP/1.1 answered.
    func grpcCall(endpoint: String, method: String, body: [UInt8], requireLeader: Bool, timeout: Duration)
        -> Outcome
    {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        let plain = !endpoint.hasPrefix("https://")
        var reuse = http2Endpoints.contains(endpoint)
        var tries = 0
        while true {
            tries += 1
            let priorKnowledge = plain && !reuse
            _ = ccurl_setopt_long(
                handle, CURLOPT_HTTP_VERSION,
                Int(priorKnowledge ? CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE : CURL_HTTP_VERSION_2_0))
            let outcome = post(
                url: endpoint + method, body: body, requireLeader: requireLeader,
                timeout: max(.milliseconds(1), deadline - clock.now))
            let unsent = outcome.result == CURLE_HTTP2 && !outcome.bodySent
            let upgraded = plain && outcome.result == CURLE_OK && outcome.httpMajorVersion == 1
            if tries < 3, unsent || upgraded {
                // Prior knowledge on a live connection: reuse it. Anything else: a new one.
                reuse = unsent && priorKnowledge
                if !reuse { dropConnections() }
                continue
            }
            if outcome.result == CURLE_OK && outcome.httpMajorVersion == 2 {
                http2Endpoints.insert(endpoint)
            } else if outcome.result != CURLE_OK {
                dropConnections()
            }
            return outcome
        }
    }

    /// Closes the handle's connections: a copy of the handle has its options and none of its
    /// connections.
    private func dropConnections() {
        http2Endpoints.removeAll()
        guard let copy = curl_easy_duphandle(handle) else { return }
        curl_easy_cleanup(handle)
        handle = copy
    }

    /// The outcome of the transfer that just ended with `result`.
    func outcome(_ result: CURLcode) -> Outcome {
        var status = 0
        _ = ccurl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        var version = 0
        _ = ccurl_getinfo_long(handle, CURLINFO_HTTP_VERSION, &version)
        var connections = 0
        _ = ccurl_getinfo_long(handle, CURLINFO_NUM_CONNECTS, &connections)
        var text = String(cString: errorBuffer)
        if text.isEmpty { text = String(cString: curl_easy_strerror(result)) }
        return Outcome(
            result: result, errorText: text, status: status, body: exchange.received,
            bodySent: exchange.bodySent, grpcStatus: exchange.grpcStatus, grpcMessage: exchange.grpcMessage,
            httpMajorVersion: Self.majorVersion(version), newConnections: connections)
    }

    private static let read: ccurl_data_callback = { buffer, size, count, context in
        guard let buffer, let context else { return 0 }
        let exchange = Unmanaged<Exchange>.fromOpaque(context).takeUnretainedValue()
        exchange.bodySent = true
        let length = min(size * count, exchange.upload.count - exchange.uploadOffset)
        guard length > 0 else { return 0 }
        exchange.upload.withUnsafeBytes { bytes in
            UnsafeMutableRawPointer(buffer).copyMemory(
                from: bytes.baseAddress! + exchange.uploadOffset, byteCount: length)
        }
        exchange.uploadOffset += length
        return length
    }

    /// Keeps `grpc-status` and `grpc-message`, which libcurl hands over as header lines whether
    /// they came as headers or as trailers.
    private static let header: ccurl_data_callback = { buffer, size, count, context in
        let length = size * count
        guard let buffer, let context else { return length }
        let exchange = Unmanaged<Exchange>.fromOpaque(context).takeUnretainedValue()
        switch GRPCFraming.statusLine(UnsafeRawBufferPointer(start: UnsafeRawPointer(buffer), count: length))
        {
        case .status(let code): exchange.grpcStatus = code
        case .message(let text): exchange.grpcMessage = text
        case nil: break
        }
        return length
    }

    private static let write: ccurl_data_callback = { buffer, size, count, context in
        guard let context else { return 0 }
        let exchange = Unmanaged<Exchange>.fromOpaque(context).takeUnretainedValue()
        let length = size * count
        if exchange.stopRequested || exchange.received.count + length > exchange.receiveLimit { return 0 }
        if let buffer, length > 0 {
            exchange.received.append(
                contentsOf: UnsafeRawBufferPointer(start: UnsafeRawPointer(buffer), count: length))
        }
        return length
    }
}
