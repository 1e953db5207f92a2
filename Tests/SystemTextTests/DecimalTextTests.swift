import Foundation
import XCTest
import SystemText

final class DecimalTextTests: XCTestCase {
    func testPaddedLeftPadsWithZerosAndKeepsTheSignFirst() {
        XCTAssertEqual(DecimalText.padded(7, 2), "07")
        XCTAssertEqual(DecimalText.padded(2026, 4), "2026")
        XCTAssertEqual(DecimalText.padded(12345, 2), "12345")
        XCTAssertEqual(DecimalText.padded(0, 3), "000")
        XCTAssertEqual(DecimalText.padded(-7, 3), "-007")
        XCTAssertEqual(DecimalText.padded(Int.min, 2), "-9223372036854775808")
    }

    func testFixedMatchesPrintfForOrdinaryValues() {
        for x in [0.0, 0.004, 0.015625, 1.5, 2.75, 12.3456, 99.999, 1234.5678, 0.1, 7] {
            for places in 0...3 {
                // Values chosen so that printf's round-half-even and ours agree.
                XCTAssertEqual(DecimalText.fixed(x, places), String(format: "%.\(places)f", x), "\(x), \(places)")
            }
        }
    }

    func testFixedRoundsHalvesAwayFromZeroAndNeverPrintsMinusZero() {
        XCTAssertEqual(DecimalText.fixed(0.5, 0), "1")
        XCTAssertEqual(DecimalText.fixed(-1.25, 1), "-1.3")
        XCTAssertEqual(DecimalText.fixed(-0.04, 1), "0.0")
        XCTAssertEqual(DecimalText.fixed(-3.14159, 2), "-3.14")
    }

    func testFixedFallsBackForValuesItCannotScale() {
        XCTAssertEqual(DecimalText.fixed(.infinity, 2), "inf")
        XCTAssertEqual(DecimalText.fixed(.nan, 1), "nan")
        XCTAssertEqual(DecimalText.fixed(1e300, 2), "1e+300")
        XCTAssertEqual(DecimalText.fixed(2.5, 40), "2.500000000")   // places capped at 9
    }
}

final class ProcessEnvironmentTests: XCTestCase {
    func testAllAgreesWithFoundationsView() {
        XCTAssertEqual(ProcessEnvironment.all, ProcessInfo.processInfo.environment)
    }

    func testAChangeMadeWithSetenvIsSeenAtOnce() {
        let name = "HUBSCRIPT_TEST_ENV_\(UUID().uuidString.prefix(8))"
        XCTAssertNil(ProcessEnvironment.value(name))
        setenv(name, "a=b=c", 1)
        defer { unsetenv(name) }
        XCTAssertEqual(ProcessEnvironment.value(name), "a=b=c")
        XCTAssertEqual(ProcessEnvironment.all[name], "a=b=c")
        setenv(name, "", 1)
        XCTAssertEqual(ProcessEnvironment.all[name], "")
    }

    /// The cache is compared with `environ` in place: a same-length change, a removal
    /// and an addition are each seen by the next call.
    func testEveryKindOfChangeIsSeenByTheNextCall() {
        let name = "HUBSCRIPT_TEST_ENV_\(UUID().uuidString.prefix(8))"
        setenv(name, "one", 1)
        defer { unsetenv(name) }
        XCTAssertEqual(ProcessEnvironment.all[name], "one")
        setenv(name, "two", 1)
        XCTAssertEqual(ProcessEnvironment.all[name], "two")
        unsetenv(name)
        XCTAssertNil(ProcessEnvironment.all[name])
        setenv(name, "three", 1)
        XCTAssertEqual(ProcessEnvironment.all[name], "three")
        unsetenv(name)
        XCTAssertNil(ProcessEnvironment.all[name])
        XCTAssertEqual(ProcessEnvironment.all, ProcessInfo.processInfo.environment, "after every change, the same values as Foundation reads")
    }
}
