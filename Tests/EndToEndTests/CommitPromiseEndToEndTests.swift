import CountriesCore
import Foundation
@preconcurrency import Glibc
import SQLite
import TestSupport
import Testing
import ZeroMQ

/// From outside, against the built `countries serve`: nothing is acknowledged that is not
/// committed (the store locked by another process while a retry is queued behind a commit), an
/// id reused for another request is refused, and a request's id, numbers and keys are checked
/// before anything is remembered (docs/PROTOCOL.md, docs/RELIABILITY.md).
@Suite(.serialized, .hangGuard())
struct CommitPromiseEndToEndTests {
    /// A DEALER on the service's command endpoint, REQ-style (empty delimiter).
    private final class Dealer {
        let context: Context
        let socket: Socket

        init(endpoint: String) throws {
            context = try Context()
            socket = try context.makeSocket(.dealer)
            try socket.setOption(.linger, 0)
            try socket.setOption(.receiveTimeout, Int32(30_000 * testSlowdown))
            try socket.connect(endpoint)
        }

        func send(_ body: String) throws {
            try #require(try socket.send([Data(), Data(body.utf8)]))
        }

        func receive() throws -> Reply {
            let frames = try #require(try socket.receive(), "no reply within 30 s")
            return try Reply.decode(try #require(frames.last))
        }

        /// Sends every body at once, then reads as many replies.
        func pipeline(_ bodies: [String]) throws -> [Reply] {
            for body in bodies { try send(body) }
            return try bodies.map { _ in try receive() }
        }

        func close() {
            socket.close()
            context.terminate()
        }
    }

    /// Runs `body` against a started service (its log at `error`; seeded with `seed` when
    /// given) and a DEALER on its command endpoint; stops and removes both after.
    private func withService(seed: [String]? = nil, _ body: (ReliabilityService, Dealer) throws -> Void)
        throws
    {
        let scratch = try ReliabilityScratch()
        defer { scratch.remove() }
        let arguments = try seed.map { ["--seed", try scratch.seedFile("seed.txt", names: $0)] } ?? []
        let service = ReliabilityService(scratch: scratch, logLevel: "error", extraArguments: arguments)
        defer { service.stop() }
        try service.start()
        let dealer = try Dealer(endpoint: service.commandEndpoint)
        defer { dealer.close() }
        try body(service, dealer)
    }

    /// The store's file and its write-ahead log, in bytes.
    private func storeBytes(_ path: String) -> Int {
        [path, path + "-wal"].reduce(0) { total, file in
            total + (((try? FileManager.default.attributesOfItem(atPath: file))?[.size] as? Int) ?? 0)
        }
    }

    /// The issue's reproduction: another process holds the store's write lock (`BEGIN IMMEDIATE`)
    /// for longer than the service's busy timeout while a toggle and a retried toggle arrive.
    @Test func aLockedStoreAcknowledgesNothingAndNoSeqIsHandedOutTwice() throws {
        try withService { service, dealer in

            let locker = try Database(path: service.storePath)
            try locker.execute("BEGIN IMMEDIATE")
            var locked = true
            defer { if locked { try? locker.execute("ROLLBACK") } }
            let france = #"{"op":"toggle","name":"France","id":"f-1"}"#
            let whileLocked = try dealer.pipeline([
                #"{"op":"toggle","name":"Italy","id":"i-1"}"#, france, france,
            ])
            #expect(
                whileLocked.map(\.error?.code) == ["storage_error", "storage_error", "storage_error"],
                "\(whileLocked)")
            try locker.execute("ROLLBACK")
            locked = false

            let list = try #require(try dealer.pipeline([#"{"op":"list"}"#]).first)
            #expect(list.seq == 0, "nothing was committed")
            #expect(list.countries?.first { $0.name == "France" }?.visited == false)
            let after = try dealer.pipeline([#"{"op":"toggle","name":"Spain","id":"s-1"}"#, france, france])
            #expect(after.map(\.seq) == [1, 2, 2], "\(after)")
            #expect(after[1] == after[2])
            #expect(after[1].country == IndexedCountry(index: 2, name: "France", visited: true))
        }
    }

    @Test func anIdReusedForAnotherRequestAndBadNumbersAndKeysAreRefused() throws {
        try withService { service, dealer in

            let first = try dealer.pipeline([#"{"op":"toggle","name":"France","id":"k-1"}"#])
            #expect(first.first?.seq == 1)
            let replies = try dealer.pipeline([
                #"{"op":"remove","name":"Italy","id":"k-1"}"#,
                #"{"op":"toggle","index":0.99999999999999999999}"#,
                #"{"op":"toggle","index":1e-400}"#,
                #"{"op":"toggle","index":1,"index":2}"#,
                #"{"op":"history","since":0.5}"#,
                #"{"op":"toggle","index":3,"if_seq":1.0000000000000000001}"#,
                #"{"op":"toggle","index":3,"id":"caf\u00e9"}"#,
                #"{"op":"list"}"#,
            ])
            #expect(replies[0].error?.code == "conflict")
            #expect(replies[0].error?.message.hasPrefix("this id was used for another request") == true)
            for reply in replies[1...6] { #expect(reply.error?.code == "bad_request", "\(reply)") }
            #expect(replies[3].error?.message.contains("index") == true, "\(replies[3])")
            #expect(replies[6].error?.message.contains("bytes") == true, "\(replies[6])")
            #expect(replies[7].seq == 1 && replies[7].countries?.count == 8, "nothing changed")
        }
    }

    /// Ids were counted in characters: 64 characters of combining marks made a 60 KB id, and it
    /// was remembered with its reply (refusals too). Now such a request is refused unremembered.
    @Test func fiveHundredRequestsWithSixtyKilobyteIdsHardlyGrowTheStore() throws {
        try withService { service, dealer in

            let marks = String(repeating: "\u{0301}", count: 469)
            let before = storeBytes(service.storePath)
            var codes: [String: Int] = [:]
            var idBytes = 0
            let count = 500
            for start in stride(from: 0, to: count, by: 25) {
                let bodies = (start..<min(count, start + 25)).map { number in
                    let bases = "\(number)".padding(toLength: 64, withPad: "x", startingAt: 0)
                    let id = bases.map { "\($0)\(marks)" }.joined()
                    idBytes = id.utf8.count
                    return #"{"op":"toggle","index":99,"id":"\#(id)"}"#
                }
                for reply in try dealer.pipeline(bodies) { codes[reply.error?.code ?? "ok", default: 0] += 1 }
            }
            let after = storeBytes(service.storePath)
            let growth = after - before
            #expect(codes == ["bad_request": count], "\(codes)")
            #expect(growth < 8 << 20, "the store grew by \(growth) bytes")
            ReliabilitySizes.report(
                "id_growth requests=\(count) id_bytes=\(idBytes) store_bytes before=\(before) after=\(after) growth=\(growth)"
            )
        }
    }

    /// The issue's reproduction: 12,000 toggles of a missing name, each under a fresh id (all
    /// `not_found`), then the retry of an acknowledged toggle under its id. Refusals used to be
    /// remembered and pushed the change's id out of the last 10,000, so the retry applied it a
    /// second time (seq 2). Now only changes are remembered, and kept by age as well as count.
    @Test func refusalsDoNotPushAnAcknowledgedChangesIDOut() throws {
        try withService { service, dealer in

            let toggle = #"{"op":"toggle","name":"France","id":"acknowledged-1"}"#
            let first = try dealer.pipeline([toggle])[0]
            #expect(first.error == nil && first.seq == 1, "\(first)")
            var codes: [String: Int] = [:]
            let refusals = 12_000
            for start in stride(from: 0, to: refusals, by: 500) {
                let bodies = (start..<start + 500).map {
                    #"{"op":"toggle","name":"Atlantis","id":"refused-\#($0)"}"#
                }
                for reply in try dealer.pipeline(bodies) { codes[reply.error?.code ?? "ok", default: 0] += 1 }
            }
            #expect(codes == ["not_found": refusals], "\(codes)")
            let retry = try dealer.pipeline([toggle, #"{"op":"list"}"#])
            #expect(retry[0] == first, "the retry gets the first reply: \(retry[0])")
            #expect(retry[1].seq == 1, "applied once: \(retry[1])")
            #expect(retry[1].countries?.first(where: { $0.name == "France" })?.visited == true)
            ReliabilitySizes.report(
                "id_window refusals=\(refusals) retry_seq=\(retry[0].seq.map(String.init) ?? "none") list_seq=\(retry[1].seq.map(String.init) ?? "none")"
            )
        }
    }

    /// Ids are kept by age as well as count: 10,500 changes in a few seconds do not push out the
    /// id of the first, which a client may still be retrying.
    @Test func aBurstOfChangesKeepsAYoungIDRemembered() throws {
        try withService { service, dealer in

            let toggle = #"{"op":"toggle","name":"France","id":"first-of-a-burst"}"#
            let first = try dealer.pipeline([toggle])[0]
            let changes = Limits.retainedRequestIDs + 500
            for start in stride(from: 0, to: changes, by: 500) {
                let bodies = (start..<start + 500).map {
                    #"{"op":"toggle","name":"Italy","id":"burst-\#($0)"}"#
                }
                for reply in try dealer.pipeline(bodies) { #expect(reply.error == nil, "\(reply)") }
            }
            let retry = try dealer.pipeline([toggle])[0]
            #expect(retry == first, "the retry gets the first reply: \(retry)")
            ReliabilitySizes.report(
                "id_age changes_after=\(changes) retry_seq=\(retry.seq.map(String.init) ?? "none")")
        }
    }

    /// The issue's reproduction: 20 resets of a 10,000-name list grew the store from 1.2 to
    /// 64.5 MB, each keeping the list twice (its event and its remembered reply). Now the reply
    /// is kept by reference to the event; the retry of the first reset still gets its reply.
    @Test func resetsKeepTheirListOnce() throws {
        let names = (0..<Limits.maximumCountries).map { "Country number \($0)" }
        try withService(seed: names) { service, dealer in

            let before = storeBytes(service.storePath)
            let resets = 20
            var replies: [Reply] = []
            for number in 0..<resets {
                replies += try dealer.pipeline([#"{"op":"reset","id":"reset-\#(number)"}"#])
            }
            let after = storeBytes(service.storePath)
            let listBytes = try dealer.pipeline([#"{"op":"list"}"#])[0].encoded().count
            let retry = try dealer.pipeline([#"{"op":"reset","id":"reset-0"}"#])[0]
            #expect(retry == replies[0], "the retry gets the first reply")
            #expect(replies.allSatisfy { $0.countries?.count == Limits.maximumCountries })
            let growth = after - before
            ReliabilitySizes.report(
                "reset_growth resets=\(resets) list_bytes=\(listBytes) store_bytes before=\(before) after=\(after) growth=\(growth) per_reset=\(growth / resets)"
            )
            // Each reset keeps its event (about the list's bytes); before, its reply too.
            #expect(growth < resets * listBytes * 3 / 2, "the store grew by \(growth) bytes")
        }
    }
}
