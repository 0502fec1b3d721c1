import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

/// Replicas on an etcd that takes only TLS with client certificates and signed-in users
/// (docs/SECURITY.md, "Replicated mode"): they serve as their user; anyone else who reaches
/// etcd's port cannot write the list; a wrong or careless setup is refused with what to do.
@Suite(
    .serialized, .hangGuard(),
    .enabled(if: EtcdCluster.isAvailable, "etcd is not installed"))
struct EtcdSecurityEndToEndTests {
    private static let password = "correct horse battery staple"

    /// `serve`'s options for `cluster` with its certificates and the user `countries`.
    private func options(_ cluster: EtcdCluster, passwordFile: String?) -> [String] {
        let files = cluster.certificates!
        return [
            "--etcd", cluster.clientURLs.joined(separator: ","), "--etcd-cacert", files.ca, "--etcd-cert",
            files.clientCertificate, "--etcd-key", files.clientKey, "--etcd-user", "countries",
        ] + (passwordFile.map { ["--etcd-password-file", $0] } ?? [])
    }

    private func privateFile(_ sandbox: Sandbox, _ name: String, _ contents: String, mode: mode_t = 0o600)
        throws
        -> String
    {
        let path = sandbox.path + "/" + name
        try contents.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, mode)
        return path
    }

    @Test func replicasServeAsTheirUserAndNoOneElseWritesTheList() throws {
        let cluster = try EtcdCluster(members: 1, secured: true)
        try cluster.enableAuthentication(user: "countries", password: Self.password, prefix: "/countries/")
        let first = try Sandbox()
        let passwordFile = try privateFile(first, "password", Self.password + "\n")
        let one = try Service(in: first, options: options(cluster, passwordFile: passwordFile))
        defer { one.stop() }
        // The other replica takes its password from the environment.
        let second = try Sandbox()
        let two = try Service(
            in: second, options: options(cluster, passwordFile: nil),
            environment: ["COUNTRIES_ETCD_PASSWORD": Self.password])
        defer { two.stop() }
        #expect(try one.run(["toggle", "France"]).exitCode == 0)
        let seen = eventually(within: .seconds(5), every: .milliseconds(50)) {
            (try? two.run(["get", "France", "--json"]).stdout.contains("\"visited\":true")) ?? false
        }
        #expect(seen, "the second replica never saw the first's toggle")

        // With the CA and a client certificate but no user, etcd refuses (the certificate names
        // no user: scripts/etcd-certs gives it no CN); without TLS, the
        // member does not even answer.
        let files = cluster.certificates!
        let forged = try ChildProcess.run(
            EtcdCluster.etcdctl,
            [
                "--endpoints", cluster.clientURLs[0], "--cacert", files.ca, "--cert", files.clientCertificate,
                "--key",
                files.clientKey, "--command-timeout", "2s", "put", "/countries/events/00000000000000000002",
                "forged",
            ], environment: ["ETCDCTL_API": "3"], timeout: .seconds(10))
        #expect(forged.exitCode != 0 && forged.stderr.contains("permission denied"), "\(forged)")
        let plain = try ChildProcess.run(
            EtcdCluster.etcdctl,
            [
                "--endpoints", cluster.clientURLs[0].replacingOccurrences(of: "https://", with: "http://"),
                "--command-timeout", "2s", "--dial-timeout", "2s", "put",
                "/countries/events/00000000000000000002",
                "forged",
            ], environment: ["ETCDCTL_API": "3"], timeout: .seconds(15))
        #expect(plain.exitCode != 0, "\(plain)")
        #expect(try one.run(["toggle", "Spain"]).stdout == "Spain: visited (seq 2)\n")

        // A wrong password is refused at start, at once, saying what to check.
        let third = try Sandbox()
        let wrong = try privateFile(third, "password", "guess\n")
        let refused = try Countries.run(
            ["serve", "--command", third.commandEndpoint, "--events", third.eventsEndpoint]
                + options(cluster, passwordFile: wrong), timeout: .seconds(10))
        #expect(refused.exitCode == 74, "\(refused)")
        #expect(
            refused.stderr.contains("invalid user ID or password") && refused.stderr.contains("--etcd-user"))
        #expect(!refused.stderr.contains("guess"))
    }

    @Test func aCarelessSetupIsRefusedBeforeAnythingStarts() throws {
        let sandbox = try Sandbox()
        let etcd = ["--etcd", "https://127.0.0.1:1"]
        let serve = ["serve", "--command", sandbox.commandEndpoint, "--events", sandbox.eventsEndpoint]
        let shared = try privateFile(sandbox, "password", "secret\n", mode: 0o644)
        let key = try privateFile(sandbox, "key.pem", "not really a key\n", mode: 0o640)
        let cert = try privateFile(sandbox, "cert.pem", "not really a certificate\n", mode: 0o644)
        let cases: [(arguments: [String], environment: [String: String], exitCode: Int32, says: String)] = [
            (
                etcd + ["--etcd-user", "countries"], [:], 64,
                "COUNTRIES_ETCD_PASSWORD or give --etcd-password-file"
            ),
            (
                etcd + ["--etcd-user", "countries", "--etcd-password-file", shared], [:], 78,
                "chmod 600 \(shared)"
            ),
            (etcd + ["--etcd-cert", cert], [:], 64, "--etcd-cert and --etcd-key go together"),
            (etcd + ["--etcd-cert", cert, "--etcd-key", key], [:], 78, "chmod 600 \(key)"),
            (["--etcd-cacert", cert], [:], 64, "--etcd-cacert is for replicated mode"),
            (etcd + ["--etcd-password-file", shared], [:], 64, "--etcd-password-file goes with --etcd-user"),
            (etcd + ["--etcd-cacert", sandbox.path + "/missing.pem"], [:], 78, "cannot read"),
        ]
        for (arguments, environment, exitCode, says) in cases {
            let run = try Countries.run(serve + arguments, environment: environment, timeout: .seconds(10))
            #expect(run.exitCode == exitCode && run.stderr.contains(says), "\(arguments): \(run)")
        }
    }
}
