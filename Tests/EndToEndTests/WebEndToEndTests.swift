import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

/// `countries web` from outside, as a browser's HTTP sees it: the page, the event stream (ids
/// are seqs, Last-Event-ID resumes), toggles, tokens and protected mode; curl is the client.
@Suite(.serialized) struct WebEndToEndTests {
    /// A `countries web` on a free port, following `service`.
    final class Web {
        let process: RunningProcess
        let base: String

        init(following service: Service, extra: [String] = []) throws {
            let port = try freeTCPPort()
            base = "http://127.0.0.1:\(port)"
            process = try Countries.start(
                [
                    "web", "--listen", "127.0.0.1:\(port)", "--heartbeat-ms", "100", "--timeout", "1000",
                    "--retries", "2", "--events", service.sandbox.eventsEndpoint,
                ] + service.sandbox.client + extra)
            guard
                process.stderr.waitFor(timeout: .seconds(10), { $0.contains("serving the table at") }) != nil
            else {
                process.stop(signal: SIGKILL)
                throw HarnessFailure("countries web did not start: \(process.stderr.text)")
            }
        }

        func stop() { process.stop(signal: SIGTERM, grace: .seconds(5) * testSlowdown) }
    }

    /// Follows `path`'s event stream with curl for at most `seconds`.
    func stream(_ url: String, lastEventID: String? = nil, seconds: Int = 8) throws -> ChildProcess {
        var arguments = ["-sN", "--max-time", "\(seconds)"]
        if let lastEventID { arguments += ["-H", "Last-Event-ID: \(lastEventID)"] }
        return try ChildProcess("/usr/bin/curl", arguments + [url])
    }

    /// One whole request with curl: the body and the HTTP status (`-i` adds the headers).
    func fetch(_ url: String, method: String = "GET", headers: [String] = [], include: Bool = false) throws
        -> (
            status: Int, body: String
        )
    {
        let run = try ChildProcess.run(
            "/usr/bin/curl",
            ["-s", "-X", method, "--max-time", "10", "-w", "\n%{http_code}"] + (include ? ["-i"] : [])
                + headers.flatMap { ["-H", $0] } + [url])
        var lines = run.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        let status = Int(lines.popLast() ?? "") ?? 0
        return (status, lines.joined(separator: "\n"))
    }

    /// A click as the page sends it: from the page's origin, with the change token the page
    /// holds (read from the page, as its script does). `credentials` are headers both requests
    /// carry (the access token's cookie or `Authorization`).
    func click(_ web: Web, name: String, credentials: [String] = []) throws -> (status: Int, body: String) {
        try click(base: web.base, name: name, credentials: credentials)
    }

    /// ``click(_:name:credentials:)`` on the page at `base`.
    func click(base: String, name: String, credentials: [String] = []) throws -> (status: Int, body: String) {
        let page = try fetch(base + "/", headers: credentials)
        let marker = #"<meta name="countries-change" content=""#
        guard let start = page.body.range(of: marker)?.upperBound,
            let end = page.body[start...].firstIndex(of: "\"")
        else { throw HarnessFailure("the page holds no change token: \(page.body.prefix(300))") }
        let changeToken = String(page.body[start..<end])
        return try fetch(
            base + "/toggle?name=\(name)", method: "POST",
            headers: ["Origin: \(base)", "X-Countries-Change: \(changeToken)"] + credentials)
    }

    @Test(.hangGuard()) func streamCarriesSeqsAndResumesWithLastEventID() throws {
        let sandbox = try Sandbox()
        let service = try Service(in: sandbox)
        defer { service.stop() }
        let web = try Web(following: service)
        defer { web.stop() }

        let page = try fetch(web.base + "/")
        #expect(page.status == 200)
        #expect(page.body.contains("<table>"))
        #expect(
            !page.body.contains("http://") && !page.body.contains("https://"),
            "nothing fetched from elsewhere")

        let first = try stream(web.base + "/events")
        defer { first.stop(signal: SIGKILL) }
        #expect(first.stdout.waitFor(timeout: .seconds(5)) { $0.contains(#""live":true"#) } != nil)
        #expect(first.stdout.text.contains("id: 0\nevent: snapshot"))

        #expect(try service.run(["toggle", "France"]).exitCode == 0)
        #expect(
            first.stdout.waitFor(timeout: .seconds(1)) {
                $0 == #"data: {"seq":1,"index":2,"name":"France","visited":true}"#
            } != nil)
        #expect(first.stdout.text.contains("id: 1\nevent: change\n"))

        // A toggle through the web process, as a click sends it.
        let clicked = try click(web, name: "France")
        #expect(clicked.status == 200)
        #expect(clicked.body.contains("Selected country: France (now not visited)"))
        #expect(first.stdout.waitFor(timeout: .seconds(1)) { $0.contains(#""seq":2"#) } != nil)

        // A page that saw seq 1 gets seq 2 alone, no snapshot; one that saw 2 gets nothing old.
        let resumed = try stream(web.base + "/events", lastEventID: "1", seconds: 2)
        defer { resumed.stop(signal: SIGKILL) }
        _ = resumed.wait(timeout: .seconds(5))
        #expect(resumed.stdout.text.contains("id: 2\nevent: change"))
        #expect(!resumed.stdout.text.contains("snapshot"))
        #expect(!resumed.stdout.text.contains("id: 1\n"))
        let current = try stream(web.base + "/events", lastEventID: "2", seconds: 2)
        defer { current.stop(signal: SIGKILL) }
        _ = current.wait(timeout: .seconds(5))
        #expect(!current.stdout.text.contains("id:"))
        #expect(current.stdout.text.contains(#""live":true"#))

        // The service goes away: the stream turns stale and says why.
        service.stop(signal: SIGKILL)
        #expect(
            first.stdout.waitFor(timeout: .seconds(5)) { $0.contains(#""live":false,"line":"stale: "#) }
                != nil)
        let refused = try click(web, name: "France")
        #expect(refused.status == 409)
        #expect(refused.body.contains("not toggled"))
    }

    /// 200 open pages: each gets a toggle, the service still answers the command line at once,
    /// and the web process stays small (the issue's bound: 200 pages slow neither the service
    /// nor each other).
    @Test(.hangGuard()) func twoHundredPagesEachGetEveryChangeAndSlowNothing()
        throws
    {
        let sandbox = try Sandbox()
        let service = try Service(in: sandbox)
        defer { service.stop() }
        let web = try Web(following: service)
        defer { web.stop() }
        let port = try #require(Int(web.base.split(separator: ":").last ?? ""))
        let idle = web.process.residentKilobytes ?? 0
        // Raw connections: 200 curl processes would measure curl.
        let pages = try (0..<200).map { _ in try RawConnection.page(port: port) }
        #expect(
            eventually(within: .seconds(20)) {
                for page in pages { page.drainAll() }
                return pages.allSatisfy { $0.text.contains(#""live":true"#) }
            }, "\(pages.filter { !$0.text.contains(#""live":true"#) }.count) pages not live")

        let started = ContinuousClock.now
        let count = try service.run(["count"])
        let countTook = ContinuousClock.now - started
        #expect(count.exitCode == 0)
        #expect(
            countTook < .seconds(1) * testSlowdown, "the service answered in \(countTook) with 200 pages open"
        )

        let toggled = ContinuousClock.now
        #expect(try service.run(["toggle", "France"]).exitCode == 0)
        #expect(
            eventually(within: .seconds(2)) {
                for page in pages { page.drainAll() }
                return pages.allSatisfy { $0.text.contains(#""seq":1,"index":2"#) }
            }, "\(pages.filter { !$0.text.contains(#""seq":1,"index":2"#) }.count) pages missed seq 1")
        let fanOut = ContinuousClock.now - toggled
        let resident = web.process.residentKilobytes ?? 0
        // AddressSanitizer's quarantine and shadow memory say nothing about the process (as in
        // BoundsTests); the bound is asserted on real builds.
        if BoundsTests.measuresMemory {
            #expect(
                resident - idle < 128 * 1_024, "the web process grew by \(resident - idle) KiB for 200 pages")
        }
        print(
            "web: 200 pages; count answered in \(countTook); a toggle reached all 200 in \(fanOut); web RSS \(idle) KiB idle, \(resident) KiB with 200 pages"
        )
    }

    /// `countries_web_pages` counted a page until something was sent to it: 50 closed pages
    /// read 50 for as long as nothing changed.
    @Test(.hangGuard()) func closedPagesLeaveThePagesGaugeWithoutAChange() throws {
        let sandbox = try Sandbox()
        let service = try Service(in: sandbox)
        defer { service.stop() }
        let web = try Web(following: service)
        defer { web.stop() }
        func pages() -> String? {
            (try? fetch(web.base + "/metrics"))?.body.split(separator: "\n")
                .first { $0.hasPrefix("countries_web_pages ") }.map(String.init)
        }
        let streams = try (0..<5).map { _ in try stream(web.base + "/events") }
        defer { for page in streams { page.stop(signal: SIGKILL) } }
        for page in streams {
            try #require(page.stdout.waitFor(timeout: .seconds(5)) { $0.contains(#""live":true"#) } != nil)
        }
        #expect(eventually(within: .seconds(5) * testSlowdown) { pages() == "countries_web_pages 5" })
        for page in streams { page.stop(signal: SIGKILL) }
        #expect(
            eventually(within: .seconds(5) * testSlowdown) { pages() == "countries_web_pages 0" },
            "\(pages() ?? "no gauge")")
    }

    @Test(.hangGuard()) func aTokenIsRequiredWhenOneIsSet() throws {
        let sandbox = try Sandbox()
        let service = try Service(in: sandbox)
        defer { service.stop() }
        // A token with a `+` (a query decoder that reads it as a space would refuse it), in a
        // file written on Windows (CRLF), private as a key must be.
        let tokenFile = sandbox.file("token")
        try "s3cret+token+0123\r\n".write(toFile: tokenFile, atomically: true, encoding: .utf8)
        chmod(tokenFile, 0o600)
        let web = try Web(following: service, extra: ["--token", tokenFile])
        defer { web.stop() }

        #expect(try fetch(web.base + "/").status == 401)
        #expect(try fetch(web.base + "/events").status == 401)
        #expect(try fetch(web.base + "/toggle?name=France", method: "POST").status == 401)
        #expect(try fetch(web.base + "/toggle?name=France&token=wrong", method: "POST").status == 401)
        let scheme = try fetch(web.base + "/", headers: ["Authorization: s3cret+token+0123"])
        #expect(scheme.status == 401 && scheme.body.contains("Bearer"), "\(scheme)")
        #expect(try fetch(web.base + "/", headers: ["Authorization: Bearer s3cret+token+0123"]).status == 200)
        #expect(try fetch(web.base + "/", headers: ["Authorization: bearer s3cret+token+0123"]).status == 200)

        // A token typed in the address is traded for a cookie only this server's pages carry,
        // out of the script's reach, and the address is cleaned.
        let traded = try fetch(web.base + "/?token=s3cret%2Btoken%2B0123", include: true)
        #expect(traded.status == 303, "\(traded)")
        #expect(traded.body.contains("Location: /\r"), "\(traded)")
        let port = URL(string: web.base)?.port ?? 0
        #expect(
            traded.body.contains(
                "Set-Cookie: countries-token-\(port)=s3cret%2Btoken%2B0123; Path=/; HttpOnly; SameSite=Strict"
            ),
            "\(traded)")
        #expect(try fetch(web.base + "/?token=s3cret+token+0123").status == 303, "a raw + is a plus")
        let cookie = "Cookie: countries-token-\(port)=s3cret%2Btoken%2B0123"
        #expect(try fetch(web.base + "/", headers: [cookie]).status == 200)
        let stream = try ChildProcess(
            "/usr/bin/curl", ["-sN", "--max-time", "3", "-H", cookie, web.base + "/events"])
        #expect(
            stream.stdout.waitFor(timeout: .seconds(5)) { $0.contains("event: snapshot") }
                != nil)
        stream.stop()
        let toggled = try click(web, name: "France", credentials: [cookie])
        #expect(toggled.status == 200)
        #expect(toggled.body.contains("Selected country: France (now visited)"))
    }

    /// A token file others may read is refused as a secret key is; a token file with nothing
    /// on its first line too, and one shorter than 16 characters.
    @Test(.hangGuard()) func aTokenFileOthersMayReadIsRefused() throws {
        let sandbox = try Sandbox()
        let tokenFile = sandbox.file("token")
        try "s3cret\n".write(toFile: tokenFile, atomically: true, encoding: .utf8)
        chmod(tokenFile, 0o644)
        let shared = try Countries.run([
            "web", "--listen", "127.0.0.1:\(try freeTCPPort())", "--token", tokenFile,
        ])
        #expect(shared.exitCode == 78)
        #expect(shared.stderr.contains("chmod 600"), "\(shared.stderr)")
        try "\n".write(toFile: tokenFile, atomically: true, encoding: .utf8)
        chmod(tokenFile, 0o600)
        let empty = try Countries.run([
            "web", "--listen", "127.0.0.1:\(try freeTCPPort())", "--token", tokenFile,
        ])
        #expect(empty.exitCode == 64, "\(empty.stderr)")
        // A short token is found by trying: 3,000 guesses took half a second on one connection.
        try "hunter2\n".write(toFile: tokenFile, atomically: true, encoding: .utf8)
        chmod(tokenFile, 0o600)
        let short = try Countries.run([
            "web", "--listen", "127.0.0.1:\(try freeTCPPort())", "--token", tokenFile,
        ])
        #expect(short.exitCode == 64, "\(short.stderr)")
        #expect(
            short.stderr.contains("the token in \(tokenFile) is 7 characters, too few to resist guessing"),
            "\(short.stderr)")
    }

    /// A click names the country the user saw: with a row removed under the page, the click on
    /// France toggles France, and a name no longer listed is refused with a message.
    @Test(.hangGuard()) func aClickTogglesTheCountryShownNotARowPosition() throws {
        let sandbox = try Sandbox()
        let service = try Service(in: sandbox)
        defer { service.stop() }
        let web = try Web(following: service)
        defer { web.stop() }
        _ = try service.run(["remove", "United States"])
        let toggled = try click(web, name: "France")
        #expect(toggled.status == 200 && toggled.body.contains("France (now visited)"), "\(toggled)")
        let list = try service.run(["list", "--json"])
        #expect(list.stdout.contains(#"{"index":1,"name":"France","visited":true}"#), "\(list.stdout)")
        #expect(list.stdout.contains(#"{"index":2,"name":"Italy","visited":false}"#), "\(list.stdout)")
        // Names match as the service matches them: `countries toggle france` toggles France,
        // and the web process said 404 to the same name.
        let lowerCase = try click(web, name: "france")
        #expect(
            lowerCase.status == 200 && lowerCase.body.contains("France (now not visited)"), "\(lowerCase)")
        let gone = try click(web, name: "United%20States")
        #expect(gone.status == 404 && gone.body.contains("United States is no longer in the list"), "\(gone)")
        #expect(try click(web, name: "").status == 400)
    }

    /// A toggle still waiting for the service when the web process stops may have been applied:
    /// it is answered "outcome unknown" with its id, not left to the server's plain "stopping"
    /// (which the page showed as "not toggled"): the toggle was sent to the service, paused here,
    /// and nothing can tell whether it will apply it.
    @Test(.hangGuard()) func aToggleWaitingWhenTheWebProcessStopsIsUnknownNotRefused() throws {
        let sandbox = try Sandbox()
        let service = try Service(in: sandbox)
        defer { service.stop() }
        // Patient: live for 15 s of silence, and a toggle waits 30 s for its reply.
        let web = try Web(following: service, extra: ["--heartbeat-ms", "5000", "--timeout", "30000"])
        defer { web.stop() }
        // Live first: a table still connecting refuses the click (409) instead of sending it.
        try #require(eventually(within: .seconds(10)) { (try? fetch(web.base + "/readyz").status) == 200 })
        defer { service.process.signal(SIGCONT) }
        try #require(service.process.pause(), "the service did not stop")
        let answer = Box<(status: Int, body: String)?>(nil)
        let clicked = DispatchSemaphore(value: 0)
        let base = web.base
        Thread {
            answer.value = try? click(base: base, name: "France")
            clicked.signal()
        }.start()
        // The toggle reaches the web process and waits on the paused service (a page and a POST
        // by curl: milliseconds, given seconds on a loaded run).
        sleep(for: .seconds(3) * testSlowdown)
        web.stop()
        try #require(clicked.wait(timeout: .now() + 15.0 * Double(testSlowdown)) == .success, "no answer")
        let answered = try #require(answer.value)
        #expect(answered.status == 503, "\(answered)")
        #expect(answered.body.contains("France: outcome unknown"), "\(answered)")
        #expect(
            answered.body.contains("the web process stopped before the service's reply came"), "\(answered)")
    }

    /// The audit's attacks on the default setup (loopback, no token): a page on another site
    /// posting a toggle (a hidden form, `fetch` in no-cors mode, curl with its Origin), and DNS
    /// rebinding (the attacker's name in `Host`). Each is refused and nothing changes; the page
    /// itself still toggles, and an operator's `--allow-host` name is served.
    @Test(.hangGuard()) func anotherSiteOrARebindingNameChangesAndReadsNothing()
        throws
    {
        let sandbox = try Sandbox()
        let service = try Service(in: sandbox)
        defer { service.stop() }
        let web = try Web(following: service, extra: ["--allow-host", "table.example"])
        defer { web.stop() }
        let port = URL(string: web.base)?.port ?? 0
        let toggle = web.base + "/toggle?name=France"
        // Another site's form or fetch: its Origin, and no change token.
        #expect(try fetch(toggle, method: "POST", headers: ["Origin: http://evil.example"]).status == 403)
        #expect(try fetch(toggle, method: "POST", headers: ["Origin: null"]).status == 403)
        #expect(try fetch(toggle, method: "POST", headers: ["Sec-Fetch-Site: cross-site"]).status == 403)
        #expect(try fetch(toggle, method: "POST").status == 403, "no Origin, no Sec-Fetch-Site")
        // The right Origin without the page's change token (a guess) is refused too.
        let guessed = try fetch(
            toggle, method: "POST", headers: ["Origin: \(web.base)", "X-Countries-Change: 0000"])
        #expect(guessed.status == 403 && guessed.body.contains("reload the page"), "\(guessed)")
        // DNS rebinding: every path under the attacker's name is refused before anything is read.
        for path in ["/", "/events", "/toggle?name=France"] {
            let rebound = try fetch(
                web.base + path, method: path.hasPrefix("/toggle") ? "POST" : "GET",
                headers: ["Host: evil.example:\(port)"])
            #expect(rebound.status == 403, "\(path): \(rebound)")
            #expect(!rebound.body.contains("France"), "\(path) leaked the list")
        }
        #expect(try fetch(web.base + "/", headers: ["Host: table.example:\(port)"]).status == 200)
        #expect(try fetch(web.base + "/", headers: ["Host: localhost:\(port)"]).status == 200)
        let list = try service.run(["list", "--json"])
        #expect(list.stdout.contains(#""seq":0"#), "an attack changed the list: \(list.stdout)")
        // The operator hears of them: 8 refusals so far, 5 lines in the log's window of 10 s,
        // and each counted by status in the metrics.
        func logged() -> [Substring] {
            web.process.stderr.text.split(separator: "\n").filter { $0.contains("warning: refused ") }
        }
        #expect(eventually(within: .seconds(5) * testSlowdown) { logged().count >= 5 })
        #expect(logged().count == 5, "\(web.process.stderr.text)")
        #expect(
            logged().first?.contains(
                "refused POST /toggle (403): not toggled: the request comes from another site (http://evil.example)"
            )
                == true, "\(logged())")
        // The metrics are published once a second.
        #expect(
            eventually(within: .seconds(5) * testSlowdown) {
                (try? fetch(web.base + "/metrics"))?.body.contains(
                    #"countries_web_refused_total{status="403"} 8"#)
                    == true
            })

        // The page's own answer: its policy, and no referrer; the page itself still toggles.
        let page = try fetch(web.base + "/", include: true)
        #expect(page.body.contains("Content-Security-Policy: default-src 'none'; script-src 'nonce-"))
        #expect(page.body.contains("frame-ancestors 'none'"))
        #expect(page.body.contains("Referrer-Policy: no-referrer"))
        #expect(page.body.contains("<script nonce=\""))
        let wrongMethod = try fetch(web.base + "/toggle", method: "GET", include: true)
        #expect(wrongMethod.status == 405 && wrongMethod.body.contains("Allow: POST"), "\(wrongMethod)")
        #expect(try click(web, name: "France").status == 200)
    }

    @Test(.hangGuard()) func aListenThatIsNotLoopbackIsRefusedWithoutInsecure()
        throws
    {
        let run = try Countries.run(["web", "--listen", "0.0.0.0:\(try freeTCPPort())"])
        #expect(run.exitCode == 64)
        #expect(run.stderr.contains("not loopback"))
        #expect(run.stderr.contains("--insecure"))
        let bad = try Countries.run(["web", "--listen", "somewhere"])
        #expect(bad.exitCode == 64)
    }

    @Test(.hangGuard()) func requestBodiesAndUnknownPathsAreRefused() throws {
        let sandbox = try Sandbox()
        let service = try Service(in: sandbox)
        defer { service.stop() }
        let web = try Web(following: service)
        defer { web.stop() }
        #expect(try fetch(web.base + "/nothing").status == 404)
        #expect(try fetch(web.base + "/", method: "DELETE").status == 405)
        let body = try ChildProcess.run(
            "/usr/bin/curl",
            [
                "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10", "--data-binary", "x=1",
                web.base + "/toggle?name=France",
            ])
        #expect(body.stdout == "413")
        // A request line far over the per-connection memory bound is refused, not stored.
        let long = try fetch(web.base + "/?" + String(repeating: "a", count: 40_000))
        #expect(long.status >= 400)
        #expect(web.process.isRunning)
    }
}
