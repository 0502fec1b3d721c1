import CountriesClient
import CountriesCore
import CountriesTerminal
import CountriesWeb
import Foundation
@preconcurrency import Glibc
import HTTPServer
import Metrics
import SystemSupport

/// `countries web`'s live table in browsers: wires a subscription loop, the page model (which
/// holds every rule of the pages) and an HTTP server together. The server's threads only answer
/// requests and hand streams and toggles to the loop's thread through a ``WebInbox``; the model,
/// the replica and the toggles' requests live on the loop's thread alone.
public final class WebView {
    /// The subscriber's poll loop.
    let loop: SubscriptionLoop<WebToggleAnswer>
    let toggles: PendingRequests<WebToggleAnswer>
    let inbox: WebInbox
    let server: HTTPServer
    /// The address pages open.
    public let address: String
    /// What the loop publishes for `/metrics` and `/readyz`.
    let board = MetricsBoard<WebMetrics>()
    /// The requests refused before they were served, counted and logged.
    let refusals: WebRefusals

    /// Starts serving on `listen`; pages must present `token` when one is given.
    public init(
        subscription: LiveSubscription, toggles: PendingRequests<WebToggleAnswer>,
        listen: WebListenAddress, token: String?, guard requestGuard: WebRequestGuard,
        limits: HTTPServer.Limits = .init(), signals: SignalPipe, logger: Logger = Logger()
    ) throws(WebViewError) {
        let refusals = WebRefusals(logger: logger)
        self.refusals = refusals
        do {
            inbox = try WebInbox()
        } catch let error as WebViewError {
            throw error
        } catch {
            throw WebViewError(message: "\(error)")
        }
        self.toggles = toggles
        loop = SubscriptionLoop(
            subscription: subscription, requests: toggles,
            fileDescriptors: [signals.fileDescriptor, inbox.fileDescriptor]
        )
        let inbox = inbox
        let board = board
        let health = HealthEndpoints(
            contentType: MetricsText.contentType, metrics: { board.exposition() },
            unreadiness: { board.unreadiness() })
        do {
            server = try HTTPServer(host: listen.host, port: listen.port, limits: limits) { request in
                WebView.answer(
                    request, token: token, guard: requestGuard, inbox: inbox, health: health,
                    refusals: refusals)
            }
        } catch {
            throw WebViewError(message: error.description)
        }
        address = "http://\(listen.authority(port: server.port))/"
    }

    /// Answers one request (on a server thread; it never blocks). `/metrics`, `/healthz` and
    /// `/readyz` are `health`'s, behind the same Host and token checks as the page.
    static func answer(
        _ request: HTTPRequest, token: String?, guard requestGuard: WebRequestGuard, inbox: WebInbox,
        health: HealthEndpoints? = nil, refusals: WebRefusals? = nil
    ) -> HTTPResponse {
        let changes = request.method == "POST" && request.path == "/toggle"
        func refuse(_ status: Int, _ message: String) -> HTTPResponse {
            refusals?.record(status: status, method: request.method, path: request.path, reason: message)
            return changes ? json(status, message) : .text(status, message)
        }
        if let refusal = requestGuard.check(headers: request.headers, changes: false) {
            return refuse(refusal.status, refusal.message)
        }
        if let token {
            let cookie = WebToken.cookieName(host: request.headers["host"])
            switch WebToken.presented(headers: request.headers, query: request.query, cookieName: cookie) {
            case .none:
                return refuse(
                    401,
                    "a token is required: open the page's address with ?token=... (countries web --token)")
            case .notBearer:
                return refuse(401, "Authorization takes the Bearer scheme: Authorization: Bearer TOKEN")
            case .token(let presented):
                guard WebRequestGuard.constantTimeEqual(presented, token) else {
                    return refuse(
                        401,
                        "the token is not this web process's; open the address it printed with ?token=...")
                }
            }
            if request.method == "GET", request.path == "/", request.query["token"] != nil {
                // The token leaves the address (history, screenshots, shoulders) for a cookie
                // the page's script cannot read and other sites' requests never carry.
                return .content(
                    status: 303, contentType: "text/plain; charset=utf-8", body: Array("see /\n".utf8),
                    headers: ["Location": "/", "Set-Cookie": WebToken.setCookie(token, name: cookie)])
            }
        }
        // Checked after the access token: a page without it learns nothing of the change token.
        if changes, let refusal = requestGuard.check(headers: request.headers, changes: true) {
            return refuse(refusal.status, refusal.message)
        }
        if let health, let response = health.answer(request) { return response }
        switch (request.method, request.path) {
        case ("GET", "/"), ("HEAD", "/"):
            let nonce = WebToken.fresh()
            return .content(
                status: 200, contentType: "text/html; charset=utf-8",
                body: Array(WebPageAssets.page(changeToken: requestGuard.changeToken, nonce: nonce).utf8),
                headers: ["Content-Security-Policy": WebPageAssets.contentSecurityPolicy(nonce: nonce)])
        case ("GET", "/events"):
            return .eventStream { stream in inbox.post(.opened(stream)) }
        case ("POST", "/toggle"):
            // The name the user saw, not a position: the list may have changed under the page.
            guard let name = request.query["name"], !name.isEmpty else {
                return json(400, "give the country as /toggle?name=NAME (the name the page shows)")
            }
            return .later { responder in
                inbox.post(.toggle(name: name, answer: WebToggleAnswer(name: name, responder: responder)))
            }
        case (_, "/"), (_, "/events"), (_, "/toggle"):
            let allowed = ["/": "GET, HEAD", "/events": "GET", "/toggle": "POST"][request.path] ?? ""
            return .text(
                405, "\(request.method) is not allowed on \(request.path); use \(allowed)",
                headers: ["Allow": allowed])
        default:
            return .text(404, "no such page: \(request.path); the table is at /")
        }
    }

    /// `{"status": text}` with an HTTP status.
    static func json(_ status: Int, _ text: String) -> HTTPResponse {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case _ where scalar.value < 0x20: escaped += String(format: "\\u%04x", scalar.value)
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return .content(
            status: status, contentType: "application/json", body: Array("{\"status\":\"\(escaped)\"}\n".utf8)
        )
    }

    /// Runs until SIGINT or SIGTERM; every page's stream is ended and the server stopped on the
    /// way out.
    public func run(signals: SignalPipe) throws {
        defer { server.stop() }
        var model = WebPageModel()
        var pages: [EventStream] = []
        var metrics = WebMetrics()

        func broadcast(_ bytes: [UInt8]) {
            guard !bytes.isEmpty else { return }
            // A page whose buffer is full is dropped here; its browser resumes from its last id.
            pages = pages.filter { $0.send(bytes) }
        }

        func answer(_ answer: WebToggleAnswer, status: Int, text: String) {
            metrics.toggles[status, default: 0] += 1
            answer.finish(status: status, text: text)
        }

        func finish(_ outcomes: [PendingRequests<WebToggleAnswer>.Outcome]) {
            for outcome in outcomes {
                switch outcome {
                case .replied(let toggle, let reply):
                    let described = SelectionStatus.describe(reply: reply)
                    answer(toggle, status: described.isError ? 409 : 200, text: described.text)
                case .failed(let toggle, let error):
                    let text = SelectionStatus.describe(
                        failedToggleOf: toggle.name, message: error.message,
                        outcomeUnknown: error.code == .outcomeUnknown, cause: error.cause)
                    answer(toggle, status: 503, text: text)
                }
            }
        }

        try loop.run { happening, now in
            switch happening {
            case .readable(signals.fileDescriptor):
                return signals.drain().isEmpty
            case .readable:
                for item in inbox.drain() {
                    switch item {
                    case .opened(let stream):
                        let messages = model.opened(lastEventID: stream.lastEventID)
                        if messages.allSatisfy({ stream.send($0) }) { pages.append(stream) }
                    case .toggle(let name, let toggle):
                        guard model.phase == .live, let replica = model.replica else {
                            answer(
                                toggle, status: 409,
                                text: "not toggled: the table is \(model.stateLine); try again when live")
                            continue
                        }
                        // Names match as the service matches them (case and outer spaces aside).
                        guard replica.rows.contains(where: { CountryName.matches($0.name, name) }) else {
                            answer(toggle, status: 404, text: "not toggled: \(name) is no longer in the list")
                            continue
                        }
                        // A fresh id per click: the retries of this one toggle cannot apply twice.
                        // Pinned to the store the page shows: a replica of another store refuses
                        // it.
                        let request = Request(
                            id: RequestID.make(), command: .change(.toggle(.name(name))),
                            ifStore: loop.subscription.store)
                        finish(toggles.send(request, tag: toggle, now: now))
                    }
                }
                pages.removeAll { $0.isEnded }
                return true
            case .replies(let outcomes):
                finish(outcomes)
                return true
            case .update(let update):
                broadcast(
                    model.update(
                        replica: update.replica, store: loop.subscription.store, phase: update.phase,
                        applied: update.applied))
                return true
            case .tick:
                // Once per turn of the loop (at least every second): what /metrics and /readyz
                // read.
                metrics.live = model.phase == .live
                metrics.stateLine = model.stateLine
                metrics.seq = model.replica?.seq
                // A page that went away while nothing was sent to it is only noticed here.
                pages.removeAll { $0.isEnded }
                metrics.pages = pages.count
                metrics.refusals = refusals.counts
                board.publish(metrics, at: now)
                return true
            }
        }
        // Stopping: a toggle still waiting is told what is known of it (one sent may have been
        // applied), before the server answers whatever is left "stopping".
        finish(toggles.abandon("the web process stopped before the service's reply came"))
    }
}
