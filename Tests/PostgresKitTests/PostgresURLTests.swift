import XCTest
@testable import PostgresKit

/// A URL's password is never shown: not in its redacted form, not in any message.
final class PostgresURLTests: XCTestCase {
    func testThePasswordInTheUserInfoIsMasked() throws {
        let url = try PostgresURL("postgresql://ops:s3cr%40t@db.internal:5433/hubscript?sslmode=require")
        XCTAssertEqual(url.redacted, "postgresql://ops:***@db.internal:5433/hubscript?sslmode=require")
        XCTAssertEqual(url.password, "s3cr@t")
        XCTAssertEqual(url.redact("failed for s3cr%40t and s3cr@t"), "failed for *** and ***")
        XCTAssertEqual("\(url)", url.redacted)
    }

    func testAPasswordQueryParameterIsMasked() throws {
        let url = try PostgresURL("postgres://ops@db/hubscript?password=hunter2&application_name=x")
        XCTAssertEqual(url.redacted, "postgres://ops@db/hubscript?password=***&application_name=x")
        XCTAssertEqual(url.redact("token hunter2 here"), "token *** here")
    }

    func testAURLWithoutAPasswordIsShownAsItIs() throws {
        let url = try PostgresURL("postgresql:///hubscript?host=/tmp/pg")
        XCTAssertEqual(url.redacted, "postgresql:///hubscript?host=/tmp/pg")
        XCTAssertNil(url.password)
        XCTAssertEqual(try PostgresURL("postgresql://ops@db/x").redacted, "postgresql://ops@db/x")
    }

    /// libpq reads C strings: a NUL byte would cut the URL short. Refused, as is a huge one.
    func testANULByteOrAHugeURLIsRefused() {
        XCTAssertThrowsError(try PostgresURL("postgresql://ops:pw@db/x\0y")) { error in
            XCTAssertEqual("\(error)", "the PostgreSQL URL postgresql://ops:***@db/x\\0y contains a NUL byte")
        }
        XCTAssertThrowsError(try PostgresURL("postgresql://db/" + String(repeating: "x", count: 5000))) { error in
            XCTAssertTrue("\(error)".hasSuffix("xxx is longer than 4096 bytes"), "\(error)")
        }
    }

    func testOtherSchemesAreRefusedWithoutShowingThePassword() {
        XCTAssertThrowsError(try PostgresURL("mysql://root:topsecret@db/x")) { error in
            let e = error as? PostgresError
            XCTAssertEqual(e?.kind, .badURL)
            XCTAssertEqual(e?.message, "mysql://root:***@db/x is not a PostgreSQL URL: it must start with postgresql:// or postgres://")
        }
        XCTAssertTrue(PostgresURL.isPostgresURL("POSTGRESQL://x"))
        XCTAssertFalse(PostgresURL.isPostgresURL("sqlite:///x"))
    }
}
