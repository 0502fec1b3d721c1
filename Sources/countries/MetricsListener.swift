import ArgumentParsing
import CountriesWeb
import HTTPServer
import Metrics

/// `--metrics HOST:PORT` of `serve` and `relay`: the operator's HTTP endpoints on a board the
/// loop publishes to (docs/OPERATIONS.md), refused on a non-loopback address without
/// `--insecure`, as `web --listen` is.
enum MetricsListener {
    /// Starts the endpoints on `address` for `board`; nil when no address was given.
    static func start<Snapshot: MetricsSnapshot>(
        _ address: WebListenAddress?, insecure: Bool, board: MetricsBoard<Snapshot>,
        usageError: (String) -> UsageError
    ) throws -> HTTPServer? {
        guard let address else { return nil }
        if !address.isLoopback, !insecure {
            throw usageError(
                "--metrics \(address.authority(port: address.port)) is not loopback: anyone who reaches it reads the service's counts; pass --insecure to allow it"
            )
        }
        let endpoints = HealthEndpoints(
            contentType: MetricsText.contentType, metrics: { board.exposition() },
            unreadiness: { board.unreadiness() })
        do {
            return try endpoints.serve(host: address.host, port: address.port)
        } catch {
            throw CommandFailure(
                message:
                    "cannot serve metrics on \(address.authority(port: address.port)) (in use, or not an address of this machine); pick another --metrics",
                exitCode: ExitCode.unavailable)
        }
    }
}
