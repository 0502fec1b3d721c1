import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

/// The shared harness's own promises: output captured, waits bounded, children stopped by pid
/// (their process group too, when asked), nothing of the test process leaked into a child.
@Suite("TestSupport: child processes")
struct ChildProcessTests {
    @Test func runCapturesBothStreamsAndTheExitCode() throws {
        let run = try ChildProcess.run("/bin/sh", ["-c", "echo out; echo err >&2; exit 3"])
        #expect(run.exitCode == 3)
        #expect(run.stdout == "out\n")
        #expect(run.stderr == "err\n")
    }

    @Test func aSignalledChildReportsOneHundredTwentyEightPlusTheSignal() throws {
        let child = try ChildProcess("/bin/sleep", ["30"])
        #expect(child.isRunning)
        #expect(child.stop(grace: .seconds(5)) == 128 + SIGTERM)
        #expect(!child.isRunning)
    }

    /// A pid read back from a file is signalled only if it still runs the saved command line:
    /// the kernel hands pids out again (pid_max 32,768), often to another test's process.
    @Test func aRecordedPidCountsOnlyWhileItRunsTheSavedCommandLine() throws {
        let scratch = try ScratchDirectory(prefix: "recorded")
        defer { scratch.remove() }
        let child = try ChildProcess("/bin/sleep", ["30"])
        let same = scratch.file("same.args")
        let other = scratch.file("other.args")
        try "/bin/sleep\n30\n".write(toFile: same, atomically: true, encoding: .utf8)
        try "/bin/sleep\n31\n".write(toFile: other, atomically: true, encoding: .utf8)
        #expect(ProcessMemory.runs(child.pid, commandLineIn: same))
        #expect(!ProcessMemory.runs(child.pid, commandLineIn: other), "the same program, other arguments")
        #expect(!ProcessMemory.runs(child.pid, commandLineIn: scratch.file("missing.args")))
        _ = child.stop(grace: .seconds(5))
        #expect(!ProcessMemory.runs(child.pid, commandLineIn: same), "gone")
    }

    /// A paused process is one whose every thread is stopped, and a name with spaces and
    /// parentheses does not hide a thread's state.
    @Test func pauseReturnsOnceEveryThreadIsStopped() throws {
        // A copy of sleep under such a name: the kernel names the process after its file.
        let scratch = try ScratchDirectory(prefix: "pause")
        defer { scratch.remove() }
        let sleeper = scratch.file("a (b) c")
        try FileManager.default.copyItem(atPath: "/bin/sleep", toPath: sleeper)
        let child = try ChildProcess(sleeper, ["30"])
        defer { _ = child.stop(grace: .seconds(5)) }
        try #require(
            eventually {
                let stat = try? String(contentsOfFile: "/proc/\(child.pid)/stat", encoding: .utf8)
                return stat?.contains("(a (b) c) S") == true
            }, "the copy of sleep does not run under its name: \(threadStates(of: child.pid))")
        #expect(threadStates(of: child.pid) == ["S"])
        #expect(pauseProcess(child.pid))
        #expect(threadStates(of: child.pid) == ["T"])
        kill(child.pid, SIGCONT)
        #expect(eventually { threadStates(of: child.pid).allSatisfy { $0 != "T" } })
        let gone = try ChildProcess("/bin/true", [])
        _ = gone.stop(grace: .seconds(5))
        #expect(!pauseProcess(gone.pid, within: .milliseconds(50)), "no such process")
    }

    @Test func finishKillsAChildThatRunsOverItsTime() throws {
        let child = try ChildProcess("/bin/sleep", ["30"])
        let started = ContinuousClock.now
        #expect(throws: HarnessFailure.self) { try child.finish(timeout: .milliseconds(200)) }
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(child.exitStatus == 128 + SIGKILL)
    }

    /// SIGCONT comes before the stopping signal, never after: a SIGCONT during LeakSanitizer's
    /// exit scan discards the SIGSTOP of its PTRACE_ATTACH, and the sanitized child hangs. (The
    /// order is read from the harness: a receiver cannot tell it, as the kernel hands two
    /// pending signals over lowest number first.)
    @Test func stopSendsSIGCONTBeforeTheSignalNeverAfter() throws {
        let child = try ChildProcess("/bin/sleep", ["30"])
        #expect(child.stop(grace: .seconds(5)) == 128 + SIGTERM)
        #expect(child.signalsSent == [SIGCONT, SIGTERM])
        let killed = try ChildProcess("/bin/sleep", ["30"])
        #expect(killed.stop(signal: SIGKILL, grace: .seconds(5)) == 128 + SIGKILL)
        #expect(killed.signalsSent == [SIGKILL], "nothing to continue before a SIGKILL")
    }

    /// A child that outlives its stop's grace leaves a report of its threads before the SIGKILL.
    @Test func aHungChildIsDescribedBeforeItIsKilled() throws {
        let child = try ChildProcess(
            "/bin/sh", ["-c", "trap '' TERM; echo ready; while :; do sleep 1; done"])
        #expect(child.stdout.waitFor(timeout: .seconds(5)) { $0.contains("ready") } != nil)
        let report = HungProcessReport.describe(child.pid)
        #expect(report.contains("threads of \(child.pid)"), "\(report)")
        #expect(report.contains(" sh: State:"), "\(report)")
        if access("/usr/bin/gdb", X_OK) == 0 { #expect(report.contains("#0 "), "\(report)") }
        #expect(child.stop(grace: .milliseconds(200)) == 128 + SIGKILL)
        #expect(HungProcessReport.describe(child.pid).contains("it is gone"))
    }

    @Test func aGroupLeaderTakesItsWholePipelineDown() throws {
        let shell = try ChildProcess(
            "/bin/sh", ["-c", "sleep 30 & echo $!; wait"], newProcessGroup: true)
        let line = try #require(shell.stdout.waitFor(timeout: .seconds(5)) { !$0.isEmpty })
        let grandchild = try #require(pid_t(line.line.text))
        shell.signalGroup(SIGTERM)
        #expect(shell.wait(timeout: .seconds(5)) != nil)
        // The grandchild was in the group: gone (or a zombie awaiting init) soon after.
        #expect(eventually(within: .seconds(5)) { ProcessMemory.isGone(grandchild) })
    }

    @Test func aChildInheritsNoDescriptorOfTheTestProcess() throws {
        // A descriptor the test holds open without close-on-exec.
        let scratch = try ScratchDirectory(prefix: "tst")
        let fd = open(scratch.file("held"), O_WRONLY | O_CREAT, 0o600)
        #expect(fd > 2)
        defer { close(fd) }
        let run = try ChildProcess.run("/bin/sh", ["-c", "ls /proc/self/fd"])
        let descriptors = run.lines.compactMap { Int32($0) }
        // 0, 1, 2 and the one `ls` opens to list the directory; never `fd`.
        #expect(!descriptors.contains(fd), "\(descriptors)")
        #expect(descriptors.allSatisfy { $0 <= 3 }, "\(descriptors)")
    }

    @Test func fileOutputIsReadBackAndTheDirectoryGoesWithTheScratch() throws {
        var path = ""
        do {
            let scratch = try ScratchDirectory(prefix: "tst")
            path = scratch.path
            let child = try ChildProcess(
                "/bin/sh", ["-c", "echo to-file"], stdout: .file(scratch.file("out")), stderr: .discard)
            #expect(child.wait(timeout: .seconds(5)) == 0)
            #expect(child.stdout.text == "to-file\n")
            #expect(scratch.read("out") == "to-file\n")
        }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func eventuallyIsBounded() {
        let started = ContinuousClock.now
        #expect(!eventually(within: .milliseconds(100)) { false })
        #expect(ContinuousClock.now - started < .seconds(2))
        #expect(eventually { true })
    }
}
