import CountriesCore
import Foundation

/// What one fuzz input is checked against: the request decoder and the state controller, with a
/// replica that follows the service the way a subscriber does (events through their wire form).
///
/// An input is one or more request frames separated by NUL bytes (a NUL cannot occur in JSON
/// text, so it never splits a valid request). Each frame is decoded; a change is applied to the
/// state and its event, encoded and decoded again, replayed on the replica. Any broken promise
/// stops the process with a message (libFuzzer keeps the input that did it).
enum FuzzHarness {
    /// Checks one input; returns normally when every promise held.
    static func check(_ input: Data) {
        let seed = SeedList.standard
        var state = CountriesState(countries: seed)
        var replica = state
        // At most 64 frames an input, so one input cannot run for long.
        for frame in input.split(separator: 0, omittingEmptySubsequences: false).prefix(64) {
            step(Data(frame), state: &state, replica: &replica, seed: seed)
        }
    }

    private static func step(
        _ frame: Data, state: inout CountriesState, replica: inout CountriesState, seed: [Country]
    ) {
        let request: Request
        do {
            request = try Request.decode(frame)
        } catch {
            // A refusal must be one a person can act on, and survive the wire.
            expect(!error.message.isEmpty, "an error without a message: \(error.code)")
            roundTrip(Reply(error: error))
            return
        }
        // What the decoder accepted, the encoder writes back as the same request.
        let again = try? Request.decode(request.encoded())
        expect(
            again == request, "\(request) does not survive encode and decode: \(String(describing: again))")

        switch request.command {
        case .change(let change):
            let before = state
            do {
                let result = try state.apply(change, seed: seed)
                roundTrip(result.reply)
                guard let event = result.event else {
                    expect(state == before, "a change without an event changed the state")
                    expect(result.reply.seq == state.seq, "a no-op reply's seq is not the current seq")
                    return
                }
                expect(state.seq == before.seq + 1, "seq went from \(before.seq) to \(state.seq)")
                expect(
                    event.seq == state.seq && result.reply.seq == event.seq, "reply, event and seq disagree")
                // The replica sees what a subscriber sees: the event's wire form.
                let wire: Event
                do {
                    wire = try Event.decode(event.encoded())
                } catch {
                    fail("the event \(event) does not decode from its own encoding: \(error)")
                }
                expect(wire == event, "the event changed on the wire: \(event) became \(wire)")
                do {
                    try replica.replay(wire)
                } catch {
                    fail("the replica refused event \(wire.seq): \(error)")
                }
                expect(replica == state, "the replica and the state disagree after seq \(state.seq)")
            } catch {
                expect(state == before, "a refused change (\(error.code)) changed the state")
                roundTrip(Reply(error: error))
            }
            checkInvariants(state)
        case .query(let query):
            let before = state
            if let reply = try? state.answer(query) { roundTrip(reply) }
            expect(state == before, "a query changed the state")
        case .history, .status:
            break
        }
    }

    /// The list's own rules: names unique (case-insensitively), valid, and at most the limit.
    private static func checkInvariants(_ state: CountriesState) {
        expect(state.count <= Limits.maximumCountries, "the list has \(state.count) rows")
        var keys = Set<String>()
        for country in state.countries {
            expect(
                keys.insert(CountryName.foldedKey(country.name)).inserted,
                "\(country.name) is in the list twice")
        }
        let rebuilt = CountriesState(rows: state.rows, seq: state.seq)
        expect(rebuilt == state, "the state does not survive its own rows")
    }

    private static func roundTrip(_ reply: Reply) {
        let decoded = try? Reply.decode(reply.encoded())
        expect(decoded == reply, "the reply \(reply) does not survive encode and decode")
    }

    private static func expect(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fail(message()) }
    }

    private static func fail(_ message: String) -> Never {
        fatalError("countries-fuzz: \(message)")
    }
}
