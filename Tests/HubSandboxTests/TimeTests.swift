import XCTest
@testable import HubSandbox

/// The hand-rolled RFC 3339 formatter and parser.
final class TimeTests: XCTestCase {
    func testFormatAndParseRoundTrip() {
        XCTAssertEqual(Time.format(0), "1970-01-01T00:00:00Z")
        XCTAssertEqual(Time.format(1_768_478_400), "2026-01-15T12:00:00Z")
        XCTAssertEqual(Time.format(951_782_400), "2000-02-29T00:00:00Z")
        for t in stride(from: -86_400 * 400, to: 4_000_000_000, by: 7_654_321) { XCTAssertEqual(Time.parse(Time.format(t)), t) }
    }

    func testParseVariants() {
        XCTAssertEqual(Time.parse("2026-01-15T12:00:00.250Z"), 1_768_478_400)
        XCTAssertEqual(Time.parse("2026-01-15T13:00:00+01:00"), 1_768_478_400)
        XCTAssertEqual(Time.parse("2026-01-15T13:00:00 01:00"), 1_768_478_400)
        XCTAssertEqual(Time.parse("2026-01-15T11:00:00-01:00"), 1_768_478_400)
        XCTAssertEqual(Time.parse("2026-01-15"), 1_768_435_200)
        XCTAssertNil(Time.parse("2026-13-01"))
        XCTAssertNil(Time.parse("yesterday"))
        XCTAssertNil(Time.parse("2026-01-15T12:00:00"))
    }
}
