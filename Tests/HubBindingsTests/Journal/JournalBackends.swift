import Foundation
import PostgresKit
import TestSupport
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
