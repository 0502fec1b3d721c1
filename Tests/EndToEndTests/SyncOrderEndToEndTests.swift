import CountriesCore
import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

/// From outside, against the built `countries serve --db`: every acknowledgement leaves the
/// service after the fsync of its transaction (docs/RELIABILITY.md, section 1). `strace` is
/// attached to the running service and logs, with every thread, the reads of requests, the
/// syncs of the write-ahead log and the sends of replies; the test reads them in order.
@Suite(.serialized, .hangGuard())
struct SyncOrderEndToEndTests {
    /// Whether `strace` can trace the service here: installed (scripts/bootstrap installs it),
    /// and allowed to attach (root, or Yama's ptrace_scope 0).
    static let straceUsable: Bool = {
        let installed = ["/usr/bin/strace", "/bin/strace", "/usr/local/bin/strace"].contains {
            FileManager.default.isExecutableFile(atPath: $0)
        }
        let scope =
            (try? String(contentsOfFile: "/proc/sys/kernel/yama/ptrace_scope", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? "0"
        return installed && (geteuid() == 0 || scope == "0")
    }()

    /// What the trace says, read in the order strace wrote it.
    struct Tally {
        var requests = 0
        var walSyncs = 0
        var acknowledgements = 0
        /// Acknowledgements sent with no sync of the log completed since their request came in.
        var early: [String] = []

        init(trace: String) {
            var waiting = false
            var synced = false
            for line in trace.split(separator: "\n") {
                let text = String(line)
                if text.contains("recvfrom(") || text.contains("<... recvfrom resumed>") {
                    // A request read off the socket: a positive byte count.
                    if let result = text.split(separator: "=").last?.trimmingCharacters(in: .whitespaces),
                        let count = Int(result.split(separator: " ").first ?? ""), count > 0
                    {
                        requests += 1
                        waiting = true
                        synced = false
                    }
                } else if text.contains("sync(") || text.contains("sync resumed>") {
                    // Completed: the whole call on one line, or its resumption.
                    let done = !text.contains("<unfinished") && text.hasSuffix("= 0")
                    if done && (text.contains("-wal>") || text.contains("sync resumed>")) {
                        walSyncs += 1
                        synced = true
                    }
                } else if (text.contains("sendto(") || text.contains("sendmsg("))
                    && !text.contains("resumed>")
                {
                    acknowledgements += 1
                    if waiting && !synced { early.append(text) }
                    waiting = false
                }
            }
        }
    }

    @Test(.enabled(if: straceUsable, "needs strace allowed to attach (scripts/bootstrap installs it)"))
    func everyAcknowledgementFollowsTheSyncOfItsTransaction() throws {
        let scratch = try ReliabilityScratch()
        defer { scratch.remove() }
        let service = ReliabilityService(scratch: scratch, heartbeatMilliseconds: 60_000)
        defer { service.stop() }
        try service.start()
        let pid = try #require(service.pid)
        let client = try ReliabilityPirate(endpoint: service.commandEndpoint)
        defer { client.close() }
        // Connected and handshaken before the trace starts: what it sees is requests and replies.
        let first = try client.reply(#"{"op":"toggle","index":0,"id":"sync-0"}"#)
        #expect(first.ok)

        let tracePath = scratch.file("strace.txt")
        let strace = try ChildProcess(
            "strace",
            [
                "-f", "-y", "-e", "trace=recvfrom,fsync,fdatasync,sendto,sendmsg", "-e", "signal=none",
                "-o", tracePath, "-p", "\(pid)",
            ], stdout: .discard)
        defer { _ = strace.stop(signal: SIGINT) }
        // "Process N attached with M threads": every thread is traced from then on.
        let attached = eventually(within: .seconds(10)) { strace.stderr.text.contains("attached") }
        try #require(attached, "strace did not attach: \(strace.stderr.text)")

        let toggles = 100
        var seqs: [UInt64] = []
        for index in 1...toggles {
            // One try per request (a long one): a retry would be answered from memory, with no
            // commit of its own to wait for.
            let reply = try client.reply(
                #"{"op":"toggle","index":\#(index % 6),"id":"sync-\#(index)"}"#, perTry: .seconds(20),
                budget: .seconds(20))
            try #require(reply.ok, "\(reply)")
            seqs.append(try #require(reply.seq))
        }
        #expect(client.retries == 0)
        #expect(seqs == Array((first.seq! + 1)...(first.seq! + UInt64(toggles))))
        _ = strace.stop(signal: SIGINT)

        let trace = try String(contentsOfFile: tracePath, encoding: .utf8)
        let tally = Tally(trace: trace)
        #expect(tally.requests == toggles, "requests read: \(tally.requests)")
        #expect(tally.acknowledgements == toggles, "replies sent: \(tally.acknowledgements)")
        #expect(tally.walSyncs >= toggles, "one sync of the log per commit at least: \(tally.walSyncs)")
        #expect(
            tally.early.isEmpty,
            "\(tally.early.count) replies went out before the sync of their transaction: \(tally.early.prefix(3))"
        )
        ReliabilitySizes.report(
            "sync order: \(toggles) toggles, \(tally.walSyncs) syncs of the log, \(tally.acknowledgements) replies, \(tally.early.count) before their sync"
        )
    }
}
