import CCurl
import Foundation

/// libcurl's global state, set up once for the process before the first handle (the first use
/// of this constant does it, thread-safely, as Swift initializes globals once).
private let curlGlobalInit: CURLcode = curl_global_init(Int(CURL_GLOBAL_DEFAULT))

/// One libcurl easy handle that POSTs JSON to the gateway, reused call after call so its
/// connection is kept alive. The body goes through a read callback, so the transfer knows
/// whether any of it left: a failure before that is "nothing was sent" (docs/ARCHITECTURE.md,
/// the etcd classification), and curl cannot quietly send a txn again on a new connection,
/// as it would with a body it could rewind.
final class CurlTransfer {
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
    }

    /// What the callbacks share with the call, behind the pointer libcurl hands back.
    final class Exchange {
        var upload: [UInt8] = []
        var uploadOffset = 0
        var bodySent = false
        var received: [UInt8] = []
        /// Most bytes kept from an answer; more fails the transfer (no answer of etcd's is close).
        var receiveLimit = 256 << 20
        /// Set for the watcher, which drains `received` as it goes.
        var stopRequested = false
    }

    let handle: UnsafeMutableRawPointer
    let exchange = Exchange()
    private let baseHeaderLines: [String]
    private var headers: UnsafeMutablePointer<curl_slist>?
    private var leaderHeaders: UnsafeMutablePointer<curl_slist>?
    /// etcd's auth token, sent as `Authorization` on every call until it changes (nil: none).
    var authorization: String? {
        didSet { if authorization != oldValue { rebuildHeaders() } }
    }
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)

    /// A handle with these headers, connect timeout and TLS files; nil when libcurl cannot make
    /// one.
    init?(connectTimeout: Duration, headers extra: [String], security: EtcdSecurity = EtcdSecurity()) {
        guard curlGlobalInit == CURLE_OK, let handle = curl_easy_init() else { return nil }
        self.handle = handle
        // Expect: off, or curl waits a second for "100 Continue" before a body over 1 KB.
        baseHeaderLines = ["Content-Type: application/json", "Expect:"] + extra
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

    /// The header lists from the base lines and the token. etcd's require-leader
    /// (`Grpc-Metadata-hasleader: true`) makes a member without a leader refuse at once (a txn
    /// is then never proposed) and end a watch instead of going silent. Not on every call: it
    /// refuses serializable reads and status too, which are the calls that work without a leader.
    private func rebuildHeaders() {
        curl_slist_free_all(headers)
        curl_slist_free_all(leaderHeaders)
        headers = nil
        leaderHeaders = nil
        var lines = baseHeaderLines
        // The gateway hands `Authorization` to etcd as the token (its swagger field name).
        if let authorization { lines.append("Authorization: \(authorization)") }
        for line in lines {
            headers = curl_slist_append(headers, line)
            leaderHeaders = curl_slist_append(leaderHeaders, line)
        }
        leaderHeaders = curl_slist_append(leaderHeaders, "Grpc-Metadata-hasleader: true")
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
        exchange.received.removeAll(keepingCapacity: true)
        exchange.stopRequested = false
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

    /// The outcome of the transfer that just ended with `result`.
    func outcome(_ result: CURLcode) -> Outcome {
        var status = 0
        _ = ccurl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        var text = String(cString: errorBuffer)
        if text.isEmpty { text = String(cString: curl_easy_strerror(result)) }
        return Outcome(
            result: result, errorText: text, status: status, body: exchange.received,
            bodySent: exchange.bodySent)
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
