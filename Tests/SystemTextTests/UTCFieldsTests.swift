import Foundation
import XCTest
import SystemText

final class UTCFieldsTests: XCTestCase {
    func testKnownDates() {
        XCTAssertEqual(UTCFields(secondsSince1970: 0).description, "1970-01-01T00:00:00Z")
        XCTAssertEqual(UTCFields(secondsSince1970: -1).description, "1969-12-31T23:59:59Z")
        XCTAssertEqual(UTCFields(secondsSince1970: 951_782_400).description, "2000-02-29T00:00:00Z")
        XCTAssertEqual(UTCFields(secondsSince1970: 1_796_157_627).description, "2026-12-01T20:40:27Z")
        XCTAssertEqual(UTCFields(secondsSince1970: 4_107_542_399).description, "2100-02-28T23:59:59Z")
        XCTAssertEqual(UTCFields(secondsSince1970: 4_107_542_400).description, "2100-03-01T00:00:00Z")
        XCTAssertEqual(UTCFields(secondsSince1970: 253_402_300_799).description, "9999-12-31T23:59:59Z")
        XCTAssertEqual(UTCFields(secondsSince1970: -62_135_596_800).description, "0001-01-01T00:00:00Z")
    }

    /// Every day from 1600 to 2500, and random seconds far either side of 1970, agree
    /// with glibc's gmtime_r.
    func testAgreesWithGmtime() {
        func gmtime(_ s: Int64) -> UTCFields {
            var t = time_t(s)
            var tm = tm()
            gmtime_r(&t, &tm)
            return UTCFields(year: Int(tm.tm_year) + 1900, month: Int(tm.tm_mon) + 1, day: Int(tm.tm_mday),
                             hour: Int(tm.tm_hour), minute: Int(tm.tm_min), second: Int(tm.tm_sec))
        }
        var s: Int64 = -11_676_096_000 // 1600-01-01
        while s < 16_725_225_600 {     // 2500-01-01
            XCTAssertEqual(UTCFields(secondsSince1970: s + 86_399), gmtime(s + 86_399), "\(s)")
            s += 86_400
        }
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let t = Int64.random(in: -60_000_000_000...60_000_000_000, using: &rng)
            XCTAssertEqual(UTCFields(secondsSince1970: t), gmtime(t), "\(t)")
        }
    }
}
