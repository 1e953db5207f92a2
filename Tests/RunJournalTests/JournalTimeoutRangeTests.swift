import Foundation
import SystemText
import XCTest
import JournalTestSupport
@testable import RunJournal

/// A run's timeout as journalled: any finite positive value a caller passes (the CLI's
/// `--timeout 1e20`, a job's `timeout = 9223372036854775807`) is recorded, not a trap
/// converting it to milliseconds.
final class JournalTimeoutRangeTests: XCTestCase {
    func testAHugeTimeoutIsRecordedAsTheHostCeiling() throws {
        let dir = try Fixture.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let journal = try Journal.openChecked(path: dir.appendingPathComponent("journal.sqlite").path)
        for (id, seconds) in [("run_1e20", 1e20), ("run_intmax", Double(Int.max)), ("run_1e300", 1e300)] {
            var start = Fixture.runStart(id)
            start.timeoutSeconds = seconds
            XCTAssertEqual(try journal.startRun(start, masking: SecretRedactor()).timeoutSeconds, Journal.timeoutCeilingSeconds, id)
        }
    }
}
