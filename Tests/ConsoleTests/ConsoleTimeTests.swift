import Foundation
import XCTest
@testable import Console

/// Times as the pages write them: RFC 3339, UTC or on a job's clock, as Foundation's
/// formatter would write them.
final class ConsoleTimeTests: XCTestCase {
    func testTimesMatchFoundationsFormatter() throws {
        let dates = [Date(timeIntervalSince1970: 1_796_048_553.9), Date(timeIntervalSince1970: 0),
                     Date(timeIntervalSince1970: 1_711_846_800), Date(timeIntervalSince1970: 1_730_000_000)]
        for zone in ["UTC", "Europe/Paris", "Asia/Kolkata", "America/St_Johns", "Pacific/Chatham", "America/Los_Angeles"] {
            let timeZone = try XCTUnwrap(TimeZone(identifier: zone))
            let formatter = ISO8601DateFormatter()
            formatter.timeZone = timeZone
            for date in dates {
                XCTAssertEqual(Layout.local(date, timeZone), formatter.string(from: date), "\(zone) \(date)")
            }
        }
        XCTAssertEqual(Layout.utc(Date(timeIntervalSince1970: 1_796_048_553.9)), "2026-11-30T14:22:33Z")
        XCTAssertEqual(Layout.time(nil).markup, "—")
        XCTAssertEqual(Layout.time(Date(timeIntervalSince1970: 0)).markup,
                       "<time datetime=\"1970-01-01T00:00:00Z\">1970-01-01T00:00:00Z</time>")
    }
}
