import Foundation
import HubClient
import ScriptHost
import XCTest
@testable import Configuration

/// The configuration's `retention` key and the ages it takes.
final class RetentionConfigTests: XCTestCase {
    let file = URL(fileURLWithPath: "/etc/hubscript/config.lua")

    func parse(_ value: ScriptValue?) throws -> RetentionConfig? {
        var top: [String: ScriptValue] = ["profiles": .object([:])]
        top["retention"] = value
        return try RetentionConfig.parse(.object(top), file: file)
    }

    func refusal(_ value: ScriptValue) -> String {
        do { _ = try parse(value); return "accepted" } catch { return "\(error)" }
    }

    func testAgesAreWholeNumbersOfMinutesHoursDaysOrWeeks() {
        XCTAssertEqual(RetentionAge("90d")?.seconds, 90 * 86_400)
        XCTAssertEqual(RetentionAge("12h")?.seconds, 12 * 3600)
        XCTAssertEqual(RetentionAge("2w")?.seconds, 14 * 86_400)
        XCTAssertEqual(RetentionAge("30m")?.seconds, 1800)
        XCTAssertEqual(RetentionAge("0d")?.seconds, 0)
        for bad in ["", "d", "90", "90D", "-1d", "1.5d", "9 d", "90dd", "+9d", "٩d", "99999999d", "1y"] {
            XCTAssertNil(RetentionAge(bad), bad)
        }
    }

    func testNoKeyMeansNoRetentionAndBothAgesAreRead() throws {
        XCTAssertNil(try parse(nil))
        XCTAssertEqual(try parse(.object(["older_than": "90d"])), RetentionConfig(olderThan: RetentionAge("90d")!, keepFailed: nil))
        XCTAssertEqual(try parse(.object(["older_than": "90d", "keep_failed": "365d"])),
                       RetentionConfig(olderThan: RetentionAge("90d")!, keepFailed: RetentionAge("365d")!))
    }

    func testMistakesAreRefusedWithWhatToWrite() {
        let prefix = "config /etc/hubscript/config.lua: "
        XCTAssertEqual(refusal("90d"), prefix + #"retention must be a table like { older_than = "90d", keep_failed = "365d" }"#)
        XCTAssertEqual(refusal(.object([:])), prefix + #"retention needs older_than, how long runs are kept (for instance older_than = "90d")"#)
        XCTAssertEqual(refusal(.object(["older_than": "90d", "keep_fialed": "1d"])),
                       prefix + "retention: unknown key keep_fialed (the keys are older_than and keep_failed)")
        XCTAssertEqual(refusal(.object(["older_than": .integer(90)])),
                       prefix + "retention.older_than must be an age such as 90d, 12h, 2w or 30m (a whole number and m, h, d or w) in quotes, got a number")
        XCTAssertEqual(refusal(.object(["older_than": "3 months"])),
                       prefix + "retention.older_than must be an age such as 90d, 12h, 2w or 30m (a whole number and m, h, d or w) in quotes, got \"3 months\"")
        XCTAssertEqual(refusal(.object(["older_than": "90d", "keep_failed": "30d"])),
                       prefix + "retention.keep_failed (30d) is shorter than older_than (90d): runs that did not succeed are kept at least as long as the others")
    }
}
