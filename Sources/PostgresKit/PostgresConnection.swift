import CPostgres
import Foundation

/// One libpq connection: the only type in the package that calls libpq's C API (the
/// PostgreSQL journal and run locks use it).
///
/// Contracts:
/// - Statements are sent with `PQexecParams`: parameters in text format, typed
///   (`int` as int8, `text` as text, `null` left for the server to infer), so values
///   are never spliced into SQL. `$1…$n` are the placeholders.
/// - Every error is a `PostgresError` whose message is libpq's or the server's with the
///   URL's password masked (`PostgresURL.redact`); SQLSTATE is kept apart.
/// - The server's notices are dropped (libpq would print them on stderr).
/// - Not thread-safe: the owner serializes every call.
public final class PostgresConnection {
    private var handle: OpaquePointer?
    public let url: PostgresURL

    /// Connects to `url`. `applicationName` shows in `pg_stat_activity` (the run locks
    /// name their holder with it). libpq's own defaults fill what the URL leaves out
    /// (`PGPASSWORD`, `~/.pgpass`, the default socket); `connect_timeout` is
    /// `connectTimeoutSeconds` (10 s) unless the URL says otherwise.
    /// - Throws: `PostgresError(.connection)` saying why, password masked.
    public init(url: PostgresURL, applicationName: String? = nil, connectTimeoutSeconds: Int = 10) throws {
        self.url = url
        var keys = ["connect_timeout", "fallback_application_name", "dbname"]
        var values = [String(connectTimeoutSeconds), "hubscript", url.text]
        if let applicationName {
            keys.append("application_name")
            values.append(applicationName)
        }
        let connection: OpaquePointer? = Self.withCStrings(keys) { k in
            Self.withCStrings(values) { v in PQconnectdbParams(k, v, 1) }
        }
        guard let connection else { throw PostgresError(.connection, "cannot connect to \(url.redacted): out of memory") }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = Self.oneLine(String(cString: PQerrorMessage(connection)))
            PQfinish(connection)
            throw PostgresError(.connection, url.redact("cannot connect to \(url.redacted): \(message)"))
        }
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        handle = connection
    }

    deinit { close() }

    /// Closes the connection (the server drops its session locks). Idempotent.
    public func close() {
        if let handle { PQfinish(handle) }
        handle = nil
    }

    /// Whether the connection is open and sound (false after the server went away).
    public var isOpen: Bool {
        guard let handle else { return false }
        return PQstatus(handle) == CONNECTION_OK
    }

    /// The server process serving this connection (`pg_stat_activity.pid`), 0 if closed.
    public var backendPID: Int32 { handle.map { PQbackendPID($0) } ?? 0 }

    /// Reconnects with the same parameters (after the server restarted).
    /// - Throws: `PostgresError(.connection)` if the server still cannot be reached.
    public func reset() throws {
        guard let handle else { throw PostgresError(.connection, "the connection to \(url.redacted) was closed") }
        PQreset(handle)
        guard PQstatus(handle) == CONNECTION_OK else {
            throw PostgresError(.connection, url.redact(
                "cannot reconnect to \(url.redacted): \(Self.oneLine(String(cString: PQerrorMessage(handle))))"))
        }
    }

    /// Runs one or more statements without parameters or results (DDL, `BEGIN`).
    public func exec(_ sql: String) throws {
        let result = try send { PQexec($0, sql) }
        PQclear(result)
    }

    /// Runs a statement; returns the number of rows it changed (or returned).
    @discardableResult
    public func run(_ sql: String, _ params: [PostgresValue] = []) throws -> Int {
        let result = try execute(sql, params)
        defer { PQclear(result) }
        return Int(String(cString: PQcmdTuples(result))) ?? 0
    }

    /// Calls `row` for every result row.
    public func query(_ sql: String, _ params: [PostgresValue] = [], _ row: (PostgresRow) throws -> Void) throws {
        let result = try execute(sql, params)
        defer { PQclear(result) }
        for i in 0..<PQntuples(result) { try row(PostgresRow(result: result, row: i)) }
    }

    /// Maps the first result row, if any.
    public func first<T>(_ sql: String, _ params: [PostgresValue] = [], _ map: (PostgresRow) throws -> T) throws -> T? {
        let result = try execute(sql, params)
        defer { PQclear(result) }
        return PQntuples(result) > 0 ? try map(PostgresRow(result: result, row: 0)) : nil
    }

    /// Runs `body` between `BEGIN` and `COMMIT`; rolls back when it throws.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try exec("BEGIN")
        do {
            let r = try body()
            try exec("COMMIT")
            return r
        } catch {
            if isOpen { _ = try? exec("ROLLBACK") }
            throw error
        }
    }

    private func execute(_ sql: String, _ params: [PostgresValue]) throws -> OpaquePointer {
        let types: [Oid] = params.map {
            switch $0 {
            case .int: 20     // int8
            case .text: 25    // text
            case .null: 0     // inferred
            }
        }
        let texts: [String?] = params.map {
            switch $0 {
            case .int(let i): String(i)
            case .text(let s): s
            case .null: nil
            }
        }
        return try send { conn in
            Self.withOptionalCStrings(texts) { values in
                PQexecParams(conn, sql, Int32(params.count), types, values, nil, nil, 0)
            }
        }
    }

    /// Sends with `body` and checks the result; returns it (the caller clears it).
    private func send(_ body: (OpaquePointer) -> OpaquePointer?) throws -> OpaquePointer {
        guard let handle else { throw PostgresError(.connection, "the connection to \(url.redacted) was closed") }
        guard let result = body(handle) else {
            throw PostgresError(.connection, url.redact("lost the connection to \(url.redacted): \(Self.oneLine(String(cString: PQerrorMessage(handle))))"))
        }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return result
        default:
            let state = cpg_sqlstate(result).map { String(cString: $0) }
            var message = Self.oneLine(String(cString: PQresultErrorMessage(result)))
            if message.isEmpty { message = Self.oneLine(String(cString: PQerrorMessage(handle))) }
            PQclear(result)
            let lost = PQstatus(handle) != CONNECTION_OK
            if lost { message = "lost the connection to \(url.redacted): \(message)" }
            throw PostgresError(lost && state == nil ? .connection : .statement, url.redact(message), sqlState: state)
        }
    }

    /// libpq's multi-line messages on one line.
    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }.joined(separator: "; ")
    }

    private static func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
        let copies = strings.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        var pointers: [UnsafePointer<CChar>?] = copies.map { UnsafePointer($0) } + [nil]
        return pointers.withUnsafeMutableBufferPointer { body(UnsafePointer($0.baseAddress!)) }
    }

    private static func withOptionalCStrings<R>(_ strings: [String?], _ body: (UnsafePointer<UnsafePointer<CChar>?>?) -> R) -> R {
        let copies = strings.map { $0.map { strdup($0) } ?? nil }
        defer { copies.forEach { free($0) } }
        var pointers: [UnsafePointer<CChar>?] = copies.map { $0.map { UnsafePointer($0) } }
        if pointers.isEmpty { return body(nil) }
        return pointers.withUnsafeMutableBufferPointer { body(UnsafePointer($0.baseAddress!)) }
    }
}
