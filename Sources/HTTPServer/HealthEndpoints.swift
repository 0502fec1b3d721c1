/// The operator's endpoints every HTTP listener of the project answers the same way:
/// `/metrics` (Prometheus text), `/healthz` (alive: 200) and `/readyz` (200, or 503 with the
/// reason). It knows nothing of what is measured: the caller gives the text and the reason.
public struct HealthEndpoints: Sendable {
    /// The paths answered here.
    public static let paths: Set<String> = ["/metrics", "/healthz", "/readyz"]

    private let metrics: @Sendable () -> String
    private let unreadiness: @Sendable () -> String?
    private let contentType: String

    /// Endpoints answering `/metrics` with `metrics()` as `contentType`, and `/readyz` with 503
    /// and `unreadiness()` when it says why not.
    public init(
        contentType: String, metrics: @escaping @Sendable () -> String,
        unreadiness: @escaping @Sendable () -> String?
    ) {
        self.contentType = contentType
        self.metrics = metrics
        self.unreadiness = unreadiness
    }

    /// The answer to `request`, or nil when its path is not one of ``paths``.
    public func answer(_ request: HTTPRequest) -> HTTPResponse? {
        guard Self.paths.contains(request.path) else { return nil }
        guard request.method == "GET" || request.method == "HEAD" else {
            return .text(
                405, "\(request.method) is not allowed on \(request.path); use GET",
                headers: ["Allow": "GET, HEAD"])
        }
        switch request.path {
        case "/metrics":
            return .content(status: 200, contentType: contentType, body: Array(metrics().utf8))
        case "/healthz":
            return .text(200, "alive")
        default:
            if let why = unreadiness() { return .text(503, "not ready: \(why)") }
            return .text(200, "ready")
        }
    }

    /// A server on `host:port` that answers only these endpoints (404 elsewhere).
    public func serve(host: String, port: Int) throws(HTTPServer.StartError) -> HTTPServer {
        // Scrapers and probes: a few connections at a time is plenty.
        try HTTPServer(host: host, port: port, limits: HTTPServer.Limits(connections: 64, threads: 1)) {
            request in
            self.answer(request)
                ?? .text(404, "no such page: \(request.path); try /metrics, /healthz or /readyz")
        }
    }
}
