import CountriesCore
import Foundation

/// The plain-text lines of the one-shot client commands (`countries list`, `toggle`, `status`,
/// `history`, ...) and of `countries events`, as pure functions of the reply. Every name and
/// value from the wire is shown as ``VisibleText`` escapes it.
public enum ReplyText {
    /// `list`: the table (``TableText``), then `2 of 8 visited (seq 12)`.
    public static func list(_ reply: Reply, glyphs: Glyphs) -> [String] {
        let rows = reply.countries ?? []
        let visited = rows.filter(\.visited).count
        return TableText.lines(rows, glyphs: glyphs) + [
            "\(visited) of \(rows.count) visited (seq \(reply.seq ?? 0))"
        ]
    }

    /// `get`: the country's row of the table.
    public static func get(_ reply: Reply, glyphs: Glyphs) -> [String] {
        reply.country.map { TableText.lines([$0], glyphs: glyphs) } ?? []
    }

    /// `toggle` and `set`: `France: visited (seq 13)`.
    public static func changed(_ reply: Reply) -> [String] {
        guard let country = reply.country else { return [] }
        return [
            "\(VisibleText.escaped(country.name)): \(country.visited ? "visited" : "not visited") (seq \(reply.seq ?? 0))"
        ]
    }

    /// `add`: `Added Peru at index 8 (seq 14)`.
    public static func added(_ reply: Reply) -> [String] {
        guard let country = reply.country else { return [] }
        return [
            "Added \(VisibleText.escaped(country.name)) at index \(country.index) (seq \(reply.seq ?? 0))"
        ]
    }

    /// `remove`: `Removed Peru from index 8 (seq 15)`.
    public static func removed(_ reply: Reply) -> [String] {
        guard let country = reply.country else { return [] }
        return [
            "Removed \(VisibleText.escaped(country.name)) from index \(country.index) (seq \(reply.seq ?? 0))"
        ]
    }

    /// `reset`: `Reset to 8 countries (seq 16)`.
    public static func reset(_ reply: Reply) -> [String] {
        ["Reset to \(reply.countries?.count ?? 0) countries (seq \(reply.seq ?? 0))"]
    }

    /// One event as a line: `12  country.changed  2 France ✓`.
    public static func event(_ event: Event, glyphs: Glyphs) -> String {
        switch event.kind {
        case .changed(let row), .added(let row), .removed(let row):
            return
                "\(event.seq)  \(event.topic.rawValue)  \(row.index) \(VisibleText.escaped(row.name))\(row.visited ? " " + glyphs.visited : "")"
        case .reset(let rows):
            return "\(event.seq)  \(event.topic.rawValue)  \(rows.count) countries"
        }
    }

    /// `status`: one `name:  value` line per field the service reported.
    public static func status(_ reply: Reply) -> [String] {
        let rows =
            [("seq", "\(reply.seq ?? 0)"), ("countries", "\(reply.count ?? 0)")] + (reply.status?.lines ?? [])
            + [("store id", reply.store ?? "?")]
        return rows.map { label, value in
            "\(label):".padding(toLength: 18, withPad: " ", startingAt: 0) + VisibleText.escaped(value)
        }
    }
}
