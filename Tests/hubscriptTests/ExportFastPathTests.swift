import Foundation
import XCTest

/// `export.jsonl(name, hub.…list…)` streams the Hub's pages straight into the file; the
/// result must be byte for byte what the row-by-row path (through Lua tables) writes.
final class ExportFastPathTests: XCTestCase {
    func testStreamedHubListEqualsRowByRowExport() throws {
        let cli = try CLIHarness(testCase: self)
        let out = cli.root.appendingPathComponent("out")
        let recipe = try cli.file("both.lua", """
            recipe { name = "both", needs = { "audit.view", "users.list" } }
            local fast = export.jsonl("fast.jsonl", hub.audit.query {})
            local list = hub.audit.query {}
            local slow = export.jsonl("slow.jsonl", function() return list() end)
            local users = export.jsonl("users.jsonl", hub.users.list { status = "active" })
            print(fast.rows, slow.rows, users.rows > 0)
            """)
        let r = try cli.run([recipe, "--out", out.path], expect: 0)
        let counts = r.stdout.trimmingCharacters(in: .newlines).split(separator: "\t")
        XCTAssertEqual(counts.count, 3, r.output)
        XCTAssertEqual(counts[0], counts[1])
        XCTAssertEqual(counts[2], "true")
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
        let r = try cli.run([recipe, "--out", out.path], expect: 0)
        let counts = r.stdout.trimmingCharacters(in: .newlines).split(separator: "\t").compactMap { Int($0) }
        XCTAssertEqual(counts.count, 2, r.output)
        XCTAssertEqual(counts[1], counts[0] - 1)
    }
}
