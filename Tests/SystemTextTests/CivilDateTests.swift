import XCTest
import SystemText

final class CivilDateTests: XCTestCase {
    func testCalendarArithmeticAgreesEveryDayForFourHundredYears() {
        XCTAssertEqual(CivilDate.days(year: 1970, month: 1, day: 1), 0)
        XCTAssertEqual(CivilDate.days(year: 2000, month: 3, day: 1), 11_017)
        var days = CivilDate.days(year: 1800, month: 1, day: 1)
        XCTAssertEqual(days, -62_091)
        for year in 1800..<2200 {
            for month in 1...12 {
                for day in 1...CivilDate.daysIn(month: month, year: year) {
                    let back = CivilDate.days(year: year, month: month, day: day)
                    let civil = CivilDate.date(days: days)
                    if back != days || civil != (year, month, day) {
                        return XCTFail("\(year)-\(month)-\(day) is day \(back), expected \(days); day \(days) is \(civil)")
                    }
                    days += 1
                }
            }
        }
    }

    /// The ends of four-digit years, leap days of every kind, and days before the epoch.
    func testEdgeDates() {
        let cases: [(year: Int, month: Int, day: Int, days: Int)] = [
            (1, 1, 1, -719_162),          // 0001-01-01, the first RFC 3339 day
            (9999, 12, 31, 2_932_896),    // the last
            (1969, 12, 31, -1),           // the day before the epoch
            (1600, 2, 29, -135_081),      // a leap day of a year divisible by 400
            (2000, 2, 29, 11_016),
            (2024, 2, 29, 19_782),        // an ordinary leap day
            (1900, 3, 1, -25_508),        // 1900 has no 29 February
            (0, 3, 1, -719_468),          // the start of the calendar's eras (1 BC)
        ]
        for c in cases {
            XCTAssertEqual(CivilDate.days(year: c.year, month: c.month, day: c.day), c.days, "\(c)")
            XCTAssertTrue(CivilDate.date(days: c.days) == (c.year, c.month, c.day), "\(c)")
        }
        XCTAssertTrue(CivilDate.date(days: 11_016 + 1) == (2000, 3, 1))
        XCTAssertTrue(CivilDate.date(days: -25_508 - 1) == (1900, 2, 28))
    }

    func testLeapYearsAndMonthLengths() {
        XCTAssertEqual([1600, 1700, 1900, 2000, 2023, 2024, 2100, 2400].map(CivilDate.isLeap),
                       [true, false, false, true, false, true, false, true])
        XCTAssertEqual((1...12).map { CivilDate.daysIn(month: $0, year: 2023) }, [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])
        XCTAssertEqual(CivilDate.daysIn(month: 2, year: 2024), 29)
        XCTAssertEqual(CivilDate.daysIn(month: 2, year: 1900), 28)
    }

    /// Negative seconds fall on the day before, at a second of the day from 0 up.
    func testNegativeEpochSecondsFloorToTheDayBefore() {
        XCTAssertTrue(CivilDate.dayAndSecond(-1) == (-1, 86_399))
        XCTAssertTrue(CivilDate.dayAndSecond(-86_400) == (-1, 0))
        XCTAssertTrue(CivilDate.dayAndSecond(-86_401) == (-2, 86_399))
        XCTAssertTrue(CivilDate.dayAndSecond(0) == (0, 0))
        XCTAssertTrue(CivilDate.dayAndSecond(86_399) == (0, 86_399))
        XCTAssertTrue(CivilDate.dayAndSecond(-62_135_596_800) == (-719_162, 0))
        XCTAssertTrue(CivilDate.floorDivide(-7, 3) == (-3, 2))
        XCTAssertTrue(CivilDate.floorDivide(7, 3) == (2, 1))
    }
}
