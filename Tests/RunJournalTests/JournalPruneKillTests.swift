import Foundation
import XCTest
import HubClient
import SQLiteKit
import JournalTestSupport
@testable import RunJournal

/// `hubscript runs prune` killed with SIGKILL at many points leaves a consistent
/// journal (every run whole, or recorded as being pruned, or gone; no orphan row; its
/// history intact), and the next prune finishes the work exactly.
final class JournalPruneKillTests: XCTestCase {
    static let runs = 120
    static let writesPerRun = 25
    static let day: TimeInterval = 86_400

    /// The `hubscript` built beside the tests (`HUBSCRIPT_TEST_BINARY` when set).
    var binary: URL {
        if let path = ProcessInfo.processInfo.environment["HUBSCRIPT_TEST_BINARY"], !path.isEmpty { return URL(fileURLWithPath: path) }
        let bundle = Bundle(for: Self.self).bundleURL
        let candidates = [bundle, bundle.deletingLastPathComponent()].map { $0.appendingPathComponent("hubscript") }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }

    /// A state directory whose journal holds `runs` succeeded runs of 100 days ago, each
    /// with its writes, a fire and an export folder.
    func filledState() throws -> StateDirectory {
        let root = try Fixture.tempDirectory()
        let state = StateDirectory(explicit: root.path)
        let old = Date().addingTimeInterval(-100 * Self.day)
        let journal = try Journal.openChecked(path: try state.journalFilePath, check: .always)
        let exports = try state.folderPath("runs")
        for n in 0..<Self.runs {
            let id = String(format: "job@%04d", n)
            let folder = exports + "/" + id
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try Data("id\nusr_\(n)\n".utf8).write(to: URL(fileURLWithPath: folder + "/users.csv"))
            try journal.transaction { db in
                let at = Int(Journal.ms(old.addingTimeInterval(Double(n))))
                _ = try db.run("""
                    INSERT INTO runs (id, recipe_path, recipe_sha256, params, profile, mode, status, started_at, finished_at, output_folder)
                    VALUES (?1, '/r/job.lua', 'ab', '{}', 'default', 'run', 'succeeded', ?2, ?2, ?3)
                    """, [.text(id), .int(at), .text(folder)])
                for w in 0..<Self.writesPerRun {
                    _ = try db.run("""
                        INSERT INTO writes (run_id, seq, key, method, path, state, http_status, response, created_at, updated_at)
                        VALUES (?1, ?2, ?3, 'POST', '/groups/g/members', 'done', 200, '{"ok":true}', ?4, ?4)
                        """, [.text(id), .int(w + 1), .text("k\(w)"), .int(at)])
                }
                _ = try db.run("""
                    INSERT INTO fires (job, scheduled_at, trigger, run_id, status, recorded_at)
                    VALUES ('job', ?1, 'schedule', ?2, 'succeeded', ?1)
                    """, [.int(at), .text(id)])
            }
        }
        return state
    }

    func prune(_ state: StateDirectory) -> Process {
        let p = Process()
        p.executableURL = binary
        p.arguments = ["runs", "prune", "--older-than", "90d", "--batch", "40", "--state-dir", state.path]
        p.currentDirectoryURL = state.url
        p.environment = ["PATH": "/usr/bin:/bin", "XDG_CONFIG_HOME": state.path + "/no-config"]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        return p
    }

    /// What a killed prune may leave: each run whole (all its writes) or in `pruning`;
    /// no write, fire or `pruning` row of a run that is gone but not recorded; every
    /// export folder that of a run still held or being pruned.
    func checkConsistent(_ state: StateDirectory, file: StaticString = #filePath, line: UInt = #line) throws -> Int {
        let journal = try Journal.openChecked(path: try state.journalFilePath, check: .always)
        var problems: [String] = []
        try journal.reading { db in
            try db.query("""
                SELECT r.id, (SELECT count(*) FROM writes w WHERE w.run_id = r.id), (SELECT count(*) FROM pruning p WHERE p.run_id = r.id)
                FROM runs r
                """) { row in
                if row.int(1) != Self.writesPerRun && row.int(2) == 0 { problems.append("\(row.text(0)) lost writes outside a prune") }
            }
            try db.query("SELECT DISTINCT run_id FROM writes WHERE run_id NOT IN (SELECT id FROM runs)") { problems.append("orphan writes of \($0.text(0))") }
            try db.query("SELECT run_id FROM pruning WHERE rows_gone = 0 AND run_id NOT IN (SELECT id FROM runs)") { problems.append("pruning row of a gone run \($0.text(0))") }
        }
        var known = Set<String>()
        try journal.reading { db in
            try db.query("SELECT id FROM runs UNION SELECT run_id FROM pruning") { known.insert($0.text(0)) }
        }
        for folder in try FileManager.default.contentsOfDirectory(atPath: try state.folderPath("runs")) where !known.contains(folder) {
            problems.append("export folder \(folder) of no run")
        }
        if let sqlite = journal.sqlite {
            try sqlite.query("PRAGMA foreign_key_check") { problems.append("foreign key broken in \($0.text(0))") }
            try sqlite.query("PRAGMA integrity_check") { if $0.text(0) != "ok" { problems.append("integrity: \($0.text(0))") } }
        }
        XCTAssertEqual(problems, [], file: file, line: line)
        return try journal.listRuns(limit: 10_000).count
    }

    func testAPruneKilledAtAnyPointLeavesAConsistentJournalThatTheNextPruneFinishes() throws {
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            if ProcessInfo.processInfo.environment["CI"] != nil { return XCTFail("the hubscript binary is not built at \(binary.path)") }
            throw XCTSkip("the hubscript binary is not built at \(binary.path) (run 'swift build' first)")
        }
        let template = try filledState()
        defer { try? FileManager.default.removeItem(at: template.url) }
        // How long a whole prune takes here, to spread the kills over it.
        let timing = try copy(template)
        defer { try? FileManager.default.removeItem(at: timing.url) }
        let started = Date()
        let whole = prune(timing)
        try whole.run()
        whole.waitUntilExit()
        XCTAssertEqual(whole.terminationStatus, 0)
        let span = Date().timeIntervalSince(started)
        XCTAssertEqual(try checkConsistent(timing), 0)

        var leftCounts: [Int] = []
        for fraction in [0.15, 0.3, 0.45, 0.6, 0.75, 0.9] {
            let state = try copy(template)
            defer { try? FileManager.default.removeItem(at: state.url) }
            let p = prune(state)
            try p.run()
            usleep(useconds_t(span * fraction * 1_000_000))
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            leftCounts.append(try checkConsistent(state))
            // The next prune finishes: every run gone, nothing left being pruned, no folder.
            let next = prune(state)
            try next.run()
            next.waitUntilExit()
            XCTAssertEqual(next.terminationStatus, 0)
            XCTAssertEqual(try checkConsistent(state), 0)
            let journal = try Journal.openChecked(path: try state.journalFilePath, check: .always)
            XCTAssertEqual(try journal.reading { db in try db.first("SELECT count(*) FROM pruning") { $0.int(0) } }, 0)
            XCTAssertEqual(try journal.writes(runID: "job@0000"), [])
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: try state.folderPath("runs")), [])
            XCTAssertEqual(try journal.fires(job: "job").count, 1, "the job's latest fire stays")
        }
        print("runs left after each kill: \(leftCounts) (of \(Self.runs)); a whole prune took \(Int(span * 1000)) ms")
    }

    /// A copy of `state`'s journal files and export folders in a new folder.
    func copy(_ state: StateDirectory) throws -> StateDirectory {
        let root = try Fixture.tempDirectory()
        try FileManager.default.removeItem(at: root)
        try FileManager.default.copyItem(at: state.url, to: root)
        let copied = StateDirectory(explicit: root.path)
        // The runs' export folders are the copy's own.
        let journal = try Journal.openChecked(path: try copied.journalFilePath, check: .always)
        try journal.transaction { db in
            _ = try db.run("UPDATE runs SET output_folder = ?1 || '/' || id", [.text(try copied.folderPath("runs"))])
        }
        return copied
    }
}
