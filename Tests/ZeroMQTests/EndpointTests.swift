import Testing
import ZeroMQ

@Suite("Endpoint.isLoopbackOrLocal (protected mode)")
struct EndpointTests {
    @Test(
        "Loopback tcp, ipc and inproc stay on this host",
        arguments: [
            "tcp://127.0.0.1:5555",
            "tcp://127.1.2.3:5555",
            "tcp://127.0.0.1:*",
            "tcp://localhost:5555",
            "tcp://LOCALHOST:5555",
            "tcp://[::1]:5555",
            "tcp://lo:5555",
            "ipc:///tmp/countries/commands",
            "ipc://@abstract-name",
            "inproc://countries",
        ])
    func local(_ endpoint: String) {
        #expect(Endpoint.isLoopbackOrLocal(endpoint))
    }

    @Test(
        "Wildcards, other addresses and interfaces, and other transports are exposed",
        arguments: [
            "tcp://*:5555",
            "tcp://0.0.0.0:5555",
            "tcp://10.0.0.1:5555",
            "tcp://192.168.1.20:5555",
            "tcp://[::]:5555",
            "tcp://[2001:db8::1]:5555",
            "tcp://eth0:5555",
            "tcp://127.0.0.1.example.com:5555",
            "tcp://127.0.0.256:5555",
            "tcp://128.0.0.1:5555",
            "tcp://127.0.0.1",
            "pgm://eth0;239.192.1.1:5555",
            "epgm://eth0;239.192.1.1:5555",
            "ws://127.0.0.1:5555",
            "udp://127.0.0.1:5555",
            "",
        ])
    func exposed(_ endpoint: String) {
        #expect(!Endpoint.isLoopbackOrLocal(endpoint))
    }

    /// A failed connect proves nothing listens only where no network lies between: ipc, and
    /// tcp on loopback; elsewhere the network may be down for a moment.
    @Test func aRefusalIsConclusiveOnlyOnThisHost() {
        for endpoint in [
            "ipc:///tmp/x.sock", "tcp://127.0.0.1:5555", "tcp://localhost:5555", "tcp://[::1]:5555",
        ] {
            #expect(Endpoint.refusalIsConclusive(endpoint), "\(endpoint)")
        }
        for endpoint in [
            "tcp://10.0.0.1:5555", "tcp://db.example:5555", "tcp://10.0.0.2:4000;127.0.0.1:5555",
            "inproc://x",
            "127.0.0.1:5555",
        ] {
            #expect(!Endpoint.refusalIsConclusive(endpoint), "\(endpoint)")
        }
    }

    /// An endpoint without a transport is the common slip: the problem names the one meant.
    @Test func problems() {
        #expect(Endpoint.problem("tcp://127.0.0.1:5555") == nil)
        #expect(Endpoint.problem("ipc:///tmp/x") == nil)
        #expect(
            Endpoint.problem("127.0.0.1:5555")
                == "127.0.0.1:5555 has no transport; did you mean tcp://127.0.0.1:5555?")
        #expect(
            Endpoint.problem("/tmp/x.sock") == "/tmp/x.sock has no transport; did you mean ipc:///tmp/x.sock?"
        )
        #expect(
            Endpoint.problem("http://x:1")
                == "http://x:1 has an unknown transport 'http'; use tcp://, ipc:// or inproc://")
        // A Unix socket's path holds at most 107 bytes (and a NUL).
        let longest = "/tmp/" + String(repeating: "x", count: 102)
        #expect(Endpoint.problem("ipc://" + longest) == nil)
        #expect(
            Endpoint.problem("ipc://" + longest + "x")
                == "ipc://\(longest)x names a socket file of 108 bytes; a Unix socket's path may have at most 107: use a shorter one"
        )
    }

    /// A tcp endpoint needs a host and a port ZeroMQ can use, an ipc one a path: otherwise it
    /// is the caller's slip (a usage error), not a service that cannot be reached.
    @Test(arguments: [
        "tcp://127.0.0.1:5555", "tcp://*:5555", "tcp://127.0.0.1:*", "tcp://[::1]:5555", "tcp://eth0:1",
        "tcp://127.0.0.1:65535", "tcp://10.0.0.1:5555;127.0.0.1:5555", "ipc:///tmp/x", "ipc://@abstract",
        "inproc://anything",
    ])
    func usableAddresses(endpoint: String) {
        #expect(Endpoint.problem(endpoint) == nil)
    }

    @Test(arguments: [
        ("tcp://127.0.0.1:abc", "no valid port ('abc'"), ("tcp://127.0.0.1:99999", "no valid port ('99999'"),
        ("tcp://127.0.0.1:", "no valid port (''"), ("tcp://127.0.0.1:-1", "no valid port ('-1'"),
        ("tcp://127.0.0.1:５５５５", "no valid port"), ("tcp://", "no host and port"),
        ("tcp://localhost", "no host and port"), ("tcp://:5555", "no host and port"),
        ("ipc://", "names no socket file"),
    ])
    func unusableAddresses(endpoint: String, problem: String) {
        let found = Endpoint.problem(endpoint) ?? "nil"
        #expect(found.hasPrefix(endpoint) && found.contains(problem), "\(found)")
    }
}
