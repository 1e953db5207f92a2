import Foundation
import PostgresKit
import XCTest
@testable import HubBindings

/// The journal's backends, for the suite every journal test runs on both of.
///
/// PostgreSQL needs a server: `scripts/test` starts one and sets
/// `HUBSCRIPT_TEST_POSTGRES` (scripts/lib/postgres.sh). Without it a developer's run
/// skips the PostgreSQL half (saying so), but under `CI` its absence fails the test:
/// the PostgreSQL journal can never silently go untested there.
enum JournalBackend: CustomStringConvertible {
    case sqlite
    case postgres(base: String)

    var description: String {
        switch self {
        case .sqlite: "sqlite"
        case .postgres: "postgresql"
        }
    }

    /// SQLite, and PostgreSQL when a test server is configured.
    static func all() throws -> [JournalBackend] {
        if let base = try TestPostgres.baseURL(required: false) { return [.sqlite, .postgres(base: base)] }
        return [.sqlite]
    }

    /// A new, empty journal of its own (SQLite in memory; PostgreSQL in a fresh schema).
    func journal(clock: @escaping @Sendable () -> Date = { Fixture.start }) throws -> Journal {
        switch self {
        case .sqlite: try Journal.inMemory(clock: clock)
        case .postgres(let base): try Journal(postgres: TestPostgres.freshSchema(base), clock: clock)
        }
    }

    /// A new, empty place several `Journal`s can open at once (as processes or hosts
    /// would): a file in a new temporary folder, or a fresh schema.
    func newLocation() throws -> JournalLocation {
        switch self {
        case .sqlite:
            let folder = try Fixture.tempDirectory()
            Self.folders.add(folder)
            return .sqlite(path: folder.appendingPathComponent(Journal.fileName).path)
        case .postgres(let base): return .postgres(try TestPostgres.freshSchema(base))
        }
    }

    /// Temporary folders `newLocation` made, removed after each backend's pass.
    static let folders = FolderList()
}

/// The test server of `HUBSCRIPT_TEST_POSTGRES`.
enum TestPostgres {
    struct Missing: Error, CustomStringConvertible {
        var description: String {
            "HUBSCRIPT_TEST_POSTGRES is not set under CI: run the tests with scripts/test, which starts a PostgreSQL server"
        }
    }

    /// The server's URL; nil (or `XCTSkip` when `required`) when none is configured on
    /// a developer's machine; an error under `CI`.
    static func baseURL(required: Bool = true) throws -> String? {
        let environment = ProcessInfo.processInfo.environment
        if let url = environment["HUBSCRIPT_TEST_POSTGRES"], !url.isEmpty { return url }
        if let ci = environment["CI"], !ci.isEmpty { throw Missing() }
        print("note: HUBSCRIPT_TEST_POSTGRES is not set: the PostgreSQL journal is not tested (scripts/test sets it)")
        if required { throw XCTSkip("HUBSCRIPT_TEST_POSTGRES is not set (scripts/test starts a server and sets it)") }
        return nil
    }

    /// The server's URL, or `XCTSkip` (an error under `CI`) when none is configured.
    static func requiredBaseURL() throws -> String {
        guard let url = try baseURL(required: true) else { throw XCTSkip("no PostgreSQL test server") }
        return url
    }

    /// A new schema on the server (so no test sees another's rows, nor its run locks),
    /// and the URL that makes it the journal's (`options=-csearch_path=…`).
    static func freshSchema(_ base: String) throws -> PostgresURL {
        let schema = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(20)
        let admin = try PostgresConnection(url: try PostgresURL(base))
        try admin.exec("CREATE SCHEMA \(schema)")
        admin.close()
        return try PostgresURL(base + (base.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(schema)")
    }
}

extension XCTestCase {
    /// Runs `body` once per backend (`JournalBackend.all`); a failure names its backend.
    func eachJournalBackend(_ body: (JournalBackend) throws -> Void, file: StaticString = #filePath, line: UInt = #line) throws {
        for backend in try JournalBackend.all() {
            do { try body(backend) } catch {
                XCTFail("on the \(backend) journal: \(error)", file: file, line: line)
            }
            for folder in JournalBackend.folders.takeAll() {
                try? FileManager.default.removeItem(at: folder)
            }
        }
    }
}

/// Folders to remove (thread-safe).
final class FolderList: @unchecked Sendable {
    private let lock = NSLock()
    private var folders: [URL] = []
    func add(_ folder: URL) { lock.withLock { folders.append(folder) } }
    func takeAll() -> [URL] { lock.withLock { defer { folders = [] }; return folders } }
}
