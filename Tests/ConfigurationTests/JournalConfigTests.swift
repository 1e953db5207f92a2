import Foundation
import HubClient
import ScriptHost
import XCTest
@testable import Configuration

/// The configuration's `journal` key: a PostgreSQL URL or nothing, and never a password
/// in a message.
final class JournalConfigTests: XCTestCase {
    let file = URL(fileURLWithPath: "/etc/hubscript/config.lua")

    func parse(_ value: ScriptValue?) throws -> String? {
        var top: [String: ScriptValue] = ["profiles": .object([:])]
        top["journal"] = value
        return try JournalConfig.parse(.object(top), file: file)?.text
    }

    func refusal(_ value: ScriptValue) -> String {
        do { _ = try parse(value); return "accepted" } catch { return "\(error)" }
    }

    func testAPostgresURLSelectsThePostgresJournalAndNoKeyKeepsSQLite() throws {
        XCTAssertNil(try parse(nil))
        XCTAssertEqual(try parse("postgresql://ops@db/hubscript"), "postgresql://ops@db/hubscript")
        XCTAssertEqual(try parse("postgres:///hubscript?host=/run/postgresql"), "postgres:///hubscript?host=/run/postgresql")
    }

    func testAnythingElseIsRefusedWithWhatToWrite() {
        let usage = "config /etc/hubscript/config.lua: journal must be a PostgreSQL URL such as \"postgresql://user@host/database\" "
            + "(leave it out to keep the SQLite journal in the state directory)"
        XCTAssertEqual(refusal(.integer(5432)), usage)
        XCTAssertEqual(refusal(.object(["url": "postgresql://db/x"])), usage)
        XCTAssertEqual(refusal("sqlite:///var/lib/journal.sqlite"),
                       usage + "; sqlite:///var/lib/journal.sqlite is not a PostgreSQL URL: it must start with postgresql:// or postgres://")
        XCTAssertEqual(refusal("https://ops:s3cret@db/x"),
                       usage + "; https://ops:***@db/x is not a PostgreSQL URL: it must start with postgresql:// or postgres://")
        XCTAssertEqual(refusal("postgresql://ops:s3cret@db/x\u{0}; rm -rf /"),
                       usage + "; the PostgreSQL URL postgresql://ops:***@db/x\\0; rm -rf / contains a NUL byte")
        XCTAssertTrue(refusal(.string("postgresql://db/" + String(repeating: "x", count: 100_000))).hasSuffix(" is longer than 4096 bytes"))
    }
}
