import Foundation
import HTTPServer
import TestSupport
import Testing

/// What the server refuses before any handler sees it: a header that must come once, given
/// twice (one hop reads the first, another the last), and a NUL in the path, which the decoded
/// path ends at.
@Suite struct RequestMalformationTests {
    @Test func repeatedSingleHeadersAndNULsInThePathAreRefused() {
        #expect(HTTPRequest.malformation(target: "/", repeatedHeaders: []) == nil)
        #expect(HTTPRequest.malformation(target: "/events?x=1", repeatedHeaders: ["accept"]) == nil)
        #expect(
            HTTPRequest.malformation(target: "/", repeatedHeaders: ["host"])
                == "the request gives the host header more than once")
        #expect(
            HTTPRequest.malformation(target: "/toggle", repeatedHeaders: ["origin", "accept"])
                == "the request gives the origin header more than once")
        for target in ["/%00xyz", "/events%00junk", "/%00", "/a%00?b"] {
            #expect(
                HTTPRequest.malformation(target: target, repeatedHeaders: [])
                    == "the request's path holds a NUL (%00)", "\(target)")
        }
        // In the query a NUL is a value's business (a name with one is then not found).
        #expect(HTTPRequest.malformation(target: "/toggle?name=a%00b", repeatedHeaders: []) == nil)
    }

    /// On the wire: `Host: evil.com` then `Host: 127.0.0.1` reached the handler as the second
    /// (200), and `/%00xyz` as `/`.
    @Test(.hangGuard()) func theServerAnswers400BeforeTheHandler() throws {
        let handled = Box<[String]>([])
        let server = try HTTPServer(host: "127.0.0.1", port: 0) { request in
            handled.update { $0.append(request.path) }
            return .text(200, "page")
        }
        defer { server.stop() }
        func answer(_ request: String) throws -> String {
            let client = try RawConnection(port: server.port, from: "127.0.0.1")
            client.send(request)
            _ = eventually(within: .seconds(5), every: .milliseconds(1)) {
                client.drain()
                return client.closedByServer
            }
            return client.text
        }
        let twice = try answer(
            "GET / HTTP/1.1\r\nHost: evil.example\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        #expect(twice.hasPrefix("HTTP/1.1 400"), "\(twice)")
        #expect(twice.contains("the request gives the host header more than once"), "\(twice)")
        let nul = try answer("GET /%00xyz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        #expect(nul.hasPrefix("HTTP/1.1 400"), "\(nul)")
        #expect(handled.value.isEmpty, "\(handled.value)")
        let plain = try answer("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        #expect(plain.hasPrefix("HTTP/1.1 200"), "\(plain)")
    }
}
