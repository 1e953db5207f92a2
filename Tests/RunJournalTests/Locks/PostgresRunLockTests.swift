import Foundation
import HubClient
import PostgresKit
import SystemText
import XCTest
import JournalTestSupport
import TestSupport
@testable import RunJournal

/// `PostgresRunLocks`: the run locks of a PostgreSQL journal, shared by every host.
final class PostgresRunLockTests: XCTestCase {
    func journal() throws -> Journal {
        try Journal(postgres: TestPostgres.freshSchema(TestPostgres.requiredBaseURL()))
    }

    func state(_ name: String) -> StateDirectory {
        StateDirectory(explicit: FileManager.default.temporaryDirectory.appendingPathComponent("pglock-\(name)-\(UUID().uuidString)").path)
    }

    func testAHolderOnOneHostRefusesTheRunOnAnotherUntilItLetsGo() throws {
        let journal = try journal()
        let hostA = journal.runLocks(state: state("a"))
        let hostB = try Journal(journal.location).runLocks(state: state("b"))
        let held = try hostA.acquire("run_a")
        XCTAssertTrue(hostB.isHeld("run_a"))
        XCTAssertFalse(hostB.isHeld("run_b"))
        XCTAssertThrowsError(try hostB.acquire("run_a")) { error in
            let busy = error as? RunLock.Busy
            XCTAssertEqual(busy?.pid, getpid())
            XCTAssertEqual(busy?.host, String(ProcessInfo.processInfo.hostName.prefix(30)))
            XCTAssertEqual("\(error)", """
                run run_a is already running in process \(getpid()) on \(ProcessInfo.processInfo.hostName.prefix(30)); \
                wait for it to end (hubscript runs list shows it), or stop that process and then resume with \
                hubscript runs resume run_a
                """)
        }
        held.release()
        XCTAssertFalse(hostB.isHeld("run_a"))
        let again = try hostB.acquire("run_a")
        XCTAssertTrue(hostA.isHeld("run_a"))
        again.release()
    }

    func testJournalsInOtherSchemasDoNotContend() throws {
        let one = try journal(), other = try journal()
        let held = try one.runLocks(state: state("a")).acquire("run_same")
        let elsewhere = try other.runLocks(state: state("b")).acquire("run_same")
        XCTAssertFalse(other.runLocks(state: state("b")).isHeld("run_other"))
        held.release()
        elsewhere.release()
    }

    /// A running row is `interrupted` once the process holding its lock is killed with
    /// SIGKILL: the server drops the lock with the dead process's session.
    func testARunningRowIsInterruptedOnceItsHolderIsKilled() throws {
        let journal = try journal()
        try journal.startRun(Fixture.runStart("run_k"), masking: SecretRedactor())
        let locks = journal.runLocks(state: state("a"))
        guard case .postgres(let url) = journal.location, let pg = locks as? PostgresRunLocks else {
            return XCTFail("not a PostgreSQL journal")
        }
        // Another process takes the run's lock the way hubscript does (a session lock on
        // a connection that then sits idle), then waits for more input.
        let psql = Process()
        let input = Pipe()
        psql.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
        psql.arguments = [url.text, "-Atq"]
        psql.standardInput = input
        psql.standardOutput = FileHandle.nullDevice
        try psql.run()
        input.fileHandleForWriting.write(Data("SELECT pg_advisory_lock(\(pg.key("run_k")));\n".utf8))
        defer { if psql.isRunning { kill(psql.processIdentifier, SIGKILL) } }
        let deadline = Date().addingTimeInterval(10)
        while !locks.isHeld("run_k") && Date() < deadline { usleep(20_000) }
        let run = try XCTUnwrap(journal.run(id: "run_k"))
        XCTAssertEqual(locks.effectiveStatus(run), "running")
        XCTAssertThrowsError(try locks.acquire("run_k")) { XCTAssertTrue($0 is RunLock.Busy, "\($0)") }

        kill(psql.processIdentifier, SIGKILL)
        psql.waitUntilExit()
        while locks.isHeld("run_k") && Date() < deadline.addingTimeInterval(5) { usleep(20_000) }
        XCTAssertEqual(locks.effectiveStatus(run), "interrupted")
        let taken = try locks.acquire("run_k")
        taken.release()
    }

    /// The server ends a run's lock session (as a restart does) and the journal's: the
    /// journal does not reconnect while that run holds its lost lock — the run stops
    /// rather than carry on unlocked — and reconnects once the run let go.
    func testTheJournalDoesNotReconnectUnderARunWhoseLockWasLost() throws {
        let journal = try journal()
        try journal.startRun(Fixture.runStart("run_lost"), masking: SecretRedactor())
        let held = try journal.runLocks(state: state("a")).acquire("run_lost")
        guard case .postgres(let url) = journal.location, let lock = held as? PostgresRunLock,
              let pg = journal.db as? PostgresJournalDatabase else { return XCTFail("not a PostgreSQL journal") }
        let admin = try PostgresConnection(url: url)
        for pid in [lock.backendPID, pg.connection.backendPID] {
            XCTAssertEqual(try admin.first("SELECT pg_terminate_backend($1::int)", [.int(Int(pid))]) { $0.bool(0) }, true)
        }
        XCTAssertThrowsError(try journal.run(id: "run_lost"), "the dead connection fails the call under way") { error in
            XCTAssertEqual((error as? JournalError)?.code, .postgres)
            // The middle is libpq's own words, which vary with its version.
            let message = (error as? JournalError)?.message ?? "\(error)"
            XCTAssertTrue(message.hasPrefix("the PostgreSQL journal is out of reach: lost the connection to \(url.redacted): "), message)
            XCTAssertTrue(message.hasSuffix(" — check that the server is running and that the journal URL in the configuration names the right host, database, user and password (or set PGPASSWORD or ~/.pgpass), then run again (a run this stopped resumes with hubscript runs resume RUN_ID)"), message)
        }
        XCTAssertThrowsError(try journal.run(id: "run_lost")) { error in
            XCTAssertEqual((error as? JournalError)?.code, .postgres)
            XCTAssertTrue("\(error)".contains("lost the connection to \(url.redacted), and with it the lock of a run in this process; that run stops here"), "\(error)")
        }
        held.release()
        XCTAssertEqual(try journal.run(id: "run_lost")?.status, .running, "reconnected once the run let go")
    }
}
