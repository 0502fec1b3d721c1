import Foundation
import TestSupport
import Testing
import ZeroMQ

@Suite("Proxy")
struct ProxyTests {
    @Test("proxy forwards PUB -> XSUB/XPUB -> SUB and returns once the context is shut down")
    func forwardsAndStops() throws {
        let context = try Context()
        let ready = DispatchSemaphore(value: 0)
        let outcome = Box<String>("not finished")

        // The proxy's sockets live on its own thread, as libzmq requires.
        let done = startThread {
            do {
                let frontend = try context.makeSocket(.xsub)
                let backend = try context.makeSocket(.xpub)
                defer {
                    frontend.close()
                    backend.close()
                }
                try frontend.bind("inproc://proxy-front")
                try backend.bind("inproc://proxy-back")
                ready.signal()
                try proxy(frontend: frontend, backend: backend)
                outcome.value = "returned"
            } catch {
                outcome.value = "error \(error)"
            }
        }
        #expect(wait(ready))

        let publisher = try context.testSocket(.pub)
        let subscriber = try context.testSocket(.sub, timeout: 20)
        try publisher.connect("inproc://proxy-front")
        try subscriber.connect("inproc://proxy-back")
        try subscriber.subscribe("weather")

        // The subscription has to travel SUB -> XPUB -> proxy -> XSUB -> PUB first.
        var received: [String]?
        for _ in 0..<200 where received == nil {
            try publisher.send([frame("weather"), frame("sunny")])
            received = texts(try subscriber.receive())
        }
        #expect(received == ["weather", "sunny"])
        try publisher.send([frame("traffic"), frame("jammed")])
        try publisher.send([frame("weather"), frame("rain")])
        try subscriber.setOption(.receiveTimeout, patience)
        var next = texts(try subscriber.receive())
        while next == ["weather", "sunny"] { next = texts(try subscriber.receive()) }
        #expect(next == ["weather", "rain"])

        context.shutdown()
        #expect(wait(done))
        #expect(outcome.value == "returned")
        publisher.close()
        subscriber.close()
        context.terminate()
    }
}
