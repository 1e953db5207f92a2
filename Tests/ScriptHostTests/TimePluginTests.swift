import XCTest
@testable import ScriptHost

/// The `time` module with a fixed clock: 2026-12-01T04:56:07.75Z.
final class TimePluginTests: RecipeTestCase {
    static let clock: Double = 1_796_100_967.75

    override func setUp() {
        super.setUp()
        harness.plugins = [JSONPlugin.make(), TimePlugin.make(now: { TimePluginTests.clock })]
    }

    private func fails(_ source: String, _ message: String, file: StaticString = #filePath, line: UInt = #line) {
        assertFails(source, kind: .runtime, message: "recipes/t.lua:1: " + message, file: file, line: line)
    }

    // MARK: now, days_ago

    func testNowIsTheInjectedClockInWholeSecondsUTC() {
        XCTAssertEqual(lines("print(time.now())"), ["2026-12-01T04:56:07Z"])
    }

    func testDaysAgoCountsWholeDaysBackFromNow() {
        XCTAssertEqual(lines("print(time.days_ago(0), time.days_ago(1), time.days_ago(30), time.days_ago(0.5), time.days_ago(-1))"),
                       ["2026-12-01T04:56:07Z\t2026-11-30T04:56:07Z\t2026-11-01T04:56:07Z\t2026-11-30T16:56:07Z\t2026-12-02T04:56:07Z"])
        XCTAssertEqual(lines("print(time.days_ago(366 + 365 + 365))"), ["2023-12-01T04:56:07Z"], "2024 is a leap year")
    }

    // MARK: parse

    func testParseGivesEpochSecondsAsIntegers() {
        XCTAssertEqual(lines("""
            for _, s in ipairs { "1970-01-01T00:00:00Z", "2026-12-01T04:56:00Z", "2026-12-01t04:56:00z",
                                 "2024-02-29T00:00:00Z", "2000-02-29T23:59:59Z", "1969-12-31T23:59:59Z",
                                 "1900-03-01T00:00:00Z", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z" } do
              local t = time.parse(s)
              print(t, math.type(t))
            end
            """), ["0\tinteger", "1796100960\tinteger", "1796100960\tinteger", "1709164800\tinteger",
                   "951868799\tinteger", "-1\tinteger", "-2203891200\tinteger", "-62135596800\tinteger",
                   "253402300799\tinteger"])
    }

    func testParseAppliesOffsets() {
        XCTAssertEqual(lines("""
            print(time.parse("2026-12-01T05:56:00+01:00"), time.parse("2026-11-30T23:26:00-05:30"),
                  time.parse("2026-12-01T04:56:00-00:00"), time.parse("2027-01-01T00:30:00+23:59"))
            """), ["1796100960\t1796100960\t1796100960\t1798677060"])
    }

    func testParseKeepsFractionsAsFloats() {
        XCTAssertEqual(lines("""
            local a, b, c = time.parse("2026-12-01T04:56:00.25Z"), time.parse("2026-12-01T04:56:00.0Z"),
                            time.parse("1969-12-31T23:59:59.5+00:00")
            print(a, math.type(a), b, math.type(b), c)
            print(time.parse("2026-12-01T04:56:00.123456789123Z") - 1796100960 < 0.124)
            """), ["1796100960.25\tfloat\t1796100960.0\tfloat\t-0.5", "true"])
    }

    func testParseRefusesAnythingElseWithTheText() {
        let refused = [
            "2026-13-01", "2026-13-01T00:00:00Z", "2026-02-29T00:00:00Z", "1900-02-29T00:00:00Z",
            "2026-04-31T00:00:00Z", "0000-01-01T00:00:00Z", "2026-12-01", "2026-12-01 04:56:00Z",
            "2026-12-01T04:56:00", "2026-12-01T24:00:00Z", "2026-12-01T04:60:00Z", "2026-12-31T23:59:60Z",
            "2026-12-01T04:56:00.Z", "2026-12-01T04:56:00+0100", "2026-12-01T04:56:00+24:00",
            "2026-12-01T04:56:00Z ", " 2026-12-01T04:56:00Z", "2026-1-01T04:56:00Z", "+2026-12-01T04:56:00Z", "",
        ]
        for text in refused {
            fails("time.parse(\(luaQuoted(text)))", "bad argument #1 to 'time.parse' (not an RFC 3339 timestamp: '\(text)')")
        }
        fails("time.parse(\"2026-12-01T04:56:00.\" .. (\"0\"):rep(60) .. \"Z\")",
              "bad argument #1 to 'time.parse' (not an RFC 3339 timestamp: '2026-12-01T04:56:00.\(String(repeating: "0", count: 20))…')")
        fails("time.parse(1796100960)", "bad argument #1 to 'time.parse' (string expected, got number)")
        fails("time.parse(json.null)", "bad argument #1 to 'time.parse' (string expected, got null)")
        fails("time.parse()", "bad argument #1 to 'time.parse' (string expected, got no value)")
    }

    // MARK: format

    func testFormatRoundTripsParse() {
        XCTAssertEqual(lines("""
            for _, s in ipairs { "1970-01-01T00:00:00Z", "2024-02-29T12:34:56Z", "1969-12-31T23:59:59Z",
                                 "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "2026-12-01T04:56:00.25Z" } do
              print(time.format(time.parse(s)) == s, time.format(time.parse(s)))
            end
            """), ["true\t1970-01-01T00:00:00Z", "true\t2024-02-29T12:34:56Z", "true\t1969-12-31T23:59:59Z",
                   "true\t0001-01-01T00:00:00Z", "true\t9999-12-31T23:59:59Z", "true\t2026-12-01T04:56:00.25Z"])
    }

    func testFormatDateAndMicroseconds() {
        XCTAssertEqual(lines("""
            print(time.format(1796100960, "date"), time.format(-1, "date"), time.format(1796100960, "datetime"))
            print(time.format(0.0000004), time.format(0.0000006), time.format(-0.25), time.format(59.9999999))
            """), ["2026-12-01\t1969-12-31\t2026-12-01T04:56:00Z",
                   "1970-01-01T00:00:00Z\t1970-01-01T00:00:00.000001Z\t1969-12-31T23:59:59.75Z\t1970-01-01T00:01:00Z"])
    }

    func testFormatRefusesWhatIsNotATime() {
        fails("time.format(\"2026-12-01T04:56:00Z\")", "bad argument #1 to 'time.format' (number expected, got string)")
        fails("time.format()", "bad argument #1 to 'time.format' (number expected, got no value)")
        fails("time.format(0, \"iso\")", "bad argument #2 to 'time.format' ('date' or 'datetime' expected, got 'iso')")
        fails("time.format(253402300800)", "bad argument #1 to 'time.format' (time out of range: years 0001 to 9999)")
        fails("time.format(-62135596801)", "bad argument #1 to 'time.format' (time out of range: years 0001 to 9999)")
        fails("time.format(0/0)", "bad argument #1 to 'time.format' (time out of range: years 0001 to 9999)")
        fails("time.format(math.huge)", "bad argument #1 to 'time.format' (time out of range: years 0001 to 9999)")
    }

    // MARK: add, diff

    func testAddAcceptsTimestampsOrEpochSeconds() {
        XCTAssertEqual(lines("""
            print(time.add("2028-02-28T12:00:00Z", 86400), time.add("2026-02-28T12:00:00Z", 86400))
            print(time.add("2026-12-31T23:00:00-02:00", 3600), time.add(0, -1), time.add(0, 0.5))
            """), ["2028-02-29T12:00:00Z\t2026-03-01T12:00:00Z",
                   "2027-01-01T02:00:00Z\t1969-12-31T23:59:59Z\t1970-01-01T00:00:00.5Z"])
        fails("time.add(\"2026-12-01\", 1)", "bad argument #1 to 'time.add' (not an RFC 3339 timestamp: '2026-12-01')")
        fails("time.add({}, 1)", "bad argument #1 to 'time.add' (timestamp string or epoch seconds expected, got table)")
        fails("time.add(0)", "bad argument #2 to 'time.add' (number expected, got no value)")
        fails("time.add(\"9999-12-31T23:59:59Z\", 1)", "bad argument #2 to 'time.add' (time out of range: years 0001 to 9999)")
    }

    func testDiffIsSecondsFromBToA() {
        XCTAssertEqual(lines("""
            local d = time.diff("2026-12-01T00:00:00Z", "2026-11-01T00:00:00Z")
            print(d, math.type(d), time.diff("2026-12-01T01:00:00+01:00", "2026-12-01T00:00:00Z"))
            print(time.diff(0, "1970-01-01T00:00:01Z"), time.diff("1970-01-01T00:00:01.5Z", 0), time.diff(1.25, 1))
            print(time.diff("2025-03-01T00:00:00Z", "2025-02-28T00:00:00Z"), time.diff("2024-03-01T00:00:00Z", "2024-02-28T00:00:00Z"))
            print(time.diff(time.now(), time.days_ago(7)))
            """), ["2592000\tinteger\t0", "-1\t1.5\t0.25", "86400\t172800", "604800"])
        fails("time.diff(0)", "bad argument #2 to 'time.diff' (timestamp string or epoch seconds expected, got no value)")
        fails("time.diff(0, 1e300)", "bad argument #2 to 'time.diff' (time out of range: years 0001 to 9999)")
    }
}
