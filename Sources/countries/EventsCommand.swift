import ArgumentParsing
import CountriesClient
import CountriesCore
import Foundation
@preconcurrency import Glibc
import SystemSupport
import ZeroMQ

/// `countries events`: print each change as it happens, in seq order, none twice and none
/// missed: a gap in seq is filled from `history` before going on.
struct EventsCommand {
    let command: ParsedCommand
    let client: ClientOptions

    func run() throws -> Int32 {
        let asJSON = command.flag("json")
        let since = try command.seq("since")
        let limit = try command.int("count") ?? Int.max
        guard limit > 0 else {
            throw command.usageError("--count must be at least 1")
        }
        // Before anything is printed: a SIGTERM that comes once the history is out must stop
        // us cleanly (exit 0), not kill us with the default action.
        let signals = try SignalPipe(signals: [SIGINT, SIGTERM])
        let context = try Context()
        let commands = client.makeClient(context: context)
        let subscriber = try context.makeSocket(.sub)
        defer { subscriber.close() }
        try subscriber.setOption(.linger, 0)
        try subscriber.setOption(.maxMessageSize, 64 << 20)
        if let security = client.eventsSecurity ?? client.security { try security.apply(to: subscriber) }
        // Subscribe before asking where the list stands, so nothing falls between the two.
        for topic in Topic.allCases where topic != .heartbeat {
            try subscriber.subscribe(topic.rawValue)
        }
        do {
            try subscriber.connect(client.eventsEndpoint ?? "tcp://127.0.0.1:5556")
        } catch {
            throw CommandFailure(
                message: "cannot connect to \(client.eventsEndpoint ?? ""): \(error.message)",
                exitCode: ExitCode.usage)
        }

        var printer = Printer(asJSON: asJSON, limit: limit)
        var last: UInt64
        if let since {
            last = since
            try catchUp(commands, from: &last, printer: &printer)
        } else {
            last = try request(commands, .query(.count)).seq ?? 0
        }

        var poller = Poller()
        let eventItem = poller.add(subscriber)
        let signalItem = poller.add(fileDescriptor: signals.fileDescriptor)
        while !printer.isDone {
            let ready = try poller.poll(timeoutMilliseconds: -1)
            if ready.isReadable(signalItem), !signals.drain().isEmpty { break }
            guard ready.isReadable(eventItem) else { continue }
            while !printer.isDone, let frames = try subscriber.receive(dontWait: true) {
                guard frames.count == 2, let event = try? Event.decode(frames[1]) else { continue }
                if event.seq <= last { continue }
                if event.seq > last + 1 {
                    try catchUp(commands, from: &last, printer: &printer)
                    if event.seq <= last { continue }
                }
                printer.print(event, raw: frames[1])
                last = event.seq
            }
        }
        return ExitCode.success
    }

    /// Prints the kept events after `last` and moves `last` to the newest printed.
    private func catchUp(_ commands: CommandClient, from last: inout UInt64, printer: inout Printer) throws {
        let reply = try request(commands, .history(since: last), allowRefusal: true)
        guard reply.ok else {
            let current = try request(commands, .query(.count)).seq ?? last
            if current < last {
                Output.error(
                    "the service is at seq \(current), behind \(last) (a new store?); going on from seq \(current)"
                )
            } else {
                Output.error(
                    "events \(last + 1) to \(current) are no longer kept by the service; going on from seq \(current)"
                )
            }
            last = current
            return
        }
        for event in reply.events ?? [] where event.seq > last && !printer.isDone {
            printer.print(event, raw: event.encoded())
            last = event.seq
        }
    }

    private func request(_ commands: CommandClient, _ command: Command, allowRefusal: Bool = false) throws
        -> Reply
    {
        let reply: Reply
        do {
            reply = try commands.send(command)
        } catch {
            throw CommandFailure(message: error.message, exitCode: ExitCode.unavailable)
        }
        if !reply.ok && !allowRefusal {
            throw CommandFailure(message: reply.failure?.message ?? "refused", exitCode: ExitCode.refused)
        }
        return reply
    }

    private struct Printer {
        let asJSON: Bool
        let limit: Int
        var printed = 0
        var isDone: Bool { printed >= limit }

        mutating func print(_ event: Event, raw: Data) {
            Output.line(asJSON ? String(decoding: raw, as: UTF8.self) : Output.describe(event))
            printed += 1
        }
    }
}
