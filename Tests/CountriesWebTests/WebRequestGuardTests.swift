import CountriesWeb
import Testing

/// The web page's rules against DNS rebinding and cross-site changes, as a plain value.
@Suite struct WebRequestGuardTests {
    private let guarded = WebRequestGuard(allowedNames: ["Table.Example"], changeToken: "c0ffee")

    private func check(_ headers: [String: String], changes: Bool = false) -> Int? {
        guarded.check(headers: headers, changes: changes)?.status
    }

    @Test func onlyNamesThatCannotBeReboundAreServed() {
        for host in [
            "127.0.0.1:8080", "127.0.0.1", "localhost:8080", "LOCALHOST", "[::1]:8080", "10.0.0.7:80",
            "table.example:8080", "TABLE.example",
        ] {
            #expect(check(["host": host]) == nil, "\(host)")
        }
        for host in [
            "evil.example:8080", "127.0.0.1.evil.example", "localhost.evil.example", "1.2.3.4.5", "256.1.1.1",
        ] {
            #expect(check(["host": host]) == 403, "\(host)")
        }
        // Not names at all: the audit's `evil.com@127.0.0.1`, a port past 65535, markup.
        for host in [
            "", ":8080", "127.0.0.1:80:80", "127.0.0.1:x", "[::1", "a b", "evil\u{1B}[2J",
            "evil.com@127.0.0.1", "127.0.0.1:99999", "[::1]:99999", "127.0.0.1%2f", "<script>", "127.0.0.1:",
            "127.0.0.1:+80",
        ] {
            #expect(check(["host": host]) == 400, "\(host)")
        }
        #expect(check([:]) == 400, "no Host at all")
    }

    @Test func aChangeComesFromThePageWithItsToken() {
        let page = [
            "host": "127.0.0.1:8080", "origin": "http://127.0.0.1:8080", "x-countries-change": "c0ffee",
        ]
        #expect(check(page, changes: true) == nil)
        var sameSite = page
        sameSite["origin"] = nil
        sameSite["sec-fetch-site"] = "same-origin"
        #expect(check(sameSite, changes: true) == nil, "without Origin, Sec-Fetch-Site vouches")

        for origin in [
            "http://evil.example", "null", "http://127.0.0.1:8081", "http://localhost:8080",
            "ftp://127.0.0.1:8080", "http://127.0.0.1:8080.evil.example",
        ] {
            var other = page
            other["origin"] = origin
            #expect(check(other, changes: true) == 403, "\(origin)")
        }
        var crossSite = sameSite
        crossSite["sec-fetch-site"] = "cross-site"
        #expect(check(crossSite, changes: true) == 403)
        var neither = sameSite
        neither["sec-fetch-site"] = nil
        #expect(check(neither, changes: true) == 403, "curl without Origin")
        for token in [nil, "", "c0ffe", "c0ffee ", "C0FFEE"] {
            var wrong = page
            wrong["x-countries-change"] = token
            #expect(check(wrong, changes: true) == 403, "\(String(describing: token))")
        }
        #expect(check(page, changes: false) == nil)
    }

    @Test func refusalsQuoteOnlyPrintableText() {
        let refusal = guarded.check(headers: ["host": "evil.example"], changes: false)
        #expect(refusal?.message.contains("--allow-host evil.example") == true)
        let origin = guarded.check(
            headers: ["host": "127.0.0.1", "origin": "http://e\u{1B}]0;x\u{7}vil"], changes: true)
        #expect(origin?.message.contains("\u{1B}") == false)
    }
}
