import Foundation
import XCTest

/// The damaged-journal refusal holds run after run, and after a listing, although a
/// clean close's marker lets a run skip the check: a damaged journal must never be
/// written on as if it were whole.
final class DamagedJournalRefusalCLITests: XCTestCase {
    func testADamagedJournalIsRefusedByEveryRunAndAfterAListing() throws {
        let cli = try CLIHarness(testCase: self)
        let recipe = try cli.file("notes.lua", """
            recipe { name = "notes", version = "1.0.0", description = "d", needs = { "users.list" } }
            local n = 0
            for _ in hub.users.list() do n = n + 1 end
            print(n)
            """)
        try cli.resetSandbox()
        for _ in 0..<3 { _ = try cli.run(["run", recipe], expect: 0) }
        let file = cli.stateDir.appendingPathComponent("journal/journal.sqlite")
        var data = try Data(contentsOf: file)
        XCTAssertGreaterThan(data.count, 8192)
        for i in 4096..<data.count { data[i] = UInt8(truncatingIfNeeded: i &* 31) }
        try data.write(to: file)
        for step in ["run", "run again", "runs list", "run after the listing"] {
            let r = step == "runs list" ? try cli.run(["runs", "list"]) : try cli.run(["run", recipe])
            if step == "runs list" { continue }
            XCTAssertEqual(r.status, 2, "\(step): \(r.output)")
            XCTAssertTrue(r.stderr.contains("error: the journal \(file.path) is damaged (SQLite: "), "\(step): \(r.stderr)")
        }
    }
}
