import ArgumentParsing
import CountriesWeb
import HTTPServer
import Metrics
import SystemSupport

/// `--metrics HOST:PORT` of `serve` and `relay`: the operator's HTTP endpoints on a board the
/// loop publishes to (docs/OPERATIONS.md), refused on a non-loopback address without
/// `--insecure`, as `web --listen` is. Both commands start it the same way, here.
struct MetricsListener<Snapshot: MetricsSnapshot> {
    /// What the loop publishes to and the endpoints read.
    let board: MetricsBoard<Snapshot>
    private let server: HTTPServer

    /// Starts the endpoints on `address` for a new board and logs where; nil when no address
    /// was given.
    static func start(
        _ address: WebListenAddress?, insecure: Bool, logger: Logger, usageError: (String) -> UsageError
    ) throws -> MetricsListener? {
        guard let address else { return nil }
        if !address.isLoopback, !insecure {
            throw usageError(
                "--metrics \(address.authority(port: address.port)) is not loopback: anyone who reaches it reads the service's counts; pass --insecure to allow it"
            )
        }
        let board = MetricsBoard<Snapshot>()
        let endpoints = HealthEndpoints(
            contentType: MetricsText.contentType, metrics: { board.exposition() },
            unreadiness: { board.unreadiness() })
        let server: HTTPServer
        do {
            server = try endpoints.serve(host: address.host, port: address.port)
        } catch {
            throw CommandError.metricsUnavailable(authority: address.authority(port: address.port))
        }
        logger.log(.info, "serving metrics at http://\(address.authority(port: server.port))/metrics")
        return MetricsListener(board: board, server: server)
    }

    /// Stops the endpoints.
    func stop() { server.stop() }
}
