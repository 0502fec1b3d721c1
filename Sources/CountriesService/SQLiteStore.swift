import CountriesCore
import CountriesStore
import Foundation
@preconcurrency import Glibc
import SQLite

/// The durable store: the list, its seq, the last events (for `history`) and the last request
/// ids with what they asked and their replies (for exactly-once retries), in one SQLite file.
///
/// Every change goes in through ``commit(_:)``: one transaction that is on disk (WAL, full sync)
/// before the caller sends a reply or publishes an event. The store knows the protocol's values
/// but nothing of sockets.
///
/// A commit appends: the events to `events` and the remembered requests to `requests`, each
/// the last page of its table (docs/BENCHMARKS.md, "The durable commit"). The rows and the seq
/// in `meta` are written from the events every ``rowsInterval`` seqs, and loading replays the
/// events after them; old events are deleted ``rowsInterval`` at a time, while reads keep the
/// exact bounds. The remembered requests are a ``SQLiteRequestLog``'s: looked up in memory (no
/// index on disk) and deleted the same ``rowsInterval`` at a time.
final class SQLiteStore: StateStore {
    /// Where the store lives: `:memory:` for a store that dies with the process.
    let path: String
    /// The store's identity (``StoreIdentity``), kept in the file.
    let identity: String
    /// Why the identity was minted at this start, for the log: nil when the file already had
    /// one that still holds.
    let identityNote: String?
    private let database: Database
    private let updateVisited: Statement
    private let insertCountry: Statement
    private let deleteCountry: Statement
    private let shiftDown: Statement
    private let unflipPositions: Statement
    private let deleteAllCountries: Statement
    private let insertEvent: Statement
    private let trimEvents: Statement
    private let saveSeq: Statement
    private let selectEvents: Statement
    private let selectOldestEvent: Statement
    private let selectEventSizes: Statement
    /// The remembered request ids, their requests and replies.
    private let requests: SQLiteRequestLog
    /// Bytes of events kept at most, besides their count (``Limits/retainedEventBytes``).
    private let retainedEventBytes: Int
    /// Bytes of events appended since the last trim for bytes (or since the store was opened):
    /// at half of ``retainedEventBytes`` the next commit writes the rows and trims to it.
    private var eventBytesSinceTrim = 0

    /// How many seqs (and request ordinals) go by between writes of the rows and deletes of
    /// what is no longer kept: a commit between them writes only the pages it appends to.
    static let rowsInterval: UInt64 = 256
    /// The seq the rows and `meta.seq` are at.
    private var rowsSeq: UInt64 = 0
    /// The committed events after ``rowsSeq``, in order: what loading replays on the rows.
    private var eventsAfterRows: [Event] = []
    /// The last committed seq.
    private var lastSeq: UInt64 = 0
    /// The store's files as they were opened (nil in memory): ``lostPlace()``.
    private var place: StoreFilePlace?
    /// A commit found the disk full and no checkpoint has emptied the log since: each commit
    /// tries one first, so that space freed goes to the log's next pages and not its old ones.
    private var logFilledDisk = false

    /// Opens (or creates, from `seed`) the store at `path`, or an in-memory one for `nil`.
    ///
    /// Throws a ``StoreOpenError`` that says what is wrong with the file and what to do.
    init(
        path: String?, seed: [Country], retention: RequestIDRetention = RequestIDRetention(),
        retainedEventBytes: Int = Limits.retainedEventBytes,
        clock: @escaping @Sendable () -> Int64 = { SteadyWallClock.process.nowMilliseconds }
    ) throws(StoreOpenError) {
        let path = path ?? ":memory:"
        self.path = path
        self.retainedEventBytes = retainedEventBytes
        do {
            if path != ":memory:" {
                let directory = (path as NSString).deletingLastPathComponent
                var isDirectory: ObjCBool = false
                if !directory.isEmpty,
                    !FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory)
                        || !isDirectory.boolValue
                {
                    throw StoreOpenError(
                        .cannotOpen, path: path,
                        "the directory \(directory) does not exist; create it or pass another --db")
                }
            }
            database = try Database(path: path, mode: .readWriteCreate)
            database.setBusyTimeout(milliseconds: 2_000)
            // SQLite opens a file it may not write (immutable, say) read-only without a word;
            // serving from it would refuse every change. Say so now instead.
            if database.isReadOnly {
                throw StoreOpenError(
                    .readOnly, path: path,
                    "the file cannot be written (read-only, immutable or on a read-only file system); make it and its directory writable, or pass another --db"
                )
            }
            try SQLiteSchema.refuseForeignDatabase(database, path: path)
            try database.execute(
                path == ":memory:"
                    ? "PRAGMA journal_mode=MEMORY; PRAGMA synchronous=OFF;"
                    : "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;")
            try SQLiteSchema.create(database, seed: seed)
            (identity, identityNote) = try SQLiteSchema.loadIdentity(database, path: path)
            updateVisited = try database.prepare("UPDATE countries SET visited = ?2 WHERE position = ?1")
            insertCountry = try database.prepare(
                "INSERT INTO countries(position, name, visited) VALUES (?1, ?2, ?3)")
            deleteCountry = try database.prepare("DELETE FROM countries WHERE position = ?1")
            // Two steps so no intermediate row collides with a primary key still in use.
            shiftDown = try database.prepare(
                "UPDATE countries SET position = -(position - 1) WHERE position > ?1")
            unflipPositions = try database.prepare(
                "UPDATE countries SET position = -position WHERE position < 0")
            deleteAllCountries = try database.prepare("DELETE FROM countries")
            insertEvent = try database.prepare("INSERT INTO events(seq, topic, body) VALUES (?1, ?2, ?3)")
            trimEvents = try database.prepare("DELETE FROM events WHERE seq <= ?1")
            saveSeq = try database.prepare("UPDATE meta SET value = ?1 WHERE key = 'seq'")
            selectEvents = try database.prepare(
                "SELECT body FROM events WHERE seq > ?1 ORDER BY seq LIMIT ?2")
            selectOldestEvent = try database.prepare("SELECT min(seq) FROM events")
            selectEventSizes = try database.prepare("SELECT seq, length(body) FROM events ORDER BY seq DESC")
            requests = try SQLiteRequestLog(
                database: database, identity: identity, retention: retention,
                trimInterval: Int(SQLiteStore.rowsInterval), clock: clock)
            try loadEvents()
            try requests.load(path: path)
            if path != ":memory:" { place = StoreFilePlace(path: path) }
        } catch let error as StoreOpenError {
            throw error
        } catch let error as SQLiteError {
            throw StoreOpenError(sqlite: error, path: path, during: "opening")
        } catch {
            throw StoreOpenError(.cannotOpen, path: path, "\(error)")
        }
    }
}

// MARK: - Reading

extension SQLiteStore {
    /// The state as stored, checked for consistency.
    func loadState() throws(StoreOpenError) -> CountriesState {
        do {
            let seqRows = try database.prepare("SELECT value FROM meta WHERE key = 'seq'").rows()
            guard case .integer(let seq)? = seqRows.first?.first, seq >= 0 else {
                throw StoreOpenError(.corrupt, path: path, "the store has no valid seq")
            }
            let rows = try database.prepare("SELECT position, name, visited FROM countries ORDER BY position")
                .rows()
            var countries: [Country] = []
            countries.reserveCapacity(rows.count)
            for (expected, row) in rows.enumerated() {
                guard row.count == 3, row[0] == .integer(Int64(expected)), case .text(let name) = row[1],
                    case .integer(let visited) = row[2]
                else {
                    throw StoreOpenError(
                        .corrupt, path: path, "row \(expected) of the countries table is damaged")
                }
                countries.append(Country(name: name, visited: visited != 0))
            }
            var state = CountriesState(countries: countries, seq: UInt64(seq))
            guard state.seq == rowsSeq else {
                throw StoreOpenError(.corrupt, path: path, "the store's seq moved while it was open")
            }
            for event in eventsAfterRows {
                do {
                    try state.replay(event)
                } catch {
                    throw StoreOpenError(
                        .corrupt, path: path,
                        "event \(event.seq) does not apply to the stored rows (\(error))")
                }
            }
            return state
        } catch let error as StoreOpenError {
            throw error
        } catch let error as SQLiteError {
            throw StoreOpenError(sqlite: error, path: path, during: "reading")
        } catch {
            throw StoreOpenError(.corrupt, path: path, "\(error)")
        }
    }

    /// The request remembered under this id, with its first reply, if it is remembered.
    func rememberedRequest(for id: String) throws(StateStoreError) -> RememberedRequest? {
        try requests.rememberedRequest(for: id)
    }

    /// The first `limit` events after `since`, or nil when some of them are no longer kept, or
    /// when `since` is ahead of `currentSeq` (the caller's state is from another store: it must
    /// start over).
    func events(after since: UInt64, currentSeq: UInt64, limit: Int) throws(StateStoreError) -> [Event]? {
        if since > currentSeq { return nil }
        if since == currentSeq { return [] }
        let oldest = try oldestRetainedSeq(currentSeq: currentSeq)
        guard since + 1 >= oldest else { return nil }
        let rows = try StateStoreError.running { () throws(SQLiteError) in
            try selectEvents.rows([.integer(Int64(since)), .integer(Int64(clamping: max(0, limit)))])
        }
        return rows.compactMap { row in
            guard case .blob(let bytes)? = row.first else { return nil }
            return try? Event.decode(Data(bytes))
        }
    }

    /// The oldest seq whose event is kept (`currentSeq + 1` when none is).
    func oldestRetainedSeq(currentSeq: UInt64) throws(StateStoreError) -> UInt64 {
        let rows = try StateStoreError.running { () throws(SQLiteError) in try selectOldestEvent.rows() }
        guard case .integer(let stored)? = rows.first?.first else { return currentSeq + 1 }
        // Events older than the last retainedEvents wait for the next trim, dropped already.
        let retained = UInt64(Limits.retainedEvents)
        return max(UInt64(stored), lastSeq > retained ? lastSeq - retained + 1 : 1)
    }

    var requestIDsForgottenYoung: Int { requests.forgottenYoung }

    /// Bytes the store takes on disk (the database and its write-ahead log).
    var sizeOnDisk: Int {
        guard path != ":memory:" else { return 0 }
        return [path, path + "-wal"].reduce(0) { total, file in
            let attributes = try? FileManager.default.attributesOfItem(atPath: file)
            return total + ((attributes?[.size] as? Int) ?? 0)
        }
    }
}

// MARK: - Writing

extension SQLiteStore {
    /// Writes a batch in one transaction: its events and remembered replies, appended; every
    /// ``rowsInterval`` seqs also the rows and the seq, and the deletes of old events and ids.
    /// Nothing is written (and nothing in memory changes) when it throws.
    func commit(_ batch: StoreBatch) throws(StateStoreError) {
        guard !batch.isEmpty else { return }
        let interval = SQLiteStore.rowsInterval
        let newLastSeq = batch.events.last?.seq ?? lastSeq
        let addedBytes = (0..<batch.events.count).reduce(0) { $0 + batch.encodedEvent($1).count }
        // Past half the byte budget since the last such trim (only big resets get there), the
        // rows are written so that the trim may reach every event but the newest.
        let trimsForBytes = eventBytesSinceTrim + addedBytes >= retainedEventBytes / 2
        let writesRows = newLastSeq - rowsSeq >= interval || (trimsForBytes && newLastSeq > rowsSeq)
        if let lost = lostPlace() { throw StateStoreError(lost) }
        if logFilledDisk, checkpoint() == nil { logFilledDisk = false }
        var requestsCommit = requests.beginCommit(adding: batch.requests)
        do {
            do {
                try write(
                    batch, newLastSeq: newLastSeq, writesRows: writesRows, trimsForBytes: trimsForBytes,
                    into: &requestsCommit)
            } catch let error as SQLiteError where error.isFull {
                // The write-ahead log shrinks only by a checkpoint, which SQLite makes every
                // 1,000 pages: once it had filled the disk, the space freed since took a few
                // commits before the log filled it again, where a checkpoint needed a
                // fraction of it (docs/RELIABILITY-faults.md, "During a run").
                logFilledDisk = true
                guard checkpoint() == nil else { throw error }
                logFilledDisk = false
                requestsCommit = requests.beginCommit(adding: batch.requests)
                try write(
                    batch, newLastSeq: newLastSeq, writesRows: writesRows, trimsForBytes: trimsForBytes,
                    into: &requestsCommit)
            }
        } catch let error as SQLiteError {
            throw StateStoreError(error.description)
        } catch {
            throw StateStoreError("commit failed: \(error)")
        }
        // Committed: memory follows the file.
        requests.endCommit(requestsCommit, of: batch.requests)
        eventBytesSinceTrim = trimsForBytes ? 0 : eventBytesSinceTrim + addedBytes
        if writesRows {
            rowsSeq = newLastSeq
            eventsAfterRows.removeAll(keepingCapacity: true)
        } else {
            eventsAfterRows += batch.events
        }
        lastSeq = newLastSeq
    }

    /// One commit's transaction: the batch's events and requests, and at intervals the rows,
    /// the seq and the trims.
    private func write(
        _ batch: StoreBatch, newLastSeq: UInt64, writesRows: Bool, trimsForBytes: Bool,
        into requestsCommit: inout SQLiteRequestLog.Commit
    ) throws {
        let interval = SQLiteStore.rowsInterval
        try database.transaction {
            for (index, event) in batch.events.enumerated() {
                // Bound from the values themselves: an array of values and a copy of each
                // body were an eighth of the commit's instructions (docs/BENCHMARKS.md, "Stop 53").
                try insertEvent.run { parameters in
                    parameters.integer(Int64(event.seq))
                    parameters.text(event.topic.rawValue)
                    batch.encodedEvent(index).withUnsafeBytes { parameters.blob($0) }
                }
            }
            if writesRows {
                try writeRows(eventsAfterRows + batch.events)
                try saveSeq.run([.integer(Int64(newLastSeq))])
            }
            if newLastSeq / interval != lastSeq / interval || trimsForBytes {
                // Never an event the rows still need replayed.
                let rowsAt = writesRows ? newLastSeq : rowsSeq
                var through = Int64(newLastSeq) - Int64(Limits.retainedEvents)
                if trimsForBytes { through = max(through, try newestPastByteBudget()) }
                let keepFrom = min(through, Int64(rowsAt))
                if keepFrom > 0 {
                    // A reset whose id outlives its event gets its reply written in full.
                    try requests.inlineResets(keptFrom: keepFrom, into: &requestsCommit)
                    try trimEvents.run([.integer(keepFrom)])
                }
            }
            try requests.write(batch, into: &requestsCommit)
        }
    }

    /// Copies the write-ahead log into the database, so that the next commit writes the log
    /// from its start again; why it could not copy all of it, or nil. Passive: it never waits
    /// for a reader (a `countries backup`), where a truncating one waited up to the busy
    /// timeout at each commit.
    private func checkpoint() -> String? {
        do {
            let result = try database.prepare("PRAGMA wal_checkpoint(PASSIVE)").rows()
            // The log's frames, and how many of them are in the database now.
            guard let row = result.first, row.count == 3, case .integer(let frames) = row[1],
                case .integer(let copied) = row[2]
            else { return "SQLite gave no checkpoint's result" }
            return copied >= frames
                ? nil : "a reader of the store held \(frames - copied) of the log's pages back"
        } catch {
            return error.description
        }
    }

    /// Why the store's files are no longer where they were opened (``StoreFilePlace``), or nil.
    func lostPlace() -> String? {
        place?.check { checkpoint() }
    }

    var knownLostPlace: String? { place?.lost }

    /// The newest seq whose event, with every one after it, passes ``retainedEventBytes``: the
    /// trim for bytes deletes it and those before it. 0 when all the kept events fit. The
    /// newest event is always kept, however big.
    private func newestPastByteBudget() throws(SQLiteError) -> Int64 {
        var kept = 0
        for (position, row) in try selectEventSizes.rows().enumerated() {
            guard row.count == 2, case .integer(let seq) = row[0], case .integer(let size) = row[1] else {
                continue
            }
            kept += Int(size)
            if kept > retainedEventBytes, position > 0 { return seq }
        }
        return 0
    }

    /// Reads what the rows do not hold: the seq they are at and the events after it (replayed by
    /// ``loadState()``).
    private func loadEvents() throws {
        let seqRows = try database.prepare("SELECT value FROM meta WHERE key = 'seq'").rows()
        guard case .integer(let seq)? = seqRows.first?.first, seq >= 0 else {
            throw StoreOpenError(.corrupt, path: path, "the store has no valid seq")
        }
        rowsSeq = UInt64(seq)
        lastSeq = rowsSeq
        let tail = try database.prepare("SELECT seq, body FROM events WHERE seq > ?1 ORDER BY seq").rows([
            .integer(seq)
        ])
        for row in tail {
            guard row.count == 2, case .integer(let eventSeq) = row[0], eventSeq == Int64(lastSeq) + 1,
                case .blob(let bytes) = row[1], let event = try? Event.decode(Data(bytes)),
                event.seq == UInt64(eventSeq)
            else {
                throw StoreOpenError(
                    .corrupt, path: path, "the event after seq \(lastSeq) is missing or damaged")
            }
            eventsAfterRows.append(event)
            lastSeq = event.seq
        }
    }

    /// Writes the rows `events` leave, in order. A run of `changed` events moves no row, so
    /// only the last value of each row it touches is written: the rows of 256 toggles of the
    /// same few countries are a few updates, not 256 (docs/BENCHMARKS.md, "The durable commit").
    private func writeRows(_ events: [Event]) throws(SQLiteError) {
        var changed: [Int: Bool] = [:]
        for event in events {
            if case .changed(let row) = event.kind {
                changed[row.index] = row.visited
                continue
            }
            try writeVisited(changed)
            changed.removeAll(keepingCapacity: true)
            try write(event)
        }
        try writeVisited(changed)
    }

    /// Writes each row's `visited`, by position, in position order.
    private func writeVisited(_ rows: [Int: Bool]) throws(SQLiteError) {
        for (index, visited) in rows.sorted(by: { $0.key < $1.key }) {
            try updateVisited.run([.integer(Int64(index)), .integer(visited ? 1 : 0)])
        }
    }

    /// Writes the rows `event` touches.
    private func write(_ event: Event) throws(SQLiteError) {
        switch event.kind {
        case .changed(let row):
            try updateVisited.run([.integer(Int64(row.index)), .integer(row.visited ? 1 : 0)])
        case .added(let row):
            try insertCountry.run([
                .integer(Int64(row.index)), .text(row.name), .integer(row.visited ? 1 : 0),
            ])
        case .removed(let row):
            try deleteCountry.run([.integer(Int64(row.index))])
            try shiftDown.run([.integer(Int64(row.index))])
            try unflipPositions.run()
        case .reset(let rows):
            try deleteAllCountries.run()
            for row in rows {
                try insertCountry.run([
                    .integer(Int64(row.index)), .text(row.name), .integer(row.visited ? 1 : 0),
                ])
            }
        }
    }
}

@available(*, unavailable) extension SQLiteStore: Sendable {}
