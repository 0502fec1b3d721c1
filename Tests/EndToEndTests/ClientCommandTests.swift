import CountriesCore
import Foundation
import TestSupport
import Testing

/// Every client subcommand against a live service, in human and `--json` form.
@Suite struct ClientCommandTests {
    @Test func listCountAndGet() throws {
        let sandbox = try Sandbox()
        let service = try Service(in: sandbox)
        defer { service.stop() }

        let list = try service.run(["list"])
        #expect(list.exitCode == 0, "\(list)")
        #expect(
            list.lines == [
                "0  United States   [x]", "1  United Kingdom", "2  France", "3  Italy", "4  Spain",
                "5  Russia", "6  Moldova", "7  Romania", "1 of 8 visited (seq 0)",
            ], "\(list)")
        #expect(list.stderr.isEmpty)

        let listJSON = try jsonReply(try service.run(["list", "--json"]))
        #expect(listJSON["ok"] as? Bool == true)
        #expect(listJSON["seq"] as? Int == 0)
        let rows = try #require(listJSON["countries"] as? [[String: Any]])
        #expect(rows.count == 8)
        #expect(rows.first?["name"] as? String == "United States")
        #expect(rows.first?["visited"] as? Bool == true)
        #expect(rows.last?["index"] as? Int == 7)

        let count = try service.run(["count"])
        #expect(count.exitCode == 0 && count.stdout == "8\n", "\(count)")
        let countJSON = try jsonReply(try service.run(["count", "--json"]))
        #expect(countJSON["ok"] as? Bool == true && countJSON["count"] as? Int == 8)

        let get = try service.run(["get", "2"])
        #expect(get.exitCode == 0 && get.stdout == "2  France\n", "\(get)")
        let byName = try service.run(["get", "FRANCE"])
        #expect(byName.stdout == "2  France\n", "\(byName)")
        let getJSON = try jsonReply(try service.run(["get", "united states", "--json"]))
        let country = try #require(getJSON["country"] as? [String: Any])
        #expect(country["index"] as? Int == 0 && country["visited"] as? Bool == true)
    }

    /// `--id` lets a script send a change again, from another run, and have it applied once:
    /// the second run prints the first one's reply. It names one change, and is checked as the
    /// protocol checks ids.
    @Test func aChangeSentAgainWithTheSameIdIsAppliedOnce() throws {
        let sandbox = try Sandbox()
        let service = try Service(in: sandbox)
        defer { service.stop() }

        let first = try service.run(["toggle", "France", "--id", "script-run-7"])
        #expect(first.exitCode == 0 && first.lines == ["France: visited (seq 1)"], "\(first)")
        let again = try service.run(["toggle", "France", "--id", "script-run-7"])
        #expect(again.exitCode == 0 && again.lines == ["France: visited (seq 1)"], "\(again)")
        #expect(try service.run(["count", "--json"]).stdout.contains(#""seq":1"#))
        let reused = try service.run(["remove", "Italy", "--id", "script-run-7"])
        #expect(
            reused.exitCode == 1 && reused.stderr.contains("this id was used for another request"),
            "\(reused)")

        let two = try service.run(["toggle", "France", "Italy", "--id", "x"])
        #expect(two.exitCode == 64 && two.stderr.contains("--id names one change"), "\(two)")
        let long = try service.run([
            "set", "France", "--visited", "true", "--id", String(repeating: "i", count: 65),
        ])
        #expect(long.exitCode == 64 && long.stderr.contains("--id must be 1 to 64 bytes"), "\(long)")
        let control = try service.run(["add", "Narnia", "--id", "a\u{1B}b"])
        #expect(control.exitCode == 64 && control.stderr.contains("byte 1 is 0x1B"), "\(control)")
        #expect(try service.run(["count", "--json"]).stdout.contains(#""seq":1"#), "nothing else changed")
    }

    /// A country whose name is made of digits: a TARGET of digits is an index, and `--by-name`
    /// reads it as the name.
    @Test func aNameOfDigitsIsReachedWithByName() throws {
        let sandbox = try Sandbox()
        let service = try Service(in: sandbox)
        defer { service.stop() }
        #expect(try service.run(["add", "42"]).stdout == "Added 42 at index 8 (seq 1)\n")
        let asIndex = try service.run(["toggle", "42"])
        #expect(asIndex.exitCode == 1 && asIndex.stderr.contains("index 42 is out of range"), "\(asIndex)")
        let asName = try service.run(["toggle", "--by-name", "42"])
        #expect(asName.exitCode == 0 && asName.stdout == "42: visited (seq 2)\n", "\(asName)")
        #expect(try service.run(["get", "--by-name", "42"]).stdout == "8  42  [x]\n")
        #expect(try service.run(["set", "--by-name", "42", "--visited", "false"]).exitCode == 0)
        let removed = try service.run(["remove", "--by-name", "42"])
        #expect(removed.stdout == "Removed 42 from index 8 (seq 4)\n", "\(removed)")
        // Every TARGET of the command is a name then.
        let digits = try service.run(["toggle", "--by-name", "2"])
        #expect(digits.exitCode == 1 && digits.stderr.contains("no country named \"2\""), "\(digits)")
    }

    /// As `rm` takes its files (`toggle --help`): a target the service refuses is said, the
    /// others are still made, and the exit is 1.
    @Test func aRefusedTargetLeavesTheOthersMadeAndExitsOne() throws {
        let sandbox = try Sandbox()
        let service = try Service(in: sandbox)
        defer { service.stop() }
        let toggle = try service.run(["toggle", "Spain", "Frnace", "Italy"])
        #expect(toggle.exitCode == 1, "\(toggle)")
        #expect(toggle.lines == ["Spain: visited (seq 1)", "Italy: visited (seq 2)"], "\(toggle)")
        #expect(toggle.stderr.contains("no country named \"Frnace\""), "\(toggle)")
        // A person is told the close name; a script's JSON is the reply alone.
        #expect(toggle.stderr.contains("countries: did you mean \"France\"?\n"), "\(toggle)")
        let json = try service.run(["get", "frnace", "--json"])
        #expect(json.exitCode == 1 && json.stderr.isEmpty, "\(json)")
        #expect(try service.run(["add", "Côte d'Ivoire"]).exitCode == 0)
        let unaccented = try service.run(["get", "cote d'ivoire"])
        #expect(unaccented.stderr.hasSuffix("did you mean \"Côte d'Ivoire\"?\n"), "\(unaccented)")
        let far = try service.run(["get", "Atlantis"])
        #expect(far.exitCode == 1 && !far.stderr.contains("did you mean"), "\(far)")
    }

    @Test func toggleTwoTargetsPrintsALineEach() throws {
        let sandbox = try Sandbox()
        let service = try Service(in: sandbox)
        defer { service.stop() }

        let toggle = try service.run(["toggle", "France", "3"])
        #expect(toggle.exitCode == 0, "\(toggle)")
        #expect(toggle.lines == ["France: visited (seq 1)", "Italy: visited (seq 2)"], "\(toggle)")

        let back = try service.run(["toggle", "--json", "france"])
        let reply = try jsonReply(back)
        #expect(reply["ok"] as? Bool == true && reply["seq"] as? Int == 3)
        let country = try #require(reply["country"] as? [String: Any])
        #expect(country["name"] as? String == "France" && country["visited"] as? Bool == false)

        // Two targets with --json: one JSON line each.
        let both = try service.run(["toggle", "0", "1", "--json"])
        #expect(both.exitCode == 0 && both.lines.count == 2, "\(both)")
        let seqs = try both.lines.map { try jsonObject($0)["seq"] as? Int }
        #expect(seqs == [4, 5])
    }

    @Test func refusedCommandExits1WithTheServiceMessage() throws {
        let sandbox = try Sandbox()
        let service = try Service(in: sandbox)
        defer { service.stop() }

        let refused = try service.run(["toggle", "12"])
        #expect(refused.exitCode == 1, "\(refused)")
        #expect(refused.stdout.isEmpty)
        #expect(
            refused.stderr == "countries: index 12 is out of range: there are 8 countries (indexes 0 to 7)\n",
            "\(refused)")

        let json = try service.run(["get", "Atlantis", "--json"])
        #expect(json.exitCode == 1, "\(json)")
        let reply = try jsonReply(json)
        #expect(reply["ok"] as? Bool == false)
        let error = try #require(reply["error"] as? [String: Any])
        #expect(error["code"] as? String == "not_found")
        #expect((error["message"] as? String)?.isEmpty == false)

        // A refusal in the middle of several targets: the others are still done, exit 1.
        let mixed = try service.run(["toggle", "France", "99", "Spain"])
        #expect(mixed.exitCode == 1, "\(mixed)")
        #expect(mixed.lines == ["France: visited (seq 1)", "Spain: visited (seq 2)"], "\(mixed)")
        #expect(mixed.stderr.contains("index 99 is out of range"))

        let duplicate = try service.run(["add", "france"])
        #expect(duplicate.exitCode == 1 && duplicate.stderr.contains("already in the list"), "\(duplicate)")

        // Nothing refused changed anything.
        #expect(try jsonReply(try service.run(["count", "--json"]))["seq"] as? Int == 2)
    }

    /// The service answers `history` a page at a time; the command pages through to the end.
    @Test func historyPagesThroughEveryEvent() throws {
        let sandbox = try Sandbox()
        let service = try Service(in: sandbox)
        defer { service.stop() }
        let total = Limits.historyPageEvents * 2 + 1
        #expect(try BoundsFlood.toggles(total, at: sandbox.commandEndpoint) == total)

        let text = try service.run(["history"])
        #expect(text.exitCode == 0, "\(text)")
        #expect(text.lines.count == total)
        #expect(text.lines.last?.hasPrefix("\(total)  country.changed") == true, "\(text.lines.last ?? "")")
        let json = try jsonReply(try service.run(["history", "--json", "--since", "1"]))
        let events = try #require(json["events"] as? [[String: Any]])
        let seqs = events.compactMap { $0["seq"] as? Int }
        #expect(seqs.count == total - 1 && seqs.first == 2 && seqs.last == total, "\(seqs.count) events")
        #expect(zip(seqs, seqs.dropFirst()).allSatisfy { $0 + 1 == $1 }, "in order, none twice")
        #expect(json["seq"] as? Int == total)
        #expect(json["more"] == nil, "one reply holding everything: nothing more to ask")
    }

    @Test func setAddRemoveResetHistoryStatus() throws {
        let sandbox = try Sandbox()
        let service = try Service(in: sandbox)
        defer { service.stop() }

        let set = try service.run(["set", "1", "--visited", "true"])
        #expect(set.exitCode == 0 && set.stdout == "United Kingdom: visited (seq 1)\n", "\(set)")
        // A set that changes nothing succeeds with no new seq.
        let again = try jsonReply(try service.run(["set", "--json", "united kingdom", "--visited", "true"]))
        #expect(again["ok"] as? Bool == true && again["seq"] as? Int == 1)

        let add = try service.run(["add", "Peru", "--visited"])
        #expect(add.exitCode == 0 && add.stdout == "Added Peru at index 8 (seq 2)\n", "\(add)")
        let addJSON = try jsonReply(try service.run(["add", "--json", "Chile"]))
        #expect(addJSON["ok"] as? Bool == true && addJSON["seq"] as? Int == 3)

        let remove = try service.run(["remove", "peru"])
        #expect(remove.exitCode == 0 && remove.stdout == "Removed Peru from index 8 (seq 4)\n", "\(remove)")
        let removeJSON = try jsonReply(try service.run(["remove", "8", "--json"]))
        #expect((removeJSON["country"] as? [String: Any])?["name"] as? String == "Chile")

        let history = try service.run(["history", "--since", "1"])
        #expect(
            history.lines == [
                "2  country.added  8 Peru [x]", "3  country.added  9 Chile", "4  country.removed  8 Peru [x]",
                "5  country.removed  8 Chile",
            ], "\(history)")
        let historyJSON = try jsonReply(try service.run(["history", "--json"]))
        let events = try #require(historyJSON["events"] as? [[String: Any]])
        #expect(events.map { $0["seq"] as? Int } == [1, 2, 3, 4, 5])
        #expect(events.first?["topic"] as? String == "country.changed")

        let reset = try service.run(["reset"])
        #expect(reset.exitCode == 0 && reset.stdout == "Reset to 8 countries (seq 6)\n", "\(reset)")
        let resetJSON = try jsonReply(try service.run(["reset", "--json"]))
        #expect((resetJSON["countries"] as? [Any])?.count == 8 && resetJSON["seq"] as? Int == 7)
        let list = try service.run(["list"])
        #expect(list.lines.last == "1 of 8 visited (seq 7)", "\(list)")

        let status = try service.run(["status"])
        #expect(status.exitCode == 0, "\(status)")
        #expect(status.stdout.contains("version:          0.1.0"), "\(status)")
        #expect(status.stdout.contains("seq:              7"), "\(status)")
        #expect(status.stdout.contains("countries:        8\n"), "\(status)")
        #expect(status.stdout.contains("visited:          1\n"), "\(status)")
        #expect(status.stdout.contains("store:            :memory:"), "\(status)")
        #expect(status.stdout.contains(sandbox.commandEndpoint), "\(status)")
        let statusJSON = try jsonReply(try service.run(["status", "--json"]))
        #expect(statusJSON["ok"] as? Bool == true && statusJSON["version"] as? String == "0.1.0")
        #expect(statusJSON["seq"] as? Int == 7 && statusJSON["count"] as? Int == 8)
        #expect(statusJSON["endpoints"] as? [String] == [sandbox.commandEndpoint, sandbox.eventsEndpoint])
    }

    @Test func ifSeqConflicts() throws {
        let sandbox = try Sandbox()
        let service = try Service(in: sandbox)
        defer { service.stop() }

        let stale = try service.run(["toggle", "France", "--if-seq", "5"])
        #expect(stale.exitCode == 1 && stale.stderr.hasPrefix("countries: "), "\(stale)")
        let conflict = try jsonReply(
            try service.run(["set", "2", "--visited", "true", "--if-seq", "5", "--json"]))
        #expect((conflict["error"] as? [String: Any])?["code"] as? String == "conflict")
        let current = try service.run(["toggle", "France", "--if-seq", "0"])
        #expect(current.exitCode == 0 && current.stdout == "France: visited (seq 1)\n", "\(current)")
    }

    @Test func optionsGoBeforeOrAfterArguments() throws {
        let sandbox = try Sandbox()
        let service = try Service(in: sandbox)
        defer { service.stop() }

        let after = try Countries.run(["toggle", "France", "--json", "--command", sandbox.commandEndpoint])
        #expect(after.exitCode == 0, "\(after)")
        #expect(try jsonReply(after)["seq"] as? Int == 1)
        let before = try Countries.run(["toggle", "--command", sandbox.commandEndpoint, "--json", "France"])
        #expect(before.exitCode == 0, "\(before)")
        #expect(try jsonReply(before)["seq"] as? Int == 2)
        let between = try Countries.run([
            "set", "--visited", "true", "Spain", "--command", sandbox.commandEndpoint, "--timeout", "3000",
        ])
        #expect(between.exitCode == 0 && between.stdout == "Spain: visited (seq 3)\n", "\(between)")
    }

    @Test func unicodeLocaleShowsACheckMark() throws {
        let sandbox = try Sandbox()
        let service = try Service(in: sandbox)
        defer { service.stop() }

        let list = try service.run(["get", "0"], environment: ["LC_ALL": "C.UTF-8"])
        #expect(list.stdout == "0  United States  ✓\n", "\(list)")
    }
}
