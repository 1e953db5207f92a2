import Foundation
import SQLiteKit
import XCTest
import JournalTestSupport
@testable import RunJournal

/// The console's runs page filtered by status, profile or mode reads the matching runs
/// through an index in the page's order (newest first), so a filter few runs match does
/// not read every run in the journal; one on part of the recipe's path reads an index
/// that holds the path, in page order, rather than each run's row.
final class RunsFilterIndexTests: XCTestCase {
    func testStatusProfileAndModeFiltersReadThroughAnIndexInPageOrder() throws {
        let folder = try Fixture.tempDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent(Journal.fileName).path
        _ = try Journal(path: path)
        let raw = try SQLiteDatabase(path: path)
        for (column, index) in [("status", "runs_status_started"), ("profile", "runs_profile_started"), ("mode", "runs_mode_started")] {
            // The shape of `Journal.runsPage`'s query for that one filter, the next page's cursor included.
            var plan: [String] = []
            try raw.query("""
                EXPLAIN QUERY PLAN SELECT * FROM runs WHERE \(column) = ?1 AND (started_at < ?2 OR (started_at = ?2 AND id < ?3))
                ORDER BY started_at DESC, id DESC LIMIT 51
                """, [.text("x"), .int(1), .text("run")]) { plan.append($0.text(3)) }
            XCTAssertEqual(plan, ["SEARCH runs USING INDEX \(index) (\(column)=? AND started_at<?)"], column)
        }
        var recipePlan: [String] = []
        try raw.query("""
            EXPLAIN QUERY PLAN SELECT * FROM runs WHERE instr(recipe_path, ?1) > 0 ORDER BY started_at DESC, id DESC LIMIT 51
            """, [.text("offboard")]) { recipePlan.append($0.text(3)) }
        XCTAssertEqual(recipePlan, ["SCAN runs USING INDEX runs_started_recipe"])
    }
}
