import XCTest
@testable import Configuration

/// Where a job, a trigger or one of their fields is written in the configuration's text,
/// for the configuration check's `FILE:LINE`.
final class ConfigSourceLinesTests: XCTestCase {
    static let text = """
        return {
          -- jobs = { commented = {} }
          profiles = { prod = { sandbox = true } },
          jobs = { first = { recipe = "a.lua", schedule = "@daily" },
            ["nightly-sync"] = {
              recipe = "b.lua",
              params = {
                days = 3,
              },
              profile = "prod",
            },
            ['quoted'] = { recipe = "c.lua", profile == nil },
            last = {
              schedule = "@hourly",
            },
          },
          triggers = {
            nightly = { on = "user.suspended", recipe = "d.lua" },
          },
        }
        """

    let lines = ConfigSourceLines(text)

    func testSectionsAndEntriesInEveryWayLuaWritesAKey() {
        XCTAssertEqual(lines.section("jobs"), 4, "the commented line does not count")
        XCTAssertEqual(lines.entry("first", in: "jobs"), 4, "an entry on the section's own line")
        XCTAssertEqual(lines.entry("nightly-sync", in: "jobs"), 5)
        XCTAssertEqual(lines.entry("quoted", in: "jobs"), 12)
        XCTAssertEqual(lines.entry("nightly", in: "triggers"), 18, "a trigger is looked for under triggers")
        XCTAssertNil(lines.entry("absent", in: "jobs"))
        XCTAssertNil(lines.entry("x", in: "nowhere"))
    }

    func testFieldsStayInsideTheirEntry() {
        XCTAssertEqual(lines.field("profile", of: "nightly-sync", in: "jobs"), 10)
        XCTAssertEqual(lines.field("days", of: "nightly-sync", in: "jobs", within: "params"), 8)
        XCTAssertNil(lines.field("schedule", of: "nightly-sync", in: "jobs"), "not the next entry's schedule")
        XCTAssertNil(lines.field("profile", of: "quoted", in: "jobs"), "== is a comparison, not a key")
        XCTAssertEqual(lines.field("schedule", of: "last", in: "jobs"), 14)
        XCTAssertNil(lines.field("days", of: "last", in: "jobs", within: "params"))
    }
}
