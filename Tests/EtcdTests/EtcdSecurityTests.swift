import Etcd
import Foundation
import TestSupport
import Testing

/// The client and the watcher against etcd with TLS, client certificates and users, set up as
/// docs/SECURITY.md says: what a replica with the right files and user can do, and what
/// everyone else cannot.
@Suite(
    .hangGuard(),
    .enabled(if: EtcdCluster.isAvailable, "etcd is not installed (scripts/bootstrap)"))
struct EtcdSecurityTests {
    private static let password = "a password with spaces and ü"

    /// A watch's `shouldStop` that ends it after 10 s (times the slowdown), if nothing else did.
    private static func stopAfterAWhile() -> () -> Bool {
        let deadline = ContinuousClock.now + .seconds(10) * testSlowdown
        return { ContinuousClock.now > deadline }
    }

    /// A secured one-member cluster whose user `countries` may use exactly `/countries/`.
    private func securedCluster(arguments: [String] = []) throws -> EtcdCluster {
        let cluster = try EtcdCluster(members: 1, arguments: arguments, secured: true)
        try cluster.enableAuthentication(user: "countries", password: Self.password, prefix: "/countries/")
        return cluster
    }

    private func security(
        _ cluster: EtcdCluster, user: EtcdUser? = EtcdUser(name: "countries", password: password)
    )
        -> EtcdSecurity
    {
        let files = cluster.certificates!
        return EtcdSecurity(
            certificateAuthorityFile: files.ca, certificateFile: files.clientCertificate,
            keyFile: files.clientKey,
            user: user)
    }

    private func put(_ client: EtcdClient, _ key: String) throws(EtcdError) -> Int64 {
        try client.txn(compare: [], success: [.put(key, Data("v".utf8))], failure: []).revision
    }

    @Test func theRightFilesAndUserReadWriteAndWatchTheirPrefix() throws {
        let cluster = try securedCluster()
        let client = EtcdClient(endpoints: cluster.clientURLs, security: security(cluster))
        let revision = try put(client, "/countries/a")
        #expect(try client.range(EtcdRangeRequest(key: "/countries/a")).kvs.first?.modRevision == revision)
        #expect(try client.members().count == 1)
        #expect(try client.status(of: cluster.clientURLs[0]).isLeader)
        let watcher = EtcdWatcher(endpoints: cluster.clientURLs, security: security(cluster))
        var seen: [String] = []
        let deadline = ContinuousClock.now + .seconds(5) * testSlowdown
        try watcher.watch(
            .prefix("/countries/"), startRevision: revision, shouldStop: { ContinuousClock.now > deadline },
            onEvents: { events, _ in
                seen += events.map(\.kv.key)
                return false
            })
        #expect(seen == ["/countries/a"])
    }

    @Test func withoutTheUserOrOutsideThePrefixEtcdRefusesAndNothingIsWritten() throws {
        let cluster = try securedCluster()
        // The certificate alone proves nothing: no token, no access.
        let anonymous = EtcdClient(endpoints: cluster.clientURLs, security: security(cluster, user: nil))
        #expect(throws: EtcdError.self) { try put(anonymous, "/countries/forged") }
        do {
            _ = try put(anonymous, "/countries/forged")
            Issue.record("a client without a user wrote")
        } catch {
            // Over gRPC, etcd takes a client certificate's common name for the user when no
            // token comes (--client-cert-auth); that name has no role here.
            #expect(error.code == .rejected && error.message.contains("permission denied"), "\(error)")
        }
        let wrongPassword = EtcdClient(
            endpoints: cluster.clientURLs,
            security: security(cluster, user: EtcdUser(name: "countries", password: "guess")))
        do {
            _ = try wrongPassword.range(EtcdRangeRequest(key: "/countries/a"))
            Issue.record("a wrong password read the store")
        } catch {
            #expect(error.code == .rejected)
            #expect(
                error.message.contains("invalid user ID or password") && error.message.contains("--etcd-user")
            )
            #expect(!error.message.contains("guess"))
        }
        let user = EtcdClient(endpoints: cluster.clientURLs, security: security(cluster))
        do {
            _ = try put(user, "/other/key")
            Issue.record("the user wrote outside its prefix")
        } catch {
            #expect(error.code == .rejected && error.message.contains("permission denied"))
        }
        // A watch outside the prefix is refused too.
        let watcher = EtcdWatcher(endpoints: cluster.clientURLs, security: security(cluster))
        do {
            try watcher.watch(
                .prefix("/other/"), startRevision: 0, shouldStop: Self.stopAfterAWhile(),
                onEvents: { _, _ in false })
            Issue.record("the user watched outside its prefix")
        } catch {
            #expect(error.code == .rejected && error.message.contains("permission denied"), "\(error)")
        }
        let run = try cluster.etcdctl(["--endpoints", cluster.clientURLs[0], "get", "--prefix", "/"])
        #expect(run.exitCode == 0 && !run.stdout.contains("forged") && !run.stdout.contains("/other/"))
    }

    @Test func aCertificateAuthorityThatDidNotSignTheMembersIsRefusedAtOnce() throws {
        let cluster = try securedCluster()
        let other = try ScratchDirectory(prefix: "other-ca")
        let made = try ChildProcess.run(
            CountriesBinary.packageRoot + "/scripts/etcd-certs", [other.path + "/certificates"],
            environment: ProcessInfo.processInfo.environment, timeout: .seconds(30))
        #expect(made.exitCode == 0)
        var security = security(cluster)
        security.certificateAuthorityFile = other.path + "/certificates/ca.pem"
        let client = EtcdClient(endpoints: cluster.clientURLs, timeout: .seconds(5), security: security)
        let started = ContinuousClock.now
        do {
            _ = try client.range(EtcdRangeRequest(key: "/countries/a"))
            Issue.record("a client trusted a member its CA did not sign")
        } catch {
            // Refused, not retried until the timeout: other files are the only fix.
            #expect(error.code == .rejected && error.message.contains("certificate"))
            #expect(ContinuousClock.now - started < .seconds(4) * testSlowdown)
        }
        // And without a client certificate the member does not take the connection.
        security = self.security(cluster)
        security.certificateFile = nil
        security.keyFile = nil
        let noCertificate = EtcdClient(endpoints: cluster.clientURLs, security: security)
        #expect(throws: EtcdError.self) { try put(noCertificate, "/countries/forged") }
    }

    @Test func aTokenThatExpiredIsRenewed() throws {
        // Tokens unused for a second expire: every call after a pause finds its token gone.
        let cluster = try securedCluster(arguments: ["--auth-token-ttl", "1"])
        let client = EtcdClient(endpoints: cluster.clientURLs, security: security(cluster))
        let watcher = EtcdWatcher(endpoints: cluster.clientURLs, security: security(cluster))
        var seen = 0
        for round in 0..<2 {
            _ = try put(client, "/countries/\(round)")
            try watcher.watch(
                .prefix("/countries/"), startRevision: 1, shouldStop: Self.stopAfterAWhile(),
                onEvents: { events, _ in
                    seen += events.count
                    return false
                })
            Thread.sleep(forTimeInterval: 2.5)
        }
        #expect(try client.range(.prefix("/countries/")).kvs.map(\.key) == ["/countries/0", "/countries/1"])
        #expect(seen == 3)
    }
}
