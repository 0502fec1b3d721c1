import CountriesStore
import Foundation
import Testing

@testable import CountriesService

/// The in-memory store's request ids: found by fingerprint, told apart by the id in the record,
/// forgotten oldest first with their bytes.
@Suite struct RememberedRequestLogTests {
    private let now: Int64 = 1_000_000

    private func retention(keeping count: Int) -> RequestIDRetention {
        var retention = RequestIDRetention()
        retention.minimumAge = .zero
        retention.minimumCount = count
        retention.maximumCount = count
        return retention
    }

    private func request(_ id: String, asked: String? = "ask \(UUID())", reply: String? = nil)
        -> RememberedRequest
    {
        RememberedRequest(
            id: id, request: asked.map { Array($0.utf8) }, reply: Array((reply ?? "reply to \(id)").utf8))
    }

    @Test func answersWhatWasRememberedByteForByte() {
        var log = RememberedRequestLog(retention: retention(keeping: 10))
        let asked = request("a", asked: "{\"op\":\"toggle\"}", reply: "{\"ok\":true}")
        let old = request("b", asked: nil, reply: "")
        log.remember(asked, nowMilliseconds: now)
        log.remember(old, nowMilliseconds: now)
        log.forgetExpired(nowMilliseconds: now)
        #expect(log.request(for: "a", nowMilliseconds: now) == asked)
        #expect(log.request(for: "b", nowMilliseconds: now) == old, "no request and an empty reply")
        #expect(log.request(for: "c", nowMilliseconds: now) == nil)
        #expect(log.request(for: "", nowMilliseconds: now) == nil)
    }

    /// Records on either side of the size up to which one is gathered before it is appended
    /// (1,024 bytes: 973 of reply, 15 asked, 4 of id and 32 of header is exactly that; a reset's
    /// reply holds the whole list), interleaved, each answered byte for byte and forgotten
    /// oldest first.
    @Test func recordsShortAndLongAreKeptWhole() {
        var log = RememberedRequestLog(retention: retention(keeping: 4))
        var remembered: [RememberedRequest] = []
        for (number, replyBytes) in [10, 960, 973, 1_000, 5_000, 20, 70_000, 1].enumerated() {
            let reply = String(repeating: Character(UnicodeScalar(UInt8(65 + number))), count: replyBytes)
            let next = request(
                "id-\(number)", asked: number % 3 == 0 ? nil : "{\"op\":\"reset\"}", reply: reply)
            remembered.append(next)
            log.remember(next, nowMilliseconds: now)
            log.forgetExpired(nowMilliseconds: now)
            for (index, earlier) in remembered.enumerated() {
                let expected = index >= remembered.count - 4 ? earlier : nil
                #expect(
                    log.request(for: earlier.id, nowMilliseconds: now) == expected,
                    "\(earlier.id) after \(number)")
            }
        }
    }

    /// Every id shares one fingerprint: each still gets its own request, and forgetting takes
    /// out exactly the oldest, wherever each was kept.
    /// Fingerprints that ids share: all one, or one per length modulo 3.
    enum Sharing: CaseIterable, Sendable {
        case all, byLength

        func fingerprint(_ id: String) -> UInt64 {
            switch self {
            case .all: 7
            case .byLength: UInt64(id.utf8.count % 3)
            }
        }
    }

    @Test(arguments: Sharing.allCases)
    func idsSharingAFingerprintAreToldApart(sharing: Sharing) {
        var log = RememberedRequestLog(retention: retention(keeping: 5), fingerprint: sharing.fingerprint)
        var remembered: [RememberedRequest] = []
        for number in 0..<40 {
            let next = request(String(repeating: "x", count: number % 7 + 1) + "-\(number)")
            remembered.append(next)
            log.remember(next, nowMilliseconds: now)
            log.forgetExpired(nowMilliseconds: now)
            for (index, earlier) in remembered.enumerated() {
                let expected = index > remembered.count - 6 ? earlier : nil
                #expect(
                    log.request(for: earlier.id, nowMilliseconds: now) == expected,
                    "\(earlier.id) after \(number)")
            }
            let kept = Set(remembered.suffix(5).map(\.id))
            #expect(Set(log.sharingFingerprint.keys).isSubset(of: kept), "a forgotten id left its table")
        }
        #expect(!log.sharingFingerprint.isEmpty, "the test made ids share a fingerprint")
    }

    /// An id remembered again (forgotten already but not yet trimmed, or a store's retry of a
    /// refused commit) answers its later request, and forgetting its first record leaves it.
    @Test(arguments: [false, true])
    func anIDRememberedAgainKeepsItsLaterRequest(sharingFingerprint: Bool) {
        var log = RememberedRequestLog(
            retention: retention(keeping: 3),
            fingerprint: sharingFingerprint ? { _ in 1 } : { UInt64($0.hashValue.magnitude) })
        log.remember(request("other"), nowMilliseconds: now)
        log.remember(request("id", reply: "first"), nowMilliseconds: now)
        let later = request("id", reply: "second")
        log.remember(later, nowMilliseconds: now)
        log.forgetExpired(nowMilliseconds: now)
        #expect(log.request(for: "id", nowMilliseconds: now) == later)
        log.remember(request("x"), nowMilliseconds: now)
        log.remember(request("y"), nowMilliseconds: now)
        log.forgetExpired(nowMilliseconds: now)
        #expect(
            log.request(for: "id", nowMilliseconds: now) == later, "its first record is forgotten, not it")
        #expect(log.request(for: "other", nowMilliseconds: now) == nil)
        log.remember(request("z"), nowMilliseconds: now)
        log.forgetExpired(nowMilliseconds: now)
        #expect(log.request(for: "id", nowMilliseconds: now) == nil)
    }

    /// A change's id is looked up, then remembered: its fingerprint is computed once. An id
    /// remembered without that look-up just before is fingerprinted for itself.
    @Test func anIDLookedUpThenRememberedIsFingerprintedOnce() {
        final class Calls: @unchecked Sendable { var ids: [String] = [] }
        let calls = Calls()
        var log = RememberedRequestLog(retention: retention(keeping: 10)) { id in
            calls.ids.append(id)
            return UInt64(id.utf8.first ?? 0)
        }
        let a = request("a")
        #expect(log.request(for: "a", nowMilliseconds: now) == nil)
        log.remember(a, nowMilliseconds: now)
        #expect(calls.ids == ["a"])
        #expect(log.request(for: "b", nowMilliseconds: now) == nil)
        let c = request("c")
        log.remember(c, nowMilliseconds: now)
        #expect(calls.ids == ["a", "b", "c"], "c was not the id looked up")
        #expect(log.request(for: "a", nowMilliseconds: now) == a)
        #expect(log.request(for: "c", nowMilliseconds: now) == c)
        #expect(log.request(for: "b", nowMilliseconds: now) == nil)
    }

    /// The buffer holds the kept records and at most as many bytes again, however many ids
    /// pass through it: forgetting frees bytes, not just ids.
    @Test func theBufferStaysWithinTwiceWhatIsKept() {
        var log = RememberedRequestLog(retention: retention(keeping: 1_000))
        let reply = String(repeating: "r", count: 2_000)
        var largest = 0
        for number in 0..<20_000 {
            log.remember(request("id-\(number)", reply: reply), nowMilliseconds: now)
            log.forgetExpired(nowMilliseconds: now)
            largest = max(largest, log.bufferBytes)
        }
        #expect(log.count == 1_000)
        let kept = 1_000 * (32 + 8 + 41 + 2_000)
        #expect(largest <= 2 * kept + 2_100, "\(largest) bytes for \(kept) kept")
        #expect(log.request(for: "id-19000", nowMilliseconds: now)?.reply.count == 2_000)
        #expect(log.request(for: "id-18999", nowMilliseconds: now) == nil)
    }
}
