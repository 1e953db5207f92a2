import Foundation
import XCTest

/// `export.jsonl(name, hub.…list…)` streams the Hub's pages straight into the file; the
/// result must be byte for byte what the row-by-row path (through Lua tables) writes.
/// The file alone cannot tell the two paths apart, so each test also reads the
/// `export_streamed` events of `--json`, which only the streaming path emits.
final class ExportFastPathTests: XCTestCase {
    /// The `--json` lines of stdout, decoded.
    func events(_ r: CLIHarness.Result) throws -> [[String: Any]] {
        try r.stdout.split(separator: "\n").map { line in
            try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], String(line))
        }
    }

    func testStreamedHubListEqualsRowByRowExport() throws {
        let cli = try CLIHarness(testCase: self)
        let out = cli.root.appendingPathComponent("out")
        let recipe = try cli.file("both.lua", """
            recipe { name = "both", needs = { "audit.view", "users.list" } }
            local fast = export.jsonl("fast.jsonl", hub.audit.query {})
            local list = hub.audit.query {}
            local slow = export.jsonl("slow.jsonl", function() return list() end)
            local users = export.jsonl("users.jsonl", hub.users.list { status = "active" })
            print(fast.rows, slow.rows, users.rows)
            """)
        let r = try cli.run([recipe, "--out", out.path, "--json"], expect: 0)
        let events = try self.events(r)
        let printed = try XCTUnwrap(events.first { $0["type"] as? String == "print" }?["text"] as? String, r.output)
        let rows = printed.split(separator: "\t").compactMap { Int($0) }
        XCTAssertEqual(rows.count, 3, r.output)
        XCTAssertEqual(rows[0], rows[1])
        XCTAssertGreaterThan(rows[2], 0)

        // Two streamed lists (the audit query and the users), in order; the function
        // export went row by row and reports nothing.
        let streamed = events.filter { $0["type"] as? String == "export_streamed" }
        XCTAssertEqual(streamed.compactMap { $0["items"] as? Int }, [rows[0], rows[2]], r.stdout)
        XCTAssertTrue(streamed.allSatisfy { ($0["pages"] as? Int ?? 0) > 1 }, "several pages each: \(streamed)")

        let fast = try Data(contentsOf: out.appendingPathComponent("fast.jsonl"))
        let slow = try Data(contentsOf: out.appendingPathComponent("slow.jsonl"))
        XCTAssertGreaterThan(fast.count, 100_000)
        XCTAssertEqual(fast, slow, "the streamed export differs from the row-by-row one")
    }

    func testAListAlreadyStartedIsExportedFromWhereItIs() throws {
        let cli = try CLIHarness(testCase: self)
        let out = cli.root.appendingPathComponent("out")
        let recipe = try cli.file("rest.lua", """
            recipe { name = "rest", needs = { "users.list" } }
            local all = hub.users.list {}:count()
            local list = hub.users.list {}
            local first = list()
            local rest = export.jsonl("rest.jsonl", list)
            print(all, rest.rows)
            """)
        let r = try cli.run([recipe, "--out", out.path, "--json"], expect: 0)
        let events = try self.events(r)
        let printed = try XCTUnwrap(events.first { $0["type"] as? String == "print" }?["text"] as? String, r.output)
        let counts = printed.split(separator: "\t").compactMap { Int($0) }
        XCTAssertEqual(counts.count, 2, r.output)
        XCTAssertEqual(counts[1], counts[0] - 1)
        // A started list goes row by row (the stream would start over at the first page).
        XCTAssertTrue(events.allSatisfy { $0["type"] as? String != "export_streamed" }, r.stdout)
    }
}
