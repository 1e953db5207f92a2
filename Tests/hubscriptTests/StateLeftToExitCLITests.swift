import Foundation
import XCTest

/// The one-shot CLI leaves the run's Lua state to the process's exit
/// (`RunConfiguration.leavesLuaStateToExit`): whatever the recipe leaves behind (an
/// export stopped mid-way, a hub list, objects with `__gc`/`__close`) and however it
/// ends, the host's own work is still done — the journal closed cleanly (its marker), a
/// finished export whole and an unfinished one not published, the run lock released,
/// every printed line out.
final class StateLeftToExitCLITests: XCTestCase {
    private func outFiles(_ out: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: out.path)) ?? []).sorted()
    }

    func testALimitMidExportLeavesTheJournalClosedAndTheFinishedExportWhole() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.resetSandbox()
        let out = cli.root.appendingPathComponent("out")
        let recipe = try cli.file("left.lua", """
            recipe { name = "left", needs = { "users.list" }, limits = { instructions = 3000000 } }
            local mt = { __gc = function() print("gc") end, __close = function() print("closed") end }
            local keep = {}   -- alive to the end: their finalizers would run only at a close
            for i = 1, 100 do keep[i] = setmetatable({}, mt) end
            local open_list = hub.users.list {}
            local first = open_list()
            local rows = {}
            for i = 1, 2000 do rows[i] = { n = i, text = string.rep("x", 50) } end
            local done = export.jsonl("done.jsonl", rows)
            for i = 1, 3000 do print("line " .. i) end
            local guard <close> = setmetatable({}, mt)
            export.jsonl("partial.jsonl", function() return { n = 1 } end)
            print("never")
            """)
        let r = try cli.run([recipe, "--out", out.path, "--run-id", "run_left"], expect: 4)
        let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertEqual(lines.count, 3001, "every printed line, then the end: \(r.stdout.suffix(200))")
        XCTAssertEqual(lines.first, "line 1")
        XCTAssertEqual(lines[2999], "line 3000")
        XCTAssertFalse(r.stdout.contains("never") || r.stdout.contains("gc") || r.stdout.contains("closed"), r.stdout)
        XCTAssertTrue(r.stderr.contains("limit exceeded: instructions (3000000)"), r.stderr)
        XCTAssertEqual(outFiles(out), ["done.jsonl", "partial.jsonl.incomplete"],
                       "the stopped export is kept marked incomplete, never as partial.jsonl, and no temporary file is left")
        let done = try String(contentsOf: out.appendingPathComponent("done.jsonl"), encoding: .utf8)
        XCTAssertEqual(done.split(separator: "\n").count, 2000)
        XCTAssertTrue(done.hasSuffix("\n"), String(done.suffix(100)))
        let last = try XCTUnwrap(done.split(separator: "\n").last)
        let row = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])
        XCTAssertEqual(row["n"] as? Int, 2000)
        XCTAssertEqual(row["text"] as? String, String(repeating: "x", count: 50))
        let journal = cli.stateDir.appendingPathComponent("journal/journal.sqlite").path
        let marker = try Data(contentsOf: URL(fileURLWithPath: journal + "-closed"))
        XCTAssertGreaterThan(marker.count, 1, "a clean close writes its whole marker")
        // The lock is released: the same run id resumes (and stops at the same limit).
        let again = try cli.run(["runs", "resume", "run_left"], expect: 4)
        XCTAssertFalse(again.stderr.contains("busy") || again.stderr.contains("running"), again.stderr)
        XCTAssertTrue(again.stderr.contains("limit exceeded: instructions (3000000)"), again.stderr)
    }

    func testARecipeErrorWithOpenObjectsLeavesTheJournalClosed() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.resetSandbox()
        let recipe = try cli.file("err.lua", """
            recipe { name = "err", needs = { "users.list" } }
            local list = hub.users.list {}
            local first = list()
            local guard <close> = setmetatable({}, { __close = function() print("closed at the error") end })
            local keep = setmetatable({}, { __gc = function() print("gc") end })
            print("before")
            error("boom", 0)
            """)
        let r = try cli.run([recipe, "--run-id", "run_err"], expect: 1)
        XCTAssertEqual(r.stdout, "before\nclosed at the error\n")
        XCTAssertTrue(r.stderr.contains("boom"), r.stderr)
        let journal = cli.stateDir.appendingPathComponent("journal/journal.sqlite").path
        XCTAssertGreaterThan(try Data(contentsOf: URL(fileURLWithPath: journal + "-closed")).count, 1)
        let again = try cli.run(["runs", "resume", "run_err"], expect: 1)
        XCTAssertEqual(again.stdout, "before\nclosed at the error\n", again.stderr)
    }
}
